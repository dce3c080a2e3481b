"""jackson-sweep refuses fit settings that can only diverge before it trains; jackson-report refuses a
report.json whose entries are not what the report reads, in one line naming the file."""
from __future__ import annotations

import json

import pytest

from jackson.lab_report.page import main as report_main
from jackson.rate_sweep.cli import sweep_main
from conftest import one_line_exit as _exit2




LR = "jackson-sweep: error: --lr: Adam's peak learning rate must be in 0 < lr <= 1"


@pytest.mark.parametrize("value", ["1e308", "1000", "1.5", "0", "-0.1"])
def test_sweep_refuses_a_learning_rate_outside_0_1_before_training(value, tmp_path, capsys):
    line = _exit2(sweep_main, ["--quick", "--threads", "1", "--lr", value, "--out", str(tmp_path / "o")], capsys)
    assert line.startswith(LR) and line.endswith(f"got {float(value):g}"), line
    assert not (tmp_path / "o").exists()


def test_sweep_refuses_the_same_learning_rate_from_a_config_file(tmp_path, capsys):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"fit": {"lr": 1000}}))
    line = _exit2(sweep_main, ["--config", str(cfg), "--threads", "1", "--out", str(tmp_path / "o")], capsys)
    assert line.startswith(LR) and line.endswith("got 1000"), line
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("args, message", [
    (["--explode", "0.5"], "--explode: must be > 1"),
    (["--patience", "0"], "--patience: must be >= 1, got 0"),
    (["--warmup", "-1"], "--warmup: must be >= 0, got -1"),
    (["--min-improve", "1"], "--min-improve: must be in [0, 1), got 1"),
    (["--converged-lr-frac", "2"], "--converged-lr-frac: must be in [0, 1], got 2"),
    (["--cycles", "0"], "--cycles: at least one cosine cycle, got 0"),
    (["--cycles", "2", "--schedule", "plateau"], "--cycles: repeats the cosine schedule"),
    (["--cycles", "2", "--check-steps", "5"], "--cycles: repeats the cosine schedule"),
])
def test_sweep_refuses_other_fit_settings_that_cannot_train(args, message, tmp_path, capsys):
    line = _exit2(sweep_main, ["--quick", "--threads", "1", *args, "--out", str(tmp_path / "o")], capsys)
    assert message in line, line
    assert not (tmp_path / "o").exists()


def test_sweep_still_accepts_a_learning_rate_of_one():
    from jackson.config import from_dict
    from jackson.rate_sweep.config import QUICK, SweepConfig, validate
    import dataclasses
    cfg = from_dict(SweepConfig, {"fit": {"lr": 1.0}}, dataclasses.replace(SweepConfig(), **QUICK))
    validate(dataclasses.replace(cfg, out="/tmp/jackson-hardening-never-written"))


# ---- jackson-report: report.json entries of the wrong shape

def _root(tmp_path, report: dict):
    root = tmp_path / "reports"
    (root / "tasks" / "x").mkdir(parents=True)
    (root / "tasks" / "x" / "report.json").write_text(json.dumps(report))
    return root


@pytest.mark.parametrize("bad, says", [
    ({"paper": [1, 2]}, "paper row 1 must be an object (with a 'quantity', 'paper' and 'measured'), got 1"),
    ({"paper": "x"}, "'paper' must be a list of rows (objects with a 'quantity', 'paper' and 'measured'), got \"x\""),
    ({"paper": [{"paper": 1.0, "measured": 2.0}]}, "paper row 1: 'quantity' must be a string, got null"),
    ({"figures": "x"}, "'figures' must be a list of objects (each a 'file' beside report.json and its 'caption'), "
                       "got \"x\""),
    ({"figures": [3]}, "figure 1 must be an object with a 'file' (a path beside report.json), got 3"),
    ({"figures": [{"file": "a.png", "caption": 7}]}, "figure 1: 'caption' must be a string, got 7"),
    ({"title": ["t"]}, "'title' must be a string, got [\"t\"]"),
    ({"text": {"a": 1}}, "'text' must be a string, got {\"a\": 1}"),
])
def test_report_refuses_a_report_json_of_the_wrong_shape(bad, says, tmp_path, capsys):
    root = _root(tmp_path, {"title": "a run", "section": "tasks", **bad})
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    line = _exit2(report_main, ["--root", str(root)], capsys)
    assert line == f"jackson-report: error: {root / 'tasks' / 'x' / 'report.json'}: {says}", line
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before     # nothing written


