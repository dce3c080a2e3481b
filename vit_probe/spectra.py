"""Singular values of attention-logit matrices rho_hat(x) (tau x tau, one per image, layer, head),
aggregated over images (Sec. 5.2, Figs 2-3).

`collect` returns sv[(layer, head)] -> (n_images, tau) arrays, singular values in decreasing
order.  `head_table` reduces each to the numbers a table needs: the decay exponent of the mean
spectrum (log-log least squares over a range of indices, with a bootstrap interval over
images), the effective rank exp(H(p)), p = s / sum s (Roy & Vetterli 2007), and r90, the number
of singular values holding 90% of sum s^2.
"""
from __future__ import annotations

import sys

import textwrap

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from jackson.figures import figure_style, integer_ticks, pyplot, save, series_colours
from jackson.rates import fit_power_law

from . import normalize
from .data import normalise
from .probe import LogitProbe

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def input_size(model) -> tuple[int, int]:
    """The image size a model takes: timm's patch_embed.img_size, else the model's own img_size, else 32."""
    size = getattr(getattr(model, "patch_embed", None), "img_size", None) or getattr(model, "img_size", None) or 32
    return (int(size), int(size)) if isinstance(size, (int, float)) else tuple(size)


def model_norm(model, choice=normalize.AUTO, source: str = "the default (auto)") -> normalize.Norm:
    """The normalisation `model` gets for a choice of `normalize.choose` (AUTO: its own timm mean/std when it
    takes other than 32x32 images, else CIFAR-10's)."""
    return normalize.resolve(choice, source, input_size(model), getattr(model, "pretrained_cfg", None))


def model_input(model, images: np.ndarray, device: str = "cpu", norm: normalize.Norm | None = None) -> torch.Tensor:
    """uint8 (B, 32, 32, 3) -> the model's input: resized to its image size (`input_size`) and standardised
    with `norm` (None: `model_norm(model)`, the rule of every run before --normalize)."""
    norm = norm or model_norm(model)
    return normalise(torch.from_numpy(np.ascontiguousarray(images)).to(device), input_size(model), norm.mean, norm.std)


def _svdvals(m: torch.Tensor) -> np.ndarray:
    """Batched singular values. Many small matrices: one CPU thread avoids oversubscription on a
    busy machine (measured for the whole 1,000-image spectra while two other jobs held the cores:
    17.6-242 s with 2 threads everywhere, 9.8-10.1 s with 1-thread SVDs; reports/benchmarks.md)."""
    if m.device.type != "cpu":
        return torch.linalg.svdvals(m).cpu().numpy()
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return torch.linalg.svdvals(m).numpy()
    finally:
        torch.set_num_threads(n)


def collect(model, images: np.ndarray, layers: list[int], heads: list[int], batch: int = 100,
            device: str = "cpu", tokens: str = "all", progress: bool = True,
            norm: normalize.Norm | None = None) -> dict[tuple[int, int], np.ndarray]:
    """Singular values of every probed logit matrix. tokens='patches' drops the class token; norm: the input
    normalisation (None: `model_norm(model)`)."""
    model.eval()
    out = {(l, h): [] for l in layers for h in heads}
    with LogitProbe(model, layers, heads) as probe, torch.inference_mode():
        for i in tqdm(range(0, len(images), batch), desc="spectra", unit="batch", disable=not (progress and sys.stderr.isatty()),
                      dynamic_ncols=True):
            model(model_input(model, images[i:i + batch], device, norm))
            for l in layers:
                lg = probe.logits[l].float()                       # (B, H_sel, N, N)
                if tokens == "patches":
                    skip = getattr(model, "num_prefix_tokens", 1)
                    lg = lg[..., skip:, skip:]
                if not bool(torch.isfinite(lg).all()):           # an SVD of inf / nan is a LinAlgError: one line
                    from jackson.config import UsageError
                    raise UsageError(f"block {l}: the attention logits are not finite (inf or nan) on images "
                                     f"{i}..{i + len(lg) - 1}; the model's weights or the input normalisation "
                                     f"({norm.text() if norm else 'auto'}) overflow float32")
                sv = _svdvals(lg)                                  # (B, H_sel, N) decreasing
                for j, h in enumerate(heads):
                    out[(l, h)].append(sv[:, j])
    return {k: np.concatenate(v) for k, v in out.items()}


def effective_rank(s: np.ndarray) -> float:
    p = s / s.sum()
    p = p[p > 0]
    return float(np.exp(-(p * np.log(p)).sum()))


