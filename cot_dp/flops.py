"""Analytic FLOPs of generating one sequence, for Table 2 (min GFLOPs to reach 90% accuracy).

A sequence of L tokens is generated one position at a time with a cache (keys and values, or
linear attention's state), so position i (1-based) costs one token's forward pass.  Counting
2 FLOPs per multiply-add and matrix products only (LayerNorm, softmax, GELU and elementwise work
left out), with D the embedding dimension, M layers, H heads of width d_h = D/H, V the
vocabulary:

    per position and layer   W_Q, W_K, W_V, W_O       8 D^2
                             FFN (D -> 4D -> D)       16 D^2
                             attention at position i:
                               standard  4 D i              (scores and weighted sum over i keys)
                               sparse    4 D |I_i|          (|I_i| of Eq. 6, counted from the mask)
                               linear    4 D d_h + 4 D      (S += phi(k) v^T, z += phi(k); phi(q) S, phi(q).z)
    per position             output head              2 D V

    FLOPs(L) = sum_{i=1..L} [ M (24 D^2 + attention_i) + 2 D V ]

`params_flops` is 2 x (matrix parameters of the blocks) x L = 24 M D^2 L, the count without
attention or head.  The paper's Table 2 values are within 5% of it with D = 64 / 128 / 128 / 128
(Standard), 256 / 512 / 512 / 512 (Linear), 128 / 256 / 256 / 256 (Sparse) at L = 87 / 221 / 355 /
505 -- our reading of how they were counted; the paper does not state its formula.
"""
from __future__ import annotations

from jackson.attention import sparse_mask
from jackson.hparams import block_size

# Yang et al., Table 2: minimum GFLOPs to reach 90% accuracy on Arithmetic, by CoT length
PAPER_TABLE2_LENGTHS = (87, 221, 355, 505)
PAPER_TABLE2 = {"standard": (0.027, 0.266, 0.426, 0.605),
                "linear": (0.422, 4.220, 6.756, 9.584),
                "sparse": (0.106, 1.055, 1.690, 2.399)}


def attended_keys(model: str, L: int, c: int = 1, k: int = 1, block: int | None = None) -> int:
    """sum over positions i = 1..L of the keys position i attends to (standard and sparse; B defaults
    to 2^floor(log2 sqrt L), pass the model's own when it was built for longer sequences)."""
    if model == "standard":
        return L * (L + 1) // 2
    return int(sparse_mask(L, block or block_size(L), c, k).sum())


def per_sequence(model: str, D: int, L: int, vocab: int, n_layers: int = 3, n_heads: int = 4,
                 sparse_c: int = 1, sparse_k: int = 1, block: int | None = None) -> float:
    """FLOPs to generate one sequence of L tokens (formula in the module docstring)."""
    M = n_layers
    dense = L * M * 24 * D * D
    if model == "linear":
        attn = L * M * (4 * D * (D // n_heads) + 4 * D)
    else:
        attn = M * 4 * D * attended_keys(model, L, sparse_c, sparse_k, block)
    return float(dense + attn + L * 2 * D * vocab)


def params_flops(D: int, L: int, n_layers: int = 3) -> float:
    """2 FLOPs per block matrix parameter per position: 24 M D^2 L."""
    return float(24 * n_layers * D * D * L)
