"""Moved to `jackson.app_b.results`; this name stays for one release.

`import jackson.task_results` gives the moved module itself (the same object, private names included), so old
imports, a monkeypatch through the old name and a process started before the move keep working."""
import sys

from .app_b import results as _moved

sys.modules[__name__] = _moved
