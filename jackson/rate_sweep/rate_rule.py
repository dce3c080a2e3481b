"""The one rule that judges a rank-inf curve's rate (Theorem 4.1: error ~ m_h^-(2 alpha - 1)), used by the summary,
the printed line and the claims ledger alike, so the three never disagree on a folder.

    judge(t)  ->  {"verdict", "ranges": [one judgement per range of m_h], "line", "missing"}

t is one target of a summary.json.  Each range of m_h -- the sweep's fit range (1..8 by default) and every m_h the
run holds (1..16 on the card) -- is judged on its own:

  evidence   the measured exponent of the held-out MSE over the range, with its 95% bootstrap interval
             (t["exponents_by_range"][range]["test"]; the fit range also as t["exponents"]["test"]);
  reference  the exponent of the exact POD tail sum_{i > m_h} sigma_i^2 (Eq. 47; every sigma_i up to K, plus the
             tail past K) fitted over the same m_h (t["bound"]) -- it decides: over a finite range the tail's slope
             is not yet the asymptotic -(2 alpha - 1);
  power      the reference must fall by more than EXPONENT_TOL in exponent (else a flat curve would pass);
  controls   shown, not deciding: the rank-m_h oracle's exponent and the attention term alone (features given),
             when the summary holds them.

d = measured - reference.  A range is reproduced when the whole interval of d lies within +-EXPONENT_TOL, partly when
the interval only reaches that band, not reproduced otherwise.  Any piece of evidence that is absent or unreadable
(NaN, inf, not a number) makes that range inconclusive and is named -- it is never read as agreement or as failure.
So does an optimisation outlier inside the range (t["checks"]["outliers"]: a member that ended more than
checks.outlier_factor x above (OUTLIER_FACTOR; STUCK_FACTOR with given features) the best smaller m_h of its seed).  The models are nested -- a larger m_h can copy a
smaller one -- so such a member measures a failed optimisation, not the rate, and it moves the fitted exponent
either way: at the end of a range it flattens the slope, at its start it steepens it.  The range's d is still
shown.  A summary without that check (an older one) cannot show its range is free of outliers, so that range is
inconclusive as well.
The doubling check's labels (jackson/rate_sweep/doubling.py; t["doubling"]): a range holding a *budget* member
(twice the steps lowered its training MSE by more than 10%: its error is an upper bound) is inconclusive and names it.
Over the ranges judged: reproduced when all are, not reproduced when all are, partly otherwise; inconclusive when
none could be judged.  A claim is never judged better than its weakest promised range: where one range is
inconclusive, the verdict is inconclusive (the line says what the others would read), unless every judged range is
not reproduced (a range of one m_h holds no slope and is no promised range).  A verdict read from members that no
doubling run checked keeps its word but its line says "fits not
checked by training on" (`checked` False).  Standard library only: the report imports this without numpy or torch.
"""
from __future__ import annotations

import math

from . import doubling      # the labels' words (standard library at import)

EXPONENT_TOL = 0.25    # exponents agree when they differ by <= this: over m_h 1..8 it moves e(8)/e(1) by 8^0.25 = 1.7x

REPRODUCED, PARTLY, NOT_REPRODUCED, INCONCLUSIVE = "reproduced", "partly", "not reproduced", "inconclusive"


