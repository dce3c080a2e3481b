"""App. B.1 tasks (synthetic/nearest_point.py, weighted_average.py, selection_average.py) and jackson-tasks
(jackson/app_b/cell.py, config.py, experiment.py, figures.py): worked examples, brute-force targets, the Eq. (53) bank against a
hand-written reference, the Prop. B.1 checks on hand-computed cases, smoke runs and one-line usage errors."""
from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from conftest import assert_paper_figure, ends_with_paths
from jackson.config import UsageError
from jackson.models import TransformerBank
from jackson.hparams import ModelConfig
from jackson.app_b.cell import attention_checks, coupling_levels, fof_check, pick_example, TaskBank
from jackson.app_b.cli import main
from jackson.app_b.config import (QUICK, RUNS, AllRun, NearestPointRun, SelectionAverageRun, WeightedAverageRun,
                                  resolved_out, validate)
from jackson.app_b.experiment import all_configs
from synthetic import nearest_point, selection_average, weighted_average
from synthetic.nearest_point import NearestPoint
from synthetic.selection_average import SelectionAverage
from synthetic.weighted_average import WeightedAverage, _layouts

PNG = b"\x89PNG\r\n\x1a\n"
TASKS = [NearestPoint(), WeightedAverage(), WeightedAverage(position="none"), SelectionAverage(),
         SelectionAverage(encoding="scalar")]


# ---- the worked examples of the docstrings --------------------------------------------------------

def test_nearest_point_worked_example():
    t = NearestPoint(tau=3)
    b = t.batch(t.example())
    np.testing.assert_allclose(b.y[0], [[0, 0.2], [1, 1], [1, 0]])
    np.testing.assert_array_equal(b.select[0], [[0, 1, 0], [0, 0, 1], [1, 0, 0]])
    np.testing.assert_allclose(b.fof[0], b.x[0, :, 2:])                 # F∘f(u, v) = v


@pytest.mark.parametrize("position", ["none", "onehot"])
def test_weighted_average_worked_example(position):
    t = WeightedAverage(tau=6, min_len=2, position=position)
    b = t.batch(t.example())
    # centres of gravity by hand: (1*(1,0) + 3*(0,1)) / 4 = (0.25, 0.75); (0.5*(0.6,0.8) + 0.5*(0,0)) / 1 = (0.3, 0.4)
    np.testing.assert_allclose(b.y[0, :, 0], [math.sqrt(0.25 ** 2 + 0.75 ** 2), 1, 1, 0.5, 1, 0])
    np.testing.assert_allclose(b.select[0, 0], [0, 0.25, 0.75, 0, 0, 0])
    np.testing.assert_allclose(b.select[0, 3], [0, 0, 0, 0, 0.5, 0.5])
    for r in (1, 2, 4, 5):
        np.testing.assert_array_equal(b.select[0, r], np.eye(6)[r])
    assert list(t.row_kinds(b.x)[0]) == ["x_pred", "point", "point", "x_pred", "point", "point"]
    assert b.x.shape == (1, 6, t.d_in) and t.d_in == 2 + 2 + 2 + (6 if position == "onehot" else 0)


@pytest.mark.parametrize("encoding", ["onehot", "scalar"])
def test_selection_average_worked_example(encoding):
    t = SelectionAverage(tau=3, encoding=encoding)
    b = t.batch(t.example())
    np.testing.assert_allclose(b.y[0], [[2, 1], [2, 2], [3, 3]])       # Eq. (65)
    np.testing.assert_allclose(b.select[0], [[2 / 3, 1 / 3, 0], [1 / 3, 1 / 3, 1 / 3], [0, 0, 1]])
    v, idx, pos = t.decode(b.x)
    np.testing.assert_array_equal(idx[0], [[0, 0, 1], [0, 1, 2], [2, 2, 2]])
    np.testing.assert_array_equal(pos[0], [0, 1, 2])
    assert list(t.row_kinds(b.x)[0]) == ["2 indices", "3 indices", "1 index"]


# ---- targets against brute force -------------------------------------------------------------------

