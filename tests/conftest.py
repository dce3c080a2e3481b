"""Shared fixtures: tiny configs, single-threaded torch, the console script's path."""
from __future__ import annotations

import math
import os
import sys
from pathlib import Path

# The machine is small and shared: one BLAS / intra-op thread keeps the tiny problems fast
# (multi-threaded BLAS on a busy 2-core box is ~50x slower for 128x128 SVDs) and the results
# independent of the thread count.  Set before numpy / torch are first imported.
for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)
try:  # in case numpy was imported before this file (e.g. by a plugin)
    from threadpoolctl import threadpool_limits
    threadpool_limits(1)
except ImportError:  # pragma: no cover
    pass

from jackson.fit import FitConfig  # noqa: E402
from jackson.models import ModelConfig  # noqa: E402
from jackson.rate_sweep.cell import RateCell  # noqa: E402

TINY_MODEL = ModelConfig(n=8, d_v=8, width=16, activation="gelu")   # App. C's GELU class, as the fixtures were built
TINY_FIT = FitConfig(steps=12, batch_size=32, warmup=2, eval_every=4, eval_size=64)


def tiny_cell(**kw) -> RateCell:
    base = dict(alpha=1.5, rank=math.inf, seed=0, m_hs=(1, 2), tau=8, k_max=32,
                n_train=128, n_test=64, model=TINY_MODEL, fit=TINY_FIT)
    base.update(kw)
    return RateCell(**base)


@pytest.fixture
def make_cell():
    return tiny_cell


@pytest.fixture(scope="session")
def sweep_exe() -> Path:
    exe = Path(sys.executable).parent / "jackson-sweep"
    assert exe.exists(), f"console script not found next to {sys.executable}"
    return exe


@pytest.fixture(scope="session")
def sub_env() -> dict:
    """Environment for subprocesses: single-threaded math libraries (speed only)."""
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    return env


