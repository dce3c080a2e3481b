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
