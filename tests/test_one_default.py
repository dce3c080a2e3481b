"""One default per setting: jackson-sweep's nested configs (the model, the fit) resolve the same from Python's
dataclass form (`sweep_config(model=ModelConfig(width=32))`), Python's dict form (`model={"width": 32}`) and the
command line (`--width 32`), field by field, each field set on its own to a value other than its default; and every
other field keeps the default the bare command has.  The App. B tasks and the RNN comparison pin their own class
(GELU, as their committed runs did), so moving ModelConfig's default did not move them."""
from __future__ import annotations

import dataclasses

import pytest

from jackson.command import cli_run
from jackson.config import options
from jackson.hparams import IN_SCALES, FitConfig, ModelConfig
from jackson.rate_sweep.config import SweepConfig, presets, sweep_config

# A valid value other than the default for each field (the test fails on a field added without one here, so a new
# setting is checked too).
OTHER = {
    "model": {"d_in": 2, "n": 16, "d_v": 8, "width": 32, "depth": 2, "qk_init": 2.0, "in_scale": 5.0,
              "activation": "gelu", "pos": "learned", "d_pos": 8, "tau_max": 32, "attention": "linear",
              "features": "given", "given_qk_sd": 0.5, "features_k": 32},
    "fit": {"steps": 100, "batch_size": 16, "lr": 1e-2, "warmup": 10, "schedule": "plateau", "eval_every": 50,
            "patience": 3, "min_improve": 0.1, "lr_decay": 0.5, "min_lr": 1e-6, "eval_size": 256,
            "converged_lr_frac": 0.2, "explode": 20.0, "guard": 10.0, "cycles": 2, "check_steps": 100},
}
CLASSES = {"model": ModelConfig, "fit": FitConfig}


def from_cli(argv: list[str]) -> SweepConfig:
    cfg, _ = cli_run("jackson-sweep", SweepConfig, "", presets, lambda c, cmd: None, argv)
    return cfg


def cli_words(group: str, name: str, value) -> list[str]:
    opt = next(o for dotted, o, _ in options(SweepConfig) if dotted == f"{group}.{name}")
    return [opt, str(value)]


def every_field():
    for group, cls in CLASSES.items():
        for f in dataclasses.fields(cls):
            yield group, f.name


def test_every_field_has_a_value_to_try():
    for group, cls in CLASSES.items():
        assert set(OTHER[group]) == {f.name for f in dataclasses.fields(cls)}, group
        default = cls()
        for name, v in OTHER[group].items():
            assert getattr(default, name) != v, f"{group}.{name}: the value to try is the default"


def test_the_three_forms_of_the_bare_default_agree():
    assert sweep_config() == from_cli([]) == SweepConfig()
    assert SweepConfig().model == ModelConfig() and SweepConfig().fit == FitConfig()


@pytest.mark.parametrize("group,name", list(every_field()), ids=lambda x: x)
def test_one_field_given_three_ways_gives_one_config(group, name):
    v = OTHER[group].get(name)
    assert v is not None, f"{group}.{name}: give it a value to try in OTHER"
    as_object = sweep_config(**{group: CLASSES[group](**{name: v})})
    as_dict = sweep_config(**{group: {name: v}})
    as_cli = from_cli(cli_words(group, name, v))
    assert as_object == as_dict == as_cli, name
    # the field given has its value, every field the user did not name is what a bare command has -- except those a
    # preset derives from it (--features given takes the given-features recipe, an FFN class its own in-scale)
    got, bare = getattr(as_object, group), getattr(sweep_config(), group)
    assert getattr(got, name) == v
    derived = {("model", "activation"): {"in_scale"}, ("model", "features"): {"activation", "in_scale"}}
    for f in dataclasses.fields(got):
        if f.name != name and f.name not in derived.get((group, name), set()):
            assert getattr(got, f.name) == getattr(bare, f.name), (name, f.name)


def test_a_class_takes_its_own_first_layer_scale_in_every_form():
    for act, scale in IN_SCALES.items():
        assert ModelConfig(activation=act).in_scale == scale
        assert sweep_config(model=ModelConfig(activation=act)).model.in_scale == scale
        assert sweep_config(model={"activation": act}).model.in_scale == scale
        assert from_cli(["--activation", act]).model.in_scale == scale
    assert from_cli(["--activation", "gelu", "--in-scale", "7"]).model.in_scale == 7.0       # a given scale wins


def test_the_other_experiments_pin_their_own_class():
    """App. B and the RNN comparison fit GELU at scale 3 (their committed runs), whatever ModelConfig's default is."""
    from jackson.app_b.config import QUICK as APP_B_QUICK, RUNS
    from rnn_compare.config import QUICK as RNN_QUICK, CompareConfig
    for run in RUNS.values():
        assert (run().model.activation, run().model.in_scale) == ("gelu", 3.0), run.__name__
    assert (APP_B_QUICK["model"].activation, APP_B_QUICK["model"].in_scale) == ("gelu", 3.0)
    assert (CompareConfig().transformer.activation, CompareConfig().transformer.in_scale) == ("gelu", 3.0)
    assert RNN_QUICK["transformer"].activation == "gelu"


