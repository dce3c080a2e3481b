"""Pre-softmax attention logits of a ViT, read through its public modules.

For every probed attention module a hook recomputes

    logits[b, h, t, s] = (q_t . k_s) * scale                (B, H, N, N)

with the module's own weights, head count and scale — the quantity the paper calls rho_hat(x)
(Sec. 5.2).  Two kinds of attention, two hooks (`models.attention_modules` finds them):

- timm's `Attention` (and `QKAttention`): a forward hook on `attn.qkv` splits its output with
  `num_heads`, `head_dim`, `q_norm`, `k_norm`; scale = `attn.scale`.
- torch's `nn.MultiheadAttention` (inside every `nn.TransformerEncoder`): a forward pre-hook on the
  module reads the query and key it is called with and projects them with its own in-projection
  (`models.mha_qkv`); scale = head_dim^-1/2.  Masks are not applied: the logits are those before
  any attn_mask, as for timm.

The hooks return nothing, so the model runs exactly as it would unprobed (fused attention path
included; a hooked nn.TransformerEncoderLayer leaves torch's fast path, which computes the same
function); `test_vit_probe` and `test_vit_probe_torch` check that softmax(logits) @ v reproduces
the module's output, that the logits equal a manual q.k/sqrt(d) from the weights, and that
predictions are unchanged.
"""
from __future__ import annotations

from contextlib import contextmanager

import torch
from torch import nn

from jackson.config import UsageError, need

from .models import attention_modules, attention_scale, mha_qkv, split_qkv


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
    layers, heads: None (the default, as on the command line) probes every layer and every head; a layer or
    head the model does not have is a UsageError naming it.
    With keep_qkv=True it also keeps (q, k, v) per layer (for equivalence checks).
    """

    def __init__(self, model, layers: list[int] | None = None, heads: list[int] | None = None,
                 keep_qkv: bool = False):
        self.attns = attention_modules(model)
        n_heads = min(int(a.num_heads) for a in self.attns)
        layers = list(range(len(self.attns))) if layers is None else [int(x) for x in layers]
        heads = list(range(n_heads)) if heads is None else [int(x) for x in heads]
        bad = [x for x in layers if not 0 <= x < len(self.attns)]
        need(not bad, f"layers: the model has {len(self.attns)} attention layers (0..{len(self.attns) - 1}), not {bad[0] if bad else ''}")
        bad = [x for x in heads if not 0 <= x < n_heads]
        need(not bad, f"heads: the model's attention has {n_heads} heads (0..{n_heads - 1}), not {bad[0] if bad else ''}")
        self.layers, self.heads, self.keep_qkv = layers, heads, keep_qkv
        self.logits: dict[int, torch.Tensor] = {}
        self.qkv: dict[int, tuple] = {}
        self._handles = []

    def _keep(self, layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
        idx = torch.as_tensor(self.heads, device=q.device)
        qh, kh = q.index_select(1, idx), k.index_select(1, idx)
        scale = attention_scale(self.attns[layer])
        self.logits[layer] = (qh * scale) @ kh.transpose(-2, -1)       # (B, H_sel, N, N)
        if self.keep_qkv:
            self.qkv[layer] = (q, k, v)

    def _attach(self, layer: int):
        """Hook the attention module of `layer`; returns the hook's handle."""
        attn = self.attns[layer]
        if isinstance(attn, nn.MultiheadAttention):
            def pre_hook(_mod, args, kwargs):    # forward(query, key, value, ...), any of them by keyword
                names = ("query", "key", "value")
                query, key, value = (*args[:3], *(kwargs[n] for n in names[len(args[:3]):]))
                self._keep(layer, *mha_qkv(attn, query.detach(), key.detach(), value.detach()))
            return attn.register_forward_pre_hook(pre_hook, with_kwargs=True)

        def hook(_mod, _inp, out):
            self._keep(layer, *split_qkv(attn, out.detach()))
        return attn.qkv.register_forward_hook(hook)

    def __enter__(self) -> "LogitProbe":
        for layer in self.layers:
            self._handles.append(self._attach(layer))
        return self

    def __exit__(self, *exc) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()


@contextmanager
def probing(model, layers, heads, keep_qkv=False):
    with LogitProbe(model, layers, heads, keep_qkv) as p:
        yield p
