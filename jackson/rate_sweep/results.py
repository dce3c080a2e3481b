"""Tidy tables from finished cells, then summaries and figures made only from those tables."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..figures import pyplot, save
from ..runfolder import write_atomic, write_atomic_gz
from ..config import RunFailed
from ..rates import bootstrap_exponent, bound_terms, fit_power_law, law_text, predicted_exponent, spectrum_law
from .blocks import BLOCKS, read_blocks
from .terms import explain, ff_curves

ORACLES = {"test": "trained (held-out)", "oracle": "oracle: rank-m_h rho",
           "oracle_self_exact": "oracle: rank-m_h rho, s=t exact"}
# Theorem 4.1's own error, E_x sum_t |H_t - H_hat_t| (cell.py); cells made before it was measured have none
L1_KINDS = {"test_l1": "trained (held-out), L1 error of Theorem 4.1", "oracle_l1": "oracle: rank-m_h rho, L1 error"}


def _rank_order(r: str) -> float:
    return math.inf if r == "inf" else float(r)


def _width(meta: dict) -> int:
    """The cell's m_FF: the hidden width of f_hat and F_hat."""
    return int(meta["cell"].get("model", {}).get("width", 128))


SPECTRUM_KEYS = ["alpha", "rank", "seed", "m_ff", "m_h"]


def spectrum_long(wide: pd.DataFrame) -> pd.DataFrame:
    """The learned spectra as a tidy table, one row per (target, seed, m_FF, m_h, i): columns SPECTRUM_KEYS, i,
    sigma.  The cells keep one row per member with columns s1..sK (`cell.py`); this is what the run writes."""
    cols = [c for c in wide.columns if re.fullmatch(r"s\d+", c)]
    keys = [c for c in wide.columns if c not in cols]
    if not cols:
        return pd.DataFrame(columns=[*keys, "i", "sigma"])
    out = wide.melt(id_vars=keys, value_vars=cols, var_name="i", value_name="sigma")
    out["i"] = out["i"].str[1:].astype(int)
    return out.sort_values([*keys, "i"], kind="stable").reset_index(drop=True)


def spectrum_wide(table: pd.DataFrame) -> pd.DataFrame:
    """learned_spectrum.csv as the plot takes it (one row per member, s1..sK), from the tidy layout or from the
    wide one that folders written before 2026-11-25 hold."""
    if "sigma" not in table:
        return table
    keys = [c for c in table.columns if c not in ("i", "sigma")]
    wide = table.pivot(index=keys, columns="i", values="sigma").reset_index()
    wide.columns = [c if isinstance(c, str) else f"s{c}" for c in wide.columns]
    return wide


def collect(out_dir: Path, cell_dirs: list[Path]) -> dict[str, pd.DataFrame]:
    """Concatenate the cells' tables into the sweep's tidy tables and write them."""
    tabs = {}
    metas = [json.loads((d / "cell.json").read_text()) for d in cell_dirs]
    for name in ("rows", "blocks", "curve", "learned_spectrum", "restarts"):
        parts = []
        for d, meta in zip(cell_dirs, metas):
            if not (d / f"{name}.csv").exists():     # restarts.csv: cells written before restarts existed
                continue
            df = pd.read_csv(d / f"{name}.csv", dtype={"rank": str})
            c = meta["cell"]
            if name != "rows":
                df.insert(0, "alpha", c["alpha"])
                df.insert(1, "rank", c["rank"])
                if "seed" not in df:
                    df.insert(2, "seed", c["seed"])
            if "m_ff" not in df:
                df.insert(3 if name != "rows" else 2, "m_ff", _width(meta))
            parts.append(df)
        tabs[name] = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    for t in tabs.values():
        if "rank" in t:
            t["rank"] = t["rank"].astype(str)
    tabs["diagnostics"] = pd.DataFrame([{"alpha": m["cell"]["alpha"], "rank": str(m["cell"]["rank"]), "m_ff": _width(m),
                                         "seed": m["cell"]["seed"], **m.get("diagnostics", {})} for m in metas])
    write_atomic(out_dir / "results.csv", tabs["rows"].to_csv(index=False, float_format="%.6e"))
    write_atomic(out_dir / "loss_curves.csv", tabs["curve"].to_csv(index=False, float_format="%.6e"))
    write_atomic(out_dir / "learned_spectrum.csv", spectrum_long(tabs["learned_spectrum"]).to_csv(index=False, float_format="%.6e"))
    write_atomic_gz(out_dir / BLOCKS, tabs["blocks"].to_csv(index=False, float_format="%.6e"))
    write_atomic(out_dir / "restarts.csv", tabs["restarts"].to_csv(index=False, float_format="%.6e"))
    write_atomic(out_dir / "diagnostics.csv", tabs["diagnostics"].to_csv(index=False, float_format="%.6e"))
    tabs["meta"] = {(m["cell"]["alpha"], str(m["cell"]["rank"]), _width(m)): m for m in metas}
    return tabs


# what `rho_hat` (the learned spectrum) is for each attention kind (jackson/models.py)
RHO_HAT = {"softmax": "rho_hat = (W_Q f_hat(u))^T W_K f_hat(v), Eq. (18)",
           "sparse": "rho_hat = (W_Q f_hat(u))^T W_K f_hat(v), Eq. (18), used only on the pairs the sparse pattern lets through",
           "linear": "the effective coupling log(phi(W_Q f_hat(u)).phi(W_K f_hat(v))), phi = elu + 1, whose softmax over s "
                     "is the linear-attention pattern"}
ATTENTION_TEXT = {
    "softmax": "softmax attention, Eq. (5) as written",
    "sparse": "sparse attention (beyond the paper): the softmax over s restricted to the two-sided Eq. (6) pattern "
              "{s : |t - s| < kB} U {every block's last c tokens}, B = 2^floor(log2 sqrt tau), c = k = 1",
    "linear": "linear attention (beyond the paper): sum_s phi(q_t).phi(k_s) v_s / sum_s phi(q_t).phi(k_s), "
              "phi = elu + 1, q = W_Q f_hat(x), k = W_K f_hat(x), non-causal -- a rank-m_h kernel in place of "
              "exp(rho_hat); the targets keep their softmax of a coupling"}


def attention_of(meta: dict) -> str:
    """The attention kind a cell used (cells written before the option existed used softmax)."""
    return meta["cell"].get("model", {}).get("attention", "softmax")