def assert_paper_figure(png: Path) -> None:
    """What jackson/figures.py promises for a figure an experiment wrote: a PNG at >= 200 dpi and a PDF
    beside it (same stem).  PNG stores pixels per metre (200 dpi -> 7874 ppm, read back as 199.9996
    dpi), hence the rounding."""
    from PIL import Image
    png = Path(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png
    with Image.open(png) as im:
        dpi = im.info.get("dpi")
    assert dpi is not None and min(round(d) for d in dpi) >= 200, (png, dpi)
    pdf = png.with_suffix(".pdf")
    assert pdf.is_file() and pdf.read_bytes()[:4] == b"%PDF", pdf


def assert_vector_pdf(pdf: Path) -> None:
    """A PDF drawn by matplotlib's PDF backend that holds no raster image (no /Subtype /Image XObject: no
    picture pasted in, every mark a path or text)."""
    data = Path(pdf).read_bytes()
    assert data[:4] == b"%PDF", pdf
    assert b"Matplotlib pdf backend" in data, pdf
    assert b"/Subtype /Image" not in data, f"{pdf} embeds a raster image"


def same_picture(a: Path, b: Path, max_share: float = 1e-3) -> bool:
    """Two PNGs show the same picture: equal size, and at most `max_share` of the pixels differ (the data of a
    redraw are read back from tables written with 7 significant digits: a line may move by a pixel)."""
    import numpy as np
    from PIL import Image
    with Image.open(a) as ia, Image.open(b) as ib:
        x, y = np.asarray(ia.convert("RGBA")), np.asarray(ib.convert("RGBA"))
    return x.shape == y.shape and float(np.mean(np.any(x != y, axis=-1))) <= max_share


def keep_figures(monkeypatch, module) -> dict:
    """The figures `module`'s plotting functions hand to jackson.figures.save, by file name: still saved as
    usual, and a closed figure keeps its artists, so a test can read what was drawn (lines, bands, legend)."""
    kept, real = {}, module.save

    def save(fig, path, **kw):
        kept[Path(path).name] = fig
        return real(fig, path, **kw)
    monkeypatch.setattr(module, "save", save)
    return kept


# ---- the tiny CIFAR-10 fixture of the vit_probe tests (tests/test_vit_probe_*.py) -------------------------

@pytest.fixture(scope="module")
def official(tmp_path_factory) -> Path:
    return _cifar().write_official_fixture(tmp_path_factory.mktemp("cifar"), n_train_per_batch=12, n_test=10)


@pytest.fixture(scope="module")
def folder_tree(official, tmp_path_factory) -> Path:
    """The same images as a train/<class>/NNNN.png tree (PNG: lossless, so arrays must match)."""
    from PIL import Image
    root = tmp_path_factory.mktemp("tree")
    for split in ("train", "test"):
        raw = _cifar().load(official, split, cache=root / "c0")
        counts = {}
        for img, lab in zip(raw.images, raw.labels):
            cls = _cifar().CLASSES[lab]
            k = counts.get(cls, 0)
            counts[cls] = k + 1
            d = root / "cifar" / split / cls
            d.mkdir(parents=True, exist_ok=True)
            Image.fromarray(img).save(d / f"{k:04d}.png")
    return root / "cifar"


def _cifar():
    from vit_probe import data
    return data


def reports_copy_ignore(*patterns):
    """shutil.copytree's ignore for a copy of reports/ that a report rebuilds from: checkpoints and the given
    patterns left out, and each cell folder kept empty (the ledger counts an unfinished grid's finished cells,
    never reads their files)."""
    import shutil
    from pathlib import Path
    base = shutil.ignore_patterns("checkpoints", "*.pt", *patterns)
    tracked = committed_paths()

    def ignore(folder, names):
        if tracked is not None:        # only what is committed: a folder a user's own run wrote under reports/ is not
            rel = Path(folder).resolve().relative_to(REPO)
            untracked = {n for n in names if (rel / n).as_posix() not in tracked}
        else:
            untracked = set()
        if Path(folder).parent.name == "cells":
            return set(names)
        return base(folder, names) | untracked
    return ignore


REPO = Path(__file__).resolve().parent.parent


def committed_paths():
    """Every committed path under reports/ and each folder above one (posix, relative to the repository), or None
    outside a git checkout (then a copy of reports/ takes everything there)."""
    return _committed()


def _committed():
    import subprocess
    if not (REPO / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "ls-files", "-z", "reports"], cwd=REPO, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    paths = set()
    for f in out.decode().split("\0"):
        if f:
            parts = f.split("/")
            paths.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    return paths


def one_line_exit(run, argv, capsys) -> str:
    """run(argv) (a command's main, in-process) exits 2 with exactly one line on stderr, which is returned."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        run(argv)
    assert e.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def ends_with_paths(stdout: str, n: int, expect=()) -> list[Path]:
    """A command's run ends with its headline and the paths it wrote: the paths named in the last `n` lines it
    printed ('label: PATH, PATH (note)' or 'label: what PATH, NAME': a bare NAME is beside the path before it),
    each of which must exist, `expect` among them; and what it printed holds no Python repr (a list shown as
    "['-', '-']") and no development-workflow word."""
    import re
    assert not re.search(r"\[['\"]|\[\]|\(\)", stdout), stdout
    assert not re.search(r"\b(issue|session)s?\b|#\d", stdout, re.I), stdout
    lines = [ln for ln in stdout.strip().splitlines() if ln.strip()][-n:]
    named = []
    for ln in lines:
        before = None
        for tok in ln.partition(": ")[2].split(", "):
            words = tok.split(" (")[0].split()
            if words and re.fullmatch(r"\S+\.(csv|csv\.gz|png|md|tex|json|txt)", words[-1]):
                path = Path(words[-1])
                path = before.parent / path if before is not None and len(path.parts) == 1 else path
                named.append(path)
                before = path
    assert named, lines
    missing = [p for p in named if not p.exists()]
    assert not missing, (missing, lines)
    resolved = {p.resolve() for p in named}
    assert not [e for e in expect if Path(e).resolve() not in resolved], (expect, lines)
    return named


# ---- the full-size checks: `python -m pytest tests` leaves them out, `-m full` runs them ---------------------------

FULL = "full"


def pytest_collection_modifyitems(config, items):
    """Tests marked `full` (the full-size form of a check the suite also runs small) are left out unless the -m
    expression names the marker (`python -m pytest tests -m full`, CI's second command): the README's test command
    stays within its time budget and still runs every check, small."""
    full = [it for it in items if it.get_closest_marker(FULL)]
    if FULL in (config.getoption("markexpr") or ""):
        return
    if full:
        config.hook.pytest_deselected(items=full)
        items[:] = [it for it in items if not it.get_closest_marker(FULL)]
    if _whole_suite(config):          # what tests/test_suite_count.py compares docs/shared.md with
        SESSION.update(suite=len(items), full=len(full))


SESSION: dict = {}      # the README command's counts, set only when this session is that command


def _whole_suite(config) -> bool:
    """This session collects what `python -m pytest tests` collects: the tests folder (or testpaths), no -k, -m,
    --deselect or last-failed selection."""
    opt = config.option
    if opt.keyword or opt.markexpr or getattr(opt, "deselect", None) or getattr(opt, "lf", False):
        return False
    here = Path(__file__).resolve().parent
    args = [Path(a.split("::")[0]).resolve() for a in config.args] or [here]
    return args == [here] and not any("::" in a for a in config.args)


def png(path: Path, rgb=(200, 30, 30)) -> bytes:
    """Write a valid 2x2 PNG (built by hand: signature, IHDR, IDAT, IEND) and return its bytes: the report tests'
    figures."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + bytes(rgb) * 2 for _ in range(2))
    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data
