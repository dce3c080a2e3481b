"""The `cot-dp` commands (data, sweep, train, mask): each parses its config through run_cli, calls a
library function and prints where the results went.  USAGE is what `cot-dp --help` prints."""
from __future__ import annotations

import dataclasses
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from jackson.command import cli_run
from jackson.config import Option, UsageError, check_out_dir, fail, install_signals, need
from jackson.figures import check_figure_file
from jackson.runfolder import check_run_folder, open_run
from jackson.hparams import MAX_SEED
from .settings import ArchConfig, ModelConfig
from .grid import CPU_TRAIN
from .tasks import TaskConfig, TaskParams
from .settings import TrainConfig

USAGE = """usage: cot-dp COMMAND [options]

Standard, sparse and linear Transformers on chain-of-thought dynamic-programming tasks (Yang et al.):
accuracy by model size D and problem size, and the GFLOPs each needs.

commands:
  data   write a CoT dataset in the public CoT benchmark's text format
  sweep  train every model x D x size x seed of a preset grid; tables, heatmaps, min GFLOPs (resumable)
  train  train one model on one dataset folder (ours or the benchmark's) and score greedy generation
  mask   print (and draw) the Sparse Transformer pattern of Eq. (6)

examples:
  cot-dp data  --task arithmetic --size 6 --out data/arith6
  cot-dp sweep --task arithmetic --model standard,sparse,linear --d-model 32,64,128 --size 4,5,6
  cot-dp sweep --task arithmetic --device cuda --full       the paper's sizes and budget
  cot-dp sweep --quick --out /tmp/cot                       a seconds-long smoke run
  cot-dp train --data data/arith6 --model linear --d-model 64
  cot-dp mask  --length 64 --png mask.png

`cot-dp COMMAND --help` lists a command's options with their defaults.
"""

COMMANDS = ("data", "sweep", "train", "mask")


def run_cli(prog: str, cls, description: str, run, argv: list[str], presets: dict | None = None, grid=None):
    """jackson.command.cli_run with named presets: a boolean field named like a preset swaps the
    defaults for the preset's before the options given on the command line are applied."""
    def preset(given: dict) -> dict:
        out: dict = {}
        for name, overrides in (presets or {}).items():
            if given.get(name):
                out.update(overrides)
        return out
    return cli_run(prog, cls, description, preset, run, argv, grid)


# ---- cot-dp data -------------------------------------------------------------------------------

@dataclass(frozen=True)
class DataConfig:
    task: str = "arithmetic"   # arithmetic | ed | ed_local | lis
    size: int = 4              # operators (arithmetic), first string's length (ed, ed_local), sequence length (lis)
    n_train: int = 30000       # training examples (as cot-dp sweep: a task and size give the very dataset the sweep trains on)
    n_test: int = 512          # test examples (disjoint from train)
    seed: int = 2023           # dataset seed (as cot-dp sweep's --data-seed)
    params: TaskParams = field(default_factory=TaskParams)
    out: str = ""              # dataset folder (default: data/<task>-<size>)
    force: bool = False        # write into a non-empty --out that holds something else (replaces only the dataset's own files; removes nothing)

    CLI = {"seed": Option("--data-seed", old=("--seed",))}   # --seed is a model's seed (cot-dp train)


