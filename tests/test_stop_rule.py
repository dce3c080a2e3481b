"""The stopping rule ("trained until the loss stops decreasing", `--schedule plateau`) is stated and can be checked:
the summary quotes it with the run's numbers, and replaying the stated rule on a fit's recorded loss curve -- written
here from the words of `stop_rule`, not from jackson/schedule.py's Plateau -- gives each member's recorded status,
stopping step and learning rate at every check.  A curve that broke the rule (a member called converged while its
loss still fell) fails the replay."""
from __future__ import annotations

import json
import math
import subprocess

import pytest
import torch

from jackson.fit import evaluate, fit
from jackson.hparams import FitConfig, fit_config, stop_rule
from jackson.models import TransformerBank
from jackson.schedule import lr_at
from synthetic.pod_target import PODTarget, Spectrum
from conftest import TINY_MODEL

# a loose rule on a tiny problem, with a cap by which some members have stopped and one is still training (the test
# asserts both)
RULE = FitConfig(steps=42, batch_size=32, lr=3e-3, warmup=4, eval_every=4, patience=2, schedule="plateau",
                 min_improve=0.2, lr_decay=0.3, min_lr=2e-4, eval_size=64)
SEEDS = (0, 1, 2, 3)


def replay(rows: list[dict], cfg: FitConfig) -> dict:
    """The rule in its own words, on one member's checks (step, train_mse, lr) in order: a check that is not a fall of
    min_improve below the best so far is stale; `patience` stale checks in a row (after the warm-up) multiply the rate
    by lr_decay and start the count again; the member stops at the check where the rate goes below min_lr.
    Returns {"stop": step or None, "rates": the rate the rule gives each check's next steps}."""
    best, stale, rate, rates = math.inf, 0, cfg.lr, []
    for r in rows:
        if r["train_mse"] < best * (1 - cfg.min_improve):
            best, stale = r["train_mse"], 0
        else:
            best, stale = min(best, r["train_mse"]), stale + 1
        if stale >= cfg.patience and r["step"] > cfg.warmup:
            rate, stale = rate * cfg.lr_decay, 0
            if rate < cfg.min_lr:
                return {"stop": r["step"], "rates": rates}
        rates.append(rate)
    return {"stop": None, "rates": rates}


@pytest.fixture(scope="module")
def fitted():
    target = PODTarget(Spectrum(alpha=1.5, rank=4), tau=8)
    x = target.sample(256, seed=0)
    t = lambda a: torch.tensor(a, dtype=torch.float32)  # noqa: E731
    bank = TransformerBank(TINY_MODEL, [1, 2, 3, 4], SEEDS)
    return fit(bank, t(x), t(target(x)), RULE, seed=0, progress=False)


def test_replaying_the_stated_rule_on_the_curve_gives_every_status_and_stopping_step(fitted):
    stopped = 0
    for i in range(len(SEEDS)):
        rows = [r for r in fitted.curve if r["member"] == i]
        got = replay(rows, RULE)
        if fitted.status[i] == "converged":
            stopped += 1
            assert got["stop"] == fitted.steps[i], (i, got["stop"], fitted.steps[i])
            assert fitted.steps[i] <= RULE.steps
        else:
            assert fitted.status[i] == "budget" and got["stop"] is None and fitted.steps[i] == RULE.steps
        # the rate each check recorded is the rule's rate then (the warm-up ramp is over after step `warmup`)
        for r, rate in zip(rows, [RULE.lr] + got["rates"]):
            if r["step"] > RULE.warmup:
                assert r["lr"] == pytest.approx(rate, rel=1e-12), (i, r["step"])
    assert 1 <= stopped < len(SEEDS), f"{stopped} of {len(SEEDS)} members stopped: the replay did not see both statuses"


