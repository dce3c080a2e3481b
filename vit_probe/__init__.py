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
`run_spectra(SpectraConfig(...), command="...")`; likewise run_permute, run_sweep_mh.  Their configs
(`SpectraConfig`, `SweepMhConfig`, `PermuteConfig`, `TrainConfig`) live in `vit_probe.configs`, torch-free.
Everything below is imported on first use (scientific-python's lazy_loader), so `import vit_probe`
loads neither torch nor timm.
"""
import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach(__name__, submod_attrs={
    # probing (hooks; timm Attention and nn.MultiheadAttention)
    "probe": ["LogitProbe", "probing"],
    # models: timm ViTs by arch string, ViTs built from nn.TransformerEncoder, own factories
    "models": ["attention_modules", "check_probeable", "build", "load_checkpoint"],
    "arch": ["parse_arch", "arch_spec"],
    "torch_vit": ["TorchViT", "TorchViTConfig"],
    "model_source": ["read_description", "from_factory"],
    # spectra of the probed logits
    "spectra": ["collect", "decay_exponent", "effective_rank", "spectrum_table", "head_table"],
    # the three experiments' configs and the training settings (their run functions: see above)
    "configs": ["SpectraConfig", "PermuteConfig", "SweepMhConfig", "TrainConfig"],
    # the input normalisation a probed model gets
    "normalize": ["Norm"],
    # CIFAR-10 in any of its layouts
    "data": ["Cifar"],
})