def number(v) -> float | None:
    """A finite float, or None for absent / unreadable (NaN, inf, a string, a bool)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def label(ms) -> str:
    return f"{ms[0]}..{ms[-1]}"


def span_text(ms: list[int]) -> str:
    """[1, 11, 12, 13] -> "1, 11..13": consecutive m_h as one span."""
    runs = []
    for m in ms:
        if runs and m == runs[-1][-1] + 1:
            runs[-1].append(m)
        else:
            runs.append([m])
    return ", ".join(f"{r[0]}" + (f"..{r[-1]}" if len(r) > 1 else "") for r in runs)


def slope(ms, ys) -> float | None:
    """Least-squares slope of log y against log m (None with fewer than two positive points)."""
    pts = [(math.log(m), math.log(y)) for m, y in zip(ms, ys) if m > 0 and number(y) is not None and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    den = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / den if den > 0 else None


def tail_exponent(t: dict, ms) -> float | None:
    """The exponent of the exact tail sum_{i > m_h} sigma_i^2 over the m_h `ms` (the summary's `bound` rows); None where
    a tail of those m_h is absent or unreadable."""
    tail = {}
    for b in t.get("bound") or []:
        if isinstance(b, dict) and isinstance(b.get("m_h"), (int, float)):
            tail[int(b["m_h"])] = number(b.get("tail_energy"))
    if not ms or any(tail.get(m) is None or tail[m] <= 0 for m in ms):
        return None
    return slope(ms, [tail[m] for m in ms])


def ranges_of(t: dict) -> list[list[int]]:
    """The ranges of m_h a target is judged on: its fit range and, where the run holds more m_h, all of them."""
    out = []
    fit = [int(m) for m in t.get("fit_m_h") or [] if isinstance(m, (int, float))]
    if fit:
        out.append(fit)
    for key, r in sorted((t.get("exponents_by_range") or {}).items()):
        ms = [int(m) for m in (r or {}).get("m_h") or [] if isinstance(m, (int, float))]
        if ms and ms != fit:
            out.append(ms)
    return out


def _measured(t: dict, ms) -> dict | None:
    by = (t.get("exponents_by_range") or {}).get(label(ms))
    if by is not None:
        return (by or {}).get("test")
    if [int(m) for m in t.get("fit_m_h") or []] == ms:
        return (t.get("exponents") or {}).get("test")
    return None


def _control(t: dict, ms, kind: str) -> float | None:
    by = (t.get("exponents_by_range") or {}).get(label(ms))
    e = (by or {}).get(kind) if by is not None else ((t.get("exponents") or {}).get(kind)
                                                      if [int(m) for m in t.get("fit_m_h") or []] == ms else None)
    return number((e or {}).get("slope")) if isinstance(e, dict) else None


def judge_range(t: dict, ms) -> dict:
    """One range of m_h judged by the rule above."""
    out = {"m_h": list(ms), "range": label(ms), "missing": []}
    e = _measured(t, ms)
    s = number((e or {}).get("slope")) if isinstance(e, dict) else None
    lo = number((e or {}).get("lo")) if isinstance(e, dict) else None
    hi = number((e or {}).get("hi")) if isinstance(e, dict) else None
    ref = tail_exponent(t, ms)
    out.update(measured=s, lo=lo, hi=hi, reference=ref, oracle=_control(t, ms, "oracle"),
               attention=_control(t, ms, "attention"))
    if len(set(ms)) < 2:                  # one m_h has no slope: that, not a missing piece, is why
        out["missing"].append(f"the range m_h {label(ms)} holds one m_h: no slope to fit")
        out["verdict"], out["why"], out["single"] = INCONCLUSIVE, out["missing"][0], True
        return out
    if e is None:
        out["missing"].append(f"no measured exponent over m_h {label(ms)}")
    elif s is None:
        out["missing"].append(f"the measured exponent over m_h {label(ms)} is unreadable ({(e or {}).get('slope')!r})")
    elif lo is None or hi is None:
        out["missing"].append(f"no interval for the exponent over m_h {label(ms)} (a line through two points, or an "
                              "unreadable bound)")
    if ref is None:
        out["missing"].append(f"no exact tail sum_(i > m_h) sigma_i^2 at every m_h of {label(ms)} in summary.json")
    bad = outliers_in(t, ms)
    if bad is None:
        out["missing"].append(f"no readable optimisation-outlier check of m_h {label(ms)} in summary.json")
    if out["missing"]:
        out["verdict"], out["why"] = INCONCLUSIVE, "; ".join(out["missing"])
        return out
    d, dlo, dhi = s - ref, lo - ref, hi - ref
    out.update(d=d, d_lo=dlo, d_hi=dhi)
    if abs(ref) <= EXPONENT_TOL:
        out["verdict"] = INCONCLUSIVE
        out["why"] = f"the exact tail falls by less than {EXPONENT_TOL:g} in exponent: a flat curve would pass"
    elif -EXPONENT_TOL <= dlo and dhi <= EXPONENT_TOL:
        out["verdict"], out["why"] = REPRODUCED, "the interval of d lies within the band"
    elif dlo <= EXPONENT_TOL and dhi >= -EXPONENT_TOL:
        out["verdict"], out["why"] = PARTLY, "the interval of d reaches the band"
    else:
        out["verdict"] = NOT_REPRODUCED
        out["why"] = "steeper than the exact tail" if dhi < -EXPONENT_TOL else "shallower than the exact tail"
    if bad:                       # a failed optimisation inside the range: its slope is partly the optimiser's
        named = ", ".join(f"m_h {o['m_h']} seed {o['seed']} at {o['ratio']:.3g}x its best smaller m_h" for o in bad)
        out["missing"].append(f"optimisation outlier{'s' if len(bad) > 1 else ''} in m_h {label(ms)}: {named}")
        out["why"] = (f"would read {out['verdict']} ({out['why']}), but holds "
                      + ("an optimisation outlier" if len(bad) == 1 else f"{len(bad)} optimisation outliers")
                      + f" ({named}; nested models: a failed fit, not the rate)")
        out["verdict"] = INCONCLUSIVE
    return budget_clause(t, ms, out)


def budget_clause(t: dict, ms, out: dict) -> dict:
    """The doubling check's labels over a judged range: a budget member (twice the steps lowered its training MSE by
    more than doubling.DOUBLING_TOL) makes the range inconclusive -- its error is only an upper bound, so the slope
    is partly the budget's -- and is named, its d still shown; unreadable labels are a named gap. `checked`: every
    member of the range was trained on and labelled converged."""
    lists = doubling.entry_lists(t)
    if lists is None:                      # a summary written before the check: every member not checked
        out["checked"] = False
        return out
    if lists is False:
        out["checked"] = False
        out["missing"].append(f"unreadable doubling-check labels for m_h {label(ms)} in summary.json")
        if out["verdict"] != INCONCLUSIVE:
            out["why"] = f"would read {out['verdict']} ({out['why']}), but its doubling-check labels are unreadable"
            out["verdict"] = INCONCLUSIVE
        return out
    conv, bud, unchecked = ([i for i in x if i[0] in ms] for x in lists)
    out["checked"] = bool(conv) and not bud and not unchecked
    if bud:
        named = ", ".join(f"m_h {b[0]} seed {b[1]}" + (f" ({number(b[2]):.0%})" if len(b) > 2 and number(b[2]) is not None
                                                          else "") for b in bud)
        out["budget"] = [b[:2] for b in bud]
        if out["verdict"] != INCONCLUSIVE:
            out["why"] = (f"would read {out['verdict']} ({out['why']}), but holds budget member{'s' if len(bud) > 1 else ''} "
                          f"({named}: twice the steps lowered the training MSE by more than "
                          f"{doubling.DOUBLING_TOL:.0%}, so the error is an upper bound)")
            out["verdict"] = INCONCLUSIVE
        else:
            out["why"] += f"; budget member{'s' if len(bud) > 1 else ''}: {named}"
    return out


def outliers_in(t: dict, ms) -> list[dict] | None:
    """The optimisation outliers of t (checks["outliers"]) whose m_h lies in `ms`, each with its ratio to the best
    smaller m_h of its seed; None where the check is absent or an entry of it is unreadable -- then no range can show
    it is free of them."""
    checks = t.get("checks")
    found = checks.get("outliers") if isinstance(checks, dict) else None
    if not isinstance(found, list):
        return None
    out = []
    for o in found:
        if not isinstance(o, dict):
            return None
        m, e, best = o.get("m_h"), number(o.get("test_mse")), number(o.get("best_smaller"))
        if not isinstance(m, int) or isinstance(m, bool) or e is None or best is None or best <= 0:
            return None
        if m in ms:
            out.append({"m_h": m, "seed": o.get("seed"), "ratio": e / best})
    return out


def _f(v, sign=False) -> str:
    return "n/a" if v is None else (f"{v:+.2f}" if sign else f"{v:.2f}")


def range_text(r: dict) -> str:
    if r.get("d") is None:
        return f"m_h {r['range']}: {r['verdict']} ({r['why']})"
    ctl = "".join(f", {name} {_f(r[k])}" for k, name in (("oracle", "rank-m_h oracle"),
                                                         ("attention", "attention term alone")) if r.get(k) is not None)
    return (f"m_h {r['range']}: exponent {_f(r['measured'])} [{_f(r['lo'])}, {_f(r['hi'])}] against the exact tail's "
            f"{_f(r['reference'])}{ctl}; d = {_f(r['d'], True)} [{_f(r['d_lo'], True)}, {_f(r['d_hi'], True)}]: "
            f"{r['verdict']} ({r['why']})")


def judge(t: dict) -> dict:
    """Every range judged, then together: see the module docstring."""
    rs = [judge_range(t, ms) for ms in ranges_of(t)]
    judged = [r["verdict"] for r in rs if r["verdict"] != INCONCLUSIVE]
    unresolved = [r["range"] for r in rs if r["verdict"] == INCONCLUSIVE and not r.get("single")]   # one m_h: no slope
    if not judged:
        v = INCONCLUSIVE
    elif all(x == REPRODUCED for x in judged):
        v = REPRODUCED
    elif all(x == NOT_REPRODUCED for x in judged):
        v = NOT_REPRODUCED
    else:
        v = PARTLY
    line = "; ".join(range_text(r) for r in rs) if rs else "no range of m_h to judge (fewer than two m_h)"
    if judged and unresolved and v != NOT_REPRODUCED:     # never better than its weakest promised range
        line += (f"; together: would read {v} over m_h {', '.join(r['range'] for r in rs if r['verdict'] != INCONCLUSIVE)}, "
                 f"but m_h {', '.join(unresolved)} {'is' if len(unresolved) == 1 else 'are'} inconclusive")
        v = INCONCLUSIVE
    checked = bool(rs) and all(r.get("checked") for r in rs if r["verdict"] != INCONCLUSIVE) and bool(judged)
    if judged and not checked:
        line += "; " + doubling.NOT_CHECKED_NOTE
    return {"verdict": v, "ranges": rs, "line": line, "tol": EXPONENT_TOL, "checked": checked,
            "missing": [m for r in rs for m in r["missing"]] or ([] if rs else ["fewer than two m_h"])}
