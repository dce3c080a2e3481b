"""The rules that judge Theorem 4.1 and Fig. 1 of Jiang & Li on jackson-sweep folders (reports/jackson/).

Registered with jackson.verdict's `rule` decorator; found by the report through the `jackson_lab.rules` entry
point (pyproject.toml).  Standard library and numpy only (via jackson.rates): the report never loads torch.
"""
from __future__ import annotations

import math
import statistics

from ..rates import law_text
from ..verdict import (INCONCLUSIVE, NOT_APPLICABLE, NOT_REPRODUCED, PARTLY, REPRODUCED, Claim, Outcome, Run,
    finite_rank, fmt_f, fmt_g, one_of, positive_number, rule, same, seed_bootstrap, seed_range)

from .axes import CONSTRUCTIONS, families_of, pair_name
from .doubling import DOUBLING_TOL, NOT_CHECKED_NOTE
from .knee_rule import KNEE_MIN, judge as judge_knee
from .rate_rule import EXPONENT_TOL, judge as judge_rate, number, outliers_in, tail_exponent as _tail_exponent
from ..hparams import recorded
FFN = (False, one_of("gelu", "relu", "sin"))   # the FFN class a claim is about (optional; default gelu)
BASES = (False, one_of("fourier", "legendre"))   # the POD bases a claim is about (optional; default fourier: the paper's)
BASES_TEXT = ("Bases: a claim is about one family of POD bases, the paper's sin/cos constructions (`fourier`, the "
              "default) or shifted Legendre (`bases = \"legendre\"`); a folder of other bases, or of a kernel's own POD, "
              "is not evidence for it.")


# ---- Theorem 4.1 and Fig. 1 (jackson-sweep folders) --------------------------------------------------------


def _targets(run: Run) -> list[dict]:
    return [t for t in (run.summary or {}).get("targets", []) if isinstance(t, dict)]


def _widest(ts: list[dict]) -> dict | None:
    """The target with the largest m_FF (Theorem 4.1 assumes m_FF large enough)."""
    return max(ts, key=lambda t: t.get("m_ff") or 0) if ts else None


def _ffn_matches(t: dict, ffn: str) -> bool:
    """A target fitted with the FFN class `ffn` (the paper's dense network: gelu, the default; given features count
    there as before), for the full target (a --term ff run measures the feed-forward term, not Theorem 4.1's error)."""
    if t.get("term", "full") != "full":
        return False
    if ffn == "gelu":
        return recorded(t, "activation") == "gelu"
    return recorded(t, "activation") == ffn and t.get("features", "learned") == "learned"


def _target(run: Run, alpha, rank: str, ffn: str = "gelu") -> dict | None:
    return _widest([t for t in _targets(run) if same(t.get("alpha"), alpha) and str(t.get("rank")) == rank
                    and _ffn_matches(t, ffn)])


def _features(run: Run, t: dict) -> str:
    return str(t.get("features") or run.summary.get("features") or run.config.get("model", {}).get("features") or "learned")


def _setting(run: Run, t: dict) -> str:
    ffn = recorded(t, "activation")
    cls = f" ({ffn} FFN, first-layer init scale {recorded(t, 'in_scale'):g})" if ffn != "gelu" else ""
    return f"{_features(run, t)} features{cls}, {_bases(run.config)}"


def _bases(config: dict) -> str:
    """The run's (phi, psi) in words: its named construction (given, or the pair it gave as --phi/--psi), or the pair."""
    name = pair_name(*families_of(config))
    return f"{name} construction" if name in CONSTRUCTIONS else f"{name} bases"


def _not_a_test(run: Run, t: dict) -> str:
    """Why this target cannot test Theorem 4.1 ('' when it can)."""
    att = t.get("attention") or run.summary.get("attention") or "softmax"
    if att != "softmax":
        return f"{att} attention (Theorem 4.1's model is softmax attention)"
    deg = t.get("degenerate") or {}
    if deg.get("flag"):
        return deg.get("why") or "degenerate target or uninformative fit"
    law = (t.get("explicit") or t.get("kernel") or {}).get("law") or {}
    if law.get("law") == "not a power law":
        return ("the target's sigma is not a power law (" + law_text(law) + "): Theorem 4.1's rate has no alpha to "
                "judge it by")
    return ""


def _seeds_of(run: Run, t: dict) -> int | None:
    return t.get("n_seeds") or run.seeds()


def _jackson_order(run: Run, t: dict) -> tuple:
    return (0 if _features(run, t) == "learned" else 1,)


