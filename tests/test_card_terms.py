"""The card's terms and the one rate rule: the exact tail sums every sigma_i up to K, the summary and the claims
ledger judge a rank-inf curve by the same rule, a knee or a rate with a missing piece of evidence never decides, and
the card's summary names the term of Eq. (17) that limits each m_h."""
from __future__ import annotations

import csv
import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.special import zeta

from jackson.rate_sweep import rate_rule
from jackson.rate_sweep.references import find_attn_run
from jackson.rates import bound_terms
from jackson.rate_sweep.summary import target_sigma
from jackson.rate_sweep.terms import explain

REPORTS = Path(__file__).resolve().parent.parent / "reports"


def _meta(alpha=1.5, k_max=4096, tail_tol=1e-6):
    from synthetic.pod_target import Spectrum
    sp = Spectrum(alpha=alpha, tail_tol=tail_tol, k_max=k_max)
    sig = sp.sigma()
    return {"cell": {"alpha": alpha, "rank": "inf", "c": 1.0, "tail_tol": tail_tol, "k_max": k_max, "sigma": [],
                     "kernel": ""},
            "target": {"K": len(sig), "tail_energy": sp.tail(len(sig))}, "sigma_head": sig[:64].tolist()}


@pytest.mark.parametrize("alpha", [1.0, 1.5])
def test_the_exact_tail_sums_every_sigma_up_to_K_and_past_it(alpha):
    """sum_{i > m} i^-2alpha in closed form (Hurwitz zeta): a tail that drops sigma_65..K misses ~1/(2 (2alpha-1) 64^(2alpha-1))."""
    meta = _meta(alpha)
    assert meta["target"]["K"] > 64                         # the case that went wrong: K = 707 at alpha 1.5
    sig = target_sigma(meta)
    assert len(sig) == meta["target"]["K"]
    ms = [1, 2, 4, 8, 16]
    rows = bound_terms(sig, alpha, 1.0, 1.0, 16, ms, tail_beyond=meta["target"]["tail_energy"])
    for r in rows:
        assert r["tail_energy"] == pytest.approx(float(zeta(2 * alpha, r["m_h"] + 1)), rel=1e-9)
    head_only = bound_terms(np.asarray(meta["sigma_head"]), alpha, 1.0, 1.0, 16, ms, tail_beyond=meta["target"]["tail_energy"])
    assert any(abs(h["tail_energy"] / float(zeta(2 * alpha, h["m_h"] + 1)) - 1) > 1e-3 for h in head_only)


def test_a_spectrum_that_does_not_match_the_stored_head_gives_no_tail():
    meta = _meta(1.5)
    meta["sigma_head"][3] *= 1.01                           # not the spectrum the cell trained on
    assert target_sigma(meta) is None


def _committed_sweeps():
    for summ in sorted((REPORTS / "jackson").glob("*/summary.json")):
        if (summ.parent / "SUPERSEDED.md").exists():
            continue
        s = json.loads(summ.read_text())
        for t in s.get("targets", []):
            if t.get("rank") == "inf" and t.get("rate"):
                yield summ.parent, t


def test_committed_power_law_tails_are_exact():
    checked = 0
    for folder, t in _committed_sweeps():
        if t.get("explicit") or t.get("kernel") or "c" in t:
            continue
        for b in t.get("bound") or []:
            assert b["tail_energy"] == pytest.approx(float(zeta(2 * t["alpha"], b["m_h"] + 1)), rel=1e-6), folder.name
            checked += 1
    assert checked > 0


def test_the_summary_and_the_ledger_agree_on_every_committed_folder():
    """The rate verdict a summary.json stores is the one rule recomputed, and the claims ledger's JL-rate rows say
    the same verdict for the folder they judge."""
    verdicts = {}
    for folder, t in _committed_sweeps():
        assert rate_rule.judge(t)["verdict"] == t["rate"]["verdict"], folder.name
        verdicts[(folder.name, float(t["alpha"]), t.get("activation", "gelu"), t.get("features", "learned"),
                  t.get("m_ff"))] = t["rate"]["verdict"]
    assert verdicts
    rows = list(csv.DictReader((REPORTS / "claims.csv").open()))
    compared = 0
    for row in rows:
        if not row["id"].startswith("JL-rate-") or not row["folder"].startswith("jackson/"):
            continue
        name = row["folder"].split("/", 1)[1]
        mine = {k: v for k, v in verdicts.items() if k[0] == name}
        if not mine:
            continue
        assert row["verdict"] in set(mine.values()), (row["id"], row["verdict"], mine)
        compared += 1
    assert compared >= 3


