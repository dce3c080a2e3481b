"""jackson/rates.py: power-law fits, bootstrap intervals and the computable bound terms."""
from __future__ import annotations

import numpy as np
import pytest

from jackson.rates import bootstrap_exponent, bound_terms, fit_power_law, predicted_exponent


@pytest.mark.parametrize("alpha", [0.75, 1.0, 1.5, 2.0])
def test_predicted_exponent(alpha):
    assert predicted_exponent(alpha) == pytest.approx(1.0 - 2.0 * alpha)


@pytest.mark.parametrize("slope,const", [(-2.0, 1.0), (-0.5, 37.0), (-3.0, 1e-4), (1.25, 0.3)])
def test_fit_power_law_exact(slope, const):
    m = np.array([1, 2, 3, 5, 8, 13])
    err = const * m.astype(float) ** slope
    s, b = fit_power_law(m, err)
    assert s == pytest.approx(slope, abs=1e-10)
    assert b == pytest.approx(np.log(const), abs=1e-10)


def test_fit_power_law_least_squares():
    # not an exact power law: compare with the closed-form least-squares slope
    m = np.array([1.0, 2.0, 4.0, 8.0])
    err = np.array([1.0, 0.3, 0.2, 0.01])
    lm, le = np.log(m), np.log(err)
    want = np.sum((lm - lm.mean()) * (le - le.mean())) / np.sum((lm - lm.mean()) ** 2)
    s, b = fit_power_law(m, err)
    assert s == pytest.approx(want, rel=1e-12)
    assert b == pytest.approx(le.mean() - want * lm.mean(), rel=1e-12)


def test_bootstrap_interval_contains_true_slope():
    rng = np.random.default_rng(1)
    m = np.array([1, 2, 3, 4, 6, 8])
    true_slope = -2.0
    S, B = 3, 32
    noise = rng.lognormal(mean=0.0, sigma=0.3, size=(S, B, len(m)))
    blocks = 0.1 * m.astype(float) ** true_slope * noise
    res = bootstrap_exponent(m, blocks, n_boot=400, seed=0)
    assert res["n_boot"] == 400
    assert res["lo"] <= true_slope <= res["hi"]
    assert res["lo"] <= res["slope"] <= res["hi"]
    assert res["hi"] - res["lo"] < 0.3
    # the point estimate is the fit of the mean curve over seeds and blocks
    s, b = fit_power_law(m, blocks.mean(axis=(0, 1)))
    assert res["slope"] == pytest.approx(s) and res["intercept"] == pytest.approx(b)
    # deterministic in seed
    assert bootstrap_exponent(m, blocks, n_boot=400, seed=0) == res


def test_bootstrap_without_noise_is_degenerate():
    m = np.array([1, 2, 4, 8])
    blocks = np.broadcast_to(5.0 * m.astype(float) ** -1.5, (2, 4, 4))
    res = bootstrap_exponent(m, blocks, n_boot=50, seed=3)
    for k in ("slope", "lo", "hi"):
        assert res[k] == pytest.approx(-1.5, abs=1e-10)


def test_bootstrap_interval_widens_with_noise():
    rng = np.random.default_rng(2)
    m = np.array([1, 2, 3, 4])
    base = m.astype(float) ** -1.0
    z = rng.standard_normal((4, 16, 4))
    narrow = bootstrap_exponent(m, base * np.exp(0.05 * z), n_boot=300, seed=0)
    wide = bootstrap_exponent(m, base * np.exp(0.5 * z), n_boot=300, seed=0)
    assert wide["hi"] - wide["lo"] > narrow["hi"] - narrow["lo"]


def test_bound_terms():
    sigma = np.array([1.0, 0.5, 0.25, 0.2, 0.1])
    alpha, C0, C1, tau = 1.3, 2.5, 1.7, 6
    out = bound_terms(sigma, alpha, C0, C1, tau, [1, 2, 5], tail_beyond=0.01)
    assert [r["m_h"] for r in out] == [1, 2, 5]
    for r in out:
        m = r["m_h"]
        tail = sum(s * s for s in sigma[m:]) + 0.01
        assert r["tail_energy"] == pytest.approx(tail, rel=1e-14)
        assert r["attention_term"] == pytest.approx(tau ** 2 * C0 * C1 * m ** -(2 * alpha - 1), rel=1e-14)
    assert out[-1]["tail_energy"] == pytest.approx(0.01)
    # without tail_beyond
    out0 = bound_terms(sigma, alpha, C0, C1, tau, [3])
    assert out0[0]["tail_energy"] == pytest.approx(0.2 ** 2 + 0.1 ** 2)
