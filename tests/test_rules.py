"""The stated rules behind jackson-sweep's verdicts (jackson/rate_sweep/checks.py), on hand-made tables."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jackson.rate_sweep import checks as R


def _rows(curves: dict[int, list[float]], init=100) -> pd.DataFrame:
    out = []
    for seed, errs in curves.items():
        for m, e in enumerate(errs, start=1):
            out.append({"seed": seed, "m_h": m, "test_mse": e, "init_seed": init + 10 * seed + m, "restarts": 2})
    return pd.DataFrame(out)


def test_knee_is_per_seed_and_its_median_decides():
    rows = _rows({0: [1e-3, 1e-4, 1e-9], 1: [1e-3, 2e-4, 1e-5], 2: [1e-3, 1e-4, 2e-6]})
    k = R.per_seed_knee(rows, 3)
    assert k == pytest.approx([1e5, 20.0, 50.0])
    assert np.median(k) >= R.KNEE_MIN
    assert R.per_seed_knee(_rows({0: [1e-3, 1e-4, 5e-5]}), 3) == pytest.approx([2.0])


def test_outliers_name_seed_and_init_and_ignore_the_float_floor():
    rows = _rows({0: [1e-3, 1e-4, 5e-4, 1e-5], 1: [1e-3, 1e-12, 9e-9, 1e-12]})
    out = R.outliers(rows)
    assert [(o["m_h"], o["seed"]) for o in out] == [(3, 0)]     # 5e-4 > 3 x 1e-4; seed 1 is at the floor
    assert out[0]["init_seed"] == 103 and out[0]["best_smaller"] == pytest.approx(1e-4) and out[0]["restarts"] == 2


def test_degenerate_and_uninformative_are_separate_rules():
    base = {"mse_mean": 1e-2, "mse_copy": 8e-2, "mse_uniform": 5e-3}
    ok = R.degenerate({**base, "self_weight": 0.05}, best_trained=1e-5)
    assert not ok["flag"] and not ok["degenerate"] and not ok["uninformative"]
    copy = R.degenerate({**base, "self_weight": 0.99, "mse_copy": 1e-4}, best_trained=6e-5)
    assert copy["degenerate"] and copy["uninformative"] and copy["best_trivial"] == "copy"
    assert "DEGENERATE" in copy["why"] and "UNINFORMATIVE" in copy["why"]
    under = R.degenerate({**base, "self_weight": 0.05}, best_trained=2e-3)
    assert under["uninformative"] and not under["degenerate"] and under["best_trivial"] == "uniform"


def test_tracking_and_floor():
    m = np.arange(1, 17)
    oracle = 1e-3 * m ** -2.0
    curve = pd.DataFrame({"m_h": m, "test_mse": 0.4 * oracle, "oracle_mse": oracle, "oracle_self_exact_mse": oracle * 0.9})
    tr = R.tracking(curve, list(range(1, 9)), alpha=1.5)
    assert "oracle (rank-m_h rho)" in tr["tracks"] and "the m_h^-(2 alpha - 1) line" in tr["tracks"]
    assert not tr["floor"] and tr["upper_slope"] == pytest.approx(-2.0)
    flat = curve.assign(test_mse=np.maximum(0.4 * oracle, 5e-5))
    tr = R.tracking(flat, list(range(1, 9)), alpha=1.5)
    assert tr["tracks"] == [] and tr["floor"] and tr["floor_value"] == pytest.approx(5e-5)
    assert tr["ratios"]["oracle (rank-m_h rho)"]["slope_difference"] > R.TRACK_SLOPE
    # a curve 0.3 steeper than the oracle over 1..8 (a ratio spread of only 1.9x) does not track it
    steep = curve.assign(test_mse=0.4 * oracle * curve.m_h ** -0.3)
    tr = R.tracking(steep, list(range(1, 9)), alpha=1.5)
    assert "oracle (rank-m_h rho)" not in tr["tracks"]
    assert tr["ratios"]["oracle (rank-m_h rho)"]["slope_difference"] == pytest.approx(-0.3)
