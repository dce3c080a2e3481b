"""CIFAR-10 from whatever a user has: the official python batches, an image-folder tree, a
.tar.gz of either, or (with internet) the official download.

Every layout is read into the same pair of arrays, cached as `.npz` in a cache folder:

    images: (N, 32, 32, 3) uint8, RGB        labels: (N,) int64 in 0..9 (official class order)

Layouts:
- official: a folder `cifar-10-batches-py/` (or its parent) holding `data_batch_1..5` and
  `test_batch` (pickled dicts with b"data" (N, 3072) and b"labels").
- image folder: `train/<class>/*.{jpg,png}` and `test/<class>/*.{jpg,png}`, class folder names
  from CLASSES; files sorted by name (numeric names sort numerically).
- archive: a `.tar.gz`/`.tgz`/`.tar` of either, never unpacked to disk (`vit_probe/archive.py`): its member
  list gives a split's labels, and only the images a run uses are read and decoded (`Cifar.take`).

`describe(spec)` names the data for reports: a JPEG tree is "CIFAR-10 (JPEG q75 copy)"-style
re-encoded data and every result on it says so.

Batches are unpickled by `CifarUnpickler`, which builds numpy arrays and nothing else: a crafted
batch file cannot run code.  Image-folder layouts are sorted by class, so no caller ever takes
"the first n" examples: every subset is `subset(labels, n, seed)`, balanced over classes.
"""
from __future__ import annotations

import hashlib
import http.client
import os
import pickle
import re
import socket
import time
import urllib.error
import urllib.parse
from pathlib import Path

import numpy as np

from jackson.budget import regular_file
from jackson.config import UsageError

from .archive import load_split
from .normalize import CIFAR10
from .cifar_io import (CLASSES, IMAGE_EXT, OFFICIAL_TEST, OFFICIAL_TRAIN, batch_arrays, decode_image, save_npz,
                       sort_key, content_stamp)

MEAN, STD = CIFAR10   # CIFAR-10 channel means and stds (the shared ViT was trained with these; vit_probe/normalize.py)


class Cifar:
    """One split of CIFAR-10: its labels in memory, its images in memory or, for a split of an archive,
    read on demand: `take(idx)` reads and decodes only those images, `images` all of them (once)."""

    def __init__(self, images: np.ndarray | None, labels, source: str, reader=None):
        self._images = images          # (N, 32, 32, 3) uint8, or None until read
        self.labels = np.asarray(labels)   # (N,) int64
        self.source = source           # human-readable description of where it came from
        self._reader = reader          # idx -> (len(idx), 32, 32, 3) uint8, for a split read from an archive

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def images(self) -> np.ndarray:
        """Every image of the split (read from an archive the first time they are asked for)."""
        if self._images is None:
            self._images = self._reader(np.arange(len(self.labels)))
        return self._images

    def take(self, idx) -> np.ndarray:
        """The images at indices `idx`, in that order; from an archive only these are read and decoded."""
        idx = np.asarray(idx, dtype=np.int64)
        return self._images[idx] if self._images is not None else self._reader(idx)

    def subset(self, n: int | None, seed: int = 0) -> "Cifar":
        """n examples drawn stratified by class with `seed` (see `subset`); all when n is None or >= N."""
        if n is None or n >= len(self):
            return self
        idx = subset(self.labels, n, seed)
        return Cifar(self.take(idx), self.labels[idx], self.source)


# ---------------------------------------------------------------- subsets

