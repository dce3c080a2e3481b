"""Moved to `jackson.lab_report.claims`; this name stays for one release.

`import jackson.claims` gives the moved module itself (the same object, private names included), so old
imports, a monkeypatch through the old name and a process started before the move keep working."""
import sys

from .lab_report import claims as _moved

sys.modules[__name__] = _moved
