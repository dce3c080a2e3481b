"""The `vit-probe` console script: signal handlers first, then one command's config through
jackson.command.cli_run.  The configs and their checks are torch-free (`vit_probe.configs`): `--help` and a
bad option end before torch and timm are imported; each run function is imported only to run.
"""
from __future__ import annotations

import sys

from jackson.config import fail, guarded, install_signals

USAGE = """usage: vit-probe COMMAND [options]

Attention-logit spectra of ViTs on CIFAR-10, the m_h sweep and the permutation test (Jiang & Li, Sec. 5.2).

    vit-probe spectra --checkpoint W.pth --arch vit_p4_d128_l4_h4 --data cifar10.tar.gz
    vit-probe spectra --model vit_base_patch16_224 --pretrained --data ~/data/cifar10
    vit-probe spectra --checkpoint own.pth --model-json own.json --data ...   # e.g. {"kind": "torch-vit", "dim": 128}
    vit-probe spectra --checkpoint own.pth --model-factory mypkg.models:build --data ...
    vit-probe spectra --checkpoint own.pth --model-json own.json --normalize imagenet --data ...   # as it was trained
    vit-probe sweep-mh --m-h 1,2,4,8,16,32 --data ...
    vit-probe permute --checkpoint W.pth --data ...
"""

DESCRIPTIONS = {
    "spectra": "Singular values of pre-softmax attention logits over many images (Figs 2, 3a).",
    "sweep-mh": "Train ViTs whose per-head query/key size m_h varies; spectra and training error vs m_h (Fig. 3).",
    "permute": "Accuracy before/after a fixed permutation of patch tokens with continued training (Table 1).",
}


def _run_spectra(cfg, command):
    from .configs import validate_spectra
    validate_spectra(cfg)              # what the command line alone can check, before torch is imported
    from .run_spectra import run_spectra
    return run_spectra(cfg, command)


def _run_sweep_mh(cfg, command):
    from .configs import validate_sweep
    validate_sweep(cfg)
    from .run_sweep_mh import run_sweep_mh
    return run_sweep_mh(cfg, command)


def _sweep_grid(cfg):
    from .configs import validate_sweep
    validate_sweep(cfg)
    from .run_sweep_mh import sweep_grid
    return sweep_grid(cfg)


def _run_permute(cfg, command):
    from .configs import validate_permute
    validate_permute(cfg)
    from .run_permute import run_permute
    return run_permute(cfg, command)


def commands() -> dict:
    """command -> (config class, quick preset, run function, description, grid function for --status or None);
    imports no torch: the run and grid functions import their experiment when called."""
    from .configs import PERMUTE_QUICK, SPECTRA_QUICK, SWEEP_QUICK, PermuteConfig, SpectraConfig, SweepMhConfig
    return {"spectra": (SpectraConfig, SPECTRA_QUICK, _run_spectra, DESCRIPTIONS["spectra"], None),
            "sweep-mh": (SweepMhConfig, SWEEP_QUICK, _run_sweep_mh, DESCRIPTIONS["sweep-mh"], _sweep_grid),
            "permute": (PermuteConfig, PERMUTE_QUICK, _run_permute, DESCRIPTIONS["permute"], None)}


def main(argv: list[str] | None = None) -> None:
    install_signals()     # before torch and timm are imported: Ctrl-C during start-up is one line too
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE + "\ncommands:\n" + "\n".join(f"  {k:9s} {v}" for k, v in DESCRIPTIONS.items()))
        print("\n`vit-probe COMMAND --help` lists every option with its default.")
        raise SystemExit(0 if argv else 2)
    cmd, rest = argv[0], argv[1:]
    if cmd not in DESCRIPTIONS:
        fail("vit-probe", f"unknown command '{cmd}' (choose from {', '.join(DESCRIPTIONS)})")

    def body():
        from jackson.command import cli_run
        from jackson.config import UsageError
        from .hub import early_offline_check
        if cmd == "spectra":          # before torch and timm are imported: an offline --pretrained
            line = early_offline_check(rest)     # fails in about the time the hub probe takes
            if line:
                raise UsageError(line)
        cls, quick, run, desc, grid = commands()[cmd]
        return cli_run(f"vit-probe {cmd}", cls, desc, quick, run, rest, grid)

    guarded(f"vit-probe {cmd}", body)


if __name__ == "__main__":
    main()
