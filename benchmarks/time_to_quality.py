"""Fit time and time to quality of jackson-sweep run folders, from their cells (nothing is trained).

    python benchmarks/time_to_quality.py reports/jackson/fig1-sin reports/jackson/fig1-full
    python benchmarks/time_to_quality.py --alpha 1,1.5 --rank inf reports/jackson/fig1-full
    python benchmarks/time_to_quality.py --against reports/jackson/fig1-full reports/jackson/fig1-sin

Time to quality of a cell: the first evaluation step after which every chosen member's training-subset MSE stays
within 10% of its final value (curve.csv; the held-out MSE is measured only at the end), as that share of the cell's
fit wall time (cell.json `fit_wall_s`).  Printed per folder: the cells, their summed fit time, the summed time to
quality, and the latest step at which a cell reached quality.

--against OTHER: also the time to OTHER's quality -- the first evaluation step from which every chosen member's
training-subset MSE stays at or below the final one of the same (alpha, rank, seed, m_h) member in OTHER (a cell
that never gets there counts its whole fit time, and is counted).

--train: train recipes side by side on the card's target (alpha 1.5, rank inf, seed 0, m_h 8 and 16, one thread),
each a jackson-sweep run folder under --root (a killed run resumes; a finished recipe is read, not retrained), and
after each recipe rewrite --table: per recipe and m_h the held-out MSE, the fit time, and the time until the member's
training-subset MSE stays within 10% of the best final training-subset MSE any finished recipe reached for that m_h
(the held-out MSE is measured only at the end of a fit).

    python benchmarks/time_to_quality.py --train        # every recipe, then reports/jackson/TIME_TO_QUALITY.md
    python benchmarks/time_to_quality.py --train --recipes today,steps24k
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from jackson.runfolder import table_path

WITHIN = 0.10      # "quality": within this share of the final training-subset MSE


def _chosen_curve(cell: Path) -> pd.DataFrame:
    """A cell's loss curve (curve.csv), its chosen members only."""
    c = pd.read_csv(table_path(cell, "curve.csv"))
    return c[c.chosen] if "chosen" in c else c


def cell_quality(cell: Path) -> tuple[float, float, int, int]:
    """(fit wall s, time to quality s, step of quality, steps of the budget) of one cell folder."""
    meta = json.loads((cell / "cell.json").read_text())
    steps = int(meta["cell"]["fit"]["steps"])
    need = 0
    for _, g in _chosen_curve(cell).groupby("member"):
        g = g.sort_values("step")
        final = g.train_mse.iloc[-1]
        bad = g.step[(g.train_mse - final).abs() > WITHIN * final]
        need = max(need, int(g.step[g.step > bad.max()].min()) if len(bad) else int(g.step.min()))
    need = min(need, steps)
    wall = float(meta["fit_wall_s"])
    return wall, wall * need / steps, need, steps


def _cell_id(cell: Path) -> tuple:
    m = json.loads((cell / "cell.json").read_text())["cell"]
    return float(m["alpha"]), str(m["rank"]), int(m["seed"])


def to_other_quality(cell: Path, other: Path) -> tuple[float, bool]:
    """(seconds until every chosen member stays at or below `other`'s final training MSE of its m_h, reached)."""
    meta = json.loads((cell / "cell.json").read_text())
    steps, wall = int(meta["cell"]["fit"]["steps"]), float(meta["fit_wall_s"])
    c, o = _chosen_curve(cell), _chosen_curve(other)
    goal = o.sort_values("step").groupby("m_h").train_mse.last()
    need, reached = 0, True
    for m_h, g in c.groupby("m_h"):
        g = g.sort_values("step")
        above = g.step[g.train_mse > goal.get(m_h, float("inf"))]
        if len(above) and above.max() == g.step.max():
            reached = False
            need = steps
        elif len(above):
            need = max(need, int(g.step[g.step > above.max()].min()))
        else:
            need = max(need, int(g.step.min()))
    return wall * min(need, steps) / steps, reached


# ---- recipes trained side by side ------------------------------------------------------------------------------

