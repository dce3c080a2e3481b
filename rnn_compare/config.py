"""rnn-compare's config (`CompareConfig`, the `QUICK` preset, `validate`): every option, checked, without torch."""
from __future__ import annotations

import math
import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from pathlib import Path

import numpy as np

from jackson.config import Option, UsageError, need
from jackson.config import options as config_options
from jackson.hparams import ACTIVATIONS, MAX_LR, MAX_SEED, FitConfig, ModelConfig, schedule_problem
from jackson.runfolder import check_run_folder, check_scheduler
from .alterations import AlterationError, mix, mixing_filter, swap_ends
from .settings import CKPT_EVERY_S, MODELS, RNN_FIT_DEFAULT, TABLES, RNNConfig, transformer_default


if TYPE_CHECKING:
    from .cell import CompareCell


NEWER = ("check_steps", "cycles", "guard")     # FitConfig fields added after the --fit-X / --rnn-fit-X spellings were retired


@dataclass(frozen=True)
class CompareConfig:
    table: str = "all"           # ordering | mixing | uniform (Table 3) | all
    seeds: tuple[int, ...] = (0, 1, 2)   # the bank members' seeds, per model and target (their inits; new seeds beside a finished run train only those)
    tau: int = 32                # sequence length (App. C: 32)
    n_train: int = 8192          # training sequences per cell
    n_test: int = 2048           # held-out sequences per cell
    swap: int = 10               # ordering: the first `swap` steps trade places with the last `swap`
    filter_length: int = 5       # mixing: length of the random filter theta (||theta||_1 = 1; unused with --filter)
    filter_seed: int = 0         # mixing: seed of theta (unused with --filter)
    mix_direction: str = "future"  # mixing: future (the paper's x(t+s), not causal) or past (x(t-s), causal)
    filter: str = ""             # mixing: the filter's taps, comma-separated, ||theta||_1 <= 1 (empty: a random one)
    data_seed: int = 0           # inputs and the U[0,1] kernel of Table 3
    rnn: RNNConfig = field(default_factory=RNNConfig)                      # RNN
    transformer: ModelConfig = field(default_factory=transformer_default)  # Transformer
    fit: FitConfig = field(default_factory=lambda: FitConfig(steps=3000, batch_size=64, eval_size=1024))  # Transformer
    rnn_fit: FitConfig = field(default_factory=lambda: RNN_FIT_DEFAULT)  # RNN
    rnn_retries: int = 0         # RNN members whose fit diverged are retrained from up to this many fresh inits
    out: str = "reports/rnn_compare/default"  # output folder
    scheduler: str = ""          # Dask scheduler address; empty runs in-process
    quick: bool = False          # seconds-long run on tiny models and data
    ckpt_every_s: float = CKPT_EVERY_S  # seconds between a fit's resume checkpoints in <out>/checkpoints/ (0: every step)

    # the Transformer's fit takes the words every command uses (--steps, --batch-size, --lr, ...), the RNN's the
    # same with rnn- in front; the older --fit-X and --rnn-fit-X spellings still parse, with a note
    # (a field added since, such as check_steps, never had the older spelling)
    CLI = {**{f"fit.{f.name}": Option("--" + f.name.replace("_", "-"),
                                      old=("--fit-" + f.name.replace("_", "-"),) if f.name not in NEWER else ())
              for f in dataclasses.fields(FitConfig)},
           **{f"rnn_fit.{f.name}": Option("--rnn-" + f.name.replace("_", "-"),
                                          old=("--rnn-fit-" + f.name.replace("_", "-"),) if f.name not in NEWER else ())
              for f in dataclasses.fields(FitConfig)}}

    def targets(self) -> list[tuple[str, str]]:
        names = list(TABLES) if self.table == "all" else [self.table]
        return list(dict.fromkeys(t for n in names for t in TABLES[n]))

    def target_cell(self, kernel: str, alteration: str, model: str = "rnn") -> "CompareCell":
        """A cell that makes this config's (kernel, alteration) target and held-out inputs, for the analyses that
        need the target but train nothing (coupling spectra, missing terms); its fit settings are the defaults."""
        from .cell import CompareCell      # torch: only when a cell is built, never for --help or a bad option
        return CompareCell(kernel=kernel, alteration=alteration, model=model, seeds=(0,), tau=self.tau,
                           n_test=self.n_test, data_seed=self.data_seed, swap=self.swap,
                           filter_length=self.filter_length, filter_seed=self.filter_seed,
                           mix_direction=self.mix_direction, filter=self.filter)

    def cells(self, ckpt_dir: str | Path = "") -> list["CompareCell"]:
        """ckpt_dir: where the cells' fits keep their resume checkpoints (absolute; "" for none)."""
        from .cell import CompareCell
        return [CompareCell(kernel=k, alteration=a, model=m, seeds=tuple(self.seeds), tau=self.tau,
                            n_train=self.n_train, n_test=self.n_test, data_seed=self.data_seed, swap=self.swap,
                            filter_length=self.filter_length, filter_seed=self.filter_seed,
                            mix_direction=self.mix_direction, filter=self.filter, rnn=self.rnn,
                            transformer=self.transformer, fit=self.fit, rnn_fit=self.rnn_fit,
                            rnn_retries=self.rnn_retries, ckpt_dir=str(ckpt_dir), ckpt_every_s=self.ckpt_every_s)
                for k, a in self.targets() for m in MODELS]


