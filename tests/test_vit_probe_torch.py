"""vit-probe on models that are not timm ViTs: attention from torch's nn.MultiheadAttention (inside
nn.TransformerEncoder: pre-/post-norm, batch-first or not) or timm's Attention outside a timm ViT,
loaded from a state dict plus a description JSON or from a `module:function` factory.

The reference for the probed logits is a forward pass written out by hand from the weights
(`manual_forward`), checked first against the model's own output.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from jackson.config import UsageError
from vit_probe_helpers import _exit2
from vit_probe import data as cdata
from vit_probe import model_source, models, spectra
from vit_probe.probe import LogitProbe
from vit_probe.torch_vit import TorchViT, TorchViTConfig

ROOT = Path(__file__).resolve().parents[1]
TINY_TORCH = dict(patch=8, dim=32, depth=2, heads=2)          # 16 patches + class token = 17 tokens


def tiny(norm_first: bool = True, batch_first: bool = True, seed: int = 0) -> TorchViT:
    torch.manual_seed(seed)
    return TorchViT(TorchViTConfig(**TINY_TORCH, norm_first=norm_first, batch_first=batch_first)).eval()


def manual_forward(m: TorchViT, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """(class scores, [logits per layer (B, H, N, N)]) of a TorchViT, from its weights alone: per head
    q_h . k_h / sqrt(d) with the rows h*d..(h+1)*d of W_Q, W_K taken out of the packed in_proj_weight."""
    c, D = m.cfg, m.cfg.dim
    d = D // c.heads
    t = F.conv2d(x, m.patch_embed.weight, m.patch_embed.bias, stride=c.patch).flatten(2).transpose(1, 2)
    t = torch.cat([m.cls_token.expand(len(x), -1, -1), t], 1) + m.pos_embed          # (B, N, D)
    all_logits = []
    for layer in m.encoder.layers:
        a = layer.self_attn
        W, b = a.in_proj_weight, a.in_proj_bias

        def attend(h):
            heads, logits = [], []
            for i in range(c.heads):
                rows = slice(i * d, (i + 1) * d)
                q = h @ W[:D][rows].T + b[:D][rows]                       # (B, N, d)
                k = h @ W[D:2 * D][rows].T + b[D:2 * D][rows]
                v = h @ W[2 * D:][rows].T + b[2 * D:][rows]
                s = q @ k.transpose(1, 2) / d ** 0.5                      # (B, N, N)
                logits.append(s)
                heads.append(torch.softmax(s, -1) @ v)
            out = torch.cat(heads, -1) @ a.out_proj.weight.T + a.out_proj.bias
            return out, torch.stack(logits, 1)

        def norm(ln, h):
            return F.layer_norm(h, (D,), ln.weight, ln.bias, ln.eps)

        def ff(h):
            return F.gelu(h @ layer.linear1.weight.T + layer.linear1.bias) @ layer.linear2.weight.T + layer.linear2.bias
        if c.norm_first:                                    # x + attn(norm1(x)), then x + ff(norm2(x))
            o, s = attend(norm(layer.norm1, t))
            t = t + o
            t = t + ff(norm(layer.norm2, t))
        else:                                               # norm1(x + attn(x)), then norm2(x + ff(x))
            o, s = attend(t)
            t = norm(layer.norm1, t + o)
            t = norm(layer.norm2, t + ff(t))
        all_logits.append(s)
    if m.encoder.norm is not None:
        t = norm(m.encoder.norm, t)
    return t[:, 0] @ m.head.weight.T + m.head.bias, all_logits


# ---------------------------------------------------------------- the probe on nn.MultiheadAttention

@pytest.mark.parametrize("norm_first", [True, False], ids=["pre-norm", "post-norm"])
@pytest.mark.parametrize("batch_first", [True, False], ids=["batch-first", "seq-first"])
def test_probed_logits_equal_a_manual_qk_from_the_weights(norm_first, batch_first):
    m = tiny(norm_first, batch_first).double()
    x = torch.randn(3, 3, 32, 32, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        ref_out, ref_logits = manual_forward(m, x)
        torch.testing.assert_close(m(x), ref_out, rtol=1e-9, atol=1e-9)     # the manual path is the model
        with LogitProbe(m, [0, 1], [0, 1]) as p:
            m(x)
    for layer in (0, 1):
        assert p.logits[layer].shape == (3, 2, 17, 17)
        torch.testing.assert_close(p.logits[layer], ref_logits[layer], rtol=1e-9, atol=1e-9)
    with torch.no_grad(), LogitProbe(m, [1], [1]) as p:                     # one head of one layer
        m(x)
    assert set(p.logits) == {1}
    torch.testing.assert_close(p.logits[1][:, 0], ref_logits[1][:, 1], rtol=1e-9, atol=1e-9)


def test_the_probe_defaults_to_every_layer_and_head_as_the_command_line_does():
    m = tiny(True, True).double()
    x = torch.randn(2, 3, 32, 32, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        _, ref_logits = manual_forward(m, x)
        with LogitProbe(m) as p:
            m(x)
    assert p.layers == [0, 1] and p.heads == [0, 1]
    for layer in (0, 1):
        torch.testing.assert_close(p.logits[layer], ref_logits[layer], rtol=1e-9, atol=1e-9)
    with pytest.raises(UsageError, match=r"layers: the model has 2 attention layers \(0..1\), not 2"):
        LogitProbe(m, layers=[2])
    with pytest.raises(UsageError, match=r"heads: the model's attention has 2 heads \(0..1\), not -1"):
        LogitProbe(m, heads=[-1])


def test_softmax_of_probed_logits_is_torchs_own_attention_pattern():
    """Reference: nn.MultiheadAttention's own per-head weights (need_weights, not averaged), here
    with separate q/k/v projections (kdim, vdim != embed_dim) and sequence-first inputs."""
    g = torch.Generator().manual_seed(2)
    holder = nn.Module()
    holder.attn = nn.MultiheadAttention(8, 2, kdim=6, vdim=5)               # batch_first=False
    q, k, v = torch.randn(7, 3, 8, generator=g), torch.randn(9, 3, 6, generator=g), torch.randn(9, 3, 5, generator=g)
    with torch.no_grad(), LogitProbe(holder, [0], [0, 1], keep_qkv=True) as p:
        out, pattern = holder.attn(q, key=k, value=v, need_weights=True, average_attn_weights=False)
    assert p.logits[0].shape == (3, 2, 7, 9)                                 # (B, H, N_query, N_key)
    torch.testing.assert_close(p.logits[0].softmax(-1), pattern, rtol=1e-5, atol=1e-6)
    _, _, vv = p.qkv[0]                                                      # softmax(logits) v -> out_proj
    y = (p.logits[0].softmax(-1) @ vv).transpose(1, 2).reshape(3, 7, 8)
    torch.testing.assert_close(holder.attn.out_proj(y).transpose(0, 1), out, rtol=1e-5, atol=1e-6)


def test_probing_leaves_predictions_unchanged_and_removes_its_hooks():
    m = tiny(norm_first=False)
    x = torch.randn(4, 3, 32, 32, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        ref = m(x)                          # unhooked: torch's fast path
        with LogitProbe(m, [0, 1], [0, 1]):
            probed = m(x)                   # hooked: the explicit path
        after = m(x)
    torch.testing.assert_close(probed, ref, rtol=1e-5, atol=1e-6)
    assert torch.equal(ref, after)
    assert all(not lay.self_attn._forward_pre_hooks for lay in m.encoder.layers)


def test_timm_attention_outside_a_timm_vit_is_found_and_probed():
    """timm's Attention blocks in a model of one's own (no .blocks): logits as timm's unfused path
    computes them (the input of attn_drop is their softmax)."""
    from timm.layers import Attention
    torch.manual_seed(4)
    model = nn.Sequential(nn.Linear(5, 16), Attention(16, num_heads=4, qkv_bias=True), Attention(16, num_heads=2))
    seen = {}
    for i, a in enumerate(model[1:]):
        a.fused_attn = False
        a.attn_drop.register_forward_hook(lambda mod, inp, out, i=i: seen.__setitem__(i, inp[0]))
    assert models.attention_modules(model) == [model[1], model[2]]
    with torch.no_grad(), LogitProbe(model, [0, 1], [0, 1]) as p:
        model(torch.randn(2, 6, 5))
    for i in (0, 1):
        torch.testing.assert_close(p.logits[i].softmax(-1), seen[i][:, :2], rtol=1e-5, atol=1e-6)


def test_attention_with_extra_keys_and_models_without_attention_are_refused():
    holder = nn.Module()
    holder.attn = nn.MultiheadAttention(8, 2, add_bias_kv=True)
    with pytest.raises(UsageError, match="add_bias_kv or add_zero_attn"):
        LogitProbe(holder, [0], [0])
    with pytest.raises(UsageError, match="has no attention module vit-probe can read"):
        models.attention_modules(nn.Sequential(nn.Linear(3, 3)))


# ---------------------------------------------------------------- descriptions and factories

def _write(path: Path, obj) -> Path:
    path.write_text(json.dumps(obj) if not isinstance(obj, str) else obj)
    return path


@pytest.mark.parametrize("desc, msg", [
    ({"kind": "keras", "layers": 3}, "kind 'keras' is not supported; vit-probe reads timm ViTs"),
    ({"dim": 32}, 'give a JSON object with a "kind" (torch-vit, timm, arch, factory)'),
    ({"kind": "torch-vit", "dims": 32}, "unknown key(s) dims for kind torch-vit (valid: activation, batch_first"),
    ({"kind": "timm"}, "kind timm needs name"),
    ({"kind": "factory", "factory": "m:f", "kwargs": [1]}, "'kwargs' should be an object"),
    ("{not json", "cannot read"),
])
def test_a_bad_description_is_one_line(desc, msg, tmp_path):
    with pytest.raises(UsageError) as e:
        model_source.read_description(_write(tmp_path / "model.json", desc))
    assert msg in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_torch_vit_description_types_and_sizes_are_checked(tmp_path):
    for desc, msg in [({"kind": "torch-vit", "dim": "32"}, "'dim': expected an integer"),
                      ({"kind": "torch-vit", "dim": 30, "heads": 4}, "dim 30 is not divisible by 4 heads"),
                      ({"kind": "torch-vit", "patch": 5}, "patch 5 must divide img_size 32")]:
        with pytest.raises(UsageError, match=msg):
            model_source.load(model_source.read_description(_write(tmp_path / "m.json", desc)), "", 0)


FACTORY = '''
import torch
from torch import nn


class Tiny(nn.Module):
    """A ViT-like model laid out in its own way: its own names, one nn.TransformerEncoder."""

    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.embed = nn.Conv2d(3, dim, 8, 8)
        self.pos = nn.Parameter(torch.randn(1, 16, dim) * 0.02)
        self.body = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, heads, 2 * dim, 0.0, batch_first=True),
                                          2, enable_nested_tensor=False)
        self.out = nn.Linear(dim, 10)
        self.num_prefix_tokens = 0          # no class token: every token is a patch

    def forward(self, x):
        t = self.body(self.embed(x).flatten(2).transpose(1, 2) + self.pos)
        return self.out(t.mean(1))


def build(dim=16, heads=2):
    return Tiny(dim, heads)


def not_a_model():
    return "a string"
'''


@pytest.fixture
def factory_dir(tmp_path, monkeypatch):
    """A folder holding mytinyvit.py, the current folder (as a user runs vit-probe beside their code)."""
    d = tmp_path / "code"
    d.mkdir()
    (d / "mytinyvit.py").write_text(FACTORY)
    monkeypatch.chdir(d)
    monkeypatch.delitem(sys.modules, "mytinyvit", raising=False)
    yield d
    sys.modules.pop("mytinyvit", None)


def test_a_factory_is_imported_from_the_current_folder_and_seeded(factory_dir):
    a = model_source.from_factory("mytinyvit:build", {"dim": 8}, seed=5)
    b = model_source.from_factory("mytinyvit:build", {"dim": 8}, seed=5)
    assert str(factory_dir) not in sys.path                                 # the search path is left as it was
    assert a.embed.weight.shape == (8, 3, 8, 8) and len(models.attention_modules(a)) == 2
    for (k, v), w in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(v, w), k
    for spec, msg in [("mytinyvit", "is not module:function"), ("nosuchmod_xyz:build", "no module named nosuchmod_xyz"),
                      ("mytinyvit:nope", "mytinyvit has no nope")]:
        with pytest.raises(UsageError, match=msg):
            model_source.from_factory(spec, {}, 0)
    from jackson.config import RunFailed        # the factory ran and gave no model: the run failed (exit 1)
    with pytest.raises(RunFailed, match=r"mytinyvit:not_a_model returned a str, not a model \(a torch nn.Module\)"):
        model_source.from_factory("mytinyvit:not_a_model", {}, 0)


def test_arch_and_timm_descriptions_load_as_their_options_do(tmp_path):
    from vit_probe.common import load_model
    torch.manual_seed(0)
    timm_vit = models.build(models.parse_arch("vit_p8_d32_l2_h2"))
    torch.save(timm_vit.state_dict(), tmp_path / "w.pth")
    x = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(8))
    by_arch, _, _ = load_model("", False, str(tmp_path / "w.pth"), "vit_p8_d32_l2_h2")
    j = _write(tmp_path / "arch.json", {"kind": "arch", "arch": "vit_p8_d32_l2_h2"})
    by_json, desc, _ = load_model("", False, str(tmp_path / "w.pth"), "", model_json=str(j))
    with torch.no_grad():
        assert torch.equal(by_arch(x), by_json(x)) and desc == "vit_p8_d32_l2_h2 from w.pth"
    j = _write(tmp_path / "timm.json", {"kind": "timm", "name": "vit_tiny_patch16_224",
                                        "kwargs": {"img_size": 32, "patch_size": 8, "num_classes": 10}})
    m, desc, _ = load_model("", False, "", "", seed=1, model_json=str(j))
    again, _, _ = load_model("", False, "", "", seed=1, model_json=str(j))
    assert desc == "timm vit_tiny_patch16_224 (random init, seed 1)" and m(x).shape == (2, 10)
    for (k, v), w in zip(m.state_dict().items(), again.state_dict().values()):
        assert torch.equal(v, w), k                                          # the seed sets the init
    sv = spectra.collect(m, np.zeros((1, 32, 32, 3), np.uint8), [0], [0], progress=False)
    assert sv[(0, 0)].shape == (1, 17)


# ---------------------------------------------------------------- vit-probe spectra end to end

def _spectra(args, tmp_path, official):   # official: the tiny CIFAR fixture's folder
    from vit_probe.cli import main
    main(["spectra", *args, "--data", str(official), "--cache", str(tmp_path / "c"), "--n-images", "6",
          "--batch-size", "4", "--k-show", "5", "--out", str(tmp_path / "o")])
    return tmp_path / "o"


@pytest.mark.parametrize("norm_first", [True, pytest.param(False, marks=pytest.mark.slow)],   # one norm order
                         ids=["pre-norm", "post-norm"])                                   # in the fast subset
def test_spectra_of_a_saved_torch_vit_checkpoint(norm_first, official, tmp_path):
    """state dict + description JSON -> `vit-probe spectra`; the per-image singular values it writes
    equal those of the hand-computed logits of the same images."""
    m = tiny(norm_first, seed=6)
    torch.save(m.state_dict(), tmp_path / "w.pth")
    _write(tmp_path / "model.json", {"kind": "torch-vit", **TINY_TORCH, "norm_first": norm_first})
    out = _spectra(["--checkpoint", str(tmp_path / "w.pth"), "--model-json", str(tmp_path / "model.json"),
                    "--violin-layer", "1", "--violin-head", "1"], tmp_path, official)
    heads = pd.read_csv(out / "heads.csv")
    assert sorted(zip(heads.layer, heads["head"])) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert set(heads.tau) == {17} and set(heads.n_images) == {6}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["model"] == f"torch-vit p8 d32 l2 h2 {'pre' if norm_first else 'post'}-norm from w.pth"
    assert "strict load" in summary["checkpoint_check"]
    split = cdata.load(official, "test", cache=tmp_path / "c")
    images = split.images[cdata.subset(split.labels, 6, 0)]
    with torch.no_grad():
        _, logits = manual_forward(m.double(), spectra.model_input(m, images).double())
    ref = np.linalg.svd(logits[1][:, 1].numpy(), compute_uv=False)[:, :5]    # (6 images, first 5)
    got = pd.read_csv(out / "violin_samples.csv.gz").pivot(index="image", columns="i", values="sv").to_numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)
    for f in ("spectra.csv.gz", "violin_first_head.png", "spectra_grid.png", "summary.md", "report.json"):
        assert (out / f).is_file(), f


def test_check_accuracy_is_in_the_printed_result(official, tmp_path, capsys):
    """--check-accuracy's number is printed with the result, the same as summary.json and summary.md hold."""
    m = tiny(True, seed=6)
    torch.save(m.state_dict(), tmp_path / "w.pth")
    _write(tmp_path / "model.json", {"kind": "torch-vit", **TINY_TORCH, "norm_first": True})
    out = _spectra(["--checkpoint", str(tmp_path / "w.pth"), "--model-json", str(tmp_path / "model.json"),
                    "--check-accuracy"], tmp_path, official)
    acc = json.loads((out / "summary.json").read_text())["accuracy"]
    n = len(cdata.load(official, "test", cache=tmp_path / "c"))
    assert 0 <= acc <= 1
    line = f"top-1 accuracy {acc:.4f} on the whole test split ({n} images)"
    assert line in capsys.readouterr().out
    assert f"Top-1 accuracy on the whole test split ({n} images): {acc:.4f}." in (out / "summary.md").read_text()


