"""cot-dp sweep: tasks x models x D x sizes on the core runner (Fig. 1, Fig. 2, Table 2).

config -> one dataset per (task, size) under <out>/data/ -> cells (task, size, model, D, seed)
-> jackson.sweep.run_cells (atomic, resumable, in-process or Dask) -> results.csv -> heatmaps,
the min-GFLOPs table, summary.md / summary.json and report.json for the lab report.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from jackson.attention import block_size, sparse_mask
from jackson.config import Option, UsageError, need
from jackson.figures import pyplot, save
from jackson.runfolder import check_run_folder, check_scheduler, open_run, replace_via_temp, write_atomic, write_report
from jackson.schedule import MAX_SEED
from jackson.sweep import checkpoint_progress, non_default, run_cells
from . import data, flops
from .model import ArchConfig, CotTransformer, ModelConfig, n_params
from .tasks import TASKS, TaskConfig, TaskParams
from .tasks import edit_distance as ed
from .tokenizer import Tokenizer
from .train import TrainConfig, accuracy, position_accuracy, train


def write_csv(df: pd.DataFrame, path: Path, **kwargs) -> None:
    """df.to_csv (no index) through a temporary file and a rename (jackson.runfolder.replace_via_temp): the file
    is complete or absent, a symbolic link in its place is replaced, never written through, and a file that was
    there before the run in a folder it does not own is refused."""
    replace_via_temp(path, lambda tmp: df.to_csv(tmp, index=False, **kwargs))


@dataclass(frozen=True)
class CotCell:
    task: TaskConfig            # task and size
    model: ModelConfig          # attention and D
    train: TrainConfig
    n_train: int                # the dataset: examples, seed (with `task` they name it)
    n_test: int
    data_seed: int
    seed: int = 0               # model seed: init, batch order, dropout
    n_eval: int = 0             # test examples scored by generation (0: all)
    max_len: int = 0            # positions the model is built for (0: the data's longest sequence)
    data_dir: str = ""          # where the dataset lives (not part of the key)
    device: str = "cpu"         # where it trains (not part of the key)
    ckpt_dir: str = ""          # its resume checkpoint is <ckpt_dir>/<key>.pt, absolute ("": none; not part of the key)
    ckpt_every_s: float = 120.0  # seconds between resume checkpoints (not part of the key)

    def key(self) -> str:
        ident = {"task": non_default(self.task), "model": non_default(self.model), "train": non_default(self.train),
                 "n_train": self.n_train, "n_test": self.n_test, "data_seed": self.data_seed, "seed": self.seed,
                 "n_eval": self.n_eval, "max_len": self.max_len}
        h = hashlib.sha1(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:10]
        return f"{self.task.name}-{self.task.size}_{self.model.model}_d{self.model.d_model}_s{self.seed}_{h}"

    def ckpt_path(self) -> Path | None:
        return Path(self.ckpt_dir) / f"{self.key()}.pt" if self.ckpt_dir else None

    def in_progress(self) -> list[dict]:
        """Its training so far, from its resume checkpoint ([] if it has none): for `--status`."""
        ck = self.ckpt_path()
        if ck is None or not ck.is_file():
            return []
        return [checkpoint_progress("training", ck, lambda st: st["run"]["steps"])]

    def cleanup(self) -> None:
        """Remove the resume checkpoint: called once the cell's results are in place (jackson.sweep.run_cell)."""
        ck = self.ckpt_path()
        if ck is not None:
            ck.unlink(missing_ok=True)

    def run(self, folder: Path, progress: bool = True) -> None:
        t0 = time.perf_counter()
        ds = data.load(self.data_dir, self.task, check_answers=False)
        L = ds.max_len
        model = CotTransformer(self.model, len(ds.tokenizer), self.max_len or L, self.seed)
        desc = f"{self.task.name}-{self.task.size} {self.model.model} D={self.model.d_model}"
        res = train(model, ds.train, ds.test, self.train, self.seed, self.device, progress, desc,
                    ckpt=self.ckpt_path(), ckpt_every_s=self.ckpt_every_s, ident=self.key())
        t1 = time.perf_counter()
        acc = accuracy(model, ds.test, self.device, self.train.gen_batch, self.n_eval)
        a = self.model.arch
        row = {"task": self.task.name, "size": self.task.size, "model": self.model.model,
               "d_model": self.model.d_model, "seed": self.seed, **acc,
               "test_loss": res.curve[-1]["test_loss"], "L": L,
               "mean_len": float(ds.test.lengths.float().mean()) - 1,
               "gflops": flops.per_sequence(self.model.model, self.model.d_model, L, len(ds.tokenizer),
                                            a.n_layers, a.n_heads, a.sparse_c, a.sparse_k,
                                            getattr(model.blocks[0].attn, "block", None)) / 1e9,
               "gflops_params": flops.params_flops(self.model.d_model, L, a.n_layers) / 1e9,
               "params": n_params(model), "steps": res.steps, "step_ms": res.step_ms,
               "train_s": res.wall_s, "eval_s": time.perf_counter() - t1, "device": self.device}
        # after the row, so that eval_s stays the generation's time alone
        by_pos = position_accuracy(model, ds.test, ds.tokenizer.ids.get(","), self.device, self.train.gen_batch)
        write_csv(pd.DataFrame([row]), folder / "rows.csv")
        write_csv(pd.DataFrame(res.curve), folder / "curve.csv")
        write_csv(by_pos, folder / "position_accuracy.csv", float_format="%.6g")
        # wall_s: this process's time on the cell; fit_wall_s: training time over every process that trained it
        meta = {"cell": dataclasses.asdict(self), "key": self.key(), "wall_s": time.perf_counter() - t0,
                "fit_wall_s": res.wall_s,
                "vocab": len(ds.tokenizer), "block": getattr(model.blocks[0].attn, "block", None)}
        write_atomic(folder / "cell.json", json.dumps(meta, indent=1, default=str))


