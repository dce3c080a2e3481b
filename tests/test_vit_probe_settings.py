"""vit_probe's settings: the configs and their checks without torch (`--help` and a bad option import no torch),
no compatibility module, committed cell keys unchanged, the input normalisation (`--normalize`, a description's
"normalize"), and `--download`'s bounded network waits."""
from __future__ import annotations

import dataclasses
import importlib
import json
import socket
import subprocess
import sys
import urllib.error
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jackson.config import UsageError
from vit_probe import data as cdata
from vit_probe import normalize
from vit_probe_helpers import TINY, _exit2

ROOT = Path(__file__).resolve().parents[1]


# ---- no compatibility module; the configs where they live ------------------------------------------

def test_the_compatibility_module_is_gone():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("vit_probe.experiment")


def test_the_configs_live_in_the_torch_free_module():
    from vit_probe import configs, run_permute, run_spectra, run_sweep_mh, train
    assert run_spectra.SpectraConfig is configs.SpectraConfig and run_sweep_mh.SweepMhConfig is configs.SweepMhConfig
    assert run_permute.PermuteConfig is configs.PermuteConfig and train.TrainConfig is configs.TrainConfig
    assert configs.SweepMhConfig().train == configs.TrainConfig()


# ---- --help and a bad option never import torch -----------------------------------------------------

def _run_importtime(args: list[str], env: dict) -> tuple[int, list[str], set[str]]:
    """(exit code, the lines on stderr that are not -X importtime's, the modules imported)."""
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "vit_probe.cli", *args], env=env,
                       capture_output=True, text=True, timeout=120)
    lines = r.stderr.splitlines()
    imported = {ln.rsplit("|", 1)[1].strip() for ln in lines if ln.startswith("import time:") and "|" in ln}
    return r.returncode, [ln for ln in lines if not ln.startswith("import time:")], imported


@pytest.mark.parametrize("args, code, says", [
    (["spectra", "--help"], 0, ""),
    (["sweep-mh", "--help"], 0, ""),
    (["permute", "--help"], 0, ""),
    (["spectra", "--n-images", "0"], 2, "--n-images must be >= 1, got 0"),
    (["spectra", "--arch", TINY, "--normalize", "sepia"], 2, "--normalize: cannot read 'sepia'"),
    (["spectra", "--arch", "vit_tiny"], 2, "--arch: cannot read 'vit_tiny'"),
    (["spectra"], 2, "give --checkpoint PATH --arch SPEC"),
    (["spectra", "--arch", TINY, "--model-json", "own.json"], 2, "give one of --model, --arch, --model-json"),
    (["spectra", "--arch", TINY, "--pretrained"], 2, "--pretrained goes with --model"),
    (["spectra", "--n-images", "many"], 2, "argument --n-images: cannot read 'many'"),
    (["sweep-mh", "--m-h", "0"], 2, "--m-h: every m_h must be >= 1"),
    (["sweep-mh", "--arch", "vit_p4_d128_l4_h4_q2"], 2, "without _q"),
    (["permute", "--n-first", "0"], 2, "--n-first must be in 1..63"),
    (["permute", "--device", "tpu"], 2, "--device: 'tpu' is not cpu, cuda or cuda:N"),
])
def test_help_and_bad_options_import_no_torch(args, code, says, sub_env, tmp_path):
    rc, err, imported = _run_importtime(args + ([] if code == 0 else ["--out", str(tmp_path / "o")]), sub_env)
    assert rc == code, err
    assert "vit_probe.configs" in imported                          # the check ran where it lives
    assert "torch" not in imported and "timm" not in imported, sorted(m for m in imported if "torch" in m)
    if says:
        assert len(err) == 1 and says in err[0], err
        assert not (tmp_path / "o").exists()


# ---- cell keys: committed cells keep their folders -------------------------------------------------

