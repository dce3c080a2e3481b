"""The jackson-sweep experiment (Fig. 1): config -> cells -> runner -> tables -> figures.

The config (`SweepConfig`, the presets, `sweep_config`, `validate`) lives in `config.py`; its names are
re-exported here, so `from jackson.rate_sweep.experiment import SweepConfig` works too.  This module is the run:
`run_sweep`."""
from __future__ import annotations

import json
from pathlib import Path

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..config import need
from ..runfolder import open_run, table_path
from ..sweep import run_cells
from .config import (CONSTRUCTIONS, GIVEN, GPU, GPU_GIVEN, MAX_ALPHA, QUICK, SweepConfig, check_device,
                     check_kernel, check_sigma, explicit_alpha, kernel_text, presets, read_sigma_file,
                     sweep_config, validate)
from .blocks import read_blocks
from .axes import rank_str
from .plots import plot
from .report import write_report_json
from .summary import summarize
from .tables import collect, reference_run
from . import term_runs
from .references import find_attn_run, find_ff_run

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CONSTRUCTIONS", "GIVEN", "GPU", "GPU_GIVEN", "MAX_ALPHA", "QUICK", "SweepConfig", "check_device",
           "check_kernel", "check_sigma", "explicit_alpha", "kernel_text", "presets", "read_sigma_file",
           "SweepResult", "run_sweep", "sweep_config", "target_options", "validate"]


def sweep_grid(cfg: SweepConfig) -> tuple[Path, list]:
    """The run folder and cells of a checked config (`jackson-sweep --status`)."""
    validate(cfg)
    return Path(cfg.resolved_out()), cfg.cells()


TARGET_FIELDS = ("alpha", "rank", "c", "sigma", "sigma_file", "kernel", "phi", "psi", "F", "f", "tau", "tail_tol",
                 "k_max", "pod_nodes", "construction")


def target_options(target) -> dict:
    """The sweep options that say which target a sweep fits, read from a target object: a `PODTarget` (its
    Spectrum: alpha, rank, c or explicit values; phi, psi, F, f, tau), a `KernelTarget` (kernel, rank, nodes),
    or any object with the same attributes (the protocol: `spectrum` with alpha/rank/c/explicit, or `kernel` and
    `rank`; and F, f, tau, with phi and psi beside a spectrum)."""
    need(hasattr(target, "tau") and hasattr(target, "F") and hasattr(target, "f"),
         f"run_sweep: {type(target).__name__} is not a target: it needs tau, F and f, and a spectrum (with phi and "
         "psi) or a kernel (PODTarget, KernelTarget)")
    out = {"F": target.F, "f": target.f, "tau": int(target.tau)}
    kernel = getattr(target, "__dict__", {}).get("kernel")      # a field, not PODTarget's kernel() method
    if kernel is not None and kernel != "":
        out.update(kernel=kernel, rank=(float(getattr(target, "rank", float("inf"))),))
        for name, field in (("nodes", "pod_nodes"), ("tail_tol", "tail_tol"), ("k_max", "k_max")):
            if hasattr(target, name):
                out[field] = getattr(target, name)
        return out
    sp = getattr(target, "spectrum", None)
    need(sp is not None, f"run_sweep: {type(target).__name__} has neither a spectrum nor a kernel")
    out.update(phi=getattr(target, "phi", "sin"), psi=getattr(target, "psi", "sin"))
    if getattr(sp, "explicit", None) is not None:
        out["sigma"] = tuple(float(v) for v in sp.explicit)
    else:
        out.update(alpha=(float(sp.alpha),), rank=(float(sp.rank),), c=float(getattr(sp, "c", 1.0)))
        defaults = type(sp)() if dataclasses.is_dataclass(sp) else None
        for name in ("tail_tol", "k_max"):     # the truncation of a rank-inf spectrum, where the target sets its own
            if hasattr(sp, name) and (defaults is None or getattr(sp, name) != getattr(defaults, name)):
                out[name] = getattr(sp, name)
    return out


