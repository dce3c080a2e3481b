"""jackson-tasks: the worked examples of App. B.1 (Figs. 4-6) trained and examined.

For each task (synthetic/nearest_point.py, weighted_average.py, selection_average.py) a one-layer,
one-head Transformer of Eq. (53) is fitted with the core `fit`, one cell per seed on the core
runner, and then compared with the target's own Eq. (8) parts, as Proposition B.1 claims it should:

  * the attention A of the model against the target's selection S (argmax of A in the support of S,
    total variation 1/2 sum_s |A_ts - S_ts|, the mass A puts on S's support, and A averaged per value
    of S, e.g. Eq. 64's {0, 1/3, 2/3, 1});
  * F_hat∘f_hat(x) := F_hat(W_V f_hat(x)) (the model on a constant sequence, where softmax is uniform)
    against the target's F∘f on tokens the target attends to.

config -> cells (one per seed) -> run_cells -> results.csv, summary.md/json -> pictures
(attention.png, graph.png, fof.png, loss_curves.png, from the cell tables) -> report.json.
Tables, summary and report hook: jackson/app_b/results.py; pictures: jackson/app_b/figures.py.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd

from ..runfolder import open_run, table_path
from ..sweep import run_cells
from .results import collect, summarize, write_report_json
from .cell import TaskCell, cells
from .config import QUICK, RUNS, AllRun, as_dict, resolved_out, validate
from ..config import need, read_json


def task_grid(cfg) -> tuple[Path, list[TaskCell]]:
    """The run folder and cells (one per seed) of a checked config (`jackson-tasks TASK --status`)."""
    validate(cfg)
    return Path(resolved_out(cfg)), cells(cfg)


def run_task(cfg, command: str, progress: bool = True) -> dict:
    """Run (or resume) one task's cells and rebuild its tables, summary, pictures and report.json."""
    from .figures import plot_task
    folder, task_cells = task_grid(cfg)
    with open_run(folder, f"jackson-tasks {cfg.task.name}", command, as_dict(cfg)) as out:
        dirs = run_cells(task_cells, out, progress=progress)
        tabs = collect(out, dirs)
        summary = summarize(out, cfg, tabs, command)
        first = dirs[0]
        grid_path = table_path(first, "fof_grid.csv")       # fof_grid.csv.gz (an older cell: fof_grid.csv), if any
        grid = pd.read_csv(grid_path) if grid_path.exists() else None
        figs = plot_task(out, cfg.task, read_json(first / "example.json"),
                         pd.read_csv(table_path(first, "fof.csv")), grid, tabs["curve"], cfg.train.seeds[0])
        write_report_json(out, summary, figs)
    return summary


def all_configs(cfg: AllRun) -> list:
    """The three task configs `jackson-tasks all` runs."""
    out = []
    for name, cls in RUNS.items():
        base = dataclasses.replace(cls(), **QUICK, quick=True) if cfg.quick else cls()
        if cfg.seeds:
            base = dataclasses.replace(base, train=dataclasses.replace(base.train, seeds=tuple(cfg.seeds)))
        if cfg.out:
            base = dataclasses.replace(base, out=str(Path(cfg.out) / name))
        out.append(base)
    return out


def run_all(cfg: AllRun, command: str, progress: bool = True) -> dict:
    subs = all_configs(cfg)
    for sub in subs:          # every task's input is checked before any trains
        validate(sub)
    return {sub.task.name: run_task(sub, command, progress) for sub in subs}


def redraw(folder) -> list[Path]:
    """A finished jackson-tasks folder's pictures drawn again from its files with `plot_task`, what `run_task`
    calls: the task's options from config.json, the first cell's example.json, fof.csv.gz and fof_grid.csv.gz, and
    the run's loss_curves.csv. Trains nothing; writes only the figures (report.json keeps the run's captions)."""
    from .figures import plot_task
    folder = Path(folder)
    need((folder / "config.json").is_file() and (folder / "loss_curves.csv").is_file(),
         f"{folder}: no config.json or loss_curves.csv (not a finished jackson-tasks folder)")
    cfg = read_json(folder / "config.json")
    name = cfg["task"]["name"]
    need(name in RUNS, f"{folder}: task '{name}' is not one of {', '.join(RUNS)}")
    task = RUNS[name]().task
    task = dataclasses.replace(task, **{f.name: cfg["task"][f.name] for f in dataclasses.fields(task)
                                        if f.name in cfg["task"]})
    seed = cfg["train"]["seeds"][0]
    first = sorted(p.parent for p in (folder / "cells").glob(f"*_s{seed}_*/example.json"))
    need(first, f"{folder}/cells: no example.json of seed {seed}")
    grid_path = table_path(first[0], "fof_grid.csv")
    figs = plot_task(folder, task, read_json(first[0] / "example.json"), pd.read_csv(table_path(first[0], "fof.csv")),
                     pd.read_csv(grid_path) if grid_path.exists() else None, pd.read_csv(folder / "loss_curves.csv"),
                     seed)
    return [folder / f for f, _ in figs]