def test_spectra_of_a_factory_model_with_its_state_dict(factory_dir, official, tmp_path):
    m = model_source.from_factory("mytinyvit:build", {}, seed=7)
    torch.save(m.state_dict(), tmp_path / "mine.pt")
    out = _spectra(["--model-factory", "mytinyvit:build", "--checkpoint", str(tmp_path / "mine.pt"),
                    "--tokens", "patches"], tmp_path, official)
    heads = pd.read_csv(out / "heads.csv")
    assert len(heads) == 4 and set(heads.tau) == {16}          # num_prefix_tokens = 0: all 16 tokens are patches
    assert json.loads((out / "summary.json").read_text())["model"] == "mytinyvit:build() from mine.pt"


# ---------------------------------------------------------------- refusals: one line, exit 2, nothing written

def _torch_vit_files(tmp_path: Path, kind: str = "torch-vit") -> tuple[Path, Path]:
    torch.save(tiny().state_dict(), tmp_path / "w.pth")
    return tmp_path / "w.pth", _write(tmp_path / "model.json", {"kind": kind, **TINY_TORCH} if kind == "torch-vit"
                                      else {"kind": kind})


def _bad_kind(t):
    w, j = _torch_vit_files(t, "onnx")
    return ["--checkpoint", str(w), "--model-json", str(j)], "kind 'onnx' is not supported; " + models.CHECKPOINT_KINDS


