"""Compatibility module: the three vit-probe experiments used to live here; each now has its own
module, and this one re-exports their names so `from vit_probe import experiment as E` and
`from vit_probe.experiment import ...` keep working.  New code imports from where things live:

- `vit_probe/common.py`: what the experiments share: `SHARED_DATA`, `SHARED_CKPT`, `PAPER`,
  `load_model`, `_device`, `_data_split`, `_fmt`, `_report_json`, `_say_quick`.
- `vit_probe/run_spectra.py` (spectra, Figs 2, 3a): `SpectraConfig`, `SPECTRA_QUICK`,
  `validate_spectra`, `run_spectra`.
- `vit_probe/run_sweep_mh.py` (sweep-mh, Fig. 3): `MhCell` (cells on the core runner; its key
  does not depend on the module), `SweepMhConfig`, `SWEEP_QUICK`, `validate_sweep`,
  `fit_saturating_power`, `spectrum_convergence`, `_plot_sweep`, `run_sweep_mh`.
- `vit_probe/run_permute.py` (permute, Table 1, ViT column): `PermuteConfig`, `PERMUTE_QUICK`,
  `PermuteTokens`, `move_first_to_end`, `validate_permute`, `run_permute`.

Every run folder holds config.json, command.txt, summary.md, report.json (the lab report's
hook), tidy CSVs and PNGs; the data source is named in each ("CIFAR-10 (JPEG q75 copy)" for
the shared copy).  Image subsets (spectra images, training-eval images, training images) are
drawn stratified by class with a seed (`data.subset`), never the first n of a class-sorted split.
`--quick` without `--out` writes to runs/vit_probe-<command>-quick under the current folder,
never into reports/.
"""
from __future__ import annotations

from .common import (PAPER, SHARED_CKPT, SHARED_DATA, _data_split, _device, _fmt,  # noqa: F401
                     _report_json, _say_quick, load_model)
from .run_permute import (PERMUTE_QUICK, PermuteConfig, PermuteTokens, move_first_to_end,  # noqa: F401
                          run_permute, validate_permute)
from .run_spectra import SPECTRA_QUICK, SpectraConfig, run_spectra, validate_spectra  # noqa: F401
from .run_sweep_mh import (SWEEP_QUICK, MhCell, SweepMhConfig, _plot_sweep,  # noqa: F401
                           fit_saturating_power, run_sweep_mh, spectrum_convergence, validate_sweep)

__all__ = ["PAPER", "SHARED_CKPT", "SHARED_DATA", "load_model",
           "SpectraConfig", "SPECTRA_QUICK", "validate_spectra", "run_spectra",
           "MhCell", "SweepMhConfig", "SWEEP_QUICK", "validate_sweep", "fit_saturating_power",
           "spectrum_convergence", "run_sweep_mh",
           "PermuteConfig", "PERMUTE_QUICK", "PermuteTokens", "move_first_to_end", "validate_permute", "run_permute",
           # private names the old module had, re-exported for old imports (`E._device`) like the rest
           "_data_split", "_device", "_fmt", "_report_json", "_say_quick", "_plot_sweep"]
