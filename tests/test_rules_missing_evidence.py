"""Missing or unreadable evidence never decides: for each rule of Figs. 2-3 and Table 1 (ViT), Tables 2-3 and App. D.3
(RNN vs Transformer), App. B.1 and Yang et al., a hand-made folder whose evidence is complete gives the rule's
decisive verdict, and the same folder with one piece dropped or made unreadable (a seed, a value, the control, a
count the run states) gives "inconclusive" -- the line saying what the rest would read and naming the piece.  A
rule given a malformed summary, config or table returns an Outcome, never raises.

The folders are built with test_rule_evidence's helpers (the files each rule reads, with numbers whose verdict is
known); `edit` changes one file of a folder built by them.
"""
from __future__ import annotations

import csv as _csv
import io
import json
from pathlib import Path

import pytest

from jackson import evidence
from jackson.lab_report.claims import CLAIMS, judge_claim
from jackson.verdict import INCONCLUSIVE, NOT_REPRODUCED, PARTLY, REPRODUCED, UNTESTED, call_rule, find_runs, rules
from test_rule_evidence import (AS_INIT, ED, GROWS, LOCAL, STEEP, arms, b1, cot, csv, d3, decay, need, permute,
                                results, sweep, uniform)

BY_ID = {c.id: c for c in CLAIMS}
NAN = float("nan")


def only(root: Path) -> Path:
    """The one run folder under root."""
    (run,) = find_runs(root)
    return run.path


def edit(root: Path, name: str, change) -> None:
    """Change one file of the folder under root: a JSON file through change(dict), a CSV through change(rows) on its
    rows as dicts (the header kept)."""
    p = only(root) / name
    if name.endswith(".json"):
        d = json.loads(p.read_text())
        change(d)
        p.write_text(json.dumps(d))
        return
    rows = list(_csv.DictReader(io.StringIO(p.read_text())))
    head = list(rows[0])
    rows = change(rows)
    out = io.StringIO()
    w = _csv.DictWriter(out, head)
    w.writeheader()
    w.writerows(rows)
    p.write_text(out.getvalue())


def drop(key):
    return lambda d: d.pop(key)


def cells(root: Path, summ: dict, seeds=(0, 1), dims=(32, 64, 128, 256), less=()):
    """results.csv of a cot-dp folder whose accuracies give the summary's smallest D (0.95 at D >= min_d, else
    0.3), one row per seed; `less`: (task, model, size, D, seed) rows left out."""
    rows = [(t, z, m, d, sd, 0.95 if dd is not None and d >= dd else 0.3)
            for t, by in summ.items() for m, e in by.items() for z, dd in zip(e["sizes"], e["min_d"])
            for d in dims for sd in seeds if (t, m, z, d, sd) not in less]
    csv(only(root) / "results.csv", "task,size,model,d_model,seed,accuracy", rows)
    edit(root, "config.json", lambda c: c.update(seeds=list(seeds)))


def fit_results(root: Path, mh=(1, 2, 4, 8), seeds=(0, 1), less=(), nan=()):
    """results.csv of a vit-probe sweep-mh folder: a training loss per (m_h, seed); `less`: (m_h, seed) rows left out,
    `nan`: (m_h, seed) rows whose loss is NaN."""
    csv(only(root) / "results.csv", "m_h,seed,train_loss_eval",
        [(m, s, "nan" if (m, s) in nan else 1.0 / m + 1.0) for m in mh for s in seeds if (m, s) not in less])
    edit(root, "config.json", lambda c: c.update(mh=list(mh)))


def control_counts(heads: int, inits: int):
    return lambda s: s.update(control={"inits": inits, "heads": heads})


def then(*steps):
    """One folder built in steps: each a function of the root."""
    def build(root):
        for step in steps:
            step(root)
    return build


# ---- the cases: (claim, what, folder, verdict, words the line holds) ---------------------------------------------

ROWS3 = [("original", "rnn"), ("permuted", "rnn"), ("original", "transformer"), ("permuted", "transformer")]
FLOPS = [("standard", 2, 0.01), ("linear", 2, 0.02), ("standard", 3, 0.03), ("linear", 3, 0.05)]

