"""Absent evidence is never evidence: the claims rules of App. B.1, Tables 1-3, App. D.3, Figs. 2-3 and Yang et al.
on run folders built by hand the way a referee builds them (the files each rule reads, with numbers whose verdict
is known), one folder per verdict a rule can give and one per absent or unreadable input.  Each case checks the
verdict and that the ledger's line names the cause.

Cases marked `only:` are the ones where a single power condition or control decides: removing that condition from
the rule's code changes their verdict (each is named in the case's id).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from jackson import evidence
from jackson.lab_report.claims import CLAIMS, judge_claim
from jackson.verdict import INCONCLUSIVE, NOT_REPRODUCED, PARTLY, REPRODUCED, UNTESTED, find_runs

BY_ID = {c.id: c for c in CLAIMS}
NAN = float("nan")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def folder(root: Path, rel: str, summary, config: dict, command: str = "cmd") -> Path:
    f = root / rel
    write(f / "config.json", json.dumps({"quick": False, **config}))
    write(f / "command.txt", command + "\n")
    if summary is not None:
        write(f / "summary.json", json.dumps(summary))      # NaN and Infinity written as json.dumps does
    return f


def csv(path: Path, header: str, rows: list) -> None:
    write(path, "\n".join([header, *(",".join(str(x) for x in r) for r in rows)]) + "\n")


# ---- App. B.1 (b1_task) -----------------------------------------------------------------------------------

def b1(root, mass=(0.95, 0.96, 0.97), fof=(1e-4, 1e-4, 1e-4), control=0.2, seeds=None, **extra):
    s = {"task": "nearest-point", "seeds": list(range(len(mass))) if seeds is None else seeds,
         "metrics": {"support_mass": {"per_seed": list(mass)}, "fof_rel": {"per_seed": list(fof)},
                     "rel_test_mse": {"mean": 0.01}}, **extra}
    if control is not None:
        s["control"] = {"uniform_support_mass": {"mean": control}}
    folder(root, "tasks/np", s, {}, "jackson-tasks nearest-point")


B1 = [
    ("reproduced", lambda r: b1(r), REPRODUCED, ["3 of 3 measured seeds >= 0.9", "the control: 0.200"]),
    ("partly", lambda r: b1(r, mass=(0.95, 0.5, 0.97)), PARTLY, ["2 of 3 measured seeds >= 0.9"]),
    ("not reproduced", lambda r: b1(r, mass=(0.3, 0.2, 0.3), fof=(2.0, 3.0, 4.0)), NOT_REPRODUCED, ["0 of 3"]),
    ("only: power, the support share", lambda r: b1(r, control=0.95), INCONCLUSIVE, ["uniform attention would pass"]),
    ("only: control absent", lambda r: b1(r, control=None), UNTESTED,
     ["the control (uniform attention's mass on the support", "is absent"]),
    ("control NaN", lambda r: b1(r, control=NAN), UNTESTED, ["the control (uniform", "unreadable (NaN)"]),
    ("control a word", lambda r: b1(r, control="high"), UNTESTED, ["the control (uniform", "not a number"]),
    ("control outside [0, 1]", lambda r: b1(r, control=1.5), UNTESTED, ["the control (uniform", "outside [0, 1]"]),
    ("control derived from the levels, and says so",
     lambda r: b1(r, control=None, levels=[{"target": 0.0, "n_entries": 500}, {"target": 1.0, "n_entries": 100}]),
     REPRODUCED, ["the control: 0.167 (derived from summary.json's coupling levels; the folder records no control entry)"]),
    ("levels unreadable", lambda r: b1(r, control=None, levels=[{"target": 1.0, "n_entries": NAN}]), UNTESTED,
     ["the control (uniform attention's mass on the support", "an entry count or level is absent or not a number"]),
    ("a NaN seed withholds the verdict", lambda r: b1(r, mass=(0.95, NAN, 0.97)), INCONCLUSIVE,
     ["would read reproduced (", "2 measured of 3 seeds", "but attention mass on the support, seed 1 is unreadable (NaN)",
      "0.950-0.970"]),
    ("inf seed", lambda r: b1(r, fof=(1e-4, math.inf, 1e-4)), INCONCLUSIVE,
     ["would read reproduced (", "F_hat∘f_hat vs F∘f relative MSE, seed 1 is unreadable (+infinite)"]),
    ("word seed", lambda r: b1(r, mass=(0.3, "n/a", 0.2), fof=(2.0, 2.0, 2.0)), INCONCLUSIVE,
     ["would read not reproduced (", "2 measured of 3 seeds", "seed 1 is unreadable (not a number"]),
    ("no seed measured", lambda r: b1(r, mass=(NAN, NAN), fof=(1e-4, 1e-4)), UNTESTED, ["no seed could be measured"]),
    ("evidence absent", lambda r: folder(r, "tasks/np", {"task": "nearest-point", "seeds": [0, 1], "metrics": {},
                                                          "control": {"uniform_support_mass": {"mean": 0.2}}}, {}),
     UNTESTED, ["attention mass on the support (per seed) is absent", "relative MSE (per seed) is absent"]),
    ("per-seed list not one per seed", lambda r: b1(r, mass=(0.95, 0.97), fof=(1e-4, 1e-4), seeds=[0, 1, 2]), UNTESTED,
     ["2 values for the folder's 3 seeds"]),
]


# ---- Tables 2-3 (alteration, gap) ----------------------------------------------------------------------------

def results(root, arms: dict, kernel="exp", status=None):
    """results.csv of an rnn-compare folder: arms[(alteration, model)] = the seeds' test MSEs."""
    rows = [(kernel, a, m, k, x, x, (status or {}).get((a, m, k), "converged"), 100)
            for (a, m), xs in arms.items() for k, x in enumerate(xs)]
    f = folder(root, "rnn_compare/c", {"tables": {}}, {"seeds": 3, "mix_direction": "future"})
    csv(f / "results.csv", "kernel,alteration,model,seed,train_mse,test_mse,status,steps", rows)


