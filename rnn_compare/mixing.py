"""Temporal mixing raises the rank of the coupling (App. D.3).

For tau = 2 and a mixing x~ = (x1, a x1 + b x2), the coupling of the altered target, as a function
of the original inputs, is rho~(u, v) = rho(u, a u + b v).  The paper's example:
    rho(u, v) = 1 + sqrt2 sin(2 pi u) sqrt2 sin(2 pi v)        singular values (1, 1)
    rho~(u, v) = rho(u, u + v)                                  about (1.265, 0.5, 0.4) in the paper
Closed form (used by the tests): rho~ = 1 + 2 sin^2(2 pi u) cos(2 pi v) + sin(4 pi u) sin(2 pi v) has
rank 3, sigma_3 = 1/2 and sigma_{1,2}^2 the eigenvalues of [[1, 1/sqrt2], [1/sqrt2, 3/4]], i.e.
sigma = (1.2625, 0.5, 0.3961).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from jackson.pod import pod

Kernel = Callable[[np.ndarray, np.ndarray], np.ndarray]


def pointwise(kernel_uv: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Kernel:
    """A grid kernel from an elementwise one k(U, V) (broadcast over a meshgrid)."""
    return lambda u, v: kernel_uv(u[:, None], v[None, :])


def mixed(kernel_uv: Callable[[np.ndarray, np.ndarray], np.ndarray], a: float = 1.0, b: float = 1.0) -> Kernel:
    """rho~(u, v) = rho(u, a u + b v) as a grid kernel (kernel_uv is elementwise)."""
    return lambda u, v: kernel_uv(u[:, None], a * u[:, None] + b * v[None, :])


def paper_elementwise(u, v):
    return 1.0 + 2.0 * np.sin(2 * np.pi * u) * np.sin(2 * np.pi * v)


def spectra_before_after(kernel_uv=paper_elementwise, a: float = 1.0, b: float = 1.0,
                         n: int = 256, k: int = 8) -> dict:
    """Leading singular values of rho and of rho~(u, v) = rho(u, a u + b v), by quadrature POD."""
    before = pod(pointwise(kernel_uv), n=n, rule="gauss", k=k).sigma
    after = pod(mixed(kernel_uv, a, b), n=n, rule="gauss", k=k).sigma
    return {"before": before, "after": after}