def test_nearest_point_brute_force():
    t = NearestPoint()
    b = t.sample(50, 3)
    for i in range(50):
        for r in range(t.tau):
            u = b.x[i, r, :2]
            dists = [math.dist(u, b.x[i, s, 2:]) for s in range(t.tau)]
            j = dists.index(min(dists))
            np.testing.assert_allclose(b.y[i, r], b.x[i, j, 2:])
            assert b.select[i, r, j] == 1 and b.select[i, r].sum() == 1


def test_weighted_average_brute_force_and_layout():
    t = WeightedAverage()
    b = t.sample(200, 4)
    counts = set()
    for i in range(200):
        x = b.x[i]
        assert x[0, t.d + 1] == 1                          # every sequence opens with x_pred
        starts = [r for r in range(t.tau) if x[r, t.d + 1] == 1]
        counts.add(len(starts))
        for j, a in enumerate(starts):                     # segments read in sequence order, not from g
            end = starts[j + 1] if j + 1 < len(starts) else t.tau
            pts = range(a + 1, end)
            assert len(pts) >= t.min_len
            assert all(x[r, t.d + 2 + j] == 1 and x[r, t.d + 2:t.d + 2 + t.n_slots].sum() == 1 for r in range(a, end))
            cx = sum(x[r, 2] * x[r, :2] for r in pts) / sum(x[r, 2] for r in pts)
            assert b.y[i, a, 0] == pytest.approx(math.hypot(*cx), rel=1e-12)
            for r in pts:
                assert b.y[i, r, 0] == pytest.approx(math.hypot(*x[r, :2]), rel=1e-12)
                assert t.m_lo <= x[r, 2] <= t.m_hi and np.all(np.abs(x[r, :2]) <= t.box)
        np.testing.assert_array_equal(x[:, t.d + 2 + t.n_slots:], np.eye(t.tau))   # one-hot positions
    assert counts == {1, 2, 3}                             # tau = 10, >= 2 points: 1 to 3 segments


def test_weighted_average_layouts_are_all_splits():
    for tau, m in ((10, 2), (7, 1), (9, 3)):
        got = {c for opts in _layouts(tau, m) for c in opts}
        want = set()
        for k in range(1, 5):                              # brute force over all tuples of point counts
            for c in np.ndindex(*([tau] * k)):
                if all(x >= m for x in c) and sum(c) + k == tau:
                    want.add(tuple(int(x) for x in c))
        assert got == want


@pytest.mark.parametrize("encoding", ["onehot", "scalar"])
def test_selection_average_brute_force(encoding):
    t = SelectionAverage(encoding=encoding)
    b = t.sample(100, 5)
    v, idx, pos = t.decode(b.x)
    np.testing.assert_array_equal(pos, np.broadcast_to(np.arange(t.tau), pos.shape))
    for i in range(100):
        for r in range(t.tau):
            np.testing.assert_allclose(b.y[i, r], np.mean([b.x[i, j, :t.d] for j in idx[i, r]], axis=0))
    assert set(np.unique(np.round(b.select * t.k, 9))) <= {0, 1, 2, 3}   # Eq. (64): S in {0, 1/3, 2/3, 1}


@pytest.mark.parametrize("task", TASKS, ids=lambda t: f"{t.name}-{getattr(t, 'encoding', getattr(t, 'position', ''))}")
def test_batches_are_eq8_and_deterministic(task):
    b = task.sample(64, 11)
    assert b.x.shape == (64, task.tau, task.d_in) and b.y.shape == (64, task.tau, task.d_out)
    assert b.select.shape == (64, task.tau, task.tau) and b.fof.shape == b.y.shape
    assert (b.select >= 0).all()
    np.testing.assert_allclose(b.select.sum(axis=-1), 1.0)
    np.testing.assert_allclose(b.y, task.F(b.select @ task.f(b.x)))      # Eq. (8)
    again = task.sample(64, 11)
    for a, c in zip(b, again):
        np.testing.assert_array_equal(a, c)
    assert not np.array_equal(task.sample(64, 12).x, b.x)
    mod = {"nearest-point": nearest_point, "weighted-average": weighted_average,
           "selection-average": selection_average}[task.name]
    np.testing.assert_array_equal(mod.build(7, task).x, task.sample(1, 7).x)


