"""jackson-sweep (jackson/rate_sweep/cli.py, experiment.py, config.py): smoke runs and one-line usage errors."""
from __future__ import annotations

import dataclasses
import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import assert_paper_figure, ends_with_paths
from jackson.config import build_parser, from_args, parse_int_list, parse_rank_list
from jackson.rate_sweep.experiment import QUICK, SweepConfig, validate
from jackson.config import UsageError

PNG = b"\x89PNG\r\n\x1a\n"
RESULT_COLS = ["alpha", "rank", "m_h", "seed", "train_mse", "test_mse", "oracle_mse"]
ARTIFACTS = ["results.csv", "summary.md", "summary.json", "config.json", "command.txt",
             "error_vs_mh.png", "learned_spectrum.png", "loss_curves.png"]


def run_sweep_cli(exe, args, env, timeout=300):
    return subprocess.run([str(exe), *args], env=env, capture_output=True, text=True, timeout=timeout)


# ---- smoke ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def quick_run(tmp_path_factory, sweep_exe, sub_env):
    out = tmp_path_factory.mktemp("cli") / "quick"
    proc = run_sweep_cli(sweep_exe, ["--quick", "--out", str(out)], sub_env)
    return out, proc


@pytest.mark.slow
def test_quick_exits_zero_and_writes_artifacts(quick_run):
    out, proc = quick_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name in ARTIFACTS:
        assert (out / name).is_file(), name
    for name in ("error_vs_mh.png", "learned_spectrum.png", "loss_curves.png"):
        data = (out / name).read_bytes()
        assert data[:8] == PNG and len(data) > 1000, name
        assert_paper_figure(out / name)          # >= 200 dpi, a PDF beside it (jackson/figures.py)
    assert f"results: {out}/results.csv" in proc.stdout
    ends_with_paths(proc.stdout, 4, [out / "results.csv", out / "summary.md", out / "error_vs_mh.png"])   # + headline


@pytest.mark.slow
def test_quick_results_table(quick_run):
    out, proc = quick_run
    res = pd.read_csv(out / "results.csv")
    for c in RESULT_COLS:
        assert c in res.columns, c
    assert res.m_h.tolist() == list(QUICK["m_h"])
    assert (res.alpha == 1.5).all() and (res["rank"].astype(str) == "inf").all() and (res.seed == 0).all()
    for c in ("train_mse", "test_mse", "oracle_mse"):
        assert np.isfinite(res[c]).all() and (res[c] >= 0).all()
    assert (res.oracle_mse.diff().dropna() < 0).all()   # the exact oracle improves with m_h
    # the table is the cell's own rows
    cells = list((out / "cells").iterdir())
    assert len(cells) == 1
    rows = pd.read_csv(cells[0] / "rows.csv")
    np.testing.assert_allclose(res.test_mse, rows.test_mse, rtol=1e-6)


@pytest.mark.slow
def test_quick_config_summary_and_command(quick_run):
    out, _ = quick_run
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["quick"] is True and cfg["alpha"] == [1.5] and cfg["rank"] == ["inf"]
    assert cfg["m_h"] == list(QUICK["m_h"]) and cfg["model"]["n"] == QUICK["model"].n
    assert cfg["fit"]["steps"] == QUICK["fit"].steps and cfg["out"] == str(out)
    assert (out / "command.txt").read_text().strip() == f"jackson-sweep --quick --out {out}"
    s = json.loads((out / "summary.json").read_text())
    assert len(s["targets"]) == 1
    t = s["targets"][0]
    assert (t["alpha"], t["rank"]) == (1.5, "inf")
    assert t["predicted_exponent"] == pytest.approx(-2.0)
    res = pd.read_csv(out / "results.csv")
    assert [r["m_h"] for r in t["curve"]] == res.m_h.tolist()
    np.testing.assert_allclose([r["test_mse"] for r in t["curve"]], res.test_mse, rtol=1e-5)
    assert set(t["exponents"]) == {"test", "oracle", "oracle_self_exact", "test_l1", "oracle_l1"}
    md = (out / "summary.md").read_text()
    assert md.startswith("# jackson-sweep summary") and "## alpha = 1.5, rank = inf" in md


