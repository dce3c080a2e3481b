"""What every training loop shares: the learning-rate schedule, the batch sampler, the seeds.

Used by `jackson.fit.fit` (so by jackson-sweep, jackson-tasks and rnn-compare), `cot_dp.train.train`
and `vit_probe.train.train`; none of them keeps a copy.

* `lr_at`: the learning rate of one optimiser step as a pure function of the step -- linear
  warm-up from peak/warmup, then cosine decay to a floor, or constant.  `Plateau`: the per-member
  reduce-on-plateau state of `jackson.fit` (it needs memory, so it is a small class).
* `EpochSampler`: mini-batches cut from one random permutation of the data per epoch, drawn from
  a seeded `torch.Generator` (one stream, or one generator per epoch so a run can resume anywhere).
* `derive_seed` / `derive_seeds` / `seeded_generator` / `stable_tag`: independent integer seeds
  from a tuple of parts (numpy's `SeedSequence` hash, 32-bit words), and the crc32 tag of a
  JSON-able dict; `member_seed` is the (seed, m_h) init of a bank member.  The values are the ones
  the loops and cells computed before this module existed, so cell keys and results do not move.
  `torch_seeded`: the global torch RNG seeded inside a block and restored after it (a model's random
  init, dropout masks), so drawing from a seed moves nobody else's stream.

Why not torch.optim.lr_scheduler (measured with torch 2.14: each scheduler stepped on a one-
parameter SGD next to the loops' closed forms, step by step).  `LambdaLR` sets base_lr x factor,
where jackson.fit computes (lr x warm-up) x cosine: the two round apart in the last bit on 62-73
of 3,000-24,000 steps, and fit writes its learning rates to curve.csv.  `SequentialLR(LinearLR,
CosineAnnealingLR)` is another schedule: its cosine starts a step later than cot-dp's (2,979 of
3,000 steps differ) and its recursive forms drift from vit-probe's closed form (1,118 of 1,170
steps, rel. 3e-15; 1e-14 over 15,600).  `ReduceLROnPlateau` cannot hold fit's plateau at all:
it reads one metric per optimiser and cuts every parameter group together, while every member of
a bank is one parameter group of a single fused Adam step, cut and stopped on its own loss (one
optimiser per member would give up the single fused step); and its rule differs (`best` is not
lowered by a value that is no progress, patience is counted with `>`, min_lr clamps instead of
stopping the member).  A schedule that is a function of the step also needs no scheduler state
in vit-probe's resumable checkpoints.  So it stays hand-written, here, once.
"""
from __future__ import annotations

import contextlib
import json
import math
import zlib

import numpy as np
import torch

SHAPES = ("cosine", "constant")


# ---- learning rate -------------------------------------------------------------------------------

def lr_at(step: int, peak: float, total: int, warmup: int = 0, shape: str = "cosine", floor: float = 0.0,
          decay_from: int | None = None, decay_steps: int | None = None) -> float:
    """Learning rate of optimiser step `step` (1 = the first) of a `total`-step run.

    peak x min(1, step / warmup) x decay, where decay = 1 ("constant") or ("cosine")
    lo + (1 - lo) (1 + cos(pi u)) / 2 with lo = floor / peak and
    u = max(0, step - decay_from) / decay_steps: the cosine starts at `decay_from` (default: the
    warm-up's last step) and reaches the floor `decay_steps` later (default: at `total`).
    jackson.fit decays over the whole budget (decay_from=0, the warm-up ramp times the cosine).
    """
    warm = min(1.0, step / max(1, warmup))
    if shape == "constant":
        return peak * warm
    if shape != "cosine":
        raise ValueError(f"schedule shape: choose one of {', '.join(SHAPES)}, got {shape}")
    start = warmup if decay_from is None else decay_from
    span = max(1, total - start) if decay_steps is None else decay_steps
    lo = floor / peak
    frac = lo + (1 - lo) * 0.5 * (1 + math.cos(math.pi * max(0, step - start) / span))
    return peak * warm * frac


class Plateau:
    """Reduce-on-plateau, one independent state per member (parameter group).

    A check improves when the value is below (1 - min_improve) x the best so far; otherwise the
    member's `stale` count grows (and `best` still takes the value if it is lower).  After
    `patience` stale checks its learning rate `lr[i]` is multiplied by `factor`; once that falls
    below `min_lr` the member has converged (`check` returns True).
    """

    def __init__(self, n: int, lr: float, patience: int, min_improve: float, factor: float, min_lr: float):
        self.lr = [lr] * n                  # each member's current (pre-warm-up) learning rate
        self.best = [math.inf] * n
        self.stale = [0] * n
        self.patience, self.min_improve, self.factor, self.min_lr = patience, min_improve, factor, min_lr

    def check(self, i: int, value: float, cut: bool = True) -> bool:
        """Record member i's check value; cut its lr when it is due and `cut`; True once converged."""
        if value < self.best[i] * (1 - self.min_improve):
            self.best[i], self.stale[i] = value, 0
        else:
            self.stale[i] += 1
            self.best[i] = min(self.best[i], value)
        if cut and self.stale[i] >= self.patience:
            self.lr[i] *= self.factor
            self.stale[i] = 0
            return self.lr[i] < self.min_lr
        return False

    def flat(self, i: int) -> bool:
        """Its last `patience` checks did not improve it."""
        return self.stale[i] >= self.patience