QUICK = {"seeds": (0, 1), "tau": 12, "n_train": 256, "n_test": 128, "swap": 3,
         "rnn": RNNConfig(hidden=16),
         "transformer": dataclasses.replace(transformer_default(), n=8, d_v=8, width=16, d_pos=8, tau_max=12),
         "fit": FitConfig(steps=40, batch_size=32, warmup=5, eval_every=10, eval_size=64),
         "rnn_fit": FitConfig(steps=40, batch_size=32, warmup=5, eval_every=10, eval_size=64),
         # a smoke run never lands in reports/ (where the committed tables live); --out still wins
         "out": "runs/rnn_compare-quick"}
MAX_SEEDS = 1000           # --seeds: at most this many bank members, all trained at once in memory
MAX_RETRIES = 10           # --rnn-retries: each retry is one more training of one member
SCHEDULES = ("cosine", "plateau")


def options(cfg) -> list[tuple[str, object]]:
    """(option, value) for every leaf field of a config, named as its parser names them (jackson.config)."""
    out = []
    for path, opt, _ in config_options(type(cfg)):
        v = cfg
        for k in path.split("."):
            v = getattr(v, k)
        out.append((opt, v))
    return out


def validate(cfg: CompareConfig) -> None:
    """Raise UsageError naming the option and the valid range; writes nothing and computes nothing big
    (every check here runs before a cell trains, so no bad value can crash a run half-way)."""
    for opt, v in options(cfg):
        need(not isinstance(v, float) or math.isfinite(v), f"{opt}: must be a finite number, got {v}")
    need(cfg.table in (*TABLES, "all"), f"--table: choose {', '.join(TABLES)} or all, got {cfg.table}")
    need(1 <= len(cfg.seeds) <= MAX_SEEDS, f"--seeds: give 1 to {MAX_SEEDS} seeds per model, got {len(cfg.seeds)}")
    need(len(set(cfg.seeds)) == len(cfg.seeds), f"--seeds: each seed once, got {','.join(map(str, cfg.seeds))}")
    need(all(0 <= s <= MAX_SEED for s in cfg.seeds), f"--seeds: need integers in 0..2^63-1, got {cfg.seeds}")
    for opt, v in (("--data-seed", cfg.data_seed), ("--filter-seed", cfg.filter_seed)):
        need(0 <= v <= MAX_SEED, f"{opt}: need an integer in 0..2^63-1, got {v}")
    need(cfg.tau >= 2, f"--tau: must be >= 2, got {cfg.tau}")
    need(0 <= cfg.rnn_retries <= MAX_RETRIES, f"--rnn-retries: must be in 0..{MAX_RETRIES}, got {cfg.rnn_retries}")
    need(cfg.n_train >= cfg.fit.batch_size, f"--n-train: must be >= --batch-size ({cfg.fit.batch_size})")
    need(cfg.n_test >= 1, "--n-test: must be >= 1")
    need(cfg.ckpt_every_s >= 0, f"--ckpt-every-s: must be a number of seconds >= 0 (0: every step), got {cfg.ckpt_every_s:g}")
    need(bool(cfg.filter) or 1 <= cfg.filter_length <= cfg.tau, f"--filter-length: must be in 1..--tau ({cfg.tau}; taps past the "
                                            f"sequence end read only padding), got {cfg.filter_length}")
    r, m = cfg.rnn, cfg.transformer
    need(r.d_in == 1, f"--rnn-d-in: the targets have scalar inputs, so it must be 1, got {r.d_in}")
    need(m.d_in == 1, f"--transformer-d-in: the targets have scalar inputs, so it must be 1, got {m.d_in}")
    for opt, v in (("--hidden", r.hidden), ("--n", m.n), ("--d-v", m.d_v), ("--width", m.width),
                   ("--depth", m.depth), ("--d-pos", m.d_pos)):
        need(v >= 1, f"{opt}: must be >= 1, got {v}")
    need(m.activation in ACTIVATIONS, f"--activation: choose {', '.join(ACTIVATIONS)}, got {m.activation!r}")
    need(m.qk_init > 0 and m.in_scale > 0, f"--qk-init, --in-scale: must be > 0, got {m.qk_init:g}, {m.in_scale:g}")
    need(m.tau_max >= cfg.tau, f"--tau-max: must be >= --tau ({cfg.tau}), got {m.tau_max}")
    need(m.pos != "none", "--pos: the comparison needs a positional encoding (learned or sinusoidal)")
    need(m.attention == "softmax",
         f"--attention: Tables 2-3 set the paper's softmax Transformer beside the RNN; use softmax, got {m.attention}")
    need(m.features == "learned",
         f"--features: the comparison trains the Eq. (5) model with learned f_hat, F_hat; use learned, got {m.features}")
    for name, f in (("", cfg.fit), ("rnn-", cfg.rnn_fit)):
        o = f"--{name}"
        need(f.schedule in SCHEDULES, f"{o}schedule: choose {' or '.join(SCHEDULES)}, got {f.schedule}")
        for opt, v in (("steps", f.steps), ("batch-size", f.batch_size), ("eval-every", f.eval_every),
                       ("eval-size", f.eval_size), ("patience", f.patience)):
            need(v >= 1, f"{o}{opt}: must be >= 1, got {v}")
        need(f.warmup >= 0, f"{o}warmup: must be >= 0, got {f.warmup}")
        need(0 < f.lr <= MAX_LR, f"{o}lr: Adam's peak learning rate must be in 0 < lr <= {MAX_LR:g} (each step moves "
                                  f"a weight by up to lr; larger ones diverge), got {f.lr:g}")
        need(0 <= f.min_lr <= f.lr, f"{o}min-lr: must be in 0..{o}lr ({f.lr:g}; the schedule ends there), got {f.min_lr:g}")
        need(0 < f.lr_decay < 1, f"{o}lr-decay: must be in (0, 1), got {f.lr_decay:g}")
        need(0 <= f.min_improve < 1, f"{o}min-improve: must be in [0, 1), got {f.min_improve:g}")
        need(0 <= f.converged_lr_frac <= 1, f"{o}converged-lr-frac: must be in [0, 1], got {f.converged_lr_frac:g}")
        need(f.explode > 0, f"{o}explode: must be > 0, got {f.explode:g}")
        why = schedule_problem(f, o)
        need(not why, why)
    need(cfg.n_train >= cfg.rnn_fit.batch_size, f"--n-train: must be >= --rnn-batch-size ({cfg.rnn_fit.batch_size})")
    try:
        swap_ends(cfg.tau, cfg.swap)
        th = mixing_filter(cfg.filter, cfg.filter_length, cfg.filter_seed)
        need(len(th) <= cfg.tau, f"--filter: at most --tau ({cfg.tau}) taps, got {len(th)}")
        mix(np.zeros((1, cfg.tau)), [1.0], cfg.mix_direction)
        r.validate()
        m.validate_m_h(m.n)
    except (AlterationError, ValueError) as e:
        raise UsageError(str(e)) from None
    check_cost(cfg)
    check_run_folder(cfg.out, "rnn-compare")
    check_scheduler(cfg.scheduler)