RNN_DROP = {("original", "rnn"): [1e-8, 1.1e-8, 1.2e-8], ("permuted", "rnn"): [1e-2, 1.1e-2, 1.2e-2]}
TR_SAME = {("original", "transformer"): [1e-3, 1.1e-3, 1.2e-3], ("permuted", "transformer"): [1e-3, 1.05e-3, 1.1e-3]}


def arms(**kw):
    """RNN_DROP | TR_SAME with some arms replaced: rnn_permuted=[...], transformer_original=[...], ..."""
    out = {**RNN_DROP, **TR_SAME}
    for k, v in kw.items():
        a, m = k.split("_")
        if v is None:
            out.pop((a, m) if a in ("original", "permuted") else (m, a))
        else:
            out[(a, m) if a in ("original", "permuted") else (m, a)] = v
    return out


ALTERATION = [
    ("reproduced", lambda r: results(r, arms()), REPRODUCED, ["rnn x1e+06 (drop", "transformer x0.955 (no drop"]),
    ("partly", lambda r: results(r, arms(transformer_permuted=[1e-1, 1.1e-1, 1.2e-1])), PARTLY, ["transformer x100 (drop"]),
    ("not reproduced", lambda r: results(r, arms(rnn_permuted=[1e-8, 1.1e-8, 1.2e-8],
                                                 transformer_permuted=[1e-1, 1.1e-1, 1.2e-1])), NOT_REPRODUCED,
     ["rnn x1 (no drop"]),
    ("seeds overlap", lambda r: results(r, arms(transformer_permuted=[5e-4, 3e-3, 4e-3])), INCONCLUSIVE,
     ["the seeds overlap"]),
    ("only: power, one seed", lambda r: results(r, {("original", "rnn"): [1e-8], ("permuted", "rnn"): [2.1e-8 * 1e6],
                                                    ("original", "transformer"): [1e-3], ("permuted", "transformer"): [1e-3]}),
     INCONCLUSIVE, ["fewer than 2 measured seeds", "one seed cannot show"]),
    ("one seed, 2.1x apart", lambda r: results(r, {("original", "transformer"): [1e-3], ("permuted", "transformer"): [2.1e-3],
                                                   ("original", "rnn"): [1e-8], ("permuted", "rnn"): [1e-2]}),
     INCONCLUSIVE, ["fewer than 2 measured seeds"]),
    ("a NaN seed withholds the verdict", lambda r: results(r, arms(rnn_permuted=[1e-2, NAN, 1.2e-2])), INCONCLUSIVE,
     ["would read reproduced (", "but rnn permuted arm (evidence): seed 1: test_mse is unreadable (NaN)"]),
    ("a NaN leaves one seed", lambda r: results(r, arms(transformer_original=[1e-3, NAN])), INCONCLUSIVE,
     ["transformer: fewer than 2 measured seeds", "seed 1: test_mse is unreadable (NaN)"]),
    ("only: control absent", lambda r: results(r, arms(transformer_original=None)), UNTESTED,
     ["transformer original arm (control): no row in results.csv"]),
    ("evidence unreadable", lambda r: results(r, arms(rnn_permuted=[NAN, "x", ""])), UNTESTED,
     ["rnn permuted arm (evidence): no measured seed", "unreadable (NaN)", "not a number", "is absent"]),
    ("diverged members are named", lambda r: results(r, arms(rnn_permuted=[1e-2, 1e9, 1.2e-2]),
                                                     status={("permuted", "rnn", 1): "diverged"}), REPRODUCED,
     ["1 diverged or failed member left out"]),
]

PAPER_TR = {"original": 5.43e-4, "permuted": 5.36e-4}


def uniform(root, rnn=(5.0, 5.5, 6.0), tr=(5e-4, 6e-4, 7e-4), drop=None, **per_arm):
    a = {(arm, m): list(per_arm.get(f"{m}_{arm}", v)) for arm in ("original", "permuted")
         for m, v in (("rnn", rnn), ("transformer", tr))}
    if drop:
        a.pop(drop)
    results(root, a, kernel="uniform")


