"""rnn-compare: RNN vs Transformer under temporal ordering and mixing (Tables 2-3, App. C/D).

config (config.py) -> cells (cell.py: kernel x alteration x model, seeds as bank members) -> the core runner ->
tables (tables.py: CSV, markdown, LaTeX) beside the paper's values -> figures -> summary; the analyses of where
and why an alteration hurts in positions.py and coupling.py.
"""
from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path

import pandas as pd

from jackson.runfolder import open_run
from jackson.sweep import run_cells
from .report import seed_range, write_report_json
from .cell import CompareCell
from .config import CompareConfig, validate
from .coupling import block_references, coupling_spectra, missing_terms_check, plot_coupling
from .positions import plot_positions
from .tables import plot, tables
from jackson.config import read_json


def positions(dirs, metas: dict) -> pd.DataFrame | None:
    """The cells' per-position held-out MSE in one long table (kernel, alteration, model, seed, t, test_mse);
    None when a cell predates position_mse.csv (cells committed before it was written)."""
    if not all((d / "position_mse.csv").exists() for d in dirs):
        return None
    parts = []
    for d in dirs:
        c = metas[d.name]["cell"]
        parts.append(pd.read_csv(d / "position_mse.csv").assign(kernel=c["kernel"], alteration=c["alteration"],
                                                                 model=c["model"]))
    return pd.concat(parts, ignore_index=True)[["kernel", "alteration", "model", "seed", "t", "test_mse"]]


def compare_grid(cfg: CompareConfig) -> tuple[Path, list[CompareCell]]:
    """The run folder and cells of a checked config, checkpoints where run_compare keeps them (`--status`)."""
    validate(cfg)
    out = Path(cfg.out).expanduser().resolve()
    return out, cfg.cells(ckpt_dir=out / "checkpoints")


def run_compare(cfg: CompareConfig, command: str, progress: bool = True) -> dict:
    out, cells = compare_grid(cfg)
    with open_run(out, "rnn-compare", command, dataclasses.asdict(cfg), scheduler=cfg.scheduler):
        if progress:
            print(f"rnn-compare: writing to {out}", flush=True)
        # a cell stopped mid-fit resumes from <out>/checkpoints/ (git-ignored; removed once the cell is in place)
        dirs = run_cells(cells, out, scheduler=cfg.scheduler or None, progress=progress)
        with contextlib.suppress(OSError):
            (out / "checkpoints").rmdir()      # only if empty: set-aside checkpoints (<name>.corrupt-*) are kept
        metas = {d.name: read_json(d / "cell.json") for d in dirs}
        # each row names its cell's mixing direction (cells written before the column existed hold it in cell.json)
        rows = pd.concat([pd.read_csv(d / "rows.csv").assign(mix_direction=metas[d.name]["cell"]["mix_direction"])
                          for d in dirs], ignore_index=True)
        for c in ("init_seed", "retry"):     # integers; empty for cells written before they existed
            if c in rows:
                rows[c] = rows[c].astype("Int64")
        rows.to_csv(out / "results.csv", index=False, float_format="%.6e")
        pos, check = positions(dirs, metas), None
        if pos is not None:             # diverged members are left out here as in every table
            bad = rows[rows.status.astype(str).str.startswith("diverged")]
            drop = set(zip(bad.kernel, bad.alteration, bad.model, bad.seed))
            pos = pos[[k not in drop for k in zip(pos.kernel, pos.alteration, pos.model, pos.seed)]]
            pos.to_csv(out / "position_mse.csv", index=False, float_format="%.6e")
            check = missing_terms_check(cfg, pos) if (pos.alteration == "mixed").any() else None
            plot_positions(out, pos, cfg, block_references(cfg, check))
        spec = coupling_spectra(cfg)
        spec.to_csv(out / "coupling_spectra.csv", index=False, float_format="%.6e")
        plot_coupling(out, spec)
        summary = tables(out, rows, metas, cfg, command, pos, spec, check)
        plot(out, pd.read_csv(out / "tables_long.csv"), seed_range(cfg.seeds), rows)
        write_report_json(out)
    return summary
