"""ViTs from timm: a timm model by name, or a small CIFAR ViT from an architecture spec
(`vit_probe.arch`: `vit_p4_d128_l4_h4`, `..._q8` for m_h = 8 query/key dimensions per head), with the
per-head query/key size m_h set apart from the value size.

The model is timm's `VisionTransformer`; only the attention modules of an m_h variant are
replaced by `QKAttention`, an attention module like timm's `Attention` whose fused qkv projection
emits heads*(m_h + m_h + d_v) features.  Probing code reads any of them through `split_qkv`.

Models that are not timm ViTs are probed too, wherever their attention is timm's `Attention` or
torch's `nn.MultiheadAttention` (so any `nn.TransformerEncoder`): `attention_modules` finds them,
`mha_qkv` recomputes q, k, v of an `nn.MultiheadAttention` from its inputs and its own in-projection.
Such models come from `vit_probe.model_source` (a description JSON or a `module:function` factory).
"""
from __future__ import annotations

import pickle
import re
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from jackson.budget import regular_file
from jackson.checkpoint import load_weights_only
from jackson.config import UsageError
# parse_arch and arch_spec are also used as models.parse_arch / models.arch_spec beside models.build
from .arch import ARCH_RE, Arch, arch_spec, parse_arch  # noqa: F401
from .hub import hub_unreachable, offline_message


class QKAttention(nn.Module):
    """Multi-head self-attention with m_h query/key dimensions and d_v value dimensions per head.

    logits[b, h, t, s] = (q_t . k_s) * m_h^-1/2 ;  out = proj( softmax(logits) @ v )
    The explicit path below is the only path: the logit matrix is always formed.
    """

    def __init__(self, dim: int, num_heads: int, m_h: int, qkv_bias: bool = True):
        super().__init__()
        self.num_heads, self.m_h, self.head_dim = num_heads, m_h, dim // num_heads  # head_dim = d_v
        self.scale = m_h ** -0.5
        self.qkv = nn.Linear(dim, num_heads * (2 * m_h + self.head_dim), bias=qkv_bias)
        self.q_norm = nn.Identity()
        self.k_norm = nn.Identity()
        self.proj = nn.Linear(dim, dim)
        for lin in (self.qkv, self.proj):
            nn.init.trunc_normal_(lin.weight, std=0.02)
            nn.init.zeros_(lin.bias)

    def split_qkv(self, qkv: torch.Tensor):
        B, N, _ = qkv.shape                       # batch, tokens, heads*(2 m_h + d_v)
        H, m, dv = self.num_heads, self.m_h, self.head_dim
        q, k, v = qkv.split([H * m, H * m, H * dv], dim=-1)
        q = q.view(B, N, H, m).transpose(1, 2)    # (B, H, N, m_h)
        k = k.view(B, N, H, m).transpose(1, 2)
        v = v.view(B, N, H, dv).transpose(1, 2)   # (B, H, N, d_v)
        return q, k, v

    def forward(self, x: torch.Tensor, attn_mask=None, is_causal: bool = False) -> torch.Tensor:
        B, N, C = x.shape
        q, k, v = self.split_qkv(self.qkv(x))
        logits = (q * self.scale) @ k.transpose(-2, -1)        # (B, H, N, N)
        x = logits.softmax(dim=-1) @ v                         # (B, H, N, d_v)
        return self.proj(x.transpose(1, 2).reshape(B, N, C))


def split_qkv(attn: nn.Module, qkv: torch.Tensor):
    """(q, k, v), each (B, H, N, ·), from the output of `attn.qkv`, for timm's Attention and
    QKAttention alike; q and k pass through the module's own q_norm / k_norm."""
    if isinstance(attn, QKAttention):
        q, k, v = attn.split_qkv(qkv)
    else:
        B, N, _ = qkv.shape
        q, k, v = qkv.reshape(B, N, 3, attn.num_heads, attn.head_dim).permute(2, 0, 3, 1, 4).unbind(0)
    return attn.q_norm(q), attn.k_norm(k), v


