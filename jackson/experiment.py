"""Moved to `jackson.rate_sweep.experiment`; this name stays for one release.

`import jackson.experiment` gives the moved module itself (the same object, private names included), so old
imports, a monkeypatch through the old name and a process started before the move keep working."""
import sys

from .rate_sweep import experiment as _moved

sys.modules[__name__] = _moved
