"""vit_probe on the command line: every subcommand's quick smoke, one-line errors, the fault cases
(hostile files, head counts, offline --pretrained, class-sorted data, foreign models) and what a
killed or quick run leaves."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from conftest import assert_paper_figure, assert_vector_pdf, ends_with_paths, same_picture
from vit_probe import configs, models
from vit_probe.configs import TrainConfig
from vit_probe.run_spectra import run_spectra
from vit_probe.run_sweep_mh import MhCell, run_sweep_mh
from vit_probe.train import train
from vit_probe_helpers import SHARED, SHARED_DATA, TINY, _exit2, _main, _tar, _tiny_train


# ---------------------------------------------------------------- command line


@pytest.mark.slow
def test_every_subcommand_runs_a_quick_smoke(official, tmp_path, capsys):
    """Each subcommand's --quick run, in-process (`vit-probe` as a process: the console-script test below): the
    files, figures and closing lines it promises; sweep-mh resumes retraining nothing."""
    common = ["--quick", "--data", str(official), "--cache", str(tmp_path / "cache")]
    r = _main(["spectra", "--arch", TINY, *common, "--out", str(tmp_path / "s")], capsys)
    assert r.returncode == 0, r.stderr[-2000:]
    for f in ("spectra.csv.gz", "heads.csv", "violin_first_head.png", "spectra_grid.png", "summary.md",
              "config.json", "command.txt", "report.json"):
        assert (tmp_path / "s" / f).is_file(), f
    rep = json.loads((tmp_path / "s" / "report.json").read_text())
    assert rep["section"] == "vit_probe" and all((tmp_path / "s" / f["file"]).is_file() for f in rep["figures"])
    for f in ("violin_first_head.png", "spectra_grid.png"):
        assert_paper_figure(tmp_path / "s" / f)
    ends_with_paths(r.stdout, 2, [tmp_path / "s" / "summary.md", tmp_path / "s" / "spectra_grid.png"])
    r = _main(["sweep-mh", *common, "--out", str(tmp_path / "m")], capsys)
    assert r.returncode == 0, r.stderr[-2000:]
    ends_with_paths(r.stdout, 3, [tmp_path / "m" / f for f in ("results.csv", "summary.md", "error_vs_mh.png")])
    import pandas as pd
    res = pd.read_csv(tmp_path / "m" / "results.csv")
    assert sorted(res.m_h) == [1, 4] and (tmp_path / "m" / "spectra_vs_mh.png").is_file()
    assert_paper_figure(tmp_path / "m" / "spectra_vs_mh.png")
    assert_paper_figure(tmp_path / "m" / "error_vs_mh.png")
    assert not (tmp_path / "m" / "checkpoints").exists()        # training checkpoints are cleaned up
    r2 = _main(["sweep-mh", *common, "--out", str(tmp_path / "m")], capsys)   # resumes: nothing retrains
    assert r2.returncode == 0 and "2 of 2 cells already finished" in r2.stdout + r2.stderr
    pd.testing.assert_frame_equal(res, pd.read_csv(tmp_path / "m" / "results.csv"))
    _redraws_what_the_run_drew(tmp_path / "s", tmp_path / "m")
    r = _main(["permute", *common, "--out", str(tmp_path / "p")], capsys)
    assert r.returncode == 0, r.stderr[-2000:]
    tab = pd.read_csv(tmp_path / "p" / "permute.csv")
    assert len(tab) == 4 and tab.accuracy.between(0, 1).all()
    assert r.stdout.strip().splitlines()[-3].startswith("accuracy "), r.stdout      # the headline, then the paths
    ends_with_paths(r.stdout, 2, [tmp_path / "p" / "permute.csv", tmp_path / "p" / "summary.md"])
    # the test count the claims rule reads (its interval's n) is the one the accuracies were computed on
    n_test = json.loads((tmp_path / "p" / "summary.json").read_text())["n_test"]
    assert isinstance(n_test, int) and n_test > 0
    assert f"Accuracy on the {n_test} test images." in (tmp_path / "p" / "summary.md").read_text()


def _redraws_what_the_run_drew(*folders: Path) -> None:
    """python -m jackson.lab_report.redraw on a spectra and a sweep-mh folder: the pictures the runs drew,
    PDFs without a raster image, every other file byte for byte as the run left it."""
    import hashlib
    import shutil
    from jackson.lab_report.redraw import redraw
    for f in folders:
        drawn = f.parent / f"{f.name}-drawn"
        drawn.mkdir()
        for p in f.glob("*.png"):
            shutil.copy2(p, drawn / p.name)
        files = lambda: {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(f.rglob("*"))  # noqa: E731
                         if p.is_file() and p.suffix not in (".png", ".pdf")}
        before = files()
        pngs = redraw(f)
        assert files() == before and sorted(p.name for p in pngs) == sorted(p.name for p in drawn.iterdir())
        for p in pngs:
            assert same_picture(p, drawn / p.name), p
            assert_vector_pdf(p.with_suffix(".pdf"))


@pytest.mark.parametrize("args, msg", [
    (["spectra", "--arch", TINY, "--layers", "9"], "layer 9 is out of range"),
    (["spectra", "--arch", TINY, "--heads", "2"], "head 2 is out of range"),
    (["spectra", "--arch", "vit_tiny"], "--arch: cannot read"),
    (["spectra"], "give --checkpoint PATH --arch SPEC"),
    (["spectra", "--model", "no_such_model_xyz"], "timm has no model named"),
    (["spectra", "--arch", TINY, "--checkpoint", "/nonexistent.pth"], "does not exist"),
    (["sweep-mh", "--m-h", "0,2"], "every m_h must be >= 1"),
    (["sweep-mh", "--arch", "vit_p4_d128_l4_h4_q2"], "without _q"),
    pytest.param(["sweep-mh", "--device", "cuda:0"], "--device",
                 marks=pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")),
    (["permute", "--n-first", "64"], "--n-first must be in 1..63"),
    (["frobnicate"], "unknown command 'frobnicate'"),
    (["spectra", "--n-images", "many"], "cannot read 'many'"),
])
def test_bad_input_is_one_line_exit_2(args, msg, official, tmp_path, capsys):
    """In-process (fast): main() must end in SystemExit(2) with one line on stderr; any other
    exception escaping would fail the test (that would be a traceback for the user)."""
    from vit_probe.cli import main
    extra = [] if args[0] == "frobnicate" else ["--data", str(official), "--cache", str(tmp_path / "c"),
                                                "--out", str(tmp_path / "o")]
    with pytest.raises(SystemExit) as e:
        main(args + extra)
    assert e.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and msg in lines[0], lines
    assert not (tmp_path / "o").exists()          # nothing written


@pytest.mark.slow
def test_console_script_reports_bad_input_without_traceback(sub_env):
    exe = Path(sys.executable).parent / "vit-probe"
    r = subprocess.run([str(exe), "sweep-mh", "--m-h", "0"], env=sub_env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "every m_h must be >= 1" in r.stderr


def test_a_timm_model_by_name_is_probed_at_its_own_resolution(official, tmp_path):
    """The --model path (what --pretrained users take, here without weights: no internet in tests):
    CIFAR images are resized to the model's 224x224, so rho_hat(x) is 197 x 197."""
    cfg = configs.SpectraConfig(model="vit_tiny_patch16_224", data=str(official), cache=str(tmp_path / "c"),
                          n_images=2, batch=2, layers="0", heads="0,1", out=str(tmp_path / "o"))
    run_spectra(cfg, "test", progress=False)
    import pandas as pd
    heads = pd.read_csv(tmp_path / "o" / "heads.csv")
    assert list(heads.tau) == [197, 197] and list(heads["head"]) == [0, 1]
    assert "timm vit_tiny_patch16_224 (random init)" in (tmp_path / "o" / "summary.md").read_text()
    # normalised as before --normalize: at its own resolution, a timm model gets its own mean/std, and says so
    text = (tmp_path / "o" / "summary.md").read_text()
    assert "resized to 224x224, then (x - mean) / std per channel with the model's own (timm pretrained_cfg)" in text