# ---- presets -----------------------------------------------------------------------------------

# sizes and dims of each preset, per task (used where --size / --d-model are not given).  The CPU preset is
# two commands, `--task arithmetic` (27 cells) and `--task ed,ed_local,lis` (18 cells); how it was chosen,
# with the measured step times and pilot accuracies: reports/cot_dp/PRESETS.md.
PRESET_GRID = {
    "quick": {"sizes": {"arithmetic": (2, 3), "ed": (4, 5), "ed_local": (4, 5), "lis": (4, 6)},
              "dims": {t: (16,) for t in TASKS}},
    "cpu": {"sizes": {"arithmetic": (2, 3, 4), "ed": (4, 6), "ed_local": (4, 6), "lis": (20, 35)},
            "dims": {"arithmetic": (32, 64, 128), "ed": (64,), "ed_local": (64,), "lis": (64,)}},
    "full": {"sizes": {"arithmetic": (6, 10, 13, 16), "ed": (6, 12, 16, 20), "ed_local": (6, 12, 16, 20),
                       "lis": (40, 110, 175, 250)},
             "dims": {"arithmetic": (32, 64, 128, 256, 512), "ed": (32, 64, 128, 256, 512, 1024),
                      "ed_local": (32, 64, 128, 256, 512, 1024), "lis": (32, 64, 128, 256, 512, 1024)}},
}
# the CPU preset's training (the default): 3000 steps of batch 64 with lr 3e-3 and a cosine decay, where
# the paper runs 100 epochs of 1M examples at lr 1e-4 (Sec. 6.1)
CPU_TRAIN = TrainConfig(steps=3000, batch_size=64, lr=3e-3, warmup=100, schedule="cosine", eval_every=250)
# settings that change speed, not results (results agree to rounding): not counted by SweepConfig.changed()
SPEED_ONLY = ("gen_batch", "linear_chunk")
# field overrides of the other presets (the paper's Sec. 6.1 for full)
PRESETS = {
    "quick": {"n_train": 256, "n_test": 48,
              "train": TrainConfig(steps=30, batch_size=16, lr=1e-3, eval_every=15, eval_size=32, gen_batch=64)},
    "full": {"n_train": 1_000_000, "n_test": 100_000,
             "train": TrainConfig(epochs=100, batch_size=512, lr=1e-4, eval_every=2000, eval_size=1024,
                                  gen_batch=1024)},
}


@dataclass(frozen=True)
class SweepConfig:
    DERIVED_KEYS = ("grid",)                 # written beside the fields: the grid the preset resolved to
    task: str = "arithmetic"                 # tasks, comma list: arithmetic, ed, ed_local, lis
    models: str = "standard,sparse,linear"   # models, comma list: standard, sparse, linear
    dims: tuple[int, ...] = ()               # embedding dimensions D, comma list (empty: the preset's, per task)
    sizes: tuple[int, ...] = ()              # problem sizes, comma list (empty: the preset's, per task)
    seeds: tuple[int, ...] = (0,)            # model seeds (init, batch order, dropout)
    n_train: int = 30000                     # training examples per task and size
    n_test: int = 512                        # test examples per task and size, disjoint from train
    n_eval: int = 0                          # test examples scored by greedy generation (0: all)
    data_seed: int = 2023                    # seed of every dataset (the public benchmark's)
    max_len: int = 0                         # positions the models are built for (0: the data's longest sequence)
    target_acc: float = 0.9                  # accuracy that counts as solved (Table 2 uses 0.9)
    params: TaskParams = field(default_factory=TaskParams)
    arch: ArchConfig = field(default_factory=ArchConfig)
    train: TrainConfig = field(default_factory=lambda: CPU_TRAIN)
    device: str = "cpu"                      # cpu | cuda | cuda:N
    out: str = ""                            # output folder (default: reports/cot_dp/<preset>-<tasks>; --quick: runs/cot_dp/quick-<tasks>)
    scheduler: str = ""                      # Dask scheduler address; empty runs in-process
    quick: bool = False                      # preset: seconds-long smoke run on tiny data and models
    full: bool = False                       # preset: the paper's sizes, dims, 1M/0.1M samples, 100 epochs, batch 512
    estimate: bool = False                   # time a few steps of every cell and project the sweep's wall time; train nothing
    ckpt_every_s: float = 120.0              # seconds between a training cell's resume checkpoints (<out>/checkpoints/<cell>.pt, removed when the cell is done; 0: every step)

    # one spelling across cot-dp data, sweep and train: the results.csv columns (ARCHITECTURE.md, "CLI vocabulary")
    CLI = {"models": Option("--model", old=("--models",)), "dims": Option("--d-model", old=("--dims",)),
           "sizes": Option("--size", old=("--sizes",))}

    @property
    def preset(self) -> str:
        return "quick" if self.quick else "full" if self.full else "cpu"

    def changed(self) -> list[str]:
        """The data, task, model and training settings that differ from the preset's own, as option names
        (--n-train, --lr, ...); the grid (--task, --size, --d-model, --model, --seeds) and speed-only settings
        (--device, --threads, checkpoints, Dask) are not counted.  Titles say "cpu preset" only when this is
        empty, so a figure made with other settings never passes for the preset's."""
        base = dataclasses.replace(SweepConfig(), **PRESETS.get(self.preset, {}))
        names = [f for f in ("n_train", "n_test", "n_eval", "data_seed", "max_len", "target_acc")
                 if getattr(self, f) != getattr(base, f)]
        for group in ("params", "arch", "train"):
            mine, theirs = getattr(self, group), getattr(base, group)
            names += [f.name for f in dataclasses.fields(mine)
                      if f.name not in SPEED_ONLY and getattr(mine, f.name) != getattr(theirs, f.name)]
        return ["--" + n.replace("_", "-") for n in names]

    @property
    def preset_label(self) -> str:
        """'cpu preset', or 'cpu preset, changed: --lr, --steps' where settings differ from the preset's."""
        changed = self.changed()
        return f"{self.preset} preset" + (f", changed: {', '.join(changed)}" if changed else "")

    @property
    def changes_note(self) -> str:
        """' (changed: --lr, --steps)' after "Preset: cpu" where settings differ from the preset's, else ''."""
        changed = self.changed()
        return f" (changed: {', '.join(changed)})" if changed else ""

    def task_list(self) -> list[str]:
        return [t.strip() for t in self.task.split(",") if t.strip()]

    def model_list(self) -> list[str]:
        return [m.strip() for m in self.models.split(",") if m.strip()]

    def sizes_of(self, task: str) -> tuple[int, ...]:
        return self.sizes or PRESET_GRID[self.preset]["sizes"][task]

    def dims_of(self, task: str) -> tuple[int, ...]:
        return self.dims or PRESET_GRID[self.preset]["dims"][task]

    def resolved_out(self) -> Path:
        if self.out:
            return Path(self.out)
        # a smoke run never lands beside committed results (jackson-report would publish it)
        root = Path("runs/cot_dp") if self.quick else Path("reports/cot_dp")
        return root / f"{self.preset}-{'_'.join(self.task_list())}"

    def task_cfg(self, task: str, size: int) -> TaskConfig:
        return TaskConfig(name=task, size=size, params=self.params)

    def data_dir(self, task: str, size: int) -> Path:
        return self.resolved_out() / "data" / f"{task}-{size}"

    def ckpt_dir(self) -> Path:
        return self.resolved_out() / "checkpoints"

    def cells(self) -> list[CotCell]:
        # paths absolute: a Dask worker may run in another folder
        return [CotCell(task=self.task_cfg(t, s), model=ModelConfig(model=m, d_model=D, arch=self.arch),
                        train=self.train, n_train=self.n_train, n_test=self.n_test, data_seed=self.data_seed,
                        seed=seed, n_eval=self.n_eval, max_len=self.max_len,
                        data_dir=str(self.data_dir(t, s).resolve()), device=self.device,
                        ckpt_dir=str(self.ckpt_dir().resolve()), ckpt_every_s=self.ckpt_every_s)
                for t in self.task_list() for s in self.sizes_of(t) for m in self.model_list()
                for D in self.dims_of(t) for seed in self.seeds]

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.update(preset=self.preset, out=str(self.resolved_out()),
                 grid={t: {"sizes": list(self.sizes_of(t)), "dims": list(self.dims_of(t))} for t in self.task_list()})
        return d