def t_range(measured, tail_by_m, lo=None, hi=None):
    ms = sorted(tail_by_m)
    return {"fit_m_h": ms, "exponents": {"test": {"slope": measured, "lo": measured - 0.02 if lo is None else lo,
                                                  "hi": measured + 0.02 if hi is None else hi}},
            "bound": [{"m_h": m, "tail_energy": v} for m, v in tail_by_m.items()], "checks": {"outliers": []}}


def test_the_rule_says_each_of_its_verdicts_and_names_what_is_missing():
    tail = {m: m ** -1.6 for m in (1, 2, 4, 8)}
    assert rate_rule.judge(t_range(-1.6, tail))["verdict"] == "reproduced"
    assert rate_rule.judge(t_range(-1.3, tail, -1.4, -1.2))["verdict"] == "partly"
    assert rate_rule.judge(t_range(-0.6, tail))["verdict"] == "not reproduced"
    flat = {m: m ** -0.1 for m in (1, 2, 4, 8)}
    assert rate_rule.judge(t_range(-0.1, flat))["verdict"] == "inconclusive"     # power: a flat reference
    gone = rate_rule.judge(t_range(-1.6, {1: 1.0, 2: 0.3, 4: float("nan"), 8: 0.03}))
    assert gone["verdict"] == "inconclusive" and "no exact tail" in gone["line"]
    t = t_range(-1.6, tail)
    t["exponents"]["test"]["slope"] = float("nan")
    assert rate_rule.judge(t)["verdict"] == "inconclusive" and "unreadable" in rate_rule.judge(t)["line"]


def test_an_optimisation_outlier_in_a_range_keeps_that_range_from_deciding():
    """Nested models: a member far above the best smaller m_h of its seed measures the optimiser.  Its range is
    inconclusive whichever way it would have read (here reproduced, then not reproduced), with d still shown; a range
    without it is judged; an absent or unreadable outlier check decides nothing either."""
    tail = {m: m ** -1.6 for m in (1, 2, 4, 8, 16)}
    t = t_range(-1.6, {m: tail[m] for m in (1, 2, 4, 8)})
    t["exponents_by_range"] = {"1..16": {"m_h": [1, 2, 4, 8, 16], "test": {"slope": -0.8, "lo": -0.82, "hi": -0.78}}}
    t["bound"] = [{"m_h": m, "tail_energy": v} for m, v in tail.items()]
    assert rate_rule.judge(t)["verdict"] == "partly"
    t["checks"]["outliers"] = [{"m_h": 16, "seed": 2, "test_mse": 7e-3, "best_smaller": 1e-4}]
    j = rate_rule.judge(t)
    # never better than the weakest promised range: 1..8 reproduced, 1..16 unresolved -> inconclusive, both named
    assert [r["verdict"] for r in j["ranges"]] == ["reproduced", "inconclusive"] and j["verdict"] == "inconclusive"
    assert "would read reproduced over m_h 1..8, but m_h 1..16 is inconclusive" in j["line"]
    assert j["ranges"][1]["d"] == pytest.approx(-0.8 + 1.6, abs=0.05)
    assert "would read not reproduced" in j["line"] and "m_h 16 seed 2 at 70x its best smaller m_h" in j["line"]
    t["checks"]["outliers"].append({"m_h": 2, "seed": 0, "test_mse": 1.0, "best_smaller": 0.1})
    j = rate_rule.judge(t)
    assert [r["verdict"] for r in j["ranges"]] == ["inconclusive", "inconclusive"] and j["verdict"] == "inconclusive"
    assert "2 optimisation outliers" in j["ranges"][1]["why"] and "would read reproduced" in j["ranges"][0]["why"]
    for broken in (None, "no", [{"m_h": 3, "seed": 0}], [{"m_h": "3", "seed": 0, "test_mse": 1.0, "best_smaller": 0.1}]):
        t["checks"] = {} if broken is None else {"outliers": broken}
        j = rate_rule.judge(t)
        assert j["verdict"] == "inconclusive" and "no readable optimisation-outlier check" in j["line"], broken