class _Shell:
    """A hostile pickle payload: unpickling it runs `touch <target>` through os.system."""

    def __init__(self, target):
        self.target = str(target)

    def __reduce__(self):
        return (os.system, (f"touch {shlex.quote(self.target)}",))


def _hostile_batches(tmp_path, official, payload) -> Path:
    """A copy of the official fixture whose test_batch is `payload` pickled."""
    root = tmp_path / "hostile" / "cifar-10-batches-py"
    root.mkdir(parents=True)
    for f in official.iterdir():
        (root / f.name).write_bytes(f.read_bytes())
    (root / "test_batch").write_bytes(pickle.dumps(payload))
    return root


def _write_h4_weights(path: Path) -> Path:
    """Weights of a 4-head tiny ViT: the same tensor shapes as the 2-head TINY."""
    torch.manual_seed(0)
    torch.save(models.build(models.parse_arch("vit_p8_d32_l2_h4")).state_dict(), path)
    return path


def _fault_crafted_pickle(t):
    marker = t.tmp / "pwned"
    blob = pickle.dumps({b"data": _Shell(marker), b"labels": [0]})
    pickle.loads(blob)                                          # the payload is real: plain pickle runs it
    assert marker.is_file()
    marker.unlink()
    data = _hostile_batches(t.tmp, t.official, {b"data": _Shell(marker), b"labels": [0]})
    line = _exit2(["spectra", "--quick", "--arch", TINY, "--data", str(data), "--cache", str(t.tmp / "c"),
                   "--out", str(t.tmp / "o")], t.capsys)
    assert re.search(r"test_batch: refusing to unpickle (posix|nt|os)\.system; a CIFAR batch holds only", line), line
    assert not marker.exists() and not (t.tmp / "o").exists()


