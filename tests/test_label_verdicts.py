"""The verdict rules read the doubling check's labels (jackson/rate_sweep/doubling.py): on hand-made targets whose
numbers are known, each rule says what it says for members not checked, converged and budget -- the knee by the
direction each upper bound cuts, the rate range by range and never better than its weakest promised range."""
from __future__ import annotations

import copy
import shutil
from pathlib import Path

from jackson.rate_sweep import doubling
from jackson.rate_sweep.knee_rule import judge as judge_knee
from jackson.rate_sweep.rate_rule import INCONCLUSIVE, NOT_REPRODUCED, PARTLY, REPRODUCED, judge as judge_rate

NOTE = doubling.NOT_CHECKED_NOTE


def labels(ms, seeds=(0, 1, 2), budget=()):
    """A target's doubling entry: every (m_h, seed) converged but the budget ones."""
    b = [[m, sd, 0.25] for m, sd in budget]
    return {"partner": "../x", doubling.CONVERGED: [[m, sd] for m in ms for sd in seeds if (m, sd) not in set(budget)],
            doubling.BUDGET: b, doubling.UNCHECKED: []}


# ---- the knee ------------------------------------------------------------------------------------------------------

def knee_target(curve: dict, per_seed=(100.0, 200.0, 300.0), rank=2, doubling_entry=None):
    t = {"alpha": 1.0, "rank": str(rank), "n_seeds": len(per_seed),
         "checks": {"knee_per_seed": list(per_seed), "knee_drop": sorted(per_seed)[len(per_seed) // 2], "outliers": []},
         "curve": [{"m_h": m, "test_median": e, "oracle_mse": 1.0 if m < rank else 0.0} for m, e in curve.items()]}
    if doubling_entry is not None:
        t["doubling"] = doubling_entry
    return t


DOWN = {1: 1e-2, 2: 1e-6, 3: 2e-6, 4: 1e-6}
FLAT = {1: 1e-2, 2: 5e-3, 3: 5e-3, 4: 5e-3}
CLIMB = {1: 1e-2, 2: 1e-6, 3: 2e-6, 4: 5e-3}


def test_knee_not_checked_keeps_its_word_and_says_so():
    j = judge_knee(knee_target(DOWN))
    assert j["verdict"] == REPRODUCED and not j["checked"] and j["line"].endswith(NOTE)
    j = judge_knee(knee_target(DOWN, doubling_entry=labels(DOWN)))
    assert j["verdict"] == REPRODUCED and j["checked"] and NOTE not in j["line"]


def test_knee_budget_by_direction():
    ms = list(DOWN)
    # at r - 1 = 1: e(1) is an upper bound, the true knee may be smaller -> a passing knee cannot stand
    j = judge_knee(knee_target(DOWN, doubling_entry=labels(ms, budget=[(1, 0)])))
    assert j["verdict"] == INCONCLUSIVE and j["reading"] == REPRODUCED and "only make the knee smaller" in j["why"]
    # ... but a failing one stands (the knee can only get smaller)
    j = judge_knee(knee_target(FLAT, per_seed=(1.5, 2.0, 2.5), doubling_entry=labels(ms, budget=[(1, 0)])))
    assert j["verdict"] == NOT_REPRODUCED and "cannot change it" in j["why"]
    # at r = 2: e(2) is an upper bound, the true knee may be larger -> a passing knee stands, a failing one cannot
    j = judge_knee(knee_target(DOWN, doubling_entry=labels(ms, budget=[(2, 1)])))
    assert j["verdict"] == REPRODUCED and "m_h 2 seed 1 (upper bounds) cannot change it" in j["why"]
    j = judge_knee(knee_target(FLAT, per_seed=(1.5, 2.0, 2.5), doubling_entry=labels(ms, budget=[(2, 1)])))
    assert j["verdict"] == INCONCLUSIVE and j["reading"] == NOT_REPRODUCED and "only make the knee larger" in j["why"]
    # above r: a climb made only of budget members cannot stand; staying down stands
    j = judge_knee(knee_target(CLIMB, doubling_entry=labels(ms, budget=[(4, 0)])))
    assert j["verdict"] == INCONCLUSIVE and j["reading"] == PARTLY and "climb is only at m_h holding budget" in j["why"]
    j = judge_knee(knee_target(DOWN, doubling_entry=labels(ms, budget=[(4, 0)])))
    assert j["verdict"] == REPRODUCED
    # a climb at an m_h whose members all converged stands
    climb2 = {**CLIMB, 3: 5e-3}
    j = judge_knee(knee_target(climb2, doubling_entry=labels(ms, budget=[(4, 0)])))
    assert j["verdict"] == PARTLY


def test_knee_unreadable_labels_never_decide():
    bad = labels(list(DOWN))
    bad[doubling.BUDGET] = "m_h 2"
    j = judge_knee(knee_target(DOWN, doubling_entry=bad))
    assert j["verdict"] == INCONCLUSIVE and "unreadable" in j["why"] and not j["checked"]


# ---- the rate ------------------------------------------------------------------------------------------------------

def rate_target(slopes=(-2.0, -2.0), doubling_entry=None):
    """Rank inf; the exact tail falls as m_h^-2 exactly; the measured exponent over 1..8 and 1..16 as given."""
    ranges = {"1..8": list(range(1, 9)), "1..16": list(range(1, 17))}
    t = {"alpha": 1.5, "rank": "inf", "fit_m_h": ranges["1..8"], "checks": {"outliers": []},
         "exponents": {"test": {"slope": slopes[0], "lo": slopes[0] - 0.1, "hi": slopes[0] + 0.1}},
         "exponents_by_range": {k: {"m_h": ms, "test": {"slope": s, "lo": s - 0.1, "hi": s + 0.1}}
                                for (k, ms), s in zip(ranges.items(), slopes)},
         "bound": [{"m_h": m, "tail_energy": float(m) ** -2} for m in range(1, 17)]}
    if doubling_entry is not None:
        t["doubling"] = doubling_entry
    return t


ALL = list(range(1, 17))


def test_rate_not_checked_keeps_its_word_and_says_so():
    j = judge_rate(rate_target())
    assert j["verdict"] == REPRODUCED and not j["checked"] and j["line"].endswith(NOTE)
    j = judge_rate(rate_target(doubling_entry=labels(ALL)))
    assert j["verdict"] == REPRODUCED and j["checked"] and NOTE not in j["line"]
    # partly checked: members of the judged ranges not checked -> the note
    half = labels(range(1, 9))
    half[doubling.UNCHECKED] = [[m, sd] for m in range(9, 17) for sd in (0, 1, 2)]
    j = judge_rate(rate_target(doubling_entry=half))
    assert j["verdict"] == REPRODUCED and not j["checked"] and NOTE in j["line"]


def test_rate_budget_member_makes_its_range_inconclusive_and_the_claim_no_better():
    j = judge_rate(rate_target(doubling_entry=labels(ALL, budget=[(12, 0), (16, 2)])))
    by = {r["range"]: r for r in j["ranges"]}
    assert by["1..8"]["verdict"] == REPRODUCED
    assert by["1..16"]["verdict"] == INCONCLUSIVE and by["1..16"]["budget"] == [[12, 0], [16, 2]]
    assert "m_h 12 seed 0 (25%), m_h 16 seed 2 (25%)" in by["1..16"]["why"]
    assert by["1..16"]["d"] is not None                        # its d is still shown
    # never upgraded by dropping a range: 1..8 reproduced, 1..16 unresolved -> inconclusive, naming both
    assert j["verdict"] == INCONCLUSIVE
    assert "would read reproduced over m_h 1..8, but m_h 1..16 is inconclusive" in j["line"]
    # partly (1..8 reproduced, 1..16 shallower) stays partly with every member converged ...
    j = judge_rate(rate_target(slopes=(-2.0, -1.0), doubling_entry=labels(ALL)))
    assert j["verdict"] == PARTLY and j["checked"]
    # ... and every judged range not reproduced stands whatever else is unresolved
    j = judge_rate(rate_target(slopes=(-1.0, -1.0), doubling_entry=labels(ALL, budget=[(16, 0)])))
    assert j["verdict"] == NOT_REPRODUCED


def test_rate_budget_outside_the_range_leaves_it_alone():
    t = rate_target(doubling_entry=labels(ALL, budget=[(12, 0)]))
    j = judge_rate(t)
    assert {r["range"]: r["verdict"] for r in j["ranges"]}["1..8"] == REPRODUCED
    t2 = copy.deepcopy(t)
    t2["doubling"][doubling.BUDGET] = [[3, 0, None]]          # a budget member inside 1..8, change unreadable
    by = {r["range"]: r for r in judge_rate(t2)["ranges"]}
    assert by["1..8"]["verdict"] == INCONCLUSIVE and "m_h 3 seed 0:" in by["1..8"]["why"]


# ---- the attention reference: uncapped first -------------------------------------------------------------------

def test_an_uncapped_given_reference_is_preferred_and_a_capped_one_named(tmp_path):
    import json
    from jackson.rate_sweep import references as ref
    from jackson.rate_sweep.config import GIVEN
    import dataclasses
    import subprocess
    import sys
    helptext = subprocess.run([sys.executable, "-m", "jackson.rate_sweep.cli", "--help"], capture_output=True,
                              text=True).stdout
    assert f"features_k / {ref.UNCAPPED}" in " ".join(helptext.split()), "--help states the cap's factor"
    # two finished given folders on the same target: features_k 16 with the given recipe, 64 with another
    base = {"alpha": [1.5], "rank": ["inf"], "m_h": list(range(1, 17)), "phi": "sin", "psi": "sin", "construction": "",
            "F": "identity", "f": "identity", "tau": 16, "tail_tol": 1e-6, "k_max": 4096, "n_train": 16384,
            "n_test": 4096, "term": "full", "quick": False}
    for name, k, steps in (("a-k16", 16, GIVEN["fit"].steps), ("b-k64", 64, 2 * GIVEN["fit"].steps)):
        d = tmp_path / name
        d.mkdir()
        (d / "config.json").write_text(json.dumps({**base, "model": {"features": "given", "features_k": k},
                                                   "fit": {**dataclasses.asdict(GIVEN["fit"]), "steps": steps},
                                                   "restarts": GIVEN["restarts"]}))
        (d / "results.csv").write_text("alpha,rank\n1.5,inf\n")
        (d / "summary.json").write_text("{}")
    cfg = {**base, "model": {"features": "learned"}}
    recipe = (GIVEN["fit"], GIVEN["restarts"])
    got = ref.find_attn_run(cfg, [(1.5, "inf")], root=tmp_path, recipe=recipe)
    assert Path(got).name == "b-k64"                                   # uncapped beats the given recipe
    assert ref.attn_note(got, 16) == "features_k 64"
    # among uncapped references, one whose members a doubling check labelled comes first, whatever its name
    c = tmp_path / "0-k64-unchecked"
    shutil.copytree(tmp_path / "b-k64", c)
    assert Path(ref.find_attn_run(cfg, [(1.5, "inf")], root=tmp_path, recipe=recipe)).name == "0-k64-unchecked"
    (tmp_path / "b-k64" / "doubling.json").write_text("{}")
    assert Path(ref.find_attn_run(cfg, [(1.5, "inf")], root=tmp_path, recipe=recipe)).name == "b-k64"
    shutil.rmtree(c)
    (tmp_path / "b-k64" / "SUPERSEDED.md").write_text("x")
    got = ref.find_attn_run(cfg, [(1.5, "inf")], root=tmp_path, recipe=recipe)
    assert Path(got).name == "a-k16" and "capped" in ref.attn_note(got, 16)   # only a capped one: used, and named
    assert not ref.capped({"model": {"features_k": 16}}, 16, rank="6")     # a rank-6 target needs 6 features
    # one folder serves every target of a run: the capped one holding both of a run's targets beats an uncapped one
    # holding one (each target it lacks would have no attention term at all)
    (tmp_path / "a-k16" / "results.csv").write_text("alpha,rank\n1.5,inf\n1.0,inf\n")
    (tmp_path / "b-k64" / "SUPERSEDED.md").unlink(missing_ok=True)
    two = {**cfg, "alpha": [1.5, 1.0]}
    assert Path(ref.find_attn_run(two, [(1.5, "inf"), (1.0, "inf")], root=tmp_path, recipe=recipe)).name == "a-k16"
    assert Path(ref.find_attn_run(cfg, [(1.5, "inf")], root=tmp_path, recipe=recipe)).name == "b-k64"


# ---- stuck members: the nested models' control -----------------------------------------------------------------

def test_the_nesting_control_flags_a_stuck_member_and_leaves_a_noisy_sound_one_alone():
    import pandas as pd
    from jackson.rate_sweep.checks import OUTLIER_FACTOR, STUCK_FACTOR, outlier_factor, outliers
    assert outlier_factor("given") == STUCK_FACTOR < OUTLIER_FACTOR == outlier_factor("learned")
    # seed 0: m_h 2 ends 2.1x above m_h 1 (stuck); seed 1: m_h 3 ends 1.1x above m_h 2 (noise, sound)
    rows = pd.DataFrame({"seed": [0, 0, 0, 1, 1, 1], "m_h": [1, 2, 3, 1, 2, 3],
                         "test_mse": [4.7e-4, 1.0e-3, 8.2e-5, 4.7e-4, 1.5e-4, 1.65e-4]})
    got = outliers(rows, STUCK_FACTOR)
    assert [(o["m_h"], o["seed"]) for o in got] == [(2, 0)]
    assert got[0]["best_smaller"] == 4.7e-4
    assert outliers(rows) == []                                  # under the learned models' 3x it passes


def test_the_committed_reference_leaves_its_stuck_members_out():
    """given-k64-a1.5-rinf: both restarts of m_h 2 stuck in seeds 0 and 2 (read straight from results.csv);
    e_attn at m_h 2 is then seed 1's alone, every other m_h the median of all three seeds."""
    import pandas as pd
    from jackson.rate_sweep import references as ref
    folder = Path(__file__).resolve().parents[1] / "reports/jackson/given-k64-a1.5-rinf"
    res = pd.read_csv(folder / "results.csv")
    e = res.pivot(index="m_h", columns="seed", values="test_mse")
    assert e.loc[2, 0] > 2 * e.loc[1, 0] and e.loc[2, 2] > 1.3 * e.loc[1, 2] and e.loc[2, 1] < e.loc[1, 1]
    assert ref.attn_stuck(folder) == {(1.5, "inf"): [(2, 0), (2, 2)]}
    curve = ref.attn_curves(folder)[(1.5, "inf")]
    assert curve[2] == e.loc[2, 1]
    assert all(curve[m] == e.loc[m].median() for m in e.index if m != 2)
    note = ref.attn_note(str(folder), 16, "inf", ref.attn_stuck(folder)[(1.5, "inf")])
    assert note.startswith("features_k 64; stuck members left out") and "m_h 2 seed 0, m_h 2 seed 2" in note


def test_a_term_ratio_over_a_budget_member_is_named_an_upper_bound():
    from jackson.rate_sweep.terms import explain
    curve = [{"m_h": m, "test_median": 2e-5 / m, "test_mse": 2e-5 / m, "oracle_mse": 1e-3 / m,
              "oracle_self_exact_mse": 1.5e-5 / m} for m in (1, 2, 4, 8)]
    e_attn = {m: 1.6e-5 / m for m in (1, 2, 4, 8)}
    e_ff = {m: 1e-7 for m in (1, 2, 4, 8)}
    clean = explain(curve, e_ff, "ff", e_attn, "attn")
    assert "upper bound" not in clean["line"] and clean["budget"] == []
    bounded = explain(curve, e_ff, "ff", e_attn, "attn", budget=[4, 8, 16])     # 16: not a row, not named
    assert bounded["budget"] == [4, 8]
    assert "at m_h 4, 8 e_full holds a budget member" in bounded["line"] and "is an upper bound" in bounded["line"]


def test_the_cap_is_one_rule_for_the_pick_and_the_summary():
    from jackson.rate_sweep import references as ref
    from jackson.rate_sweep.summary_text import given_text
    assert ref.uncapped_to(64) == 32 and ref.uncapped_to(16, "6") == float("inf") and ref.uncapped_to(4, "6") == 2
    curve = [{"m_h": m} for m in range(1, 17)]
    assert "capped at m_h 9..16" in given_text({"features_k": 16, "rank": "inf", "curve": curve})
    assert "every term of this rank-6 target" in given_text({"features_k": 16, "rank": "6", "curve": curve})
    assert given_text({"features_k": 64, "rank": "inf", "curve": curve}).endswith("every m_h of this run.")
    for k, rank in ((16, "inf"), (64, "inf"), (16, "6"), (4, "6")):
        assert ref.capped({"model": {"features_k": k}}, 16, rank) == ("capped at" in given_text(
            {"features_k": k, "rank": rank, "curve": curve}))