def test_a_range_of_one_m_h_says_so_and_decides_nothing():
    """A fit range holding one m_h (a run of m_h 4, 12, 16 with the fit range 1..8) has no slope: the line says that,
    not that a tail or an exponent is missing; the other range is still judged, and a range that cannot hold a slope
    is no promised range, so it does not hold the claim back."""
    tail = {m: m ** -1.6 for m in (4, 12, 16)}
    t = t_range(-1.6, {4: tail[4]})
    t["exponents"] = {}
    t["exponents_by_range"] = {"4..16": {"m_h": [4, 12, 16], "test": {"slope": -1.6, "lo": -1.7, "hi": -1.5}}}
    t["bound"] = [{"m_h": m, "tail_energy": v} for m, v in tail.items()]
    j = rate_rule.judge(t)
    assert [r["verdict"] for r in j["ranges"]] == ["inconclusive", "reproduced"] and j["verdict"] == "reproduced"
    assert j["ranges"][0]["why"] == "the range m_h 4..4 holds one m_h: no slope to fit"
    assert "no exact tail" not in j["line"] and "no measured exponent" not in j["line"]


def test_both_ranges_are_judged_and_a_second_range_can_make_it_partly():
    tail = {m: m ** -1.6 for m in (1, 2, 4, 8, 16)}
    t = t_range(-1.6, {m: tail[m] for m in (1, 2, 4, 8)})
    t["exponents_by_range"] = {"1..16": {"m_h": [1, 2, 4, 8, 16], "test": {"slope": -0.8, "lo": -0.82, "hi": -0.78}}}
    t["bound"] = [{"m_h": m, "tail_energy": v} for m, v in tail.items()]
    j = rate_rule.judge(t)
    assert [r["verdict"] for r in j["ranges"]] == ["reproduced", "not reproduced"] and j["verdict"] == "partly"
    assert "m_h 1..8" in j["line"] and "m_h 1..16" in j["line"]


def test_explain_names_the_limiting_term_at_every_m_h():
    curve = [{"m_h": m, "test_mse": e, "test_median": e, "oracle_mse": 1.0, "oracle_self_exact_mse": 0.5}
             for m, e in ((1, 1e-3), (2, 5e-4), (4, 2e-4), (8, 1.1e-4))]
    e_attn = {1: 9e-4, 2: 4e-4, 4: 8e-5, 8: 2e-5}
    e_ff = {1: 1e-5, 2: 2e-5, 4: 1e-4, 8: 1e-4}
    x = explain(curve, e_ff, "ff-folder", e_attn, "attn-folder")
    assert [r["limiting"] for r in x["rows"]] == ["attention", "attention", "both", "feed-forward"]
    assert [round(r["ratio"], 3) for r in x["rows"]] == [round(1e-3 / 9.1e-4, 3), round(5e-4 / 4.2e-4, 3),
                                                         round(2e-4 / 1.8e-4, 3), round(1.1e-4 / 1.2e-4, 3)]
    assert "the attention term at m_h 1..2" in x["line"] and "e_FF at m_h 8" in x["line"]
    assert "e_attn from attn-folder" in x["line"] and "e_FF from ff-folder" in x["line"]
    only = explain(curve, e_ff, "ff-folder")          # no attention term measured: the stand-in is named
    assert "the attention term alone is not measured" in only["line"]


def test_find_attn_run_matches_the_target_not_the_model(tmp_path):
    cfg = {"construction": "", "phi": "sin", "psi": "sin", "F": "identity", "f": "identity", "tau": 16,
           "tail_tol": 1e-6, "k_max": 4096, "n_train": 16384, "n_test": 4096, "quick": False,
           "model": {"features": "learned", "activation": "sin"}, "term": "full"}
    def make(name, **over):
        f = tmp_path / name
        f.mkdir()
        other = {**cfg, **over}
        (f / "config.json").write_text(json.dumps(other))
        (f / "results.csv").write_text("alpha,rank,m_h,seed,test_mse\n1.5,inf,1,0,0.1\n")
        (f / "summary.json").write_text("{}")
        return str(f)
    assert find_attn_run(cfg, [(1.5, "inf")], tmp_path) == ""
    make("a-learned")                                                        # learned features: not the attention term
    given = make("b-given", model={"features": "given", "activation": "gelu"}, construction="paper", phi=None, psi=None)
    make("c-other-tau", model={"features": "given"}, tau=32)
    assert find_attn_run(cfg, [(1.5, "inf")], tmp_path) == given             # paper = (sin, sin); the FFN class differs
    assert find_attn_run(cfg, [(1.0, "inf")], tmp_path) == ""                # another target
    assert find_attn_run({**cfg, "construction": "trace-free"}, [(1.5, "inf")], tmp_path) == ""