def _fault_crafted_pickle_in_archive(t):
    marker = t.tmp / "pwned"
    data = _hostile_batches(t.tmp, t.official, {b"data": _Shell(marker), b"labels": [0]})
    tgz = _tar(data, t.tmp / "cifar-10-python.tar.gz", "cifar-10-batches-py")
    line = _exit2(["spectra", "--quick", "--arch", TINY, "--data", str(tgz), "--cache", str(t.tmp / "c"),
                   "--out", str(t.tmp / "o")], t.capsys)
    assert "refusing to unpickle" in line and not marker.exists() and not (t.tmp / "o").exists()


def _fault_pickle_object_array(t):
    marker = t.tmp / "pwned"
    payload = {b"data": np.array([_Shell(marker)], dtype=object), b"labels": [0]}
    data = _hostile_batches(t.tmp, t.official, payload)
    line = _exit2(["spectra", "--quick", "--arch", TINY, "--data", str(data), "--cache", str(t.tmp / "c"),
                   "--out", str(t.tmp / "o")], t.capsys)
    assert re.search(r"refusing to unpickle (posix|nt|os)\.system", line) and not marker.exists()


def _fault_head_count_in_file_name(t):
    w = _write_h4_weights(t.tmp / "vit_p8_d32_l2_h4_cifar10.pth")
    line = _exit2(["spectra", "--checkpoint", str(w), "--arch", TINY, "--data", str(t.official),
                   "--cache", str(t.tmp / "c"), "--out", str(t.tmp / "o")], t.capsys)
    assert "(its file name) but --arch is vit_p8_d32_l2_h2: heads 4 vs 2" in line, line
    assert not (t.tmp / "o").exists()


def _fault_head_count_recorded(t):
    """Weights our own training wrote (the file sweep-mh --keep-weights keeps), under a neutral name."""
    torch.manual_seed(0)
    m = models.build(models.parse_arch("vit_p8_d32_l2_h4"))
    x = np.random.default_rng(0).integers(0, 256, (8, 32, 32, 3), dtype=np.uint8)
    ck = t.tmp / "weights.pt"
    train(m, x, np.arange(8) % 10, TrainConfig(epochs=1, n_train=8, batch_size=8), 0, ck, progress=False,
          arch="vit_p8_d32_l2_h4")
    line = _exit2(["spectra", "--checkpoint", str(ck), "--arch", TINY, "--data", str(t.official),
                   "--cache", str(t.tmp / "c"), "--out", str(t.tmp / "o")], t.capsys)
    assert "(recorded in the checkpoint) but --arch is vit_p8_d32_l2_h2: heads 4 vs 2" in line, line


def _fault_head_count_shared_vit(t):
    if not (SHARED.is_file() and SHARED_DATA.is_file()):
        pytest.skip("shared ViT / CIFAR copy not beside the repo")
    line = _exit2(["spectra", "--checkpoint", str(SHARED), "--arch", "vit_p4_d128_l4_h2", "--data", str(SHARED_DATA),
                   "--cache", str(t.tmp / "c"), "--out", str(t.tmp / "o")], t.capsys)
    assert "heads 4 vs 2" in line and not (t.tmp / "o").exists()


