"""jackson-sweep's default FFN class is the sine class (ModelConfig's own default), chosen by measurement
(reports/jackson/FITTING.md, "The default FFN class"); GELU and ReLU are one option away; and every folder made
before the switch keeps its meaning: its recorded command resolves to the model its config.json holds and to the
cell keys its cells/ folder holds (so a rerun trains nothing), a bare rerun into a folder of another class is
refused in one line, and an old config.json read by --config keeps its GELU model."""
from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from jackson.hparams import ModelConfig
from jackson.rate_sweep.config import CLASSLESS_MODEL, SINE_IN_SCALE, SweepConfig, presets, sweep_config

ROOT = Path(__file__).resolve().parents[1]
JACKSON = ROOT / "reports" / "jackson"


def resolve(command: str) -> SweepConfig:
    """The SweepConfig a recorded `jackson-sweep ...` command line resolves to today, built as the command builds it
    (jackson.command.cli_run), without running anything.  --threads is not part of the config and is dropped, so
    the test process keeps its own thread count."""
    from jackson.command import cli_run
    argv = shlex.split(command)[1:]
    if "--threads" in argv:
        i = argv.index("--threads")
        del argv[i:i + 2]
    cfg, _ = cli_run("jackson-sweep", SweepConfig, "", presets, lambda c, cmd: None, argv)
    return cfg


def sweep_folders() -> list[Path]:
    out = []
    for d in sorted(JACKSON.iterdir()) if JACKSON.is_dir() else []:
        cmd = d / "command.txt"
        if cmd.is_file() and cmd.read_text().startswith("jackson-sweep ") and (d / "summary.json").is_file():
            out.append(d)
    return out


def test_the_default_class_is_sine_and_the_others_are_one_option_away():
    cfg = sweep_config()
    assert (cfg.model.activation, cfg.model.in_scale) == ("sin", SINE_IN_SCALE) == (ModelConfig().activation, 60.0)
    assert SweepConfig().model == ModelConfig()                     # Python and the command line agree
    gelu = sweep_config(model={"activation": "gelu"})
    assert (gelu.model.activation, gelu.model.in_scale) == ("gelu", 3.0) == (CLASSLESS_MODEL.activation, CLASSLESS_MODEL.in_scale)
    assert ModelConfig(activation="gelu").in_scale == ModelConfig(activation="relu").in_scale == 3.0   # each class its own
    assert sweep_config(model={"activation": "relu"}).model.in_scale == 3.0
    assert sweep_config(model={"activation": "gelu", "in_scale": 5.0}).model.in_scale == 5.0      # a given scale wins
    assert sweep_config(model={"in_scale": 30.0}).model == ModelConfig(activation="sin", in_scale=30.0)
    quick = sweep_config(quick=True)
    assert (quick.model.activation, quick.model.in_scale, quick.model.width) == ("sin", 60.0, 16)
    # the given-features model has no FFN: its model keeps ModelConfig's fields, so its cells keep their keys
    given = sweep_config(model={"features": "given"})
    assert dataclass_fields_but(given.model, "features", "features_k") == dataclass_fields_but(CLASSLESS_MODEL, "features", "features_k")
    # folders: the default class has none of its own suffix; another class, or the attention term alone, does
    assert str(cfg.resolved_out()) == "reports/jackson/sweep-a1.5-rinf"
    assert str(gelu.resolved_out()) == "reports/jackson/sweep-a1.5-rinf-gelu"
    assert str(given.resolved_out()) == "reports/jackson/sweep-a1.5-rinf-given"


def dataclass_fields_but(obj, *skip) -> dict:
    import dataclasses
    return {k: v for k, v in dataclasses.asdict(obj).items() if k not in skip}


def test_the_sine_default_fits_the_same_cells_as_the_committed_sine_card_run():
    """The bare card command and default-sin's explicit `--activation sin --in-scale 60` give the same cell keys."""
    bare = resolve("jackson-sweep --alpha 1.5 --rank inf --seeds 0,1,2")
    explicit = resolve("jackson-sweep --alpha 1.5 --rank inf --activation sin --in-scale 60 --seeds 0,1,2")
    assert [c.key() for c in bare.cells()] == [c.key() for c in explicit.cells()]
    gelu = resolve("jackson-sweep --alpha 1.5 --rank inf --activation gelu --seeds 0,1,2")
    assert not {c.key() for c in gelu.cells()} & {c.key() for c in bare.cells()}


