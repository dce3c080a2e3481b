"""Moved to `jackson.lab_report.page`; this name stays for one release (`python -m jackson.report` too).

`import jackson.report` gives the moved module itself (the same object, private names included), so old
imports, a monkeypatch through the old name and a process started before the move keep working."""
import sys

from .lab_report import page as _moved

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(_moved.main())
sys.modules[__name__] = _moved
