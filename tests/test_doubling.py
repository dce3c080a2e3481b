"""The doubling check (jackson/rate_sweep/doubling.py): a member is converged when the same member trained with
twice the steps moves its training MSE by less than 10%, budget when it moves more, not checked without a partner.

Checked against the recorded curves themselves: the committed pair (default-sin seed 1 at 6,000 steps,
sin-12k-a1.5-rinf at 12,000) read straight from their rows.csv, and two tiny sweeps trained here at S and 2S."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from jackson.rate_sweep import doubling as d

ROOT = Path(__file__).resolve().parents[1]
BASE, PARTNER = ROOT / "reports/jackson/default-sin", ROOT / "reports/jackson/sin-12k-a1.5-rinf"


def test_rule_on_recorded_numbers():
    # flat: a member that moved 0.1% or 9.9% has stopped; one still falling 24% has not
    assert d.label(3.824e-4, 3.827e-4) == d.CONVERGED           # rose a little: flat
    assert d.label(1.0, 0.901) == d.CONVERGED
    assert d.label(1.0, 0.899) == d.BUDGET
    assert d.label(1.2915e-5, 9.767e-6) == d.BUDGET             # the card's m_h 12, seed 1
    for bad in (math.nan, math.inf, -1.0, None, "1e-5"):
        assert d.label(1e-5, bad) == d.NOT_CHECKED
        assert d.label(bad, 1e-5) == d.NOT_CHECKED
    assert d.label(0.0, 0.0) == d.NOT_CHECKED                   # no fall can be measured from zero
    assert "10%" in d.RULE and "2x" in d.RULE                   # the rule's text carries its numbers


def _independent(seed: int) -> pd.DataFrame:
    """The committed pair read straight from the two folders' results.csv: change of the training MSE."""
    a = pd.read_csv(BASE / "results.csv")
    b = pd.read_csv(PARTNER / "results.csv")
    a, b = a[a.seed == seed].set_index("m_h"), b[b.seed == seed].set_index("m_h")
    assert (a.init_seed == b.init_seed).all()                  # the same members, by init seed
    return 1 - b.train_mse / a.train_mse


def test_committed_pair_replayed():
    t = d.pair(BASE, PARTNER)
    ref = _independent(1)
    mine = t[(t.seed == 1) & t.chosen].set_index("m_h")
    assert len(mine) == 16
    for m_h, change in ref.items():
        assert mine.loc[m_h, "change"] == pytest.approx(change, rel=1e-5)
        assert mine.loc[m_h, "label"] == (d.CONVERGED if change < d.DOUBLING_TOL else d.BUDGET)
    # a curve still falling is not called converged (m_h 12..16 fall 23-28%), a flat one is (m_h 1: no change)
    assert set(mine.loc[12:16, "label"]) == {d.BUDGET}
    assert mine.loc[1, "label"] == d.CONVERGED and abs(mine.loc[1, "change"]) < 0.01
    # seeds 0 and 2 have no partner: not checked, never converged
    assert set(t[t.seed != 1].label) == {d.NOT_CHECKED}
    c = d.counts(t)
    assert c[d.NOT_CHECKED] == 32 and c[d.CONVERGED] + c[d.BUDGET] == 16


def test_committed_check_is_fresh():
    """The doubling.csv committed beside default-sin (and the card's) is what the rule gives today."""
    meta = json.loads((BASE / d.META).read_text())
    t = d.pair(BASE, *[(BASE / p).resolve() for p in meta["partners"]])
    kept = pd.read_csv(BASE / d.FILE, dtype={"rank": str})
    assert list(kept.label) == list(t.label)
    assert kept.change.fillna(0).tolist() == pytest.approx(t.change.astype(float).fillna(0).tolist(), rel=1e-5)
    assert meta["partners"] == ["../sin-12k-a1.5-rinf", "../card-12k-a1.5-rinf"] and meta["line"] == d.summary_line(t)
    table = d.labels(BASE)
    assert d.label_of(table, 1.5, "inf", 128, "full", 1, 16) == d.BUDGET
    assert d.label_of(table, 1.5, "inf", 128, "full", 2, 16) == d.NOT_CHECKED     # no seed-2 partner
    # the card (default-sin's seed-0 cell, the same key) against its 12,000-step partner, read straight from results.csv
    card = ROOT / "reports/jackson/sweep-a1.5-rinf"
    a, b = (pd.read_csv(ROOT / f"reports/jackson/{f}/results.csv") for f in ("sweep-a1.5-rinf", "card-12k-a1.5-rinf"))
    change = 1 - b.set_index("m_h").train_mse / a.set_index("m_h").train_mse
    labels = d.labels(card)
    for m_h, c in change.items():
        want = d.CONVERGED if c < d.DOUBLING_TOL else d.BUDGET
        assert d.label_of(labels, 1.5, "inf", 128, "full", 0, m_h) == want == d.label_of(table, 1.5, "inf", 128, "full", 0, m_h)


