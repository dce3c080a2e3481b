"""Pre-softmax attention logits of a timm ViT, read through its public modules.

A forward hook on each probed block's `attn.qkv` Linear recomputes

    logits[b, h, t, s] = (q_t . k_s) * attn.scale           (B, H, N, N)

with the module's own `num_heads`, `head_dim`, `q_norm`, `k_norm` and `scale` — the quantity
the paper calls rho_hat(x) (Sec. 5.2).  The hook returns nothing, so the model runs exactly as
it would unprobed (fused attention path included); `test_vit_probe` checks both that
softmax(logits) @ v reproduces the module's output and that predictions are unchanged.
"""
from __future__ import annotations

from contextlib import contextmanager

import torch

from jackson.config import UsageError

from .models import attention_modules, split_qkv


def select(n: int, spec: str, what: str, option: str) -> list[int]:
    """Indices from 'all' or a comma list ('0,2', '-1' = last); out-of-range is a UsageError."""
    if spec.strip().lower() == "all":
        return list(range(n))
    out = []
    for p in spec.split(","):
        try:
            i = int(p)
        except ValueError:
            raise UsageError(f"{option}: cannot read '{p}' (give 'all' or indices like 0,1,-1)")
        if not -n <= i < n:
            raise UsageError(f"{option}: {what} {i} is out of range (the model has {n}: 0..{n - 1})")
        out.append(i % n)
    return sorted(set(out))


class LogitProbe:
    """Collects logits of the chosen (layer, head)s on every forward while active.

    probe.logits[layer] -> (B, len(heads), N, N) float tensor of the last forward.
    With keep_qkv=True it also keeps (q, k, v) per layer (for equivalence checks).
    """

    def __init__(self, model, layers: list[int], heads: list[int], keep_qkv: bool = False):
        self.attns = attention_modules(model)
        self.layers, self.heads, self.keep_qkv = layers, heads, keep_qkv
        self.logits: dict[int, torch.Tensor] = {}
        self.qkv: dict[int, tuple] = {}
        self._handles = []

    def _hook(self, layer: int):
        attn = self.attns[layer]

        def hook(_mod, _inp, out):
            q, k, v = split_qkv(attn, out.detach())
            idx = torch.as_tensor(self.heads, device=q.device)
            qh, kh = q.index_select(1, idx), k.index_select(1, idx)
            self.logits[layer] = (qh * attn.scale) @ kh.transpose(-2, -1)   # (B, H_sel, N, N)
            if self.keep_qkv:
                self.qkv[layer] = (q, k, v)
        return hook

    def __enter__(self) -> "LogitProbe":
        for layer in self.layers:
            self._handles.append(self.attns[layer].qkv.register_forward_hook(self._hook(layer)))
        return self

    def __exit__(self, *exc) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()


@contextmanager
def probing(model, layers, heads, keep_qkv=False):
    with LogitProbe(model, layers, heads, keep_qkv) as p:
        yield p