def _pickled_whole_model(t):
    torch.save(tiny(), t / "whole.pth")                       # the model object itself, not its state dict
    _, j = _torch_vit_files(t)
    return (["--checkpoint", str(t / "whole.pth"), "--model-json", str(j)],
            "cannot read " + str(t / "whole.pth") + " as weights (UnpicklingError")


def _torch_weights_with_arch(t):
    w, _ = _torch_vit_files(t)
    return ["--checkpoint", str(w), "--arch", "vit_p8_d32_l2_h2"], "holds a ViT built from torch.nn.TransformerEncoder"


def _timm_weights_with_torch_description(t):
    torch.manual_seed(0)
    torch.save(models.build(models.parse_arch("vit_p8_d32_l2_h2")).state_dict(), t / "timm.pth")
    _, j = _torch_vit_files(t)
    return (["--checkpoint", str(t / "timm.pth"), "--model-json", str(j)],
            "--checkpoint: timm.pth holds a timm ViT (blocks.N.attn.qkv), not a torch-vit: give --arch SPEC")


def _other_torch_vit_sizes(t):
    w, _ = _torch_vit_files(t)
    j = _write(t / "wide.json", {"kind": "torch-vit", **TINY_TORCH, "dim": 64})
    return (["--checkpoint", str(w), "--model-json", str(j)],
            "--checkpoint does not fit the architecture: shape mismatch: cls_token (1, 1, 32) vs (1, 1, 64)")


