"""cot_dp.cli (the `cot-dp` commands): bad input and faults (FAULT_CASES), data re-runs, mask, --help."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from cot_dp import data
from cot_dp.cli import main as cot_main
from conftest import ends_with_paths
from cot_dp_helpers import PNG, task
from jackson.attention import sparse_mask
from jackson.config import Terminated


# ---- the command line: bad input and faults (issue 14) ---------------------------------------------
#
# FAULT_CASES: one entry per case, {"id", "command" (as a user types it, run in a scratch folder), "expect"};
# reports/RELIABILITY.md is generated from this list.  _HOW holds how each case is set up and checked.

FAULT_CASES: list[dict] = []
_HOW: dict[str, dict] = {}
DATA = "--task arithmetic --size 2 --n-train 32 --n-test 8"          # a dataset made in milliseconds
TINY = "--steps 2 --d-model 8 --n-heads 1 --n-layers 1 --batch-size 2"   # a model trained in a second


def _case(id, command, expect, setup=None, code=2, says=(), check=None):
    FAULT_CASES.append({"id": id, "command": command, "expect": expect})
    _HOW[id] = {"setup": setup, "code": code, "says": says, "check": check}


def _write(folder, size=2, command="setup"):
    """The dataset `cot-dp data $DATA` writes (seed 2023), with `command` recorded in its meta.json."""
    t = task("arithmetic", size)
    return data.write_dataset(folder, t, *data.generate(t, 32, 8, 2023), 2023, command)


def _dataset(p, mp):
    _write(p / "d")


def _dataset_with_run(size):
    def setup(p, mp):
        _write(p / "d", size)
        (p / "d/runs").mkdir()
        (p / "d/runs/keep.txt").write_text("a finished run\n")
    return setup


def _foreign(p, mp):
    (p / "mine").mkdir()
    (p / "mine/notes.txt").write_text("my notes\n")


def _meta(p):
    return json.loads((p / "d/meta.json").read_text())


def _nothing_written(p, text=""):
    assert not (p / "d/runs").exists() and not (p / "s").exists() and not (p / "new").exists()
    assert not (p / "runs").exists() and not (p / "reports").exists()


def _no_temp_left(p):
    assert not [q for q in p.rglob(".tmp-*")], list(p.rglob(".tmp-*"))


def _fail_on_call(k, real, exc):
    calls = [0]

    def fake(*a, **kw):
        calls[0] += 1
        if calls[0] == k:
            raise exc
        return real(*a, **kw)
    return fake


ENOSPC = OSError(28, "No space left on device")

# -- cot-dp data: never delete, never half-write
_case("data-out-folder-with-other-files", f"cot-dp data {DATA} --out mine",
      "refused in one line, exit 2: mine is not a dataset folder; its files untouched, nothing written",
      setup=_foreign, says=["--out: mine", "--force"],
      check=lambda p, t: sorted(x.name for x in (p / "mine").iterdir()) == ["notes.txt"])
_case("data-out-dot", f"cot-dp data {DATA} --out .",
      "refused in one line, exit 2 (it used to empty the current folder, then crash); the folder untouched",
      setup=lambda p, mp: (p / "notes.txt").write_text("x\n"), says=["--out: ."],
      check=lambda p, t: sorted(x.name for x in p.iterdir()) == ["notes.txt"])
_case("data-out-force", f"cot-dp data {DATA} --out mine --force",
      "writes the dataset's own files (chain/, decoder/, meta.json) into mine; notes.txt kept", setup=_foreign,
      code=0, check=lambda p, t: (p / "mine/notes.txt").read_text() == "my notes\n"
      and data.load(p / "mine", task("arithmetic", 2)) is not None and (p / "mine/meta.json").is_file())
_case("data-out-same-dataset", f"cot-dp data {DATA} --out d",
      "'already there', exit 0: d's meta.json names the same task, seed and sizes; nothing rewritten, d/runs kept",
      setup=_dataset_with_run(2), code=0, says=["already there"],
      check=lambda p, t: _meta(p)["command"] == "setup" and (p / "d/runs/keep.txt").is_file())
_case("data-out-other-dataset", f"cot-dp data {DATA} --out d",
      "refused in one line, exit 2: d holds a dataset made with other settings; it is left as it was",
      setup=_dataset_with_run(3), says=["other settings", "--force"],
      check=lambda p, t: _meta(p)["task"]["size"] == 3 and (p / "d/runs/keep.txt").is_file())
_case("data-out-other-dataset-force", f"cot-dp data {DATA} --out d --force",
      "replaces the dataset's own files only; d/runs (a finished training run) kept",
      setup=_dataset_with_run(3), code=0,
      check=lambda p, t: _meta(p)["task"]["size"] == 2 and (p / "d/runs/keep.txt").is_file())
_case("data-out-is-a-file", f"cot-dp data {DATA} --out f.txt",
      "refused in one line, exit 2: --out is a file", setup=lambda p, mp: (p / "f.txt").write_text("x\n"),
      says=["not a folder"], check=lambda p, t: (p / "f.txt").read_text() == "x\n")
_case("data-out-owned-name-is-a-folder", f"cot-dp data {DATA} --out mine --force",
      "refused in one line, exit 2: mine/meta.json is a folder, so the dataset cannot be written; nothing touched",
      setup=lambda p, mp: (_foreign(p, mp), (p / "mine/meta.json").mkdir()), says=["meta.json exists and is not a file"],
      check=lambda p, t: sorted(x.name for x in (p / "mine").iterdir()) == ["meta.json", "notes.txt"])
_case("data-disk-full-new-folder", f"cot-dp data {DATA} --out new",
      "disk full while writing (injected ENOSPC): one line, exit 2; no folder new, no temporary files left",
      setup=lambda p, mp: mp.setattr(data, "write_lines", _fail_on_call(2, data.write_lines, ENOSPC)),
      says=["cannot write", "No space left"], check=lambda p, t: not (p / "new").exists() and _no_temp_left(p) is None)
_case("data-disk-full-replacing", f"cot-dp data {DATA} --out d --force",
      "disk full while writing (injected ENOSPC): one line, exit 2; d keeps its previous complete dataset",
      setup=lambda p, mp: (_dataset_with_run(3)(p, mp),
                           mp.setattr(data, "write_lines", _fail_on_call(3, data.write_lines, ENOSPC))),
      says=["cannot write"], check=lambda p, t: _meta(p)["task"]["size"] == 3 and _no_temp_left(p) is None
      and data.load(p / "d", task("arithmetic", 3)) is not None)
_case("data-fault-while-moving-in", f"cot-dp data {DATA} --out d --force",
      "a fault while the new files are moved in (injected): exit 2; d has no meta.json, so nothing half-written "
      "looks complete; d/runs kept",
      setup=lambda p, mp: (_dataset_with_run(3)(p, mp), mp.setattr(data.os, "replace", _fail_on_call(2, os.replace, ENOSPC))),
      says=["cannot write"], check=lambda p, t: not (p / "d/meta.json").exists() and (p / "d/runs/keep.txt").is_file()
      and _no_temp_left(p) is None)
for _id, _opt, _says in [("seed-negative", "--data-seed -1", "--data-seed"),
                         ("seed-2**63", "--data-seed 9223372036854775808", "--data-seed"),
                         ("n-train-0", "--n-train 0", "--n-train"), ("lis-size-1", "--task lis --size 1", "--size"),
                         ("p-not-prime", "--p 1", "--p"), ("task-unknown", "--task sorting", "--task"),
                         ("value-range-1", "--task lis --value-range 1", "--value-range")]:
    _case(f"data-{_id}", f"cot-dp data {_opt} --out new", f"one line naming {_says}, exit 2; nothing written",
          says=[_says], check=_nothing_written)

# -- cot-dp train: unreadable data folders
_case("train-data-missing", "cot-dp train --data nowhere", "one line naming nowhere, exit 2", says=["nowhere"])


def _bytes(rel, content):
    def setup(p, mp):
        _write(p / "d")
        (p / "d" / rel).write_bytes(content(p / "d" / rel))
    return setup


_case("train-data-not-utf8", "cot-dp train --data d",
      "one line naming d/chain/train_data.txt and its line, exit 2 (it was a UnicodeDecodeError traceback)",
      setup=_bytes("chain/train_data.txt", lambda f: f.read_bytes().replace(b"=", b"\xff=", 2)),
      says=["train_data.txt line 1: not UTF-8"], check=_nothing_written)
_case("train-meta-truncated", "cot-dp train --data d", "one line naming d/meta.json (not valid JSON), exit 2",
      setup=_bytes("meta.json", lambda f: f.read_bytes()[:40]), says=["meta.json: not valid JSON"], check=_nothing_written)
_case("train-meta-without-task", "cot-dp train --data d", "one line naming d/meta.json and its 'task' entry, exit 2",
      setup=_bytes("meta.json", lambda f: b'{"seed": 1}'), says=["meta.json: no usable 'task'"], check=_nothing_written)
_case("train-meta-not-utf8", "cot-dp train --data d", "one line naming d/meta.json (not UTF-8), exit 2",
      setup=_bytes("meta.json", lambda f: b"\xff\xfe{}"), says=["meta.json: not UTF-8"], check=_nothing_written)
_case("train-meta-unknown-task", "cot-dp train --data d", "one line naming d/meta.json and the task it records, exit 2",
      setup=_bytes("meta.json", lambda f: b'{"task": {"name": "sorting", "size": 2, "params": {}}}'),
      says=["meta.json: records a task", "sorting"], check=_nothing_written)
_case("train-data-file-empty", "cot-dp train --data d", "one line naming d/chain/train_data.txt (no examples), exit 2",
      setup=_bytes("chain/train_data.txt", lambda f: b""), says=["train_data.txt: no examples"], check=_nothing_written)
_case("train-data-file-missing", "cot-dp train --data d", "one line naming d/chain/test_data.txt (no such file), exit 2",
      setup=lambda p, mp: (_write(p / "d"), (p / "d/chain/test_data.txt").unlink()),
      says=["test_data.txt: no such file"], check=_nothing_written)
_case("train-malformed-line", "cot-dp train --data d",
      "one line naming the file and line 9 (a prompt with no answer), exit 2",
      setup=_bytes("chain/test_data.txt", lambda f: f.read_bytes() + b"3 + ( 4 =\n"),
      says=["test_data.txt line 9"], check=_nothing_written)
_case("train-no-meta-no-task", "cot-dp train --data d",
      "a folder without meta.json (the benchmark's) and no --task/--size: one line, exit 2",
      setup=lambda p, mp: (_write(p / "d"), (p / "d/meta.json").unlink()), says=["--task, --size"], check=_nothing_written)
_case("train-task-mismatch", "cot-dp train --data d --task lis",
      "one line: d was made for arithmetic size 2 (meta.json), exit 2", setup=_dataset, says=["--task", "arithmetic size 2"],
      check=_nothing_written)
_case("train-max-len-too-short", "cot-dp train --data d --max-len 5",
      "one line: the data's sequences are longer than 5 positions, exit 2", setup=_dataset,
      says=["--max-len"], check=lambda p, t: f"{_meta(p)['max_len']} tokens" in t and _nothing_written(p) is None)

# -- option validation, before anything is read, computed or written
BAD_TRAINING_OPTIONS = [("lr-nan", "--lr nan", "--lr"), ("lr-inf", "--lr inf", "--lr"), ("lr-0", "--lr 0", "--lr"),
                        ("steps-0", "--steps 0", "--steps"), ("batch-size-0", "--batch-size 0", "--batch-size"),
                        ("epochs-inf", "--epochs inf", "--epochs"), ("weight-decay-inf", "--weight-decay inf", "--weight-decay"),
                        ("grad-clip-inf", "--grad-clip inf", "--grad-clip"), ("beta2-1", "--beta2 1", "--beta2"),
                        ("eval-every-0", "--eval-every 0", "--eval-every"), ("schedule-unknown", "--schedule bogus", "--schedule"),
                        ("dropout-nan", "--dropout nan", "--dropout"), ("device-unknown", "--device tpu", "--device"),
                        ("ckpt-every-s-negative", "--ckpt-every-s -1", "--ckpt-every-s")]
for _id, _opt, _says in BAD_TRAINING_OPTIONS + [
        ("dim-0", "--d-model 0", "--d-model"), ("seed-negative", "--seed -1", "--seed"),
        ("seed-2**63", "--seed 9223372036854775808", "--seed"), ("model-unknown", "--model performer", "--model"),
        ("n-eval-negative", "--n-eval -1", "--n-eval"), ("max-len-negative", "--max-len -1", "--max-len"),
        ("options-beside-meta", "--p 13", "--p")]:
    _case(f"train-{_id}", f"cot-dp train --data d {_opt}", f"one line naming {_says}, exit 2; nothing read or written",
          setup=_dataset, says=[_says], check=_nothing_written)
for _id, _opt, _says in BAD_TRAINING_OPTIONS + [
        ("seeds-negative", "--seeds -1", "--seeds"), ("seeds-2**63", "--seeds 9223372036854775808", "--seeds"),
        ("data-seed-negative", "--data-seed -1", "--data-seed"), ("target-acc-nan", "--target-acc nan", "--target-acc"),
        ("n-eval-negative", "--n-eval -1", "--n-eval"), ("task-unknown", "--task sorting", "--task"),
        ("size-too-big", "--size 99", "--size"), ("ed-size-too-small", "--task ed --size 2", "--size"),
        ("dims-not-multiple-of-heads", "--d-model 30", "--d-model"), ("dims-too-small", "--d-model 4", "--d-model"),
        ("dims-0", "--d-model 0", "--d-model"), ("dims-not-a-number", "--d-model sixteen", "--d-model"),
        ("model-unknown", "--model standard,performer", "--model"), ("p-not-prime", "--p 9", "--p"),
        ("two-presets", "--full", "--quick")]:
    _case(f"sweep-{_id}", f"cot-dp sweep --quick {_opt} --out s", f"one line naming {_says}, exit 2; nothing written",
          says=[_says], check=_nothing_written)
_case("sweep-corrupt-dataset-meta", "cot-dp sweep --quick --task arithmetic --model linear --size 2 --out s",
      "a truncated s/data/arithmetic-2/meta.json: one line naming it, exit 2",
      setup=lambda p, mp: ((p / "s/data/arithmetic-2").mkdir(parents=True),
                           (p / "s/command.txt").write_text("cot-dp sweep --quick\n"),    # the earlier run's folder
                           (p / "s/data/arithmetic-2/meta.json").write_text('{"task": {')), says=["meta.json: not valid JSON"],
      check=lambda p, t: not (p / "s/cells").exists())
_case("sweep-quick-default-out", "cot-dp sweep --quick --estimate --task arithmetic --model linear --size 2",
      "a smoke run writes to runs/cot_dp/quick-arithmetic (printed), never under reports/", code=0,
      says=["output: runs/cot_dp/quick-arithmetic"],
      check=lambda p, t: (p / "runs/cot_dp/quick-arithmetic/estimate.csv").is_file() and not (p / "reports").exists())
for _id, _opt, _says in [("length-0", "--length 0", "--length"), ("c-negative", "--c -1", "--c"), ("k-0", "--k 0", "--k"),
                         ("png-missing-folder", "--png nowhere/m.png", "--png"), ("png-unknown-format", "--png m.xyz", "--png"),
                         ("png-is-a-folder", "--png sub.png", "--png")]:
    _case(f"mask-{_id}", f"cot-dp mask {_opt}", f"one line naming {_says}, exit 2; no file written", says=[_says],
          setup=lambda p, mp: (p / "sub.png").mkdir(),
          check=lambda p, t: sorted(x.name for x in p.iterdir()) == ["sub.png"] and not any((p / "sub.png").iterdir()))
_case("unknown-command", "cot-dp frobnicate", "one line listing the commands, exit 2", says=["unknown command"])


# -- the public CoT benchmark's data as it is (issue 16)
def _benchmark_lis(p, mp):
    """Their LIS lines reach 249, above our default range 0..149; no meta.json."""
    t = task("lis", 4, value_range=250)
    lines = [t.solve(f"{a} {b} {c} {d} <sep>".split()) for a, b, c, d in
             [(249, 3, 100, 7), (5, 6, 1, 2), (9, 8, 7, 6), (1, 2, 3, 4), (200, 10, 20, 30), (0, 149, 150, 248)]]
    (p / "lis/chain").mkdir(parents=True)
    (p / "lis/chain/train_data.txt").write_text("".join(" ".join(x) + " \n" for x in lines[:4]))
    (p / "lis/chain/test_data.txt").write_text("".join(" ".join(x) + " \n" for x in lines[4:]))


def _benchmark_arithmetic(p, mp):
    """Their arithmetic test split: prompts only, answers in test_ans.txt, so no held-out CoT."""
    (p / "ar/chain").mkdir(parents=True)
    (p / "ar/chain/train_data.txt").write_text("( 7 - 0 ) * 5 = 7 * 5 = 2 \n1 + 2 * 3 = 1 + 6 = 7 \n")
    (p / "ar/chain/test_data.txt").write_text("3 * 4 - 1 = \n2 / 3 + 1 = \n")
    (p / "ar/chain/test_ans.txt").write_text("0\n9\n")


_case("train-benchmark-lis-values-to-249", f"cot-dp train --data lis --task lis --size 4 {TINY}",
      "trains: --value-range raised from 150 to 250, taken from the data, and said so (it was refused: token '249')",
      setup=_benchmark_lis, code=0, says=["--value-range raised from 150 to 250 (taken from the data)"],
      check=lambda p, t: json.loads((p / "lis/runs/standard-d8-s0/config.json").read_text())
      ["task_resolved"]["params"]["value_range"] == 250
      and bool(ends_with_paths(t, 2, [p / "lis/runs/standard-d8-s0/results.csv", p / "lis/runs/standard-d8-s0/curve.csv"])))
_case("train-benchmark-arithmetic-no-heldout-cot", f"cot-dp train --data ar --task arithmetic --size 2 {TINY}",
      "trains; held-out loss reported as NaN (printed n/a), not 0.0: no test line carries a CoT",
      setup=_benchmark_arithmetic, code=0, says=["held-out loss n/a"],
      check=lambda p, t: np.isnan(pd.read_csv(p / "ar/runs/standard-d8-s0/results.csv").test_loss[0])
      and not (p / "ar/runs/standard-d8-s0/rows.csv").exists()
      and pd.read_csv(p / "ar/runs/standard-d8-s0/curve.csv").test_loss.isna().all())


# -- a run stopped inside a cell resumes inside it (issue 17): the setup runs the command once and stops it
#    at an optimiser step the way a signal does (jackson.config raises KeyboardInterrupt for SIGINT,
#    Terminated for SIGTERM, where the program is)
SWEEP1 = "cot-dp sweep --quick --task arithmetic --model linear --size 2 --ckpt-every-s 0 --out s"   # one cell, 30 steps
TRAIN1 = "cot-dp train --data d --steps 6 --d-model 8 --n-heads 1 --n-layers 1 --batch-size 4 --ckpt-every-s 0"


def _exit_code(command):
    try:
        return cot_main(shlex.split(command)[1:])
    except SystemExit as e:
        return e.code


def _stopped(command, at_step, exc=KeyboardInterrupt, code=130, then=None):
    def setup(p, mp):
        import cot_dp.train as T
        if command.startswith("cot-dp train"):
            _write(p / "d")
        real = T.lr_at

        def lr_at(step, *a, **kw):
            if step == at_step:
                raise exc()
            return real(step, *a, **kw)
        mp.setattr(T, "lr_at", lr_at)
        assert _exit_code(command) == code
        mp.setattr(T, "lr_at", real)
        if then:
            then(p)
    return setup


def _one_checkpoint(folder):
    found = list(folder.glob("*.pt"))
    assert len(found) == 1, found
    return found[0]


def _stopped_sweep_left(p):
    """What a sweep stopped mid-cell leaves: its checkpoint, no cell folder, no temporary folder or file."""
    _one_checkpoint(p / "s/checkpoints")
    assert not [c for c in (p / "s/cells").iterdir()] and _no_temp_left(p) is None and not list(p.rglob("*.tmp[0-9]*"))


def _truncate_checkpoint(p):
    _stopped_sweep_left(p)
    ck = _one_checkpoint(p / "s/checkpoints")
    ck.write_bytes(ck.read_bytes()[:100])


def _same_as_uninterrupted(p):
    """The cell's curve and scores equal those of the same command run without a stop (into u/); no
    temporary file or folder left anywhere."""
    assert _exit_code(SWEEP1.replace("--out s", "--out u")) == 0
    got, want = (next((p / f / "cells").iterdir()) for f in ("s", "u"))
    assert got.name == want.name
    assert (got / "curve.csv").read_bytes() == (want / "curve.csv").read_bytes()
    assert (got / "position_accuracy.csv").read_bytes() == (want / "position_accuracy.csv").read_bytes()
    cols = ["accuracy", "cot_exact", "test_loss", "steps"]
    assert pd.read_csv(got / "rows.csv")[cols].equals(pd.read_csv(want / "rows.csv")[cols])
    assert _no_temp_left(p) is None and not list(p.rglob("*.tmp[0-9]*"))


def _checkpoints_left(p):
    return sorted(f.name.split(".pt")[1] for f in (p / "s/checkpoints").iterdir()) if (p / "s/checkpoints").exists() else []


_case("sweep-stopped-mid-cell-resumes", SWEEP1 + "   # rerun after Ctrl-C at step 20 of the cell's 30",
      "the stop exits 130 and keeps s/checkpoints/<cell>.pt (no cell folder, no temporary folder); the rerun says "
      "'resuming from .../<cell>.pt at step 19 of 30' in one line, and its curve.csv and "
      "scores equal an uninterrupted run's; the checkpoint is removed once the cell's results are in place",
      setup=_stopped(SWEEP1, 20, then=_stopped_sweep_left), code=0,
      says=["resuming from", "at step 19 of 30"],
      check=lambda p, t: _same_as_uninterrupted(p) is None and t.count("resuming from") == 1 and not _checkpoints_left(p))
_case("sweep-sigterm-mid-cell-resumes", SWEEP1 + "   # rerun after kill -TERM at step 5",
      "the stop exits 143 and keeps the checkpoint; the rerun resumes at step 4 of 30 and equals an uninterrupted run",
      setup=_stopped(SWEEP1, 5, Terminated, 143, then=_stopped_sweep_left), code=0, says=["at step 4 of 30"],
      check=lambda p, t: _same_as_uninterrupted(p) is None and not _checkpoints_left(p))
_case("sweep-truncated-train-checkpoint", SWEEP1 + "   # rerun after s/checkpoints/<cell>.pt was cut short",
      "one line: the checkpoint is set aside as <cell>.pt.corrupt-<time> (kept, not deleted), the cell trains from "
      "scratch and the sweep finishes with an uninterrupted run's numbers",
      setup=_stopped(SWEEP1, 20, then=_truncate_checkpoint), code=0, says=["cannot resume from", "training from scratch"],
      check=lambda p, t: t.count("cannot resume") == 1 and "resuming from" not in t
      and [x[:9] for x in _checkpoints_left(p)] == [".corrupt-"] and _same_as_uninterrupted(p) is None)
_case("train-stopped-resumes", TRAIN1 + "   # rerun after Ctrl-C at step 4 of 6",
      "the stop exits 130 and keeps <out>/<cell>.pt; the rerun resumes at step 3 of 6 (one line), writes results.csv "
      "and removes the checkpoint",
      setup=_stopped(TRAIN1, 4, then=lambda p: _one_checkpoint(p / "d/runs/standard-d8-s0")), code=0,
      says=["resuming from", "at step 3 of 6"],
      check=lambda p, t: (p / "d/runs/standard-d8-s0/results.csv").is_file()
      and not list((p / "d/runs/standard-d8-s0").glob("*.pt*")))


@pytest.mark.parametrize("case", FAULT_CASES, ids=[c["id"] for c in FAULT_CASES])
def test_fault_case(case, tmp_path, monkeypatch, capsys):
    how = _HOW[case["id"]]
    monkeypatch.chdir(tmp_path)
    if how["code"] == 2:   # a refused command computes nothing (and a regression cannot start a long training)
        monkeypatch.setattr("cot_dp.cell.train", lambda *a, **k: pytest.fail("trained despite the bad input"))
    if how["setup"]:
        how["setup"](tmp_path, monkeypatch)
    argv = shlex.split(case["command"], comments=True)   # "   # ..." says what the setup did
    assert argv[0] == "cot-dp"
    try:
        code = cot_main(argv[1:])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    assert code == how["code"], (out, err)
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("cot-dp") and ": error: " in lines[0], err
    for s in how["says"]:
        assert s in out + err, (s, out, err)
    if how["check"]:
        assert how["check"](tmp_path, out + err) is not False


def test_fault_cases_are_listed_once_with_a_command_and_an_expectation():
    ids = [c["id"] for c in FAULT_CASES]
    assert len(ids) == len(set(ids)) == len(_HOW)
    assert all(set(c) == {"id", "command", "expect"} and c["command"].startswith("cot-dp ") and c["expect"]
               for c in FAULT_CASES)


@pytest.mark.slow
def test_killed_data_run_leaves_the_earlier_dataset_or_nothing(tmp_path):
    """SIGKILL while `cot-dp data` writes (held there after its first file): an existing folder keeps its
    earlier complete dataset byte for byte, a new folder does not appear; only a hidden .tmp-* is left."""
    slow = ("import sys, time\nfrom cot_dp import data\nfrom cot_dp.cli import main\nreal = data.write_lines\n"
            "def held(path, lines):\n    real(path, lines)\n    print('wrote', flush=True)\n    time.sleep(60)\n"
            "data.write_lines = held\nmain(sys.argv[1:])\n")
    _write(tmp_path / "d", size=3)
    (tmp_path / "d/runs").mkdir()
    before = {f: (tmp_path / "d" / f).read_bytes() for f in data.OWNED_FILES}
    for out in ("d", "new"):
        proc = subprocess.Popen([sys.executable, "-c", slow, "data", *DATA.split(), "--out", out, "--force"],
                                cwd=tmp_path, stdout=subprocess.PIPE, env={**os.environ, "OMP_NUM_THREADS": "1"})
        assert proc.stdout.readline().strip() == b"wrote"
        proc.kill()
        proc.wait()
        proc.stdout.close()
    assert {f: (tmp_path / "d" / f).read_bytes() for f in data.OWNED_FILES} == before
    assert (tmp_path / "d/runs").is_dir() and not (tmp_path / "new").exists()
    assert [q.name.startswith(".tmp-") for q in tmp_path.iterdir() if q.name not in ("d",)] == [True]


def test_data_rerun_over_a_dataset_with_runs_inside_keeps_them(tmp_path, capsys):
    args = ["data", *DATA.split(), "--out", str(tmp_path / "d")]
    assert cot_main(args) == 0
    ends_with_paths(capsys.readouterr().out, 1, [tmp_path / "d/chain/train_data.txt", tmp_path / "d/chain/test_data.txt"])
    (tmp_path / "d/runs/standard-d8-s0").mkdir(parents=True)
    (tmp_path / "d/runs/standard-d8-s0/rows.csv").write_text("accuracy\n1\n")
    before = {f: (tmp_path / "d" / f).stat().st_mtime_ns for f in data.OWNED_FILES}
    assert cot_main(args) == 0
    assert "already there" in capsys.readouterr().out
    assert {f: (tmp_path / "d" / f).stat().st_mtime_ns for f in data.OWNED_FILES} == before
    assert (tmp_path / "d/runs/standard-d8-s0/rows.csv").is_file()


def test_mask_command_prints_the_pattern(capsys, tmp_path):
    assert cot_main(["mask", "--length", "16", "--png", str(tmp_path / "m.png")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("L = 16, B = 4")
    rows = out[1:17]
    assert all(("".join("#" if c else "." for c in r.tolist())) == rows[i]
               for i, r in enumerate(sparse_mask(16, 4, 1, 1)))
    assert (tmp_path / "m.png").read_bytes()[:8] == PNG
    assert out[-1] == f"figure: {tmp_path / 'm.png'}"


@pytest.mark.parametrize("command", ["data", "sweep", "train", "mask"])
def test_help_lists_every_option(capsys, command):
    with pytest.raises(SystemExit) as e:
        cot_main([command, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert {"data": "--n-train", "sweep": "--estimate", "train": "--max-len", "mask": "--length"}[command] in out
