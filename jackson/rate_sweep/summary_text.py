"""The words of a sweep's summary: how each target was judged (`law_sentence`, `verdict_lines`, ...) and
summary.md itself (`markdown`), written from summary.json."""
from __future__ import annotations

import math

import numpy as np

from ..rates import law_text, spectrum_law
from .checks import (FLOOR_SHARE, KNEE_MIN, OUTLIER_FACTOR, OUTLIER_FLOOR, SELF_WEIGHT_MAX, STUCK_FACTOR, TRACK_SLOPE,
                     TRIVIAL_FACTOR)
from . import doubling
from .axes import pair_name
from .references import UNCAPPED, uncapped_to
from .knee_rule import knee_short
from .rate_rule import EXPONENT_TOL, span_text
from .tables import ATTENTION_TEXT, L1_KINDS, ORACLES, RHO_HAT
from ..hparams import recorded


def format_exponent(e: dict | None) -> str:
    """An exponent with its 95% interval, or with the reason it has none (a two-point fit); 'n/a' without one."""
    if not e:
        return "n/a"
    if e.get("why_no_interval"):
        return f"{e['slope']:+.2f} ({e['why_no_interval']})"
    return f"{e['slope']:+.2f} [{e['lo']:+.2f}, {e['hi']:+.2f}]"


FEATURES_TEXT = {
    "learned": "f_hat and F_hat are MLPs (Eq. 5 as written): the error holds both terms of Eq. (17)",
    "given": "given features (jackson/rate_sweep/given.py): f_hat replaced by the target's own phi_i, psi_i (i <= features_k) "
             "with the value f(x) and F given, only W_Q, W_K and an affine value map trained -- the feed-forward term "
             "of Eq. (17) is zero, what is left is the attention term"}


def explicit_fields(cell: dict, source: str, sigma_head=()) -> dict:
    """What a target dict of summary.json adds beyond alpha/rank: for an explicit spectrum its values and where
    they came from ("explicit"), for a kernel its expression ("kernel"), each with the goodness-of-fit test of the
    power law behind alpha_hat ("law", jackson.rates.spectrum_law: over the given sigma, or the kernel's first 64
    POD sigma); for a scale c != 1 the scale; nothing for the alpha/rank targets with c = 1."""
    out = {}
    sig = cell.get("sigma") or []
    if cell.get("kernel"):
        out["kernel"] = {"expression": cell["kernel"], "alpha_hat": cell["alpha"], "nodes": cell.get("pod_nodes", 256),
                         "law": spectrum_law(sigma_head)}
    elif sig:
        out["explicit"] = {"K": len(sig), "rank": sum(1 for v in sig if v > 0), "alpha_hat": cell["alpha"],
                           "source": source, "sigma": list(sig), "law": spectrum_law(sig)}
    elif cell.get("c", 1.0) != 1.0:
        out["c"] = cell["c"]
    return out


def target_law(t: dict) -> dict | None:
    """The power-law test of a target's explicit or kernel spectrum (jackson.rates.spectrum_law); None for the
    alpha/rank targets, whose spectrum is a power law by construction."""
    return (t.get("explicit") or t.get("kernel") or {}).get("law")


def not_power_law(t: dict) -> bool:
    """An explicit or kernel spectrum that fails the power-law test."""
    law = target_law(t)
    return bool(law) and law["law"] == "not a power law"


def judged_as(t: dict) -> str:
    """'the rate it is judged against', or what -(2 alpha_hat - 1) is when sigma fails the power-law test."""
    return ("the rate a power law with this alpha_hat would have (not judged: sigma is not a power law)"
            if not_power_law(t) else "the rate it is judged against")


def law_sentence(t: dict) -> str:
    """summary.md's sentence on the power-law test of an explicit or kernel spectrum ('' for the others)."""
    law = target_law(t)
    if not law:
        return ""
    s = f" Is sigma a power law? {law_text(law)}; rule: {law['rule']}."
    if law["law"] == "not a power law":
        s += (" So -(2 alpha_hat - 1) predicts nothing here: no exponent is judged against it, and the m_h^-(2 alpha - 1) "
              "line is not a reference.")
    return s