def test_committed_sweep_cells_keep_their_keys(tmp_path):
    """The configs moved module: a committed sweep-mh folder's config.json still names the cells its cells/ holds
    (MhCell.key hashes TrainConfig's fields that differ from their defaults, never a module path).  Only folders
    written with stratified subsets (config.json with subset_seed) count: older cells were keyed without the
    subsets on purpose, so they are never reused."""
    from jackson.config import read_config
    from vit_probe.configs import SweepMhConfig
    from vit_probe.run_sweep_mh import sweep_grid
    checked = []
    for cells in sorted((ROOT / "reports" / "vit_probe").glob("*/cells")):
        folder = cells.parent
        if "subset_seed" not in json.loads((folder / "config.json").read_text()):
            continue
        cfg = read_config(SweepMhConfig, str(folder / "config.json"))
        cfg = dataclasses.replace(cfg, out=str(tmp_path / folder.name), scheduler="", rebuild=True)
        _, grid = sweep_grid(cfg)
        assert sorted(c.key() for c in grid) == sorted(p.name for p in cells.iterdir() if p.is_dir()), folder.name
        checked.append(folder.name)
    assert "sweep_mh" in checked
    assert "vit_p4_d128_l4_h4_q1_s0_117cea62c1" in {p.name for p in (ROOT / "reports/vit_probe/sweep_mh/cells").iterdir()}


# ---- the input normalisation ---------------------------------------------------------------------------

def test_normalize_reads_presets_and_mean_std_and_refuses_the_rest():
    assert normalize.parse("auto") == normalize.AUTO
    assert normalize.parse("CIFAR10") == normalize.Norm("cifar10", *normalize.CIFAR10, source="--normalize")
    assert cdata.MEAN == normalize.CIFAR10[0] == (0.4914, 0.4822, 0.4465) and cdata.STD == (0.2470, 0.2435, 0.2616)
    n = normalize.parse("0.5/0.25")
    assert n.mean == (0.5,) * 3 and n.std == (0.25,) * 3 and n.name == "custom"
    assert normalize.parse("0.1,0.2,0.3/1,2,3").std == (1.0, 2.0, 3.0)
    for bad, says in [("sepia", "cannot read 'sepia'"), ("0.5/0", "every std must be > 0"), ("1,2/1", "1 or 3 values"),
                      ("nan/1", "finite"), ("0.5/", "cannot read"), ("x/1", "cannot read")]:
        with pytest.raises(UsageError, match=f"^--normalize: .*{says}"):
            normalize.parse(bad)
    where = "--model-json m.json: 'normalize'"
    assert normalize.parse_described({"mean": 0.5, "std": [0.1, 0.2, 0.3]}, where).std == (0.1, 0.2, 0.3)
    for bad in (3, {"mean": [0.5]}, {"mean": 0.5, "std": 1, "scale": 2}, {"mean": True, "std": 1}, {"mean": "a", "std": 1}):
        with pytest.raises(UsageError, match=f"^{where}: "):
            normalize.parse_described(bad, where)
    # the rule of every run before the option: a resized timm model gets its own mean/std, the rest CIFAR-10's
    own = {"mean": (0.5, 0.5, 0.5), "std": (0.5, 0.5, 0.5)}
    assert normalize.auto((224, 224), own).mean == (0.5, 0.5, 0.5)
    assert normalize.auto((32, 32), own).name == normalize.auto((224, 224), None).name == "cifar10"


def test_option_wins_over_the_description_and_the_description_over_the_default():
    imagenet = {"normalize": "imagenet"}
    assert normalize.choose("", None) == (normalize.AUTO, "the default (auto)")
    choice, source = normalize.choose("", imagenet["normalize"], "--model-json m.json")
    assert choice.name == "imagenet" and source.startswith("--model-json m.json")
    choice, source = normalize.choose("none", imagenet["normalize"], "--model-json m.json")
    assert (choice.name, choice.mean, choice.std, source) == ("none", (0.0,) * 3, (1.0,) * 3, "--normalize")


def test_the_normalisation_changes_the_logits_and_the_default_is_the_old_one():
    import torch
    from vit_probe import models, spectra
    torch.manual_seed(0)
    m = models.build(models.parse_arch(TINY)).eval()
    x = np.random.default_rng(0).integers(0, 256, (6, 32, 32, 3), dtype=np.uint8)
    sv = {k: spectra.collect(m, x, [0], [0, 1], 3, progress=False, norm=None if k == "old" else
                             spectra.model_norm(m, normalize.parse(k)))
          for k in ("old", "cifar10", "auto", "imagenet", "none")}
    for k in ("cifar10", "auto"):        # the default: the very numbers every run before the option got
        assert all(np.array_equal(sv["old"][h], sv[k][h]) for h in sv["old"]), k
    for k in ("imagenet", "none"):
        assert not np.allclose(sv["old"][(0, 0)], sv[k][(0, 0)]), k
    y = np.arange(6) % 10
    assert models.accuracy(m, x, y) == models.accuracy(m, x, y, norm=normalize.Norm("cifar10", *normalize.CIFAR10))


