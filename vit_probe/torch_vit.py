"""A ViT built from torch's own `nn.TransformerEncoder`: the `torch-vit` kind of a model description.

    patches (Conv2d, stride = patch) -> [class token; patches] + position embedding
      -> nn.TransformerEncoder (depth x nn.TransformerEncoderLayer: nn.MultiheadAttention + MLP,
         pre-norm or post-norm, tokens batch-first or not) -> [final LayerNorm if pre-norm]
      -> Linear head on the class token

Its state dict uses torch's names (`encoder.layers.0.self_attn.in_proj_weight`, ...), so a model
written this way loads with a description JSON such as

    {"kind": "torch-vit", "patch": 4, "dim": 128, "depth": 4, "heads": 4, "norm_first": true}

A model laid out otherwise is probed through a factory (`--model-factory module:function`): any
model whose attention is an `nn.MultiheadAttention` is read the same way (`vit_probe.probe`).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from jackson.config import need


@dataclass(frozen=True)
class TorchViTConfig:
    patch: int = 4             # patch size in pixels (must divide img_size)
    dim: int = 128             # embedding dimension D (divisible by heads)
    depth: int = 4             # encoder layers
    heads: int = 4             # attention heads per layer; head_dim = dim / heads
    mlp_ratio: float = 2.0     # feed-forward width / dim
    norm_first: bool = True    # pre-norm (LayerNorm before attention and MLP, final LayerNorm) or post-norm
    batch_first: bool = True   # token layout inside the encoder: (B, N, D) if true, (N, B, D) if false
    activation: str = "gelu"   # feed-forward activation: gelu | relu
    img_size: int = 32         # input images are img_size x img_size (CIFAR-10: 32)
    num_classes: int = 10      # outputs of the classification head


def validate(cfg: TorchViTConfig, where: str = "torch-vit") -> None:
    """UsageError (one line, naming `where`) for sizes no model can have."""
    need(cfg.patch >= 1 and cfg.img_size >= 1 and cfg.img_size % cfg.patch == 0,
         f"{where}: patch {cfg.patch} must divide img_size {cfg.img_size}")
    need(cfg.heads >= 1 and cfg.dim >= 1 and cfg.dim % cfg.heads == 0,
         f"{where}: dim {cfg.dim} is not divisible by {cfg.heads} heads")
    need(cfg.depth >= 1, f"{where}: depth must be >= 1, got {cfg.depth}")
    need(cfg.mlp_ratio > 0, f"{where}: mlp_ratio must be > 0, got {cfg.mlp_ratio}")
    need(cfg.activation in ("gelu", "relu"), f"{where}: activation '{cfg.activation}' is not gelu or relu")
    need(cfg.num_classes >= 1, f"{where}: num_classes must be >= 1, got {cfg.num_classes}")
    from jackson import budget          # its weights priced before nn.TransformerEncoder allocates them
    tokens = (cfg.img_size // cfg.patch) ** 2 + 1
    hidden = int(cfg.mlp_ratio * cfg.dim)
    weights = (3 * cfg.patch ** 2 * cfg.dim + (tokens + 1) * cfg.dim + cfg.dim * cfg.num_classes
               + cfg.depth * (4 * cfg.dim * cfg.dim + 2 * cfg.dim * hidden))
    budget.check(f"{where}: a torch-vit of dim {cfg.dim:,}, depth {cfg.depth:,}, {tokens:,} tokens",
                 {"its weights": budget.F32 * weights,
                  "one image's attention": budget.F32 * cfg.heads * tokens * tokens})


def describe(cfg: TorchViTConfig) -> str:
    """A short name for titles: torch-vit p4 d128 l4 h4 pre-norm."""
    return (f"torch-vit p{cfg.patch} d{cfg.dim} l{cfg.depth} h{cfg.heads} "
            f"{'pre' if cfg.norm_first else 'post'}-norm")


class TorchViT(nn.Module):
    """The torch-vit model; `img_size` and `num_prefix_tokens` tell vit-probe how to feed it and
    which tokens are not patches (`vit_probe.spectra`)."""

    def __init__(self, cfg: TorchViTConfig):
        super().__init__()
        validate(cfg)
        self.cfg = cfg
        self.img_size = cfg.img_size
        self.num_prefix_tokens = 1                                   # the class token
        n_patches = (cfg.img_size // cfg.patch) ** 2
        self.patch_embed = nn.Conv2d(3, cfg.dim, cfg.patch, cfg.patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, cfg.dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, n_patches + 1, cfg.dim))
        layer = nn.TransformerEncoderLayer(cfg.dim, cfg.heads, round(cfg.mlp_ratio * cfg.dim), dropout=0.0,
                                           activation=cfg.activation, batch_first=cfg.batch_first,
                                           norm_first=cfg.norm_first)
        # the final LayerNorm of a pre-norm stack; enable_nested_tensor only matters with padding masks
        self.encoder = nn.TransformerEncoder(layer, cfg.depth, norm=nn.LayerNorm(cfg.dim) if cfg.norm_first else None,
                                             enable_nested_tensor=False)
        self.head = nn.Linear(cfg.dim, cfg.num_classes)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.trunc_normal_(self.cls_token, std=0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B = x.shape[0]                                               # x: (B, 3, H, W)
        x = self.patch_embed(x).flatten(2).transpose(1, 2)           # (B, N_patches, D)
        x = torch.cat([self.cls_token.expand(B, -1, -1), x], dim=1) + self.pos_embed   # (B, N, D)
        if self.cfg.batch_first:
            x = self.encoder(x)
        else:
            x = self.encoder(x.transpose(0, 1)).transpose(0, 1)      # the encoder sees (N, B, D)
        return self.head(x[:, 0])                                    # (B, num_classes)
