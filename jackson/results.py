"""Tidy tables from finished cells, then summaries and figures made only from those tables."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from .rates import bootstrap_exponent, bound_terms, predicted_exponent

ORACLES = {"test": "trained (held-out)", "oracle": "oracle: rank-m_h rho",
           "oracle_self_exact": "oracle: rank-m_h rho, s=t exact"}


def _rank_order(r: str) -> float:
    return math.inf if r == "inf" else float(r)


def collect(out_dir: Path, cell_dirs: list[Path]) -> dict[str, pd.DataFrame]:
    """Concatenate the cells' tables into the sweep's tidy tables and write them."""
    tabs = {}
    metas = [json.loads((d / "cell.json").read_text()) for d in cell_dirs]
    for name in ("rows", "blocks", "curve", "learned_spectrum"):
        parts = []
        for d, meta in zip(cell_dirs, metas):
            df = pd.read_csv(d / f"{name}.csv", dtype={"rank": str})
            c = meta["cell"]
            if name != "rows":
                df.insert(0, "alpha", c["alpha"])
                df.insert(1, "rank", c["rank"])
                if "seed" not in df:
                    df.insert(2, "seed", c["seed"])
            parts.append(df)
        tabs[name] = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    for t in tabs.values():
        if "rank" in t:
            t["rank"] = t["rank"].astype(str)
    tabs["rows"].to_csv(out_dir / "results.csv", index=False, float_format="%.6e")
    tabs["curve"].to_csv(out_dir / "loss_curves.csv", index=False, float_format="%.6e")
    tabs["learned_spectrum"].to_csv(out_dir / "learned_spectrum.csv", index=False, float_format="%.6e")
    tabs["blocks"].to_csv(out_dir / "blocks.csv", index=False, float_format="%.6e")
    tabs["meta"] = {(m["cell"]["alpha"], m["cell"]["rank"]): m for m in metas}
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
    keys = rows[["alpha", "rank"]].drop_duplicates().values.tolist()
    return sorted(((float(a), str(r)) for a, r in keys), key=lambda k: (k[0], _rank_order(k[1])))


# the SweepConfig fields that define a target and its data: two runs compare only if these agree
SAME_DATA = ("phi", "psi", "F", "f", "tau", "tail_tol", "k_max", "n_train", "n_test", "seeds")


def reference_run(folder: str | Path, config: dict | None = None) -> dict:
    """Another jackson-sweep folder to set beside this one (--compare-to): its attention, its curves and
    exponents per target (from its summary.json), and the data fields in which its config differs."""
    folder = Path(folder)
    s = json.loads((folder / "summary.json").read_text())
    other = json.loads((folder / "config.json").read_text()) if (folder / "config.json").exists() else {}
    differs = [k for k in SAME_DATA if config is not None and k in other and k in config and other[k] != config[k]]
    blocks = (pd.read_csv(folder / "blocks.csv", dtype={"rank": str}) if (folder / "blocks.csv").exists()
              else None)
    return {"folder": str(folder), "attention": s.get("attention", "softmax"), "command": s.get("command", ""),
            "fit_range": s.get("fit_range"), "differs": differs, "blocks": blocks,
            "targets": {(float(t["alpha"]), str(t["rank"])): {
                "attention": t.get("attention", s.get("attention", "softmax")),
                "curve": {int(r["m_h"]): float(r["test_mse"]) for r in t["curve"]},
                "exponent": t.get("exponents", {}).get("test"), "checks": t.get("checks", {})}
                for t in s["targets"]}}


def block_exponent(blocks: pd.DataFrame, alpha: float, rank: str, fit_ms, kind: str = "test") -> dict:
    """Slope of log MSE vs log m_h over fit_ms with its bootstrap interval, from a blocks table
    (one row per m_h, seed, kind and block of held-out sequences)."""
    fit_ms = [int(m) for m in fit_ms]
    b = blocks[(blocks.alpha == alpha) & (blocks["rank"].astype(str) == str(rank)) & blocks.m_h.isin(fit_ms)]
    t = b[b.kind == kind].pivot_table(index=["seed", "block"], columns="m_h", values="mse")[fit_ms]
    arr = t.to_numpy().reshape(t.index.get_level_values(0).nunique(), -1, len(fit_ms))
    return bootstrap_exponent(fit_ms, arr)


def summarize(out_dir: Path, tabs: dict, fit_range: tuple[int, int], command: str,
              reference: dict | None = None) -> dict:
    """summary.json and summary.md: per target, the curves, the exponents and the checks
    (and, with a `reference_run`, its held-out curve beside this one's)."""
    rows, blocks = tabs["rows"], tabs["blocks"]
    kinds = sorted({attention_of(m) for m in tabs["meta"].values()})
    summary = {"command": command, "attention": ", ".join(kinds), "fit_range": list(fit_range), "targets": []}
    for alpha, rank in _targets(rows):
        sel = rows[(rows.alpha == alpha) & (rows["rank"] == rank)]
        meta = tabs["meta"][(alpha, rank)]
        curve = sel.groupby("m_h").agg(
            train_mse=("train_mse", "mean"), test_mse=("test_mse", "mean"),
            test_sd=("test_mse", "std"), oracle_mse=("oracle_mse", "mean"),
            oracle_self_exact_mse=("oracle_self_exact_mse", "mean"),
            n_seeds=("seed", "nunique"), n_converged=("status", lambda s: int((s == "converged").sum())),
            n_failed=("status", lambda s: int(s.str.startswith("failed").sum()))).reset_index()
        ms = curve.m_h.to_numpy()
        lo, hi = fit_range
        fit_ms = [m for m in ms if lo <= m <= hi and (rank == "inf" or m < int(rank))]
        exps = {}
        if len(fit_ms) >= 2:
            for kind in ORACLES:
                exps[kind] = block_exponent(blocks, alpha, rank, fit_ms, kind)
        comp = meta["complexity"]
        sigma = np.asarray(meta["sigma_head"])
        bounds = bound_terms(sigma, alpha, comp["C0"], comp["C1"], meta["cell"]["tau"], ms,
                             tail_beyond=meta["target"]["tail_energy"]) if len(sigma) >= max(ms) else []
        checks = {}
        if rank != "inf":
            r = int(rank)
            c = curve.set_index("m_h")
            if r - 1 in c.index and r in c.index:
                checks["knee_drop"] = float(c.test_mse[r - 1] / c.test_mse[r])
                checks["knee_ok"] = checks["knee_drop"] >= 5
            if r in c.index and r + 1 in c.index:
                checks["drop_r_to_r_plus_1"] = float(c.test_mse[r] / c.test_mse[r + 1])
        else:
            c = curve[curve.m_h <= 8]
            ratio = (c.test_mse / c.oracle_mse)
            checks["max_trained_over_oracle_mh_le_8"] = float(ratio.max())
            checks["within_2x_ok"] = bool((ratio <= 2).all())
        # The hypothesis spaces are nested (a member with m_h can copy any smaller one by zero rows), so
        # the best error is non-increasing in m_h: a member far above a smaller one failed to optimise.
        # (also > 3x the target's median member, so scatter at the optimisation floor is not flagged)
        running = curve.test_mse.cummin().shift(1)
        bad = (curve.test_mse > 3 * running) & (curve.test_mse > 3 * curve.test_mse.median())
        outliers = curve.m_h[bad].astype(int).tolist()
        checks["optimisation_outliers"] = outliers
        share = (1 - curve.oracle_self_exact_mse / curve.oracle_mse)[curve.oracle_mse > 0]
        summary["targets"].append({
            "alpha": alpha, "rank": rank, "attention": attention_of(meta), "K": meta["target"]["K"],
            "tail_beyond_K": meta["target"]["tail_energy"], "tail_tol_met": meta["target"]["tail_tol_met"],
            "C0": comp["C0"], "C1": comp["C1"], "predicted_exponent": predicted_exponent(alpha),
            "fit_m_h": [int(m) for m in fit_ms], "exponents": exps, "checks": checks,
            "self_coupling_share": dict(zip(map(int, ms), map(float, share))),
            "curve": curve.to_dict(orient="records"), "bound": bounds})
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
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1, default=float))
    (out_dir / "summary.md").write_text(_markdown(summary))
    return summary


