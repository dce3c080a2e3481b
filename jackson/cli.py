"""Moved to `jackson.rate_sweep.cli` (`sweep_main`); this name stays for one release.

The console scripts point at the new module (pyproject.toml); this one keeps `from jackson.cli import
sweep_main, tasks_main` and `python -m jackson.cli` working."""
from .rate_sweep.cli import _sweep, _tasks, exponent_lines, sweep_main, tasks_main  # noqa: F401

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(sweep_main())
