"""POD targets of Eq. (8): H_t(x) = F( sum_s softmax_s(rho(x_t, x_s)) f(x_s) ).

The temporal coupling is built from its proper orthogonal decomposition (Eq. 10),

    rho(u, v) = sum_{i=1..K} sigma_i phi_i(u) psi_i(v),

with orthonormal families phi, psi on [0, 1], so the sigma_i are *exactly* the singular
values of rho (App. C).  This file is the one place where alpha (decay) and rank live.

Tiny worked example (alpha=1.5, rank=2, sin basis, F = f = identity, tau = 2):
    sigma = (1, 2^-1.5) = (1, 0.3536)
    x = (0.25, 0.5):  phi_1 = sqrt2 sin(2 pi x) = (1.414, 0),  phi_2 = sqrt2 sin(4 pi x) = (0, 0)
    rho(x_1, x_1) = 1 * 1.414 * 1.414 = 2.0,  rho(x_1, x_2) = 0
    H_1 = (e^2 * 0.25 + e^0 * 0.5) / (e^2 + 1) = 0.2798
    rho(x_2, .) = (0, 0)  ->  H_2 = (0.25 + 0.5) / 2 = 0.375

Rank "inf" is realised by a truncation K: the smallest K whose neglected tail
sum_{i>K} sigma_i^2 is below `tail_tol`, bounded by `k_max`.  For alpha <= 1 no practical K
meets a small tolerance (the tail decays like K^(1-2 alpha)); then K = k_max, and
`resolved()` reports the tail that was left so no summary can hide it.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.special import eval_legendre, zeta

from jackson import budget
from jackson.config import UsageError
from jackson.expr import Expression


class TargetError(ValueError):
    """A target specification that cannot be built (message names the option)."""


# ---- orthonormal families on [0, 1]; index i starts at 1 -----------------------------------

def _sin(i, x):  # the paper's basis, App. C
    return math.sqrt(2.0) * np.sin(2.0 * np.pi * i * x)


def _cos(i, x):
    return math.sqrt(2.0) * np.cos(2.0 * np.pi * i * x)


def _legendre(i, x):  # shifted Legendre P_{i-1}(2x-1), normalised on [0, 1]
    return np.sqrt(2.0 * i - 1.0) * eval_legendre(i - 1, 2.0 * x - 1.0)


BASES = {"sin": _sin, "cos": _cos, "legendre": _legendre}
BASIS_SUP = {"sin": math.sqrt(2.0), "cos": math.sqrt(2.0)}  # sup-norm of each function

# ---- fixed smooth maps F: R -> R and f: [0,1] -> R (App. C uses identities) ----------------
F_MAPS = {
    "identity": (lambda z: z, 1.0),  # (map, Lipschitz constant on [0, 1])
    "tanh": (np.tanh, 1.0),
    "square": (lambda z: z * z, 2.0),
}
f_MAPS = {
    "identity": (lambda x: x, 1.0),  # (map, sup-norm on [0, 1])
    "sin": (lambda x: 0.5 + 0.5 * np.sin(2.0 * np.pi * x), 1.0),
    "square": (lambda x: x * x, 1.0),
}
GRID = np.linspace(0.0, 1.0, 4097)    # where an expression F or f is checked and its constant estimated


def _cache(fn):
    """lru_cache that also takes unhashable arguments (a callable object without __hash__): those are not cached."""
    cached = functools.lru_cache(maxsize=64)(fn)

    @functools.wraps(fn)
    def call(*args):
        try:
            hash(args)
        except TypeError:
            return fn(*args)
        return cached(*args)
    return call


def _label(fn) -> str:
    """A Python callable as messages name it ('numpy.sin', 'my_module.my_F', '<lambda>')."""
    mod = getattr(fn, "__module__", None) or ("numpy" if isinstance(fn, np.ufunc) else "")
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return f"{mod}.{name}" if mod else name


@_cache
def f_map(name):
    """(f, sup-norm of f on [0, 1]) for a registry name, an expression in x such as "x**3" or
    "0.5 + 0.5*sin(2*pi*x)" (jackson/expr.py: a grammar that cannot run code), or a Python callable
    applied elementwise to a numpy array (`lambda x: x**3`, `np.sin`).  f must be finite on [0, 1]; its
    sup-norm is measured on a 4,097-point grid."""
    if callable(name):
        return name, float(np.max(np.abs(_on(name, GRID, "f", "[0, 1]"))))
    if name in f_MAPS:
        return f_MAPS[name]
    e = _expression(name, "--f")
    vals = _on(e, GRID, "--f", "[0, 1]")
    return e, float(np.max(np.abs(vals)))


@_cache
def F_map(name, f_name="identity"):
    """(F, Lipschitz constant of F on the range of f) for a registry name, an expression in x such as
    "tanh(2*x)", or a Python callable (elementwise on numpy arrays).  F is applied to attention averages of
    f, so it must be finite on [min f, max f]; its Lipschitz constant is the largest slope on a 4,097-point
    grid there."""
    if not callable(name) and name in F_MAPS:
        return F_MAPS[name]
    e = name if callable(name) else _expression(name, "--F")
    opt = "F" if callable(name) else "--F"
    fv = f_map(f_name)[0](GRID)
    lo, hi = float(np.min(fv)), float(np.max(fv))
    z = np.linspace(lo, hi, len(GRID)) if hi > lo else np.array([lo, lo + 1e-9])
    vals = _on(e, z, opt, f"[{lo:.3g}, {hi:.3g}] (the range of f)")
    return e, float(np.max(np.abs(np.diff(vals) / np.diff(z))))


def _expression(text: str, opt: str):
    if not isinstance(text, str):
        raise TargetError(f"{opt[2:]}: give a registry name, an expression in x or a Python callable, got {text!r}")
    _python_id(text, opt)
    try:
        return Expression(text, variables=("x",), name=opt)
    except UsageError as err:
        known = ", ".join(F_MAPS if opt == "--F" else f_MAPS)
        raise TargetError(f"{err} (give one of {known}, or an expression in x)") from None


def _call_user(fn, args: tuple, opt: str, calling: str) -> np.ndarray:
    """fn(*args) as a float64 array; whatever a user's Python callable raises becomes one TargetError line,
    "{opt}: calling {calling} raised {type}: {message}" (the message's whitespace folded so it stays one line;
    a TargetError of the lab's own callables, e.g. NystromBasis, passes through)."""
    try:
        with np.errstate(all="ignore"):
            return np.asarray(fn(*args), dtype=np.float64)
    except TargetError:
        raise
    except Exception as err:               # noqa: BLE001 -- whatever the user's code raises
        raise TargetError(f"{opt}: calling {calling} raised {type(err).__name__}: "
                          f"{' '.join(str(err).split())}") from None


def _on(e, x: np.ndarray, opt: str, where: str) -> np.ndarray:
    """e at the points x, checked: finite, elementwise (x's shape).  One-line TargetError otherwise."""
    if isinstance(e, Expression):
        try:
            return np.asarray(e(x=x), dtype=np.float64) * np.ones_like(x)
        except UsageError as err:
            raise TargetError(f"{err}; checked on {where}") from None
    vals = _call_user(e, (x,), opt, f"{_label(e)} on a numpy array of {where}")
    if vals.shape not in (x.shape, ()):
        raise TargetError(f"{opt}: {_label(e)} must act elementwise on a numpy array (shape {x.shape} in, "
                          f"{vals.shape} out)")
    if not np.all(np.isfinite(vals)):
        raise TargetError(f"{opt}: {_label(e)} is not finite on {where}")
    return vals * np.ones_like(x)


def basis_matrix(name, x: np.ndarray, k: int, opt: str = "basis") -> np.ndarray:
    """Values of the first k functions of family `name` at points x: shape x.shape + (k,).  `name` is a
    family of BASES or a callable basis(x, k) with that contract (a user's Python function, or e.g.
    synthetic.kernel_target.NystromBasis): its values are checked (shape, finite), and whatever it raises
    is a one-line TargetError naming it (`opt`: the option to name, "phi" or "psi")."""
    x = np.asarray(x, dtype=np.float64)
    if callable(name):
        return _basis_values(name, x, k, opt)
    if name in ("sin", "cos"):
        i = np.arange(1, k + 1, dtype=np.float64)
        return BASES[name](i, x[..., None])
    # every degree at once by numpy's three-term recurrence (legvander), not scipy's eval_legendre degree by degree:
    # eval_legendre(n, x) costs O(n) a point, so k degrees cost O(k^2) -- measured side by side for 2,000 points and
    # k = 4,096: 43.2 s against 0.31 s, largest difference 5.2e-12 (values up to 6.8); tests/test_pod_target.py checks
    # the two agree
    i = np.arange(1, k + 1, dtype=np.float64)
    return np.polynomial.legendre.legvander(2.0 * x - 1.0, k - 1) * np.sqrt(2.0 * i - 1.0)


def _basis_values(fn, x: np.ndarray, k: int, opt: str) -> np.ndarray:
    """fn(x, k), checked: shape x.shape + (k,), finite.  One-line TargetError otherwise."""
    vals = _call_user(fn, (x, k), opt, f"{_label(fn)}(x, {k}) on a numpy array x of shape {x.shape}")
    if vals.shape != x.shape + (k,):
        raise TargetError(f"{opt}: {_label(fn)}(x, k) must return the first k functions at x, shape x.shape + (k,) "
                          f"= {x.shape + (k,)}, got shape {vals.shape}")
    if not np.all(np.isfinite(vals)):
        raise TargetError(f"{opt}: {_label(fn)}(x, {k}) is not finite on [0, 1]")
    return vals


BASIS_CHECK = np.stack([np.linspace(0.0, 1.0, 257), np.linspace(1.0, 0.0, 257)])  # (2, 257): a callable basis is checked here


def _python_id(text, opt: str) -> None:
    """A 'python:module:name' id read back from a config.json (a run from Python) is no function: one line."""
    if isinstance(text, str) and text.startswith("python:"):
        raise TargetError(f"{opt}: {text!r} names a Python callable of a run made from Python (its config.json "
                          f"records only the name); --config cannot rerun it -- rerun it from Python with the function")


def basis_sup(name) -> float:
    """sup over i of ||phi_i||_inf for a family (nan where unbounded in i), or a callable basis's own `sup`."""
    if isinstance(name, str):
        return BASIS_SUP.get(name, float("nan"))
    return float(getattr(name, "sup", float("nan")))


@dataclass(frozen=True)
class Spectrum:
    """sigma_i = c * i^-alpha for i <= rank (rank may be inf), or an explicit list."""

    alpha: float = 1.5        # decay exponent; the theorem needs alpha > 1/2
    rank: float = math.inf    # number of nonzero sigma; math.inf for the full power law
    c: float = 1.0            # scale: sigma_1 = c
    tail_tol: float = 1e-6    # rank inf: stop at K once sum_{i>K} sigma_i^2 <= tail_tol
    k_max: int = 4096         # rank inf: never more terms than this (alpha <= 1 hits it)
    explicit: tuple[float, ...] | None = None  # overrides alpha/rank/c when given

    def __repr__(self) -> str:
        """An explicit spectrum as what it is (its values), not as the alpha/rank/c it does not use."""
        if self.explicit is None:
            return (f"Spectrum(alpha={self.alpha!r}, rank={self.rank!r}, c={self.c!r}, tail_tol={self.tail_tol!r}, "
                    f"k_max={self.k_max!r})")
        v = [float(x) for x in self.explicit]
        shown = ", ".join(f"{x:.4g}" for x in v[:6]) + (", ..." if len(v) > 6 else "")
        return f"Spectrum(explicit=({shown}), {len(v)} values)"

    def __post_init__(self):
        if self.explicit is not None:
            s = np.asarray(self.explicit, dtype=float)
            if s.ndim != 1 or len(s) == 0 or not np.all(np.isfinite(s)) or np.any(s < 0) or np.any(np.diff(s) > 0):
                raise TargetError("--sigma: give a non-empty, non-increasing list of finite values >= 0, "
                                  f"got {', '.join(f'{v:g}' for v in np.ravel(s)[:8])}{' ...' if s.size > 8 else ''}")
            return
        if not (self.rank >= 1):
            raise TargetError(f"--rank: must be an integer >= 1 or 'inf', got {self.rank}")
        if math.isfinite(self.rank) and self.rank != int(self.rank):
            raise TargetError(f"--rank: must be an integer >= 1 or 'inf', got {self.rank}")
        if math.isinf(self.rank) and not self.alpha > 0.5:
            raise TargetError(
                f"--alpha: rank inf needs alpha > 0.5 (the tail sum i^-2alpha diverges), got {self.alpha}")
        if not self.alpha > 0:
            raise TargetError(f"--alpha: must be > 0, got {self.alpha}")
        if self.c <= 0:
            raise TargetError(f"c: must be > 0, got {self.c}")
        if math.isfinite(self.rank):       # sigma_1..sigma_rank are realised as one float64 array
            budget.check(f"a spectrum of rank {int(self.rank):,}", {"its values": budget.F64 * self.rank}, TargetError)

    def terms(self) -> int:
        """K, the number of terms, without realising them: the explicit list's length, the finite rank, or the
        truncation of rank inf (a search over the tail, which allocates nothing)."""
        if self.explicit is not None:
            return len(self.explicit)
        return int(self.rank) if math.isfinite(self.rank) else self.truncation()

    def tail(self, k: int) -> float:
        """sum_{i>k} sigma_i^2 of the *ideal* spectrum (0 for finite rank, zeta tail for inf)."""
        if self.explicit is not None or math.isfinite(self.rank):
            s = self.sigma_ideal()
            return float(np.sum(s[k:] ** 2))
        return float(self.c ** 2 * zeta(2.0 * self.alpha, k + 1))

    def sigma_ideal(self) -> np.ndarray:
        if self.explicit is not None:
            return np.asarray(self.explicit, dtype=np.float64)
        if math.isfinite(self.rank):
            return self.c * np.arange(1, int(self.rank) + 1, dtype=np.float64) ** -self.alpha
        raise TargetError("sigma_ideal: infinite rank; use sigma()")

    def truncation(self) -> int:
        """K: the number of terms actually used."""
        if self.explicit is not None or math.isfinite(self.rank):
            return len(self.sigma_ideal())
        lo, hi = 1, self.k_max
        if self.tail(hi) > self.tail_tol:
            return self.k_max
        while lo < hi:  # smallest K with tail(K) <= tol; tail is decreasing
            mid = (lo + hi) // 2
            if self.tail(mid) <= self.tail_tol:
                hi = mid
            else:
                lo = mid + 1
        return lo

    def fitted_alpha(self) -> float:
        """alpha itself, or for an explicit list the decay exponent fitted to it (`decay_exponent`)."""
        return self.alpha if self.explicit is None else decay_exponent(self.explicit)

    def sigma(self) -> np.ndarray:
        """The realised singular values sigma_1..sigma_K (float64)."""
        if self.explicit is not None or math.isfinite(self.rank):
            return self.sigma_ideal()
        k = self.truncation()
        return self.c * np.arange(1, k + 1, dtype=np.float64) ** -self.alpha


CHUNK = 256     # sequences evaluated together by logits, oracle and diagnostics (their default `chunk`)


def chunk_bytes(tau: int, k: int, chunk: int = CHUNK) -> dict[str, float]:
    """The float64 memory of evaluating one chunk of sequences of a POD target with K = k terms (`_parts`' basis
    values, sigma-weighted and not, and the logits with their softmax and the oracle's truncation), by part."""
    return {f"the basis values of {chunk} sequences": 3 * budget.F64 * chunk * tau * k,
            f"the logits of {chunk} sequences": 5 * budget.F64 * chunk * tau * tau}


def decay_exponent(sigma) -> float:
    """alpha_hat of an explicit spectrum: minus the least-squares slope of log sigma_i against log i over
    its nonzero values (sigma non-increasing, so they are sigma_1..sigma_R); nan with fewer than two.

        >>> round(decay_exponent([1.0, 2 ** -1.5, 3 ** -1.5, 0.0]), 6)
        1.5
    """
    s = np.asarray(sigma, dtype=np.float64)
    i = np.flatnonzero(s > 0)
    if len(i) < 2:
        return float("nan")
    slope = np.polyfit(np.log(i + 1.0), np.log(s[i]), 1)[0]
    return float(-slope)


@dataclass(frozen=True)
class PODTarget:
    """H_t(x) = F( sum_s softmax_s(rho(x_t, x_s)) f(x_s) ) with rho given by its POD."""

    spectrum: Spectrum = field(default_factory=Spectrum)
    phi: str = "sin"          # family of left functions phi_i (query side), or a callable basis(x, k)
    psi: str = "sin"          # family of right functions psi_i (key side); may differ from phi
    F: str = "identity"       # outer map F: a name of F_MAPS, an expression in x ("tanh(2*x)") or a callable
    f: str = "identity"       # inner (value) map f: a name of f_MAPS, an expression in x ("x**3") or a callable
    tau: int = 16             # sequence length

    def __post_init__(self):
        for opt, name, table in (("--phi", self.phi, BASES), ("--psi", self.psi, BASES)):
            _python_id(name, opt)
            if not callable(name) and name not in table:
                raise TargetError(f"{opt}: unknown '{name}', choose from {', '.join(table)}, or give a Python "
                                  f"callable basis(x, k) from Python")
        k = self.spectrum.truncation()
        for opt, name in (("phi", self.phi), ("psi", self.psi)):     # a callable basis: checked once here, on [0, 1]
            if callable(name) and not (opt == "psi" and name is self.phi):
                basis_matrix(name, BASIS_CHECK, k, opt)
        f_map(self.f)                 # a name of f_MAPS / F_MAPS, or an expression in x checked here
        F_map(self.F, self.f)
        if self.tau < 1:
            raise TargetError(f"--tau: must be >= 1, got {self.tau}")
        budget.check(f"the target (tau {self.tau:,}, K {self.spectrum.terms():,} terms)",
                     chunk_bytes(self.tau, self.spectrum.terms()), TargetError)

    # ---- the kernel ------------------------------------------------------------------------
    @property
    def sigma(self) -> np.ndarray:
        return self.spectrum.sigma()

    def kernel(self, u: np.ndarray, v: np.ndarray, m: int | None = None) -> np.ndarray:
        """rho(u_a, v_b) as a matrix (len(u), len(v)); the rank-m POD truncation if m given."""
        s = self.sigma if m is None else self.sigma[:m]
        pu = basis_matrix(self.phi, u, len(s), "phi")
        pv = basis_matrix(self.psi, v, len(s), "psi")
        return (pu * s) @ pv.T

    def resolved(self) -> dict:
        """What was actually built: K and the tail it leaves (for configs and summaries)."""
        sp = self.spectrum
        k = sp.truncation()
        ideal_tail = 0.0 if (sp.explicit is not None or math.isfinite(sp.rank)) else sp.tail(k)
        return {"K": k, "tail_energy": ideal_tail,
                "tail_tol_met": bool(ideal_tail <= sp.tail_tol),
                "total_energy": float(np.sum(self.sigma ** 2)) + ideal_tail}

    # ---- sampling and evaluation -----------------------------------------------------------
    def sample(self, n_seq: int, seed: int) -> np.ndarray:
        """n_seq sequences of tau scalars ~ U[0, 1], deterministic in seed: (n_seq, tau)."""
        budget.check(f"{n_seq:,} sequences of tau {self.tau:,}", {"the sequences": budget.F64 * n_seq * self.tau},
                     TargetError)
        return np.random.default_rng(seed).random((n_seq, self.tau))

    def _parts(self, xb: np.ndarray):
        """Basis values at a chunk of sequences: (sigma-weighted phi, psi), each (b, tau, K)."""
        s = self.sigma
        pu = basis_matrix(self.phi, xb, len(s), "phi")
        pv = pu if self.psi == self.phi else basis_matrix(self.psi, xb, len(s), "psi")
        return pu * s, pv

    def logits(self, x: np.ndarray, chunk: int = 256) -> np.ndarray:
        """rho(x_t, x_s) for each sequence: (n_seq, tau, tau)."""
        budget.check(f"the logits of {len(x):,} sequences of tau {self.tau:,}",
                     {"the logits and their softmax": 3 * budget.F64 * len(x) * self.tau ** 2}, TargetError)
        out = np.empty(x.shape + (self.tau,), dtype=np.float64)
        for a in range(0, len(x), chunk):
            pu, pv = self._parts(x[a:a + chunk])
            out[a:a + chunk] = pu @ pv.transpose(0, 2, 1)
        return out

    def apply(self, x: np.ndarray, logits: np.ndarray) -> np.ndarray:
        """F( sum_s softmax_s(logits) f(x_s) ): (n_seq, tau)."""
        z = logits - logits.max(axis=-1, keepdims=True)
        att = np.exp(z)
        att /= att.sum(axis=-1, keepdims=True)
        fx = f_map(self.f)[0](x)
        return F_map(self.F, self.f)[0](np.einsum("bts,bs->bt", att, fx))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.apply(x, self.logits(x))

    def oracle(self, x: np.ndarray, ms, chunk: int = 256) -> dict:
        """Part 7's oracles: H with rho replaced by its exact rank-m truncation.

        Returns {"truncated": {m: y}, "self_exact": {m: y}, "exact": y}; "self_exact" keeps the
        s = t logits of the full rho and truncates only s != t (the proof's Eq. 46-47 treats
        x_t, x_s as independent, which the diagonal is not).
        """
        ms = list(ms)
        out = {"truncated": {m: [] for m in ms}, "self_exact": {m: [] for m in ms}, "exact": []}
        idx = np.arange(self.tau)
        for a in range(0, len(x), chunk):
            xb = x[a:a + chunk]
            pu, pv = self._parts(xb)
            full = pu @ pv.transpose(0, 2, 1)
            out["exact"].append(self.apply(xb, full))
            for m in ms:
                trunc = pu[..., :m] @ pv[..., :m].transpose(0, 2, 1)
                out["truncated"][m].append(self.apply(xb, trunc))
                trunc[:, idx, idx] = full[:, idx, idx]
                out["self_exact"][m].append(self.apply(xb, trunc))
        cat = np.concatenate
        return {"exact": cat(out["exact"]),
                "truncated": {m: cat(v) for m, v in out["truncated"].items()},
                "self_exact": {m: cat(v) for m, v in out["self_exact"].items()}}

    def diagnostics(self, x: np.ndarray, y_mean: float | None = None, chunk: int = 256) -> dict:
        """How much of the target is coupling *across* positions, measured on sequences x.

        Logit statistics: mean rho(x_t, x_t) (diagonal), mean and sd of rho(x_t, x_s), s != t, and the
        mean self-attention weight softmax_s(rho(x_t, .))[t].  Trivial predictors, held-out MSE against
        H(x): `mean` (the constant y_mean, default the mean of H(x)), `copy` (y_t = F(f(x_t)): attention
        on itself only) and `uniform` (y_t = F(mean_s f(x_s)): attention that ignores rho).  A target
        that one of them matches is "degenerate" for a rate study (see `DEGENERATE_*`)."""
        n, tau = x.shape
        off = ~np.eye(tau, dtype=bool)
        diag_sum = off_sum = off_sq = self_w = 0.0
        ys = []
        for a in range(0, n, chunk):
            xb = x[a:a + chunk]
            lg = self.logits(xb, chunk)
            diag_sum += float(np.einsum("btt->", lg))
            o = lg[:, off]
            off_sum += float(o.sum())
            off_sq += float((o ** 2).sum())
            z = lg - lg.max(axis=-1, keepdims=True)
            att = np.exp(z)
            att /= att.sum(axis=-1, keepdims=True)
            self_w += float(np.einsum("btt->", att))
            ys.append(self.apply(xb, lg))
        y = np.concatenate(ys)
        n_off = n * tau * (tau - 1)
        off_mean = off_sum / n_off if n_off else float("nan")
        fx = f_map(self.f)[0](x)
        Fm = F_map(self.F, self.f)[0]
        y_mean = float(y.mean()) if y_mean is None else float(y_mean)
        copy = Fm(fx)
        uniform = Fm(np.broadcast_to(fx.mean(axis=1, keepdims=True), fx.shape))
        return {"diag_logit": diag_sum / (n * tau), "offdiag_logit": off_mean,
                "offdiag_logit_sd": float(np.sqrt(max(off_sq / n_off - off_mean ** 2, 0.0))) if n_off else float("nan"),
                "self_weight": self_w / (n * tau), "var_y": float(y.var()),
                "mse_mean": float(((y - y_mean) ** 2).mean()), "mse_copy": float(((y - copy) ** 2).mean()),
                "mse_uniform": float(((y - uniform) ** 2).mean())}

    def decay(self) -> float:
        """The alpha of C1 and of the predicted rate: the spectrum's alpha, or the fitted alpha_hat of an explicit one."""
        return self.spectrum.fitted_alpha()

    def complexity(self) -> dict:
        """The computable complexity measures of Eq. (12) and (15).

        C1 = inf{c : sigma_s <= c s^-alpha} over the realised sigma, with alpha = alpha_hat (the fitted decay,
        `decay_exponent`) for an explicit spectrum (sigma_1 where fewer than two values are nonzero);
        C0 = K_F ||f||_inf (sup||phi||_inf + sup||psi||_inf), finite for the trigonometric families (and a
        callable basis that states its `sup`, e.g. a kernel's Nystrom basis, measured on a grid) only.
        """
        s = self.sigma
        alpha = self.decay()
        if math.isfinite(alpha):
            c1 = float(np.max(s * np.arange(1, len(s) + 1, dtype=np.float64) ** alpha))
        else:
            c1 = float(s[0])
        sup = basis_sup(self.phi) + basis_sup(self.psi)
        c0 = F_map(self.F, self.f)[1] * f_map(self.f)[1] * sup
        return {"C0": c0, "C1": c1}
