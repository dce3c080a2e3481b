"""The pictures of App. B.1 (Figs. 4-6), drawn from a finished task cell's tables (never during training).

  attention.png  (a) the learned attention A of one held-out instance beside the target's selection S
  graph.png      (b) the relationship as a graph: points (nearest point) or tokens joined by lines of
                     strength A[t, s]
  fof.png        (c) F_hat∘f_hat against the target's F∘f: scatter per output, or a contour over the
                     plane (weighted average, as in Fig. 5c)
  loss_curves.png    training-subset MSE against step, one line per seed

Each function returns (file name, what the picture shows); jackson/app_b/experiment.py adds data, seeds
and command.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..figures import figure_style, pyplot, save

CMAP = "viridis"


def _plt():
    plt = pyplot()
    return plt


def _save(plt, fig, path: Path) -> None:
    fig.tight_layout()
    save(fig, path)


def _tick_labels(task_name: str, ex: dict) -> list[str]:
    if task_name == "weighted-average":
        return [f"{t}P" if k == "x_pred" else str(t) for t, k in enumerate(ex["kinds"])]
    return [str(t) for t in range(len(ex["A"]))]


@figure_style()
def plot_attention(out: Path, task_name: str, ex: dict, seed: int) -> tuple[str, str]:
    plt = _plt()
    A, S = np.asarray(ex["A"]), np.asarray(ex["S"])
    tau = len(A)
    labels = _tick_labels(task_name, ex)
    fig, axes = plt.subplots(1, 2, figsize=(9.6, 4.4))
    for ax, M, title in ((axes[0], A, f"learned A (seed {seed})"), (axes[1], S, "target S (Eq. 8 weights)")):
        im = ax.imshow(M, vmin=0, vmax=1, cmap=CMAP)
        if tau <= 12:
            for t in range(tau):
                for s in range(tau):
                    ax.text(s, t, f"{M[t, s]:.2f}", ha="center", va="center", fontsize=6,
                            color="white" if M[t, s] < 0.5 else "black")
        ax.set(xticks=range(tau), yticks=range(tau), xticklabels=labels, yticklabels=labels,
               xlabel="s (input token)", ylabel="t (output position)", title=title)
    fig.colorbar(im, ax=axes, shrink=0.8)
    fig.suptitle(f"{task_name}: attention on held-out instance #{ex['index']}", fontsize=9)
    save(fig, out / "attention.png", bbox_inches="tight")
    return "attention.png", (f"(a) Attention matrix A of the trained model (seed {seed}) on one held-out sequence "
                             f"(#{ex['index']}), beside the target's own attention S of Eq. (8)"
                             + ("; P marks prediction tokens x_pred" if task_name == "weighted-average" else ""))


def _plane(ax, ex: dict, M: np.ndarray, d: int, title: str) -> None:
    """Nearest point: u_t (green) joined to v_s (red) by lines of strength M[t, s]."""
    x = np.asarray(ex["x"])
    u, v = x[:, :2], x[:, d:d + 2]
    cmap = _plt().get_cmap(CMAP)
    for t in range(len(M)):
        for s in range(len(M)):
            if M[t, s] > 0.02:
                ax.plot([u[t, 0], v[s, 0]], [u[t, 1], v[s, 1]], color=cmap(M[t, s]), alpha=float(M[t, s]),
                        lw=0.5 + 2.5 * M[t, s], zorder=1)
    ax.scatter(u[:, 0], u[:, 1], c="tab:green", s=40, zorder=2, label="U (queries u_t)")
    ax.scatter(v[:, 0], v[:, 1], c="tab:red", s=40, zorder=2, label="V (points v_s)")
    for t in range(len(u)):
        ax.annotate(str(t), u[t], fontsize=7, xytext=(3, 3), textcoords="offset points")
        ax.annotate(str(t), v[t], fontsize=7, xytext=(3, 3), textcoords="offset points", color="tab:red")
    ax.set(aspect="equal", title=title, xlabel="coordinate 1", ylabel="coordinate 2")
    ax.legend(fontsize=7, loc="best")


def _bipartite(ax, ex: dict, M: np.ndarray, task_name: str, title: str, k_idx=None) -> None:
    """Outputs y(t) on top, inputs x(s) below, joined by lines of strength M[t, s]."""
    tau = len(M)
    cmap = _plt().get_cmap(CMAP)
    for t in range(tau):
        for s in range(tau):
            if M[t, s] > 0.02:
                ax.plot([s, t], [0, 1], color=cmap(M[t, s]), alpha=float(M[t, s]), lw=0.5 + 2.5 * M[t, s])
    pred = [k == "x_pred" for k in ex["kinds"]] if task_name == "weighted-average" else [False] * tau
    col = ["tab:orange" if p else "tab:blue" for p in pred]
    ax.scatter(range(tau), [0] * tau, c=col, s=50, zorder=3)
    ax.scatter(range(tau), [1] * tau, c=col, s=50, zorder=3, marker="s")
    from matplotlib.lines import Line2D
    keys = [Line2D([], [], ls="none", marker="o", color="tab:blue", label="input token x(s)"),
            Line2D([], [], ls="none", marker="s", color="tab:blue", label="output y(t)")]
    if any(pred):
        keys.append(Line2D([], [], ls="none", marker="o", color="tab:orange", label="prediction token x_pred"))
    ax.legend(handles=keys, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=len(keys), fontsize=7)
    for t in range(tau):
        ax.annotate(f"x({t})", (t, 0), xytext=(0, -14), textcoords="offset points", ha="center", fontsize=7)
        top = f"y({t})" if k_idx is None else f"y({t})\n" + ",".join(str(int(i)) for i in k_idx[t])
        ax.annotate(top, (t, 1), xytext=(0, 6), textcoords="offset points", ha="center", fontsize=7)
    ax.set(xlim=(-0.7, tau - 0.3), ylim=(-0.35, 1.45), title=title)
    ax.axis("off")


@figure_style()
def plot_graph(out: Path, task, ex: dict, seed: int) -> tuple[str, str]:
    plt = _plt()
    A, S = np.asarray(ex["A"]), np.asarray(ex["S"])
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6))
    if task.name == "nearest-point":
        _plane(axes[0], ex, A, task.d, f"learned: lines = A[t, s] (seed {seed})")
        _plane(axes[1], ex, S, task.d, "target: u_t -> nearest v_s")
        what = ("(b) The learned relationship as in Fig. 4(b): queries u_t (green) joined to points v_s (red) "
                "by lines whose colour and width are A[t, s] (right: the target's nearest point)"
                + ("; only the first two coordinates are drawn" if task.d > 2 else ""))
    else:
        idx = task.decode(np.asarray(ex["x"]))[1] if task.name == "selection-average" else None
        _bipartite(axes[0], ex, A, task.name, f"learned: lines = A[t, s] (seed {seed})", idx)
        _bipartite(axes[1], ex, S, task.name, "target: lines = S[t, s]", idx)
        what = ("(b) The learned relationship as in Figs. 5(b)/6(b): output y(t) (top) joined to input x(s) "
                "(bottom) by lines whose colour and opacity are A[t, s] (right: the target's S)"
                + ("; orange: prediction tokens x_pred" if task.name == "weighted-average" else
                   "; the indices s(t) are printed above each output"))
    fig.suptitle(f"{task.name}: held-out instance #{ex['index']}", fontsize=9)
    fig.tight_layout()
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    fig.colorbar(ScalarMappable(norm=Normalize(0, 1), cmap=CMAP), ax=list(axes), shrink=0.8, pad=0.02,
                 label="line colour: A[t, s] (left), S[t, s] (right)")
    save(fig, out / "graph.png", bbox_inches="tight")
    return "graph.png", what


@figure_style()
def plot_fof(out: Path, task, fof: pd.DataFrame, grid: pd.DataFrame | None, seed: int) -> tuple[str, str]:
    plt = _plt()
    sub = fof.iloc[:2000]
    if grid is not None:
        n = int(round(np.sqrt(len(grid))))
        X, Y = grid.x1.to_numpy().reshape(n, n), grid.x2.to_numpy().reshape(n, n)
        H, T = grid.fof_hat.to_numpy().reshape(n, n), grid.fof.to_numpy().reshape(n, n)
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.4))
        levels = np.linspace(float(min(T.min(), H.min())), float(max(T.max(), H.max())), 11)
        cs = axes[0].contourf(X, Y, H, levels=levels, cmap=CMAP)
        axes[0].contour(X, Y, T, levels=levels[1:-1], colors="white", linestyles="--", linewidths=0.8)
        fig.colorbar(cs, ax=axes[0])
        axes[0].set(aspect="equal", xlabel="x_1", ylabel="x_2", title=f"learned (filled), |x| (dashed); seed {seed}")
        ax = axes[1]
        ax.scatter(sub.fof_0, sub.fof_hat_0, s=3, alpha=0.4, label="a token")
        lim = [float(sub.fof_0.min()), float(sub.fof_0.max())]
        ax.plot(lim, lim, "k--", lw=1, label="identity")
        ax.legend(fontsize=7, loc="upper left")
        ax.set(xlabel="F∘f = |x|", ylabel="F_hat∘f_hat", title="point-mass tokens of held-out-like draws")
        what = ("(c) F_hat∘f_hat(x) := F_hat(W_V f_hat(x)) of the trained model against the target's F∘f(x, m) = |x|: "
                "left, a contour over the plane for point-mass tokens at position 1 of segment 0 with the mid mass "
                "(filled: learned, dashed: |x|), as in Fig. 5(c); right, a scatter over point-mass tokens at all "
                "positions, drawn like the training data")
    else:
        d = task.d_out
        fig, axes = plt.subplots(1, d, figsize=(4.4 * d, 4.2), squeeze=False)
        for j, ax in enumerate(axes[0]):
            ax.scatter(sub[f"fof_{j}"], sub[f"fof_hat_{j}"], s=3, alpha=0.4, label="a token")
            lim = [float(sub[f"fof_{j}"].min()), float(sub[f"fof_{j}"].max())]
            ax.plot(lim, lim, "k--", lw=1, label="identity")
            ax.legend(fontsize=7, loc="upper left")
            ax.set(xlabel=f"F∘f, output {j}", ylabel=f"F_hat∘f_hat, output {j}", aspect="equal",
                   title=f"output {j} (seed {seed})")
        name = "v" if task.name == "selection-average" else "v (the token's V point)"
        what = (f"(c) F_hat∘f_hat(x) := F_hat(W_V f_hat(x)) of the trained model against the target's F∘f(x) = {name}, "
                "one panel per output coordinate, over tokens the target attends to (dashed: identity), as in "
                f"Fig. {4 if task.name == 'nearest-point' else 6}(c)")
    _save(plt, fig, out / "fof.png")
    return "fof.png", what


@figure_style()
def plot_curves(out: Path, curves: pd.DataFrame) -> tuple[str, str]:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.6, 3.6))
    for s, c in curves.groupby("seed"):
        ax.plot(c.step, c.train_mse, lw=1, label=f"seed {s}")
    ax.set(yscale="log", xlabel="step", ylabel="training-subset MSE")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    _save(plt, fig, out / "loss_curves.png")
    return "loss_curves.png", "Training-subset MSE (the fit's plateau checks) against optimiser step, one line per seed"


def plot_task(out: Path, task, example: dict, fof: pd.DataFrame, grid: pd.DataFrame | None,
              curves: pd.DataFrame, seed: int) -> list[tuple[str, str]]:
    """All four pictures of one task run; returns [(file, what it shows)]."""
    return [plot_attention(out, task.name, example, seed), plot_graph(out, task, example, seed),
            plot_fof(out, task, fof, grid, seed), plot_curves(out, curves)]
