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
    m_ff = res.summary["m_ff"][0]
    assert set(res.exponents) == {(1.0, 3.0, m_ff)} and list(res.exponents)[0].rank == 3.0   # rank a number
    assert res.exponents[(1.0, "3", m_ff)] is res.exponents[(1.0, 3, m_ff)]      # the tables' form of a key reads too
    assert (1.0, "3", m_ff) in res.exponents and (1.0, "4", m_ff) not in res.exponents
    assert res.exponents.get((1.0, "3", m_ff)) is res.exponents[(1.0, 3.0, m_ff)] and res.exponents.get((2, 3, 4)) is None
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


# ---- run_sweep has no side effects; a finished folder opens as a result --------------------------------------

def test_run_sweep_leaves_the_callers_matplotlib_alone_and_its_folder_opens_as_the_same_result(tmp_path):
    """One tiny run of an explicit spectrum with the caller's m_h under the quick preset: the caller's rcParams
    (one set by hand among them) are exactly as before, the spectrum is recorded as what it is, the fit spans the
    caller's m_h (not the preset's), and SweepResult.load(folder) gives the run's own tables, summary and exponents."""
    import matplotlib
    import numpy as np
    import pandas as pd
    from jackson import PODTarget, Spectrum, SweepResult, run_sweep
    matplotlib.rcParams["font.size"] = 13.0                  # the caller's own setting
    before = dict(matplotlib.rcParams)
    sigma = tuple(float(i) ** -1.5 for i in range(1, 13))
    target = PODTarget(Spectrum(explicit=sigma), phi="sin", psi="cos", tau=8)
    assert repr(target.spectrum).startswith("Spectrum(explicit=(1, 0.3536,") and "alpha" not in repr(target.spectrum)
    res = run_sweep(target, quick=True, m_h=(1, 2, 4), seeds=(0,), out=str(tmp_path / "run"), progress=False)
    after = dict(matplotlib.rcParams)
    changed = sorted(k for k in before.keys() | after.keys() if str(before.get(k)) != str(after.get(k)))
    assert not changed, f"run_sweep changed the caller's rcParams: {changed}"
    assert all(p.is_file() for p in res.paths["figures"]) and len(res.paths["figures"]) >= 3

    conf = json.loads((tmp_path / "run" / "config.json").read_text())
    assert not {"alpha", "rank", "c"} & set(conf)             # the grid's fields do not apply to it
    assert conf["spectrum"] == {"kind": "explicit", "values": 12, "nonzero": 12, "alpha_hat": 1.5}
    assert conf["sigma"] == list(sigma) and conf["fit_range"] == [1, 4]
    assert "explicit spectrum (12 values, alpha_hat=1.5)" in repr(res) and "rank=inf" not in repr(res)
    assert "smoke test" in repr(res)                          # a quick run says what it is
    (t,) = res.targets
    assert t["fit_m_h"] == [1, 2, 4]                          # the caller's m_h, all of them

    again = SweepResult.load(tmp_path / "run")
    for name in ("results", "blocks", "loss_curves", "learned_spectrum"):
        pd.testing.assert_frame_equal(getattr(again, name), getattr(res, name))
    assert json.dumps(again.summary, sort_keys=True) == json.dumps(res.summary, sort_keys=True)   # NaN included
    assert again.exponents.keys() == res.exponents.keys() and again.config == conf
    assert repr(again) == repr(res) and again.paths["figures"] == res.paths["figures"]
    assert np.isfinite(again.exponents[(1.5, 12.0, t["m_ff"])]["test"]["slope"])


def test_a_committed_folder_opens_as_the_result_its_run_made():
    """reports/jackson/fig1-full (9 targets, 3 seeds): every table reads back whole, and each fitted exponent
    recomputed from the loaded block table (jackson.rate_sweep.tables.block_exponent) is the slope its summary.json
    holds; the figures it lists are the folder's."""
    import pandas as pd
    from pathlib import Path
    from jackson import SweepResult, TargetKey
    from jackson.rate_sweep.tables import block_exponent
    folder = Path(__file__).resolve().parents[1] / "reports" / "jackson" / "fig1-full"
    res = SweepResult.load(folder)
    pd.testing.assert_frame_equal(res.results, pd.read_csv(folder / "results.csv"))
    assert len(res.targets) == 9 and len(res.blocks) and len(res.loss_curves) and len(res.learned_spectrum)
    fitted = 0
    for t in res.targets:
        e = res.exponents[TargetKey.of(t["alpha"], t["rank"], t["m_ff"])].get("test")
        if len(t["fit_m_h"]) >= 2:
            again = block_exponent(res.blocks, t["alpha"], str(t["rank"]), t["fit_m_h"], "test", m_ff=t["m_ff"])
            assert again["slope"] == pytest.approx(e["slope"], abs=1e-9)
            fitted += 1
    assert fitted == 6
    assert {p.name for p in res.paths["figures"]} == {"error_vs_mh.png", "learned_spectrum.png", "loss_curves.png"}


