"""What a model and a fit are, as settings: `ModelConfig` (the Eq. (5) Transformer's sizes -- n, d_v, the MLP
width m_FF, the FFN class -- and its attention and features), `FitConfig` (the optimiser's budget and schedule),
and their limits.  Plain dataclasses, no torch: a command's options and --help are built from them without
importing torch (jackson.models and jackson.fit build and train what they describe).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

MAX_SEED = 2 ** 63 - 1   # every seed: torch.Generator.manual_seed and numpy take a non-negative int64
ATTENTIONS = ("softmax", "sparse", "linear")


@dataclass(frozen=True)
class ModelConfig:
    d_in: int = 1          # input dimension d of x(s) (scalar inputs in App. C)
    n: int = 32            # output width of f_hat, the token embedding (App. C: n = 32)
    d_v: int = 32          # value dimension (App. C: d_v = 32)
    width: int = 128       # hidden width of both MLPs (App. C)
    depth: int = 3         # linear layers per MLP (App. C "depth 3"): 2 hidden GELU layers
    qk_init: float = 3.0   # W_Q, W_K init scale x PyTorch default; >1 leaves the uniform-attention saddle sooner
    in_scale: float | None = None  # f_hat first-layer init scale x PyTorch default; >1 spreads GELU kinks over [0, 1] (sin: the first layer's frequencies, U(-in_scale, in_scale) for scalar inputs); unset: the class's own (IN_SCALES: sin 60, gelu and relu 3)
    activation: str = "sin"   # the FFN class of f_hat and F_hat, between layers: sin (periodic: represents the sin/cos POD bases; chosen by measurement, see IN_SCALES) | gelu (App. C's dense network) | relu
    pos: str = "none"      # positional encoding x(t) -> A x(t) + e(t) (Sec. 4.1): none | learned | sinusoidal
    d_pos: int = 16        # d', the width of A x(t) + e(t) when pos != none
    tau_max: int = 64      # longest sequence the positional table e(t) covers
    attention: str = "softmax"  # softmax (Eq. 5) | linear (feature map elu(x) + 1, non-causal) | sparse (two-sided Eq. 6 pattern)
    features: str = "learned"  # learned: f_hat, F_hat are MLPs (Eq. 5) | given: fixed features holding the target's basis, only W_Q, W_K and an affine value map (a, b) trained -- the attention term of Eq. (17) alone
    given_qk_sd: float = 1.0   # given features: initial logit sd (W_Q, W_K scaled by 1/(sqrt(dim) m_h^(1/4)))
    features_k: int | None = None   # given features: the target's phi_i and psi_i for i <= features_k (and f(x) for the value); as the reference for the attention term it is uncapped only up to m_h = features_k / 2, and the summaries say which m_h are capped (default: 4 x the largest m_h, hparams.GIVEN_K_FACTOR, or the target's rank when smaller; learned features do not use it)

    # What a model record meant for a field it lacks, and what cell keys are hashed against (jackson.sweep.non_default):
    # the value the field held before the default moved to the sine class.  A cell.json keeps only the fields that
    # differ from these, and a config.json written before --activation existed has no class: both held GELU models,
    # so every finished cell keeps its key and every old folder reads as what it ran.
    RECORD_DEFAULTS = {"activation": "gelu", "in_scale": 3.0, "features_k": 16}

    def __post_init__(self):
        if self.in_scale is None:        # each class with its own first-layer scale (an unknown class: validate_m_h)
            object.__setattr__(self, "in_scale", IN_SCALES.get(self.activation, IN_SCALES["gelu"]))

    @property
    def f_in(self) -> int:
        """Input width of f_hat: d, or d' after a positional encoding."""
        return self.d_in if self.pos == "none" else self.d_pos

    def validate_m_h(self, m_h: int) -> None:
        if not 1 <= m_h <= self.n:
            raise ValueError(f"--m-h: each m_h must be in 1..{self.n} (n, the embedding width), got {m_h}")
        if self.pos not in ("none", "learned", "sinusoidal"):
            raise ValueError(f"--pos: choose none, learned or sinusoidal, got {self.pos}")
        if self.attention not in ATTENTIONS:
            raise ValueError(f"--attention: choose {', '.join(ATTENTIONS)}, got {self.attention}")
        if self.features not in FEATURES:
            raise ValueError(f"--features: choose {', '.join(FEATURES)}, got {self.features}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"--activation: choose {', '.join(ACTIVATIONS)}, got {self.activation}")


FEATURES = ("learned", "given")


def model_config(d: dict) -> ModelConfig:
    """A ModelConfig from a recorded dict (a cell.json's model, which keeps only the fields that differ from
    RECORD_DEFAULTS): the fields it names, RECORD_DEFAULTS' values for the others, the defaults for the rest."""
    names = {f.name for f in fields(ModelConfig)}
    return ModelConfig(**{**ModelConfig.RECORD_DEFAULTS, **{k: tuple(v) if isinstance(v, list) else v
                                                             for k, v in d.items() if k in names}})


def recorded(model: dict, name: str):
    """A model field as a record holds it (a summary's target, a cell.json or config.json model): a field the record
    lacks ran with its ModelConfig.RECORD_DEFAULTS value."""
    return model.get(name, ModelConfig.RECORD_DEFAULTS[name])

# The FFN class F^(m_FF) of Sec. 4 (the activation between the layers of f_hat and F_hat; jackson.models.ACTIVATION_FNS
# holds the functions).  The theorem allows any class, with its own beta; App. C's "dense network" is read as GELU.
# ModelConfig's default is the sine class, its first layer's frequencies U(-60, 60) for scalar inputs, chosen by
# measurement (reports/jackson/FITTING.md, "The default FFN class"): on the card's target (3 seeds) the sine full model
# sits at 0.79-0.99x e_attn + e_FF at every m_h 1..16, limited by its attention term (its e_FF is 3.5x-7,400x
# smaller), where GELU's floors at its own e_FF (~8e-5) from m_h 6; on shifted-Legendre bases it is again the lower
# curve.  In-scale 60 was measured at 3,000 steps on the trace-free target, alpha 1.5: m_h 16 at 1.5x its rank-16
# oracle with 60, 2.6x with 30 (../shared/notes/training-observations.md).  GELU and ReLU take App. C's scale 3.
# A model with no class of its own (given features, a config.json older than --activation) keeps GELU's fields
# (ModelConfig.RECORD_DEFAULTS).  The App. B tasks and the RNN comparison fit GELU, as their committed runs did.
ACTIVATIONS = ("gelu", "relu", "sin")
IN_SCALES = {"gelu": 3.0, "relu": 3.0, "sin": 60.0}   # each class's first-layer init scale unless one is given
# --features given without --features-k: this many times the largest m_h given features (the target's rank when
# smaller), so the attention term's reference is uncapped (rate_sweep.references.UNCAPPED: 2x) with room to spare; at
# features_k 16 the card's m_h 9..16 members had too few to choose from (reports/jackson/FITTING.md).
GIVEN_K_FACTOR = 4


def given_features_k(m_h_max: int, rank: float = math.inf) -> int:
    """The given features a bank of sizes up to m_h_max takes unless told: GIVEN_K_FACTOR x m_h_max, or the target's
    rank when smaller (no basis function past it carries weight), never below m_h_max."""
    return int(max(m_h_max, min(GIVEN_K_FACTOR * m_h_max, rank)))


def with_features_k(model: ModelConfig, m_h_max: int, rank: float = math.inf) -> ModelConfig:
    """`model` as a bank runs it: an unset features_k derived -- given features take given_features_k; learned
    features do not use it and keep its recorded value, 16 (so their cells keep their keys)."""
    if model.features_k is not None:
        return model
    k = given_features_k(m_h_max, rank) if model.features == "given" else ModelConfig.RECORD_DEFAULTS["features_k"]
    return replace(model, features_k=k)


# App. C's dense network at App. C's sizes, as the App. B tasks and the RNN comparison ran it: every field whose
# default moved at its recorded value (GELU, scale 3, features_k 16), so their cells keep their keys
DENSE_MODEL = ModelConfig(**ModelConfig.RECORD_DEFAULTS)


MAX_LR = 1.0         # Adam moves every weight by up to lr a step: past 1 (measured: jackson-sweep --quick at --lr 3) every fit diverges


@dataclass(frozen=True)
class FitConfig:
    steps: int = 6000          # budget: most optimiser steps for the bank
    batch_size: int = 64       # sequences per step (per member; all members see the same batch)
    lr: float = 3e-3           # peak Adam learning rate
    warmup: int = 200          # linear warm-up steps
    schedule: str = "cosine"   # "cosine" (decay over the budget) or "plateau" (per-member reduce-on-plateau)
    eval_every: int = 250      # steps between plateau checks / loss-curve points
    patience: int = 2          # checks without improvement before the lr is cut
    min_improve: float = 0.05  # relative improvement that counts as progress
    lr_decay: float = 0.3      # lr factor on a plateau
    min_lr: float = 1e-5       # cosine: final lr; plateau: below this a member has converged
    eval_size: int = 2048      # training sequences used for the plateau checks
    converged_lr_frac: float = 0.1   # cosine: "converged" is judged only on checks where lr >= this x its peak
    explode: float = 10.0      # diverged once the training-subset MSE exceeds this x E[y^2] (the zero predictor's MSE)
    cycles: int = 1            # cosine: the cap, in cosine cycles of `steps` steps, each restarted from the peak rate (warm-up, then down to min_lr); from the second cycle on, a member whose training-subset MSE at a cycle's end is not min_improve below its best earlier cycle end has stopped decreasing (converged) and keeps the weights of its best cycle end; one still falling at the last cycle's end = budget (1: the single budget)
    guard: float = 0.0         # a jump guard: at a check whose training-subset MSE exceeds this x the member's best check so far, the member's weights at that best check are restored, its Adam moments cleared and its peak rate multiplied by GUARD_CUT (a high rate then stops costing members; gradient-norm clipping did not stop the jumps: reports/jackson/TIME_TO_QUALITY.md); 0: off
    check_steps: int = 0       # cosine: members still improving when the budget ends train on this many steps, a second cosine cycle from converged_lr_frac x the peak rate down to min_lr; a fall of less than min_improve then = stopped (converged), more = budget (0: no check; on the card's target it called members stopped whose error a 12,000-step budget lowers up to 1.4x: reports/jackson/FITTING.md)


GUARD_CUT = 0.5   # what the jump guard (FitConfig.guard) multiplies a member's peak rate by, each time it restores it


def schedule_problem(f: FitConfig, o: str = "--") -> str:
    """What is wrong with a FitConfig's extensions of the cosine schedule (the continuation check, the cycles), in one
    line naming the option (`o` its prefix: "--", or "--rnn-" for rnn-compare's second fit); "" when nothing is.  Every
    command that takes a FitConfig asks this before it trains (jackson.fit.fit raises on the same cases)."""
    if f.guard and not f.guard > 1:
        return f"{o}guard: 0 (off) or a factor above 1 over the member's best MSE, got {f.guard:g}"
    if f.check_steps < 0:
        return f"{o}check-steps: must be >= 0, got {f.check_steps}"
    if f.cycles < 1:
        return f"{o}cycles: at least one cosine cycle, got {f.cycles}"
    if f.cycles > 1 and (f.schedule != "cosine" or f.check_steps):
        return f"{o}cycles: repeats the cosine schedule, so it takes {o}schedule cosine and no {o}check-steps"
    if f.check_steps and f.schedule != "cosine":
        return f"{o}check-steps: a check after the cosine budget; the plateau schedule stops each member by its own rule"
    return ""


WORDS = ("(the schedule's own word, `converged` in the tables; whether more steps would move the member is the "
         "doubling check's to say, below)")


def stop_rule(cfg: FitConfig) -> str:
    """The rule by which the schedule decided a member's status, in words with this fit's numbers: what `converged`
    (said *stopped*: the schedule's word, not a convergence check -- that is jackson/rate_sweep/doubling.py's),
    `budget` (said *still improving*) and `diverged` mean under `cfg.schedule` (the summaries quote it; a reader can check it against the
    committed loss curves, which hold every check's training-subset MSE and learning rate)."""
    check = f"every {cfg.eval_every} steps its MSE on {cfg.eval_size} training sequences is measured"
    diverged = (f"*diverged*: non-finite, or above {cfg.explode:g}x the zero predictor's MSE -- excluded from curves "
                "and fits (jackson/fit.py)")
    if cfg.guard:
        diverged += (f"; the jump guard: a check above {cfg.guard:g}x the member's best check gives it that check's "
                     f"weights back and {GUARD_CUT:g}x its peak rate (each cell.json's `guarded` counts them)")
    if cfg.schedule == "plateau":
        return (f"*Stopped* {WORDS} = the schedule judged its loss to have stopped decreasing: {check}; {cfg.patience} checks in a row "
                f"without a fall of {cfg.min_improve:.0%} below its best cut its learning rate by {cfg.lr_decay:g}x, and "
                f"the member stops once the rate is below {cfg.min_lr:g} (the loss had stopped decreasing at every rate "
                f"from {cfg.lr:g} down); *still improving*: still training at the cap of {cfg.steps:,} steps; {diverged}.")
    flat = (f"its last {cfg.patience} checks while the cosine learning rate was still >= {cfg.converged_lr_frac:.0%} of "
            f"its peak improved its best by less than {cfg.min_improve:.0%}")
    if cfg.check_steps:
        rate = cfg.converged_lr_frac * cfg.lr
        return (f"*Stopped* {WORDS} = the schedule judged its loss to have stopped decreasing: {check}; {flat}, or, still improving when "
                f"the {cfg.steps:,}-step budget ended, a further {cfg.check_steps:,} steps (a second cosine cycle from "
                f"{rate:g}, {cfg.converged_lr_frac:.0%} of the peak, down to {cfg.min_lr:g}) lowered its best training-subset MSE by less than "
                f"{cfg.min_improve:.0%} below its value at step {cfg.steps:,}; *still improving*: those steps lowered it by more "
                f"(still improving at the cap of {cfg.steps + cfg.check_steps:,} steps); {diverged}.")
    if cfg.cycles > 1:
        return (f"*Stopped* {WORDS} = the schedule judged its loss to have stopped decreasing: the schedule is a {cfg.steps:,}-step cosine "
                f"cycle (warm-up over {cfg.warmup} steps to {cfg.lr:g}, down to {cfg.min_lr:g}), repeated from the peak rate "
                f"up to {cfg.cycles} times; at the end of each cycle from the second on, its MSE on {cfg.eval_size} "
                f"training sequences is compared with its best earlier cycle end, and a member whose loss did not fall "
                f"by {cfg.min_improve:.0%} stops there, with the weights of its best cycle end; *still improving*: still falling at "
                f"the end of cycle {cfg.cycles} (the cap, {cfg.steps * cfg.cycles:,} steps); {diverged}.")
    return (f"*Stopped* {WORDS}: {check}; {flat}; *still improving*: still improving then (the {cfg.steps:,}-step budget ended the "
            f"schedule); {diverged}.")


def block_size(max_len: int) -> int:
    """The block size of sparse attention (Eq. 6; Sec. 6.1): B = 2^floor(log2 sqrt(L)), L the longest sequence the
    model will see.  A setting derived from L, here so that options are checked without torch."""
    if max_len < 1:
        raise ValueError(f"block_size: the sequence length must be >= 1, got {max_len}")
    return 1 << (math.isqrt(max_len).bit_length() - 1)   # floor(log2 sqrt L) = floor(log2 isqrt L)


def fit_config(d: dict) -> FitConfig:
    """A FitConfig from a recorded dict (a cell's `fit`): the fields it names, the defaults for the rest (a folder
    older than a field ran with its default)."""
    names = {f.name for f in fields(FitConfig)}
    return FitConfig(**{k: v for k, v in d.items() if k in names})