@dataclass(frozen=True)
class SweepResult:
    """What `run_sweep` made: the run folder, its summary (summary.json as a dict), its tables as DataFrames
    (results: a row per member; blocks: every held-out block's error; loss_curves; learned_spectrum), the
    fitted exponents per target and every path it wrote."""
    folder: Path
    summary: dict
    results: pd.DataFrame
    blocks: pd.DataFrame
    loss_curves: pd.DataFrame
    learned_spectrum: pd.DataFrame
    paths: dict

    @property
    def exponents(self) -> dict:
        """{(alpha, rank, m_ff): {kind: {"slope", "lo", "hi", ...}}} for every target (kinds: test, oracle, ...)."""
        return {(t["alpha"], t["rank"], t["m_ff"]): t["exponents"] for t in self.summary["targets"]}

    @property
    def targets(self) -> list[dict]:
        return self.summary["targets"]

    def __repr__(self) -> str:
        ex = "; ".join(f"alpha={a:g} rank={r}: " + (f"{e['test']['slope']:+.2f}" if e.get("test") else "no exponent")
                       for (a, r, _), e in self.exponents.items())
        return f"SweepResult({self.folder}: {ex})"


def _result(folder: Path, summary: dict) -> SweepResult:
    import pandas as pd
    figs = [folder / n for n in ("error_vs_mh.png", "error_mh_x_mff.png", "learned_spectrum.png", "loss_curves.png")
            if (folder / n).is_file()]
    paths = {"folder": folder, "summary": folder / "summary.md", "summary_json": folder / "summary.json",
             "results": folder / "results.csv", "blocks": table_path(folder, "blocks.csv"),
             "loss_curves": table_path(folder, "loss_curves.csv"),
             "learned_spectrum": table_path(folder, "learned_spectrum.csv"), "report": folder / "report.json",
             "config": folder / "config.json", "figures": figs}
    return SweepResult(folder, summary, pd.read_csv(folder / "results.csv", dtype={"rank": str}), read_blocks(folder),
                       pd.read_csv(paths["loss_curves"], dtype={"rank": str}),
                       pd.read_csv(paths["learned_spectrum"], dtype={"rank": str}), paths)


def run_sweep(target=None, command: str | None = None, progress: bool = True, **options) -> SweepResult:
    """Run (or resume) a sweep and return what it made (`SweepResult`).

    `target` is a target object (a `PODTarget`, a `KernelTarget` or any object with their attributes:
    `target_options`), a whole `SweepConfig`, or None (then `options` say everything).  `options` are
    `sweep_config`'s -- the command line's options, its presets and its checks: `m_h=(1, 2, 4)`,
    `seeds=(0, 1)`, `model=ModelConfig(...)` or `model={"activation": "sin"}`, `fit={"steps": 2000}`,
    `out="runs/mine"`, `quick=True`, ...  A target field (alpha, rank, sigma, phi, F, tau, ...) comes from the
    target object, not from options.  `command` is recorded in command.txt (default: a description of this
    call)."""
    if isinstance(target, SweepConfig):
        need(not options, f"run_sweep: a SweepConfig says everything; options {', '.join(sorted(options))} would be ignored")
        cfg = target
    elif target is None:
        cfg = sweep_config(**options)
    else:
        clash = sorted(set(options) & set(TARGET_FIELDS))
        need(not clash, f"run_sweep: {', '.join(clash)} come from the target object; give them to the target "
                        f"({type(target).__name__}), not to run_sweep")
        cfg = sweep_config(**target_options(target), **options)
    if command is None:
        command = f"python: run_sweep({type(target).__name__ if target is not None else ''}"
        command += (", " if target is not None and options else "") + ", ".join(f"{k}={v!r}" for k, v in options.items())
        command += ")"
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
        attn_from = ""
        if cfg.term == "full" and cfg.model.features == "learned":   # the attention term alone, measured on this target
            attn_from = find_attn_run(resolved, [(a, rank_str(r)) for a, r, _ in cfg.targets()])
        if cfg.terms and cfg.term == "full" and cfg.model.features == "learned" and not (ff_from and attn_from):
            ff_from, attn_from = term_runs.measure(cfg, Path(out), command, run_sweep, progress, ff_from, attn_from)
        summary = summarize(out, tabs, tuple(cfg.fit_range), command, reference, ff_from=ff_from, attn_from=attn_from)
        plot(out, tabs, summary)
        write_report_json(out)
    return _result(Path(folder), summary)