def test_a_folder_that_is_not_a_finished_sweep_is_one_line(tmp_path):
    from jackson import SweepResult, UsageError
    with pytest.raises(UsageError, match="holds no summary.json or results.csv"):
        SweepResult.load(tmp_path)
    with pytest.raises(UsageError, match="is not a folder"):
        SweepResult.load(tmp_path / "nowhere")


def test_a_preset_never_overrides_what_the_caller_gave():
    """--quick's fit range is that of its own m_h (1, 2, 3): with the caller's m_h it spans those, from Python and
    from the command line alike; a fit range the caller gives is kept as given."""
    from jackson import sweep_config
    from jackson.config import build_parser, from_args
    from jackson.rate_sweep.experiment import SweepConfig, presets
    assert sweep_config(quick=True).fit_range == (1, 3)
    assert sweep_config(quick=True, m_h=(1, 2, 4, 8)).fit_range == (1, 8)
    assert sweep_config(quick=True, m_h=(2, 4, 8), fit_range=(2, 4)).fit_range == (2, 4)
    given = vars(build_parser(SweepConfig, "jackson-sweep", "").parse_args(["--quick", "--m-h", "1,2,4,8"]))
    assert from_args(SweepConfig, given, SweepConfig(**presets(given))) == sweep_config(quick=True, m_h=(1, 2, 4, 8))


def test_an_explicit_spectrums_config_shows_what_it_is():
    """repr(SweepConfig) of an explicit spectrum names its values, not the alpha, rank and c it does not use; a grid
    config's repr is the dataclass's."""
    from jackson import sweep_config
    r = repr(sweep_config(quick=True, sigma=(1.0, 0.5, 0.25)))
    assert "sigma=(1.0, 0.5, 0.25)" in r and not {"alpha=", "rank=", " c="} & {w for w in ("alpha=", "rank=", " c=") if w in r}
    assert repr(sweep_config(quick=True)).startswith("SweepConfig(alpha=(1.5,), rank=(inf,), m_h=(1, 2, 3)")


def test_the_tables_keep_the_dtypes_pandas_reads():
    """Each table of a result is what pd.read_csv gives of its file, dtypes included: rank is a float column (inf for
    rank inf), so df.query("rank == 2") finds the rank-2 rows, as on the file itself; and the fitted exponents
    recomputed from the loaded blocks still match (block_exponent takes a rank as text or as a number)."""
    import math
    import pandas as pd
    from pathlib import Path
    from jackson import SweepResult
    from jackson.runfolder import table_path
    from jackson.rate_sweep.tables import block_exponent
    folder = Path(__file__).resolve().parents[1] / "reports" / "jackson" / "fig1-full"
    res = SweepResult.load(folder)
    for name, df in (("results.csv", res.results), ("blocks.csv", res.blocks), ("loss_curves.csv", res.loss_curves),
                     ("learned_spectrum.csv", res.learned_spectrum)):
        pd.testing.assert_frame_equal(df, pd.read_csv(table_path(folder, name)), obj=name)
        if "rank" in df:
            assert df["rank"].dtype == float, name
    assert len(res.results.query("rank == 2")) and len(res.results.query("rank == inf"))
    assert set(res.results["rank"]) == {2.0, 6.0, math.inf}
    t = next(t for t in res.targets if t["rank"] == "6" and len(t["fit_m_h"]) >= 2)
    as_text = block_exponent(pd.read_csv(table_path(folder, "blocks.csv"), dtype={"rank": str}), t["alpha"], "6",
                             t["fit_m_h"], "test", m_ff=t["m_ff"])
    as_number = block_exponent(res.blocks, t["alpha"], 6.0, t["fit_m_h"], "test", m_ff=t["m_ff"])
    assert as_text["slope"] == as_number["slope"] == pytest.approx(t["exponents"]["test"]["slope"], abs=1e-9)



def test_every_results_table_has_the_declared_columns(tmp_path):
    """results.csv rebuilt from cells written before test_l1, term and activation existed, and of every committed
    jackson-sweep folder (the card's among them, as today's code writes it): the declared columns (rate_sweep/columns.py), in order; what an
    older cell did not measure is empty, what its cell.json says (term, activation) is filled in."""
    import shutil
    import pandas as pd
    from pathlib import Path
    from jackson.rate_sweep.columns import COLUMNS
    from jackson.rate_sweep.tables import collect
    declared = list(COLUMNS["jackson-sweep results.csv"])
    reports = Path(__file__).resolve().parents[1] / "reports" / "jackson"
    old = sorted((reports / "fig1-full" / "cells").iterdir())[:2]
    assert all("test_l1" not in (d / "rows.csv").read_text().splitlines()[0] for d in old)   # cells of that time
    cells = [shutil.copytree(d, tmp_path / "cells" / d.name) for d in old]
    collect(tmp_path, cells)
    rows = pd.read_csv(tmp_path / "results.csv")
    assert list(rows.columns) == declared
    assert rows[["test_l1", "oracle_l1"]].isna().all().all() and set(rows.term) == {"full"}
    assert set(rows.activation) == {"gelu"}                      # as the cells' model records say (RECORD_DEFAULTS)
    found = sorted(reports.glob("*/results.csv"))
    for f in found:
        assert pd.read_csv(f, nrows=0).columns.tolist() == declared, f.parent.name
    assert len(found) >= 35