def _basis(run: Run) -> str:
    """The family of a run's POD bases: fourier (phi, psi among sin and cos: the paper's constructions; a config that
    names none ran the default sin), legendre, kernel (a --kernel's own POD) or mixed."""
    cfg = run.config or {}
    if cfg.get("kernel"):
        return "kernel"
    phi, psi = (v or "sin" for v in families_of(cfg))
    if {phi, psi} <= {"sin", "cos"}:
        return "fourier"
    return "legendre" if phi == psi == "legendre" else "mixed"


def _jackson_target(claim: Claim, run: Run, rank: str):
    """The claim's (alpha, rank) target in a jackson-sweep run of the claim's bases as (target, seeds, tie-break
    order); None when the run has no such target; a not-applicable Outcome when the run cannot test it (flagged
    target, non-softmax attention)."""
    if _basis(run) != claim.p.get("bases", "fourier"):
        return None
    t = _target(run, claim.p["alpha"], rank, claim.p.get("ffn", "gelu"))
    if t is None:
        return None
    n, order = _seeds_of(run, t), _jackson_order(run, t)
    why = _not_a_test(run, t)
    if why:
        return Outcome(NOT_APPLICABLE, why, n, tiebreak=order)
    return t, n, order


@rule("knee", "jackson", f"""Theorem 4.1, finite rank r: with m_h >= r the error can reach ~0. The one knee rule of
the summary and printed line (jackson/rate_sweep/knee_rule.py). Reproduced when the knee e(r-1)/e(r) (median over seeds
of each seed's ratio) is >= {KNEE_MIN:g}x and every m_h >= r stays >= {KNEE_MIN:g}x below m_h = r - 1 (median-over-seeds
MSE); partly when it climbs back past r; not reproduced when the knee is < {KNEE_MIN:g}x. Power: the rank-(r-1) oracle
must be >= {KNEE_MIN:g}x the trained floor (median over m_h >= r), else a knee that did not show is inconclusive.
Control: the rank-m_h oracle lies {KNEE_MIN:g}x below its m_h = r - 1 value at every m_h >= r. Inconclusive, named,
with what the rest would read: an absent or unreadable piece (the knee, a seed's knee, an error, the oracle, the
outlier check), a failing control, an optimisation outlier at m_h r - 1 or r, or a climb only at m_h holding outliers
(nested models: failed fits). The doubling check's budget members (twice the steps lowered their training MSE by more
than {DOUBLING_TOL:.0%}: upper bounds) by direction: at m_h r - 1 a passing knee is inconclusive, at m_h r a failing
one, above r a climb made only of them; a verdict from members no doubling run checked says "{NOT_CHECKED_NOTE}".
Degenerate, uninformative or non-softmax: not applicable. Ties: learned features before
given. """ + BASES_TEXT, {"alpha": (True, positive_number), "rank": (True, finite_rank), "ffn": FFN, "bases": BASES})
def knee(claim: Claim, run: Run) -> Outcome | None:
    found = _jackson_target(claim, run, claim.p["rank"])
    if found is None or isinstance(found, Outcome):
        return found                      # the run has no such target, or cannot test it (not applicable)
    t, n, order = found
    ch = t.get("checks") if isinstance(t.get("checks"), dict) else {}
    if ch.get("knee_drop") is None and ch.get("knee_per_seed") is None and not t.get("curve"):
        return None                       # not a knee folder at all
    j = judge_knee({**t, "n_seeds": t.get("n_seeds", n)})
    lo, hi, interval = seed_range(j["per_seed"], "the per-seed e(r-1)/e(r)")
    note = "" if j.get("checked") or j.get("reading") in (None, INCONCLUSIVE) else "; " + NOT_CHECKED_NOTE
    return Outcome(j["verdict"], f"{_setting(run, t)}: {j['evidence']}; {j['why']}{note}", n, j["drop"], lo, hi,
                   "e(r-1)/e(r), median over seeds", order, interval)


