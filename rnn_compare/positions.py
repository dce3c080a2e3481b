"""Where in time an alteration hurts: the held-out MSE by position and zone, the hot positions, and the figure."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from jackson.figures import figure_style, pyplot, save
from .config import CompareConfig
from .coupling import terms_words
from .settings import HOT


ZONES = ("first", "middle", "last")


def zone_of(t, tau: int, swap: int) -> str:
    """Which part of the sequence output position t is in: the first `swap` steps, the last `swap` (the
    two blocks the ordering alteration exchanges), or the middle, which it leaves in place."""
    return "first" if t < swap else ("last" if t >= tau - swap else "middle")


def zone_table(pos: pd.DataFrame, cfg: CompareConfig) -> pd.DataFrame:
    """Held-out MSE averaged over the output positions of each zone, per (kernel, alteration, model, seed);
    columns first, middle, last."""
    z = pos.assign(zone=[zone_of(t, cfg.tau, cfg.swap) for t in pos.t])
    wide = z.groupby(["kernel", "alteration", "model", "seed", "zone"]).test_mse.mean().unstack("zone")
    return wide.reindex(columns=list(ZONES)).reset_index()


def position_section(pos: pd.DataFrame, cfg: CompareConfig) -> list[str]:
    """Where along the sequence the held-out error sits (median over seeds of each zone's mean MSE), and
    for each altered target its zone-by-zone ratio to the original."""
    med = zone_table(pos, cfg).groupby(["kernel", "alteration", "model"])[list(ZONES)].median()
    md = ["## Where the error sits: held-out MSE by output position", "",
          f"Mean held-out MSE over the output positions t of each zone, median over seeds: first = t < {cfg.swap}, "
          f"last = t >= {cfg.tau - cfg.swap} (the blocks the ordering alteration exchanges), middle = the rest. "
          "Diverged members are left out, as in the tables. Per position and seed: position_mse.csv; drawn in "
          "position_mse.png.", "",
          "| kernel | alteration | model | first | middle | last | first / original | middle / original | last / original |",
          "|---|---|---|---|---|---|---|---|---|"]
    for (k, a, m), r in med.iterrows():
        base = med.loc[(k, "original", m)] if (k, "original", m) in med.index and a != "original" else None
        ratios = ([f"{r[z] / base[z]:.3g}" for z in ZONES] if base is not None else ["", "", ""])
        md.append(f"| {k} | {a} | {m} | " + " | ".join(f"{r[z]:.3g}" for z in ZONES) + " | " + " | ".join(ratios) + " |")
    md.append("")
    conc = concentration(pos)
    if len(conc):
        md += [f"Is the drop spread over the sequence or held by a few positions? Per output position, the altered "
               f"target's MSE over the original's (each the median over seeds); *hot* positions are those above "
               f"{HOT}x. Their share of the altered target's summed MSE, and the altered / original ratio of the "
               "mean MSE with them left out:", "",
               "| kernel | alteration | model | median over t of altered / original | hot positions (ratio) | "
               "hot share of altered MSE | mean ratio without them | mean ratio, all t |", "|---|---|---|---|---|---|---|---|"]
        for r in conc.itertuples():
            hot = ", ".join(f"{t} ({v:.3g}x)" for t, v in r.hot[:5]) or "none"
            if len(r.hot) > 5:
                hot += f", and {len(r.hot) - 5} more ({len(r.hot)} of {pos.t.nunique()})"
            md.append(f"| {r.kernel} | {r.alteration} | {r.model} | {r.median_ratio:.3g} | {hot} | "
                      f"{r.hot_share:.0%} | {r.ratio_without_hot:.3g} | {r.ratio_all:.3g} |")
        md.append("")
    return md




def concentration(pos: pd.DataFrame) -> pd.DataFrame:
    """For each altered target beside its original (same kernel and model): per position t the ratio of the
    two MSEs (median over seeds each), its median over t, the positions above HOT with their ratios, their
    share of the altered target's summed MSE, and the ratio of mean MSEs with and without them."""
    med = pos.groupby(["kernel", "alteration", "model", "t"]).test_mse.median()
    out = []
    for (k, a, m), alt in med.groupby(level=["kernel", "alteration", "model"]):
        if a == "original" or (k, "original", m) not in med.droplevel("t").index:
            continue
        alt = alt.droplevel(["kernel", "alteration", "model"])
        base = med.loc[(k, "original", m)]
        ratio = alt / base
        hot = ratio[ratio > HOT]
        cold = ratio.index.difference(hot.index)
        out.append({"kernel": k, "alteration": a, "model": m, "median_ratio": float(ratio.median()),
                    "hot": [(int(t), float(v)) for t, v in hot.sort_values(ascending=False).items()],
                    "hot_share": float(alt[hot.index].sum() / alt.sum()),
                    "ratio_without_hot": float(alt[cold].mean() / base[cold].mean()) if len(cold) else float("nan"),
                    "ratio_all": float(alt.mean() / base.mean())})
    return pd.DataFrame(out)


@figure_style()
def plot_positions(out: Path, pos: pd.DataFrame, cfg: CompareConfig, refs: dict | None = None) -> Path:
    """Held-out MSE against output position, one panel per (kernel, model): median over seeds, band
    from min to max, original and altered targets together, the exchanged blocks shaded where a panel has a
    permuted target; dashed, where `refs` has the panel, the error of a model that loses only the block of terms
    missing_terms_check found (block_references)."""
    plt = pyplot()
    panels = list(dict.fromkeys(zip(pos.kernel, pos.model)))
    ncols = min(2, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.0 * nrows + 0.6), squeeze=False)
    styles = {"original": "C0", "permuted": "C3", "mixed": "C2"}
    for ax, (k, m) in zip(axes.flat, panels):
        d = pos[(pos.kernel == k) & (pos.model == m)]
        for a, g in d.groupby("alteration"):
            s = g.groupby("t").test_mse
            ax.plot(s.median().index, s.median().values, color=styles.get(a, "k"), label=a)
            ax.fill_between(s.median().index, s.min().values, s.max().values, color=styles.get(a, "k"), alpha=0.2, lw=0)
        if refs and (k, m) in refs:                      # what losing the found block of terms alone would cost
            j1, j2, ref = refs[(k, m)]
            t = np.flatnonzero(ref > 0)
            ax.plot(t, ref[t], "k--", lw=1, label=f"error of a model exact but for {terms_words(j1, j2)} ({m})")
        if (d.alteration == "permuted").any():         # the exchanged blocks mean nothing on a mixing-only panel
            ax.axvspan(-0.5, cfg.swap - 0.5, color="0.85", zorder=0)
            ax.axvspan(cfg.tau - cfg.swap - 0.5, cfg.tau - 0.5, color="0.85", zorder=0,
                       label=f"blocks exchanged by the ordering alteration (first/last {cfg.swap})")
        ax.set(yscale="log", xlabel="output position t", title=f"{m}, {k} kernel", xlim=(-0.5, cfg.tau - 0.5))
    for ax in axes[:, 0]:
        ax.set_ylabel("held-out MSE at t")
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    seen = {}
    for ax in axes.flat[:len(panels)]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    labels, handles = list(seen), list(seen.values())
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.suptitle(f"Held-out MSE by output position (median over {pos.seed.nunique()} seeds; band: min to max)",
                 fontsize=9)
    fig.tight_layout(rect=(0, 0.1 / nrows, 1, 1))
    path = out / "position_mse.png"
    save(fig, path)
    return path
