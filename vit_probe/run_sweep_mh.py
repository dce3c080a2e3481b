"""vit-probe sweep-mh (Fig. 3): ViTs whose per-head query/key size m_h varies, trained alike
(`MhCell` on the core runner, in-process or Dask); spectra and training error vs m_h with the fit
a / m_h^gamma + b, the spectrum-convergence table, the two figures, summary and report.json.

`MhCell.key()` depends only on the cell's fields (not on this module's path), so finished cells
keep their folders under cells/ whichever module defines the class.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from jackson.config import need
from jackson.figures import figure_style, integer_ticks, pyplot, save
from jackson.runfolder import open_run, table_path, write_table
from jackson.sweep import checkpoint_progress, non_default, run_cells

from . import data as cdata
from . import models, spectra
from .common import PAPER, data_split, fmt, report_json, say_quick, take_together, train_draw
from .configs import SweepMhConfig, TrainConfig, validate_sweep
from .train import train
from jackson.config import read_json


@dataclass(frozen=True)
class MhCell:
    arch: str                     # full spec including _q<m_h>
    seed: int
    train: TrainConfig
    n_eval_train: int
    n_spectra: int
    fit_range: tuple[int, ...]
    data: str = field(compare=False)
    cache: str = field(compare=False, default="")
    download: bool = field(compare=False, default=False)
    ckpt_dir: str = field(compare=False, default="")
    device: str = "cpu"
    subset_seed: int = 0          # seed of the class-stratified training-eval and spectra images

    def key(self) -> str:
        # "subsets" keeps cells measured on the old first-n (class-sorted) subsets from being reused
        ident = {"arch": self.arch, "seed": self.seed, "train": non_default(self.train),
                 **({"device": self.device} if self.device != "cpu" else {}),
                 "subsets": f"stratified, seed {self.subset_seed}",
                 "n_eval_train": self.n_eval_train, "n_spectra": self.n_spectra, "fit_range": list(self.fit_range),
                 "data": cdata.describe(Path(self.data)) if self.data else "official"}
        h = hashlib.sha1(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:10]
        return f"{self.arch}_s{self.seed}_{h}"

    def ckpt_path(self) -> Path | None:
        return Path(self.ckpt_dir) / f"{self.key()}.pt" if self.ckpt_dir else None

    def in_progress(self) -> list[dict]:
        """Its training so far, from its resume checkpoint ([] if it has none): for `--status`.  The checkpoint
        does not hold the step count the training runs to (that depends on the images the data holds)."""
        ck = self.ckpt_path()
        return [checkpoint_progress("training", ck)] if ck is not None and ck.is_file() else []

    def run(self, folder: Path, progress: bool = True) -> None:
        t0 = time.time()
        tr = data_split(self.data, "train", self.cache, self.download, progress)
        te = data_split(self.data, "test", self.cache, self.download, progress)
        arch = models.parse_arch(self.arch)
        torch.manual_seed(self.seed)
        model = models.build(arch)
        ckpt = self.ckpt_path()
        if ckpt is not None:
            ckpt.parent.mkdir(parents=True, exist_ok=True)
        dev = self.device
        # only the training images used are read from an archive (one pass): train()'s draw and the evaluation
        # images (the same in every cell)
        fit = train_draw(tr.labels, self.train.n_train, self.seed)
        ev = cdata.subset(tr.labels, self.n_eval_train, self.subset_seed)
        x_fit, x_ev = take_together(tr, fit, ev)
        hist = train(model, x_fit, tr.labels[fit], self.train, self.seed, ckpt, progress, desc=f"m_h={arch.m_h}",
                     device=dev, arch=self.arch)
        n_ev = len(ev)
        tr_loss, tr_err = models.cross_entropy(model, x_ev, tr.labels[ev], device=dev)
        te_loss, te_err = models.cross_entropy(model, te.images, te.labels, device=dev)   # every test image
        nh = arch.heads
        sp = cdata.subset(te.labels, self.n_spectra, self.subset_seed)
        sv = spectra.collect(model, te.images[sp], list(range(arch.depth)), list(range(nh)),
                             100, dev, "all", progress=False)
        # seed in the rows: the sweep's spectra.csv.gz gathers every seed's table (the ledger's per-seed interval)
        write_table(folder, "spectrum.csv", spectra.spectrum_table(sv, m_h=arch.m_h, seed=self.seed))
        spectra.head_table(sv, tuple(self.fit_range), arch.m_h, m_h=arch.m_h).to_csv(folder / "heads.csv", index=False)
        pd.DataFrame(hist).assign(m_h=arch.m_h).to_csv(folder / "history.csv", index=False)
        row = dict(m_h=arch.m_h, seed=self.seed, arch=self.arch, params=sum(p.numel() for p in model.parameters()),
                   train_loss_eval=tr_loss, train_err_eval=tr_err, n_eval_train=n_ev,
                   train_loss_last_epoch=hist[-1]["train_loss"] if hist else float("nan"),
                   test_loss=te_loss, test_acc=1 - te_err, epochs=self.train.epochs, n_train=min(self.train.n_train, len(tr)),
                   train_wall_s=hist[-1]["wall_s"] if hist else 0.0, cell_wall_s=time.time() - t0)
        pd.DataFrame([row]).to_csv(folder / "rows.csv", index=False)
        (folder / "cell.json").write_text(json.dumps({"key": self.key(), "data": tr.source, **row,
                                                      "train": dataclasses.asdict(self.train)}, indent=2) + "\n")


def fit_saturating_power(m, err) -> dict:
    """Least squares err ~ a / m^gamma + b (a, gamma >= 0), with 1-sigma errors from the covariance."""
    from scipy.optimize import curve_fit
    m, err = np.asarray(m, float), np.asarray(err, float)
    if len(m) < 4:
        return {"ok": False, "why": f"{len(m)} points; the 3-parameter fit needs >= 4"}

    def f(x, a, g, b):
        return a * x ** (-g) + b
    try:
        p, cov = curve_fit(f, m, err, p0=(max(err[0] - err[-1], 1e-3), 0.5, float(err.min())),
                           bounds=([0, 0, -np.inf], [np.inf, 10, np.inf]), maxfev=20000)
    except (RuntimeError, ValueError) as e:
        return {"ok": False, "why": str(e)}
    se = np.sqrt(np.clip(np.diag(cov), 0, None)) if np.all(np.isfinite(cov)) else [float("nan")] * 3
    resid = err - f(m, *p)
    # identified only if both gamma and b are pinned down by the data (standard error below the value)
    identified = bool(se[1] < abs(p[1]) and se[2] < max(abs(p[2]), 1e-12))
    return {"ok": True, "a": float(p[0]), "gamma": float(p[1]), "b": float(p[2]), "a_se": float(se[0]),
            "gamma_se": float(se[1]), "b_se": float(se[2]), "rmse": float(np.sqrt(np.mean(resid ** 2))),
            "identified": identified}


def cell_spectrum(folder: Path, seed: int) -> pd.DataFrame:
    """A finished cell's spectrum table (spectrum.csv.gz; spectrum.csv in a cell written before it was compressed)
    with its seed in the second column, where cells written before the cells carried it (2026-11-25) lack it: the
    gathered spectra.csv.gz says every row's seed either way."""
    t = pd.read_csv(table_path(folder, "spectrum.csv"))
    if "seed" not in t:
        t.insert(1, "seed", seed)
    return t