def explicit_text(t: dict) -> str:
    """'explicit spectrum (5 values, file my_sigma.txt)'."""
    e = t["explicit"]
    src = f", {e['source']}" if e.get("source", "--sigma") != "--sigma" else ""
    return f"explicit spectrum ({e['K']} values{src})"


PREDICTED_EXPLICIT = "predicted -(2 alpha_hat - 1) from the fitted decay of the given sigma"
PREDICTED_KERNEL = "predicted -(2 alpha_hat - 1) from the fitted decay of the kernel's POD sigma"
C0_UNKNOWN = (" (unknown: C0 needs sup_i ||phi_i||_inf and sup_i ||psi_i||_inf, unbounded in i for legendre and not "
              "stated by a Python callable basis without a `sup` attribute)")


def kernel_text(t: dict) -> str:
    """"kernel rho(u, v) = exp(-(u-v)**2/0.1)" (a Python callable: its python:module:name id)."""
    return f"kernel rho(u, v) = {t['kernel']['expression']}"


def target_title(t: dict, widths: list) -> str:
    w = f", m_FF = {t['m_ff']}" if len(widths) > 1 else ""
    if t.get("kernel"):
        return f"{kernel_text(t)}, rank = {t['rank']} (alpha_hat = {t['alpha']:g}){w}"
    if t.get("explicit"):
        return f"{explicit_text(t)}{w}"
    c = f", c = {t['c']:g}" if "c" in t else ""
    return f"alpha = {t['alpha']:g}, rank = {t['rank']}{c}{w}"


def rate_short(rate: dict) -> str:
    """The rate rule's verdict in a few words: each range's d and word."""
    parts = [f"m_h {r['range']}: d {r['d']:+.2f} [{r['d_lo']:+.2f}, {r['d_hi']:+.2f}] {r['verdict']}" if r.get("d") is not None
             else f"m_h {r['range']}: {r['verdict']} ({r['why']})" for r in rate["ranges"]]
    return f"rate {rate['verdict']} against the exact tail ({'; '.join(parts) or 'no range'})"


def terms_short(terms: dict) -> str:
    """Which term of Eq. (17) limits the curve, m_h by m_h, in a few words."""
    from .terms import limiting_runs
    runs = limiting_runs(terms.get("rows") or [])
    lim = "; ".join(f"{w} at m_h {ms[0]}" + (f"..{ms[-1]}" if len(ms) > 1 else "") for w, ms in runs)
    rr = terms.get("ratio_range")
    under = terms.get("below_attention")
    return (f"limited by {lim}" + (f"; e_full / (e_attn + e_FF) {rr[0]:.2f}-{rr[1]:.2f}" if rr else "")
            + (f"; below the attention term alone at m_h {span_text(under['m_h'])}" if under else ""))


