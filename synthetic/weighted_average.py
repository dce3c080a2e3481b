"""Weighted average by weight: centres of gravity of point-mass segments (App. B.1, Eqs. 57-62, Fig. 5).

A sequence of tau tokens is a concatenation of segments; each segment is a prediction token
x_pred followed by point masses (x_s, m_s), x_s in [-box, box]^d, m_s in [m_lo, m_hi].  The target
is the norm of the segment's centre of gravity at x_pred and |x_s| at a point mass (Eq. 62):

    y(t) = | sum_{s in I(t)} m_s / (sum_{s' in I(t)} m_s') x_s |   if x(t) = x_pred  (Eq. 59)
    y(t) = | x_t |                                                  otherwise

i.e. Eq. (8) with f(x, m) = x, F = |.|, and the target's attention S[t, s] = m_s / sum m over the
point masses of t's segment (a prediction token) or S[t, s] = 1[s = t] (a point mass):
F∘f(x, m) = |x|.  The paper's run: tau = 10 tokens, d = 2, segments of at least 2 point masses.

Encoding.  x(t) = (x_t, m_t, p_t, g_t, e_t) in R^{d + 2 + G + tau}: the point (0 for x_pred), its
mass (0 for x_pred), the prediction-token flag p_t, the one-hot index g_t of the segment the token
belongs to (G = tau // (1 + min_len) slots, the most segments that fit) and the one-hot position e_t
(`position` = onehot, the default).  Both are position information in the sense of Sec. 4.1, which
assumes encoded inputs: Eq. (62)'s index set I(t) depends on where segments start, which a pairwise
coupling rho(x(t), x(s)) of unencoded tokens cannot see (g_t is needed); e_t is optional.  With the
default budget the x_pred rows reached a held-out MSE below 1e-3 in 2 of 3 seeds with e_t and in 1 of
3 without it, which is why it is on by default (reports/tasks/README.md).

Tiny worked example (tau = 6, min_len = 2, d = 2; tests/test_tasks.py checks it):
    segment 0: x_pred, ((1, 0), m=1), ((0, 1), m=3)    centre (1*(1,0) + 3*(0,1)) / 4 = (0.25, 0.75)
    segment 1: x_pred, ((0.6, 0.8), m=0.5), ((0, 0), m=0.5)          centre (0.3, 0.4)
    x(1..6) = (0,0,0,1,1,0), (1,0,1,0,1,0), (0,1,3,0,1,0), (0,0,0,1,0,1), (.6,.8,.5,0,0,1), (0,0,.5,0,0,1)
              (position = none; with onehot each token also ends in its one-hot position e_1..e_6)
    y = (|(0.25, 0.75)|, 1, 1, |(0.3, 0.4)|, 1, 0) = (0.7906, 1, 1, 0.5, 1, 0)
    S row 1 = (0, 1/4, 3/4, 0, 0, 0), row 4 = (0, 0, 0, 0, 1/2, 1/2), rows 2, 3, 5, 6 = e_t
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np

from .task_batch import TaskBatch, make_batch, rng_for


@dataclass(frozen=True)
class WeightedAverage:
    tau: int = 10        # tokens per sequence, prediction tokens included (the paper: 10)
    min_len: int = 2     # fewest point masses per segment (the paper: segments of length >= 2)
    d: int = 2           # dimension of the points (the paper: 2)
    box: float = 1.0     # points are uniform in [-box, box]^d
    m_lo: float = 0.1    # masses are uniform in [m_lo, m_hi]
    m_hi: float = 1.0    # largest mass (m_hi / m_lo = 10: the weights differ visibly from a plain mean)
    position: str = "onehot"  # one-hot position e_t appended to each token (Sec. 4.1): onehot | none

    name: ClassVar[str] = "weighted-average"
    title: ClassVar[str] = "Weighted average by weight (App. B.1, Eqs. 57-62, Fig. 5)"

    def validate(self) -> None:
        if self.min_len < 1:
            raise ValueError(f"--min-len: must be >= 1, got {self.min_len}")
        if self.tau < 1 + self.min_len:
            raise ValueError(f"--tau: one segment needs 1 + min-len = {1 + self.min_len} tokens, got {self.tau}")
        if self.d < 1:
            raise ValueError(f"--d: must be >= 1, got {self.d}")
        if not self.box > 0:
            raise ValueError(f"--box: must be > 0, got {self.box}")
        if self.position not in ("onehot", "none"):
            raise ValueError(f"--position: choose onehot or none, got {self.position}")
        if not 0 < self.m_lo <= self.m_hi:
            raise ValueError(f"--m-lo, --m-hi: need 0 < m-lo <= m-hi, got {self.m_lo}, {self.m_hi}")

    @property
    def n_slots(self) -> int:
        """G: the most segments a sequence can hold."""
        return self.tau // (1 + self.min_len)

    @property
    def d_in(self) -> int:
        return self.d + 2 + self.n_slots + (self.tau if self.position == "onehot" else 0)

    @property
    def d_out(self) -> int:
        return 1

    # ---- the token layout ------------------------------------------------------------------
    def parts(self, x: np.ndarray):
        """(points (..., d), masses (...), prediction flags (...), segment index (...)) of tokens x."""
        d, G = self.d, self.n_slots
        return x[..., :d], x[..., d], x[..., d + 1], x[..., d + 2:d + 2 + G].argmax(axis=-1)

    def tokens(self, points: np.ndarray, masses: np.ndarray, segment: int = 0, t: int = 1) -> np.ndarray:
        """Point-mass tokens (x, m, 0, g = segment, e = t) for points (N, d), masses (N,): (N, d_in)."""
        N = len(points)
        g = np.zeros((N, self.n_slots + (self.tau if self.position == "onehot" else 0)))
        g[:, segment] = 1.0
        if self.position == "onehot":
            g[:, self.n_slots + t] = 1.0
        return np.concatenate([points, np.asarray(masses, float)[:, None], np.zeros((N, 1)), g], axis=1)

    # ---- Eq. (8) parts ---------------------------------------------------------------------
    def f(self, x: np.ndarray) -> np.ndarray:
        """f(x, m, p, g) = x: (..., d_in) -> (..., d)."""
        return x[..., :self.d]

    def F(self, z: np.ndarray) -> np.ndarray:
        """F = Euclidean norm: (..., d) -> (..., 1)."""
        return np.linalg.norm(z, axis=-1, keepdims=True)

    def selection(self, x: np.ndarray) -> np.ndarray:
        """S[t, s] = m_s / sum of t's segment's masses at a prediction token t, 1[s = t] at a point mass."""
        _, m, p, g = self.parts(x)                                   # (n, tau) each
        pred = p > 0.5
        same = g[:, :, None] == g[:, None, :]                        # (n, t, s)
        w = np.where(same & ~pred[:, None, :], m[:, None, :], 0.0)   # masses of t's segment's points
        w = w / np.maximum(w.sum(axis=-1, keepdims=True), 1e-300)
        eye = np.broadcast_to(np.eye(x.shape[1]), w.shape)
        return np.where(pred[:, :, None], w, eye)

    # ---- sampling --------------------------------------------------------------------------
    def sample(self, n: int, seed: int) -> TaskBatch:
        """n sequences, deterministic in seed: a number of segments (uniform over 1..G), a split of the
        point masses among them (uniform over the splits with >= min_len each), points and masses."""
        rng = rng_for(seed)
        layouts = _layouts(self.tau, self.min_len)
        n_seg = rng.integers(1, len(layouts) + 1, size=n)
        x = np.zeros((n, self.tau, self.d_in))
        x[..., :self.d] = rng.uniform(-self.box, self.box, (n, self.tau, self.d))
        x[..., self.d] = rng.uniform(self.m_lo, self.m_hi, (n, self.tau))
        pick = rng.random(n)
        if self.position == "onehot":
            x[..., self.d + 2 + self.n_slots:] = np.eye(self.tau)
        for i in range(n):
            options = layouts[n_seg[i] - 1]
            lengths = options[int(pick[i] * len(options))]
            t = 0
            for j, L in enumerate(lengths):                # x_pred, then L point masses, all in slot j
                x[i, t, :self.d + 2] = 0.0
                x[i, t, self.d + 1] = 1.0
                x[i, t:t + 1 + L, self.d + 2 + j] = 1.0
                t += 1 + L
        return make_batch(self, x)

    def batch(self, x: np.ndarray) -> TaskBatch:
        return make_batch(self, x)

    def describe(self) -> str:
        pos = " and one-hot position" if self.position == "onehot" else ""
        return (f"synthetic: {self.tau} tokens = segments of x_pred + >= {self.min_len} point masses, points uniform "
                f"in [-{self.box:g}, {self.box:g}]^{self.d}, masses uniform in [{self.m_lo:g}, {self.m_hi:g}]; "
                f"tokens carry the segment one-hot{pos}")

    def row_kinds(self, x: np.ndarray) -> np.ndarray:
        """'x_pred' rows (a centre of gravity) and 'point' rows (|x_t|)."""
        return np.where(self.parts(x)[2] > 0.5, "x_pred", "point").astype(object)

    def example(self) -> np.ndarray:
        """The docstring's worked example (tau = 6, min_len = 2, d = 2) as x: (1, 6, 6)."""
        if (self.tau, self.min_len, self.d) != (6, 2, 2):
            raise ValueError("the worked example needs tau = 6, min_len = 2, d = 2")
        rows = np.array([[(0, 0, 0, 1, 1, 0), (1, 0, 1, 0, 1, 0), (0, 1, 3, 0, 1, 0),
                          (0, 0, 0, 1, 0, 1), (0.6, 0.8, 0.5, 0, 0, 1), (0, 0, 0.5, 0, 0, 1)]], dtype=np.float64)
        if self.position == "onehot":
            rows = np.concatenate([rows, np.eye(6)[None]], axis=-1)
        return rows


@lru_cache(maxsize=None)
def _layouts(tau: int, min_len: int) -> list[list[tuple[int, ...]]]:
    """All splits of a length-tau sequence into segments (x_pred + >= min_len points), by segment count:
    entry j lists the tuples of point counts for j + 1 segments that fill exactly tau tokens."""
    out = []
    for k in range(1, tau // (1 + min_len) + 1):
        points = tau - k
        out.append([c for c in itertools.product(range(min_len, points + 1), repeat=k) if sum(c) == points])
    return out


def build(seed: int, task: WeightedAverage = WeightedAverage()) -> TaskBatch:
    """One instance (n = 1) of the task, drawn from `seed`."""
    return task.sample(1, seed)