def spectrum_convergence(spec: pd.DataFrame, layer: int, head: int) -> pd.DataFrame:
    """Relative L2 distance between the normalised mean spectra (sigma_i / sigma_1) of successive
    m_h: Fig. 3a's claim is that it shrinks as m_h grows."""
    d = spec[(spec.layer == layer) & (spec["head"] == head)]
    ms = sorted(d.m_h.unique())
    curves = {m: d[d.m_h == m].groupby("i")["mean"].mean().to_numpy() for m in ms}
    rows = []
    for a, b in zip(ms[:-1], ms[1:]):
        k = int(min(a, b))    # both matrices have rank <= m_h: compare where both spectra are real, i <= k
        ca, cb = curves[a][:k] / curves[a][0], curves[b][:k] / curves[b][0]
        rel = float(np.linalg.norm(ca - cb) / np.linalg.norm(cb)) if k >= 2 else float("nan")
        rows.append({"m_h_from": a, "m_h_to": b, "compared_i": k, "rel_l2": rel})
    return pd.DataFrame(rows)


SETTLED_L2 = 0.1   # Fig. 3a: successive normalised spectra within 10% (relative L2) count as converged (the lab report's SETTLED_L2)


def convergence_verdict(conv: pd.DataFrame) -> dict:
    """Have the normalised spectra converged as m_h grew?  Rule (the claims
    ledger's vit_converge, vit_probe/rules.py): settled when the distance of the last pair of m_h is <= SETTLED_L2.  Also says whether the
    distances shrink pair by pair (a trend toward convergence even where the last is still above it)."""
    d = [float(x) for x in conv["rel_l2"] if np.isfinite(x)] if len(conv) else []
    if not d:
        return {"settled": None, "shrinking": None, "last": None,
                "text": "no pair of m_h with two comparable singular values: convergence not measured"}
    settled, shrinking = d[-1] <= SETTLED_L2, all(b < a for a, b in zip(d, d[1:]))
    text = (f"{'settled' if settled else 'NOT settled'}: the last distance, {d[-1]:.3g}, is "
            f"{'within' if settled else 'above'} {SETTLED_L2:g}; the distances "
            + ("shrink pair by pair" if shrinking else "do not shrink pair by pair") + f" ({', '.join(f'{x:.3g}' for x in d)})")
    return {"settled": settled, "shrinking": shrinking, "last": d[-1], "text": text}