def _targets(rows: pd.DataFrame):
    """(alpha, rank, m_ff) of every target (and feed-forward width) in the run."""
    keys = rows[["alpha", "rank", "m_ff"]].drop_duplicates().values.tolist()
    return sorted(((float(a), str(r), int(w)) for a, r, w in keys), key=lambda k: (k[0], _rank_order(k[1]), k[2]))


# the SweepConfig fields that define a target and its data: two runs compare only if these agree
SAME_DATA = ("phi", "psi", "F", "f", "tau", "tail_tol", "k_max", "n_train", "n_test", "seeds", "c", "sigma")


def reference_run(folder: str | Path, config: dict | None = None) -> dict:
    """Another jackson-sweep folder to set beside this one (--compare-to): its attention, its curves and
    exponents per target (from its summary.json), and the data fields in which its config differs."""
    folder = Path(folder)
    s = json.loads((folder / "summary.json").read_text())
    other = json.loads((folder / "config.json").read_text()) if (folder / "config.json").exists() else {}
    differs = [k for k in SAME_DATA if config is not None and k in other and k in config and other[k] != config[k]]
    blocks = read_blocks(folder)
    return {"folder": str(folder), "attention": s.get("attention", "softmax"), "command": s.get("command", ""),
            "fit_range": s.get("fit_range"), "differs": differs, "blocks": blocks,
            "targets": {(float(t["alpha"]), str(t["rank"])): {
                "attention": t.get("attention", s.get("attention", "softmax")),
                "curve": {int(r["m_h"]): float(r["test_mse"]) for r in t["curve"]},
                "exponent": t.get("exponents", {}).get("test"), "checks": t.get("checks", {})}
                for t in s["targets"]}}


def block_exponent(blocks: pd.DataFrame, alpha: float, rank: str, fit_ms, kind: str = "test",
                   m_ff: int | None = None) -> dict:
    """Slope of log MSE vs log m_h over fit_ms with its bootstrap interval, from a blocks table
    (one row per m_h, seed, kind and block of held-out sequences)."""
    fit_ms = [int(m) for m in fit_ms]
    b = blocks[(blocks.alpha == alpha) & (blocks["rank"].astype(str) == str(rank)) & blocks.m_h.isin(fit_ms)]
    if m_ff is not None and "m_ff" in b:
        b = b[b.m_ff == m_ff]
    t = b[b.kind == kind].pivot_table(index=["seed", "block"], columns="m_h", values="mse")[fit_ms]
    arr = t.to_numpy().reshape(t.index.get_level_values(0).nunique(), -1, len(fit_ms))
    e = bootstrap_exponent(fit_ms, arr)
    if len(fit_ms) == 2:      # a line through two points: the "fit" is exact, so an interval would describe the data's
        e.update(lo=float("nan"), hi=float("nan"), why_no_interval=TWO_POINTS)   # noise, not a rate: none is given
    return e


TWO_POINTS = "two m_h only: a line through two points, no interval"


# ---- the stated rules behind every verdict of summary.md ----------------------------------------
KNEE_MIN = 10.0          # finite rank r: median over seeds of e(r-1)/e(r) >= this shows Theorem 4.1's "exact once m_h >= r"
OUTLIER_FACTOR = 3.0     # a member more than this x above the best smaller m_h (same target and seed) failed to optimise ...
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
        if r - 1 in e.index and r in e.index and e[r] > 0:
            out.append(float(e[r - 1] / e[r]))
    return out


def outliers(rows: pd.DataFrame) -> list[dict]:
    """Members that ended > OUTLIER_FACTOR x above the best smaller m_h of the same seed (hypothesis
    spaces are nested: a larger m_h can copy any smaller one with zero rows), with their inits."""
    out = []
    for seed, g in rows.groupby("seed"):
        g = g.sort_values("m_h")
        best = g.test_mse.cummin().shift(1)
        bad = (g.test_mse > OUTLIER_FACTOR * best) & (g.test_mse > OUTLIER_FLOOR)
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


def _failed(rows: pd.DataFrame) -> pd.Series:
    """The members left out of every curve and fit: diverged (or failed) ones."""
    return rows.status.astype(str).str.startswith(("diverged", "failed"))


def target_curve(rows: pd.DataFrame) -> pd.DataFrame:
    """One target's curve over seeds, a row per m_h, from its rows of results.csv (diverged members left
    out, counted in n_diverged): the medians and min-max bands the figures draw, the means the summary prints."""
    div = _failed(rows)
    sel = rows[~div]
    curve = sel.groupby("m_h").agg(
        train_mse=("train_mse", "mean"), test_mse=("test_mse", "mean"),
        test_median=("test_mse", "median"), test_min=("test_mse", "min"), test_max=("test_mse", "max"),
        test_sd=("test_mse", "std"), oracle_mse=("oracle_mse", "mean"),
        oracle_self_exact_mse=("oracle_self_exact_mse", "mean"),
        n_seeds=("seed", "nunique"), n_converged=("status", lambda s: int((s == "converged").sum())),
        n_budget=("status", lambda s: int((s == "budget").sum()))).reset_index()
    if "test_mse_min" in sel:
        extra = sel.groupby("m_h").agg(restart_min=("test_mse_min", "mean"), restart_median=("test_mse_median", "mean"))
        curve = curve.merge(extra.reset_index(), on="m_h", how="left")
    if "test_l1" in sel and sel.test_l1.notna().any():
        l1 = sel.groupby("m_h").agg(test_l1=("test_l1", "mean"), test_l1_median=("test_l1", "median"),
                                    oracle_l1=("oracle_l1", "mean"))
        curve = curve.merge(l1.reset_index(), on="m_h", how="left")
    ndiv = rows[div].groupby("m_h").size()
    curve["n_diverged"] = [int(ndiv.get(m, 0)) for m in curve.m_h]
    return curve


NO_TERMS = ("which term limits it is not measured in this run: --ff-from a --term ff run of this target measures "
            "the feed-forward term (reports/jackson/FITTING.md has it for the committed targets)")


