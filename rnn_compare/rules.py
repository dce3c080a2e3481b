"""The rules that judge Tables 2-3 and App. D.3 of Jiang & Li on rnn-compare and rnn-mixing-spectrum folders
(reports/rnn_compare/).

Registered with jackson.verdict's `rule` decorator; found by the report through the `jackson_lab.rules` entry
point (pyproject.toml).  Standard library only: the report never loads torch.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from jackson.evidence import label, missing, number, seed_gaps, text_of, value, withheld
from jackson.verdict import (INCONCLUSIVE, NOT_REPRODUCED, ONE_SEED, PARTLY, REPRODUCED, UNTESTED, Claim, Outcome, Run,
    fmt_g, one_of, rule, verdict_of)

# Tables 2-3 of Jiang & Li as printed (rnn_compare.settings.PAPER holds the same numbers; a test checks)
PAPER_MSE = {("exp", "original", "rnn"): 1.02e-7, ("exp", "permuted", "rnn"): 3.57e-2,
             ("exp", "mixed", "rnn"): 1.58e-7, ("exp", "original", "transformer"): 2.18e-5,
             ("exp", "permuted", "transformer"): 2.51e-5, ("exp", "mixed", "transformer"): 2.39e-4,
             ("uniform", "original", "rnn"): 5.58, ("uniform", "permuted", "rnn"): 5.24,
             ("uniform", "original", "transformer"): 5.43e-4, ("uniform", "permuted", "transformer"): 5.36e-4}
PAPER_RATIO = {(k, a, m): PAPER_MSE[(k, a, m)] / PAPER_MSE[(k, "original", m)]
               for (k, a, m) in PAPER_MSE if a != "original"}
PAPER_UNAFFECTED_MAX = PAPER_RATIO[("exp", "mixed", "rnn")]      # the largest ratio the paper prints unbolded
PAPER_DROP_MIN = PAPER_RATIO[("exp", "mixed", "transformer")]    # the smallest one it prints bold
PAPER_GAP = min(PAPER_MSE[("uniform", a, "rnn")] / PAPER_MSE[("uniform", a, "transformer")]
                for a in ("original", "permuted"))
PAPER_FILTER_LENGTH = 5  # App. C: "a randomly generated length 5 filter" (rnn-compare's --filter-length default)
DROP_FACTOR = 2.0      # "performance drop": just above the largest ratio the paper calls unaffected (PAPER_UNAFFECTED_MAX)
QUALITY_FACTOR = 3.0   # Tables 2-3: a fit counts as trained to the paper's quality within 3x of the paper's MSE on the original target (issue 17's bar)
GAP_FACTOR = 10.0      # "hard to learn for one model, learnable for the other": an order of magnitude between them
MIN_SEEDS = 2          # measured seeds per arm below which the seeds' spread is unknown (the rules' power condition)


def expect(v):
    """The `expect` parameter of the alteration rule: which model the paper says the alteration hurts."""
    if not isinstance(v, dict) or not v:
        raise ValueError('a table of model = "drop" | "no drop", e.g. { rnn = "drop", transformer = "no drop" }')
    for model, word in v.items():
        if model not in ("rnn", "transformer") or word not in ("drop", "no drop"):
            raise ValueError('a table of model = "drop" | "no drop", models rnn and transformer')
    return tuple(v.items())


# ---- RNN vs Transformer (rnn-compare folders) -----------------------------------------------------------

def _mse(run: Run, kernel: str, alteration: str, model: str) -> list[float]:
    """The measured held-out MSEs of one arm (`_arm`)."""
    return _arm(run, kernel, alteration, model).mse


@dataclass
class _Arm:
    """One (kernel, alteration, model) arm of results.csv as read: `rows` its members, `mse` the measured held-out
    MSEs, `left_out` diverged or failed members (a training outcome, left out as before), `unmeasured` 'seed S:
    test_mse is unreadable (NaN)' for each member whose MSE could not be read, `seeds` every member's seed label."""
    rows: int
    mse: list[float]
    left_out: int
    unmeasured: list[str]
    seeds: set


def _arm(run: Run, kernel: str, alteration: str, model: str) -> _Arm:
    rows = [r for r in run.table("results.csv") if (r.get("kernel"), r.get("alteration"), r.get("model")) ==
            (kernel, alteration, model)]
    mse, left, bad = [], 0, []
    for r in rows:
        if str(r.get("status", "")).startswith(("diverged", "failed")):
            left += 1
            continue
        x = value(r.get("test_mse"), f"seed {text_of(r.get('seed', '?'), 8)}: test_mse", lo=0)
        if x.ok:
            mse.append(x.value)
        else:
            bad.append(str(x))
    return _Arm(len(rows), mse, left, bad, {label(r.get("seed")) for r in rows})


def _arms_problems(run: Run, arms: dict[tuple[str, str], _Arm], what: dict[str, str]) -> tuple[list[str], list[str]]:
    """(why the folder cannot judge: an arm with no row or no measured seed; the gaps: each unmeasured seed, and each
    seed of config.json's seeds (where it lists them; else of the other arms) an arm has no row for) over arms keyed
    (alteration, model); `what` names each alteration's role (evidence, control)."""
    cannot, gaps = [], []
    listed = run.config.get("seeds")
    every = set().union(*(a.seeds for a in arms.values())) - {None}
    expected, where = (listed, "config.json's seeds") if isinstance(listed, list) else \
        (sorted(every, key=lambda x: (len(x), x)), "the other arms' seeds")
    if isinstance(listed, int) and not isinstance(listed, bool) and len(every) < listed:   # a count, not labels
        gaps.append(f"results.csv holds {len(every)} of the {listed} seeds config.json states")
    for (alt, model), a in arms.items():
        name = f"{model} {alt} arm ({what[alt]})"
        if not a.rows:
            cannot.append(f"{name}: no row in results.csv")
        elif not a.mse:
            cannot.append(f"{name}: no measured seed" + (f" ({a.left_out} diverged or failed)" if a.left_out else "")
                          + (f" ({'; '.join(a.unmeasured)})" if a.unmeasured else ""))
        else:
            gaps += [f"{name}: " + "; ".join(a.unmeasured)] if a.unmeasured else []
            gaps += [f"{name}: {g}" for g in seed_gaps(expected, a.seeds, "row in results.csv", where)]
            gaps += [f"{name}: a row whose seed is absent or unreadable"] if None in a.seeds else []
    return cannot, gaps


def _ratio(num: list[float], den: list[float]) -> float:
    """median(num) / median(den); inf when only the denominator is 0, 1 when both are."""
    a, b = statistics.median(num), statistics.median(den)
    return a / b if b > 0 else (math.inf if a > 0 else 1.0)


def _quality(kernel: str, original: dict[str, list[float]]) -> str:
    """How well a folder's fits are trained, against the paper: each model's original-target MSE per seed
    (`original`, model -> the seeds' MSEs, as the rule read them) over the paper's, and how many seeds are within
    QUALITY_FACTOR of it.  Shown beside a verdict, never part of its rule: an alteration measured on
    undertrained fits says less, and the reader should see by how much."""
    parts = []
    for model, mse in original.items():
        paper = PAPER_MSE.get((kernel, "original", model))
        if mse and paper:
            x = sorted(v / paper for v in mse)
            parts.append(f"{model} {fmt_g(x[0])}x" + (f"-{fmt_g(x[-1])}x" if fmt_g(x[-1]) != fmt_g(x[0]) else "")
                         + f" ({sum(v <= QUALITY_FACTOR for v in x)} of {len(x)} seeds <= {QUALITY_FACTOR:g}x)")
    return ("; original-target MSE / paper's: " + ", ".join(parts)) if parts else ""


def _label(orig: list[float], alt: list[float]) -> tuple[str, float]:
    ratio = _ratio(alt, orig)
    if min(len(orig), len(alt)) < MIN_SEEDS:     # the power condition: one seed cannot show the seeds' spread
        return "unclear", ratio
    if ratio < DROP_FACTOR:
        return "no drop", ratio
    return ("drop" if min(alt) > max(orig) else "unclear"), ratio


def _pair_range(num: list[float], den: list[float], what: str) -> tuple[float | None, float | None, str]:
    """(lo, hi, interval) of a ratio of medians median(num) / median(den) from the seeds of its two arms: the
    smallest and largest num seed / den seed over every pair (min num / max den, max num / min den).  With an odd
    number of seeds each median is a seed's value, so the ratio of medians is one of these pair ratios; it always
    lies between lo and hi.  Not the range of ratios by seed label (arm a's seed s over arm b's seed s): the two
    arms are separate trainings, and the ratio of medians is not a summary of those."""
    if len(num) * len(den) < 2:
        return None, None, ONE_SEED
    lo = min(num) / max(den) if max(den) > 0 else math.inf
    hi = max(num) / min(den) if min(den) > 0 else math.inf
    return lo, hi, (f"range over every ({what}) pair of seeds ({len(num)} x {len(den)}) of the one seed's MSE over "
                    "the other's: min / max to max / min (contains the ratio of medians)")


def _budget(fit) -> int:
    """Examples seen in training (steps x batch size) of one model's fit config; 0 where not written or unreadable."""
    fit = fit if isinstance(fit, dict) else {}
    n = [value(fit.get(k), k, lo=0, whole=True).value or 0 for k in ("steps", "batch_size")]
    return n[0] * n[1]


def _budgets_text(run: Run) -> str:
    """'; budgets (steps x batch): Transformer 24000 x 256, RNN 1500 x 64 (unequal)'."""
    f, r = run.config.get("fit"), run.config.get("rnn_fit")
    if not f or not r or not isinstance(f, dict) or not isinstance(r, dict):
        return ""
    same = _budget(f) == _budget(r)
    return (f"; budgets (steps x batch): Transformer {text_of(f.get('steps'), 12)} x {text_of(f.get('batch_size'), 12)}, "
            f"RNN {text_of(r.get('steps'), 12)} x {text_of(r.get('batch_size'), 12)} ({'equal' if same else 'unequal'})")


def _missing_terms(run: Run, alteration: str) -> str:
    """What the run's summary found of a mixed Transformer's drop (rnn_compare missing_terms_check: whether one
    missing block of the coupling's terms explains its hot positions).  Shown beside a verdict, never part of
    its rule."""
    recs = (run.summary or {}).get("missing_terms")
    recs = [r for r in recs if isinstance(r, dict) and r.get("model") == "transformer"] if isinstance(recs, list) else []
    if alteration != "mixed" or not recs:
        return ""
    one = [r for r in recs if r.get("one_block")]
    if not one:
        return f"; the Transformer's drop is no one missing block of terms in any of {len(recs)} seeds (missing_terms.csv)"
    try:            # shown beside the verdict, never judged: a record that does not read is not shown
        words = ", ".join(dict.fromkeys(text_of(r["terms"], 40) for r in
                                        sorted(one, key=lambda r: (int(r["j1"]), int(r["j2"])))))
        ratios = [float(r["ratio"]) for r in one]
    except (KeyError, TypeError, ValueError):
        return ""
    lo, hi = fmt_g(min(ratios)), fmt_g(max(ratios))
    return (f"; the Transformer's drop is the loss of {words}, in {len(one)} of {len(recs)} seeds (their MSE / that "
            f"loss's error {lo if lo == hi else f'{lo}-{hi}'}; missing_terms.csv)")


def _seeds_from_zero(c: dict) -> bool:
    """Whether a folder's bank members are seeds 0..n-1 (its config's list `seeds`; in a folder written before
    rnn-compare took the seeds themselves, no `first_seed` other than 0)."""
    s = c.get("seeds")
    if isinstance(s, list):
        return sorted(label(x) or "?" for x in s) == sorted(str(k) for k in range(len(s)))
    return not c.get("first_seed")


def _rnn_order(run: Run) -> tuple:
    """The paper's mixing formula first, then the paper's randomly generated filter (App. C: "a randomly
    generated length 5 filter") before taps given with --filter or another --filter-length (diagnostics), then
    seeds from 0 before inits added beside them (other --seeds), then the larger Transformer training budget, then the
    RNN's: a folder trained longer measures the paper's trained models better (read from config.json, not from
    the outcome, so the choice cannot follow the verdict)."""
    c = run.config
    papers_filter = not c.get("filter") and label(c.get("filter_length", PAPER_FILTER_LENGTH)) == str(PAPER_FILTER_LENGTH)
    return (0 if c.get("mix_direction", "future") == "future" else 1, 0 if papers_filter else 1,
            0 if _seeds_from_zero(c) else 1, -_budget(c.get("fit")), -_budget(c.get("rnn_fit")))


@rule("alteration", "rnn_compare", f"""Tables 2-3: which model an alteration of the target hurts (the paper's bold = a
drop). Evidence: per model, the held-out MSE of each seed on the altered target (results.csv; diverged or failed
members left out and counted). Control: the same model's original arm, trained alike. Per model, altered against
original: a drop when the ratio of medians is >= {DROP_FACTOR:g} (above the largest ratio the paper calls unaffected,
{PAPER_UNAFFECTED_MAX:.3g}; its smallest drop is {PAPER_DROP_MIN:.3g}) and every altered seed lies above every
original seed; no drop when the ratio is < {DROP_FACTOR:g}; unclear otherwise (the seeds overlap). Reproduced when
every model the claim names gets the paper's label; partly when some do; not reproduced when none; inconclusive when
every model with a clear label gets the paper's and the others are unclear. Power condition: at least {MIN_SEEDS}
measured seeds in each arm of a model (with one, "every altered seed above every original seed" is vacuous and the
seeds' spread unknown), else that model is unclear. A seed an arm lacks (config.json's seeds, else the other arms') or
whose MSE is unreadable: inconclusive, named, with what the rest would read; an arm with no measured seed for a model
the claim names: untested, named. The row states both models' training budgets (steps x batch size), equal or not.
Ties: the paper's mixing formula (mix_direction future) before the causal one, then the paper's random length-5 filter
before taps given with --filter or another --filter-length, then seeds from 0 before inits added beside them (other
--seeds), then the larger training budget (steps x batch size in config.json; the Transformer's, then the RNN's).""",
      {"kernel": (True, one_of("exp", "uniform")), "alteration": (True, one_of("permuted", "mixed")),
       "expect": (True, expect)})
def alteration(claim: Claim, run: Run) -> Outcome | None:
    p = claim.p
    arms = {(a, model): _arm(run, p["kernel"], a, model) for model, _ in p["expect"] for a in ("original", p["alteration"])}
    if not any(arm.rows for (a, _), arm in arms.items() if a == p["alteration"]):
        return None                   # the folder does not run this alteration
    cannot, unmeasured = _arms_problems(run, arms, {"original": "control", p["alteration"]: "evidence"})
    if cannot:
        return Outcome(UNTESTED, "cannot judge: " + "; ".join(cannot), None, quantity="", tiebreak=_rnn_order(run),
                       interval="none: an arm has no measured seed")
    got, parts, ratios, origs, unclear, few = [], [], [], {}, [], []
    for model, want in p["expect"]:
        orig, alt = arms[("original", model)].mse, arms[(p["alteration"], model)].mse
        origs[model] = orig
        lab, ratio = _label(orig, alt)
        if min(len(orig), len(alt)) < MIN_SEEDS:
            few.append(model)
        if lab == "unclear":
            unclear.append(model)
        else:
            parts.append(lab == want)
        ratios.append(ratio)
        lo, hi, interval = _pair_range(alt, orig, f"altered, original; {model}")  # the last model's is the value's
        got.append(f"{model} x{fmt_g(ratio)} ({lab}; seeds {fmt_g(min(orig))}-{fmt_g(max(orig))} -> {fmt_g(min(alt))}-{fmt_g(max(alt))})")
    n = min(len(v) for v in origs.values())
    extra = f"; mixing {text_of(run.config['mix_direction'], 20)}" \
        if p["alteration"] == "mixed" and "mix_direction" in run.config else ""
    if lo is not None:
        interval += ("; lo > 1 exactly when every altered seed lies above every original seed (the seed test of the "
                     "rule's drop)")
    extra += _quality(p["kernel"], origs) + _missing_terms(run, p["alteration"]) + _budgets_text(run)
    left = sum(arm.left_out for arm in arms.values())
    if left:
        extra += f"; {left} diverged or failed member{'s' if left != 1 else ''} left out"
    if unclear and all(parts):        # the decided models agree; the seeds of the others overlap or are too few
        verdict = INCONCLUSIVE
        overlap = [m for m in unclear if m not in few]
        if overlap:
            extra += (f"; {', '.join(overlap)}: the median rises {DROP_FACTOR:g}x or more but the seeds overlap (the "
                      "data cannot say drop or no drop)")
        if few:
            extra += (f"; {', '.join(few)}: fewer than {MIN_SEEDS} measured seeds in an arm (the power condition: one "
                      "seed cannot show the seeds' spread)")
    else:
        verdict = verdict_of(parts + [False] * len(unclear))
    verdict, text = withheld(verdict, "; ".join(got) + extra, unmeasured)
    return Outcome(verdict, text, n, ratios[-1], lo, hi,
                   f"altered/original, ratio of medians ({p['expect'][-1][0]})", _rnn_order(run), interval)


@rule("gap", "rnn_compare", f"""Table 3: the RNN cannot learn the uniform-kernel target, the Transformer can: both
halves are judged, on the original and on the permuted arm. Evidence: each model's held-out MSE per seed on the
uniform kernel (results.csv; diverged or failed members left out and counted). Hard for the RNN: the RNN's median is
at least {GAP_FACTOR:g}x the Transformer's on the same arm (the control: the Transformer trained alike; the paper: at
least {PAPER_GAP:.2g}x). Learnable by the Transformer: its median is within {QUALITY_FACTOR:g}x of the paper's printed
MSE on that arm (the reference: Table 3, {PAPER_MSE[("uniform", "original", "transformer")]:.3g} original,
{PAPER_MSE[("uniform", "permuted", "transformer")]:.3g} permuted). Reproduced when all four parts hold; partly when
some; not reproduced when none. Power condition: at least {MIN_SEEDS} measured seeds per model and arm, else
inconclusive. A seed an arm lacks or whose MSE is unreadable: inconclusive, named, with what the rest would read; an
arm with no measured seed: untested, named. Ties: as for the alteration rule (mixing formula, then training budget);
the budgets of both models are stated.""")
def gap(claim: Claim, run: Run) -> Outcome | None:
    arms = {(arm, model): _arm(run, "uniform", arm, model) for arm in ("original", "permuted")
            for model in ("rnn", "transformer")}
    if not any(a.rows for a in arms.values()):
        return None                   # the folder does not run the uniform kernel
    cannot, unmeasured = _arms_problems(run, arms, {"original": "evidence", "permuted": "evidence"})
    if cannot:
        return Outcome(UNTESTED, "cannot judge: " + "; ".join(cannot), None, tiebreak=_rnn_order(run),
                       interval="none: an arm has no measured seed")
    parts, got, gaps = [], [], []
    for arm in ("original", "permuted"):
        rnn, tr = arms[(arm, "rnn")].mse, arms[(arm, "transformer")].mse
        g = _ratio(rnn, tr)
        paper = PAPER_MSE[("uniform", arm, "transformer")]
        q = statistics.median(tr) / paper
        gaps.append((g, arm, _pair_range(rnn, tr, f"RNN, Transformer; {arm} arm")))
        parts += [g >= GAP_FACTOR, q <= QUALITY_FACTOR]
        got.append(f"{arm}: RNN {fmt_g(statistics.median(rnn))} (seeds {fmt_g(min(rnn))}-{fmt_g(max(rnn))}) / "
                   f"Transformer {fmt_g(statistics.median(tr))} = {fmt_g(g)}x ({'>=' if g >= GAP_FACTOR else '<'} "
                   f"{GAP_FACTOR:g}x); Transformer / paper's {fmt_g(paper)} = {fmt_g(q)}x "
                   f"({'learnable' if q <= QUALITY_FACTOR else 'NOT learnable'}: {'<=' if q <= QUALITY_FACTOR else '>'} "
                   f"{QUALITY_FACTOR:g}x)")
    origs = {"rnn": arms[("original", "rnn")].mse, "transformer": arms[("original", "transformer")].mse}
    n = min(len(a.mse) for a in arms.values())
    text = "; ".join(got) + _quality("uniform", origs)
    left = sum(a.left_out for a in arms.values())
    if left:
        text += f"; {left} diverged or failed member{'s' if left != 1 else ''} left out"
    verdict = verdict_of(parts)
    if n < MIN_SEEDS:
        verdict = INCONCLUSIVE
        text += f"; fewer than {MIN_SEEDS} measured seeds in an arm (the power condition: one seed cannot show the seeds' spread)"
    verdict, text = withheld(verdict, text, unmeasured)
    g, arm, (lo, hi, interval) = min(gaps)          # the headline: the arm where the gap is smaller
    return Outcome(verdict, text, n, g, lo, hi, f"RNN / Transformer, ratio of medians, on the arm where it is smaller "
                   f"({arm})", _rnn_order(run), interval)


# ---- App. D.3 (rnn-mixing-spectrum --out folders) -------------------------------------------------------

D3_AFTER = (1.265, 0.5, 0.4)   # App. D.3 as printed: sigma_1..3 of rho(u, u + v) for rho = 1 + 2 sin sin
D3_REL_TOL = 0.05              # "numerically estimate": agreement within 5% (relative) per singular value


@rule("d3_mixing", "rnn_compare", f"""App. D.3: mixing the inputs raises the rank of rho = 1 + 2 sin(2 pi u) sin(2 pi
v) from 2 to 3, with sigma_1..3 = {", ".join(f"{x:g}" for x in D3_AFTER)} after it. From an rnn-mixing-spectrum folder
on the paper's kernel and mixing (a = b = 1). Evidence: the numerical rank after the mixing (sigma_i > 1e-8 sigma_1,
summary.json's rank_after) and sigma_1..3 after it (after). Reference: the paper's printed values. Control: the
spectrum before mixing, computed the same way (rank_before), whose rank must read 2: a control that reads another rank
says the quadrature does not resolve the kernel, so the folder cannot decide (inconclusive). Reproduced when the rank
is 2 before and 3 after and each of sigma_1..3 after is within {D3_REL_TOL:.0%} of the paper's; partly when the rank
rises but not to 3, or a value is further off; not reproduced when the rank does not rise. Power condition: none
beyond the control (deterministic quadrature, no seeds and no sampling). An absent or unreadable rank or sigma:
untested, named.""")
def d3_mixing(claim: Claim, run: Run) -> Outcome | None:
    s = run.summary or {}
    if s.get("kind") != "rnn-mixing-spectrum" or not s.get("paper"):
        return None
    raw = s.get("after")
    after = ([value(raw[i] if isinstance(raw, list) and i < len(raw) else None, f"sigma_{i + 1} after the mixing "
                    "(summary.json's after)", lo=0) for i in range(3)])
    rb = number(s, "rank_before", name="the control's rank (summary.json's rank_before)", lo=0, whole=True)
    ra = number(s, "rank_after", name="the rank after the mixing (summary.json's rank_after)", lo=0, whole=True)
    bad = missing([ra, *after, rb])
    nodes = f"deterministic quadrature ({text_of(s.get('quadrature_nodes', '?'), 12)} nodes)"
    if bad:
        return Outcome(UNTESTED, f"cannot judge: {bad}; {nodes}", None,
                       interval="none: deterministic quadrature, no seeds and no sampling")
    sig = [r.value for r in after]
    off = max(abs(m - p) / p for m, p in zip(sig, D3_AFTER))
    text = (f"rank {rb.value} -> {ra.value}; sigma after = {', '.join(f'{x:.4f}' for x in sig)} "
            f"(largest relative difference from the paper's {off:.1%}); {nodes}")
    if rb.value != 2:
        v = INCONCLUSIVE
        text += f"; the control (the kernel before mixing) reads rank {rb.value}, not 2: the quadrature does not resolve it"
    elif ra.value <= rb.value:
        v = NOT_REPRODUCED
    else:
        v = REPRODUCED if ra.value == 3 and off <= D3_REL_TOL else PARTLY
    return Outcome(v, text, None, off, quantity="largest relative difference of sigma_1..3 after the mixing",
                   interval="none: deterministic quadrature, no seeds and no sampling")