def validate(cfg: SweepConfig) -> None:
    """Raise UsageError naming the option and the valid range; writes nothing."""
    need(not (cfg.quick and cfg.full), "--quick, --full: choose one preset")
    tasks, models = cfg.task_list(), cfg.model_list()
    need(len(tasks) > 0, "--task: give at least one task")
    for t in tasks:
        need(t in TASKS, f"--task: choose from {', '.join(TASKS)}, got {t}")
    need(len(models) > 0 and len(set(models)) == len(models), f"--model: give distinct models, got {cfg.models}")
    need(len(set(cfg.seeds)) == len(cfg.seeds) and all(0 <= s <= MAX_SEED for s in cfg.seeds),
         f"--seeds: distinct integers in 0..2**63-1, got {cfg.seeds}")
    need(0 <= cfg.data_seed <= MAX_SEED, f"--data-seed: must be in 0..2**63-1, got {cfg.data_seed}")
    need(cfg.n_train >= 1 and cfg.n_test >= 1, f"--n-train, --n-test: must be >= 1, got {cfg.n_train}, {cfg.n_test}")
    need(cfg.n_eval >= 0 and cfg.max_len >= 0, "--n-eval, --max-len: must be >= 0")
    need(0 < cfg.target_acc <= 1, f"--target-acc: must be in (0, 1], got {cfg.target_acc}")
    need(math.isfinite(cfg.ckpt_every_s) and cfg.ckpt_every_s >= 0,
         f"--ckpt-every-s: must be a finite number of seconds >= 0 (0: every step), got {cfg.ckpt_every_s}")
    need(cfg.device == "cpu" or cfg.device.startswith("cuda"), f"--device: cpu, cuda or cuda:N, got {cfg.device}")
    if cfg.device.startswith("cuda"):
        import torch
        need(torch.cuda.is_available(), f"--device: {cfg.device} asked for, but torch sees no CUDA device")
    t = cfg.train
    try:
        t.check()
    except ValueError as e:
        raise UsageError(str(e)) from None
    need(cfg.n_train >= t.batch_size, f"--n-train: must be >= --batch-size ({t.batch_size}), got {cfg.n_train}")
    try:
        for task in tasks:
            need(len(cfg.sizes_of(task)) > 0 and len(cfg.dims_of(task)) > 0, "--size, --d-model: give at least one")
            for s in cfg.sizes_of(task):
                cfg.task_cfg(task, s).check()
            for m in models:
                for D in cfg.dims_of(task):
                    ModelConfig(model=m, d_model=D, arch=cfg.arch).check()
    except ValueError as e:
        raise UsageError(str(e)) from None
    check_run_folder(cfg.resolved_out(), "cot-dp sweep")
    check_scheduler(cfg.scheduler)


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


# ---- tables ------------------------------------------------------------------------------------