def _two_sources(t):
    _, j = _torch_vit_files(t)
    return ["--arch", "vit_p8_d32_l2_h2", "--model-json", str(j)], "give one of --model, --arch, --model-json or " \
        "--model-factory, not --arch and --model-json"


def _factory_without_attention(t):
    (t / "plainmlp_xyz.py").write_text("from torch import nn\n\ndef build():\n    return nn.Linear(3, 3)\n")
    return ["--model-factory", "plainmlp_xyz:build"], "(Linear) has no attention module vit-probe can read"


REFUSALS = {"unknown-description-kind": _bad_kind, "pickled-whole-model": _pickled_whole_model,
            "torch-weights-with-arch": _torch_weights_with_arch,
            "timm-weights-torch-description": _timm_weights_with_torch_description,
            "other-torch-vit-sizes": _other_torch_vit_sizes,
            "two-model-sources": _two_sources, "factory-without-attention": _factory_without_attention}


_SHOWN = {   # how each refusal looks on the command line (for reports/RELIABILITY.md)
    "unknown-description-kind": "--checkpoint w.pth --model-json model.json   # {\"kind\": \"onnx\"}",
    "pickled-whole-model": "--checkpoint whole.pth --model-json model.json   # torch.save(model), not its state dict",
    "torch-weights-with-arch": "--checkpoint w.pth --arch vit_p8_d32_l2_h2   # w.pth: an nn.TransformerEncoder ViT",
    "timm-weights-torch-description": "--checkpoint timm.pth --model-json model.json   # timm weights, torch-vit description",
    "other-torch-vit-sizes": "--checkpoint w.pth --model-json wide.json   # the description's dim differs from the weights'",
    "two-model-sources": "--arch vit_p8_d32_l2_h2 --model-json model.json",
    "factory-without-attention": "--model-factory plainmlp_xyz:build   # build() returns nn.Linear(3, 3)",
}
FAULT_CASES = [{"id": f"vit-{k}", "command": f"vit-probe spectra {_SHOWN[k]}",
                "expect": "exit 2, one line saying what is wrong, ending with the supported kinds where a model is "
                          "refused; nothing written",
                "test": "tests/test_vit_probe_torch.py::test_bad_checkpoint_kinds_are_one_line_exit_2"} for k in REFUSALS]


