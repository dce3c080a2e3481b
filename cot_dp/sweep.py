"""cot-dp sweep: tasks x models x D x sizes on the core runner (Fig. 1, Fig. 2, Table 2).

config -> one dataset per (task, size) under <out>/data/ -> cells (task, size, model, D, seed)
-> jackson.sweep.run_cells (atomic, resumable, in-process or Dask) -> results.csv -> heatmaps,
the min-GFLOPs table, summary.md / summary.json and report.json for the lab report.
"""
from __future__ import annotations

import contextlib
import dataclasses
import time
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from jackson.config import UsageError, need
from jackson.runfolder import open_run, write_report
from jackson.sweep import run_cells
from . import data, flops
from .model import CotTransformer
from .train import accuracy, train
from .cell import CotCell, write_csv
from .grid import SweepConfig, validate
from .plots import figure_caption, plot_heatmaps, plot_locality
from .tables import answer_baseline, summarize
from jackson.config import read_json


def make_datasets(cfg: SweepConfig, command: str, progress: bool = True) -> None:
    """One dataset per (task, size), generated once and kept (reruns reuse it if it matches)."""
    for t in cfg.task_list():
        for s in cfg.sizes_of(t):
            folder, task = cfg.data_dir(t, s), cfg.task_cfg(t, s)
            if (folder / "meta.json").is_file():
                try:
                    same = data.same_dataset(data.read_meta(folder), task, cfg.data_seed, cfg.n_train, cfg.n_test)
                except data.DataError as e:
                    raise UsageError(f"--out: {e}; use another --out") from None
                need(same, f"--out: {folder} holds a dataset made with other settings; use another --out")
            else:
                if progress:
                    print(f"data: {t} size {s}: {cfg.n_train} train + {cfg.n_test} test examples -> {folder}")
                try:
                    tr, te = data.generate(task, cfg.n_train, cfg.n_test, cfg.data_seed)
                except data.DataError as e:
                    raise UsageError(str(e)) from None
                try:
                    data.write_dataset(folder, task, tr, te, cfg.data_seed, command, root=cfg.resolved_out())
                except data.DataError as e:
                    raise UsageError(f"--out: {e}") from None
            L = data.read_meta(folder)["max_len"]
            need(not cfg.max_len or cfg.max_len >= L, f"--max-len: {t} size {s} has sequences of {L} tokens; "
                                                      f"a model built for {cfg.max_len} positions cannot fit them")


def write_report_json(out: Path, cfg: SweepConfig, command: str, figures: list[Path], summary: dict) -> None:
    """The lab report's hook: report.json beside summary.md (the baselines are in summary.json when
    results.csv has them)."""
    paper = []
    if "arithmetic" in summary["tasks"]:
        mg = pd.read_csv(out / "min_gflops.csv")
        for m in cfg.model_list():
            ours = mg[(mg.task == "arithmetic") & (mg.model == m)].sort_values("size")
            paper.append({"quantity": f"Table 2, {m}: min GFLOPs to 90% (paper at L = 87/221/355/505)",
                          "paper": " / ".join(f"{v:g}" for v in flops.PAPER_TABLE2[m]),
                          "measured": " / ".join(f"{x.min_gflops:.3g} (L={x.L})" if x.min_gflops == x.min_gflops
                                                 else f"not reached (L={x.L})" for _, x in ours.iterrows())})
    text = [f"Preset: {cfg.preset}{cfg.changes_note}."] + [
        f"{task}: D needed for {cfg.target_acc:.0%} by size -- " + "; ".join(
            f"{m} {', '.join('-' if d is None else str(d) for d in v['min_d'])} ({v['trend']})" for m, v in ms.items())
        for task, ms in summary["tasks"].items()]
    rep = {"title": f"Efficient Transformers on CoT DP tasks ({', '.join(cfg.task_list())}; {cfg.preset_label})",
           "section": "cot_dp",
           "data": f"synthetic CoT datasets, seed {cfg.data_seed}, {cfg.n_train} train / {cfg.n_test} test per task and size",
           "command": command, "seeds": list(cfg.seeds),
           "figures": [{"file": p.name, "caption": figure_caption(p, cfg, "baseline" in summary)} for p in figures],
           "paper": paper, "text": " ".join(text)}
    write_report(out, rep)


# ---- a finished folder's figures and report.json again from its files (no training, no data) --------

REDRAW_FILES = ("results.csv", "config.json")


def folder_config(folder: Path) -> SweepConfig:
    """The SweepConfig a finished folder's config.json records (the derived preset and grid are skipped)."""
    from jackson.config import from_dict
    return from_dict(SweepConfig, read_json(Path(folder) / "config.json"),
                     where=f"{folder}/config.json")