@pytest.mark.parametrize("folder", sweep_folders(), ids=lambda p: p.name)
def test_every_committed_sweep_command_resolves_to_its_recorded_model_and_cells(folder):
    """Old folders keep their meaning: the command each folder records resolves today to the model its config.json
    holds (a config.json older than --activation held GELU) and to the keys of the cells it holds, up to the init
    scheme's tag (old-scheme folders already could not be rerun without training)."""
    cmd = (folder / "command.txt").read_text().splitlines()[0]
    recorded = json.loads((folder / "config.json").read_text())["model"]
    cfg = resolve(cmd)
    k = recorded.get("features_k", ModelConfig.RECORD_DEFAULTS["features_k"])
    if cfg.model.features == "given" and "--features-k" not in cmd and cfg.resolved_model().features_k != k:
        # a default that moved since the folder was made (--features given: 16, now uncapped): the command with the
        # old value pinned is the folder's, and its summary says its reference is capped
        assert k == ModelConfig.RECORD_DEFAULTS["features_k"], cmd
        cmd += f" --features-k {k}"
        cfg = resolve(cmd)
    assert cfg.model.activation == recorded.get("activation", CLASSLESS_MODEL.activation), cmd
    assert cfg.model.in_scale == recorded["in_scale"], cmd
    assert cfg.model.features == recorded.get("features", "learned"), cmd
    held = {p.name.replace("_v2_", "_") for p in (folder / "cells").iterdir()} if (folder / "cells").is_dir() else set()
    want = {c.key().replace("_v2_", "_") for c in cfg.cells()}
    assert want <= held, f"{folder.name}: rerunning `{cmd}` would train {sorted(want - held)[:3]}"


def test_an_old_config_file_keeps_its_gelu_model(tmp_path):
    """--config FILE of a config.json written before --activation existed (no activation key) reads as GELU at its own
    scale, not as today's default class."""
    from jackson.config import read_config
    old = {"alpha": [1.5], "rank": ["inf"], "model": {"n": 32, "width": 128, "in_scale": 3.0}}
    p = tmp_path / "config.json"
    p.write_text(json.dumps(old))
    cfg = read_config(SweepConfig, str(p))
    assert (cfg.model.activation, cfg.model.in_scale) == ("gelu", 3.0)
    new = dict(old, model={"n": 32, "width": 128, "in_scale": 60.0, "activation": "sin"})
    p.write_text(json.dumps(new))
    assert read_config(SweepConfig, str(p)).model.activation == "sin"


def test_a_bare_rerun_into_a_folder_of_another_class_is_refused(tmp_path, capsys):
    """A folder made with --activation gelu, rerun without it: one line naming the class it holds and the option that
    reruns it, exit 2, nothing written; --force adds the sine cells beside the GELU ones (which stay)."""
    from jackson.rate_sweep.cli import sweep_main
    out = tmp_path / "run"
    base = ["--quick", "--m-h", "1,2", "--steps", "5", "--out", str(out)]
    assert sweep_main(base + ["--activation", "gelu"]) == 0
    cells = sorted(p.name for p in (out / "cells").iterdir())
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir() if p.is_file()}
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        sweep_main(base)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "gelu FFN class" in err[0] and "--activation gelu" in err[0], err
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir() if p.is_file()} == before
    assert sweep_main(base + ["--force"]) == 0
    now = sorted(p.name for p in (out / "cells").iterdir())
    assert set(cells) < set(now) and len(now) == 2 * len(cells)
    assert json.loads((out / "config.json").read_text())["model"]["activation"] == "sin"


def test_terms_measures_the_attention_term_with_the_cells_a_given_features_run_makes(tmp_path):
    """--terms's attention-term run of a sine card and `jackson-sweep --features given` of the same target fit the same
    cells (the given-features model has no FFN class), so each finds the other's by key."""
    from jackson.rate_sweep.term_runs import given_config
    sub = given_config(resolve("jackson-sweep --alpha 1.5 --rank inf --seeds 0,1"), tmp_path / "x-given")
    cli = resolve("jackson-sweep --features given --alpha 1.5 --rank inf --seeds 0,1")
    assert [c.key() for c in sub.cells()] == [c.key() for c in cli.cells()]


def _summary_terms(folder: Path) -> list[dict]:
    s = json.loads((folder / "summary.json").read_text())
    return [t["terms"] for t in s.get("targets", []) if isinstance(t.get("terms"), dict)]


@pytest.mark.parametrize("folder", [f for f in sweep_folders() if _summary_terms(f)], ids=lambda p: p.name)
def test_a_rerun_of_a_committed_folder_finds_the_references_its_summary_names(folder):
    """Its command, resolved today and looked up by key as run_sweep looks them up, names the same e_FF and e_attn
    folders its summary.json reads: a field added to the fit or the model since (check_steps) must not make a committed
    reference unfindable (a rerun of the card would silently lose its e_FF)."""
    from jackson.rate_sweep.config import GIVEN_RECIPE
    from jackson.rate_sweep.references import find_attn_run, find_ff_run
    from jackson.rate_sweep.axes import rank_str
    cmd = (folder / "command.txt").read_text().splitlines()[0]
    cfg = resolve(cmd)
    resolved = json.loads(json.dumps(cfg.as_dict(), default=str))
    targets = [(a, rank_str(r)) for a, r, _ in cfg.targets()]
    for terms in _summary_terms(folder):
        if terms.get("folder") and not cfg.ff_from:
            got = find_ff_run({k: v for k, v in resolved.items() if k != "m_h"}, targets, JACKSON)
            assert Path(got).name == Path(terms["folder"]).name, (cmd, got)
        if terms.get("attn_folder"):
            got = find_attn_run(resolved, targets, JACKSON, recipe=GIVEN_RECIPE)
            assert Path(got).name == Path(terms["attn_folder"]).name, (cmd, got)
