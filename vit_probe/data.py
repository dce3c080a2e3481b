"""CIFAR-10 from whatever a user has: the official python batches, an image-folder tree, a
.tar.gz of either, or (with internet) the official download.

Every layout is read into the same pair of arrays, cached once as `.npz` in a cache folder:

    images: (N, 32, 32, 3) uint8, RGB        labels: (N,) int64 in 0..9 (official class order)

Layouts:
- official: a folder `cifar-10-batches-py/` (or its parent) holding `data_batch_1..5` and
  `test_batch` (pickled dicts with b"data" (N, 3072) and b"labels").
- image folder: `train/<class>/*.{jpg,png}` and `test/<class>/*.{jpg,png}`, class folder names
  from CLASSES; files sorted by name (numeric names sort numerically).
- archive: a `.tar.gz`/`.tgz`/`.tar` of either, unpacked once into the cache folder.

`describe(spec)` names the data for reports: a JPEG tree is "CIFAR-10 (JPEG q75 copy)"-style
re-encoded data and every result on it says so.

Batches are unpickled by `CifarUnpickler`, which builds numpy arrays and nothing else: a crafted
batch file cannot run code.  Image-folder layouts are sorted by class, so no caller ever takes
"the first n" examples: every subset is `subset(labels, n, seed)`, balanced over classes.
"""
from __future__ import annotations

import hashlib
import importlib
import lzma
import os
import pickle
import re
import shutil
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from jackson.config import UsageError

CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
MEAN = (0.4914, 0.4822, 0.4465)   # CIFAR-10 channel means (the shared ViT was trained with these)
STD = (0.2470, 0.2435, 0.2616)
OFFICIAL_TRAIN = tuple(f"data_batch_{i}" for i in range(1, 6))
OFFICIAL_TEST = "test_batch"
IMAGE_EXT = (".jpg", ".jpeg", ".png")


@dataclass
class Cifar:
    """One split of CIFAR-10 in memory."""
    images: np.ndarray     # (N, 32, 32, 3) uint8
    labels: np.ndarray     # (N,) int64
    source: str            # human-readable description of where it came from

    def __len__(self) -> int:
        return len(self.labels)

    def subset(self, n: int | None, seed: int = 0) -> "Cifar":
        """n examples drawn stratified by class with `seed` (see `subset`); all when n is None or >= N."""
        if n is None or n >= len(self):
            return self
        idx = subset(self.labels, n, seed)
        return Cifar(self.images[idx], self.labels[idx], self.source)


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

REFUSE = "a CIFAR batch holds only arrays, lists, dicts, bytes and strings"


def _numpy_core(sub: str, name: str):
    """numpy's own reconstructor `name` from numpy._core.<sub> (numpy 2) or numpy.core.<sub> (1.x)."""
    for mod in (f"numpy._core.{sub}", f"numpy.core.{sub}"):
        try:
            return getattr(importlib.import_module(mod), name)
        except (ImportError, AttributeError):
            continue
    raise AttributeError(f"numpy has no {sub}.{name}")


# Every global a CIFAR batch needs (official batches: Python 2 pickles of a dict of arrays, lists,
# bytes; batches re-pickled by Python 3 at any protocol).  Lists, dicts, bytes and strings are
# pickle opcodes, not globals.  Anything else -- os.system, builtins.eval, ... -- is refused.
_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"): lambda: _numpy_core("multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"): lambda: _numpy_core("multiarray", "_reconstruct"),
    ("numpy.core.numeric", "_frombuffer"): lambda: _numpy_core("numeric", "_frombuffer"),   # protocol 5
    ("numpy._core.numeric", "_frombuffer"): lambda: _numpy_core("numeric", "_frombuffer"),
    ("numpy", "ndarray"): lambda: np.ndarray,
    ("numpy", "dtype"): lambda: np.dtype,
    ("_codecs", "encode"): lambda: __import__("codecs").encode,   # bytes in Python 3 protocol 0-2 pickles
}


class CifarUnpickler(pickle.Unpickler):
    """Unpickles arrays, lists, dicts, bytes and strings only; any other global is a UsageError."""

    def __init__(self, fh, path):
        super().__init__(fh, encoding="bytes")
        self.path = path

    def find_class(self, module, name):
        make = _ALLOWED.get((module, name))
        if make is None:
            raise UsageError(f"{self.path}: refusing to unpickle {module}.{name}; {REFUSE}")
        return make()


