"""benchmarks/time_to_quality.py --train: each recipe is a jackson-sweep command the command line accepts, and
the time to quality is read off a loss curve as its definition says."""
import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import time_to_quality as ttq  # noqa: E402


@pytest.mark.parametrize("name", list(ttq.RECIPES))
def test_each_recipe_is_a_command_jackson_sweep_accepts(name):
    from jackson.command import command_parser
    from jackson.rate_sweep.config import SweepConfig
    cmd = ttq.recipe_command(name, "runs/x")
    assert cmd[0] == "jackson-sweep" and cmd[-1] == f"runs/x/{name}"
    given = vars(command_parser(SweepConfig, "jackson-sweep", status=True).parse_args(cmd[1:]))
    for k, v in ttq.RECIPES[name][0].items():
        assert given[f"fit.{k}"] == v, (k, given)


def test_steps_to_is_the_first_step_from_which_the_curve_stays_at_or_below_the_goal():
    c = pd.DataFrame({"step": [1, 2, 3, 4, 5], "train_mse": [9.0, 1.0, 3.0, 1.0, 0.5]})
    assert ttq.steps_to(c, 2.0) == 4            # it dips at step 2 but climbs back at 3
    assert ttq.steps_to(c, 10.0) == 1
    assert ttq.steps_to(c, 0.4) is None         # its last point is above the goal: never
