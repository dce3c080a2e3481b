"""The public API of every package (issue 16): `import <package>` loads no torch (and no timm), every
name of __all__ resolves to the object its submodule defines, and the package docstring's example runs
(doctest) -- the examples a user reads first are checked, not just present."""
from __future__ import annotations

import doctest
import importlib
import subprocess
import sys

import json

import pytest

PACKAGES = ("jackson", "synthetic", "rnn_compare", "vit_probe", "cot_dp")


@pytest.mark.parametrize("package", PACKAGES)
def test_import_is_lazy(package):
    code = f"import sys, {package}; print('torch' in sys.modules, 'timm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_resolves(package):
    mod = importlib.import_module(package)
    assert len(mod.__all__) >= 5 and len(set(mod.__all__)) == len(mod.__all__)
    for name in mod.__all__:
        obj = getattr(mod, name)
        home = getattr(obj, "__module__", None)
        if home is not None and not isinstance(obj, type(sys)):      # a function or class: from this lab
            assert home.split(".")[0] in PACKAGES, (package, name, home)
        assert not isinstance(obj, type(sys)), f"{package}.{name} is a module, not the exported object"
    with pytest.raises(AttributeError):
        getattr(mod, "not_a_public_name")


@pytest.mark.parametrize("package", PACKAGES)
def test_docstring_example_runs(package):
    res = doctest.testmod(importlib.import_module(package))
    assert res.attempted >= 2 and res.failed == 0


# ---- run_sweep takes a target object and returns a result object ------------------------------------------

def test_run_sweep_takes_a_target_and_gives_the_command_lines_numbers(tmp_path):
    """The target object says what is fitted (here tau = 8, the trace-free pair, rank 3): the same run as the
    command line with those options, to the last digit, and a SweepResult with the tables, exponents and paths."""
    import numpy as np
    import pandas as pd
    from jackson import PODTarget, Spectrum, SweepResult, run_sweep
    from jackson.rate_sweep.cli import sweep_main
    target = PODTarget(Spectrum(alpha=1.0, rank=3), phi="sin", psi="cos", tau=8)
    res = run_sweep(target, quick=True, seeds=(0,), out=str(tmp_path / "py"), progress=False)
    assert isinstance(res, SweepResult) and res.folder == tmp_path / "py"
    conf = json.loads((tmp_path / "py" / "config.json").read_text())
    assert (conf["tau"], conf["phi"], conf["psi"], conf["alpha"], conf["rank"]) == (8, "sin", "cos", [1.0], ["3"])
    assert sweep_main(["--quick", "--threads", str(__import__("torch").get_num_threads()), "--alpha", "1", "--rank", "3",
                       "--tau", "8", "--construction", "trace-free", "--out", str(tmp_path / "cli")]) == 0
    cli = pd.read_csv(tmp_path / "cli" / "results.csv")
    pd.testing.assert_frame_equal(res.results.drop(columns=["rank"]), cli.drop(columns=["rank"]))
    assert set(res.exponents) == {(1.0, "3", res.summary["m_ff"][0])}
    assert all(p.is_file() for p in res.paths["figures"]) and res.paths["summary"].is_file()
    assert len(res.blocks) and np.isfinite(res.blocks.mse).all() and "alpha=1 rank=3" in repr(res)


def test_run_sweep_refuses_what_the_command_line_refuses(tmp_path):
    import numpy as np
    from jackson import PODTarget, Spectrum, UsageError, run_sweep, sweep_config
    target = PODTarget(Spectrum(alpha=1.0, rank=3), tau=8)
    with pytest.raises(UsageError, match="tau come from the target object"):
        run_sweep(target, tau=16, quick=True, out=str(tmp_path / "a"))
    with pytest.raises(UsageError, match="is not a target"):
        run_sweep(object(), quick=True, out=str(tmp_path / "b"))
    with pytest.raises(UsageError, match="non-increasing"):
        sweep_config(sigma=(0.1, 0.5))                         # what --sigma 0.1,0.5 is told
    cfg = sweep_config(quick=True, sigma=np.exp(-np.arange(1, 13) / 3))      # an array where a spectrum goes
    assert len(cfg.sigma) == 12 and cfg.sigma[0] == pytest.approx(np.exp(-1 / 3))
    assert sweep_config(alpha=1.0).alpha == (1.0,)            # one value where a sequence goes
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