@rule("rate", "jackson", f"""Theorem 4.1, rank inf: the error decays like m_h^-(2 alpha - 1) (Sec. 5.1). Judged by the one rate
rule the sweep's summary and printed line use (jackson/rate_sweep/rate_rule.py), over the sweep's fit range (m_h 1..8)
and over every m_h it ran (1..16 on the card). Evidence: the measured exponent of the held-out MSE with its 95%
bootstrap interval (seeds, then held-out blocks). Reference: the exponent of the exact POD tail sum_{{i > m_h}}
sigma_i^2 (Eq. 47: every sigma_i up to K, plus the tail past K) over the same m_h -- it decides, because over a
finite range the tail's slope is not yet the asymptotic -(2 alpha - 1) (shown beside it). d = measured - reference: a
range is reproduced when the whole interval of d lies within +-{EXPONENT_TOL:g} (over m_h 1..8 a difference of
{EXPONENT_TOL:g} moves e(8)/e(1) by {8 ** EXPONENT_TOL:.2g}x), partly when it only reaches the band, not reproduced
otherwise, steeper or shallower (an upper bound with an unknown constant is met by any falling curve, so a steeper
curve is no evidence of this rate). Power condition: a range whose reference falls by less than {EXPONENT_TOL:g} in
exponent is inconclusive. Absent or unreadable evidence (no exponent, a NaN or infinite one, no interval, no exact
tail, no outlier check) makes that range inconclusive and is named; it never decides. So does an optimisation outlier
in the range (a member above its seed's best smaller m_h by more than the summary's OUTLIER_FACTOR, STUCK_FACTOR with given features: the models are
nested, so it is a failed fit); its d is shown. So does a budget member of the doubling check (twice the steps
lowered its training MSE by more than {DOUBLING_TOL:.0%}: its error is an upper bound). Over the ranges judged:
reproduced when all are, not reproduced when all are, partly otherwise; never better than the weakest promised range:
with one range inconclusive the claim is inconclusive (its line says what the rest would read) unless every judged
range is not reproduced. A verdict from members no doubling run checked keeps its word and says "{NOT_CHECKED_NOTE}".
Controls, shown: the rank-m_h oracle's exponent and the attention term
alone's (features given). A floor is reported, not judged. Flagged targets or non-softmax attention: not applicable.
Ties: features learned before given. """ + BASES_TEXT, {"alpha": (True, positive_number), "ffn": FFN, "bases": BASES})
def rate(claim: Claim, run: Run) -> Outcome | None:
    found = _jackson_target(claim, run, "inf")
    if found is None or isinstance(found, Outcome):
        return found                      # the run has no such target, or cannot test it (not applicable)
    t, n, order = found
    j = judge_rate(t)
    asym = number(t.get("predicted_exponent"))
    text = f"{_setting(run, t)}: {j['line']}" + (f"; asymptotic {fmt_f(asym)}" if asym is not None else "")
    tr = (t.get("checks") or {}).get("tracking") or {}
    if tr.get("floor") and number(tr.get("floor_value")) is not None and tr.get("upper_m_h"):
        text += f"; floor ~{fmt_g(tr['floor_value'], 2)} over m_h {tr['upper_m_h'][0]}..{tr['upper_m_h'][1]}"
    first = next((r for r in j["ranges"] if r.get("d") is not None), None)
    if first is None:                     # nothing measured that could decide: named, never read as evidence
        return Outcome(INCONCLUSIVE, text, n, tiebreak=order)
    boot = (f"95% percentile bootstrap of the exponent over m_h {first['range']} (resamples of the seeds, then of the "
            "held-out blocks within each drawn seed; the mean curve refitted each time: jackson.rates.bootstrap_exponent)")
    return Outcome(j["verdict"], text, n, first["measured"], first["lo"], first["hi"],
                   f"measured exponent over m_h {first['range']}", order, boot)


def tail_exponent(t: dict) -> float | None:
    """The exact tail's exponent over the target's fit range (rate_rule.tail_exponent)."""
    return _tail_exponent(t, [int(m) for m in t.get("fit_m_h") or []])


def _rank_key(r: str) -> float:
    return math.inf if r == "inf" else float(r)


def _rank_pairs(curves: dict[float, dict[str, dict[int, object]]]):
    """Every comparison the rank_order rule asks for on curves[alpha][rank][m_h]: (alpha, r, r', m_h) with r < r' and
    m_h < r', where both curves hold m_h."""
    for alpha, by_rank in sorted(curves.items()):
        rs = sorted(by_rank, key=_rank_key)
        for i, r in enumerate(rs):
            for r2 in rs[i + 1:]:
                for m in sorted(set(by_rank[r]) & set(by_rank[r2])):
                    if m < _rank_key(r2):
                        yield alpha, r, r2, m