def sweep_where(src: str, n_seeds: int) -> str:
    """The data and seeds every figure title and caption of a sweep names."""
    return f"{src}; {n_seeds} seed(s)"


NOT_IDENTIFIED = "not identified: a standard error exceeds its value"


def fit_drawn(fit: dict) -> str:
    """What error_vs_mh.png shows of the fit a/m_h^gamma + b (`plot_sweep`), in its caption's words: the
    curve whenever the fit succeeded, solid black if the data identify gamma and b, dotted grey if not."""
    if not fit.get("ok"):
        return "(the fit a/m_h^gamma + b failed: none drawn)"
    if fit.get("identified"):
        return "with the fit a/m_h^gamma + b of the training loss (solid black)"
    return (f"with the fit a/m_h^gamma + b of the training loss dotted grey, {NOT_IDENTIFIED}, so its gamma "
            "and b are no measurement")


def error_caption(fit: dict, n_eval_train: int, where: str, preset: str) -> str:
    """error_vs_mh.png's caption in report.json: what `plot_sweep` draws, the fit as `fit_drawn` says."""
    return (f"Fig. 3b analogue: training cross-entropy (eval mode, {n_eval_train} training images stratified by "
            f"class) and held-out cross-entropy vs m_h {fit_drawn(fit)}; {where}; {preset}. Paper: gamma 0.27, "
            f"b 1.05 on ViT-B/16 with full training.")


@figure_style()
def plot_sweep(out: Path, res: pd.DataFrame, spec: pd.DataFrame, fit: dict, layer: int, head: int, where: str) -> None:
    plt = pyplot()
    d = spec[(spec.layer == layer) & (spec["head"] == head)]
    ms = sorted(d.m_h.unique())
    cmap = plt.get_cmap("viridis")
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for j, m in enumerate(ms):
        c = d[d.m_h == m].groupby("i")["mean"].mean()
        c = c[c.index <= m]          # rank(q k^T) <= m_h: values past it are round-off
        col = cmap(j / max(1, len(ms) - 1))
        axes[0].plot(c.index, c.values, "o-", ms=3, color=col, label=f"m_h={m}")
        axes[1].plot(c.index, c.values / c.values[0], "o-", ms=3, color=col, label=f"m_h={m}")
    for ax, t in zip(axes, ["mean sigma_i", "sigma_i / sigma_1"]):
        ax.set_xscale("log")
        ax.set_yscale("log")
        integer_ticks(ax.xaxis, range(1, int(max(ms)) + 1) if ms else [1])
        ax.set_xlabel("singular value index i")
        ax.set_ylabel(t)
    axes[1].legend(fontsize=7)
    conv = spectrum_convergence(spec, layer, head)
    verdict = convergence_verdict(conv)
    if verdict["settled"] is not None:     # the summary's convergence line, in the figure
        dists = ", ".join(f"{x:.2g}" for x in conv["rel_l2"] if np.isfinite(x))
        axes[1].set_title(f"rel. L2 between successive m_h: {dists}\n{'settled' if verdict['settled'] else 'NOT settled'} "
                          f"(rule: last <= {SETTLED_L2:g})", fontsize=7)
    fig.suptitle(f"Fig. 3a: logit spectra of layer {layer}, head {head} vs m_h (i <= m_h shown); {where}", fontsize=9)
    fig.tight_layout()
    save(fig, out / "spectra_vs_mh.png")

    g = res.groupby("m_h").agg(train=("train_loss_eval", "mean"), test=("test_loss", "mean"),
                               err=("train_err_eval", "mean")).reset_index()
    fig, ax = plt.subplots(figsize=(5.6, 3.9))
    ax.plot(g.m_h, g.train, "o-", label="training loss (cross-entropy, eval mode)")
    ax.plot(g.m_h, g.test, "s--", alpha=0.7, label="held-out loss (test split)")
    if fit.get("ok"):          # drawn as fit_drawn, which the caption quotes, says
        xs = np.geomspace(g.m_h.min(), g.m_h.max(), 100)
        sure = bool(fit.get("identified"))
        ax.plot(xs, fit["a"] * xs ** -fit["gamma"] + fit["b"], color="k" if sure else "grey", ls="-" if sure else ":",
                lw=1 if sure else 1.5, label=f"fit of training loss: {fit['a']:.3g}/m_h^{fit['gamma']:.2g} "
                                             f"{'+' if fit['b'] >= 0 else '-'} {abs(fit['b']):.3g}"
                                             + ("" if sure else f"\n({NOT_IDENTIFIED})"))
    ax.set_xscale("log")
    integer_ticks(ax.xaxis, g.m_h)
    ax.set_xlabel("m_h (query/key size per head)")
    ax.set_ylabel("cross-entropy")
    ax.legend(fontsize=7)
    ax.set_title(f"Fig. 3b: error vs m_h; {where}", fontsize=8)
    fig.tight_layout()
    save(fig, out / "error_vs_mh.png")