TARGET = ["--alpha", "1.5", "--rank", "inf", "--seeds", "0", "--m-h", "8,16", "--threads", "1"]
RECIPES = {   # name: (jackson-sweep fit options, what it tries)
    "today": ({"steps": 6000, "lr": 3e-3}, "the card's recipe: 6,000 steps, peak 3e-3, cosine"),
    "lr1e-2": ({"steps": 6000, "lr": 1e-2}, "a higher peak rate"),
    "steps12k": ({"steps": 12000, "lr": 3e-3}, "twice the steps"),
    "batch256": ({"steps": 6000, "lr": 6e-3, "batch_size": 256}, "4x the batch, twice the peak rate"),
    "steps24k": ({"steps": 24000, "lr": 3e-3}, "4x the steps"),
    "cycles4": ({"steps": 6000, "lr": 3e-3, "cycles": 4}, "cosine restarted at the peak, up to 4 cycles while improving"),
    "plateau24k": ({"steps": 24000, "lr": 3e-3, "schedule": "plateau"}, "reduce-on-plateau, 24,000 steps at most"),
    "steps48k": ({"steps": 48000, "lr": 3e-3}, "8x the steps"),
    "lr1e-2-guard": ({"steps": 6000, "lr": 1e-2, "guard": 10}, "the higher peak rate with the jump guard "
                     "(`--guard 10`: a member whose training-subset MSE jumps above 10x its best check gets that "
                     "check's weights back and half its peak rate)"),
    "lr1e-2-12k": ({"steps": 12000, "lr": 1e-2}, "the higher peak rate over twice the steps"),
    "lr1e-2-12k-guard": ({"steps": 12000, "lr": 1e-2, "guard": 10}, "the same with the jump guard"),
    "steps24k-guard": ({"steps": 24000, "lr": 3e-3, "guard": 10}, "4x the steps with the jump guard"),
}


def recipe_command(name: str, root: str) -> list[str]:
    opts = RECIPES[name][0]
    return ["jackson-sweep", *TARGET, *[w for k, v in opts.items() for w in (f"--{k.replace('_', '-')}", str(v))],
            "--out", f"{root}/{name}"]


def steps_to(curve: pd.DataFrame, goal: float) -> int | None:
    """The first evaluation step from which one member's training-subset MSE stays at or below `goal`; None if
    its last point is above it."""
    g = curve.sort_values("step")
    above = g.step[g.train_mse > goal]
    if len(above) and above.max() == g.step.max():
        return None
    return int(g.step[g.step > above.max()].min()) if len(above) else int(g.step.min())


def recipe_rows(root: str, names: list[str]) -> list[dict]:
    """One row per finished recipe and m_h: held-out and training MSE, fit time, and time to the best's 10%."""
    found = {}
    for name in names:
        folder = Path(root) / name
        cells = sorted(folder.glob("cells/*/cell.json"))
        if not (folder / "results.csv").is_file() or not cells:
            continue
        res = pd.read_csv(folder / "results.csv")
        curve = _chosen_curve(cells[0].parent)
        found[name] = (res, curve, float(json.loads(cells[0].read_text())["fit_wall_s"]))
    rows = []
    for name, (res, curve, wall) in found.items():
        last = int(curve.step.max())
        for _, r in res.sort_values("m_h").iterrows():
            best = min(float(o.loc[o.m_h == r.m_h, "train_mse"].min()) for o, _, _ in found.values())
            step = steps_to(curve[curve.m_h == r.m_h], 1.1 * best)
            rows.append({"recipe": name, "m_h": int(r.m_h), "test_mse": float(r.test_mse), "train_mse": float(r.train_mse),
                         "fit_s": wall, "steps_run": last, "to_best_s": None if step is None else wall * step / last,
                         "status": r.status, "diverged": int(r.get("n_diverged", 0))})
    return rows


