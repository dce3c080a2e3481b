"""jackson/pod.py: the numerical POD recovers the constructed spectra and functions."""
from __future__ import annotations

import math

import numpy as np
import pytest

from jackson.models import TransformerBank
from jackson.pod import center_keys, learned_spectrum, pod, pod_matrix, quadrature, rank_tail
from synthetic.pod_target import PODTarget, Spectrum, basis_matrix
from conftest import TINY_MODEL


def rel_err(got, want):
    return np.max(np.abs(np.asarray(got) - want) / np.abs(want))


@pytest.mark.parametrize("rule,n", [("gauss", 10), ("midpoint", 7)])
def test_quadrature_integrates_polynomials(rule, n):
    x, w = quadrature(n, rule)
    assert x.shape == w.shape == (n,)
    assert np.all((x > 0) & (x < 1))
    assert w.sum() == pytest.approx(1.0, abs=1e-14)
    assert np.sum(w * x) == pytest.approx(0.5, abs=1e-14)      # midpoint is exact for degree 1
    if rule == "gauss":
        for k in range(2 * n):                                   # exact up to degree 2n-1
            assert np.sum(w * x ** k) == pytest.approx(1 / (k + 1), rel=1e-12)


def test_quadrature_rejects_unknown_rule():
    with pytest.raises(ValueError, match="rule"):
        quadrature(4, "simpson")


@pytest.mark.parametrize("spectrum,phi,psi,rule,n", [
    (Spectrum(alpha=1.5, rank=2), "sin", "sin", "midpoint", 32),
    (Spectrum(alpha=1.5, rank=6), "sin", "sin", "midpoint", 48),
    (Spectrum(alpha=1.5, rank=math.inf, k_max=40), "sin", "sin", "midpoint", 2 * 40 + 16),
    (Spectrum(alpha=0.8, rank=math.inf, k_max=40), "sin", "sin", "midpoint", 2 * 40 + 16),
    (Spectrum(alpha=1.5, rank=6), "sin", "cos", "midpoint", 48),
    (Spectrum(alpha=2.0, rank=6), "legendre", "legendre", "gauss", 24),
    (Spectrum(alpha=1.2, rank=5), "legendre", "sin", "gauss", 160),
    (Spectrum(explicit=(2.0, 1.1, 0.6, 0.25, 0.05)), "sin", "sin", "midpoint", 32),
])
def test_pod_recovers_sigma(spectrum, phi, psi, rule, n):
    target = PODTarget(spectrum, phi=phi, psi=psi)
    K = spectrum.truncation()
    want = spectrum.sigma()
    assert len(want) == K
    res = pod(target.kernel, n=n, rule=rule)
    assert np.all(np.diff(res.sigma) <= 1e-12)                   # descending
    assert rel_err(res.sigma[:K], want) <= 1e-6
    assert np.all(np.abs(res.sigma[K:]) <= 1e-9 * want[0])       # nothing beyond the rank
    assert res.phi.shape == (n, len(res.sigma)) and res.psi.shape == (n, len(res.sigma))


@pytest.mark.parametrize("phi,psi,rule,n", [("sin", "sin", "midpoint", 96), ("sin", "cos", "midpoint", 96),
                                            ("legendre", "legendre", "gauss", 48)])
def test_pod_recovers_leading_functions_up_to_sign(phi, psi, rule, n):
    target = PODTarget(Spectrum(alpha=1.5, rank=math.inf, k_max=40), phi=phi, psi=psi)
    res = pod(target.kernel, n=n, rule=rule, k=3)
    assert len(res.sigma) == 3
    for j in range(3):
        want_phi = basis_matrix(phi, res.nodes, j + 1)[:, j]
        want_psi = basis_matrix(psi, res.nodes, j + 1)[:, j]
        sgn = np.sign(np.sum(res.weights * res.phi[:, j] * want_phi))
        assert np.max(np.abs(sgn * res.phi[:, j] - want_phi)) < 1e-8
        # the sign of the left function fixes the sign of the right one (sigma_j > 0)
        assert np.max(np.abs(sgn * res.psi[:, j] - want_psi)) < 1e-8


def test_pod_matrix_reconstructs_kernel():
    target = PODTarget(Spectrum(alpha=1.5, rank=4), phi="cos", psi="sin")
    x, w = quadrature(40, "gauss")
    R = target.kernel(x, x)
    res = pod_matrix(R, w, x)
    np.testing.assert_allclose((res.phi * res.sigma) @ res.psi.T, R, atol=1e-10)


def test_center_keys_removes_v_mean():
    x, w = quadrature(30, "gauss")
    g = np.cos(3 * x)[:, None] + np.outer(x, x ** 2)   # g(u) + u v^2
    c = center_keys(g, w)
    np.testing.assert_allclose(c @ w, 0.0, atol=1e-13)
    np.testing.assert_allclose(c, np.outer(x, x ** 2 - 1 / 3), atol=1e-13)


@pytest.mark.parametrize("centered", [True, False])
def test_learned_spectrum_of_random_bank_has_rank_at_most_m_h(centered):
    m_hs = (1, 3)
    bank = TransformerBank(TINY_MODEL, m_hs, seeds=[4, 5])
    spec = learned_spectrum(bank, centered=centered)      # the defaults run_cell uses
    assert spec.shape == (2, 24)
    assert np.all(spec >= 0)
    assert np.all(np.diff(spec, axis=1) <= 1e-12)
    for i, m in enumerate(m_hs):
        top = spec[i, 0]
        assert top > 0
        assert np.sum(spec[i] > 1e-6 * top) <= m


def test_rank_tail_is_eckart_young():
    s = np.array([3.0, 2.0, 1.0, 0.0])
    t = rank_tail(s, [0, 1, 2, 3, 4])
    assert t == pytest.approx({0: 1.0, 1: math.sqrt(5 / 14), 2: math.sqrt(1 / 14), 3: 0.0, 4: 0.0})
    # the discretised kernel's best rank-m approximation error, computed directly by SVD
    x, w = quadrature(64, "gauss")
    R = np.exp(np.sin(2 * np.pi * x)[:, None] * np.sin(2 * np.pi * x)[None, :])
    A = np.sqrt(w)[:, None] * R * np.sqrt(w)[None, :]
    u, sv, vt = np.linalg.svd(A)
    A2 = (u[:, :2] * sv[:2]) @ vt[:2]
    got = rank_tail(pod(lambda a, b: np.exp(np.sin(2 * np.pi * a)[:, None] * np.sin(2 * np.pi * b)[None, :]), n=64).sigma, [2])
    assert got[2] == pytest.approx(np.linalg.norm(A - A2) / np.linalg.norm(A), rel=1e-9)


def test_softmax_kernel_of_a_low_rank_coupling_is_not_low_rank():
    """exp(rho): a rank-1 coupling gives a kernel with rank-1 tail > 0 at every m; an additive coupling
    g(u) + h(v) (rank 2) gives exp(g) exp(h), rank 1."""
    target = PODTarget(Spectrum(alpha=1.5, rank=1), tau=4)
    tail = rank_tail(pod(lambda u, v: np.exp(target.kernel(u, v)), n=128).sigma, [1, 2, 3, 4])
    assert all(tail[m] > 1e-4 for m in (1, 2, 3, 4)) and tail[1] > tail[2] > tail[3] > tail[4]
    additive = rank_tail(pod(lambda u, v: np.exp(np.sin(3 * u)[:, None] + v[None, :] ** 2), n=128).sigma, [1])
    assert additive[1] < 1e-10
