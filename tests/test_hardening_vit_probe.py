"""vit-probe refuses broken inputs in one line: checkpoints that are empty, not real floating point where the model
is, or hold nan / inf weights; CIFAR archives that are empty, not tar, truncated or damaged (nothing cached);
the decode cache follows the archive's content."""
from __future__ import annotations

import os
import tarfile
from pathlib import Path

import numpy as np
import pytest
import torch

from jackson.config import UsageError
from vit_probe import data as cdata
from vit_probe import models
from vit_probe_helpers import TINY, _exit2


def _weights(path: Path, convert=None, poison=None) -> Path:
    """The tiny ViT's state dict, each tensor through `convert`; `poison` = (key, value) written into one entry."""
    torch.manual_seed(0)
    sd = models.build(models.parse_arch(TINY)).state_dict()
    if convert is not None:
        sd = {k: convert(v) for k, v in sd.items()}
    if poison is not None:
        key, value = poison
        sd[key] = sd[key].clone()
        sd[key].view(-1)[3] = value
    torch.save(sd, path)
    return path


def _spectra(ck: Path, tmp: Path, official: Path, capsys) -> str:
    return _exit2(["spectra", "--checkpoint", str(ck), "--arch", TINY, "--data", str(official),
                   "--cache", str(tmp / "c"), "--out", str(tmp / "o")], capsys)


# ---------------------------------------------------------------- checkpoints

def test_an_empty_checkpoint_is_one_line(tmp_path, official, capsys):
    ck = tmp_path / "empty.pth"
    ck.write_bytes(b"")
    line = _spectra(ck, tmp_path, official, capsys)
    assert f"--checkpoint: {ck} is empty (0 bytes)" in line, line
    assert not (tmp_path / "o").exists() and not (tmp_path / "c").exists()


def test_an_unreadable_checkpoint_with_a_blank_message_is_one_line(tmp_path):
    """A reader error whose message is empty or blank still makes one line (the type names it)."""
    assert models._why(EOFError()) == "EOFError"
    assert models._why(ValueError("\n  \nsecond")) == "ValueError: second"
    ck = tmp_path / "cut.pth"
    ck.write_bytes(b"\x80\x02")                      # a pickle cut after its protocol opcode
    with pytest.raises(UsageError, match=r"--checkpoint: cannot read .*cut\.pth as weights \(") as e:
        models.read_checkpoint(ck)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("dtype", [torch.int8, torch.int64, torch.bool])
def test_an_integer_or_bool_checkpoint_is_refused_not_cast(dtype, tmp_path, official, capsys):
    ck = _weights(tmp_path / f"w_{str(dtype)[6:]}.pth", lambda v: v.to(dtype))
    line = _spectra(ck, tmp_path, official, capsys)
    assert (f"--checkpoint: {ck}: tensor cls_token is {str(dtype)[6:]} where the model's is float32; give "
            "floating-point weights (vit-probe does not cast a checkpoint)") in line, line
    assert not (tmp_path / "o").exists() and not (tmp_path / "c").exists()


def test_a_complex_checkpoint_is_refused(tmp_path, official, capsys):
    ck = _weights(tmp_path / "w_c64.pth", lambda v: v.to(torch.complex64))
    line = _spectra(ck, tmp_path, official, capsys)
    assert f"--checkpoint: {ck}: tensor cls_token is complex64, not real floating point or integer" in line, line
    assert not (tmp_path / "o").exists()


def test_half_precision_weights_still_load():
    """float16 / bfloat16 are real floating point: loaded (and converted by torch) as before."""
    torch.manual_seed(0)
    m = models.build(models.parse_arch(TINY))
    sd = {k: v.to(torch.bfloat16) for k, v in m.state_dict().items()}
    models.load_weights(models.build(models.parse_arch(TINY)), sd)


@pytest.mark.parametrize("value, what", [(float("nan"), "nan"), (float("inf"), "inf"), (float("-inf"), "-inf")])
def test_non_finite_weights_name_the_file_and_the_first_bad_tensor(value, what, tmp_path, official, capsys):
    ck = _weights(tmp_path / f"w_{what}.pth", poison=("blocks.0.attn.qkv.weight", value))
    line = _spectra(ck, tmp_path, official, capsys)
    assert (f"--checkpoint: {ck}: tensor blocks.0.attn.qkv.weight holds non-finite values (1 of 3072 are nan or inf)"
            in line), line
    assert not (tmp_path / "o").exists() and not (tmp_path / "c").exists()


