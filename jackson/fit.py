"""The one training loop: any TransformerBank, any (x, y) data, per-member stopping.

Every member has its own Adam parameter group, so its learning rate, its plateau detection and
its stopping are its own, and a member trains exactly as it would alone (tests/test_bank.py).

Schedule (the functions live in jackson/schedule.py, shared with every training loop):
  * linear warm-up over `warmup` steps, then
  * "plateau": every `eval_every` steps the member's MSE on a fixed training subset is measured;
    if it has not improved by a factor (1 - `min_improve`) for `patience` checks, its learning
    rate is multiplied by `lr_decay`; once it falls below `min_lr` the member has converged and
    stops updating (a continuation check: each cut is a new chance to improve);
  * "cosine": cosine decay from lr to `min_lr` over the whole budget.  "converged" is decided
    only on the checks where the learning rate is still >= `converged_lr_frac` of its peak (by
    default 10%, steps <= ~80% of the budget): a member is "converged" if its last `patience` such
    checks improved its best MSE by less than `min_improve` -- the loss had flattened while the
    optimiser could still move it -- else "budget".  (Decided at the end of a cosine schedule,
    where the lr is ~0, any member would look flat: that rule labelled a member at MSE 9e5
    "converged".)
  * cosine with `check_steps` > 0 (the continuation check): the members still improving when the budget ends
    train on for `check_steps` more steps, a second cosine cycle from `converged_lr_frac` x the peak down to
    `min_lr` (annealed like the budget's end, so the two are compared alike: a constant rate left every member of
    the card's bank 6-24% above its annealed MSE, reports/jackson/FITTING.md); one whose best training-subset MSE
    over those steps is not `min_improve` below its MSE at the budget's last step has stopped improving
    ("converged"), else "budget".  The curve records every check, so the verdict can be replayed
    (tests/test_stop_rule.py).
  * cosine with `cycles` > 1 (trained until the loss stops decreasing, as App. C trains): the budget's cosine
    cycle is run again from the peak rate, up to `cycles` times.  At every cycle end from the second on a member's
    training-subset MSE is set against its best earlier cycle end (both annealed, so alike); a fall of less than
    `min_improve` stops it ("converged") with the weights of its best cycle end, kept in memory and in the
    checkpoint; one still falling at the last cycle's end is "budget".  A continuation check at a tenth of the rate
    was blind to what more high-rate steps give (reports/jackson/FITTING.md), so each cycle starts at the peak.
  * `guard` > 0 (the jump guard, off by default): a member whose training-subset MSE at a check jumps above `guard`
    x its best check so far gets the weights of that check back, fresh Adam moments and its peak rate times
    hparams.GUARD_CUT; FitResult.guarded counts the restores (tests/test_jump_guard.py).
  * the budget `steps` (x `cycles`) ends everything; a member still improving then is marked "budget".
A member is "diverged" (with the step and value; frozen, the others go on) when its loss turns
non-finite or its training-subset MSE exceeds `explode` x the zero predictor's MSE E[y^2].
Diverged members are excluded from fits and named in summaries.

Resumable: given `ckpt`, `fit` saves (atomically, every `ckpt_every_s` seconds and once it has
finished) the bank, the Adam state, the step, each member's status, plateau state and curve, and the
wall time.  A step's batch (`EpochSampler`) and learning rate (`lr_at`) are functions of the step
and the bank draws no random numbers while it trains, so a fit stopped and resumed takes exactly the
steps of an uninterrupted one (bit-identical weights and curve on CPU: tests/test_fit_resume.py).  A
checkpoint of a finished fit is resumed without a step.  One that cannot be used (truncated, another
run or data, another bank) is set aside with one line on stderr, never deleted, and the fit starts
from scratch.  The caller removes the checkpoint once it has written its results.
"""
from __future__ import annotations

