"""jackson/sweep.py + jackson/rate_sweep/cell.py (+ tables.collect): atomic per-cell folders, resume, Dask == in-process."""
from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

import jackson.rate_sweep.cell as rate_cell
import jackson.sweep as sweep
from jackson.fit import evaluate, fit
from jackson.rate_sweep.summary import summarize
from jackson.rate_sweep.tables import collect
from jackson.runfolder import table_path
from jackson.rate_sweep.axes import rank_str
from jackson.rate_sweep.cell import N_BLOCKS, data_seeds, init_seed, make_bank
from jackson.schedule import member_seed
from jackson.sweep import run_cell, run_cells
from conftest import tiny_cell

CELL_FILES = {"rows.csv", "blocks.csv.gz", "curve.csv.gz", "learned_spectrum.csv.gz", "cell.json", "restarts.csv"}
ROW_COLS = ["alpha", "rank", "m_h", "seed", "train_mse", "test_mse", "oracle_mse",
            "oracle_self_exact_mse", "status", "steps", "K", "tail_beyond_K", "cell",
            "restart", "init_seed", "restarts", "test_mse_min", "test_mse_median", "n_diverged",
            "test_l1", "oracle_l1", "term", "activation"]


def finished(cells_dir: Path) -> list[str]:
    return sorted(p.name for p in cells_dir.iterdir() if not p.name.startswith("."))   # not .tmp-*, .ckpt-*


def count_fit_calls(monkeypatch) -> list:
    calls = []
    real = rate_cell.fit

    def wrapper(*a, **k):
        calls.append(a[0].m_hs)
        return real(*a, **k)
    monkeypatch.setattr(rate_cell, "fit", wrapper)
    return calls


# ---- keys and seeds ------------------------------------------------------------------------

def test_cell_key_is_derived_from_the_config():
    a, b = tiny_cell(), tiny_cell()
    assert a.key() == b.key()
    assert a.key().startswith("a1.5_rinf_s0_v2_")
    assert tiny_cell(rank=3).key().startswith("a1.5_r3_s0_v2_")
    others = {tiny_cell(seed=1).key(), tiny_cell(alpha=2.0).key(), tiny_cell(m_hs=(1, 3)).key(),
              tiny_cell(n_train=256).key(), tiny_cell(phi="cos").key()}
    assert a.key() not in others and len(others) == 5
    assert json.loads(json.dumps(a.as_dict()))["rank"] == "inf"
    assert rank_str(math.inf) == "inf" and rank_str(6.0) == "6"


def test_default_cell_key_unchanged_by_the_attention_option():
    """ModelConfig.attention defaults to softmax and keys hash non-default fields only, so the default
    sweep's key does not depend on it; other kinds get new keys.  Keys carry the init scheme (v2: inits
    independent per target), so no v2 run resumes from a folder of v1 cells."""
    from jackson.rate_sweep.experiment import SweepConfig
    from jackson.hparams import ModelConfig
    key = SweepConfig(model=ModelConfig(activation="gelu")).cells()[0].key()   # GELU: keys hash against it
    assert key.startswith("a1.5_rinf_s0_v2_") and key.endswith("_54d44d4497")   # same hash as the v1 default cell
    assert SweepConfig(model=ModelConfig(activation="gelu", attention="softmax")).cells()[0].key() == key
    assert "attention" not in sweep.non_default(SweepConfig().cells()[0])
    # the sweep's default class (sine, scale 60): the committed card cell's key
    assert SweepConfig().cells()[0].key() == "a1.5_rinf_s0_v2_fc6db1cae2"
    others = {SweepConfig(model=ModelConfig(attention=a)).cells()[0].key() for a in ("linear", "sparse")}
    assert key not in others and len(others) == 2


def test_seeds_are_distinct_and_bank_independent():
    tr, te = data_seeds(0)
    assert tr != te and data_seeds(0) == (tr, te) and data_seeds(1) != (tr, te)
    assert len({member_seed(0, m) for m in range(1, 9)}) == 8
    assert member_seed(0, 3) != member_seed(1, 3)


