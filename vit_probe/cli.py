"""The `vit-probe` console script: signal handlers first, then one command's config through
jackson.config.cli_run (torch and timm are imported only then)."""
from __future__ import annotations

import sys

from jackson.config import fail, guarded, install_signals

USAGE = """usage: vit-probe COMMAND [options]

Attention-logit spectra of ViTs on CIFAR-10, the m_h sweep and the permutation test (Jiang & Li, Sec. 5.2).

    vit-probe spectra --checkpoint W.pth --arch vit_p4_d128_l4_h4 --data cifar10.tar.gz
    vit-probe spectra --model vit_base_patch16_224 --pretrained --data ~/data/cifar10
    vit-probe spectra --checkpoint own.pth --model-json own.json --data ...   # e.g. {"kind": "torch-vit", "dim": 128}
    vit-probe spectra --checkpoint own.pth --model-factory mypkg.models:build --data ...
    vit-probe sweep-mh --m-h 1,2,4,8,16,32 --data ...
    vit-probe permute --checkpoint W.pth --data ...
"""

DESCRIPTIONS = {
    "spectra": "Singular values of pre-softmax attention logits over many images (Figs 2, 3a).",
    "sweep-mh": "Train ViTs whose per-head query/key size m_h varies; spectra and training error vs m_h (Fig. 3).",
    "permute": "Accuracy before/after a fixed permutation of patch tokens with continued training (Table 1).",
}


def commands() -> dict:
    """command -> (config class, quick preset, run function, description, grid function for --status or None);
    imports torch and timm."""
    from .run_permute import PERMUTE_QUICK, PermuteConfig, run_permute
    from .run_spectra import SPECTRA_QUICK, SpectraConfig, run_spectra
    from .run_sweep_mh import SWEEP_QUICK, SweepMhConfig, run_sweep_mh, sweep_grid
    return {"spectra": (SpectraConfig, SPECTRA_QUICK, run_spectra, DESCRIPTIONS["spectra"], None),
            "sweep-mh": (SweepMhConfig, SWEEP_QUICK, run_sweep_mh, DESCRIPTIONS["sweep-mh"], sweep_grid),
            "permute": (PermuteConfig, PERMUTE_QUICK, run_permute, DESCRIPTIONS["permute"], None)}


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
        from jackson.config import UsageError, cli_run
        from .hub import early_offline_check
        if cmd == "spectra":          # before torch and timm are imported (about 5 s): an offline --pretrained
            line = early_offline_check(rest)     # fails in about the time the hub probe takes
            if line:
                raise UsageError(line)
        cls, quick, run, desc, grid = commands()[cmd]
        return cli_run(f"vit-probe {cmd}", cls, desc, quick, run, rest, grid)

    guarded(f"vit-probe {cmd}", body)


if __name__ == "__main__":
    main()
