"""cot_dp.sweep: presets, summaries, min GFLOPs, the answer baseline, locality, estimates, whole quick sweeps."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import assert_paper_figure, ends_with_paths
from cot_dp.cli import main as cot_main
from cot_dp.tasks import edit_distance
from cot_dp_helpers import PNG, task


def test_summaries_write_n_a_where_there_is_no_heldout_cot(tmp_path):
    from cot_dp.grid import SweepConfig
    from cot_dp.tables import summarize
    cfg = SweepConfig(task="ed,ed_local", models="standard", dims=(64,), sizes=(4,), out=str(tmp_path))
    res = pd.DataFrame([{"task": t, "model": "standard", "size": 4, "d_model": 64, "seed": 0, "accuracy": 0.5,
                         "cot_exact": np.nan, "test_loss": np.nan, "n_eval": 8, "gflops": 1.0, "gflops_params": 0.5,
                         "L": 40} for t in ("ed", "ed_local")])
    summary = summarize(tmp_path, res, cfg, "cot-dp sweep --test")
    md = (tmp_path / "summary.md").read_text()
    assert "Exact CoT: standard n/a vs n/a" in md and "Held-out loss per CoT/answer token: standard n/a vs n/a" in md
    assert summary["tasks"]["ed"]["standard"]["mean_test_loss"] is None
    assert "NaN" not in (tmp_path / "summary.json").read_text()


def test_quick_presets_never_default_under_reports():
    from cot_dp.grid import SweepConfig
    assert SweepConfig(quick=True).resolved_out() == Path("runs/cot_dp/quick-arithmetic")
    assert SweepConfig(quick=True, task="ed,lis").resolved_out() == Path("runs/cot_dp/quick-ed_lis")
    assert SweepConfig().resolved_out() == Path("reports/cot_dp/cpu-arithmetic")   # the committed results' folder


@pytest.fixture(scope="module")
def quick_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "q"
    exe = Path(sys.executable).parent / "cot-dp"
    args = [str(exe), "sweep", "--quick", "--task", "arithmetic,lis", "--model", "standard,linear",
            "--out", str(out)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    return out, proc, args


@pytest.mark.slow
def test_quick_sweep_writes_results_figures_and_report(quick_sweep):
    out, proc, args = quick_sweep
    assert proc.returncode == 0, proc.stderr[-3000:]
    for f in ("results.csv", "summary.md", "summary.json", "min_gflops.csv", "report.json", "config.json",
              "command.txt", "accuracy_arithmetic.png", "accuracy_lis.png"):
        assert (out / f).is_file(), f
    assert (out / "accuracy_arithmetic.png").read_bytes()[:8] == PNG
    for f in ("accuracy_arithmetic.png", "accuracy_lis.png"):
        assert_paper_figure(out / f)
    res = pd.read_csv(out / "results.csv")
    assert len(res) == 2 * 2 * 2                               # tasks x sizes x models (one D)
    assert set(res.model) == {"standard", "linear"} and (res.d_model == 16).all()
    assert res.accuracy.between(0, 1).all() and (res.gflops > 0).all() and res.baseline.between(0, 1).all()
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["preset"] == "quick" and cfg["grid"]["lis"]["sizes"] == [4, 6]
    assert (out / "command.txt").read_text().strip().endswith(f"--out {out}")
    rep = json.loads((out / "report.json").read_text())
    assert rep["section"] == "cot_dp" and "quick preset" in rep["title"]
    assert {f["file"] for f in rep["figures"]} == {"accuracy_arithmetic.png", "accuracy_lis.png"}
    assert set(rep) >= {"title", "data", "command", "seeds", "figures", "paper", "text"}
    assert "Preset: **quick**" in (out / "summary.md").read_text()
    assert (out / "data/arithmetic-2/chain/train_data.txt").is_file()
    ends_with_paths(proc.stdout, 5, [out / "results.csv", out / "accuracy_lis.png"])   # headline, then the paths


@pytest.mark.slow
def test_quick_sweep_resumes_without_retraining(quick_sweep):
    out, _, args = quick_sweep
    before = {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*/rows.csv")}
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "resuming: 8 of 8 cells already finished" in proc.stdout
    assert {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*/rows.csv")} == before


@pytest.mark.slow
def test_sweep_on_dask_gives_the_in_process_numbers(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    args = ["sweep", "--quick", "--task", "arithmetic", "--model", "linear", "--size", "2"]
    assert cot_main(args + ["--out", str(tmp_path / "local")]) == 0
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        assert cot_main(args + ["--out", str(tmp_path / "dask"), "--dask-scheduler", cluster.scheduler_address]) == 0
    a, b = (pd.read_csv(tmp_path / f / "results.csv") for f in ("local", "dask"))
    cols = ["accuracy", "cot_exact", "test_loss", "gflops", "baseline"]
    assert len(a) == 1 and np.allclose(a[cols].to_numpy(float), b[cols].to_numpy(float), rtol=1e-6)
    assert not (tmp_path / "dask" / "checkpoints").exists()     # written and removed at absolute paths from the worker


def test_presets_and_options_on_top(tmp_path, monkeypatch):
    monkeypatch.setenv("JACKSON_MAX_MEMORY", "1T")     # the full preset is priced for a larger machine than a CI one
    monkeypatch.setenv("JACKSON_MAX_HOURS", "1000000")  # and for more compute than 48 h of this CPU (a GPU's)
    from cot_dp.cli import run_cli
    from cot_dp.grid import PRESETS, SweepConfig, validate
    get = lambda argv: run_cli("cot-dp sweep", SweepConfig, "", lambda c, cmd: c, argv,  # noqa: E731
                               {"quick": PRESETS["quick"], "full": PRESETS["full"]})[0]
    full = get(["--full", "--lr", "3e-4", "--task", "arithmetic,ed,lis", "--out", str(tmp_path / "f")])
    assert full.preset == "full" and full.train.lr == 3e-4 and full.train.epochs == 100
    assert full.train.batch_size == 512 and (full.n_train, full.n_test) == (1_000_000, 100_000)
    assert full.train.total_steps(full.n_train) == 195_313                 # 100 epochs of 1M at batch 512
    assert full.sizes_of("arithmetic") == (6, 10, 13, 16) and full.sizes_of("lis") == (40, 110, 175, 250)
    assert full.sizes_of("ed") == (6, 12, 16, 20) and full.dims_of("ed")[-1] == 1024
    assert full.arch.dropout == 0.1 and full.train.weight_decay == 0.01 and full.train.beta2 == 0.999
    validate(full)
    cpu = get(["--out", str(tmp_path / "c")])
    assert cpu.preset == "cpu" and len(cpu.cells()) == 27
    assert len(get(["--task", "ed,ed_local,lis"]).cells()) == 18
    assert get([]).resolved_out() == Path("reports/cot_dp/cpu-arithmetic")


def test_titles_name_every_setting_changed_from_the_preset(tmp_path):
    """A sweep run with the preset's grid but other training says so in its titles: "cpu preset" alone only
    when nothing but the grid (and speed-only settings) differs from the preset."""
    from cot_dp.cli import run_cli
    from cot_dp.grid import PRESETS, SweepConfig
    get = lambda argv: run_cli("cot-dp sweep", SweepConfig, "", lambda c, cmd: c, argv,  # noqa: E731
                               {"quick": PRESETS["quick"], "full": PRESETS["full"]})[0]
    grid_only = ["--task", "ed", "--size", "4", "--d-model", "128", "--model", "standard", "--seeds", "0,1",
                 "--gen-batch", "32", "--linear-chunk", "16", "--out", str(tmp_path / "a")]
    assert get(grid_only).preset_label == "cpu preset" and get(grid_only).changed() == []
    assert get(["--full", "--task", "ed", "--gen-batch", "64"]).preset_label == "full preset"
    custom = get(["--task", "ed", "--n-train", "100000", "--lr", "1e-3", "--dropout", "0", "--ins-cost", "1",
                  "--ed-lengths", "equal", "--out", str(tmp_path / "b")])
    assert custom.changed() == ["--n-train", "--ins-cost", "--ed-lengths", "--dropout", "--lr"]
    assert custom.preset_label == "cpu preset, changed: --n-train, --ins-cost, --ed-lengths, --dropout, --lr"
    # the full preset's own values are its baseline, not the cpu preset's
    assert get(["--full", "--task", "ed", "--lr", "3e-4"]).changed() == ["--lr"]


def test_min_gflops_takes_the_cheapest_d_that_reaches_the_target():
    from cot_dp.tables import _trend, min_gflops
    rows = [("standard", 2, 32, 0.95, 1.0), ("standard", 2, 64, 0.99, 4.0), ("standard", 3, 32, 0.5, 2.0),
            ("standard", 3, 64, 0.91, 8.0), ("linear", 2, 32, 0.2, 1.0), ("linear", 2, 64, 0.3, 4.0),
            ("linear", 3, 32, 0.1, 2.0), ("linear", 3, 64, 0.2, 8.0)]
    res = pd.DataFrame([{"task": "arithmetic", "model": m, "size": s, "d_model": d, "seed": 0, "accuracy": a,
                         "gflops": g, "gflops_params": g / 2, "L": 10 * s} for m, s, d, a, g in rows])
    mg = min_gflops(res, 0.9).set_index(["model", "size"])
    assert mg.loc[("standard", 2), "min_d"] == 32 and mg.loc[("standard", 2), "min_gflops"] == 1.0
    assert mg.loc[("standard", 3), "min_d"] == 64 and mg.loc[("standard", 3), "min_gflops"] == 8.0
    assert np.isnan(mg.loc[("linear", 3), "min_gflops"]) and mg.loc[("linear", 3), "best_accuracy"] == 0.2
    assert [_trend(x) for x in ([32, 64], [64, 64], [None, None], [32, None])] == \
        ["grows", "flat", "never reached", "reached at small sizes only"]


def test_answer_baseline_is_the_share_of_test_answers_equal_to_the_train_mode(tmp_path):
    from cot_dp.tables import answer_baseline
    chain = tmp_path / "chain"
    chain.mkdir()
    ed = task("ed", 4)   # answers need not be right: read as load(check_answers=False) reads
    (chain / "train_data.txt").write_text("a b | a <sep> 1 2 , <sep> 3 \na | c <sep> 5 , <sep> 5 \nb | b <sep> 3 , <sep> 3 \n")
    (chain / "test_data.txt").write_text("c | c <sep> 3 , <sep> 3 \nc | a <sep> 5 , <sep> 5 \nd | d <sep> 5 , <sep> 5 \n"
                                         "d | a <sep> 3 , <sep> 3 \n")
    assert answer_baseline(tmp_path, ed) == 0.5              # train mode "3"; test answers 3, 5, 5, 3
    assert answer_baseline(tmp_path, ed, n_eval=3) == pytest.approx(1 / 3)
    (chain / "test_data.txt").write_text("c | c <sep> \nc | a <sep> \nd | d <sep> \nd | a <sep> \n")
    (chain / "test_ans.txt").write_text("3\n3\n3\n5\n")     # their split: answers kept apart
    assert answer_baseline(tmp_path, ed) == 0.75


def test_locality_summary_and_figure_state_the_measured_means(tmp_path):
    from cot_dp.grid import SweepConfig
    from cot_dp.plots import plot_locality
    from cot_dp.tables import summarize
    cfg = SweepConfig(task="ed,ed_local", models="standard,linear", dims=(64,), sizes=(4, 6), out=str(tmp_path))
    rng = np.random.default_rng(0)
    res = pd.DataFrame([{"task": t, "model": m, "size": s, "d_model": 64, "seed": 0, "accuracy": rng.uniform(),
                         "cot_exact": rng.uniform(), "test_loss": rng.uniform(0.1, 1), "n_eval": 512,
                         "gflops": 1.0, "gflops_params": 0.5, "L": 10 * s + (40 if t == "ed_local" else 0),
                         "baseline": 0.1 * s}
                        for t in ("ed", "ed_local") for m in ("standard", "linear") for s in (4, 6)])
    summary = summarize(tmp_path, res, cfg, "cot-dp sweep --test")
    md = (tmp_path / "summary.md").read_text()
    for col, name in (("accuracy", "answer accuracy"), ("cot_exact", "Exact CoT"), ("test_loss", "Held-out loss")):
        mean = res.groupby(["task", "model"])[col].mean()
        want = "; ".join(f"{m} {mean[('ed_local', m)]:.3f} vs {mean[('ed', m)]:.3f}" for m in ("standard", "linear"))
        assert want in md, (name, want)
    assert "A constant answer (the training set's most frequent) scores 0.400 at size 4, 0.600 at size 6" in md
    assert summary["baseline"] == {t: {4: pytest.approx(0.4), 6: pytest.approx(0.6)} for t in ("ed", "ed_local")}
    path = plot_locality(tmp_path, res, cfg)
    assert path.name == "locality_ed_vs_ed_local.png" and path.read_bytes()[:8] == PNG
    assert plot_locality(tmp_path, res[res.task == "ed"], SweepConfig(task="ed,lis")) is None


def test_one_size_locality_figure_times_each_cell_to_the_loss_mark(tmp_path, monkeypatch):
    """At one size the locality figure has a fourth panel: per cell, the first evaluated step whose held-out loss is
    below LOSS_MARK, read from cells/<key>/curve.csv (steps_to_loss, checked here against curves made by hand:
    strictly below, the first such step even after a spike, NaN for a cell that never gets there, which the figure
    names as 'never' with its count of seeds), each seed a point, the mean a bar."""
    import cot_dp.plots
    from conftest import keep_figures
    from cot_dp.grid import SweepConfig
    from cot_dp.plots import LOSS_MARK, plot_locality, steps_to_loss
    from cot_dp.tables import summarize
    cfg = SweepConfig(task="ed,ed_local", models="standard,linear", dims=(64,), sizes=(3,), out=str(tmp_path))
    losses = {("ed", "standard", 0): [0.5, 0.2, LOSS_MARK, 0.005, 0.001],        # == the mark is not below it
              ("ed", "standard", 1): [0.5, 0.009, 0.3, 0.004, 0.001],            # a spike after the first crossing
              ("ed", "linear", 0): [0.5, 0.4, 0.3, 0.2, 0.1], ("ed", "linear", 1): [0.5, 0.4, 0.3, 0.2, 0.1],
              ("ed_local", "standard", 0): [0.001] * 5, ("ed_local", "standard", 1): [0.02, 0.001, 0, 0, 0],
              ("ed_local", "linear", 0): [0.1, 0.1, 0.1, 0.1, 0.002], ("ed_local", "linear", 1): [0.1, 0.001, 0, 0, 0]}
    want = {("ed", "standard", 0): 400, ("ed", "standard", 1): 200, ("ed", "linear", 0): None, ("ed", "linear", 1): None,
            ("ed_local", "standard", 0): 100, ("ed_local", "standard", 1): 200, ("ed_local", "linear", 0): 500,
            ("ed_local", "linear", 1): 200}
    rows = []
    for (t, m, seed), ls in losses.items():
        d = tmp_path / "cells" / f"{t}-3_{m}_d64_s{seed}"
        d.mkdir(parents=True)
        row = {"task": t, "size": 3, "model": m, "d_model": 64, "seed": seed, "accuracy": 1 - ls[-1], "cot_exact": 0.5,
               "test_loss": ls[-1], "L": 20 if t == "ed" else 40, "baseline": 0.38, "n_eval": 512, "gflops": 1.0,
               "gflops_params": 0.5}
        pd.DataFrame([row]).to_csv(d / "rows.csv", index=False)
        pd.DataFrame({"step": [100, 200, 300, 400, 500], "train_loss": ls, "test_loss": ls,
                      "lr": [1e-3] * 5}).to_csv(d / "curve.csv", index=False)
        rows.append(row)
    got = steps_to_loss(tmp_path).set_index(["task", "model", "seed"]).step
    assert len(got) == len(want)
    for k, w in want.items():
        assert (math.isnan(got[k]) if w is None else got[k] == w), (k, got[k], w)
    assert steps_to_loss(tmp_path / "nowhere").empty
    summary = summarize(tmp_path, pd.DataFrame(rows), cfg, "cot-dp sweep --test")      # the summary says the same
    assert summary["steps_to_loss"]["steps"] == {"ed": {"linear": [None, None], "standard": [400, 200]},
                                                 "ed_local": {"linear": [500, 200], "standard": [100, 200]}}
    assert "-- standard 100, 200 vs 400, 200; linear 500, 200 vs never, never." in (tmp_path / "summary.md").read_text()
    kept = keep_figures(monkeypatch, cot_dp.plots)
    plot_locality(tmp_path, pd.DataFrame(rows), cfg)
    fig = kept["locality_ed_vs_ed_local.png"]
    axes = fig.get_axes()
    assert len(axes) == 4 and "step where held-out loss" in axes[3].get_ylabel()
    texts = [t.get_text() for t in axes[3].texts]
    assert texts == ["never\n(2 of 2 seeds)"]                               # ED linear: neither seed got there
    bars = sorted(round(float(seg[0][1])) for c in axes[3].collections if hasattr(c, "get_segments")
                  for seg in c.get_segments())
    assert bars == [150, 300, 350]      # the means of the cells whose every seed got there: ED_Local std, ED std, ED_Local lin
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["standard", "linear"]
    # the same size swept at a second D: a row of panels and a summary line per D; "steps" stays the largest D's
    for (t, m, seed), ls in losses.items():
        d = tmp_path / "cells" / f"{t}-3_{m}_d32_s{seed}"
        d.mkdir(parents=True)
        row = dict(next(x for x in rows if (x["task"], x["model"], x["seed"]) == (t, m, seed)), d_model=32)
        pd.DataFrame([row]).to_csv(d / "rows.csv", index=False)
        pd.DataFrame({"step": [100, 200, 300, 400, 500], "train_loss": ls, "test_loss": [x * 2 for x in ls],
                      "lr": [1e-3] * 5}).to_csv(d / "curve.csv", index=False)
        rows.append(row)
    two = SweepConfig(task="ed,ed_local", models="standard,linear", dims=(32, 64), sizes=(3,), out=str(tmp_path))
    summary = summarize(tmp_path, pd.DataFrame(rows), two, "cot-dp sweep --test")
    s2l = summary["steps_to_loss"]
    assert (s2l["d_model"], sorted(s2l["by_d"])) == (64, ["32", "64"]) and s2l["steps"] == s2l["by_d"]["64"]
    # doubled losses: ED standard seed 0 first below the mark at 500 (0.002; 0.01 at 400 is not below), seed 1 at 400 (0.008)
    assert s2l["by_d"]["32"]["ed"]["standard"] == [500, 400]
    md = (tmp_path / "summary.md").read_text()
    assert "(per seed, D = 32, from its curve.csv" in md and "(per seed, D = 64, from its curve.csv" in md
    plot_locality(tmp_path, pd.DataFrame(rows), two)
    fig = kept["locality_ed_vs_ed_local.png"]
    axes = fig.get_axes()
    assert len(axes) == 8 and [axes[i].get_xlabel() for i in (0, 4)] == ["model (size 3, D = 32)", "model (size 3, D = 64)"]
    assert fig._suptitle.get_text().startswith("ED vs ED_Local at D = 32, 64")
    from cot_dp.plots import figure_caption as _caption  # the caption names the rows per D only where there are some
    path = tmp_path / "locality_ed_vs_ed_local.png"
    assert "a row per embedding dimension D" in _caption(path, two, True)
    assert "a row per embedding dimension D" not in _caption(path, cfg, True)


def test_sparse_misses_agree_with_the_eq6_rule_by_hand():
    """sparse_misses against Eq. (6) written out: the query predicting dp[i][j] sits one position before it and reads
    key `at` when at > q - kB (the local window) or `at` is one of the last c of its block (0-based at mod B >= B - c);
    the previous token is always readable; a window longer than the sequence misses nothing."""
    from cot_dp.plots import sparse_misses
    from jackson.hparams import block_size
    for name, size, c, k in (("ed", 4, 1, 1), ("ed_local", 4, 1, 1), ("ed_local", 5, 2, 2)):
        cfg = task(name, size, ed_lengths="equal", ins_cost=1, del_cost=1, sub_cost=1)
        L = len(cfg.sample(np.random.default_rng(0)))
        B, rng = block_size(L), np.random.default_rng(3)
        far, out, n = {}, {}, {}
        for _ in range(30):
            s1, s2 = edit_distance.split_prompt(cfg.sample(rng))
            for pos, reads in cfg.module().reads(cfg, s1, s2):
                for key, at in reads.items():
                    q = pos - 1
                    far[key] = max(far.get(key, 0), q - at)
                    out[key] = out.get(key, 0) + (not (at > q - k * B or at % B >= B - c))
                    n[key] = n.get(key, 0) + 1
        got = sparse_misses(cfg, L, c, k, n_pairs=30, seed=3)
        assert got == {key: (far[key], pytest.approx(out[key] / n[key])) for key in far}
        assert got["dp[i][j-1]"] == (0, 0.0) and (k > 1 or got["dp[i-1][j]"][1] > 0)
        assert all(share == 0 for _, share in sparse_misses(cfg, L, c, k=L, n_pairs=5).values())


def test_summary_states_what_one_sparse_layer_can_read(tmp_path):
    from cot_dp.grid import SweepConfig
    from cot_dp.plots import sparse_misses
    from cot_dp.tables import summarize
    cfg = SweepConfig(task="ed_local", models="sparse", dims=(64,), sizes=(4,), out=str(tmp_path))
    res = pd.DataFrame([{"task": "ed_local", "model": "sparse", "size": 4, "d_model": 64, "seed": 0, "accuracy": 0.4,
                         "cot_exact": 0.1, "test_loss": 0.5, "n_eval": 512, "gflops": 1.0, "gflops_params": 0.5, "L": 84}])
    summarize(tmp_path, res, cfg, "cot-dp sweep --test")
    miss = sparse_misses(cfg.task_cfg("ed_local", 4), 84)
    line = next(x for x in (tmp_path / "summary.md").read_text().splitlines() if "What one sparse layer can read" in x)
    assert "ed_local size 4 (L = 84, B = 8): " in line
    assert f"dp[i-1][j] {miss['dp[i-1][j]'][1]:.0%} ({miss['dp[i-1][j]'][0]})" in line


def test_estimate_times_cells_and_trains_nothing(tmp_path, capsys):
    out = tmp_path / "e"
    assert cot_main(["sweep", "--quick", "--estimate", "--model", "linear", "--out", str(out)]) == 0
    est = pd.read_csv(out / "estimate.csv")
    assert len(est) == 2 and (est.step_ms > 0).all() and (est.projected_s > est.step_ms / 1000 * est.steps).all()
    assert not (out / "cells").exists() and not (out / "results.csv").exists()
    assert "projected:" in capsys.readouterr().out


# ---- resumable cells (issue 17) --------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def _cell_from_json(meta: dict):
    from cot_dp.settings import ModelConfig
    from cot_dp.cell import CotCell
    from cot_dp.settings import TrainConfig
    from jackson.config import from_dict
    base = CotCell(task=task("arithmetic", 2), model=ModelConfig(), train=TrainConfig(), n_train=1, n_test=1, data_seed=0)
    return from_dict(CotCell, meta["cell"], base)


def test_committed_cells_keep_their_keys_and_the_checkpoint_fields_are_not_in_them():
    import dataclasses
    metas = sorted((ROOT / "reports" / "cot_dp").glob("*/cells/*/cell.json"))
    old = [p for p in metas if p.parts[-4] == "cpu-ed_ed_local_lis"
           or (p.parts[-4] == "cpu-arithmetic" and "_s0_" in p.parent.name)]
    assert len(old) == 45                                       # cpu-arithmetic seed 0: 27, cpu-ed_ed_local_lis 18
    for path in metas:
        meta = json.loads(path.read_text())
        if path in old:
            assert "ckpt_dir" not in meta["cell"]               # written before the field existed
        cell = _cell_from_json(meta)
        assert cell.key() == meta["key"] == path.parent.name, path
        moved = dataclasses.replace(cell, ckpt_dir="/elsewhere/checkpoints", ckpt_every_s=1.0)
        assert moved.key() == cell.key() and moved.ckpt_path() == Path(f"/elsewhere/checkpoints/{cell.key()}.pt")


def test_a_sweep_checkpoints_each_cell_and_removes_the_checkpoint_once_its_results_are_in_place(tmp_path, monkeypatch,
                                                                                              capsys):
    import cot_dp.sweep as S
    import cot_dp.train as T
    saved, removed = set(), []
    real_save, real_cleanup = T.save_atomic, S.CotCell.cleanup

    def save(path, state):
        saved.add(Path(path))
        real_save(path, state)

    def cleanup(cell):
        removed.append((cell.ckpt_path(), cell.ckpt_path().is_file(), (out / "cells" / cell.key() / "rows.csv").is_file(),
                        len(saved)))
        real_cleanup(cell)
    monkeypatch.setattr(T, "save_atomic", save)
    monkeypatch.setattr(S.CotCell, "cleanup", cleanup)
    out = tmp_path / "s"
    monkeypatch.chdir(tmp_path)                                 # the cells' checkpoint paths must not depend on it
    assert cot_main(["sweep", "--quick", "--task", "arithmetic", "--model", "linear,standard", "--size", "2",
                     "--ckpt-every-s", "0", "--out", "s"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()   # it ends with its headline and the paths it wrote
    assert printed[-4].startswith("arithmetic: smallest D reaching 90% accuracy at size 2: linear ")
    ends_with_paths("\n".join(printed), 3, [out / "results.csv", out / "summary.md", out / "accuracy_arithmetic.png"])
    keys = sorted(d.name for d in (out / "cells").iterdir())
    want = {(out / "checkpoints" / f"{k}.pt").resolve() for k in keys}
    assert len(keys) == 2 and saved == want                     # absolute paths, one per cell
    # run_cell removed each once its folder was in place, the first before the second cell began (one
    # checkpoint on disk at a time); run_sweep's pass after the runner found none left
    first, second = (next(p for p in want if k in p.name) for k in keys)   # cells run in key order here
    assert [r for r in removed if r[1]] == [(first, True, True, 1), (second, True, True, 2)]
    assert len(removed) == 4
    assert not (out / "checkpoints").exists()
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["ckpt_every_s"] == 0.0
    for k in keys:      # a cell's record names where its checkpoint and data were, relative to the working directory
        rec = json.loads((out / "cells" / k / "cell.json").read_text())["cell"]
        assert rec["ckpt_dir"] == "s/checkpoints" and rec["data_dir"] == "s/data/arithmetic-2"
        assert (tmp_path / rec["data_dir"] / "meta.json").is_file()


def _finished_folder(folder: Path, baseline: bool = True) -> pd.DataFrame:
    """A cot-dp sweep folder as a run leaves it (config.json, command.txt, results.csv, summary, min GFLOPs),
    with hand-set accuracies, two seeds, and cells exactly at, just above and below their size's baseline."""
    from cot_dp.grid import SweepConfig
    from cot_dp.tables import summarize
    cfg = SweepConfig(task="ed,ed_local", models="standard,linear", dims=(16, 32), sizes=(4, 5), seeds=(0, 1),
                      out=str(folder))
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(cfg.as_dict(), default=str))
    (folder / "command.txt").write_text(f"cot-dp sweep --task ed,ed_local --out {folder}\n")
    base = {4: 0.25, 5: 0.125}
    # a cell's mean over its two seeds: at the baseline, 1/512 (one answer) above it, below it, far above it
    gaps = [0.0, 1 / 512, -0.05, 0.4, 1 / 512, 0.0, 0.3, -0.1, 0.4]
    rows = []
    for t in ("ed", "ed_local"):
        for m in ("standard", "linear"):
            for s in (4, 5):
                for d in (16, 32):
                    mean = base[s] + gaps[len(rows) // 2 % len(gaps)]
                    for seed, off in ((0, -1 / 256), (1, 1 / 256)):
                        rows.append({"task": t, "model": m, "size": s, "d_model": d, "seed": seed,
                                     "accuracy": mean + off, "cot_exact": 0.1, "test_loss": 0.5, "n_eval": 512,
                                     "gflops": d / 1000, "gflops_params": d / 2000, "L": 10 * s, "baseline": base[s]})
    res = pd.DataFrame(rows)
    if not baseline:
        res = res.drop(columns="baseline")
    res.to_csv(folder / "results.csv", index=False, float_format="%.6g")
    summarize(folder, res, cfg, (folder / "command.txt").read_text().strip())
    return pd.read_csv(folder / "results.csv")


def _hatched_cells(ax) -> set:
    """(size, D) of the cells a heatmap panel hatches, read from the drawing: rows are its y tick labels
    (the size first), columns its x tick labels."""
    sizes = [int(t.get_text().split()[0]) for t in ax.get_yticklabels()]
    dims = [int(t.get_text()) for t in ax.get_xticklabels()]
    out = set()
    for p in ax.patches:
        if p.get_hatch():
            x, y = p.get_xy()
            out.add((sizes[round(y + 0.5)], dims[round(x + 0.5)]))
    return out


def test_a_redraw_hatches_exactly_the_cells_at_or_below_the_constant_answer(tmp_path, monkeypatch):
    """Issue 15: the heatmaps are judged against the constant-answer baseline, so they draw it: each size's
    baseline under its label, the cells whose mean accuracy over seeds is <= it hatched (checked against
    results.csv, including a cell exactly at it and one 1/512 above), a legend and the caption saying what
    the hatching means.  Drawn by python -m jackson.lab_report.redraw, which picks cot-dp by the folder's
    command; --report-json writes the captions again."""
    import cot_dp.plots
    from conftest import keep_figures
    from jackson.lab_report.redraw import REDRAW, main
    from jackson.runfolder import folder_kind
    folder = tmp_path / "run"
    res = _finished_folder(folder)
    assert folder_kind(folder) == "cot-dp sweep" and "cot-dp sweep" in REDRAW
    kept = keep_figures(monkeypatch, cot_dp.plots)
    assert main(["--report-json", str(folder)]) == 0
    assert set(kept) == {"accuracy_ed.png", "accuracy_ed_local.png", "locality_ed_vs_ed_local.png"}
    mean = res.groupby(["task", "model", "size", "d_model"]).agg(acc=("accuracy", "mean"), base=("baseline", "first"))
    low = mean[mean.acc <= mean.base + 1e-9]
    assert 0 < len(low) < len(mean)
    for name in ("ed", "ed_local"):
        fig = kept[f"accuracy_{name}.png"]
        for ax, m in zip(fig.axes, ("standard", "linear")):
            assert ax.get_title() == m
            want = {(s, d) for (t, mm, s, d) in low.index if t == name and mm == m}
            assert _hatched_cells(ax) == want, (name, m)
        assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["5\n(base 0.12)", "4\n(base 0.25)"]
        (legend,) = fig.legends
        assert "hatched: accuracy at or below a constant answer's" in legend.get_texts()[0].get_text()
        assert_paper_figure(folder / f"accuracy_{name}.png")
    caps = {f["file"]: f["caption"] for f in json.loads((folder / "report.json").read_text())["figures"]}
    assert all("hatched: accuracy at or below a constant answer's" in caps[f"accuracy_{t}.png"] for t in ("ed", "ed_local"))


def test_a_folder_without_baselines_redraws_without_marks(tmp_path, monkeypatch):
    """results.csv written before the baseline column: no hatching, no legend, no promise in the caption."""
    import cot_dp.plots
    from conftest import keep_figures
    from jackson.lab_report.redraw import redraw
    folder = tmp_path / "old"
    _finished_folder(folder, baseline=False)
    kept = keep_figures(monkeypatch, cot_dp.plots)
    redraw(folder, report_json=True)
    fig = kept["accuracy_ed.png"]
    assert not fig.legends and not any(p.get_hatch() for ax in fig.axes for p in ax.patches)
    assert "hatched" not in (folder / "report.json").read_text()
