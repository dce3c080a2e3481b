"""Moved to `jackson.rate_sweep.cli` (`sweep_main`) and `jackson.app_b.cli` (`tasks_main`); this name stays
for one release.

The console scripts point at the new modules (pyproject.toml); this one keeps `from jackson.cli import
sweep_main, tasks_main` and `python -m jackson.cli` working."""
from .app_b.cli import _tasks, tasks_main  # noqa: F401
from .rate_sweep.cli import _sweep, exponent_lines, sweep_main  # noqa: F401

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(sweep_main())