@pytest.mark.parametrize("task", [NearestPoint(), WeightedAverage()], ids=lambda t: t.name)
def test_target_on_constant_sequences_is_fof(task):
    """Prop. B.1 (1), proof: on x = (x, ..., x) the target is F∘f(x).  (Not for qSA, whose tokens carry
    their position, so a constant sequence is not an input.)"""
    b = task.sample(20, 2)
    tokens = b.x[b.select.max(axis=1) > 0]                  # tokens the target attends to (point masses)
    const = np.repeat(tokens[:, None, :], task.tau, axis=1)
    np.testing.assert_allclose(task.batch(const).y[:, 0], task.F(task.f(tokens)), atol=1e-12)


@pytest.mark.parametrize("bad, option", [(NearestPoint(tau=1), "--tau"), (NearestPoint(box=0), "--box"),
                                         (WeightedAverage(tau=2), "--tau"), (WeightedAverage(min_len=0), "--min-len"),
                                         (WeightedAverage(m_lo=0), "--m-lo"), (WeightedAverage(position="x"), "--position"),
                                         (SelectionAverage(k=0), "--k"), (SelectionAverage(encoding="x"), "--encoding")])
def test_task_validation_names_the_option(bad, option):
    with pytest.raises(ValueError, match=option):
        bad.validate()


# ---- the Eq. (53) bank -------------------------------------------------------------------------------

CFG = ModelConfig(d_in=4, n=8, d_v=6, width=16, activation="gelu")   # App. C's class, as the tasks fit it


def test_bank_with_one_output_is_the_core_bank():
    x = torch.rand(5, 6, 4)
    a = TaskBank(CFG, 1, [3, 8], [1, 2]).internals(x)
    b = TransformerBank(CFG, [3, 8], [1, 2])(x, return_internals=True)
    torch.testing.assert_close(a.y[..., 0], b.y, rtol=0, atol=0)
    torch.testing.assert_close(a.pattern, b.pattern, rtol=0, atol=0)
    torch.testing.assert_close(a.logits, b.logits, rtol=0, atol=0)


def _reference(member, x: torch.Tensor) -> torch.Tensor:
    """Eq. (53) written out for one member and one sequence x: (T, d_in) -> (T, d_out), loops over t."""
    def mlp(h, ps):
        for j in range(0, len(ps), 2):
            h = h @ ps[j] + ps[j + 1][0]
            if j < len(ps) - 2:
                h = torch.nn.functional.gelu(h)
        return h
    h = mlp(x, list(member.f_hat))                              # (T, n)
    out = []
    for t in range(len(x)):
        logits = torch.stack([(member.W_Q @ h[t]) @ (member.W_K @ h[s]) for s in range(len(x))])
        a = torch.exp(logits - logits.max())
        a = a / a.sum()
        z = sum(a[s] * (member.W_V @ h[s]) for s in range(len(x)))
        out.append(mlp(z[None], list(member.F_hat))[0])
    return torch.stack(out)


def test_bank_matches_a_hand_written_reference_and_fof_is_the_constant_sequence():
    bank = TaskBank(CFG, 2, [2, 5], [3, 4])
    x = torch.rand(3, 6, 4)
    it = bank.internals(x)
    assert it.y.shape == (2, 3, 6, 2) and it.pattern.shape == (2, 3, 6, 6)
    assert bank(x).shape == (2, 3, 12)
    torch.testing.assert_close(bank(x), it.y.flatten(2))
    for m, mb in enumerate(bank.members):
        assert mb.F_hat[-2].shape == (CFG.width, 2) and mb.F_hat[-1].shape == (1, 2)
        for i in range(3):
            torch.testing.assert_close(it.y[m, i], _reference(mb, x[i]), rtol=1e-5, atol=1e-6)
    tok = torch.rand(7, 4)                                        # F_hat(W_V f_hat(x)) = model on (x, ..., x)
    const = bank.internals(tok[:, None, :].expand(7, 5, 4)).y     # (M, 7, 5, 2)
    fh = bank.fof_hat(tok)                                        # (M, 7, 2)
    for t in range(5):
        torch.testing.assert_close(const[:, :, t], fh, rtol=1e-5, atol=1e-6)
    again = TaskBank(CFG, 2, [2, 5], [3, 4])
    torch.testing.assert_close(again.internals(x).y, it.y, rtol=0, atol=0)   # same seeds, same model


