"""Moved to `jackson.rate_sweep.cli` (`sweep_main`) and `jackson.app_b.cli` (`tasks_main`); this name stays
for one release.

The console scripts point at the new modules (pyproject.toml); this one keeps `from jackson.cli import
sweep_main, tasks_main` and `python -m jackson.cli` working."""
from .app_b.cli import _tasks, tasks_main
from .rate_sweep.cli import _sweep, exponent_lines, sweep_main

__all__ = ["sweep_main", "tasks_main", "exponent_lines", "_sweep", "_tasks"]   # re-exported, for old imports

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(sweep_main())