GAP = [
    ("reproduced", lambda r: uniform(r), REPRODUCED, ["= 9.17e+03x (>= 10x)", "(learnable: <= 3x)"]),
    ("only: the Transformer 921x the paper's", lambda r: uniform(r, rnn=(500, 550, 600), tr=(0.5, 0.5, 0.5)), PARTLY,
     ["= 1.1e+03x (>= 10x)", "Transformer / paper's 0.000543 = 921x (NOT learnable: > 3x)"]),
    ("partly, one arm's gap", lambda r: uniform(r, rnn_permuted=(1e-3, 1.1e-3, 1.2e-3)), PARTLY, ["(>= 10x)", "(< 10x)"]),
    ("not reproduced", lambda r: uniform(r, rnn=(1e-3, 1e-3, 1e-3), tr=(0.5, 0.5, 0.5)), NOT_REPRODUCED,
     ["(< 10x)", "NOT learnable"]),
    ("only: power, one seed", lambda r: uniform(r, rnn=(5.0,), tr=(6e-4,)), INCONCLUSIVE, ["fewer than 2 measured seeds"]),
    ("a NaN seed withholds the verdict", lambda r: uniform(r, rnn_original=(5.0, NAN, 6.0)), INCONCLUSIVE,
     ["would read reproduced (", "rnn original arm (evidence): seed 1: test_mse is unreadable (NaN)"]),
    ("an arm absent", lambda r: uniform(r, drop=("permuted", "transformer")), UNTESTED,
     ["transformer permuted arm (evidence): no row in results.csv"]),
    ("an arm unreadable", lambda r: uniform(r, transformer_original=(NAN, math.inf, -1.0)), UNTESTED,
     ["transformer original arm (evidence): no measured seed", "unreadable (NaN)", "+infinite", "outside"]),
]


# ---- App. D.3 (d3_mixing) ------------------------------------------------------------------------------------

def d3(root, rb=2, ra=3, after=(1.262, 0.5, 0.396), drop=()):
    s = {"kind": "rnn-mixing-spectrum", "paper": {"after": [1.265, 0.5, 0.4]}, "rank_before": rb, "rank_after": ra,
         "after": list(after), "quadrature_nodes": 256}
    for k in drop:
        s.pop(k)
    folder(root, "rnn_compare/d", s, {})


D3 = [
    ("reproduced", lambda r: d3(r), REPRODUCED, ["rank 2 -> 3", "1.0%"]),
    ("partly", lambda r: d3(r, after=(1.0, 0.5, 0.4)), PARTLY, ["rank 2 -> 3", "20.9%"]),
    ("not reproduced", lambda r: d3(r, ra=2), NOT_REPRODUCED, ["rank 2 -> 2"]),
    ("only: control reads another rank", lambda r: d3(r, rb=3, ra=4), INCONCLUSIVE,
     ["the control (the kernel before mixing) reads rank 3, not 2"]),
    ("control absent", lambda r: d3(r, drop=("rank_before",)), UNTESTED,
     ["the control's rank (summary.json's rank_before) is absent"]),
    ("evidence absent", lambda r: d3(r, drop=("rank_after",)), UNTESTED, ["the rank after the mixing", "is absent"]),
    ("rank not whole", lambda r: d3(r, ra=2.5), UNTESTED, ["2.5 is not a whole number"]),
    ("sigma NaN", lambda r: d3(r, after=(NAN, 0.5, 0.4)), UNTESTED, ["sigma_1 after the mixing", "unreadable (NaN)"]),
    ("sigma_3 absent", lambda r: d3(r, after=(1.262, 0.5)), UNTESTED, ["sigma_3 after the mixing", "is absent"]),
]


# ---- Fig. 2 (vit_decay) ----------------------------------------------------------------------------------------

HEADS = "layer,head,n_images,tau,sigma1,exponent,exponent_lo,exponent_hi,erank,r90"


def decay(root, heads, control=True, trained=True, init=(-2.2, -1.9)):
    """heads: (exponent, exponent_hi, steeper_than_init) per head of layer 0."""
    f = folder(root, "vit_probe/spec", {"violin": {"layer": 0}, "n_images": 10, "tau": 65, "trained": trained},
               {"seed": 0, "checkpoint": "w.pth"})
    rows = [(0, k, 10, 65, 1.0, ex, ex, hi, 4.0, 2) + ((-2.2, -1.9, -2.0, st) if control else ())
            for k, (ex, hi, st) in enumerate(heads)]
    csv(f / "heads.csv", HEADS + (",init_min,init_max,init_median,steeper_than_init" if control else ""), rows)
    if control:
        csv(f / "init_heads.csv", "init,layer,head,exponent", [(k, 0, 0, e) for k, e in enumerate(init)])


STEEP, AS_INIT, FLAT = (-2.6, -2.5, True), (-2.0, -1.9, False), (-0.3, -0.2, False)
DECAY = [
    ("reproduced", lambda r: decay(r, [STEEP]), REPRODUCED, ["1 of 1 with the whole 95% interval below -0.5",
                                                             "training made 1 of 1 heads"]),
    ("partly", lambda r: decay(r, [STEEP, AS_INIT]), PARTLY, ["training made 1 of 2 heads"]),
    ("not reproduced", lambda r: decay(r, [FLAT]), NOT_REPRODUCED, ["0 of 1 with the whole 95% interval"]),
    ("only: power, the interval over images", lambda r: decay(r, [(-0.6, -0.3, False)]), NOT_REPRODUCED,
     ["0 of 1 with the whole 95% interval below -0.5"]),
    ("only: control absent", lambda r: decay(r, [STEEP], control=False), INCONCLUSIVE, ["no control in the folder"]),
    ("control absent, flat heads", lambda r: decay(r, [FLAT], control=False), INCONCLUSIVE, ["no control in the folder"]),
    ("untrained: a control, not a test", lambda r: decay(r, [STEEP], trained=False), UNTESTED, ["untrained model"]),
    ("trained unreadable", lambda r: decay(r, [STEEP], trained="yes"), UNTESTED, ["trained is unreadable"]),
    ("a NaN head withholds the verdict", lambda r: decay(r, [STEEP, (-2.0, NAN, True)]), INCONCLUSIVE,
     ["would read reproduced (1 heads:", "but layer 0 head 1: exponent_hi is unreadable (NaN)"]),
    ("control flag unreadable", lambda r: decay(r, [STEEP, (-2.6, -2.5, "maybe")]), INCONCLUSIVE,
     ["would read reproduced (", "layer 0 head 1: steeper_than_init is unreadable ('maybe')"]),
    ("no head measured", lambda r: decay(r, [(NAN, NAN, True)]), UNTESTED, ["no head could be measured"]),
]


