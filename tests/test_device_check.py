"""jackson-device-check: the stated CPU/device tolerance of jackson-sweep, checked where no GPU is.

Here the 'device' is the CPU itself: a float32 device run must give the CPU float32 run's numbers
exactly (same code, same machine) and stay within the tolerance of the float64 reference, and a
bfloat16 run -- a precision loss of the kind TF32 or half precision would bring -- must fail it."""
from __future__ import annotations

import dataclasses

import pytest

from conftest import TINY_FIT, tiny_cell
from jackson.config import UsageError
from jackson.rate_sweep import device_check as dc


def tiny_cells() -> dict:
    base = tiny_cell(rank=4, fit=dataclasses.replace(TINY_FIT, steps=40, eval_every=8))
    return {"learned": base, "given": dataclasses.replace(base, model=dataclasses.replace(base.model, features="given"))}


def test_the_cpu_as_device_agrees_and_float32_roundoff_is_inside_the_tolerance():
    rows = dc.check("cpu", "float32", cells=tiny_cells(), progress=False)
    assert [r["features"] for r in rows] == ["learned", "given"]
    for r in rows:
        assert r["device_deviation"] == r["cpu_float32_deviation"]         # the same run twice: identical
        assert 0 < r["cpu_float32_deviation"] < dc.TOLERANCE               # float32 differs from float64, but little
        assert r["agrees"] and r["same_status"]


def test_a_lower_precision_device_run_is_caught():
    (r,) = dc.check("cpu", "bfloat16", modes=("learned",), cells=tiny_cells(), progress=False)
    assert r["device_deviation"] > 10 * dc.TOLERANCE and not r["agrees"]
    assert "DOES NOT agree" in dc.report_lines([r])[0]


def test_deviation_is_the_largest_relative_difference_of_curve_and_held_out():
    import numpy as np
    ref = {"curve": np.array([1.0, 2.0]), "held_out": np.array([4.0])}
    run = {"curve": np.array([1.0, 2.2]), "held_out": np.array([4.0 * (1 + 1e-3)])}
    assert dc.deviation(run, ref) == pytest.approx(0.1)
    with pytest.raises(UsageError, match="different checks"):
        dc.deviation({"curve": np.array([1.0]), "held_out": np.array([4.0])}, ref)


@pytest.mark.parametrize("argv, message", [
    (["--device", "tpu"], "--device: cannot read 'tpu'"),
    (["--device", "cuda:7"], "--device cuda:7: "),
    (["--features", "both"], "--features: choose learned and/or given"),
    (["--dtype", "float64"], "--dtype: choose float32, bfloat16, float16"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        dc.main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err
