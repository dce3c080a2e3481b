"""The jackson-sweep experiment (Fig. 1): config -> cells -> runner -> tables -> figures.

The config (`SweepConfig`, the presets, `sweep_config`, `validate`) lives in `config.py`; its names are
re-exported here, so `from jackson.rate_sweep.experiment import SweepConfig` works too.  This module is the run:
`run_sweep`."""
from __future__ import annotations

import json
from pathlib import Path

from ..runfolder import open_run
from ..sweep import run_cells
from .config import (CONSTRUCTIONS, GIVEN, GPU, GPU_GIVEN, MAX_ALPHA, QUICK, SweepConfig, check_device,
                     check_kernel, check_sigma, explicit_alpha, kernel_text, presets, read_sigma_file,
                     sweep_config, validate)
from .cell import rank_str
from .results import collect, plot, reference_run, summarize, write_report_json
from .terms import find_ff_run

__all__ = ["CONSTRUCTIONS", "GIVEN", "GPU", "GPU_GIVEN", "MAX_ALPHA", "QUICK", "SweepConfig", "check_device",
           "check_kernel", "check_sigma", "explicit_alpha", "kernel_text", "presets", "read_sigma_file",
           "run_sweep", "sweep_config", "validate"]


def sweep_grid(cfg: SweepConfig) -> tuple[Path, list]:
    """The run folder and cells of a checked config (`jackson-sweep --status`)."""
    validate(cfg)
    return Path(cfg.resolved_out()), cfg.cells()


def run_sweep(cfg: SweepConfig, command: str, progress: bool = True) -> dict:
    """Run (or resume) the sweep and rebuild its tables, summary and figures."""
    folder, cells = sweep_grid(cfg)
    with open_run(folder, "jackson-sweep", command, cfg.as_dict(), scheduler=cfg.scheduler,
                  device=cfg.device) as out:
        dirs = run_cells(cells, out, scheduler=cfg.scheduler or None, progress=progress)
        tabs = collect(out, dirs)
        resolved = json.loads(json.dumps(cfg.as_dict(), default=str))   # as config.json holds it (lists, not tuples)
        reference = reference_run(cfg.compare_to, resolved) if cfg.compare_to else None
        ff_from = cfg.ff_from
        if not ff_from and cfg.term == "full" and cfg.model.features == "learned":   # a committed answer, if one matches
            ff_from = find_ff_run({k: v for k, v in resolved.items() if k != "m_h"},
                                  [(a, rank_str(r)) for a, r, _ in cfg.targets()])
        summary = summarize(out, tabs, tuple(cfg.fit_range), command, reference, ff_from=ff_from)
        plot(out, tabs, summary)
        write_report_json(out)
    return summary