CASES = [
    # App. B.1
    ("JL-B1-nearest-point", "complete", lambda r: b1(r), REPRODUCED, ["3 of 3 measured seeds"]),
    ("JL-B1-nearest-point", "a seed NaN", lambda r: b1(r, mass=(0.95, NAN, 0.97)), INCONCLUSIVE,
     ["would read reproduced (", "attention mass on the support, seed 1 is unreadable (NaN)"]),
    ("JL-B1-nearest-point", "a seed a word, not reproduced otherwise",
     lambda r: b1(r, mass=(0.3, 0.2, 0.3), fof=(2.0, "x", 4.0)), INCONCLUSIVE,
     ["would read not reproduced (", "relative MSE, seed 1 is unreadable (not a number"]),
    ("JL-B1-nearest-point", "the seeds list absent", then(lambda r: b1(r), lambda r: edit(r, "summary.json", drop("seeds"))),
     INCONCLUSIVE, ["would read reproduced (",
                    "the folder's seeds list (summary.json's seeds, else config.json's) is absent"]),
    ("JL-B1-nearest-point", "the seeds list from config.json",
     then(lambda r: b1(r), lambda r: edit(r, "summary.json", drop("seeds")),
          lambda r: edit(r, "config.json", lambda c: c.update(train={"seeds": [0, 1, 2]}))), REPRODUCED, []),
    ("JL-B1-nearest-point", "the seeds list unreadable", lambda r: b1(r, seeds=[0, NAN, 2]), INCONCLUSIVE,
     ["would read reproduced (", "seeds list", "is unreadable"]),
    ("JL-B1-nearest-point", "the control absent (the lab's untested)", lambda r: b1(r, control=None), UNTESTED,
     ["the control (uniform attention's mass on the support, summary.json's control) is absent"]),
    # Tables 2-3, alteration
    ("JL-tab2-ordering", "complete", lambda r: results(r, arms()), REPRODUCED, ["rnn x1e+06 (drop"]),
    ("JL-tab2-ordering", "a control seed NaN", lambda r: results(r, arms(transformer_original=[1e-3, NAN, 1.2e-3])),
     INCONCLUSIVE, ["would read reproduced (", "transformer original arm (control): seed 1: test_mse is unreadable (NaN)"]),
    ("JL-tab2-ordering", "a seed absent from every arm (config.json states a count)",
     lambda r: results(r, {k: v[:2] for k, v in arms().items()}),
     INCONCLUSIVE, ["would read reproduced (", "results.csv holds 2 of the 3 seeds config.json states"]),
    ("JL-tab2-ordering", "a row dropped from one arm",
     then(lambda r: results(r, arms()), lambda r: edit(r, "results.csv", lambda rows: [
         x for x in rows if (x["alteration"], x["model"], x["seed"]) != ("permuted", "rnn", "2")])),
     INCONCLUSIVE, ["would read reproduced (", "rnn permuted arm (evidence): no row in results.csv for seed 2 "
                                                "(the other arms' seeds)"]),
    ("JL-tab2-ordering", "fewer seeds than config.json lists",
     then(lambda r: results(r, arms()), lambda r: edit(r, "config.json", lambda c: c.update(seeds=[0, 1, 2, 3]))),
     INCONCLUSIVE, ["no row in results.csv for seed 3 (config.json's seeds)"]),
    ("JL-tab2-ordering", "a seed label absent",
     then(lambda r: results(r, arms()), lambda r: edit(r, "results.csv", lambda rows: [
         {**x, "seed": ""} if (x["alteration"], x["model"], x["seed"]) == ("original", "rnn", "0") else x for x in rows])),
     INCONCLUSIVE, ["rnn original arm (control): a row whose seed is absent or unreadable"]),
    ("JL-tab2-ordering", "not reproduced, a seed NaN",
     lambda r: results(r, arms(rnn_permuted=[1e-8, 1.1e-8, NAN], transformer_permuted=[1e-1, 1.1e-1, 1.2e-1])),
     INCONCLUSIVE, ["would read not reproduced ("]),
    # Table 3, gap
    ("JL-tab3-gap", "complete", lambda r: uniform(r), REPRODUCED, ["(>= 10x)"]),
    ("JL-tab3-gap", "a control seed NaN", lambda r: uniform(r, transformer_permuted=(5e-4, NAN, 7e-4)), INCONCLUSIVE,
     ["would read reproduced (", "transformer permuted arm (evidence): seed 1: test_mse is unreadable (NaN)"]),
    ("JL-tab3-gap", "a row dropped",
     then(lambda r: uniform(r), lambda r: edit(r, "results.csv", lambda rows: rows[:-1])), INCONCLUSIVE,
     ["would read reproduced (", "no row in results.csv for seed 2"]),
    # App. D.3: no seeds, every input already refused when absent
    ("JL-D3-mixing-rank", "complete", lambda r: d3(r), REPRODUCED, ["rank 2 -> 3"]),
    ("JL-D3-mixing-rank", "the control absent", lambda r: d3(r, drop=("rank_before",)), UNTESTED,
     ["the control's rank (summary.json's rank_before) is absent"]),
    # Fig. 2, vit_decay
    ("JL-fig2-decay", "complete", lambda r: decay(r, [STEEP, STEEP]), REPRODUCED, ["training made 2 of 2 heads"]),
    ("JL-fig2-decay", "complete with the summary's counts",
     then(lambda r: decay(r, [STEEP, STEEP]), lambda r: edit(r, "summary.json", control_counts(2, 2))), REPRODUCED, []),
    ("JL-fig2-decay", "a head's exponent NaN", lambda r: decay(r, [STEEP, (NAN, -2.5, True)]), INCONCLUSIVE,
     ["would read reproduced (1 heads:", "layer 0 head 1: exponent is unreadable (NaN)"]),
    ("JL-fig2-decay", "the control's exponents absent (init_heads.csv gone)",
     then(lambda r: decay(r, [STEEP]), lambda r: (only(r) / "init_heads.csv").unlink()), INCONCLUSIVE,
     ["would read reproduced (", "init_heads.csv (the control's exponents) is absent or empty"]),
    ("JL-fig2-decay", "an init exponent NaN", lambda r: decay(r, [STEEP], init=(-2.2, NAN)), INCONCLUSIVE,
     ["would read reproduced (", "init_heads.csv init 1 layer 0: exponent is unreadable (NaN)"]),
    ("JL-fig2-decay", "an init without the head's layer",
     then(lambda r: decay(r, [STEEP]), lambda r: edit(r, "init_heads.csv", lambda rows: [
         {**x, "layer": "1"} if x["init"] == "1" else x for x in rows])), INCONCLUSIVE,
     ["init_heads.csv has no readable exponent of layer 0 at init 1"]),
    ("JL-fig2-decay", "the flag disagrees with the control", lambda r: decay(r, [(-2.0, -1.9, True)]), INCONCLUSIVE,
     ["would read partly (", "heads.csv's steeper_than_init reads True, init_heads.csv gives False"]),
    ("JL-fig2-decay", "fewer heads than the summary states",
     then(lambda r: decay(r, [STEEP]), lambda r: edit(r, "summary.json", control_counts(16, 2))), INCONCLUSIVE,
     ["heads.csv holds 1 heads, summary.json's control 16"]),
    ("JL-fig2-decay", "fewer inits than the summary states",
     then(lambda r: decay(r, [STEEP]), lambda r: edit(r, "summary.json", control_counts(1, 3))), INCONCLUSIVE,
     ["init_heads.csv holds 2 inits, summary.json's control 3"]),
    ("JL-fig2-decay", "not reproduced, a head unreadable", lambda r: decay(r, [(-0.3, -0.2, False), (-0.3, "x", False)]),
     INCONCLUSIVE, ["would read not reproduced ("]),
    ("JL-fig2-decay", "partly, a head unreadable", lambda r: decay(r, [STEEP, AS_INIT, (-2.0, -1.9, "")]),
     INCONCLUSIVE, ["would read partly (", "layer 0 head 2: steeper_than_init is absent"]),
    # Fig. 3(a), vit_converge
    ("JL-fig3a-converge", "complete", lambda r: sweep(r), REPRODUCED, ["each seed alone 0.05, 0.05"]),
    ("JL-fig3a-converge", "a seed of config.json without a spectrum",
     then(lambda r: sweep(r), lambda r: edit(r, "config.json", lambda c: c.update(seeds=[0, 1, 2]))), INCONCLUSIVE,
     ["would read reproduced (", "no spectrum at m_h 4 and 8 in spectra.csv for seed 2 (config.json's seeds)"]),
    ("JL-fig3a-converge", "a seed without one of the two m_h",
     then(lambda r: sweep(r, spectra=(0.05, 0.05, 0.05)), lambda r: edit(r, "spectra.csv", lambda rows: [
         x for x in rows if (x["seed"], x["m_h"]) != ("2", "8")])), INCONCLUSIVE,
     ["would read reproduced (", "seed 2: no spectrum at m_h 8"]),
    ("JL-fig3a-converge", "not reproduced, a seed NaN", lambda r: sweep(r, last=0.2, spectra=(0.2, 0.2, NAN)),
     INCONCLUSIVE, ["would read not reproduced (", "seed 2, m_h 4, sigma_2 is unreadable (NaN)"]),
    # Fig. 3(b), vit_fit
    ("JL-fig3b-fit", "complete", then(lambda r: sweep(r), lambda r: fit_results(r)), REPRODUCED, ["identified"]),
    ("JL-fig3b-fit", "a seed short at an m_h", then(lambda r: sweep(r), lambda r: fit_results(r, less=((8, 1),))),
     INCONCLUSIVE, ["would read reproduced (", "no row at m_h 8 in results.csv for seed 1 (config.json's seeds)"]),
    ("JL-fig3b-fit", "a training loss NaN", then(lambda r: sweep(r), lambda r: fit_results(r, nan=((4, 0),))),
     INCONCLUSIVE, ["results.csv m_h 4 seed 0: train_loss_eval is unreadable (NaN)"]),
    ("JL-fig3b-fit", "an m_h of config.json with no row",
     then(lambda r: sweep(r), lambda r: fit_results(r),
          lambda r: edit(r, "config.json", lambda c: c.update(mh=[1, 2, 4, 8, 16]))),
     INCONCLUSIVE, ["results.csv has no row at m_h 16 (config.json's mh)"]),
    ("JL-fig3b-fit", "partly, a seed short",
     then(lambda r: sweep(r, fit={"gamma": 0.6}), lambda r: fit_results(r, less=((1, 0),))),
     INCONCLUSIVE, ["would read partly ("]),
    # Table 1 (ViT): every input already refused when absent
    ("JL-tab1-vit", "complete", lambda r: permute(r), REPRODUCED, ["d = -0.0050"]),
    ("JL-tab1-vit", "the control absent", lambda r: permute(r, control=None), UNTESTED,
     ["the control arm's accuracy (summary.json's control) is absent"]),
    # Yang et al. Fig. 1
    ("Y-fig1-arithmetic", "complete", lambda r: cot(r, {"arithmetic": GROWS}), REPRODUCED, ["5 of 5 parts hold"]),
    ("Y-fig1-arithmetic", "complete with 2 seeds",
     then(lambda r: cot(r, {"arithmetic": GROWS}), lambda r: cells(r, {"arithmetic": GROWS})), REPRODUCED, []),
    ("Y-fig1-arithmetic", "a size one model lacks",
     lambda r: cot(r, {"arithmetic": {**GROWS, "sparse": need([2], [64])}}), INCONCLUSIVE,
     ["would read partly (", "summary.json's arithmetic sparse has no entry at size 3"]),
    ("Y-fig1-arithmetic", "a seed a cell lacks",
     then(lambda r: cot(r, {"arithmetic": GROWS}),
          lambda r: cells(r, {"arithmetic": GROWS}, less={("arithmetic", "linear", 3, 256, 1)})), INCONCLUSIVE,
     ["would read reproduced (", "results.csv has no row for seed 1 at 1 cell (arithmetic linear size 3 D 256)"]),
    ("Y-fig1-arithmetic", "a cell results.csv lacks",
     then(lambda r: cot(r, {"arithmetic": GROWS}),
          lambda r: cells(r, {"arithmetic": {k: GROWS[k] for k in ("standard", "sparse")}})),
     INCONCLUSIVE, ["results.csv has no cell of arithmetic linear size 2, arithmetic linear size 3"]),
    ("Y-fig1-arithmetic", "several seeds, no per-seed accuracy",
     then(lambda r: cot(r, {"arithmetic": GROWS}), lambda r: edit(r, "config.json", lambda c: c.update(seeds=[0, 1, 2]))),
     INCONCLUSIVE, ["results.csv holds no cell of arithmetic (the per-seed accuracies of the folder's 3 seeds)"]),
    # Yang et al. Table 2
    ("Y-tab2-flops", "complete", lambda r: cot(r, {}, gflops=FLOPS), REPRODUCED, ["2 of 2 judged sizes"]),
    ("Y-tab2-flops", "a competitor's row absent at a size", lambda r: cot(r, {}, gflops=FLOPS[:3]), INCONCLUSIVE,
     ["would read reproduced (", "min_gflops.csv has no row for linear at L 30"]),
    ("Y-tab2-flops", "the standard model's row absent at a size", lambda r: cot(r, {}, gflops=FLOPS[:2] + FLOPS[3:]),
     INCONCLUSIVE, ["min_gflops.csv has no row for standard at L 30"]),
    ("Y-tab2-flops", "a value NaN", lambda r: cot(r, {}, gflops=FLOPS[:3] + [("linear", 3, NAN)]), INCONCLUSIVE,
     ["would read reproduced (", "L 30 could not be measured"]),
    ("Y-tab2-flops", "an unknown model", lambda r: cot(r, {}, gflops=FLOPS + [("dense", 2, 0.5), ("dense", 3, 0.5)]),
     INCONCLUSIVE, ["min_gflops.csv names no model or an unknown one: dense"]),
    ("Y-tab2-flops", "not reproduced, a value NaN",
     lambda r: cot(r, {}, gflops=[("standard", 2, 0.03), ("linear", 2, 0.02), ("standard", 3, NAN), ("linear", 3, 0.01)]),
     INCONCLUSIVE, ["would read not reproduced ("]),
    # Yang et al. Sec. 6.2
    ("Y-locality", "complete", lambda r: cot(r, {"ed": ED, "ed_local": LOCAL}), REPRODUCED, []),
    ("Y-locality", "an efficient model absent on ED_Local",
     lambda r: cot(r, {"ed": ED, "ed_local": {k: v for k, v in LOCAL.items() if k != "sparse"}}), INCONCLUSIVE,
     ["would read reproduced (", "sparse has no entry on ED_Local"]),
    ("Y-locality", "a size one model lacks",
     lambda r: cot(r, {"ed": ED, "ed_local": {**LOCAL, "linear": need([2], [32])}}), INCONCLUSIVE,
     ["summary.json's ed_local linear has no entry at size 3"]),
    ("Y-locality", "no size both tasks have where the standard model learns ED",
     lambda r: cot(r, {"ed": {"standard": need([2, 3], [None, 32]), "sparse": need([2, 3], [64, 128]),
                              "linear": need([2, 3], [64, 128])},
                       "ed_local": {m: need([2], [32]) for m in ("standard", "sparse", "linear")}}), INCONCLUSIVE,
     ["would read not reproduced (", "sparse: no size both tasks have where the standard model reaches the target on ED"]),
    ("Y-locality", "a seed a cell lacks",
     then(lambda r: cot(r, {"ed": ED, "ed_local": LOCAL}),
          lambda r: cells(r, {"ed": ED, "ed_local": LOCAL}, less={("ed", "sparse", 2, 32, 0)})), INCONCLUSIVE,
     ["would read reproduced (", "results.csv has no row for seed 0 at 1 cell (ed sparse size 2 D 32)"]),
]


