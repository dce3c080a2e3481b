"""What the vit_probe test modules share: the tiny CIFAR-10 fixture in the official format (random
images; the fixtures `official` and `folder_tree` are in conftest.py), the tiny ViT, the shared files' paths, running the CLI."""
from __future__ import annotations

import tarfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch

from vit_probe import common, models
from vit_probe.configs import TrainConfig
from vit_probe.train import train
from conftest import one_line_exit

TINY = "vit_p8_d32_l2_h2"

SHARED = Path(__file__).resolve().parents[1] / common.SHARED_CKPT
SHARED_DATA = Path(__file__).resolve().parents[1] / common.SHARED_DATA


def _tar(src: Path, dest: Path, arcname: str) -> Path:
    with tarfile.open(dest, "w:gz") as tf:
        tf.add(src, arcname=arcname)
    return dest


def _tiny_train(ckpt=None, transform=None, seed=0):
    torch.manual_seed(seed)
    m = models.build(models.parse_arch(TINY))
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (96, 32, 32, 3), dtype=np.uint8)
    y = rng.integers(0, 10, 96)
    cfg = TrainConfig(epochs=2, n_train=96, batch_size=32, ckpt_every_s=0.0)
    hist = train(m, x, y, cfg, seed, ckpt, progress=False, transform=transform)
    return m, hist


def _main(args, capsys) -> SimpleNamespace:
    """vit-probe ARGS in-process, read as a finished process: returncode, stdout, stderr."""
    from vit_probe.cli import main
    capsys.readouterr()
    try:
        main(args)
        rc = 0
    except SystemExit as e:
        rc = e.code
    cap = capsys.readouterr()
    return SimpleNamespace(returncode=rc, stdout=cap.out, stderr=cap.err)


def _exit2(args: list[str], capsys) -> str:
    """Run vit-probe in-process; it must exit 2 with exactly one line on stderr, which is returned."""
    from vit_probe.cli import main
    return one_line_exit(main, args, capsys)
