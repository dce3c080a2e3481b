"""Time is priced before it is paid: each training command estimates the compute its request needs (its steps x the
FLOPs of a step, jackson.threads.step_flops) at the fastest rate measured on the lab's machine (jackson.budget.
PEAK_FLOPS), a floor, and refuses past `--max-hours H`, else `$JACKSON_MAX_HOURS`, else 48 h, in one line naming
the estimate, the rate and the limit, before a target is built or a run folder opened.  The step counts are checked
against the models' own `step_work` (built here, tiny), and the card command passes the default limit."""
from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import pytest

from conftest import one_line_exit
from jackson import budget
from jackson.config import UsageError

HUGE = str(10 ** 12)       # steps no machine trains in 48 h, at any size of these commands

STEPS = {"jackson-sweep": [], "cot-dp sweep": [], "rnn-compare": [],   # prog -> its argv before the options
         "jackson-tasks": ["nearest-point"]}
T = "tests/test_time_budget.py::"
FAULT_CASES = [
    {"id": f"{prog.replace(' ', '-')}-steps-1e12", "class": "bounded",
     "command": " ".join([prog, *args, "--quick", "--steps", HUGE]),
     "expect": "exit 2, one line: needs at least <time> of compute (<count>: <TFLOP> at 180 GFLOP/s, the rate it "
               "assumes), more than the time limit of 48 h (the default); --max-hours H or JACKSON_MAX_HOURS=H; "
               "no run folder",
     "test": T + "test_a_request_past_the_time_limit_is_one_line_and_no_run_folder"}
    for prog, args in STEPS.items()] + [
    {"id": "cot-dp-train-steps-1e12", "class": "bounded",
     "command": f"cot-dp train --data d --steps {HUGE}",
     "expect": "exit 2, one line naming the estimate, the rate and the limit, after the data is read and before the "
               "run folder is opened",
     "test": T + "test_cot_dp_train_prices_its_time_before_the_run_folder"},
    {"id": "max-hours-env-and-option", "class": "bounded",
     "command": "JACKSON_MAX_HOURS=0.01 jackson-sweep --quick --steps 1000000   # or --max-hours 10s, 'soon'",
     "expect": "the limit is the setting's (named in the line); an unreadable one is one line; a larger one passes",
     "test": T + "test_max_hours_and_its_environment_setting_set_the_limit"},
    {"id": "resumed-grid-priced-by-cells-left", "class": "bounded",
     "command": "jackson-sweep --alpha 0.55,1.0,1.5 --rank 2,6,inf --max-hours 1   # rerun of a grid most of whose cells "
                "are finished (also jackson-tasks, rnn-compare, cot-dp sweep)",
     "expect": "priced by the cells it has left, the line counting them ('1 cell of 27 left'); a grid with every cell "
               "finished passes any limit and only rebuilds its tables",
     "test": T + "test_a_resumed_run_is_priced_by_the_cells_it_has_left"},
    {"id": "cot-dp-full-preset-on-cpu", "class": "bounded",
     "command": "cot-dp sweep --full --task arithmetic   # the paper's 100 epochs of 1M examples, on this CPU",
     "expect": "exit 2, one line: needs at least years of compute, more than 48 h; --estimate and a CUDA device are "
               "not priced for time",
     "test": T + "test_the_full_cot_preset_on_a_cpu_is_refused_but_estimate_is_not"},
]


@pytest.fixture(autouse=True)
def default_limits(monkeypatch):
    monkeypatch.delenv(budget.HOURS_ENV, raising=False)
    monkeypatch.delenv(budget.ENV, raising=False)
    monkeypatch.setattr(budget, "HOURS_GIVEN", None)


def test_the_sweep_step_count_is_the_banks_own():
    """cost.step_work from the config alone equals the bank's own step_work (jackson.models, given.py), built."""
    from jackson.models import TransformerBank
    from jackson.rate_sweep import cost
    from jackson.rate_sweep.config import sweep_config
    from jackson.rate_sweep.given import GivenFeatureBank
    for cfg in (sweep_config(), sweep_config(quick=True, restarts=2),
                sweep_config(quick=True, model={"pos": "learned", "d_pos": 4, "tau_max": 16, "depth": 4})):
        members = [m for m in cfg.m_h for _ in range(cfg.restarts)]
        bank = TransformerBank(cfg.model, members, list(range(len(members))))
        assert cost.step_work(cfg, cfg.model.width) == pytest.approx(
            bank.step_work(min(cfg.fit.batch_size, cfg.n_train), cfg.tau), rel=1e-12)
        assert sum(cost.member_params(cfg.model, m, cfg.model.width) for m in members) == \
            sum(p.numel() for p in bank.parameters())
    cfg = sweep_config(quick=True, model={"features": "given", "features_k": 8}, construction="trace-free")
    phi, psi = cfg.families()
    members = [m for m in cfg.m_h for _ in range(cfg.restarts)]
    bank = GivenFeatureBank(cfg.model, members, list(range(len(members))), phi=phi, psi=psi)
    assert cost.step_work(cfg, cfg.model.width) == pytest.approx(bank.step_work(min(cfg.fit.batch_size, cfg.n_train),
                                                                                cfg.tau), rel=1e-12)