# ---- Fig. 3 (vit_converge, vit_fit) ----------------------------------------------------------------------------

def sweep(root, last=0.05, spectra=(0.05, 0.05), fit=None, sorted_subsets=False, conv=None, results=True):
    """A vit-probe sweep-mh folder: summary.json's fit and convergence (last pair 4 -> 8 at `last`), spectra.csv
    with one seed per entry of `spectra` whose m_h 4 and 8 spectra lie that far apart (None: no spectra.csv; a NaN:
    that seed's spectrum unreadable), and results.csv with a training loss at every m_h (1, 2, 4, 8) and seed
    (results=False: none)."""
    s = {"fit": {"ok": True, "a": 1.0, "gamma": 0.3, "gamma_se": 0.05, "b": 1.0, "b_se": 0.1, "identified": True,
                 **(fit or {})},
         "convergence": [{"m_h_from": 1, "m_h_to": 2, "rel_l2": NAN}, {"m_h_from": 2, "m_h_to": 4, "rel_l2": 0.3},
                         {"m_h_from": 4, "m_h_to": 8, "rel_l2": last}] if conv is None else conv,
         "loglog_slope": -0.1, "loss_first": 2.0, "loss_last": 1.5}
    s = {k: v for k, v in s.items() if v != "drop"}
    s["fit"] = {k: v for k, v in s["fit"].items() if v != "drop"}
    cfg = {"seeds": list(range(max(len(spectra or ()), 1))), "spectra_layer": -1, "spectra_head": 0, "mh": [1, 2, 4, 8],
           **({} if sorted_subsets else {"subset_seed": 0})}
    f = folder(root, "vit_probe/mh", s, cfg)
    if results:
        csv(f / "results.csv", "m_h,seed,train_loss_eval", [(m, k, 1.0 / m + 1.0) for m in cfg["mh"] for k in cfg["seeds"]])
    if spectra is not None:      # normalised spectra [1, x] and [1, 0.5]: relative L2 |x - 0.5| / sqrt(1.25)
        csv(f / "spectra.csv", "m_h,seed,layer,head,i,mean",
            [(m, k, 0, 0, i, v) for k, d in enumerate(spectra)
             for m, sv in ((4, (1.0, 0.5 + d * math.sqrt(1.25))), (8, (1.0, 0.5))) for i, v in enumerate(sv, 1)])


CONVERGE = [
    ("reproduced", lambda r: sweep(r), REPRODUCED, ["4->8 0.05", "each seed alone 0.05, 0.05"]),
    ("not reproduced", lambda r: sweep(r, last=0.2, spectra=(0.2, 0.2)), NOT_REPRODUCED, ["4->8 0.2"]),
    ("only: power, the seeds disagree", lambda r: sweep(r, spectra=(0.05, 0.2)), INCONCLUSIVE,
     ["the interval over seeds holds 0.1: the seeds disagree"]),
    ("only: power, no interval (no spectra.csv)", lambda r: sweep(r, spectra=None), INCONCLUSIVE,
     ["the seeds' spread is unknown"]),
    ("power, one seed", lambda r: sweep(r, spectra=(0.05,)), INCONCLUSIVE, ["1 seed", "the seeds' spread is unknown"]),
    ("class-sorted subsets", lambda r: sweep(r, sorted_subsets=True), PARTLY, ["class-sorted"]),
    ("last distance NaN", lambda r: sweep(r, last=NAN), UNTESTED,
     ["the last pair's relative L2 distance (summary.json's convergence) is unreadable (NaN)", "2->4 0.3"]),
    ("last distance absent", lambda r: sweep(r, conv=[{"m_h_from": 2, "m_h_to": 4, "rel_l2": 0.05},
                                                      {"m_h_from": 4, "m_h_to": 8}]), UNTESTED,
     ["the last pair's relative L2 distance", "is absent"]),
    ("convergence absent", lambda r: sweep(r, conv="drop"), UNTESTED, ["summary.json's convergence", "is absent"]),
    ("spectra.csv unreadable", lambda r: (sweep(r), write(r / "vit_probe/mh/spectra.csv",
                                                          "m_h,seed,layer,head,i,mean\n4,0,x,0,1,1.0\n")),
     INCONCLUSIVE, ["spectra.csv is unreadable (a layer, head, m_h or i that is not a whole number)"]),
    ("a NaN seed spectrum withholds the verdict", lambda r: sweep(r, spectra=(0.05, 0.05, NAN)), INCONCLUSIVE,
     ["would read reproduced (", "but seed 2, m_h 4, sigma_2 is unreadable (NaN)"]),
]

