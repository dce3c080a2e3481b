"""rnn-compare's entry in the lab report: report.json, the one interface jackson-report reads; and the run
folder of rnn-mixing-spectrum (App. D.3), which is small enough to be written here whole."""
from __future__ import annotations

import json
import math
from pathlib import Path

from jackson.runfolder import write_report
from jackson.figures import figure_style, pyplot
from jackson.config import read_json


def seed_members(cfg: dict) -> list[int]:
    """The bank members' seeds a config.json names: its list `seeds`, or, in a folder written before rnn-compare
    took the seeds themselves, the count `seeds` from `first_seed` on."""
    s = cfg.get("seeds")
    if isinstance(s, list):
        return [int(x) for x in s]
    if isinstance(s, int) and not isinstance(s, bool):
        first = int(cfg.get("first_seed", 0) or 0)
        return list(range(first, first + s))
    return []


def seed_range(seeds) -> str:
    """' s..t' (or ' a, b, c') naming the bank's seeds when they are not 0..n-1, else ''."""
    seeds = [int(s) for s in seeds]
    if not seeds or seeds == list(range(len(seeds))):
        return ""
    if seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f" {seeds[0]}" if len(seeds) == 1 else f" {seeds[0]}..{seeds[-1]}"
    return " " + ", ".join(map(str, seeds))


def report_hook(folder: Path) -> dict:
    """The lab report's entry for an rnn-compare folder (jackson/lab_report/page.py reads it as report.json), built
    from summary.json, config.json, command.txt and tables_long.csv (which holds the paper's values)."""
    import pandas as pd
    s = read_json(folder / "summary.json")
    cfg = read_json(folder / "config.json")
    command = (folder / "command.txt").read_text().strip()
    members = seed_members(cfg)
    n_seeds = len(members) if members else "?"
    direction = cfg.get("mix_direction", "future")
    data = (f"synthetic linear targets H_t = sum_s rho(s) x(t-s), x ~ U[0,1], tau = {cfg.get('tau', '?')}; "
            f"{cfg.get('n_train', '?')} training / {cfg.get('n_test', '?')} held-out sequences; ordering: first and "
            f"last {cfg.get('swap', '?')} steps swapped; mixing: "
            + (f"the filter ({cfg['filter']})" if cfg.get("filter") else
               f"a random length-{cfg.get('filter_length', '?')} filter (seed {cfg.get('filter_seed', '?')})")
            + f", direction '{direction}'")
    seeds = f"{n_seeds} (model inits{seed_range(members)})"
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
    cap = ("Held-out MSE of the linear RNN (App. C) and the Eq. (5) Transformer with a learned positional encoding, on "
           "the original, permuted and mixed targets: each seed (dots), their median (large marker) and range (line), "
           "diverged members left out; black diamonds: the paper's Tables 2-3.")
    return {"section": "rnn_compare",
            "title": f"rnn-compare: {cfg.get('table', 'all')} table(s), mixing direction '{direction}' ({folder.name})",
            "data": data, "command": command, "seeds": seeds, "paper": paper,
            "text": "Tables with per-seed spread and the RNN complexity measures of App. D.1 are in the summary.",
            "figures": [{"file": "mse_bars.png",
                         "caption": f"{cap} Data: {data}. Seeds: {seeds}. Command: `{command}`."}]
            + ([{"file": "position_mse.png",
                 "caption": "Held-out MSE at each output position t (median over seeds, band: min to max), original "
                            "and altered targets together"
                            + (f"; grey: the first and last {cfg.get('swap', '?')} steps, the blocks the ordering "
                               "alteration exchanges" if cfg.get("table", "all") in ("all", "ordering", "uniform") else "")
                            + ("; dashed: the error of a model exact but for the block of terms the summary's "
                               "missing-terms check finds in most seeds"
                               if any(r.get("one_block") for r in s.get("missing_terms", [])) else "")
                            + f". Seeds: {seeds}."}]
               if (folder / "position_mse.png").exists() else [])
            + ([{"file": "coupling_spectra.png",
                 "caption": "Singular values of each target's coupling matrix K (y = K x for the inputs the model sees), "
                            "relative to the largest: the POD spectrum of the target's temporal coupling. A permutation "
                            "leaves it unchanged; mixing changes it. Computed from the targets alone (no training)."}]
               if (folder / "coupling_spectra.png").exists() else [])}


def write_report_json(folder: Path) -> Path:
    return write_report(folder, report_hook(Path(folder)))


RANK_TOL = 1e-8          # a singular value below this fraction of sigma_1 counts as zero (numerical rank)
PAPER_D3 = {"kernel": "1 + 2*sin(2*pi*u)*sin(2*pi*v)", "a": 1.0, "b": 1.0,
            "before": (1.0, 1.0), "after": (1.265, 0.5, 0.4)}     # App. D.3 as printed


def numerical_rank(sigma) -> int:
    sigma = [float(x) for x in sigma]
    return sum(x > RANK_TOL * sigma[0] for x in sigma) if sigma and sigma[0] > 0 else 0