def redraw(folder) -> list[Path]:
    """Draw a finished cot-dp sweep folder's figures again from its results.csv and config.json with the
    functions the run calls (`plot_heatmaps`, `plot_locality`): each PNG at 200 dpi, a PDF beside it.
    Trains nothing, makes no dataset, writes no table, summary or report.json."""
    folder = Path(folder)
    missing = [n for n in REDRAW_FILES if not (folder / n).is_file()]
    need(not missing, f"{folder}: no {', '.join(missing)} (not a finished cot-dp sweep folder)")
    cfg, res = folder_config(folder), pd.read_csv(folder / "results.csv")
    loc = plot_locality(folder, res, cfg)
    return plot_heatmaps(folder, res, cfg) + ([loc] if loc else [])


def rewrite_report_json(folder) -> Path:
    """A finished folder's report.json written again by `write_report_json` from the folder's own
    config.json, command.txt, summary.json and min_gflops.csv, for the figures `redraw` draws: its captions
    then describe the figures as they are drawn now."""
    folder = Path(folder)
    cfg = folder_config(folder)
    tasks = cfg.task_list()
    figs = [folder / f"accuracy_{t}.png" for t in tasks]
    figs += [folder / "locality_ed_vs_ed_local.png"] if {"ed", "ed_local"} <= set(tasks) else []
    write_report_json(folder, cfg, (folder / "command.txt").read_text().strip(), figs,
                      read_json(folder / "summary.json"))
    return folder / "report.json"


def estimate(cfg: SweepConfig, out: Path, n_steps: int = 8, progress: bool = True) -> pd.DataFrame:
    """Measure every cell's step time (median of n_steps after 2 warm-up steps) and one generation
    batch, and project the cell's wall time: steps x step + loss-curve points + generation."""
    rows = []
    for cell in tqdm(cfg.cells(), desc="timing", disable=not progress, dynamic_ncols=True):
        ds = data.load(cell.data_dir, cell.task, check_answers=False)
        model = CotTransformer(cell.model, len(ds.tokenizer), cell.max_len or ds.max_len, cell.seed)
        t = cell.train
        probe = dataclasses.replace(t, steps=2 + n_steps, epochs=0, warmup=0, eval_every=10 ** 9, eval_size=1)
        step = float(np.median(train(model, ds.train, ds.test, probe, cell.seed, cell.device, False).step_s[2:]))
        n_gen = min(t.gen_batch, len(ds.test))
        t0 = time.perf_counter()
        accuracy(model, ds.test, cell.device, t.gen_batch, n_gen)
        gen = time.perf_counter() - t0
        total = t.total_steps(cfg.n_train)
        n_eval = cell.n_eval or len(ds.test)
        curve = (total // t.eval_every + 1) * step * t.eval_size / t.batch_size / 3   # forward only
        rows.append({"task": cell.task.name, "size": cell.task.size, "model": cell.model.model,
                     "d_model": cell.model.d_model, "seed": cell.seed, "L": ds.max_len, "step_ms": 1000 * step,
                     "steps": total, "gen_s": gen * n_eval / n_gen,
                     "projected_s": total * step + curve + gen * n_eval / n_gen})
    est = pd.DataFrame(rows)
    write_csv(est, out / "estimate.csv", float_format="%.4g")
    return est


def sweep_grid(cfg: SweepConfig) -> tuple[Path, list[CotCell]]:
    """The run folder and cells of a checked config (`cot-dp sweep --status`)."""
    validate(cfg)
    return cfg.resolved_out(), cfg.cells()


def run_sweep(cfg: SweepConfig, command: str, progress: bool = True) -> dict:
    """Generate (or reuse) the datasets, run (or resume) every cell, rebuild tables and figures."""
    out, cells = sweep_grid(cfg)
    if progress:
        print(f"output: {out}" + ("" if cfg.out else " (the default for this preset; --out to choose)"), flush=True)
    # an estimate takes the folder's lock but leaves the run's own config and command alone
    with open_run(out, "cot-dp sweep", command, cfg.as_dict(), scheduler=cfg.scheduler, device=cfg.device,
                  record=not cfg.estimate):
        make_datasets(cfg, command, progress)
        if cfg.estimate:
            est = estimate(cfg, out, progress=progress)
            return {"estimate": est}
        dirs = run_cells(cells, out, scheduler=cfg.scheduler or None, progress=progress)
        for c in cells:                # each was removed when its cell finished; this catches a run stopped in between
            c.cleanup()
        with contextlib.suppress(OSError):
            cfg.ckpt_dir().rmdir()     # only if empty: set-aside checkpoints (<key>.pt.corrupt-*) are kept
        res = pd.concat([pd.read_csv(d / "rows.csv") for d in dirs], ignore_index=True)
        base = {(t, s): answer_baseline(cfg.data_dir(t, s), cfg.task_cfg(t, s), cfg.n_eval)
                for t in cfg.task_list() for s in cfg.sizes_of(t)}
        res["baseline"] = [base[(t, s)] for t, s in zip(res.task, res["size"])]
        write_csv(res, out / "results.csv", float_format="%.6g")
        summary = summarize(out, res, cfg, command)
        figs = plot_heatmaps(out, res, cfg)
        loc = plot_locality(out, res, cfg)
        figs += [loc] if loc else []
        write_report_json(out, cfg, command, figs, summary)
    return summary
