"""Weighted average by selection, the qSA task of Sanford et al. (2023) (App. B.1, Eqs. 63-66, Fig. 6).

A sequence of values v_1..v_tau in [-box, box]^d comes with, at each t, k indices
s(t) = (s_1(t), ..., s_k(t)) in {0, ..., tau-1}, drawn uniformly with replacement.  The target
averages the selected values:

    y(t) = (1/k) sum_{j=1..k} v_{s_j(t)}                                  (Eq. 63)

i.e. Eq. (8) with F∘f(x) = v and the target's attention S[t, s] = (times s occurs in s(t)) / k, so
S takes the values {0, 1/k, 2/k, ..., 1} (Eq. 64).  The paper's run: tau = 8, d = 2, k = 3, where
S is in {0, 1/3, 2/3, 1} (the paper's text prints 1/2 for 1/3; 1/k = 1/3 is meant and used here).

Encoding.  x(t) = (v_t, s(t), t): the value, the k indices and the token's own position t, the
position information of Sec. 4.1 without which rho(x(t), x(s)) cannot tell which token is "index s"
(the paper stacks only v and s, Sanford et al. also append the position).  `encoding` chooses how
indices enter: "onehot" (k one-hot blocks of length tau, then a one-hot t: d + (k+1) tau entries)
or "scalar" (s_j / (tau - 1) and t / (tau - 1): d + k + 1 entries, the paper's d + k plus t).

Tiny worked example (Eq. 65 with 0-based indices; tau = 3, d = 2, k = 3; tests/test_tasks.py checks it):
    v = ((3, 0), (0, 3), (3, 3)),   s(0) = (0, 0, 1),  s(1) = (0, 1, 2),  s(2) = (2, 2, 2)
    y(0) = (2 v_0 + v_1) / 3 = (2, 1),  y(1) = (v_0 + v_1 + v_2) / 3 = (2, 2),  y(2) = v_2 = (3, 3)
    S = [[2/3, 1/3, 0], [1/3, 1/3, 1/3], [0, 0, 1]]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .task_batch import TaskBatch, make_batch, rng_for

ENCODINGS = ("onehot", "scalar")


@dataclass(frozen=True)
class SelectionAverage:
    tau: int = 8               # sequence length (the paper: 8)
    d: int = 2                 # dimension of the values v_s (the paper: 2)
    k: int = 3                 # indices per query s(t), drawn uniformly with replacement (the paper: 3)
    box: float = 1.0           # values are uniform in [-box, box]^d
    encoding: str = "onehot"   # how s(t) and t enter x(t): onehot (one-hot blocks) | scalar (index / (tau-1))

    name: ClassVar[str] = "selection-average"
    title: ClassVar[str] = "Weighted average by selection, qSA (App. B.1, Eqs. 63-66, Fig. 6)"

    def validate(self) -> None:
        if self.tau < 2:
            raise ValueError(f"--tau: must be >= 2, got {self.tau}")
        if self.d < 1:
            raise ValueError(f"--d: must be >= 1, got {self.d}")
        if self.k < 1:
            raise ValueError(f"--k: must be >= 1, got {self.k}")
        if not self.box > 0:
            raise ValueError(f"--box: must be > 0, got {self.box}")
        if self.encoding not in ENCODINGS:
            raise ValueError(f"--encoding: choose {' or '.join(ENCODINGS)}, got {self.encoding}")

    @property
    def d_in(self) -> int:
        per = self.tau if self.encoding == "onehot" else 1
        return self.d + (self.k + 1) * per

    @property
    def d_out(self) -> int:
        return self.d

    # ---- the token layout ------------------------------------------------------------------
    def encode(self, v: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Tokens from values v (n, tau, d) and indices idx (n, tau, k): (n, tau, d_in)."""
        n, tau = v.shape[:2]
        pos = np.broadcast_to(np.arange(tau)[None, :, None], (n, tau, 1))
        ids = np.concatenate([idx, pos], axis=-1)                         # (n, tau, k + 1)
        if self.encoding == "onehot":
            code = np.eye(tau)[ids].reshape(n, tau, -1)                   # (n, tau, (k+1) tau)
        else:
            code = ids / (tau - 1)
        return np.concatenate([v, code], axis=-1)

    def decode(self, x: np.ndarray):
        """(values (..., d), indices (..., k), positions (...)) of tokens x."""
        code = x[..., self.d:]
        if self.encoding == "onehot":
            ids = code.reshape(*code.shape[:-1], self.k + 1, self.tau).argmax(axis=-1)
        else:
            ids = np.rint(code * (self.tau - 1)).astype(int)
        return x[..., :self.d], ids[..., :self.k], ids[..., self.k]

    # ---- Eq. (8) parts ---------------------------------------------------------------------
    def f(self, x: np.ndarray) -> np.ndarray:
        """f(v, s, t) = v."""
        return x[..., :self.d]

    def F(self, z: np.ndarray) -> np.ndarray:
        return z

    def selection(self, x: np.ndarray) -> np.ndarray:
        """S[t, s] = (times the position of token s occurs in s(t)) / k: (n, tau, tau) (Eq. 64)."""
        _, idx, pos = self.decode(x)                                      # (n, tau, k), (n, tau)
        hits = idx[:, :, :, None] == pos[:, None, None, :]                # (n, t, j, s)
        return hits.sum(axis=2) / self.k

    # ---- sampling --------------------------------------------------------------------------
    def sample(self, n: int, seed: int) -> TaskBatch:
        """n sequences, deterministic in seed."""
        rng = rng_for(seed)
        v = rng.uniform(-self.box, self.box, (n, self.tau, self.d))
        idx = rng.integers(0, self.tau, (n, self.tau, self.k))
        return make_batch(self, self.encode(v, idx))

    def batch(self, x: np.ndarray) -> TaskBatch:
        return make_batch(self, x)

    def describe(self) -> str:
        return (f"synthetic qSA: {self.tau} values uniform in [-{self.box:g}, {self.box:g}]^{self.d}, k = {self.k} "
                f"indices per query (uniform, with replacement), {self.encoding} encoding of indices and position")

    def row_kinds(self, x: np.ndarray) -> np.ndarray:
        """Rows by how many distinct indices s(t) names: '1 index', '2 indices', ..."""
        _, idx, _ = self.decode(x)
        s = np.sort(idx, axis=-1)
        distinct = 1 + (np.diff(s, axis=-1) != 0).sum(axis=-1)
        return np.array([f"{c} ind{'ex' if c == 1 else 'ices'}" for c in distinct.ravel()],
                        dtype=object).reshape(distinct.shape)

    def example(self) -> np.ndarray:
        """The docstring's worked example (Eq. 65) as x: (1, 3, d_in) for tau = 3, d = 2, k = 3."""
        if (self.tau, self.d, self.k) != (3, 2, 3):
            raise ValueError("the worked example needs tau = 3, d = 2, k = 3")
        v = np.array([[[3, 0], [0, 3], [3, 3]]], dtype=np.float64)
        idx = np.array([[[0, 0, 1], [0, 1, 2], [2, 2, 2]]])
        return self.encode(v, idx)


def build(seed: int, task: SelectionAverage = SelectionAverage()) -> TaskBatch:
    """One instance (n = 1) of the task, drawn from `seed`."""
    return task.sample(1, seed)
