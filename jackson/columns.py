"""Moved to `jackson.lab_report.columns`; this name stays for one release, and `python -m jackson.columns`
(the command reports/COLUMNS.md names) still rewrites that page.

`import jackson.columns` gives the moved module itself (the same object, private names included), so old
imports, a monkeypatch through the old name and a process started before the move keep working."""
import sys

from .lab_report import columns as _moved

if __name__ == "__main__":  # pragma: no cover
    sys.exit(_moved.main(sys.argv[1:]))
sys.modules[__name__] = _moved