@pytest.mark.parametrize("claim_id, build, verdict, words",
                         [pytest.param(c, b, v, w, id=f"{BY_ID[c].kind}: {what}") for c, what, b, v, w in CASES])
def test_missing_evidence_never_decides(tmp_path, claim_id, build, verdict, words):
    build(tmp_path)
    row = judge_claim(BY_ID[claim_id], find_runs(tmp_path))
    assert row.folder, f"the folder was not judged: {row.measured} {row.others}"
    assert row.verdict == verdict, row.measured
    for w in words:
        assert w in row.measured, f"{w!r} not in: {row.measured}"
    if verdict == INCONCLUSIVE and row.measured.startswith("would read "):
        assert "), but " in row.measured                 # what the rest would read, then the missing piece


def test_each_changed_rule_has_a_decisive_case_and_a_withheld_one():
    kinds = {}
    for c, _, _, v, w in CASES:
        kinds.setdefault(BY_ID[c].kind, set()).add((v, any(x.startswith("would read") for x in w)))
    for kind in ("b1_task", "alteration", "gap", "vit_decay", "vit_converge", "vit_fit", "dp_fig1", "dp_flops",
                 "dp_locality"):
        assert (REPRODUCED, False) in kinds[kind] and (INCONCLUSIVE, True) in kinds[kind], kind


