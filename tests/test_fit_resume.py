"""jackson/fit.py resume checkpoints: a fit stopped at any step and run again ends bit-identical to one
never stopped; a finished fit's checkpoint is used without a step; an unusable checkpoint is set aside,
never deleted; and an rnn-compare cell stopped mid-fit resumes and removes its checkpoints when done."""
from __future__ import annotations

import pandas as pd
import pytest
import torch

from jackson import fit as fit_mod
from jackson.fit import fit
from jackson.hparams import FitConfig
from jackson.models import TransformerBank
from synthetic.pod_target import PODTarget, Spectrum
from conftest import TINY_MODEL

SEEDS = (101, 7)
PLATEAU = FitConfig(steps=24, batch_size=32, lr=3e-3, warmup=4, eval_every=3, patience=1, schedule="plateau",
                    min_improve=0.05, lr_decay=0.3, min_lr=5e-4, eval_size=64)
COSINE = FitConfig(steps=24, batch_size=32, lr=3e-3, warmup=4, eval_every=5, schedule="cosine", min_lr=1e-4,
                   eval_size=64)
CHECKED = FitConfig(**{**COSINE.__dict__, "check_steps": 8, "min_improve": 0.01})    # the budget, then 8 more steps
CYCLED = FitConfig(**{**COSINE.__dict__, "cycles": 3, "min_improve": 0.01})    # up to three 24-step cycles


@pytest.fixture(scope="module")
def data():
    target = PODTarget(Spectrum(alpha=1.5, rank=4), tau=8)
    x = target.sample(200, seed=0)     # 200 = 6 batches of 32 and a remainder: the resumed run crosses epochs
    t = lambda a: torch.tensor(a, dtype=torch.float32)  # noqa: E731
    return t(x), t(target(x))


def _bank():
    return TransformerBank(TINY_MODEL, [TINY_MODEL.n] * len(SEEDS), SEEDS)


class Stop(Exception):
    pass


def _stop_at(monkeypatch, at: int):
    """Make the fit raise when it asks for the batch of step `at` (1-based): a kill between two steps."""
    real = fit_mod.EpochSampler.batch

    def batch(self, step):
        if step + 1 == at:
            raise Stop
        return real(self, step)
    monkeypatch.setattr(fit_mod.EpochSampler, "batch", batch)


def _same(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


@pytest.mark.parametrize("cfg", [PLATEAU, COSINE], ids=["plateau", "cosine"])
@pytest.mark.parametrize("at", [2, 11, 24])
def test_a_stopped_fit_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch, data, cfg, at):
    _stop_and_resume(tmp_path, monkeypatch, data, cfg, at)


@pytest.mark.parametrize("at", [24, 25, 30])
def test_a_fit_stopped_in_its_continuation_check_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch, data, at):
    """Killed before the budget's last step, at the check's first step, and inside the check."""
    _stop_and_resume(tmp_path, monkeypatch, data, CHECKED, at)


@pytest.mark.parametrize("at", [24, 25, 37, 49, 60])
def test_a_fit_stopped_between_its_cycles_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch, data, at):
    """Killed at the first cycle's end, just after a restart, inside the second cycle, after the second cycle's end
    (where members may have stopped and taken back their best weights) and inside the third: the best cycle ends'
    weights travel in the checkpoint."""
    _stop_and_resume(tmp_path, monkeypatch, data, CYCLED, at)


def test_a_resumed_cycled_fit_names_the_cap_it_resumes_towards(tmp_path, monkeypatch, data, capsys):
    """The resume line counts the steps of every cycle (3 x 24), not one cycle's."""
    x, y = data
    ck = tmp_path / "fit.pt"
    with monkeypatch.context() as m:
        _stop_at(m, 30)
        with pytest.raises(Stop):
            fit(_bank(), x, y, CYCLED, seed=3, progress=False, ckpt=ck, ckpt_every_s=0, ident="cell")
    capsys.readouterr()
    fit(_bank(), x, y, CYCLED, seed=3, progress=True, ckpt=ck, ckpt_every_s=0, ident="cell")
    assert "at step 29 of 72" in capsys.readouterr().err


def _stop_and_resume(tmp_path, monkeypatch, data, cfg, at):
    x, y = data
    ref = _bank()
    want = fit(ref, x, y, cfg, seed=3, progress=False)
    ck = tmp_path / "ck" / "fit.pt"
    with monkeypatch.context() as m:
        _stop_at(m, at)
        with pytest.raises(Stop):
            fit(_bank(), x, y, cfg, seed=3, progress=False, ckpt=ck, ckpt_every_s=0, ident="cell")
    assert torch.load(ck, weights_only=True)["step"] == at - 1
    bank = _bank()
    got = fit(bank, x, y, cfg, seed=3, progress=False, ckpt=ck, ckpt_every_s=0, ident="cell")
    assert _same(bank, ref)
    assert got.curve == want.curve and got.status == want.status and got.steps == want.steps
    assert torch.load(ck, weights_only=True)["done"]


