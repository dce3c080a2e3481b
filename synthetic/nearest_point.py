"""Nearest point to a set (App. B.1, Eqs. 54-56, Fig. 4).

Two point sets U = {u_1..u_tau} and V = {v_1..v_tau} in [-box, box]^d are read as one sequence
x(t) = (u_t, v_t) in R^{2d}.  At each t the target is the point of V nearest to u_t:

    y(t) = argmin_{v in V} |u_t - v| = sum_s sigma_H[-|u_t - v_.|](s) v_s        (Eqs. 54-55)

This is Eq. (8) with the hard-max sigma_H, coupling rho(x(t), x(s)) = -|u_t - v_s| (the paper
writes |u - v| under an argmin), f(u, v) = v and F = identity, so F∘f(u, v) = v.  The paper's
run: d = 2, six points in each set (tau = 6).

Tiny worked example (d = 2, tau = 3; tests/test_tasks.py checks it):
    U = ((0, 0), (1, 1), (0.9, 0)),  V = ((1, 0), (0, 0.2), (1, 1))
    x(1) = (0, 0, 1, 0),  x(2) = (1, 1, 0, 0.2),  x(3) = (0.9, 0, 1, 1)
    |u_1 - V| = (1, 0.2, 1.414)   -> y(1) = v_2 = (0, 0.2)
    |u_2 - V| = (1, 1.281, 0)     -> y(2) = v_3 = (1, 1)
    |u_3 - V| = (0.1, 0.922, 1.005) -> y(3) = v_1 = (1, 0)
    S = [[0, 1, 0], [0, 0, 1], [1, 0, 0]]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .task_batch import TaskBatch, make_batch, rng_for


@dataclass(frozen=True)
class NearestPoint:
    tau: int = 6       # points in U and in V, the sequence length (the paper: 6)
    d: int = 2         # dimension of the points (the paper: 2)
    box: float = 1.0   # points are uniform in [-box, box]^d

    name: ClassVar[str] = "nearest-point"
    title: ClassVar[str] = "Nearest point to a set (App. B.1, Eqs. 54-55, Fig. 4)"

    def validate(self) -> None:
        if self.tau < 2:
            raise ValueError(f"--tau: need at least 2 points per set, got {self.tau}")
        if self.d < 1:
            raise ValueError(f"--d: must be >= 1, got {self.d}")
        if not self.box > 0:
            raise ValueError(f"--box: must be > 0, got {self.box}")

    @property
    def d_in(self) -> int:
        return 2 * self.d

    @property
    def d_out(self) -> int:
        return self.d

    # ---- Eq. (8) parts ---------------------------------------------------------------------
    def f(self, x: np.ndarray) -> np.ndarray:
        """f(u, v) = v: (..., 2d) -> (..., d)."""
        return x[..., self.d:]

    def F(self, z: np.ndarray) -> np.ndarray:
        return z

    def selection(self, x: np.ndarray) -> np.ndarray:
        """S[t, s] = 1 if v_s is the nearest point of V to u_t (hard-max of -|u_t - v_s|): (n, tau, tau)."""
        u, v = x[..., :self.d], x[..., self.d:]                          # (n, tau, d) each
        dist = np.linalg.norm(u[:, :, None, :] - v[:, None, :, :], axis=-1)  # (n, t, s)
        S = np.zeros_like(dist)
        np.put_along_axis(S, dist.argmin(axis=-1)[..., None], 1.0, axis=-1)
        return S

    # ---- sampling --------------------------------------------------------------------------
    def sample(self, n: int, seed: int) -> TaskBatch:
        """n sequences, deterministic in seed."""
        x = rng_for(seed).uniform(-self.box, self.box, (n, self.tau, 2 * self.d))
        return make_batch(self, x)

    def batch(self, x: np.ndarray) -> TaskBatch:
        return make_batch(self, x)

    def describe(self) -> str:
        return (f"synthetic: U, V uniform in [-{self.box:g}, {self.box:g}]^{self.d}, {self.tau} points each, "
                f"x(t) = (u_t, v_t)")

    def row_kinds(self, x: np.ndarray) -> np.ndarray:
        """Every row t is a query u_t: one kind."""
        return np.full(x.shape[:2], "u_t", dtype=object)

    def example(self) -> np.ndarray:
        """The docstring's worked example as x: (1, 3, 4)."""
        U = [(0, 0), (1, 1), (0.9, 0)]
        V = [(1, 0), (0, 0.2), (1, 1)]
        return np.array([[[*u, *v] for u, v in zip(U, V)]], dtype=np.float64)


def build(seed: int, task: NearestPoint = NearestPoint()) -> TaskBatch:
    """One instance (n = 1) of the task, drawn from `seed`."""
    return task.sample(1, seed)
