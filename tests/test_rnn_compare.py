"""rnn_compare (slice): alterations, linear targets, App. D.1 complexity, App. D.3 mixing spectrum."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rnn_compare.alterations import (AlterationError, check_filter, invert_permutation, mix, permute,
                                     random_filter, swap_ends)
from rnn_compare.mixing import paper_elementwise, spectra_before_after
from rnn_compare.targets import apply_linear, complexity, kernel, mixed_kernel

rng = np.random.default_rng(0)


def test_swap_ends_is_the_papers_permutation_and_inverts():
    p = swap_ends(32, 10)
    assert list(p[:10]) == list(range(22, 32)) and list(p[22:]) == list(range(10))
    assert list(p[10:22]) == list(range(10, 22))
    x = rng.random((5, 32))
    assert np.array_equal(permute(permute(x, p), invert_permutation(p)), x)   # applied then inverted
    q = rng.permutation(32)
    assert np.array_equal(permute(permute(x, q), invert_permutation(q)), x)


def test_docstring_examples():
    a, b, c, d = 1.0, 2.0, 3.0, 4.0
    x = np.array([[a, b, c, d]])
    p = swap_ends(4, 2)
    assert list(p) == [2, 3, 0, 1]
    assert list(permute(x, p)[0]) == [c, d, a, b]
    assert list(mix(x, [0.5, 0.5])[0]) == [(a + b) / 2, (b + c) / 2, (c + d) / 2, d / 2]
    y = apply_linear(np.array([[1.0, 0.0, 2.0]]), kernel("exp", 3))
    np.testing.assert_allclose(y[0], [1, math.exp(-1), 2 + math.exp(-2)])


def test_bad_alterations_name_the_option():
    with pytest.raises(AlterationError, match="--perm"):
        permute(rng.random((2, 4)), [0, 1, 1, 3])          # not a permutation
    with pytest.raises(AlterationError, match="--perm"):
        permute(rng.random((2, 4)), [0, 1, 2])             # sequence longer than the permutation
    with pytest.raises(AlterationError, match="--swap"):
        swap_ends(8, 5)
    with pytest.raises(AlterationError, match="--filter-length"):
        random_filter(0, seed=0)
    with pytest.raises(AlterationError, match="--filter"):
        check_filter([0.8, 0.5])                            # ||theta||_1 > 1


def test_mixing_by_a_delta_changes_nothing_and_matches_a_loop():
    x = rng.random((3, 16))
    assert np.array_equal(mix(x, [1.0, 0, 0, 0, 0]), x)
    th = random_filter(5, seed=3)
    assert abs(np.abs(th).sum() - 1) < 1e-12
    want = np.zeros_like(x)
    for t in range(16):
        for s in range(5):
            if t + s < 16:
                want[:, t] += th[s] * x[:, t + s]
    np.testing.assert_allclose(mix(x, th), want, atol=1e-14)


def test_linear_target_is_a_causal_convolution():
    x = rng.random((4, 12))
    rho = kernel("uniform", 12, seed=5)
    assert np.array_equal(rho, kernel("uniform", 12, seed=5)) and not np.array_equal(rho, kernel("uniform", 12, seed=6))
    want = np.array([[sum(rho[s] * xi[t - s] for s in range(t + 1)) for t in range(12)] for xi in x])
    np.testing.assert_allclose(apply_linear(x, rho), want, atol=1e-12)
    y1 = apply_linear(x, rho)
    x2 = x.copy()
    x2[:, 7] += 1.0                                          # changing the future never changes the past
    np.testing.assert_array_equal(apply_linear(x2, rho)[:, :7], y1[:, :7])


def test_mixed_kernel_reproduces_the_mixed_target_away_from_the_end():
    tau, th = 20, random_filter(5, seed=1)
    rho = kernel("exp", tau)
    x = rng.random((6, tau))
    x[:, :len(th)] = 0.0        # the stationary kernel ignores the sequence start (s <= t); blank it
    y = apply_linear(mix(x, th), rho)                       # H~_t(x) = H_t(theta * x)
    shifts, rt = mixed_kernel(rho, th)
    for t in range(tau - len(th)):                          # away from the zero-padded end
        want = sum(rt[j] * x[:, t - d] for j, d in enumerate(shifts) if 0 <= t - d < tau and d <= t)
        np.testing.assert_allclose(y[:, t], want, atol=1e-12)
    assert np.any(np.abs(rt[shifts < 0]) > 0)               # the mixed kernel reads the future


def test_rnn_complexity_of_exp_kernel_and_prop_6_3():
    c = complexity(kernel("exp", 32))
    assert c["decay_time"] == pytest.approx(1.0) and c["C1"] == pytest.approx(2.0)
    assert c["C2"] == pytest.approx(1.0) and c["C_RNN"] == pytest.approx(2.0)
    # Prop. 6.3: with ||theta||_1 <= 1 the mixed kernel (its causal part) stays under e^{-s}
    shifts, rt = mixed_kernel(kernel("exp", 32), random_filter(5, seed=2))
    causal = rt[shifts >= 0]
    assert np.all(np.abs(causal) <= np.exp(-np.arange(len(causal))) + 1e-12)
    assert complexity(kernel("uniform", 32, seed=0))["C1"] > 10   # hardly decays


def test_mixing_raises_rank_d3_closed_form():
    r = spectra_before_after(paper_elementwise, a=1.0, b=1.0, n=256, k=6)
    np.testing.assert_allclose(r["before"][:2], [1.0, 1.0], rtol=1e-10)
    assert r["before"][2] < 1e-10
    ev = np.sqrt(np.linalg.eigvalsh([[1.0, 1 / math.sqrt(2)], [1 / math.sqrt(2), 0.75]]))[::-1]
    np.testing.assert_allclose(r["after"][:3], [ev[0], 0.5, ev[1]], rtol=1e-8)
    assert r["after"][3] < 1e-10
    np.testing.assert_allclose(r["after"][:3], [1.265, 0.5, 0.4], atol=0.005)   # the paper's rounding


# ---- the RNN bank -----------------------------------------------------------------------------

def test_linear_rnn_is_the_convolution_with_its_kernel():
    import torch
    from rnn_compare.models import RNNBank, RNNConfig
    bank = RNNBank(RNNConfig(hidden=16), seeds=(0, 1))
    x = torch.rand(3, 10, generator=torch.Generator().manual_seed(0))
    y = bank(x)
    torch.testing.assert_close(y, bank.recurrent(x), rtol=1e-4, atol=1e-6)   # Eq. 74 path == recurrence
    k = bank.kernel(10).double().numpy()
    for i in range(2):
        want = apply_linear(x.double().numpy(), k[i])       # sum_s c^T W^s U x(t-s), Eq. (74)
        np.testing.assert_allclose(y[i].detach().double().numpy(), want, rtol=1e-4, atol=1e-6)


def test_rnn_bank_trains_with_the_core_fit_and_equals_members_alone():
    import torch
    from jackson.fit import FitConfig, evaluate, fit
    from rnn_compare.models import RNNBank, RNNConfig
    x = torch.rand(256, 12, generator=torch.Generator().manual_seed(1))
    y = torch.tensor(apply_linear(x.double().numpy(), kernel("exp", 12)), dtype=torch.float32)
    cfg = FitConfig(steps=40, batch_size=32, lr=3e-3, warmup=2, eval_every=10, eval_size=64)
    for act in ("linear", "tanh"):
        bank = RNNBank(RNNConfig(hidden=16, activation=act), seeds=(3, 4))
        before = evaluate(bank, x, y).mean(dim=1)
        fit(bank, x, y, cfg, seed=0, progress=False)
        after = evaluate(bank, x, y).mean(dim=1)
        assert (after < before).all()
        alone = RNNBank(RNNConfig(hidden=16, activation=act), seeds=(4,))
        fit(alone, x, y, cfg, seed=0, progress=False)
        torch.testing.assert_close(alone.members[0].W, bank.members[1].W, rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match="--activation"):
        RNNBank(RNNConfig(activation="relu"), seeds=(0,))


# ---- the commands ---------------------------------------------------------------------------

def _exe(name):
    import sys
    from pathlib import Path
    return str(Path(sys.executable).parent / name)


def test_rnn_compare_quick_smoke(tmp_path, sub_env):
    import subprocess
    import pandas as pd
    out = tmp_path / "rc"
    p = subprocess.run([_exe("rnn-compare"), "--quick", "--table", "ordering", "--out", str(out)],
                       capture_output=True, text=True, env=sub_env, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    res = pd.read_csv(out / "results.csv")
    assert set(res.alteration) == {"original", "permuted"} and set(res.model) == {"rnn", "transformer"}
    assert res.groupby(["alteration", "model"]).seed.nunique().eq(2).all()      # --quick: 2 seeds
    md = (out / "summary.md").read_text()
    assert "## ordering (Table 2" in md and "3.57e-02" not in md and "0.0357" in md   # paper value beside
    assert "not causal" in md                                                   # Prop. 6.1 for permuted
    assert (out / "tables.tex").read_text().count(r"\begin{tabular}") == 1
    assert (out / "mse_bars.png").read_bytes()[:4] == b"\x89PNG"
    long = pd.read_csv(out / "tables_long.csv")
    o = long[(long.alteration == "original") & (long.model == "rnn")]["mean"].item()
    assert o == pytest.approx(res[(res.alteration == "original") & (res.model == "rnn")].test_mse.mean(), rel=1e-5)


@pytest.mark.parametrize("args,option", [
    (["--table", "sideways"], "--table"),
    (["--seeds", "0"], "--seeds"),
    (["--filter-length", "0"], "--filter-length"),
    (["--swap", "20"], "--swap"),                     # sequence shorter than the permutation needs
    (["--pos", "none"], "--pos"),
    (["--attention", "linear"], "--attention"),       # the tables are about the paper's softmax model
    (["--activation", "relu"], "--activation"),
    (["--bogus", "1"], "unrecognized"),
])
def test_rnn_compare_bad_input_one_line(tmp_path, args, option):
    from rnn_compare.cli import compare_main
    import contextlib, io
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as e:
        compare_main([*args, "--out", str(tmp_path / "x")])
    assert e.value.code == 2
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and option in lines[0] and "Traceback" not in err.getvalue()
    assert not (tmp_path / "x").exists()


def test_mixing_spectrum_command(tmp_path, capsys):
    from rnn_compare.cli import spectrum_main
    assert spectrum_main(["--png", str(tmp_path / "d3.png")]) == 0
    out = capsys.readouterr().out
    assert "after:  1.2622  0.5000  0.3961" in out and "before: 1.0000  1.0000  0.0000" in out
    assert (tmp_path / "d3.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(SystemExit) as e:
        spectrum_main(["--kernel", "__import__('os')"])
    assert e.value.code == 2


def test_past_mixing_is_causal_and_matches_its_kernel():
    x = rng.random((4, 16))
    th = random_filter(5, seed=4)
    assert np.array_equal(mix(x, [1.0, 0, 0], "past"), x)
    want = np.zeros_like(x)
    for t in range(16):
        for s in range(5):
            if t - s >= 0:
                want[:, t] += th[s] * x[:, t - s]
    np.testing.assert_allclose(mix(x, th, "past"), want, atol=1e-14)
    rho = kernel("exp", 16)
    y = apply_linear(mix(x, th, "past"), rho)
    shifts, k = mixed_kernel(rho, th, "past")
    assert shifts.min() == 0                                  # no future terms
    np.testing.assert_allclose(y, apply_linear(x, k[:16]), atol=1e-12)   # exactly theta * rho, causal
    x2 = x.copy()
    x2[:, 9] += 1.0
    np.testing.assert_array_equal(apply_linear(mix(x2, th, "past"), rho)[:, :9], y[:, :9])
    # the paper's (future) mixing is not causal: a change at t = 9 moves outputs before 9
    yf = apply_linear(mix(x, th, "future"), rho)
    assert not np.allclose(apply_linear(mix(x2, th, "future"), rho)[:, :9], yf[:, :9])
    with pytest.raises(AlterationError, match="--mix-direction"):
        mix(x, th, "sideways")