def verdict_lines(s: dict) -> list[str]:
    """One line per target: the finite-rank knee or the rank-inf tracking, each by its stated rule."""
    L = ["| target | construction | seeds x restarts | diagnostics | exponent of held-out MSE [95% CI] (per seed) | predicted | verdict |",
         "|---|---|---|---|---|---:|---|"]
    widths = s.get("m_ff", [])
    for t in s["targets"]:
        e = t["exponents"].get("test")
        seeds = ", ".join(f"{v:+.2f}" for v in t.get("exponent_per_seed", {}).values())
        deg = t.get("degenerate", {})
        ch = t["checks"]
        if t.get("term", "full") == "ff":
            verdict = ("the feed-forward term alone (each m_h fitted to its own rank-m_h truncation): the rank and rate "
                       "rules do not apply")
        elif deg.get("flag"):
            verdict = deg["why"] + " -- its curve is not evidence about the coupling rank"
        elif t.get("knee"):
            verdict = knee_short(t["knee"])
        elif "knee_drop" in ch:
            verdict = (f"knee e({int(t['rank']) - 1})/e({t['rank']}) median {ch['knee_drop']:.3g}x over "
                       f"{len(ch['knee_per_seed'])} seeds (min {min(ch['knee_per_seed']):.3g}x): "
                       + ("shown" if ch["knee_ok"] else "NOT shown") + f" by the >= {KNEE_MIN:g}x rule")
        elif t.get("rate") or "tracking" in ch:
            tr = ch.get("tracking", {})
            verdict = (rate_short(t["rate"]) if t.get("rate") else
                       "tracks " + " and ".join(tr["tracks"]) if tr.get("tracks") else
                       f"tracks no reference (exponent within +-{TRACK_SLOPE:g})")
            verdict += (f"; floor ~{tr['floor_value']:.2g} over m_h {tr['upper_m_h'][0]}..{tr['upper_m_h'][1]} "
                        f"(slope {tr['upper_slope']:+.2f})" if tr.get("floor") else "")
            if (t.get("terms") or {}).get("rows"):
                verdict += "; " + terms_short(t["terms"])
        else:
            verdict = "n/a"
        verdict += "; " + members_short(t)
        d = t.get("diagnostics", {})
        dg = (f"self-weight {d['self_weight']:.2f}, copy/uniform/mean MSE {d['mse_copy']:.2g}/{d['mse_uniform']:.2g}/{d['mse_mean']:.2g}"
              if d else "n/a")
        cons = pair_name(t.get("phi"), t.get("psi"))
        if t.get("kernel"):
            cons = "the kernel's POD (Nystrom)"
        pred = f"{t['predicted_exponent']:+.2f}" if t["rank"] == "inf" else "none (exact once m_h >= r)"
        if t.get("explicit"):
            pred = f"{t['predicted_exponent']:+.2f} (alpha_hat = {t['alpha']:g}; exact once m_h >= {t['rank']})"
        if not_power_law(t):
            pred = "none: sigma is not a power law"
        L.append(f"| {target_title(t, widths)} | {cons} | {t.get('n_seeds', '?')} x {t.get('restarts', 1)} | {dg} | "
                 f"{format_exponent(e)}{f' ({seeds})' if seeds else ''} | {pred} | {verdict} |")
    return L


# what a summary written before the stopping rule was recorded (no `stop_rule`) ran under: the cosine schedule's
# default numbers (jackson/hparams.py: stop_rule(FitConfig()) words the same rule)
COSINE_RULE = ("*Stopped* (the schedule's own word, `converged` in the tables): the member's training-subset MSE stopped "
               "improving by 5% per check while the learning rate was still >= 10% of its peak; *still improving*: still "
               "improving then; *diverged*: non-finite, or above 10x the "
               "zero predictor's MSE -- excluded from curves and fits (see jackson/fit.py).")


SCHEDULE_WORDS = {"budget": "still improving at the schedule's end"}   # fit.py's status -> the summary's words


def members_text(t: dict) -> str:
    """The one phrase the summary, the printed line and the ledger give of a target's labels."""
    d = doubling.members(t)
    n_c, n_b, n_n = len(d[doubling.CONVERGED]), len(d[doubling.BUDGET]), len(d[doubling.UNCHECKED])
    if not (n_c or n_b):
        return doubling.NOT_CHECKED_NOTE
    parts = [f"{n_c} converged"] if n_c else []
    if n_b:
        parts.append(f"{n_b} budget (m_h {span_text(sorted({b[0] for b in d[doubling.BUDGET]}))})")
    if n_n:
        parts.append(f"{n_n} not checked")
    return "doubling check: " + ", ".join(parts)


def members_short(t: dict) -> str:
    """What the members are: the schedule's record where it is not 'stopped' (still improving, diverged), then the
    doubling check's labels (or "fits not checked by training on")."""
    st = t.get("statuses", {})
    bad = [f"{v} {SCHEDULE_WORDS.get(k, k)}" for k, v in st.items() if k != "converged"]
    return "members: " + ", ".join(bad + [members_text(t)])


