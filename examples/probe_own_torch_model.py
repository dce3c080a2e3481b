"""Probe your own torch model: the attention logits rho_hat(x) = q k^T / sqrt(d) of a ViT built from
torch's nn.TransformerEncoder, and their singular-value spectra (Jiang & Li, Sec. 5.2).

    python examples/probe_own_torch_model.py [OUT]     # 9.3 s of CPU time, one thread (2026-11-28); no downloads

1. `LogitProbe` reads the logits of any model whose attention is nn.MultiheadAttention (or timm's
   Attention) through hooks; they are checked here against q.k/sqrt(d) computed from the weights.
2. The whole `vit-probe spectra` run (tables, figures, summary) on the same model, saved as a state
   dict and named by its factory, on a tiny synthetic CIFAR-like data set.  On the command line:
       vit-probe spectra --model-factory probe_own_torch_model:build --checkpoint own.pth --data DIR
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import torch
from torch import nn

MODULE = Path(__file__).stem        # this file, importable as a module (its folder is on sys.path)


class OwnViT(nn.Module):
    """A ViT of one's own: patches -> [cls; patches] + positions -> post-norm nn.TransformerEncoder."""

    def __init__(self, dim: int = 32, heads: int = 2, depth: int = 2, patch: int = 8):
        super().__init__()
        self.to_tokens = nn.Conv2d(3, dim, patch, patch)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, (32 // patch) ** 2 + 1, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.classify = nn.Linear(dim, 10)

    def forward(self, x):                                          # x: (B, 3, 32, 32)
        t = self.to_tokens(x).flatten(2).transpose(1, 2)          # (B, 16, dim)
        t = torch.cat([self.cls.expand(len(x), -1, -1), t], 1) + self.pos
        return self.classify(self.encoder(t)[:, 0])


def build() -> OwnViT:
    """The factory vit-probe calls (`--model-factory probe_own_torch_model:build`)."""
    return OwnViT()


def main(out: Path) -> None:
    from vit_probe import data as cdata
    from vit_probe.probe import LogitProbe
    from vit_probe.configs import SpectraConfig
    from vit_probe.run_spectra import run_spectra

    torch.manual_seed(0)
    model = build().eval()
    x = torch.randn(4, 3, 32, 32, generator=torch.Generator().manual_seed(1))

    # 1. logits of layer 0, heads 0 and 1, against q.k/sqrt(d) from the first layer's own weights
    seen = {}
    attn = model.encoder.layers[0].self_attn

    def keep_input(_mod, args):                                    # what the attention is called with
        seen["h"] = args[0]
    hook = attn.register_forward_pre_hook(keep_input)
    with torch.no_grad(), LogitProbe(model, layers=[0], heads=[0, 1]) as probe:
        model(x)
    hook.remove()
    D, d = attn.embed_dim, attn.head_dim
    W_Q, W_K = attn.in_proj_weight[:D], attn.in_proj_weight[D:2 * D]
    b_Q, b_K = attn.in_proj_bias[:D], attn.in_proj_bias[D:2 * D]
    with torch.no_grad():
        q, k = seen["h"] @ W_Q.T + b_Q, seen["h"] @ W_K.T + b_K                  # (B, N, D)
        manual = torch.stack([q[..., h * d:(h + 1) * d] @ k[..., h * d:(h + 1) * d].transpose(1, 2) / d ** 0.5
                              for h in range(2)], 1)                             # (B, H, N, N)
    err = (probe.logits[0] - manual).abs().max().item()
    print(f"layer 0 logits {tuple(probe.logits[0].shape)} (B, heads, N, N); max |probe - manual| = {err:.2e}")

    # 2. the full spectra run on the saved weights, through the factory above
    out.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), out / "own.pth")
    data = cdata.write_official_fixture(out / "data", n_train_per_batch=2, n_test=20)   # random 32x32 images
    cfg = SpectraConfig(model_factory=f"{MODULE}:build", checkpoint=str(out / "own.pth"), data=str(data),
                        cache=str(out / "cache"), n_images=20, batch=10, k_show=8, out=str(out / "spectra"))
    summary = run_spectra(cfg, f"vit-probe spectra --model-factory {MODULE}:build --checkpoint own.pth")
    print(f"{summary['model']}: tau = {summary['tau']} tokens, {summary['n_images']} images")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default="", help="folder for the weights, data and the spectra run (default: a temp folder)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        main(Path(a.out or tmp))
