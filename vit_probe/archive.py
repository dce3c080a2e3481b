"""CIFAR-10 from a .tar.gz / .tgz / .tar (of the official batches or of a train/ test/ image tree), reading
only the members a run uses; `data.load` hands an archive here.

A gzip (bzip2, xz) tar can only be read front to back.  The first use of an archive lists every member in one
pass, checking that it ends with its end-of-archive marker, and caches that list as an index: each split's
labels and, per image, the member holding it (the official layout's labels come from its batches, read in
the same pass).  The images a run uses (`Cifar.take`) are then read in one more pass that stops after the
last member it needs -- or, on that first use, kept from the listing pass itself -- and decoded in memory;
nothing is unpacked to disk.  The decoded images are cached as `.npz` per selection (a split's KEEP_SELECTIONS
most recently used, and the whole split's).  Every cache file is
keyed by `archive_key`: the archive's size, mtime and content hash.  A truncated or damaged archive is one
line (UsageError) and leaves nothing cached.
"""
from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import tarfile
import time
import zlib
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

import numpy as np

from jackson.config import UsageError
from jackson.progress import bar as progress_bar

from . import cifar_io as cio

ARCHIVE_FORMAT = "archive-index-v1"      # in every archive cache key: a new index layout is never read as an old one
KEEP_SELECTIONS = 8     # decoded selections of one split kept in the cache (the least recently used go first); "all" stays
_ZERO_BLOCK = tarfile.NUL * tarfile.BLOCKSIZE
_COMPRESSED = ((b"\x1f\x8b", lambda f: gzip.GzipFile(fileobj=f)), (b"BZh", bz2.BZ2File),
               (b"\xfd7zXZ\x00", lzma.LZMAFile))
_HASHES: dict[tuple, str] = {}           # (path, size, mtime_ns) -> sha1 of the content, per process


