"""Numerical proper orthogonal decomposition (Eq. 10) of kernels rho(u, v) on [0, 1]^2.

Nystrom discretisation: with quadrature nodes u_i and weights w_i, the integral operator
(T g)(u) = int rho(u, v) g(v) dv becomes the matrix A = W^1/2 R W^1/2 (R_ij = rho(u_i, u_j));
its singular values approximate sigma_k and its singular vectors, divided by sqrt(w), the POD
functions phi_k, psi_k at the nodes.  Gauss-Legendre converges spectrally for smooth kernels; the
midpoint rule is exact for trigonometric products of total frequency below n.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass
class POD:
    sigma: np.ndarray    # (k,) singular values, descending
    phi: np.ndarray      # (n, k) left functions at the nodes
    psi: np.ndarray      # (n, k) right functions at the nodes
    nodes: np.ndarray    # (n,)
    weights: np.ndarray  # (n,)


def quadrature(n: int, rule: str = "gauss") -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of an n-point rule on [0, 1]."""
    if rule == "gauss":
        t, w = np.polynomial.legendre.leggauss(n)
        return (t + 1) / 2, w / 2
    if rule == "midpoint":
        return (np.arange(n) + 0.5) / n, np.full(n, 1.0 / n)
    raise ValueError(f"rule: choose gauss or midpoint, got {rule}")


def pod_matrix(values: np.ndarray, weights: np.ndarray, nodes: np.ndarray, k: int | None = None) -> POD:
    """POD from kernel values on a node grid: values[i, j] = rho(u_i, v_j), shared nodes."""
    sw = np.sqrt(weights)
    u, s, vt = np.linalg.svd(sw[:, None] * values * sw[None, :], full_matrices=False)
    k = len(s) if k is None else min(k, len(s))
    return POD(s[:k], u[:, :k] / sw[:, None], vt[:k].T / sw[:, None], nodes, weights)


def pod(kernel: Callable[[np.ndarray, np.ndarray], np.ndarray], n: int = 256,
        rule: str = "gauss", k: int | None = None) -> POD:
    """POD of any kernel given as kernel(u, v) -> matrix (len(u), len(v)).  The n x n matrices it makes (the
    kernel's values, their weighted copy and the SVD's two factors, float64) are priced first
    (`jackson.budget.check`): an n past the memory limit is a one-line BudgetError."""
    from .budget import F64, check
    check(f"the POD on {n:,} nodes", {"the kernel matrix and its SVD": 4 * F64 * float(n) ** 2})
    x, w = quadrature(n, rule)
    return pod_matrix(np.asarray(kernel(x, x), dtype=np.float64), w, x, k)


def rank_tail(sigma: np.ndarray, ms) -> dict[int, float]:
    """Eckart-Young: relative L2 error of the best rank-m approximation of a kernel with singular
    values sigma, sqrt(sum_{i>m} sigma_i^2 / sum_i sigma_i^2), for each m in ms.

    With sigma from `pod(lambda u, v: np.exp(rho(u, v)))`: how well any rank-m kernel -- e.g. linear
    attention's phi(q(u)).phi(k(v)) with m = m_h features -- can match the unnormalised softmax
    kernel exp(rho), which is not low-rank even when rho is."""
    e = np.asarray(sigma, dtype=np.float64) ** 2
    total = e.sum()
    return {int(m): float(np.sqrt(max(e[m:].sum(), 0.0) / total)) for m in ms}


def center_keys(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Remove from rho(u, v) its v-mean: the part g(u) that softmax over s cannot see."""
    return values - (values @ weights)[:, None]


def learned_spectrum(bank, n: int = 256, k: int = 24, centered: bool = True) -> np.ndarray:
    """Singular values of each member's learned rho_hat (Eq. 18): (M, k).  For a linear-attention bank
    that is its effective coupling log(phi(q).phi(k)) (see TransformerBank.rho_hat).

    centered: first subtract the v-mean of rho_hat(u, .) (a function of u alone, invisible to the
    softmax over s), so the spectrum compares with targets whose psi_i have zero mean.
    """
    import torch         # here, not at the top: the POD of a kernel (synthetic targets) needs no torch
    x, w = quadrature(n, "gauss")
    grid = torch.tensor(x, dtype=torch.float32)
    vals = bank.rho_hat(grid, grid).double().numpy()
    out = np.zeros((len(vals), k))
    for i, r in enumerate(vals):
        r = center_keys(r, w) if centered else r
        s = pod_matrix(r, w, x, k).sigma
        out[i, :len(s)] = s
    return out
