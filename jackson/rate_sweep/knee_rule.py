"""The one rule that judges a finite-rank curve's knee (Theorem 4.1: a rank-r target is reached exactly once m_h >= r),
used by the summary, the printed line and the claims ledger alike, so the three never disagree on a folder.

    judge(t)  ->  {"verdict", "reading", "why", "evidence", "line", "missing", "drop", "per_seed", "stay", ...}

t is one finite-rank target of a summary.json.  Evidence, all from t:

  knee      e(r-1)/e(r), the median over seeds of each seed's ratio (t["checks"]["knee_drop"], "knee_per_seed");
  stays     the median-over-seeds error at every m_h >= r against that at m_h = r - 1 (t["curve"]);
  power     the rank-(r-1) oracle (what the target loses at rank r - 1) against the trained floor, the median over
            m_h >= r of the median-over-seeds error: a KNEE_MIN x knee can show only where it is KNEE_MIN x above it;
  control   the rank-m_h oracle itself: at every m_h >= r it must lie KNEE_MIN x below its value at m_h = r - 1
            (it is exactly 0 when the target has rank r) -- else the target is not of rank r and no knee is owed.

The reading, from what is readable: reproduced when the knee is >= KNEE_MIN and every m_h >= r stays >= KNEE_MIN x
below m_h = r - 1; partly when it falls at r but climbs back at a larger m_h; not reproduced when the knee is
< KNEE_MIN although the power condition holds; inconclusive when it is < KNEE_MIN and the power condition fails.

Then what may not decide:
  * Absent or unreadable evidence -- the knee, a seed's knee (fewer readable than t["n_seeds"], or no seed count),
    the error at m_h = r - 1 or at any m_h >= r, the power reference, the control, the outlier check -- makes the
    verdict inconclusive, names the piece, and shows what the readable evidence would read.
  * An optimisation outlier (t["checks"]["outliers"]: a member more than checks.outlier_factor x above the best smaller
    m_h of its seed) at m_h = r - 1 or r: the models are nested, so that member measures a failed fit, not the knee;
    inconclusive, with the reading shown.
  * Outliers at m_h > r can only raise the median error there.  A "reproduced" stands with them; a "partly" stands only
    if the climb shows at an m_h that holds no outlier -- a climb made of outliers is a failed fit: inconclusive.

The doubling check's budget members (jackson/rate_sweep/doubling.py; t["doubling"]) are read by direction, each
error an upper bound (`by_direction`): at m_h = r - 1 a passing knee becomes inconclusive, at m_h = r a failing one,
above r a climb made only of budget members.  A verdict read from members no doubling run checked keeps its word,
its line saying "fits not checked by training on" (`checked` False).

Standard library only: the report imports this without numpy or torch.
"""
from __future__ import annotations

import statistics

from ..verdict import fmt_g as _g
from . import doubling
from .rate_rule import INCONCLUSIVE, NOT_REPRODUCED, PARTLY, REPRODUCED, number, outliers_in, span_text

KNEE_MIN = 10.0        # an order of magnitude (the sweep's checks.KNEE_MIN)


