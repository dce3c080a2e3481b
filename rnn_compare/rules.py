"""The rules that judge Tables 2-3 and App. D.3 of Jiang & Li on rnn-compare and rnn-mixing-spectrum folders
(reports/rnn_compare/).

Registered with jackson.verdict's `rule` decorator; found by the report through the `jackson_lab.rules` entry
point (pyproject.toml).  Standard library only: the report never loads torch.
"""
from __future__ import annotations

import math
import statistics

from jackson.verdict import (INCONCLUSIVE, NOT_REPRODUCED, ONE_SEED, PARTLY, REPRODUCED, Claim, Outcome, Run, fmt_g,
    one_of, rule, verdict_of)

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


def expect(v):
    """The `expect` parameter of the alteration rule: which model the paper says the alteration hurts."""
    if not isinstance(v, dict) or not v:
        raise ValueError('a table of model = "drop" | "no drop", e.g. { rnn = "drop", transformer = "no drop" }')
    for model, label in v.items():
        if model not in ("rnn", "transformer") or label not in ("drop", "no drop"):
            raise ValueError('a table of model = "drop" | "no drop", models rnn and transformer')
    return tuple(v.items())


# ---- RNN vs Transformer (rnn-compare folders) -----------------------------------------------------------

def _mse(run: Run, kernel: str, alteration: str, model: str) -> list[float]:
    return [float(r["test_mse"]) for r in run.table("results.csv")
            if (r.get("kernel"), r.get("alteration"), r.get("model")) == (kernel, alteration, model)
            and not str(r.get("status", "")).startswith(("diverged", "failed"))]


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
    ratio = statistics.median(alt) / statistics.median(orig)
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


def _budget(fit: dict | None) -> int:
    """Examples seen in training (steps x batch size) of one model's fit config; 0 where not written."""
    fit = fit or {}
    return int(fit.get("steps", 0) or 0) * int(fit.get("batch_size", 0) or 0)


def _budgets_text(run: Run) -> str:
    """'; budgets (steps x batch): Transformer 24000 x 256, RNN 1500 x 64 (unequal)'."""
    f, r = run.config.get("fit") or {}, run.config.get("rnn_fit") or {}
    if not f or not r:
        return ""
    same = _budget(f) == _budget(r)
    return (f"; budgets (steps x batch): Transformer {f.get('steps')} x {f.get('batch_size')}, RNN {r.get('steps')} x "
            f"{r.get('batch_size')} ({'equal' if same else 'unequal'})")


def _missing_terms(run: Run, alteration: str) -> str:
    """What the run's summary found of a mixed Transformer's drop (rnn_compare missing_terms_check: whether one
    missing block of the coupling's terms explains its hot positions).  Shown beside a verdict, never part of
    its rule."""
    recs = [r for r in (run.summary or {}).get("missing_terms", []) if r.get("model") == "transformer"]
    if alteration != "mixed" or not recs:
        return ""
    one = [r for r in recs if r.get("one_block")]
    if not one:
        return f"; the Transformer's drop is no one missing block of terms in any of {len(recs)} seeds (missing_terms.csv)"
    words = ", ".join(dict.fromkeys(r["terms"] for r in sorted(one, key=lambda r: (int(r["j1"]), int(r["j2"])))))
    ratios = [float(r["ratio"]) for r in one]
    lo, hi = fmt_g(min(ratios)), fmt_g(max(ratios))
    return (f"; the Transformer's drop is the loss of {words}, in {len(one)} of {len(recs)} seeds (their MSE / that "
            f"loss's error {lo if lo == hi else f'{lo}-{hi}'}; missing_terms.csv)")


def _seeds_from_zero(c: dict) -> bool:
    """Whether a folder's bank members are seeds 0..n-1 (its config's list `seeds`; in a folder written before
    rnn-compare took the seeds themselves, no `first_seed` other than 0)."""
    s = c.get("seeds")
    if isinstance(s, list):
        return sorted(int(x) for x in s) == list(range(len(s)))
    return not c.get("first_seed")