def _fault_permute_head_count(t):
    w = _write_h4_weights(t.tmp / "vit_p8_d32_l2_h4_cifar10.pth")
    line = _exit2(["permute", "--checkpoint", str(w), "--arch", TINY, "--n-first", "3", "--data", str(t.official),
                   "--cache", str(t.tmp / "c"), "--out", str(t.tmp / "o")], t.capsys)
    assert "heads 4 vs 2" in line and not (t.tmp / "o").exists()


def _fault_truncated_train_checkpoint(t):
    """A kill (or a full disk) left the cell's resume checkpoint cut short: the rerun sets it aside
    and the cell retrains from scratch."""
    cfg = dataclasses.replace(configs.SweepMhConfig(), **{**configs.SWEEP_QUICK, "mh": (4,), "quick": True, "data": str(t.official),
                                                    "cache": str(t.tmp / "c"), "out": str(t.tmp / "m")})
    cell = MhCell(f"{TINY}_q4", 0, cfg.train, cfg.n_eval_train, cfg.n_spectra, tuple(cfg.fit_range), cfg.data,
                    cfg.cache, False, str((t.tmp / "m" / "checkpoints").resolve()), "cpu", cfg.subset_seed)
    ck = Path(cell.ckpt_dir) / f"{cell.key()}.pt"
    ck.parent.mkdir(parents=True)
    (t.tmp / "m" / "command.txt").write_text("vit-probe sweep-mh --quick\n")   # as the killed run left its folder
    _tiny_train(t.tmp / "written.pt")                          # a checkpoint written by a tiny training run
    whole = (t.tmp / "written.pt").read_bytes()
    ck.write_bytes(whole[:len(whole) // 2])
    t.capsys.readouterr()
    run_sweep_mh(cfg, "vit-probe sweep-mh --quick", progress=False)
    err = [ln for ln in t.capsys.readouterr().err.splitlines() if ln.strip()]
    aside = list(ck.parent.glob(f"{ck.name}.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == whole[:len(whole) // 2]   # kept, not deleted
    assert len(err) == 1 and "set aside as" in err[0] and "training from scratch" in err[0], err
    import pandas as pd
    assert len(pd.read_csv(t.tmp / "m" / "results.csv")) == 1   # the cell trained and finished


def _fault_quick_default_out(t):
    """--quick without --out: a scratch folder under the current folder, never reports/."""
    from vit_probe.cli import main
    t.monkeypatch.chdir(t.tmp)
    main(["sweep-mh", "--quick", "--data", str(t.official), "--cache", str(t.tmp / "c")])
    out = t.capsys.readouterr().out
    assert (t.tmp / "runs" / "vit_probe-sweep-mh-quick" / "summary.md").is_file()
    assert f"--quick: writing to {t.tmp / 'runs' / 'vit_probe-sweep-mh-quick'}" in out
    assert not (t.tmp / "reports").exists()
    last = out.strip().splitlines()[-5:]                       # two headline lines, then the paths it wrote
    assert last[0].startswith("m_h 1 -> 4 (2 values, 1 seed): training loss ") and last[1].startswith("spectra of layer 1")
    d = t.tmp / "runs" / "vit_probe-sweep-mh-quick"
    ends_with_paths(out, 3, [d / "results.csv", d / "summary.md", d / "spectra_vs_mh.png", d / "error_vs_mh.png"])


def _fault_pretrained_offline(t):
    """No internet and no cached weights: one line in about 3 s, not timm's ~45 s of retries."""
    import socket
    import time

    def offline(*a, **k):
        raise socket.gaierror(-2, "Name or service not known")
    for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "HF_HUB_OFFLINE", "HF_ENDPOINT"):
        t.monkeypatch.delenv(v, raising=False)
    t.monkeypatch.setattr(socket, "create_connection", offline)
    t.monkeypatch.setattr(models, "_weights_cached", lambda name: False)
    t0 = time.time()
    line = _exit2(["spectra", "--model", "vit_tiny_patch16_224", "--pretrained", "--data", str(t.official),
                   "--cache", str(t.tmp / "c"), "--out", str(t.tmp / "o")], t.capsys)
    assert time.time() - t0 < 15
    assert "--pretrained: timm's weights for vit_tiny_patch16_224 are not in the local cache and huggingface.co " \
           "cannot be reached" in line, line


def _fault_class_sorted_data(t):
    """A train/<class>/ tree is sorted by class: the probed images must still cover every class."""
    from vit_probe.cli import main
    main(["spectra", "--quick", "--arch", TINY, "--split", "train", "--data", str(t.request.getfixturevalue("folder_tree")),
          "--cache", str(t.tmp / "c"), "--out", str(t.tmp / "o")])
    s = json.loads((t.tmp / "o" / "summary.json").read_text())
    assert s["n_images"] == 50 and s["per_class"] == [5] * 10     # the first 50 would be 6 airplanes, 6 cars, ...
    ends_with_paths(t.capsys.readouterr().out, 2, [t.tmp / "o" / "summary.md", t.tmp / "o" / "violin_first_head.png"])
    assert "50 of 60 images, stratified by class (5 per class, seed 0)" in (t.tmp / "o" / "summary.md").read_text()


class _TorchViT(torch.nn.Module):
    """A tiny ViT built from torch's own nn.TransformerEncoder (nn.MultiheadAttention inside), not timm."""

    def __init__(self, dim=32, heads=2, depth=2, patch=8):
        super().__init__()
        self.patch_embed = torch.nn.Conv2d(3, dim, patch, patch)
        self.cls_token = torch.nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = torch.nn.Parameter(torch.zeros(1, (32 // patch) ** 2 + 1, dim))
        layer = torch.nn.TransformerEncoderLayer(dim, heads, 2 * dim, batch_first=True, norm_first=True)
        self.transformer = torch.nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.head = torch.nn.Linear(dim, 10)


def _fault_torch_transformer_encoder_vit(t):
    torch.manual_seed(0)
    ck = t.tmp / "torch_vit.pth"
    torch.save(_TorchViT().state_dict(), ck)
    assert "transformer.layers.0.self_attn.in_proj_weight" in torch.load(ck, weights_only=True)
    line = _exit2(["spectra", "--checkpoint", str(ck), "--arch", TINY, "--data", str(t.official),
                   "--cache", str(t.tmp / "c"), "--out", str(t.tmp / "o")], t.capsys)
    assert "torch_vit.pth holds a ViT built from torch.nn.TransformerEncoder/MultiheadAttention (keys like " \
           "transformer.layers.0.self_attn.in_proj_weight); vit-probe reads timm ViTs (blocks.N.attn.qkv)" in line, line
    assert "--model-json FILE (kind torch-vit, timm, arch or factory) or --model-factory module:function" in line
    assert "missing:" not in line
    assert not (t.tmp / "o").exists() and not (t.tmp / "c").exists()


def _fault_not_a_vit_state_dict(t):
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3072, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    ck = t.tmp / "mlp.pth"
    torch.save(mlp.state_dict(), ck)
    line = _exit2(["spectra", "--checkpoint", str(ck), "--arch", TINY, "--data", str(t.official),
                   "--cache", str(t.tmp / "c"), "--out", str(t.tmp / "o")], t.capsys)
    assert "mlp.pth is not a ViT state dict: none of its 4 keys (1.weight, 1.bias, 3.weight, ...) is an attention " \
           "weight (qkv / attn / in_proj); vit-probe reads timm ViTs (blocks.N.attn.qkv)" in line, line
    assert not (t.tmp / "o").exists() and not (t.tmp / "c").exists()


FAULT_CASES = [
    {"id": "crafted-pickle",
     "command": "vit-probe spectra --quick --arch vit_p8_d32_l2_h2 --data DIR   # DIR/test_batch: a pickle whose "
                "__reduce__ calls os.system('touch FILE')",
     "expect": "refused in one line ('refusing to unpickle posix.system'), exit 2; FILE is not created, nothing written"},
    {"id": "crafted-pickle-in-archive",
     "command": "vit-probe spectra --quick --arch vit_p8_d32_l2_h2 --data cifar-10-python.tar.gz   # the same "
                "test_batch inside the archive",
     "expect": "refused in one line, exit 2; FILE is not created, nothing written"},
    {"id": "pickle-object-array",
     "command": "vit-probe spectra --quick --arch vit_p8_d32_l2_h2 --data DIR   # test_batch's b'data' is a numpy "
                "object array holding the os.system payload",
     "expect": "refused in one line naming posix.system, exit 2; the payload never runs"},
    {"id": "head-count-in-file-name",
     "command": "vit-probe spectra --checkpoint vit_p8_d32_l2_h4_cifar10.pth --arch vit_p8_d32_l2_h2 --data DIR   "
                "# 4-head weights, same tensor shapes as 2 heads",
     "expect": "refused in one line: the file name says heads 4, --arch 2; exit 2, nothing written"},
    {"id": "head-count-recorded",
     "command": "vit-probe spectra --checkpoint weights.pt --arch vit_p8_d32_l2_h2 --data DIR   # weights.pt written "
                "by vit-probe training of vit_p8_d32_l2_h4",
     "expect": "refused in one line: the arch recorded in the checkpoint has heads 4, --arch 2; exit 2"},
    {"id": "head-count-shared-vit",
     "command": "vit-probe spectra --checkpoint ../shared/data/vit-cifar10-small/vit_p4_d128_l4_h4_cifar10_timm.pth "
                "--arch vit_p4_d128_l4_h2 --data ../shared/data/cifar10-jpeg/cifar10-jpeg-q75.tar.gz",
     "expect": "refused in one line (its file name says 4 heads), exit 2, before any data is read"},
    {"id": "permute-head-count",
     "command": "vit-probe permute --checkpoint vit_p8_d32_l2_h4_cifar10.pth --arch vit_p8_d32_l2_h2 --n-first 3 "
                "--data DIR",
     "expect": "refused in one line (heads 4 vs 2), exit 2, before any data is read or file written"},
    {"id": "truncated-train-checkpoint",
     "command": "vit-probe sweep-mh --quick --m-h 4 --data DIR --out OUT   # rerun after OUT/checkpoints/<cell>.pt "
                "was cut short",
     "expect": "one line: the checkpoint is set aside as <cell>.pt.corrupt-<time> (kept), the cell retrains from "
               "scratch and the sweep finishes"},
    {"id": "quick-default-out",
     "command": "vit-probe sweep-mh --quick --data DIR   # no --out, run from the project root",
     "expect": "writes runs/vit_probe-sweep-mh-quick/ and prints that path; reports/ is untouched"},
    {"id": "pretrained-offline",
     "command": "vit-probe spectra --model vit_tiny_patch16_224 --pretrained --data DIR   # no internet, weights "
                "not cached",
     "expect": "one line within ~3 s: weights not cached and huggingface.co unreachable; exit 2"},
    {"id": "class-sorted-data",
     "command": "vit-probe spectra --quick --arch vit_p8_d32_l2_h2 --split train --data TREE   # train/<class>/ "
                "folders: sorted by class",
     "expect": "the 50 probed images are 5 of each class (stratified, seed 0), not the first 50"},
    {"id": "torch-transformer-encoder-vit",
     "command": "vit-probe spectra --checkpoint torch_vit.pth --arch vit_p8_d32_l2_h2 --data DIR --out OUT   "
                "# a ViT built from nn.TransformerEncoder (d 32, 2 heads, 2 layers), not timm",
     "expect": "refused in one line: it holds a ViT built from torch.nn.TransformerEncoder/MultiheadAttention "
               "(keys like transformer.layers.0.self_attn.in_proj_weight), vit-probe reads timm ViTs "
               "(blocks.N.attn.qkv); exit 2, nothing written"},
    {"id": "not-a-vit-state-dict",
     "command": "vit-probe spectra --checkpoint mlp.pth --arch vit_p8_d32_l2_h2 --data DIR --out OUT   "
                "# the state dict of a small MLP",
     "expect": "refused in one line: not a ViT state dict (no qkv / attn / in_proj key; its first keys named), "
               "vit-probe reads timm ViTs; exit 2, nothing written"},
]

_FAULT_CHECKS = {
    "crafted-pickle": _fault_crafted_pickle,
    "crafted-pickle-in-archive": _fault_crafted_pickle_in_archive,
    "pickle-object-array": _fault_pickle_object_array,
    "head-count-in-file-name": _fault_head_count_in_file_name,
    "head-count-recorded": _fault_head_count_recorded,
    "head-count-shared-vit": _fault_head_count_shared_vit,
    "permute-head-count": _fault_permute_head_count,
    "truncated-train-checkpoint": _fault_truncated_train_checkpoint,
    "quick-default-out": _fault_quick_default_out,
    "pretrained-offline": _fault_pretrained_offline,
    "class-sorted-data": _fault_class_sorted_data,
    "torch-transformer-encoder-vit": _fault_torch_transformer_encoder_vit,
    "not-a-vit-state-dict": _fault_not_a_vit_state_dict,
}


@pytest.mark.parametrize("case", FAULT_CASES, ids=[c["id"] for c in FAULT_CASES])
def test_fault_case(case, official, tmp_path, capsys, monkeypatch, request):
    assert set(case) == {"id", "command", "expect"} and case["id"] in _FAULT_CHECKS
    _FAULT_CHECKS[case["id"]](SimpleNamespace(tmp=tmp_path, official=official, capsys=capsys,
                                              monkeypatch=monkeypatch, request=request))


def test_every_fault_case_has_a_check():
    assert [c["id"] for c in FAULT_CASES] == list(_FAULT_CHECKS)


@pytest.mark.parametrize("how", ["truncated", "empty"])
def test_unusable_training_checkpoint_is_set_aside_and_training_restarts(how, tmp_path, capsys):
    a, ha = _tiny_train()
    ck = tmp_path / "ck.pt"
    _tiny_train(ck)
    whole = ck.read_bytes()
    bad = whole[:len(whole) // 2] if how == "truncated" else b""
    ck.write_bytes(bad)
    capsys.readouterr()
    c, hc = _tiny_train(ck)                                    # from scratch: exactly the uninterrupted run
    for (k, v), w in zip(a.state_dict().items(), c.state_dict().values()):
        assert torch.equal(v, w), k
    assert [h["train_loss"] for h in hc] == pytest.approx([h["train_loss"] for h in ha])
    aside = list(tmp_path.glob("ck.pt.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == bad
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"cannot resume from {ck}" in err[0] and "set aside as ck.pt.corrupt-" in err[0]
    assert ck.is_file()                                        # the new run wrote its own checkpoint


def test_own_checkpoints_record_their_arch_and_load_when_it_matches(tmp_path):
    ck = tmp_path / "ck.pt"
    torch.manual_seed(0)
    m = models.build(models.parse_arch(TINY))
    x = np.random.default_rng(0).integers(0, 256, (8, 32, 32, 3), dtype=np.uint8)
    train(m, x, np.arange(8) % 10, TrainConfig(epochs=1, n_train=8, batch_size=8), 0, ck, progress=False, arch=TINY)
    assert models.read_checkpoint(ck)[1] == {"arch": TINY}
    m2 = models.build(models.parse_arch(TINY))
    note = models.load_checkpoint(m2, ck, TINY)
    assert "recorded in the checkpoint" in note and "head count included" in note
    for k, v in m.state_dict().items():
        assert torch.equal(v, m2.state_dict()[k]), k
    torch.save(m.state_dict(), tmp_path / "w.pth")             # a foreign file that states nothing: loads, said so
    note = models.load_checkpoint(models.build(models.parse_arch(TINY)), tmp_path / "w.pth", TINY)
    assert "states no architecture" in note and "taken on trust" in note


def test_quick_presets_never_write_into_reports():
    for preset in (configs.SPECTRA_QUICK, configs.SWEEP_QUICK, configs.PERMUTE_QUICK):
        assert preset["out"].startswith("runs/vit_probe-") and "reports" not in preset["out"]


# ---- offline --pretrained, before torch and timm are imported (vit_probe/hub.py) -----------------------------

def _no_caches(monkeypatch, tmp_path):
    for v in ("HF_HUB_CACHE", "HF_HUB_OFFLINE", "HF_ENDPOINT", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))


def test_early_offline_check_decides_from_the_command_line_and_the_caches(monkeypatch, tmp_path):
    import socket

    from vit_probe import hub

    def offline(*a, **k):
        raise socket.gaierror(-2, "Name or service not known")
    _no_caches(monkeypatch, tmp_path)
    monkeypatch.setattr(socket, "create_connection", offline)
    argv = ["--model", "vit_tiny_patch16_224", "--pretrained", "--data", "d"]
    line = hub.early_offline_check(argv)
    assert line == hub.offline_message("vit_tiny_patch16_224", "huggingface.co", "gaierror: [Errno -2] Name or service not known")
    assert hub.early_offline_check(["--model=vit_tiny_patch16_224", "--pretrained"]) == line
    assert hub.early_offline_check(["--model", "vit_tiny_patch16_224"]) == ""            # no --pretrained
    assert hub.early_offline_check(["--arch", "vit_p4_d128_l4_h4", "--pretrained"]) == ""  # not a timm name: later checks
    (tmp_path / "hf" / "hub" / "models--timm--vit_tiny_patch16_224.augreg_in21k_ft_in1k").mkdir(parents=True)
    assert hub.maybe_cached("vit_tiny_patch16_224") and hub.early_offline_check(argv) == ""   # timm decides
    assert not hub.maybe_cached("vit_small_patch16_224")
    (tmp_path / "torch" / "hub" / "checkpoints").mkdir(parents=True)
    (tmp_path / "torch" / "hub" / "checkpoints" / "w.pth").write_bytes(b"")
    assert hub.maybe_cached("vit_small_patch16_224")                                     # a URL file: timm decides


def test_offline_pretrained_fails_before_torch_is_imported(tmp_path):
    """The refusal comes from the command line alone: torch and timm (about 5 s to import) are never loaded."""
    import os
    import subprocess
    import sys
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"), "TORCH_HOME": str(tmp_path / "t")}
    code = ("import sys\nfrom vit_probe.cli import main\ntry:\n    main(['spectra', '--model', 'vit_tiny_patch16_224', "
            "'--pretrained', '--data', 'nowhere'])\nexcept SystemExit as e:\n    print('exit', e.code, 'torch' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "exit 2 False", (r.stdout, r.stderr)
    assert r.stderr.strip().splitlines() == [
        "vit-probe spectra: error: --pretrained: timm's weights for vit_tiny_patch16_224 are not in the local cache "
        "and huggingface.co cannot be reached (HF_HUB_OFFLINE is set); run once with internet, or give local weights "
        "with --checkpoint"]


def test_spectra_of_a_trained_model_carry_their_control(official, tmp_path):
    """--inits N probes the same architecture at N random inits on the same images: init k's head table is what
    an untrained run of that architecture with --seed k gives on its own, and heads.csv says which trained heads
    decay faster than every init head of their layer."""
    import pandas as pd
    from vit_probe.configs import SpectraConfig
    torch.manual_seed(99)
    ckpt = tmp_path / f"{TINY}.pth"
    torch.save(models.build(models.parse_arch(TINY)).state_dict(), ckpt)
    common = dict(arch=TINY, data=str(official), cache=str(tmp_path / "c"), n_images=10, batch=5)
    s = run_spectra(SpectraConfig(checkpoint=str(ckpt), inits=2, out=str(tmp_path / "t"), **common), "cmd",
                    progress=False)
    assert s["trained"] and s["control"]["inits"] == 2
    init = pd.read_csv(tmp_path / "t" / "init_heads.csv")
    assert sorted(init["init"].unique()) == [0, 1]
    for k in (0, 1):
        u = run_spectra(SpectraConfig(seed=k, out=str(tmp_path / f"u{k}"), **common), "cmd", progress=False)
        assert not u["trained"] and u["control"] is None
        alone = pd.read_csv(tmp_path / f"u{k}" / "heads.csv")
        mine = init[init["init"] == k].drop(columns="init").reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, alone)
    heads = pd.read_csv(tmp_path / "t" / "heads.csv")
    for r in heads.itertuples():
        lowest = init[init.layer == r.layer].exponent.min()
        assert r.init_min == lowest and r.steeper_than_init == (r.exponent_hi < lowest)
    assert (tmp_path / "t" / "trained_vs_init.png").is_file()
    assert "Control: the same architecture at 2 random inits" in (tmp_path / "t" / "summary.md").read_text()
    assert "control, not a test of Fig. 2" in (tmp_path / "u0" / "summary.md").read_text()


@pytest.mark.parametrize("bad", ["-1", "21"])
def test_spectra_refuses_an_out_of_range_number_of_inits(bad, tmp_path, capsys):
    line = _exit2(["spectra", "--arch", TINY, "--inits", bad, "--out", str(tmp_path / "s")], capsys)
    assert line.endswith(f"--inits must be between 0 and 20, got {bad}")
