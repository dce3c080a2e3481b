"""The thin `jackson-tasks` entry point: signals first, then the (torch-importing) task module."""
from __future__ import annotations

from ..config import guarded, install_signals


def tasks_main(argv: list[str] | None = None) -> int:
    """jackson-tasks: signals first, then the (torch-importing) task module."""
    install_signals()
    return guarded("jackson-tasks", lambda: _tasks(argv))


def _tasks(argv):
    from .experiment import main
    return main(argv)