def test_the_card_command_passes_and_its_floor_is_below_its_measured_time():
    """`jackson-sweep --alpha 1.5 --rank inf`: 1 cell x 6,000 steps of 4.33 GFLOP (the figure reports/benchmarks.md
    gives for the card's bank) -- priced under the default limit, and the floor below the 458 s its fit took there."""
    from jackson.rate_sweep import cost
    from jackson.rate_sweep.config import sweep_config
    cfg = sweep_config(alpha=(1.5,), rank=(math.inf,))
    flops, how = cost.sweep_flops(cfg)
    assert how == "1 cell x 6,000 steps of a bank of 16 members, up to 4.33 GFLOP a step"
    seconds = budget.check_time("the card", flops, how)
    assert 0 < seconds < 458
    cost.check(cfg)                                                      # memory and time: nothing refused


def test_tasks_compare_and_cot_floors_are_below_the_models_own_counts():
    """The floors of jackson-tasks, rnn-compare (budget.transformer_step_flops) and cot-dp
    (settings.step_flops_floor) never exceed the built models' own step_work, and come close to it (within 10% at the default sizes)."""
    from cot_dp.model import CotTransformer
    from cot_dp.settings import ArchConfig, ModelConfig as CotModel, TrainConfig, step_flops_floor
    from cot_dp.train import step_work
    from jackson.hparams import ModelConfig
    from jackson.models import TransformerBank
    for m, m_h, close in ((ModelConfig(), 32, 0.9), (ModelConfig(width=16, depth=2, n=8, d_v=4), 3, 0.5)):
        bank = TransformerBank(m, [m_h] * 3, [0, 1, 2])       # tiny: W_Q, W_K, W_V (left out) weigh more
        own = bank.step_work(64, 24)
        floor = budget.transformer_step_flops(3, 64, 24, m.width, m.depth, m.f_in, m.n, m.d_v, m_h + m.d_v)
        assert close * own <= floor <= own
    train = TrainConfig(batch_size=8)
    for kind in ("standard", "sparse", "linear"):
        model = CotModel(model=kind, d_model=32, arch=ArchConfig(n_layers=2))
        built = CotTransformer(model, 20, 40, 0)
        own, floor = step_work(built, train.batch_size, 40), step_flops_floor(model, train, 40, 20)
        assert floor <= own and (kind != "standard" or floor >= 0.8 * own), (kind, floor, own)


def _mains():
    from cot_dp.cli import main as cot_main
    from jackson.app_b.cli import tasks_main
    from jackson.rate_sweep.cli import sweep_main
    from rnn_compare.cli import compare_main
    return {"jackson-sweep": sweep_main, "cot-dp sweep": lambda argv: cot_main(["sweep", *argv]),
            "rnn-compare": compare_main, "jackson-tasks": tasks_main}


@pytest.mark.parametrize("prog", list(STEPS))
def test_a_request_past_the_time_limit_is_one_line_and_no_run_folder(prog, tmp_path, capsys):
    argv = [*STEPS[prog], "--quick", "--steps", HUGE, "--out", str(tmp_path / "o")]
    line = one_line_exit(_mains()[prog], argv, capsys)
    assert "needs at least " in line and " of compute (" in line and "at 180 GFLOP/s" in line, line
    assert "more than the time limit of 48 h (the default)" in line and "--max-hours H or JACKSON_MAX_HOURS=H" in line
    assert "Traceback" not in line and not (tmp_path / "o").exists()


def test_cot_dp_train_prices_its_time_before_the_run_folder(tmp_path, capsys):
    from cot_dp.cli import main
    assert main(["data", "--task", "arithmetic", "--size", "2", "--n-train", "32", "--n-test", "8",
                 "--out", str(tmp_path / "d")]) == 0
    capsys.readouterr()
    argv = ["train", "--data", str(tmp_path / "d"), "--out", str(tmp_path / "o")]
    line = one_line_exit(main, [*argv, "--steps", HUGE], capsys)
    assert line.startswith("cot-dp train: error: this training run needs at least ") and f"({int(HUGE):,} steps: " in line
    assert "more than the time limit of 48 h (the default)" in line and not (tmp_path / "o").exists()
    line = one_line_exit(main, [*argv, "--steps", "100000", "--max-hours", "1s"], capsys)
    assert "more than the time limit of 1 s (--max-hours)" in line and not (tmp_path / "o").exists()