def test_a_withheld_verdict_keeps_its_seed_count_to_what_was_read(tmp_path):
    """A folder missing a seed of its three is ranked on the seeds it holds, so it never outranks a complete folder
    of as many seeds for the row."""
    cot(tmp_path, {"arithmetic": GROWS})
    cells(tmp_path, {"arithmetic": GROWS}, seeds=(0, 1, 2), less={("arithmetic", "linear", 3, 256, 2)})
    o = judge_claim(BY_ID["Y-fig1-arithmetic"], find_runs(tmp_path)).outcome
    assert (o.verdict, o.n_seeds) == (INCONCLUSIVE, 2)


# ---- the helpers of jackson.evidence --------------------------------------------------------------------------

def test_withheld_turns_only_a_decisive_verdict():
    assert evidence.withheld(PARTLY, "t", []) == (PARTLY, "t")
    assert evidence.withheld(NOT_REPRODUCED, "t", ["", "a is absent"]) == (INCONCLUSIVE, "would read not reproduced (t), "
                                                                                          "but a is absent")
    assert evidence.withheld(UNTESTED, "t", ["a is absent"]) == (UNTESTED, "t; also absent or unreadable: a is absent")


@pytest.mark.parametrize("stated, found, gap", [
    ([0, 1, 2], ["0", "1", "2"], None), ([0, 1, 2], ["0", "2"], "no x for seed 1"), (None, [], None),
    (3, ["0", "1"], "no x for 1 of the 3 seeds"), ("three", [], "is unreadable"), ([0, NAN], ["0"], "is unreadable"),
    ([1.0, "2"], ["1", "2.0"], None)])