def summarize(out_dir: Path, tabs: dict, fit_range: tuple[int, int], command: str,
              reference: dict | None = None, ff_from: str = "") -> dict:
    """summary.json and summary.md: per target (and m_FF), the curves over seeds, the exponents, the
    target diagnostics and the checks, each decided by a stated rule (the constants above)
    (and, with a `reference_run`, its held-out curve beside this one's)."""
    rows, blocks = tabs["rows"], tabs["blocks"]
    kinds = sorted({attention_of(m) for m in tabs["meta"].values()})
    feats = sorted({m["cell"].get("model", {}).get("features", "learned") for m in tabs["meta"].values()})
    widths = sorted(rows.m_ff.unique().tolist())
    summary = {"command": command, "attention": ", ".join(kinds), "features": ", ".join(feats),
               "fit_range": list(fit_range), "m_ff": [int(w) for w in widths],
               "rules": {k: globals()[k] for k in RULES}, "targets": []}
    diags = tabs.get("diagnostics", pd.DataFrame())
    run_cfg = out_dir / "config.json"
    source = (json.loads(run_cfg.read_text()).get("sigma_source", "--sigma") if run_cfg.exists() else "--sigma")
    for alpha, rank, width in _targets(rows):
        all_sel = rows[(rows.alpha == alpha) & (rows["rank"] == rank) & (rows.m_ff == width)]
        div = _failed(all_sel)
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
        exps, per_seed = {}, {}
        if len(fit_ms) >= 2:
            have = set(blocks.kind.unique())
            for kind in (*ORACLES, *L1_KINDS):
                if kind in have:
                    exps[kind] = block_exponent(blocks, alpha, rank, fit_ms, kind, m_ff=width)
            for seed, g in sel[sel.m_h.isin(fit_ms)].groupby("seed"):
                if g.m_h.nunique() == len(fit_ms) and (g.test_mse > 0).all():
                    per_seed[int(seed)] = fit_power_law(g.sort_values("m_h").m_h, g.sort_values("m_h").test_mse)[0]
        comp = meta["complexity"]
        sigma = np.asarray(meta["sigma_head"])
        bounds = bound_terms(sigma, alpha, comp["C0"], comp["C1"], meta["cell"]["tau"], ms,
                             tail_beyond=meta["target"]["tail_energy"]) if len(sigma) >= max(ms) else []
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
        outl = outliers(sel)
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
            "activation": meta["cell"].get("model", {}).get("activation", "gelu"),
            "in_scale": meta["cell"].get("model", {}).get("in_scale", 3.0),
            "term": meta["cell"].get("term", "full"),
            "phi": meta["cell"].get("phi", "sin"), "psi": meta["cell"].get("psi", "sin"), "K": meta["target"]["K"],
            "tail_beyond_K": meta["target"]["tail_energy"], "tail_tol_met": meta["target"]["tail_tol_met"],
            "C0": comp["C0"], "C1": comp["C1"], "predicted_exponent": predicted_exponent(alpha),
            "fit_m_h": [int(m) for m in fit_ms], "exponents": exps, "exponent_per_seed": per_seed,
            "checks": checks, "diagnostics": diag, "degenerate": deg, "statuses": statuses, "diverged": diverged,
            "n_seeds": int(all_sel.seed.nunique()), "restarts": int(all_sel.get("restarts", pd.Series([1])).max()),
            "self_coupling_share": dict(zip(map(int, curve.m_h[curve.oracle_mse > 0]), map(float, share))),
            "curve": curve.to_dict(orient="records"), "bound": bounds,
            **explicit_fields(meta["cell"], source, meta["sigma_head"])})
        t = summary["targets"][-1]
        if not_power_law(t) and "tracking" in checks:   # no power law: no m_h^-(2a-1) line to track
            tr = checks["tracking"]
            tr["tracks"] = [x for x in tr["tracks"] if x != LINE_REF]
    ffc = ff_curves(Path(ff_from)) if ff_from else {}
    for t in summary["targets"]:
        if t["features"] != "learned" or t.get("term", "full") != "full":
            continue
        e = (ffc.get((t["alpha"], t["rank"], t["m_ff"])) or next(iter(v for k, v in ffc.items()
                                                                   if k[:2] == (t["alpha"], t["rank"])), None)
             if ff_from else None)
        if e:
            t["terms"] = explain(t["curve"], e, ff_from)
        elif t["checks"].get("tracking", {}).get("floor"):
            t["terms"] = {"line": NO_TERMS, "rows": []}
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
    write_atomic(out_dir / "summary.md", _markdown(summary))
    return summary


RULES = ("KNEE_MIN", "OUTLIER_FACTOR", "OUTLIER_FLOOR", "SELF_WEIGHT_MAX", "TRIVIAL_FACTOR", "TRACK_SLOPE", "FLOOR_SHARE")


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
        elif "knee_drop" in ch:
            verdict = (f"knee e({int(t['rank']) - 1})/e({t['rank']}) median {ch['knee_drop']:.3g}x over "
                       f"{len(ch['knee_per_seed'])} seeds (min {min(ch['knee_per_seed']):.3g}x): "
                       + ("shown" if ch["knee_ok"] else "NOT shown") + f" by the >= {KNEE_MIN:g}x rule")
        elif "tracking" in ch:
            tr = ch["tracking"]
            verdict = ("tracks " + " and ".join(tr["tracks"]) if tr["tracks"] else "tracks no reference (exponent "
                       f"within +-{TRACK_SLOPE:g})") + (f"; floor ~{tr['floor_value']:.2g} over m_h {tr['upper_m_h'][0]}..{tr['upper_m_h'][1]} "
                                                f"(slope {tr['upper_slope']:+.2f})" if tr.get("floor") else "")
        else:
            verdict = "n/a"
        st = t.get("statuses", {})
        bad = [f"{v} {k}" for k, v in st.items() if k != "converged"]
        if bad:
            verdict += "; members: " + ", ".join(bad)
        d = t.get("diagnostics", {})
        dg = (f"self-weight {d['self_weight']:.2f}, copy/uniform/mean MSE {d['mse_copy']:.2g}/{d['mse_uniform']:.2g}/{d['mse_mean']:.2g}"
              if d else "n/a")
        cons = {("sin", "sin"): "paper", ("sin", "cos"): "trace-free"}.get((t.get("phi"), t.get("psi")), f"{t.get('phi')}/{t.get('psi')}")
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