def answer_baseline(data_dir, task: TaskConfig, n_eval: int = 0) -> float:
    """What a model that ignores its input scores: the share of the scored test examples (the first
    n_eval, as `train.accuracy` scores them) whose answer is the training set's most frequent one.
    The files are read as `data.load` reads them (their test_ans.txt completes prompt-only lines)."""
    chain, tok = Path(data_dir) / "chain", Tokenizer.for_task(task)
    mode = pd.Series([t[-1] for t in data.read_lines(chain / "train_data.txt", task, tok, check_answers=False)]).mode()[0]
    test = data.read_lines(chain / "test_data.txt", task, tok, check_answers=False,
                           answers=data.read_answers(chain / "test_ans.txt"))
    test = test[:n_eval] if n_eval > 0 else test
    return float(np.mean([t[-1] == mode for t in test]))


def min_gflops(res: pd.DataFrame, target: float) -> pd.DataFrame:
    """Per task, model and size: the cheapest D whose (seed-mean) accuracy reaches `target` (Table 2)."""
    g = res.groupby(["task", "model", "size", "d_model"], as_index=False).agg(
        accuracy=("accuracy", "mean"), gflops=("gflops", "first"), gflops_params=("gflops_params", "first"), L=("L", "first"))
    rows = []
    for (task, model, size), grp in g.groupby(["task", "model", "size"]):
        ok = grp[grp.accuracy >= target].sort_values("gflops")
        best = ok.iloc[0] if len(ok) else None
        rows.append({"task": task, "model": model, "size": size, "L": int(grp.L.iloc[0]),
                     "min_d": int(best.d_model) if best is not None else None,
                     "min_gflops": float(best.gflops) if best is not None else np.nan,
                     "min_gflops_params": float(best.gflops_params) if best is not None else np.nan,
                     "best_accuracy": float(grp.accuracy.max())})
    return pd.DataFrame(rows)


def _trend(ds: list) -> str:
    """How the D needed for the target moves with the size (None: not reached)."""
    if all(d is None for d in ds):
        return "never reached"
    if any(d is None for d in ds):
        first_miss = next(i for i, d in enumerate(ds) if d is None)
        return "reached at small sizes only" if all(d is None for d in ds[first_miss:]) else "mixed"
    if ds[-1] > ds[0]:
        return "grows"
    return "flat" if len(set(ds)) == 1 else ("shrinks" if ds[-1] < ds[0] else "varies")


def _or_none(x: float) -> float | None:
    """NaN (no test line carries a CoT, as in the public benchmark's arithmetic test split) -> None,
    so summary.json stays valid JSON (null)."""
    return None if x != x else float(x)


def _f3(x: float | None) -> str:
    return "n/a" if x is None or x != x else f"{x:.3f}"


def summarize(out: Path, res: pd.DataFrame, cfg: SweepConfig, command: str) -> dict:
    mg = min_gflops(res, cfg.target_acc)
    write_csv(mg, out / "min_gflops.csv")
    pct = f"{cfg.target_acc:.0%}"
    md = [f"# cot-dp sweep summary ({cfg.preset_label})", "", f"Command: `{command}`", "",
          f"Preset: **{cfg.preset}**{cfg.changes_note}. Data: synthetic CoT datasets generated here (seed {cfg.data_seed}; "
          f"{cfg.n_train} train / {cfg.n_test} test examples per task and size, test disjoint from train), "
          f"in the public CoT benchmark's text format under `data/`. Models: {cfg.arch.n_layers} layers, "
          f"{cfg.arch.n_heads} heads, dropout {cfg.arch.dropout}; training: {cfg.train.total_steps(cfg.n_train)} "
          f"AdamW steps of batch {cfg.train.batch_size}, lr {cfg.train.lr:g} ({cfg.train.schedule}); seeds "
          f"{list(cfg.seeds)}. Accuracy = the final answer of a greedily generated CoT, over "
          f"{int(res.n_eval.iloc[0])} test examples. The paper trained 100 epochs on 1M examples with batch 512: "
          + ("this is that scale." if cfg.preset == "full" else "this run is far smaller, so its absolute accuracies are not the paper's."),
          ""]
    summary = {"command": command, "preset": cfg.preset, "target_acc": cfg.target_acc, "tasks": {}}
    for task in cfg.task_list():
        r = res[res.task == task]
        acc = r.groupby(["model", "size", "d_model"]).accuracy.mean().unstack("d_model")
        acc = acc.reindex([(m, s) for m in cfg.model_list() for s in sorted(r["size"].unique())])
        md += [f"## {task}", "", "Accuracy (mean over seeds); rows: model, size; columns: D. "
               "Sequence length L (longest, tokens): " + ", ".join(
                   f"size {s}: {int(r[r['size'] == s].L.iloc[0])}" for s in sorted(r["size"].unique())), "",
               "| model | size | " + " | ".join(f"D={d}" for d in acc.columns) + " |",
               "|---|---|" + "---|" * len(acc.columns)]
        for (m, s), vals in acc.iterrows():
            md.append(f"| {m} | {s} | " + " | ".join(f"{v:.3f}" for v in vals) + " |")
        if "baseline" in r:
            base = {int(k): float(v) for k, v in r.groupby("size").baseline.first().items()}
            summary.setdefault("baseline", {})[task] = base
            md += ["", "A constant answer (the training set's most frequent) scores " + ", ".join(
                f"{b:.3f} at size {s}" for s, b in base.items()) + " on the same test examples."]
        md += ["", f"Smallest D reaching {pct} and its GFLOPs per generated sequence (cot_dp/flops.py):", "",
               "| model | size | L | min D | GFLOPs | GFLOPs (24 M D^2 L only) |", "|---|---|---|---|---|---|"]
        t_sum = {}
        m_t = mg[mg.task == task]
        order = {m: i for i, m in enumerate(cfg.model_list())}
        for _, x in m_t.sort_values(["model", "size"], key=lambda c: c.map(order) if c.name == "model" else c).iterrows():
            reached = x.min_gflops == x.min_gflops
            md.append(f"| {x.model} | {x['size']} | {x.L} | {int(x.min_d) if reached else '-'} | "
                      f"{f'{x.min_gflops:.4g}' if reached else 'not reached'} | "
                      f"{f'{x.min_gflops_params:.4g}' if reached else '-'} |")
        for m in cfg.model_list():
            mm = m_t[m_t.model == m].sort_values("size")
            ds = [None if (d is None or d != d) else int(d) for d in mm.min_d]
            t_sum[m] = {"sizes": mm["size"].tolist(), "min_d": ds, "trend": _trend(ds),
                        "mean_accuracy": float(r[r.model == m].accuracy.mean()),
                        "mean_cot_exact": _or_none(r[r.model == m].cot_exact.mean()),
                        "mean_test_loss": _or_none(r[r.model == m].test_loss.mean())}
        summary["tasks"][task] = t_sum
        md += ["", "D needed for " + pct + " as the size grows: " + "; ".join(
            f"{m}: {', '.join('-' if d is None else str(d) for d in v['min_d'])} ({v['trend']}; mean accuracy "
            f"{v['mean_accuracy']:.3f})" for m, v in t_sum.items()), ""]
    if "arithmetic" in cfg.task_list():
        md += ["## Table 2 of the paper (Arithmetic, min GFLOPs to 90%), beside ours", "",
               "| model | " + " | ".join(f"paper L={L}" for L in flops.PAPER_TABLE2_LENGTHS) + " | measured here |",
               "|---|" + "---|" * (len(flops.PAPER_TABLE2_LENGTHS) + 1)]
        for m in cfg.model_list():
            ours = mg[(mg.task == "arithmetic") & (mg.model == m)].sort_values("size")
            meas = ", ".join(f"L={x.L}: {x.min_gflops:.3g}" if x.min_gflops == x.min_gflops else f"L={x.L}: not reached"
                             for _, x in ours.iterrows())
            md.append(f"| {m} | " + " | ".join(f"{v:g}" for v in flops.PAPER_TABLE2[m]) + f" | {meas} |")
        md += ["", "The paper's values are within 5% of 24 M D^2 L (block matrices only) with D = 64/128/128/128 "
               "(standard), 256/512/512/512 (linear), 128/256/256/256 (sparse); our GFLOPs column also counts "
               "attention and the output head (formula in cot_dp/flops.py).", ""]
    md += _claims(summary, cfg, res, out)
    write_atomic(out / "summary.md", "\n".join(md))
    write_atomic(out / "summary.json", json.dumps(summary, indent=1, default=float))
    return summary


