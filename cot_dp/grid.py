"""cot-dp sweep's config (`SweepConfig`, its presets, `validate`): the grid of tasks x models x D x sizes, checked,
without torch."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from pathlib import Path


from jackson.config import Option, UsageError, need
from jackson.runfolder import check_run_folder, check_scheduler
from jackson.hparams import MAX_SEED
from .settings import ArchConfig, ModelConfig, TrainConfig
from .tasks import TASKS, TaskConfig, TaskParams


if TYPE_CHECKING:
    from .cell import CotCell


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

    def cells(self) -> list["CotCell"]:
        from .cell import CotCell        # torch: only once cells are built, never for --help or a bad option
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
    check_memory(cfg)
    check_run_folder(cfg.resolved_out(), "cot-dp sweep")
    check_scheduler(cfg.scheduler)


def check_memory(cfg: SweepConfig) -> None:
    """Each (task, size, model, D) of the grid priced before any data is made (`cot_dp.settings.run_bytes`): the
    sequence length from a few examples of the task at that size (their longest, with <eos>), or --max-len.  Then
    the sweep's time (`jackson.budget.check_time`): each cell still to train, its steps x a floor on a step's FLOPs
    (`cot_dp.settings.step_flops_floor`), unless it trains nothing (--estimate) or runs on a CUDA device (no rate
    measured there)."""
    from jackson import budget
    from .data import generation_bytes, longest_example
    from .settings import check_run_memory, step_flops_floor
    floor, steps = {}, cfg.train.total_steps(cfg.n_train)
    for task in cfg.task_list():
        for s in cfg.sizes_of(task):
            t = cfg.task_cfg(task, s)
            budget.check(f"--n-train/--n-test: generating {task} size {s}", generation_bytes(t, cfg.n_train + cfg.n_test))
            L = max(cfg.max_len, longest_example(t) + 1)
            vocab = len(t.symbols()) + 2
            for m in cfg.model_list():
                for D in cfg.dims_of(task):
                    model = ModelConfig(model=m, d_model=D, arch=cfg.arch)
                    check_run_memory(model, cfg.train, L, vocab, f"{task} size {s}")
                    floor[(task, s, m, D)] = step_flops_floor(model, cfg.train, L, vocab)
    if cfg.device == "cpu" and not cfg.estimate:      # the cells still to train: a resumed run's finished ones cost nothing
        from jackson.sweep import check_time_left, left_text
        total = len(floor) * len(cfg.seeds)          # cells(): every (task, size, model, D) x seed

        def price(left):
            if left is None:
                return steps * sum(floor.values()) * len(cfg.seeds), f"{left_text(total, total)} x {steps:,} steps"
            return (sum(steps * floor[(c.task.name, c.task.size, c.model.model, c.model.d_model)] for c in left),
                    f"{left_text(len(left), total)} x {steps:,} steps")
        check_time_left("this sweep", cfg.resolved_out(), price, cfg.cells)