def r_energy(s: np.ndarray, frac: float = 0.9) -> int:
    e = np.cumsum(s ** 2) / np.sum(s ** 2)
    return int(np.searchsorted(e, frac) + 1)


def decay_exponent(sv: np.ndarray, fit_range: tuple[int, int], n_boot: int = 500, seed: int = 0) -> dict:
    """Slope of log mean-singular-value vs log index over indices fit_range (1-based, inclusive),
    with a 95% bootstrap interval over images."""
    lo, hi = fit_range
    hi = min(hi, sv.shape[1])
    idx = np.arange(lo, hi + 1)
    mean = sv.mean(0)[lo - 1:hi]
    ok = mean > 0
    if ok.sum() < 2:
        return {"exponent": float("nan"), "lo": float("nan"), "hi": float("nan")}
    slope, _ = fit_power_law(idx[ok], mean[ok])
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(n_boot):
        m = sv[rng.integers(0, len(sv), len(sv))].mean(0)[lo - 1:hi]
        good = m > 0
        if good.sum() >= 2:
            boots.append(fit_power_law(idx[good], m[good])[0])
    return {"exponent": slope, "lo": float(np.quantile(boots, 0.025)), "hi": float(np.quantile(boots, 0.975))}


def spectrum_table(sv: dict[tuple[int, int], np.ndarray], **extra) -> pd.DataFrame:
    """Tidy: one row per (layer, head, i) with mean and quantiles over images."""
    rows = []
    for (l, h), a in sv.items():
        qs = np.quantile(a, QUANTILES, axis=0)
        for i in range(a.shape[1]):
            rows.append(dict(extra, layer=l, head=h, i=i + 1, mean=float(a[:, i].mean()),
                             **{f"q{int(q * 100):02d}": float(qs[j, i]) for j, q in enumerate(QUANTILES)}))
    return pd.DataFrame(rows)


def head_table(sv: dict[tuple[int, int], np.ndarray], fit_range: tuple[int, int], max_rank: int | None = None,
               **extra) -> pd.DataFrame:
    """One row per (layer, head). max_rank: the logit matrices' rank bound (q k^T has rank <= m_h);
    the decay fit never reaches past it, where singular values are round-off."""
    rows = []
    lo, hi = fit_range
    if max_rank is not None:
        hi = max(min(hi, max_rank), lo + 1)
    for (l, h), a in sv.items():
        m = a.mean(0)
        e = decay_exponent(a, (lo, hi))
        rows.append(dict(extra, layer=l, head=h, n_images=len(a), tau=a.shape[1], sigma1=float(m[0]),
                         exponent=e["exponent"], exponent_lo=e["lo"], exponent_hi=e["hi"],
                         erank=effective_rank(m), r90=r_energy(m)))
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- figures

@figure_style()
def plot_violin(sv: np.ndarray, k_show: int, title: str, path) -> None:
    """Figure 2: the distribution over images of each of the first k_show singular values."""
    plt = pyplot()
    import seaborn as sns
    k = min(k_show, sv.shape[1])
    df = pd.DataFrame({"index": np.tile(np.arange(1, k + 1), len(sv)), "singular value": sv[:, :k].ravel()})
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * k), 3.8))
    sns.violinplot(data=df, x="index", y="singular value", ax=ax, cut=0, density_norm="width",
                   inner="quartile", color="#8fb3d9", linewidth=0.7)
    from matplotlib.patches import Patch
    face = ax.collections[0].get_facecolor()[0] if ax.collections else "#8fb3d9"   # as seaborn drew it
    ax.legend(handles=[Patch(facecolor=face, edgecolor="0.3", lw=0.7,
                             label="sigma_i over the images (lines: quartiles)")], fontsize=7, loc="upper right")
    ax.set_yscale("log")
    ax.set_xlabel("singular value index i")
    ax.set_ylabel("sigma_i of rho_hat(x)")
    ax.set_title(textwrap.fill(title, 110), fontsize=8)
    fig.tight_layout()
    save(fig, path)


