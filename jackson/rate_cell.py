"""Moved to `jackson.rate_sweep.cell`; this name stays for one release.

`import jackson.rate_cell` gives the moved module itself (the same object, private names included), so old
imports, a monkeypatch through the old name and a process started before the move keep working."""
import sys

from .rate_sweep import cell as _moved

sys.modules[__name__] = _moved