def sweep_grid(cfg: SweepMhConfig) -> tuple[Path, list[MhCell]]:
    """The run folder and the cells (one model per m_h and seed) of a checked config (also `--status`)."""
    validate_sweep(cfg)
    base = models.parse_arch(cfg.arch)
    out = Path(cfg.out)
    absolute = lambda p: str(Path(p).expanduser().resolve()) if p else p   # noqa: E731 (Dask workers may sit elsewhere)
    return out, [MhCell(models.arch_spec(dataclasses.replace(base, m_h=m)), s, cfg.train, cfg.n_eval_train,
                        cfg.n_spectra, tuple(cfg.fit_range), absolute(cfg.data), absolute(cfg.cache), cfg.download,
                        str((out / "checkpoints").resolve()), cfg.device, cfg.subset_seed)
                 for s in cfg.seeds for m in cfg.mh]


def run_sweep_mh(cfg: SweepMhConfig, command: str, progress: bool = True) -> dict:
    out, cells = sweep_grid(cfg)
    ckpt_dir = out / "checkpoints"
    if not cfg.rebuild:   # fail on bad data before anything is written or trained
        src = data_split(cfg.data, "test", cfg.cache, cfg.download, progress).source
    with open_run(out, "vit-probe sweep-mh", command, dataclasses.asdict(cfg), scheduler=cfg.scheduler,
                  device=cfg.device, record=not cfg.rebuild) as out:
        t0 = time.time()
        if cfg.rebuild:
            missing = [c.key() for c in cells if not (out / "cells" / c.key()).is_dir()]
            need(not missing, f"--rebuild: {len(missing)} of {len(cells)} cells are not finished in {out}/cells "
                              f"(first: {missing[0] if missing else ''}); run without --rebuild to train them")
            src = read_json(out / "cells" / cells[0].key() / "cell.json")["data"]
            dirs = [out / "cells" / c.key() for c in cells]
            command = (out / "command.txt").read_text().strip() if (out / "command.txt").is_file() else command
        else:
            say_quick(cfg, progress)
            dirs = run_cells(cells, out, cfg.scheduler or None, progress)
        if not cfg.keep_weights:
            for c in cells:
                c.ckpt_path().unlink(missing_ok=True)
            if ckpt_dir.is_dir() and not any(ckpt_dir.iterdir()):
                ckpt_dir.rmdir()
        res = pd.concat([pd.read_csv(d / "rows.csv") for d in dirs], ignore_index=True).sort_values(["m_h", "seed"])
        spec = pd.concat([cell_spectrum(d, c.seed) for d, c in zip(dirs, cells)], ignore_index=True)
        heads = pd.concat([pd.read_csv(d / "heads.csv") for d in dirs], ignore_index=True)
        hist = pd.concat([pd.read_csv(d / "history.csv").assign(seed=c.seed) for d, c in zip(dirs, cells)], ignore_index=True)
        res.to_csv(out / "results.csv", index=False)
        write_table(out, "spectra.csv", spec)
        heads.to_csv(out / "heads.csv", index=False)
        hist.to_csv(out / "history.csv", index=False)
        layer = cfg.spectra_layer % models.parse_arch(cfg.arch).depth
        g = res.groupby("m_h")["train_loss_eval"].mean()
        fit = fit_saturating_power(g.index.to_numpy(), g.to_numpy())
        conv = spectrum_convergence(spec, layer, cfg.spectra_head)
        conv.to_csv(out / "spectrum_convergence.csv", index=False)
        t = cfg.train
        preset = (f"{cfg.arch} (m_h varied), {t.epochs:g} epochs on {int(res.n_train.iloc[0])} training images, batch "
                  f"{t.batch_size}, AdamW lr {t.lr:g} wd {t.weight_decay:g}, cosine, augment={t.augment}, device {cfg.device}")
        where = sweep_where(src, len(cfg.seeds))
        plot_sweep(out, res, spec, fit, layer, cfg.spectra_head, where)
        summary = {"data": src, "preset": preset, "fit": fit, "paper": PAPER, "wall_s_this_run": time.time() - t0,
                   "command": command,
                   "train_wall_s_total": float(res.train_wall_s.sum()), "convergence": conv.to_dict("records"),
                   "convergence_verdict": (verdict := convergence_verdict(conv))}
        lines = [f"# m_h sweep of a ViT on {src}", "",
                 f"Configuration: {preset}. Seeds: {', '.join(map(str, cfg.seeds))}. "
                 f"Training loss = mean cross-entropy on {int(res.n_eval_train.iloc[0])} training images drawn stratified "
                 f"by class (seed {cfg.subset_seed}) in eval mode (no augmentation), after training; spectra on "
                 f"{cfg.n_spectra} test images drawn the same way. Training wall time, all models: "
                 f"{res.train_wall_s.sum():.0f} s.", "",
                 "| m_h | params | training loss | training error | test loss | test accuracy | train wall s |",
                 "|---|---|---|---|---|---|---|"]
        for m, r in res.groupby("m_h").mean(numeric_only=True).iterrows():
            lines.append(f"| {m} | {int(r.params)} | {r.train_loss_eval:.4f} | {r.train_err_eval:.4f} | {r.test_loss:.4f} | "
                         f"{r.test_acc:.4f} | {r.train_wall_s:.0f} |")
        lines.append("")
        if fit.get("ok"):
            lines.append(f"Fit of training loss: {fit['a']:.3g} / m_h^gamma + b with gamma = {fit['gamma']:.3f} "
                         f"(+-{fit['gamma_se']:.3f}), b = {fit['b']:.3f} (+-{fit['b_se']:.3f}), rmse {fit['rmse']:.2g}. "
                         f"Paper (ViT-B/16, full training): gamma = {PAPER['gamma']}, b = {PAPER['b']}.")
            if not fit["identified"]:
                lines.append("**The data do not identify gamma and b** (a standard error exceeds its value): over this "
                             "range of m_h the training loss is nearly flat or linear in log m_h, so no saturating "
                             "power law is pinned down; do not quote these gamma and b as measured.")
        else:
            lines.append(f"The fit a / m_h^gamma + b failed: {fit.get('why')}.")
        g_ok = g[g > 0]
        if len(g_ok) >= 2:
            from jackson.rates import fit_power_law
            slope, _ = fit_power_law(g_ok.index.to_numpy(), g_ok.to_numpy())
            first, last = g_ok.iloc[0], g_ok.iloc[-1]
            lines.append(f"Descriptive: log-log slope of training loss over m_h = {g_ok.index.min()}..{g_ok.index.max()}: "
                         f"{slope:.3f}; training loss {first:.4f} -> {last:.4f} ({100 * (last - first) / first:+.1f}%).")
            summary_extra = {"loglog_slope": slope, "loss_first": float(first), "loss_last": float(last)}
        else:
            summary_extra = {}
        lines += ["", f"Spectrum convergence (Fig. 3a; layer {layer}, head {cfg.spectra_head}): relative L2 distance "
                  "between successive normalised mean spectra sigma_i / sigma_1 over the indices both have "
                  "(i <= the smaller m_h; a logit matrix has rank <= m_h).", "",
                  "| from m_h | to m_h | indices compared | rel. distance |", "|---|---|---|---|"]
        lines += [f"| {r.m_h_from} | {r.m_h_to} | {r.compared_i} | {fmt(r.rel_l2)} |" for r in conv.itertuples()]
        lines += ["", f"Converged? {verdict['text']}. Rule: settled when the last pair's distance is "
                      f"<= {SETTLED_L2:g} (the lab report's Fig. 3a rule)."]
        lines += ["", "Figures: `spectra_vs_mh.png` (Fig. 3a), `error_vs_mh.png` (Fig. 3b). Tables: `results.csv`, "
                  "`spectra.csv.gz`, `heads.csv`, `history.csv`, `spectrum_convergence.csv`; per-model folders in `cells/`."]
        (out / "summary.md").write_text("\n".join(lines) + "\n")
        summary.update(summary_extra)
        (out / "summary.json").write_text(json.dumps(summary, indent=2, default=float) + "\n")
        paper = []
        if fit.get("ok") and fit["identified"]:
            paper = [{"quantity": "gamma in a/m_h^gamma + b (training loss)", "paper": PAPER["gamma"], "measured": fit["gamma"]},
                     {"quantity": "b in a/m_h^gamma + b", "paper": PAPER["b"], "measured": fit["b"]}]
        report_json(out, title="ViT m_h sweep (Fig. 3)", section="vit_probe", data=src, command=command,
                     seeds=len(cfg.seeds), preset=preset,
                     figures=[{"file": "spectra_vs_mh.png",
                               "caption": f"Fig. 3a analogue: mean singular values (raw and / sigma_1) of layer {layer}, "
                                          f"head {cfg.spectra_head} pre-softmax logits over {cfg.n_spectra} test images "
                                          "(stratified by class), "
                                          f"one curve per m_h; {where}; {preset}."},
                              {"file": "error_vs_mh.png",
                               "caption": error_caption(fit, cfg.n_eval_train, where, preset)}],
                     paper=paper, text="\n".join(lines[2:3]))
        if progress:
            print("\n".join(sweep_headline(res, fit, verdict, layer, cfg.spectra_head)))
            print(f"results: {out}/results.csv")
            print(f"figures: {out}/spectra_vs_mh.png, {out}/error_vs_mh.png")
            print(f"summary: {out}/summary.md")
    return summary