@figure_style()
def plot_grid(spec: pd.DataFrame, heads_tab: pd.DataFrame, title: str, path) -> None:
    """Mean spectrum (with 5-95% band) of every probed (layer, head), log-log, one panel each."""
    plt = pyplot()
    layers = sorted(spec.layer.unique())
    heads = sorted(spec["head"].unique())
    fig, axes = plt.subplots(len(layers), len(heads), figsize=(2.3 * len(heads) + 0.5, 1.9 * len(layers) + 0.6),
                             squeeze=False, sharex=True)
    for r, l in enumerate(layers):
        for c, h in enumerate(heads):
            ax = axes[r][c]
            d = spec[(spec.layer == l) & (spec["head"] == h)]
            ax.fill_between(d.i, d.q05.clip(lower=1e-12), d.q95.clip(lower=1e-12), alpha=0.25, lw=0,
                            label="5-95% over the images")
            ax.plot(d.i, d["mean"].clip(lower=1e-12), lw=1.2, label="mean")
            ax.set_xscale("log")
            ax.set_yscale("log")
            integer_ticks(ax.xaxis, spec.i)
            if r == 0 and c == 0:
                ax.legend(fontsize=6, loc="lower left")
            row = heads_tab[(heads_tab.layer == l) & (heads_tab["head"] == h)]
            if len(row):
                ax.set_title(f"L{l} H{h}: slope {row.exponent.iloc[0]:.2f}, erank {row.erank.iloc[0]:.1f}", fontsize=7)
            ax.tick_params(labelsize=6)
            if c == 0:
                ax.set_ylabel("sigma_i", fontsize=7)
            if r == len(layers) - 1:
                ax.set_xlabel("i", fontsize=7)
    fig.suptitle(textwrap.fill(title, 130), fontsize=9)
    fig.tight_layout()
    save(fig, path)


# ---------------------------------------------------------------- the control: the same architecture at init

def compare_to_init(heads_tab: pd.DataFrame, init_heads: pd.DataFrame) -> pd.DataFrame:
    """heads_tab with the control's columns: per probed layer, the smallest and largest decay exponent of
    every head of every random init of the same architecture (heads are exchangeable at init, so a layer's
    heads pool), and `steeper_than_init`: the trained head's whole 95% interval lies below that smallest
    exponent, i.e. training made the spectrum decay faster than any init head of its layer."""
    by_layer = init_heads.groupby("layer").exponent.agg(["min", "max", "median"])
    out = heads_tab.copy()
    out["init_min"] = out.layer.map(by_layer["min"])
    out["init_max"] = out.layer.map(by_layer["max"])
    out["init_median"] = out.layer.map(by_layer["median"])
    out["steeper_than_init"] = out.exponent_hi < out.init_min
    return out


@figure_style()
def plot_trained_vs_init(spec: pd.DataFrame, init_spec: pd.DataFrame, max_rank: int, title: str, path) -> None:
    """One panel per probed layer: each trained head's mean spectrum, normalised by its sigma_1 (coloured),
    over every init head's (grey), up to the logit matrices' rank bound (beyond it sigma_i is round-off)."""
    plt = pyplot()
    layers = sorted(spec.layer.unique())
    rows = -(-len(layers) // 3)                  # at most 3 panels a row: 6 layers in one row were a 6:1 strip
    cols = -(-len(layers) // rows)
    fig, axes = plt.subplots(rows, cols, figsize=(2.6 * cols + 0.6, 2.6 * rows + 0.7), squeeze=False, sharey=True)
    panels = axes.ravel()
    heads = sorted(spec["head"].unique())
    colour = dict(zip(heads, series_colours(len(heads))))     # no head in the init control's grey
    for ax, l in zip(panels, layers):
        for (_, _), d in init_spec[(init_spec.layer == l) & (init_spec.i <= max_rank)].groupby(["init", "head"]):
            ax.plot(d.i, d["mean"] / d["mean"].iloc[0], color="0.6", lw=0.7, alpha=0.8)
        for h, d in spec[(spec.layer == l) & (spec.i <= max_rank)].groupby("head"):
            ax.plot(d.i, d["mean"] / d["mean"].iloc[0], lw=1.4, color=colour[h], label=f"head {h}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        integer_ticks(ax.xaxis, spec.i[spec.i <= max_rank])
        ax.set_title(f"layer {l}", fontsize=8)
        ax.set_xlabel("i", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in panels[len(layers):]:
        ax.set_visible(False)
    for row in axes:
        row[0].set_ylabel("mean sigma_i / mean sigma_1", fontsize=8)
    last = panels[len(layers) - 1]
    last.plot([], [], color="0.6", lw=0.7, label="at init (every head)")
    last.legend(fontsize=6, frameon=False, loc="lower left")
    fig.suptitle(textwrap.fill(title, 120), fontsize=8)
    fig.tight_layout()
    save(fig, path)