def subset(labels, n: int | None, seed: int, stratified: bool = True) -> np.ndarray:
    """Indices of n examples, sorted ascending (the data keep their order; training shuffles anyway).

    Never "the first n": folder layouts (and the shared JPEG copy) are sorted by class, where the
    first 1,000 test images are all airplanes.  stratified=True draws as evenly over the classes
    present as their sizes allow (n = 100 from 10 classes: 10 of each; the n mod K leftover
    examples go to classes picked at random; a class too small gives all it has and the others
    fill in); inside each class the examples are a uniform draw.  stratified=False: a uniform
    draw without replacement.  Deterministic for a seed; all indices when n is None or >= N.
    """
    labels = np.asarray(labels)
    N = len(labels)
    if n is None or n >= N:
        return np.arange(N)
    if n < 0:
        raise ValueError(f"subset size must be >= 0, got {n}")
    rng = np.random.default_rng(seed)
    if not stratified:
        return np.sort(rng.choice(N, size=n, replace=False))
    classes, counts = np.unique(labels, return_counts=True)
    take = np.zeros(len(classes), dtype=np.int64)
    left = n
    while left > 0:                      # water-filling: at most K + 1 rounds
        room = counts - take
        open_ = np.flatnonzero(room > 0)
        share = left // len(open_)
        if share == 0:                   # fewer examples left than open classes: one each to random classes
            take[rng.permutation(open_)[:left]] += 1
            break
        add = np.minimum(room[open_], share)
        take[open_] += add
        left -= int(add.sum())
    picks = [rng.permutation(np.flatnonzero(labels == c))[:k] for c, k in zip(classes, take)]
    return np.sort(np.concatenate(picks))


def describe_subset(labels, idx: np.ndarray, seed: int) -> str:
    """How reports name a subset: 'all 10000 images' or '1000 of 10000 images, stratified by class
    (100 per class, seed 0)'."""
    labels = np.asarray(labels)
    if len(idx) == len(labels):
        return f"all {len(labels)} images"
    per = np.unique(labels[idx], return_counts=True)[1]
    each = f"{per[0]} per class" if per.min() == per.max() else f"{per.min()}-{per.max()} per class"
    return f"{len(idx)} of {len(labels)} images, stratified by class ({each}, seed {seed})"


def default_cache() -> Path:
    return Path(os.environ.get("JACKSON_CACHE", Path.home() / ".cache" / "jackson-lab"))


# ---------------------------------------------------------------- layout detection

def _find_official(root: Path) -> Path | None:
    for cand in (root, root / "cifar-10-batches-py"):
        if (cand / OFFICIAL_TEST).is_file() and all((cand / b).is_file() for b in OFFICIAL_TRAIN):
            return cand
    return None


def _find_folder_tree(root: Path) -> Path | None:
    for cand in [root] + sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        if (cand / "train").is_dir() and (cand / "test").is_dir():
            return cand
    return None


def _is_archive(p: Path) -> bool:
    return p.is_file() and (p.name.endswith((".tar.gz", ".tgz", ".tar")))


def layout(path: Path) -> str:
    """'official', 'folder' or 'archive'; UsageError when it is none of them."""
    path = Path(path)
    if not path.exists():
        raise UsageError(f"--data: {path} does not exist (give the cifar-10-batches-py folder, "
                         "a train/ test/ image-folder tree, a .tar.gz of either, or --download)")
    if _is_archive(path):
        return "archive"
    if path.is_dir() and _find_official(path):
        return "official"
    if path.is_dir() and _find_folder_tree(path):
        return "folder"
    raise UsageError(f"--data: {path} is not CIFAR-10: expected data_batch_1..5 + test_batch, "
                     "train/<class>/ + test/<class>/ image folders, or a .tar.gz of either")


# ---------------------------------------------------------------- readers

