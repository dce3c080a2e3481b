"""rnn_compare (slice): alterations, linear targets, App. D.1 complexity, App. D.3 mixing spectrum."""
from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import assert_paper_figure, ends_with_paths
from jackson.config import UsageError
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
    from rnn_compare.models import RNNBank
    from rnn_compare.settings import RNNConfig
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
    from jackson.fit import evaluate, fit
    from jackson.hparams import FitConfig
    from rnn_compare.models import RNNBank
    from rnn_compare.settings import RNNConfig
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


@pytest.mark.slow
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
    assert set(res.mix_direction) == {"future"}                                 # the run's direction, on every row
    md = (out / "summary.md").read_text()
    assert "## ordering (Table 2" in md and "3.57e-02" not in md and "0.0357" in md   # paper value beside
    assert "not causal" in md                                                   # Prop. 6.1 for permuted
    assert (out / "tables.tex").read_text().count(r"\begin{tabular}") == 1
    assert (out / "mse_bars.png").read_bytes()[:4] == b"\x89PNG"
    assert_paper_figure(out / "mse_bars.png")
    long = pd.read_csv(out / "tables_long.csv")
    o = long[(long.alteration == "original") & (long.model == "rnn")]["mean"].item()
    assert o == pytest.approx(res[(res.alteration == "original") & (res.model == "rnn")].test_mse.mean(), rel=1e-5)
    # per-position held-out MSE: tau = 12 positions per member, and its mean over t is the member's test_mse
    pos = pd.read_csv(out / "position_mse.csv")
    assert all(sorted(g) == list(range(12)) for _, g in pos.groupby(["alteration", "model", "seed"]).t)
    both = pos.groupby(["alteration", "model", "seed"]).test_mse.mean().reset_index().merge(
        res, on=["alteration", "model", "seed"], suffixes=("_pos", ""))
    np.testing.assert_allclose(both.test_mse_pos, both.test_mse, rtol=1e-5)
    assert "## Where the error sits" in md and "| exp | permuted | transformer |" in md
    assert_paper_figure(out / "position_mse.png")
    figs = {f["file"]: f["caption"] for f in json.loads((out / "report.json").read_text())["figures"]}
    assert "grey: the first and last 3 steps" in figs["position_mse.png"]


