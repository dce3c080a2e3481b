"""The one knee rule (jackson/rate_sweep/knee_rule.py) on hand-made finite-rank targets whose numbers are known: each of
its readings, each piece of evidence absent or unreadable (never deciding, always named, the reading still shown), its
control, and optimisation outliers -- at the knee's members, past the rank with and without a climb of their own."""
from __future__ import annotations

import copy
import math

import pytest

from jackson.rate_sweep.knee_rule import KNEE_MIN, judge, knee_short
from jackson.rate_sweep.rate_rule import INCONCLUSIVE, NOT_REPRODUCED, PARTLY, REPRODUCED


def target(curve: dict, per_seed=(100.0, 200.0, 300.0), rank: int = 2, oracle_below: float = 1.0, outliers=()):
    """Rank `rank`; the curve's median-over-seeds MSE by m_h; the rank-m_h oracle oracle_below under the rank and 0 from it."""
    per_seed = list(per_seed)
    return {"alpha": 1.0, "rank": str(rank), "n_seeds": len(per_seed),
            "checks": {"knee_per_seed": per_seed, "knee_drop": sorted(per_seed)[len(per_seed) // 2],
                       "outliers": [dict(o) for o in outliers]},
            "curve": [{"m_h": m, "test_median": e, "oracle_mse": oracle_below if m < rank else 0.0}
                      for m, e in curve.items()]}


DOWN = {1: 1e-2, 2: 1e-6, 3: 2e-6, 4: 1e-6}


def outlier(m, seed=0, mse=3e-3, best=1e-6):
    return {"m_h": m, "seed": seed, "test_mse": mse, "best_smaller": best}


def test_each_reading():
    j = judge(target(DOWN))
    assert (j["verdict"], j["drop"], j["missing"]) == (REPRODUCED, 200.0, [])
    assert j["stay"] == pytest.approx(1e-2 / 2e-6) and "5e+03x below m_h = 1" in j["line"]
    assert judge(target({**DOWN, 4: 5e-3}))["verdict"] == PARTLY          # falls at r = 2, climbs back at m_h = 4
    flat = {1: 1e-2, 2: 5e-3, 3: 5e-3}
    j = judge(target(flat, per_seed=[1.5, 2.0, 9.0]))                     # oracle 1.0 is 200x the floor: could show
    assert j["verdict"] == NOT_REPRODUCED and "where one could show" in j["why"]
    j = judge(target(flat, per_seed=[1.5, 2.0, 9.0], oracle_below=1e-2))  # 2x the floor: a 10x knee could not show
    assert j["verdict"] == INCONCLUSIVE and "could not show" in j["why"] and j["reading"] == INCONCLUSIVE
    perfect = judge(target({1: 1e-2, 2: 0.0, 3: 0.0}, per_seed=[math.inf] * 3))   # exactly 0 from m_h = r
    assert perfect["verdict"] == REPRODUCED and perfect["stay"] == math.inf
    assert knee_short(j).startswith("knee e(1)/e(2) = 2 ")


def _drop(t, path):
    """t without the piece at `path` (keys and list indices)."""
    t = copy.deepcopy(t)
    *head, last = path
    box = t
    for k in head:
        box = box[k]
    del box[last]
    return t


def _set(t, path, value):
    t = copy.deepcopy(t)
    *head, last = path
    box = t
    for k in head:
        box = box[k]
    box[last] = value
    return t


GOOD = target(DOWN)
MISSING = {   # name -> (target without or with an unreadable piece, the words that name it)
    "knee absent": (_drop(GOOD, ["checks", "knee_drop"]), "the knee e(1)/e(2) is absent"),
    "knee NaN": (_set(GOOD, ["checks", "knee_drop"], float("nan")), "the knee e(1)/e(2) is unreadable"),
    "knee a string": (_set(GOOD, ["checks", "knee_drop"], "200"), "the knee e(1)/e(2) is unreadable"),
    "a seed's knee": (_set(GOOD, ["checks", "knee_per_seed"], [100.0, 200.0, None]), "1 of 3 seeds have no readable knee"),
    "fewer seeds": (_set(GOOD, ["checks", "knee_per_seed"], [200.0]), "2 of 3 seeds have no readable knee"),
    "no seed count": (_drop(GOOD, ["n_seeds"]), "the seed count is absent"),
    "error at r - 1": (_drop(GOOD, ["curve", 0]), "the error at m_h = 1 is absent"),
    "error at r - 1 NaN": (_set(GOOD, ["curve", 0, "test_median"], float("nan")), "the error at m_h = 1 is unreadable"),
    "error past r": (_set(GOOD, ["curve", 2, "test_median"], float("inf")), "unreadable error at m_h 3"),
    "nothing past r": (target({1: 1e-2}), "no readable error at m_h >= 2"),
    "power reference": (_drop(GOOD, ["curve", 0, "oracle_mse"]), "the rank-1 oracle) are absent"),
    "control past r": (_set(GOOD, ["curve", 3, "oracle_mse"], None), "the control (the rank-m_h oracle) is absent at m_h 4"),
    "outlier check": (_drop(GOOD, ["checks", "outliers"]), "no readable optimisation-outlier check"),
    "outlier entry": (_set(GOOD, ["checks", "outliers"], [{"m_h": 3, "seed": 0}]), "no readable optimisation-outlier check"),
}


@pytest.mark.parametrize("name", sorted(MISSING))
def test_absent_or_unreadable_evidence_never_decides_and_is_named(name):
    t, words = MISSING[name]
    j = judge(t)
    assert j["verdict"] == INCONCLUSIVE and words in j["why"] and words in j["line"], j["why"]


def test_a_missing_piece_still_shows_what_the_rest_would_read():
    j = judge(MISSING["fewer seeds"][0])
    assert j["reading"] == REPRODUCED and j["why"].startswith("would read reproduced (a >= 10x knee that stays down)")
    no_knee = judge(_set(target({1: 1e-2, 2: 5e-3}, per_seed=[1.5, 2.0, 9.0]), ["checks", "outliers"], None))
    assert no_knee["verdict"] == INCONCLUSIVE and no_knee["why"].startswith("would read not reproduced")


def test_the_control_a_target_not_of_rank_r_owes_no_knee():
    """The rank-m_h oracle must lie KNEE_MIN x below its m_h = r - 1 value from m_h = r on; at 0.5 of it the target is
    not of rank r, and the same trained curve is inconclusive, whatever its knee."""
    bad = _set(GOOD, ["curve", 1, "oracle_mse"], 0.5)
    j = judge(bad)
    assert j["verdict"] == INCONCLUSIVE and "the control fails" in j["why"] and "m_h 2" in j["why"]
    assert judge(_set(GOOD, ["curve", 1, "oracle_mse"], 1.0 / KNEE_MIN))["verdict"] == REPRODUCED   # at the line: passes


@pytest.mark.parametrize("m", [1, 2])
def test_an_outlier_among_the_knees_members_never_decides(m):
    """A member 48x above its seed's best smaller m_h at m_h = r measures a failed fit: the flat knee it makes is not
    evidence against the rank (nor, at m_h = r - 1, an inflated knee evidence for it)."""
    t = target({1: 1e-2, 2: 5e-3, 3: 5e-3}, per_seed=[0.02, 1.0, 13.0], outliers=[outlier(m, seed=1, mse=4.8e-2, best=1e-3)])
    j = judge(t)
    assert j["reading"] == NOT_REPRODUCED and j["verdict"] == INCONCLUSIVE
    assert f"m_h {m} seed 1 at 48x its best smaller m_h" in j["why"] and "a failed fit, not the rank" in j["why"]


def test_outliers_past_the_rank_only_raise_the_error():
    """Reproduced stands with outliers past r; a climb made only of outliers is inconclusive; a climb at an m_h that
    holds none stays partly."""
    j = judge(target(DOWN, outliers=[outlier(3), outlier(4, seed=2)]))
    assert j["verdict"] == REPRODUCED and "2 optimisation outliers at m_h > 2 can only raise the error" in j["why"]
    climb = {**DOWN, 4: 5e-3}
    j = judge(target(climb, outliers=[outlier(4)]))
    assert (j["reading"], j["verdict"]) == (PARTLY, INCONCLUSIVE) and "the climb is only at m_h holding" in j["why"]
    j = judge(target({**climb, 3: 4e-3}, outliers=[outlier(4)]))                # m_h 3 climbs too, and is clean
    assert j["verdict"] == PARTLY and "free of optimisation outliers" in j["why"]