def _claims(summary: dict, cfg: SweepConfig, res: pd.DataFrame, folder: Path | None = None) -> list[str]:
    """The paper's claim, stated beside what this run measured (no verdict the numbers do not give).  folder: the
    run's, whose cells' curves give ED / ED_Local's `steps_to_loss` (also into summary["steps_to_loss"])."""
    out = ["## The claim and what this run measured", "",
           "Claim (Sec. 6.2): efficient models need a larger D as the problem grows, the standard one does not, "
           "and locality reduces that need.", ""]
    for task, ms in summary["tasks"].items():
        out.append(f"- {task}: " + "; ".join(f"{m}: D for {cfg.target_acc:.0%} by size "
                                              f"{', '.join('-' if d is None else str(d) for d in v['min_d'])} ({v['trend']})"
                                              for m, v in ms.items()))
    if "ed_local" in summary["tasks"]:
        from .tasks import ed_local
        out.append("- ED_Local's CoT reaches back at most m = " + ", ".join(
            f"{ed_local.reach(cfg.task_cfg('ed_local', s))} (size {s})" for s in cfg.sizes_of("ed_local"))
            + " tokens (cot_dp/tasks/ed_local.py); ED's and LIS's reach back over the whole sequence")
    eds = [t for t in ("ed", "ed_local") if t in summary["tasks"]]
    if eds and "sparse" in cfg.model_list():
        a, parts = cfg.arch, []
        for t in eds:
            for s in cfg.sizes_of(t):
                Ls = res[(res.task == t) & (res["size"] == s)].L
                if len(Ls):
                    L = int(Ls.iloc[0])
                    miss = sparse_misses(cfg.task_cfg(t, s), L, a.sparse_c, a.sparse_k)
                    parts.append(f"{t} size {s} (L = {L}, B = {block_size(L)}): " + ", ".join(
                        f"{name} {share:.0%} ({far})" for name, (far, share) in miss.items()))
        out.append(f"- What one sparse layer can read (Eq. 6 mask, c = {a.sparse_c}, k = {a.sparse_k}): the share of "
                   "table entries whose recurrence reads a token outside the mask, and in brackets how far back that read "
                   "lies at most, in tokens, over 200 pairs (`sweep.sparse_misses`) -- " + "; ".join(parts)
                   + ". A read outside the mask can only arrive through a summary token of an earlier layer")
    pairs = [(a, b) for a, b in (("ed_local", "ed"), ("ed", "lis")) if a in summary["tasks"] and b in summary["tasks"]]
    for loc, other in pairs:
        T = summary["tasks"]
        both = [m for m in T[loc] if m in T[other]]
        kind = "locality, " if loc == "ed_local" else ""
        out.append(f"- {kind}{loc} vs {other}, means over the grid -- answer accuracy: " + "; ".join(
            f"{m} {T[loc][m]['mean_accuracy']:.3f} vs {T[other][m]['mean_accuracy']:.3f}" for m in both)
            + ". Exact CoT: " + "; ".join(
            f"{m} {_f3(T[loc][m]['mean_cot_exact'])} vs {_f3(T[other][m]['mean_cot_exact'])}" for m in both)
            + ". Held-out loss per CoT/answer token: " + "; ".join(
            f"{m} {_f3(T[loc][m]['mean_test_loss'])} vs {_f3(T[other][m]['mean_test_loss'])}" for m in both))
        steps = steps_to_loss(folder) if loc == "ed_local" and folder is not None else None
        if steps is not None and len(steps):
            word = lambda vs: ", ".join("never" if v is None else f"{v:,}" for v in vs) or "-"  # noqa: E731
            by_d = {}
            for D in sorted(int(d) for d in res[res.task.isin([loc, other])].d_model.unique()):
                st = steps[steps.task.isin([loc, other]) & (steps.d_model == D)].sort_values(["task", "model", "size", "seed"])
                per = {t: {m: [None if v != v else int(v) for v in g.step] for m, g in st[st.task == t].groupby("model")}
                       for t in (loc, other)}
                by_d[D] = per
                out.append(f"- locality, {loc} vs {other}: the step at which each cell's held-out loss per CoT token first "
                           f"fell below {LOSS_MARK:g} (per seed, D = {D}, from its curve.csv; `steps_to_loss`) -- " + "; ".join(
                               f"{m} {word(per[loc].get(m, []))} vs {word(per[other].get(m, []))}" for m in both)
                           + ". The ledger's rule compares D, not steps; this line is beside it, not in it")
            D = max(by_d)       # "d_model"/"steps": the largest D's, as before several D were swept; "by_d": each D's
            summary["steps_to_loss"] = {"threshold": LOSS_MARK, "d_model": D, "steps": by_d[D],
                                        "by_d": {str(d): v for d, v in by_d.items()}}
        base = summary.get("baseline", {})
        if loc in base and other in base:
            out.append(f"- a constant answer scores {loc}: " + ", ".join(f"{b:.3f}" for b in base[loc].values())
                       + f"; {other}: " + ", ".join(f"{b:.3f}" for b in base[other].values()) + " (by size)")
    out.append("")
    return out


