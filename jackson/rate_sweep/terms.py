"""Eq. (17) term by term: the full model's error beside its attention term and its feed-forward term.

    int sum_t |H_t - H_hat_t| dx  <=  tau^2 C0 ( C1 / m_h^(2 alpha - 1)  +  C2 m_h^(beta+1) / m_FF^beta )
                                                  attention term            feed-forward term

Each term is measured by a jackson-sweep run folder on the same targets, seeds and held-out sequences:
  e_full  the Eq. (5) model, features learned (`--term full`, the default);
  e_attn  the attention term alone: fixed, given features that hold the target's basis (`--features given`);
  e_FF    the feed-forward term alone: the learned model fitted to the target with rho cut to its rank-m_h
          POD truncation, which a rank-m_h attention represents exactly (`--term ff`, jackson/rate_sweep/cell.py).
Eq. (17) is a sum, so its structure predicts e_full ~ e_attn + e_FF.  `additivity` measures the ratio
e_full / (e_attn + e_FF) with a 95% bootstrap interval (seeds, then blocks of held-out sequences, paired: the three
folders share the data seeds, so block b of seed s holds the same sequences in each).  `limiting_term` says which
term is the larger share of e_full at each m_h -- the term that limits the curve there.  Where e_full lies more than
WITHIN x below the attention term alone (`below_attention`), the line says so: that term is a trained model of the
given features, not the infimum over the attention class, so the full model beat it rather than reached it.

Errors here are held-out MSEs (the lab's fits); the L1 error of Theorem 4.1 sits beside them in results.csv.

    python -m jackson.rate_sweep.terms --full F1,F2 --ff G1,G2 --attn A --out reports/jackson/eq17-terms

writes terms.csv (one row per folder pair, alpha, m_FF, m_h), eff.csv (e_FF per class), summary.md and the figures
terms_vs_mh.png and eff_heatmap.png.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ..figures import figure_style, pyplot, save
from ..runfolder import environment, write_atomic, write_report
from .blocks import BLOCKS, blocks_path, read_blocks
from ..config import read_json
from .axes import families_of
from .rate_rule import span_text
from ..hparams import recorded

N_BOOT = 1000             # bootstrap replicates of each ratio
SHARE_LIMIT = 0.5         # a term "limits" the curve at m_h when it is >= this share of e_full and the other < this x it
ADDITIVE = (0.5, 2.0)     # e_full / (e_attn + e_FF) inside this range: the sum explains e_full within a factor 2
WITHIN = 1.5              # the card's bar: e_full within this factor of e_attn + e_FF (either side) at an m_h


class TermsError(ValueError):
    """A folder that cannot serve as the term it was given for (message names it)."""


def describe(folder: Path) -> dict:
    """What a jackson-sweep folder measured: its features, FFN class, term, (phi, psi) and command."""
    folder = Path(folder)
    try:
        cfg = read_json(folder / "config.json")
    except (OSError, ValueError) as e:
        raise TermsError(f"{folder}: no readable config.json of a jackson-sweep run ({e})") from None
    if blocks_path(folder) is None:
        raise TermsError(f"{folder}: no {BLOCKS} (not a finished jackson-sweep run)")
    model = cfg.get("model", {})
    phi, psi = families_of(cfg)
    cmd = (folder / "command.txt").read_text().strip() if (folder / "command.txt").is_file() else ""
    return {"folder": str(folder), "features": model.get("features", "learned"), "term": cfg.get("term", "full"),
            "activation": recorded(model, "activation"), "in_scale": float(recorded(model, "in_scale")),
            "phi": phi, "psi": psi, "tau": cfg.get("tau"), "n_test": cfg.get("n_test"), "command": cmd}


def m_ffs(folder: Path) -> set[int]:
    """The MLP widths m_FF a finished jackson-sweep folder's results.csv holds."""
    try:
        return {int(w) for w in pd.read_csv(Path(folder) / "results.csv", usecols=["m_ff"]).m_ff}
    except (OSError, ValueError) as e:
        raise TermsError(f"{folder}: no readable results.csv with an m_ff column ({e})") from None


def ffn_class(d: dict) -> str:
    """A folder's FFN class as the tables name it: 'gelu', 'relu', 'sin (in-scale 60)'."""
    return d["activation"] + (f" (in-scale {d['in_scale']:g})" if d["activation"] == "sin" else "")