def is_paper_d3(kernel: str, a: float, b: float) -> bool:
    """The kernel and mixing of App. D.3 (whitespace in the expression aside)."""
    return " ".join(kernel.split()) == PAPER_D3["kernel"] and a == PAPER_D3["a"] and b == PAPER_D3["b"]


@figure_style()
def spectrum_figure(before, after, a: float, b: float, paper: bool):
    """The singular values before (circles) and after (squares) the mixing, log scale; the paper's values
    after it (crosses) where `paper`; the numerical ranks in the title.  rnn-mixing-spectrum draws it for
    --png and for --out."""
    plt = pyplot()
    import numpy as np
    fig, ax = plt.subplots(figsize=(4.8, 3.4))
    i = np.arange(1, len(before) + 1)
    ax.semilogy(i, np.maximum(before, 1e-16), "o-", label="rho(u, v)")
    ax.semilogy(i, np.maximum(after, 1e-16), "s--", label=f"rho(u, {a:g} u + {b:g} v)")
    if paper:
        ax.semilogy(np.arange(1, 4), PAPER_D3["after"], "k+", ms=10, mew=1.5, label="paper, after (App. D.3)")
    ax.set(xlabel="index i", ylabel="singular value sigma_i", ylim=(1e-4, None),
           title=f"App. D.3: ranks {numerical_rank(before)} -> {numerical_rank(after)}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


@figure_style()
def write_spectrum_folder(out: Path, command: str, kernel: str, a: float, b: float, n: int, spectra: dict) -> dict:
    """rnn-mixing-spectrum --out: spectra.csv (tidy: form, i, sigma), summary.json / summary.md (the
    spectra, their numerical ranks, App. D.3's numbers where the kernel and mixing are the paper's),
    mixing_spectrum.png + .pdf, report.json.  `out` was opened by jackson.runfolder.open_run."""
    import pandas as pd
    from jackson.figures import save
    from jackson.runfolder import write_atomic
    plt = pyplot()

    before, after = [float(x) for x in spectra["before"]], [float(x) for x in spectra["after"]]
    rows = [{"form": f, "i": i + 1, "sigma": s} for f, sig in (("before", before), ("after", after))
            for i, s in enumerate(sig)]
    write_atomic(out / "spectra.csv", pd.DataFrame(rows).to_csv(index=False))
    paper = is_paper_d3(kernel, a, b)
    summary = {"command": command, "kind": "rnn-mixing-spectrum", "kernel": kernel, "a": a, "b": b,
               "quadrature_nodes": n, "before": before, "after": after, "rank_tol": RANK_TOL,
               "rank_before": numerical_rank(before), "rank_after": numerical_rank(after),
               "paper": {"before": list(PAPER_D3["before"]), "after": list(PAPER_D3["after"])} if paper else None}
    mixing = f"rho(u, {a:g} u + {b:g} v)"
    fig = spectrum_figure(before, after, a, b, paper)
    save(fig, out / "mixing_spectrum.png")
    plt.close(fig)
    md = ["# rnn-mixing-spectrum (App. D.3)", "", f"Command: `{command}`", "",
          f"Singular values of rho(u, v) = {kernel} and of the mixed kernel {mixing} (the input pair "
          f"(x1, x2) read as (x1, {a:g} x1 + {b:g} x2)), by POD on {n} Gauss-Legendre nodes per variable. "
          f"Numerical rank: sigma_i > {RANK_TOL:g} sigma_1.", "",
          "| i | before | after |" + (" paper, after |" if paper else ""),
          "|---:|---:|---:|" + ("---:|" if paper else "")]
    for j, (x, y) in enumerate(zip(before, after)):
        md.append(f"| {j + 1} | {x:.4f} | {y:.4f} |"
                  + (f" {PAPER_D3['after'][j]:g} |" if paper and j < 3 else " |" if paper else ""))
    md += ["", f"Rank {summary['rank_before']} before, {summary['rank_after']} after."]
    write_atomic(out / "summary.md", "\n".join(md) + "\n")
    write_atomic(out / "summary.json", json.dumps(summary, indent=1) + "\n")
    data = f"the kernel rho(u, v) = {kernel} on [0, 1]^2 (no training, no data)"
    entry = {"section": "rnn_compare", "title": f"rnn-mixing-spectrum: {mixing} (App. D.3)", "data": data,
             "command": command, "seeds": "none (deterministic quadrature)",
             "paper": [{"quantity": f"sigma_{j + 1} after the mixing", "paper": PAPER_D3["after"][j],
                        "measured": after[j]} for j in range(min(3, len(after)))] if paper else [],
             "text": f"Numerical rank {summary['rank_before']} before the mixing, {summary['rank_after']} after "
                     f"(sigma_i > {RANK_TOL:g} sigma_1).",
             "figures": [{"file": "mixing_spectrum.png",
                          "caption": "Singular values of the coupling before (circles) and after (squares) the mixing"
                                     + ("; crosses: the paper's values after it." if paper else ".")}]}
    write_report(out, entry)
    return summary
