"""rnn-compare's entry in the lab report: report.json, the one interface jackson-report reads."""
from __future__ import annotations

import json
import math
from pathlib import Path

from jackson.runfolder import write_report


def report_hook(folder: Path) -> dict:
    """The lab report's entry for an rnn-compare folder (jackson/report.py reads it as report.json), built
    from summary.json, config.json, command.txt and tables_long.csv (which holds the paper's values)."""
    import pandas as pd
    s = json.loads((folder / "summary.json").read_text())
    cfg = json.loads((folder / "config.json").read_text())
    command = (folder / "command.txt").read_text().strip()
    n_seeds = cfg.get("seeds", "?")
    direction = cfg.get("mix_direction", "future")
    data = (f"synthetic linear targets H_t = sum_s rho(s) x(t-s), x ~ U[0,1], tau = {cfg.get('tau', '?')}; "
            f"{cfg.get('n_train', '?')} training / {cfg.get('n_test', '?')} held-out sequences; ordering: first and "
            f"last {cfg.get('swap', '?')} steps swapped; mixing: a length-{cfg.get('filter_length', '?')} filter, "
            f"direction '{direction}'")
    seeds = f"{n_seeds} (model inits)"
    paper = []
    long_csv = folder / "tables_long.csv"
    if long_csv.exists():
        for r in pd.read_csv(long_csv).itertuples():
            if isinstance(r.paper, float) and math.isfinite(r.paper):
                paper.append({"quantity": f"{r.model}, {r.kernel} kernel, {r.alteration}: held-out MSE "
                                          f"(Table {3 if r.kernel == 'uniform' else 2})",
                              "paper": float(r.paper), "measured": float(r.mean)})
    for name, t in s["tables"].items():
        for m, v in t.items():
            if isinstance(v.get("paper_ratio"), (int, float)) and math.isfinite(v["paper_ratio"]):
                paper.append({"quantity": f"{name}: {m}, altered / original MSE", "paper": v["paper_ratio"],
                              "measured": v["ratio"]})
    cap = ("Held-out MSE (mean ± sd over seeds) of the linear RNN (App. C) and the Eq. (5) Transformer with a learned "
           "positional encoding, on the original, permuted and mixed targets; black ticks: the paper's Tables 2-3.")
    return {"section": "rnn_compare",
            "title": f"rnn-compare: {cfg.get('table', 'all')} table(s), mixing direction '{direction}' ({folder.name})",
            "data": data, "command": command, "seeds": seeds, "paper": paper,
            "text": "Tables with per-seed spread and the RNN complexity measures of App. D.1 are in the summary.",
            "figures": [{"file": "mse_bars.png",
                         "caption": f"{cap} Data: {data}. Seeds: {seeds}. Command: `{command}`."}]}


def write_report_json(folder: Path) -> Path:
    return write_report(folder, report_hook(Path(folder)))
