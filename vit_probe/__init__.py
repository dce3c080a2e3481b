"""vit_probe: the attention logits rho_hat(x) = q k^T / sqrt(d) of a trained ViT and their spectra
(Jiang & Li, Sec. 5.2, Figs. 2-3, Table 1).

Probe any model whose attention is timm's `Attention` or torch's `nn.MultiheadAttention` (an
`nn.TransformerEncoder` ViT included) through forward hooks, then read the singular values:

    >>> import torch
    >>> from vit_probe import LogitProbe, TorchViT, TorchViTConfig
    >>> model = TorchViT(TorchViTConfig(dim=16, depth=1, heads=2, patch=8)).eval()
    >>> with torch.no_grad(), LogitProbe(model, layers=[0], heads=[0, 1]) as probe:
    ...     _ = model(torch.randn(2, 3, 32, 32))
    >>> probe.logits[0].shape     # (images, heads, tokens, tokens): the class token + 16 patches
    torch.Size([2, 2, 17, 17])

Whole runs (tables, figures, summary, report.json), the functions behind `vit-probe spectra | permute |
sweep-mh`, live in the modules of the same names (a package attribute cannot be both the function and
its submodule): `from vit_probe.run_spectra import run_spectra`, then
`run_spectra(SpectraConfig(...), command="...")`; likewise run_permute, run_sweep_mh.
Everything below is imported on first use, so `import vit_probe` loads neither torch nor timm.
"""
from __future__ import annotations

import importlib

# public name -> module that defines it
_EXPORTS = {
    # probing (hooks; timm Attention and nn.MultiheadAttention)
    "LogitProbe": "vit_probe.probe", "probing": "vit_probe.probe",
    "attention_modules": "vit_probe.models", "check_probeable": "vit_probe.models",
    # models: timm ViTs by arch string, ViTs built from nn.TransformerEncoder, own factories
    "parse_arch": "vit_probe.models", "build": "vit_probe.models", "load_checkpoint": "vit_probe.models",
    "TorchViT": "vit_probe.torch_vit", "TorchViTConfig": "vit_probe.torch_vit",
    "read_description": "vit_probe.model_source", "from_factory": "vit_probe.model_source",
    # spectra of the probed logits
    "collect": "vit_probe.spectra", "decay_exponent": "vit_probe.spectra", "effective_rank": "vit_probe.spectra",
    "spectrum_table": "vit_probe.spectra", "head_table": "vit_probe.spectra",
    # the three experiments' configs (their run functions: see above)
    "SpectraConfig": "vit_probe.run_spectra", "PermuteConfig": "vit_probe.run_permute",
    "SweepMhConfig": "vit_probe.run_sweep_mh",
    # CIFAR-10 in any of its layouts
    "load_cifar": "vit_probe.data",
}
_RENAMED = {"load_cifar": "load"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), _RENAMED.get(name, name))
        globals()[name] = value
        return value
    raise AttributeError(f"module 'vit_probe' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