def check_cost(cfg: CompareConfig) -> None:
    """Refuse, in one line naming the estimate and the limit (jackson.budget), a comparison whose cell cannot fit:
    its sequences (inputs and targets before and after the alteration, float64), and one training step (or an
    evaluation batch) of the larger of its two banks, the seeds as members: the Transformer's, or the RNN's (its
    hidden states over the sequence kept for the backward pass).  Then its time, a floor (jackson.budget.check_time)."""
    from jackson import budget
    n, tau, members, m, r = cfg.n_train + cfg.n_test, cfg.tau, len(cfg.seeds), cfg.transformer, cfg.rnn
    parts = {"the sequences and targets": 4 * budget.F64 * n * tau}
    steps = []
    for batch, train in ((cfg.fit.batch_size, True), (cfg.fit.eval_size, False)):
        steps.append(budget.transformer_bytes(members * min(batch, n), tau, max(m.n, m.d_v, m.d_pos), m.depth,
                                              mlp=m.width, params=members * 2 * m.depth * m.width * m.width, train=train))
    for batch in (cfg.rnn_fit.batch_size, cfg.rnn_fit.eval_size):
        steps.append({"the RNN's hidden states": 4 * budget.F32 * members * min(batch, n) * tau * r.hidden,
                      "the RNN's weights with their gradients and Adam's moments": 4 * budget.F32 * members * r.hidden ** 2})
    parts.update(max(steps, key=budget.total))
    budget.check(f"one cell of this comparison (tau {tau:,}, {n:,} sequences, {members} seeds)", parts)
    # its time: each target's two cells still to train (a resumed run's finished ones cost nothing), each bank's steps x
    # a floor on a step's FLOPs (jackson.budget.check_time); the RNN's step: its hidden x hidden recurrence on every token
    from jackson.sweep import check_time_left, left_text
    targets, tf, rf = len(cfg.targets()), cfg.fit, cfg.rnn_fit
    step_t = budget.transformer_step_flops(members, min(tf.batch_size, cfg.n_train), tau, m.width, m.depth,
                                           m.f_in, m.n, m.d_v, m.n + m.d_v)
    step_r = 6.0 * members * r.hidden ** 2 * min(rf.batch_size, cfg.n_train) * tau

    def price(left):
        n_t, n_r = ((targets, targets) if left is None else
                    (sum(c.model == kind for c in left) for kind in ("transformer", "rnn")))
        return (n_t * tf.steps * step_t + n_r * rf.steps * step_r,
                f"{left_text(n_t, targets)} of the Transformer x {tf.steps:,} steps + "
                f"{left_text(n_r, targets)} of the RNN x {rf.steps:,}, {members} seeds a bank")
    check_time_left("this comparison", Path(cfg.out).expanduser().resolve(), price, cfg.cells)


def filter_words(cfg: CompareConfig) -> str:
    """How the mixing filter was chosen, with its taps (for the summary)."""
    th = mixing_filter(cfg.filter, cfg.filter_length, cfg.filter_seed)
    taps = "(" + ", ".join(f"{v:.4g}" for v in th) + ")"
    if cfg.filter:
        return f"the filter theta = {taps} given by --filter (||theta||_1 = {np.abs(th).sum():.4g})"
    return f"a random length-{cfg.filter_length} filter with ||theta||_1 = 1 (seed {cfg.filter_seed}: theta = {taps})"