def read_batch(path: Path) -> dict:
    """One pickled CIFAR batch, read with `CifarUnpickler` (no code in the file runs)."""
    with open(path, "rb") as fh:
        return CifarUnpickler(fh, path).load()


def _read_official(root: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    names = OFFICIAL_TRAIN if split == "train" else (OFFICIAL_TEST,)
    xs, ys = [], []
    for name in names:
        try:
            d = read_batch(root / name)
            data = np.asarray(d[b"data"], dtype=np.uint8)
            labels = np.asarray(d[b"labels"], dtype=np.int64)
        except UsageError:      # a refused global: already one line
            raise
        except Exception as e:  # corrupt pickle, wrong keys, truncated file
            raise UsageError(f"--data: {root / name} is not a readable CIFAR-10 batch ({_one_line(e)})")
        if data.ndim != 2 or data.shape[1] != 3072 or len(labels) != len(data):
            raise UsageError(f"--data: {root / name} has data of shape {data.shape}, expected (N, 3072)")
        xs.append(data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
        ys.append(labels)
    return np.ascontiguousarray(np.concatenate(xs)), np.concatenate(ys)


def _sort_key(p: Path):
    return (0, int(p.stem), "") if p.stem.isdigit() else (1, 0, p.stem)


def _read_folder(root: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    from PIL import Image
    base = root / split
    present = sorted(p.name for p in base.iterdir() if p.is_dir())
    unknown = [c for c in present if c not in CLASSES]
    if unknown or not present:
        raise UsageError(f"--data: {base} must hold class folders named {', '.join(CLASSES)}; "
                         f"found {', '.join(unknown or present) or 'none'}")
    xs, ys = [], []
    for label, cls in enumerate(CLASSES):
        files = sorted((p for p in (base / cls).glob("*") if p.suffix.lower() in IMAGE_EXT), key=_sort_key) \
            if (base / cls).is_dir() else []
        for f in files:
            try:
                with Image.open(f) as im:
                    a = np.asarray(im.convert("RGB"), dtype=np.uint8)
            except Exception as e:
                raise UsageError(f"--data: cannot decode {f} ({type(e).__name__})")
            if a.shape != (32, 32, 3):
                raise UsageError(f"--data: {f} is {a.shape[1]}x{a.shape[0]}, CIFAR-10 images are 32x32")
            xs.append(a)
            ys.append(label)
    if not xs:
        raise UsageError(f"--data: no images under {base}")
    return np.stack(xs), np.asarray(ys, dtype=np.int64)


def _one_line(e: BaseException) -> str:
    """An exception in one line: its type and the first non-blank line of its message, if any."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return f"{type(e).__name__}: {lines[0][:160]}" if lines else type(e).__name__


def _stamp(p: Path) -> str:
    """What a cache of `p` is keyed by: its size and modification time in nanoseconds, so a file rewritten
    (even within the same second, or back to the same size) is read again."""
    st = p.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def _ends_cleanly(tf: tarfile.TarFile) -> bool:
    """Whether a tar archive whose members were all read ends with its end-of-archive marker (a zero block)
    right after the last member.  tarfile itself stops silently at a header cut short or damaged past the
    first member, taking the members before it for the whole archive."""
    tf.fileobj.seek(tf.offset)
    return tf.fileobj.read(tarfile.BLOCKSIZE) == tarfile.NUL * tarfile.BLOCKSIZE


def _unpack(archive: Path, cache: Path) -> Path:
    """Unpack once into cache/<name>-<digest>/, the digest keyed by the archive's path, size and mtime.

    Atomic: the archive is unpacked into a temporary folder renamed into place only when every member
    was read and the archive ended with its end-of-archive marker; an empty, unreadable, truncated or
    damaged archive is one line (UsageError) and leaves no unpacked folder behind."""
    digest = hashlib.sha1(f"{archive.resolve()}:{_stamp(archive)}".encode()).hexdigest()[:10]
    dest = cache / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', archive.name)}-{digest}"
    if dest.is_dir():
        return dest
    if archive.stat().st_size == 0:
        raise UsageError(f"--data: cannot unpack {archive}: it is empty (0 bytes); "
                         "give a .tar.gz, .tgz or .tar of CIFAR-10")
    try:
        tf = tarfile.open(archive)
    except tarfile.ReadError:
        raise UsageError(f"--data: cannot unpack {archive}: it is not a tar archive (plain, gzip, bzip2 or xz); "
                         "give a .tar.gz, .tgz or .tar of CIFAR-10") from None
    tmp = cache / f".tmp-{dest.name}-{os.getpid()}"
    try:
        with tf:
            cache.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(tmp, ignore_errors=True)
            tf.extractall(tmp, filter="data")
            complete, members = _ends_cleanly(tf), len(tf.members)
    except BaseException as e:
        shutil.rmtree(tmp, ignore_errors=True)
        # a damaged stream: tarfile's errors, a gzip/bzip2/xz stream cut short or corrupt (an OSError with
        # no errno); an OSError with one (disk full, permissions) is the machine's, not the archive's
        if isinstance(e, (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError)) or \
                (isinstance(e, OSError) and e.errno is None):
            raise UsageError(f"--data: cannot unpack {archive}: it is truncated or damaged ({_one_line(e)}); "
                             "nothing was cached, give a complete copy") from None
        raise
    if not complete:
        shutil.rmtree(tmp, ignore_errors=True)
        raise UsageError(f"--data: cannot unpack {archive}: it is truncated or damaged (it ends after {members} "
                         "entries without a tar's end-of-archive marker); nothing was cached, give a complete copy")
    try:
        os.replace(tmp, dest)
    except OSError:
        if not dest.is_dir():            # not another process unpacking the same archive first
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _fingerprint(path: Path, kind: str, split: str) -> str:
    """What the decoded `split` of CIFAR-10 at `path` depends on, for the .npz cache's key: the archive's
    size and mtime, the split's batch files' (official layout), or every file's of the split's class folders
    (image-folder tree).  A file changed in place is read again."""
    if kind == "archive":
        return _stamp(path)
    if kind == "official":
        root = _find_official(path)
        return ";".join(f"{n}:{_stamp(root / n)}" for n in (OFFICIAL_TRAIN if split == "train" else (OFFICIAL_TEST,)))
    base = _find_folder_tree(path) / split
    h = hashlib.sha1()
    for d in sorted(q for q in base.iterdir() if q.is_dir()):
        for f in sorted(os.scandir(d), key=lambda e: e.name):
            try:
                st = f.stat()
                h.update(f"{d.name}/{f.name}:{st.st_size}:{st.st_mtime_ns}\n".encode())
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
         download: bool = False) -> Cifar:
    """Split 'train' or 'test' of CIFAR-10 at `path` (any layout), decoded once and cached."""
    if split not in ("train", "test"):
        raise ValueError(split)
    cache = Path(cache) if cache else default_cache()
    if path is None or str(path) == "":
        if not download:
            raise UsageError("--data is required (or --download to fetch the official CIFAR-10)")
        return _download(cache, split)
    path = Path(path).expanduser()
    kind = layout(path)
    key = hashlib.sha1(f"{path.resolve()}:{kind}:{_fingerprint(path, kind, split)}".encode()).hexdigest()[:10]
    npz = cache / f"cifar10-{key}-{split}.npz"
    source = describe(path)
    if npz.is_file():
        try:
            with np.load(npz) as z:
                return Cifar(z["images"], z["labels"], source)
        except Exception:
            npz.unlink(missing_ok=True)   # a damaged cache is rebuilt
    root = _unpack(path, cache) if kind == "archive" else path
    if kind == "archive":
        inner = _find_official(root)
        kind, root = ("official", inner) if inner else ("folder", _find_folder_tree(root))
        if root is None:
            raise UsageError(f"--data: {path} does not contain CIFAR-10 (no batches, no train/ test/ tree)")
    if kind == "official":
        x, y = _read_official(_find_official(root), split)
    else:
        x, y = _read_folder(_find_folder_tree(root), split)
    cache.mkdir(parents=True, exist_ok=True)
    tmp = npz.with_suffix(f".tmp{os.getpid()}.npz")
    np.savez(tmp, images=x, labels=y)
    os.replace(tmp, npz)
    return Cifar(x, y, source)


def _download(cache: Path, split: str) -> Cifar:  # pragma: no cover - needs internet
    """The official dataset through torchvision (needs internet on first use)."""
    from torchvision.datasets import CIFAR10
    try:
        ds = CIFAR10(str(cache / "torchvision"), train=(split == "train"), download=True)
    except Exception as e:
        raise UsageError(f"--download: could not fetch CIFAR-10 ({type(e).__name__}: {e})")
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


def to_tensor(images: np.ndarray):
    """uint8 numpy (N, 32, 32, 3) -> normalised float32 (N, 3, 32, 32) torch tensor."""
    import torch
    return normalise(torch.from_numpy(np.ascontiguousarray(images)))


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
