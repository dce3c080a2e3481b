"""--config files are read as strictly as the command line: unknown keys, ill-typed values and values beyond the
command line's own limits are one line naming the file and the key, for every config class (jackson.config.from_dict)."""
from __future__ import annotations

import json

import pytest

from jackson.config import UsageError, from_dict, read_config
from jackson.rate_sweep.config import SweepConfig


@pytest.mark.parametrize("doc, words", [
    ({"alhpa": [3.0]}, "unknown key 'alhpa' (did you mean 'alpha'?)"),
    ({"zzz": 1}, "unknown key 'zzz' (not an option of this command)"),
    ({"fit": {"stpes": 10}}, "fit: unknown key 'stpes' (did you mean 'steps'?)"),
    ({"rank": "abc"}, "'rank' expects a list of integers or \"inf\""),
    ({"rank": 5}, "'rank' expects a list of integers or \"inf\""),
    ({"rank": [2.5]}, "'rank' expects a list of integers or \"inf\""),
    ({"seeds": "three"}, "'seeds': expected a list"),
    ({"fit": {"steps": 10 ** 30}}, "is outside -2**63+1..2**63-1"),
    ({"fit": {"steps": 1e30}}, "'steps': expected an integer"),
    ({"fit": {"lr": "nan"}}, "'lr': expected a finite number"),
    ({"tau": True}, "'tau': expected an integer"),
])
def test_bad_config_files_are_one_line(tmp_path, doc, words):
    p = tmp_path / "c.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(UsageError) as e:
        read_config(SweepConfig, str(p))
    assert words in str(e.value) and str(p) in str(e.value) and "\n" not in str(e.value)


def test_a_runs_own_config_json_reads_back_with_its_derived_keys():
    d = json.loads(json.dumps(SweepConfig(sigma=(1.0, 0.5, 0.25)).as_dict(), default=str))
    assert "sigma_source" in d
    assert from_dict(SweepConfig, d).sigma == (1.0, 0.5, 0.25)
    assert from_dict(SweepConfig, {"rank": [2, "inf"]}).rank == (2.0, float("inf"))


def test_every_committed_sweep_config_reads_back(request):
    from pathlib import Path
    root = Path(request.config.rootdir) / "reports" / "jackson"
    files = sorted(f for f in root.glob("*/config.json") if (f.parent / "command.txt").read_text().startswith("jackson-sweep"))
    assert files
    for f in files:
        read_config(SweepConfig, str(f))


def test_every_committed_cot_dp_config_reads_back(request):
    from pathlib import Path
    from cot_dp.grid import SweepConfig as CotConfig
    for f in sorted((Path(request.config.rootdir) / "reports" / "cot_dp").glob("*/config.json")):
        read_config(CotConfig, str(f))


def test_every_committed_task_config_reads_back(request):
    from pathlib import Path
    from jackson.app_b.config import RUNS
    root = Path(request.config.rootdir) / "reports" / "tasks"
    for name, cls in RUNS.items():
        for f in sorted(root.glob(f"{name}*/config.json")):
            read_config(cls, str(f))


def test_the_sine_class_is_one_option_away_and_a_given_in_scale_wins():
    """--activation sin sets the first layer's scale every committed sine folder used (60); --in-scale given on the
    command line or in Python wins; GELU and ReLU keep 3; a committed sine folder's command resolves to its config."""
    import json
    from pathlib import Path
    from jackson.rate_sweep.config import SINE_IN_SCALE, sweep_config
    assert sweep_config(model={"activation": "sin"}).model.in_scale == SINE_IN_SCALE == 60.0
    assert sweep_config(model={"activation": "sin"}, quick=True).model.in_scale == 60.0       # on top of QUICK's model
    assert sweep_config(model={"activation": "sin", "in_scale": 30.0}).model.in_scale == 30.0
    assert sweep_config(model={"activation": "relu"}).model.in_scale == 3.0
    assert sweep_config(model={"activation": "gelu"}).model.in_scale == 3.0
    assert sweep_config().model.in_scale == 60.0          # the default class is the sine class
    folder = Path(__file__).resolve().parents[1] / "reports/jackson/default-sin"
    if folder.is_dir():                 # its command gave --in-scale 60 itself: the same resolved model either way
        assert json.loads((folder / "config.json").read_text())["model"]["in_scale"] == SINE_IN_SCALE
