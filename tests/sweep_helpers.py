"""What the jackson-sweep bad-input tests share: a refused command line is exit 2, one line
('jackson-sweep: error: ...') naming what is wrong, and nothing written."""
from __future__ import annotations

from pathlib import Path

import pytest


def refused_line(capsys, args: list[str], out: Path, why: str) -> str:
    """Run `jackson-sweep --quick ARGS --out OUT` in-process; check the refusal; return its line."""
    from jackson.rate_sweep.cli import sweep_main
    with pytest.raises(SystemExit) as e:
        sweep_main(["--quick", *args, "--out", str(out)])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("jackson-sweep: error:") and why in err[0], err
    assert not out.exists()
    return err[0]