def test_seed_gaps(stated, found, gap):
    got = evidence.seed_gaps(stated, found, "x")
    assert (got == []) if gap is None else (len(got) == 1 and gap in got[0])


def test_labels_and_shown_text():
    assert [evidence.label(x) for x in (0, 0.0, "0", " 1 ", "a", "", NAN, True, [0], "a\x00")] == \
        ["0", "0", "0", "1", "a", None, None, None, None, None]
    assert evidence.text_of("a\nb") == "a b" and len(evidence.text_of("x" * 500, 40)) == 40


# ---- malformed input: an Outcome, never a raise ---------------------------------------------------------------

COMPLETE = {c: b for c, what, b, _, _ in CASES if what == "complete"}
BAD = [None, "x\ny", NAN, -1, [], {"a": NAN}]


def _leaves(o, path=()):
    if isinstance(o, dict):
        for k, v in o.items():
            yield path + (k,)
            yield from _leaves(v, path + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o[:2]):
            yield path + (i,)
            yield from _leaves(v, path + (i,))


def _set(o, path, v):
    for k in path[:-1]:
        o = o[k]
    o[path[-1]] = v


@pytest.mark.parametrize("claim_id", sorted(COMPLETE))
def test_a_malformed_folder_gives_an_outcome_not_a_crash(tmp_path, claim_id):
    """Each value of summary.json and config.json, and each cell of the first row of every CSV, replaced in turn by
    a value of the wrong kind: the rule (called in the ledger's box, which turns a raise, a control character in
    the line or a negative seed count into a failure) returns an Outcome or None."""
    COMPLETE[claim_id](tmp_path)
    claim, f = BY_ID[claim_id], only(tmp_path)
    kind = rules()[claim.kind]

    def judged():
        for run in find_runs(tmp_path):
            call_rule(kind, claim, run)            # raises RuleFailed when the rule misbehaves

    for name in ("summary.json", "config.json"):
        base = (f / name).read_text()
        for path in list(_leaves(json.loads(base))):
            for bad in BAD:
                d = json.loads(base)
                _set(d, path, bad)
                (f / name).write_text(json.dumps(d))
                judged()
        (f / name).write_text(base)
    for table in sorted(f.glob("*.csv")):
        base = table.read_text()
        rows = list(_csv.reader(io.StringIO(base)))
        for i in range(1, min(len(rows), 2)):
            for j in range(len(rows[0])):
                for bad in ("", "nan", "-1", "\x00"):
                    out = io.StringIO()
                    _csv.writer(out).writerows(rows[:i] + [rows[i][:j] + [bad] + rows[i][j + 1:]] + rows[i + 1:])
                    table.write_text(out.getvalue())
                    judged()
        table.write_text(base)