def test_find_attn_run_prefers_the_given_features_recipe(tmp_path):
    """Of two folders measuring the same attention term, the one trained with the recipe the sweep names (GIVEN's:
    the lower error, so the better estimate of the term's infimum) comes first, whatever the names; without such a
    folder, the first by name."""
    from jackson.rate_sweep.config import GIVEN_RECIPE
    cfg = {"construction": "paper", "F": "identity", "f": "identity", "tau": 16, "tail_tol": 1e-6, "k_max": 4096,
           "n_train": 16384, "n_test": 4096, "quick": False, "model": {"features": "learned"}, "term": "full",
           "fit": {"steps": 6000, "batch_size": 64, "lr": 3e-3}, "restarts": 1}
    def make(name, **over):
        f = tmp_path / name
        f.mkdir()
        (f / "config.json").write_text(json.dumps({**cfg, "model": {"features": "given"}, **over}))
        (f / "results.csv").write_text("alpha,rank,m_h,seed,test_mse\n1.5,inf,1,0,0.1\n")
        (f / "summary.json").write_text("{}")
        return str(f)
    own = make("a-given-full-recipe")
    assert find_attn_run(cfg, [(1.5, "inf")], tmp_path, recipe=GIVEN_RECIPE) == own        # the only one
    fit, restarts = GIVEN_RECIPE
    older = {k: v for k, v in dataclasses.asdict(fit).items() if k != "check_steps"}   # written before that field
    tuned = make("b-given", fit=older, restarts=restarts)
    assert find_attn_run(cfg, [(1.5, "inf")], tmp_path, recipe=GIVEN_RECIPE) == tuned
    assert find_attn_run(cfg, [(1.5, "inf")], tmp_path) == own                              # no recipe named: by name


def test_knee_never_decides_on_a_missing_piece(tmp_path):
    from jackson.lab_report.claims import CLAIMS, judge_claim
    from jackson.verdict import find_runs
    BY_ID = {c.id: c for c in CLAIMS}

    def sweep(curve, per_seed, drop, oracle=True, n=None):
        t = {"alpha": 1.0, "rank": "2", "m_ff": 128, "n_seeds": n or len(per_seed) or 1, "features": "learned",
             "checks": {"knee_per_seed": per_seed, "knee_drop": drop, "outliers": []},
             "curve": [{"m_h": m, "test_mse": e, "test_median": e,
                        **({"oracle_mse": 1.0 if m == 1 else 0.0} if oracle else {})} for m, e in curve.items()]}
        f = tmp_path / "jackson" / "k"
        f.mkdir(parents=True, exist_ok=True)
        (f / "config.json").write_text(json.dumps({"seeds": [0, 1, 2], "quick": False}))
        (f / "command.txt").write_text("cmd\n")
        (f / "summary.json").write_text(json.dumps({"attention": "softmax", "features": "learned", "targets": [t]}))
        return judge_claim(BY_ID["JL-knee-a1-r2"], find_runs(tmp_path))
    flat = {1: 1e-2, 2: 5e-3, 3: 5e-3}
    r = sweep(flat, [2.0, 2.0, 2.0], 2.0, oracle=False)                   # no power reference: cannot tell
    assert r.verdict == "inconclusive" and "power reference" in r.measured
    assert sweep(flat, [2.0, 2.0, 2.0], 2.0).verdict == "not reproduced"  # with it (1.0 >> 10 x 5e-3): a failure
    perfect = sweep({1: 1e-2, 2: 0.0, 3: 0.0}, [math.inf] * 3, math.inf)    # error exactly 0 past r: a perfect knee
    assert perfect.verdict == "reproduced"
    nan = sweep({1: 1e-2, 2: 1e-6, 3: float("nan")}, [1e4] * 3, 1e4)      # m_h 3 could have climbed back
    assert nan.verdict == "inconclusive" and "unreadable error at m_h 3" in nan.measured
    assert "would read reproduced" in nan.measured
    absent = sweep({1: 1e-2, 2: 1e-6}, [1e4], 1e4, n=3)                    # 2 of 3 seeds not measured: never decides
    assert absent.verdict == "inconclusive" and "2 of 3 seeds have no readable knee" in absent.measured
    unread = sweep({1: 1e-2, 2: 1e-6, 3: 1e-6}, [1e4], "NaN")
    assert unread.verdict == "inconclusive" and "unreadable" in unread.measured


