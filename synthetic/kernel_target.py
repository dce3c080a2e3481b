"""POD targets of Eq. (8) whose coupling is any kernel rho(u, v) on [0, 1]^2: numerical POD + Nystrom.

`jackson.pod.pod` discretises the operator (T g)(u) = int rho(u, v) g(v) dv on n Gauss-Legendre nodes u_j
(weights w_j) and gives sigma_i and phi_i, psi_i at the nodes (Eq. 10).  Between the nodes the functions are
extended by the Nystrom formulas -- the POD's own relations T psi_i = sigma_i phi_i and T* phi_i = sigma_i psi_i
with the integral replaced by the rule:

    phi_i(u) = (1/sigma_i) sum_j w_j rho(u, u_j) psi_i(u_j)
    psi_i(v) = (1/sigma_i) sum_j w_j rho(u_j, v) phi_i(u_j)

They reproduce the node values exactly, and the target uses rho_K(u, v) = sum_{i<=K} sigma_i phi_i(u) psi_i(v)
at any points.  A kernel that is itself a finite sum of smooth POD terms comes back as that sum to round-off
(tests/test_kernel_target.py checks a sin/sin sum against the closed-form PODTarget).

Tiny worked example (rho = 2 sin(2 pi u) sin(2 pi v) = 1 * phi_1(u) phi_1(v) with phi_1 = sqrt2 sin(2 pi x)):

    >>> t = KernelTarget(kernel="2*sin(2*pi*u)*sin(2*pi*v)", rank=1, tau=2)
    >>> t.sigma.round(12).tolist(), t.numerical_rank
    ([1.0], 1)
    >>> float(abs(t.phi(np.array([0.25]), 1)[0, 0]).round(12))    # |phi_1(1/4)| = sqrt2
    1.414213562373

The sweep's `--kernel "EXPR in u,v"` (jackson.rate_sweep.config.SweepConfig.kernel) builds one of these per rank.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from jackson.config import UsageError
from jackson.expr import Expression
from jackson.pod import pod

from .pod_target import GRID, PODTarget, Spectrum, TargetError, _label, _python_id, decay_exponent

RANK_RTOL = 1e-10     # numerical rank: sigma_i > RANK_RTOL * sigma_1 (the Nystrom formulas divide by sigma_i)
CHECK = np.linspace(0.0, 1.0, 257)   # the kernel must be finite on this grid of [0, 1]^2 (the nodes are interior)


class KernelFunction:
    """rho as a matrix function: kmat(u, v) -> (len(u), len(v)) for 1-D arrays u, v.

    `kernel` is an expression in u and v (text, jackson/expr.py: a grammar that cannot run code) or a Python
    callable kernel(u, v) called with numpy broadcasting -- u a column (N, 1), v a row (1, M) -- so an
    elementwise formula such as `lambda u, v: np.exp(-(u - v) ** 2 / 0.1)` gives the (N, M) matrix.  Every
    evaluation is checked (shape, finite); a failure is a one-line TargetError naming the kernel."""

    def __init__(self, kernel):
        self.kernel = kernel
        if isinstance(kernel, str):
            _python_id(kernel, "--kernel")
            try:
                self._fn = Expression(kernel, variables=("u", "v"), name="--kernel")
            except UsageError as err:
                raise TargetError(str(err)) from None
            self.opt, self.label = "--kernel", repr(kernel)
        elif callable(kernel):
            self._fn, self.opt, self.label = kernel, "kernel", _label(kernel)
        else:
            raise TargetError(f"kernel: give an expression in u, v (text) or a Python callable kernel(u, v), got {kernel!r}")

    def __call__(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        u, v = np.asarray(u, dtype=np.float64).reshape(-1, 1), np.asarray(v, dtype=np.float64).reshape(1, -1)
        try:
            with np.errstate(all="ignore"):
                out = np.asarray(self._fn(u, v), dtype=np.float64)
        except UsageError as err:
            raise TargetError(str(err)) from None
        except Exception as err:          # noqa: BLE001 -- whatever the user's code raises, one line
            raise TargetError(f"{self.opt}: calling {self.label} raised {type(err).__name__}: {err}") from None
        shape = (u.shape[0], v.shape[1])
        if out.shape not in (shape, ()):
            raise TargetError(f"{self.opt}: {self.label} must broadcast like numpy (u of shape {u.shape}, v of shape "
                              f"{v.shape} give {shape}), got shape {out.shape}")
        if not np.all(np.isfinite(out)):
            raise TargetError(f"{self.opt}: {self.label} is not finite on [0, 1]^2")
        return np.broadcast_to(out, shape)


class NystromBasis:
    """phi_i (side "phi") or psi_i (side "psi") of a kernel's POD at any points: basis(x, k) -> x.shape + (k,),
    the contract of synthetic.pod_target.basis_matrix.  `sup`: max_i sup_x |basis_i| over the first K, measured on
    a 4,097-point grid (for C0)."""

    def __init__(self, kmat: KernelFunction, nodes, weights, sigma, other, side: str):
        self.kmat, self.nodes, self.side, self.K = kmat, nodes, side, len(sigma)
        self._coef = weights[:, None] * other[:, :self.K] / sigma     # (n, K): w_j other_i(u_j) / sigma_i

    def __call__(self, x: np.ndarray, k: int) -> np.ndarray:
        if k > self.K:
            raise TargetError(f"basis: asked for {k} functions, the truncation has {self.K}")
        x = np.asarray(x, dtype=np.float64)
        flat = x.reshape(-1)
        kv = self.kmat(flat, self.nodes) if self.side == "phi" else self.kmat(self.nodes, flat).T   # (N, n)
        return (kv @ self._coef[:, :k]).reshape(x.shape + (k,))

    @functools.cached_property
    def sup(self) -> float:
        return float(np.max(np.abs(self(GRID, self.K))))

    def __repr__(self) -> str:
        return f"NystromBasis({self.side}, {self.kmat.label}, K={self.K})"


@dataclass(frozen=True)
class KernelTarget(PODTarget):
    """H_t(x) = F( sum_s softmax_s(rho_K(x_t, x_s)) f(x_s) ) with rho_K the rank-K POD truncation of `kernel`.

    K = rank (an integer at most the numerical rank), or for rank inf the smallest K whose POD tail
    sum_{i>K} sigma_i^2 is <= tail_tol, bounded by k_max and the numerical rank.  alpha_hat is the decay
    exponent (synthetic.pod_target.decay_exponent) of the rank-inf truncation's sigma: the kernel's alpha,
    the same for every rank.  spectrum, phi and psi are derived (not arguments)."""

    spectrum: Spectrum = field(default=None, init=False)   # Spectrum(explicit=sigma_1..sigma_K) of the POD
    phi: object = field(default=None, init=False)          # NystromBasis, side phi
    psi: object = field(default=None, init=False)          # NystromBasis, side psi
    kernel: object = None          # rho(u, v): an expression in u, v ("exp(-(u-v)**2/0.1)") or a Python callable
    rank: float = math.inf         # K: an integer >= 1, or inf (truncate by tail_tol)
    tail_tol: float = 1e-6         # rank inf: stop at K once sum_{i>K} sigma_i^2 <= tail_tol
    k_max: int = 4096              # rank inf: never more terms than this
    nodes: int = 256               # Gauss-Legendre nodes of the numerical POD
    alpha_hat: float = field(default=float("nan"), init=False, compare=False)   # decay of the rank-inf sigma
    numerical_rank: int = field(default=0, init=False, compare=False)          # sigma_i > RANK_RTOL sigma_1
    pod_sigma: np.ndarray = field(default=None, init=False, compare=False, repr=False)   # all n POD values

    def __post_init__(self):
        if not (isinstance(self.nodes, int) and 2 <= self.nodes <= 4096):
            raise TargetError(f"--pod-nodes: must be an integer in 2..4096, got {self.nodes}")
        r = self.rank
        if not (r >= 1 and (math.isinf(r) or r == int(r))):
            raise TargetError(f"--rank: must be an integer >= 1 or 'inf', got {r}")
        kmat = KernelFunction(self.kernel)
        kmat(CHECK, CHECK)                                   # finite on all of [0, 1]^2, not only at the nodes
        res = pod(kmat, self.nodes)
        s = res.sigma
        if not s[0] > 0:
            raise TargetError(f"{kmat.opt}: {kmat.label} is zero on [0, 1]^2 (no coupling)")
        nr = int(np.sum(s > RANK_RTOL * s[0]))
        tail = np.concatenate([np.cumsum((s ** 2)[::-1])[::-1][1:], [0.0]])   # tail[K-1] = sum_{i>K} sigma_i^2
        k_inf = min(int(np.argmax(tail <= self.tail_tol)) + 1, self.k_max, nr)
        if math.isinf(r):
            k = k_inf
        else:
            k = int(r)
            if k > nr:
                raise TargetError(f"--rank: the kernel's numerical rank is {nr} (sigma_i > {RANK_RTOL:g} sigma_1 on "
                                  f"{self.nodes} nodes), so a rank-{k} truncation does not exist; give --rank <= {nr} or inf")
        set_ = functools.partial(object.__setattr__, self)
        set_("spectrum", Spectrum(explicit=tuple(float(v) for v in s[:k])))
        set_("phi", NystromBasis(kmat, res.nodes, res.weights, s[:k], res.psi, "phi"))
        set_("psi", NystromBasis(kmat, res.nodes, res.weights, s[:k], res.phi, "psi"))
        set_("alpha_hat", decay_exponent(s[:k_inf]))
        set_("numerical_rank", nr)
        set_("pod_sigma", s)
        super().__post_init__()

    def decay(self) -> float:
        return self.alpha_hat

    def resolved(self) -> dict:
        """K and the POD energy beyond it (rank inf; a finite rank's target is the truncation itself, tail 0)."""
        k = len(self.sigma)
        tail = float(np.sum(self.pod_sigma[k:] ** 2)) if math.isinf(self.rank) else 0.0
        return {"K": k, "tail_energy": tail, "tail_tol_met": bool(tail <= self.tail_tol),
                "total_energy": float(np.sum(self.sigma ** 2)) + tail}
