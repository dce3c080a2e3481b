"""Moved to `jackson.app_b.experiment`; this name stays for one release (`python -m jackson.tasks` too).

`import jackson.tasks` gives the moved module itself (the same object, private names included), so old
imports, a monkeypatch through the old name and a process started before the move keep working."""
import sys

from .app_b import experiment as _moved

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(_moved.main())
sys.modules[__name__] = _moved
