"""What every App. B.1 task generator returns: inputs, targets and the target's own Eq. (8) parts.

Each task in `synthetic/` (nearest_point, weighted_average, selection_average) is an Eq. (8) target

    y(t) = F( sum_s S[t, s] f(x(s)) ),    S[t, .] = sigma[rho(x(t), x(.))]  (rows sum to 1)

and hands out, besides x and y, the ground truth the checks of Proposition B.1 need: the target's
attention S (its "selection") and F∘f applied to every token.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class TaskBatch(NamedTuple):
    x: np.ndarray       # (n, tau, d_in) encoded input sequences (float64)
    y: np.ndarray       # (n, tau, d_out) targets y(t) = H_t(x)
    select: np.ndarray  # (n, tau, tau) the target's attention S of Eq. (8); row t sums to 1
    fof: np.ndarray     # (n, tau, d_out) F∘f(x(s)) of every token (Prop. B.1: the invariant part)


def make_batch(task, x: np.ndarray) -> TaskBatch:
    """Targets and ground truth of `task` for the input sequences x: (n, tau, d_in)."""
    x = np.asarray(x, dtype=np.float64)
    S = task.selection(x)                        # (n, tau, tau)
    y = task.F(S @ task.f(x))                    # Eq. (8): F(sum_s S[t, s] f(x(s)))
    return TaskBatch(x, y, S, task.F(task.f(x)))


def rng_for(seed: int) -> np.random.Generator:
    if not (isinstance(seed, (int, np.integer)) and seed >= 0):
        raise ValueError(f"seed: need an integer >= 0, got {seed!r}")
    return np.random.default_rng(int(seed))
