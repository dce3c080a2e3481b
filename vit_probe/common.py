"""What the three vit-probe experiments share: the shared data and checkpoint paths, the paper's
numbers, device and data checks, model loading, and the report.json writer.

Each experiment has its own module: `run_spectra.py` (Figs 2, 3a), `run_sweep_mh.py` (Fig. 3),
`run_permute.py` (Table 1, ViT column); `experiment.py` re-exports them for old imports.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from jackson.config import UsageError, need
from jackson.runfolder import SHARED_FILES, write_report

from . import data as cdata
from . import model_source, models

SHARED_DATA = SHARED_FILES["cifar10-jpeg-q75.tar.gz"]                 # where the README puts the shared files
SHARED_CKPT = SHARED_FILES["vit_p4_d128_l4_h4_cifar10_timm.pth"]
PAPER = {"gamma": 0.27, "b": 1.05, "acc_original": 0.98, "acc_altered": 0.96}


# ---------------------------------------------------------------- shared pieces

def _device(dev: str) -> str:
    if dev.startswith("cuda") and not torch.cuda.is_available():
        raise UsageError(f"--device {dev}: CUDA is not available on this machine")
    need(dev == "cpu" or dev.startswith("cuda"), f"--device: '{dev}' is not cpu, cuda or cuda:N")
    return dev


def _data_split(path: str, split: str, cache: str, download: bool) -> cdata.Cifar:
    return cdata.load(path or None, split, cache or None, download)


def load_model(model: str, pretrained: bool, checkpoint: str, arch: str, seed: int = 0,
               model_json: str = "", model_factory: str = ""):
    """(model, description, checkpoint check). One of `model` (a timm name), `arch` (a spec),
    `model_json` (a description file) or `model_factory` ('module:function') says which model it is
    (`vit_probe.model_source`); a checkpoint is checked against it, head count included where the
    file states it (`models.check_arch`)."""
    given = [o for o, v in (("--model", model), ("--arch", arch), ("--model-json", model_json),
                            ("--model-factory", model_factory)) if v]
    need(len(given) <= 1, f"give one of --model, --arch, --model-json or --model-factory, not {' and '.join(given)}")
    if pretrained and given and not model:
        raise UsageError(f"--pretrained goes with --model (timm's own weights), not with {given[0]}")
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
        need(bool(arch), "give --checkpoint PATH --arch SPEC, or --model TIMM_NAME [--pretrained], or --model-json FILE "
                         "or --model-factory module:function (each with an optional --checkpoint)")
        torch.manual_seed(seed)
        m = models.build(models.parse_arch(arch))
        desc = f"{arch} (random init, seed {seed})"
    check = ""
    if checkpoint:
        check = models.load_checkpoint(m, checkpoint, arch)
        desc = f"{model or arch} from {Path(checkpoint).name}"
    return m.eval(), desc, check


def _fmt(x, nd=3):
    return "nan" if x is None or not np.isfinite(x) else f"{x:.{nd}g}"


def _report_json(out: Path, **kw) -> None:
    write_report(out, kw, indent=2)


def _say_quick(cfg, progress: bool) -> None:
    if cfg.quick and progress:
        print(f"--quick: writing to {Path(cfg.out).resolve()}", flush=True)