def mha_qkv(attn: nn.MultiheadAttention, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor):
    """(q, k, v), each (B, H, N, head_dim), from the inputs of an `nn.MultiheadAttention` call, with
    the module's own in-projection: the packed `in_proj_weight` = [W_Q; W_K; W_V] (E x E each), or
    `q_proj_weight` / `k_proj_weight` / `v_proj_weight` when kdim or vdim differ from embed_dim;
    `in_proj_bias` is split the same way.  Inputs are (B, N, E) with batch_first, else (N, B, E);
    unbatched (N, E) inputs count as B = 1.  torch then computes, per head,
    softmax(q k^T / sqrt(head_dim) + mask) v, and `out_proj` of the heads concatenated
    (`F.multi_head_attention_forward`)."""
    check_probeable(attn)

    def batch_major(t):                          # -> (B, N, E)
        if t.dim() == 2:
            return t.unsqueeze(0)
        return t if attn.batch_first else t.transpose(0, 1)
    query, key, value = batch_major(query), batch_major(key), batch_major(value)
    if attn.in_proj_weight is not None:          # packed: embed_dim == kdim == vdim
        W_Q, W_K, W_V = attn.in_proj_weight.chunk(3)
    else:
        W_Q, W_K, W_V = attn.q_proj_weight, attn.k_proj_weight, attn.v_proj_weight
    b_Q, b_K, b_V = attn.in_proj_bias.chunk(3) if attn.in_proj_bias is not None else (None, None, None)
    H, d = attn.num_heads, attn.head_dim

    def heads(t, W, b):                          # (B, N, E_in) -> (B, H, N, d)
        B, N, _ = t.shape
        return F.linear(t, W, b).view(B, N, H, d).transpose(1, 2)
    return heads(query, W_Q, b_Q), heads(key, W_K, b_K), heads(value, W_V, b_V)


def check_probeable(attn: nn.Module) -> None:
    """Refuse (UsageError, one line) an nn.MultiheadAttention whose logits are not q k^T alone:
    add_bias_kv and add_zero_attn append a key that no input token has."""
    if isinstance(attn, nn.MultiheadAttention) and (attn.bias_k is not None or attn.add_zero_attn):
        raise UsageError("the model's nn.MultiheadAttention uses add_bias_kv or add_zero_attn (an extra key "
                         "beside the tokens): vit-probe probes attention whose logits are q k^T over the tokens")


def attention_scale(attn: nn.Module) -> float:
    """The factor of q k^T in the logits: the module's own `scale` (timm), head_dim^-1/2 for torch's
    nn.MultiheadAttention (which has no such attribute and always scales so)."""
    if isinstance(attn, nn.MultiheadAttention):
        return attn.head_dim ** -0.5
    return attn.scale


def build(arch: Arch, num_classes: int = 10) -> nn.Module:
    """timm's VisionTransformer for 32x32 inputs; m_h variants get QKAttention in every block.  Its weights are
    priced first (`vit_probe.arch.check_memory`): an architecture past the memory limit is one line, unbuilt."""
    from .arch import check_memory
    check_memory(arch)
    from timm.models.vision_transformer import VisionTransformer
    model = VisionTransformer(img_size=32, patch_size=arch.patch, num_classes=num_classes,
                              embed_dim=arch.dim, depth=arch.depth, num_heads=arch.heads,
                              mlp_ratio=arch.mlp_ratio, qkv_bias=True, global_pool="token",
                              class_token=True)
    if arch.m_h is not None:
        for blk in model.blocks:
            blk.attn = QKAttention(arch.dim, arch.heads, arch.m_h)
    return model