def test_per_seed_knee_keeps_a_perfect_knee():
    import pandas as pd
    from jackson.rate_sweep.checks import per_seed_knee
    rows = pd.DataFrame({"seed": [0, 0, 1, 1], "m_h": [1, 2, 1, 2], "test_mse": [1e-2, 0.0, 1e-2, 1e-4]})
    assert per_seed_knee(rows, 2) == [math.inf, 100.0]


def _order_folder(root, targets):
    f = root / "jackson" / "o"
    f.mkdir(parents=True, exist_ok=True)
    (f / "config.json").write_text(json.dumps({"seeds": [0, 1], "quick": False}))
    (f / "command.txt").write_text("cmd\n")
    (f / "summary.json").write_text(json.dumps({"attention": "softmax", "features": "given", "fit_range": [1, 4],
                                                "targets": targets}))
    from jackson.lab_report.claims import CLAIMS, judge_claim
    from jackson.verdict import find_runs
    by_id = {c.id: c for c in CLAIMS}
    return lambda cid: judge_claim(by_id[cid], find_runs(root))


def _t(alpha, rank, curve, slope=None, tail=True):
    d = {"alpha": alpha, "rank": rank, "m_ff": 128, "n_seeds": 2, "features": "given",
         "curve": [{"m_h": m, "test_mse": e, "oracle_mse": 0.0 if rank != "inf" and m >= int(rank) else 1.0 / m}
                   for m, e in curve.items()], "checks": {"outliers": []}}
    if slope is not None:
        d["exponents"] = {"test": {"slope": slope, "lo": slope - 0.05, "hi": slope + 0.05}}
        d["fit_m_h"] = [1, 2, 4]
        d["bound"] = [{"m_h": m, "tail_energy": m ** -(2 * alpha - 1)} for m in (1, 2, 4)] if tail else []
    return d


def test_rank_order_with_an_unreadable_error_names_it_and_never_reproduces(tmp_path):
    judge = _order_folder(tmp_path, [_t(1.0, "2", {1: 1e-2, 2: float("nan"), 4: 0.0}),
                                     _t(1.0, "inf", {1: 2e-2, 2: 1e-2, 4: 5e-3})])
    r = judge("JL-fig1-rank")
    assert r.verdict == "inconclusive" and "unreadable" in r.measured and "2 of 2 comparisons hold" in r.measured
    judge = _order_folder(tmp_path, [_t(1.0, "2", {1: "n/a", 2: float("nan")}), _t(1.0, "inf", {1: "x", 2: None})])
    r = judge("JL-fig1-rank")
    assert r.verdict == "inconclusive" and "no comparison can be made" in r.measured


@pytest.mark.parametrize("bad, cause", [
    ({"tail": False}, "no readable exact tail"),                  # the reference absent: never the asymptotic line instead
    ({"slope": float("nan")}, "no readable exponent"),
])
def test_alpha_order_with_a_missing_reference_or_exponent_cannot_tell(tmp_path, bad, cause):
    a1 = _t(1.0, "inf", {1: 2e-2, 2: 1e-2, 4: 5e-3}, -1.0)
    a15 = _t(1.5, "inf", {1: 2e-2, 2: 5e-3, 4: 1e-3}, -2.0, tail=bad.get("tail", True))
    if "slope" in bad:
        a15["exponents"]["test"]["slope"] = bad["slope"]
    r = _order_folder(tmp_path, [a1, a15])("JL-fig1-alpha")
    assert r.verdict == "inconclusive" and cause in r.measured
    reversed_ = _t(1.5, "inf", {1: 2e-2, 2: 5e-3, 4: 1e-3}, -0.5)       # a readable pair already reversed decides
    third = _t(0.75, "inf", {1: 2e-2, 2: 1e-2, 4: 5e-3}, -0.6, tail=False)
    assert _order_folder(tmp_path, [a1, reversed_, third])("JL-fig1-alpha").verdict == "not reproduced"


def test_a_span_where_only_the_attention_term_is_measured_and_small_names_no_term():
    """e_attn under SHARE_LIMIT of e_full and no e_FF run: the line says no term is named there and why, never
    'limited by not measured'."""
    from jackson.rate_sweep.terms import SHARE_LIMIT, explain
    curve = [{"m_h": m, "test_mse": e, "oracle_mse": 1e-3} for m, e in [(1, 1e-4), (2, 5e-5), (3, 5e-5)]]
    out = explain(curve, None, "", {1: 9e-5, 2: 1e-5, 3: 1e-5}, "given")
    assert [r["limiting"] for r in out["rows"]] == ["attention", "not measured", "not measured"]
    assert 9e-5 >= SHARE_LIMIT * 1e-4 and 1e-5 < SHARE_LIMIT * 5e-5   # the made-up numbers sit on either side of the rule
    assert "limited by the attention term at m_h 1 " in out["line"]
    assert "no term named at m_h 2..3" in out["line"] and "by not measured" not in out["line"]
    assert "the feed-forward term is not measured for this target" in out["line"]