def _markdown(s: dict) -> str:
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
         "*Converged*: the member's training-subset MSE stopped improving by 5% per check while the learning rate was "
         "still >= 10% of its peak; *budget*: still improving then; *diverged*: non-finite, or above 10x the zero "
         "predictor's MSE -- excluded from curves and fits (see jackson/fit.py). The Eq. (17) attention term is "
         "tau^2 C0 C1 m_h^-(2alpha-1) for the L1 error summed over t (the feed-forward term needs beta and C2, which a "
         "target does not determine).", "",
         "Rules behind the verdicts (jackson/rate_sweep/results.py): finite rank r -- the knee e(r-1)/e(r), median over seeds, "
         f">= {KNEE_MIN:g}x; rank inf -- the trained curve *tracks* a reference when the exponent of trained/reference "
         f"over the fit range is within +-{TRACK_SLOPE:g} (the same rate), and has a *floor* when its slope over the upper half of m_h is shallower "
         f"than {FLOOR_SHARE:g}x the predicted one; a target is *degenerate* when its mean self-attention weight exceeds "
         f"{SELF_WEIGHT_MAX:g}; a fit is *uninformative* when a trivial predictor (the mean, copy y_t = F(f(x_t)), uniform "
         f"attention) is within {TRIVIAL_FACTOR:g}x of its best trained error -- neither's exponent is read as agreement; "
         f"an *outlier* is a member > {OUTLIER_FACTOR:g}x above the best smaller m_h of the same seed (both above "
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
              "converged / budget / diverged |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
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
                     f"{r['n_converged']} / {r['n_budget']} / {r.get('n_diverged', 0)} |")
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
        if "knee_drop" in ch:
            L.append(f"Rank check: held-out MSE drops {ch['knee_drop']:.3g}x (median over seeds; per seed "
                     f"{', '.join(f'{k:.3g}' for k in ch['knee_per_seed'])}) from m_h = {int(t['rank']) - 1} to "
                     f"m_h = {t['rank']} (criterion >= {KNEE_MIN:g}x: {'met' if ch['knee_ok'] else 'NOT met'}).")
        if "drop_r_to_r_plus_1" in ch:
            L.append(f"For comparison, from m_h = {t['rank']} to m_h = {int(t['rank']) + 1} it drops "
                     f"{ch['drop_r_to_r_plus_1']:.3g}x (mean curve).")
        if ch.get("outliers"):
            L.append("Optimisation outliers (more than 3x above the best smaller m_h of the same seed, although a larger "
                     "m_h can represent everything a smaller one can; kept in the tables and fits): "
                     + "; ".join(f"m_h = {o['m_h']}, seed {o['seed']}: {o['test_mse']:.3g} vs {o['best_smaller']:.3g} "
                                 f"(init seed {o['init_seed']}, best of {o['restarts']} restart(s))" for o in ch["outliers"]) + ".")
        elif "outliers" in ch:
            L.append("No optimisation outliers: no member ended more than 3x above the best smaller m_h of its seed.")
        if "tracking" in ch:
            tr = ch["tracking"]
            rat = "; ".join(f"{k}: trained/reference {v['min']:.3g}-{v['max']:.3g}, exponent difference "
                            f"{v['slope_difference']:+.2f}" for k, v in tr["ratios"].items())
            L.append(f"Tracking over m_h in {t['fit_m_h']}: " + ("tracks " + " and ".join(tr["tracks"]) if tr["tracks"]
                     else f"tracks no reference (exponent within +-{TRACK_SLOPE:g})") + f" ({rat})."
                     + (f" Slope over m_h {tr['upper_m_h'][0]}..{tr['upper_m_h'][1]}: {tr['upper_slope']:+.2f}"
                        + (f" -- a floor near {tr['floor_value']:.3g}." if tr.get("floor") else ".") if "upper_slope" in tr else ""))
        if t.get("terms"):
            tm = t["terms"]
            L.append("Eq. (17) term by term: " + tm["line"] + ".")
            if tm["rows"]:
                L += ["", "| m_h | e_full | e_FF | s != t oracle (attention term) | limited by |", "|---:|---:|---:|---:|---|"]
                L += [f"| {r['m_h']} | {r['e_full']:.3g} | {r['e_ff']:.3g} | {r['oracle']:.3g} | {r['limiting']} |"
                      for r in tm["rows"]]
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
    if not ts:
        return ""
    classes = sorted({t.get("activation", "gelu") + (f" (in-scale {t.get('in_scale', 3.0):g})"
                                                     if t.get("activation", "gelu") == "sin" else "") for t in ts})
    widths = sorted({t["m_ff"] for t in ts})
    terms = sorted({t.get("term", "full") for t in ts})
    return (f", FFN: {' / '.join(classes)}, width {', '.join(map(str, widths))}"
            + ("; term: the feed-forward term alone" if terms == ["ff"] else ""))


def ffn_text(t: dict) -> str:
    """The FFN class and the term a learned-features target was fitted for."""
    act = t.get("activation", "gelu")
    return (f"FFN class of f_hat and F_hat: {act} between layers, width m_FF = {t['m_ff']}, f_hat's first layer drawn "
            f"U(-{t.get('in_scale', 3.0):g}, {t.get('in_scale', 3.0):g})/sqrt(fan_in). Term: "
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


def _grid(plt, n: int, height: float):
    """One panel per target, at most 3 per row; unused panels hidden."""
    cols = min(3, n)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols + 1.2, height * rows), squeeze=False)
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


ROUNDOFF_FLOOR = 1e-12   # error_vs_mh draws no value below this: float64 oracle round-off (~1e-16 and below) and
                         # float32 model outputs (eps^2 E[y^2] ~ 1e-15) sit there; a trained value below is drawn on it


def _mh_colours(plt, mhs):
    """(cmap, norm): one viridis colour per m_h, spaced by log m_h, as a discrete map (a colour bar of few
    levels stays vector in the PDF)."""
    from matplotlib.colors import BoundaryNorm, ListedColormap
    ms = sorted(set(float(m) for m in mhs)) or [1.0]
    logs = np.log(ms)
    span = (logs[-1] - logs[0]) or 1.0
    cmap = ListedColormap([plt.get_cmap("viridis")((x - logs[0]) / span * 0.95) for x in logs])
    edges = [ms[0] - 0.5] + [(a + b) / 2 for a, b in zip(ms, ms[1:])] + [ms[-1] + 0.5]
    return cmap, BoundaryNorm(edges, cmap.N)


