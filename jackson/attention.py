"""Attention variants any model can use: softmax, Sparse Transformer blocks, linear.

Every function takes per-head tensors q, k (..., T, d) and v (..., T, d_v) -- any leading
batch / head / member dimensions -- and returns (..., T, d_v).  By default (causal, for the
decoders of cot_dp) position i may use positions j <= i only; `causal=False` (the Eq. (5) model,
whose targets sum over every s) lets every position use every j the pattern allows:

  softmax  out_i = sum_j softmax_j(q_i . k_j * scale) v_j over j <= i          (Eq. 4)
  sparse   the same softmax restricted to the Sparse Transformer set I_i of Eq. (6):
           I_i = {j : i - kB < j <= i}  U  {j <= i : (j - 1) mod B >= B - c}   (1-indexed)
           -- a local window of k blocks plus the last c "summary" tokens of every block.
  linear   out_i = sum_{j<=i} phi(q_i).phi(k_j) v_j / sum_{j<=i} phi(q_i).phi(k_j),
           phi(x) = elu(x) + 1 (Katharopoulos et al. 2020; Eq. 8), computed with prefix sums
           of phi(k_j) v_j^T over chunks (pure PyTorch), or one token at a time with the
           recurrent state (S, z) = (sum phi(k_j) v_j^T, sum phi(k_j)) for generation.

Non-causal (`causal=False`):
  softmax  softmax_attention with an all-True mask (or mask=None).
  sparse   Eq. (6) made two-sided: I_i = {j : |i - j| < kB}  U  {j : (j - 1) mod B >= B - c}
           (1-indexed) -- the local window extends k blocks both ways (2kB - 1 positions, i in the
           middle) and every block's last c summary tokens are visible from every position.
  linear   out_i = sum_j phi(q_i).phi(k_j) v_j / sum_j phi(q_i).phi(k_j) over all j, computed as
           phi(q_i) (sum_j phi(k_j) v_j^T) / phi(q_i).(sum_j phi(k_j)): O(T d d_v), no (T, T) matrix.

The softmax paths build the (T, T) logits by hand (the sparse one as a masked full matrix: the
FLOPs it *needs* are counted separately, see cot_dp/flops.py), so logits and patterns stay
visible; `fused=True` runs the same masked softmax through torch's fused kernel for training.  `linear_attention_pattern` gives linear attention's (T, T) matrix for inspection; the
prefix-sum path never forms it.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import nn

KINDS = ("softmax", "sparse", "linear")


# ---- masks -----------------------------------------------------------------------------------

def causal_mask(T: int, device=None) -> torch.Tensor:
    """(T, T) bool, True where query i may attend to key j (j <= i)."""
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def sparse_mask(T: int, block: int, c: int = 1, k: int = 1, device=None, causal: bool = True) -> torch.Tensor:
    """(T, T) bool mask of Eq. (6), positions numbered 1..T, restricted to j <= i (causal).

    block = B, c = summary tokens at the end of every block, k = blocks in the local window.
    causal=False: the two-sided pattern {j : |i - j| < kB} U {j : (j - 1) mod B >= B - c}, every
    row holding at least i itself."""
    if block < 1 or k < 1 or not 0 <= c <= block:
        raise ValueError(f"sparse mask: need B >= 1, k >= 1 and 0 <= c <= B, got B={block}, c={c}, k={k}")
    i = torch.arange(1, T + 1, device=device)[:, None]
    j = torch.arange(1, T + 1, device=device)[None, :]
    summary = (j - 1) % block >= block - c                  # (1, T): the columns of summary tokens
    if not causal:
        return ((i - j).abs() < k * block) | summary
    local = (j > i - k * block) & (j <= i)
    return local | (summary & (j <= i))


def mask_ascii(mask: torch.Tensor) -> str:
    """A text picture of a (T, T) mask: row i = query, '#' = may attend, '.' = masked."""
    return "\n".join("".join("#" if a else "." for a in row) for row in mask.tolist())


# ---- softmax (standard and sparse) --------------------------------------------------------------

class Attended(NamedTuple):
    out: torch.Tensor       # (..., T, d_v)
    logits: torch.Tensor    # (..., T, T) pre-softmax scores, -inf where masked
    pattern: torch.Tensor   # (..., T, T) attention weights (rows sum to 1)


def softmax_attention(q, k, v, mask: torch.Tensor | None, scale: float | None = None,
                      return_internals: bool = False, fused: bool = False):
    """Masked softmax attention; mask (T_q, T_k) bool, True = may attend (every row needs one True),
    or None: every query attends to every key (non-causal, full).

    scale defaults to 1/sqrt(d); pass 1.0 for Eq. (4) exactly as written.  fused=True hands the
    same computation to torch's scaled_dot_product_attention (faster; no internals), the manual
    path below is the reference it is tested against."""
    scale = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    if fused and not return_internals:
        return nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
    logits = (q @ k.transpose(-2, -1)) * scale                # (..., T_q, T_k)
    if mask is not None:
        logits = logits.masked_fill(~mask, float("-inf"))
    pattern = torch.softmax(logits, dim=-1)
    out = pattern @ v                                         # (..., T_q, d_v)
    return Attended(out, logits, pattern) if return_internals else out


# ---- linear ------------------------------------------------------------------------------------

def phi(x: torch.Tensor) -> torch.Tensor:
    """The feature map of Katharopoulos et al.: elu(x) + 1 > 0."""
    return nn.functional.elu(x) + 1.0


def linear_attention(q, k, v, chunk: int = 64, eps: float = 1e-6, causal: bool = True,
                     features: torch.Tensor | None = None) -> torch.Tensor:
    """Causal linear attention by prefix sums over chunks of `chunk` positions.

    Inside a chunk the (chunk x chunk) lower-triangular phi(q) phi(k)^T is used directly; across
    chunks the state S = sum phi(k_j) v_j^T (d x d_v) and z = sum phi(k_j) of all *earlier* chunks
    is an exclusive prefix sum.  chunk = 1 is the pure prefix-sum form; the cost is
    O(T d d_v + T chunk d), linear in T.

    causal=False: out_i = phi(q_i) S / phi(q_i).z with S, z summed over all T positions (chunk unused).
    features: optional (..., 1, d) 0/1 weights multiplying phi(q) -- 0 switches a feature off (phi(0)
    = 1, so zero-padded query/key rows would otherwise add 1 to every score)."""
    if chunk < 1:
        raise ValueError(f"linear attention: chunk must be >= 1, got {chunk}")
    fq, fk = phi(q), phi(k)
    if features is not None:
        fq = fq * features
    if not causal:
        S = fk.transpose(-2, -1) @ v                          # (..., d, d_v): sum_j phi(k_j) v_j^T
        z = fk.sum(dim=-2, keepdim=True)                      # (..., 1, d):   sum_j phi(k_j)
        return (fq @ S) / ((fq * z).sum(dim=-1, keepdim=True) + eps)
    *lead, T, d = fq.shape
    d_v = v.shape[-1]
    chunk = min(chunk, T)                                     # one chunk: the masked quadratic form
    n = -(-T // chunk)                                        # chunks, the last one zero-padded
    pad = n * chunk - T
    if pad:   # padded keys sit after every real query, so causality never lets them in
        fq, fk, v = (nn.functional.pad(a, (0, 0, 0, pad)) for a in (fq, fk, v))
    fq = fq.reshape(*lead, n, chunk, d)                       # (..., n, C, d)
    fk = fk.reshape(*lead, n, chunk, d)
    vc = v.reshape(*lead, n, chunk, d_v)                      # (..., n, C, d_v)
    kv = fk.transpose(-2, -1) @ vc                            # (..., n, d, d_v): one chunk's sum phi(k) v^T
    ks = fk.sum(dim=-2)                                       # (..., n, d)
    zero = torch.zeros_like(kv[..., :1, :, :])
    S = torch.cat([zero, kv[..., :-1, :, :]], dim=-3).cumsum(dim=-3)      # exclusive: chunks before
    z = torch.cat([torch.zeros_like(ks[..., :1, :]), ks[..., :-1, :]], dim=-2).cumsum(dim=-2)
    att = fq @ fk.transpose(-2, -1)                           # (..., n, C, C) within-chunk scores
    tril = torch.ones(chunk, chunk, dtype=torch.bool, device=q.device).tril()
    att = att.masked_fill(~tril, 0.0)
    num = fq @ S + att @ vc                                   # (..., n, C, d_v)
    den = (fq @ z.unsqueeze(-1)).squeeze(-1) + att.sum(dim=-1)  # (..., n, C)
    out = num / (den.unsqueeze(-1) + eps)
    return out.reshape(*lead, n * chunk, d_v)[..., :T, :]


def linear_attention_pattern(q, k, eps: float = 1e-6, causal: bool = True,
                             features: torch.Tensor | None = None) -> torch.Tensor:
    """(..., T, T) the matrix linear attention applies: phi(q_i).phi(k_j) / sum_{j'<=i} (...), j <= i
    (causal=False: over all j; features as in `linear_attention`)."""
    fq = phi(q) if features is None else phi(q) * features
    a = fq @ phi(k).transpose(-2, -1)
    if causal:
        a = a.masked_fill(~causal_mask(q.shape[-2], q.device), 0.0)
    return a / (a.sum(dim=-1, keepdim=True) + eps)


class LinearState(NamedTuple):
    S: torch.Tensor   # (..., d, d_v) sum over past positions of phi(k_j) v_j^T
    z: torch.Tensor   # (..., d)      sum over past positions of phi(k_j)


def linear_attention_step(q, k, v, state: LinearState | None = None, eps: float = 1e-6):
    """The recurrent form: one new position (q, k: (..., d), v: (..., d_v)) -> (out (..., d_v), state).

    Constant cost per generated token, the same output as `linear_attention` at that position."""
    fq, fk = phi(q), phi(k)
    if state is None:
        state = LinearState(torch.zeros(*fk.shape, v.shape[-1], dtype=v.dtype, device=v.device),
                            torch.zeros_like(fk))
    S = state.S + fk.unsqueeze(-1) * v.unsqueeze(-2)          # (..., d, d_v)
    z = state.z + fk
    num = (fq.unsqueeze(-2) @ S).squeeze(-2)                  # (..., d_v)
    den = (fq * z).sum(dim=-1, keepdim=True)
    return num / (den + eps), LinearState(S, z)