def _rank_comparisons(curves: dict[float, dict[str, dict[int, float]]], skip=frozenset()) -> tuple[int, int, list[str]]:
    """The rank_order rule's comparisons on curves[alpha][rank][m_h] = held-out MSE, leaving out those touching a
    point of `skip` ((alpha, rank, m_h): unreadable, or holding a failed fit): (held, total, fails)."""
    held, total, fails = 0, 0, []
    for alpha, r, r2, m in _rank_pairs(curves):
        if (alpha, r, m) in skip or (alpha, r2, m) in skip:
            continue
        total += 1
        if curves[alpha][r][m] <= curves[alpha][r2][m]:
            held += 1
        else:
            fails.append(f"alpha {alpha:g}, r {r} vs {r2} at m_h {m}")
    return held, total, fails


def _seed_curves(run: Run, chosen: dict[float, dict[str, dict]]) -> dict[str, dict[float, dict[str, dict[int, float]]]]:
    """Each seed's own held-out MSE curves of the chosen targets (alpha -> rank -> target), from results.csv
    (one row per target, m_h and seed): seed -> alpha -> rank -> {m_h: test_mse}."""
    out: dict[str, dict[float, dict[str, dict[int, float]]]] = {}
    for row in run.table("results.csv"):
        for alpha, by_rank in chosen.items():
            t = by_rank.get(str(row.get("rank")))
            if t is None or not same(row.get("alpha"), alpha):
                continue
            if row.get("m_ff") not in (None, "") and not same(row["m_ff"], t.get("m_ff")):
                continue
            try:
                e = float(row["test_mse"])
            except (TypeError, ValueError):
                continue
            if math.isfinite(e):
                out.setdefault(row["seed"], {}).setdefault(alpha, {}).setdefault(str(t["rank"]), {})[int(row["m_h"])] = e
    return out