def _read_official(root: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    names = OFFICIAL_TRAIN if split == "train" else (OFFICIAL_TEST,)
    xs, ys = [], []
    for name in names:
        regular_file(root / name, "--data")
        with open(root / name, "rb") as fh:
            x, y = batch_arrays(fh, root / name)
        xs.append(x)
        ys.append(y)
    return np.ascontiguousarray(np.concatenate(xs)), np.concatenate(ys)


def _read_folder(root: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    base = root / split
    present = sorted(p.name for p in base.iterdir() if p.is_dir())
    unknown = [c for c in present if c not in CLASSES]
    if unknown or not present:
        raise UsageError(f"--data: {base} must hold class folders named {', '.join(CLASSES)}; "
                         f"found {', '.join(unknown or present) or 'none'}")
    xs, ys = [], []
    for label, cls in enumerate(CLASSES):
        files = sorted((p for p in (base / cls).glob("*") if p.suffix.lower() in IMAGE_EXT), key=sort_key) \
            if (base / cls).is_dir() else []
        for f in files:
            xs.append(decode_image(f, f))
            ys.append(label)
    if not xs:
        raise UsageError(f"--data: no images under {base}")
    return np.stack(xs), np.asarray(ys, dtype=np.int64)


def _fingerprint(path: Path, kind: str, split: str) -> str:
    """What the decoded `split` of CIFAR-10 at `path` (a folder) depends on, for the .npz cache's key: the content
    (`cifar_io.content_stamp`: size and sha1 of the bytes) of the split's batch files (official layout), or of
    every file of the split's class folders (image-folder tree).  A file replaced in place is read again, even
    with its size and mtime kept (cp -p, rsync -a, tar x).  (Archives: `_archive_key`.)"""
    if kind == "official":
        root = _find_official(path)
        return ";".join(f"{n}:{content_stamp(root / n)}" for n in (OFFICIAL_TRAIN if split == "train" else (OFFICIAL_TEST,)))
    base = _find_folder_tree(path) / split
    h = hashlib.sha1()
    for d in sorted(q for q in base.iterdir() if q.is_dir()):
        for f in sorted(os.scandir(d), key=lambda e: e.name):
            try:
                h.update(f"{d.name}/{f.name}:{content_stamp(Path(f.path))}\n".encode())
            except OSError:              # a dangling link: the decoder names it
                h.update(f"{d.name}/{f.name}:unreadable\n".encode())
    return h.hexdigest()


def describe(path: Path) -> str:
    """How reports name the data: a JPEG copy says so ("CIFAR-10 (JPEG q75 copy)")."""
    name = Path(path).name.lower()
    if "jpeg" in name or "jpg" in name:
        q = re.search(r"q(\d+)", name)
        return f"CIFAR-10 (JPEG q{q.group(1)} copy)" if q else "CIFAR-10 (JPEG copy)"
    if Path(path).is_dir() and _find_official(Path(path)):
        return f"CIFAR-10 (official python batches, {Path(path).name})"
    return f"CIFAR-10 ({Path(path).name})"


def load(path: str | os.PathLike | None, split: str, cache: str | os.PathLike | None = None,
         download: bool = False, progress: bool = False) -> Cifar:
    """Split 'train' or 'test' of CIFAR-10 at `path` (any layout).  A folder's split is decoded whole, once,
    and cached; an archive's images are read on demand, only those asked for (`Cifar.take`).  progress:
    a bar while an archive is read, and a line saying how many images were read from where."""
    if split not in ("train", "test"):
        raise ValueError(split)
    cache = Path(cache) if cache else default_cache()
    if path is None or str(path) == "":
        if not download:
            raise UsageError("--data is required (or --download to fetch the official CIFAR-10)")
        return _download(cache, split)
    path = Path(path).expanduser()
    kind = layout(path)
    source = describe(path)
    if kind == "archive":
        labels, reader = load_split(path, split, cache, progress)
        return Cifar(None, labels, source, reader)
    key = hashlib.sha1(f"{path.resolve()}:{kind}:{_fingerprint(path, kind, split)}".encode()).hexdigest()[:10]
    npz = cache / f"cifar10-{key}-{split}.npz"
    if npz.is_file():
        try:
            with np.load(npz) as z:
                return Cifar(z["images"], z["labels"], source)
        except Exception:
            npz.unlink(missing_ok=True)   # a damaged cache is rebuilt
    if kind == "official":
        x, y = _read_official(_find_official(path), split)
    else:
        x, y = _read_folder(_find_folder_tree(path), split)
    save_npz(npz, images=x, labels=y)
    return Cifar(x, y, source)


OFFICIAL_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"   # what torchvision's CIFAR10 fetches
DOWNLOAD_TIMEOUT_S = 60.0   # the longest one network wait of --download may take (a connect, or one read)


def fetch_official(root: str, train: bool):
    """torchvision's CIFAR10 split under root, downloaded there first when it is not (needs internet)."""
    from torchvision.datasets import CIFAR10
    return CIFAR10(root, train=train, download=True)


def _download(cache: Path, split: str, timeout: float = DOWNLOAD_TIMEOUT_S) -> Cifar:
    """The official dataset through torchvision (`fetch_official`).  Every network wait is bounded: the
    process's default socket timeout is `timeout` seconds during the call (torchvision's urlopen takes it)
    and restored after; a wait that runs out, or a connection that fails, is one line naming the host, the
    URL and the seconds waited."""
    host = urllib.parse.urlparse(OFFICIAL_URL).hostname
    before = socket.getdefaulttimeout()
    t0 = time.monotonic()
    socket.setdefaulttimeout(timeout)
    try:
        ds = fetch_official(str(cache / "torchvision"), split == "train")
    except Exception as e:
        waited = time.monotonic() - t0
        why = e.reason if isinstance(e, urllib.error.URLError) and not isinstance(e, urllib.error.HTTPError) else e
        if isinstance(why, TimeoutError):     # socket.timeout is TimeoutError
            raise UsageError(f"--download: no answer from {host} within {timeout:g} s ({OFFICIAL_URL}; waited "
                             f"{waited:.1f} s in all); check the internet connection or proxy, or give --data with "
                             "a local copy") from None
        if isinstance(e, urllib.error.HTTPError):
            raise UsageError(f"--download: {host} answered HTTP {e.code} ({e.reason}) for {OFFICIAL_URL} after "
                             f"{waited:.1f} s; try again later, or give --data with a local copy") from None
        if isinstance(why, (OSError, http.client.HTTPException)) and not getattr(why, "filename", None):
            raise UsageError(f"--download: cannot reach {host} ({OFFICIAL_URL}) after {waited:.1f} s "
                             f"({type(why).__name__}: {str(why).splitlines()[0][:160] if str(why) else ''}); check "
                             "the internet connection or proxy, or give --data with a local copy") from None
        first = str(e).splitlines()[0] if str(e) else ""
        raise UsageError(f"--download: could not fetch CIFAR-10 ({type(e).__name__}: {first})") from None
    finally:
        socket.setdefaulttimeout(before)
    return Cifar(np.asarray(ds.data, dtype=np.uint8), np.asarray(ds.targets, dtype=np.int64),
                 "CIFAR-10 (official, torchvision download)")


def normalise(images_u8, size: tuple[int, int] = (32, 32), mean=MEAN, std=STD):
    """uint8 (B, 32, 32, 3) torch tensor -> float (B, 3, H, W): scaled to [0, 1], resized
    (bilinear) when `size` is not 32x32, then standardised per channel with mean/std."""
    import torch
    import torch.nn.functional as F
    x = images_u8.permute(0, 3, 1, 2).float().div_(255.0)
    if tuple(size) != (32, 32):
        x = F.interpolate(x, size=tuple(size), mode="bilinear", align_corners=False)
    mean = torch.tensor(mean, device=x.device).view(1, 3, 1, 1)
    std = torch.tensor(std, device=x.device).view(1, 3, 1, 1)
    return (x - mean) / std


def to_tensor(images: np.ndarray, mean=MEAN, std=STD):
    """uint8 numpy (N, 32, 32, 3) -> normalised float32 (N, 3, 32, 32) torch tensor."""
    import torch
    return normalise(torch.from_numpy(np.ascontiguousarray(images)), (32, 32), mean, std)


def write_official_fixture(root: Path, n_train_per_batch: int = 20, n_test: int = 20, seed: int = 0) -> Path:
    """A tiny dataset in the official pickle layout (random images, balanced labels): for tests
    and offline smoke runs.  Returns the `cifar-10-batches-py` folder."""
    rng = np.random.default_rng(seed)
    out = Path(root) / "cifar-10-batches-py"
    out.mkdir(parents=True, exist_ok=True)
    for name, n in [(b, n_train_per_batch) for b in OFFICIAL_TRAIN] + [(OFFICIAL_TEST, n_test)]:
        labels = [int(i % 10) for i in range(n)]
        data = rng.integers(0, 256, (n, 3072), dtype=np.uint8)
        with open(out / name, "wb") as fh:
            pickle.dump({b"data": data, b"labels": labels, b"batch_label": name.encode()}, fh)
    return out