def write_table(rows: list[dict], path: str, root: str) -> None:
    import datetime
    lines = ["# Time to quality on the card's target", "",
             f"Written {datetime.date.today().isoformat()} by `python benchmarks/time_to_quality.py --train` (the "
             "recipes are `RECIPES` there).", "",
             "alpha 1.5, rank inf, seed 0, m_h 8 and 16 trained as one bank on one thread (2 CPU cores, the other "
             "often busy: times are comparable within a row's run, roughly across runs). *to best*: fit seconds until "
             "the member's training-subset MSE stays within 10% of the best final training-subset MSE any recipe "
             "below reached for that m_h (the held-out MSE is measured only at a fit's end); `never`: its last "
             "point is above that. Each recipe's command is `jackson-sweep " + " ".join(TARGET) + " OPTIONS --out "
             f"{root}/NAME`.", "",
             "| recipe | options | m_h | held-out MSE | training MSE | steps run | fit (s) | to best (s) | schedule's word |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        opts = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in RECIPES[r["recipe"]][0].items())
        to = "never" if r["to_best_s"] is None else f"{r['to_best_s']:,.0f}"
        word = "stopped" if r["status"] == "converged" else "still improving" if r["status"] == "budget" else r["status"]
        lines.append(f"| {r['recipe']} | `{opts}` | {r['m_h']} | {r['test_mse']:.3g} | {r['train_mse']:.3g} | "
                     f"{r['steps_run']:,} | {r['fit_s']:,.0f} | {to} | {word}{' (diverged)' if r['diverged'] else ''} |")
    lines += ["", "What each recipe tries: " + "; ".join(f"*{k}*: {v[1]}" for k, v in RECIPES.items()) + "."]
    Path(path).write_text("\n".join(lines) + "\n")


def train(names: list[str], root: str, table: str) -> int:
    t0 = time.monotonic()
    for i, name in enumerate(names):
        cmd = recipe_command(name, root)
        print(f"[{i + 1}/{len(names)}] {name}: {' '.join(cmd)} (elapsed {time.monotonic() - t0:,.0f} s)", flush=True)
        exe = shutil.which(cmd[0]) or str(Path(sys.executable).with_name(cmd[0]))   # this Python's console script
        if subprocess.run([exe, *cmd[1:]], stdout=subprocess.DEVNULL).returncode:
            print(f"{name}: jackson-sweep failed; the table keeps the recipes that finished", file=sys.stderr)
        write_table(recipe_rows(root, names), table, root)
        print(f"table: {table}", flush=True)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="*", help="jackson-sweep run folders")
    ap.add_argument("--train", action="store_true", help="train the recipes (RECIPES) and write --table")
    ap.add_argument("--recipes", default=",".join(RECIPES), help="with --train: which recipes (a comma list)")
    ap.add_argument("--root", default="runs/time_to_quality", help="with --train: where the recipes' run folders go")
    ap.add_argument("--table", default="reports/jackson/TIME_TO_QUALITY.md", help="with --train: the table written")
    ap.add_argument("--alpha", default="", help="only cells of these alphas (a comma list)")
    ap.add_argument("--rank", default="", help="only cells of these ranks (a comma list: 2,6,inf)")
    ap.add_argument("--against", default="", help="another run folder of the same grid: also the time to its quality")
    a = ap.parse_args(argv)
    if a.train:
        names = [n.strip() for n in a.recipes.split(",") if n.strip()]
        bad = [n for n in names if n not in RECIPES]
        if bad:
            ap.error(f"--recipes: unknown {', '.join(bad)}; choose from {', '.join(RECIPES)}")
        return train(names, a.root, a.table)
    if not a.folders:
        ap.error("give run folders, or --train")
    alphas = {float(x) for x in a.alpha.split(",") if x}
    ranks = {x.strip() for x in a.rank.split(",") if x}
    for folder in a.folders:
        cells = sorted(p.parent for p in Path(folder, "cells").glob("*/cell.json"))
        if not cells:
            print(f"{folder}: no finished cells", file=sys.stderr)
            return 1
        n = wall = q = t_other = 0
        missed = 0
        others = ({_cell_id(p.parent): p.parent for p in Path(a.against, "cells").glob("*/cell.json")}
                  if a.against else {})
        latest = (0, 0)
        for cell in cells:
            meta = json.loads((cell / "cell.json").read_text())["cell"]
            if (alphas and float(meta["alpha"]) not in alphas) or (ranks and str(meta["rank"]) not in ranks):
                continue
            w, t, step, steps = cell_quality(cell)
            n, wall, q = n + 1, wall + w, q + t
            latest = max(latest, (step, steps))
            if a.against:
                if _cell_id(cell) not in others:
                    print(f"{folder}: {cell.name} has no cell in {a.against}", file=sys.stderr)
                    return 1
                t2, ok = to_other_quality(cell, others[_cell_id(cell)])
                t_other, missed = t_other + t2, missed + (not ok)
        print(f"{folder}: {n} cells, fit {wall:,.0f} s, to quality {q:,.0f} s ({q / wall:.0%}); the last cell reached "
              f"quality at step {latest[0]:,} of {latest[1]:,}")
        if a.against:
            print(f"  to the quality of {a.against}: {t_other:,.0f} s ({t_other / wall:.0%} of the fit time); "
                  f"{missed} of {n} cells never reach it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