@rule("rank_order", "jackson", """Fig. 1: at a fixed m_h the error increases with the rank r of the target. For every
alpha and every pair of ranks r < r' in one folder, at every m_h < r' (where the rank-r' target cannot be exact),
the held-out MSE (mean over seeds) of rank r is at most that of rank r'. Reproduced when every comparison holds;
partly when more than half hold; not reproduced otherwise. Control: the rank-m_h oracle, ordered so by construction
(a rank-r target loses no more than a rank-r' one at the same m_h): checked at every comparison made; absent or
failing, inconclusive. Power: the share of comparisons is bootstrapped over seeds and each seed's own share is
printed. A comparison is not made where either error is unreadable (NaN, inf), or holds an optimisation outlier (a
member above its seed's best smaller m_h by the summary's OUTLIER_FACTOR (STUCK_FACTOR with given features): nested models, a failed fit) or no
readable outlier check; those are named, and decide nothing: the verdict stands only if it is the same whatever they
would read, else inconclusive, with what the comparisons made read. Ties: features learned before given. Fig. 1's
sin/cos constructions only: a folder of other bases is not evidence.""")
def rank_order(claim: Claim, run: Run) -> Outcome | None:
    if _basis(run) != "fourier":          # Fig. 1's sin/cos constructions only
        return None
    by_alpha: dict[float, dict[str, list]] = {}
    for t in _targets(run):
        if not _not_a_test(run, t) and _ffn_matches(t, "gelu"):
            by_alpha.setdefault(float(t["alpha"]), {}).setdefault(str(t["rank"]), []).append(t)
    chosen = {a: {r: _widest(ts) for r, ts in ranks.items()} for a, ranks in by_alpha.items() if len(ranks) >= 2}
    rows = {a: {r: {int(c["m_h"]): c for c in t.get("curve") or [] if isinstance(c, dict)
                    and isinstance(c.get("m_h"), (int, float))} for r, t in by_rank.items()} for a, by_rank in chosen.items()}
    curves = {a: {r: {m: number(c.get("test_mse")) for m, c in cs.items()} for r, cs in by_rank.items()}
              for a, by_rank in rows.items()}
    pairs = list(_rank_pairs(curves))
    if not pairs:
        return None
    skip: dict[tuple, str] = {}             # (alpha, rank, m_h) -> why its comparisons are not made
    for a, by_rank in chosen.items():
        for r, t in by_rank.items():
            bad = outliers_in(t, list(curves[a][r]))
            for m in curves[a][r]:
                if curves[a][r][m] is None:
                    skip[(a, r, m)] = "unreadable error"
                elif bad is None:
                    skip[(a, r, m)] = "no readable outlier check"
            for o in bad or []:
                skip.setdefault((a, r, o["m_h"]), "optimisation outlier")
    held, total, fails = _rank_comparisons(curves, skip)
    k = len(pairs) - total
    ts = [t for a in sorted(chosen) for t in chosen[a].values()]
    seeds = [_seeds_of(run, t) for t in ts]
    n = min(s for s in seeds if s) if any(seeds) else None
    feats = _jackson_order(run, ts[0])
    why: dict[str, list[str]] = {}
    for (a, r, m), w in sorted(skip.items(), key=lambda kv: (kv[0][0], _rank_key(kv[0][1]), kv[0][2])):
        why.setdefault(w, []).append(f"alpha {a:g} r {r} m_h {m}")
    not_made = "; ".join(f"{w} at {len(p)} point{'s' if len(p) > 1 else ''}: {', '.join(p[:3])}"
                         + (" ..." if len(p) > 3 else "") for w, p in why.items())
    if total == 0:
        return Outcome(INCONCLUSIVE, f"no comparison can be made ({not_made})", n, tiebreak=feats)

    def grade(h: int, tot: int) -> str:
        return REPRODUCED if h == tot else PARTLY if h > tot / 2 else NOT_REPRODUCED

    oracle = {a: {r: {m: number(c.get("oracle_mse")) for m, c in cs.items()} for r, cs in by_rank.items()}
              for a, by_rank in rows.items()}
    made = [p for p in pairs if (p[0], p[1], p[3]) not in skip and (p[0], p[2], p[3]) not in skip]
    ctl = [(oracle[a][r].get(m), oracle[a][r2].get(m)) for a, r, r2, m in made]
    no_ctl = sum(x is None or y is None for x, y in ctl)
    ctl_bad = sum(x is not None and y is not None and x > y * (1 + 1e-6) + 1e-12 for x, y in ctl)
    reading = v = grade(held, total)
    text = f"{held} of {total} comparisons hold" + (f"; fails: {'; '.join(fails[:3])}" + (" ..." if len(fails) > 3 else "")
                                                   if fails else "")
    if k:
        text += f"; {k} of {len(pairs)} comparisons not made ({not_made})"
        if grade(held + k, total + k) != grade(held, total + k):     # what they would read could change the verdict
            v = INCONCLUSIVE
            text += f": they could change it (would read {reading} from the {total} made)"
        else:
            text += ": whatever they would read, the verdict is the same"
    if no_ctl or ctl_bad:
        v = INCONCLUSIVE
        text += (f"; the control (the rank-m_h oracle) is absent at {no_ctl} of {total} comparisons" if no_ctl else
                 f"; the control fails: the rank-m_h oracle is out of order at {ctl_bad} of {total} comparisons")
        text += f" (would read {reading})"
    by_seed = _seed_curves(run, chosen)
    labels = sorted(by_seed, key=lambda k: (len(k), k))

    def share(resample: list[str]) -> float | None:
        """The same share on the mean curves of a resample of the seeds (results.csv)."""
        mean = {a: {r: {m: statistics.fmean(by_seed[s][a][r][m] for s in resample)
                        for m in set.intersection(*(set(by_seed[s].get(a, {}).get(r, {})) for s in resample))}
                    for r in by_rank} for a, by_rank in chosen.items()}
        h, tot, _ = _rank_comparisons(mean, skip)
        return h / tot if tot else None

    lo, hi, interval = seed_bootstrap(labels, share, "the same share on the mean-over-seeds held-out MSE curves "
                                                      "(results.csv), the comparisons not made left out")
    if len(labels) >= 2:
        text += f"; each seed alone {', '.join(fmt_f(share([s])) for s in labels)}"
    return Outcome(v, text, n, held / total, lo, hi, "share of comparisons that hold", feats, interval)