def _rnn_order(run: Run) -> tuple:
    """The paper's mixing formula first, then the paper's randomly generated filter (App. C: "a randomly
    generated length 5 filter") before taps given with --filter or another --filter-length (diagnostics), then
    seeds from 0 before inits added beside them (other --seeds), then the larger Transformer training budget, then the
    RNN's: a folder trained longer measures the paper's trained models better (read from config.json, not from
    the outcome, so the choice cannot follow the verdict)."""
    c = run.config
    papers_filter = not c.get("filter") and c.get("filter_length", PAPER_FILTER_LENGTH) == PAPER_FILTER_LENGTH
    return (0 if c.get("mix_direction", "future") == "future" else 1, 0 if papers_filter else 1,
            0 if _seeds_from_zero(c) else 1, -_budget(c.get("fit")), -_budget(c.get("rnn_fit")))


@rule("alteration", "rnn_compare", f"""Tables 2-3: which model an alteration of the target hurts (the paper's bold = a drop).
Per model, held-out MSE over seeds (results.csv; diverged members left out), altered against original: a
drop when the ratio of medians is >= {DROP_FACTOR:g} (above the largest ratio the paper calls unaffected,
{PAPER_UNAFFECTED_MAX:.3g}; its smallest drop is {PAPER_DROP_MIN:.3g}) and every altered seed lies above every
original seed; no drop when the ratio is < {DROP_FACTOR:g}; unclear otherwise (the seeds overlap). Reproduced when every
model the claim names gets the paper's label; partly when some do; not reproduced when none; inconclusive when
every model with a clear label gets the paper's and the others are unclear (the power condition: seeds that do
not separate). Control: each model's own original arm, trained alike. The row states both models' training budgets
(steps x batch size), equal or not. Ties: the paper's mixing formula (mix_direction future)
before the causal one, then the paper's random length-5 filter before taps given with --filter or another
--filter-length, then seeds from 0 before inits added beside them (other --seeds), then the larger training budget (steps
x batch size in config.json; the Transformer's, then the RNN's).""", {"kernel": (True, one_of("exp", "uniform")), "alteration": (True, one_of("permuted", "mixed")),
                  "expect": (True, expect)})
def alteration(claim: Claim, run: Run) -> Outcome | None:
    p = claim.p
    got, parts, ratios, origs, unclear = [], [], [], {}, []
    for model, want in p["expect"]:
        orig, alt = _mse(run, p["kernel"], "original", model), _mse(run, p["kernel"], p["alteration"], model)
        if not orig or not alt:
            return None
        origs[model] = orig
        label, ratio = _label(orig, alt)
        if label == "unclear":
            unclear.append(model)
        else:
            parts.append(label == want)
        ratios.append(ratio)
        lo, hi, interval = _pair_range(alt, orig, f"altered, original; {model}")  # the last model's is the value's
        got.append(f"{model} x{fmt_g(ratio)} ({label}; seeds {fmt_g(min(orig))}-{fmt_g(max(orig))} -> {fmt_g(min(alt))}-{fmt_g(max(alt))})")
    n = min(len(v) for v in origs.values())
    extra = f"; mixing {run.config['mix_direction']}" if p["alteration"] == "mixed" and "mix_direction" in run.config else ""
    if lo is not None:
        interval += ("; lo > 1 exactly when every altered seed lies above every original seed (the seed test of the "
                     "rule's drop)")
    extra += _quality(p["kernel"], origs) + _missing_terms(run, p["alteration"]) + _budgets_text(run)
    if unclear and all(parts):        # the decided models agree; the seeds of the others overlap
        verdict = INCONCLUSIVE
        extra += (f"; {', '.join(unclear)}: the median rises {DROP_FACTOR:g}x or more but the seeds overlap (the data "
                  "cannot say drop or no drop)")
    else:
        verdict = verdict_of(parts + [False] * len(unclear))
    return Outcome(verdict, "; ".join(got) + extra, n, ratios[-1], lo, hi,
                   f"altered/original, ratio of medians ({p['expect'][-1][0]})", _rnn_order(run), interval)