def test_non_finite_safetensors_are_refused_too(tmp_path):
    from safetensors.torch import save_file
    torch.manual_seed(0)
    sd = models.build(models.parse_arch(TINY)).state_dict()
    sd["head.weight"] = sd["head.weight"].clone()
    sd["head.weight"][0, 0] = float("nan")
    save_file(sd, str(tmp_path / "w.safetensors"))
    with pytest.raises(UsageError, match=r"w\.safetensors: tensor head\.weight holds non-finite values"):
        models.read_checkpoint(tmp_path / "w.safetensors")


# ---------------------------------------------------------------- CIFAR archives

def _plain_tar(official: Path, dest: Path) -> Path:
    with tarfile.open(dest, "w") as tf:
        tf.add(official, arcname="cifar-10-batches-py")
    return dest


def test_an_empty_archive_is_one_line(tmp_path, official, capsys):
    empty = tmp_path / "cifar.tar.gz"
    empty.write_bytes(b"")
    line = _exit2(["spectra", "--quick", "--arch", TINY, "--data", str(empty), "--cache", str(tmp_path / "c"),
                   "--out", str(tmp_path / "o")], capsys)
    assert f"--data: cannot unpack {empty}: it is empty (0 bytes)" in line, line
    assert not (tmp_path / "o").exists()
    assert not (tmp_path / "c").exists() or not any((tmp_path / "c").iterdir())


def test_a_file_that_is_no_tar_is_one_line(tmp_path):
    junk = tmp_path / "cifar.tar.gz"
    junk.write_bytes(b"hello world" * 10)
    with pytest.raises(UsageError) as e:
        cdata.load(junk, "test", cache=tmp_path / "c")
    assert str(e.value).startswith(f"--data: cannot unpack {junk}: it is not a tar archive (plain, gzip, bzip2 or xz)")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("cut", ["inside a header", "at a member boundary"])
def test_a_truncated_plain_tar_is_refused_and_nothing_is_cached(cut, tmp_path, official):
    full = _plain_tar(official, tmp_path / "full.tar")
    with tarfile.open(full) as tf:
        last = tf.getmembers()[-1]
    part = tmp_path / "cifar.tar"
    part.write_bytes(full.read_bytes()[:last.offset + (100 if cut == "inside a header" else 0)])
    cache = tmp_path / "c"
    with pytest.raises(UsageError) as e:
        cdata.load(part, "train", cache=cache)
    assert str(e.value).startswith(f"--data: cannot unpack {part}: it is truncated or damaged (it ends after "), e.value
    assert "nothing was cached, give a complete copy" in str(e.value) and "\n" not in str(e.value)
    assert not cache.exists() or list(cache.iterdir()) == []
    assert len(cdata.load(full, "train", cache=cache)) == 60          # the complete archive still reads