@rule("alpha_order", "jackson", f"""Fig. 1: the decay rates differ with alpha as -(2 alpha - 1) does: steeper for larger
alpha, by as much as the spectra differ. The rank-inf exponents of one folder (bootstrap 95% intervals); for every
pair alpha < alpha': the direction -- the exponent at alpha' below that at alpha with disjoint intervals; and the
magnitude -- the difference of the two exponents within +-{EXPONENT_TOL:g} of the difference of their references
(the exact-tail exponents over the fit range, as the rate rule). Reproduced when every pair holds both; not
reproduced when some pair is reversed with disjoint intervals; partly otherwise (overlapping intervals, or ordered by
too little or too much). An alpha whose exponent, interval, exact tail or outlier check is absent or unreadable, or
whose fit range holds an optimisation outlier (a failed fit, as the rate rule reads it), is named and makes the
verdict inconclusive unless a readable pair is already reversed. Control: the references'
own differences, shown. Ties: features learned before given. Fig. 1's sin/cos constructions only: a folder of other
bases is not evidence.""")
def alpha_order(claim: Claim, run: Run) -> Outcome | None:
    if _basis(run) != "fourier":          # Fig. 1's sin/cos constructions only
        return None
    ex, missing, seen = {}, [], 0
    for t in _targets(run):
        if str(t.get("rank")) == "inf" and not _not_a_test(run, t):
            e = (t.get("exponents") or {}).get("test")
            best = _target(run, t["alpha"], "inf")
            if best is not t:
                continue
            seen += 1
            e = e if isinstance(e, dict) else {}
            s_, lo, hi = (number(e.get(k)) for k in ("slope", "lo", "hi"))
            ref = tail_exponent(t)
            gone = [w for w, x in (("exponent", s_), ("interval", lo if hi is not None else None), ("exact tail", ref))
                    if x is None]
            bad = outliers_in(t, [int(m) for m in t.get("fit_m_h") or []])
            if bad is None:
                gone.append("optimisation-outlier check")
            if gone:              # absent or unreadable: named, never replaced by another number
                missing.append(f"alpha {float(t['alpha']):g}: no readable {', '.join(gone)}")
                continue
            if bad:               # its exponent is partly a failed fit's (nested models), as the rate rule reads it
                missing.append(f"alpha {float(t['alpha']):g}: an optimisation outlier in its fit range ("
                               + ", ".join(f"m_h {o['m_h']} seed {o['seed']}" for o in bad) + ")")
                continue
            ex[float(t["alpha"])] = (s_, lo, hi, _seeds_of(run, t), t, ref)
    if seen < 2:
        return None
    if len(ex) < 2:
        return Outcome(INCONCLUSIVE, "cannot tell: " + "; ".join(missing), None)
    alphas = sorted(ex)
    ordered = reversed_ = sized = 0
    gaps = []
    for i, a in enumerate(alphas):
        for b in alphas[i + 1:]:
            ordered += ex[b][2] < ex[a][1]
            reversed_ += ex[b][1] > ex[a][2]
            dm, dr = ex[b][0] - ex[a][0], ex[b][5] - ex[a][5]
            sized += abs(dm - dr) <= EXPONENT_TOL
            gaps.append(f"{a:g} -> {b:g}: {fmt_f(dm, sign=True)} (reference {fmt_f(dr, sign=True)})")
    pairs = len(alphas) * (len(alphas) - 1) // 2
    v = (REPRODUCED if ordered == pairs and sized == pairs else NOT_REPRODUCED if reversed_ else PARTLY)
    if missing and v != NOT_REPRODUCED:   # the alphas that could not be read might reverse the order
        v = INCONCLUSIVE
    text = ("; ".join(f"alpha {a:g}: {fmt_f(ex[a][0])} [{fmt_f(ex[a][1])}, {fmt_f(ex[a][2])}] (reference {fmt_f(ex[a][5])}, "
                      f"asymptotic {fmt_f(-(2 * a - 1))})" for a in alphas)
            + f"; {ordered} of {pairs} pairs ordered, {sized} of {pairs} by the reference's amount; differences "
            + ", ".join(gaps) + ("; cannot tell from: " + "; ".join(missing) if missing else ""))
    seeds = [ex[a][3] for a in alphas if ex[a][3]]
    # per seed: the share of pairs ordered by that seed's own exponents (exponent_per_seed; point estimates,
    # since one seed has no bootstrap interval), for the seeds every alpha has
    per = [{str(k): v for k, v in (ex[a][4].get("exponent_per_seed") or {}).items()} for a in alphas]
    common = sorted(set.intersection(*(set(p) for p in per)), key=lambda k: (len(k), k))
    per_seed = [sum(per[j][s] < per[i][s] for i in range(len(alphas)) for j in range(i + 1, len(alphas))) / pairs
                for s in common]
    lo, hi, interval = seed_range(per_seed, "the share of pairs ordered by each seed's own exponent (point "
                                             "estimates, exponent_per_seed; the value asks for disjoint bootstrap "
                                             "intervals, which one seed does not have)")
    if len(per_seed) >= 2:
        text += f"; per seed by point estimates {', '.join(fmt_f(x) for x in per_seed)}"
    return Outcome(v, text, min(seeds) if seeds else None, ordered / pairs, lo, hi, "share of alpha pairs ordered",
                   _jackson_order(run, ex[alphas[0]][4]), interval)