def test_a_finished_checkpoint_is_used_without_a_step(tmp_path, monkeypatch, data):
    x, y = data
    ck = tmp_path / "fit.pt"
    ref = _bank()
    want = fit(ref, x, y, PLATEAU, seed=3, progress=False, ckpt=ck, ident="cell")
    monkeypatch.setattr(fit_mod.EpochSampler, "batch", lambda *a: pytest.fail("a finished fit took a step"))
    bank = _bank()
    got = fit(bank, x, y, PLATEAU, seed=3, progress=False, ckpt=ck, ident="cell")
    assert _same(bank, ref) and got.curve == want.curve and got.status == want.status


@pytest.mark.parametrize("spoil", ["garbage", "another_lr", "another_ident", "another_data", "another_bank"])
def test_an_unusable_checkpoint_is_set_aside_and_the_fit_starts_over(tmp_path, data, capsys, spoil):
    x, y = data
    ck = tmp_path / "fit.pt"
    if spoil == "garbage":
        ck.write_bytes(b"\x00not a checkpoint")
    else:
        cfg = FitConfig(**{**PLATEAU.__dict__, "steps": 6, "lr": 1e-3 if spoil == "another_lr" else PLATEAU.lr})
        bank = (TransformerBank(TINY_MODEL, [TINY_MODEL.n], (5,)) if spoil == "another_bank" else _bank())
        fit(bank, x + (1.0 if spoil == "another_data" else 0.0), y, cfg if spoil == "another_lr" else PLATEAU,
            seed=3, progress=False, ckpt=ck, ident="other" if spoil == "another_ident" else "cell")
    before = ck.read_bytes()
    ref = _bank()
    want = fit(ref, x, y, PLATEAU, seed=3, progress=False)
    bank = _bank()
    got = fit(bank, x, y, PLATEAU, seed=3, progress=False, ckpt=ck, ident="cell")
    assert _same(bank, ref) and got.curve == want.curve
    aside = list(tmp_path.glob("fit.pt.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == before       # kept, byte for byte
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fit.pt" in err


def test_a_stopped_rnn_compare_cell_resumes_and_cleans_up(tmp_path, monkeypatch, capsys):
    """A Transformer cell stopped in its fit: the rerun resumes from the checkpoint (a line says so), writes the
    numbers of a cell never stopped, and removes the checkpoint once its folder is in place."""
    from jackson.hparams import ModelConfig
    from jackson.sweep import run_cell
    from rnn_compare.cell import CompareCell
    f = FitConfig(steps=20, batch_size=16, warmup=3, eval_every=5, eval_size=32)
    kw = dict(kernel="exp", alteration="permuted", model="transformer", seeds=(0, 1), tau=6, n_train=64, n_test=32,
              swap=2, transformer=ModelConfig(n=4, d_v=4, width=8, pos="learned", d_pos=4, tau_max=6), fit=f)
    plain = CompareCell(**kw)
    cell = CompareCell(**kw, ckpt_dir=str(tmp_path / "checkpoints"), ckpt_every_s=0)
    assert cell.key() == plain.key()                 # where checkpoints go is not part of what the cell computes
    run_cell(plain, tmp_path / "a", progress=False)
    with monkeypatch.context() as m:
        _stop_at(m, 12)
        with pytest.raises(Stop):
            run_cell(cell, tmp_path / "b", progress=False)
    assert not (tmp_path / "b" / cell.key()).exists()
    assert [p.name for p in (tmp_path / "checkpoints").iterdir()] == [f"{cell.key()}-bank.pt"]
    saved_wall = torch.load(tmp_path / "checkpoints" / f"{cell.key()}-bank.pt", weights_only=True)["wall_s"]
    capsys.readouterr()
    run_cell(cell, tmp_path / "b", progress=True)
    err = capsys.readouterr().err
    assert "resuming from" in err and "at step 11 of 20" in err
    import json
    meta = json.loads((tmp_path / "b" / cell.key() / "cell.json").read_text())
    assert meta["fit_wall_s"] >= saved_wall > 0          # the fit's training time counts the stretch before the stop
    a, b = tmp_path / "a" / plain.key(), tmp_path / "b" / cell.key()
    for name in ("rows.csv", "position_mse.csv", "curve.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(a / name), pd.read_csv(b / name))
    assert list((tmp_path / "checkpoints").iterdir()) == []
    assert "ckpt_dir" not in (b / "cell.json").read_text()    # no machine's path in a committed file


def test_a_stopped_rate_cell_resumes_and_cleans_up(tmp_path, monkeypatch, capsys):
    """A jackson-sweep cell stopped in its fit keeps cells/.ckpt-<key>.pt (no cell folder); the rerun resumes from it
    (a line says so), writes the numbers of a cell never stopped, and removes it once the results are written."""
    from jackson.rate_sweep import cell as rc
    from jackson.rate_sweep.config import sweep_config
    from jackson.sweep import run_cell
    monkeypatch.setattr(rc, "CKPT_EVERY_S", 0.0)             # a checkpoint every step (a real run: every 120 s)
    cell = sweep_config(quick=True, m_h=(1, 2), fit={"steps": 20}).cells()[0]
    run_cell(cell, tmp_path / "a", progress=False)
    ckpt = tmp_path / "b" / f".ckpt-{cell.key()}.pt"
    with monkeypatch.context() as m:
        _stop_at(m, 12)
        with pytest.raises(Stop):
            run_cell(cell, tmp_path / "b", progress=False)
    assert ckpt.is_file() and not (tmp_path / "b" / cell.key()).exists()
    capsys.readouterr()
    run_cell(cell, tmp_path / "b", progress=True)
    assert "resuming from" in capsys.readouterr().err
    a, b = tmp_path / "a" / cell.key(), tmp_path / "b" / cell.key()
    for name in ("rows.csv", "restarts.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(a / name), pd.read_csv(b / name))
    assert not ckpt.exists() and sorted(p.name for p in (tmp_path / "b").iterdir()) == [cell.key()]


FAULT_CASES = [
    {"id": "rnn-compare-stopped-mid-fit-resumes",
     "command": "rnn-compare --quick --table ordering --ckpt-every-s 0 --out s   # rerun after Ctrl-C at step 25 "
                "of a Transformer cell's 40",
     "expect": "the stop exits 130 and keeps s/checkpoints/<cell>-bank.pt (no cell folder); the rerun says "
               "'resuming from .../<cell>-bank.pt at step 24 of 40' in one line, its results.csv equals an "
               "uninterrupted run's, and the checkpoint is removed once the cell is in place"},
    {"id": "fit-unusable-checkpoint-set-aside",
     "command": "rnn-compare ... (or any jackson.fit caller given a checkpoint)   # checkpoint truncated, or of "
                "another run, data or bank",
     "expect": "one line: the checkpoint is renamed <name>.corrupt-<time> (kept byte for byte) and the fit starts "
               "from scratch, ending as a fit never given a checkpoint"},
]


def test_rnn_compare_stopped_mid_fit_resumes(tmp_path, monkeypatch, capsys):
    """The command of the fault case, in-process: Ctrl-C (a KeyboardInterrupt) when the first Transformer fit
    asks for the batch of step 25; the rerun resumes there and writes an uninterrupted run's results."""
    from rnn_compare.cli import compare_main
    monkeypatch.chdir(tmp_path)
    base = ["--quick", "--table", "ordering", "--ckpt-every-s", "0"]
    assert compare_main(base + ["--out", "ref"]) == 0
    import rnn_compare.cell as ex
    real_batch, real_fit = fit_mod.EpochSampler.batch, fit_mod.fit
    calls, hit = [], []          # the desc of each fit begun ("transformer exp original", ...); the stop

    def batch(self, step):
        if step + 1 == 25 and not hit and "transformer" in calls[-1]:
            hit.append(step)
            raise KeyboardInterrupt
        return real_batch(self, step)

    def spy(*a, **k):
        calls.append(k["desc"])
        return real_fit(*a, **k)
    with monkeypatch.context() as m:
        m.setattr(fit_mod.EpochSampler, "batch", batch)
        m.setattr(ex, "fit", spy)
        capsys.readouterr()
        try:
            code = compare_main(base + ["--out", "s"])
        except SystemExit as e:
            code = e.code
    assert hit and code == 130
    cks = list((tmp_path / "s" / "checkpoints").glob("*-bank.pt"))
    assert len(cks) == 1 and "transformer" in cks[0].name
    key = cks[0].name[:-len("-bank.pt")]
    assert not (tmp_path / "s" / "cells" / key).exists()
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:                     # --status reads the checkpoint, writes nothing
        compare_main(base + ["--out", "s", "--status"])
    text = capsys.readouterr().out
    assert stop.value.code == 0 and f"in progress  {key}  bank: step 24 of 40 (60%)" in text
    assert f"4 cells: {len(list((tmp_path / 's' / 'cells').iterdir()))} finished, 1 in progress" in text
    assert compare_main(base + ["--out", "s"]) == 0
    err = capsys.readouterr().err
    assert f"resuming from {cks[0]} at step 24 of 40" in err
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "ref" / "results.csv"),
                                  pd.read_csv(tmp_path / "s" / "results.csv"))
    assert not (tmp_path / "s" / "checkpoints").exists()         # emptied cell by cell, then removed