def make_data(cfg: DataConfig, command: str) -> dict:
    """Generate and write the dataset; never deletes anything.  A non-empty --out is used only if
    its meta.json names this very dataset (then nothing is written) or with --force (then only
    the dataset's own files, data.OWNED_FILES, are written or replaced)."""
    from . import data
    task = TaskConfig(name=cfg.task, size=cfg.size, params=cfg.params)
    try:
        task.check()
    except ValueError as e:
        raise UsageError(str(e)) from None
    need(cfg.n_train >= 1 and cfg.n_test >= 1, f"--n-train, --n-test: must be >= 1, got {cfg.n_train}, {cfg.n_test}")
    need(0 <= cfg.seed <= MAX_SEED, f"--data-seed: must be in 0..2**63-1, got {cfg.seed}")
    out = Path(cfg.out or f"data/{cfg.task}-{cfg.size}")
    check_out_dir(out)
    if out.is_dir() and any(out.iterdir()):
        try:
            meta = data.read_meta(out)
        except data.DataError:       # no meta.json, or one that cannot be read: not a dataset of ours
            meta = None
        same = meta is not None and data.same_dataset(meta, task, cfg.seed, cfg.n_train, cfg.n_test)
        if same and all((out / f).is_file() for f in data.SPLIT_FILES):
            return meta | {"out": str(out), "already_there": True}
        what = ("holds a dataset made with other settings (its meta.json differs in task, options, seed or sizes)"
                if meta is not None else "is not empty and is not a cot-dp dataset folder (no readable meta.json)")
        need(same or cfg.force, f"--out: {out} {what}; give a new or empty folder, or --force to write the "
                                "dataset's files into it (nothing else there is touched)")
        try:
            data.check_no_links(out)
        except data.DataError as e:
            raise UsageError(f"--out: {e}") from None
        for name in data.OWNED_FILES:
            f = out / name
            need(not f.parent.exists() or f.parent.is_dir(), f"--out: {f.parent} exists and is not a folder")
            need(not f.exists() or f.is_file(), f"--out: {f} exists and is not a file")
    try:
        tr, te = data.generate(task, cfg.n_train, cfg.n_test, cfg.seed)
    except data.DataError as e:
        raise UsageError(str(e)) from None
    try:
        data.write_dataset(out, task, tr, te, cfg.seed, command)
    except data.DataError as e:
        raise UsageError(f"--out: {e}") from None
    except OSError as e:
        raise UsageError(f"--out: cannot write the dataset into {out} ({e.strerror or e}); "
                         "whatever it held before is unchanged") from None
    return data.read_meta(out) | {"out": str(out), "already_there": False}


def data_main(argv: list[str]) -> int:
    cfg, meta = run_cli("cot-dp data", DataConfig, "Generate a chain-of-thought DP dataset in the public "
                        "CoT benchmark's format (<out>/chain/{train,test}_data.txt).", make_data, argv)
    if meta["already_there"]:
        print(f"data: already there: {meta['out']}/meta.json names this dataset (same task, seed and sizes); "
              "nothing written")
    print(f"data: {meta['out']}/chain/train_data.txt ({meta['n_train']} examples), "
          f"{meta['out']}/chain/test_data.txt ({meta['n_test']}); longest sequence {meta['max_len']} tokens, "
          f"vocabulary {len(meta['vocab'])}")
    return 0


# ---- cot-dp sweep ------------------------------------------------------------------------------

def sweep_main(argv: list[str]) -> int:
    from .grid import PRESETS, SweepConfig, validate

    def run_sweep(cfg, command):
        validate(cfg)                       # every option checked before torch is imported
        from .sweep import run_sweep        # torch: only for a run, never for --help or a bad option
        return run_sweep(cfg, command)

    def sweep_grid(cfg):
        validate(cfg)
        from .sweep import sweep_grid
        return sweep_grid(cfg)
    presets = {"quick": PRESETS["quick"], "full": PRESETS["full"]}
    cfg, summary = run_cli("cot-dp sweep", SweepConfig, "Train standard, sparse and linear Transformers on CoT "
                           "DP tasks over D and problem size; accuracy heatmaps (Fig. 1) and min GFLOPs to 90% "
                           "(Table 2). Default: the CPU preset; --quick: seconds; --full: the paper's scale.",
                           run_sweep, argv, presets, sweep_grid)
    out = cfg.resolved_out()
    if cfg.estimate:
        est = summary["estimate"]
        g = est.groupby(["task", "model"]).agg(step_ms=("step_ms", "mean"), projected_s=("projected_s", "sum"))
        for (task, m), r in g.iterrows():
            print(f"{task:10s} {m:8s} mean step {r.step_ms:7.1f} ms, cells {r.projected_s / 60:7.1f} min")
        tot = est.projected_s.sum()
        print(f"projected: {tot / 3600:.2f} h in one process ({len(est)} cells, {cfg.preset} preset, {cfg.device}); "
              f"per cell: {out}/estimate.csv")
        return 0
    for line in sweep_headline(summary, cfg.target_acc):
        print(line)
    print(f"results: {out}/results.csv ({cfg.preset_label})")
    print(f"summary: {out}/summary.md, {out}/min_gflops.csv, {out}/report.json")
    print("figures: " + ", ".join(f"{out}/accuracy_{t}.png" for t in cfg.task_list())
          + (f", {out}/locality_ed_vs_ed_local.png" if {"ed", "ed_local"} <= set(cfg.task_list()) else ""))
    return 0