def cycle_text(c: dict | None) -> str:
    """Under the cycles' rule: whom it stopped after which cycle, and who was still falling at the cap -- a folder's
    totals (summary.json's `cycle_stops`: counts) or one target's members (its entry's `cycle_stops`: m_h, seed)."""
    if not c:
        return ""
    after = [f"{n} after cycle {k}" for k, n in c["stopped_after"].items() if n]
    totals = "n_still_falling" in c
    left = c["n_still_falling"] if totals else len(c["still_falling"])
    back = c["n_setbacks"] if totals else len(c.get("setbacks", []))
    ms = [] if totals else sorted({m for m, _ in c["still_falling"]})
    of = f"Of the {c['members']} members" + (f" of the {c['targets']} targets" if totals and c["targets"] > 1 else "")
    return (f" {of}, the rule stopped " + (", ".join(after) if after else "none")
            + f"; {left} {'was' if left == 1 else 'were'} still falling at the cap of {c['cycles']} cycles"
            + (f" (m_h {', '.join(map(str, ms))})" if ms else "") + "."
            + (f" {back} of the stopped ones stopped on a setback, not on a flat loss: the cycle restarted "
               f"at the peak rate ended {c['setback_factor']:g}x or more above their best earlier end"
               + ("" if totals else " (" + ", ".join(f"m_h {m} seed {sd}: {x:.3g}x" for m, sd, x in c["setbacks"]) + ")")
               + ", and they keep that best end's weights." if back else "")
            + (" Each target's section names its members." if totals and c["targets"] > 1 and (left or back) else ""))


def folder_cycles(s: dict) -> dict | None:
    """The cycles' record the summary's opening paragraph states: a lone target's own (its members by name), else the
    folder's totals."""
    ts = s.get("targets", [])
    return ts[0].get("cycle_stops", s.get("cycle_stops")) if len(ts) == 1 else s.get("cycle_stops")


