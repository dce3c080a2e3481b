"""A committed summary says what the code says of the numbers its folder stores: summary.md is the rendering of
summary.json, each rank-inf target's rate line is the one rate rule's judgement of that target, each finite-rank
target's knee line is the one knee rule's (and every finite-rank target of the format has one), and each cycled
target's count of who stopped, who was still falling and who stopped on a setback is what its own tables give.
A summary written by older code keeps its old words until its folder is rebuilt; these tests find it.  Summaries
of the format before the rules' values were recorded (no "rules" key) are held to one thing: none may decide a
claim (each is superseded, or of an attention the claims do not judge)."""
from __future__ import annotations

import glob
import json
from pathlib import Path

import pytest

from jackson.config import read_json
from jackson.hparams import fit_config
from jackson.rate_sweep.plots import folder_tables
from jackson.rate_sweep.knee_rule import judge as judge_knee
from jackson.rate_sweep.rate_rule import judge
from jackson.rate_sweep.summary import cycle_stops
from jackson.rate_sweep.summary_text import markdown

REPORTS = Path(__file__).resolve().parent.parent / "reports"
SUMMARIES = {Path(f).parent: read_json(Path(f))          # each read once: every test below reads from here
             for f in sorted(glob.glob(str(REPORTS / "jackson" / "*" / "summary.json")))}
CURRENT = [f for f, s in SUMMARIES.items() if "rules" in s]
OLDER = [f for f in SUMMARIES if f not in CURRENT]


def _as_stored(x):
    return json.loads(json.dumps(x, default=float))     # as summary.json holds it (keys as text, tuples as lists)


def test_the_committed_folders_are_found():
    assert len(CURRENT) >= 25 and {"fig1-sin-cycles", "default-sin", "fig1-sin"} <= {f.name for f in CURRENT}


@pytest.mark.parametrize("folder", CURRENT, ids=lambda f: f.name)
def test_summary_md_is_the_rendering_of_summary_json(folder):
    assert (folder / "summary.md").read_text() == markdown(SUMMARIES[folder]), (
        f"{folder.name}: summary.md is not what the code renders of summary.json (rebuild it by its command.txt)")


@pytest.mark.parametrize("folder", CURRENT, ids=lambda f: f.name)
def test_each_stored_rate_line_is_the_rate_rules_judgement_of_its_target(folder):
    for t in SUMMARIES[folder]["targets"]:
        if "rate" in t:
            again = judge({k: v for k, v in t.items() if k != "rate"})
            assert _as_stored(again) == t["rate"], f"{folder.name} alpha {t['alpha']}: the stored rate line is stale"


@pytest.mark.parametrize("folder", CURRENT, ids=lambda f: f.name)
def test_each_stored_knee_line_is_the_knee_rules_judgement_of_its_target(folder):
    for t in SUMMARIES[folder]["targets"]:
        if t["rank"] != "inf" and t.get("term", "full") == "full" and "knee_drop" in t["checks"]:
            assert "knee" in t, f"{folder.name} alpha {t['alpha']} rank {t['rank']}: no knee line (older code)"
            again = judge_knee({k: v for k, v in t.items() if k != "knee"})
            assert _as_stored(again) == t["knee"], f"{folder.name} alpha {t['alpha']} rank {t['rank']}: stale knee"


CYCLED = [f for f in CURRENT if "cycle_stops" in SUMMARIES[f]]


@pytest.mark.parametrize("folder", CYCLED, ids=lambda f: f.name)
def test_who_stopped_under_the_cycles_rule_is_what_the_folders_tables_give(folder):
    tabs, _ = folder_tables(folder)
    rows = tabs["rows"]
    for t in SUMMARIES[folder]["targets"]:
        meta = tabs["meta"][(t["alpha"], str(t["rank"]), t["m_ff"])]
        sel = rows[(rows.alpha == t["alpha"]) & (rows["rank"] == str(t["rank"])) & (rows.m_ff == t["m_ff"])]
        again = cycle_stops(sel, tabs["curve"], fit_config(meta["cell"]["fit"]))
        assert _as_stored(again) == t["cycle_stops"], f"{folder.name} alpha {t['alpha']} rank {t['rank']}: stale"


def test_a_summary_of_the_older_format_decides_no_claim():
    """No "rules" key: written before the rules' values were recorded.  Each such folder is superseded (the ledger
    leaves it out) or has no softmax target (Theorem 4.1's model), so its old words cannot reach a verdict."""
    assert OLDER, "no summary of the older format is left: this test can go"
    for f in OLDER:
        s = SUMMARIES[f]
        kinds = {t.get("attention", s.get("attention", "softmax")) for t in s["targets"]}
        assert (f / "SUPERSEDED.md").exists() or "softmax" not in kinds, f"{f.name}: an older summary could decide"
