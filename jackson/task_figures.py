"""Moved to `jackson.app_b.figures`; this name stays for one release.

`import jackson.task_figures` gives the moved module itself (the same object, private names included), so old
imports, a monkeypatch through the old name and a process started before the move keep working."""
import sys

from .app_b import figures as _moved

sys.modules[__name__] = _moved