# one head of the last layer, four singular values in the violin: the figures are the runs' slowest part, and what
# these tests read is the normalisation the run states and applies (it is the same for every head)
SMALL_FIGURES = dict(layers="-1", heads="0", k_show=4)


def _spectra_run(tmp_path, official, name, **kw) -> tuple[dict, str]:
    from vit_probe.configs import SpectraConfig
    from vit_probe.run_spectra import run_spectra
    cfg = SpectraConfig(data=str(official), cache=str(tmp_path / "c"), n_images=10, batch=5, inits=0,
                        out=str(tmp_path / name), **{**SMALL_FIGURES, **kw})
    s = run_spectra(cfg, "cmd", progress=False)
    return s, (tmp_path / name / "summary.md").read_text()


def test_spectra_state_and_apply_the_normalisation(official, tmp_path, capsys):
    desc = tmp_path / "own.json"
    desc.write_text(json.dumps({"kind": "arch", "arch": TINY, "normalize": "imagenet"}))
    runs = {"default": dict(arch=TINY), "imagenet": dict(arch=TINY, normalize="imagenet"),
            "described": dict(model_json=str(desc)), "override": dict(model_json=str(desc), normalize="0.5/0.5")}
    got = {k: _spectra_run(tmp_path, official, k, **kw) for k, kw in runs.items()}
    norm = {k: s["normalize"] for k, (s, _) in got.items()}
    assert norm["default"] == {"name": "cifar10", "mean": [0.4914, 0.4822, 0.4465], "std": [0.247, 0.2435, 0.2616],
                               "source": "the default (auto)"}
    assert norm["described"]["name"] == "imagenet" and norm["described"]["source"].startswith("--model-json own.json")
    assert norm["override"] == {"name": "custom", "mean": [0.5] * 3, "std": [0.5] * 3, "source": "--normalize"}
    assert "(x - mean) / std per channel with cifar10, mean (0.4914, 0.4822, 0.4465), std (0.247, 0.2435, 0.2616); " \
           "set by the default (auto)" in got["default"][1]
    assert "with imagenet, mean (0.485, 0.456, 0.406)" in got["described"][1]
    heads = {k: pd.read_csv(tmp_path / k / "heads.csv") for k in runs}
    pd.testing.assert_frame_equal(heads["described"], heads["imagenet"])      # the description's, as if given
    assert not np.allclose(heads["default"].sigma1, heads["imagenet"].sigma1)
    assert not np.allclose(heads["override"].sigma1, heads["imagenet"].sigma1)
    # the headline says it too
    from vit_probe.configs import SpectraConfig
    from vit_probe.run_spectra import run_spectra
    capsys.readouterr()
    run_spectra(SpectraConfig(arch=TINY, data=str(official), cache=str(tmp_path / "c"), n_images=10, batch=5,
                              normalize="none", out=str(tmp_path / "h"), **SMALL_FIGURES), "cmd", progress=True)
    head = [ln for ln in capsys.readouterr().out.splitlines() if "decay exponent" in ln]
    assert len(head) == 1 and "(input normalisation none, mean (0, 0, 0), std (1, 1, 1); set by --normalize)" in head[0]


@pytest.mark.parametrize("value, says", [
    ("sepia", "--model-json own.json: 'normalize': cannot read 'sepia'"),
    ({"mean": [0.5, 0.5]}, "--model-json own.json: 'normalize': the object needs exactly \"mean\" and \"std\""),
    ({"mean": 0.5, "std": 0}, "--model-json own.json: 'normalize': every std must be > 0"),
])
def test_a_bad_normalize_in_a_description_is_one_line(value, says, tmp_path, capsys):
    desc = tmp_path / "own.json"
    desc.write_text(json.dumps({"kind": "arch", "arch": TINY, "normalize": value}))
    line = _exit2(["spectra", "--model-json", str(desc), "--data", "d", "--out", str(tmp_path / "o")], capsys)
    assert says in line and not (tmp_path / "o").exists()