def markdown(s: dict) -> str:
    att = s.get("attention", "softmax")
    kinds = att.split(", ")
    feats = s.get("features", "learned").split(", ")
    widths = s.get("m_ff", [])
    L = [f"# jackson-sweep summary ({att} attention, {', '.join(feats)} features)", "",
         f"Command: `{s['command']}`", "",
         "Model: " + "; ".join(FEATURES_TEXT.get(k, k) for k in feats) + ". Attention: "
         + "; ".join(ATTENTION_TEXT.get(k, k) for k in kinds) + ". "
         "Learned spectrum: singular values of " + "; ".join(RHO_HAT.get(k, k) for k in kinds) + ".", "",
         "Data: synthetic POD targets (Eq. 8), inputs U[0,1]; errors are mean squared errors over "
         f"positions and sequences. *Trained* = held-out MSE of the fitted model (mean over seeds; per m_h and seed the "
         "restart with the lowest *training* MSE); *oracle* = "
         "held-out MSE of the target with rho replaced by its exact rank-m_h POD truncation; "
         "*oracle, s=t exact* = the same with only the s != t logits truncated. Exponents: slope of "
         f"log MSE vs log m_h over m_h in {s['fit_range'][0]}..{s['fit_range'][1]} (below the rank for "
         "finite-rank targets; m_h with a diverged member left out), 95% bootstrap interval over seeds and blocks of "
         "held-out sequences, and the slope of each seed alone. "
         "The oracle is a reference, not a lower bound: softmax ignores any added function of x_t alone and "
         "f_hat, F_hat are learned, so a rank-m_h attention can beat the rank-m_h POD truncation. "
         + s.get("stop_rule", COSINE_RULE) + cycle_text(folder_cycles(s)) + " The label each member carries is the "
         + s.get("doubling_rule", doubling.RULE) + " (jackson/rate_sweep/doubling.py). The Eq. (17) attention term is "
         "tau^2 C0 C1 m_h^-(2alpha-1) for the L1 error summed over t (the feed-forward term needs beta and C2, which a "
         "target does not determine).", "",
         "Rules behind the verdicts (jackson/rate_sweep/checks.py): finite rank r -- the knee rule (jackson/rate_sweep/"
         f"knee_rule.py, the one the claims ledger uses): the knee e(r-1)/e(r), median over seeds, >= {KNEE_MIN:g}x and "
         "staying down, with its power condition, its control (the rank-m_h oracle) and its outlier clause; rank inf -- the rate rule (jackson/rate_sweep/rate_rule.py, the one the claims ledger uses): "
         f"the exponent against the exact tail's over the fit range and over every m_h run, within +-{EXPONENT_TOL:g}; the "
         "other references' ratios are shown beside it, not judged; the curve has a *floor* when its slope over the upper half of m_h is shallower "
         f"than {FLOOR_SHARE:g}x the predicted one; a target is *degenerate* when its mean self-attention weight exceeds "
         f"{SELF_WEIGHT_MAX:g}; a fit is *uninformative* when a trivial predictor (the mean, copy y_t = F(f(x_t)), uniform "
         f"attention) is within {TRIVIAL_FACTOR:g}x of its best trained error -- neither's exponent is read as agreement; "
         f"an *outlier* is a member > {OUTLIER_FACTOR:g}x (given features: > {STUCK_FACTOR:g}x, their seeds' noise staying below 1x) above the best smaller m_h of the same seed (both above "
         f"{OUTLIER_FLOOR:g}).", "", "## Verdicts", ""] + verdict_lines(s) + [""]
    for t in s["targets"]:
        L += [f"## {target_title(t, widths)} ({t.get('attention', 'softmax')} attention, {t.get('features', 'learned')} features)", ""]
        tol = "" if t["tail_tol_met"] else " (tolerance NOT met: the realised target is this K-term truncation)"
        if t.get("explicit"):
            e = t["explicit"]
            vals = ", ".join(f"{v:.4g}" for v in e["sigma"][:16]) + (", ..." if e["K"] > 16 else "")
            L += [f"Spectrum: {explicit_text(t)}, sigma = ({vals}), rank {e['rank']} (its nonzero values). alpha_hat = "
                  f"{e['alpha_hat']:g}: the least-squares fit of log sigma_i against log i over the nonzero values; the "
                  f"{judged_as(t)}: {PREDICTED_EXPLICIT}, {t['predicted_exponent']:+.2f}; "
                  f"C1 = inf{{c : sigma_s <= c s^-alpha_hat}} = {t['C1']:.4g}.{law_sentence(t)}", ""]
        if t.get("kernel"):
            k = t["kernel"]
            L += [f"Coupling: {kernel_text(t)}, its numerical POD on {k['nodes']} Gauss-Legendre nodes, phi_i and psi_i "
                  f"extended between the nodes by the Nystrom formulas (synthetic/kernel_target.py); alpha_hat = "
                  f"{k['alpha_hat']:g}: the least-squares decay of its POD sigma over the rank-inf truncation; "
                  f"{judged_as(t)}: {PREDICTED_KERNEL}, {t['predicted_exponent']:+.2f}.{law_sentence(t)}", ""]
        phis = ("Nystrom", "Nystrom") if t.get("kernel") else (t.get("phi", "sin"), t.get("psi", "sin"))
        c0 = "" if math.isfinite(t["C0"]) else C0_UNKNOWN
        if t.get("features", "learned") == "learned":
            L += [ffn_text(t), ""]
        elif t.get("features_k") is not None:
            L += [given_text(t), ""]
        if t.get("cycle_stops") and len(s["targets"]) > 1:     # one target: the paragraph above names them
            L += ["Cycles:" + cycle_text(t["cycle_stops"]), ""]
        L += [f"phi = {phis[0]}, psi = {phis[1]}; K = {t['K']} terms, tail beyond K = "
              f"{t['tail_beyond_K']:.3g}{tol}; C0 = {t['C0']:.3g}{c0}, C1 = {t['C1']:.3g}; predicted exponent -(2alpha-1) = "
              f"{t['predicted_exponent']:+.2f}.", ""]
        d = t.get("diagnostics", {})
        if d:
            deg = t.get("degenerate", {})
            L += [f"Target diagnostics (held-out sequences, mean over seeds): mean diagonal logit rho(x_t, x_t) = "
                  f"{d['diag_logit']:.3g}, off-diagonal {d['offdiag_logit']:.3g} (sd {d['offdiag_logit_sd']:.3g}), mean "
                  f"self-attention weight {d['self_weight']:.3g} (uniform: 1/tau); Var(y) = {d['var_y']:.3g}; trivial "
                  f"predictors' MSE: mean {d['mse_mean']:.3g}, copy {d['mse_copy']:.3g}, uniform attention "
                  f"{d['mse_uniform']:.3g}. " + ("**" + deg["why"] + ".**" if deg.get("flag")
                                                   else "Neither degenerate nor uninformative by the rules above."), ""]
        L += ["| m_h | train MSE | held-out MSE (mean) | median [min, max] over seeds | restarts: min / median | oracle | "
              "oracle, s=t exact | held-out / oracle | tail sum_{i>m_h} sigma_i^2 (Eq. 47) | Eq. 17 attention term | "
              "schedule: stopped / still improving / diverged | doubling check: converged / budget / not checked |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        bound = {b["m_h"]: b for b in t["bound"]}
        for r in t["curve"]:
            ratio = f"{r['test_mse'] / r['oracle_mse']:.2f}" if r["oracle_mse"] > 0 else "n/a (oracle exact)"
            b = bound.get(int(r["m_h"]))
            bt = f"{b['tail_energy']:.3e} | {b['attention_term']:.3g}" if b else "n/a | n/a"
            rs = (f"{r['restart_min']:.3e} / {r['restart_median']:.3e}" if r.get("restart_min") is not None
                  and r.get("restart_min") == r.get("restart_min") else "n/a")
            L.append(f"| {r['m_h']} | {r['train_mse']:.3e} | {r['test_mse']:.3e} | {r['test_median']:.3e} "
                     f"[{r['test_min']:.2e}, {r['test_max']:.2e}] | {rs} | {r['oracle_mse']:.3e} | "
                     f"{r['oracle_self_exact_mse']:.3e} | {ratio} | {bt} | "
                     f"{r['n_converged']} / {r['n_budget']} / {r.get('n_diverged', 0)} | "
                     + " / ".join(map(str, doubling.m_h_labels(t, r["m_h"]))) + " |")
        L.append("")
        if t.get("diverged"):
            L.append("Diverged members (excluded): " + "; ".join(f"m_h = {d['m_h']}, seed {d['seed']}: {d['status']}"
                                                              for d in t["diverged"]) + ".")
            L.append("")
        if t["exponents"]:
            L += ["| curve | fitted exponent [95% CI] | predicted |", "|---|---|---|"]
            for k, name in ORACLES.items():
                L.append(f"| {name} | {format_exponent(t['exponents'].get(k))} | {t['predicted_exponent']:+.2f} |")
            for k, name in L1_KINDS.items():
                if k in t["exponents"]:
                    L.append(f"| {name} | {format_exponent(t['exponents'].get(k))} | {t['predicted_exponent'] / 2:+.2f} "
                             f"(first order: half the MSE's) |")
            L.append("")
            e = t["exponents"]
            sh = list(t["self_coupling_share"].values())
            if sh:
                dom = "the s = t self-coupling terms" if np.median(sh) > 0.5 else "the s != t terms"
                L.append(f"Which term dominates the oracle error: {dom} (share of the truncated-oracle MSE removed by "
                         f"keeping s = t exact: {min(sh):.0%}-{max(sh):.0%} over m_h). The s != t oracle decays with "
                         f"exponent {format_exponent(e.get('oracle_self_exact'))} against the predicted "
                         f"{t['predicted_exponent']:+.2f}; the full oracle with {format_exponent(e.get('oracle'))}.")
                L.append("")
        if "reference" in t:
            L += _reference_md(t, s["reference"])
        ch = t["checks"]
        if t.get("attention") == "linear":
            L.append("Linear attention with m_h = 1 weights key s by phi(k_s) / sum_s' phi(k_s'), the same for every query "
                     "t (phi(q_t) cancels), so its m_h = 1 member attends without looking at x_t: a drop from m_h = 1 "
                     "to 2 says that, not that the target's rank was reached.")
        if t.get("knee"):
            L.append(f"Rank check (the knee rule, jackson/rate_sweep/knee_rule.py; per seed "
                     f"{', '.join(f'{k:.3g}' for k in ch['knee_per_seed'])}): {t['knee']['line']}.")
        elif "knee_drop" in ch:
            L.append(f"Rank check: held-out MSE drops {ch['knee_drop']:.3g}x (median over seeds; per seed "
                     f"{', '.join(f'{k:.3g}' for k in ch['knee_per_seed'])}) from m_h = {int(t['rank']) - 1} to "
                     f"m_h = {t['rank']} (criterion >= {KNEE_MIN:g}x: {'met' if ch['knee_ok'] else 'NOT met'}).")
        if "drop_r_to_r_plus_1" in ch:
            L.append(f"For comparison, from m_h = {t['rank']} to m_h = {int(t['rank']) + 1} it drops "
                     f"{ch['drop_r_to_r_plus_1']:.3g}x (mean curve).")
        if ch.get("outliers"):
            L.append(f"Optimisation outliers (more than {ch.get('outlier_factor', OUTLIER_FACTOR):g}x above the best smaller m_h of the same seed, although a larger "
                     "m_h can represent everything a smaller one can; kept in the tables and fits): "
                     + "; ".join(f"m_h = {o['m_h']}, seed {o['seed']}: {o['test_mse']:.3g} vs {o['best_smaller']:.3g} "
                                 f"(init seed {o['init_seed']}, best of {o['restarts']} restart(s))" for o in ch["outliers"]) + ".")
        elif "outliers" in ch:
            L.append(f"No optimisation outliers: no member ended more than {ch.get('outlier_factor', OUTLIER_FACTOR):g}x above the best smaller m_h of its seed.")
        if "tracking" in ch:
            tr = ch["tracking"]
            rat = "; ".join(f"{k}: trained/reference {v['min']:.3g}-{v['max']:.3g}, exponent difference "
                            f"{v['slope_difference']:+.2f}" for k, v in tr["ratios"].items())
            head = (f"Beside the rate rule, the other references over m_h in {t['fit_m_h']} (shown, not judged): {rat}."
                    if t.get("rate") else      # a summary older than the rate rule: its own tracking words
                    f"Tracking over m_h in {t['fit_m_h']}: " + ("tracks " + " and ".join(tr["tracks"]) if tr["tracks"]
                    else f"tracks no reference (exponent within +-{TRACK_SLOPE:g})") + f" ({rat}).")
            L.append(head
                     + (f" Slope over m_h {tr['upper_m_h'][0]}..{tr['upper_m_h'][1]}: {tr['upper_slope']:+.2f}"
                        + (f" -- a floor near {tr['floor_value']:.3g}." if tr.get("floor") else ".") if "upper_slope" in tr else ""))
        if t.get("rate"):
            L.append(f"Rate (jackson/rate_sweep/rate_rule.py, the rule the claims ledger uses): **{t['rate']['verdict']}**. "
                     + t["rate"]["line"] + ".")
        if t.get("terms"):
            tm = t["terms"]
            L.append(tm["line"] + ".")
            if tm["rows"]:
                g = lambda v: "n/a" if v is None else f"{v:.3g}"  # noqa: E731
                L += ["", "| m_h | e_full | e_attn (attention term alone) | e_FF (feed-forward term alone) | e_attn + e_FF "
                          "| e_full / (e_attn + e_FF) | rank-m_h oracle | limited by |", "|---:|---:|---:|---:|---:|---:|---:|---|"]
                L += [f"| {r['m_h']} | {g(r['e_full'])} | {g(r.get('e_attn'))} | {g(r.get('e_ff'))} | {g(r.get('sum'))} | "
                      f"{g(r.get('ratio'))} | {g(r.get('oracle_rank_mh', r.get('oracle')))} | {r['limiting']} |" for r in tm["rows"]]
                L.append("")
        if "within_2x_ok" in ch:
            L.append(f"Oracle check: max held-out/oracle over m_h <= 8 is {ch['max_trained_over_oracle_mh_le_8']:.2f} "
                     f"(criterion <= 2: {'met' if ch['within_2x_ok'] else 'NOT met'}).")
        L.append("")
    return "\n".join(L)


TERM_TEXT = {
    "full": "each member fits the target itself (both terms of Eq. (17))",
    "ff": "each member fits the target with rho cut to its own rank-m_h POD truncation, which a rank-m_h attention "
          "represents exactly: the held-out MSE is the feed-forward term e_FF alone (plus optimisation error); the "
          "oracle columns still compare the truncation with the target itself"}


def ffn_title(summary: dict) -> str:
    """', FFN: sin (in-scale 60), width 128; term: feed-forward alone' for a figure's title: what the learned-features
    targets' f_hat and F_hat were ('' with given features)."""
    ts = [t for t in summary["targets"] if t.get("features", "learned") == "learned"]
    ks = sorted({int(t["features_k"]) for t in summary["targets"] if t.get("features_k") is not None})
    if not ts:
        return f", features_k {', '.join(map(str, ks))}" if ks else ""
    classes = sorted({recorded(t, "activation") + (f" (in-scale {recorded(t, 'in_scale'):g})"
                                                     if recorded(t, "activation") == "sin" else "") for t in ts})
    widths = sorted({t["m_ff"] for t in ts})
    terms = sorted({t.get("term", "full") for t in ts})
    return (f", FFN: {' / '.join(classes)}, width {', '.join(map(str, widths))}"
            + ("; term: the feed-forward term alone" if terms == ["ff"] else ""))


def given_text(t: dict) -> str:
    """How many given features a --features given target had, and up to which m_h that leaves it uncapped."""
    k, m_max = int(t["features_k"]), max(int(r["m_h"]) for r in t["curve"])
    free = uncapped_to(k, str(t["rank"]))
    if free == math.inf:
        return f"Given features: features_k = {k} (phi_i, psi_i for i <= {k}): every term of this rank-{t['rank']} target."
    return (f"Given features: features_k = {k} (phi_i, psi_i for i <= {k}): an uncapped reference for m_h up to {free} "
            f"(at least {UNCAPPED} x m_h features to choose from)"
            + (f"; capped at m_h {free + 1}..{m_max} of this run, where its e_attn is too high." if m_max > free
               else f", every m_h of this run."))


def ffn_text(t: dict) -> str:
    """The FFN class and the term a learned-features target was fitted for."""
    act = recorded(t, "activation")
    return (f"FFN class of f_hat and F_hat: {act} between layers, width m_FF = {t['m_ff']}, f_hat's first layer drawn "
            f"U(-{recorded(t, 'in_scale'):g}, {recorded(t, 'in_scale'):g})/sqrt(fan_in). Term: "
            f"{TERM_TEXT.get(t.get('term', 'full'), t.get('term'))}.")


def _reference_md(t: dict, ref: dict) -> list[str]:
    """This target's held-out MSE beside the reference run's (same target, same data seeds)."""
    r = t["reference"]
    me, other = t.get("attention", "softmax"), r["attention"]
    L = [f"Beside `{ref['folder']}` ({other} attention, `{ref['command']}`): held-out MSE of the same target"
         + (f" -- NOTE: the runs differ in {', '.join(ref['differs'])}" if ref["differs"] else
            ", same data and seeds") + ".", "",
         f"| m_h | {me} | {other} | {me} / {other} |", "|---:|---:|---:|---:|"]
    for c in r["curve"]:
        L.append(f"| {c['m_h']} | {c['test_mse']:.3e} | {c['reference_test_mse']:.3e} | {c['ratio']:.3g} |")
    ratios = [c["ratio"] for c in r["curve"]]
    if ratios:
        L += ["", f"{me} / {other} over m_h: median {np.median(ratios):.3g}, range {min(ratios):.3g}-{max(ratios):.3g}."]
    mine = t["exponents"].get("test")
    if mine or r["exponent"]:
        where = (f"both over m_h = {t['fit_m_h'][0]}..{t['fit_m_h'][-1]}, from the held-out blocks" if r["exponent_m_h"]
                 else f"this run over m_h in {t['fit_m_h']}, the reference's from its own summary, range {ref['fit_range']}")
        L.append(f"Fitted exponent of the held-out MSE: {me} {format_exponent(mine)}, {other} {format_exponent(r['exponent'])} ({where}).")
    if "knee_drop" in t["checks"] and "knee_drop" in r["checks"]:
        L.append(f"Rank knee (m_h = {int(t['rank']) - 1} -> {t['rank']}): {me} drops {t['checks']['knee_drop']:.3g}x, "
                 f"{other} {r['checks']['knee_drop']:.3g}x.")
    L.append("")
    return L