# ---- batches -------------------------------------------------------------------------------------

class EpochSampler:
    """Mini-batches of indices into n examples: each epoch one random permutation, cut into
    n // batch_size batches (the remainder is dropped; a batch_size above n takes the whole
    permutation, one epoch per step).

    per_epoch=False: one generator seeded with `seed` draws the permutations in turn, so
    `batch(step)` must be called for steps 0, 1, 2, ... in order (jackson.fit, cot-dp), or `skip_to`
    the step a resumed run starts from.
    per_epoch=True: epoch e's permutation comes from `seeded_generator(seed, e)`, so any step can
    be asked for first -- a resumed run takes exactly the batches of an uninterrupted one (vit-probe).
    """

    def __init__(self, n: int, batch_size: int, seed: int, per_epoch: bool = False, device=None):
        self.n, self.batch_size, self.seed, self.per_epoch, self.device = n, batch_size, seed, per_epoch, device
        self.steps_per_epoch = max(1, n // batch_size)
        self._epoch, self._perm = -1, None
        if not per_epoch:
            self._gen = torch.Generator().manual_seed(seed)
            if batch_size > n:   # the loops this replaced drew one permutation they never used here
                torch.randperm(n, generator=self._gen)

    def batch(self, step: int) -> torch.Tensor:
        """Indices of the batch of optimiser step `step` (0 = the first), on `device`."""
        epoch, b = divmod(step, self.steps_per_epoch)
        if epoch != self._epoch:
            if not self.per_epoch and epoch != self._epoch + 1:
                raise ValueError(f"EpochSampler(per_epoch=False) draws epochs in order: asked for epoch {epoch} "
                                 f"after {self._epoch}")
            gen = seeded_generator(self.seed, epoch) if self.per_epoch else self._gen
            self._perm, self._epoch = torch.randperm(self.n, generator=gen).to(self.device), epoch
        return self._perm[b * self.batch_size:(b + 1) * self.batch_size]

    def skip_to(self, step: int) -> None:
        """Draw the permutations of the epochs up to `step`'s, so that `batch(step)` may be asked next: a
        resumed run of a per_epoch=False sampler (cot-dp) then takes the batches of an uninterrupted one."""
        for e in range(self._epoch + 1, step // self.steps_per_epoch + 1):
            self.batch(e * self.steps_per_epoch)


# ---- seeds ---------------------------------------------------------------------------------------

def derive_seeds(*parts: int, n: int) -> tuple[int, ...]:
    """n independent 32-bit seeds from the integer tuple `parts` (numpy SeedSequence: a stable hash,
    so (seed, 1) and (seed, 2) give unrelated streams)."""
    return tuple(int(s) for s in np.random.SeedSequence(list(parts)).generate_state(n))


def derive_seed(*parts: int) -> int:
    """One seed from the integer tuple `parts` (the first of `derive_seeds(*parts, n=...)`)."""
    return derive_seeds(*parts, n=1)[0]


def seeded_generator(*parts: int) -> torch.Generator:
    """A CPU torch.Generator seeded with `derive_seed(*parts)`."""
    return torch.Generator().manual_seed(derive_seed(*parts))


def stable_tag(d: dict) -> int:
    """A 32-bit tag of a JSON-able dict, the same in every process and Python version (crc32 of its
    sorted JSON; Python's own hash() of a str is salted per process)."""
    return zlib.crc32(json.dumps(d, sort_keys=True).encode())


@contextlib.contextmanager
def torch_seeded(seed: int, devices=()):
    """Inside the block the global torch RNG is seeded with `seed`; after it, the CPU state (and that of
    the CUDA `devices`, indices) is what it was: `torch.random.fork_rng` + `torch.manual_seed`, once."""
    with torch.random.fork_rng(devices=list(devices)):
        torch.manual_seed(seed)
        yield


def member_seed(seed: int, m_h: int) -> int:
    """A bank member's init from (seed, m_h) alone (jackson-tasks cells, the benchmarks; rate cells
    use `jackson.rate_sweep.cell.init_seed`, which also hashes the restart and the target)."""
    return derive_seed(seed, m_h)

