"""jackson-tasks results: the cells' tables -> tidy tables, summary.md/json and report.json (no training here).

Per task run: results.csv (one row per seed), by_kind.csv (attention checks per kind of row),
levels.csv (A averaged per value of the target's coupling S), fof_by_position.csv (F_hat∘f_hat check
per token position), loss_curves.csv; summary.json / summary.md with the mean and spread over seeds;
report.json, the hook jackson/lab_report/page.py renders.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from synthetic.selection_average import SelectionAverage
from synthetic.weighted_average import WeightedAverage
from ..runfolder import table_path, write_report
from ..sweep import non_default
from ..config import read_json
from .cell import data_seeds

METRICS = {  # column -> what it is (summary rows, in this order)
    "train_mse": "training MSE",
    "test_mse": "held-out MSE",
    "rel_test_mse": "held-out MSE / Var(y)",
    "argmax_in_support": "rows with argmax_s A[t, s] in the support of S[t]",
    "tv": "total variation TV(A, S) = 1/2 sum_s abs(A - S) (mean over rows)",
    "support_mass": "mass of A on the support of S (mean over rows)",
    "fof_mse": "MSE of F_hat∘f_hat against F∘f",
    "fof_rel": "MSE of F_hat∘f_hat against F∘f / Var(F∘f)",
    "fof_median_abs": "median over tokens of the largest abs error of F_hat∘f_hat against F∘f",
}
NOTES = {"weighted-average": "Prop. B.1's argmax statement assumes F∘f injective; here F∘f(x, m) = |x| is not, so the "
                             "target's form does not force A[t, t] = 1 at point rows."}
SUPPORT = {"nearest-point": "the true nearest point of V",
           "weighted-average": "a point mass of the row's own segment (x_pred rows) or the token itself (point rows)",
           "selection-average": "an index named in s(t)"}


def collect(out: Path, dirs: list[Path]) -> dict[str, pd.DataFrame]:
    """The cells' tables concatenated into the run's tidy tables (and written)."""
    tabs = {}
    for name in ("rows", "by_kind", "levels", "curve"):
        parts = []
        for d in dirs:
            df = pd.read_csv(d / f"{name}.csv")
            if "seed" not in df:
                df.insert(0, "seed", read_json(d / "cell.json")["cell"]["seed"])
            parts.append(df)
        tabs[name] = pd.concat(parts, ignore_index=True)
    tabs["fof_by_position"] = pd.concat([fof_by_position(d) for d in dirs], ignore_index=True)
    tabs["rows"].to_csv(out / "results.csv", index=False, float_format="%.6e")
    tabs["fof_by_position"].to_csv(out / "fof_by_position.csv", index=False, float_format="%.6e")
    tabs["by_kind"].to_csv(out / "by_kind.csv", index=False, float_format="%.6e")
    tabs["levels"].to_csv(out / "levels.csv", index=False, float_format="%.6e")
    tabs["curve"].to_csv(out / "loss_curves.csv", index=False, float_format="%.6e")
    return tabs


def fof_by_position(cell_dir: Path) -> pd.DataFrame:
    """A cell's F_hat∘f_hat check per token position (from its fof.csv.gz; an older cell's fof.csv): n tokens,
    median and largest abs error."""
    f = pd.read_csv(table_path(cell_dir, "fof.csv"))
    d = len([c for c in f.columns if c.startswith("fof_hat_")])
    err = np.abs(f[[f"fof_hat_{j}" for j in range(d)]].to_numpy() - f[[f"fof_{j}" for j in range(d)]].to_numpy())
    f["err"] = err.max(axis=1)
    g = f.groupby("position").err.agg(n_tokens="count", median_abs="median", max_abs="max").reset_index()
    g.insert(0, "seed", read_json(cell_dir / "cell.json")["cell"]["seed"])
    return g


def _stats(v: pd.Series) -> dict:
    return {"mean": float(v.mean()), "sd": float(v.std()) if len(v) > 1 else 0.0,
            "min": float(v.min()), "max": float(v.max()), "per_seed": [float(a) for a in v]}


def uniform_support_mass(task, n_test: int, seed: int) -> float:
    """The control of the attention checks: the mass uniform attention (1/tau on each of the tau tokens, as
    the model's non-causal softmax at equal logits) puts on the support of the target's S, mean over the
    held-out rows of one seed's draw (the cell's own, `data_seeds`) = the share of (row, token) entries where
    S > 0.  Drawn again from the task, no training: for a continuous S too, which has no coupling levels."""
    te = task.sample(n_test, data_seeds(seed)[1])
    return float((np.asarray(te.select) > 0).mean())


def task_positional(task) -> bool:
    """Do the task's tokens carry their position (so F_hat∘f_hat may differ by position)?"""
    return isinstance(task, SelectionAverage) or (isinstance(task, WeightedAverage) and task.position == "onehot")


