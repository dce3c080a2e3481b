"""`--terms`: where no committed run measures a curve's two terms of Eq. (17), the run measures them itself.

The attention term alone is a `--features given` sweep of the same targets, seeds and data (with the given-features
recipe: the GIVEN preset's fit and restarts, as `jackson-sweep --features given` would run it); the feed-forward term
alone is a `--term ff` sweep with the run's own model and fit.  Each is a run folder of its own beside the run
(`<out>-given`, `<out>-ff`), resumable like any other, and found by key by later runs of the same settings."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from .config import CLASSLESS_MODEL, GIVEN, GPU_GIVEN, QUICK, SweepConfig


def given_config(cfg: SweepConfig, out: Path) -> SweepConfig:
    """The attention term alone on cfg's targets: features given, the given-features recipe (as the command line's
    presets pick it for --features given, with --quick or --gpu where cfg has them)."""
    preset = dict(GPU_GIVEN if cfg.gpu else GIVEN)
    if cfg.quick:
        preset = {"fit": dataclasses.replace(QUICK["fit"], lr=GIVEN["fit"].lr)}
    model = dataclasses.replace(cfg.model, features="given", features_k=None,   # derived: uncapped (hparams.given_features_k)
                                activation=CLASSLESS_MODEL.activation, in_scale=CLASSLESS_MODEL.in_scale)   # no FFN:
    # the class-free fields `jackson-sweep --features given` runs with, so either finds the other's cells by key
    return dataclasses.replace(cfg, **preset, model=model, out=str(out), terms=False, ff_from="", compare_to="")


def ff_config(cfg: SweepConfig, out: Path) -> SweepConfig:
    """The feed-forward term alone on cfg's targets: the same model and fit, each m_h fitted to its rank-m_h truncation."""
    return dataclasses.replace(cfg, term="ff", out=str(out), terms=False, ff_from="", compare_to="")


def measure(cfg: SweepConfig, out: Path, command: str, run, progress: bool, ff_from: str, attn_from: str) -> tuple[str, str]:
    """(ff_from, attn_from): the references found by key where they were, else measured now by `run` (run_sweep)."""
    out = Path(cfg.resolved_out())      # as the user named it (relative stays relative), not the absolute run folder
    if not ff_from:
        sub = ff_config(cfg, out.with_name(out.name + "-ff"))
        print(f"--terms: measuring the feed-forward term alone in {sub.out}")
        run(sub, command=command + "  [its feed-forward term, --terms]", progress=progress)
        ff_from = sub.out
    if not attn_from:
        sub = given_config(cfg, out.with_name(out.name + "-given"))
        print(f"--terms: measuring the attention term alone in {sub.out}")
        run(sub, command=command + "  [its attention term, --terms]", progress=progress)
        attn_from = sub.out
    return ff_from, attn_from