def test_labels_without_a_check(tmp_path):
    assert d.labels(tmp_path) == {}
    assert d.label_of({}, 1.5, "inf", 128, "full", 0, 3) == d.NOT_CHECKED
    (tmp_path / d.FILE).write_text("not,a\ntable,here\n")
    assert d.labels(tmp_path) == {}                             # unreadable evidence never labels a member


def _copy(src: Path, dst: Path, edit=None) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.png", "*.pdf", "blocks*", "learned_spectrum*",
                                                               "loss_curves*", "curve*"))
    if edit:
        for cj in dst.glob("cells/*/cell.json"):
            meta = json.loads(cj.read_text())
            edit(meta["cell"])
            cj.write_text(json.dumps(meta))
    return dst


def test_partner_must_differ_in_budget_alone(tmp_path):
    base = _copy(BASE, tmp_path / "base")
    other = _copy(PARTNER, tmp_path / "lr", edit=lambda c: c["fit"].update(lr=0.01))
    with pytest.raises(d.DoublingError, match=r"fit\.lr 0\.003 vs 0\.01"):
        d.pair(base, other)
    same = _copy(BASE, tmp_path / "same")
    with pytest.raises(d.DoublingError, match="need 12000"):
        d.pair(base, same)
    with pytest.raises(d.DoublingError, match="lr.* holds no member|holds no member"):
        d.pair(base, PARTNER, other)                            # every partner named must hold a member
    # cycles count in the budget: 6,000 steps x 2 cycles is twice 6,000 x 1
    cyc = _copy(BASE, tmp_path / "cyc", edit=lambda c: c["fit"].update(cycles=2))
    assert set(d.pair(base, cyc).label) == {d.CONVERGED}       # the same numbers: nothing moved


def test_command_refuses_in_one_line(tmp_path, capsys):
    base = _copy(BASE, tmp_path / "base")
    for f in (d.FILE, d.META):
        (base / f).unlink(missing_ok=True)
    assert d.main([str(base), str(tmp_path / "absent")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no cells/ folder" in err[0]
    assert not (base / d.FILE).exists()                         # nothing half-written
    assert d.main([str(base), str(PARTNER)]) == 0
    out = capsys.readouterr().out
    assert "7 budget" in out and "32 not checked of 48" in out
    # a check against another partner is not replaced; one that reads every earlier partner too is
    other = _copy(PARTNER, tmp_path / "other")
    assert d.main([str(base), str(other)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "records a check against" in err[0] and "not all among ../other" in err[0]
    kept = json.loads((base / d.META).read_text())["partners"]
    assert len(kept) == 1 and kept[0].endswith("reports/jackson/sin-12k-a1.5-rinf")
    assert d.main([str(base), str(PARTNER), str(other)]) == 0
    assert "7 budget" in capsys.readouterr().out           # the first partner holding a member pairs it
    t = pd.read_csv(base / d.FILE)
    assert set(t[t.label != d.NOT_CHECKED].partner) == {kept[0]}


def test_trained_pair_end_to_end(tmp_path):
    """Two tiny sweeps, S and 2S steps, the same in all else: every member pairs, labels follow the rule."""
    from jackson.rate_sweep.cli import sweep_main
    a, b = tmp_path / "s", tmp_path / "2s"
    assert sweep_main(["--quick", "--m-h", "1,2", "--steps", "10", "--threads", "1", "--out", str(a)]) == 0
    assert sweep_main(["--quick", "--m-h", "1,2", "--steps", "20", "--threads", "1", "--out", str(b)]) == 0
    t = d.pair(a, b)
    ra, rb = pd.read_csv(a / "results.csv"), pd.read_csv(b / "results.csv")
    assert len(t[t.chosen]) == len(ra)
    for r in t[t.chosen].itertuples():
        x = ra[(ra.m_h == r.m_h) & (ra.seed == r.seed)].train_mse.iloc[0]
        y = rb[(rb.m_h == r.m_h) & (rb.seed == r.seed)].train_mse.iloc[0]
        assert r.label == d.label(x, y) and r.label != d.NOT_CHECKED