def test_max_hours_and_its_environment_setting_set_the_limit(tmp_path, capsys, monkeypatch):
    from jackson.rate_sweep import cost
    from jackson.rate_sweep.cli import sweep_main
    from jackson.rate_sweep.config import sweep_config
    out = ["--out", str(tmp_path / "o")]
    monkeypatch.setenv(budget.HOURS_ENV, "0.01")
    line = one_line_exit(sweep_main, ["--quick", "--steps", "1000000", *out], capsys)
    assert "more than the time limit of 36 s ($JACKSON_MAX_HOURS)" in line
    line = one_line_exit(sweep_main, ["--quick", "--steps", "1000000", "--max-hours", "10s", *out], capsys)
    assert "more than the time limit of 10 s (--max-hours)" in line                # the option wins
    line = one_line_exit(sweep_main, ["--quick", "--max-hours", "soon", *out], capsys)
    assert line.endswith("--max-hours: cannot read 'soon' as a time (give hours, or a number with s, m, h or d, e.g. 72)")
    monkeypatch.setenv(budget.HOURS_ENV, "0")
    line = one_line_exit(sweep_main, ["--quick", *out], capsys)
    assert "$JACKSON_MAX_HOURS: a time limit must be above 0" in line
    assert not (tmp_path / "o").exists()
    monkeypatch.delenv(budget.HOURS_ENV)
    cfg = sweep_config(quick=True, fit={"steps": 10 ** 11})                  # 1,700 h at the peak rate
    with pytest.raises(budget.BudgetError, match="more than the time limit of 48 h"):
        cost.check(cfg)
    monkeypatch.setattr(budget, "HOURS_GIVEN", 1e4)                          # someone with the time
    cost.check(cfg)
    assert budget.parse_hours("90m") == 1.5 and budget.parse_hours("3d") == 72 and budget.parse_hours("2.5") == 2.5
    for bad in ("", "-1", "1e400", "2 weeks", "nan"):
        with pytest.raises(UsageError):
            budget.parse_hours(bad)


def test_the_full_cot_preset_on_a_cpu_is_refused_but_estimate_is_not(monkeypatch):
    from cot_dp.grid import PRESETS, SweepConfig, check_memory
    monkeypatch.setenv(budget.ENV, "1T")                                     # its memory is priced elsewhere
    full = dataclasses.replace(SweepConfig(task="arithmetic"), **PRESETS["full"], full=True)
    with pytest.raises(budget.BudgetError, match=r"this sweep needs at least [0-9.]+ years of compute \(60 cells x "
                                                 r"195,313 steps: .* more than the time limit of 48 h"):
        check_memory(full)
    check_memory(dataclasses.replace(full, estimate=True))                   # times a few steps, trains nothing
    check_memory(SweepConfig())                                              # the cpu preset, the default


def RELIABILITY_SECTION() -> tuple[str, str]:
    """The section of reports/RELIABILITY.md for the time each training command prices: read from the code."""
    rate = f"{budget.PEAK_FLOPS / 1e9:g} GFLOP/s"
    rows = [
        ("every command below", f"the compute its request needs, a floor: its steps x the FLOPs of a step "
         f"(`jackson.threads.step_flops`) at {rate}, {budget.PEAK_SOURCE}; refused past the limit: `--max-hours H`, "
         f"else `${budget.HOURS_ENV}`, else {budget.DEFAULT_HOURS:g} h"),
        ("jackson-sweep", "cells (widths x targets x seeds) x `--steps` x the bank's own step count (len(m_h) x "
         "restarts members), from the config alone; not on a CUDA device (no rate measured there)"),
        ("cot-dp sweep", "cells (tasks x sizes x models x D x seeds) x the steps (or epochs x n_train / batch) x a floor "
         "on a step (12 D^2 a layer and the embedding on every token; the standard model's L^2 attention); not with "
         "--estimate or on a CUDA device"),
        ("rnn-compare", "targets x (the Transformer's steps x its bank's step + the RNN's steps x hidden^2 on every "
         "token), the seeds as members"),
        ("cot-dp train", "the steps (or epochs x the data's examples / batch) x the floor of a step, as cot-dp sweep; "
         "priced once the data is read, before the run folder is opened"),
        ("jackson-tasks", "seeds x `--steps` x one model's step (its MLPs' weights and its attention over token pairs)"),
        ("the rules of jackson-report", f"a plugin rule returns within {_rule_deadline():g} s on a folder "
         "(`jackson.verdict.RULE_DEADLINE_S`), else its claim is failed in one line"),
    ]
    text = ["What each command's time costs, priced before it runs:", "", "| command | priced |", "|---|---|"]
    text += [f"| {c} | {w} |" for c, w in rows]
    return ("Time priced before it is paid: jackson-sweep, cot-dp sweep and train, rnn-compare, jackson-tasks",
            "\n".join(text))