def test_bank_rejects_positional_encoding():
    with pytest.raises(ValueError, match="--pos"):
        TaskBank(ModelConfig(d_in=4, pos="learned"), 2, [1], [0])


# ---- the Prop. B.1 checks on hand-computed cases ---------------------------------------------------------

def test_attention_checks_by_hand():
    S = np.array([[[0, 1, 0], [0.5, 0.5, 0]]])
    A = np.array([[[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]]])
    c = attention_checks(A, S)
    # row 0: argmax 1 in support; TV = (0.2 + 0.5 + 0.3) / 2 = 0.5; mass on {1} = 0.5
    # row 1: argmax 2 not in support {0, 1}; TV = (0.4 + 0.4 + 0.8) / 2 = 0.8; mass on {0, 1} = 0.2
    np.testing.assert_allclose(c["argmax_in_support"], [[1, 0]])
    np.testing.assert_allclose(c["tv"], [[0.5, 0.8]])
    np.testing.assert_allclose(c["support_mass"], [[0.5, 0.2]])
    lv = coupling_levels(A, S)
    assert [r["target"] for r in lv] == [0, 0.5, 1]
    assert [r["n_entries"] for r in lv] == [3, 2, 1]
    np.testing.assert_allclose([r["mean_A"] for r in lv], [(0.2 + 0.3 + 0.8) / 3, 0.1, 0.5])
    assert coupling_levels(np.random.rand(1, 9, 9), np.random.rand(1, 9, 9)) == []   # continuous S: no levels
    f = fof_check(np.array([[1.0], [3.0]]), np.array([[0.0], [2.0]]))
    assert f["fof_mse"] == 1.0 and f["fof_rel"] == 1.0 and f["fof_max_abs"] == 1.0


def test_examples_picked_like_the_paper():
    t = WeightedAverage()
    b = t.sample(50, 0)
    i = pick_example(t, b)
    assert (t.row_kinds(b.x)[i] == "x_pred").sum() == 2
    assert all((t.row_kinds(b.x)[j] == "x_pred").sum() != 2 for j in range(i))
    q = SelectionAverage()
    b = q.sample(50, 0)
    assert len(set(q.row_kinds(b.x)[pick_example(q, b)])) == 3


# ---- jackson-tasks ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory):
    """Each subcommand once with --quick, in-process through the entry point."""
    base = tmp_path_factory.mktemp("tasks")
    runs = {}
    for name in RUNS:
        out = base / name
        assert main([name, "--quick", "--out", str(out)]) == 0
        runs[name] = out
    return runs


@pytest.mark.slow
@pytest.mark.parametrize("name", list(RUNS))
def test_quick_run_writes_everything(quick_runs, name):
    out = quick_runs[name]
    for f in ("results.csv", "by_kind.csv", "levels.csv", "loss_curves.csv", "summary.md", "summary.json",
              "config.json", "command.txt", "report.json"):
        assert (out / f).is_file(), f
    for f in ("attention.png", "graph.png", "fof.png", "loss_curves.png"):
        data = (out / f).read_bytes()
        assert data[:8] == PNG and len(data) > 1000, f
        assert_paper_figure(out / f)
    assert (out / "command.txt").read_text().strip() == f"jackson-tasks {name} --quick --out {out}"
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["quick"] is True and cfg["task"]["name"] == name and cfg["train"]["seeds"] == [0]
    assert cfg["fit"]["steps"] == QUICK["fit"].steps and cfg["model"]["d_in"] == cfg["task"]["d_in"]
    res = pd.read_csv(out / "results.csv")
    assert len(res) == 1 and res.seed.tolist() == [0]
    for c in ("train_mse", "test_mse", "argmax_in_support", "tv", "support_mass", "fof_mse"):
        assert np.isfinite(res[c]).all()
    assert 0 <= res.tv[0] <= 1 and 0 <= res.argmax_in_support[0] <= 1
    cell = next((out / "cells").iterdir())
    ex = json.loads((cell / "example.json").read_text())
    tau = RUNS[name]().task.tau
    assert np.asarray(ex["A"]).shape == (tau, tau)
    np.testing.assert_allclose(np.asarray(ex["A"]).sum(axis=1), 1, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(RUNS))