def test_inits_are_independent_per_target_seed_m_h_and_restart():
    """No initialisation is shared across targets (the m_h = 9 init that stuck on all nine Fig. 1 targets)."""
    cells = [tiny_cell(alpha=a, rank=r) for a in (0.55, 1.0, 1.5) for r in (2, 6, math.inf)]
    seeds = [init_seed(c, 9, 0) for c in cells]
    assert len(set(seeds)) == 9
    c = tiny_cell(restarts=3)
    ms = [init_seed(c, m, j) for m in (1, 2) for j in range(3)]
    assert len(set(ms)) == 6 and init_seed(tiny_cell(seed=1), 1, 0) != ms[0]
    assert init_seed(c, 1, 0) == init_seed(tiny_cell(restarts=3, n_train=256), 1, 0)   # the data size is not the target
    bank = make_bank(c)
    assert [mb.seed for mb in bank.members] == ms and bank.m_hs == (1, 1, 1, 2, 2, 2)


# ---- run_cell ------------------------------------------------------------------------------

def test_run_cell_writes_complete_folder_atomically(tmp_path, monkeypatch):
    cell = tiny_cell(m_hs=(1, 3))
    cells_dir = tmp_path / "cells"
    seen = []
    real_rename = os.rename

    def spy_rename(src, dst):
        src, dst = Path(src), Path(dst)
        seen.append((src.name, dst, {p.name for p in src.iterdir()}, dst.exists()))
        return real_rename(src, dst)
    monkeypatch.setattr(sweep.os, "rename", spy_rename)

    out = run_cell(cell, cells_dir, progress=False)
    assert out == cells_dir / cell.key()
    assert len(seen) == 1
    src_name, dst, contents, dst_existed = seen[0]
    assert src_name.startswith(f".tmp-{cell.key()}-") and dst == out
    assert contents == CELL_FILES and not dst_existed      # complete before it appears
    assert {p.name for p in out.iterdir()} == CELL_FILES
    assert finished(cells_dir) == [cell.key()]
    assert not list(cells_dir.glob(".tmp-*"))

    rows = pd.read_csv(out / "rows.csv")
    assert list(rows.columns) == ROW_COLS
    assert rows.m_h.tolist() == [1, 3]
    assert (rows.alpha == 1.5).all() and (rows["rank"] == np.inf).all() and (rows.cell == cell.key()).all()

    # independent recomputation of the measured numbers from the same seeds
    target = cell.target()
    s_tr, s_te = data_seeds(cell.seed)
    x_tr, x_te = target.sample(cell.n_train, s_tr), target.sample(cell.n_test, s_te)
    y_tr, y_te = target(x_tr), target(x_te)
    o = target.oracle(x_te, cell.m_hs)
    t = lambda a: torch.tensor(a, dtype=torch.float32)  # noqa: E731
    bank = make_bank(cell)
    assert [mb.seed for mb in bank.members] == [init_seed(cell, m, 0) for m in cell.m_hs]
    res = fit(bank, t(x_tr), t(y_tr), cell.fit, seed=cell.seed, progress=False)
    for i, m in enumerate(cell.m_hs):
        r = rows.iloc[i]
        assert r.oracle_mse == pytest.approx(np.mean((o["truncated"][m] - y_te) ** 2), rel=1e-9)
        assert r.oracle_self_exact_mse == pytest.approx(np.mean((o["self_exact"][m] - y_te) ** 2), rel=1e-9)
        assert r.test_mse == pytest.approx(evaluate(bank, t(x_te), t(y_te))[i].mean().item(), rel=1e-5)
        assert r.train_mse == pytest.approx(evaluate(bank, t(x_tr), t(y_tr))[i].mean().item(), rel=1e-5)
        assert r.status == res.status[i] and r.steps == res.steps[i]
    info = target.resolved()
    assert (rows.K == info["K"]).all()
    assert rows.tail_beyond_K.iloc[0] == pytest.approx(info["tail_energy"])

    blocks = pd.read_csv(out / "blocks.csv.gz")
    assert set(blocks.kind) == {"test", "oracle", "oracle_self_exact", "test_l1", "oracle_l1"}
    assert len(blocks) == len(cell.m_hs) * 5 * N_BLOCKS
    for (m, kind), g in blocks.groupby(["m_h", "kind"]):
        col = {"test": "test_mse", "oracle": "oracle_mse", "oracle_self_exact": "oracle_self_exact_mse",
               "test_l1": "test_l1", "oracle_l1": "oracle_l1"}[kind]
        assert sorted(g.block) == list(range(N_BLOCKS))
        # equal block sizes (n_test = 64 = N_BLOCKS): the block mean is the overall mean
        assert g.mse.mean() == pytest.approx(rows.set_index("m_h").loc[m, col], rel=1e-5)

    curve = pd.read_csv(out / "curve.csv.gz")
    assert set(curve.columns) >= {"step", "member", "train_mse", "lr", "m_h"}
    assert set(curve.m_h) == {1, 3}
    assert (curve.m_h == np.array(cell.m_hs)[curve.member]).all()

    spec = pd.read_csv(out / "learned_spectrum.csv.gz")
    assert spec.m_h.tolist() == [1, 3]
    s = spec.drop(columns="m_h").to_numpy()
    assert (s >= 0).all() and list(spec.columns[1:]) == [f"s{k}" for k in range(1, s.shape[1] + 1)]

    meta = json.loads((out / "cell.json").read_text())
    assert meta["key"] == cell.key() == out.name
    assert meta["cell"] == json.loads(json.dumps(cell.as_dict()))
    assert meta["target"]["K"] == info["K"]
    np.testing.assert_allclose(meta["sigma_head"], target.sigma[:64])