def test_given_features_default_to_an_uncapped_reference():
    """--features given without --features-k takes GIVEN_K_FACTOR x the largest m_h features, the target's rank when
    smaller (never below the largest m_h), in every form; a given value wins, 16 included; learned features keep the
    recorded 16 they do not use, so their cells keep their keys; --help gives the factor."""
    import subprocess
    import sys
    from jackson.hparams import GIVEN_K_FACTOR, given_features_k
    from jackson.rate_sweep.references import UNCAPPED
    assert GIVEN_K_FACTOR >= UNCAPPED                       # the default is an uncapped reference
    assert [given_features_k(16), given_features_k(16, 6.0), given_features_k(16, 40.0), given_features_k(3)] == \
        [16 * GIVEN_K_FACTOR, 16, 40, 3 * GIVEN_K_FACTOR]
    k = lambda cfg: cfg.resolved_model().features_k
    for cfg in (sweep_config(model={"features": "given"}), sweep_config(model=ModelConfig(features="given")),
                from_cli(["--features", "given"])):
        assert k(cfg) == GIVEN_K_FACTOR * 16 and cfg.as_dict()["model"]["features_k"] == GIVEN_K_FACTOR * 16
        assert all(c.model.features_k == GIVEN_K_FACTOR * 16 for c in cfg.cells())
    assert k(from_cli(["--features", "given", "--m-h", "1-8"])) == GIVEN_K_FACTOR * 8
    assert k(from_cli(["--features", "given", "--rank", "2,6"])) == 16           # rank 6 < 4 x 16: the largest m_h
    assert k(from_cli(["--features", "given", "--features-k", "16"])) == 16      # a given value wins
    assert k(sweep_config(model=ModelConfig(features="given", features_k=16))) == 16
    assert k(sweep_config()) == ModelConfig.RECORD_DEFAULTS["features_k"] == 16  # learned: unused, keys unchanged
    assert sweep_config().cells()[0].key() == "a1.5_rinf_s0_v2_fc6db1cae2"      # the committed card cell's key
    out = subprocess.run([sys.executable, "-m", "jackson.rate_sweep.cli", "--help"], capture_output=True, text=True).stdout
    assert f"(default: {GIVEN_K_FACTOR} x the largest m_h" in " ".join(out.split())


def test_help_groups_the_options_by_what_they_set():
    """--help lists the sweep's own options, then the model's, the fit's and the run's under their own headings, each
    option once."""
    import re
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "jackson.rate_sweep.cli", "--help"], capture_output=True, text=True).stdout
    heads = [line for line in out.splitlines() if re.fullmatch(r"[a-z].*:", line)]
    assert heads == ["options:", "model options (the Eq. (5) Transformer):", "fit options (the optimiser):",
                     "run options (shared by the lab's commands):"], heads
    body = out.split("\n\n", 2)[2]
    section = {h: body.split(h, 1)[1].split("\n\n", 1)[0] for h in heads}
    own = {h: re.findall(r"^  (--[a-z-]+)", section[h], re.M) for h in heads}
    assert "--width" in own[heads[1]] and "--steps" in own[heads[2]] and "--threads" in own[heads[3]]
    assert "--alpha" in own[heads[0]] and "--width" not in own[heads[0]]
    opts = re.findall(r"^  (--[a-z-]+)", body, re.M)
    assert len(opts) == len(set(opts)) >= 60


def _resolved(prog: str, cls, argv: list[str]):
    return cli_run(prog, cls, "", {}, lambda c, cmd: None, argv)[0]


@pytest.mark.parametrize("folder", ["rnn_compare/default", "rnn_compare/causal_mixing", "tasks/nearest-point",
                                    "tasks/selection-average", "tasks/weighted-average",
                                    "tasks/weighted-average-position-none"])
def test_the_other_experiments_committed_commands_find_their_cells(folder):
    """Moving ModelConfig's defaults moved no other experiment: each committed folder's own command resolves to the
    keys of the cells it holds, so a rerun trains nothing (a model with a field left unset would hash differently)."""
    import shlex
    from pathlib import Path
    from jackson.app_b.cell import cells as task_cells
    from jackson.app_b.config import RUNS
    d = Path(__file__).resolve().parents[1] / "reports" / folder
    argv = shlex.split((d / "command.txt").read_text().splitlines()[0])
    if "--threads" in argv:
        i = argv.index("--threads")
        del argv[i:i + 2]
    if argv[0] == "rnn-compare":
        from rnn_compare.config import CompareConfig
        keys = {c.key() for c in _resolved("rnn-compare", CompareConfig, argv[1:]).cells()}
    else:
        keys = {c.key() for c in task_cells(_resolved(f"jackson-tasks {argv[1]}", RUNS[argv[1]], argv[2:]))}
    held = {p.name for p in (d / "cells").iterdir()}
    assert keys and keys <= held, sorted(keys - held)[:3]