FIT = [
    ("reproduced", lambda r: sweep(r), REPRODUCED, ["gamma 0.3 +- 0.05", "identified"]),
    ("partly", lambda r: sweep(r, fit={"gamma": 0.6}), PARTLY, ["gamma 0.6"]),
    ("not reproduced", lambda r: sweep(r, fit={"gamma": -0.3}), NOT_REPRODUCED, ["gamma -0.3"]),
    ("only: power, not identified", lambda r: sweep(r, fit={"gamma_se": 0.35}), INCONCLUSIVE,
     ["NOT identified by the data"]),
    ("power recomputed, not the flag", lambda r: sweep(r, fit={"b_se": 5.0, "identified": True}), INCONCLUSIVE,
     ["NOT identified by the data"]),
    ("s.e. absent", lambda r: sweep(r, fit={"gamma_se": "drop"}), UNTESTED, ["the standard error of gamma is absent"]),
    ("gamma NaN", lambda r: sweep(r, fit={"gamma": NAN}), UNTESTED, ["the fit's gamma", "unreadable (NaN)"]),
    ("s.e. infinite", lambda r: sweep(r, fit={"b_se": math.inf}), UNTESTED, ["the standard error of b", "+infinite"]),
    ("the fit failed", lambda r: sweep(r, fit={"ok": False, "why": "2 points"}), UNTESTED, ["could not fit", "2 points"]),
    ("no results.csv: the fit's inputs cannot be checked", lambda r: sweep(r, results=False), INCONCLUSIVE,
     ["would read reproduced (", "results.csv (the training loss per m_h and seed the fit is made from) is absent"]),
]


# ---- Table 1, ViT (vit_permute) ---------------------------------------------------------------------------------

def permute(root, before=0.755, after=0.755, control=0.76, n_test=10000, md=None):
    s = {"before": before, "after": after, "control": control, "zero_shot_permuted": 0.5, "origin": "trained here"}
    if n_test is not None:
        s["n_test"] = n_test
    f = folder(root, "vit_probe/p", s, {"seed": 0})
    if md:
        write(f / "summary.md", md)


PERMUTE = [
    ("reproduced", lambda r: permute(r), REPRODUCED, ["d = -0.0050", "on 10,000 test images"]),
    ("not reproduced", lambda r: permute(r, after=0.70), NOT_REPRODUCED, ["d = -0.0600"]),
    ("the interval holds the margin", lambda r: permute(r, after=0.745), INCONCLUSIVE, ["the interval holds -0.02"]),
    ("only: power, not converged", lambda r: permute(r, before=0.70, after=0.80, control=0.85), INCONCLUSIVE,
     ["not converged"]),
    ("only: power, a model at chance", lambda r: permute(r, before=0.10, after=0.10, control=0.10), INCONCLUSIVE,
     ["too close to chance, 0.1", "the test cannot fail"]),
    ("only: the folder's own test count", lambda r: permute(r, n_test=1000), INCONCLUSIVE,
     ["on 1,000 test images", "the interval holds -0.02"]),
    ("the count from summary.md", lambda r: permute(r, n_test=None, md="Accuracy on the 1000 test images.\n"),
     INCONCLUSIVE, ["on 1,000 test images"]),
    ("count absent", lambda r: permute(r, n_test=None), UNTESTED, ["the number of test images", "is absent"]),
    ("count not whole", lambda r: permute(r, n_test=12.5), UNTESTED, ["the number of test images", "not a whole number"]),
    ("count zero", lambda r: permute(r, n_test=0), UNTESTED, ["the number of test images", "outside"]),
    ("control absent (--no-control)", lambda r: permute(r, control=None), UNTESTED,
     ["the control arm's accuracy (summary.json's control) is absent"]),
    ("evidence NaN", lambda r: permute(r, after=NAN), UNTESTED, ["the permuted arm's accuracy", "unreadable (NaN)"]),
    ("evidence outside [0, 1]", lambda r: permute(r, after=75.5), UNTESTED, ["the permuted arm's accuracy", "outside"]),
    ("before a word", lambda r: permute(r, before="high"), UNTESTED, ["the starting model's accuracy", "not a number"]),
]


# ---- Yang et al. (dp_fig1, dp_flops, dp_locality) -----------------------------------------------------------------

def need(sizes, ds):
    return {"sizes": sizes, "min_d": ds}


GROWS = {"standard": need([2, 3], [64, 64]), "sparse": need([2, 3], [64, 128]), "linear": need([2, 3], [128, 256])}


def cot(root, tasks, target=0.9, cells=None, gflops=None):
    s = {"tasks": tasks, "baseline": {}}
    if target is not None:
        s["target_acc"] = target
    f = folder(root, "cot_dp/a", s, {"seeds": [0]})
    if cells is not None:
        csv(f / "results.csv", "task,size,model,d_model,seed,accuracy", cells)
    if gflops is not None:
        csv(f / "min_gflops.csv", "task,model,size,L,min_d,min_gflops,min_gflops_params,best_accuracy",
            [("arithmetic", m, z, 10 * z, 64, g, g, 1.0) for m, z, g in gflops])