# ---- figures -----------------------------------------------------------------------------------

def at_or_below_baseline(acc: pd.DataFrame, baseline: pd.Series) -> pd.DataFrame:
    """Which cells of an accuracy table (rows: size, columns: D) score no better than a constant answer:
    accuracy <= that size's baseline (`answer_baseline`).  Both are shares of the same n_eval answers, so
    equal counts give equal numbers; the 1e-9 only absorbs the rounding of a mean over seeds."""
    return acc.le(baseline.reindex(acc.index) + 1e-9, axis=0)


BASELINE_MARK = "hatched: accuracy at or below a constant answer's (the training set's most frequent answer)"


def plot_heatmaps(out: Path, res: pd.DataFrame, cfg: SweepConfig) -> list[Path]:
    """Fig. 1 as measured: per task, accuracy (mean over seeds) over D (x) and size (y), one panel per
    model.  With results.csv's baseline column, each size's constant-answer accuracy is written under it and
    the cells at or below it are hatched (`at_or_below_baseline`): the accuracy a model must beat to have
    learnt anything."""
    plt = pyplot()
    from matplotlib.patches import Patch, Rectangle
    paths = []
    for task in cfg.task_list():
        r = res[res.task == task]
        models = [m for m in cfg.model_list() if m in set(r.model)]
        base = r.groupby("size").baseline.first() if "baseline" in r else None
        fig, axes = plt.subplots(1, len(models), figsize=(3.4 * len(models), 3.0), squeeze=False)
        said = None
        for ax, m in zip(axes[0], models):
            a = r[r.model == m].groupby(["size", "d_model"]).accuracy.mean().unstack("d_model").sort_index(ascending=False)
            im = ax.imshow(a.values, vmin=0, vmax=1, cmap="viridis", aspect="auto")
            low = at_or_below_baseline(a, base).values if base is not None else np.zeros(a.shape, bool)
            for (i, j), v in np.ndenumerate(a.values):
                if low[i, j]:
                    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", lw=0, edgecolor="0.75"))
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8, color="w" if v < 0.6 else "k",
                        bbox=dict(boxstyle="round,pad=0.15", fc=im.cmap(im.norm(v)), lw=0) if low[i, j] else None)
            first = ax is axes[0][0]
            say = base is not None and list(a.index) != said   # the bases once for the rows the panels share
            said = list(a.index) if say else said
            sizes = [f"{s}\n(base {base[s]:.2f})" if say else str(s) for s in a.index]
            ax.set(xticks=range(a.shape[1]), xticklabels=a.columns, yticks=range(a.shape[0]), yticklabels=sizes,
                   xlabel="embedding dimension D", ylabel="problem size" if first else "", title=m)
        fig.colorbar(im, ax=axes[0].tolist(), shrink=0.8, label="accuracy (mean over seeds)")
        if base is not None:
            fig.legend(handles=[Patch(facecolor="none", edgecolor="0.45", hatch="///", label=BASELINE_MARK
                                      + ", written under each size as base")],
                       loc="upper center", bbox_to_anchor=(0.5, -0.02), fontsize=7, frameon=False)
        fig.suptitle(f"{task}: answer accuracy ({cfg.preset_label})", fontsize=9, y=1.04, wrap=True)
        path = out / f"accuracy_{task}.png"
        save(fig, path, bbox_inches="tight")
        paths.append(path)
    return paths


LOSS_MARK = 0.01     # the held-out loss per CoT token the locality figure times each cell to


def steps_to_loss(folder: Path, threshold: float = LOSS_MARK) -> pd.DataFrame:
    """Per finished cell of a sweep folder (cells/<key>/rows.csv and curve.csv): the first evaluated step whose
    held-out loss per CoT token is below `threshold` (NaN: never).  Columns: task, size, model, d_model, seed,
    step.  Empty when the folder keeps no curves."""
    out = []
    for rows in sorted((Path(folder) / "cells").glob("*/rows.csv")):
        curve = rows.parent / "curve.csv"
        if not curve.is_file():
            continue
        c = pd.read_csv(curve)
        below = c.step[c.test_loss < threshold]
        for r in pd.read_csv(rows).itertuples():
            out.append({"task": r.task, "size": r.size, "model": r.model, "d_model": r.d_model, "seed": r.seed,
                        "step": float(below.min()) if len(below) else math.nan})
    return pd.DataFrame(out, columns=["task", "size", "model", "d_model", "seed", "step"])


