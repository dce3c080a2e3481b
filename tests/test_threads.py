"""The thread rule (jackson.threads): a small training step runs on one thread unless told otherwise."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from jackson import threads
from jackson.fit import bank_step_flops, fit
from jackson.hparams import FitConfig, ModelConfig
from jackson.models import TransformerBank


@pytest.fixture
def untold(monkeypatch):
    """A process nobody told a thread count: no --threads, no $OMP_NUM_THREADS at start-up."""
    monkeypatch.setattr(threads, "_START_ENV", "")
    monkeypatch.setattr(threads, "_ASKED", [])
    monkeypatch.setattr(threads, "usable_cores", lambda: 4)
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def test_the_rule_small_large_and_told(untold, monkeypatch):
    small, large = threads.SMALL_STEP_FLOPS / 2, threads.SMALL_STEP_FLOPS * 2
    assert threads.rule_threads(small) == 1 and threads.rule_threads(large) == 4
    monkeypatch.setattr(threads, "_START_ENV", "3")            # $OMP_NUM_THREADS=3 when the process started
    assert threads.rule_threads(small) == 3 and threads.rule_threads(large) == 3
    monkeypatch.setattr(threads, "_START_ENV", "8")            # never more than the cores
    assert threads.rule_threads(small) == 4
    monkeypatch.setattr(threads, "_START_ENV", "")
    monkeypatch.setattr(os, "environ", dict(os.environ))       # apply_threads writes $OMP_NUM_THREADS
    threads.apply_threads(2)                                   # --threads 2: told
    assert threads.rule_threads(small) == 2 and threads.rule_threads(large) == 2


def test_the_budget_alone_is_not_told(untold, monkeypatch):
    monkeypatch.setattr(os, "environ", dict(os.environ))
    threads.apply_threads(None)                                # a command without --threads
    assert threads.rule_threads(threads.SMALL_STEP_FLOPS / 2) == 1


def test_training_threads_sets_and_restores(untold):
    torch.set_num_threads(2)
    with threads.training_threads(threads.SMALL_STEP_FLOPS / 10) as n:
        assert n == 1 and torch.get_num_threads() == 1
    assert torch.get_num_threads() == 2
    with pytest.raises(RuntimeError):
        with threads.training_threads(0.0):
            raise RuntimeError("a failing fit")
    assert torch.get_num_threads() == 2                        # restored on the way out of an exception too


def estimate_over_count(bank, batch: int, T: int = 16) -> float:
    """The rule's estimate of one training step of `bank` over torch's own FLOP count of that step."""
    from torch.utils.flop_counter import FlopCounterMode
    x = torch.rand(batch, T)
    with FlopCounterMode(display=False) as fc:
        ((bank(x) - x) ** 2).mean(dim=(1, 2)).sum().backward()
    return bank_step_flops(bank, batch, T) / fc.get_total_flops()


def test_step_flops_against_torchs_own_count():
    """The rule's estimate of a bank's step against torch's FLOP counter on the same step (measured: 1.00-1.01 for
    the sweep's banks), for a bank of the card command's shape and one at tau 64."""
    bank = TransformerBank(ModelConfig(), list(range(1, 9)), list(range(8)))
    assert 0.8 <= estimate_over_count(bank, 64) <= 1.25
    assert 0.8 <= estimate_over_count(bank, 16, T=64) <= 1.25


def test_given_bank_step_flops_against_torchs_own_count():
    """The given-features bank's own estimate (its work is the coupling and the token pairs, not its few
    parameters) against torch's count, for the --features given grid's bank (16 m_h x 2 restarts, batch 256)."""
    from jackson.rate_sweep.given import GivenFeatureBank
    m_hs = [m for m in range(1, 17) for _ in range(2)]
    bank = GivenFeatureBank(ModelConfig(features="given"), m_hs, list(range(len(m_hs))), phi="sin", psi="cos")
    assert 0.8 <= estimate_over_count(bank, 256) <= 1.25
    assert bank_step_flops(bank, 256, 16) > threads.SMALL_STEP_FLOPS   # this grid keeps the budget, as before the rule


def test_a_small_fit_runs_on_one_thread_and_says_so(untold):
    torch.set_num_threads(2)
    bank = TransformerBank(ModelConfig(n=8, d_v=8, width=16), [1, 2], [0, 1])
    assert bank_step_flops(bank, 32, 16) < threads.SMALL_STEP_FLOPS
    x = torch.rand(64, 16)
    res = fit(bank, x, x, FitConfig(steps=3, batch_size=32, warmup=1, eval_every=10, eval_size=32), seed=0,
              progress=False)
    assert res.threads == 1 and torch.get_num_threads() == 2


@pytest.mark.slow
def test_the_command_records_the_rules_count(tmp_path, monkeypatch):
    """jackson-sweep --quick with no --threads and no $OMP_NUM_THREADS trains on one thread (cell.json), and with
    --threads 2 on two (a budget of 4 steps at m_h 1, 2: the thread count is set before the first step).  The first
    is a fresh process (what it checks is a start-up with nothing told); --threads 2 runs in-process, the thread
    settings it makes put back afterwards."""
    from jackson.rate_sweep.cli import sweep_main
    args = ["--quick", "--alpha", "1", "--rank", "2", "--m-h", "1,2", "--steps", "4"]

    def cell_threads(out):
        cells = list((out / "cells").glob("*/cell.json"))
        assert cells
        return {json.loads(c.read_text())["torch_threads"] for c in cells}
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    r = subprocess.run([sys.executable, "-m", "jackson.rate_sweep.cli", *args, "--out", str(tmp_path / "r1")], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-800:]
    assert cell_threads(tmp_path / "r1") == {1}
    monkeypatch.setattr(os, "environ", dict(os.environ))       # apply_threads writes $OMP_NUM_THREADS
    monkeypatch.setattr(threads, "_ASKED", [])
    before = torch.get_num_threads()
    try:
        assert sweep_main([*args, "--threads", "2", "--out", str(tmp_path / "r2")]) == 0
    finally:
        torch.set_num_threads(before)
    assert cell_threads(tmp_path / "r2") == {2}
