"""synthetic/pod_target.py: spectra, bases, target values, sampling and oracles."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import eval_legendre

from synthetic.pod_target import PODTarget, Spectrum, TargetError, basis_matrix


# ---- independent helpers -------------------------------------------------------------------

def brute_tails(p: float, c: float, n_terms: int = 200_000) -> np.ndarray:
    """tails[K] = c^2 sum_{i>K} i^-p for K = 0..n_terms-1, from a long partial sum plus the
    Euler-Maclaurin remainder  sum_{i>N} i^-p = N^(1-p)/(p-1) - N^-p/2 + p N^(-p-1)/12 + ..."""
    i = np.arange(1, n_terms + 1, dtype=np.float64)
    terms = i ** -p
    N = float(n_terms)
    rem = N ** (1 - p) / (p - 1) - N ** -p / 2 + p * N ** (-p - 1) / 12
    # tails[K] = sum_{i=K+1..N} i^-p + rem ; reversed cumulative sum, smallest terms first
    rev = np.cumsum(terms[::-1])[::-1]          # rev[j] = sum_{i=j+1..N} i^-p
    return c * c * (rev + rem)


def brute_K(p, c, tol, k_max):
    tails = brute_tails(p, c)
    for K in range(1, k_max + 1):
        if tails[K] <= tol:
            return K, tails
    return k_max, tails


def basis_ref(name: str, i: int, x: np.ndarray) -> np.ndarray:
    if name == "sin":
        return math.sqrt(2) * np.sin(2 * np.pi * i * x)
    if name == "cos":
        return math.sqrt(2) * np.cos(2 * np.pi * i * x)
    assert name == "legendre"
    return math.sqrt(2 * i - 1) * eval_legendre(i - 1, 2 * x - 1)


F_REF = {"identity": lambda z: z, "tanh": math.tanh, "square": lambda z: z * z}
f_REF = {"identity": lambda x: x, "sin": lambda x: 0.5 + 0.5 * math.sin(2 * math.pi * x),
         "square": lambda x: x * x}


def direct_target(target: PODTarget, x: np.ndarray, m: int | None = None,
                  keep_diag_full: bool = False) -> np.ndarray:
    """H_t = F(sum_s softmax_s(rho(x_t, x_s)) f(x_s)) by plain loops over t and s."""
    F, f = F_REF[target.F], f_REF[target.f]
    out = np.empty(x.shape)
    for b in range(x.shape[0]):
        for t in range(x.shape[1]):
            row = target.kernel(np.array([x[b, t]]), x[b], m=m)[0]
            if keep_diag_full:
                row = row.copy()
                row[t] = target.kernel(np.array([x[b, t]]), np.array([x[b, t]]))[0, 0]
            mx = max(row)
            w = [math.exp(r - mx) for r in row]
            tot = sum(w)
            out[b, t] = F(sum(wi / tot * f(xs) for wi, xs in zip(w, x[b])))
    return out


# ---- Spectrum ------------------------------------------------------------------------------

@pytest.mark.parametrize("alpha,rank,c", [(1.5, 2, 1.0), (0.7, 6, 2.0), (3.0, 1, 0.5)])
def test_finite_rank_power_law(alpha, rank, c):
    sp = Spectrum(alpha=alpha, rank=rank, c=c)
    s = sp.sigma()
    assert s.shape == (rank,)
    np.testing.assert_allclose(s, [c * i ** -alpha for i in range(1, rank + 1)], rtol=1e-14)
    assert sp.truncation() == rank
    assert sp.tail(0) == pytest.approx(sum((c * i ** -alpha) ** 2 for i in range(1, rank + 1)))
    r = PODTarget(sp).resolved()
    assert r["K"] == rank and r["tail_energy"] == 0.0 and r["tail_tol_met"] is True


@pytest.mark.parametrize("alpha,tol,c", [(1.5, 1e-4, 1.0), (2.0, 1e-7, 1.0), (1.0, 1e-3, 0.5),
                                         (0.75, 0.05, 1.0)])
def test_rank_inf_truncation_is_smallest_K_meeting_the_tail(alpha, tol, c):
    k_max = 4096
    sp = Spectrum(alpha=alpha, rank=math.inf, c=c, tail_tol=tol, k_max=k_max)
    K = sp.truncation()
    K_ref, tails = brute_K(2 * alpha, c, tol, k_max)
    assert K < k_max, "parameters chosen so the tolerance is reachable"
    assert K == K_ref
    assert tails[K] <= tol < tails[K - 1]          # K meets the tolerance, K - 1 does not
    assert sp.tail(K) == pytest.approx(tails[K], rel=1e-8)
    assert sp.tail(K - 1) == pytest.approx(tails[K - 1], rel=1e-8)
    s = sp.sigma()
    assert len(s) == K
    np.testing.assert_allclose(s, c * np.arange(1, K + 1) ** -alpha, rtol=1e-14)
    r = PODTarget(sp).resolved()
    assert r["K"] == K and r["tail_tol_met"] is True
    assert r["tail_energy"] == pytest.approx(tails[K], rel=1e-8)
    assert r["total_energy"] == pytest.approx(tails[0], rel=1e-8)


@pytest.mark.parametrize("alpha", [0.8, 1.0])
def test_slow_decay_hits_k_max_and_reports_unmet_tolerance(alpha):
    sp = Spectrum(alpha=alpha, rank=math.inf, tail_tol=1e-6, k_max=30)
    assert sp.truncation() == 30
    assert len(sp.sigma()) == 30
    r = PODTarget(sp).resolved()
    _, tails = brute_K(2 * alpha, 1.0, 1e-6, 30)
    assert r["K"] == 30
    assert r["tail_tol_met"] is False
    assert r["tail_energy"] == pytest.approx(tails[30], rel=1e-6)
    assert r["tail_energy"] > 1e-6


def test_explicit_list():
    vals = (1.0, 0.5, 0.5, 0.1, 0.0)
    sp = Spectrum(explicit=vals, alpha=99.0, rank=1)  # explicit overrides alpha / rank
    np.testing.assert_array_equal(sp.sigma(), np.array(vals))
    assert sp.truncation() == 5
    assert sp.tail(2) == pytest.approx(0.5 ** 2 + 0.1 ** 2)
    r = PODTarget(sp).resolved()
    assert r["K"] == 5 and r["tail_energy"] == 0.0


@pytest.mark.parametrize("kw,opt", [
    (dict(rank=0), "--rank"),
    (dict(rank=2.5), "--rank"),
    (dict(rank=-1), "--rank"),
    (dict(alpha=0.5, rank=math.inf), "--alpha"),
    (dict(alpha=0.3, rank=math.inf), "--alpha"),
    (dict(alpha=0.0, rank=3), "--alpha"),
    (dict(explicit=(0.5, 1.0)), "--sigma"),   # increasing
    (dict(explicit=(1.0, -0.1)), "--sigma"),  # negative
    (dict(explicit=()), "--sigma"),           # empty
])
def test_bad_spectrum_raises(kw, opt):
    with pytest.raises(TargetError, match=opt):
        Spectrum(**kw)


@pytest.mark.parametrize("kw,opt", [(dict(phi="fourier"), "--phi"), (dict(psi="wavelet"), "--psi"),
                                    (dict(F="relu"), "--F"), (dict(f="exp"), "--f"),
                                    (dict(tau=0), "--tau")])
def test_bad_target_raises(kw, opt):
    with pytest.raises(TargetError, match=opt):
        PODTarget(Spectrum(rank=2), **kw)


def test_target_error_is_a_value_error():
    assert issubclass(TargetError, ValueError)


# ---- bases ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["sin", "cos", "legendre"])
def test_basis_orthonormal_on_unit_interval(name):
    t, w = np.polynomial.legendre.leggauss(200)
    x, w = (t + 1) / 2, w / 2
    B = basis_matrix(name, x, 8)                     # (200, 8)
    gram = (B * w[:, None]).T @ B
    assert np.max(np.abs(gram - np.eye(8))) < 1e-10


@pytest.mark.parametrize("name", ["sin", "cos", "legendre"])
def test_basis_matrix_matches_formula(name):
    x = np.random.default_rng(3).random((4, 5))
    B = basis_matrix(name, x, 6)
    assert B.shape == (4, 5, 6)
    for i in range(1, 7):
        np.testing.assert_allclose(B[..., i - 1], basis_ref(name, i, x), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("phi,psi", [("sin", "sin"), ("cos", "legendre"), ("legendre", "sin")])
def test_kernel_is_the_pod_sum(phi, psi):
    target = PODTarget(Spectrum(alpha=1.3, rank=5), phi=phi, psi=psi)
    u, v = np.linspace(0, 1, 7), np.linspace(0.05, 0.95, 4)
    ref = np.zeros((7, 4))
    for i in range(1, 6):
        ref += i ** -1.3 * np.outer(basis_ref(phi, i, u), basis_ref(psi, i, v))
    np.testing.assert_allclose(target.kernel(u, v), ref, rtol=1e-12, atol=1e-12)
    ref2 = sum(i ** -1.3 * np.outer(basis_ref(phi, i, u), basis_ref(psi, i, v)) for i in (1, 2))
    np.testing.assert_allclose(target.kernel(u, v, m=2), ref2, rtol=1e-12, atol=1e-12)


# ---- target values -------------------------------------------------------------------------

def test_docstring_worked_example():
    target = PODTarget(Spectrum(alpha=1.5, rank=2), tau=2)
    np.testing.assert_allclose(target.sigma, [1.0, 2 ** -1.5])
    H = target(np.array([[0.25, 0.5]]))
    assert H.shape == (1, 2)
    e2 = math.exp(2.0)
    np.testing.assert_allclose(H[0], [(e2 * 0.25 + 0.5) / (e2 + 1), 0.375], atol=1e-12)
    np.testing.assert_allclose(H[0], [0.2798, 0.375], atol=5e-5)


@pytest.mark.parametrize("spec,phi,psi,F,f", [
    (dict(alpha=1.5, rank=3), "sin", "sin", "identity", "identity"),
    (dict(alpha=1.2, rank=5, c=2.0), "cos", "legendre", "tanh", "sin"),
    (dict(alpha=1.5, rank=math.inf, k_max=24), "legendre", "cos", "square", "square"),
    (dict(explicit=(3.0, 1.0, 0.2)), "sin", "cos", "tanh", "identity"),
])
def test_target_values_against_direct_loop(spec, phi, psi, F, f):
    target = PODTarget(Spectrum(**spec), phi=phi, psi=psi, F=F, f=f, tau=6)
    x = target.sample(5, seed=11)
    H = target(x)
    assert H.shape == (5, 6)
    np.testing.assert_allclose(H, direct_target(target, x), rtol=1e-10, atol=1e-12)
    # logits are rho(x_t, x_s) with t the query (phi) side and s the key (psi) side
    L = target.logits(x)
    for b in range(5):
        np.testing.assert_allclose(L[b], target.kernel(x[b], x[b]), rtol=1e-10, atol=1e-12)


def test_phi_psi_asymmetry_matters():
    x = PODTarget(tau=6).sample(3, seed=2)
    a = PODTarget(Spectrum(rank=4), phi="sin", psi="cos", tau=6)
    b = PODTarget(Spectrum(rank=4), phi="cos", psi="sin", tau=6)
    assert not np.allclose(a(x), b(x))
    np.testing.assert_allclose(a.logits(x), np.swapaxes(b.logits(x), 1, 2), rtol=1e-12, atol=1e-12)


def test_chunking_does_not_change_values():
    target = PODTarget(Spectrum(rank=4), tau=5)
    x = target.sample(37, seed=0)
    np.testing.assert_allclose(target.logits(x, chunk=5), target.logits(x, chunk=1000), rtol=0, atol=0)


# ---- sampling ------------------------------------------------------------------------------

def test_sample_deterministic_in_seed():
    target = PODTarget(Spectrum(rank=2), tau=7)
    a, b, c = target.sample(20, 5), target.sample(20, 5), target.sample(20, 6)
    assert a.shape == (20, 7)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    assert a.min() >= 0.0 and a.max() < 1.0
    np.testing.assert_array_equal(a, np.random.default_rng(5).random((20, 7)))


# ---- oracles -------------------------------------------------------------------------------

def test_oracle_with_m_at_least_K_is_exact():
    target = PODTarget(Spectrum(alpha=1.5, rank=3), phi="cos", psi="sin", F="tanh", f="sin", tau=5)
    x = target.sample(30, seed=1)
    o = target.oracle(x, [3, 5], chunk=7)
    exact = target(x)
    np.testing.assert_allclose(o["exact"], exact, rtol=1e-13, atol=1e-13)
    for m in (3, 5):
        np.testing.assert_allclose(o["truncated"][m], exact, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(o["self_exact"][m], exact, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("phi,psi", [("sin", "sin"), ("sin", "legendre")])
def test_oracle_truncated_and_self_exact_against_reimplementation(phi, psi):
    target = PODTarget(Spectrum(alpha=1.5, rank=math.inf, k_max=20), phi=phi, psi=psi,
                       F="square", f="sin", tau=5)
    x = target.sample(4, seed=9)
    o = target.oracle(x, [1, 2], chunk=3)
    for m in (1, 2):
        trunc = direct_target(target, x, m=m)
        self_exact = direct_target(target, x, m=m, keep_diag_full=True)
        np.testing.assert_allclose(o["truncated"][m], trunc, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(o["self_exact"][m], self_exact, rtol=1e-10, atol=1e-12)
        assert not np.allclose(trunc, self_exact)   # the diagonal really is treated differently
    np.testing.assert_allclose(o["exact"], direct_target(target, x), rtol=1e-10, atol=1e-12)


def test_complexity_constants():
    t = PODTarget(Spectrum(alpha=1.5, rank=5, c=2.0), phi="sin", psi="cos", F="square", f="sin")
    comp = t.complexity()
    assert comp["C1"] == pytest.approx(2.0)            # sigma_s = 2 s^-1.5 exactly
    assert comp["C0"] == pytest.approx(2.0 * 1.0 * 2 * math.sqrt(2))
    assert math.isnan(PODTarget(Spectrum(rank=2), phi="legendre").complexity()["C0"])


def test_diagnostics_match_an_independent_computation():
    """Logit statistics and trivial predictors, recomputed per sequence from target.kernel + scipy."""
    from scipy.special import softmax
    from synthetic.pod_target import F_MAPS, f_MAPS
    target = PODTarget(Spectrum(alpha=1.0, rank=5), phi="sin", psi="cos", F="tanh", f="square", tau=5)
    x = target.sample(40, seed=2)
    d = target.diagnostics(x, y_mean=0.1, chunk=7)
    diag, off, selfw, ys = [], [], [], []
    for xs in x:
        L = target.kernel(xs, xs)
        diag += list(np.diag(L))
        off += list(L[~np.eye(5, dtype=bool)])
        A = softmax(L, axis=1)
        selfw += list(np.diag(A))
        ys.append(np.tanh(A @ xs ** 2))
    y = np.array(ys)
    assert d["diag_logit"] == pytest.approx(np.mean(diag))
    assert d["offdiag_logit"] == pytest.approx(np.mean(off), abs=1e-12)
    assert d["offdiag_logit_sd"] == pytest.approx(np.std(off), rel=1e-9)
    assert d["self_weight"] == pytest.approx(np.mean(selfw))
    assert d["var_y"] == pytest.approx(y.var())
    assert d["mse_mean"] == pytest.approx(np.mean((y - 0.1) ** 2))
    assert d["mse_copy"] == pytest.approx(np.mean((y - np.tanh(x ** 2)) ** 2))
    assert d["mse_uniform"] == pytest.approx(np.mean((y - np.tanh((x ** 2).mean(axis=1, keepdims=True))) ** 2))
    assert F_MAPS["tanh"][0] is np.tanh and "square" in f_MAPS


def test_paper_construction_is_a_copy_task_at_small_alpha_and_trace_free_is_not():
    """The measured reason for the trace-free construction: with phi = psi the mean diagonal logit is
    sum_i sigma_i (diverging for alpha <= 1); with psi = cos it is ~0 and tokens attend near-uniformly."""
    x = PODTarget(tau=16).sample(256, seed=0)
    paper = PODTarget(Spectrum(alpha=0.55, rank=math.inf, k_max=512), phi="sin", psi="sin").diagnostics(x)
    free = PODTarget(Spectrum(alpha=0.55, rank=math.inf, k_max=512), phi="sin", psi="cos").diagnostics(x)
    sig = Spectrum(alpha=0.55, rank=math.inf, k_max=512).sigma()
    assert paper["diag_logit"] == pytest.approx(sig.sum(), rel=0.05)      # E[2 sin^2] = 1 per term
    assert paper["self_weight"] > 0.99 and paper["mse_copy"] < 1e-3 * paper["var_y"]
    assert abs(free["diag_logit"]) < 0.5 and free["self_weight"] < 0.1
    assert free["mse_copy"] > free["var_y"] and free["mse_uniform"] < free["var_y"]


# ---- F and f as expressions (issue 16) ---------------------------------------------------------------

def test_F_and_f_as_expressions_equal_the_same_maps_written_in_numpy():
    from synthetic.pod_target import PODTarget, Spectrum
    sp = Spectrum(alpha=1.5, rank=4)
    t = PODTarget(sp, F="tanh(2*x)", f="x**3", tau=6)
    x = t.sample(32, seed=1)
    lg = t.logits(x)
    att = np.exp(lg - lg.max(axis=-1, keepdims=True))
    att /= att.sum(axis=-1, keepdims=True)
    want = np.tanh(2 * np.einsum("bts,bs->bt", att, x ** 3))           # independent numpy
    np.testing.assert_allclose(t(x), want, rtol=1e-12, atol=1e-14)
    named = PODTarget(sp, F="tanh", f="square", tau=6)
    expr = PODTarget(sp, F="tanh(x)", f="x*x", tau=6)
    np.testing.assert_allclose(named(x), expr(x), rtol=1e-12)
    c = expr.complexity()
    assert c["C0"] == pytest.approx(named.complexity()["C0"], rel=1e-3)   # sup|x^2| = 1, Lip tanh = 1 on [0, 1]


BAD_MAPS = [("identity", "log(x)", "not finite"), ("1/(x-0.5)", "identity", "not finite"),
            ("__import__('os')", "identity", "unknown function"), ("identity", "x.real", "attribute"),
            ("cube", "identity", "unknown name")]
FAULT_CASES = [{"id": f"F-f-expression-{i}", "command": f"jackson-sweep --F {F!r} --f {f!r}",
                "expect": f"exit 2, one line ({word}); never evaluated as Python",
                "test": "tests/test_pod_target.py::test_bad_F_or_f_is_one_clear_error"} for i, (F, f, word) in enumerate(BAD_MAPS)]


@pytest.mark.parametrize("F,f,word", BAD_MAPS)
def test_bad_F_or_f_is_one_clear_error(F, f, word):
    from synthetic.pod_target import PODTarget, TargetError
    with pytest.raises(TargetError, match=word):
        PODTarget(F=F, f=f)


def test_expression_target_pickles():
    import pickle
    from synthetic.pod_target import PODTarget
    t = PODTarget(F="tanh(2*x)", f="x**3", tau=4)
    u = pickle.loads(pickle.dumps(t))
    x = t.sample(3, seed=0)
    np.testing.assert_array_equal(t(x), u(x))


def test_the_legendre_columns_are_scipys_legendre_at_every_degree_up_to_a_large_k():
    """basis_matrix('legendre') builds all degrees by a recurrence; each column equals scipy's eval_legendre of its own
    degree (an independent evaluation), here up to degree 1,023 on points that include both ends of [0, 1]."""
    from synthetic.pod_target import basis_matrix
    x = np.concatenate([[0.0, 1.0, 0.5], np.random.default_rng(3).random(61)]).reshape(8, 8)
    got = basis_matrix("legendre", x, 1024)
    assert got.shape == (8, 8, 1024)
    for i in (1, 2, 3, 10, 100, 707, 1024):
        want = basis_ref("legendre", i, x)
        np.testing.assert_allclose(got[..., i - 1], want, rtol=0, atol=1e-9 * max(1.0, math.sqrt(2 * i - 1)))
    assert got[0, 1, 1023] == pytest.approx(math.sqrt(2 * 1024 - 1))     # P_n(1) = 1 at x = 1