def _blocks(folder: Path) -> pd.DataFrame:
    b = read_blocks(Path(folder))
    if "m_ff" not in b:
        b["m_ff"] = 128
    return b


def _cube(b: pd.DataFrame, alpha: float, rank: str, m_ff: int | None, m_h: int, seeds) -> np.ndarray:
    """(seeds, blocks) block MSEs of one (alpha, rank, m_FF, m_h)."""
    sel = b[(b.alpha == alpha) & (b["rank"] == rank) & (b.m_h == m_h)]
    if m_ff is not None:
        sel = sel[sel.m_ff == m_ff]
    t = sel.pivot_table(index="seed", columns="block", values="mse").loc[list(seeds)]
    return t.to_numpy()


def ratio_interval(full: np.ndarray, attn: np.ndarray, ff: np.ndarray, n_boot: int = N_BOOT, seed: int = 0,
                   combine=np.add):
    """mean(full) / combine(mean(attn), mean(ff)) -- the sum of Eq. (17), or np.maximum for the rival "the larger term
    alone" -- and its 95% bootstrap interval; each array (seeds, blocks), paired."""
    S, B = full.shape
    point = full.mean() / combine(attn.mean(), ff.mean())
    rng = np.random.default_rng(seed)
    boots = np.empty(n_boot)
    for j in range(n_boot):
        si = rng.integers(0, S, S)[:, None]
        bi = rng.integers(0, B, (S, B))
        boots[j] = full[si, bi].mean() / combine(attn[si, bi].mean(), ff[si, bi].mean())
    return float(point), float(np.quantile(boots, 0.025)), float(np.quantile(boots, 0.975))


APART = 1.5     # the sum and the larger term differ by >= this factor only where the smaller term is >= half the larger:
                # elsewhere e_attn + e_FF ~ max(e_attn, e_FF) and no data can tell the two models apart


def sum_or_max(e_attn: float, e_ff: float, ratio_sum: float, ratio_max: float) -> dict:
    """Which model of e_full a row prefers: 'sum' (Eq. 17's structure) or 'max' (the larger term alone), by the smaller
    |log(e_full / model)|; 'cannot tell' where the two models differ by less than APART."""
    apart = (e_attn + e_ff) / max(e_attn, e_ff) >= APART
    if not apart:
        return {"tells_apart": False, "prefers": "cannot tell"}
    return {"tells_apart": True, "prefers": "sum" if abs(np.log(ratio_sum)) < abs(np.log(ratio_max)) else "max"}


def limiting_term(e_attn: float, e_ff: float, e_full: float) -> str:
    """The term that limits the curve at one m_h: 'neither' when both are below SHARE_LIMIT of e_full (then e_full
    holds an error neither term alone has); 'both' when the smaller is at least SHARE_LIMIT of the larger; else the
    larger, 'attention' or 'feed-forward'."""
    big, small = max(e_attn, e_ff), min(e_attn, e_ff)
    if big < SHARE_LIMIT * e_full:
        return "neither"
    if small >= SHARE_LIMIT * big:
        return "both"
    return "feed-forward" if e_ff > e_attn else "attention"


def additivity(full: Path, ff: Path, attn: Path, rank: str = "inf") -> pd.DataFrame:
    """One row per (alpha, m_FF, m_h) that all three folders hold: the three errors (mean over seeds and blocks),
    the rank-m_h oracle, e_full / (e_attn + e_FF) with its interval, and the limiting term."""
    d_full, d_ff, d_attn = describe(full), describe(ff), describe(attn)
    for d, want, opt in ((d_full, ("learned", "full"), "--full"), (d_ff, ("learned", "ff"), "--ff"),
                         (d_attn, ("given", "full"), "--attn")):
        if (d["features"], d["term"]) != want:
            raise TermsError(f"{opt}: {d['folder']} is a features {d['features']}, term {d['term']} run; "
                             f"{opt} needs features {want[0]}, term {want[1]}")
    if (d_full["phi"], d_full["psi"]) != (d_ff["phi"], d_ff["psi"]) or (d_full["phi"], d_full["psi"]) != (d_attn["phi"], d_attn["psi"]):
        raise TermsError(f"--full, --ff, --attn: the folders hold other targets (phi, psi: {d_full['phi']}/{d_full['psi']}, "
                         f"{d_ff['phi']}/{d_ff['psi']}, {d_attn['phi']}/{d_attn['psi']})")
    if d_full["activation"] != d_ff["activation"] or d_full["in_scale"] != d_ff["in_scale"]:
        raise TermsError(f"--full, --ff: other FFN classes ({ffn_class(d_full)} and {ffn_class(d_ff)})")
    full_blocks = _blocks(full)
    bf, bo = full_blocks[full_blocks.kind == "test"], full_blocks[full_blocks.kind == "oracle"]
    bff, ba = (b[b.kind == "test"] for b in (_blocks(ff), _blocks(attn)))
    rows = []
    for (alpha, m_ff), g in bf[bf["rank"] == rank].groupby(["alpha", "m_ff"]):
        gff = bff[(bff.alpha == alpha) & (bff["rank"] == rank) & (bff.m_ff == m_ff)]
        ga = ba[(ba.alpha == alpha) & (ba["rank"] == rank)]
        for m in sorted(set(g.m_h) & set(gff.m_h) & set(ga.m_h)):
            seeds = sorted(set(g[g.m_h == m].seed) & set(gff[gff.m_h == m].seed) & set(ga[ga.m_h == m].seed))
            if not seeds:
                continue
            f = _cube(bf, alpha, rank, m_ff, m, seeds)
            e = _cube(bff, alpha, rank, m_ff, m, seeds)
            a = _cube(ba, alpha, rank, None, m, seeds)
            o = _cube(bo, alpha, rank, m_ff, m, seeds)
            r, lo, hi = ratio_interval(f, a, e)
            rm, rm_lo, rm_hi = ratio_interval(f, a, e, combine=np.maximum)
            med = float(np.median(f.mean(axis=1))) / (float(np.median(a.mean(axis=1))) + float(np.median(e.mean(axis=1))))
            rows.append({"ratio_of_medians": med, "ffn": ffn_class(d_full), "alpha": float(alpha), "rank": rank, "m_ff": int(m_ff), "m_h": int(m),
                         "n_seeds": len(seeds), "e_full": f.mean(), "e_attn": a.mean(), "e_ff": e.mean(),
                         "e_attn_plus_ff": a.mean() + e.mean(), "oracle": o.mean(),
                         "ratio": r, "ratio_lo": lo, "ratio_hi": hi,
                         "e_max": max(a.mean(), e.mean()), "ratio_max": rm, "ratio_max_lo": rm_lo, "ratio_max_hi": rm_hi,
                         **sum_or_max(a.mean(), e.mean(), r, rm),
                         "e_full_median_seed": float(np.median(f.mean(axis=1))),
                         "e_attn_median_seed": float(np.median(a.mean(axis=1))),
                         "e_ff_median_seed": float(np.median(e.mean(axis=1))),
                         "limiting": limiting_term(float(np.median(a.mean(axis=1))), float(np.median(e.mean(axis=1))),
                                                   float(np.median(f.mean(axis=1)))),
                         "full": d_full["folder"], "ff": d_ff["folder"], "attn": d_attn["folder"]})
    if not rows:
        raise TermsError(f"--full, --ff, --attn: no (alpha, rank {rank}, m_FF, m_h, seed) that all three folders hold")
    return pd.DataFrame(rows)


def limiting_runs(rows: list[dict]) -> list[tuple[str, list[int]]]:
    """Consecutive m_h with the same limiting term: [(term, [m_h, ...]), ...]."""
    out = []
    for r in rows:
        if out and out[-1][0] == r["limiting"]:
            out[-1][1].append(r["m_h"])
        else:
            out.append((r["limiting"], [r["m_h"]]))
    return out


def below_attention(rows: list[dict]) -> dict | None:
    """The m_h where the full model lies more than WITHIN x below the attention term alone (e_full < e_attn / WITHIN),
    or None.  The attention term alone is a trained model of the given features, not the infimum over the attention
    class, so a full model under it shows that reference is no floor there: the rule still names the larger term
    (by its shares of e_full), and the line says the term was beaten rather than reached."""
    at = [r for r in rows if r.get("e_attn") is not None and r["e_attn"] > 0 and r["e_full"] < r["e_attn"] / WITHIN]
    if not at:
        return None
    q = [r["e_full"] / r["e_attn"] for r in at]
    ms = [r["m_h"] for r in at]
    return {"m_h": ms, "ratio_range": [min(q), max(q)],
            "text": f"the full model lies below the attention term alone at m_h {span_text(ms)} (e_full / e_attn "
                    + (f"{min(q):.2f}" if len(q) == 1 else f"{min(q):.2f}-{max(q):.2f}")
                    + f", beyond {WITHIN:g}x): that measured term is no floor there"}


LIMIT_NAME = {"feed-forward": "e_FF", "attention": "the attention term", "both": "both terms", "neither": "neither term"}


def explain(curve: list[dict], e_ff: dict | None, ff_folder: str, e_attn: dict | None = None, attn_folder: str = "",
            attn_note: str = "", budget=()) -> dict:
    """Eq. (17) term by term at every m_h of a learned-features curve: e_full beside the attention term alone (e_attn:
    a --features given run of the same target) and the feed-forward term alone (e_FF: a --term ff run), their sum,
    e_full / (e_attn + e_FF), and the term that limits the curve there (`limiting_term`).  Where e_attn is not measured
    the s != t rank-m_h oracle stands in for it, and the rows say so (softmax ignores any function of x_t alone, so the
    s = t part of the full oracle's error is no error of a rank-m_h attention).  Medians over seeds."""
    e_ff, e_attn = e_ff or {}, e_attn or {}
    rows = []
    for r in curve:
        m = int(r["m_h"])
        if m not in e_ff and m not in e_attn:
            continue
        full = float(r.get("test_median", r["test_mse"]))
        stand_in = float(r.get("oracle_self_exact_mse", r["oracle_mse"]))
        attn = float(e_attn[m]) if m in e_attn else None
        ff = float(e_ff[m]) if m in e_ff else None
        row = {"m_h": m, "e_full": full, "e_attn": attn, "e_ff": ff, "oracle": stand_in,
               "oracle_rank_mh": float(r["oracle_mse"])}
        if attn is not None and ff is not None:
            row.update(sum=attn + ff, ratio=full / (attn + ff), limiting=limiting_term(attn, ff, full))
        elif ff is not None:
            row.update(limiting=limiting_term(stand_in, ff, full), attn_stand_in=True)
        else:
            row.update(limiting="attention" if attn >= SHARE_LIMIT * full else "not measured")
        rows.append(row)
    sources = "; ".join(x for x in (f"e_attn from {attn_folder}" + (f", {attn_note}" if attn_note else "")
                                    if attn_folder and e_attn else "",
                                    f"e_FF from {ff_folder}" if ff_folder and e_ff else "") if x)
    if not rows:
        return {"folder": ff_folder, "attn_folder": attn_folder, "rows": [],
                "line": "which term limits it: the reference runs hold none of its m_h"}
    parts, open_ = [], []
    for what, ms in limiting_runs(rows):
        at = [r for r in rows if r["m_h"] in ms]
        top = at[-1]
        nums = ", ".join(f"{k} {top[k]:.2g}" for k in ("e_full", "e_attn", "e_ff") if top.get(k) is not None)
        span = f"m_h {ms[0]}" + (f"..{ms[-1]}" if len(ms) > 1 else "")
        if what == "not measured":    # e_attn alone is under SHARE_LIMIT of e_full and the other term has no run
            open_.append(f"no term named at {span}: the attention term alone is below {SHARE_LIMIT:g}x e_full and "
                         f"the other term is not measured ({nums} at m_h {top['m_h']})")
        else:
            parts.append(f"{LIMIT_NAME.get(what, what)} at {span} ({nums} at m_h {top['m_h']})")
    under = below_attention(rows)
    if under:
        open_.append(under["text"])
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    off = [r["m_h"] for r in rows if "ratio" in r and not 1 / WITHIN <= r["ratio"] <= WITHIN]
    within = (f"e_full / (e_attn + e_FF) {min(ratios):.2f}-{max(ratios):.2f} over {len(ratios)} m_h, within {WITHIN:g}x at "
              f"{len(ratios) - len(off)}" + (f" (not at m_h {', '.join(map(str, off))})" if off else "") + "; "
              if ratios else "")
    missing = []
    if not e_attn:
        missing.append("the attention term alone is not measured for this target (the s != t rank-m_h oracle stands in: "
                       "jackson-sweep --features given measures it)")
    if not e_ff:
        missing.append("the feed-forward term is not measured for this target (jackson-sweep --term ff measures it)")
    bounded = sorted({int(m) for m in budget} & {r["m_h"] for r in rows if "ratio" in r})
    if bounded:      # the doubling check's budget members: e_full only an upper bound, and so the ratio
        open_.append(f"at m_h {span_text(bounded)} e_full holds a budget member (twice the steps lowered it by more "
                     f"than the doubling check's tolerance): there e_full / (e_attn + e_FF) is an upper bound")
    line = ("Eq. (17) terms: " + within + "; ".join((["limited by " + "; by ".join(parts)] if parts else []) + open_)
            + (f" ({sources})" if sources else "") + ("; " + "; ".join(missing) if missing else ""))
    top = [r for r in rows if r["m_h"] >= max(x["m_h"] for x in rows) / 2] or rows[-1:]
    return {"folder": ff_folder, "attn_folder": attn_folder, "attn_note": attn_note, "budget": bounded, "rows": rows, "limiting": top[-1]["limiting"],
            "below_attention": under, "m_h_from": top[0]["m_h"], "ratio_range": [min(ratios), max(ratios)] if ratios else None,
            "within": {"factor": WITHIN, "n": len(ratios), "outside_m_h": off} if ratios else None,
            "missing": missing, "line": line}


def eff_table(folders) -> pd.DataFrame:
    """e_FF per FFN class, alpha, m_FF and m_h (term ff folders): mean and median over seeds, the seeds' range,
    and the full target's rank-m_h oracle beside it."""
    out = []
    for folder in folders:
        d = describe(folder)
        if d["term"] != "ff":
            raise TermsError(f"--ff: {folder} is a term {d['term']} run, not --term ff")
        res = pd.read_csv(Path(folder) / "results.csv", dtype={"rank": str})
        for (alpha, rank, m_ff, m_h), g in res.groupby(["alpha", "rank", "m_ff", "m_h"]):
            out.append({"ffn": ffn_class(d), "alpha": float(alpha), "rank": rank, "m_ff": int(m_ff), "m_h": int(m_h),
                        "n_seeds": int(g.seed.nunique()), "e_ff": g.test_mse.mean(), "e_ff_median": g.test_mse.median(),
                        "e_ff_min": g.test_mse.min(), "e_ff_max": g.test_mse.max(), "oracle": g.oracle_mse.mean(),
                        "folder": str(folder)})
    return pd.DataFrame(out)


@figure_style()
def plot_terms(t: pd.DataFrame, path: Path) -> list[Path]:
    """e_full, e_attn, e_FF and their sum against m_h: a panel per (alpha, FFN class, m_FF)."""
    plt = pyplot()
    keys = list(t.groupby(["alpha", "ffn", "m_ff"]).groups)
    cols = min(3, len(keys))
    rows = -(-len(keys) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.0 * cols, 3.3 * rows), squeeze=False, sharey=True)
    for ax in list(axes.flat)[len(keys):]:
        ax.set_visible(False)
    for ax, (alpha, ffn, m_ff) in zip(axes.flat, keys):
        g = t[(t.alpha == alpha) & (t.ffn == ffn) & (t.m_ff == m_ff)].sort_values("m_h")
        ax.loglog(g.m_h, g.e_full_median_seed, "o-", color="k", label="$e_{full}$ (learned features)")
        ax.loglog(g.m_h, g.e_attn_median_seed, "s--", color="C0", label="$e_{attn}$ (given features)")
        ax.loglog(g.m_h, g.e_ff_median_seed, "^--", color="C3", label="$e_{FF}$ (rank-$m_h$ target)")
        ax.loglog(g.m_h, g.e_attn_median_seed + g.e_ff_median_seed, ":", color="C2", lw=2, label="$e_{attn} + e_{FF}$")
        ax.set_title(f"α = {alpha:g}, {ffn}, $m_{{FF}}$ = {m_ff}", fontsize=9)
        ax.set_xlabel("$m_h$")
        ax.set_xticks(sorted(g.m_h.unique()))
        ax.set_xticklabels([str(m) for m in sorted(g.m_h.unique())])
        ax.minorticks_off()
    for row in axes:
        row[0].set_ylabel("held-out MSE (median over seeds)")
    h, lab = axes[0][0].get_legend_handles_labels()
    fig.legend(h, lab, loc="lower center", ncol=4, frameon=False, fontsize=8)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return save(fig, path)


@figure_style()
def plot_eff_heatmap(e: pd.DataFrame, path: Path) -> list[Path]:
    """e_FF (median over seeds) / oracle over (m_FF, m_h), log colour scale: a panel per (alpha, FFN class); below 1 the
    FFN term is smaller than the attention term's reference."""
    plt = pyplot()
    keys = list(e.groupby(["alpha", "ffn"]).groups)
    cols = min(3, len(keys))
    rows = -(-len(keys) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.9 * cols + 1.2, 2.7 * rows + 0.5), squeeze=False,
                             layout="constrained")
    for ax in list(axes.flat)[len(keys):]:
        ax.set_visible(False)
    im = None
    for ax, (alpha, ffn) in zip(axes.flat, keys):
        g = e[(e.alpha == alpha) & (e.ffn == ffn)]
        p = np.log10(g.pivot_table(index="m_ff", columns="m_h", values="e_ff_median")
                     / g.pivot_table(index="m_ff", columns="m_h", values="oracle"))
        im = ax.imshow(p.to_numpy(), cmap="RdBu_r", vmin=-2, vmax=2, aspect="auto", origin="lower")
        for (i, j), v in np.ndenumerate(p.to_numpy()):
            if np.isfinite(v):
                ax.text(j, i, f"{10 ** v:.2g}", ha="center", va="center", fontsize=7,
                        color="white" if abs(v) > 1.2 else "black")
        ax.set_xticks(range(p.shape[1]), [str(c) for c in p.columns])
        ax.set_yticks(range(p.shape[0]), [str(r) for r in p.index])
        ax.set_xlabel("$m_h$")
        ax.set_ylabel("$m_{FF}$")
        ax.set_title(f"α = {alpha:g}, {ffn}", fontsize=9)
    from matplotlib.ticker import FuncFormatter
    fig.colorbar(im, ax=list(axes.flat), label="$e_{FF}$ (median over seeds) / rank-$m_h$ oracle", shrink=0.9,
                 ticks=[-2, -1, 0, 1, 2], format=FuncFormatter(lambda v, _: f"{10.0 ** v:g}"))
    return save(fig, path)


def _md(t: pd.DataFrame, e: pd.DataFrame, command: str) -> str:
    L = ["# Eq. (17) term by term", "", f"Command: `{command}`", "",
         "Data: synthetic POD targets (Eq. 8), inputs U[0,1], held-out MSE, mean over seeds and held-out sequences. "
         "e_full: the Eq. (5) model with learned features; e_attn: the attention term alone (given features); e_FF: the "
         "feed-forward term alone (each member fits the rank-m_h truncation of the target, which a rank-m_h attention "
         "represents exactly); oracle: the target with rho cut to its rank-m_h truncation. Ratio: e_full / (e_attn + e_FF), "
         "95% bootstrap interval over seeds and blocks of the same held-out sequences. Rules (jackson/rate_sweep/terms.py): "
         f"a term *limits* the curve at m_h (medians over seeds) when it is >= {SHARE_LIMIT:g} of e_full and the other is < {SHARE_LIMIT:g} of "
         f"it (*both* when the smaller is >= {SHARE_LIMIT:g} of the larger, *neither* when both are < {SHARE_LIMIT:g} of "
         f"e_full); the sum "
         f"*explains* e_full when the ratio lies in [{ADDITIVE[0]:g}, {ADDITIVE[1]:g}].", "",
         "## e_full against e_attn + e_FF", "",
         "Means over seeds feel a seed that failed to optimise (stuck far above the others); the last columns give the "
         "medians over seeds of the three errors and their ratio, which do not.", "",
         "| FFN class | alpha | m_FF | m_h | seeds | e_full | e_attn | e_FF | e_attn + e_FF | ratio [95% CI] | limited by | "
         "medians over seeds: e_full, e_attn, e_FF | ratio of medians |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|"]
    for _, r in t.iterrows():
        L.append(f"| {r.ffn} | {r.alpha:g} | {r.m_ff} | {r.m_h} | {r.n_seeds} | {r.e_full:.3g} | {r.e_attn:.3g} | "
                 f"{r.e_ff:.3g} | {r.e_attn_plus_ff:.3g} | {r.ratio:.2f} [{r.ratio_lo:.2f}, {r.ratio_hi:.2f}] | {r.limiting} | "
                 f"{r.e_full_median_seed:.3g}, {r.e_attn_median_seed:.3g}, {r.e_ff_median_seed:.3g} | {r.ratio_of_medians:.2f} |")
    inside = t[(t.ratio >= ADDITIVE[0]) & (t.ratio <= ADDITIVE[1])]
    inside_med = t[(t.ratio_of_medians >= ADDITIVE[0]) & (t.ratio_of_medians <= ADDITIVE[1])]
    L += ["", f"The sum explains e_full (ratio in [{ADDITIVE[0]:g}, {ADDITIVE[1]:g}]) at {len(inside)} of {len(t)} rows; "
          f"ratios range {t.ratio.min():.2f}-{t.ratio.max():.2f}. By the medians over seeds: {len(inside_med)} of {len(t)}, "
          f"range {t.ratio_of_medians.min():.2f}-{t.ratio_of_medians.max():.2f}.", ""]
    apart = t[t.tells_apart] if "tells_apart" in t else t.iloc[0:0]
    if "ratio_max" in t:
        L += ["## The sum or the larger term?", "",
              f"Rival model: e_full ~ max(e_attn, e_FF). The two differ by >= {APART:g}x only where the smaller term is "
              f">= half the larger; a row tells them apart only there, and prefers the model with the smaller "
              f"|log(e_full / model)|. {len(apart)} of {len(t)} rows tell them apart: "
              f"{int((apart.prefers == 'sum').sum())} prefer the sum, {int((apart.prefers == 'max').sum())} the max; "
              f"the other {len(t) - len(apart)} cannot tell (one term under half the other).", "",
              "| FFN class | alpha | m_FF | m_h | e_attn | e_FF | e_full / sum [95% CI] | e_full / max [95% CI] | prefers |",
              "|---|---:|---:|---:|---:|---:|---|---|---|"]
        for _, r in apart.iterrows():
            L.append(f"| {r.ffn} | {r.alpha:g} | {r.m_ff} | {r.m_h} | {r.e_attn:.3g} | {r.e_ff:.3g} | {r.ratio:.2f} "
                     f"[{r.ratio_lo:.2f}, {r.ratio_hi:.2f}] | {r.ratio_max:.2f} [{r.ratio_max_lo:.2f}, {r.ratio_max_hi:.2f}] | "
                     f"{r.prefers} |")
        L.append("")
    if len(e):
        L += ["## e_FF by FFN class", "", "| FFN class | alpha | m_FF | m_h | seeds | e_FF mean | [min, max] over seeds | "
              "rank-m_h oracle | e_FF / oracle |", "|---|---:|---:|---:|---:|---:|---|---:|---:|"]
        for _, r in e.sort_values(["alpha", "ffn", "m_ff", "m_h"]).iterrows():
            L.append(f"| {r.ffn} | {r.alpha:g} | {r.m_ff} | {r.m_h} | {r.n_seeds} | {r.e_ff:.3g} | [{r.e_ff_min:.2g}, "
                     f"{r.e_ff_max:.2g}] | {r.oracle:.3g} | {r.e_ff / r.oracle:.3g} |")
        L.append("")
    return "\n".join(L)


def _sum_or_max_text(t: pd.DataFrame) -> str:
    if "tells_apart" not in t:
        return ""
    a = t[t.tells_apart]
    return (f"Against the rival e_full ~ max(e_attn, e_FF): {len(a)} of {len(t)} points tell the two apart (the smaller "
            f"term >= half the larger), {int((a.prefers == 'sum').sum())} prefer the sum and "
            f"{int((a.prefers == 'max').sum())} the max; the rest cannot tell.")


def report_entry(t: pd.DataFrame, e: pd.DataFrame, command: str, out: Path) -> dict:
    """report.json: this folder's entry in the lab report."""
    inside = int(((t.ratio >= ADDITIVE[0]) & (t.ratio <= ADDITIVE[1])).sum())
    lim = t.groupby("ffn").limiting.agg(lambda s: ", ".join(f"{k} {v}" for k, v in s.value_counts().items()))
    data = ("synthetic POD targets of Eq. (8), inputs U[0,1]; three jackson-sweep folders per FFN class on the same "
            "targets, seeds and held-out sequences: " + "; ".join(sorted({f"{r.ffn}: {r.full}, {r.ff}, {r.attn}"
                                                                        for r in t.itertuples()})))
    seeds = sorted({int(n) for n in t.n_seeds})
    return {"section": "jackson", "title": f"Eq. (17) term by term: e_full against e_attn + e_FF ({out.name})",
            "data": data, "command": command, "seeds": f"{seeds[0]} per point" if len(seeds) == 1 else str(seeds),
            "paper": [],
            "text": (f"e_full / (e_attn + e_FF) lies in [{ADDITIVE[0]:g}, {ADDITIVE[1]:g}] at {inside} of {len(t)} "
                     f"(alpha, FFN class, m_FF, m_h) points (range {t.ratio.min():.2f}-{t.ratio.max():.2f}). The term "
                     "that limits the curve, counted over m_h: " + "; ".join(f"{k}: {v}" for k, v in lim.items()) + ". "
                     + _sum_or_max_text(t)),
            "figures": [{"file": "terms_vs_mh.png", "caption": "Held-out MSE against m_h: the full model (learned "
                         "features), the attention term alone (given features), the feed-forward term alone (each m_h "
                         "fitted to its rank-m_h truncation) and their sum; a panel per alpha, FFN class and m_FF."},
                        {"file": "eff_heatmap.png", "caption": "The feed-forward term e_FF over m_FF and m_h, as a "
                         "multiple of the rank-m_h oracle (the attention term's reference): below 1 the FFN is not "
                         "what limits the curve; a panel per alpha and FFN class."}]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m jackson.rate_sweep.terms",
                                description="Eq. (17) term by term: e_full beside e_attn + e_FF, from jackson-sweep folders.")
    p.add_argument("--full", required=True, help="comma list of learned-features folders (--term full)")
    p.add_argument("--ff", required=True, help="comma list of --term ff folders, each paired with the --full folders "
                   "of its FFN class whose m_FF it shares")
    p.add_argument("--attn", required=True, help="the --features given folder of the same targets")
    p.add_argument("--out", required=True, help="output folder (made; files of earlier runs of this command replaced)")
    a = p.parse_args(argv)
    try:
        ffs = [Path(f) for f in a.ff.split(",") if f]
        classes = {f: (ffn_class(describe(f)), m_ffs(f)) for f in ffs}
        tables = []
        for full in (Path(f) for f in a.full.split(",") if f):
            c, widths = ffn_class(describe(full)), m_ffs(full)
            pairs = [f for f, (cf, wf) in classes.items() if cf == c and wf & widths]
            if not pairs:
                have = "; ".join(f"{cf} at m_FF {', '.join(map(str, sorted(wf)))}" for cf, wf in classes.values())
                raise TermsError(f"--ff: no folder of FFN class {c} at m_FF {', '.join(map(str, sorted(widths)))} "
                                 f"(for --full {full}); have {have}")
            tables += [additivity(full, f, Path(a.attn)) for f in pairs]
        t = pd.concat(tables, ignore_index=True)
        e = eff_table(ffs)
    except TermsError as err:
        sys.stderr.write(f"{p.prog}: error: {err}\n")
        return 2
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    command = "python -m jackson.rate_sweep.terms " + " ".join(argv if argv is not None else sys.argv[1:])
    for name, df in (("terms.csv", t), ("eff.csv", e)):
        write_atomic(out / name, df.to_csv(index=False, float_format="%.6e"))
    write_atomic(out / "summary.md", _md(t, e, command))
    write_atomic(out / "command.txt", command + "\n")
    write_atomic(out / "environment.json", json.dumps(environment("python -m jackson.rate_sweep.terms", command, None),
                                                      indent=1) + "\n")
    plot_terms(t, out / "terms_vs_mh.png")
    plot_eff_heatmap(e, out / "eff_heatmap.png")
    inside = int(((t.ratio >= ADDITIVE[0]) & (t.ratio <= ADDITIVE[1])).sum())
    write_report(out, report_entry(t, e, command, out))
    print(f"e_full / (e_attn + e_FF): {t.ratio.min():.2f}-{t.ratio.max():.2f} over {len(t)} rows; in "
          f"[{ADDITIVE[0]:g}, {ADDITIVE[1]:g}] at {inside}. " + _sum_or_max_text(t))
    print(f"wrote {out}/summary.md, terms.csv, eff.csv, terms_vs_mh.png, eff_heatmap.png")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
