"""The stated rules behind every verdict of a sweep's summary (KNEE_MIN, TRACK_SLOPE, ...; `rule_values` puts them
in summary.json) and the checks they decide: the knee, outlier members, degenerate targets, tracking."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..rates import fit_power_law, predicted_exponent
from . import knee_rule


# ---- the stated rules behind every verdict of summary.md ----------------------------------------
KNEE_MIN = knee_rule.KNEE_MIN    # finite rank r: a median over seeds of e(r-1)/e(r) >= this (the knee rule's, knee_rule.py)
OUTLIER_FACTOR = 3.0     # a member more than this x above the best smaller m_h (same target and seed) failed to optimise ...
STUCK_FACTOR = 1.2       # ... with given features, more than this x (their seeds' noise: every member of the committed given-recipe
                         # folders ends <= 0.995x its seed's best smaller m_h but two stuck ones at 1.37x and 2.14x; learned
                         # features' sound members reach 1.36x, so they keep OUTLIER_FACTOR: reports/jackson/FITTING.md)
OUTLIER_FLOOR = 1e-8     # ... and above this (~1e-6 of Var(y) on these targets): below it members sit near float32 round-off
SELF_WEIGHT_MAX = 0.5    # degenerate target: mean self-attention weight above this (each token mostly attends to itself), or
TRIVIAL_FACTOR = 3.0     # a trivial predictor (mean, copy, uniform attention) within this factor of the best trained error
TRACK_SLOPE = 0.25       # a trained curve "tracks" a reference if the log-log slope of trained/reference over the fit range is within +-this
FLOOR_SHARE = 0.25       # a trained curve has "a floor" if its slope over the upper half of m_h is shallower than this x the predicted one


def per_seed_knee(rows: pd.DataFrame, r: int) -> list[float]:
    """e(r-1)/e(r) per seed (rows of one target): the finite-rank prediction of Theorem 4.1."""
    out = []
    for _, g in rows.groupby("seed"):
        e = g.set_index("m_h").test_mse
        if r - 1 in e.index and r in e.index and np.isfinite(e[r - 1]) and np.isfinite(e[r]):
            if e[r] > 0:
                out.append(float(e[r - 1] / e[r]))
            elif e[r - 1] > 0:          # error exactly 0 from m_h = r: a perfect knee, not a seed to skip
                out.append(math.inf)
    return out


def outlier_factor(features: str) -> float:
    """The nesting control's factor for a model class: STUCK_FACTOR with given features, else OUTLIER_FACTOR."""
    return STUCK_FACTOR if features == "given" else OUTLIER_FACTOR


def outliers(rows: pd.DataFrame, factor: float = OUTLIER_FACTOR) -> list[dict]:
    """Members that ended > factor x above the best smaller m_h of the same seed (hypothesis spaces are nested: a
    larger m_h can copy any smaller one with zero rows), with their inits."""
    out = []
    for seed, g in rows.groupby("seed"):
        g = g.sort_values("m_h")
        best = g.test_mse.cummin().shift(1)
        bad = (g.test_mse > factor * best) & (g.test_mse > OUTLIER_FLOOR)
        for _, r in g[bad].iterrows():
            out.append({"m_h": int(r.m_h), "seed": int(seed), "test_mse": float(r.test_mse),
                        "best_smaller": float(best[r.name]), "init_seed": int(r.get("init_seed", -1)),
                        "restarts": int(r.get("restarts", 1))})
    return out


def degenerate(diag: dict, best_trained: float) -> dict:
    """The stated rules.  `degenerate` (the target): its tokens mostly attend to themselves (mean
    self-attention weight > SELF_WEIGHT_MAX), so H_t(x) is close to a copy of x_t whatever the rank.
    `uninformative` (the fit): a trivial predictor comes within TRIVIAL_FACTOR of the best trained error,
    so the trained curve says nothing about the coupling.  Either keeps the exponent from being read as
    agreement; `flag` is their union."""
    trivial = {k: diag[f"mse_{k}"] for k in ("mean", "copy", "uniform") if f"mse_{k}" in diag}
    name, val = min(trivial.items(), key=lambda kv: kv[1]) if trivial else ("", float("nan"))
    out = {"degenerate": diag.get("self_weight", 0) > SELF_WEIGHT_MAX,
           "uninformative": bool(trivial) and val <= TRIVIAL_FACTOR * best_trained,
           "best_trivial": name, "best_trivial_mse": val}
    why = []
    if out["degenerate"]:
        why.append(f"DEGENERATE target: mean self-attention weight {diag['self_weight']:.3g} > {SELF_WEIGHT_MAX:g}")
    if out["uninformative"]:
        why.append(f"UNINFORMATIVE fit: the {name} predictor's MSE {val:.3g} is within {TRIVIAL_FACTOR:g}x of the best "
                   f"trained {best_trained:.3g}")
    out["flag"] = bool(why)
    out["why"] = "; ".join(why)
    return out


LINE_REF = "the m_h^-(2 alpha - 1) line"


def tracking(curve: pd.DataFrame, fit_ms, alpha: float) -> dict:
    """Which reference the trained rank-inf curve follows over fit_ms: the exponent of trained/reference
    (its log-log slope) within +-TRACK_SLOPE -- the same rate, whatever the constant; and whether it has
    a floor (the FLOOR_SHARE rule over the upper half of m_h)."""
    c = curve.set_index("m_h")
    ms = [m for m in fit_ms if m in c.index]
    refs = {"oracle (rank-m_h rho)": c.oracle_mse, "oracle (s != t truncated)": c.oracle_self_exact_mse,
            LINE_REF: pd.Series({m: float(m) ** predicted_exponent(alpha) for m in c.index})}
    out = {"tracks": [], "ratios": {}}
    for name, ref in refs.items():
        r = (c.test_mse[ms] / ref[ms]).replace([np.inf, -np.inf], np.nan).dropna()
        if len(r) >= 2 and (r > 0).all():
            dslope = fit_power_law(r.index.to_numpy(), r.to_numpy())[0]
            out["ratios"][name] = {"min": float(r.min()), "max": float(r.max()), "slope_difference": dslope}
            if abs(dslope) <= TRACK_SLOPE:
                out["tracks"].append(name)
    top = [m for m in c.index if m >= max(c.index) / 2]
    if len(top) >= 2:
        slope, _ = fit_power_law(top, c.test_mse[top])
        out["upper_slope"] = slope
        out["upper_m_h"] = [int(top[0]), int(top[-1])]
        out["floor"] = bool(slope > FLOOR_SHARE * predicted_exponent(alpha))
        out["floor_value"] = float(c.test_mse[top].median())
    return out


RULES = ("KNEE_MIN", "OUTLIER_FACTOR", "STUCK_FACTOR", "OUTLIER_FLOOR", "SELF_WEIGHT_MAX", "TRIVIAL_FACTOR", "TRACK_SLOPE", "FLOOR_SHARE")


def rule_values() -> dict:
    """The rules' names and values, as summary.json records them."""
    return {k: globals()[k] for k in RULES}