def test_report_hook(quick_runs, name):
    out = quick_runs[name]
    rep = json.loads((out / "report.json").read_text())
    assert rep["section"] == "tasks" and rep["seeds"] == [0] and rep["command"].startswith(f"jackson-tasks {name}")
    assert [f["file"] for f in rep["figures"]] == ["attention.png", "graph.png", "fof.png", "loss_curves.png"]
    for f in rep["figures"]:
        assert (out / f["file"]).is_file() and rep["command"] in f["caption"] and "seed" in f["caption"].lower()
    s = json.loads((out / "summary.json").read_text())
    res = pd.read_csv(out / "results.csv")
    assert s["metrics"]["test_mse"]["mean"] == pytest.approx(res.test_mse[0], rel=1e-6)
    for p in rep["paper"]:
        assert set(p) == {"quantity", "paper", "measured", "compare"} and 0 <= p["measured"] <= 1
        assert p["compare"] == "difference"                 # attention weights in [0, 1]: no ratios


@pytest.mark.slow
@pytest.mark.parametrize("name", list(RUNS))
def test_the_control_is_uniform_attention_on_the_cells_held_out_draw(quick_runs, name):
    """summary.json's control: the mass a uniform attention puts on the support of S, per seed, on the cell's own
    held-out draw; measured here by the attention checks themselves on a uniform A, and, where S has coupling
    levels, equal to the support's share of the levels' entries (the cell's own count)."""
    from jackson.app_b.cell import data_seeds
    out = quick_runs[name]
    s = json.loads((out / "summary.json").read_text())
    cfg = RUNS[name]()
    te = cfg.task.sample(s["n_test"], data_seeds(0)[1])           # --quick: its own n_test
    S = np.asarray(te.select)
    uniform = np.full_like(S, 1 / S.shape[-1], dtype=float)
    want = attention_checks(uniform, S)["support_mass"].mean()
    got = s["control"]["uniform_support_mass"]
    assert got["per_seed"] == [pytest.approx(want, rel=1e-12)] and 0 < want < 1
    if s["levels"]:
        share = sum(lv["n_entries"] for lv in s["levels"] if lv["target"] > 0) / sum(lv["n_entries"] for lv in s["levels"])
        assert got["mean"] == pytest.approx(share, rel=1e-12)
    assert f"(uniform attention: {want:.1%}, the control)" in (out / "summary.md").read_text()


def test_paper_rows_are_attention_weights_compared_by_difference():
    """The headline rows beside the paper's values (from hand-made tables, no training): attention weights in
    [0, 1], each declaring that the report compares it by difference; the report then shows measured - paper."""
    from jackson.app_b.results import paper_rows
    from jackson.lab_report.entries import ratio
    levels = pd.DataFrame({"target": [0.0, 1.0, 0.0, 1.0], "mean_A": [0.02, 0.95, 0.04, 0.93]})
    by_kind = pd.DataFrame({"kind": ["point", "x_pred"], "support_mass": [0.1, 0.9]})
    tabs = {"levels": levels, "by_kind": by_kind}
    nearest = paper_rows(NearestPoint(), tabs)
    assert [(r["paper"], r["measured"], r["compare"]) for r in nearest] == [(0.0, pytest.approx(0.03), "difference"),
                                                                          (1.0, pytest.approx(0.94), "difference")]
    assert [ratio(r["paper"], r["measured"], r["quantity"], r["compare"]) for r in nearest] == \
        ["+0.03 (difference)", "-0.06 (difference)"]
    weighted = paper_rows(WeightedAverage(), tabs)
    assert [(r["paper"], r["measured"], r["compare"]) for r in weighted] == [(1.0, 0.1, "difference"),
                                                                           (1.0, 0.9, "difference")]