def plot_locality(out: Path, res: pd.DataFrame, cfg: SweepConfig) -> Path | None:
    """ED vs ED_Local (Fig. 2's question): answer accuracy, exact CoTs and held-out loss.  Several sizes: against
    the size, a colour per model, solid ED, dashed ED_Local; grey: the constant-answer baseline.  One size: a
    column per model, ED and ED_Local side by side, each seed a point and the mean a bar, and a fourth panel with
    the step at which each cell's held-out loss first fell below LOSS_MARK (`steps_to_loss`; read from the
    folder's cells, so it shows where the accuracy cannot tell the tasks apart), a row of these per D.  Several
    sizes with several D: the largest D's cells are drawn (the title says which)."""
    if not {"ed", "ed_local"} <= set(cfg.task_list()):
        return None
    plt = pyplot()
    r = res[res.task.isin(["ed", "ed_local"])]
    dims = sorted(int(d) for d in r.d_model.unique())
    D = dims[-1]
    if r["size"].nunique() == 1:
        fig = _locality_one_size(plt, r, steps_to_loss(out), cfg, dims, int(r["size"].iloc[0]))
        Ls = {t: ", ".join(str(int(x)) for x in r[r.task == t].L.unique()) for t in ("ed", "ed_local")}
        title = (f"ED vs ED_Local at D = {', '.join(map(str, dims))} ({cfg.preset_label};\n"
                 f"longest L: ED {Ls['ed']}, ED_Local {Ls['ed_local']})")
    else:
        fig, title = _locality_sizes(plt, r[r.d_model == D], cfg, D)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path = out / "locality_ed_vs_ed_local.png"
    save(fig, path)
    return path


def _locality_sizes(plt, r: pd.DataFrame, cfg: SweepConfig, D: int):
    """plot_locality's several-size layout (see there): (figure, title); r holds the ED and ED_Local cells at D."""
    g = r.groupby(["task", "model", "size"], as_index=False).agg(
        accuracy=("accuracy", "mean"), cot_exact=("cot_exact", "mean"), test_loss=("test_loss", "mean"), L=("L", "first"))
    sizes = sorted(g["size"].unique())
    Ls = {t: ", ".join(str(int(x)) for x in g[g.task == t].groupby("size").L.first()) for t in ("ed", "ed_local")}
    title = f"ED vs ED_Local at D = {D} ({cfg.preset_label};\nlongest L by size: ED {Ls['ed']}, ED_Local {Ls['ed_local']})"
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.2))
    colours = dict(zip(cfg.model_list(), ["C0", "C1", "C2", "C3"]))
    for (task, m), grp in g.groupby(["task", "model"]):
        ls = "-" if task == "ed" else "--"
        for ax, col in zip(axes, ["accuracy", "cot_exact", "test_loss"]):
            ax.plot(grp["size"], grp[col], ls, marker="o", color=colours.get(m, "k"), label=f"{task} {m}")
    if "baseline" in r:
        for task, mk in (("ed", "x"), ("ed_local", "+")):
            b = r[r.task == task].groupby("size").baseline.first()
            axes[0].plot(b.index, b.values, mk, color="grey", ms=9, label=f"{task}: constant answer")
    for ax, yl in zip(axes, ["answer accuracy", "exact CoT", "held-out loss per CoT token"]):
        ax.set(xlabel="size (length of the first string)", ylabel=yl, xticks=sizes)
    axes[0].set_ylim(0, 1.02)
    axes[1].set_ylim(0, 1.02)
    axes[2].set_yscale("log")
    axes[0].legend(fontsize=6, ncol=1)
    return fig, title


LOCALITY_COLOURS = {"ed": "C0", "ed_local": "C1"}


def _locality_one_size(plt, r: pd.DataFrame, steps: pd.DataFrame, cfg: SweepConfig, dims: list[int], size: int):
    """plot_locality's one-size layout (see there), a row per D in `dims`: r holds the ED and ED_Local cells,
    steps `steps_to_loss` of the folder."""
    models = [m for m in cfg.model_list() if m in set(r.model)]
    steps = steps[steps["size"] == size]          # steps_to_loss keeps its columns when empty
    panels = [("accuracy", "answer accuracy"), ("cot_exact", "exact CoT"), ("test_loss", "held-out loss per CoT token")]
    if len(steps):
        panels.append(("step", f"step where held-out loss < {LOSS_MARK:g}"))
    fig, grid = plt.subplots(len(dims), len(panels), figsize=(3.3 * len(panels), 3.4 * len(dims)), squeeze=False)
    for D, axes in zip(dims, grid):
        _locality_row(axes, panels, r[r.d_model == D], steps[steps.d_model == D],
                      models, int(cfg.train.steps))
        for ax in axes:
            ax.set_xlabel(f"model (size {size}, D = {D})")
    return fig


