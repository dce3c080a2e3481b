"""The architecture spec of the small CIFAR ViTs (standard library only: the command line checks an
`--arch` before torch is imported):

    vit_p{patch}_d{embed_dim}_l{depth}_h{heads}[_m{mlp_ratio}][_q{m_h}]

e.g. `vit_p4_d128_l4_h4` is the shared third-party CIFAR-10 ViT (mlp_ratio 2 by default, the value of
that checkpoint); `vit_p4_d128_l4_h4_q8` the same with m_h = 8 query/key dimensions per head while each
head's value stays embed_dim/heads wide.  `vit_probe.models.build` makes the model of an `Arch`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from jackson.config import UsageError

ARCH_RE = re.compile(r"vit_p(\d+)_d(\d+)_l(\d+)_h(\d+)(?:_m(\d+(?:\.\d+)?))?(?:_q(\d+))?")


@dataclass(frozen=True)
class Arch:
    patch: int          # patch size in pixels (32x32 images)
    dim: int            # embedding dimension
    depth: int          # number of transformer blocks
    heads: int          # attention heads per block
    mlp_ratio: float = 2.0   # MLP hidden size / dim (2 matches the shared checkpoint)
    m_h: int | None = None   # query/key size per head; None = dim // heads (timm's standard attention)

    @property
    def d_v(self) -> int:
        return self.dim // self.heads

    @property
    def tokens(self) -> int:
        return (32 // self.patch) ** 2 + 1   # patches + class token


def params(a: Arch) -> int:
    """The number of weights of `a`'s ViT (timm's, or with QKAttention's m_h-wide q and k): the patch embedding,
    the class token and positions, per block q, k, v, the projection, the MLP and two norms, the head."""
    qk = 2 * a.heads * (a.m_h if a.m_h is not None else a.d_v)
    hidden = int(a.mlp_ratio * a.dim)
    block = a.dim * (qk + a.dim) + (qk + a.dim) + a.dim * a.dim + a.dim + 2 * a.dim * hidden + hidden + a.dim + 4 * a.dim
    return 3 * a.patch ** 2 * a.dim + a.dim + (a.tokens + 1) * a.dim + a.depth * block + 2 * a.dim + 10 * a.dim + 10


def check_memory(a: Arch, batch: int = 0, train: bool = False, what: str = "") -> None:
    """Refuse, in one line naming the estimate and the limit (jackson.budget), a model of `a` that cannot fit:
    its weights (training: with gradients and AdamW's moments), and with `batch` images one forward (training:
    with the activations kept for the backward pass).  Sizes only: nothing is built."""
    from jackson import budget
    spec = what or f"--arch {arch_spec(a)}"
    parts = budget.transformer_bytes(batch, a.tokens, a.dim, a.depth, heads=a.heads, mlp=a.mlp_ratio * a.dim,
                                     params=params(a), train=train)
    budget.check(f"{spec} ({params(a):,} weights{f', {batch:,} images a step' if batch else ''})", parts)


def parse_arch(spec: str) -> Arch:
    m = ARCH_RE.fullmatch(spec.strip())
    if not m:
        raise UsageError(f"--arch: cannot read '{spec}'; expected vit_p<patch>_d<dim>_l<depth>_h<heads>"
                         "[_m<mlp_ratio>][_q<m_h>], e.g. vit_p4_d128_l4_h4")
    p, d, l, h, mr, q = m.groups()
    a = Arch(int(p), int(d), int(l), int(h), float(mr) if mr else 2.0, int(q) if q else None)
    if a.patch < 1 or 32 % a.patch:
        raise UsageError(f"--arch: patch size {a.patch} must divide 32")
    if a.heads < 1 or a.dim % a.heads:
        raise UsageError(f"--arch: dim {a.dim} is not divisible by {a.heads} heads")
    if a.depth < 1:
        raise UsageError("--arch: depth must be >= 1")
    if a.m_h is not None and a.m_h < 1:
        raise UsageError(f"--arch: m_h must be >= 1, got {a.m_h}")
    return a


def arch_spec(a: Arch) -> str:
    s = f"vit_p{a.patch}_d{a.dim}_l{a.depth}_h{a.heads}"
    if a.mlp_ratio != 2.0:
        s += f"_m{a.mlp_ratio:g}"
    if a.m_h is not None:
        s += f"_q{a.m_h}"
    return s