@pytest.mark.slow
def test_summary_is_the_cells_and_reruns_resume_and_reproduce(quick_runs, tmp_path, capsys):
    """Same config + seed -> same numbers (fresh folder); rerunning a finished folder trains nothing."""
    src = quick_runs["selection-average"]
    before = pd.read_csv(src / "results.csv")
    assert main(["selection-average", "--quick", "--out", str(src)]) == 0
    assert "resuming: 1 of 1 cells already finished" in capsys.readouterr().out
    pd.testing.assert_frame_equal(pd.read_csv(src / "results.csv"), before)
    assert main(["selection-average", "--quick", "--out", str(tmp_path / "again")]) == 0
    ends_with_paths(capsys.readouterr().out, 2, [tmp_path / "again" / f for f in     # the paths it wrote, its headline
                                                 ("results.csv", "summary.md", "attention.png", "graph.png",
                                                  "fof.png", "loss_curves.png")])
    again = pd.read_csv(tmp_path / "again" / "results.csv")
    cols = [c for c in before.columns if c != "fit_wall_s"]
    pd.testing.assert_frame_equal(again[cols], before[cols])


@pytest.mark.slow
def test_two_seeds_and_task_options(tmp_path):
    out = tmp_path / "two"
    assert main(["nearest-point", "--quick", "--seeds", "0,1", "--tau", "4", "--steps", "12", "--out", str(out)]) == 0
    res = pd.read_csv(out / "results.csv")
    assert res.seed.tolist() == [0, 1] and (res.steps <= 12).all()
    s = json.loads((out / "summary.json").read_text())
    assert len(s["metrics"]["tv"]["per_seed"]) == 2
    ex = json.loads(next((out / "cells").iterdir()).joinpath("example.json").read_text())
    assert np.asarray(ex["A"]).shape == (4, 4)


@pytest.mark.slow
def test_all_runs_three_tasks(tmp_path, monkeypatch):
    """`jackson-tasks all --quick --seeds 3` runs the three tasks, each into <out>/<task> with seed 3, and draws each
    one's four pictures there.  The pictures are drawn, not written (writing twelve PNG+PDF pairs was most of this
    test's time): each task's written figures are checked by test_quick_run_writes_everything."""
    from jackson.app_b import figures
    drawn = []

    def draw_only(fig, path, **kw):
        drawn.append(Path(path))
        fig.canvas.draw()                   # every artist laid out, as a save would, without the files
        figures.pyplot().close(fig)
    monkeypatch.setattr(figures, "save", draw_only)
    cfgs = all_configs(AllRun(out=str(tmp_path / "all"), quick=True, seeds=(3,)))
    assert [c.task.name for c in cfgs] == list(RUNS)
    assert all(c.train.seeds == (3,) and c.fit.steps == QUICK["fit"].steps for c in cfgs)
    assert [resolved_out(c) for c in cfgs] == [tmp_path / "all" / n for n in RUNS]
    assert all_configs(AllRun())[0].train.seeds == NearestPointRun().train.seeds
    assert resolved_out(all_configs(AllRun(quick=True))[1]) == Path("runs/tasks/weighted-average-quick")
    assert main(["all", "--quick", "--out", str(tmp_path / "all"), "--seeds", "3"]) == 0
    for n in RUNS:
        assert pd.read_csv(tmp_path / "all" / n / "results.csv").seed.tolist() == [3]
    assert sorted(drawn) == sorted(tmp_path / "all" / n / f for n in RUNS
                                   for f in ("attention.png", "graph.png", "fof.png", "loss_curves.png"))