def test_report_refuses_a_report_json_that_is_not_utf8(tmp_path, capsys):
    root = _root(tmp_path, {})
    (root / "tasks" / "x" / "report.json").write_bytes(b'{"title": "\xff"}')
    line = _exit2(report_main, ["--root", str(root)], capsys)
    assert line.endswith("report.json: cannot read (not UTF-8 text)"), line


def test_a_target_whose_every_fit_diverged_ends_in_one_line_not_a_summary(tmp_path, monkeypatch, capsys):
    """Past the learning-rate bound (lifted here) every member diverges: the run says so in one line, exit 1,
    keeps results.csv and its cells, and writes no summary that would look like a finished run."""
    import jackson.rate_sweep.config as C
    from jackson.rate_sweep.cli import sweep_main
    monkeypatch.setattr(C, "MAX_LR", 100.0)
    with pytest.raises(SystemExit) as e:
        sweep_main(["--quick", "--threads", "1", "--lr", "3", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 1 and len(err) == 1
    assert "every fit of the target alpha=1.5 rank=inf diverged" in err[0] and "Traceback" not in err[0]
    assert (tmp_path / "run" / "results.csv").is_file() and not (tmp_path / "run" / "summary.json").exists()

@pytest.mark.parametrize("opt", ["--lr", "--rnn-lr"])
def test_rnn_compare_bounds_both_learning_rates_as_the_sweep_does(opt, tmp_path, capsys):
    from rnn_compare.cli import compare_main
    with pytest.raises(SystemExit) as e:
        compare_main([opt, "1e308", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and f"{opt}: Adam's peak learning rate must be in 0 < lr <= 1" in err[0]
    assert not (tmp_path / "r").exists()


# reports/RELIABILITY.md is generated from this list (tests/reliability.py); each case's test is named.
FAULT_CASES = [
    {"id": 'lr-out-of-range', "class": 'input', "command": 'jackson-sweep --quick --lr 1e308   # or 1000, 1.5, 0, -0.1', "expect": 'exit 2, one line: 0 < lr <= 1; nothing written',
     "test": "tests/test_hardening_jackson.py::test_sweep_refuses_a_learning_rate_outside_0_1_before_training"},
    {"id": 'lr-out-of-range-config', "class": 'input', "command": 'jackson-sweep --config c.json   # "fit": {"lr": 1e308}', "expect": 'exit 2, the same line as the option',
     "test": "tests/test_hardening_jackson.py::test_sweep_refuses_the_same_learning_rate_from_a_config_file"},
    {"id": 'fit-settings-that-cannot-train', "class": 'input', "command": 'jackson-sweep --quick --explode 1   # or --patience 0, --warmup -1, ...', "expect": 'exit 2, one line naming the option',
     "test": "tests/test_hardening_jackson.py::test_sweep_refuses_other_fit_settings_that_cannot_train"},
    {"id": 'report-json-wrong-shape', "class": 'input', "command": 'jackson-report   # a folder\'s report.json has "paper": [1, 2]', "expect": 'exit 2, one line naming the report.json and the row; nothing written',
     "test": "tests/test_hardening_jackson.py::test_report_refuses_a_report_json_of_the_wrong_shape"},
    {"id": 'report-json-not-utf8', "class": 'input', "command": 'jackson-report   # a report.json that is not UTF-8', "expect": 'exit 2, one line naming it',
     "test": "tests/test_hardening_jackson.py::test_report_refuses_a_report_json_that_is_not_utf8"},
    {"id": 'every-fit-diverged', "class": 'one-line', "command": 'jackson-sweep ...   # every member of a target diverges', "expect": "exit 1, one line 'failed: every fit ... diverged'; results.csv kept, no summary",
     "test": "tests/test_hardening_jackson.py::test_a_target_whose_every_fit_diverged_ends_in_one_line_not_a_summary"},
    {"id": "rnn-compare-lr-out-of-range", "class": "input", "command": "rnn-compare --lr 1e308   # or --rnn-lr",
     "expect": "exit 2, one line: 0 < lr <= 1; nothing written",
     "test": "tests/test_hardening_jackson.py::test_rnn_compare_bounds_both_learning_rates_as_the_sweep_does"},
]