def sweep_headline(summary: dict, target_acc: float) -> list[str]:
    """One line per task: the smallest D that reaches the target accuracy at each size, per model ('-': none)."""
    lines = []
    for task, ms in summary["tasks"].items():
        sizes = next(iter(ms.values()))["sizes"] if ms else []
        lines.append(f"{task}: smallest D reaching {target_acc:.0%} accuracy at size {', '.join(map(str, sizes))}: "
                     + "; ".join(f"{m} {', '.join('-' if d is None else str(d) for d in v['min_d'])} ({v['trend']})"
                                 for m, v in ms.items()))
    return lines


# ---- cot-dp train ------------------------------------------------------------------------------

@dataclass(frozen=True)
class TrainRunConfig:
    data: str = ""              # dataset folder holding chain/train_data.txt and chain/test_data.txt
    task: str = ""              # the data's task (default: from <data>/meta.json)
    size: int = 0               # the data's size, which sets the vocabulary (default: from meta.json)
    params: TaskParams = field(default_factory=TaskParams)
    model: str = "standard"     # standard | sparse | linear
    dim: int = 64               # embedding dimension D of the one model (cot-dp sweep's default: its preset's grid)
    arch: ArchConfig = field(default_factory=ArchConfig)
    train: TrainConfig = field(default_factory=lambda: CPU_TRAIN)   # the training of a cot-dp sweep cell
    seed: int = 0               # model seed (init, batch order, dropout)
    n_eval: int = 0             # test examples scored by greedy generation (0: all)
    max_len: int = 0            # positions the model is built for (0: the data's longest sequence)
    device: str = "cpu"         # cpu | cuda | cuda:N
    out: str = ""               # result folder (default: <data>/runs/<model>-d<D>-s<seed>)
    ckpt_every_s: float = 120.0  # seconds between resume checkpoints (<out>/<cell>.pt, removed when done; 0: every step)

    CLI = {"dim": Option("--d-model", old=("--dim",))}   # the results.csv column


def resolve_task(cfg: TrainRunConfig, folder: Path) -> TaskConfig:
    """The task that made `folder`: its meta.json's (ours), else --task, --size and the task options.

    Without a meta.json (the public benchmark's folders), LIS's --value-range is raised to cover the
    largest number in the files (their LIS data reach 249, above the default range 0..149), and the
    line printed says so."""
    from . import data
    task = TaskConfig(name=cfg.task, size=cfg.size, params=cfg.params)
    if (folder / "meta.json").exists():
        made = data.task_from_meta(folder)
        need(cfg.task in ("", made.name) and cfg.size in (0, made.size),
             f"--task, --size: {folder} was made for {made.name} size {made.size} (meta.json), got {cfg.task or '-'} size {cfg.size or '-'}")
        need(cfg.params in (TaskParams(), made.params),
             f"--p, --value-range, ...: {folder}/meta.json records the task options {made.params}; leave them out")
        task = made
    need(bool(task.name) and task.size > 0, f"--task, --size: {folder} has no meta.json; say which task and size made it")
    task.check()
    if task.name == "lis" and not (folder / "meta.json").exists():
        top, where = data.largest_number_at(folder)
        if top >= task.params.value_range:
            need(top < 2048, f"{where}: number {top}; LIS values must be below 2048")
            task = dataclasses.replace(task, params=dataclasses.replace(task.params, value_range=top + 1))
            print(f"data: {folder} holds numbers up to {top}: --value-range raised from {cfg.params.value_range} "
                  f"to {top + 1} (taken from the data)")
    return task