def test_rnn_compare_quick_mixing_with_a_given_filter(tmp_path, sub_env):
    """--filter end to end: the summary names the taps, summary.json keeps them, the coupling table is that
    filter's (no negative entry for nonnegative taps)."""
    import subprocess
    import pandas as pd
    out = tmp_path / "rc"
    p = subprocess.run([_exe("rnn-compare"), "--quick", "--table", "mixing", "--filter", "0.25,0.5,0.125",
                        "--mix-direction", "past", "--out", str(out)],
                       capture_output=True, text=True, env=sub_env, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert json.loads((out / "summary.json").read_text())["theta"] == [0.25, 0.5, 0.125]
    assert "the filter theta = (0.25, 0.5, 0.125) given by --filter" in (out / "summary.md").read_text()
    spec = pd.read_csv(out / "coupling_spectra.csv")
    assert (spec[spec.alteration == "mixed"].negative == 0).all()
    assert json.loads((out / "config.json").read_text())["filter"] == "0.25,0.5,0.125"
    last = p.stdout.strip().splitlines()[-4:]                  # the headline, then the paths it wrote
    assert last[0].startswith("altered/original held-out MSE, RNN vs Transformer: mixing "), last
    ends_with_paths(p.stdout, 3, [out / "results.csv", out / "summary.md", out / "mse_bars.png",
                                  out / "position_mse.png", out / "coupling_spectra.png"])
    figs = {f["file"]: f["caption"] for f in json.loads((out / "report.json").read_text())["figures"]}
    assert "grey" not in figs["position_mse.png"]        # no permuted target: no exchanged blocks drawn or named


@pytest.mark.slow
def test_a_model_whose_every_seed_diverged_still_gets_its_tables_and_figures(tmp_path, sub_env):
    """--rnn-lr 1 (the largest rate the command takes) makes every RNN member diverge: the run ends 0, names
    them, draws no point for them (it crashed in the plot before), and leaves them out of the per-position table as
    out of the means."""
    import subprocess
    out = tmp_path / "rc"
    p = subprocess.run([_exe("rnn-compare"), "--quick", "--table", "uniform", "--rnn-lr", "1", "--out", str(out)],
                       capture_output=True, text=True, env=sub_env, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    res = pd.read_csv(out / "results.csv")
    assert res[res.model == "rnn"].status.str.startswith("diverged").all()
    assert set(pd.read_csv(out / "position_mse.csv").model) == {"transformer"}
    assert "| rnn | all seeds diverged |" in (out / "summary.md").read_text()
    assert_paper_figure(out / "mse_bars.png")
    assert_paper_figure(out / "position_mse.png")


def test_zone_table_and_position_section_against_a_hand_table():
    """Zones split the output positions into the two exchanged blocks and the middle; the section's
    ratios are the altered target's zone means over the original's (median over seeds)."""
    from rnn_compare.config import CompareConfig
    from rnn_compare.positions import position_section, zone_of, zone_table
    cfg = dataclasses.replace(CompareConfig(), tau=6, swap=2)
    assert [zone_of(t, 6, 2) for t in range(6)] == ["first", "first", "middle", "middle", "last", "last"]
    rows = []
    for alt, scale in (("original", 1.0), ("permuted", 10.0)):
        for seed, extra in ((0, 1.0), (1, 3.0)):
            for t in range(6):       # MSE t + 1, times the alteration's scale, times 1 or 3 by seed
                rows.append({"kernel": "exp", "alteration": alt, "model": "transformer", "seed": seed, "t": t,
                             "test_mse": (t + 1) * scale * extra})
    z = zone_table(pd.DataFrame(rows), cfg).set_index(["alteration", "seed"])
    assert z.loc[("original", 0), ["first", "middle", "last"]].tolist() == [1.5, 3.5, 5.5]
    assert z.loc[("permuted", 1), "last"] == pytest.approx(165.0)
    md = "\n".join(position_section(pd.DataFrame(rows), cfg))
    # median over seeds 0 and 1 of the first zone: (1.5 + 4.5) / 2 = 3; permuted / original = 10 in each zone
    assert "| exp | original | transformer | 3 | 7 | 11 |  |  |  |" in md
    assert "| exp | permuted | transformer | 30 | 70 | 110 | 10 | 10 | 10 |" in md


def test_concentration_finds_the_hot_positions_and_their_share():
    """One position 400x worse, the others 2x: median ratio 2, one hot position holding its share of the
    altered MSE, and the ratio without it 2 (computed here by hand)."""
    from rnn_compare.positions import concentration
    rows = []
    for t in range(8):
        for seed in (0, 1, 2):
            rows.append({"kernel": "exp", "alteration": "original", "model": "transformer", "seed": seed, "t": t,
                         "test_mse": 1.0})
            rows.append({"kernel": "exp", "alteration": "permuted", "model": "transformer", "seed": seed, "t": t,
                         "test_mse": 400.0 if t == 5 else 2.0 + seed - 1})   # median over seeds: 2
    (r,) = concentration(pd.DataFrame(rows)).to_dict("records")
    assert r["median_ratio"] == pytest.approx(2.0) and r["hot"] == [(5, pytest.approx(400.0))]
    assert r["hot_share"] == pytest.approx(400.0 / (400.0 + 7 * 2.0))
    assert r["ratio_without_hot"] == pytest.approx(2.0) and r["ratio_all"] == pytest.approx((400 + 14) / 8)


# ---- bad input and hostile input: one line, exit 2, nothing computed or written --------------------
# Each case is run as typed, in an empty working folder (rnn-compare's default --out is relative), and
# must leave that folder empty.  SAYS: a piece of the one-line message each refused case prints.

_COMPARE = [
    ("compare-table-unknown", "--table sideways", "--table"),
    ("compare-unknown-option", "--bogus 1", "unrecognized"),
    ("compare-seeds-not-a-number", "--seeds three", "--seeds: cannot read 'three'"),
    ("compare-seeds-twice", "--seeds 0,0", "--seeds: each seed once"),
    ("compare-seeds-negative", "--seeds -1", "--seeds"),
    ("compare-old-count-not-a-number", "--n-seeds three", "--n-seeds / --first-seed: cannot read 'three'"),
    ("compare-ckpt-every-negative", "--ckpt-every-s -1", "--ckpt-every-s: must be a number of seconds >= 0"),
    ("compare-seeds-huge", "--seeds 99999999999999999999", "--seeds"),
    ("compare-data-seed-23-digits", "--data-seed 12345678901234567890123", "argument --data-seed: cannot read '12345678901234567890123'"),
    ("compare-data-seed-negative", "--data-seed -1", "--data-seed"),
    ("compare-filter-seed-negative", "--filter-seed -1", "--filter-seed"),
    ("compare-tau-one", "--tau 1", "--tau"),
    ("compare-rnn-retries-negative", "--rnn-retries -1", "--rnn-retries: must be in 0..10"),
    ("compare-rnn-retries-huge", "--rnn-retries 11", "--rnn-retries: must be in 0..10"),
    ("compare-n-test-zero", "--n-test 0", "--n-test"),
    ("compare-n-train-below-batch", "--n-train 10", "--n-train"),
    ("compare-filter-length-zero", "--filter-length 0", "--filter-length"),
    ("compare-filter-length-huge", "--filter-length 99999999999", "--filter-length: must be in 1..--tau"),
    ("compare-filter-not-numbers", "--filter 0.5,abc", "--filter: give comma-separated numbers"),
    ("compare-filter-norm-above-one", "--filter 0.8,0.5", "--filter: needs ||theta||_1 <= 1"),
    ("compare-filter-nan", "--filter 0.5,nan", "--filter: every tap must be a finite number"),
    ("compare-filter-longer-than-tau", "--tau 4 --swap 2 --filter 0.1,0.1,0.1,0.1,0.1", "--filter: at most --tau (4) taps"),
    ("compare-swap-too-long", "--swap 20", "--swap"),
    ("compare-mix-direction-unknown", "--mix-direction sideways", "--mix-direction"),
    ("compare-pos-none", "--pos none", "--pos"),
    ("compare-attention-linear", "--attention linear", "--attention"),
    ("compare-features-given", "--features given", "--features"),
    ("compare-activation-relu", "--activation relu", "--activation"),
    ("compare-hidden-zero", "--hidden 0", "--hidden: must be >= 1"),
    ("compare-width-zero", "--width 0", "--width: must be >= 1"),
    ("compare-depth-zero", "--depth 0", "--depth: must be >= 1"),
    ("compare-n-zero", "--n 0", "--n: must be >= 1"),
    ("compare-d-v-zero", "--d-v 0", "--d-v: must be >= 1"),
    ("compare-d-pos-zero", "--d-pos 0", "--d-pos: must be >= 1"),
    ("compare-tau-max-below-tau", "--tau-max 8", "--tau-max"),
    ("compare-rnn-d-in-two", "--rnn-d-in 2", "--rnn-d-in"),
    ("compare-transformer-d-in-two", "--transformer-d-in 2", "--transformer-d-in"),
    ("compare-qk-init-nan", "--qk-init nan", "argument --qk-init: cannot read 'nan' (nan is not a finite number)"),
    ("compare-in-scale-zero", "--in-scale 0", "--in-scale"),
    ("compare-fit-schedule-bogus", "--schedule bogus", "--schedule: choose cosine or plateau"),
    ("compare-rnn-fit-schedule-bogus", "--rnn-schedule bogus", "--rnn-schedule"),
    ("compare-fit-steps-zero", "--steps 0", "--steps: must be >= 1"),
    ("compare-rnn-fit-batch-size-zero", "--rnn-batch-size 0", "--rnn-batch-size"),
    ("compare-fit-eval-every-zero", "--eval-every 0", "--eval-every"),
    ("compare-fit-eval-size-zero", "--eval-size 0", "--eval-size"),
    ("compare-fit-patience-zero", "--patience 0", "--patience"),
    ("compare-fit-warmup-negative", "--warmup -1", "--warmup"),
    ("compare-fit-lr-zero", "--lr 0", "--lr: Adam's peak learning rate must be in 0 < lr <= 1"),
    ("compare-fit-lr-nan", "--lr nan", "argument --lr: cannot read 'nan' (nan is not a finite number)"),
    ("compare-rnn-fit-lr-inf", "--rnn-lr inf", "argument --rnn-lr: cannot read 'inf' (inf is not a finite number)"),
    ("compare-fit-min-lr-above-lr", "--min-lr 1", "--min-lr: must be in 0..--lr"),
    ("compare-rnn-fit-min-lr-negative", "--rnn-min-lr -1e-5", "--rnn-min-lr"),
    ("compare-fit-lr-decay-one", "--lr-decay 1", "--lr-decay"),
    ("compare-fit-min-improve-one", "--min-improve 1", "--min-improve"),
    ("compare-fit-converged-lr-frac-two", "--converged-lr-frac 2", "--converged-lr-frac"),
    ("compare-fit-explode-zero", "--explode 0", "--explode"),
    ("compare-fit-explode-inf", "--explode inf", "argument --explode: cannot read 'inf' (inf is not a finite number)"),
    ("compare-fit-cycles-zero", "--cycles 0", "--cycles: at least one cosine cycle, got 0"),
    ("compare-rnn-fit-cycles-on-plateau", "--rnn-cycles 2 --rnn-schedule plateau",
     "--rnn-cycles: repeats the cosine schedule, so it takes --rnn-schedule cosine and no --rnn-check-steps"),
    ("compare-fit-check-steps-negative", "--check-steps -1", "--check-steps: must be >= 0, got -1"),
]
_SPECTRUM = [
    ("spectrum-kernel-lambda-shell", "--kernel \"(lambda: __import__('os').system('touch pwned'))()\"",
     "--kernel: calling a computed value is not allowed"),
    # the escape the old eval-behind-a-name-check let through (the names hide in the lambda's own code):
    ("spectrum-kernel-lambda-escape",
     "--kernel \"(lambda: [c for c in ().__class__.__bases__[0].__subclasses__() if c.__name__ == 'catch_warnings']"
     "[0]()._module.__builtins__['__import__']('os').system('touch pwned'))()\"",
     "--kernel: calling a computed value is not allowed"),
    ("spectrum-kernel-subclasses", "--kernel \"().__class__.__bases__[0].__subclasses__()\"",
     "--kernel: calling a computed value is not allowed"),
    ("spectrum-kernel-import", "--kernel \"__import__('os')\"", "--kernel: unknown function '__import__'"),
    ("spectrum-kernel-attribute", "--kernel \"u.__class__\"", "--kernel: attribute access is not allowed: 'u.__class__'"),
    ("spectrum-kernel-open", "--kernel \"open('pwned', 'w')\"", "--kernel: unknown function 'open'"),
    ("spectrum-kernel-divide-by-zero", '--kernel "u/0*v"', "--kernel: 'u/0*v' is not finite on the grid (divide by zero"),
    ("spectrum-kernel-nonfinite-after-mixing", '--kernel "sqrt(1-v)"', "--kernel: 'sqrt(1-v)' is not finite on the grid"),
    ("spectrum-a-nan", "--a nan", "--a, --b: must be finite numbers"),
    ("spectrum-b-nan", "--b nan", "--a, --b: must be finite numbers"),
    ("spectrum-b-inf", "--b inf", "--a, --b: must be finite numbers"),
    ("spectrum-a-b-overflow", "--a 1e308 --b 1e308", "--a, --b: a u + b v overflows"),
    ("spectrum-a-not-a-number", "--a one", "argument --a"),
    ("spectrum-k-zero", "--k 0", "--k: must be in 1..256"),
    ("spectrum-k-too-many", "--k 1000", "--k: must be in 1..256"),
    ("spectrum-png-unwritable-place", "--png /proc/x/d3.png", "--png"),
    ("spectrum-png-is-a-folder", "--png .", "--png: . is a folder"),
    ("spectrum-png-unknown-format", "--png d3.xyz", "--png: cannot write .xyz figures"),
    ("spectrum-out-under-a-file", "--out /dev/null/d3", "--out"),
]
SAYS = {i: says for i, _, says in _COMPARE + _SPECTRUM}
_EXPECT_REFUSED = "exit 2, one line 'prog: error: {}...', nothing computed or written"
FAULT_CASES = (
    [{"id": i, "command": f"rnn-compare {args}", "expect": _EXPECT_REFUSED.format(says)} for i, args, says in _COMPARE]
    + [{"id": i, "command": f"rnn-mixing-spectrum {args}", "expect": _EXPECT_REFUSED.format(says)}
       for i, args, says in _SPECTRUM]
    + [{"id": "spectrum-png-missing-folder", "command": "rnn-mixing-spectrum --png new/sub/d3.png",
        "expect": "exit 0: the missing folders new/sub/ are created and the figure written there"},
       {"id": "compare-quick-default-folder", "command": "rnn-compare --quick",
        "expect": "writes to runs/rnn_compare-quick (says so first), never into the committed reports/rnn_compare/"}])


def _run(command: str, capsys) -> tuple[int, str, str]:
    """Run a command line in-process; (exit code, stdout, stderr)."""
    import shlex
    from rnn_compare.cli import compare_main, spectrum_main
    argv = shlex.split(command)
    main = {"rnn-compare": compare_main, "rnn-mixing-spectrum": spectrum_main}[argv[0]]
    try:
        code = main(argv[1:])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def _case(case_id: str) -> dict:
    return next(c for c in FAULT_CASES if c["id"] == case_id)


def test_every_fault_case_is_checked():
    ids = [c["id"] for c in FAULT_CASES]
    assert len(ids) == len(set(ids))
    assert set(ids) - set(SAYS) == {"spectrum-png-missing-folder", "compare-quick-default-folder"}
    assert all(set(c) == {"id", "command", "expect"} and all(isinstance(v, str) for v in c.values())
               for c in FAULT_CASES)


REFUSED = [c for c in FAULT_CASES if c["id"] in SAYS]


@pytest.mark.parametrize("case", REFUSED, ids=[c["id"] for c in REFUSED])
def test_bad_and_hostile_input_one_line_exit_2_nothing_written(case, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(case["command"], capsys)
    prog = case["command"].split()[0]
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: ") and "Traceback" not in err
    assert SAYS[case["id"]] in lines[0]
    assert out == ""                                  # refused before anything was computed or printed
    assert list(tmp_path.iterdir()) == []             # no output folder, no 'pwned', no figure
    assert not Path("/proc/x").exists()


def test_png_into_a_missing_folder_creates_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(_case("spectrum-png-missing-folder")["command"], capsys)
    assert code == 0 and err == ""
    assert (tmp_path / "new" / "sub" / "d3.png").read_bytes()[:4] == b"\x89PNG"
    assert "figure: new/sub/d3.png" in out


def test_quick_defaults_to_a_scratch_folder_outside_reports(tmp_path, monkeypatch, capsys):
    import rnn_compare.experiment as ex
    seen = []

    def fake_run(cfg, command, progress=True):        # the same command, without the training
        seen.append(cfg)
        return {"tables": {}}
    monkeypatch.setattr(ex, "run_compare", fake_run)
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(_case("compare-quick-default-folder")["command"], capsys)
    assert code == 0 and seen[-1].out == "runs/rnn_compare-quick" and seen[-1].quick
    assert not Path(seen[-1].out).resolve().is_relative_to(tmp_path.resolve() / "reports")
    _run("rnn-compare --quick --out mine", capsys)           # an --out given still wins
    assert seen[-1].out == "mine" and seen[-1].quick
    _run("rnn-compare", capsys)                               # the full run keeps its committed folder
    assert seen[-1].out == "reports/rnn_compare/default"
    assert list(tmp_path.iterdir()) == []


def test_min_lr_bounds_are_inclusive():
    from rnn_compare.config import CompareConfig, validate
    cfg = CompareConfig(out="/tmp/unused-rnn-compare-out")
    for min_lr in (0.0, cfg.fit.lr):
        validate(dataclasses.replace(cfg, fit=dataclasses.replace(cfg.fit, min_lr=min_lr)))   # no error
    validate(dataclasses.replace(cfg, data_seed=2 ** 63 - 1, filter_seed=2 ** 63 - 1))
    with pytest.raises(UsageError, match="--data-seed"):
        validate(dataclasses.replace(cfg, data_seed=2 ** 63))


def test_option_names_match_the_parser():
    import re
    from jackson.config import build_parser
    from rnn_compare.config import CompareConfig, options
    usage = set(re.findall(r"\[(--[a-z0-9-]+)", build_parser(CompareConfig, "rnn-compare", "").format_usage()))
    names = [o for o, _ in options(CompareConfig())]
    assert len(names) == len(set(names)) and set(names) <= usage      # messages name real options
    assert {"--min-lr", "--rnn-min-lr", "--rnn-d-in", "--transformer-d-in"} <= set(names)


# ---- rnn-mixing-spectrum: valid kernels give the numbers numpy gives --------------------------------

def test_mixing_spectrum_command(tmp_path, capsys):
    from rnn_compare.cli import spectrum_main
    assert spectrum_main(["--png", str(tmp_path / "d3.png")]) == 0
    out = capsys.readouterr().out
    assert "after:  1.2622  0.5000  0.3961" in out and "before: 1.0000  1.0000  0.0000" in out
    assert (tmp_path / "d3.png").read_bytes()[:4] == b"\x89PNG"
    assert out.strip().splitlines()[-2].startswith("numerical rank 2 before the mixing, 3 after")
    ends_with_paths(out, 1, [tmp_path / "d3.png"])
    assert spectrum_main(["--out", str(tmp_path / "run")]) == 0      # a run folder: its table, summary and figure
    out = capsys.readouterr().out
    ends_with_paths(out, 3, [tmp_path / "run" / f for f in ("spectra.csv", "summary.md", "mixing_spectrum.png")])


KERNELS = [
    ("1 + 2*sin(2*pi*u)*sin(2*pi*v)", paper_elementwise),
    ("exp(-(u-v)**2/0.05)", lambda u, v: np.exp(-(u - v) ** 2 / 0.05)),
    ("1/(1+u+v) + cos(pi*u)*sqrt(v)", lambda u, v: 1 / (1 + u + v) + np.cos(np.pi * u) * np.sqrt(v)),
    ("tanh(3*u*v) - abs(u-0.5)", lambda u, v: np.tanh(3 * u * v) - np.abs(u - 0.5)),
    ("2", lambda u, v: 2.0 + 0 * u * v),
]


@pytest.mark.parametrize("text,ref", KERNELS, ids=[t for t, _ in KERNELS])
def test_valid_kernels_match_a_direct_numpy_computation(text, ref, capsys):
    from jackson.expr import Expression
    from rnn_compare.cli import spectrum_main
    for a, b in ((1.0, 1.0), (0.5, 2.0)):   # mixed second input a u + b v stays >= 0
        want = spectra_before_after(ref, a, b, k=6)
        got = spectra_before_after(Expression(text, ("u", "v")), a, b, k=6)
        np.testing.assert_allclose(got["before"], want["before"], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(got["after"], want["after"], rtol=1e-12, atol=1e-14)
        assert spectrum_main(["--kernel", text, "--a", str(a), "--b", str(b)]) == 0
        out = capsys.readouterr().out
        assert "before: " + "  ".join(f"{s:.4f}" for s in want["before"]) in out
        assert "after:  " + "  ".join(f"{s:.4f}" for s in want["after"]) in out


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


def test_diverged_members_are_left_out_of_the_tables_and_named(tmp_path):
    """A member whose fit diverged (jackson/fit.py status 'diverged: ...') is excluded from every mean,
    named in summary.md / summary.json; the others' mean is the plain mean of the rest."""
    from rnn_compare.config import CompareConfig
    from rnn_compare.tables import tables
    rows = []
    for alt in ("original", "permuted"):
        for model in ("rnn", "transformer"):
            for seed, mse in enumerate((1e-3, 3e-3, 3.45e4)):
                status = "diverged: training MSE 3.45e+04 > 10 x E[y^2] at step 900" if (mse > 1 and model == "rnn" and alt == "original") else "converged"
                rows.append({"kernel": "exp", "alteration": alt, "model": model, "seed": seed, "train_mse": mse,
                             "test_mse": mse, "status": status, "steps": 1000})
    rows = pd.DataFrame(rows)
    metas = {"m": {"cell": {"kernel": "exp", "alteration": "original"}, "complexity": None}}
    cfg = dataclasses.replace(CompareConfig(), table="ordering", seeds=(0, 1, 2))
    s = tables(tmp_path, rows, metas, cfg, "rnn-compare --table ordering")
    assert s["tables"]["ordering"]["rnn"]["original"] == pytest.approx(2e-3)       # (1e-3 + 3e-3) / 2
    assert s["tables"]["ordering"]["transformer"]["original"] == pytest.approx((1e-3 + 3e-3 + 3.45e4) / 3)
    assert [(d["model"], d["seed"]) for d in s["diverged"]] == [("rnn", 2)]
    md = (tmp_path / "summary.md").read_text()
    assert "1 diverged member(s), left out of every mean" in md and "rnn, exp kernel, original, seed 2" in md
    long = pd.read_csv(tmp_path / "tables_long.csv")
    assert long[(long.model == "rnn") & (long.alteration == "original")]["count"].item() == 2


def _cell_from_json(c: dict):
    from jackson.hparams import FitConfig
    from jackson.hparams import model_config
    from rnn_compare.cell import CompareCell
    from rnn_compare.settings import RNNConfig
    c = dict(c, seeds=tuple(c["seeds"]), rnn=RNNConfig(**c["rnn"]), transformer=model_config(c["transformer"]),
             fit=FitConfig(**c["fit"]), rnn_fit=FitConfig(**c["rnn_fit"]))
    return CompareCell(**c)


def test_committed_cell_keys_are_unchanged_by_rnn_retries():
    """Every committed rnn-compare cell folder is still named by its own config's key (so reruns reuse it), and
    rnn_retries enters an RNN cell's key but not a Transformer cell's."""
    import json
    cells = sorted((Path(__file__).resolve().parents[1] / "reports" / "rnn_compare").glob("*/cells/*/cell.json"))
    assert len(cells) >= 16
    for f in cells:
        meta = json.loads(f.read_text())
        cell = _cell_from_json(meta["cell"])
        assert cell.key() == meta["key"] == f.parent.name
        again = dataclasses.replace(cell, rnn_retries=cell.rnn_retries + 2)
        assert (again.key() == cell.key()) == (cell.model == "transformer")
        # the RNN's budget enters an RNN cell's key, not a Transformer cell's: an equal-budget rerun reuses them
        budget = dataclasses.replace(cell, rnn_fit=dataclasses.replace(cell.rnn_fit, steps=cell.rnn_fit.steps + 1000))
        assert (budget.key() == cell.key()) == (cell.model == "transformer")


def test_a_diverged_rnn_member_is_retrained_from_a_fresh_init(tmp_path, monkeypatch):
    """The first fit of member 1 is made to report divergence: with rnn_retries = 2 that member is trained again
    from init derive_seed(1, RETRY_STREAM, 1), alone, and its row is that run's (checked against the same
    training done here independently); member 0 keeps its first fit."""
    import torch
    from jackson.fit import evaluate, fit as real_fit
    from jackson.schedule import derive_seed
    from rnn_compare import cell as ex
    from rnn_compare.cell import CompareCell
    from rnn_compare.settings import RETRY_STREAM
    from rnn_compare.models import RNNBank
    from rnn_compare.settings import RNNConfig
    from jackson.hparams import FitConfig
    calls = []

    def flaky(bank, *a, **k):
        res = real_fit(bank, *a, **k)
        calls.append(bank.seeds)
        if len(calls) == 1:
            res.status[1] = "diverged: made up by the test at step 1"
        return res
    monkeypatch.setattr(ex, "fit", flaky)
    f = FitConfig(steps=30, batch_size=16, warmup=3, eval_every=10, eval_size=32)
    cell = CompareCell(kernel="exp", alteration="original", model="rnn", seeds=(0, 1), tau=6, n_train=64, n_test=32,
                       rnn=RNNConfig(hidden=4), rnn_fit=f, rnn_retries=2)
    cell.run(tmp_path, progress=False)
    rows = pd.read_csv(tmp_path / "rows.csv")
    r1 = derive_seed(1, RETRY_STREAM, 1)
    assert calls == [(0, 1), (r1,)]                         # one retry: it did not diverge
    assert rows.retry.tolist() == [0, 1] and rows.init_seed.tolist() == [0, r1] and rows.seed.tolist() == [0, 1]
    assert not rows.status.str.startswith("diverged").any()
    s_tr, s_te = ex.derive_seeds(cell.data_seed, 20_000, n=2)
    x_tr, y_tr, _ = cell.data(cell.n_train, int(s_tr))
    x_te, y_te, _ = cell.data(cell.n_test, int(s_te))
    t = lambda a: torch.tensor(a, dtype=torch.float32)  # noqa: E731
    alone = RNNBank(RNNConfig(hidden=4), (r1,))
    real_fit(alone, t(x_tr), t(y_tr), f, seed=cell.data_seed, progress=False)
    want = evaluate(alone, t(x_te), t(y_te)).double().mean().item()
    assert rows.test_mse[1] == pytest.approx(want, rel=1e-12)
    pos = pd.read_csv(tmp_path / "position_mse.csv")
    assert pos[pos.seed == 1].test_mse.mean() == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("model", ["rnn", "transformer"])
def test_more_seeds_add_inits_that_train_as_in_the_larger_bank(tmp_path, model):
    """--seeds 1,2 makes the bank of seeds 1 and 2 (a cell key of its own), and each of them trains
    as it does in the bank of seeds 0..2: a member's init comes from its seed and every member sees the same
    batches, so more inits can be added beside a finished run without retraining it."""
    from jackson.hparams import FitConfig
    from jackson.hparams import ModelConfig
    from rnn_compare.config import CompareConfig
    from rnn_compare.settings import RNNConfig
    f = FitConfig(steps=25, batch_size=16, warmup=3, eval_every=5, eval_size=32)
    base = CompareConfig(table="ordering", seeds=(0, 1, 2), tau=6, n_train=64, n_test=32, swap=2, rnn=RNNConfig(hidden=4),
                         transformer=ModelConfig(n=4, d_v=4, width=8, pos="learned", d_pos=4, tau_max=6),
                         fit=f, rnn_fit=f)
    more = dataclasses.replace(base, seeds=(1, 2))
    pick = lambda cfg: next(c for c in cfg.cells() if c.model == model and c.alteration == "original")  # noqa: E731
    whole, added = pick(base), pick(more)
    assert added.seeds == (1, 2) and added.key() != whole.key()
    for cell, d in ((whole, tmp_path / "whole"), (added, tmp_path / "added")):
        d.mkdir()
        cell.run(d, progress=False)
    a, b = pd.read_csv(tmp_path / "whole" / "rows.csv"), pd.read_csv(tmp_path / "added" / "rows.csv")
    assert b.seed.tolist() == [1, 2] and b.init_seed.tolist() == [1, 2]
    assert b.test_mse.tolist() == pytest.approx(a[a.seed >= 1].test_mse.tolist(), rel=1e-5)
    assert a.test_mse.nunique() == 3                     # the three inits differ: the check above can fail


def test_seeds_are_named_in_the_summary_and_checked():
    from rnn_compare.config import CompareConfig, validate
    from rnn_compare.report import seed_members, seed_range
    from jackson.config import UsageError
    assert seed_range([0, 1, 2]) == "" and seed_range([3, 4, 5]) == " 3..5" and seed_range([4]) == " 4"
    assert seed_range([0, 2, 7]) == " 0, 2, 7"
    assert seed_members({"seeds": [3, 4]}) == [3, 4]                              # a folder of today
    assert seed_members({"seeds": 3, "first_seed": 3}) == [3, 4, 5]               # one written with --n-seeds
    assert seed_members({"seeds": 2}) == [0, 1] and seed_members({}) == []
    for bad in ((0, 0), (-1,), ()):
        with pytest.raises(UsageError, match="--seeds"):
            validate(dataclasses.replace(CompareConfig(), seeds=bad))


@pytest.mark.parametrize("kernel_name,alteration,direction", [("exp", "original", "future"), ("exp", "permuted", "future"),
                                                              ("exp", "mixed", "future"), ("exp", "mixed", "past"),
                                                              ("uniform", "permuted", "future")])
def test_coupling_matrix_reproduces_the_training_pairs(kernel_name, alteration, direction):
    """K from unit inputs gives the very targets data() makes from random inputs: y = x' K^T for the inputs x' the
    model sees; the original exp K is the closed-form causal Toeplitz matrix e^-(t-s); a permutation keeps the
    singular values (it moves K's columns)."""
    from rnn_compare.cell import CompareCell
    cell = CompareCell(kernel=kernel_name, alteration=alteration, model="rnn", seeds=(0,), tau=12, swap=3,
                       mix_direction=direction)
    K = cell.coupling()
    x, y, _ = cell.data(50, seed=7)
    np.testing.assert_allclose(x @ K.T, y, rtol=1e-12, atol=1e-12)
    orig = dataclasses.replace(cell, alteration="original").coupling()
    t = np.arange(12)
    if kernel_name == "exp":
        np.testing.assert_allclose(orig, np.where(t[:, None] >= t[None, :], np.exp(-(t[:, None] - t[None, :])), 0.0))
    if alteration == "permuted":
        np.testing.assert_allclose(np.linalg.svd(K, compute_uv=False), np.linalg.svd(orig, compute_uv=False), rtol=1e-10)


def test_a_filter_given_by_its_taps_is_the_filter_used():
    """--filter: the random filter's own taps, typed out, give the default cell's coupling exactly; the same
    magnitudes with every sign made positive give a coupling with no negative entry (exp kernel: rho > 0), the
    same in both directions -- the control for the sign of the mixed target's coupling."""
    from rnn_compare.cell import CompareCell
    th = random_filter(5, seed=0)
    base = CompareCell(kernel="exp", alteration="mixed", model="transformer", seeds=(0,), tau=12)
    typed = dataclasses.replace(base, filter=",".join(repr(float(v)) for v in th))
    assert typed.key() != base.key()
    orig = dataclasses.replace(base, alteration="original")
    assert dataclasses.replace(orig, filter=typed.filter).key() == orig.key()   # an unmixed cell is the same cell
    for change in ({"filter_length": 8}, {"filter_seed": 3}):     # nor does another filter length or seed
        assert dataclasses.replace(orig, **change).key() == orig.key()
        assert dataclasses.replace(base, **change).key() != base.key()
    np.testing.assert_array_equal(typed.coupling(), base.coupling())
    assert (base.coupling() < -1e-12).any()                       # seed 0's filter has negative taps
    for direction in ("future", "past"):
        pos = dataclasses.replace(base, filter=",".join(repr(float(abs(v))) for v in th), mix_direction=direction)
        K = pos.coupling()
        assert (K >= 0).all() and (K > 0).sum() > 12
        x, y, _ = pos.data(30, seed=3)
        want = mix(x, np.abs(th), direction) @ np.where(np.arange(12)[:, None] >= np.arange(12)[None, :],
                                                        np.exp(-(np.arange(12)[:, None] - np.arange(12)[None, :])), 0.0).T
        np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)


def test_missing_terms_check_finds_the_missing_term_of_a_synthetic_member():
    """A member whose MSE at t is the closed-form error of dropping x(t+j*) (coefficient sum_k e^-k theta(k+j*), on
    the held-out inputs the cells score on) is found to miss exactly that term; one 10x above it misses no block;
    a member missing the causal mixing's positive tail is found to miss that block."""
    from rnn_compare.cell import CompareCell
    from rnn_compare.config import CompareConfig
    from rnn_compare.coupling import drop_errors, missing_terms_check, missing_terms_section, spans, terms_words
    tau, jstar = 12, 2
    cfg = CompareConfig(table="mixing", tau=tau, swap=3)
    th = random_filter(5, seed=0)
    # K_t,t+j* of the future mixing: x(t+j*) enters (theta*x)(t-k) through theta(k+j*), for 0 <= k <= t
    coef = lambda t: sum(np.exp(-k) * th[k + jstar] for k in range(min(t, 4 - jstar) + 1))  # noqa: E731
    cell = CompareCell(kernel="exp", alteration="mixed", model="transformer", seeds=(0,), tau=tau)
    x, _, _ = cell.data(cell.n_test, cell.data_seeds()[1])
    spread = ((x - 0.5) ** 2).mean(axis=0)
    rows = []
    for seed, scale in ((0, 1.0), (1, 10.0)):
        for t in range(tau):
            miss = coef(t) ** 2 * spread[t + jstar] * scale if t + jstar < tau else 1e-9
            if t in (7, 8) and seed == 0:
                miss = 1e-9                                              # the term is there, the member fits it
            rows += [{"kernel": "exp", "alteration": "mixed", "model": "transformer", "seed": seed, "t": t,
                      "test_mse": miss},
                     {"kernel": "exp", "alteration": "original", "model": "transformer", "seed": seed, "t": t,
                      "test_mse": 1e-8}]
    check = missing_terms_check(cfg, pd.DataFrame(rows)).set_index("seed")
    r = check.loc[0]
    assert (r.j1, r.j2) == (jstar, jstar) and r.coef_norm == pytest.approx(abs(coef(tau)), rel=1e-12) and r.one_block
    assert r.n_hot == r.n_explained == tau - jstar - 2 and r.ratio == pytest.approx(1.0, rel=1e-9)
    assert r.fitted_where_present == "7 8" and r.unexplained == ""
    assert check.loc[1].n_explained < 0.9 * check.loc[1].n_hot and not check.loc[1].one_block
    md = "\n".join(missing_terms_section(check.reset_index()))
    assert f"| exp | transformer | 0 | {tau - jstar - 2} (t = 0..9) | x(t+{jstar}) |" in md and "| yes |" in md
    # causal mixing: K_t,t-d = sum_{s <= d} theta(s) e^-(d-s); for d >= 4 it is K_t,t-4 e^-(d-4) (> 0 for seed 0)
    past = dataclasses.replace(cell, mix_direction="past")
    K = past.coupling()
    k4 = sum(th[s] * np.exp(-(4 - s)) for s in range(5))
    assert k4 > 0 and K[9, 5] == pytest.approx(k4) and K[9, 0] == pytest.approx(k4 * np.exp(-5))
    tail = [np.mean(((x[:, :t - 3] - 0.5) @ (k4 * np.exp(-(np.arange(t - 3)[::-1])))) ** 2) if t >= 4 else 0.0
            for t in range(tau)]
    np.testing.assert_allclose(drop_errors(K, x, -(tau - 1), -4), tail, rtol=1e-9)
    rows = [{"kernel": "exp", "alteration": a, "model": "transformer", "seed": 0, "t": t,
             "test_mse": (tail[t] if t >= 4 else 1e-9) if a == "mixed" else 1e-8}
            for a in ("mixed", "original") for t in range(tau)]
    r = missing_terms_check(dataclasses.replace(cfg, mix_direction="past"), pd.DataFrame(rows)).iloc[0]
    assert r.j2 == -4 and r.terms == f"x(t{int(r.j1):+d}) .. x(t-4)" and r.one_block and r.n_explained == tau - 4 and r.ratio == pytest.approx(1.0, rel=1e-3)
    assert terms_words(4, 4) == "x(t+4)" and terms_words(-7, -4) == "x(t-7) .. x(t-4)" and terms_words(0, 0) == "x(t)"
    # the figure's dashed reference: the block most members miss, drawn only with a majority of members
    from rnn_compare.coupling import block_references
    chk = pd.DataFrame([{"kernel": "exp", "model": "transformer", "seed": s, "j1": j, "j2": j, "one_block": ok}
                        for s, j, ok in ((0, 2, True), (1, 2, True), (2, 3, True))])
    (key, (j1, j2, ref)), = block_references(cfg, chk).items()
    assert key == ("exp", "transformer") and (j1, j2) == (2, 2)
    np.testing.assert_allclose(ref, drop_errors(cell.coupling(), x, 2, 2))
    assert block_references(cfg, chk.assign(j1=[2, 3, 4], j2=[2, 3, 4])) == {}      # no block has a majority
    assert spans("0 1 2 5 7 8") == "0-2, 5, 7-8" and spans("") == ""


def test_sign_rule_drops_the_terms_against_the_rows_leading_sign():
    """sign_rule_errors on a hand-made K (independent closed form per row), on the all-positive filter (nothing
    to drop) and on the paper's signed length-5 filter, where it is the loss of x(t+4) and of the past inputs
    whose truncated coefficient is positive (closed form from the taps); sign_rule_check
    adds the original level and sets each mixed seed beside it."""
    from rnn_compare.cell import CompareCell
    from rnn_compare.config import CompareConfig
    from rnn_compare.coupling import sign_rule_check, sign_rule_errors, sign_rule_section
    x = np.random.default_rng(0).random((500, 3))
    K = np.array([[1.0, -0.5, 0.2], [-3.0, 0.4, 0.3], [0.1, 0.2, 0.3]])
    xc = x - 0.5
    want = [np.mean((0.2 * xc[:, 2]) ** 2),       # row 0: lead -0.5, drop +0.2 (x(t)'s own 1.0 is kept)
            np.mean((0.3 * xc[:, 2]) ** 2),       # row 1: lead -3.0 off the diagonal, drop +0.3
            0.0]                                   # row 2: every entry positive
    np.testing.assert_allclose(sign_rule_errors(K, x), want, rtol=1e-12)
    tau = 12
    cell = CompareCell(kernel="exp", alteration="mixed", model="transformer", seeds=(0,), tau=tau)
    xt, _, _ = cell.data(cell.n_test, cell.data_seeds()[1])
    xc4 = xt - 0.5
    got = sign_rule_errors(cell.coupling(), xt)
    # the loss of x(t+4) (K = theta(4) > 0 against a negative row) and of the past inputs u < t whose coefficient
    # e^-(t-u) sum_{s <= u} e^-s theta(s) (the filter's sum truncated at the start of the sequence) is positive
    th = random_filter(5, seed=0)
    c = np.cumsum(np.exp(-np.arange(5)) * th)
    c = np.concatenate([c, np.full(tau, c[-1])])
    first = []
    for t in range(tau - 4):
        past = [u for u in range(t) if c[u] > 0]
        first.append(np.mean((xc4[:, [t + 4] + past] @ np.array([th[4]] + [np.exp(-(t - u)) * c[u] for u in past])) ** 2))
    assert c[0] > 0 and c[1] > 0 and (c[2:] < 0).all()
    np.testing.assert_allclose(got[:tau - 4], first, rtol=1e-9)
    pos = dataclasses.replace(cell, filter=",".join(str(v) for v in np.abs(random_filter(5, seed=0))))
    assert not sign_rule_errors(pos.coupling(), xt).any()
    cfg = CompareConfig(table="mixing", tau=tau, swap=3)
    rows = pd.DataFrame([{"kernel": "exp", "alteration": a, "model": "transformer", "seed": s, "test_mse": v}
                         for a, vals in (("original", [1e-5, 2e-5, 9e-5]), ("mixed", [1e-3, 2e-3, 3e-3]))
                         for s, v in enumerate(vals)])
    chk = sign_rule_check(cfg, rows)
    pred = float(got.mean()) + 2e-5
    assert chk.seed.tolist() == [0, 1, 2] and np.allclose(chk.predicted, pred)
    np.testing.assert_allclose(chk.ratio, np.array([1e-3, 2e-3, 3e-3]) / pred)
    assert f"| exp | 1 | {pred:.3g} | 0.002 |" in "\n".join(sign_rule_section(chk))


def test_energy_rank_and_the_coupling_section():
    from rnn_compare.config import CompareConfig
    from rnn_compare.coupling import coupling_section, coupling_spectra, energy_rank
    assert energy_rank([3.0, 1.0, 1.0], 0.9) == 2        # 9 / 11 < 0.9 <= 10 / 11
    assert energy_rank([1.0, 0.0], 0.99) == 1
    cfg = dataclasses.replace(CompareConfig(), table="ordering", tau=8, swap=2)
    spec = coupling_spectra(cfg)
    assert set(spec.alteration) == {"original", "permuted"} and spec.groupby("alteration").i.max().eq(8).all()
    rows = pd.DataFrame([{"kernel": "exp", "alteration": a, "model": m, "seed": 0, "test_mse": 1e-3}
                         for a in ("original", "permuted") for m in ("rnn", "transformer")])
    md = "\n".join(coupling_section(spec, rows))
    assert "| exp | original | " in md and "| 8 |" in md and "0 / 36 | 0.001 | 0.001 |" in md   # 8*9/2 entries on or below


def test_mse_bars_title_names_inits_added_beside_a_run(tmp_path, monkeypatch):
    """The bar figure of a folder of added inits (--seeds 3,4,5) says whose seeds it shows; a folder of seeds
    from 0 keeps the plain title."""
    from rnn_compare import tables as experiment
    from rnn_compare.report import seed_range
    titles = []
    monkeypatch.setattr(experiment, "save", lambda fig, path: titles.append(fig._suptitle.get_text()))
    long = pd.DataFrame({"kernel": ["exp", "exp"], "alteration": ["original", "original"],
                         "model": ["rnn", "transformer"], "mean": [1e-3, 2e-3], "std": [1e-4, 2e-4],
                         "count": [3, 3], "paper": [1e-3, 2e-3]})
    experiment.plot(tmp_path, long, seed_range([3, 4, 5]))
    experiment.plot(tmp_path, long, seed_range([0, 1, 2]))
    assert titles[0].endswith("; model inits 3..5") and "inits" not in titles[1]
