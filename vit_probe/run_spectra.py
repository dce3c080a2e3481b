"""vit-probe spectra (Figs 2, 3a): singular values of the attention logits of one model over N
images (stratified by class with a seed, `data.subset`); spectra.csv.gz, heads.csv, the violin and
grid figures, summary.md / .json and report.json in the run folder (the large tables gzip-compressed:
spectra.csv.gz, violin_samples.csv.gz, init_spectra.csv.gz; pandas reads them as they are)."""
from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from jackson.config import need
from jackson.runfolder import open_run, table_path, write_table
from jackson.schedule import torch_seeded

from . import data as cdata
from . import model_source, models, normalize, spectra
from .common import data_split, load_model, report_json, say_quick
from .configs import SpectraConfig, validate_spectra
from .probe import select
from jackson.config import read_json


def violin_title(mdesc: str, layer: int, head: int, where: str) -> str:
    return f"{mdesc}: layer {layer}, head {head}; {where}"


def control_title(mdesc: str, inits: int, where: str) -> str:
    return f"{mdesc} (colours) against the same architecture at {inits} random inits (grey); {where}"


def grid_title(mdesc: str, where: str) -> str:
    return f"{mdesc}: mean singular values of rho_hat(x) (5-95% band); {where}"


def trained(cfg: SpectraConfig) -> bool:
    """Whether the probed model carries trained weights (a checkpoint or timm's pretrained ones)."""
    return bool(cfg.checkpoint or cfg.pretrained)


def init_control(cfg: SpectraConfig, images: np.ndarray, layers: list[int], heads: list[int], rank_cap: int,
                 progress: bool, norm: normalize.Norm | None = None) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """The control of Fig. 2: the same architecture with random weights (init seeds 0..inits-1, no checkpoint),
    probed on the same images, layers and heads, with the same input normalisation.  (spectra table, head
    table, description), each table with an `init` column."""
    specs, tabs, desc = [], [], ""
    for k in range(cfg.inits):
        with torch_seeded(k):
            m0, desc, _ = load_model(cfg.model, False, "", cfg.arch, k, cfg.model_json, cfg.model_factory)
        m0.to(cfg.device)
        sv0 = spectra.collect(m0, images, layers, heads, cfg.batch, cfg.device, cfg.tokens, progress, norm)
        specs.append(spectra.spectrum_table(sv0, init=k))
        tabs.append(spectra.head_table(sv0, tuple(cfg.fit_range), rank_cap, init=k))
    return pd.concat(specs, ignore_index=True), pd.concat(tabs, ignore_index=True), desc


def control_lines(heads_tab: pd.DataFrame, init_heads: pd.DataFrame, n_inits: int, init_desc: str) -> list[str]:
    """summary.md's control section: what training changed, per layer."""
    k, n = int(heads_tab.steeper_than_init.sum()), len(heads_tab)
    lines = ["", f"Control: the same architecture at {n_inits} random init{'s' if n_inits != 1 else ''} (seeds 0.."
             f"{n_inits - 1}; {init_desc.split(' (')[0]} without the checkpoint), the same images, layers and heads. "
             f"{k} of {n} trained heads decay faster than every init head of their layer (the whole 95% interval below "
             "the init's steepest exponent).", "",
             "| layer | trained exponents | init exponents | trained erank | init erank |", "|---|---|---|---|---|"]
    for l, d in heads_tab.groupby("layer"):
        i0 = init_heads[init_heads.layer == l]
        lines.append(f"| {l} | {d.exponent.min():.2f} to {d.exponent.max():.2f} | {i0.exponent.min():.2f} to "
                     f"{i0.exponent.max():.2f} | {d.erank.min():.1f}-{d.erank.max():.1f} | "
                     f"{i0.erank.min():.1f}-{i0.erank.max():.1f} |")
    return lines


