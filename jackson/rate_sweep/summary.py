"""summary.json and summary.md of a sweep (`summarize`), from its tables, decided by the rules of checks.py."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..runfolder import write_atomic
from ..config import RunFailed
from ..rates import bound_terms, fit_power_law, predicted_exponent
from . import doubling
from .blocks import read_blocks
from .knee_rule import judge as judge_knee
from .rate_rule import judge as judge_rate, label
from .references import attn_curves, attn_note, attn_stuck, ff_curves
from .terms import explain
from .checks import KNEE_MIN, LINE_REF, degenerate, outlier_factor, outliers, per_seed_knee, rule_values, tracking
from .summary_text import explicit_fields, markdown, not_power_law
from .tables import L1_KINDS, ORACLES, attention_of, block_exponent, failed_members, target_curve, targets_of
from ..config import read_json
from ..hparams import fit_config, stop_rule
from ..hparams import recorded
from synthetic.pod_target import Spectrum, TargetError


NO_TERMS = ("which term limits it is not measured for this target: a --term ff run of it measures the feed-forward "
            "term and a --features given run the attention term (found by key under reports/jackson/, or named by "
            "--ff-from)")


def target_sigma(meta: dict) -> np.ndarray | None:
    """sigma_1..sigma_K of a cell's target, every one of them: the exact tail sum_{i > m_h} sigma_i^2 (Eq. 47) needs
    i = 65..K too, and cell.json holds only the first 64 (`sigma_head`).  Rebuilt from the cell's own settings (the
    spectrum, or the kernel's numerical POD) and checked against the stored head and K; None where it cannot be
    rebuilt (a kernel given as a Python callable) -- then the summary has no tail and the rate rule says so."""
    head = np.asarray(meta.get("sigma_head") or [], float)
    k = int(meta["target"]["K"])
    if len(head) >= k:
        return head[:k]
    cell = meta["cell"]
    try:
        if cell.get("kernel"):
            from synthetic.kernel_target import KernelTarget
            sig = KernelTarget(kernel=cell["kernel"], rank=float(cell["rank"]), tail_tol=cell["tail_tol"],
                               k_max=cell["k_max"], nodes=cell.get("pod_nodes", 256)).sigma
        elif cell.get("sigma"):
            sig = Spectrum(explicit=tuple(cell["sigma"])).sigma()
        else:
            sig = Spectrum(alpha=float(cell["alpha"]), rank=float(cell["rank"]), c=float(cell.get("c", 1.0)),
                           tail_tol=float(cell["tail_tol"]), k_max=int(cell["k_max"])).sigma()
    except (TargetError, ValueError, KeyError, TypeError):
        return None
    sig = np.asarray(sig, float)
    if len(sig) != k or not np.allclose(sig[:len(head)], head, rtol=1e-9, atol=0):
        return None                     # not the spectrum the cell trained on: no tail rather than a wrong one
    return sig


SETBACK = 2.0     # cycles: a member stopped at a cycle end this many times above its best earlier end rose, not flattened


def cycle_stops(rows: pd.DataFrame, curve: pd.DataFrame, fit) -> dict:
    """Under the cycles' rule (FitConfig.cycles > 1): how many members the rule stopped at the end of each cycle, which
    were still falling at the cap ((m_h, seed) pairs) -- what the folder says about who did not stop, and why -- and
    which of the stopped ones stopped on a setback: a restart at the peak rate that ended SETBACK x or more above their
    best earlier cycle end (a collapse, kept at its best end's weights), not on a flat loss ([m_h, seed, ratio])."""
    stopped = {c: 0 for c in range(2, fit.cycles + 1)}
    setbacks = []
    keys = [k for k in ("alpha", "rank", "m_ff", "seed", "m_h", "restart") if k in rows and k in curve]
    ends = curve[curve.step % fit.steps == 0] if len(curve) else curve
    for r in rows[rows.status == "converged"].itertuples():
        stopped[int(r.steps) // fit.steps] = stopped.get(int(r.steps) // fit.steps, 0) + 1
        own = ends
        for k in keys:
            own = own[own[k].astype(str) == str(getattr(r, k))]
        last, before = own[own.step == r.steps].train_mse, own[own.step < r.steps].train_mse
        if len(last) and len(before) and last.iloc[-1] >= SETBACK * before.min():
            # 4 significant digits: the folder's loss_curves table keeps 7 (the cells' keep all), so a ratio read back
            # from it agrees to about 6 -- more would differ between the summary and its own folder's tables
            setbacks.append([int(r.m_h), int(r.seed), float(f"{float(last.iloc[-1] / before.min()):.4g}")])
    budget = rows[rows.status == "budget"].sort_values(["m_h", "seed"])
    return {"cycles": fit.cycles, "cycle_steps": fit.steps, "stopped_after": {str(c): n for c, n in stopped.items()},
            "still_falling": [[int(m), int(sd)] for m, sd in zip(budget.m_h, budget.seed)],
            "setbacks": sorted(setbacks), "setback_factor": SETBACK, "members": int(len(rows))}


def cycle_totals(per_target: list[dict]) -> dict:
    """The folder's totals of its targets' `cycle_stops`: counts only, since an (m_h, seed) pair names a member of
    one target (each target's own lists are in its entry)."""
    first = per_target[0]
    after = {k: sum(c["stopped_after"].get(k, 0) for c in per_target) for k in first["stopped_after"]}
    return {"cycles": first["cycles"], "cycle_steps": first["cycle_steps"], "stopped_after": after,
            "n_still_falling": sum(len(c["still_falling"]) for c in per_target),
            "n_setbacks": sum(len(c["setbacks"]) for c in per_target), "setback_factor": first["setback_factor"],
            "members": sum(c["members"] for c in per_target), "targets": len(per_target)}


def summarize(out_dir: Path, tabs: dict, fit_range: tuple[int, int], command: str,
              reference: dict | None = None, ff_from: str = "", attn_from: str = "") -> dict:
    """summary.json and summary.md: per target (and m_FF), the curves over seeds, the exponents, the
    target diagnostics and the checks, each decided by a stated rule (the constants above)
    (and, with a `reference_run`, its held-out curve beside this one's)."""
    rows, blocks = tabs["rows"], tabs["blocks"]
    kinds = sorted({attention_of(m) for m in tabs["meta"].values()})
    feats = sorted({m["cell"].get("model", {}).get("features", "learned") for m in tabs["meta"].values()})
    widths = sorted(rows.m_ff.unique().tolist())
    summary = {"command": command, "attention": ", ".join(kinds), "features": ", ".join(feats),
               "fit_range": list(fit_range), "m_ff": [int(w) for w in widths],
               "rules": rule_values(), "doubling_rule": doubling.RULE, "targets": []}
    fits = {json.dumps(m["cell"].get("fit", {}), sort_keys=True) for m in tabs["meta"].values()}
    fit = None
    if len(fits) == 1:                    # one recipe (a folder mixing recipes states none rather than one of them)
        fit = fit_config(json.loads(fits.pop()))
        summary["stop_rule"] = stop_rule(fit)
    cycled = fit is not None and fit.cycles > 1
    diags = tabs.get("diagnostics", pd.DataFrame())
    run_cfg = out_dir / "config.json"
    source = (read_json(run_cfg).get("sigma_source", "--sigma") if run_cfg.exists() else "--sigma")
    check = doubling.read(out_dir)        # the folder's doubling check, read once for every target
    for alpha, rank, width in targets_of(rows):
        all_sel = rows[(rows.alpha == alpha) & (rows["rank"] == rank) & (rows.m_ff == width)]
        div = failed_members(all_sel)
        sel = all_sel[~div]
        meta = tabs["meta"][(alpha, rank, width)]
        curve = target_curve(all_sel)
        if curve.empty:
            raise RunFailed(f"every fit of the target alpha={alpha:g} rank={rank} diverged (training MSE above "
                            f"explode x E[y^2]): there is no curve to summarise; results.csv and the cells are kept "
                            f"in {out_dir}; try a smaller --lr")
        diverged = [{"m_h": int(r.m_h), "seed": int(r.seed), "status": r.status} for _, r in all_sel[div].iterrows()]
        ms = curve.m_h.to_numpy()
        lo, hi = fit_range
        div_ms = set(all_sel.m_h[div])
        fit_ms = [int(m) for m in ms if lo <= m <= hi and (rank == "inf" or m < int(rank)) and m not in div_ms]
        exps, per_seed, by_range = {}, {}, {}
        all_ms = [int(m) for m in ms if (rank == "inf" or m < int(rank)) and m not in div_ms]
        for rng in (fit_ms, all_ms):          # the rate is judged over the fit range and over every m_h run
            if len(rng) >= 2 and rank == "inf":
                by_range[label(rng)] = {"m_h": rng, **{k: block_exponent(blocks, alpha, rank, rng, k, m_ff=width)
                                                       for k in ("test", "oracle") if k in set(blocks.kind)}}
        if len(fit_ms) >= 2:
            have = set(blocks.kind.unique())
            for kind in (*ORACLES, *L1_KINDS):
                if kind in have:
                    exps[kind] = block_exponent(blocks, alpha, rank, fit_ms, kind, m_ff=width)
            for seed, g in sel[sel.m_h.isin(fit_ms)].groupby("seed"):
                if g.m_h.nunique() == len(fit_ms) and (g.test_mse > 0).all():
                    per_seed[int(seed)] = fit_power_law(g.sort_values("m_h").m_h, g.sort_values("m_h").test_mse)[0]
        comp = meta["complexity"]
        sigma = target_sigma(meta)      # every sigma_i up to K (the cell stores the first 64 only)
        bounds = bound_terms(sigma, alpha, comp["C0"], comp["C1"], meta["cell"]["tau"], ms,
                             tail_beyond=meta["target"]["tail_energy"]) if sigma is not None else []
        checks = {}
        if rank != "inf":
            r = int(rank)
            c = curve.set_index("m_h")
            knees = per_seed_knee(sel, r)
            if knees:
                checks["knee_per_seed"] = knees
                checks["knee_drop"] = float(np.median(knees))
                checks["knee_ok"] = checks["knee_drop"] >= KNEE_MIN
            if r in c.index and r + 1 in c.index and c.test_mse[r + 1] > 0:
                checks["drop_r_to_r_plus_1"] = float(c.test_mse[r] / c.test_mse[r + 1])
        else:
            c = curve[curve.m_h <= 8]
            ratio = (c.test_mse / c.oracle_mse)
            checks["max_trained_over_oracle_mh_le_8"] = float(ratio.max())
            checks["within_2x_ok"] = bool((ratio <= 2).all())
            checks["tracking"] = tracking(curve, fit_ms, alpha)
        sig = meta["cell"].get("sigma") or []
        if sig and len(fit_ms) >= 2:    # an explicit spectrum: its curve below the rank against the fitted decay's rate
            checks["tracking"] = tracking(curve[curve.m_h.isin(fit_ms)], fit_ms, alpha)
        factor = outlier_factor(meta["cell"].get("model", {}).get("features", "learned"))
        outl = outliers(sel, factor)
        checks["outlier_factor"] = factor
        checks["optimisation_outliers"] = sorted({o["m_h"] for o in outl})
        checks["outliers"] = outl
        d = diags[(diags.alpha == alpha) & (diags["rank"] == rank) & (diags.m_ff == width)] if len(diags) else diags
        diag = {k: float(v) for k, v in d.drop(columns=["alpha", "rank", "m_ff", "seed"]).mean().items()} if len(d) else {}
        best = float(curve.test_median.min()) if len(curve) else float("nan")
        deg = degenerate(diag, best) if diag else {"degenerate": False, "why": "no diagnostics (cells of an older run)"}
        share = (1 - curve.oracle_self_exact_mse / curve.oracle_mse)[curve.oracle_mse > 0]
        statuses = all_sel.status.astype(str).str.split(":").str[0].value_counts().to_dict()
        summary["targets"].append({
            "alpha": alpha, "rank": rank, "m_ff": int(width), "attention": attention_of(meta),
            "features": meta["cell"].get("model", {}).get("features", "learned"),
            "activation": recorded(meta["cell"].get("model", {}), "activation"),
            "in_scale": recorded(meta["cell"].get("model", {}), "in_scale"),
            "term": meta["cell"].get("term", "full"),
            **({"features_k": int(recorded(meta["cell"].get("model", {}), "features_k"))}
               if meta["cell"].get("model", {}).get("features", "learned") == "given" else {}),
            "phi": meta["cell"].get("phi", "sin"), "psi": meta["cell"].get("psi", "sin"), "K": meta["target"]["K"],
            "tail_beyond_K": meta["target"]["tail_energy"], "tail_tol_met": meta["target"]["tail_tol_met"],
            "C0": comp["C0"], "C1": comp["C1"], "predicted_exponent": predicted_exponent(alpha),
            "fit_m_h": [int(m) for m in fit_ms], "exponents": exps, "exponents_by_range": by_range, "exponent_per_seed": per_seed,
            "checks": checks, "diagnostics": diag, "degenerate": deg, "statuses": statuses, "diverged": diverged,
            "n_seeds": int(all_sel.seed.nunique()), "restarts": int(all_sel.get("restarts", pd.Series([1])).max()),
            "self_coupling_share": dict(zip(map(int, curve.m_h[curve.oracle_mse > 0]), map(float, share))),
            "curve": curve.to_dict(orient="records"), "bound": bounds,
            **explicit_fields(meta["cell"], source, meta["sigma_head"])})
        t = summary["targets"][-1]
        t["doubling"] = doubling.target_entry(check, sel)     # each member's label: training on checked it or not
        if cycled:                      # whom the cycles' rule stopped, and who was still falling at its cap
            t["cycle_stops"] = cycle_stops(all_sel, tabs.get("curve", pd.DataFrame()), fit)
        if not_power_law(t) and "tracking" in checks:   # no power law: no m_h^-(2a-1) line to track
            tr = checks["tracking"]
            tr["tracks"] = [x for x in tr["tracks"] if x != LINE_REF]
    if cycled and summary["targets"]:
        summary["cycle_stops"] = cycle_totals([t["cycle_stops"] for t in summary["targets"]])
    ffc = ff_curves(Path(ff_from)) if ff_from else {}
    stuck = attn_stuck(Path(attn_from)) if attn_from else {}
    atc = attn_curves(Path(attn_from), stuck) if attn_from else {}
    attn_blocks = read_blocks(Path(attn_from)) if attn_from else None
    for t in summary["targets"]:
        if t["features"] != "learned" or t.get("term", "full") != "full":
            continue
        e = ffc.get((t["alpha"], t["rank"], t["m_ff"]))      # e_FF at this width only
        a = atc.get((t["alpha"], t["rank"]))
        if e or a:
            m_max = max(int(r["m_h"]) for r in t["curve"])
            t["terms"] = explain(t["curve"], e, ff_from if e else "", a, attn_from if a else "",
                                 attn_note(attn_from, m_max, t["rank"], stuck.get((t["alpha"], t["rank"]))) if a else "",
                                 budget=[b[0] for b in t["doubling"][doubling.BUDGET]])
        elif t["checks"].get("tracking", {}).get("floor"):
            t["terms"] = {"line": NO_TERMS, "rows": []}
        if a and attn_blocks is not None:     # the attention term alone's own exponent over each range: a control
            for r in t["exponents_by_range"].values():
                if set(r["m_h"]) <= set(a):
                    r["attention"] = block_exponent(attn_blocks, t["alpha"], t["rank"], r["m_h"])
    for t in summary["targets"]:
        if t["rank"] == "inf" and t.get("term", "full") == "full":
            t["rate"] = judge_rate(t)       # the one rate rule: the printed line and the ledger read the same
        elif t["rank"] != "inf" and t.get("term", "full") == "full" and "knee_drop" in t["checks"]:
            t["knee"] = judge_knee(t)       # the one knee rule, likewise
    if reference is not None:
        summary["reference"] = {k: v for k, v in reference.items() if k not in ("targets", "blocks")}
        for t in summary["targets"]:
            ref = reference["targets"].get((t["alpha"], t["rank"]))
            if ref is None:
                continue
            mine = {int(r["m_h"]): r["test_mse"] for r in t["curve"]}
            rb, fm = reference["blocks"], t["fit_m_h"]
            same = (rb is not None and len(fm) >= 2 and
                    set(fm) <= set(rb[(rb.alpha == t["alpha"]) & (rb["rank"] == t["rank"])].m_h))
            t["reference"] = {"attention": ref["attention"], "checks": ref["checks"],
                              # its exponent over this run's m_h (else the one its own summary fitted)
                              "exponent": block_exponent(rb, t["alpha"], t["rank"], fm) if same else ref["exponent"],
                              "exponent_m_h": fm if same else None,
                              "curve": [{"m_h": m, "test_mse": mine[m], "reference_test_mse": ref["curve"][m],
                                         "ratio": mine[m] / ref["curve"][m]} for m in mine if m in ref["curve"]]}
    write_atomic(out_dir / "summary.json", json.dumps(summary, indent=1, default=float))
    write_atomic(out_dir / "summary.md", markdown(summary))
    return summary