def train_one(cfg: TrainRunConfig, command: str) -> dict:
    import pandas as pd
    from . import data
    from .cell import CotCell
    # the options first: nothing is read, computed or written before they all pass
    try:
        cfg.train.check()
        model = ModelConfig(model=cfg.model, d_model=cfg.dim, arch=cfg.arch)
        model.check()
    except ValueError as e:
        raise UsageError(str(e)) from None
    need(0 <= cfg.seed <= MAX_SEED, f"--seed: must be in 0..2**63-1, got {cfg.seed}")
    need(cfg.n_eval >= 0 and cfg.max_len >= 0 and cfg.size >= 0,
         f"--n-eval, --max-len, --size: must be >= 0, got {cfg.n_eval}, {cfg.max_len}, {cfg.size}")
    need(cfg.device == "cpu" or cfg.device.startswith("cuda"), f"--device: cpu, cuda or cuda:N, got {cfg.device}")
    need(math.isfinite(cfg.ckpt_every_s) and cfg.ckpt_every_s >= 0,
         f"--ckpt-every-s: must be a finite number of seconds >= 0 (0: every step), got {cfg.ckpt_every_s}")
    need(bool(cfg.data), "--data: give a dataset folder (cot-dp data writes one)")
    folder = Path(cfg.data)
    need(folder.is_dir(), f"--data: {folder} is not a folder")
    try:
        task = resolve_task(cfg, folder)
    except ValueError as e:           # data.DataError included: the message names the file
        raise UsageError(str(e)) from None
    out = Path(cfg.out or folder / "runs" / f"{cfg.model}-d{cfg.dim}-s{cfg.seed}")
    check_run_folder(out, "cot-dp train")
    try:
        ds = data.load(folder, task)
    except data.DataError as e:
        raise UsageError(str(e)) from None
    need(not cfg.max_len or cfg.max_len >= ds.max_len,
         f"--max-len: the data has sequences of {ds.max_len} tokens; a model built for {cfg.max_len} positions cannot fit them")
    from .settings import check_run_memory      # the longest line sets L: priced before the run folder is opened
    check_run_memory(model, cfg.train, max(cfg.max_len, ds.max_len + 1), len(ds.tokenizer), f"--data {folder}")
    if cfg.device == "cpu":     # and its time, a floor (jackson.budget.check_time; no rate measured on a CUDA device)
        from jackson import budget
        from .settings import step_flops_floor
        steps = cfg.train.total_steps(len(ds.train))
        budget.check_time("this training run", steps * step_flops_floor(
            model, cfg.train, max(cfg.max_len, ds.max_len + 1), len(ds.tokenizer)), f"{steps:,} steps")
    # the resume checkpoint sits in the run folder: a stopped `cot-dp train` rerun the same way resumes from it
    cell = CotCell(task=task, model=model, train=cfg.train, n_train=len(ds.train), n_test=len(ds.test),
                   data_seed=-1, seed=cfg.seed, n_eval=cfg.n_eval, max_len=cfg.max_len, data_dir=str(folder),
                   device=cfg.device, ckpt_dir=str(out.expanduser().resolve()), ckpt_every_s=cfg.ckpt_every_s)
    with open_run(out, "cot-dp train", command, dataclasses.asdict(cfg) | {"task_resolved": dataclasses.asdict(task)},
                  device=cfg.device) as run_dir:
        cell.run(run_dir, progress=True)
        # a sweep cell's rows.csv is its run's results.csv here: one file name per kind across commands
        (run_dir / "rows.csv").replace(run_dir / "results.csv")
        cell.cleanup()
        return pd.read_csv(run_dir / "results.csv").iloc[0].to_dict() | {"out": str(out)}