def _locality_row(axes, panels, r: pd.DataFrame, steps: pd.DataFrame, models: list[str], budget: int) -> None:
    """One row of `_locality_one_size`: the cells of one D."""
    for ax, (col, label) in zip(axes, panels):
        src = steps if col == "step" else r
        for task in ("ed", "ed_local"):
            dx = -0.17 if task == "ed" else 0.17
            for i, m in enumerate(models):
                v = src[(src.task == task) & (src.model == m)][col].to_numpy(dtype=float)
                if not len(v):
                    continue
                x = i + dx
                seen = v[np.isfinite(v)]
                ax.scatter(np.full(len(seen), x), seen, s=22, facecolors="none", edgecolors=LOCALITY_COLOURS[task],
                           zorder=3, label=f"{task} (each seed; bar: mean)" if i == 0 else None)
                if len(seen) == len(v):
                    ax.hlines(v.mean(), x - 0.12, x + 0.12, color=LOCALITY_COLOURS[task], lw=2.2, zorder=2)
                if len(seen) < len(v):       # seeds that never got there: named at the top
                    n = len(v) - len(seen)
                    ax.annotate(f"never\n({n} of {len(v)} seeds)", (x, 0.99), xycoords=("data", "axes fraction"),
                                ha="center", va="top", fontsize=6.5, color=LOCALITY_COLOURS[task])
        ax.set(xticks=range(len(models)), xticklabels=models, xlim=(-0.6, len(models) - 0.4), ylabel=label)
        if col in ("accuracy", "cot_exact"):
            ax.set_ylim(0, 1.04)
        if col == "test_loss":
            ax.set_yscale("log")
        if col == "step":
            ax.set_ylim(0, budget)
    if "baseline" in r:
        for task, ls in (("ed", "--"), ("ed_local", ":")):
            b = r[r.task == task].baseline
            if len(b):
                axes[0].axhline(float(b.iloc[0]), color="grey", ls=ls, lw=1, label=f"{task}: constant answer")
    axes[0].legend(fontsize=6, loc="lower left")


def sparse_misses(task: TaskConfig, L: int, c: int = 1, k: int = 1, n_pairs: int = 200,
                  seed: int = 0) -> dict[str, tuple[int, float]]:
    """ED / ED_Local: for each read of the DP recurrence (a_i, b_j, dp[i][j-1], dp[i-1][j-1], dp[i-1][j]), how far
    back it lies from the position that predicts dp[i][j] (at most, in tokens) and the share of table entries
    whose read one layer of the sparse model cannot attend to: outside the Eq. (6) mask of a model built for L
    positions (B = 2^floor(log2 sqrt L)), over `n_pairs` pairs drawn as the task draws them (seeded).  A
    read outside the mask can still arrive through a summary token in an earlier layer, squeezed with the
    rest of its block into one position."""
    mask = sparse_mask(L, block_size(L), c, k).numpy()
    mod, rng = task.module(), np.random.default_rng(seed)
    far, out, n = {}, {}, {}
    for _ in range(n_pairs):
        s1, s2 = ed.sample_pair(task, rng)               # the pairs task.sample draws, without writing their CoT
        for pos, reads in mod.reads(task, s1, s2):
            q = pos - 1                                    # the position whose output is dp[i][j]
            for name, at in reads.items():
                far[name] = max(far.get(name, 0), q - at)
                out[name] = out.get(name, 0) + (not mask[q, at])
                n[name] = n.get(name, 0) + 1
    return {name: (far[name], out[name] / n[name]) for name in far}


def plot_mask(path: Path, L: int, c: int = 1, k: int = 1) -> Path:
    """A picture of the Eq. (6) mask for sequences of length L (B = 2^floor(log2 sqrt L))."""
    plt = pyplot()
    B = block_size(L)
    fig, ax = plt.subplots(figsize=(4, 4))
    ax.imshow(sparse_mask(L, B, c, k).numpy(), cmap="Greys", interpolation="nearest")
    ax.set(xlabel="key position j", ylabel="query position i", title=f"Eq. (6) mask: L={L}, B={B}, c={c}, k={k}")
    fig.tight_layout()
    save(fig, path)
    return path


def _caption(p: Path, cfg: SweepConfig, baseline: bool) -> str:
    """A figure's caption; `baseline`: results.csv has the constant-answer accuracy, so the figures draw it."""
    if p.stem.startswith("locality"):
        if len(set(cfg.sizes_of("ed")) | set(cfg.sizes_of("ed_local"))) == 1:
            return ("ED vs ED_Local at one size (Fig. 2's question: does locality help the efficient models?): per "
                    "model, ED (blue) beside ED_Local (orange), each seed a ring and the mean a bar -- answer accuracy "
                    "(grey lines: a constant answer), exact CoTs, held-out loss per CoT token, and the training step "
                    f"at which the held-out loss first fell below {LOSS_MARK:g} (from each cell's curve.csv)"
                    + ("; a row per embedding dimension D" if len(set(cfg.dims_of("ed")) | set(cfg.dims_of("ed_local"))) > 1
                       else "") + f"; {cfg.preset_label}.")
        return ("ED vs ED_Local: answer accuracy (grey: a constant answer), exact CoTs and held-out loss per CoT "
                "token against the size, a colour per model, solid ED, dashed ED_Local (Fig. 2's question: does "
                f"locality help the efficient models?); {cfg.preset_label}.")
    return (f"{p.stem.split('_', 1)[1]}: answer accuracy (mean over seeds) over embedding dimension D and problem "
            f"size, one panel per model (Fig. 1 as measured)"
            + (f"; {BASELINE_MARK}, written under each size as base" if baseline else "")
            + f"; {cfg.preset_label}.")


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
           "figures": [{"file": p.name, "caption": _caption(p, cfg, "baseline" in summary)} for p in figures],
           "paper": paper, "text": " ".join(text)}
    write_report(out, rep)


# ---- a finished folder's figures and report.json again from its files (no training, no data) --------

REDRAW_FILES = ("results.csv", "config.json")


def folder_config(folder: Path) -> SweepConfig:
    """The SweepConfig a finished folder's config.json records (the derived preset and grid are skipped)."""
    from jackson.config import from_dict
    return from_dict(SweepConfig, json.loads((Path(folder) / "config.json").read_text()),
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
                      json.loads((folder / "summary.json").read_text()))
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
