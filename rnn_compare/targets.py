"""Linear targets of Section 6 and App. C: H_t(x) = sum_{s=0}^{t} rho(s) x(t - s).

Kernels: rho(s) = e^{-s} (Table 2) and rho(s) ~ U[0, 1], drawn once from a seed (Table 3).
Worked example (tau = 3, rho = e^{-s}): x = (1, 0, 2) gives
    H_0 = 1,  H_1 = 0 + e^{-1} * 1 = 0.3679,  H_2 = 2 + e^{-1} * 0 + e^{-2} * 1 = 2.1353.

`complexity` gives the RNN complexity measures of App. D.1 (Eq. 76-78) for a finite kernel.
"""
from __future__ import annotations

import numpy as np

KERNELS = ("exp", "uniform")


def kernel(name: str, tau: int, seed: int = 0) -> np.ndarray:
    """rho(0..tau-1)."""
    if name == "exp":
        return np.exp(-np.arange(tau, dtype=float))
    if name == "uniform":
        return np.random.default_rng(seed).random(tau)
    raise ValueError(f"--kernel: choose {' or '.join(KERNELS)}, got {name}")


def apply_linear(x: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """H_t(x) = sum_{s<=t} rho(s) x(t-s) for x: (n_seq, tau) (a causal convolution)."""
    n, tau = x.shape
    y = np.zeros_like(x, dtype=float)
    for s in range(min(tau, len(rho))):
        y[:, s:] += rho[s] * x[:, :tau - s]
    return y


def mixed_kernel(rho: np.ndarray, theta: np.ndarray, direction: str = "future"):
    """rho~ of H_t(theta * x) as a kernel on x(t - s), s from -(l-1) to tau-1 (App. D.3, Eq. 92-98).

    Returns (shifts, rho~): mixing reads x(t + s') for s' < l, so the altered kernel reaches
    l - 1 steps into the future; the RNN can only represent its s >= 0 part.  This is the kernel
    of the stationary system: near the start of a sequence (s <= t cuts the sum) and near its
    zero-padded end the finite-length target differs from it.
    """
    l, tau = len(theta), len(rho)
    if direction == "past":         # causal: rho~ = theta * rho, coefficient of x(t - d), d >= 0
        shifts = np.arange(tau + l - 1)
        out = np.array([sum(theta[sp] * rho[d - sp] for sp in range(l) if 0 <= d - sp < tau) for d in shifts])
        return shifts, out
    shifts = np.arange(-(l - 1), tau)
    out = np.zeros(len(shifts))
    for j, d in enumerate(shifts):  # coefficient of x(t - d): sum over s - s' = d
        out[j] = sum(theta[sp] * rho[d + sp] for sp in range(l) if 0 <= d + sp < tau)
    return shifts, out


def complexity(rho: np.ndarray, floor: float = 1e-12) -> dict:
    """App. D.1 for a finite kernel rho(0..T-1).

    C1 = 1 + beta*, with beta* the decay time of rho: the smallest beta with |rho(t)| <= C e^{-t/beta}
    for the fitted envelope (least squares of log |rho(t)| on t over the entries above `floor`,
    beta* = -1/slope); a kernel that does not decay (slope >= 0) has C1 = inf.
    C2 = sup_t e^{t / C1} |rho(t)|;  C_RNN = C1 * C2 (Eq. 78).
    """
    t = np.arange(len(rho), dtype=float)
    a = np.abs(np.asarray(rho, float))
    keep = a > floor
    if keep.sum() < 2:
        return {"C1": 1.0, "C2": float(a.max(initial=0.0)), "C_RNN": float(a.max(initial=0.0)), "decay_time": 0.0}
    slope = np.polyfit(t[keep], np.log(a[keep]), 1)[0]
    if slope >= 0:
        return {"C1": float("inf"), "C2": float("nan"), "C_RNN": float("inf"), "decay_time": float("inf")}
    beta = -1.0 / slope
    c1 = 1.0 + beta
    c2 = float(np.max(np.exp(t / c1) * a))
    return {"C1": c1, "C2": c2, "C_RNN": c1 * c2, "decay_time": beta}