FIG1 = [
    ("reproduced", lambda r: cot(r, {"arithmetic": GROWS}), REPRODUCED, ["5 of 5 parts hold"]),
    ("partly", lambda r: cot(r, {"arithmetic": {**GROWS, "sparse": need([2, 3], [64, 64])}}), PARTLY,
     ["3 of 5 parts hold"]),
    ("not reproduced", lambda r: cot(r, {"arithmetic": {"standard": need([2, 3], [128, 256]),
                                                        "sparse": need([2, 3], [64, 32]),
                                                        "linear": need([2, 3], [64, 32])}}), NOT_REPRODUCED,
     ["0 of 5 parts hold"]),
    ("only: power, no model reaches", lambda r: cot(r, {"arithmetic": {m: need([2, 3], [None, None]) for m in GROWS}}),
     UNTESTED, ["standard -, -"]),
    ("only: control absent", lambda r: cot(r, {"arithmetic": {k: v for k, v in GROWS.items() if k != "standard"}}),
     UNTESTED, ["standard (the control) is absent"]),
    ("evidence absent", lambda r: cot(r, {"arithmetic": {"standard": GROWS["standard"]}}), UNTESTED,
     ["sparse (evidence) is absent", "linear (evidence) is absent"]),
    ("reference absent", lambda r: cot(r, {"arithmetic": GROWS}, target=None), UNTESTED,
     ["the target accuracy (summary.json's target_acc) is absent"]),
    ("min_d NaN", lambda r: cot(r, {"arithmetic": {**GROWS, "sparse": need([2, 3], [64, NAN])}}), UNTESTED,
     ["summary.json's arithmetic sparse min_d at size 3 is unreadable (NaN)"]),
    ("sizes and min_d disagree", lambda r: cot(r, {"arithmetic": {**GROWS, "linear": need([2, 3], [64])}}), UNTESTED,
     ["summary.json's arithmetic linear sizes / min_d are absent or unreadable"]),
    ("a cell NaN", lambda r: cot(r, {"arithmetic": GROWS}, cells=[("arithmetic", 2, "standard", 64, 0, 0.95),
                                                                  ("arithmetic", 3, "standard", 64, 0, NAN)]),
     UNTESTED, ["results.csv: 1 cell could not be measured", "arithmetic standard size 3 D 64 seed 0: accuracy is unreadable (NaN)"]),
    ("a cell's D a word", lambda r: cot(r, {"arithmetic": GROWS}, cells=[("arithmetic", 2, "standard", "big", 0, 0.95)]),
     UNTESTED, ["arithmetic standard size 2 D big seed 0: d_model is unreadable (not a number"]),
]

FLOPS = [
    ("reproduced", lambda r: cot(r, {}, gflops=[("standard", 2, 0.01), ("linear", 2, 0.02), ("standard", 3, 0.03),
                                                ("linear", 3, 0.05)]), REPRODUCED, ["2 of 2 judged sizes"]),
    ("partly", lambda r: cot(r, {}, gflops=[("standard", 2, 0.01), ("linear", 2, 0.02), ("standard", 3, 0.03),
                                            ("linear", 3, 0.01)]), PARTLY, ["1 of 2 judged sizes"]),
    ("not reproduced", lambda r: cot(r, {}, gflops=[("standard", 2, 0.03), ("linear", 2, 0.02)]), NOT_REPRODUCED,
     ["0 of 1 judged sizes"]),
    ("only: a tie is no win", lambda r: cot(r, {}, gflops=[("standard", 2, 0.01), ("linear", 2, 0.01),
                                                          ("sparse", 2, "")]), NOT_REPRODUCED, ["0 of 1 judged sizes"]),
    ("only: control, no competitor", lambda r: cot(r, {}, gflops=[("standard", 2, 0.01), ("standard", 3, 0.02)]),
     UNTESTED, ["no competitor (the control: nothing to be fewer than)"]),
    ("only: power, no model reaches", lambda r: cot(r, {}, gflops=[("standard", 2, ""), ("linear", 2, "")]), UNTESTED,
     ["no model reaches the target"]),
    ("a size no model reaches is not judged", lambda r: cot(r, {}, gflops=[
        ("standard", 2, 0.01), ("linear", 2, 0.02), ("standard", 3, ""), ("linear", 3, "")]), REPRODUCED,
     ["1 of 1 judged sizes", "not judged: L 30: no model reaches the target"]),
    ("a value NaN", lambda r: cot(r, {}, gflops=[("standard", 2, 0.01), ("linear", 2, 0.02), ("standard", 3, 0.03),
                                                 ("linear", 3, NAN)]), INCONCLUSIVE,
     ["would read reproduced (", "not judged: L 30: could not be measured (linear min_gflops is unreadable (NaN))",
      "but L 30 could not be measured"]),
    ("the only size unreadable", lambda r: cot(r, {}, gflops=[("standard", 2, "abc"), ("linear", 2, 0.02)]), UNTESTED,
     ["standard min_gflops is unreadable (not a number"]),
    ("reference absent", lambda r: cot(r, {}, target=None, gflops=[("standard", 2, 0.01), ("linear", 2, 0.02)]),
     UNTESTED, ["the target accuracy (summary.json's target_acc) is absent"]),
]