def create_timm(name: str, pretrained: bool, num_classes: int | None = None, **kwargs) -> nn.Module:
    """A timm model by name (its own weights when pretrained: needs internet or timm's cache);
    kwargs go to timm.create_model (e.g. img_size), which refuses the ones the model does not take."""
    import timm
    if name not in timm.list_models() and name not in timm.list_models(pretrained=True):
        raise UsageError(f"--model: timm has no model named '{name}'")
    if pretrained and not _weights_cached(name):
        host, why = hub_unreachable()
        if why:   # fail in ~3 s instead of timm's ~45 s of retries and a page of warnings
            raise UsageError(offline_message(name, host, why))
    kw = dict(kwargs) if num_classes is None else {**kwargs, "num_classes": num_classes}
    try:
        return timm.create_model(name, pretrained=pretrained, **kw)
    except Exception as e:
        raise UsageError(f"--model {name}: could not create it ({_why(e, 200)})")


def _weights_cached(name: str) -> bool:
    """Whether timm's pretrained weights for `name` are already on disk (Hugging Face cache,
    torch hub cache, or a local file named by the model's pretrained config)."""
    from timm.models import get_pretrained_cfg
    try:
        cfg = get_pretrained_cfg(name)
    except Exception:
        return False
    if cfg is None:
        return False
    if cfg.file and Path(cfg.file).is_file():
        return True
    if cfg.hf_hub_id:
        from huggingface_hub import try_to_load_from_cache
        files = [cfg.hf_hub_filename] if cfg.hf_hub_filename else ["model.safetensors", "pytorch_model.bin"]
        if any(isinstance(try_to_load_from_cache(cfg.hf_hub_id, f), str) for f in files):
            return True
    if cfg.url:
        from urllib.parse import urlparse
        return (Path(torch.hub.get_dir()) / "checkpoints" / Path(urlparse(cfg.url).path).name).is_file()
    return False


def _why(e: BaseException, width: int = 160) -> str:
    """An exception in one line: its type and the first non-blank line of its message, if any."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return f"{type(e).__name__}: {lines[0][:width]}" if lines else type(e).__name__


class StateDict(dict):
    """A state dict read from a file (`read_checkpoint`); `path` names that file in `load_weights`' refusals."""
    path: Path | None = None


MAX_CHECKPOINT_BYTES = 8 * 2 ** 30   # a checkpoint larger than this is refused unread (ViT-H/14: about 2.5 GB)