import dataclasses
import hashlib
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from .hparams import GUARD_CUT, FitConfig, schedule_problem
from .models import TransformerBank
from .progress import bar as progress_bar
from .checkpoint import load_checkpoint, save_atomic, set_aside
from .schedule import EpochSampler, Plateau, lr_at
from .threads import step_flops, training_threads


@dataclass
class FitResult:
    status: list[str]                      # per member: converged | budget | diverged: ...
    steps: list[int]                       # steps each member trained
    curve: list[dict] = field(default_factory=list)  # rows: step, member, train_mse, lr
    wall_s: float = 0.0
    threads: int = 0                       # torch threads the steps ran on (jackson.threads.training_threads)
    guarded: list[int] = field(default_factory=list)   # per member: how often the jump guard restored it


@torch.no_grad()
def evaluate(bank: TransformerBank, x: torch.Tensor, y: torch.Tensor, batch: int = 1024,
             by: str = "sequence", absolute: bool = False) -> torch.Tensor:
    """Per-member MSE: by sequence (mean over positions), (M, n_seq); or by position (mean over
    sequences), (M, T), where the error of a target sits along the sequence.  y is (n_seq, T), shared by
    every member, or (M, n_seq, T), a target per member.  absolute: |error| in place of error^2."""
    if by not in ("sequence", "position"):
        raise ValueError(f"evaluate: by must be sequence or position, got {by!r}")
    out = []
    for a in range(0, len(x), batch):
        d = bank(x[a:a + batch]) - y[..., a:a + batch, :]               # (M, b, T)
        sq = d.abs() if absolute else d ** 2
        out.append(sq.mean(dim=-1) if by == "sequence" else sq.sum(dim=1))
    return torch.cat(out, dim=1) if by == "sequence" else sum(out) / len(x)