def test_run_cell_returns_existing_folder_untouched(tmp_path, monkeypatch):
    cell = tiny_cell()
    out = run_cell(cell, tmp_path, progress=False)
    st = (out / "rows.csv").stat()
    calls = count_fit_calls(monkeypatch)
    assert run_cell(cell, tmp_path, progress=False) == out
    assert calls == []
    assert (out / "rows.csv").stat().st_mtime_ns == st.st_mtime_ns


# ---- run_cells: resume ---------------------------------------------------------------------

def test_run_cells_skips_finished_cells(tmp_path, monkeypatch):
    a, b = tiny_cell(alpha=1.5), tiny_cell(alpha=2.0)
    dirs = run_cells([a], tmp_path, progress=False)
    assert dirs == [tmp_path / "cells" / a.key()]
    stamp = {p.name: p.stat().st_mtime_ns for p in dirs[0].iterdir()}
    ino = dirs[0].stat().st_ino

    calls = count_fit_calls(monkeypatch)
    dirs2 = run_cells([a, b], tmp_path, progress=False)
    assert dirs2 == [tmp_path / "cells" / a.key(), tmp_path / "cells" / b.key()]
    assert len(calls) == 1                                   # only the new cell trained
    assert {p.name: p.stat().st_mtime_ns for p in dirs[0].iterdir()} == stamp
    assert dirs[0].stat().st_ino == ino

    calls.clear()
    run_cells([a, b], tmp_path, progress=False)
    assert calls == []


def test_leftover_tmp_folder_is_removed_and_not_counted(tmp_path, monkeypatch):
    cell = tiny_cell()
    cells_dir = tmp_path / "cells"
    debris = cells_dir / f".tmp-{cell.key()}-999999"
    debris.mkdir(parents=True)
    (debris / "rows.csv").write_text("alpha,rank\n1.5,inf\n")      # a half-written cell
    other = cells_dir / ".tmp-a9_r1_s0_deadbeef00-42"
    other.mkdir()
    calls = count_fit_calls(monkeypatch)
    dirs = run_cells([cell], tmp_path, progress=False)
    assert len(calls) == 1                                   # the debris did not count as done
    assert not debris.exists() and not other.exists()
    assert finished(cells_dir) == [cell.key()]
    assert {p.name for p in dirs[0].iterdir()} == CELL_FILES


STEPS = 200