def read_checkpoint(path: str | Path) -> tuple[dict, dict]:
    """(state dict, metadata) of a weights file: safetensors, or a torch file read with
    weights_only=True (no code runs).  Metadata is what the file says about the architecture:
    'arch' (the spec our own training stores beside the weights) and 'num_heads' (a top-level
    entry, or one in a 'config' / 'cfg' / 'args' / 'model_config' dict); empty when it says nothing.

    Refused in one line naming the file (UsageError): an empty or unreadable file, one that holds no
    state dict of tensors, a complex tensor (no model vit-probe reads has complex weights), and a
    floating tensor holding nan or inf (named: the first such tensor in the file's order), which no
    probe can take a spectrum of."""
    path = regular_file(Path(path).expanduser(), "--checkpoint")     # a FIFO is refused before it is opened
    if not path.is_file():
        raise UsageError(f"--checkpoint: {path} does not exist")
    if path.stat().st_size == 0:
        raise UsageError(f"--checkpoint: {path} is empty (0 bytes); {CHECKPOINT_KINDS}")
    if path.stat().st_size > MAX_CHECKPOINT_BYTES:
        raise UsageError(f"--checkpoint: {path} is {path.stat().st_size:,} bytes, more than the limit of "
                         f"{MAX_CHECKPOINT_BYTES:,} for a checkpoint (a ViT-L/16 is about 1.2 GB); not read")
    try:
        if path.suffix == ".safetensors":
            from safetensors import safe_open
            from safetensors.torch import load_file
            sd = load_file(str(path))
            with safe_open(str(path), "pt") as f:
                top = dict(f.metadata() or {})
        else:
            sd = top = load_weights_only(path)
    except pickle.UnpicklingError:   # a bare pickle, or a whole model: torch's weights-only reader runs no code
        raise UsageError(f"--checkpoint: cannot read {path} as weights (UnpicklingError: a pickle that torch's "
                         f"weights-only reader refuses, e.g. a whole model or a plain pickle); {CHECKPOINT_KINDS}") from None
    except Exception as e:   # TorchScript, truncated, or not weights at all
        raise UsageError(f"--checkpoint: cannot read {path} as weights ({_why(e)}); {CHECKPOINT_KINDS}") from None
    meta = {}
    if isinstance(top, dict):
        if isinstance(top.get("arch"), str):
            meta["arch"] = top["arch"]
        for holder in (top, *(top.get(k) for k in ("config", "cfg", "args", "model_config"))):
            if isinstance(holder, dict) and str(holder.get("num_heads", "")).isdigit():
                meta["num_heads"] = int(holder["num_heads"])
                break
    for k in ("state_dict", "model", "model_state_dict"):
        if isinstance(sd, dict) and k in sd and isinstance(sd[k], dict):
            sd = sd[k]
    if not isinstance(sd, dict) or not all(torch.is_tensor(v) for v in sd.values()):
        raise UsageError(f"--checkpoint: {path} holds no state dict of tensors; {CHECKPOINT_KINDS}")
    for k, v in sd.items():
        if v.is_complex() or v.is_quantized:
            raise UsageError(f"--checkpoint: {path}: tensor {k} is {_dtype(v)}, not real floating point or "
                             f"integer; vit-probe loads real weights (float32, float16, bfloat16, float64)")
        if v.is_floating_point() and v.numel() and not bool(torch.isfinite(v).all()):
            bad = int((~torch.isfinite(v)).sum())
            raise UsageError(f"--checkpoint: {path}: tensor {k} holds non-finite values ({bad} of {v.numel()} are "
                             f"nan or inf); vit-probe probes finite weights only")
    out = StateDict(sd)
    out.path = path
    return out, meta