@pytest.mark.slow
def test_quick_two_finite_ranks_one_group_each(tmp_path, sweep_exe, sub_env):
    out = tmp_path / "ranks"
    proc = run_sweep_cli(sweep_exe, ["--quick", "--rank", "3,6", "--alpha", "1.5", "--m-h", "1,2",
                                     "--steps", "20", "--out", str(out)], sub_env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = pd.read_csv(out / "results.csv", dtype={"rank": str})
    assert sorted(res["rank"].unique()) == ["3", "6"]
    assert res.groupby("rank").m_h.apply(list).to_dict() == {"3": [1, 2], "6": [1, 2]}
    assert (res.steps <= 20).all()                       # --steps wins over --quick
    s = json.loads((out / "summary.json").read_text())
    assert [(t["alpha"], t["rank"]) for t in s["targets"]] == [(1.5, "3"), (1.5, "6")]


@pytest.mark.slow
def test_quick_rank_2_and_inf(tmp_path, sweep_exe, sub_env):
    """A finite and an infinite rank in one sweep, with m_h reaching the finite rank (exact oracle)."""
    out = tmp_path / "mixed"
    proc = run_sweep_cli(sweep_exe, ["--quick", "--rank", "2,inf", "--alpha", "1.5", "--out", str(out)], sub_env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = pd.read_csv(out / "results.csv", dtype={"rank": str})
    assert sorted(res["rank"].unique()) == ["2", "inf"]
    assert (res[(res["rank"] == "2") & (res.m_h >= 2)].oracle_mse == 0).all()   # rank-2 oracle exact
    md = (out / "summary.md").read_text()
    assert "## alpha = 1.5, rank = 2" in md and "## alpha = 1.5, rank = inf" in md
    assert "Rank check" in md
    for png in ("error_vs_mh.png", "learned_spectrum.png", "loss_curves.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_quick_linear_attention_is_named_everywhere(tmp_path, sweep_exe, sub_env, quick_run):
    """--attention linear: the linear model is trained and the run says so (summary, config, stdout);
    --compare-to sets the softmax quick run's held-out curve beside it."""
    soft, _ = quick_run
    out = tmp_path / "linear"
    proc = run_sweep_cli(sweep_exe, ["--quick", "--attention", "linear", "--compare-to", str(soft),
                                     "--out", str(out)], sub_env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"results: {out}/results.csv, summary.md (linear, learned features)" in proc.stdout
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["model"]["attention"] == "linear" and cfg["model"]["n"] == QUICK["model"].n
    s = json.loads((out / "summary.json").read_text())
    assert s["attention"] == "linear" and [t["attention"] for t in s["targets"]] == ["linear"]
    md = (out / "summary.md").read_text()
    assert md.startswith("# jackson-sweep summary (linear attention, learned features)")
    assert "## alpha = 1.5, rank = inf (linear attention, learned features)" in md and "log(phi(" in md
    res = pd.read_csv(out / "results.csv")
    assert res.m_h.tolist() == list(QUICK["m_h"]) and np.isfinite(res.test_mse).all()
    cell = json.loads(next((out / "cells").iterdir()).joinpath("cell.json").read_text())
    assert cell["cell"]["model"]["attention"] == "linear"
    spec = pd.read_csv(out / "learned_spectrum.csv.gz")              # tidy: one row per (member, i); gzipped
    assert list(spec.columns) == ["alpha", "rank", "seed", "m_ff", "m_h", "i", "sigma"]
    assert np.isfinite(spec.sigma).all() and spec.groupby("m_h").i.apply(list).map(len).nunique() == 1
    for png in ("error_vs_mh.png", "learned_spectrum.png", "loss_curves.png"):
        assert (out / png).read_bytes()[:8] == PNG
    # the comparison: same target, same data; ratios from the two results tables
    ref = s["targets"][0]["reference"]
    assert ref["attention"] == "softmax" and s["reference"]["differs"] == []
    res_soft = pd.read_csv(soft / "results.csv")
    assert [c["m_h"] for c in ref["curve"]] == res.m_h.tolist()
    np.testing.assert_allclose([c["reference_test_mse"] for c in ref["curve"]], res_soft.test_mse, rtol=1e-5)
    np.testing.assert_allclose([c["ratio"] for c in ref["curve"]], res.test_mse / res_soft.test_mse, rtol=1e-5)
    assert f"Beside `{soft}` (softmax attention" in md and "| m_h | linear | softmax | linear / softmax |" in md
    # the reference's exponent is refitted from its blocks over this run's m_h: here the same range as its own
    soft_exp = json.loads((soft / "summary.json").read_text())["targets"][0]["exponents"]["test"]
    assert ref["exponent_m_h"] == list(QUICK["m_h"]) and ref["exponent"] == pytest.approx(soft_exp, rel=1e-9)


def test_non_softmax_runs_get_their_own_default_folder():
    from jackson.hparams import ModelConfig
    linear, sparse = (ModelConfig(attention=a) for a in ("linear", "sparse"))
    assert SweepConfig(model=linear).resolved_out() == Path("reports/jackson/sweep-a1.5-rinf-linear")
    assert SweepConfig(model=sparse, quick=True).resolved_out().name == "sweep-a1.5-rinf-sparse-quick"
    gelu = dataclasses.replace(linear, activation="gelu")          # and another FFN class its own again
    assert SweepConfig(model=gelu).resolved_out() == Path("reports/jackson/sweep-a1.5-rinf-linear-gelu")


# ---- bad input: exit 2, one line naming the option, nothing written -----------------------

# the cases run as real subprocesses of the console script (each pays the torch import)
BAD = {
    "rank_inf_alpha_half": (["--rank", "inf", "--alpha", "0.5"], "--alpha"),
    "rank_zero": (["--rank", "0"], "--rank"),
    "m_h_zero": (["--m-h", "0"], "--m-h"),
    "m_h_above_n": (["--m-h", "33"], "--m-h"),          # default n = 32
    "bogus_option": (["--bogus-option", "1"], "--bogus-option"),
    "alpha_not_a_number": (["--alpha", "abc"], "--alpha"),
    "schedule": (["--schedule", "foo"], "--schedule"),
    "out_under_a_file": (None, "--out"),               # chmod does not stop root; a file does
}
# more cases, checked in-process through the same entry point (cheap)
BAD_IN_PROCESS = {
    "rank_fraction": (["--rank", "2.5"], "--rank"),
    "m_h_above_quick_n": (["--quick", "--m-h", "9"], "--m-h"),
    "m_h_repeated": (["--m-h", "1,1"], "--m-h"),
    "k_max_below_m_h": (["--k-max", "4", "--m-h", "1-8"], "--k-max"),
    "phi_unknown": (["--phi", "fourier"], "--phi"),
    "steps_zero": (["--steps", "0"], "--steps"),
    "n_test_small": (["--n-test", "10"], "--n-test"),
    "d_in_not_scalar": (["--d-in", "2"], "--d-in"),
    "positional_encoding": (["--pos", "learned"], "--pos"),
    "attention_unknown": (["--attention", "performer"], "--attention"),
    "attention_case": (["--quick", "--attention", "Linear"], "--attention"),
    "compare_to_missing": (["--quick", "--compare-to", "/nonexistent/run"], "--compare-to"),
    "out_is_a_file": (None, "--out"),
    # values that used to pass validation, train, then crash or mislead (issue 12)
    "alpha_inf": (["--alpha", "inf"], "--alpha"),
    "alpha_huge": (["--alpha", "1e308"], "--alpha"),
    "lr_inf": (["--lr", "inf"], "--lr"),
    "lr_nan": (["--lr", "nan"], "--lr"),
    "seed_beyond_2_63": (["--seeds", "12345678901234567890123"], "--seeds"),
    "width_zero": (["--width", "0"], "--width"),
    "m_ff_zero": (["--m-ff", "0,64"], "--m-ff"),
    "restarts_zero": (["--restarts", "0"], "--restarts"),
    "construction_unknown": (["--construction", "fourier"], "--construction"),
    "construction_and_psi": (["--construction", "trace-free", "--psi", "cos"], "--construction"),
    "features_unknown": (["--features", "fixed"], "--features"),
    "features_k_below_m_h": (["--features", "given", "--features-k", "4"], "--features-k"),
    "given_with_m_ff": (["--features", "given", "--m-ff", "32,64"], "--m-ff"),
    "device_unreadable": (["--device", "gpu0"], "--device"),
    "device_cuda_absent": (["--device", "cuda"], "--device"),
    "gpu_preset_without_cuda": (["--gpu"], "--device"),
}
MAX_PARALLEL = 2   # a 2-core machine: more concurrent torch imports only thrash


@pytest.fixture(scope="module")
def bad_runs(tmp_path_factory, sweep_exe, sub_env):
    """Run the bad invocations, at most MAX_PARALLEL at a time."""
    base = tmp_path_factory.mktemp("bad")
    blocker = base / "a_file"
    blocker.write_text("not a folder\n")
    todo = []
    for name, (args, _) in BAD.items():
        if name == "out_under_a_file":
            out, argv = blocker / "sub" / "out", []
        else:
            out, argv = base / name, list(args)
        todo.append((name, out, [str(sweep_exe), *argv, "--out", str(out)]))
    results, running = {}, []
    while todo or running:
        while todo and len(running) < MAX_PARALLEL:
            name, out, cmd = todo.pop(0)
            running.append((name, out, subprocess.Popen(cmd, env=sub_env, stdout=subprocess.PIPE,
                                                         stderr=subprocess.PIPE, text=True)))
        name, out, p = running.pop(0)
        stdout, stderr = p.communicate(timeout=300)
        results[name] = (out, p.returncode, stdout, stderr)
    return results


@pytest.mark.slow
@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_one_line_exit_2(bad_runs, case):
    out, rc, stdout, stderr = bad_runs[case]
    option = BAD[case][1]
    assert rc == 2, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("jackson-sweep: error:")
    assert option in lines[0]
    assert "Traceback" not in stderr and stdout == ""
    assert not out.exists()


@pytest.mark.parametrize("case", list(BAD_IN_PROCESS))
def test_bad_input_in_process(tmp_path, capsys, case):
    from jackson.rate_sweep.cli import sweep_main
    import torch
    if case in ("device_cuda_absent", "gpu_preset_without_cuda") and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    args, option = BAD_IN_PROCESS[case]
    if case == "out_is_a_file":
        out = tmp_path / "a_file"
        out.write_text("keep me\n")
        args = []
    else:
        out = tmp_path / "out"
    with pytest.raises(SystemExit) as e:
        sweep_main([*args, "--out", str(out)])
    assert e.value.code == 2
    cap = capsys.readouterr()
    lines = cap.err.splitlines()
    assert len(lines) == 1, cap.err
    assert lines[0].startswith("jackson-sweep: error:") and option in lines[0]
    assert cap.out == ""
    if case == "out_is_a_file":
        assert out.read_text() == "keep me\n"
    else:
        assert not out.exists()


# ---- the option parser -----------------------------------------------------------------------

def test_list_parsers():
    assert parse_int_list("1-3,5") == (1, 2, 3, 5)
    assert parse_int_list("4") == (4,)
    assert parse_rank_list("2, inf,6") == (2.0, math.inf, 6.0)
    with pytest.raises(ValueError):
        parse_rank_list("2.5")


def test_parser_flattens_nested_configs():
    p = build_parser(SweepConfig, "jackson-sweep", "")
    given = vars(p.parse_args(["--alpha", "0.75,2", "--m-h", "1-4", "--rank", "3,inf", "--n", "16",
                               "--steps", "9", "--schedule", "cosine", "--quick"]))
    assert given == {"alpha": (0.75, 2.0), "m_h": (1, 2, 3, 4), "rank": (3.0, math.inf),
                     "model.n": 16, "fit.steps": 9, "fit.schedule": "cosine", "quick": True}
    cfg = from_args(SweepConfig, given)
    assert cfg.model.n == 16 and cfg.model.d_v == SweepConfig().model.d_v
    assert cfg.fit.steps == 9 and cfg.fit.schedule == "cosine" and cfg.fit.lr == SweepConfig().fit.lr
    help_text = p.format_help()
    for opt in ("--m-h", "--tail-tol", "--k-max", "--qk-init", "--eval-size", "--dask-scheduler"):
        assert opt in help_text


def test_validate_accepts_defaults_and_rejects_without_writing(tmp_path):
    validate(SweepConfig(out=str(tmp_path / "fine")))
    assert not (tmp_path / "fine").exists()
    with pytest.raises(UsageError, match="--k-max"):
        validate(SweepConfig(k_max=4, m_h=(1, 8), out=str(tmp_path / "x")))
    with pytest.raises(UsageError, match="--phi"):
        validate(SweepConfig(phi="fourier", out=str(tmp_path / "x")))
    assert not (tmp_path / "x").exists()


def test_resolved_out_default():
    assert SweepConfig(alpha=(1.5, 2.0), rank=(2, math.inf)).resolved_out() == \
        Path("reports/jackson/sweep-a1.5_2-r2_inf")
    assert SweepConfig(quick=True).resolved_out() == Path("runs/jackson/sweep-a1.5-rinf-quick")   # never under reports/


# ---- issue 12: given features, the m_FF axis, restarts ----------------------------------------

@pytest.mark.slow
def test_quick_given_features_with_restarts_and_diagnostics(tmp_path, sweep_exe, sub_env):
    out = tmp_path / "given"
    proc = run_sweep_cli(sweep_exe, ["--quick", "--features", "given", "--construction", "trace-free", "--rank", "2",
                                     "--restarts", "2", "--seeds", "0,1", "--out", str(out)], sub_env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["model"]["features"] == "given" and cfg["fit"]["lr"] == pytest.approx(3e-2)   # the GIVEN preset's lr
    assert cfg["restarts"] == 2 and cfg["construction"] == "trace-free"
    res = pd.read_csv(out / "results.csv")
    rst = pd.read_csv(out / "restarts.csv")
    assert len(res) == 6 and len(rst) == 12 and (res.restarts == 2).all()
    for _, r in res.iterrows():            # the reported member is the restart with the lowest training MSE
        mine = rst[(rst.seed == r.seed) & (rst.m_h == r.m_h)]
        best = mine.loc[mine.train_mse.idxmin()]
        assert r.restart == best.restart and r.test_mse == pytest.approx(best.test_mse, rel=1e-5)
        assert r.test_mse_min == pytest.approx(mine.test_mse.min(), rel=1e-5)
    diag = pd.read_csv(out / "diagnostics.csv")
    assert len(diag) == 2 and (diag.self_weight < 0.2).all()
    md = (out / "summary.md").read_text()
    assert "## Verdicts" in md and "given features" in md and "Target diagnostics" in md and "trace-free" in md
    assert "knee e(1)/e(2)" in proc.stdout


@pytest.mark.slow
def test_m_ff_axis_gives_a_heatmap(tmp_path, capsys):
    """--m-ff 8,16: one cell per width, the m_h x m_FF heatmap, one line per width (in-process, 6 steps: the axis's
    tables and figure, not its numbers)."""
    from jackson.rate_sweep.cli import sweep_main
    out = tmp_path / "mff"
    capsys.readouterr()
    assert sweep_main(["--quick", "--m-ff", "8,16", "--steps", "6", "--out", str(out)]) == 0
    proc = capsys.readouterr()
    res = pd.read_csv(out / "results.csv")
    assert sorted(res.m_ff.unique()) == [8, 16] and len(res) == 6
    assert (out / "error_mh_x_mff.png").read_bytes()[:8] == PNG
    s = json.loads((out / "summary.json").read_text())
    assert s["m_ff"] == [8, 16] and [t["m_ff"] for t in s["targets"]] == [8, 16]
    assert "m_FF=8" in proc.out and "m_FF = 16" in (out / "summary.md").read_text()


@pytest.mark.slow
def test_config_file_reproduces_the_run(quick_run, tmp_path, capsys):
    """--config <run>/config.json reruns that run: the same results.csv, byte for byte; options given win."""
    from jackson.rate_sweep.cli import sweep_main
    out, proc = quick_run
    assert proc.returncode == 0
    again = tmp_path / "again"
    assert sweep_main(["--config", str(out / "config.json"), "--out", str(again)]) == 0
    assert (again / "results.csv").read_bytes() == (out / "results.csv").read_bytes()
    cfg = json.loads((again / "config.json").read_text())
    assert cfg == {**json.loads((out / "config.json").read_text()), "out": str(again)}
    fewer = tmp_path / "fewer"
    assert sweep_main(["--config", str(out / "config.json"), "--m-h", "1,2", "--out", str(fewer)]) == 0
    assert sorted(pd.read_csv(fewer / "results.csv").m_h.unique()) == [1, 2]