def _knee(v) -> float | None:
    """A knee ratio as read: a number > 0 (inf for an error of exactly 0 from m_h = r), else None (unreadable)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v <= 0:
        return None
    return float(v)


def _stay(before: float, errors: list[float]) -> float | None:
    """How far the worst of `errors` stays below `before` (inf when all are exactly 0)."""
    if not errors:
        return None
    worst = max(errors)
    return float("inf") if worst == 0 else before / worst


def _named(bad: list[dict]) -> str:
    return ", ".join(f"m_h {o['m_h']} seed {o['seed']} at {o['ratio']:.3g}x its best smaller m_h" for o in bad)


def judge(t: dict) -> dict:
    """The knee of one finite-rank target, judged by the rule above."""
    r = int(t["rank"])
    ch = t.get("checks") if isinstance(t.get("checks"), dict) else {}
    raw_drop, raw_seeds = ch.get("knee_drop"), ch.get("knee_per_seed")
    rows = [c for c in t.get("curve") or [] if isinstance(c, dict) and isinstance(c.get("m_h"), (int, float))]
    curve = {int(c["m_h"]): number(c.get("test_median", c.get("test_mse"))) for c in rows}
    oracle = {int(c["m_h"]): number(c.get("oracle_mse")) for c in rows}
    per_seed = [float(v) for v in (raw_seeds if isinstance(raw_seeds, list) else []) if _knee(v) is not None]
    drop, before = _knee(raw_drop), curve.get(r - 1)
    after = {m: e for m, e in curve.items() if m >= r and e is not None}
    missing = []

    if drop is None:
        missing.append(f"the knee e({r - 1})/e({r}) is " + ("absent" if raw_drop is None else f"unreadable ({raw_drop!r})"))
    n = t.get("n_seeds")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        missing.append("the seed count is absent or unreadable")
    elif len(per_seed) < n:
        missing.append(f"{n - len(per_seed)} of {n} seeds have no readable knee e({r - 1})/e({r})")
    if before is None:
        missing.append(f"the error at m_h = {r - 1} is " + ("absent" if r - 1 not in curve else "unreadable"))
    unreadable = sorted(m for m, e in curve.items() if m >= r and e is None)
    if unreadable:
        missing.append("unreadable error at m_h " + ", ".join(map(str, unreadable)))
    if not after:
        missing.append(f"no readable error at m_h >= {r}")
    ref = oracle.get(r - 1)
    if ref is None:
        missing.append(f"the power reference and control (the rank-{r - 1} oracle) are absent or unreadable")
    control_bad = []
    if ref is not None:
        no_ctl = sorted(m for m in after if oracle.get(m) is None)
        if no_ctl:
            missing.append("the control (the rank-m_h oracle) is absent at m_h " + ", ".join(map(str, no_ctl)))
        control_bad = sorted(m for m in after if oracle.get(m) is not None and oracle[m] * KNEE_MIN > ref)
    bad_all = outliers_in(t, list(range(r - 1, max([*curve, r]) + 1)))
    if bad_all is None:
        missing.append("no readable optimisation-outlier check")
        bad_all = []

    stay = _stay(before, list(after.values())) if before is not None else None
    floor = statistics.median(after.values()) if after else None
    power = ref / floor if ref is not None and floor else None
    parts = [f"e({r - 1})/e({r}) = {_g(drop)} (median"
             + (f"; per seed {_g(min(per_seed))}-{_g(max(per_seed))})" if len(per_seed) > 1 else ")")]
    if stay is not None:
        parts.append(f"every m_h >= {r} stays at least {_g(stay)}x below m_h = {r - 1}" if stay >= 1 else
                     f"the worst m_h >= {r} ends {_g(1 / stay)}x above m_h = {r - 1}")
    if power is not None:
        parts.append(f"power: rank-{r - 1} oracle {_g(ref, 2)} is {_g(power)}x the trained floor {_g(floor, 2)}")

    # the reading: what the readable evidence says
    reading, why = None, ""
    if drop is not None and drop < KNEE_MIN:
        if power is None:
            why = "no power condition to read"
        elif power < KNEE_MIN:
            reading, why = INCONCLUSIVE, f"power < {KNEE_MIN:g}x: a {KNEE_MIN:g}x knee could not show"
        else:
            reading, why = NOT_REPRODUCED, f"the knee is < {KNEE_MIN:g}x where one could show"
    elif drop is not None and stay is not None:
        if stay >= KNEE_MIN:
            reading, why = REPRODUCED, f"a >= {KNEE_MIN:g}x knee that stays down"
        else:
            reading, why = PARTLY, f"a >= {KNEE_MIN:g}x knee that climbs back past m_h = {r}"

    verdict = reading
    knee_bad = [o for o in bad_all if o["m_h"] in (r - 1, r)]
    above = [o for o in bad_all if o["m_h"] > r]
    would = f"would read {reading} ({why}), but " if reading is not None else ""
    if missing:
        verdict, why = INCONCLUSIVE, would + "cannot tell from: " + "; ".join(missing)
    elif control_bad:
        verdict = INCONCLUSIVE
        why = (would + f"the control fails: the rank-m_h oracle at m_h {', '.join(map(str, control_bad))} is not "
               f"{KNEE_MIN:g}x below its value at m_h = {r - 1} (the target is not of rank {r})")
    elif knee_bad:
        verdict = INCONCLUSIVE
        why = (would + ("an optimisation outlier" if len(knee_bad) == 1 else f"{len(knee_bad)} optimisation outliers")
               + f" among the knee's members ({_named(knee_bad)}; nested models: a failed fit, not the rank)")
    elif reading == PARTLY and above:
        out_ms = {o["m_h"] for o in above}
        clean = _stay(before, [e for m, e in after.items() if m not in out_ms])
        if clean is None or clean >= KNEE_MIN:
            verdict = INCONCLUSIVE
            why = (would + f"the climb is only at m_h holding optimisation outliers ({len(above)} members at m_h "
                   + span_text(sorted(out_ms)) + "; nested models: failed fits, not the rank)")
        else:
            why += f" at an m_h free of optimisation outliers (at most {_g(clean)}x below m_h = {r - 1} there)"
    elif reading == REPRODUCED and above:
        why += f"; {len(above)} optimisation outlier{'s' if len(above) > 1 else ''} at m_h > {r} can only raise the error"
    if verdict is None:
        verdict = INCONCLUSIVE
    verdict, why, checked, budget = by_direction(t, r, reading, verdict, why, before, after)
    evidence = "; ".join(parts)
    line = f"{evidence}: {verdict} ({why})" + ("" if checked or reading in (None, INCONCLUSIVE) else "; " + doubling.NOT_CHECKED_NOTE)
    return {"verdict": verdict, "reading": reading, "why": why, "evidence": evidence,
            "line": line, "missing": missing, "drop": drop, "checked": checked, "budget": budget,
            "per_seed": per_seed, "stay": stay, "oracle": ref, "floor": floor, "outliers": knee_bad + above}


def by_direction(t: dict, r: int, reading, verdict: str, why: str, before, after: dict):
    """The doubling check's budget members (t["doubling"]), each error only an upper bound, read by the way each
    bound cuts: at m_h = r - 1 the true knee may be smaller, so a passing knee (reproduced, partly) cannot stand; at
    m_h = r it may be larger, so a failing one (not reproduced) cannot; above r the errors can only fall, so staying
    down stands and a climb back made only of budget members cannot.  Returns (verdict, why, checked, budget)."""
    lists = doubling.entry_lists(t)
    if lists is None:
        return verdict, why, False, []
    if lists is False:
        if verdict != INCONCLUSIVE:
            verdict, why = INCONCLUSIVE, f"would read {verdict} ({why}), but its doubling-check labels are unreadable"
        return verdict, why, False, []
    conv, bud, unchecked = lists
    members = [i for x in lists for i in x if i[0] >= r - 1]
    checked = bool(members) and all(i in conv for i in members)
    budget = [b[:2] for b in bud if b[0] >= r - 1]
    if verdict == INCONCLUSIVE or not budget:
        return verdict, why, checked, budget
    at = {m: [b for b in budget if b[0] == m] for m in (r - 1, r)}
    name = lambda bs: ", ".join(f"m_h {m} seed {sd}" for m, sd in bs)   # noqa: E731
    bound = f"twice the steps lowered the training MSE by more than {doubling.DOUBLING_TOL:.0%}: an upper bound"
    if at[r - 1] and verdict in (REPRODUCED, PARTLY):
        return (INCONCLUSIVE, f"would read {verdict} ({why}), but a budget member at m_h = {r - 1} ({name(at[r - 1])}; "
                f"{bound}) can only make the knee smaller", checked, budget)
    if at[r] and verdict == NOT_REPRODUCED:
        return (INCONCLUSIVE, f"would read {verdict} ({why}), but a budget member at m_h = {r} ({name(at[r])}; {bound}) "
                f"can only make the knee larger", checked, budget)
    high = sorted({m for m, _ in budget if m > r})
    if verdict == PARTLY and high:
        clean = _stay(before, [e for m, e in after.items() if m not in high])
        if clean is None or clean >= KNEE_MIN:
            return (INCONCLUSIVE, f"would read {verdict} ({why}), but the climb is only at m_h holding budget members "
                    f"(m_h {span_text(high)}; {bound})", checked, budget)
    return verdict, why + f"; budget members {name(budget)} (upper bounds) cannot change it", checked, budget


def knee_short(k: dict) -> str:
    """The knee's judgement in a few words, for a printed line or a table cell."""
    return f"knee {k['line']}"