def sweep_headline(res: pd.DataFrame, fit: dict, verdict: dict, layer: int, head: int) -> list[str]:
    """The two lines a sweep ends with: the training loss over m_h and its fit a/m_h^gamma + b; whether the
    spectra converged."""
    g = res.groupby("m_h").agg(loss=("train_loss_eval", "mean"), acc=("test_acc", "mean"))
    ms = g.index.tolist()
    if fit.get("ok"):
        law = (f"gamma = {fit['gamma']:.3f} +- {fit['gamma_se']:.3f}, b = {fit['b']:.3f} +- {fit['b_se']:.3f}"
               if fit["identified"] else "gamma and b not identified (a standard error exceeds its value)")
    else:
        law = f"not fitted ({fit.get('why')})"
    n_seeds = res.seed.nunique()
    return [f"m_h {ms[0]} -> {ms[-1]} ({len(ms)} values, {n_seeds} seed{'s' if n_seeds != 1 else ''}): training loss "
            f"{g.loss.iloc[0]:.4f} -> {g.loss.iloc[-1]:.4f}, test accuracy {g.acc.iloc[0]:.4f} -> {g.acc.iloc[-1]:.4f}; "
            f"fit a/m_h^gamma + b: {law}",
            f"spectra of layer {layer}, head {head}: {verdict['text']}"]


