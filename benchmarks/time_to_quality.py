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
"""
from __future__ import annotations

import argparse
import json
import sys
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+", help="jackson-sweep run folders")
    ap.add_argument("--alpha", default="", help="only cells of these alphas (a comma list)")
    ap.add_argument("--rank", default="", help="only cells of these ranks (a comma list: 2,6,inf)")
    ap.add_argument("--against", default="", help="another run folder of the same grid: also the time to its quality")
    a = ap.parse_args(argv)
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