def test_a_member_called_converged_while_its_loss_still_fell_fails_the_replay(fitted):
    i = fitted.status.index("converged")
    rows = [dict(r) for r in fitted.curve if r["member"] == i]
    for k, r in enumerate(rows):          # the same checks, each one a 30% fall below the one before
        r["train_mse"] = 1.0 * 0.7 ** k
    assert replay(rows, RULE)["stop"] != fitted.steps[i]


def test_the_stated_rule_carries_the_runs_numbers_for_either_schedule():
    words = stop_rule(RULE)
    for part in ("the schedule judged its loss to have stopped decreasing", "every 4 steps", "64 training sequences", "2 checks",
                 "20%", "0.3x", "0.0002", "cap of 42 steps"):
        assert part in words, part
    cos = stop_rule(FitConfig())
    for part in ("every 250 steps", "2048 training sequences", "10% of its peak", "5%", "6,000-step budget"):
        assert part in cos, part
    # a recorded fit dict from before a field existed takes that field's default; unknown keys are ignored
    assert fit_config({"schedule": "plateau", "steps": 9, "retired_option": 1}) == FitConfig(schedule="plateau", steps=9)


# the cosine budget followed by the continuation check, on the same tiny problem: a budget short enough that some
# members are still improving when it ends (the test asserts that the check then says each of its two verdicts)
CHECK = FitConfig(steps=40, batch_size=32, lr=3e-3, warmup=4, eval_every=4, patience=2, min_improve=0.01,
                  eval_size=64, check_steps=16)


def replay_check(rows: list[dict], cfg: FitConfig) -> str | None:
    """The check in its own words, on one member's checks: its MSE at the budget's last step, then the lowest MSE
    over the further steps; 'converged' when that is not min_improve below it, 'budget' when it is; None when the
    member did not train through the check (stopped, or diverged, before it)."""
    end = [r["train_mse"] for r in rows if r["step"] == cfg.steps]
    after = [r["train_mse"] for r in rows if r["step"] > cfg.steps]
    if not end or not after:
        return None
    return "converged" if min(after) > end[0] * (1 - cfg.min_improve) else "budget"


@pytest.fixture(scope="module")
def checked():
    target = PODTarget(Spectrum(alpha=1.5, rank=4), tau=8)
    x = target.sample(256, seed=0)
    t = lambda a: torch.tensor(a, dtype=torch.float32)  # noqa: E731
    bank = TransformerBank(TINY_MODEL, [1, 2, 3, 4, 1, 2, 3, 4], SEEDS + (4, 5, 6, 7))
    return fit(bank, t(x), t(target(x)), CHECK, seed=0, progress=False)


def test_the_continuation_check_replays_from_the_curve_and_says_both_verdicts(checked):
    rate = CHECK.converged_lr_frac * CHECK.lr
    said = []
    for i in range(len(checked.status)):
        rows = [r for r in checked.curve if r["member"] == i]
        verdict = replay_check(rows, CHECK)
        if verdict is None:                 # stopped by the flat rule inside the budget: never entered the check
            assert checked.status[i] == "converged" and checked.steps[i] <= CHECK.steps
            continue
        said.append(verdict)
        assert checked.status[i] == verdict and checked.steps[i] == CHECK.steps + CHECK.check_steps, i
        cycle = [r["lr"] for r in rows if r["step"] > CHECK.steps]     # the check's steps: the stated second cycle
        assert rate >= cycle[0] > cycle[-1] == pytest.approx(CHECK.min_lr, rel=1e-9)
        assert all(a >= b for a, b in zip(cycle, cycle[1:]))
    assert set(said) == {"converged", "budget"}, said
    words = stop_rule(CHECK)
    for part in ("a further 16 steps", "second cosine cycle from 0.0003", "down to 1e-05", "1%", "step 40",
                 "cap of 56 steps"):
        assert part in words, part


