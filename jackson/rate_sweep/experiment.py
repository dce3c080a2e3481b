"""The jackson-sweep experiment (Fig. 1): config -> cells -> runner -> tables -> figures.

The config (`SweepConfig`, the presets, `sweep_config`, `validate`) lives in `config.py`; its names are
re-exported here, so `from jackson.rate_sweep.experiment import SweepConfig` works too.  This module is the run:
`run_sweep`."""
from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..config import UsageError, need, read_json
from ..runfolder import open_run, table_path
from ..sweep import run_cells
from .config import (CONSTRUCTIONS, GIVEN, GIVEN_RECIPE, GPU, GPU_GIVEN, MAX_ALPHA, QUICK, SweepConfig, check_device,
                     check_kernel, check_sigma, explicit_alpha, kernel_text, presets, read_sigma_file,
                     sweep_config, validate)
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
           "Exponents", "SweepResult", "TargetKey", "run_sweep", "sweep_config", "target_options", "validate"]


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


class TargetKey(NamedTuple):
    """One target of a sweep, as `SweepResult.exponents` keys it: its alpha (an explicit spectrum's or a kernel's:
    alpha_hat), its rank as a number (math.inf for rank inf) and the FFN width m_ff."""
    alpha: float
    rank: float
    m_ff: int

    @classmethod
    def of(cls, alpha, rank, m_ff) -> "TargetKey":
        """From the forms the tables and summary.json use (rank "inf" or "6", numbers as text)."""
        return cls(float(alpha), math.inf if str(rank).strip().lower() in ("inf", "infinity") else float(rank),
                   int(m_ff))


class Exponents(dict):
    """{TargetKey(alpha, rank, m_ff): {kind: {"slope", "lo", "hi", ...}}}.  A key may also be given as the tables
    write it, `(1.5, "inf", 64)` (how earlier versions keyed it): it is read as the same target."""

    def __missing__(self, key):
        try:
            norm = TargetKey.of(*key)
        except (TypeError, ValueError):
            raise KeyError(key) from None
        if norm == key:          # already in the key's own form, and absent
            raise KeyError(key)
        return self[norm]

    def __contains__(self, key) -> bool:
        try:
            self[key]
        except KeyError:
            return False
        return True

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default


@dataclass(frozen=True)
class SweepResult:
    """What `run_sweep` made, or a finished folder opened again (`SweepResult.load(folder)`): the run folder, its
    summary (summary.json as a dict), its tables as DataFrames (results: a row per member; blocks: every
    held-out block's error; loss_curves; learned_spectrum), the fitted exponents per target, the resolved config
    (config.json as a dict) and every path it wrote."""
    folder: Path
    summary: dict
    results: pd.DataFrame
    blocks: pd.DataFrame
    loss_curves: pd.DataFrame
    learned_spectrum: pd.DataFrame
    paths: dict
    config: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def load(cls, folder: str | Path) -> "SweepResult":
        """A finished jackson-sweep folder as a result: the same tables, summary and exponents as the run that
        wrote it (nothing is trained or written).  A folder that is not one is a one-line UsageError."""
        folder = Path(folder)
        need(folder.is_dir(), f"SweepResult.load: {folder} is not a folder")
        missing = [n for n in ("summary.json", "results.csv") if not (folder / n).is_file()]
        need(not missing, f"SweepResult.load: {folder} holds no {' or '.join(missing)} (not a finished jackson-sweep "
                          f"folder; an unfinished one resumes with the command in its command.txt)")
        try:
            return _result(folder, read_json(folder / "summary.json"))
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise UsageError(f"SweepResult.load: cannot read {folder} as a jackson-sweep folder ({e})") from None

    @property
    def exponents(self) -> Exponents:
        """{TargetKey(alpha, rank, m_ff): {kind: {"slope", "lo", "hi", ...}}} for every target (kinds: test,
        oracle, ...); rank is a number (math.inf for rank inf)."""
        return Exponents({TargetKey.of(t["alpha"], t["rank"], t["m_ff"]): t["exponents"]
                          for t in self.summary["targets"]})

    @property
    def targets(self) -> list[dict]:
        return self.summary["targets"]

    def __repr__(self) -> str:
        parts = []
        for t in self.summary["targets"]:
            e = t.get("exponents", {}).get("test")
            if t.get("explicit"):
                name = f"explicit spectrum ({t['explicit']['K']} values, alpha_hat={t['alpha']:g})"
            elif t.get("kernel"):
                name = f"kernel (alpha_hat={t['alpha']:g}) rank={t['rank']}"
            else:
                name = f"alpha={t['alpha']:g} rank={t['rank']}"
            if len(self.summary.get("m_ff", [])) > 1:
                name += f" m_ff={t['m_ff']}"
            parts.append(f"{name}: " + (f"slope {e['slope']:+.2f}" if e else "no exponent"))
        quick = ""
        if self.config.get("quick"):      # the preset's own budget learns nothing yet: say so where the slope is read
            own = (self.config.get("fit") or {}).get("steps") == QUICK["fit"].steps
            quick = (f" [quick preset: small data and model, {QUICK['fit'].steps} steps: a smoke test of the pipeline, "
                     "not a measurement]" if own else " [quick preset: small data and model]")
        return f"SweepResult({self.folder}: {'; '.join(parts)}{quick})"


def _result(folder: Path, summary: dict) -> SweepResult:
    import pandas as pd
    figs = [folder / n for n in ("error_vs_mh.png", "error_mh_x_mff.png", "learned_spectrum.png", "loss_curves.png")
            if (folder / n).is_file()]
    paths = {"folder": folder, "summary": folder / "summary.md", "summary_json": folder / "summary.json",
             "results": folder / "results.csv", "blocks": table_path(folder, "blocks.csv"),
             "loss_curves": table_path(folder, "loss_curves.csv"),
             "learned_spectrum": table_path(folder, "learned_spectrum.csv"), "report": folder / "report.json",
             "config": folder / "config.json", "figures": figs}

    def table(name):          # as pd.read_csv gives it (rank a float column, inf for rank inf): one dtype per column
        p = paths[name]
        return pd.read_csv(p) if p.is_file() else pd.DataFrame()

    config = read_json(paths["config"]) if paths["config"].is_file() else {}
    return SweepResult(folder, summary, table("results"), table("blocks"), table("loss_curves"),
                       table("learned_spectrum"), paths, config)


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
            attn_from = find_attn_run(resolved, [(a, rank_str(r)) for a, r, _ in cfg.targets()], recipe=GIVEN_RECIPE)
        if cfg.terms and cfg.term == "full" and cfg.model.features == "learned" and not (ff_from and attn_from):
            ff_from, attn_from = term_runs.measure(cfg, Path(out), command, run_sweep, progress, ff_from, attn_from)
        summary = summarize(out, tabs, tuple(cfg.fit_range), command, reference, ff_from=ff_from, attn_from=attn_from)
        plot(out, tabs, summary)
        write_report_json(out)
    return _result(Path(folder), read_json(Path(folder) / "summary.json"))   # summary.json as written (keys as text)