# Every row is an attention weight or mass in [0, 1]: the report compares it to the paper's by the difference
# (in the same units); a ratio of two weights near 1, or to a paper value of 0, means nothing.
COMPARE = "difference"


def paper_rows(task, tabs: dict) -> list[dict]:
    """The values the paper states for the target's attention (Eqs. 55, 62, 64) beside the measured means,
    each with how the report compares them (COMPARE)."""
    lv, bk = tabs["levels"], tabs["by_kind"]
    rows = []
    if task.name == "weighted-average":
        for kind, what in (("point", "point rows: A[t, t] (Fig. 5a: confined to the diagonal)"),
                           ("x_pred", "x_pred rows: mass of A on the own segment's point masses")):
            sel = bk[bk.kind == kind]
            if len(sel):
                rows.append({"quantity": what, "paper": 1.0, "measured": float(sel.support_mass.mean()),
                             "compare": COMPARE})
        return rows
    names = {"nearest-point": "mean A[t, s] where the target's hard-max weight is {}",
             "selection-average": "mean A[t, s] where Eq. 64's coupling is {}"}
    for v, g in lv.groupby("target"):
        frac = {0: "0", 1: "1"}.get(v) if v in (0, 1) else f"{round(v * task.k)}/{task.k}" if task.name == "selection-average" else f"{v:g}"
        rows.append({"quantity": names[task.name].format(frac), "paper": float(v), "measured": float(g.mean_A.mean()),
                     "compare": COMPARE})
    return rows


def summarize(out: Path, cfg, tabs: dict, command: str) -> dict:
    """summary.json and summary.md: per metric the mean and spread over seeds, per row kind, per coupling level."""
    rows, task = tabs["rows"], cfg.task
    seeds = rows.seed.tolist()
    kinds = tabs["by_kind"].groupby("kind").agg(
        n_rows=("n_rows", "sum"), test_mse=("test_mse", "mean"), argmax_in_support=("argmax_in_support", "mean"),
        tv=("tv", "mean"), support_mass=("support_mass", "mean")).reset_index()
    levels = tabs["levels"].groupby("target").agg(n_entries=("n_entries", "sum"), mean_A=("mean_A", "mean"),
                                                  sd_A=("sd_A", "mean")).reset_index() if len(tabs["levels"]) else pd.DataFrame()
    options = ", ".join(f"{k} = {v}" for k, v in non_default(task).items())
    summary = {"task": task.name, "title": task.title + (f" [{options}]" if options else ""), "command": command,
               "data": task.describe(),
               "seeds": seeds, "n_train": cfg.train.n_train, "n_test": cfg.train.n_test, "m_h": cfg.train.m_h,
               "steps": cfg.fit.steps, "status": rows.status.tolist(),
               "metrics": {k: _stats(rows[k]) for k in METRICS},
               "control": {"uniform_support_mass": _stats(pd.Series(
                   [uniform_support_mass(task, cfg.train.n_test, int(sd)) for sd in seeds]))},
               "by_kind": kinds.to_dict(orient="records"), "levels": levels.to_dict(orient="records"),
               "fof_by_position": (tabs["fof_by_position"].pivot(index="position", columns="seed", values="median_abs")
                                   .reset_index().to_dict(orient="records") if task_positional(task) else []),
               "paper": paper_rows(task, tabs)}
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=float))
    (out / "summary.md").write_text(_markdown(summary))
    return summary


def fmt_sd(m: dict, fmt: str) -> str:
    return f"{m['mean']:{fmt}}" + (f" ± {m['sd']:{fmt}}" if len(m["per_seed"]) > 1 else "")


def findings(s: dict) -> str:
    """The Prop. B.1 check in two sentences, from the measured means."""
    m, n = s["metrics"], len(s["seeds"])
    seeds = f"mean over {n} seed{'s' if n > 1 else ''}"
    ctrl = (s.get("control") or {}).get("uniform_support_mass")
    chance = f" (uniform attention: {ctrl['mean']:.1%}, the control)" if ctrl else ""
    return (f"Held-out MSE {m['test_mse']['mean']:.3g} ({m['rel_test_mse']['mean']:.2%} of Var(y)); "
            f"the argmax of the learned attention A falls on {SUPPORT[s['task']]} in "
            f"{m['argmax_in_support']['mean']:.1%} of held-out rows, A puts {m['support_mass']['mean']:.1%} of its mass "
            f"there{chance}, and its total-variation distance to the target's S is {m['tv']['mean']:.3f} ({seeds}). "
            f"F_hat∘f_hat matches the target's F∘f to MSE {m['fof_mse']['mean']:.3g} "
            f"({m['fof_rel']['mean']:.2%} of Var(F∘f); median abs error {m['fof_median_abs']['mean']:.3g})."
            + ("" if len(s["by_kind"]) < 2 else " By kind of row: " + "; ".join(
                f"{r['kind']} rows: argmax in support {r['argmax_in_support']:.1%}, TV {r['tv']:.3f}, "
                f"held-out MSE {r['test_mse']:.3g}" for r in s["by_kind"]) + ".")
            + (" " + NOTES[s["task"]] if s["task"] in NOTES else ""))