@pytest.mark.parametrize("case", list(REFUSALS))
def test_bad_checkpoint_kinds_are_one_line_exit_2(case, official, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)                               # where a factory's module is looked for
    args, msg = REFUSALS[case](tmp_path)
    line = _exit2(["spectra", *args, "--data", str(official), "--cache", str(tmp_path / "c"),
                   "--out", str(tmp_path / "o")], capsys)
    assert msg in line, line
    assert not (tmp_path / "o").exists()
    sys.modules.pop("plainmlp_xyz", None)


def test_refusals_that_list_what_is_supported():
    """The list every model / checkpoint refusal ends with names each supported way in."""
    for words in ("--arch SPEC", "--model NAME", "--model-json FILE", "torch-vit, timm, arch or factory",
                  "--model-factory module:function", "nn.MultiheadAttention"):
        assert words in models.CHECKPOINT_KINDS


@pytest.mark.slow
def test_console_script_refuses_a_bad_kind_without_traceback(tmp_path, sub_env, official):
    w, j = _torch_vit_files(tmp_path, "keras")
    exe = Path(sys.executable).parent / "vit-probe"
    r = subprocess.run([str(exe), "spectra", "--checkpoint", str(w), "--model-json", str(j), "--data", str(official),
                        "--out", str(tmp_path / "o")], env=sub_env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "kind 'keras' is not supported" in r.stderr and "Traceback" not in r.stderr


# ---------------------------------------------------------------- the example

@pytest.mark.slow
def test_example_probe_own_torch_model_runs(tmp_path, monkeypatch, capsys):
    """examples/probe_own_torch_model.py OUT, run as a script in this process (runpy: its folder first on sys.path,
    as `python examples/...` puts it; no interpreter start): the probe agrees with q.k/sqrt(d), the spectra run ends."""
    import runpy
    script = ROOT / "examples" / "probe_own_torch_model.py"
    monkeypatch.syspath_prepend(str(script.parent))
    monkeypatch.setattr(sys, "argv", [str(script), str(tmp_path)])
    capsys.readouterr()
    try:
        runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.modules.pop(script.stem, None)         # imported by name by the run's factory: gone with its folder
    stdout = capsys.readouterr().out
    assert "max |probe - manual|" in stdout and (tmp_path / "spectra" / "summary.md").is_file(), stdout
    err = float(stdout.split("max |probe - manual| = ")[1].split()[0])
    assert err < 1e-4


def test_every_refusal_is_a_fault_case_on_the_reliability_page():
    assert list(_SHOWN) == list(REFUSALS) and len(FAULT_CASES) == len(REFUSALS)