REDRAW_FILES = ("results.csv", "spectra.csv", "summary.json", "config.json")   # each looked up by table_path


def redraw(folder) -> list[Path]:
    """Draw a finished `sweep-mh` folder's two figures again from its tables (results.csv, spectra.csv.gz or an
    older folder's spectra.csv), the
    fit a/m_h^gamma + b its summary.json holds, and the probed layer and head and the seeds of its
    config.json, with the function the run uses (`plot_sweep`): each PNG at 200 dpi and a PDF beside it.
    Trains nothing, refits nothing, writes nothing else."""
    folder = Path(folder)
    missing = [n for n in REDRAW_FILES if not table_path(folder, n).is_file()]
    need(not missing, f"{folder}: no {', '.join(missing)} (not a finished vit-probe sweep-mh folder)")
    s = read_json(folder / "summary.json")
    cfg = read_json(folder / "config.json")
    res = pd.read_csv(folder / "results.csv").sort_values(["m_h", "seed"])
    spec = pd.read_csv(table_path(folder, "spectra.csv"))
    layer = cfg["spectra_layer"] % models.parse_arch(cfg["arch"]).depth
    plot_sweep(folder, res, spec, s["fit"], layer, cfg["spectra_head"], sweep_where(s["data"], len(cfg["seeds"])))
    return [folder / "spectra_vs_mh.png", folder / "error_vs_mh.png"]
