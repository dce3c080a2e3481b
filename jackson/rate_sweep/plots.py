"""A sweep's figures (`plot`), drawn from its tables only, and a finished folder's figures drawn again from its
tables (`folder_tables`, `redraw`; no training)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..figures import figure_style, integer_ticks, pyplot, save
from ..runfolder import table_path
from ..rates import predicted_exponent
from . import doubling
from .summary_text import ffn_title, target_title, terms_short
from .tables import attention_of, ff_width, rank_sort_key, spectrum_wide, target_curve
from ..config import read_json


TERM_STYLE = {"e_attn": {"ls": "-.", "marker": "^"}, "e_ff": {"ls": (0, (6, 2)), "marker": "s"}}
TERM_LABEL = {"e_attn": "attention term alone (features given)", "e_ff": "FFN term alone ($\\rho$ cut to rank $m_h$)"}


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


@figure_style()
def plot(out_dir: Path, tabs: dict, summary: dict) -> list[Path]:
    """error_vs_mh.png, learned_spectrum.png, loss_curves.png."""
    plt = pyplot()
    import seaborn as sns

    rows = tabs["rows"]
    att = summary.get("attention", "softmax")
    feats = summary.get("features", "learned")
    widths = summary.get("m_ff", [])
    alphas = sorted(rows.alpha.unique())
    lines = sorted({(t["rank"], t["m_ff"]) for t in summary["targets"]}, key=lambda k: (rank_sort_key(k[0]), k[1]))
    colors = dict(zip(lines, sns.color_palette("deep", len(lines))))
    name = lambda t: f"r={t['rank']}" + (f", m_FF={t['m_ff']}" if len(widths) > 1 else "")  # noqa: E731
    paths = []

    from matplotlib.lines import Line2D
    # a panel per alpha, at most two in a row up to three alphas, then three: the figure stays within 3:1; the
    # key goes in the first spare panel, else right of the first row
    n_a = len(alphas)
    cols = n_a if n_a <= 2 else 2 if n_a == 3 else 3
    rows_n = -(-n_a // cols)
    spare = rows_n * cols > n_a
    fig, panels = plt.subplots(rows_n, cols, figsize=(4.2 * cols + (0 if spare else 2.6), 4.0 * rows_n), squeeze=False)
    flat = list(panels.flat)
    for ax in flat[n_a + 1:]:
        ax.set_visible(False)
    clipped_any = near_floor = hollow_any = unchecked_any = False
    drawn_terms = set()
    for ax, a in zip(flat, alphas):
        lim = []
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
            bud = sorted({int(b[0]) for b in (t.get("doubling") or {}).get(doubling.BUDGET, [])})
            if bud:                  # a budget member: its error only an upper bound -- drawn hollow, over the dot
                hollow_any = True
                at = c.m_h.isin(bud)
                ax.plot(c.m_h[at], med[at], ls="none", marker="o", ms=7, mfc="white", mew=1.6, color=col, zorder=4)
            unchecked_any = unchecked_any or not (t.get("doubling") or {}).get(doubling.CONVERGED) \
                or bool((t.get("doubling") or {}).get(doubling.UNCHECKED))
            if low.any():
                clipped_any = True
                ax.plot(c.m_h[low], med[low], ls="none", marker="v", ms=6, mfc="white", color=col)
            if n > 1:                # the band report_hook's caption describes (seeds_drawn)
                ax.fill_between(c.m_h, c.test_min.clip(lower=ROUNDOFF_FLOOR), c.test_max.clip(lower=ROUNDOFF_FLOOR),
                                color=col, alpha=0.18, lw=0)
            shown = lambda v: v.where(v > ROUNDOFF_FLOOR)  # noqa: E731  (exact or round-off: not drawn)
            ax.plot(c.m_h, shown(c.oracle_mse), color=col, ls="--", lw=1)
            ax.plot(c.m_h, shown(c.oracle_self_exact_mse), color=col, ls=":", lw=1)
            tm = pd.DataFrame((t.get("terms") or {}).get("rows") or [])
            for k, style in TERM_STYLE.items():   # Eq. (17) term by term: the attention term and the FFN term alone
                if k in tm and tm[k].notna().any():
                    drawn_terms.add(k)
                    ax.plot(tm.m_h, shown(tm[k].astype(float)), color=col, lw=1.2, ms=4, mfc="white", **style)
            if len(tm) and "limiting" in tm:
                lim.append(f"{name(t)}: " + terms_short(t["terms"]))
            if "reference" in t:   # --compare-to: the other run's trained curve, hollow markers
                rc = pd.DataFrame(t["reference"]["curve"])
                ax.plot(rc.m_h, rc.reference_test_mse, color=col, marker="s", mfc="none", lw=1, alpha=0.7)
        if lim:                    # under the panel's x label, never over the curves it describes
            import textwrap
            ax.annotate("\n".join(textwrap.fill(x, 78) for x in lim), xy=(0.5, 0), xycoords=ax.xaxis.label,
                        xytext=(0, -3), textcoords="offset points", fontsize=6.5, va="top", ha="center")
        ms = np.arange(1, rows.m_h.max() + 1)
        anchor = rows[(rows.alpha == a)].oracle_mse.max()
        ax.plot(ms, anchor * ms ** predicted_exponent(a), color="grey", ls=(0, (1, 3)), lw=2)
        flagged = [f"{name(t)}: " + "; ".join(w.split(":")[0].lower() for w in t["degenerate"]["why"].split("; "))
                   for t in summary["targets"] if t["alpha"] == a and t.get("degenerate", {}).get("flag")]
        ax.set(xscale="log", yscale="log", xlabel="$m_h$", ylabel="held-out MSE",
               title=f"$\\alpha$ = {a:g}" + "".join(f"\n(flagged {f})" for f in flagged))
        integer_ticks(ax.xaxis, rows.m_h)
        lows = [pd.DataFrame(t["curve"]).test_min.min() for t in summary["targets"] if t["alpha"] == a and t["curve"]]
        if lows and min(lows) < 100 * ROUNDOFF_FLOOR:     # the floor is drawn where the data come near it
            near_floor = True
            ax.axhline(ROUNDOFF_FLOOR, color="0.5", lw=0.6, ls=(0, (4, 4)))
            ax.set_ylim(bottom=ROUNDOFF_FLOOR / 3)
    n_max = max(t.get("n_seeds", 1) for t in summary["targets"])
    keys = [Line2D([], [], color=colors[k], marker="o", label=name({"rank": k[0], "m_ff": k[1]})) for k in lines]
    keys += [Line2D([], [], color="0.3", marker="o", label="trained" + (f", median of {n_max} seeds (band: min-max)"
                                                                       if n_max > 1 else "")
                    + (f"\n({doubling.NOT_CHECKED_NOTE})" if unchecked_any else "")),
             Line2D([], [], color="0.3", ls="--", lw=1, label="rank-$m_h$ oracle"),
             Line2D([], [], color="0.3", ls=":", lw=1, label="oracle, $s = t$ part exact"),
             Line2D([], [], color="grey", ls=(0, (1, 3)), lw=2, label=r"$m_h^{-(2\alpha-1)}$")]
    keys += [Line2D([], [], color="0.3", lw=1.2, ms=4, mfc="white", label=TERM_LABEL[k], **TERM_STYLE[k])
             for k in TERM_STYLE if k in drawn_terms]
    if hollow_any:
        keys.append(Line2D([], [], color="0.3", marker="o", ms=7, mfc="white", mew=1.6, ls="none",
                           label="holds a budget member\n(twice the steps moved it: an upper bound)"))
    if any("reference" in t for t in summary["targets"]):
        keys.append(Line2D([], [], color="0.3", marker="s", mfc="none", lw=1, label="trained, the reference run"))
    if near_floor:
        keys.append(Line2D([], [], color="0.5", lw=0.6, ls=(0, (4, 4)), marker="v" if clipped_any else None,
                           mfc="white", label=f"round-off floor {ROUNDOFF_FLOOR:g}"
                                           + (" (values below drawn on it)" if clipped_any else "")))
    if spare:
        flat[n_a].axis("off")
        flat[n_a].legend(handles=keys, loc="center")
    else:
        flat[cols - 1].legend(handles=keys, loc="center left", bbox_to_anchor=(1.02, 0.5))
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
        integer_ticks(ax.xaxis, range(1, len(sig) + 1))
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
        integer_ticks(ax.xaxis, c.step)
        if mhs:
            _mh_colourbar(plt, fig, ax, cmap, norm, mhs)
    fig.suptitle(f"Loss curves (training-subset MSE, a line per m_h)\nmodel: {att} attention", fontsize=9)
    fig.tight_layout()
    paths.append(out_dir / "loss_curves.png")
    save(fig, paths[-1])
    return paths


# ---- a finished folder's figures drawn again from its tables (no training) ---------------------------

REDRAW_FILES = ("results.csv", "learned_spectrum.csv", "loss_curves.csv", "summary.json")   # each looked up by table_path


def _rank_text(v: str) -> str:
    """A rank as the tables key it ('2', 'inf'), also when a CSV wrote it as a float ('2.000000e+00')."""
    try:
        f = float(v)
    except ValueError:
        return v
    return str(int(f)) if math.isfinite(f) and f == int(f) else v


def folder_tables(folder: Path) -> tuple[dict, dict]:
    """(tabs, summary) as `plot` takes them, read back from a finished jackson-sweep folder: the tables
    `collect` wrote (results.csv, learned_spectrum.csv.gz, loss_curves.csv.gz; a folder written before those two
    were compressed: learned_spectrum.csv, loss_curves.csv), the cell.json of each of its cells
    (the target's sigma, the m_FF) and summary.json.  A folder written by an older version (no m_ff column, a
    curve without medians and bands) gets the missing pieces from the same tables, computed as `collect` and
    `summarize` compute them (`target_curve`); nothing is written."""
    from ..config import need
    folder = Path(folder)
    missing = [n for n in REDRAW_FILES if not table_path(folder, n).is_file()]
    need(not missing, f"{folder}: no {', '.join(missing)} (not a finished jackson-sweep folder)")
    rows, spec, curve = (pd.read_csv(table_path(folder, n), dtype={"rank": str})
                         for n in ("results.csv", "learned_spectrum.csv", "loss_curves.csv"))
    spec = spectrum_wide(spec)
    summary = read_json(folder / "summary.json")
    mine = set(rows["cell"].astype(str)) if "cell" in rows else None     # this run's cells (older runs: all)
    metas = [read_json(p) for p in sorted((folder / "cells").glob("*/cell.json"))
             if mine is None or p.parent.name in mine]
    need(metas, f"{folder}/cells: no cell.json of this run's cells (each target's sigma is drawn from it)")
    widths = sorted({ff_width(m) for m in metas})
    for t in (rows, spec, curve):
        if "m_ff" not in t:               # written before --m-ff: one width, the cells' own
            need(len(widths) == 1, f"{folder}: tables without an m_ff column but cells of widths {widths}")
            t["m_ff"] = widths[0]
        t["rank"] = t["rank"].astype(str).map(_rank_text)
    tabs = {"rows": rows, "learned_spectrum": spec, "curve": curve,
            "meta": {(m["cell"]["alpha"], str(m["cell"]["rank"]), ff_width(m)): m for m in metas}}
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