def _mh_colourbar(plt, fig, ax, cmap, norm, mhs) -> None:
    from matplotlib.cm import ScalarMappable
    cb = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, pad=0.02, fraction=0.05)
    ticks = list(mhs) if len(mhs) <= 8 else list(mhs)[::max(1, len(mhs) // 6)]
    cb.set_ticks(ticks)
    cb.set_ticklabels([str(int(m)) for m in ticks])
    cb.minorticks_off()
    cb.set_label("$m_h$")


def plot(out_dir: Path, tabs: dict, summary: dict) -> list[Path]:
    """error_vs_mh.png, learned_spectrum.png, loss_curves.png."""
    plt = pyplot()
    import seaborn as sns

    rows = tabs["rows"]
    att = summary.get("attention", "softmax")
    feats = summary.get("features", "learned")
    widths = summary.get("m_ff", [])
    alphas = sorted(rows.alpha.unique())
    lines = sorted({(t["rank"], t["m_ff"]) for t in summary["targets"]}, key=lambda k: (_rank_order(k[0]), k[1]))
    colors = dict(zip(lines, sns.color_palette("deep", len(lines))))
    name = lambda t: f"r={t['rank']}" + (f", m_FF={t['m_ff']}" if len(widths) > 1 else "")  # noqa: E731
    paths = []

    from matplotlib.lines import Line2D
    fig, axes = plt.subplots(1, len(alphas), figsize=(4.2 * len(alphas) + 2.6, 4.0), squeeze=False)
    clipped_any = near_floor = False
    for ax, a in zip(axes[0], alphas):
        for t in summary["targets"]:
            if t["alpha"] != a:
                continue
            c = pd.DataFrame(t["curve"])
            col = colors[(t["rank"], t["m_ff"])]
            n = t.get("n_seeds", 1)
            # no round-off drawn as data: a value below ROUNDOFF_FLOOR is drawn on it, as an open triangle
            med, low = c.test_median.clip(lower=ROUNDOFF_FLOOR), c.test_median < ROUNDOFF_FLOOR
            ax.plot(c.m_h, med, color=col, marker="o",     # the legend is built from keys below; the label names the line
                    label=f"{name(t)} trained, " + (f"median of {n} seeds" if n > 1 else "1 seed"))
            if low.any():
                clipped_any = True
                ax.plot(c.m_h[low], med[low], ls="none", marker="v", ms=6, mfc="white", color=col)
            if n > 1:                # the band report_hook's caption describes (seeds_drawn)
                ax.fill_between(c.m_h, c.test_min.clip(lower=ROUNDOFF_FLOOR), c.test_max.clip(lower=ROUNDOFF_FLOOR),
                                color=col, alpha=0.18, lw=0)
            shown = lambda v: v.where(v > ROUNDOFF_FLOOR)  # noqa: E731  (exact or round-off: not drawn)
            ax.plot(c.m_h, shown(c.oracle_mse), color=col, ls="--", lw=1)
            ax.plot(c.m_h, shown(c.oracle_self_exact_mse), color=col, ls=":", lw=1)
            if "reference" in t:   # --compare-to: the other run's trained curve, hollow markers
                rc = pd.DataFrame(t["reference"]["curve"])
                ax.plot(rc.m_h, rc.reference_test_mse, color=col, marker="s", mfc="none", lw=1, alpha=0.7)
        ms = np.arange(1, rows.m_h.max() + 1)
        anchor = rows[(rows.alpha == a)].oracle_mse.max()
        ax.plot(ms, anchor * ms ** predicted_exponent(a), color="grey", ls=(0, (1, 3)), lw=2)
        ax.set(xscale="log", yscale="log", xlabel="$m_h$", ylabel="held-out MSE", title=f"$\\alpha$ = {a:g}")
        lows = [pd.DataFrame(t["curve"]).test_min.min() for t in summary["targets"] if t["alpha"] == a and t["curve"]]
        if lows and min(lows) < 100 * ROUNDOFF_FLOOR:     # the floor is drawn where the data come near it
            near_floor = True
            ax.axhline(ROUNDOFF_FLOOR, color="0.5", lw=0.6, ls=(0, (4, 4)))
            ax.set_ylim(bottom=ROUNDOFF_FLOOR / 3)
    n_max = max(t.get("n_seeds", 1) for t in summary["targets"])
    keys = [Line2D([], [], color=colors[k], marker="o", label=name({"rank": k[0], "m_ff": k[1]})) for k in lines]
    keys += [Line2D([], [], color="0.3", marker="o", label="trained" + (f", median of {n_max} seeds (band: min-max)"
                                                                       if n_max > 1 else "")),
             Line2D([], [], color="0.3", ls="--", lw=1, label="rank-$m_h$ oracle"),
             Line2D([], [], color="0.3", ls=":", lw=1, label="oracle, $s = t$ part exact"),
             Line2D([], [], color="grey", ls=(0, (1, 3)), lw=2, label=r"$m_h^{-(2\alpha-1)}$")]
    if any("reference" in t for t in summary["targets"]):
        keys.append(Line2D([], [], color="0.3", marker="s", mfc="none", lw=1, label="trained, the reference run"))
    if near_floor:
        keys.append(Line2D([], [], color="0.5", lw=0.6, ls=(0, (4, 4)), marker="v" if clipped_any else None,
                           mfc="white", label=f"round-off floor {ROUNDOFF_FLOOR:g}"
                                           + (" (values below drawn on it)" if clipped_any else "")))
    flagged = [name(t) + f", alpha {t['alpha']:g}" for t in summary["targets"] if t.get("degenerate", {}).get("flag")]
    axes[0][-1].legend(handles=keys, loc="center left", bbox_to_anchor=(1.02, 0.5),
                       title=("flagged: " + "; ".join(flagged)) if flagged else None, title_fontsize=6.5)
    import textwrap                # one line per ~13 characters per inch of figure at fontsize 9: never cut off
    fig.suptitle(textwrap.fill(f"Held-out MSE vs attention size m_h (synthetic POD targets), model: {att} attention, "
                               f"{feats} features{ffn_title(summary)}", int(13 * fig.get_figwidth())), fontsize=9)
    fig.tight_layout()
    paths.append(out_dir / "error_vs_mh.png")
    save(fig, paths[-1])

    if len(widths) > 1:        # the m_FF axis: a heatmap of held-out error per target
        tg = {}
        for t in summary["targets"]:
            tg.setdefault((t["alpha"], t["rank"]), []).append(t)
        fig, axes = _grid(plt, len(tg), 3.8)
        for ax, ((a, r), ts) in zip(axes, tg.items()):
            grid = pd.DataFrame({t["m_ff"]: pd.DataFrame(t["curve"]).set_index("m_h").test_median for t in ts}).T.sort_index()
            sns.heatmap(np.log10(grid), ax=ax, cmap="viridis_r", annot=grid.map(lambda v: f"{v:.1e}") if grid.size <= 48 else False,
                        fmt="", annot_kws={"fontsize": 6}, cbar_kws={"label": "log10 held-out MSE (median over seeds)"})
            ax.invert_yaxis()
            ax.set(xlabel="$m_h$", ylabel="$m_{FF}$ (hidden width of f_hat, F_hat)", title=f"alpha={a:g}, r={r}")
        fig.suptitle(f"Held-out MSE over m_h x m_FF; model: {att} attention", fontsize=9)
        fig.tight_layout()
        paths.append(out_dir / "error_mh_x_mff.png")
        save(fig, paths[-1])

    spec = tabs["learned_spectrum"]
    tg = summary["targets"]
    fig, axes = _grid(plt, len(tg), 3.6)
    for ax, t in zip(axes, tg):
        s = spec[(spec.alpha == t["alpha"]) & (spec["rank"].astype(str) == t["rank"]) & (spec.m_ff == t["m_ff"])]
        s = s.groupby("m_h").mean(numeric_only=True)
        cols = [c for c in s.columns if c[0] == "s" and c[1:].isdigit()]  # s1, s2, ... (not "seed")
        sig = np.asarray(tabs["meta"][(t["alpha"], t["rank"], t["m_ff"])]["sigma_head"])[:len(cols)]
        ax.plot(np.arange(1, len(sig) + 1), sig, "k-", lw=2.5, label="target $\\sigma_i$")
        mhs = list(s.index)
        cmap, norm = _mh_colours(plt, mhs)
        for m, r in s.iterrows():    # rho_hat = q k^T has rank <= m_h: past index m_h a value is round-off, not drawn
            v = r[cols].to_numpy(float)[:int(m)]
            ax.plot(np.arange(1, len(v) + 1), np.where(v > 0, v, np.nan), color=cmap(norm(m)), lw=1, marker=".", ms=3)
        ax.set(xscale="log", yscale="log", xlabel="index i", ylabel="singular value", title=target_title(t, widths))
        ax.legend(loc="lower left")
        if mhs:
            _mh_colourbar(plt, fig, ax, cmap, norm, mhs)
    what = "log(phi(q).phi(k)) (linear attention's effective coupling)" if att == "linear" else "rho_hat"
    fig.suptitle(f"Learned {what} spectrum (v-centred; a line per m_h, drawn up to its rank m_h) against the target's "
                 f"sigma; model: {att} attention", fontsize=9)
    fig.tight_layout()
    paths.append(out_dir / "learned_spectrum.png")
    save(fig, paths[-1])

    cur = tabs["curve"]
    fig, axes = _grid(plt, len(tg), 3.6)
    for ax, t in zip(axes, tg):
        c = cur[(cur.alpha == t["alpha"]) & (cur["rank"].astype(str) == t["rank"]) & (cur.m_ff == t["m_ff"])]
        if "chosen" in c:
            c = c[c.chosen.astype(bool)]
        mhs = sorted(c.m_h.unique()) if len(c) else []
        cmap, norm = _mh_colours(plt, mhs)
        for m in mhs:
            cc = c[c.m_h == m].groupby("step").train_mse.mean()
            ax.plot(cc.index, cc.values, color=cmap(norm(m)), lw=1)
        ax.set(yscale="log", xlabel="step", ylabel="train MSE", title=target_title(t, widths))
        if mhs:
            _mh_colourbar(plt, fig, ax, cmap, norm, mhs)
    fig.suptitle(f"Loss curves (training-subset MSE, a line per m_h)\nmodel: {att} attention", fontsize=9)
    fig.tight_layout()
    paths.append(out_dir / "loss_curves.png")
    save(fig, paths[-1])
    return paths


# ---- a finished folder's figures drawn again from its tables (no training) ---------------------------

REDRAW_FILES = ("results.csv", "learned_spectrum.csv", "loss_curves.csv", "summary.json")


def _rank_text(v: str) -> str:
    """A rank as the tables key it ('2', 'inf'), also when a CSV wrote it as a float ('2.000000e+00')."""
    try:
        f = float(v)
    except ValueError:
        return v
    return str(int(f)) if math.isfinite(f) and f == int(f) else v


def folder_tables(folder: Path) -> tuple[dict, dict]:
    """(tabs, summary) as `plot` takes them, read back from a finished jackson-sweep folder: the tables
    `collect` wrote (results.csv, learned_spectrum.csv, loss_curves.csv), the cell.json of each of its cells
    (the target's sigma, the m_FF) and summary.json.  A folder written by an older version (no m_ff column, a
    curve without medians and bands) gets the missing pieces from the same tables, computed as `collect` and
    `summarize` compute them (`target_curve`); nothing is written."""
    from ..config import need
    folder = Path(folder)
    missing = [n for n in REDRAW_FILES if not (folder / n).is_file()]
    need(not missing, f"{folder}: no {', '.join(missing)} (not a finished jackson-sweep folder)")
    rows, spec, curve = (pd.read_csv(folder / n, dtype={"rank": str})
                         for n in ("results.csv", "learned_spectrum.csv", "loss_curves.csv"))
    spec = spectrum_wide(spec)
    summary = json.loads((folder / "summary.json").read_text())
    mine = set(rows["cell"].astype(str)) if "cell" in rows else None     # this run's cells (older runs: all)
    metas = [json.loads(p.read_text()) for p in sorted((folder / "cells").glob("*/cell.json"))
             if mine is None or p.parent.name in mine]
    need(metas, f"{folder}/cells: no cell.json of this run's cells (each target's sigma is drawn from it)")
    widths = sorted({_width(m) for m in metas})
    for t in (rows, spec, curve):
        if "m_ff" not in t:               # written before --m-ff: one width, the cells' own
            need(len(widths) == 1, f"{folder}: tables without an m_ff column but cells of widths {widths}")
            t["m_ff"] = widths[0]
        t["rank"] = t["rank"].astype(str).map(_rank_text)
    tabs = {"rows": rows, "learned_spectrum": spec, "curve": curve,
            "meta": {(m["cell"]["alpha"], str(m["cell"]["rank"]), _width(m)): m for m in metas}}
    summary.setdefault("attention", ", ".join(sorted({attention_of(m) for m in metas})))
    summary.setdefault("features", ", ".join(sorted({m["cell"].get("model", {}).get("features", "learned")
                                                      for m in metas})))
    summary.setdefault("m_ff", widths)
    for t in summary["targets"]:
        t.setdefault("m_ff", widths[0] if len(widths) == 1 else None)
        key = (t["alpha"], str(t["rank"]), t["m_ff"])
        need(key in tabs["meta"], f"{folder}: no cell.json for the target alpha={t['alpha']:g} rank={t['rank']}")
        sel = rows[(rows.alpha == t["alpha"]) & (rows["rank"] == str(t["rank"])) & (rows.m_ff == t["m_ff"])]
        if not t["curve"] or "test_median" not in t["curve"][0]:     # an older summary: means only
            t["curve"] = target_curve(sel).to_dict(orient="records")
        t.setdefault("n_seeds", int(sel.seed.nunique()))
    return tabs, summary


def redraw(folder: Path) -> list[Path]:
    """Draw a finished jackson-sweep folder's figures again, from its tables, with `plot` (what the run
    calls at its end): each PNG at 200 dpi and a PDF beside it.  Trains nothing; writes no table, summary
    or report.json."""
    tabs, summary = folder_tables(folder)
    return plot(Path(folder), tabs, summary)


# ---- the lab report's entry (report.json) ---------------------------------------------------------

def seeds_text(seeds) -> str:
    """'3 (0, 1, 2)' for a list of seeds; the value itself otherwise."""
    if isinstance(seeds, (list, tuple)):
        return f"{len(seeds)} ({', '.join(map(str, seeds))})"
    return str(seeds)


def seeds_drawn(n_seeds) -> str:
    """What error_vs_mh.png draws of the trained model, in the caption's words, given each target's number
    of seeds: `plot` draws a target's median over its seeds (one seed: its values) and, with more than one,
    the min-max band over them."""
    ns = sorted(set(int(n) for n in n_seeds))
    if ns == [1]:
        return "one seed, no band"
    which = f"the {ns[0]} seeds" if len(ns) == 1 else f"each target's seeds ({ns[0]}-{ns[-1]})"
    return f"median over {which}, shaded band: min-max over them" + ("" if ns[0] > 1 else " where there are several")


def measured_exponent(e: dict) -> dict:
    """A headline row's measured exponent, with its 95% bootstrap interval (lo, hi) where the fit gave one."""
    out = {"measured": e["slope"]}
    if all(isinstance(e.get(k), (int, float)) and math.isfinite(e[k]) for k in ("lo", "hi")):
        out.update(lo=e["lo"], hi=e["hi"])
    return out


def report_hook(folder: Path) -> dict:
    """The lab report's entry for a jackson-sweep folder (jackson/lab_report/page.py reads it as report.json), built
    from what the run wrote: summary.json, config.json, command.txt and the figures."""
    s = json.loads((folder / "summary.json").read_text())
    cfg = json.loads((folder / "config.json").read_text())
    command = (folder / "command.txt").read_text().strip()
    seeds = cfg.get("seeds", [])
    alphas = sorted({t["alpha"] for t in s["targets"]})
    ranks = list(dict.fromkeys(t["rank"] for t in s["targets"]))
    mh = cfg.get("m_h", [])
    t0 = s["targets"][0] if s["targets"] else {}
    bases = f"{t0.get('phi', cfg.get('phi', 'sin'))}/{t0.get('psi', cfg.get('psi', 'sin'))} bases"   # the cells' own
    data = (f"synthetic POD targets of Eq. (8) (F = {cfg.get('F', 'identity')}, f = {cfg.get('f', 'identity')}, "
            f"{bases}), x ~ U[0,1], tau = {cfg.get('tau', '?')}; "
            f"{cfg.get('n_train', '?')} training / {cfg.get('n_test', '?')} held-out sequences per target and seed; "
            f"m_h = {min(mh) if mh else '?'}..{max(mh) if mh else '?'}")
    explicit = [t for t in s["targets"] if t.get("explicit")]
    kernels = [t for t in s["targets"] if t.get("kernel")]
    if kernels:
        k = kernels[0]["kernel"]
        data = data.replace(bases,
                            f"coupling the {kernel_text(kernels[0])}: its numerical POD on {k['nodes']} nodes, "
                            f"Nystrom-extended, alpha_hat = {k['alpha_hat']:g} fitted to its sigma")
    elif explicit:
        e = explicit[0]["explicit"]
        data += (f"; spectrum: {explicit_text(explicit[0])}, sigma = ({', '.join(f'{v:.4g}' for v in e['sigma'][:16])}"
                 f"{', ...' if e['K'] > 16 else ''}), alpha_hat = {e['alpha_hat']:g} fitted to it")
    elif cfg.get("c", 1.0) != 1.0:
        data += f"; scale c = {cfg['c']:g} (sigma_i = c i^-alpha)"
    if t0.get("activation", "gelu") != "gelu":
        data += f"; FFN class: {t0['activation']} activations, first-layer init scale {t0.get('in_scale', 3.0):g}"
    if t0.get("term", "full") == "ff":
        data += "; each member fitted to the rank-m_h truncation of its target (the feed-forward term alone)"
    tail = f" Data: {data}. Seeds: {seeds_text(seeds)}. Command: `{command}`."
    widths = s.get("m_ff", [])
    drawn = seeds_drawn(t.get("n_seeds") or len(seeds) for t in s["targets"])   # older summaries: the config's seeds
    refs = sorted({t["reference"]["attention"] for t in s["targets"] if "reference" in t})
    figs = [("error_vs_mh.png",
             f"Held-out MSE of the trained Eq. (5) model (dots; {drawn}) "
             f"and of the rank-m_h POD oracle (dashed; dotted: s = t logits kept exact) against m_h, one panel per alpha "
             f"({', '.join(f'{a:g}' for a in alphas)}), a colour per rank ({', '.join(ranks)})"
             + (f" and m_FF ({', '.join(map(str, widths))})" if len(widths) > 1 else "")
             + (f"; hollow squares: the {', '.join(refs)} attention model of the run compared with (--compare-to), "
                f"mean over its seeds" if refs else "")
             + "; grey: the slope m_h^-(2 alpha - 1) of Theorem 4.1."),
            ("learned_spectrum.png", "Singular values of the learned coupling rho_hat (one line per m_h) against the "
                                     "target's sigma_i, one panel per target."),
            ("loss_curves.png", "Training-subset MSE against optimiser step, one line per m_h, one panel per target.")]
    lo, hi = s.get("fit_range", [1, 8])
    kind = s.get("attention", "softmax")
    if kind != "softmax":   # the model is Eq. (5) with another attention: say so in every caption
        figs = [(f, c.replace("the trained Eq. (5) model", f"the trained Eq. (5) model with {kind} attention"))
                for f, c in figs]
    paper = []
    feats = s.get("features", "learned")
    for t in s["targets"]:
        e = t.get("exponents", {})
        if kind != "softmax" or t.get("term", "full") == "ff":
            continue        # Theorem 4.1 is about softmax attention and the target itself: no paper value beside these
        flag = t.get("degenerate", {})
        if t.get("explicit") and "test" in e:
            paper.append({"quantity": f"{explicit_text(t)}: exponent of held-out MSE in m_h (fit over m_h "
                                      f"{t['fit_m_h'][0]}..{t['fit_m_h'][-1]}; {PREDICTED_EXPLICIT}, alpha_hat = {t['alpha']:g})"
                                      + (f" -- {flag['why']}: not agreement" if flag.get("flag") else ""),
                          "paper": t["predicted_exponent"], **measured_exponent(e["test"])})
        if t.get("explicit") and "oracle" in e:
            paper.append({"quantity": f"{explicit_text(t)}: exponent of the rank-m_h oracle ({PREDICTED_EXPLICIT})",
                          "paper": t["predicted_exponent"], **measured_exponent(e["oracle"])})
        name = f"{kernel_text(t)} (alpha_hat = {t['alpha']:g})" if t.get("kernel") else f"alpha = {t['alpha']:g}"
        pred = PREDICTED_KERNEL if t.get("kernel") else "Theorem 4.1 predicts -(2 alpha - 1)"
        if t["rank"] == "inf" and "test" in e:
            paper.append({"quantity": f"{name}, rank inf: exponent of held-out MSE in m_h "
                                      f"(fit over m_h {lo}..{hi}; {pred})"
                                      + (f" -- {flag['why']}: not agreement" if flag.get("flag") else ""),
                          "paper": t["predicted_exponent"], **measured_exponent(e["test"])})
        if t["rank"] == "inf" and "oracle_self_exact" in e:
            paper.append({"quantity": f"{name}, rank inf: exponent of the rank-m_h oracle, s != t part",
                          "paper": t["predicted_exponent"], **measured_exponent(e["oracle_self_exact"])})
    for row in paper:
        if "lo" in row:
            row["quantity"] += "; in brackets its 95% bootstrap interval"
    nopl = {explicit_text(t) if t.get("explicit") else f"{kernel_text(t)} (alpha_hat = {t['alpha']:g})"
            for t in s["targets"] if not_power_law(t)}
    for row in paper:          # sigma fails the power-law test: -(2 alpha_hat - 1) is no prediction
        if any(row["quantity"].startswith(n) for n in nopl):
            row["paper"] = None
            row["quantity"] += " -- sigma is not a power law (jackson.rates.spectrum_law): no predicted exponent"
    notes = []
    for t in s["targets"]:
        ch = t.get("checks", {})
        if "knee_drop" in ch:
            notes.append(f"alpha {t['alpha']:g}, rank {t['rank']}: held-out MSE drops {ch['knee_drop']:.3g}x from "
                         f"m_h = {int(t['rank']) - 1} to {t['rank']}"
                         + (f" and {ch['drop_r_to_r_plus_1']:.3g}x from {t['rank']} to {int(t['rank']) + 1}"
                            if "drop_r_to_r_plus_1" in ch else ""))
        if "max_trained_over_oracle_mh_le_8" in ch:
            notes.append(f"alpha {t['alpha']:g}, rank inf: held-out / oracle <= "
                         f"{ch['max_trained_over_oracle_mh_le_8']:.3g} for m_h <= 8")
    outl = sorted({m for t in s["targets"] for m in t.get("checks", {}).get("optimisation_outliers", [])})
    text = ("Measured: " + "; ".join(notes) + "." if notes else "")
    if kind != "softmax":
        text = (f"Attention: {kind} (not the softmax of Theorem 4.1, so no predicted exponent is set beside it; "
                f"the comparison with softmax on the same targets is in summary.md). " + text)
    if outl:
        text += f" Members flagged as optimisation outliers (stuck far above smaller m_h): m_h = {', '.join(map(str, outl))}."
    if feats == "given":
        text = ("Given features: f_hat replaced by the target's own basis, only W_Q, W_K and an affine value map trained "
                "(the attention term of Eq. (17) alone). " + text)
    head = (f"jackson-sweep: {kernel_text(kernels[0])}; rank {', '.join(ranks)}" if kernels else
            f"jackson-sweep: {explicit_text(explicit[0])}" if explicit else
            f"jackson-sweep: alpha {', '.join(f'{a:g}' for a in alphas)}; rank {', '.join(ranks)}"
            + (f"; c = {cfg['c']:g}" if cfg.get("c", 1.0) != 1.0 else ""))
    return {"section": "jackson",
            "title": head
                     + (f"; {kind} attention" if kind != "softmax" else "")
                     + ("; given features" if feats == "given" else "")
                     + (f"; {t0['activation']} FFN" if t0.get("activation", "gelu") != "gelu" else "")
                     + ("; feed-forward term alone" if t0.get("term", "full") == "ff" else "") + f" ({folder.name})",
            "data": data, "command": command, "seeds": seeds, "paper": paper, "text": text.strip(),
            "figures": [{"file": f, "caption": c + tail} for f, c in figs]}


def write_report_json(folder: Path) -> Path:
    """report.json beside the summary: the one interface jackson-report reads."""
    from ..runfolder import write_report
    return write_report(folder, report_hook(Path(folder)))
