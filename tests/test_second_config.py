"""A second config into an existing --out is refused in one line, unless --force: the folder's config.json, summary
and tables stay those of the first run.  The same options resume or re-summarize it; options that only say where or
how it runs, or what its summary is compared with (inputs.RUN_ONLY), are not a second config.  Every committed sweep
folder's own command passes the check (with a default that moved since pinned to the value it ran with)."""
from __future__ import annotations

import json

import pytest

from jackson.rate_sweep.cli import sweep_main
from jackson.rate_sweep.inputs import RUN_ONLY, check_same_config

STEPS = ["--quick", "--steps", "6", "--threads", "1"]


def files(out):
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


@pytest.mark.parametrize("other, named", [(["--seeds", "0,1"], "seeds 0 there, 0,1 here"),
                                          (["--steps", "7"], "fit.steps 6 there, 7 here"),
                                          (["--m-h", "1,2"], "m_h 1,2,3 there, 1,2 here"),
                                          (["--activation", "sin", "--in-scale", "30"], "model.in_scale 60 there, 30 here")])
def test_a_second_config_is_refused_and_the_first_stays(tmp_path, capsys, other, named):
    out = tmp_path / "run"
    assert sweep_main([*STEPS, "--out", str(out)]) == 0
    first = files(out)
    assert sweep_main([*STEPS, "--out", str(out)]) == 0          # the same options: resumes, re-summarizes
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        sweep_main([*STEPS, *other, "--out", str(out)])
    assert e.value.code == 2
    cap = capsys.readouterr()
    assert cap.out == "" and len(cap.err.splitlines()) == 1, cap.err
    assert cap.err.startswith("jackson-sweep: error: --out:") and named in cap.err and "--force" in cap.err
    assert json.loads(files(out)["config.json"]) == json.loads(first["config.json"])
    assert files(out)["summary.json"] == first["summary.json"]
    # --force: the user asked; this config's results are written
    assert sweep_main([*STEPS, *other, "--force", "--out", str(out)]) == 0
    assert json.loads((out / "config.json").read_text()) != json.loads(first["config.json"])


def test_a_spectrum_file_reruns_into_its_folder(tmp_path, capsys):
    """config.json holds a --sigma-file's values as --sigma: the file's command, and the values given as --sigma,
    are the same config; other values are not."""
    out, f = tmp_path / "run", tmp_path / "s.txt"
    f.write_text("1\n0.5\n0.25\n0.125\n")
    assert sweep_main([*STEPS, "--sigma-file", str(f), "--out", str(out)]) == 0
    assert sweep_main([*STEPS, "--sigma-file", str(f), "--out", str(out)]) == 0
    assert sweep_main([*STEPS, "--sigma", "1,0.5,0.25,0.125", "--out", str(out)]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit):
        sweep_main([*STEPS, "--sigma", "1,0.5,0.25,0.1", "--out", str(out)])
    assert "sigma 1,0.5,0.25,0.125 there" in capsys.readouterr().err


def test_run_only_options_are_not_a_second_config(tmp_path):
    out = tmp_path / "run"
    assert sweep_main([*STEPS, "--out", str(out)]) == 0
    from jackson.rate_sweep.config import sweep_config
    import dataclasses
    base = sweep_config(quick=True, fit={"steps": 6}, out=str(out))
    check_same_config(base)                                                  # the control: nothing differs
    check_same_config(dataclasses.replace(base, device="cpu", scheduler="", compare_to="", terms=False))
    assert set(RUN_ONLY) <= {f.name for f in dataclasses.fields(base)}


def test_every_committed_sweep_folder_takes_its_own_command():
    import test_default_class as dc
    seen = 0
    for folder in dc.sweep_folders():
        cmd = (folder / "command.txt").read_text().splitlines()[0]
        cfg = dc.resolve(cmd)
        k = json.loads((folder / "config.json").read_text())["model"].get("features_k", 16)
        if cfg.resolved_model().features_k != k and "--features-k" not in cmd:
            cfg = dc.resolve(cmd + f" --features-k {k}")                   # the default that moved, pinned
        check_same_config(cfg)
        seen += 1
    assert seen >= 25