@rule("gap", "rnn_compare", f"""Table 3: the RNN cannot learn the uniform-kernel target, the Transformer can. On the
original and the permuted arm, the RNN's median held-out MSE over seeds is at least {GAP_FACTOR:g}x the
Transformer's (the paper: at least {PAPER_GAP:.2g}x). Reproduced on both arms; partly on one; not reproduced on none.
Ties: as for the alteration rule (mixing formula, then training budget). Control: the Transformer on the same arm,
trained alike (its fit quality against the paper's MSE is printed); the budgets of both models are stated.""")
def gap(claim: Claim, run: Run) -> Outcome | None:
    parts, got, gaps, origs = [], [], [], {}
    for arm in ("original", "permuted"):
        rnn, tr = _mse(run, "uniform", arm, "rnn"), _mse(run, "uniform", arm, "transformer")
        if not rnn or not tr:
            return None
        if arm == "original":
            origs = {"rnn": rnn, "transformer": tr}
        g = statistics.median(rnn) / statistics.median(tr)
        gaps.append((g, arm, _pair_range(rnn, tr, f"RNN, Transformer; {arm} arm")))
        parts.append(g >= GAP_FACTOR)
        got.append(f"{arm}: RNN {fmt_g(statistics.median(rnn))} (seeds {fmt_g(min(rnn))}-{fmt_g(max(rnn))}) / "
                   f"Transformer {fmt_g(statistics.median(tr))} = {fmt_g(g)}x")
    g, arm, (lo, hi, interval) = min(gaps)          # the headline: the arm where the gap is smaller
    return Outcome(verdict_of(parts), "; ".join(got) + _quality("uniform", origs),
                   min(len(v) for v in origs.values()), g, lo, hi, f"RNN / Transformer, ratio of medians, on the arm where it is smaller ({arm})",
                   _rnn_order(run), interval)


# ---- App. D.3 (rnn-mixing-spectrum --out folders) -------------------------------------------------------

D3_AFTER = (1.265, 0.5, 0.4)   # App. D.3 as printed: sigma_1..3 of rho(u, u + v) for rho = 1 + 2 sin sin
D3_REL_TOL = 0.05              # "numerically estimate": agreement within 5% (relative) per singular value


@rule("d3_mixing", "rnn_compare", f"""App. D.3: mixing the inputs raises the rank of rho = 1 + 2 sin(2 pi u) sin(2 pi v)
from 2 to 3, with sigma_1..3 = {", ".join(f"{x:g}" for x in D3_AFTER)} after it. From an rnn-mixing-spectrum folder on
the paper's kernel and mixing (a = b = 1): reproduced when the numerical rank (sigma_i > 1e-8 sigma_1) is 2 before and
3 after and each of sigma_1..3 after is within {D3_REL_TOL:.0%} of the paper's; partly when the rank rises but a value
is further off; not reproduced when the rank does not rise. Reference: the paper's printed values;
control: the spectrum before mixing, computed the same way (its rank must read 2).""")
def d3_mixing(claim: Claim, run: Run) -> Outcome | None:
    s = run.summary or {}
    if s.get("kind") != "rnn-mixing-spectrum" or not s.get("paper") or len(s.get("after", [])) < 3:
        return None
    after, rb, ra = [float(x) for x in s["after"][:3]], s.get("rank_before"), s.get("rank_after")
    off = max(abs(m - p) / p for m, p in zip(after, D3_AFTER))
    rises = isinstance(rb, int) and isinstance(ra, int) and ra > rb
    v = (REPRODUCED if rises and rb == 2 and ra == 3 and off <= D3_REL_TOL else PARTLY if rises else NOT_REPRODUCED)
    text = (f"rank {rb} -> {ra}; sigma after = {', '.join(f'{x:.4f}' for x in after)} "
            f"(largest relative difference from the paper's {off:.1%}); deterministic quadrature "
            f"({s.get('quadrature_nodes', '?')} nodes)")
    return Outcome(v, text, None, off, quantity="largest relative difference of sigma_1..3 after the mixing",
                   interval="none: deterministic quadrature, no seeds and no sampling")