def _fingerprint(*ts: torch.Tensor) -> str:
    """A hash of the training data: a checkpoint is resumed only on the data it was trained on."""
    h = hashlib.sha1()
    for t in ts:
        h.update(str(tuple(t.shape)).encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def _resume(ckpt: Path, bank, opt, run: dict) -> dict:
    """Load a checkpoint's bank and Adam state and return the rest; {"error": why} (bank and opt as they
    were) when it cannot be used."""
    def read(st: dict) -> dict:
        bank.load_state_dict(st["bank"])       # strict: another bank's parameters raise here
        opt.load_state_dict(st["opt"])
        state = {"step": int(st["step"]), "wall_s": float(st["wall_s"]), "done": bool(st["done"]),
                 "curve": [dict(r) for r in st["curve"]], "status": [str(v) for v in st["status"]],
                 "steps": [int(v) for v in st["steps"]], "active": [bool(v) for v in st["active"]],
                 "lr": [float(v) for v in st["lr"]], "best": [float(v) for v in st["best"]],
                 "stale": [int(v) for v in st["stale"]],
                 "ends": [float(v) for v in st.get("ends", [math.inf] * run["members"])],
                 "snap": list(st.get("snap", [None] * run["members"])),
                 "guard": st.get("guard", {"best": [math.inf] * run["members"], "snap": [None] * run["members"],
                                           "guarded": [0] * run["members"]})}
        cap = run["fit"]["steps"] * run["fit"].get("cycles", 1) + run["fit"].get("check_steps", 0)
        if not 0 <= state["step"] <= cap or any(
                len(state[k]) != run["members"] for k in ("status", "steps", "active", "lr", "best", "stale", "ends", "snap")) \
                or any(len(state["guard"][k]) != run["members"] for k in ("best", "snap", "guarded")):
            raise ValueError(f"malformed state (step {state['step']})")
        return state
    return load_checkpoint(ckpt, run, "jackson.fit", [bank, opt], read)


def bank_step_flops(bank, batch: int, T: int) -> float:
    """One training step's work on batch x T tokens (jackson.threads.step_flops): the bank's own estimate
    (`step_work`: a bank with attention), else every parameter on every token (an RNN bank)."""
    own = getattr(bank, "step_work", None)
    return own(batch, T) if own is not None else step_flops(sum(p.numel() for p in bank.parameters()), batch * T)


def fit(bank: TransformerBank, x: torch.Tensor, y: torch.Tensor, cfg: FitConfig, seed: int,
        progress: bool = True, desc: str = "fit", ckpt: str | Path | None = None,
        ckpt_every_s: float = 120.0, ident: str = "") -> FitResult:
    """Train all members of `bank` on (x, y) = ((N, T), (N, T)) float32 tensors (y may be (M, N, T): a target
    per member), on the threads jackson.threads' rule gives the step (FitResult.threads).

    ckpt: a resume checkpoint (module docstring), written every `ckpt_every_s` seconds (0: every step)
    and when the fit ends; resumed from when it matches this run (`ident`, e.g. a cell key, and the
    config, seed, bank size and data)."""
    with training_threads(bank_step_flops(bank, cfg.batch_size, x.shape[1])) as n:
        res = _fit(bank, x, y, cfg, seed, progress, desc, ckpt, ckpt_every_s, ident)
    res.threads = n
    return res


def _fit(bank, x, y, cfg: FitConfig, seed: int, progress: bool, desc: str, ckpt, ckpt_every_s: float,
         ident: str) -> FitResult:
    if cfg.schedule not in ("plateau", "cosine"):
        raise ValueError(f"--schedule: choose plateau or cosine, got {cfg.schedule}")
    why = schedule_problem(cfg)     # the commands' own check, so a library caller meets the same refusal
    if why:
        raise ValueError(why)
    cycles = cfg.cycles                 # > 1 only on the cosine schedule (schedule_problem)
    M = len(bank)
    params = bank.member_param_groups()
    groups = [{"params": ps, "lr": cfg.lr} for ps in params]
    opt = torch.optim.Adam(groups, lr=cfg.lr, fused=True)  # one fused kernel: ~10% faster steps on CPU
    sampler = EpochSampler(len(x), cfg.batch_size, seed)
    checks = Plateau(M, cfg.lr, cfg.patience, cfg.min_improve, cfg.lr_decay, cfg.min_lr)   # cosine: verdicts only
    shape = "constant" if cfg.schedule == "plateau" else "cosine"   # plateau: each member's own lr, warmed up
    active = torch.ones(M, dtype=torch.bool)
    status = ["budget"] * M
    budget = cfg.steps * cycles          # the cap of every member's steps before a continuation check
    steps = [budget] * M
    # cosine with check_steps: after the budget, the members still improving train on for a second, shorter cosine
    # cycle, and the fall of their training-subset MSE over it decides their status (`_continuation_verdicts`)
    total = budget + (cfg.check_steps if cfg.schedule == "cosine" else 0)
    ends, snap = [math.inf] * M, [None] * M     # cycles: each member's best cycle-end MSE and its weights then
    res = FitResult(status, steps)
    # the jump guard: each member's best check so far, its weights then, and how often it was restored
    guard = {"best": [math.inf] * M, "snap": [None] * M, "guarded": [0] * M}
    start, wall0, done = 0, 0.0, False
    ckpt = Path(ckpt) if ckpt is not None else None
    run = ({"fit": dataclasses.asdict(cfg), "seed": seed, "members": M, "data": _fingerprint(x, y), "ident": ident}
           if ckpt is not None else None)
    if ckpt is not None and ckpt.is_file():
        saved = _resume(ckpt, bank, opt, run)
        if "error" in saved:
            set_aside(ckpt, saved["error"], desc)
        else:
            start, wall0, done, res.curve = saved["step"], saved["wall_s"], saved["done"], saved["curve"]
            status[:], steps[:] = saved["status"], saved["steps"]
            active = torch.tensor(saved["active"], dtype=torch.bool)
            checks.lr, checks.best, checks.stale = saved["lr"], saved["best"], saved["stale"]
            ends[:], snap[:] = saved["ends"], saved["snap"]
            guard.update(saved["guard"])
            if progress:
                print(f"{desc}: resuming from {ckpt} at step {start} of {total}"
                      f"{' (finished)' if done else ''} ({wall0:.0f} s trained before)", file=sys.stderr, flush=True)
    x_eval, y_eval = x[:cfg.eval_size], y[..., :cfg.eval_size, :]
    blowup = cfg.explode * float((y_eval.double() ** 2).mean())
    t0 = time.perf_counter() - wall0
    last_ck = time.perf_counter()

    def checkpoint(step: int, finished: bool) -> None:
        ckpt.parent.mkdir(parents=True, exist_ok=True)
        save_atomic(ckpt, {"run": run, "bank": bank.state_dict(), "opt": opt.state_dict(), "step": step,
                           "done": finished, "wall_s": time.perf_counter() - t0, "curve": res.curve,
                           "status": list(status), "steps": list(steps), "active": active.tolist(),
                           "lr": list(checks.lr), "best": list(checks.best), "stale": list(checks.stale),
                           "ends": list(ends), "snap": list(snap), "guard": guard})

    @torch.no_grad()
    def restore(i: int, kept: list) -> None:
        """Member i's weights set back to `kept` (a copy of its parameters taken earlier)."""
        for p, k in zip(params[i], kept):
            p.copy_(k)

    def cycle_end(i: int, v: float, step: int) -> None:
        """cycles: member i's training-subset MSE v at the end of a cycle: still falling by min_improve below its
        best earlier cycle end, or stopped with the weights of its best one (restored at once: it trains no more)."""
        falling = v < ends[i] * (1 - cfg.min_improve)
        if v < ends[i]:
            ends[i], snap[i] = v, [p.detach().clone() for p in params[i]]
        if falling:
            return
        restore(i, snap[i])
        status[i], steps[i], active[i] = "converged", step, False
        opt.param_groups[i]["lr"] = 0.0

    def guarded(i: int, v: float) -> bool:
        """The jump guard at member i's check of training-subset MSE v: a new best is kept (weights copied); a jump
        above cfg.guard x that best restores them, clears the member's Adam moments and cuts its peak rate."""
        if v < guard["best"][i]:
            guard["best"][i], guard["snap"][i] = v, [p.detach().clone() for p in params[i]]
            return False
        if math.isfinite(v) and v <= cfg.guard * guard["best"][i] or guard["snap"][i] is None:
            return False
        restore(i, guard["snap"][i])
        for p in params[i]:
            opt.state.pop(p, None)               # Adam starts afresh from the restored weights
        checks.lr[i] *= GUARD_CUT
        guard["guarded"][i] += 1
        return True

    step = start
    if not done:
        sampler.skip_to(start)      # the batches of the steps already taken are drawn, unused
        bar = progress_bar(total, desc, progress, leave=False, initial=start)   # a bar on a terminal, lines in a log
        for step in range(start + 1, total + 1):
            idx = sampler.batch(step - 1)
            if step == budget + 1:           # the check begins: members already flat at a high rate stop here
                for i in range(M):
                    if status[i] == "budget" and active[i] and checks.flat(i):
                        status[i], active[i] = "converged", False
            for i, g in enumerate(opt.param_groups):
                if not active[i]:
                    g["lr"] = 0.0
                elif step > budget:          # the continuation check: a second cosine cycle, from a tenth of the peak
                    g["lr"] = lr_at(step - cfg.steps, cfg.converged_lr_frac * cfg.lr, cfg.check_steps, 0, "cosine",
                                    floor=cfg.min_lr, decay_from=0)
                else:                        # cosine: over the whole budget (each cycle's), times the warm-up ramp, down to min_lr
                    g["lr"] = lr_at((step - 1) % cfg.steps + 1, checks.lr[i], cfg.steps, cfg.warmup, shape,
                                    floor=cfg.min_lr, decay_from=0)
            losses = ((bank(x[idx]) - y[..., idx, :]) ** 2).mean(dim=(1, 2))    # (M,)
            bad = ~torch.isfinite(losses.detach()) & active
            for i in torch.nonzero(bad).flatten().tolist():
                status[i] = f"diverged: non-finite loss ({losses[i].item()}) at step {step}"
                steps[i], active[i] = step, False
                opt.param_groups[i]["lr"] = 0.0
            if not bool(active.any()):
                break
            opt.zero_grad(set_to_none=True)
            losses[active].sum().backward()
            opt.step()
            bar.update(1)
            if step % cfg.eval_every == 0 or step in (cfg.steps, total) or step % cfg.steps == 0:
                mse = evaluate(bank, x_eval, y_eval).mean(dim=1)
                for i in range(M):
                    if not active[i]:
                        continue
                    v = mse[i].item()
                    res.curve.append({"step": step, "member": i, "train_mse": v,
                                      "lr": opt.param_groups[i]["lr"]})
                    if cfg.guard and guarded(i, v):
                        continue                 # restored to its best check: no verdict from the jump
                    if not math.isfinite(v) or v > blowup:
                        what = "non-finite training MSE" if not math.isfinite(v) else \
                            f"training MSE {v:.3g} > {cfg.explode:g} x E[y^2]"
                        status[i] = f"diverged: {what} at step {step}"
                        steps[i], active[i] = step, False
                        opt.param_groups[i]["lr"] = 0.0
                        continue
                    if step > budget:       # the continuation check decides at its end, from the curve
                        continue
                    if cycles > 1:          # the cycles' rule decides at cycle ends, and only there
                        checks.check(i, v, cut=False)       # its best so far, for the progress line only
                        if step % cfg.steps == 0:   # the first cycle's end only sets the mark (it falls from inf)
                            cycle_end(i, v, step)
                        continue
                    judged = cfg.schedule == "plateau" or opt.param_groups[i]["lr"] >= cfg.converged_lr_frac * cfg.lr
                    if not judged:          # cosine, lr below converged_lr_frac of its peak: no verdict from here on
                        continue
                    if checks.check(i, v, cut=cfg.schedule == "plateau" and step > cfg.warmup):
                        status[i], steps[i], active[i] = "converged", step, False
                bar.set_postfix(active=int(active.sum()), best=f"{min(checks.best):.2e}")
                if not bool(active.any()):
                    break
            if ckpt is not None and time.perf_counter() - last_ck >= ckpt_every_s:
                checkpoint(step, False)
                last_ck = time.perf_counter()
        bar.close()
        if ckpt is not None:
            checkpoint(step, True)      # a stop from here on (the caller's evaluation) does not train again
    if cfg.schedule == "cosine" and cycles == 1:
        for i in range(M):
            if status[i] == "budget" and checks.flat(i):
                status[i] = "converged"  # flat over its last `patience` checks at lr >= converged_lr_frac x peak
        if cfg.check_steps and step == total:
            _continuation_verdicts(res, status, steps, active, cfg, total)
    res.wall_s = time.perf_counter() - t0
    res.guarded = list(guard["guarded"])
    return res


def _continuation_verdicts(res: FitResult, status: list, steps: list, active, cfg: FitConfig, total: int) -> None:
    """The continuation check's verdict for each member that trained through it: stopped ("converged") when its
    best training-subset MSE over the check's steps is not `min_improve` below its MSE at the budget's last step,
    still improving ("budget") otherwise; either way it trained to `total` steps.  From the recorded curve, so a
    reader can replay it."""
    for i in range(len(status)):
        if status[i] != "budget" or not active[i]:
            continue
        at_end = [r["train_mse"] for r in res.curve if r["member"] == i and r["step"] == cfg.steps]
        after = [r["train_mse"] for r in res.curve if r["member"] == i and r["step"] > cfg.steps]
        if at_end and after and min(after) > at_end[-1] * (1 - cfg.min_improve):
            status[i] = "converged"
        steps[i] = total