def test_every_description_kind_may_carry_its_normalisation(tmp_path):
    from vit_probe import model_source
    own = {"mean": [0.5, 0.5, 0.5], "std": 0.25}
    desc = tmp_path / "tv.json"
    desc.write_text(json.dumps({"kind": "torch-vit", "patch": 8, "dim": 32, "depth": 1, "heads": 2, "normalize": own}))
    d = model_source.read_description(desc)
    model, name, _ = model_source.load(d, "", 0)          # the key is not a TorchViTConfig field
    assert name.startswith("torch-vit p8 d32 l1 h2") and d["normalize"] == own
    assert "normalize" in model_source.KEYS["timm"] and "normalize" in model_source.KEYS["factory"]


def test_a_bad_normalize_option_is_one_line(tmp_path, capsys):
    line = _exit2(["spectra", "--arch", TINY, "--normalize", "1,2/3", "--out", str(tmp_path / "o")], capsys)
    assert line == "vit-probe spectra: error: --normalize: mean needs 1 or 3 values (R, G, B), got 2 in '1,2/3'"


# ---- --download: every network wait bounded, one line naming what it waited for --------------------------

def test_the_official_url_is_torchvisions():
    from torchvision.datasets import CIFAR10
    assert cdata.OFFICIAL_URL == CIFAR10.url


@pytest.mark.parametrize("error, says", [
    (socket.timeout("timed out"), "no answer from www.cs.toronto.edu within 60 s"),
    (TimeoutError("The read operation timed out"), "no answer from www.cs.toronto.edu within 60 s"),
    (urllib.error.URLError(socket.timeout("timed out")), "no answer from www.cs.toronto.edu within 60 s"),
    (urllib.error.URLError(socket.gaierror(-3, "Temporary failure in name resolution")),
     "cannot reach www.cs.toronto.edu (https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz) after"),
    (ConnectionRefusedError(111, "Connection refused"), "cannot reach www.cs.toronto.edu"),
    (urllib.error.HTTPError(cdata.OFFICIAL_URL, 503, "Service Unavailable", {}, None),
     "www.cs.toronto.edu answered HTTP 503 (Service Unavailable)"),
])
def test_a_download_that_fails_is_one_line_naming_the_host_and_the_wait(error, says, monkeypatch, tmp_path):
    seen = []

    def fetch(root, train):
        seen.append(socket.getdefaulttimeout())
        raise error
    monkeypatch.setattr(cdata, "fetch_official", fetch)
    for before in (None, 5.0):                        # whatever the process had is back afterwards
        socket.setdefaulttimeout(before)
        try:
            with pytest.raises(UsageError) as e:
                cdata.load(None, "test", tmp_path, download=True)
            assert socket.getdefaulttimeout() == before
        finally:
            socket.setdefaulttimeout(None)
        msg = str(e.value)
        assert "\n" not in msg and msg.startswith("--download: ") and says in msg, msg
        assert cdata.OFFICIAL_URL in msg and " s" in msg
    assert seen == [cdata.DOWNLOAD_TIMEOUT_S] * 2 == [60.0] * 2    # bounded during the call


def test_a_download_timeout_through_the_command_line(monkeypatch, tmp_path, capsys):
    def fetch(root, train):
        assert socket.getdefaulttimeout() == cdata.DOWNLOAD_TIMEOUT_S
        raise socket.timeout("timed out")
    monkeypatch.setattr(cdata, "fetch_official", fetch)
    line = _exit2(["spectra", "--arch", TINY, "--download", "--cache", str(tmp_path / "c"),
                   "--out", str(tmp_path / "o")], capsys)
    assert line.startswith("vit-probe spectra: error: --download: no answer from www.cs.toronto.edu within 60 s "
                           f"({cdata.OFFICIAL_URL}; waited ")
    assert socket.getdefaulttimeout() is None and not (tmp_path / "o").exists()


def test_a_download_that_answers_is_read(monkeypatch, tmp_path):
    class Fake:
        data = np.zeros((3, 32, 32, 3), dtype=np.uint8)
        targets = [0, 1, 2]
    monkeypatch.setattr(cdata, "fetch_official", lambda root, train: Fake())
    split = cdata.load(None, "train", tmp_path, download=True)
    assert len(split) == 3 and split.source == "CIFAR-10 (official, torchvision download)"
    assert socket.getdefaulttimeout() is None