def _rule_deadline() -> float:
    from jackson.verdict import RULE_DEADLINE_S
    return RULE_DEADLINE_S


def _four_runners(tmp_path):
    """Each runner's request of 10^12 steps (cot-dp: the paper's full preset), written to its own folder under
    tmp_path: (name, its cells, the pricing its validation runs)."""
    from cot_dp.grid import PRESETS, SweepConfig, check_memory
    from jackson.app_b import config as tasks
    from jackson.app_b.cell import cells as task_cells
    from jackson.hparams import FitConfig
    from jackson.rate_sweep import cost
    from jackson.rate_sweep.config import sweep_config
    from rnn_compare import config as compare
    huge = 10 ** 12
    rate = sweep_config(quick=True, seeds=(0, 1), fit={"steps": huge}, out=str(tmp_path / "rate"))
    task = dataclasses.replace(tasks.NearestPointRun(**tasks.QUICK), out=str(tmp_path / "task"),
                               fit=dataclasses.replace(tasks.QUICK["fit"], steps=huge),
                               train=dataclasses.replace(tasks.QUICK["train"], seeds=(0, 1)))
    comp = compare.CompareConfig(**{**compare.QUICK, "out": str(tmp_path / "compare"),
                                    "fit": FitConfig(steps=huge, batch_size=32), "rnn_fit": FitConfig(steps=huge, batch_size=32)})
    cot = dataclasses.replace(SweepConfig(task="arithmetic"), **PRESETS["full"], full=True, out=str(tmp_path / "cot"))
    return [("jackson-sweep", rate.cells(), rate.resolved_out(), lambda: cost.check(rate)),
            ("jackson-tasks", task_cells(task), tasks.resolved_out(task), lambda: tasks.check_cost(task)),
            ("rnn-compare", comp.cells(), comp.out, lambda: compare.check_cost(comp)),
            ("cot-dp sweep", cot.cells(), cot.resolved_out(), lambda: check_memory(cot))]


def test_a_resumed_run_is_priced_by_the_cells_it_has_left(tmp_path, monkeypatch):
    """A grid run over several sessions resumes: its finished cells (cells/<key>, what run_cells skips) cost nothing.
    Refused while cells are left, the line counts them ('1 cell of N left'); once every cell is finished the same request
    passes the limit, whatever the grid would cost from scratch."""
    from pathlib import Path
    monkeypatch.setenv(budget.ENV, "1T")                                 # memory is not what this prices
    for name, cells, out, price in _four_runners(tmp_path):
        assert len(cells) >= 2, name
        with pytest.raises(budget.BudgetError) as fresh:
            price()
        assert " left" not in str(fresh.value), (name, str(fresh.value))                # a fresh run: every cell
        for c in cells[:-1]:                     # the last left (rnn-compare's: a Transformer's, the costlier)
            (Path(out) / "cells" / c.key()).mkdir(parents=True)
        with pytest.raises(budget.BudgetError) as one:
            price()
        assert re.search(r"\b1 cell of \d+ left", str(one.value)), (name, str(one.value))
        (Path(out) / "cells" / cells[-1].key()).mkdir()
        price()                                                          # nothing left to train: nothing refused


def test_a_fresh_grid_is_refused_from_its_config_alone(tmp_path, monkeypatch):
    """Pricing a fresh grid builds no cell: building and keying 10^4 cells takes seconds, a refusal should not. The cells
    are built only for a resumed run (a cells/ folder) whose whole grid is over the limit, to price what it has left."""
    from cot_dp.grid import SweepConfig as CotConfig
    from jackson.app_b import cell as task_cell
    from jackson.rate_sweep.config import SweepConfig as RateConfig
    from rnn_compare.config import CompareConfig
    monkeypatch.setenv(budget.ENV, "1T")
    runners = _four_runners(tmp_path)              # each runner's cells built here, before the builders are barred

    def barred(*a, **k):
        raise AssertionError("a fresh grid's time check built its cells")
    for owner, name in ((RateConfig, "cells"), (CotConfig, "cells"), (CompareConfig, "cells"), (task_cell, "cells")):
        monkeypatch.setattr(owner, name, barred)
    for name, cells, out, price in runners:
        with pytest.raises(budget.BudgetError) as fresh:
            price()
        assert " left" not in str(fresh.value), name
    monkeypatch.undo()
    monkeypatch.setenv(budget.ENV, "1T")
    for name, cells, out, price in runners:        # a resumed run: the cells are built, what is left is priced
        (Path(out) / "cells" / cells[0].key()).mkdir(parents=True)
        with pytest.raises(budget.BudgetError) as left:
            price()
        assert re.search(r"\b\d+ cells? of \d+ left", str(left.value)), (name, str(left.value))