ED = {"standard": need([2, 3], [32, 32]), "sparse": need([2, 3], [64, 128]), "linear": need([2, 3], [64, 128])}
LOCAL = {"standard": need([2, 3], [32, 32]), "sparse": need([2, 3], [32, 64]), "linear": need([2, 3], [32, 64])}
LOCALITY = [
    ("reproduced", lambda r: cot(r, {"ed": ED, "ed_local": LOCAL}), REPRODUCED, ["ED_Local: standard 32, 32; sparse 32, 64"]),
    ("partly", lambda r: cot(r, {"ed": ED, "ed_local": {**LOCAL, "linear": ED["linear"]}}), PARTLY, ["linear 64, 128"]),
    ("not reproduced", lambda r: cot(r, {"ed": ED, "ed_local": {**ED}}), NOT_REPRODUCED, ["ED_Local: standard 32, 32"]),
    ("only: power, standard never reaches ED",
     lambda r: cot(r, {"ed": {**ED, "standard": need([2, 3], [None, None])}, "ed_local": LOCAL}), UNTESTED,
     ["the standard model reaches the target on ED at no size"]),
    ("power absent", lambda r: cot(r, {"ed": {k: v for k, v in ED.items() if k != "standard"}, "ed_local": LOCAL}),
     UNTESTED, ["no standard model on ED (the power condition)"]),
    ("only: control absent", lambda r: cot(r, {"ed_local": LOCAL}), UNTESTED, ["no ED run (the control)"]),
    ("evidence unreadable", lambda r: cot(r, {"ed": ED, "ed_local": {**LOCAL, "sparse": need([2, 3], ["x", 64])}}),
     UNTESTED, ["summary.json's ed_local sparse min_d at size 2 is unreadable (not a number"]),
    ("reference absent", lambda r: cot(r, {"ed": ED, "ed_local": LOCAL}, target=None), UNTESTED,
     ["the target accuracy (summary.json's target_acc) is absent"]),
]

TABLE = {"JL-B1-nearest-point": B1, "JL-tab2-ordering": ALTERATION, "JL-tab3-gap": GAP, "JL-D3-mixing-rank": D3,
         "JL-fig2-decay": DECAY, "JL-fig3a-converge": CONVERGE, "JL-fig3b-fit": FIT, "JL-tab1-vit": PERMUTE,
         "Y-fig1-arithmetic": FIG1, "Y-tab2-flops": FLOPS, "Y-locality": LOCALITY}
CASES = [pytest.param(cid, build, verdict, words, id=f"{BY_ID[cid].kind}: {name}")
         for cid, cases in TABLE.items() for name, build, verdict, words in cases]


@pytest.mark.parametrize("claim_id, build, verdict, words", CASES)
def test_each_rule_on_a_hand_made_folder(tmp_path, claim_id, build, verdict, words):
    build(tmp_path)
    row = judge_claim(BY_ID[claim_id], find_runs(tmp_path))
    assert row.verdict == verdict, row.measured
    assert row.folder, f"the folder was not judged: {row.measured} {row.others}"
    for w in words:
        assert w in row.measured, f"{w!r} not in: {row.measured}"


def test_every_rule_gives_every_verdict_it_can_and_refuses_missing_input():
    """The table holds, per rule, a folder for reproduced and not reproduced, and at least one absent or unreadable
    input that ends untested or inconclusive."""
    for cid, cases in TABLE.items():
        got = {v for _, _, v, _ in cases}
        assert {REPRODUCED, NOT_REPRODUCED} <= got, cid
        assert any(v in (UNTESTED, INCONCLUSIVE) and any(w in " ".join(ws) for w in ("absent", "unreadable"))
                   for _, _, v, ws in cases), cid
    kinds = {BY_ID[c].kind for c in TABLE}
    assert kinds == {"b1_task", "alteration", "gap", "d3_mixing", "vit_decay", "vit_converge", "vit_fit", "vit_permute",
                     "dp_fig1", "dp_flops", "dp_locality"}


def test_the_permute_interval_uses_the_folders_own_count(tmp_path):
    """An independent computation of the interval on 1,000 images: 3.16x wider than on 10,000."""
    permute(tmp_path, n_test=1000)
    o = judge_claim(BY_ID["JL-tab1-vit"], find_runs(tmp_path)).outcome
    a, c = 0.755, 0.76
    half = 1.96 * math.sqrt(a * (1 - a) / 1000 + c * (1 - c) / 1000)
    assert (o.lo, o.hi) == pytest.approx((a - c - half, a - c + half))
    assert "on the 1,000 test images" in o.interval


def test_chance_is_cifar10s():
    from vit_probe import cifar_io, rules
    assert rules.CIFAR10_CLASSES == len(cifar_io.CLASSES)


@pytest.mark.parametrize("raw, problem", [(None, "absent"), ("", "absent"), (NAN, "unreadable (NaN)"),
                                          (-math.inf, "unreadable (-infinite)"), (True, "unreadable (a bool"),
                                          ("0.5x", "unreadable (not a number"), ([1], "unreadable (a list")])
def test_a_reading_is_present_absent_or_unreadable(raw, problem):
    r = evidence.value(raw, "x")
    assert not r.ok and r.problem.startswith(problem) and r.value is None
    assert evidence.value("0.25", "x").value == 0.25 and evidence.value(3, "n", lo=1, whole=True).value == 3
    assert evidence.number({"a": {"b": 1}}, "a", "c", name="y").absent
    assert evidence.number({"a": [1]}, "a", "b", name="y").problem.startswith("unreadable (not a table")