def test_the_line_counts_the_m_h_where_e_full_is_within_the_cards_factor_of_the_sum():
    """WITHIN (1.5) either side: ratios 1.0 and 1.22 are within, 0.4 (1/2.5) is not, and the line names its m_h."""
    from jackson.rate_sweep.terms import WITHIN, explain
    curve = [{"m_h": m, "test_mse": e, "oracle_mse": 1e-3} for m, e in [(1, 4e-5), (2, 5e-5), (3, 5e-5)]]
    out = explain(curve, {1: 1e-5, 2: 4e-5, 3: 4e-5}, "ff", {1: 9e-5, 2: 1e-5, 3: 1e-6}, "given")
    ratios = [r["ratio"] for r in out["rows"]]
    assert ratios == pytest.approx([0.4, 1.0, 5e-5 / 4.1e-5])
    assert WITHIN == 1.5 and out["within"] == {"factor": 1.5, "n": 3, "outside_m_h": [1]}
    assert "within 1.5x at 2 (not at m_h 1);" in out["line"]


def test_a_full_model_beyond_the_factor_below_the_attention_term_is_said_to_beat_it():
    """e_full / e_attn 0.5 and 0.6 lie beyond 1/WITHIN (0.667): the line names those m_h and says the measured
    attention term is no floor there; 0.8 and 1.1 do not; the rule's limiting term is unchanged."""
    from jackson.rate_sweep.terms import WITHIN, below_attention, span_text
    attn = {1: 1e-3, 2: 1e-3, 3: 1e-3, 4: 1e-3, 5: 1e-3}
    curve = [{"m_h": m, "test_mse": e, "oracle_mse": 1e-2} for m, e in [(1, 0.8e-3), (2, 0.5e-3), (3, 0.6e-3), (4, 1.1e-3),
                                                                        (5, 0.5e-3)]]
    assert 0.6 < 1 / WITHIN < 0.8
    out = explain(curve, None, "", attn, "given")
    assert [r["limiting"] for r in out["rows"]] == ["attention"] * 5
    assert out["below_attention"]["m_h"] == [2, 3, 5]
    assert "below the attention term alone at m_h 2..3, 5 (e_full / e_attn 0.50-0.60" in out["line"]
    assert "no floor there" in out["line"]
    assert below_attention(explain(curve[:1] + curve[3:4], None, "", attn, "given")["rows"]) is None
    assert span_text([1, 2, 3, 7, 9, 10]) == "1..3, 7, 9..10" and span_text([4]) == "4"
    from jackson.rate_sweep.summary_text import terms_short
    assert terms_short(out).endswith("below the attention term alone at m_h 2..3, 5")


def _committed_terms():
    import glob
    from jackson.config import read_json
    for f in sorted(glob.glob(str(REPORTS / "jackson" / "*" / "summary.json"))):
        s = read_json(Path(f))
        for t in s.get("targets", []):
            if t.get("terms", {}).get("rows"):
                yield Path(f).parent.name, t


def test_every_committed_terms_line_is_what_the_code_says_of_its_stored_numbers():
    """A summary built by older code keeps its old words: recompute each committed folder's Eq. (17) line from the
    numbers the folder stores (its curve and the reference terms per m_h) and compare it with the line it shows."""
    seen = 0
    for name, t in _committed_terms():
        tm = t["terms"]
        e_attn = {r["m_h"]: r["e_attn"] for r in tm["rows"] if r.get("e_attn") is not None}
        e_ff = {r["m_h"]: r["e_ff"] for r in tm["rows"] if r.get("e_ff") is not None}
        again = explain(t["curve"], e_ff, tm["folder"], e_attn, tm["attn_folder"], tm.get("attn_note", ""),
                        tm.get("budget", ()))
        assert again["line"] == tm["line"], f"{name} alpha {t['alpha']} rank {t['rank']}: summary.json's terms line is stale"
        seen += 1
    assert seen >= 20