def train_main(argv: list[str]) -> int:
    cfg, row = run_cli("cot-dp train", TrainRunConfig, "Train one model on one dataset folder (ours or the "
                       "public CoT benchmark's) and score greedy generation. Its defaults are those of one cot-dp "
                       "sweep cell (the CPU preset's training: 3000 steps, lr 3e-3, cosine).", train_one, argv)
    f3 = lambda x: "n/a" if x != x else f"{x:.3f}"  # noqa: E731 -- NaN: no test line carries a CoT
    print(f"results: {row['out']}/results.csv, {row['out']}/curve.csv, {row['out']}/position_accuracy.csv")
    print(f"{row['task']} size {row['size']} {row['model']} D={row['d_model']}: accuracy {row['accuracy']:.3f} "
          f"(CoT exact {f3(row['cot_exact'])}, held-out loss {f3(row['test_loss'])}) on {row['n_eval']} test "
          f"examples, {row['steps']} steps, {row['gflops']:.4g} GFLOPs per sequence of L={row['L']}")
    if row["test_loss"] != row["test_loss"]:
        print("no test line carries a CoT (prompts and answers only), so there is no held-out loss: n/a")
    return 0


# ---- cot-dp mask -------------------------------------------------------------------------------

@dataclass(frozen=True)
class MaskConfig:
    length: int = 64     # sequence length L (B = 2^floor(log2 sqrt L))
    c: int = 1           # summary tokens per block
    k: int = 1           # blocks in the local window
    png: str = ""        # also save a picture here (a .png gets its .pdf copy beside it)
    force: bool = False  # replace an existing --png file (and its .pdf copy); without it one is refused


def show_mask(cfg: MaskConfig, command: str) -> dict:
    from jackson.attention import mask_ascii, sparse_mask
    from jackson.hparams import block_size
    need(1 <= cfg.length <= 4096, f"--length: must be in 1..4096, got {cfg.length}")
    B = block_size(cfg.length)
    need(cfg.k >= 1 and 0 <= cfg.c <= B, f"--c, --k: need k >= 1 and 0 <= c <= B = {B}, got c={cfg.c}, k={cfg.k}")
    if cfg.png:
        png = Path(cfg.png)
        need(png.suffix.lower() in (".png", ".pdf", ".svg"),
             f"--png: a file name ending in .png, .pdf or .svg, got {png}")
        need(not png.exists() or png.is_file(), f"--png: {png} exists and is not a file")
        need(png.parent.is_dir() and os.access(png.parent, os.W_OK | os.X_OK),
             f"--png: cannot write into {png.parent.resolve()} (no such folder, or not writable)")
        check_figure_file(png, cfg.force)
    m = sparse_mask(cfg.length, B, cfg.c, cfg.k)
    if cfg.png:
        from .plots import plot_mask
        plot_mask(Path(cfg.png), cfg.length, cfg.c, cfg.k)
    return {"B": B, "ascii": mask_ascii(m) if cfg.length <= 128 else "", "density": float(m.sum()) / (cfg.length * (cfg.length + 1) / 2)}


def mask_main(argv: list[str]) -> int:
    cfg, r = run_cli("cot-dp mask", MaskConfig, "Print (and draw) the Sparse Transformer mask of Eq. (6).", show_mask, argv)
    print(f"L = {cfg.length}, B = {r['B']}, c = {cfg.c}, k = {cfg.k}: {r['density']:.1%} of the causal pairs")
    if r["ascii"]:
        print(r["ascii"])
    if cfg.png:
        print(f"figure: {cfg.png}")
    return 0


def main(argv: list[str] | None = None) -> int:
    install_signals()     # before torch is imported: Ctrl-C during start-up is one line too
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0 if argv else 2
    if argv[0] not in COMMANDS:
        fail("cot-dp", f"unknown command '{argv[0]}'; choose one of {', '.join(COMMANDS)}")
    return {"data": data_main, "sweep": sweep_main, "train": train_main, "mask": mask_main}[argv[0]](argv[1:])


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
