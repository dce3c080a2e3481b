"""What the three vit-probe experiments share: the shared data and checkpoint paths, the paper's
numbers, reading a split of the data, model loading, and the report.json writer.

Each experiment has its own module: `run_spectra.py` (Figs 2, 3a), `run_sweep_mh.py` (Fig. 3),
`run_permute.py` (Table 1, ViT column); their settings and checks, without torch, are in `configs.py`.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from jackson.runfolder import SHARED_FILES, write_report

from . import data as cdata
from . import model_source, models
from .configs import check_model_choice

SHARED_DATA = SHARED_FILES["cifar10-jpeg-q75.tar.gz"]                 # where the README puts the shared files
SHARED_CKPT = SHARED_FILES["vit_p4_d128_l4_h4_cifar10_timm.pth"]
PAPER = {"gamma": 0.27, "b": 1.05, "acc_original": 0.98, "acc_altered": 0.96}


# ---------------------------------------------------------------- shared pieces

def data_split(path: str, split: str, cache: str, download: bool, progress: bool = False) -> cdata.Cifar:
    """A split of CIFAR-10 (`data.load`): from an archive, its images are read when taken, only those taken."""
    return cdata.load(path or None, split, cache or None, download, progress)


def train_draw(labels, n_train: int, seed: int) -> np.ndarray:
    """The indices of the images `train.train` trains on for this n_train and seed: its class-stratified
    draw (all of them when n_train >= the split).  Passing it those images alone trains on the same images
    in the same order, so only they need be read."""
    return cdata.subset(labels, min(n_train, len(labels)), seed)


def take_together(split: cdata.Cifar, *idxs) -> list[np.ndarray]:
    """split.take(i) for each index array i, their union read at once (one pass over an archive)."""
    used = np.unique(np.concatenate([np.asarray(i, dtype=np.int64) for i in idxs]))
    images = split.take(used)
    return [images[np.searchsorted(used, np.asarray(i, dtype=np.int64))] for i in idxs]


def load_model(model: str, pretrained: bool, checkpoint: str, arch: str, seed: int = 0,
               model_json: str = "", model_factory: str = ""):
    """(model, description, checkpoint check). One of `model` (a timm name), `arch` (a spec),
    `model_json` (a description file) or `model_factory` ('module:function') says which model it is
    (`vit_probe.model_source`); a checkpoint is checked against it, head count included where the
    file states it (`models.check_arch`)."""
    check_model_choice(model, pretrained, arch, model_json, model_factory)
    if model_json:
        d = model_source.read_description(model_json)
        if d["kind"] == "arch":
            return load_model("", False, checkpoint, d["arch"], seed)
        return model_source.load(d, checkpoint, seed)
    if model_factory:
        return model_source.load({"kind": "factory", "factory": model_factory}, checkpoint, seed, "--model-factory")
    if model:
        m = models.create_timm(model, pretrained)
        desc = f"timm {model}" + (" (timm pretrained weights)" if pretrained else " (random init)")
    else:
        torch.manual_seed(seed)
        m = models.build(models.parse_arch(arch))
        desc = f"{arch} (random init, seed {seed})"
    check = ""
    if checkpoint:
        check = models.load_checkpoint(m, checkpoint, arch)
        desc = f"{model or arch} from {Path(checkpoint).name}"
    return m.eval(), desc, check


def fmt(x, nd=3):
    return "nan" if x is None or not np.isfinite(x) else f"{x:.{nd}g}"


def report_json(out: Path, **kw) -> None:
    write_report(out, kw, indent=2)


def say_quick(cfg, progress: bool) -> None:
    if cfg.quick and progress:
        print(f"--quick: writing to {Path(cfg.out).resolve()}", flush=True)

