"""The bases a jackson-sweep caption names are the ones its cells used: `--construction trace-free` is (sin, cos),
whether or not the folder's summary.json records them (jackson/rate_sweep/report.py), and every committed folder's
report.json says what its own cells' cell.json say."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from jackson.rate_sweep.config import CONSTRUCTIONS
from jackson.rate_sweep.report import report_hook

REPORTS = Path(__file__).resolve().parents[1] / "reports"


def _folder(tmp_path, cfg: dict, target_bases: tuple | None) -> Path:
    f = tmp_path / "jackson" / "run"
    f.mkdir(parents=True)
    (f / "config.json").write_text(json.dumps({"seeds": [0], "m_h": [1, 2], "tau": 16, **cfg}))
    (f / "command.txt").write_text("jackson-sweep\n")
    t = {"alpha": 1.5, "rank": "inf", "predicted_exponent": -2.0, "exponents": {}, "checks": {}}
    if target_bases:
        t.update(phi=target_bases[0], psi=target_bases[1])
    (f / "summary.json").write_text(json.dumps({"fit_range": [1, 2], "targets": [t]}))
    return f


@pytest.mark.parametrize("cfg, target_bases, says", [
    ({"construction": "trace-free", "phi": "sin", "psi": "sin"}, None, "sin/cos"),      # an older summary: no bases
    ({"construction": "trace-free", "phi": "sin", "psi": "sin"}, ("sin", "cos"), "sin/cos"),
    ({"construction": "paper"}, None, "sin/sin"),
    ({"construction": "", "phi": "cos", "psi": "legendre"}, None, "cos/legendre"),
    ({}, None, "sin/sin"),                                                             # the defaults
])
def test_the_caption_names_the_cells_bases(tmp_path, cfg, target_bases, says):
    e = report_hook(_folder(tmp_path, cfg, target_bases))
    assert f"{says} bases" in e["data"]
    assert all(f"{says} bases" in fig["caption"] for fig in e["figures"])
    assert CONSTRUCTIONS["trace-free"] == ("sin", "cos")


def _committed():
    return sorted(p.parent for p in (REPORTS / "jackson").glob("*/report.json") if (p.parent / "summary.json").is_file())


@pytest.mark.parametrize("folder", _committed(), ids=lambda p: p.name)
def test_committed_captions_name_the_bases_of_their_cells(folder):
    """Against the cells themselves: every cell.json of the folder names its (phi, psi)."""
    text = (folder / "report.json").read_text()
    named = set(re.findall(r"(\w+)/(\w+) bases", text))
    if not named:
        pytest.skip(f"{folder.name}: a kernel or explicit-spectrum run (its caption names the kernel, not bases)")
    cells = {(c["cell"]["phi"], c["cell"]["psi"]) for c in
             (json.loads(p.read_text()) for p in (folder / "cells").glob("*/cell.json")) if "phi" in c["cell"]}
    if len(cells) != 1:
        pytest.skip(f"{folder.name}: cells of {len(cells)} bases recorded")
    assert named == cells, f"{folder.name}: report.json says {named}, its cells used {cells}"