# ---- a referee's folders: copies of committed run folders with one input edited ----------------------------------

REPORTS = Path(__file__).resolve().parent.parent / "reports"


def copy_of(root: Path, rel: str) -> Path:
    """A committed run folder's own files (no cells, no figures), copied under root at the same place."""
    import shutil
    dst = root / rel
    shutil.copytree(REPORTS / rel, dst, ignore=shutil.ignore_patterns("cells", "*.png", "*.pdf", "checkpoints"))
    return dst


def edit_json(path: Path, change) -> None:
    s = json.loads(path.read_text())
    change(s)
    path.write_text(json.dumps(s))


def edit_csv(path: Path, change) -> None:
    import pandas as pd
    t = pd.read_csv(path)
    change(t).to_csv(path, index=False)


def judge(root: Path, claim_id: str):
    return judge_claim(BY_ID[claim_id], find_runs(root))


def test_referee_folders_from_committed_ones(tmp_path):
    # ViT at chance before, after and in the control: it learned nothing, so no permutation can hurt it
    f = copy_of(tmp_path / "a", "vit_probe/permute_gpu_e40")
    edit_json(f / "summary.json", lambda s: s.update(before=0.10, after=0.10, control=0.10))
    r = judge(tmp_path / "a", "JL-tab1-vit")
    assert r.verdict == INCONCLUSIVE and "too close to chance" in r.measured
    # d = -0.005 on the folder's stated 10,000 images passes; the same folder scored on 1,000 cannot decide
    f = copy_of(tmp_path / "b", "vit_probe/permute_gpu_e40")
    edit_json(f / "summary.json", lambda s: s.update(after=s["control"] - 0.005))
    assert judge(tmp_path / "b", "JL-tab1-vit").verdict == REPRODUCED
    (f / "summary.md").write_text((f / "summary.md").read_text().replace("on the 10000 test", "on the 1000 test"))
    r = judge(tmp_path / "b", "JL-tab1-vit")
    assert r.verdict == INCONCLUSIVE and "on 1,000 test images" in r.measured
    (f / "summary.md").unlink()
    r = judge(tmp_path / "b", "JL-tab1-vit")
    assert r.verdict == UNTESTED and "the number of test images (summary.json's n_test) is absent" in r.measured

    # App. B.1 without its control; then a seed that could not be measured
    f = copy_of(tmp_path / "c", "tasks/nearest-point")
    edit_json(f / "summary.json", lambda s: (s.pop("control"), s.pop("levels")))
    r = judge(tmp_path / "c", "JL-B1-nearest-point")
    assert r.verdict == UNTESTED and "the control (uniform attention's mass on the support" in r.measured
    f = copy_of(tmp_path / "d", "tasks/nearest-point")
    edit_json(f / "summary.json", lambda s: s["metrics"]["support_mass"]["per_seed"].__setitem__(1, NAN))
    r = judge(tmp_path / "d", "JL-B1-nearest-point")
    assert (r.verdict, r.n_seeds) == (INCONCLUSIVE, 2) and "seed 1 is unreadable (NaN)" in r.measured
    assert r.measured.startswith("would read reproduced (")

    # Table 3 with a Transformer 5x worse (~9x the paper's MSE): the RNN's gap holds, the "learnable by the Transformer" half does not
    f = copy_of(tmp_path / "e", "rnn_compare/uniform-24k-b256-s3")
    edit_csv(f / "results.csv", lambda t: t.assign(test_mse=t.test_mse.where(t.model != "transformer", t.test_mse * 5)))
    r = judge(tmp_path / "e", "JL-tab3-gap")
    assert r.verdict == PARTLY and "NOT learnable" in r.measured
    # Table 2 on one seed: the seed test of a drop is vacuous
    f = copy_of(tmp_path / "f", "rnn_compare/ordering-24k-b256-s3")
    edit_csv(f / "results.csv", lambda t: t[t.seed == 0])
    r = judge(tmp_path / "f", "JL-tab2-ordering")
    assert r.verdict == INCONCLUSIVE and "fewer than 2 measured seeds" in r.measured

    # Yang Table 2 with the standard model alone, then with a competitor tied at every size
    f = copy_of(tmp_path / "g", "cot_dp/cpu-arithmetic")
    edit_csv(f / "min_gflops.csv", lambda t: t[t.model == "standard"])
    r = judge(tmp_path / "g", "Y-tab2-flops")
    assert r.verdict == UNTESTED and "no competitor" in r.measured
    f = copy_of(tmp_path / "h", "cot_dp/cpu-arithmetic")

    def tie(t):
        std = t[t.model == "standard"].set_index("size").min_gflops
        return t.assign(min_gflops=[std[z] if m != "sparse" else g for m, z, g in zip(t.model, t["size"], t.min_gflops)])
    edit_csv(f / "min_gflops.csv", tie)
    r = judge(tmp_path / "h", "Y-tab2-flops")
    assert r.verdict == NOT_REPRODUCED and "0 of 3 judged sizes" in r.measured

    # App. D.3 without the control's rank
    f = copy_of(tmp_path / "i", "rnn_compare/mixing_spectrum")
    edit_json(f / "summary.json", lambda s: s.pop("rank_before"))
    r = judge(tmp_path / "i", "JL-D3-mixing-rank")
    assert r.verdict == UNTESTED and "rank_before) is absent" in r.measured
