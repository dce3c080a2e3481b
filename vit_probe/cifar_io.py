"""Reading CIFAR-10's files wherever they sit (a folder, or a member of an archive): the class names and the
file names of the two layouts, the restricted unpickler of the official batches (`CifarUnpickler`: arrays,
lists, dicts, bytes and strings, nothing that runs code), the image decoder, and what `data` and `archive`
share besides (cache stamps, atomic `.npz` writes, one-line errors)."""
from __future__ import annotations

import importlib
import os
import pickle
from pathlib import Path

import numpy as np

from jackson.config import UsageError

CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
OFFICIAL_TRAIN = tuple(f"data_batch_{i}" for i in range(1, 6))
OFFICIAL_TEST = "test_batch"
IMAGE_EXT = (".jpg", ".jpeg", ".png")


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


def batch_arrays(fh, where) -> tuple[np.ndarray, np.ndarray]:
    """(images (N, 32, 32, 3) uint8, labels (N,) int64) of one pickled CIFAR batch read from `fh`; `where`
    names it in errors."""
    try:
        d = CifarUnpickler(fh, where).load()
        data = np.asarray(d[b"data"], dtype=np.uint8)
        labels = np.asarray(d[b"labels"], dtype=np.int64)
    except UsageError:      # a refused global: already one line
        raise
    except Exception as e:  # corrupt pickle, wrong keys, truncated file
        raise UsageError(f"--data: {where} is not a readable CIFAR-10 batch ({one_line(e)})")
    if data.ndim != 2 or data.shape[1] != 3072 or len(labels) != len(data):
        raise UsageError(f"--data: {where} has data of shape {data.shape}, expected (N, 3072)")
    return data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1), labels


def sort_key(p: Path):
    return (0, int(p.stem), "") if p.stem.isdigit() else (1, 0, p.stem)


def decode_image(src, where) -> np.ndarray:
    """One image file (a path, or a file object holding an archive member's bytes) as (32, 32, 3) uint8 RGB."""
    from PIL import Image
    if isinstance(src, (str, os.PathLike)):
        from jackson.budget import regular_file
        regular_file(src, "--data")          # a FIFO among the images would block the open: refused first
    try:
        with Image.open(src) as im:
            a = np.asarray(im.convert("RGB"), dtype=np.uint8)
    except Exception as e:
        raise UsageError(f"--data: cannot decode {where} ({type(e).__name__})")
    if a.shape != (32, 32, 3):
        raise UsageError(f"--data: {where} is {a.shape[1]}x{a.shape[0]}, CIFAR-10 images are 32x32")
    return a


def one_line(e: BaseException) -> str:
    """An exception in one line: its type and the first non-blank line of its message, if any."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return f"{type(e).__name__}: {lines[0][:160]}" if lines else type(e).__name__


def stamp(p: Path) -> str:
    """What a cache of `p` is keyed by: its size and modification time in nanoseconds, so a file rewritten
    (even within the same second, or back to the same size) is read again."""
    st = p.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def content_stamp(p: Path) -> str:
    """What a cache of a file it decodes is keyed by: its size and the sha1 of its bytes (read whole: the files
    behind a cache are CIFAR-10's, at most a 30 MB batch, and hashing them costs a fraction of decoding them).
    A file replaced by another of the same size with its mtime kept (cp -p, rsync -a, tar x) gets another key.
    Anything but a regular file is never opened: it is keyed as what it is and the reader refuses it."""
    import hashlib
    import stat as stat_
    st = os.stat(p)
    if not stat_.S_ISREG(st.st_mode):
        return "not-a-regular-file"
    h = hashlib.sha1()
    with open(p, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return f"{st.st_size}:{h.hexdigest()}"


def save_npz(path: Path, compressed: bool = False, **arrays) -> None:
    """Written beside and renamed into place: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp{os.getpid()}.npz")
    (np.savez_compressed if compressed else np.savez)(tmp, **arrays)
    os.replace(tmp, path)