def test_defaults_resolve_and_validate(tmp_path):
    assert resolved_out(NearestPointRun()) == Path("reports/tasks/nearest-point")
    assert resolved_out(SelectionAverageRun(quick=True)) == Path("runs/tasks/selection-average-quick")
    for cls in RUNS.values():
        validate(cls(out=str(tmp_path / "x")))
    assert not (tmp_path / "x").exists()
    with pytest.raises(UsageError, match="--m-h"):       # quick n = 8
        validate(WeightedAverageRun(train=dataclasses.replace(QUICK["train"], m_h=9), model=QUICK["model"],
                                    out=str(tmp_path / "x")))
    assert not (tmp_path / "x").exists()


# ---- bad input: one line, exit 2, nothing written -----------------------------------------------------------

BAD = {
    "no_task": ([], "choose a task"),
    "unknown_task": (["nearest"], "choose a task"),
    "unknown_option": (["nearest-point", "--bogus", "1"], "--bogus"),
    "option_of_another_task": (["nearest-point", "--k", "3"], "--k"),
    "bad_number": (["selection-average", "--tau", "x"], "--tau"),
    "tau_too_small": (["nearest-point", "--tau", "1"], "--tau"),
    "min_len": (["weighted-average", "--tau", "3", "--min-len", "3"], "--tau"),
    "encoding": (["selection-average", "--encoding", "binary"], "--encoding"),
    "position": (["weighted-average", "--position", "sinusoidal"], "--position"),
    "d_in_given": (["nearest-point", "--d-in", "4"], "--d-in"),
    "pos_given": (["nearest-point", "--pos", "learned"], "--pos"),
    "attention_not_softmax": (["nearest-point", "--attention", "linear"], "--attention"),
    "m_h_above_n": (["nearest-point", "--m-h", "33"], "--m-h"),
    "seeds_repeated": (["selection-average", "--seeds", "1,1"], "--seeds"),
    "schedule": (["nearest-point", "--schedule", "linear"], "--schedule"),
    "cycles_zero": (["nearest-point", "--cycles", "0"], "--cycles: at least one cosine cycle, got 0"),
    "check_steps_negative": (["weighted-average", "--check-steps", "-3"], "--check-steps: must be >= 0, got -3"),
    "all_bad_seeds": (["all", "--seeds", "-1"], "--seeds"),
    "out_is_a_file": (None, "--out"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_one_line_exit_2(tmp_path, capsys, case):
    args, needle = BAD[case]
    out = tmp_path / "out"
    if case == "out_is_a_file":
        out.write_text("keep me\n")
        args = ["nearest-point", "--quick"]
    if args and args[0] in RUNS or args[:1] == ["all"]:
        args = [*args, "--out", str(out)]
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 2
    cap = capsys.readouterr()
    lines = cap.err.splitlines()
    assert len(lines) == 1, cap.err
    assert lines[0].startswith("jackson-tasks") and ": error: " in lines[0] and needle in lines[0]
    assert cap.out == ""
    if case == "out_is_a_file":
        assert out.read_text() == "keep me\n"
    else:
        assert not out.exists()


@pytest.mark.slow
def test_console_script_help_and_error(sub_env):
    exe = Path(sys.executable).parent / "jackson-tasks"
    assert exe.exists()
    ok = subprocess.run([str(exe), "--help"], capture_output=True, text=True, env=sub_env, timeout=120)
    assert ok.returncode == 0 and "nearest-point" in ok.stdout and "selection-average" in ok.stdout
    sub = subprocess.run([str(exe), "weighted-average", "--help"], capture_output=True, text=True, env=sub_env,
                         timeout=120)
    assert sub.returncode == 0 and "--min-len" in sub.stdout and "--m-h" in sub.stdout and "--position" in sub.stdout
    bad = subprocess.run([str(exe), "selection-average", "--k", "0", "--out", "/nonexistent/x"], capture_output=True,
                         text=True, env=sub_env, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--k" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.slow
def test_title_names_non_default_task_options(tmp_path):
    out = tmp_path / "nopos"
    assert main(["weighted-average", "--quick", "--position", "none", "--steps", "5", "--out", str(out)]) == 0
    rep = json.loads((out / "report.json").read_text())
    assert rep["title"].endswith("[position = none]")
    assert json.loads((out / "config.json").read_text())["task"]["d_in"] == WeightedAverage(position="none").d_in
