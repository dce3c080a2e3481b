"""The jump guard (FitConfig.guard, jackson/fit.py): a member whose training-subset MSE jumps above `guard` x its best
check so far gets the weights of that check back, fresh Adam moments and half its peak rate (hparams.GUARD_CUT); the
other members train on untouched.  The jump is made here by hand (a member's weights thrown far off after one step),
so the test knows when it happened and what the member looked like before it."""
from __future__ import annotations

import pytest
import torch

from jackson import fit as fit_mod
from jackson.fit import evaluate, fit
from jackson.hparams import GUARD_CUT, FitConfig, schedule_problem, stop_rule
from jackson.models import TransformerBank
from jackson.schedule import lr_at
from synthetic.pod_target import PODTarget, Spectrum
from conftest import TINY_MODEL

CFG = FitConfig(steps=48, batch_size=32, lr=3e-3, warmup=4, eval_every=4, eval_size=64, explode=1e9)   # a jump, not a divergence
JUMP_AT = 30          # the optimiser step after which member 0 is thrown off (a check falls at step 32)


def run(guard: float, jump: bool, ckpt=None, stop_at: int = 0):
    """The tiny card-like fit of two members; with `jump`, member 0's weights get noise of sd 0.5 after step JUMP_AT
    (counted in this process); `ckpt` checkpoints it every step, `stop_at` kills it before that step."""
    target = PODTarget(Spectrum(alpha=1.5, rank=4), tau=8)
    x = target.sample(128, seed=0)
    t = lambda a: torch.tensor(a, dtype=torch.float32)  # noqa: E731
    x, y = t(x), t(target(x))
    bank = TransformerBank(TINY_MODEL, [2, 3], (0, 1))
    params = bank.member_param_groups()
    real = torch.optim.Adam.step
    calls = {"n": 0}

    def step(opt, *a, **k):
        out = real(opt, *a, **k)
        calls["n"] += 1
        if jump and calls["n"] == JUMP_AT:
            g = torch.Generator().manual_seed(0)
            with torch.no_grad():
                for p in params[0]:
                    p.add_(0.5 * torch.randn(p.shape, generator=g))
        return out
    real_batch = fit_mod.EpochSampler.batch

    def batch(sampler, k):
        if k + 1 == stop_at:
            raise KeyboardInterrupt
        return real_batch(sampler, k)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(torch.optim.Adam, "step", step)
        mp.setattr(fit_mod.EpochSampler, "batch", batch)
        res = fit(bank, x, y, FitConfig(**{**CFG.__dict__, "guard": guard}), seed=0, progress=False, ckpt=ckpt,
                  ckpt_every_s=0.0)
    return res, evaluate(bank, x[:64], y[..., :64, :]).mean(dim=1)


def curve(res, member: int) -> dict[int, dict]:
    return {r["step"]: r for r in res.curve if r["member"] == member}


def test_a_jump_is_undone_and_the_members_rate_cut():
    plain, _ = run(0.0, jump=True)
    guarded, final = run(10.0, jump=True)
    before = {s: r["train_mse"] for s, r in curve(guarded, 0).items() if s <= JUMP_AT}
    best = min(before.values())
    # the jump is real: at the next check member 0 is far above its best, with or without the guard
    assert curve(plain, 0)[32]["train_mse"] > 10 * best and curve(guarded, 0)[32]["train_mse"] > 10 * best
    assert guarded.guarded == [1, 0] and plain.guarded == [0, 0]
    # restored: the check after the restore is back near the best, while the unguarded member is still far off
    assert curve(guarded, 0)[36]["train_mse"] < 2 * best < curve(plain, 0)[36]["train_mse"]
    assert float(final[0]) < 2 * best
    # from the restore on, its schedule runs from GUARD_CUT x the peak (the same cosine, the same floor)
    for s in (36, 40, 44):
        want = lr_at(s, GUARD_CUT * CFG.lr, CFG.steps, CFG.warmup, "cosine", floor=CFG.min_lr, decay_from=0)
        assert curve(guarded, 0)[s]["lr"] == pytest.approx(want, rel=1e-9) and want < curve(plain, 0)[s]["lr"]
    # unguarded, the thrown member stays far off, and the flat rule even calls it converged there
    assert curve(plain, 0)[48]["train_mse"] > 1000 * best and plain.status[0] == "converged"
    # the other member never noticed: the same curve, step for step
    assert curve(guarded, 1) == curve(plain, 1)


def test_without_a_jump_the_guard_changes_nothing():
    """The control: no jump, so the guard never fires and the fit is bit-for-bit the unguarded one."""
    plain, a = run(0.0, jump=False)
    guarded, b = run(10.0, jump=False)
    assert guarded.guarded == [0, 0]
    assert plain.curve == guarded.curve and plain.status == guarded.status and torch.equal(a, b)


def test_a_guard_at_or_below_one_is_refused_in_one_line():
    assert schedule_problem(FitConfig(guard=1.0)) == "--guard: 0 (off) or a factor above 1 over the member's best MSE, got 1"
    assert schedule_problem(FitConfig(guard=0.0)) == "" and schedule_problem(FitConfig(guard=5.0)) == ""


def test_a_fit_killed_after_a_restore_resumes_to_the_uninterrupted_result(tmp_path):
    """The guard's best checks, their weights and the restore count travel in the resume checkpoint: killed two steps
    after the restore at step 32 and run again (no second jump: the resumed process counts its steps afresh), the fit
    ends where the uninterrupted one does."""
    whole, a = run(10.0, jump=True)
    ckpt = tmp_path / "fit.pt"
    with pytest.raises(KeyboardInterrupt):
        run(10.0, jump=True, ckpt=ckpt, stop_at=35)
    resumed, b = run(10.0, jump=False, ckpt=ckpt)
    assert resumed.guarded == whole.guarded == [1, 0]
    assert resumed.curve == whole.curve and resumed.status == whole.status and torch.equal(a, b)


@pytest.mark.parametrize("schedule", [{}, {"schedule": "plateau"}, {"cycles": 2}, {"check_steps": 100}])
def test_the_stated_rule_names_the_guard_only_when_it_is_on(schedule):
    on, off = FitConfig(guard=10.0, **schedule), FitConfig(**schedule)
    assert "the jump guard: a check above 10x the member's best check" in stop_rule(on)
    assert "guard" not in stop_rule(off)
