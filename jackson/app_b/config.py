"""jackson-tasks' configs (one per task, and `all`), the --quick preset, `validate` and the usage text: every
option, checked, without torch."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path


from synthetic.nearest_point import NearestPoint
from synthetic.selection_average import SelectionAverage
from synthetic.weighted_average import WeightedAverage
from ..config import UsageError, need
from ..runfolder import check_run_folder
from ..hparams import ACTIVATIONS, DENSE_MODEL, FitConfig, ModelConfig, schedule_problem


TASKS = {c.name: c for c in (NearestPoint, WeightedAverage, SelectionAverage)}
# The App. B tasks fit App. C's dense network (hparams.DENSE_MODEL: the GELU class at its first-layer scale 3), as their
# committed runs did; ModelConfig's own default is the sine class the rate sweeps chose (hparams.IN_SCALES).


@dataclass(frozen=True)
class TrainConfig:
    seeds: tuple[int, ...] = (0, 1, 2)  # one cell per seed: its own data draw and model init
    n_train: int = 16384                # training sequences per seed
    n_test: int = 4096                  # held-out sequences per seed
    m_h: int = 32                       # attention size, the rows of W_Q and W_K (App. C: m_h = n = 32)
    n_probe: int = 4096                 # tokens on which F_hat∘f_hat is compared with F∘f


@dataclass(frozen=True)
class NearestPointRun:
    task: NearestPoint = field(default_factory=NearestPoint)   # the task's own options (synthetic/)
    train: TrainConfig = field(default_factory=TrainConfig)      # seeds and data sizes
    model: ModelConfig = field(default_factory=lambda: DENSE_MODEL)   # Eq. (53) sizes; d_in comes from the task
    fit: FitConfig = field(default_factory=lambda: FitConfig(steps=10000))  # budget: see reports/tasks/README.md
    out: str = ""         # output folder (default: reports/tasks/nearest-point; with --quick runs/tasks/nearest-point-quick)
    quick: bool = False   # seconds-long smoke run: tiny data, model and budget


@dataclass(frozen=True)
class WeightedAverageRun:
    task: WeightedAverage = field(default_factory=WeightedAverage)   # the task's own options (synthetic/)
    train: TrainConfig = field(default_factory=TrainConfig)      # seeds and data sizes
    model: ModelConfig = field(default_factory=lambda: DENSE_MODEL)   # Eq. (53) sizes; d_in comes from the task
    fit: FitConfig = field(default_factory=lambda: FitConfig(steps=15000))  # budget: see reports/tasks/README.md
    out: str = ""         # output folder (default: reports/tasks/weighted-average; with --quick runs/tasks/weighted-average-quick)
    quick: bool = False   # seconds-long smoke run: tiny data, model and budget


@dataclass(frozen=True)
class SelectionAverageRun:
    task: SelectionAverage = field(default_factory=SelectionAverage)   # the task's own options (synthetic/)
    train: TrainConfig = field(default_factory=TrainConfig)      # seeds and data sizes
    model: ModelConfig = field(default_factory=lambda: DENSE_MODEL)   # Eq. (53) sizes; d_in comes from the task
    fit: FitConfig = field(default_factory=lambda: FitConfig(steps=10000))  # budget: see reports/tasks/README.md
    out: str = ""         # output folder (default: reports/tasks/selection-average; with --quick runs/tasks/selection-average-quick)
    quick: bool = False   # seconds-long smoke run: tiny data, model and budget


@dataclass(frozen=True)
class AllRun:
    seeds: tuple[int, ...] = ()   # seeds of every task (default: each task's own; 0,1,2, or 0 with --quick)
    out: str = ""                 # parent folder: each task writes <out>/<task> (default: reports/tasks/<task>)
    quick: bool = False           # seconds-long smoke run of all three tasks


RUNS = {"nearest-point": NearestPointRun, "weighted-average": WeightedAverageRun,
        "selection-average": SelectionAverageRun}

# --quick: every size shrunk so a whole task runs in seconds (smoke tests, first tries)
QUICK = {"train": TrainConfig(seeds=(0,), n_train=256, n_test=64, m_h=8, n_probe=256),
         "model": dataclasses.replace(DENSE_MODEL, n=8, d_v=8, width=16),
         "fit": FitConfig(steps=40, batch_size=32, warmup=5, eval_every=10, eval_size=128)}


def resolved_out(cfg) -> Path:
    if cfg.out:
        return Path(cfg.out)
    if cfg.quick:         # smoke runs never default into reports/, which holds committed results
        return Path("runs/tasks") / f"{cfg.task.name}-quick"
    return Path("reports/tasks") / cfg.task.name


def as_dict(cfg) -> dict:
    d = dataclasses.asdict(cfg)
    d["task"] = {"name": cfg.task.name, **d["task"], "d_in": cfg.task.d_in, "d_out": cfg.task.d_out}
    d["model"]["d_in"] = cfg.task.d_in
    d["out"] = str(resolved_out(cfg))
    return d


def validate(cfg) -> None:
    """Raise UsageError naming the option and the valid range; writes nothing."""
    try:
        cfg.task.validate()
    except ValueError as e:
        raise UsageError(str(e)) from None
    tr, m, ft = cfg.train, cfg.model, cfg.fit
    need(m.d_in == ModelConfig().d_in,
         f"--d-in: set by the task (its tokens have {cfg.task.d_in} entries); leave it out, got {m.d_in}")
    need(m.pos == "none", "--pos: the tasks put position information into their tokens where needed; use none")
    need(m.attention == "softmax", f"--attention: the App. B tasks use the softmax attention of Eq. (53), got {m.attention}")
    need(m.n >= 1 and m.d_v >= 1 and m.width >= 1 and m.depth >= 2,
         "--n, --d-v, --width: must be >= 1 and --depth >= 2 (at least one hidden layer)")
    need(m.activation in ACTIVATIONS, f"--activation: choose {', '.join(ACTIVATIONS)}, got {m.activation!r}")
    need(m.qk_init > 0 and m.in_scale > 0, "--qk-init, --in-scale: must be > 0")
    need(1 <= tr.m_h <= m.n, f"--m-h: must be in 1..{m.n} (--n, the embedding width), got {tr.m_h}")
    need(len(tr.seeds) > 0 and all(s >= 0 for s in tr.seeds) and len(set(tr.seeds)) == len(tr.seeds),
         f"--seeds: need distinct integers >= 0, got {tr.seeds}")
    need(tr.n_train >= ft.batch_size, f"--n-train: must be >= --batch-size ({ft.batch_size}), got {tr.n_train}")
    need(tr.n_test >= 1 and tr.n_probe >= 1, f"--n-test, --n-probe: must be >= 1, got {tr.n_test}, {tr.n_probe}")
    need(ft.steps >= 1 and ft.batch_size >= 1 and ft.eval_every >= 1 and ft.eval_size >= 1 and ft.warmup >= 0,
         "--steps, --batch-size, --eval-every, --eval-size: must be >= 1 (--warmup >= 0)")
    need(ft.lr > 0 and 0 < ft.min_lr <= ft.lr, f"--lr, --min-lr: need 0 < min-lr <= lr, got {ft.lr}, {ft.min_lr}")
    need(ft.schedule in ("plateau", "cosine"), f"--schedule: choose plateau or cosine, got {ft.schedule}")
    why = schedule_problem(ft)
    need(not why, why)
    need(0 < ft.lr_decay < 1, f"--lr-decay: must be in (0, 1), got {ft.lr_decay}")
    check_cost(cfg)
    check_run_folder(resolved_out(cfg), f"jackson-tasks {cfg.task.name}")


def check_cost(cfg) -> None:
    """Refuse, in one line naming the estimate and the limit (jackson.budget), a task run whose cell cannot fit:
    its training and held-out sequences with their targets and the target's attention (float64, n x tau x tau),
    and one training step (or an evaluation batch of 1,024) of the one-head Transformer."""
    from .. import budget
    tr, m, ft, t = cfg.train, cfg.model, cfg.fit, cfg.task
    n = tr.n_train + tr.n_test
    parts = {"the sequences, targets and target attention": budget.F64 * n * t.tau * (t.d_in + t.d_out + t.tau),
             "the probe tokens": budget.F64 * tr.n_probe * (t.d_in + t.d_out)}
    params = 2 * m.depth * m.width * m.width + 2 * m.n * (m.n + t.d_in)
    step = budget.transformer_bytes(min(ft.batch_size, tr.n_train), t.tau, max(m.n, m.d_v), m.depth, mlp=m.width,
                                    params=params)
    evaluate = budget.transformer_bytes(min(1024, n), t.tau, max(m.n, m.d_v), m.depth, mlp=m.width, train=False)
    parts.update(max((step, evaluate), key=budget.total))
    budget.check(f"one cell of this task (tau {t.tau:,}, {n:,} sequences, width {m.width:,})", parts)
    seeds = len(tr.seeds)           # then its time, a floor: each seed's cell still to train, fit.steps steps of one model
    from ..sweep import check_time_left, left_text
    from .cell import cells
    step = budget.transformer_step_flops(1, min(ft.batch_size, tr.n_train), t.tau, m.width, m.depth, t.d_in, m.n,
                                         m.d_v, tr.m_h + m.d_v)

    def price(left):
        n = seeds if left is None else len(left)
        return n * ft.steps * step, f"{left_text(n, seeds)} x {ft.steps:,} steps"
    check_time_left(f"this task ({seeds} seed{'s' if seeds != 1 else ''})", resolved_out(cfg), price,
                    lambda: cells(cfg))


# ---- one cell: a task and a seed ---------------------------------------------------------------


DESCRIPTION = {
    "nearest-point": "Train Eq. (53) on the nearest-point task (App. B.1, Fig. 4) and compare A and F_hat∘f_hat "
                     "with the target's (Prop. B.1).",
    "weighted-average": "Train Eq. (53) on the weighted-average-by-weight task (App. B.1, Fig. 5) and compare A and "
                        "F_hat∘f_hat with the target's (Prop. B.1).",
    "selection-average": "Train Eq. (53) on the qSA task (App. B.1, Fig. 6) and compare A and F_hat∘f_hat with the "
                         "target's (Prop. B.1).",
    "all": "Run all three App. B.1 tasks with their defaults.",
}
USAGE = ("usage: jackson-tasks {nearest-point,weighted-average,selection-average,all} [options]\n\n"
         "The worked examples of App. B.1 (Jiang & Li): a trained one-layer one-head Transformer per task,\n"
         "its attention and F_hat∘f_hat against the target's, three pictures, summary and report.json.\n\n"
         + "\n".join(f"  {k:18s} {v}" for k, v in DESCRIPTION.items())
         + "\n\n`jackson-tasks <task> --help` lists a task's options with their defaults.\n")
