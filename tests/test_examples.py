"""The scripts in examples/ run as a user runs them (a fresh process, the repository root as working folder) and
write what they say: a finished quick sweep with its summary, figures and report.json."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.parametrize("script, kind", [("own_spectrum.py", "explicit"), ("own_kernel.py", "kernel")])
def test_example_runs(tmp_path, sub_env, script, kind):
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, str(ROOT / "examples" / script), str(out)], capture_output=True, text=True,
                       cwd=ROOT, env=sub_env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "fitted exponent" in r.stdout and str(out) in r.stdout
    (t,) = json.loads((out / "summary.json").read_text())["targets"]
    assert kind in t and "test" in t["exponents"]
    rep = json.loads((out / "report.json").read_text())
    assert rep["paper"] and all((out / f["file"]).stat().st_size > 0 for f in rep["figures"])
    cfg = json.loads((out / "config.json").read_text())
    if kind == "kernel":        # the Python functions by name and source hash, never a memory address
        assert cfg["kernel"].startswith("python:__main__:kernel#") and cfg["F"].startswith("python:__main__:F#")
        assert "0x" not in json.dumps(cfg)
    else:                       # the spectrum's own basis, named the same way
        assert cfg["phi"].startswith("python:__main__:cheb#") and cfg["psi"] == cfg["phi"]
        assert t["phi"] == cfg["phi"] and "0x" not in json.dumps(cfg)
