"""vit_probe data: CIFAR-10 in every layout, the same images from each, clear errors, stratified
subsets of the class-sorted copy, the restricted unpickler on genuine batches."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from jackson.config import UsageError
from vit_probe import archive as varchive
from vit_probe import cifar_io
from vit_probe import data as cdata
from vit_probe import models
from vit_probe.configs import TrainConfig
from vit_probe.train import train
from vit_probe_helpers import TINY, _tar


# ---------------------------------------------------------------- data

def test_official_layout_reads_batches(official, tmp_path):
    tr = cdata.load(official, "train", cache=tmp_path)
    te = cdata.load(official, "test", cache=tmp_path)
    assert tr.images.shape == (60, 32, 32, 3) and tr.images.dtype == np.uint8
    assert te.images.shape == (10, 32, 32, 3)
    # independent decode of the first image of data_batch_1: CHW bytes -> HWC
    with open(official / "data_batch_1", "rb") as fh:
        d = pickle.load(fh, encoding="bytes")
    np.testing.assert_array_equal(tr.images[0], d[b"data"][0].reshape(3, 32, 32).transpose(1, 2, 0))
    assert list(tr.labels[:12]) == list(d[b"labels"])
    assert (tmp_path.glob("cifar10-*-train.npz"))          # decoded once, cached


def _by_class(c: cdata.Cifar):
    """Images grouped by label in order of appearance (the folder layout's order)."""
    return np.concatenate([c.images[c.labels == k] for k in range(10)]), np.sort(c.labels, kind="stable")


@pytest.mark.parametrize("kind", ["folder", "tar_folder", "tar_official"])
def test_every_layout_gives_the_same_data(kind, official, folder_tree, tmp_path, monkeypatch):
    ref = cdata.load(official, "test", cache=tmp_path / "ref")
    if kind == "folder":
        path = folder_tree
    elif kind == "tar_folder":
        path = _tar(folder_tree, tmp_path / "cifar-png.tar.gz", "cifar")
    else:
        path = _tar(official, tmp_path / "cifar-10-python.tar.gz", "cifar-10-batches-py")
    got = cdata.load(path, "test", cache=tmp_path / "cache")
    assert cdata.layout(path) == ("folder" if kind == "folder" else "archive")
    if kind == "tar_official":
        np.testing.assert_array_equal(got.images, ref.images)
        np.testing.assert_array_equal(got.labels, ref.labels)
    else:   # folder order is class by class
        gi, gl = _by_class(ref)
        np.testing.assert_array_equal(got.images, gi)
        np.testing.assert_array_equal(got.labels, gl)
    if kind.startswith("tar"):  # listed once: a second load reads the cached index, not the archive; nothing unpacked
        def no_listing(*a):
            raise AssertionError("listed the archive again")
        monkeypatch.setattr(varchive, "list_members", no_listing)
        assert len(cdata.load(path, "train", cache=tmp_path / "cache")) == 60
        assert [p for p in (tmp_path / "cache").iterdir() if p.is_dir()] == []


def test_bad_data_is_one_clear_error(tmp_path, official):
    with pytest.raises(UsageError, match="does not exist"):
        cdata.load(tmp_path / "nope", "test", cache=tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="is not CIFAR-10"):
        cdata.load(tmp_path / "empty", "test", cache=tmp_path)
    bad = tmp_path / "bad" / "cifar-10-batches-py"
    bad.mkdir(parents=True)
    for f in official.iterdir():
        (bad / f.name).write_bytes(f.read_bytes())
    (bad / "test_batch").write_bytes(b"\x80\x04garbage")
    with pytest.raises(UsageError, match="not a readable CIFAR-10 batch"):
        cdata.load(bad, "test", cache=tmp_path / "c2")
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(b"not a tar file at all")
    with pytest.raises(UsageError, match="cannot unpack"):
        cdata.load(broken, "test", cache=tmp_path / "c3")
    with pytest.raises(UsageError, match="--data is required"):
        cdata.load(None, "test", cache=tmp_path)


def test_jpeg_copy_is_named_as_such():
    assert cdata.describe(Path("cifar10-jpeg-q75.tar.gz")) == "CIFAR-10 (JPEG q75 copy)"


# ---------------------------------------------------------------- issue 14: subsets, hostile files, faults

def test_subset_is_balanced_over_a_class_sorted_label_vector():
    labels = np.repeat(np.arange(10), 50)                      # sorted by class, like the JPEG copy
    idx = cdata.subset(labels, 100, seed=0)
    assert np.bincount(labels[idx], minlength=10).tolist() == [10] * 10
    assert len(set(idx.tolist())) == 100 and np.all(np.diff(idx) > 0)   # distinct, sorted ascending
    assert np.array_equal(idx, cdata.subset(labels, 100, seed=0))      # same seed: same indices
    assert not np.array_equal(idx, cdata.subset(labels, 100, seed=1))  # another seed: others
    odd = cdata.subset(labels, 105, seed=0)
    assert len(odd) == 105 and set(np.bincount(labels[odd]).tolist()) == {10, 11}
    assert np.array_equal(cdata.subset(labels, 500, seed=3), np.arange(500))   # n >= N: everything
    assert np.array_equal(cdata.subset(labels, None, seed=3), np.arange(500))
    flat = cdata.subset(labels, 100, seed=0, stratified=False)
    assert len(set(flat.tolist())) == 100 and np.array_equal(flat, cdata.subset(labels, 100, 0, stratified=False))


def test_subset_fills_in_when_a_class_is_too_small():
    labels = np.concatenate([np.zeros(3, int), np.repeat(np.arange(1, 10), 40)])
    idx = cdata.subset(labels, 100, seed=0)
    per = np.bincount(labels[idx], minlength=10)
    assert len(idx) == 100 and per[0] == 3 and set(per[1:].tolist()) <= {10, 11} and per.sum() == 100


def test_training_subset_holds_every_class():
    """n_train below the split size: the images trained on are a stratified draw, not the first n
    (which would be 2 classes here).  Each image is a constant whose value encodes its label."""
    labels = np.repeat(np.arange(10), 10)                      # class-sorted
    images = np.repeat((labels * 20 + 10).astype(np.uint8)[:, None, None, None], 32, 1).repeat(32, 2).repeat(3, 3)
    seen = []

    def record(x):   # x: the normalised batch; undo channel 0's normalisation to read the label back
        v = (x[:, 0, 16, 16] * cdata.STD[0] + cdata.MEAN[0]) * 255
        seen.extend(((v - 10) / 20).round().long().tolist())
        return x
    torch.manual_seed(0)
    m = models.build(models.parse_arch(TINY))
    train(m, images, labels, TrainConfig(epochs=1, n_train=20, batch_size=10, augment=False), 0,
          progress=False, transform=record)
    assert sorted(seen) == sorted(list(range(10)) * 2)         # 2 of each class, as subset() draws them


def test_genuine_cifar_batches_load_through_the_restricted_unpickler(tmp_path):
    rng = np.random.default_rng(0)
    batch = {b"batch_label": b"testing batch 1 of 1", b"labels": [int(i % 10) for i in range(12)],
             b"data": rng.integers(0, 256, (12, 3072), dtype=np.uint8),
             b"filenames": [f"img_{i}.png".encode() for i in range(12)]}
    for protocol in range(0, pickle.HIGHEST_PROTOCOL + 1):
        path = tmp_path / f"b{protocol}"
        path.write_bytes(pickle.dumps(batch, protocol=protocol))
        got = cifar_io.read_batch(path)
        np.testing.assert_array_equal(got[b"data"], batch[b"data"])
        assert got[b"labels"] == batch[b"labels"] and got[b"filenames"] == batch[b"filenames"]
    # the official batches are Python 2 pickles naming numpy.core.multiarray (numpy 1.x's module path)
    old = pickle.dumps(batch, protocol=2).replace(b"numpy._core.multiarray", b"numpy.core.multiarray")
    assert b"numpy.core.multiarray" in old
    (tmp_path / "py2").write_bytes(old)
    np.testing.assert_array_equal(cifar_io.read_batch(tmp_path / "py2")[b"data"], batch[b"data"])


# ---------------------------------------------------------------- archives: only the images a run uses are read

def _counting_decoder(monkeypatch) -> list[str]:
    """Patch the image decoder to record what it decodes (its `where`: the member's name and the archive)."""
    seen, real = [], cifar_io.decode_image

    def decode(src, where):
        seen.append(str(where))
        return real(src, where)
    monkeypatch.setattr(cifar_io, "decode_image", decode)
    return seen


def _unpacked(tar: Path, dest: Path) -> Path:
    """The archive unpacked whole, as data.py did before it read members on demand: the reference."""
    import tarfile
    with tarfile.open(tar) as tf:
        tf.extractall(dest, filter="data")
    return dest


def test_an_archive_split_reads_only_the_images_taken(folder_tree, tmp_path, monkeypatch, capsys):
    """A subset of a .tar.gz of JPEG/PNG files: only its images are decoded, nothing is unpacked to disk, and
    the subset is the one the old path (unpack everything, read the folder) gave: same images, same order."""
    tar = _tar(folder_tree, tmp_path / "cifar-png.tar.gz", "cifar")
    ref = cdata.load(_unpacked(tar, tmp_path / "unpacked"), "test", cache=tmp_path / "ref")
    seen = _counting_decoder(monkeypatch)
    cache = tmp_path / "cache"
    te = cdata.load(tar, "test", cache=cache, progress=True)
    assert seen == []                                   # the labels come from the member list: nothing decoded
    np.testing.assert_array_equal(te.labels, ref.labels)
    pick = cdata.subset(te.labels, 4, seed=1)
    np.testing.assert_array_equal(pick, cdata.subset(ref.labels, 4, seed=1))
    np.testing.assert_array_equal(te.take(pick), ref.images[pick])
    assert len(seen) == 4 and all("cifar/test/" in w for w in seen), seen
    assert re.fullmatch(rf"read 4 of 10 test images from {re.escape(str(tar))} in \d+\.\d s\n", capsys.readouterr().out)
    assert [p for p in cache.iterdir() if p.is_dir()] == []          # nothing unpacked
    assert sorted(p.name.split("-", 2)[2] for p in cache.iterdir()) == \
        sorted(["index.npz", f"test-{__import__('hashlib').sha1(pick.tobytes()).hexdigest()[:10]}.npz"])
    seen.clear()                                        # the same subset again: from the cache, nothing decoded
    again = cdata.load(tar, "test", cache=cache)
    np.testing.assert_array_equal(again.take(pick), ref.images[pick])
    assert seen == []
    np.testing.assert_array_equal(again.subset(6, seed=2).images, ref.subset(6, seed=2).images)
    assert len(seen) == 6
    tr = cdata.load(tar, "train", cache=cache)          # the other split: from the index, nothing decoded yet
    assert len(seen) == 6 and len(tr) == 60


def test_the_selection_cache_keeps_the_most_recently_used(folder_tree, tmp_path):
    """Many different subsets do not grow the cache without end: a split keeps its KEEP_SELECTIONS most recently used
    selections (a cached one read again counts as used), the whole split's cache and the index."""
    from vit_probe.archive import KEEP_SELECTIONS
    tar = _tar(folder_tree, tmp_path / "cifar-png.tar.gz", "cifar")
    cache = tmp_path / "cache"
    te = cdata.load(tar, "test", cache=cache)
    sel = lambda i: cache.glob(f"cifar10-*-test-{__import__('hashlib').sha1(np.array([i]).tobytes()).hexdigest()[:10]}.npz")  # noqa: E731
    first = te.take(np.array([0]))
    for i in range(1, KEEP_SELECTIONS + 2):
        te.take(np.array([i]))
        if i == KEEP_SELECTIONS - 1:
            np.testing.assert_array_equal(te.take(np.array([0])), first)    # read again from the cache: used now
    full = te.take(np.arange(len(te)))
    kept = sorted(p.name.split("-", 3)[3] for p in cache.glob("cifar10-*-test-*.npz"))
    assert len(kept) == KEEP_SELECTIONS + 1 and "all.npz" in kept, kept
    assert list(sel(0)) and not list(sel(1)) and not list(sel(2))         # the two least recently used went
    assert list(cache.glob("cifar10-*-index.npz"))
    np.testing.assert_array_equal(full[[0]], first)


def test_a_later_read_extracts_only_the_members_it_needs_and_stops_after_the_last(folder_tree, tmp_path, monkeypatch):
    """With the archive's index cached, a new subset is read in one pass that extracts only its members and
    stops at the last of them (here: the first class of the training split, early in the archive)."""
    import tarfile
    tar = _tar(folder_tree, tmp_path / "cifar-png.tar.gz", "cifar")
    ref = cdata.load(_unpacked(tar, tmp_path / "unpacked"), "train", cache=tmp_path / "ref")
    cache = tmp_path / "cache"
    cdata.load(tar, "test", cache=cache)                # lists the archive: its index is cached
    tr = cdata.load(tar, "train", cache=cache)
    with tarfile.open(tar) as tf:
        names = [m.name for m in tf.getmembers()]
    extracted, headers = [], []
    real_extract, real_next = tarfile.TarFile.extractfile, tarfile.TarFile.next

    def extractfile(self, member):
        extracted.append(member.name)
        return real_extract(self, member)

    def next_(self):
        m = real_next(self)
        headers.append(m)
        return m
    monkeypatch.setattr(tarfile.TarFile, "extractfile", extractfile)
    monkeypatch.setattr(tarfile.TarFile, "next", next_)
    airplanes = np.flatnonzero(tr.labels == 0)[:3]
    np.testing.assert_array_equal(tr.take(airplanes), ref.images[airplanes])
    want = {f"cifar/train/airplane/{k:04d}.png" for k in range(3)}
    assert sorted(extracted) == sorted(want)
    assert len(headers) < len(names)                    # stopped before the end of the archive
    assert headers[-1] is not None and headers[-1].name == max(want, key=names.index)


def test_an_official_archive_reads_only_the_batches_of_the_split(official, tmp_path, monkeypatch):
    """cifar-10-python.tar.gz: the test split reads the test batch only (a later pass, with the index cached)."""
    import tarfile
    tar = _tar(official, tmp_path / "cifar-10-python.tar.gz", "cifar-10-batches-py")
    cache = tmp_path / "cache"
    cdata.load(tar, "train", cache=cache)               # builds the index
    extracted, real = [], tarfile.TarFile.extractfile
    monkeypatch.setattr(tarfile.TarFile, "extractfile", lambda self, m: extracted.append(m.name) or real(self, m))
    te = cdata.load(tar, "test", cache=cache)
    np.testing.assert_array_equal(te.take([3, 1]), cdata.load(official, "test", cache=tmp_path / "r").images[[3, 1]])
    assert extracted == ["cifar-10-batches-py/test_batch"]


def test_a_sweep_cell_reads_the_training_images_it_uses_and_the_test_split(folder_tree, tmp_path, monkeypatch):
    """vit-probe sweep-mh on an archive: a cell decodes its training draw and its evaluation images (not the
    whole training split) and every test image (it measures the test loss on all of them)."""
    from vit_probe import run_sweep_mh as S
    tar = _tar(folder_tree, tmp_path / "cifar-png.tar.gz", "cifar")
    seen = _counting_decoder(monkeypatch)
    tcfg = TrainConfig(epochs=1, n_train=20, batch_size=10, augment=False)
    cell = S.MhCell(f"{TINY}_q2", 0, tcfg, 10, 4, (2, 16), str(tar), str(tmp_path / "c"))
    (tmp_path / "cell").mkdir()
    cell.run(tmp_path / "cell", progress=False)
    labels = cdata.load(tar, "train", cache=tmp_path / "c").labels
    used = np.union1d(cdata.subset(labels, 20, 0), cdata.subset(labels, 10, 0))
    assert sum("/train/" in w for w in seen) == len(used) < 60
    assert sum("/test/" in w for w in seen) == 10