def _fmt_exp(e: dict | None) -> str:
    return "n/a" if not e else f"{e['slope']:+.2f} [{e['lo']:+.2f}, {e['hi']:+.2f}]"


def _markdown(s: dict) -> str:
    att = s.get("attention", "softmax")
    kinds = att.split(", ")
    L = [f"# jackson-sweep summary ({att} attention)", "",
         f"Command: `{s['command']}`", "",
         "Model attention: " + "; ".join(ATTENTION_TEXT.get(k, k) for k in kinds) + ". "
         "Learned spectrum: singular values of " + "; ".join(RHO_HAT.get(k, k) for k in kinds) + ".", "",
         "Data: synthetic POD targets (Eq. 8), inputs U[0,1]; errors are mean squared errors over "
         f"positions and sequences. *Trained* = held-out MSE of the fitted Eq. (5) model ({att} attention); *oracle* = "
         "held-out MSE of the target with rho replaced by its exact rank-m_h POD truncation; "
         "*oracle, s=t exact* = the same with only the s != t logits truncated. Exponents: slope of "
         f"log MSE vs log m_h over m_h in {s['fit_range'][0]}..{s['fit_range'][1]} (below the rank for "
         "finite-rank targets), 95% bootstrap interval over seeds and blocks of held-out sequences. "
         "The oracle is a reference, not a lower bound: softmax ignores any added function of x_t alone and "
         "f_hat, F_hat are learned, so a rank-m_h attention can beat the rank-m_h POD truncation. "
         "*Converged*: the member's training-subset MSE stopped improving by 5% per check (see jackson/fit.py); "
         "otherwise it ran out of budget. The Eq. (17) attention term is tau^2 C0 C1 m_h^-(2alpha-1) for the "
         "L1 error summed over t (the feed-forward term needs beta and C2, which a target does not determine).", ""]
    for t in s["targets"]:
        L += [f"## alpha = {t['alpha']:g}, rank = {t['rank']} ({t.get('attention', 'softmax')} attention)", ""]
        tol = "" if t["tail_tol_met"] else " (tolerance NOT met: the realised target is this K-term truncation)"
        L += [f"K = {t['K']} terms, tail beyond K = {t['tail_beyond_K']:.3g}{tol}; "
              f"C0 = {t['C0']:.3g}, C1 = {t['C1']:.3g}; predicted exponent -(2alpha-1) = {t['predicted_exponent']:+.2f}.", ""]
        L += ["| m_h | train MSE | held-out MSE | oracle | oracle, s=t exact | held-out / oracle | "
              "tail sum_{i>m_h} sigma_i^2 (Eq. 47) | Eq. 17 attention term | converged | failed |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        bound = {b["m_h"]: b for b in t["bound"]}
        for r in t["curve"]:
            ratio = f"{r['test_mse'] / r['oracle_mse']:.2f}" if r["oracle_mse"] > 0 else "n/a (oracle exact)"
            b = bound.get(int(r["m_h"]))
            bt = f"{b['tail_energy']:.3e} | {b['attention_term']:.3g}" if b else "n/a | n/a"
            L.append(f"| {r['m_h']} | {r['train_mse']:.3e} | {r['test_mse']:.3e} | {r['oracle_mse']:.3e} | "
                     f"{r['oracle_self_exact_mse']:.3e} | {ratio} | {bt} | "
                     f"{r['n_converged']}/{r['n_seeds']} | {r['n_failed']} |")
        L.append("")
        if t["exponents"]:
            L += ["| curve | fitted exponent [95% CI] | predicted |", "|---|---|---|"]
            for k, name in ORACLES.items():
                L.append(f"| {name} | {_fmt_exp(t['exponents'].get(k))} | {t['predicted_exponent']:+.2f} |")
            L.append("")
            e = t["exponents"]
            sh = list(t["self_coupling_share"].values())
            dom = "the s = t self-coupling terms" if np.median(sh) > 0.5 else "the s != t terms"
            L.append(f"Which term dominates the oracle error: {dom} (share of the truncated-oracle MSE removed by "
                     f"keeping s = t exact: {min(sh):.0%}-{max(sh):.0%} over m_h). The s != t oracle decays with "
                     f"exponent {_fmt_exp(e.get('oracle_self_exact'))} against the predicted "
                     f"{t['predicted_exponent']:+.2f}; the full oracle with {_fmt_exp(e.get('oracle'))}.")
            L.append("")
        if "reference" in t:
            L += _reference_md(t, s["reference"])
        ch = t["checks"]
        if t.get("attention") == "linear":
            L.append("Linear attention with m_h = 1 weights key s by phi(k_s) / sum_s' phi(k_s'), the same for every query "
                     "t (phi(q_t) cancels), so its m_h = 1 member attends without looking at x_t: a drop from m_h = 1 "
                     "to 2 says that, not that the target's rank was reached.")
        if "knee_drop" in ch:
            L.append(f"Rank check: held-out MSE drops {ch['knee_drop']:.1f}x from m_h = {int(t['rank']) - 1} to "
                     f"m_h = {t['rank']} (criterion >= 5x: {'met' if ch['knee_ok'] else 'NOT met'}).")
        if "drop_r_to_r_plus_1" in ch:
            L.append(f"For comparison, from m_h = {t['rank']} to m_h = {int(t['rank']) + 1} it drops "
                     f"{ch['drop_r_to_r_plus_1']:.1f}x (a member with exactly m_h = r has no spare dimension).")
        if ch.get("optimisation_outliers"):
            L.append(f"Optimisation outliers: m_h = {', '.join(map(str, ch['optimisation_outliers']))} ended more than 3x above "
                     "the best smaller m_h (and 3x above the median member), although a larger m_h can represent everything a smaller one can: these "
                     "members got stuck (more seeds or a restart would tell); they are kept in the tables and fits.")
        if "within_2x_ok" in ch:
            L.append(f"Oracle check: max held-out/oracle over m_h <= 8 is {ch['max_trained_over_oracle_mh_le_8']:.2f} "
                     f"(criterion <= 2: {'met' if ch['within_2x_ok'] else 'NOT met'}).")
        L.append("")
    return "\n".join(L)


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
        L.append(f"Fitted exponent of the held-out MSE: {me} {_fmt_exp(mine)}, {other} {_fmt_exp(r['exponent'])} ({where}).")
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


def plot(out_dir: Path, tabs: dict, summary: dict) -> list[Path]:
    """error_vs_mh.png, learned_spectrum.png, loss_curves.png."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    rows = tabs["rows"]
    att = summary.get("attention", "softmax")
    alphas = sorted(rows.alpha.unique())
    ranks = sorted(rows["rank"].astype(str).unique(), key=_rank_order)
    colors = dict(zip(ranks, sns.color_palette("deep", len(ranks))))
    paths = []

    fig, axes = plt.subplots(1, len(alphas), figsize=(4.6 * len(alphas) + 2.4, 4.4), squeeze=False)
    for ax, a in zip(axes[0], alphas):
        for t in summary["targets"]:
            if t["alpha"] != a:
                continue
            c = pd.DataFrame(t["curve"])
            col = colors[t["rank"]]
            ax.errorbar(c.m_h, c.test_mse, yerr=c.test_sd.fillna(0), color=col, marker="o", ms=4,
                        label=f"r={t['rank']} trained ({t.get('attention', 'softmax')})", capsize=2)
            pos = lambda v: v.where(v > 0)  # noqa: E731  (exact oracle, m_h >= r: nothing to draw on a log axis)
            ax.plot(c.m_h, pos(c.oracle_mse), color=col, ls="--", lw=1, label=f"r={t['rank']} oracle")
            ax.plot(c.m_h, pos(c.oracle_self_exact_mse), color=col, ls=":", lw=1, label=f"r={t['rank']} oracle s=t exact")
            if "reference" in t:   # --compare-to: the other run's trained curve, hollow markers
                rc = pd.DataFrame(t["reference"]["curve"])
                ax.plot(rc.m_h, rc.reference_test_mse, color=col, marker="s", ms=4, mfc="none", lw=1, alpha=0.7,
                        label=f"r={t['rank']} trained ({t['reference']['attention']}, reference)")
        ms = np.arange(1, rows.m_h.max() + 1)
        anchor = rows[(rows.alpha == a)].oracle_mse.max()
        ax.plot(ms, anchor * ms ** predicted_exponent(a), color="grey", ls=(0, (1, 3)), lw=2,
                label=r"$m_h^{-(2\alpha-1)}$")
        ax.set(xscale="log", yscale="log", xlabel="$m_h$", ylabel="MSE", title=f"alpha = {a:g}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.suptitle(f"Held-out MSE vs attention size m_h (synthetic POD targets), model: {att} attention", fontsize=9)
    fig.tight_layout()
    paths.append(out_dir / "error_vs_mh.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    spec = tabs["learned_spectrum"]
    tg = summary["targets"]
    fig, axes = _grid(plt, len(tg), 3.8)
    for ax, t in zip(axes, tg):
        s = spec[(spec.alpha == t["alpha"]) & (spec["rank"].astype(str) == t["rank"])]
        s = s.groupby("m_h").mean(numeric_only=True)
        cols = [c for c in s.columns if c[0] == "s" and c[1:].isdigit()]  # s1, s2, ... (not "seed")
        k = np.arange(1, len(cols) + 1)
        sig = np.asarray(tabs["meta"][(t["alpha"], t["rank"])]["sigma_head"])[:len(cols)]
        ax.plot(np.arange(1, len(sig) + 1), sig, "k-", lw=2.5, label="target sigma")
        cmap = plt.get_cmap("viridis")
        top = max(float(s[cols].to_numpy().max()) if len(s) else 1.0, float(sig.max()))
        for j, (m, r) in enumerate(s.iterrows()):
            ax.plot(k, np.maximum(r[cols].to_numpy(float), 1e-8), color=cmap(j / max(1, len(s) - 1)),
                    lw=1, marker=".", ms=3, label=f"m_h={m}" if j in (0, len(s) - 1) else None)
        ax.set(yscale="log", ylim=(1e-4, 2 * top), xlabel="index i", ylabel="singular value",
               title=f"alpha={t['alpha']:g}, r={t['rank']}")
        ax.legend(fontsize=7)
    what = "log(phi(q).phi(k)) (linear attention's effective coupling)" if att == "linear" else "rho_hat"
    fig.suptitle(f"Learned {what} spectrum\n(v-centred, a line per m_h) vs target sigma; model: {att} attention", fontsize=9)
    fig.tight_layout()
    paths.append(out_dir / "learned_spectrum.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    cur = tabs["curve"]
    fig, axes = _grid(plt, len(tg), 3.6)
    for ax, t in zip(axes, tg):
        c = cur[(cur.alpha == t["alpha"]) & (cur["rank"].astype(str) == t["rank"])]
        mhs = sorted(c.m_h.unique()) if len(c) else []
        cmap = plt.get_cmap("viridis")
        for j, m in enumerate(mhs):
            cc = c[c.m_h == m].groupby("step").train_mse.mean()
            ax.plot(cc.index, cc.values, color=cmap(j / max(1, len(mhs) - 1)), lw=1,
                    label=f"m_h={m}" if j in (0, len(mhs) - 1) else None)
        ax.set(yscale="log", xlabel="step", ylabel="train MSE", title=f"alpha={t['alpha']:g}, r={t['rank']}")
        ax.legend(fontsize=7)
    fig.suptitle(f"Loss curves (training-subset MSE, a line per m_h)\nmodel: {att} attention", fontsize=9)
    fig.tight_layout()
    paths.append(out_dir / "loss_curves.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths
