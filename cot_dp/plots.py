"""cot-dp sweep's figures: accuracy heatmaps (cells at or below the baseline hatched), the locality figure, the
sparse mask, and their captions."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from jackson.attention import sparse_mask
from jackson.hparams import block_size
from jackson.figures import figure_style, pyplot, save
from .tasks import TaskConfig
from .tasks import edit_distance as ed
from .grid import SweepConfig


# ---- figures -----------------------------------------------------------------------------------

def at_or_below_baseline(acc: pd.DataFrame, baseline: pd.Series) -> pd.DataFrame:
    """Which cells of an accuracy table (rows: size, columns: D) score no better than a constant answer:
    accuracy <= that size's baseline (`answer_baseline`).  Both are shares of the same n_eval answers, so
    equal counts give equal numbers; the 1e-9 only absorbs the rounding of a mean over seeds."""
    return acc.le(baseline.reindex(acc.index) + 1e-9, axis=0)


BASELINE_MARK = "hatched: accuracy at or below a constant answer's (the training set's most frequent answer)"


@figure_style()
def plot_heatmaps(out: Path, res: pd.DataFrame, cfg: SweepConfig) -> list[Path]:
    """Fig. 1 as measured: per task, accuracy (mean over seeds) over D (x) and size (y), one panel per
    model.  With results.csv's baseline column, each size's constant-answer accuracy is written under it and
    the cells at or below it are hatched (`at_or_below_baseline`): the accuracy a model must beat to have
    learnt anything."""
    plt = pyplot()
    from matplotlib.patches import Patch, Rectangle
    paths = []
    for task in cfg.task_list():
        r = res[res.task == task]
        models = [m for m in cfg.model_list() if m in set(r.model)]
        base = r.groupby("size").baseline.first() if "baseline" in r else None
        fig, axes = plt.subplots(1, len(models), figsize=(3.4 * len(models), 3.7), squeeze=False)   # a row <= 3:1
        said = None
        for ax, m in zip(axes[0], models):
            a = r[r.model == m].groupby(["size", "d_model"]).accuracy.mean().unstack("d_model").sort_index(ascending=False)
            im = ax.imshow(a.values, vmin=0, vmax=1, cmap="viridis", aspect="auto")
            low = at_or_below_baseline(a, base).values if base is not None else np.zeros(a.shape, bool)
            for (i, j), v in np.ndenumerate(a.values):
                if low[i, j]:
                    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", lw=0, edgecolor="0.75"))
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8, color="w" if v < 0.6 else "k",
                        bbox=dict(boxstyle="round,pad=0.15", fc=im.cmap(im.norm(v)), lw=0) if low[i, j] else None)
            first = ax is axes[0][0]
            say = base is not None and list(a.index) != said   # the bases once for the rows the panels share
            said = list(a.index) if say else said
            sizes = [f"{s}\n(base {base[s]:.2f})" if say else str(s) for s in a.index]
            ax.set(xticks=range(a.shape[1]), xticklabels=a.columns, yticks=range(a.shape[0]), yticklabels=sizes,
                   xlabel="embedding dimension D", ylabel="problem size" if first else "", title=m)
        fig.colorbar(im, ax=axes[0].tolist(), shrink=0.8, label="accuracy (mean over seeds)")
        if base is not None:
            fig.legend(handles=[Patch(facecolor="none", edgecolor="0.45", hatch="///", label=BASELINE_MARK
                                      + ", written under each size as base")],
                       loc="upper center", bbox_to_anchor=(0.5, -0.02), fontsize=7, frameon=False)
        fig.suptitle(f"{task}: answer accuracy ({cfg.preset_label})", fontsize=9, y=1.04, wrap=True)
        path = out / f"accuracy_{task}.png"
        save(fig, path, bbox_inches="tight")
        paths.append(path)
    return paths


LOSS_MARK = 0.01     # the held-out loss per CoT token the locality figure times each cell to


def steps_to_loss(folder: Path, threshold: float = LOSS_MARK) -> pd.DataFrame:
    """Per finished cell of a sweep folder (cells/<key>/rows.csv and curve.csv): the first evaluated step whose
    held-out loss per CoT token is below `threshold` (NaN: never).  Columns: task, size, model, d_model, seed,
    step.  Empty when the folder keeps no curves."""
    out = []
    for rows in sorted((Path(folder) / "cells").glob("*/rows.csv")):
        curve = rows.parent / "curve.csv"
        if not curve.is_file():
            continue
        c = pd.read_csv(curve)
        below = c.step[c.test_loss < threshold]
        for r in pd.read_csv(rows).itertuples():
            out.append({"task": r.task, "size": r.size, "model": r.model, "d_model": r.d_model, "seed": r.seed,
                        "step": float(below.min()) if len(below) else math.nan})
    return pd.DataFrame(out, columns=["task", "size", "model", "d_model", "seed", "step"])


@figure_style()
def plot_locality(out: Path, res: pd.DataFrame, cfg: SweepConfig) -> Path | None:
    """ED vs ED_Local (Fig. 2's question): answer accuracy, exact CoTs and held-out loss.  Several sizes: against
    the size, a colour per model, solid ED, dashed ED_Local; grey: the constant-answer baseline.  One size: a
    column per model, ED and ED_Local side by side, each seed a point and the mean a bar, and a fourth panel with
    the step at which each cell's held-out loss first fell below LOSS_MARK (`steps_to_loss`; read from the
    folder's cells, so it shows where the accuracy cannot tell the tasks apart), a row of these per D.  Several
    sizes with several D: the largest D's cells are drawn (the title says which)."""
    if not {"ed", "ed_local"} <= set(cfg.task_list()):
        return None
    plt = pyplot()
    r = res[res.task.isin(["ed", "ed_local"])]
    dims = sorted(int(d) for d in r.d_model.unique())
    D = dims[-1]
    if r["size"].nunique() == 1:
        fig = _locality_one_size(plt, r, steps_to_loss(out), cfg, dims, int(r["size"].iloc[0]))
        Ls = {t: ", ".join(str(int(x)) for x in r[r.task == t].L.unique()) for t in ("ed", "ed_local")}
        title = (f"ED vs ED_Local at D = {', '.join(map(str, dims))} ({cfg.preset_label};\n"
                 f"longest L: ED {Ls['ed']}, ED_Local {Ls['ed_local']})")
    else:
        fig, title = _locality_sizes(plt, r[r.d_model == D], cfg, D)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path = out / "locality_ed_vs_ed_local.png"
    save(fig, path)
    return path


def _locality_sizes(plt, r: pd.DataFrame, cfg: SweepConfig, D: int):
    """plot_locality's several-size layout (see there): (figure, title); r holds the ED and ED_Local cells at D."""
    g = r.groupby(["task", "model", "size"], as_index=False).agg(
        accuracy=("accuracy", "mean"), cot_exact=("cot_exact", "mean"), test_loss=("test_loss", "mean"), L=("L", "first"))
    sizes = sorted(g["size"].unique())
    Ls = {t: ", ".join(str(int(x)) for x in g[g.task == t].groupby("size").L.first()) for t in ("ed", "ed_local")}
    title = f"ED vs ED_Local at D = {D} ({cfg.preset_label};\nlongest L by size: ED {Ls['ed']}, ED_Local {Ls['ed_local']})"
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.9))    # a row <= 3:1
    colours = dict(zip(cfg.model_list(), ["C0", "C1", "C2", "C3"]))
    for (task, m), grp in g.groupby(["task", "model"]):
        ls = "-" if task == "ed" else "--"
        for ax, col in zip(axes, ["accuracy", "cot_exact", "test_loss"]):
            ax.plot(grp["size"], grp[col], ls, marker="o", color=colours.get(m, "k"), label=f"{task} {m}")
    if "baseline" in r:
        for task, mk in (("ed", "x"), ("ed_local", "+")):
            b = r[r.task == task].groupby("size").baseline.first()
            axes[0].plot(b.index, b.values, mk, color="grey", ms=9, label=f"{task}: constant answer")
    for ax, yl in zip(axes, ["answer accuracy", "exact CoT", "held-out loss per CoT token"]):
        ax.set(xlabel="size (length of the first string)", ylabel=yl, xticks=sizes)
    axes[0].set_ylim(0, 1.02)
    axes[1].set_ylim(0, 1.02)
    axes[2].set_yscale("log")
    axes[0].legend(fontsize=6, ncol=1)
    return fig, title


LOCALITY_COLOURS = {"ed": "C0", "ed_local": "C1"}


def _locality_one_size(plt, r: pd.DataFrame, steps: pd.DataFrame, cfg: SweepConfig, dims: list[int], size: int):
    """plot_locality's one-size layout (see there), a row per D in `dims`: r holds the ED and ED_Local cells,
    steps `steps_to_loss` of the folder."""
    models = [m for m in cfg.model_list() if m in set(r.model)]
    steps = steps[steps["size"] == size]          # steps_to_loss keeps its columns when empty
    panels = [("accuracy", "answer accuracy"), ("cot_exact", "exact CoT"), ("test_loss", "held-out loss per CoT token")]
    if len(steps):
        panels.append(("step", f"step where held-out loss < {LOSS_MARK:g}"))
    fig, grid = plt.subplots(len(dims), len(panels), figsize=(3.3 * len(panels), 4.6 * len(dims)), squeeze=False)
    for D, axes in zip(dims, grid):
        _locality_row(axes, panels, r[r.d_model == D], steps[steps.d_model == D],
                      models, int(cfg.train.steps))
        for ax in axes:
            ax.set_xlabel(f"model (size {size}, D = {D})")
    return fig


def _locality_row(axes, panels, r: pd.DataFrame, steps: pd.DataFrame, models: list[str], budget: int) -> None:
    """One row of `_locality_one_size`: the cells of one D."""
    for ax, (col, label) in zip(axes, panels):
        src = steps if col == "step" else r
        for task in ("ed", "ed_local"):
            dx = -0.17 if task == "ed" else 0.17
            for i, m in enumerate(models):
                v = src[(src.task == task) & (src.model == m)][col].to_numpy(dtype=float)
                if not len(v):
                    continue
                x = i + dx
                seen = v[np.isfinite(v)]
                ax.scatter(np.full(len(seen), x), seen, s=22, facecolors="none", edgecolors=LOCALITY_COLOURS[task],
                           zorder=3, label=f"{task} (each seed; bar: mean)" if i == 0 else None)
                if len(seen) == len(v):
                    ax.hlines(v.mean(), x - 0.12, x + 0.12, color=LOCALITY_COLOURS[task], lw=2.2, zorder=2)
                if len(seen) < len(v):       # seeds that never got there: named at the top
                    n = len(v) - len(seen)
                    ax.annotate(f"never\n({n} of {len(v)} seeds)", (x, 0.99), xycoords=("data", "axes fraction"),
                                ha="center", va="top", fontsize=6.5, color=LOCALITY_COLOURS[task])
        ax.set(xticks=range(len(models)), xticklabels=models, xlim=(-0.6, len(models) - 0.4), ylabel=label)
        if col in ("accuracy", "cot_exact"):
            ax.set_ylim(0, 1.04)
        if col == "test_loss":
            ax.set_yscale("log")
        if col == "step":
            ax.set_ylim(0, budget)
    if "baseline" in r:
        for task, ls in (("ed", "--"), ("ed_local", ":")):
            b = r[r.task == task].baseline
            if len(b):
                axes[0].axhline(float(b.iloc[0]), color="grey", ls=ls, lw=1, label=f"{task}: constant answer")
    axes[0].legend(fontsize=6, loc="lower left")


def sparse_misses(task: TaskConfig, L: int, c: int = 1, k: int = 1, n_pairs: int = 200,
                  seed: int = 0) -> dict[str, tuple[int, float]]:
    """ED / ED_Local: for each read of the DP recurrence (a_i, b_j, dp[i][j-1], dp[i-1][j-1], dp[i-1][j]), how far
    back it lies from the position that predicts dp[i][j] (at most, in tokens) and the share of table entries
    whose read one layer of the sparse model cannot attend to: outside the Eq. (6) mask of a model built for L
    positions (B = 2^floor(log2 sqrt L)), over `n_pairs` pairs drawn as the task draws them (seeded).  A
    read outside the mask can still arrive through a summary token in an earlier layer, squeezed with the
    rest of its block into one position."""
    mask = sparse_mask(L, block_size(L), c, k).numpy()
    mod, rng = task.module(), np.random.default_rng(seed)
    far, out, n = {}, {}, {}
    for _ in range(n_pairs):
        s1, s2 = ed.sample_pair(task, rng)               # the pairs task.sample draws, without writing their CoT
        for pos, reads in mod.reads(task, s1, s2):
            q = pos - 1                                    # the position whose output is dp[i][j]
            for name, at in reads.items():
                far[name] = max(far.get(name, 0), q - at)
                out[name] = out.get(name, 0) + (not mask[q, at])
                n[name] = n.get(name, 0) + 1
    return {name: (far[name], out[name] / n[name]) for name in far}


@figure_style()
def plot_mask(path: Path, L: int, c: int = 1, k: int = 1) -> Path:
    """A picture of the Eq. (6) mask for sequences of length L (B = 2^floor(log2 sqrt L))."""
    plt = pyplot()
    B = block_size(L)
    fig, ax = plt.subplots(figsize=(4, 4))
    ax.imshow(sparse_mask(L, B, c, k).numpy(), cmap="Greys", interpolation="nearest")
    ax.set(xlabel="key position j", ylabel="query position i", title=f"Eq. (6) mask: L={L}, B={B}, c={c}, k={k}")
    fig.tight_layout()
    save(fig, path)
    return path


def figure_caption(p: Path, cfg: SweepConfig, baseline: bool) -> str:
    """A figure's caption; `baseline`: results.csv has the constant-answer accuracy, so the figures draw it."""
    if p.stem.startswith("locality"):
        if len(set(cfg.sizes_of("ed")) | set(cfg.sizes_of("ed_local"))) == 1:
            return ("ED vs ED_Local at one size (Fig. 2's question: does locality help the efficient models?): per "
                    "model, ED (blue) beside ED_Local (orange), each seed a ring and the mean a bar -- answer accuracy "
                    "(grey lines: a constant answer), exact CoTs, held-out loss per CoT token, and the training step "
                    f"at which the held-out loss first fell below {LOSS_MARK:g} (from each cell's curve.csv)"
                    + ("; a row per embedding dimension D" if len(set(cfg.dims_of("ed")) | set(cfg.dims_of("ed_local"))) > 1
                       else "") + f"; {cfg.preset_label}.")
        return ("ED vs ED_Local: answer accuracy (grey: a constant answer), exact CoTs and held-out loss per CoT "
                "token against the size, a colour per model, solid ED, dashed ED_Local (Fig. 2's question: does "
                f"locality help the efficient models?); {cfg.preset_label}.")
    return (f"{p.stem.split('_', 1)[1]}: answer accuracy (mean over seeds) over embedding dimension D and problem "
            f"size, one panel per model (Fig. 1 as measured)"
            + (f"; {BASELINE_MARK}, written under each size as base" if baseline else "")
            + f"; {cfg.preset_label}.")