def _content_hash(p: Path) -> str:
    """sha1 of the file's bytes (once per process for a given path, size and mtime)."""
    st = p.stat()
    memo = (str(p.resolve()), st.st_size, st.st_mtime_ns)
    if memo not in _HASHES:
        h = hashlib.sha1()
        with open(p, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        _HASHES[memo] = h.hexdigest()
    return _HASHES[memo]


def archive_key(p: Path) -> str:
    """What every cache of an archive is keyed by: its size, mtime (ns) and the sha1 of its content."""
    return hashlib.sha1(f"{ARCHIVE_FORMAT}:{cio.stamp(p)}:{_content_hash(p)}".encode()).hexdigest()[:10]


class _LastRead:
    """A file object that remembers what its last read returned.  tarfile's last read is the header block at
    which it stopped: a whole zero block is the end-of-archive marker; anything else (a header cut short or
    damaged past the first member, where tarfile stops silently) is a truncated or damaged archive."""

    def __init__(self, f):
        self.f, self.last = f, b""

    def read(self, n=-1):
        self.last = self.f.read(n)
        return self.last

    def seek(self, pos, whence=0):
        return self.f.seek(pos, whence)

    def tell(self):
        return self.f.tell()


def _is_damage(e: BaseException) -> bool:
    """A damaged stream: tarfile's errors, a gzip/bzip2/xz stream cut short or corrupt (an OSError with no
    errno); an OSError with one (disk full, permissions) is the machine's, not the archive's."""
    return isinstance(e, (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError)) or \
        (isinstance(e, OSError) and e.errno is None)


def _damaged(archive: Path, why: str) -> UsageError:
    return UsageError(f"--data: cannot unpack {archive}: it is truncated or damaged ({why}); "
                      "nothing was cached, give a complete copy")


@contextmanager
def _refuse_damage(archive: Path):
    """Damage to the stream met inside the block (`_is_damage`) becomes one line naming the archive (UsageError)."""
    try:
        yield
    except UsageError:
        raise
    except BaseException as e:
        if _is_damage(e):
            raise _damaged(archive, cio.one_line(e)) from None
        raise


@contextmanager
def _open_tar(archive: Path):
    """(tarfile read front to back, its `_LastRead` stream, the raw file: its tell() is the compressed bytes read)."""
    with open(archive, "rb") as raw:
        head = raw.read(6)
        raw.seek(0)
        open_inner = next((f for magic, f in _COMPRESSED if head.startswith(magic)), None)
        inner = open_inner(raw) if open_inner else raw
        try:
            stream = _LastRead(inner)
            try:
                tf = tarfile.open(fileobj=stream, mode="r:")
            except tarfile.ReadError:
                raise UsageError(f"--data: cannot unpack {archive}: it is not a tar archive (plain, gzip, bzip2 or "
                                 "xz); give a .tar.gz, .tgz or .tar of CIFAR-10") from None
            except BaseException as e:
                if _is_damage(e):
                    raise _damaged(archive, cio.one_line(e)) from None
                raise
            yield tf, stream, raw
        finally:
            if inner is not raw:
                inner.close()


def _member_name(name: str) -> str | None:
    """A member's path as the index keeps it ('./a//b' -> 'a/b'); None for one that would land outside the
    folder it is unpacked into (an absolute path, '..')."""
    parts = [q for q in name.split("/") if q not in ("", ".")]
    if name.startswith("/") or not parts or ".." in parts:
        return None
    return "/".join(parts)


def list_members(archive: Path, keep, progress: bool) -> tuple[list[tuple[str | None, str]], dict[int, bytes]]:
    """One pass over the whole archive: (every member's (name, 'f' file | 'd' folder | 'o' other), in archive
    order; the bytes of the files `keep(name)` asks for, by position).  A truncated or damaged archive is one
    line (UsageError)."""
    entries, held = [], {}
    bar = progress_bar(archive.stat().st_size, f"listing {archive.name}", progress, unit="B", unit_scale=True)
    try:
        with _refuse_damage(archive), _open_tar(archive) as (tf, stream, raw):
            pos = 0
            for k, m in enumerate(tf):
                name = _member_name(m.name)
                kind = "f" if m.isreg() else "d" if m.isdir() else "o"
                entries.append((name, kind))
                if kind == "f" and name is not None and keep(name):
                    held[k] = tf.extractfile(m).read()
                now = raw.tell()
                bar.update(now - pos)
                pos = now
            complete = stream.last == _ZERO_BLOCK
    finally:
        bar.close()
    if not complete:
        raise _damaged(archive, f"it ends after {len(entries)} entries without a tar's end-of-archive marker")
    return entries, held


def read_members(archive: Path, wanted: set[int], progress: bool) -> dict[int, bytes]:
    """The bytes of the members at positions `wanted`, in one pass that stops after the last of them."""
    last, got = max(wanted), {}
    bar = progress_bar(last + 1, f"reading {archive.name}", progress, unit="entries")
    try:
        with _refuse_damage(archive), _open_tar(archive) as (tf, _, _raw):
            for k, m in enumerate(tf):
                bar.update(1)
                if k in wanted:
                    got[k] = tf.extractfile(m).read()
                if k >= last:
                    break
    finally:
        bar.close()
    if len(got) != len(wanted):
        raise _damaged(archive, f"{len(wanted) - len(got)} of the members its index names are missing")
    return got


def _join(*parts: str) -> str:
    return "/".join(p for p in parts if p)


def _parent(name: str) -> str:
    return name.rpartition("/")[0]


def _worth_keeping(name: str, split: str) -> bool:
    """Whether the listing pass keeps a member's bytes, before the layout is known: every official batch (their
    labels go into the index), and the image files that could be of `split` (a folder of that name above)."""
    base = name.rpartition("/")[2]
    if base in cio.OFFICIAL_TRAIN + (cio.OFFICIAL_TEST,):
        return True
    return PurePosixPath(base).suffix.lower() in cio.IMAGE_EXT and split in name.split("/")[:-1]


def build_index(archive: Path, entries: list[tuple[str | None, str]], held: dict[int, bytes]) -> dict:
    """The archive's index from its member list (and, for the official layout, its batches' labels): per split
    the labels, the members holding the images (names and positions in the archive), and for each image its
    member and its row in that member -- or the one-line error that split gives."""
    files, dirs = {}, set()
    for k, (name, kind) in enumerate(entries):
        if name is None:
            continue
        parts = name.split("/")
        dirs.update("/".join(parts[:i]) for i in range(1, len(parts)))
        if kind == "d":
            dirs.add(name)
        elif kind == "f":
            files[name] = k                     # a repeated name: the last copy, as unpacking would leave it
    ix = {"n_entries": np.int64(len(entries))}
    official = next((c for c in ("", "cifar-10-batches-py")
                     if all(_join(c, b) in files for b in cio.OFFICIAL_TRAIN + (cio.OFFICIAL_TEST,))), None)
    if official is not None:
        ix["layout"] = np.array("official")
        for split, batches in (("train", cio.OFFICIAL_TRAIN), ("test", (cio.OFFICIAL_TEST,))):
            names = [_join(official, b) for b in batches]
            try:
                labels = [cio.batch_arrays(io.BytesIO(held[files[n]]), f"{archive} ({n})")[1] for n in names]
            except UsageError as e:
                ix[f"{split}_error"] = np.array(str(e))
                continue
            _put_split(ix, split, names, [files[n] for n in names], np.concatenate(labels),
                       np.repeat(np.arange(len(names)), [len(y) for y in labels]),
                       np.concatenate([np.arange(len(y)) for y in labels]))
        return ix
    root = next((c for c in [""] + sorted(d for d in dirs if "/" not in d)
                 if _join(c, "train") in dirs and _join(c, "test") in dirs), None)
    if root is None:
        raise UsageError(f"--data: {archive} does not contain CIFAR-10 (no batches, no train/ test/ tree)")
    ix["layout"] = np.array("folder")
    in_dir = defaultdict(list)
    for name in files:
        in_dir[_parent(name)].append(name)
    for split in ("train", "test"):
        base = _join(root, split)
        present = sorted(d.rpartition("/")[2] for d in dirs if _parent(d) == base)
        unknown = [c for c in present if c not in cio.CLASSES]
        if unknown or not present:
            ix[f"{split}_error"] = np.array(
                f"--data: {base}/ in {archive} must hold class folders named {', '.join(cio.CLASSES)}; "
                f"found {', '.join(unknown or present) or 'none'}")
            continue
        names, labels = [], []
        for label, cls in enumerate(cio.CLASSES):
            mine = sorted((n for n in in_dir.get(_join(base, cls), ()) if PurePosixPath(n).suffix.lower() in cio.IMAGE_EXT),
                          key=lambda n: cio.sort_key(PurePosixPath(n)))     # as data._read_folder sorts a folder
            names += mine
            labels += [label] * len(mine)
        if not names:
            ix[f"{split}_error"] = np.array(f"--data: no images under {base}/ in {archive}")
            continue
        _put_split(ix, split, names, [files[n] for n in names], np.asarray(labels, dtype=np.int64),
                   np.arange(len(names)), np.zeros(len(names), dtype=np.int64))
    return ix


def _put_split(ix: dict, split: str, names, positions, labels, member, row) -> None:
    ix[f"{split}_names"] = np.asarray(names, dtype=str)         # the members holding the split's images
    ix[f"{split}_entries"] = np.asarray(positions, dtype=np.int64)   # their positions in the archive
    ix[f"{split}_labels"] = np.asarray(labels, dtype=np.int64)
    ix[f"{split}_member"] = np.asarray(member, dtype=np.int64)  # per image: which of those members
    ix[f"{split}_row"] = np.asarray(row, dtype=np.int64)        # per image: its row in it (a batch), else 0


def _read_npz(path: Path) -> dict | None:
    """A cache file's arrays, or None when it is missing or damaged (a damaged one is removed, and rebuilt)."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except Exception:
        path.unlink(missing_ok=True)
        return None


class ArchiveReader:
    """Reads images of one split of an archive on demand (`Cifar.take`): from the decoded-selection cache
    when this selection was read before, else the members that hold them -- kept from the listing pass, or
    read in one pass that stops after the last -- decoded in memory and cached."""

    def __init__(self, archive: Path, key: str, cache: Path, split: str, ix: dict, held: dict[int, bytes],
                 listing_s: float, progress: bool):
        self.archive, self.key, self.cache, self.split, self.progress = archive, key, cache, split, progress
        self.layout = str(ix["layout"])
        self.names, self.entries = ix[f"{split}_names"], ix[f"{split}_entries"]
        self.member, self.row, self.n = ix[f"{split}_member"], ix[f"{split}_row"], len(ix[f"{split}_labels"])
        wanted = set(self.entries.tolist())
        self.held = {k: v for k, v in held.items() if k in wanted}
        self.listing_s = listing_s      # the listing pass that kept `held`: counted in the first read's time

    def __call__(self, idx: np.ndarray) -> np.ndarray:
        t0 = time.perf_counter()
        idx = np.asarray(idx, dtype=np.int64)
        every = len(idx) == self.n and bool(np.all(idx == np.arange(self.n)))
        sel = "all" if every else hashlib.sha1(idx.tobytes()).hexdigest()[:10]
        npz = self.cache / f"cifar10-{self.key}-{self.split}-{sel}.npz"
        z = _read_npz(npz)
        if z is not None and np.array_equal(z.get("idx"), idx) and z["images"].shape == (len(idx), 32, 32, 3):
            npz.touch()                                  # used now: the last to go (`_prune`)
            self._say(len(idx), f"{npz} (cached from {self.archive})", time.perf_counter() - t0)
            return z["images"]
        members = np.unique(self.member[idx])
        positions = {int(self.entries[j]) for j in members}
        blobs = {k: self.held[k] for k in positions if k in self.held}
        if len(blobs) < len(positions):
            blobs.update(read_members(self.archive, positions - blobs.keys(), self.progress))
        images = np.empty((len(idx), 32, 32, 3), dtype=np.uint8)
        if self.layout == "official":
            for j in members:
                name = str(self.names[j])
                x, _ = cio.batch_arrays(io.BytesIO(blobs[int(self.entries[j])]), f"{self.archive} ({name})")
                at = self.member[idx] == j
                images[at] = x[self.row[idx[at]]]
        else:
            for i, j in enumerate(self.member[idx]):
                images[i] = cio.decode_image(io.BytesIO(blobs[int(self.entries[j])]),
                                              f"{self.names[j]} in {self.archive}")
        cio.save_npz(npz, idx=idx, images=images)
        self._prune()
        spent = time.perf_counter() - t0 + (self.listing_s if blobs.keys() & self.held.keys() else 0.0)
        self.listing_s = 0.0
        self._say(len(idx), str(self.archive), spent)
        return images

    def _prune(self) -> None:
        """Keep the KEEP_SELECTIONS most recently used decoded selections of this archive's split, so that a run of
        many different subsets does not grow the cache without end (each is 3 kB an image); the whole split's
        cache ("all") and the index stay.  Only this cache's own files go."""
        mine = [p for p in self.cache.glob(f"cifar10-{self.key}-{self.split}-*.npz") if not p.name.endswith("-all.npz")]
        mine.sort(key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in mine[KEEP_SELECTIONS:]:
            old.unlink(missing_ok=True)

    def _say(self, n: int, where: str, seconds: float) -> None:
        if self.progress:
            print(f"read {n:,} of {self.n:,} {self.split} images from {where} in {seconds:.1f} s", flush=True)


def load_split(archive: Path, split: str, cache: Path, progress: bool) -> tuple[np.ndarray, ArchiveReader]:
    """A split of a CIFAR-10 archive: its labels from the archive's index (built by one pass over the archive
    the first time, which also keeps this split's members' bytes for the first read), its images read on
    demand (`ArchiveReader`)."""
    if archive.stat().st_size == 0:
        raise UsageError(f"--data: cannot unpack {archive}: it is empty (0 bytes); "
                         "give a .tar.gz, .tgz or .tar of CIFAR-10")
    key = archive_key(archive)
    index = cache / f"cifar10-{key}-index.npz"
    ix, held, listing_s = _read_npz(index), {}, 0.0
    if ix is None:
        t0 = time.perf_counter()
        cache.mkdir(parents=True, exist_ok=True)
        entries, held = list_members(archive, lambda name: _worth_keeping(name, split), progress)
        ix = build_index(archive, entries, held)
        cio.save_npz(index, compressed=True, **ix)     # mostly member names
        listing_s = time.perf_counter() - t0
    if f"{split}_error" in ix:
        raise UsageError(str(ix[f"{split}_error"]))
    return ix[f"{split}_labels"], ArchiveReader(archive, key, cache, split, ix, held, listing_s, progress)