def two_fits(**change):
    """The same tiny fit twice, the second with FitConfig fields changed: (the config, (bank, result) of each)."""
    target = PODTarget(Spectrum(alpha=1.5, rank=4), tau=8)
    x = target.sample(128, seed=0)
    t = lambda a: torch.tensor(a, dtype=torch.float32)  # noqa: E731
    cfg = FitConfig(steps=12, batch_size=32, warmup=2, eval_every=4, eval_size=64)
    out = []
    for c in (cfg, FitConfig(**{**cfg.__dict__, **change})):
        bank = TransformerBank(TINY_MODEL, [1, 2], (0, 1))
        out.append((bank, fit(bank, t(x), t(target(x)), c, seed=0, progress=False)))
    return cfg, out[0], out[1]


def test_without_the_check_the_fit_is_what_it_was():
    """check_steps = 0 (the default) takes the same steps at the same rates: bit-identical weights and curve."""
    cfg, (a, ra), (b, rb) = two_fits(check_steps=0)
    assert ra.curve == rb.curve and ra.status == rb.status
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


@pytest.mark.slow
def test_a_sweep_under_the_rule_states_it_in_its_summary(tmp_path, sweep_exe, sub_env):
    out = tmp_path / "run"
    r = subprocess.run([str(sweep_exe), "--quick", "--threads", "1", "--schedule", "plateau", "--min-improve", "0.2",
                        "--out", str(out)], capture_output=True, text=True, env=sub_env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    cfg = json.loads((out / "config.json").read_text())["fit"]
    assert summary["stop_rule"] == stop_rule(fit_config(cfg))
    assert summary["stop_rule"] in (out / "summary.md").read_text()
    assert "the schedule judged its loss to have stopped decreasing" in summary["stop_rule"]


# the cosine cycle repeated from the peak rate until the loss stops falling, on the same tiny problem: a cap by which
# some members have stopped and some are still falling (the test asserts both)
CYCLES = FitConfig(steps=24, batch_size=32, lr=3e-3, warmup=4, eval_every=4, patience=2, min_improve=0.03,
                   eval_size=64, cycles=4)


def replay_cycles(rows: list[dict], cfg: FitConfig) -> tuple[str, int, float]:
    """The rule in its own words, on one member's checks: the MSEs at the ends of its cycles (steps, 2 x steps, ...);
    from the second on, an end that is not min_improve below the best earlier end stops the member there.  Returns
    (status, steps trained, the MSE of the weights it keeps: its best cycle end)."""
    ends = [r["train_mse"] for r in rows if r["step"] % cfg.steps == 0]
    best = math.inf
    for c, v in enumerate(ends, start=1):
        falling = v < best * (1 - cfg.min_improve)
        best = min(best, v)
        if not falling:
            return "converged", c * cfg.steps, best
    assert len(ends) == cfg.cycles
    return "budget", cfg.cycles * cfg.steps, best


@pytest.fixture(scope="module")
def cycled():
    target = PODTarget(Spectrum(alpha=1.5, rank=4), tau=8)
    x = torch.tensor(target.sample(256, seed=0), dtype=torch.float32)
    y = torch.tensor(target(x.numpy()), dtype=torch.float32)
    bank = TransformerBank(TINY_MODEL, [1, 2, 3, 4, 1, 2, 3, 4], SEEDS + (4, 5, 6, 7))
    res = fit(bank, x, y, CYCLES, seed=0, progress=False)
    return res, evaluate(bank, x[:CYCLES.eval_size], y[:CYCLES.eval_size]).mean(dim=1).tolist()


def test_the_cycles_rule_replays_from_the_curve_says_both_verdicts_and_keeps_the_best_weights(cycled):
    res, final = cycled
    said = []
    for i in range(len(res.status)):
        rows = [r for r in res.curve if r["member"] == i]
        status, steps, kept = replay_cycles(rows, CYCLES)
        said.append(status)
        assert (res.status[i], res.steps[i]) == (status, steps), i
        assert max(r["step"] for r in rows) == steps, i        # a stopped member is checked no more
        # the weights it ends with are those of its best cycle end: the same MSE on the same training subset
        assert final[i] == pytest.approx(kept, rel=1e-5), i
        for c in range(steps // CYCLES.steps):                 # every cycle: the same warm-up and cosine, restarted
            lrs = [r["lr"] for r in rows if c * CYCLES.steps < r["step"] <= (c + 1) * CYCLES.steps]
            first = [r["lr"] for r in rows if 0 < r["step"] <= CYCLES.steps]
            assert lrs == pytest.approx(first[:len(lrs)], rel=1e-12), (i, c)
    assert {"converged", "budget"} <= set(said), said
    words = stop_rule(CYCLES)
    for part in ("the schedule judged its loss to have stopped decreasing", "24-step cosine cycle", "up to 4 times", "3%",
                 "best earlier cycle end", "cap, 96 steps"):
        assert part in words, part


def test_the_first_cycle_is_the_single_budget():
    """The first of several cycles takes the steps, rates and batches of the one-cycle fit (the default): the same
    curve up to the budget's end, the rates of the single cosine."""
    cfg, (_, ra), (_, rb) = two_fits(cycles=3)
    assert ra.curve == [r for r in rb.curve if r["step"] <= cfg.steps]
    assert ra.steps == [12, 12] and max(r["step"] for r in rb.curve) > cfg.steps
    for r in ra.curve:
        assert r["lr"] == lr_at(r["step"], cfg.lr, cfg.steps, cfg.warmup, "cosine", floor=cfg.min_lr, decay_from=0)


@pytest.mark.slow
def test_a_sweep_under_the_cycles_rule_says_whom_it_stopped_and_who_was_still_falling(tmp_path, sweep_exe, sub_env):
    out = tmp_path / "run"
    r = subprocess.run([str(sweep_exe), "--quick", "--alpha", "1,1.5", "--threads", "1", "--cycles", "3",
                        "--out", str(out)],
                       capture_output=True, text=True, env=sub_env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    import pandas as pd
    rows = pd.read_csv(out / "results.csv")
    summary = json.loads((out / "summary.json").read_text())
    total = summary["cycle_stops"]
    fit = fit_config(json.loads((out / "config.json").read_text())["fit"])
    curves = pd.read_csv(out / "loss_curves.csv.gz")
    ends = curves[curves.step % fit.steps == 0]
    assert total["members"] == len(rows) and total["cycles"] == 3 and total["cycle_steps"] == fit.steps
    assert total["targets"] == len(summary["targets"])
    assert total["n_still_falling"] == int((rows.status == "budget").sum())
    assert total["n_setbacks"] == sum(len(t["cycle_stops"]["setbacks"]) for t in summary["targets"])
    text = (out / "summary.md").read_text()
    from jackson.rate_sweep.summary_text import cycle_text
    for t in summary["targets"]:       # each target names its own members, in summary.json and in its section
        c = t["cycle_stops"]
        own = rows[(rows.alpha.astype(str) == str(t["alpha"])) & (rows["rank"].astype(str) == str(t["rank"]))]
        assert c["members"] == len(own)
        stopped = own[own.status == "converged"]
        assert sum(c["stopped_after"].values()) == len(stopped)
        for k, n in c["stopped_after"].items():
            assert n == int((stopped.steps == int(k) * fit.steps).sum()), k
            assert total["stopped_after"][k] >= n
        falling = own[own.status == "budget"]
        assert sorted(map(tuple, c["still_falling"])) == sorted(zip(falling.m_h, falling.seed))
        assert (falling.steps == 3 * fit.steps).all()
        setbacks = []
        for m in stopped.itertuples():       # the stopping end against the best earlier end, from the committed curves
            mine = ends[(ends.m_h == m.m_h) & (ends.seed == m.seed) & (ends.alpha.astype(str) == str(t["alpha"]))
                        & (ends["rank"].astype(str) == str(t["rank"]))]
            ratio = mine[mine.step == m.steps].train_mse.iloc[0] / mine[mine.step < m.steps].train_mse.min()
            if ratio >= c["setback_factor"]:
                setbacks.append((m.m_h, m.seed))
        assert sorted(setbacks) == sorted((m, sd) for m, sd, _ in c["setbacks"])
        if len(falling):            # the printed line of this target
            assert f"{len(falling)} of {len(own)} members still falling at the cap of 3 cycles" in r.stdout
        ms = sorted(set(falling.m_h))
        assert ("Cycles: Of the" + cycle_text(c).split("Of the", 1)[1]) in text
        if ms:
            assert f"(m_h {', '.join(map(str, ms))})" in cycle_text(c)
    assert "still falling at the cap of 3 cycles" in text and f"of the {len(summary['targets'])} targets" in text


def test_the_summary_names_the_members_the_cycles_rule_stopped_on_a_setback():
    """A member whose stopping cycle ended 2x or more above its best earlier end rose at the restarted peak rate: the
    summary names it apart from those that stopped on a flat loss; the rest it counts by cycle and cap."""
    import pandas as pd
    from jackson.rate_sweep.summary import cycle_stops
    from jackson.rate_sweep.summary_text import cycle_text
    fit = FitConfig(steps=10, cycles=3)
    rows = pd.DataFrame({"seed": [0, 0, 0, 1], "m_h": [1, 2, 3, 1], "restart": 0,
                         "status": ["converged", "converged", "budget", "converged"], "steps": [20, 30, 30, 20]})
    ends = {(0, 1): [1.0, 0.99], (0, 2): [1.0, 0.5, 0.51], (0, 3): [1.0, 0.5, 0.2], (1, 1): [1.0, 480.0]}
    curve = pd.DataFrame([{"seed": sd, "m_h": m, "restart": 0, "step": 10 * (k + 1), "train_mse": v}
                          for (sd, m), vs in ends.items() for k, v in enumerate(vs)]
                         + [{"seed": 1, "m_h": 1, "restart": 0, "step": 15, "train_mse": 0.1}])  # not a cycle end
    c = cycle_stops(rows, curve, fit)
    assert c["stopped_after"] == {"2": 2, "3": 1} and c["still_falling"] == [[3, 0]] and c["members"] == 4
    assert c["setbacks"] == [[1, 1, 480.0]]
    text = cycle_text(c)
    assert "the rule stopped 2 after cycle 2, 1 after cycle 3; 1 was still falling at the cap of 3 cycles (m_h 3)" in text
    assert "1 of the stopped ones stopped on a setback" in text and "m_h 1 seed 1: 480x" in text
    # a folder of two targets: its totals count, and only each target's own record names members
    from jackson.rate_sweep.summary import cycle_totals
    total = cycle_totals([c, c])
    assert total["stopped_after"] == {"2": 4, "3": 2} and total["n_still_falling"] == 2 and total["n_setbacks"] == 2
    assert total["members"] == 8 and total["targets"] == 2
    text = cycle_text(total)
    assert "Of the 8 members of the 2 targets, the rule stopped 4 after cycle 2, 2 after cycle 3; 2 were still falling" in text
    assert "m_h" not in text and "2 of the stopped ones stopped on a setback" in text and "Each target's section" in text


@pytest.mark.parametrize("bad", [dict(cycles=0), dict(cycles=2, schedule="plateau"), dict(check_steps=-1),
                                 dict(check_steps=10, schedule="plateau"), dict(cycles=2, check_steps=10)])
def test_fit_refuses_what_the_commands_refuse_in_the_same_words(bad):
    """jackson.fit.fit and every command's validation ask one check (hparams.schedule_problem): a library caller
    meets the refusal a command line gets, before any step."""
    from jackson.hparams import schedule_problem
    cfg = FitConfig(**{"schedule": "cosine", **bad})
    why = schedule_problem(cfg)
    assert why
    bank = TransformerBank(TINY_MODEL, [1], (0,))
    with pytest.raises(ValueError) as e:
        fit(bank, torch.zeros(4, 8), torch.zeros(1, 4, 8), cfg, seed=0, progress=False)
    assert str(e.value) == why