@pytest.mark.slow
def test_resume_after_sigkill(tmp_path, sweep_exe, sub_env, capsys):
    """A sweep process killed (SIGKILL) while its second cell trains: the rerun (in-process: the kill is what needs a
    process) keeps the finished cell untouched, trains the other, and writes the table of both."""
    from jackson.rate_sweep.cli import sweep_main
    out = tmp_path / "sweep"
    # cosine never stops a member early, so each cell trains the full 200 steps (a second or two): the second cell
    # is still running when the first one's folder appears
    cmd = [str(sweep_exe), "--quick", "--alpha", "1.5,2.0", "--schedule", "cosine", "--steps", str(STEPS),
           "--out", str(out)]
    cells_dir = out / "cells"
    proc = subprocess.Popen(cmd, env=sub_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if cells_dir.is_dir() and finished(cells_dir):
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the sweep ended before it could be killed (raise --steps)"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    done = finished(cells_dir)
    assert len(done) == 1 and done[0].startswith("a1.5_"), done
    first = cells_dir / done[0]
    stamp = (first.stat().st_ino, first.stat().st_mtime_ns,
             {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in first.iterdir()})
    assert not (out / "results.csv").exists()

    capsys.readouterr()
    assert sweep_main(cmd[1:]) == 0
    assert "resuming: 1 of 2 cells already finished" in capsys.readouterr().out
    assert (first.stat().st_ino, first.stat().st_mtime_ns,
            {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in first.iterdir()}) == stamp
    assert len(finished(cells_dir)) == 2 and not list(cells_dir.glob(".tmp-*"))
    res = pd.read_csv(out / "results.csv")
    assert sorted(res.alpha.unique()) == [1.5, 2.0]
    assert res.groupby("alpha").m_h.apply(sorted).tolist() == [[1, 2, 3], [1, 2, 3]]
    assert (res.steps == STEPS).all() and res.status.isin(["converged", "budget"]).all()
    # the kept cell's numbers are the ones in the table
    kept = pd.read_csv(first / "rows.csv")
    np.testing.assert_allclose(res[res.alpha == 1.5].test_mse, kept.test_mse, rtol=1e-6)


# ---- determinism and Dask ------------------------------------------------------------------

def _read_cell_tables(d: Path) -> dict:
    return {n: pd.read_csv(table_path(d, n)) for n in ("rows.csv", "blocks.csv", "curve.csv", "learned_spectrum.csv")}


def test_same_config_and_seed_give_same_numbers(tmp_path):
    cells = [tiny_cell(seed=0), tiny_cell(seed=1)]
    d1 = run_cells(cells, tmp_path / "one", progress=False)
    d2 = run_cells(cells, tmp_path / "two", progress=False)
    for a, b in zip(d1, d2):
        assert a.name == b.name
        ta, tb = _read_cell_tables(a), _read_cell_tables(b)
        for name in ta:
            pd.testing.assert_frame_equal(ta[name], tb[name], check_exact=True, obj=name)
    r0, r1 = pd.read_csv(d1[0] / "rows.csv"), pd.read_csv(d1[1] / "rows.csv")
    assert not np.allclose(r0.test_mse, r1.test_mse)          # the seed matters


def test_dask_equals_in_process(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    cells = [tiny_cell(alpha=1.5), tiny_cell(alpha=2.0)]
    local = run_cells(cells, tmp_path / "local", progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        remote = run_cells(cells, tmp_path / "dask", scheduler=cluster.scheduler_address, progress=False)
    assert [p.name for p in remote] == [p.name for p in local]
    for a, b in zip(local, remote):
        ra, rb = pd.read_csv(a / "rows.csv"), pd.read_csv(b / "rows.csv")
        num = ra.select_dtypes("number").columns
        np.testing.assert_allclose(rb[num].to_numpy(float), ra[num].to_numpy(float), rtol=1e-6)
        assert ra.status.tolist() == rb.status.tolist() and ra.cell.tolist() == rb.cell.tolist()
    ta, tb = collect(tmp_path / "local", local), collect(tmp_path / "dask", remote)
    res_a, res_b = pd.read_csv(tmp_path / "local" / "results.csv"), pd.read_csv(tmp_path / "dask" / "results.csv")
    assert len(res_a) == 4 and list(res_a.columns) == list(res_b.columns)
    num = res_a.select_dtypes("number").columns
    np.testing.assert_allclose(res_b[num].to_numpy(float), res_a[num].to_numpy(float), rtol=1e-6)
    assert ta["rows"]["rank"].tolist() == tb["rows"]["rank"].tolist()


# ---- collect / summarize -------------------------------------------------------------------

def test_large_tables_are_gzip_deterministic_and_plain_ones_still_read(tmp_path):
    """write_table: NAME.csv.gz, gzip, read back by pandas as the same frame, the same bytes on every write (no
    time or file name in the header); table_path finds it, and finds an older folder's plain NAME.csv."""
    import gzip
    from jackson.runfolder import write_table
    frame = pd.DataFrame({"alpha": [1.5, 1.5, 2.0], "rank": ["inf", "2", "inf"], "m_h": [1, 2, 3],
                          "train_mse": [0.125, 1e-07, 0.00325], "chosen": [True, False, True]})
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    path = write_table(one, "curve.csv", frame, float_format="%.6e")
    assert path == one / "curve.csv.gz" and sorted(p.name for p in one.iterdir()) == ["curve.csv.gz"]
    raw = path.read_bytes()
    assert raw[:2] == b"\x1f\x8b" and raw[4:8] == bytes(4) and not raw[3] & 0x08    # gzip; mtime 0; no file name
    assert gzip.decompress(raw).decode() == frame.to_csv(index=False, float_format="%.6e")
    pd.testing.assert_frame_equal(pd.read_csv(path, dtype={"rank": str}), frame)
    time.sleep(1.1)                                      # a second later, in another folder: the same bytes
    assert write_table(two, "curve.csv", frame, float_format="%.6e").read_bytes() == raw
    assert write_table(one, "curve.csv", frame, float_format="%.6e").read_bytes() == raw
    assert table_path(one, "curve.csv") == path
    old = tmp_path / "old"                               # a folder written before the table was compressed
    old.mkdir()
    frame.to_csv(old / "curve.csv", index=False, float_format="%.6e")
    assert table_path(old, "curve.csv") == old / "curve.csv"
    pd.testing.assert_frame_equal(pd.read_csv(table_path(old, "curve.csv"), dtype={"rank": str}), frame)
    (one / "curve.csv").write_text("stale\n")           # both there: the compressed one is the run's
    assert table_path(one, "curve.csv") == path
    write_table(one, "curve.csv", frame, float_format="%.6e")      # a rerun into an older folder: no stale copy left
    assert sorted(p.name for p in one.iterdir()) == ["curve.csv.gz"] and path.read_bytes() == raw
    assert table_path(tmp_path / "none", "curve.csv") == tmp_path / "none" / "curve.csv"     # neither: not a file
    assert not table_path(tmp_path / "none", "curve.csv").is_file()


def test_collect_reads_cells_written_plain_or_gzipped_alike(tmp_path):
    """A sweep folder gathered from cells that wrote blocks, curve and learned_spectrum as NAME.csv.gz, and
    from the same cells as an older version wrote them (plain NAME.csv): the same folder tables, byte for byte."""
    meta = {"cell": {"alpha": 1.5, "rank": "inf", "seed": 0, "model": {"width": 8}}, "diagnostics": {}}
    tables = {"blocks.csv": pd.DataFrame({"m_h": [1, 2], "seed": [0, 0], "kind": ["test", "test"], "block": [0, 0],
                                          "mse": [0.5, 0.25]}),
              "curve.csv": pd.DataFrame({"step": [0, 10], "member": [0, 1], "train_mse": [1.0, 0.5],
                                         "lr": [1e-3, 1e-3], "m_h": [1, 2]}),
              "learned_spectrum.csv": pd.DataFrame({"m_h": [1, 2], "s1": [2.0, 3.0], "s2": [0.5, 0.25]})}
    rows = pd.DataFrame({"alpha": [1.5, 1.5], "rank": ["inf", "inf"], "m_h": [1, 2], "seed": [0, 0],
                         "test_mse": [0.5, 0.25]})
    from jackson.runfolder import write_table
    outs = {}
    for how in ("gz", "plain"):
        cell = tmp_path / how / "cells" / "a1.5_rinf_s0"
        cell.mkdir(parents=True)
        (cell / "cell.json").write_text(json.dumps(meta))
        rows.to_csv(cell / "rows.csv", index=False)
        for name, t in tables.items():
            if how == "gz":
                write_table(cell, name, t)
            else:
                t.to_csv(cell / name, index=False)
        collect(tmp_path / how, [cell])
        outs[how] = {p.name: p.read_bytes() for p in (tmp_path / how).iterdir() if p.is_file()}
    assert outs["gz"] == outs["plain"]
    assert {"blocks.csv.gz", "loss_curves.csv.gz", "learned_spectrum.csv.gz"} <= set(outs["gz"])
    spec = pd.read_csv(tmp_path / "plain" / "learned_spectrum.csv.gz")
    assert spec.sigma.tolist() == [2.0, 0.5, 3.0, 0.25]


def test_collect_concatenates_cell_tables(tmp_path):
    # m_h < rank throughout, so no oracle error is exactly zero
    cells = [tiny_cell(alpha=1.5, rank=3, seed=0), tiny_cell(alpha=1.5, rank=3, seed=1),
             tiny_cell(alpha=2.0, rank=3, seed=0)]
    dirs = run_cells(cells, tmp_path, progress=False)
    tabs = collect(tmp_path, dirs)
    res = pd.read_csv(tmp_path / "results.csv")
    parts = pd.concat([pd.read_csv(d / "rows.csv") for d in dirs], ignore_index=True)
    assert len(res) == 6
    np.testing.assert_allclose(res.test_mse, parts.test_mse, rtol=1e-6)
    assert tabs["rows"]["rank"].tolist() == ["3"] * 6
    assert set(tabs["blocks"]["alpha"]) == {1.5, 2.0} and set(tabs["blocks"]["seed"]) == {0, 1}
    for name in ("loss_curves.csv.gz", "learned_spectrum.csv.gz", "blocks.csv.gz"):
        assert (tmp_path / name).is_file() and (tmp_path / name).read_bytes()[:2] == b"\x1f\x8b"   # gzip
        assert not (tmp_path / name[:-len(".gz")]).exists()
    folder_blocks = pd.read_csv(tmp_path / "blocks.csv.gz")                  # the cells' blocks, gzipped
    cell_blocks = pd.concat([pd.read_csv(d / "blocks.csv.gz") for d in dirs], ignore_index=True)
    np.testing.assert_allclose(folder_blocks.mse, cell_blocks.mse, rtol=1e-6)
    s = summarize(tmp_path, tabs, (1, 2), "test")
    assert [(t["alpha"], t["rank"]) for t in s["targets"]] == [(1.5, "3"), (2.0, "3")]
    for t in s["targets"]:
        sel = parts[parts.alpha == t["alpha"]]
        mean = sel.groupby("m_h").test_mse.mean()
        assert {r["m_h"]: r["test_mse"] for r in t["curve"]} == pytest.approx(mean.to_dict())
        assert [r["n_seeds"] for r in t["curve"]] == [sel.seed.nunique()] * 2
        assert t["predicted_exponent"] == pytest.approx(1 - 2 * t["alpha"])
        assert t["fit_m_h"] == [1, 2]
        # two points: the fitted slope is the log-log secant of the mean curve
        want = np.log(mean[2] / mean[1]) / np.log(2)
        assert t["exponents"]["test"]["slope"] == pytest.approx(want, rel=1e-4)
        e = t["exponents"]["test"]
        assert e["lo"] <= e["hi"] if len(t["fit_m_h"]) > 2 else "two m_h only" in e["why_no_interval"]
    md = (tmp_path / "summary.md").read_text()
    assert "## alpha = 1.5, rank = 3" in md and "## alpha = 2, rank = 3" in md
    assert json.loads((tmp_path / "summary.json").read_text())["command"] == "test"


def test_summarize_finite_rank_with_m_h_at_rank(tmp_path):
    cell = tiny_cell(rank=2, m_hs=(1, 2))
    dirs = run_cells([cell], tmp_path, progress=False)
    assert pd.read_csv(dirs[0] / "rows.csv").oracle_mse.iloc[1] == 0.0   # exact oracle at m_h = r
    tabs = collect(tmp_path, dirs)
    s = summarize(tmp_path, tabs, (1, 2), "test")
    t = s["targets"][0]
    assert "knee_drop" in t["checks"]
    assert "| 2 |" in (tmp_path / "summary.md").read_text()
    # the summary's knee line is the one knee rule's judgement, and the ledger's knee rule reads the same verdict
    from jackson.rate_sweep.knee_rule import judge as judge_knee
    from jackson.rate_sweep.rules import knee
    from jackson.verdict import Claim, Run
    assert t["knee"] == judge_knee({k: v for k, v in t.items() if k != "knee"})
    assert t["knee"]["line"] in (tmp_path / "summary.md").read_text()
    run = Run("jackson/t", tmp_path, {"seeds": [0], "quick": False}, s, "test", "")
    claim = Claim("K", "", "", "", "", "knee", "", (("alpha", t["alpha"]), ("rank", "2")))
    o = knee(claim, run)
    if t["degenerate"].get("flag"):       # a tiny fit may be uninformative: the ledger then says so first
        assert o.verdict == "not applicable" and t["degenerate"]["why"] in o.measured
        run.summary = {**s, "targets": [{**t, "degenerate": {"flag": False}}]}
        o = knee(claim, run)
    assert (o.verdict, o.value) == (t["knee"]["verdict"], t["knee"]["drop"])
    assert o.measured.endswith(f"{t['knee']['evidence']}; {t['knee']['why']}")


def test_collect_mixed_finite_and_inf_rank(tmp_path):
    # m_h = 1 < rank only, so this isolates the rank-column bug from the zero-oracle one
    cells = [tiny_cell(rank=2, m_hs=(1,)), tiny_cell(rank=math.inf, m_hs=(1,))]
    dirs = run_cells(cells, tmp_path, progress=False)
    tabs = collect(tmp_path, dirs)
    assert sorted(set(tabs["rows"]["rank"])) == ["2", "inf"]
    s = summarize(tmp_path, tabs, (1, 2), "test")
    assert [t["rank"] for t in s["targets"]] == ["2", "inf"]


# ---- the runner is generic: any object with key() and run(folder) ------------------------------

class _Echo:
    def __init__(self, name, fail=False):
        self.name, self.fail = name, fail

    def key(self):
        return self.name

    def run(self, folder, progress=True):
        (folder / "part.txt").write_text("half")
        if self.fail:
            raise RuntimeError("boom")
        (folder / "done.txt").write_text(self.name)


def test_generic_cells_and_failed_cell_leaves_nothing(tmp_path):
    dirs = run_cells([_Echo("a"), _Echo("b")], tmp_path, progress=False)
    assert [(d / "done.txt").read_text() for d in dirs] == ["a", "b"]
    with pytest.raises(RuntimeError, match="boom"):
        run_cells([_Echo("c", fail=True)], tmp_path, progress=False)
    assert sorted(p.name for p in (tmp_path / "cells").iterdir()) == ["a", "b"]   # no 'c', no .tmp-*


class _Resumable(_Echo):
    """A cell that keeps something for a resume (as cot-dp's checkpoint) until its folder is in place."""

    def __init__(self, name, cells_dir, fail=False):
        super().__init__(name, fail)
        self.cells_dir, self.seen = cells_dir, []

    def cleanup(self):
        self.seen.append((self.cells_dir / self.name / "done.txt").read_text())


def test_cleanup_runs_once_the_cell_folder_is_in_place_and_never_after_a_failure(tmp_path):
    ok, bad = _Resumable("a", tmp_path / "cells"), _Resumable("b", tmp_path / "cells", fail=True)
    run_cells([ok], tmp_path, progress=False)
    assert ok.seen == ["a"]                                   # called after the rename: done.txt readable there
    with pytest.raises(RuntimeError, match="boom"):
        run_cells([bad], tmp_path, progress=False)
    assert bad.seen == []                                     # a failed cell keeps what it kept for a resume


def test_cell_keys_ignore_fields_left_at_their_defaults():
    """Adding a config field with a default later must not invalidate finished cell folders."""
    import dataclasses as dc
    from jackson.hparams import FitConfig
    from jackson.hparams import ModelConfig
    from jackson.sweep import config_hash, non_default
    assert non_default(ModelConfig(**ModelConfig.RECORD_DEFAULTS)) == {} and non_default(FitConfig()) == {}
    assert non_default(ModelConfig(**ModelConfig.RECORD_DEFAULTS, n=8)) == {"n": 8}
    # a default that moved is hashed against what it was (ModelConfig.RECORD_DEFAULTS): the sine default shows
    assert non_default(ModelConfig(features_k=16)) == {"activation": "sin", "in_scale": 60.0}
    cell = tiny_cell()
    nd = non_default(cell)
    assert nd["model"] == {"n": 8, "d_v": 8, "width": 16} and nd["rank"] == "inf" and "phi" not in nd

    @dc.dataclass(frozen=True)
    class Grown(type(cell)):          # the same cell class with one more defaulted field
        new_option: int = 7
    grown = Grown(**{f.name: getattr(cell, f.name) for f in dc.fields(cell)})
    assert config_hash(grown) == config_hash(cell)
    assert config_hash(dc.replace(grown, new_option=8)) != config_hash(cell)


def test_keep_freed_memory_stops_glibc_returning_a_threads_freed_blocks(tmp_path):
    """jackson.sweep.keep_freed_memory (called by run_cell): in a fresh process, a worker thread that allocates,
    touches and frees blocks of 1, 2, ..., 30 MiB takes far fewer page faults with it than without (each fault is
    a page the OS had taken back; without it glibc maps every block afresh, since each is larger than the last
    freed one, its moving mmap threshold).  Measured here (2026-11-25): 119,080 faults plain, 8,198 with it.
    Bytearrays, not numpy arrays: numpy asks for transparent huge pages on large blocks, which made the count
    vary run to run (an 8 MiB numpy workload gave 256-1,038 faults plain, ~522 with it, and failed CI once);
    on a C library without mallopt it says so (False) and changes nothing."""
    import platform
    import subprocess
    import sys
    script = tmp_path / "faults.py"
    script.write_text(
        "import resource, sys, threading\n"
        "if sys.argv[1] == 'keep':\n    from jackson.sweep import keep_freed_memory\n    assert keep_freed_memory()\n"
        "def work():\n    for k in range(1, 31):\n        a = bytearray(k << 20)\n"
        "        a[::4096] = b'\\1' * len(a[::4096])\n        del a\n"
        "r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        "t = threading.Thread(target=work); t.start(); t.join()\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0)\n")
    if platform.libc_ver()[0] != "glibc":
        from jackson.sweep import keep_freed_memory
        assert keep_freed_memory() is False
        return
    root = str(Path(__file__).resolve().parents[1])
    faults = {m: int(subprocess.run([sys.executable, str(script), m], capture_output=True, text=True, check=True,
                                    cwd=root).stdout) for m in ("plain", "keep")}
    assert faults["keep"] < 0.25 * faults["plain"], faults


def test_learned_spectrum_long_and_wide_are_the_same_table():
    """The run's learned_spectrum.csv is tidy (one row per member and i); spectrum_wide gives back the cells'
    s1..sK layout (and passes a wide table of an older folder through), row for row."""
    from jackson.rate_sweep.tables import spectrum_long, spectrum_wide
    wide = pd.DataFrame({"alpha": [1.5, 1.5], "rank": ["inf", "inf"], "seed": [0, 0], "m_ff": [128, 128],
                         "m_h": [1, 2], "s1": [2.0, 3.0], "s2": [0.5, 0.25]})
    long = spectrum_long(wide)
    assert long[["m_h", "i", "sigma"]].values.tolist() == [[1, 1, 2.0], [1, 2, 0.5], [2, 1, 3.0], [2, 2, 0.25]]
    pd.testing.assert_frame_equal(spectrum_wide(long), wide, check_dtype=False)
    assert spectrum_wide(wide) is wide


def test_the_quick_sweep_gives_the_numbers_it_gave_before_the_house_moved(tmp_path):
    """`jackson-sweep --quick` after the rate sweep was split into tables/checks/summary/plots/report and the configs
    moved to torch-free modules: its results.csv against the one commit 7940508 wrote (tests/data/, made by
    `jackson-sweep --quick --threads 1` on the lab machine, where the two came out byte-identical).  Compared at
    rtol 1e-5, not byte for byte: float32 results differ in the last bits between CPUs (test_schedule.ROUNDOFF_RTOL
    and its measurement on another machine).  GELU, the class it ran with then (the default class is sine now)."""
    from jackson.rate_sweep.cli import sweep_main
    assert sweep_main(["--quick", "--threads", "1", "--activation", "gelu", "--out", str(tmp_path / "q")]) == 0
    want = pd.read_csv(Path(__file__).parent / "data" / "quick_sweep_results_7940508.csv", dtype={"rank": str})
    got = pd.read_csv(tmp_path / "q" / "results.csv", dtype={"rank": str})
    assert list(got.columns) == list(want.columns) and len(got) == len(want)
    num = want.select_dtypes("number").columns
    pd.testing.assert_frame_equal(got[num], want[num], rtol=1e-5, atol=0)
    assert got.drop(columns=num).equals(want.drop(columns=num))