def normalisation(cfg: SpectraConfig, model) -> normalize.Norm:
    """The input normalisation the model is probed with: --normalize, else its description's "normalize"
    (--model-json), else the rule of every run before the option (`vit_probe/normalize.py`)."""
    described = model_source.read_description(cfg.model_json).get("normalize") if cfg.model_json else None
    choice, source = normalize.choose(cfg.normalize, described, f"--model-json {Path(cfg.model_json).name}")
    return spectra.model_norm(model, choice, source)


def run_spectra(cfg: SpectraConfig, command: str, progress: bool = True) -> dict:
    validate_spectra(cfg)
    model, mdesc, ckpt_check = load_model(cfg.model, cfg.pretrained, cfg.checkpoint, cfg.arch, cfg.seed,
                                          cfg.model_json, cfg.model_factory)
    norm = normalisation(cfg, model)
    attns = models.attention_modules(model)
    n_heads = min(a.num_heads for a in attns)          # heads every layer has
    layers = select(len(attns), cfg.layers, "layer", "--layers")
    heads = select(n_heads, cfg.heads, "head", "--heads")
    vl = select(len(attns), str(cfg.violin_layer), "layer", "--violin-layer")[0]
    vh = select(n_heads, str(cfg.violin_head), "head", "--violin-head")[0]
    split = data_split(cfg.data, cfg.split, cfg.cache, cfg.download, progress)
    pick = cdata.subset(split.labels, cfg.n_images, cfg.subset_seed)   # the split may be sorted by class
    # only the images probed are read from an archive; --check-accuracy reads them all
    images = split.images[pick] if cfg.check_accuracy else split.take(pick)
    say_quick(cfg, progress)
    model.to(cfg.device)
    out = Path(cfg.out)
    load = os.getloadavg()[0]
    t0 = time.time()
    probe_layers = sorted(set(layers) | {vl})
    probe_heads = sorted(set(heads) | {vh})
    sv = spectra.collect(model, images, probe_layers, probe_heads, cfg.batch, cfg.device, cfg.tokens, progress, norm)
    wall = time.time() - t0
    grid_sv = {k: v for k, v in sv.items() if k[0] in layers and k[1] in heads}
    spec = spectra.spectrum_table(grid_sv)
    rank_cap = max(models.qk_dim(attns[l]) for l in layers)
    heads_tab = spectra.head_table(grid_sv, tuple(cfg.fit_range), rank_cap)
    control = None
    if trained(cfg) and cfg.inits:
        if progress:
            print(f"control: the same architecture at {cfg.inits} random inits", flush=True)
        init_spec, init_heads, init_desc = init_control(cfg, images, layers, heads, rank_cap, progress, norm)
        heads_tab = spectra.compare_to_init(heads_tab, init_heads)
        control = {"inits": cfg.inits, "seeds": list(range(cfg.inits)), "model": init_desc,
                   "steeper_heads": int(heads_tab.steeper_than_init.sum()), "heads": len(heads_tab),
                   "init_exponent_min": float(init_heads.exponent.min()),
                   "init_exponent_max": float(init_heads.exponent.max())}
    acc = None
    if cfg.check_accuracy:
        acc = models.accuracy(model, split.images, split.labels, device=cfg.device, progress=progress,
                              desc="accuracy", norm=norm) if not cfg.model else None
    with open_run(out, "vit-probe spectra", command, dataclasses.asdict(cfg), device=cfg.device) as out:
        write_table(out, "spectra.csv", spec)
        heads_tab.to_csv(out / "heads.csv", index=False)
        vsv = sv[(vl, vh)]
        k = min(cfg.k_show, vsv.shape[1])
        write_table(out, "violin_samples.csv", pd.DataFrame({"image": np.repeat(np.arange(len(vsv)), k),
                                                              "i": np.tile(np.arange(1, k + 1), len(vsv)),
                                                              "sv": vsv[:, :k].ravel()}))
        where = f"{split.source}, {cfg.split} split, {cdata.describe_subset(split.labels, pick, cfg.subset_seed)}"
        spectra.plot_violin(vsv, cfg.k_show, violin_title(mdesc, vl, vh, where), out / "violin_first_head.png")
        spectra.plot_grid(spec, heads_tab, grid_title(mdesc, where), out / "spectra_grid.png")
        figures = [{"file": "violin_first_head.png",
                    "caption": f"Fig. 2 analogue: distribution over {len(images)} images of the first "
                               f"{min(cfg.k_show, vsv.shape[1])} singular values of the pre-softmax logit "
                               f"matrix of layer {vl}, head {vh}; {mdesc}; {split.source}."},
                   {"file": "spectra_grid.png",
                    "caption": f"Mean singular values (5-95% band over images) of every layer x head; "
                               f"titles give the fitted decay slope and effective rank; {split.source}."}]
        if control:
            write_table(out, "init_spectra.csv", init_spec)
            init_heads.to_csv(out / "init_heads.csv", index=False)
            spectra.plot_trained_vs_init(spec, init_spec, rank_cap, control_title(mdesc, cfg.inits, where),
                                         out / "trained_vs_init.png")
            figures.append({"file": "trained_vs_init.png",
                            "caption": f"The control: each trained head's mean spectrum (normalised by sigma_1) over "
                                       f"those of the same architecture at {cfg.inits} random inits (grey), same "
                                       f"images; {split.source}."})
        summary = {"trained": trained(cfg), "control": control,"model": mdesc, "data": split.source, "split": cfg.split, "n_images": len(images),
                   "tau": int(vsv.shape[1]), "rank_cap": int(rank_cap), "wall_s_spectra": wall, "accuracy": acc,
                   "violin": {"layer": vl, "head": vh}, "images": where,
                   "per_class": np.bincount(split.labels[pick], minlength=len(cdata.CLASSES)).tolist(),
                   "checkpoint_check": ckpt_check, "normalize": norm.as_dict()}
        (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        size = spectra.input_size(model)
        resized = f", resized to {size[0]}x{size[1]}" if tuple(size) != (32, 32) else ""
        lines = [f"# Attention-logit spectra: {mdesc}", "",
                 f"Data: {where}. Input: scaled to [0, 1]{resized}, then (x - mean) / std per channel with "
                 f"{norm.text()}. Logits rho_hat(x) = q k^T * scale before softmax, "
                 f"tau = {vsv.shape[1]} tokens ({cfg.tokens}); {len(images)} matrices per head.",
                 f"Each logit matrix has rank <= m_h = {rank_cap} (it is q k^T); singular values past that index are "
                 "round-off.", f"Spectra took {wall:.1f} s for {len(images)} images on {cfg.device} (1-minute load average "
                 f"{load:.1f} on {os.cpu_count()} cores at the start; timings: reports/benchmarks.md)."]
        if not trained(cfg):
            lines.append("The model is untrained (no checkpoint, no pretrained weights): this folder is a control, "
                         "not a test of Fig. 2.")
        if acc is not None:
            lines.append(f"Top-1 accuracy on the whole {cfg.split} split ({len(split)} images): {acc:.4f}.")
        if ckpt_check:
            lines.append(f"Checkpoint check: {ckpt_check}.")
        lines += ["", f"Decay exponent: slope of log mean sigma_i vs log i for i in {cfg.fit_range[0]}.."
                  f"{max(min(cfg.fit_range[1], vsv.shape[1], rank_cap), cfg.fit_range[0] + 1)} (95% bootstrap interval over images). erank = exp(entropy of "
                  "sigma / sum sigma); r90 = singular values holding 90% of sum sigma^2.", "",
                  "| layer | head | sigma_1 | exponent [95%] | erank | r90 |", "|---|---|---|---|---|---|"]
        for r in heads_tab.itertuples():
            lines.append(f"| {r.layer} | {r.head} | {r.sigma1:.3g} | {r.exponent:.2f} [{r.exponent_lo:.2f}, "
                         f"{r.exponent_hi:.2f}] | {r.erank:.1f} | {r.r90} |")
        if control:
            lines += control_lines(heads_tab, init_heads, cfg.inits, init_desc)
        lines += ["", "Figures: `violin_first_head.png` (Fig. 2), `spectra_grid.png` (layers x heads)"
                  + (", `trained_vs_init.png` (the control)" if control else "") + ". "
                  "Tables: `spectra.csv.gz`, `heads.csv`, `violin_samples.csv.gz`"
                  + (", `init_spectra.csv.gz`, `init_heads.csv` (the control)" if control else "") + "."]
        (out / "summary.md").write_text("\n".join(lines) + "\n")
        report_json(out, title=f"Attention-logit spectra of {mdesc}", section="vit_probe", data=where,
                     command=command, seeds=1,
                     figures=figures, paper=[], text="\n".join(lines[2:5]))
        if progress:
            head = (f"{mdesc}: {len(heads_tab)} heads, decay exponent {heads_tab.exponent.min():.2f} to "
                    f"{heads_tab.exponent.max():.2f} over {len(images)} images (input normalisation {norm.text()})")
            if control:
                head += (f"; {control['steeper_heads']} of {control['heads']} heads decay faster than at init "
                         f"(init: {control['init_exponent_min']:.2f} to {control['init_exponent_max']:.2f})")
            elif not trained(cfg):
                head += " (untrained: a control)"
            if acc is not None:
                head += f"; top-1 accuracy {acc:.4f} on the whole {cfg.split} split ({len(split)} images)"
            print(head)
            print("figures: " + ", ".join(str(out / f["file"]) for f in figures))
            print(f"summary: {out}/summary.md ({wall:.1f} s for the spectra)")
    return summary


REDRAW_FILES = ("spectra.csv", "heads.csv", "violin_samples.csv", "summary.json")   # each looked up by table_path


def redraw(folder) -> list[Path]:
    """Draw a finished `spectra` folder's figures again (the control's too, where it has one) from its tables (spectra.csv.gz, heads.csv,
    violin_samples.csv.gz: the violin's first k_show singular values per image; a folder written before they were
    compressed: spectra.csv, violin_samples.csv) and summary.json (the model,
    the images, the violin's layer and head), with the functions and titles the run uses: each PNG at 200
    dpi and a PDF beside it.  Loads no model and no data; writes nothing else."""
    folder = Path(folder)
    missing = [n for n in REDRAW_FILES if not table_path(folder, n).is_file()]
    need(not missing, f"{folder}: no {', '.join(missing)} (not a finished vit-probe spectra folder)")
    s = read_json(folder / "summary.json")
    spec, heads_tab = pd.read_csv(table_path(folder, "spectra.csv")), pd.read_csv(folder / "heads.csv")
    v = pd.read_csv(table_path(folder, "violin_samples.csv"))
    vsv = v.pivot(index="image", columns="i", values="sv").sort_index(axis=1).to_numpy()   # (images, k)
    paths = [folder / "violin_first_head.png", folder / "spectra_grid.png"]
    spectra.plot_violin(vsv, vsv.shape[1], violin_title(s["model"], s["violin"]["layer"], s["violin"]["head"],
                                                        s["images"]), paths[0])
    spectra.plot_grid(spec, heads_tab, grid_title(s["model"], s["images"]), paths[1])
    cap = s.get("rank_cap") or _stated_rank_cap(folder)          # folders written before summary.json held it
    if s.get("control") and table_path(folder, "init_spectra.csv").is_file() and cap:
        paths.append(folder / "trained_vs_init.png")
        spectra.plot_trained_vs_init(spec, pd.read_csv(table_path(folder, "init_spectra.csv")), cap,
                                     control_title(s["model"], s["control"]["inits"], s["images"]), paths[-1])
    return paths


def _stated_rank_cap(folder: Path) -> int | None:
    """The logit matrices' rank bound as the folder's summary.md states it (written by the same run)."""
    import re
    md = folder / "summary.md"
    m = re.search(r"rank <= m_h = (\d+)", md.read_text()) if md.is_file() else None
    return int(m.group(1)) if m else None
