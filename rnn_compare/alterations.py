"""Temporal alterations of Section 6: ordering (a fixed permutation) and mixing (a short filter).

Ordering (Sec. 6.1): with a fixed permutation p of time, the altered target is
    H~_t(x o p) = H_t(x):   the inputs are permuted, the outputs are kept.
So a training pair (x, y) of H becomes (permute(x, p), y) for H~.

Mixing (Sec. 6.2): with a filter theta of length l and ||theta||_1 <= 1,
    (theta * x)[t] = sum_{s=0}^{l-1} theta(s) x(t + s),        H~_t(x) = H_t(theta * x).
Boundary rule: x(t + s) = 0 for t + s >= tau (zero padding at the end), so theta * x has the
same length as x.  A delta filter theta = (1, 0, ..., 0) changes nothing.  This mixing reads the
future, so H(theta * x) is not causal; App. D.3's proof (Eq. 96) keeps only its s >= 0 terms.
`direction="past"` mixes causally, (theta * x)[t] = sum_s theta(s) x(t - s), zero before the start.

Worked example (tau = 4): p = (2, 3, 0, 1) (first 2 swapped with last 2), x = (a, b, c, d):
    permute(x, p) = (x[p[0]], x[p[1]], ...) = (c, d, a, b);  invert_permutation(p) = (2, 3, 0, 1).
    theta = (0.5, 0.5): theta * x = ((a+b)/2, (b+c)/2, (c+d)/2, d/2).
"""
from __future__ import annotations

import numpy as np


class AlterationError(ValueError):
    """A permutation or filter that cannot be used (message names the option)."""


def swap_ends(tau: int, k: int = 10) -> np.ndarray:
    """The paper's default permutation: the first k time steps swapped with the last k."""
    if not 1 <= k <= tau // 2:
        raise AlterationError(f"--swap: need 1 <= k <= tau/2 = {tau // 2} for tau = {tau}, got {k}")
    idx = np.arange(tau)
    return np.concatenate([idx[tau - k:], idx[k:tau - k], idx[:k]])


def check_permutation(p, tau: int) -> np.ndarray:
    p = np.asarray(p)
    if p.ndim != 1 or len(p) != tau:
        raise AlterationError(f"--perm: a permutation of the {tau} time steps needs {tau} entries, got {p.size}")
    if not np.array_equal(np.sort(p), np.arange(tau)):
        raise AlterationError(f"--perm: not a permutation of 0..{tau - 1}")
    return p.astype(int)


def permute(x: np.ndarray, p) -> np.ndarray:
    """x o p along time (axis 1 of (n_seq, tau, ...)): out[:, t] = x[:, p[t]]."""
    p = check_permutation(p, x.shape[1])
    return x[:, p]


def invert_permutation(p) -> np.ndarray:
    p = np.asarray(p)
    inv = np.empty_like(p)
    inv[p] = np.arange(len(p))
    return inv


def random_filter(length: int, seed: int) -> np.ndarray:
    """A random filter with ||theta||_1 = 1 (signs and magnitudes drawn from the seed)."""
    if length < 1:
        raise AlterationError(f"--filter-length: must be >= 1, got {length}")
    th = np.random.default_rng(seed).uniform(-1.0, 1.0, length)
    return th / np.abs(th).sum()


def parse_filter(text: str) -> np.ndarray:
    """The taps of `--filter`, comma-separated numbers ("0.2,0.3,0.5"), checked like any filter."""
    try:
        th = np.array([float(v) for v in text.split(",")], dtype=float)
    except ValueError:
        raise AlterationError(f"--filter: give comma-separated numbers (theta(0),theta(1),...), got {text!r}") from None
    if not np.isfinite(th).all():
        raise AlterationError(f"--filter: every tap must be a finite number, got {text!r}")
    return check_filter(th)


def mixing_filter(text: str, length: int, seed: int) -> np.ndarray:
    """theta of a mixing: the taps given (`--filter`, when not empty), else random_filter(length, seed)."""
    return parse_filter(text) if text else random_filter(length, seed)


def check_filter(theta) -> np.ndarray:
    th = np.asarray(theta, dtype=float)
    if th.ndim != 1 or len(th) < 1:
        raise AlterationError("--filter: give at least one value")
    if np.abs(th).sum() > 1 + 1e-12:
        raise AlterationError(f"--filter: needs ||theta||_1 <= 1 (Prop. 6.3), got {np.abs(th).sum():.4g}")
    return th


def mix(x: np.ndarray, theta, direction: str = "future") -> np.ndarray:
    """Mix x: (n_seq, tau) along time.

    direction "future" (the paper's Sec. 6.2 formula): (theta * x)[t] = sum_s theta(s) x(t + s), zero
    beyond the end; the mixed input reads ahead, so H(theta * x) is no longer causal.
    direction "past": (theta * x)[t] = sum_s theta(s) x(t - s), zero before the start; causal.
    """
    th = check_filter(theta)
    n, tau = x.shape
    z = np.zeros((n, len(th) - 1))
    if direction == "future":
        pad = np.concatenate([x, z], axis=1)
        return sum(th[s] * pad[:, s:s + tau] for s in range(len(th)))
    if direction == "past":
        pad = np.concatenate([z, x], axis=1)
        return sum(th[s] * pad[:, len(th) - 1 - s:len(th) - 1 - s + tau] for s in range(len(th)))
    raise AlterationError(f"--mix-direction: choose future or past, got {direction}")