def _markdown(s: dict) -> str:
    L = [f"# jackson-tasks: {s['title']}", "", f"Command: `{s['command']}`", "",
         f"Data: {s['data']}; {s['n_train']} training and {s['n_test']} held-out sequences per seed; "
         f"seeds {', '.join(map(str, s['seeds']))} (each its own data draw and init). Model: Eq. (53), one layer, "
         f"one head, m_h = {s['m_h']}, fitted for {s['steps']} steps (status per seed: {', '.join(s['status'])}).", "",
         "A = the model's attention on held-out sequences, S = the target's own attention in Eq. (8); "
         "F_hat∘f_hat(x) := F_hat(W_V f_hat(x)) is the model on a constant sequence (uniform attention), "
         "compared with the target's F∘f on tokens the target attends to (Prop. B.1).", "",
         "## Findings", "", findings(s), "",
         "## Metrics (mean ± sd over seeds; per seed in summary.json)", "", "| metric | value |", "|---|---|"]
    for k, what in METRICS.items():
        L.append(f"| {what} | {fmt_sd(s['metrics'][k], '.3g')} |")
    if (s.get("control") or {}).get("uniform_support_mass"):
        L.append(f"| the control: mass of uniform attention on the support of S | "
                 f"{fmt_sd(s['control']['uniform_support_mass'], '.3g')} |")
    L += ["", "## Per kind of row", "", "| rows | n rows | held-out MSE | argmax in support | TV(A, S) | mass on support |",
          "|---|---:|---:|---:|---:|---:|"]
    for r in s["by_kind"]:
        L.append(f"| {r['kind']} | {r['n_rows']} | {r['test_mse']:.3g} | {r['argmax_in_support']:.1%} | "
                 f"{r['tv']:.3f} | {r['support_mass']:.3f} |")
    if s["levels"]:
        L += ["", "## A per value of the target's coupling S", "", "| S[t, s] | entries | mean A | sd A |",
              "|---:|---:|---:|---:|"]
        for r in s["levels"]:
            L.append(f"| {r['target']:.4g} | {r['n_entries']} | {r['mean_A']:.4f} | {r['sd_A']:.4f} |")
    if s["fof_by_position"]:
        seeds = [k for k in s["fof_by_position"][0] if k != "position"]
        L += ["", "## F_hat∘f_hat against F∘f by token position (median abs error; the tokens carry their position)", "",
              "| position | " + " | ".join(f"seed {k}" for k in seeds) + " |", "|---:|" + "---:|" * len(seeds)]
        for r in s["fof_by_position"]:
            L.append(f"| {int(r['position'])} | " + " | ".join(f"{r[k]:.3g}" for k in seeds) + " |")
    if s["paper"]:
        L += ["", "## Beside the paper's stated values", "", "| quantity | paper | measured |", "|---|---:|---:|"]
        for r in s["paper"]:
            L.append(f"| {r['quantity']} | {r['paper']:.4g} | {r['measured']:.4g} |")
    return "\n".join(L) + "\n"


def write_report_json(out: Path, s: dict, figures: list[tuple[str, str]]) -> dict:
    """The report hook (jackson/lab_report/page.py): title, section, data, command, seeds, captioned figures, paper values."""
    n = len(s["seeds"])
    tail = (f" Data: {s['data']}; {s['n_test']} held-out sequences per seed; trained on {s['n_train']}. "
            f"Seeds: {n} ({', '.join(map(str, s['seeds']))}); the example is seed {s['seeds'][0]}'s. "
            f"Command: `{s['command']}`.")
    rep = {"title": s["title"], "section": "tasks",
           "data": f"{s['data']}; {s['n_train']} training / {s['n_test']} held-out sequences per seed",
           "command": s["command"], "seeds": s["seeds"],
           "figures": [{"file": f, "caption": what + "." + (
               f" Loss curves of all {n} seeds." if f == "loss_curves.png" else "") + tail} for f, what in figures],
           "paper": s["paper"],
           "text": findings(s) + " The paper reports these examples as pictures only; the 'paper' column holds the "
                                 "values its equations give the target's attention."}
    write_report(out, rep)
    return rep