def test_a_truncated_tar_gz_is_refused_and_nothing_is_cached(tmp_path, official):
    import gzip
    blob = gzip.compress(_plain_tar(official, tmp_path / "full.tar").read_bytes())
    part = tmp_path / "cifar.tar.gz"
    part.write_bytes(blob[:len(blob) // 2])
    with pytest.raises(UsageError, match=r"it is truncated or damaged \(EOFError: Compressed file ended"):
        cdata.load(part, "test", cache=tmp_path / "c")
    assert list((tmp_path / "c").iterdir()) == []


def test_a_changed_archive_is_read_again(tmp_path, official):
    """The unpack and decode caches are keyed by the archive's size and mtime: rewritten in place (same name,
    same second), it is read again, never served from the old copy's cache."""
    cache = tmp_path / "c"
    arch = _plain_tar(official, tmp_path / "cifar.tar")
    first = cdata.load(arch, "test", cache=cache)
    other = cdata.write_official_fixture(tmp_path / "other", n_train_per_batch=12, n_test=10, seed=7)
    st = arch.stat()
    _plain_tar(other, arch)
    os.utime(arch, ns=(st.st_atime_ns, st.st_mtime_ns + 1))              # within the same second
    second = cdata.load(arch, "test", cache=cache)
    assert not np.array_equal(first.images, second.images)
    ref = cdata.load(other, "test", cache=tmp_path / "ref")
    np.testing.assert_array_equal(second.images, ref.images)


def test_a_changed_batch_file_is_read_again(tmp_path, official):
    import shutil
    root = tmp_path / "cifar-10-batches-py"
    shutil.copytree(official, root)
    cache = tmp_path / "c"
    first = cdata.load(root, "test", cache=cache)
    other = cdata.write_official_fixture(tmp_path / "other", n_train_per_batch=12, n_test=10, seed=7)
    shutil.copy(other / "test_batch", root / "test_batch")
    assert not np.array_equal(first.images, cdata.load(root, "test", cache=cache).images)

# reports/RELIABILITY.md is generated from this list (tests/reliability.py); each case's test is named.
FAULT_CASES = [
    {"id": 'checkpoint-empty', "class": 'input', "command": 'vit-probe spectra --checkpoint empty.pth --arch A --data D', "expect": 'exit 2, one line: the file is empty (0 bytes)',
     "test": "tests/test_hardening_vit_probe.py::test_an_empty_checkpoint_is_one_line"},
    {"id": 'checkpoint-blank-error', "class": 'one-line', "command": 'vit-probe spectra --checkpoint unreadable.pth ...', "expect": "one line naming the file, even when the reader's error has no message",
     "test": "tests/test_hardening_vit_probe.py::test_an_unreadable_checkpoint_with_a_blank_message_is_one_line"},
    {"id": 'checkpoint-int8-int64-bool', "class": 'input', "command": 'vit-probe spectra --checkpoint int8.pth ...', "expect": "exit 2, one line: tensor K is int8 where the model's is float32; nothing is cast",
     "test": "tests/test_hardening_vit_probe.py::test_an_integer_or_bool_checkpoint_is_refused_not_cast"},
    {"id": 'checkpoint-complex', "class": 'input', "command": 'vit-probe spectra --checkpoint complex.pth ...', "expect": 'exit 2, one line: tensor K is complex64, not real floating point',
     "test": "tests/test_hardening_vit_probe.py::test_a_complex_checkpoint_is_refused"},
    {"id": 'checkpoint-nan-inf', "class": 'input', "command": 'vit-probe spectra --checkpoint nan.pth ...', "expect": 'exit 2, one line naming the file and the first non-finite tensor',
     "test": "tests/test_hardening_vit_probe.py::test_non_finite_weights_name_the_file_and_the_first_bad_tensor"},
    {"id": 'checkpoint-nan-safetensors', "class": 'input', "command": 'vit-probe spectra --checkpoint nan.safetensors ...', "expect": 'exit 2, one line naming the tensor',
     "test": "tests/test_hardening_vit_probe.py::test_non_finite_safetensors_are_refused_too"},
    {"id": 'archive-empty', "class": 'input', "command": 'vit-probe spectra --data empty.tar.gz ...', "expect": 'exit 2, one line: it is empty (0 bytes)',
     "test": "tests/test_hardening_vit_probe.py::test_an_empty_archive_is_one_line"},
    {"id": 'archive-not-tar', "class": 'input', "command": 'vit-probe spectra --data notes.tar.gz ...', "expect": 'exit 2, one line: not a tar archive',
     "test": "tests/test_hardening_vit_probe.py::test_a_file_that_is_no_tar_is_one_line"},
    {"id": 'archive-truncated-tar', "class": 'input', "command": 'vit-probe spectra --data cut.tar ...   # cut inside a header or at a member boundary', "expect": 'exit 2, one line: truncated or damaged; nothing cached',
     "test": "tests/test_hardening_vit_probe.py::test_a_truncated_plain_tar_is_refused_and_nothing_is_cached"},
    {"id": 'archive-truncated-tar-gz', "class": 'input', "command": 'vit-probe spectra --data cut.tar.gz ...', "expect": 'exit 2, one line: truncated or damaged; nothing cached',
     "test": "tests/test_hardening_vit_probe.py::test_a_truncated_tar_gz_is_refused_and_nothing_is_cached"},
    {"id": 'archive-changed', "class": 'input', "command": 'vit-probe spectra --data D ...   # D replaced by another archive', "expect": "read again: the cache is keyed by the archive's size and mtime",
     "test": "tests/test_hardening_vit_probe.py::test_a_changed_archive_is_read_again"},
    {"id": 'batch-file-changed', "class": 'input', "command": 'vit-probe spectra --data batches/ ...   # a batch file replaced', "expect": "read again: the cache is keyed by the files' size and mtime",
     "test": "tests/test_hardening_vit_probe.py::test_a_changed_batch_file_is_read_again"},
]