def _dtype(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def read_state_dict(path: str | Path) -> dict:
    """Weights only: a safetensors file, or a torch file read with weights_only=True (no code runs)."""
    return read_checkpoint(path)[0]


def stated_arch(path: str | Path, meta: dict) -> tuple[str, str] | None:
    """(spec, where it was read) of the architecture a checkpoint states, or None: its own 'arch'
    record first, else a spec in its file name (vit_p4_d128_l4_h4_cifar10_timm.pth)."""
    if "arch" in meta:
        return meta["arch"], "recorded in the checkpoint"
    m = ARCH_RE.search(Path(path).name)
    return (m.group(0), "its file name") if m else None


def check_arch(path: str | Path, meta: dict, model: nn.Module, arch: str = "") -> str:
    """Refuse (UsageError, one line) a checkpoint whose stated architecture differs from the one
    it is loaded into; returns one line saying what was checked.

    Tensor shapes cannot tell head counts apart (a 4-head and a 2-head ViT of the same width have
    identical tensors), so the head count is checked only where the file states it: our own
    checkpoints record their arch spec; foreign ones may carry 'num_heads' or a spec in their name.
    A foreign checkpoint that states neither is loaded as --arch says (shapes still checked)."""
    name = Path(path).name
    heads = attention_modules(model)[0].num_heads
    if arch and (stated := stated_arch(path, meta)):
        spec, where = stated
        try:
            want = parse_arch(spec)
        except UsageError:
            raise UsageError(f"--checkpoint: {name} states the architecture '{spec}' ({where}), "
                             "which is not an arch spec") from None
        have = parse_arch(arch)
        diff = [f"{f} {getattr(want, f)} vs {getattr(have, f)}" for f in ("patch", "dim", "depth", "heads",
                "mlp_ratio", "m_h") if getattr(want, f) != getattr(have, f)]
        if diff:
            raise UsageError(f"--checkpoint: {name} is {arch_spec(want)} ({where}) but --arch is {arch}: "
                             f"{', '.join(diff)}; give --arch {arch_spec(want)}")
        return f"architecture {arch_spec(want)} ({where}) matches --arch, head count included"
    if "num_heads" in meta:
        if meta["num_heads"] != heads:
            raise UsageError(f"--checkpoint: {name} records num_heads {meta['num_heads']} but the model has "
                             f"{heads} heads")
        return f"head count {heads} (recorded in the checkpoint) matches"
    return (f"{name} states no architecture: tensor shapes checked, head count ({heads}) taken on trust "
            "(shapes cannot tell it)")


ATTENTION_KINDS = "timm's Attention or torch's nn.MultiheadAttention"
# every refusal of a model or checkpoint ends with this list of what is supported
CHECKPOINT_KINDS = ("vit-probe reads timm ViTs (blocks.N.attn.qkv) with --arch SPEC or --model NAME, and a model "
                    f"whose attention is {ATTENTION_KINDS} with --model-json FILE (kind torch-vit, timm, arch or "
                    "factory) or --model-factory module:function, each with an optional --checkpoint state dict")
TIMM_QKV = re.compile(r"(?:^|\.)blocks\.\d+\.attn\.qkv\.weight$")
TORCH_MHA = re.compile(r"(?:^|\.)(?:in_proj_weight|[qkv]_proj_weight)$|(?:^|\.)self_attn\.out_proj\.weight$")
ATTN_WORDS = ("qkv", "attn", "attention", "in_proj", "query", "q_proj")


def check_layout(path: str | Path, sd: dict) -> None:
    """Refuse (UsageError, one line) a state dict that is not a timm ViT, saying what it holds:
    a ViT built from torch's nn.TransformerEncoder / nn.MultiheadAttention (keys ...in_proj_weight,
    ...self_attn.out_proj.weight), or no attention weights at all (not a ViT).  A state dict with
    timm's blocks.N.attn.qkv, or with other attention keys, goes on to the strict load, whose
    missing / unexpected / shape lines say what does not fit."""
    if any(TIMM_QKV.search(k) for k in sd):
        return
    name = Path(path).name
    mha = [k for k in sd if TORCH_MHA.search(k)]
    if mha:
        raise UsageError(f"--checkpoint: {name} holds a ViT built from torch.nn.TransformerEncoder/MultiheadAttention "
                         f"(keys like {mha[0]}); {CHECKPOINT_KINDS}")
    if not any(w in k.lower() for k in sd for w in ATTN_WORDS):
        keys = list(sd)
        few = ", ".join(keys[:3]) + (", ..." if len(keys) > 3 else "")
        raise UsageError(f"--checkpoint: {name} is not a ViT state dict: none of its {len(keys)} keys "
                         f"({few}) is an attention weight (qkv / attn / in_proj); {CHECKPOINT_KINDS}")


def load_checkpoint(model: nn.Module, path: str | Path, arch: str = "") -> str:
    """Read `path`, refuse a state dict that is not a timm ViT (`check_layout`), check it against
    the architecture (`check_arch`), load it strictly; returns the line saying what was checked."""
    sd, meta = read_checkpoint(path)
    check_layout(path, sd)
    note = check_arch(path, meta, model, arch)
    load_weights(model, sd)
    return note


def load_weights(model: nn.Module, sd: dict, source: str = "--checkpoint") -> None:
    """Strict load; missing, unexpected and shape-mismatched keys are named in one line.  A tensor of
    another kind than the model's (integer or bool where the model holds floating point, or the
    reverse) is refused in one line naming it, not cast: an int8 or bool checkpoint is not the
    float weights it would be cast to."""
    own = model.state_dict()
    missing = [k for k in own if k not in sd]
    unexpected = [k for k in sd if k not in own]
    shape = [f"{k} {tuple(sd[k].shape)} vs {tuple(own[k].shape)}" for k in own
             if k in sd and sd[k].shape != own[k].shape]
    if missing or unexpected or shape:
        def few(xs):
            return ", ".join(xs[:4]) + (f" (+{len(xs) - 4} more)" if len(xs) > 4 else "")
        parts = [f"shape mismatch: {few(shape)}" if shape else "",
                 f"missing: {few(missing)}" if missing else "",
                 f"unexpected: {few(unexpected)}" if unexpected else ""]
        raise UsageError(f"{source} does not fit the architecture: " + "; ".join(p for p in parts if p))
    for k, mine in own.items():
        theirs = sd[k]
        if _kind(theirs) != _kind(mine):
            where = f"{source}: {sd.path}" if getattr(sd, "path", None) else source
            raise UsageError(f"{where}: tensor {k} is {_dtype(theirs)} where the model's is {_dtype(mine)}; "
                             f"give {_kind(mine)} weights (vit-probe does not cast a checkpoint)")
    model.load_state_dict(sd, strict=True)


def _kind(t: torch.Tensor) -> str:
    """floating point, complex, bool or integer: what a load must not change."""
    if t.is_complex():
        return "complex"
    if t.is_floating_point():
        return "floating-point"
    return "bool" if t.dtype == torch.bool else "integer"


def qk_dim(attn: nn.Module) -> int:
    """Per-head query/key size: the rank bound of each head's logit matrix."""
    return attn.m_h if isinstance(attn, QKAttention) else attn.head_dim


def attention_types() -> tuple[type, ...]:
    """The attention modules vit-probe reads: QKAttention, timm's Attention, nn.MultiheadAttention."""
    from timm.layers import Attention
    return QKAttention, Attention, nn.MultiheadAttention


def attention_modules(model: nn.Module) -> list[nn.Module]:
    """The attention modules of a model in registration order, which is block order for a timm ViT
    (blocks[i].attn) and layer order for nn.TransformerEncoder (layers[i].self_attn): layer i of
    --layers is the i-th of them."""
    found = [m for m in model.modules() if isinstance(m, attention_types())]
    if not found:
        raise UsageError(f"the model ({type(model).__name__}) has no attention module vit-probe can read: "
                         f"it probes attention that is {ATTENTION_KINDS}")
    for m in found:
        check_probeable(m)
    return found


def accuracy(model: nn.Module, images, labels, batch: int = 500, device: str = "cpu",
             progress: bool = False, desc: str = "eval", norm=None) -> float:
    """Top-1 accuracy on uint8 images (N, 32, 32, 3); norm: the input normalisation (a `normalize.Norm`;
    None: CIFAR-10's)."""
    _, wrong, n = _evaluate(model, images, labels, batch, device, progress, desc, norm)
    return (n - wrong) / max(n, 1)


def cross_entropy(model: nn.Module, images, labels, batch: int = 500, device: str = "cpu") -> tuple[float, float]:
    """(mean cross-entropy, top-1 error) in eval mode."""
    tot, wrong, n = _evaluate(model, images, labels, batch, device)
    return tot / max(n, 1), wrong / max(n, 1)


def _evaluate(model, images, labels, batch, device, progress=False, desc="eval", norm=None) -> tuple[float, int, int]:
    """(summed cross-entropy, wrong top-1 predictions, n) over uint8 images, eval mode, no grad."""
    from tqdm.auto import tqdm
    from .data import MEAN, STD, to_tensor
    mean, std = (norm.mean, norm.std) if norm is not None else (MEAN, STD)
    model.eval()
    tot, wrong = 0.0, 0
    with torch.inference_mode():
        for i in tqdm(range(0, len(labels), batch), desc=desc, disable=not (progress and sys.stderr.isatty()), leave=False):
            x = to_tensor(images[i:i + batch], mean, std).to(device)
            y = torch.as_tensor(labels[i:i + batch]).to(device)
            out = model(x)
            tot += float(F.cross_entropy(out, y, reduction="sum"))
            wrong += int((out.argmax(-1) != y).sum())
    return tot, wrong, len(labels)
