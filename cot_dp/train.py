"""Training (next-token loss on the CoT and answer) and evaluation (greedy generation).

Sec. 6.1: AdamW (0.9, 0.999), lr 1e-4, weight decay 0.01, dropout 0.1, the negative
log-likelihood of every token after the prompt (CoT steps, answer and <eos>); evaluation
generates the whole CoT greedily until <eos> and scores the final answer.

Training is resumable: given a checkpoint path, `train` saves (atomically, every `ckpt_every_s`
seconds and after the last step) the model, the AdamW state, the step, the loss curve and running
sums, the step timings, the wall time, the devices the steps ran on and the dropout RNG state(s).  The
batch of a step (`EpochSampler`) and its learning rate (`lr_at`) are functions of the step, so a run stopped and
resumed takes exactly the steps of an uninterrupted one (bit-identical weights and curve on CPU).  A
checkpoint that cannot be used (truncated, corrupt, another model shape or run) is set aside with
one line on stderr (`jackson.checkpoint.set_aside`), never deleted, and training starts from scratch.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import torch
from tqdm.auto import tqdm

from jackson.progress import bar as progress_bar
from jackson.checkpoint import add_steps, load_checkpoint, save_atomic, saved_devices, set_aside
from jackson.schedule import EpochSampler, lr_at, torch_seeded
from jackson.sweep import non_default
from jackson.threads import step_flops, training_threads

from .data import Split
from .model import CotTransformer, n_params
from .tokenizer import EOS_ID
from .settings import TrainConfig


@dataclass
class TrainResult:
    steps: int
    wall_s: float
    step_ms: float                                  # mean wall time of one optimiser step (loss-curve points included)
    curve: list[dict] = field(default_factory=list)  # rows: step, train_loss, test_loss, lr
    step_s: list[float] = field(default_factory=list)  # wall time of each optimiser step alone
    threads: int = 0                                # torch threads the steps ran on (jackson.threads.training_threads)
    devices: list[dict] = field(default_factory=list)  # in order: {"device", "steps"}; device None: not recorded


def device_steps(res: TrainResult) -> list[dict]:
    """Per device, in order: its steps and their mean wall time (ms, from step_s, loss-curve points left out);
    a run resumed on another machine blends both in `step_ms`, and this separates them.  Device null: steps
    saved by a checkpoint that did not record where they ran."""
    out, a = [], 0
    for d in res.devices:
        part = res.step_s[a:a + d["steps"]]
        out.append({"device": d["device"], "steps": d["steps"],
                    "step_ms": 1000 * sum(part) / len(part) if part else None})
        a += d["steps"]
    return out


def batch_loss(model: CotTransformer, ids: torch.Tensor, lengths: torch.Tensor, prompt_lens: torch.Tensor):
    """Mean NLL of every target after the prompt: (sum, count) so callers can pool batches."""
    T = int(lengths.max())
    ids = ids[:, :T].long()
    x, y = ids[:, :-1], ids[:, 1:]                           # (B, T-1) inputs and next tokens
    pos = torch.arange(1, T, device=ids.device)[None]        # position of each target
    keep = (pos >= prompt_lens[:, None]) & (pos < lengths[:, None])
    logits = model(x)                                        # (B, T-1, V)
    nll = torch.nn.functional.cross_entropy(logits[keep], y[keep], reduction="sum")
    return nll, int(keep.sum())


@torch.no_grad()
def heldout_loss(model, split: Split, n: int, device, batch: int = 256) -> float:
    """Mean NLL per CoT/answer token over the first n test lines that carry a CoT; NaN if none does
    (the public benchmark's arithmetic test split keeps only prompts and answers)."""
    model.eval()
    tot, cnt = 0.0, 0
    idx = torch.nonzero(split.has_cot).flatten()[:n]
    for a in range(0, len(idx), batch):
        j = idx[a:a + batch]
        s, c = batch_loss(model, split.ids[j].to(device), split.lengths[j].to(device), split.prompt_lens[j].to(device))
        tot, cnt = tot + s.item(), cnt + c
    return tot / cnt if cnt else float("nan")


@torch.no_grad()
def position_accuracy(model: CotTransformer, split: Split, comma_id: int | None, device: str = "cpu",
                      batch: int = 256, n: int = 2048) -> pd.DataFrame:
    """Teacher-forced accuracy at each CoT position over the first n test lines that carry a CoT: given
    the true tokens before it, is the argmax the true next token?  Position 0 is the first token after
    the prompt; the answer and <eos> count.  Columns: position, row and col (the position's place in the
    CoT when it is split after every "," token, comma_id; row 0 throughout when None), accuracy, n (lines
    that reach it).  Where generation fails, this shows which step of the recurrence the model has not
    learned: for ED with equal lengths, (row, col) = (i, j) is the DP entry dp[i+1][j+1]."""
    model.eval().to(device)
    idx = torch.nonzero(split.has_cot).flatten()[:n]
    keys, hits = [], []
    for a in range(0, len(idx), batch):
        j = idx[a:a + batch]
        T = int(split.lengths[j].max())
        ids = split.ids[j, :T].long()
        y = ids[:, 1:]                                                  # target of input position t is ids[t + 1]
        pred = model(ids[:, :-1].to(device)).argmax(-1).cpu()
        t = torch.arange(1, T)[None]                                    # index of each target in its line
        p0 = split.prompt_lens[j][:, None]
        keep = (t >= p0) & (t < split.lengths[j][:, None])
        pos = t - p0                                                    # place in the CoT
        comma = keep & (y == comma_id) if comma_id is not None else torch.zeros_like(keep)
        row = torch.cumsum(comma.long(), 1) - comma.long()             # commas strictly before
        last = torch.where(comma, pos, torch.full_like(pos, -1)).cummax(1).values
        last_before = torch.cat([torch.full_like(last[:, :1], -1), last[:, :-1]], 1)
        col = pos - last_before - 1
        keys.append(torch.stack([pos[keep], row[keep], col[keep]], 1))
        hits.append((pred == y)[keep])
    if not keys:
        return pd.DataFrame(columns=["position", "row", "col", "accuracy", "n"])
    df = pd.DataFrame(torch.cat(keys).numpy(), columns=["position", "row", "col"])
    df["hit"] = torch.cat(hits).numpy().astype(float)
    out = df.groupby(["position", "row", "col"], as_index=False).agg(accuracy=("hit", "mean"), n=("hit", "size"))
    return out


def _run_id(cfg: TrainConfig, seed: int, n_train: int, n_steps: int, ident: str) -> dict:
    """What a checkpoint must match to be resumed from: the training, the seed, the data size, the
    caller's identity of the run (a cot-dp cell's key); the model's shapes are checked on loading.  The
    config's fields that differ from their defaults, as in cell keys: a field added later keeps checkpoints."""
    return {"train": non_default(cfg), "seed": seed, "n_train": n_train, "steps": n_steps, "ident": ident}


def _shape(t) -> str:
    return "absent" if t is None else "x".join(map(str, t.shape)) or "a scalar"


def _resume(ckpt: Path, model, opt, device, run: dict) -> dict:
    """Load the saved state into model and opt and return the rest (step, curve, sums, timings, RNG
    states); or {"error": why} with model and opt as they were, when the file is unusable."""
    def read(st: dict) -> dict:
        here, there = model.state_dict(), st["model"]
        for k in list(here) + [k for k in there if k not in here]:
            a, b = here.get(k), there.get(k)
            if a is None or b is None or a.shape != b.shape:
                raise ValueError(f"another model: {k} is {_shape(a)} here, {_shape(b)} in the checkpoint")
        model.load_state_dict(there)
        opt.load_state_dict(st["opt"])
        rng = st["rng_cpu"].cpu()
        if rng.dtype != torch.uint8 or rng.shape != torch.get_rng_state().shape:
            raise ValueError("malformed RNG state")
        state = {"step": int(st["step"]), "wall_s": float(st["wall_s"]), "curve": [dict(r) for r in st["curve"]],
                 "run_loss": float(st["run_loss"]), "run_n": int(st["run_n"]),
                 "step_s": [float(x) for x in st["step_s"].tolist()], "rng_cpu": rng,
                 "rng_cuda": st["rng_cuda"].cpu() if st.get("rng_cuda") is not None else None}
        if not (0 <= state["step"] <= run["steps"] and len(state["step_s"]) == state["step"]):
            raise ValueError(f"malformed step count {state['step']}")
        state["devices"] = saved_devices(st, state["step"])   # the devices the saved steps ran on
        return state
    return load_checkpoint(ckpt, run, "cot-dp training", [model, opt], read, map_location=device)


def step_work(model: CotTransformer, batch: int, L: int) -> float:
    """One training step's work on batch x L tokens (jackson.threads.step_flops): the parameters, and each
    layer's scores and weighted sums over L^2 token pairs, D wide each."""
    return step_flops(n_params(model), batch * L, attention=model.cfg.arch.n_layers * batch * L * L * 2 * model.cfg.d_model)


def train(model: CotTransformer, train_split: Split, test_split: Split, cfg: TrainConfig, seed: int,
          device: str = "cpu", progress: bool = True, desc: str = "train", ckpt: str | Path | None = None,
          ckpt_every_s: float = 120.0, ident: str = "") -> TrainResult:
    """AdamW on shuffled passes over the training split; dropout draws come from `seed`; on the threads
    jackson.threads' rule gives the step (TrainResult.threads).

    ckpt: a resume checkpoint, written every `ckpt_every_s` seconds (0: every step) and after the last
    step; training resumes from it when it exists and matches this run (`ident`, e.g. a cell key, and
    the config, seed and data size), else it is set aside.  Nothing is deleted: the caller removes the
    checkpoint once its results are written."""
    with training_threads(step_work(model, cfg.batch_size, train_split.ids.shape[1])) as n:
        res = _train(model, train_split, test_split, cfg, seed, device, progress, desc, ckpt, ckpt_every_s, ident)
    res.threads = n
    return res


def _train(model: CotTransformer, train_split: Split, test_split: Split, cfg: TrainConfig, seed: int, device: str,
           progress: bool, desc: str, ckpt, ckpt_every_s: float, ident: str) -> TrainResult:
    model.to(device)
    n_steps = cfg.total_steps(len(train_split))
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(cfg.beta1, cfg.beta2),
                            weight_decay=cfg.weight_decay)
    sampler = EpochSampler(len(train_split), cfg.batch_size, seed, device=device)
    ids, lengths, plens = (a.to(device) for a in (train_split.ids, train_split.lengths, train_split.prompt_lens))
    res = TrainResult(steps=n_steps, wall_s=0.0, step_ms=0.0)
    run_loss, run_n = 0.0, 0
    start, wall0, saved = 0, 0.0, None
    run = _run_id(cfg, seed, len(train_split), n_steps, ident)
    ckpt = Path(ckpt) if ckpt is not None else None
    if ckpt is not None and ckpt.is_file():
        saved = _resume(ckpt, model, opt, device, run)
        if "error" in saved:
            set_aside(ckpt, saved["error"], desc)
            saved = None
        else:
            start, wall0, res.curve, res.step_s = saved["step"], saved["wall_s"], saved["curve"], saved["step_s"]
            run_loss, run_n, res.devices = saved["run_loss"], saved["run_n"], saved["devices"]
            print(f"{desc}: resuming from {ckpt} at step {start} of {n_steps} ({wall0:.0f} s trained before)",
                  file=sys.stderr, flush=True)
    sampler.skip_to(start)                                    # the batches of the steps already taken are drawn, unused
    bar = progress_bar(n_steps, desc, progress, leave=False, initial=start)   # a bar on a terminal, lines in a log
    t0 = time.perf_counter() - wall0
    last_ck = time.perf_counter()
    devices = [torch.device(device).index or 0] if str(device).startswith("cuda") else []

    def checkpoint(step: int) -> None:
        ckpt.parent.mkdir(parents=True, exist_ok=True)
        save_atomic(ckpt, {"run": run, "model": model.state_dict(), "opt": opt.state_dict(), "step": step,
                           "wall_s": time.perf_counter() - t0, "curve": res.curve, "run_loss": run_loss,
                           "run_n": run_n, "step_s": torch.tensor(res.step_s, dtype=torch.float64),
                           "devices": add_steps(res.devices, str(device), step - start),
                           "rng_cpu": torch.get_rng_state(),
                           "rng_cuda": torch.cuda.get_rng_state(devices[0]) if devices else None})

    with torch_seeded(seed, devices):                         # dropout masks
        if saved is not None:                                 # where the stopped run's dropout stream was
            torch.set_rng_state(saved["rng_cpu"])
            if devices and saved["rng_cuda"] is not None:
                torch.cuda.set_rng_state(saved["rng_cuda"], devices[0])
        for step in range(start + 1, n_steps + 1):
            ts = time.perf_counter()
            model.train()
            j = sampler.batch(step - 1)
            lr = lr_at(step, cfg.lr, n_steps, cfg.warmup, cfg.schedule)   # cosine: after warm-up, 0 at the last step
            for g in opt.param_groups:
                g["lr"] = lr
            s, c = batch_loss(model, ids[j], lengths[j], plens[j])
            loss = s / max(c, 1)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.grad_clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            opt.step()
            run_loss, run_n = run_loss + loss.item(), run_n + 1
            res.step_s.append(time.perf_counter() - ts)
            bar.update(1)
            if step % cfg.eval_every == 0 or step == n_steps:
                tl = heldout_loss(model, test_split, cfg.eval_size, device)
                res.curve.append({"step": step, "train_loss": run_loss / run_n, "test_loss": tl, "lr": lr})
                bar.set_postfix(loss=f"{run_loss / run_n:.3f}", test=f"{tl:.3f}")
                run_loss, run_n = 0.0, 0
            # after the last step too: a run stopped while it scores greedy generation does not train again
            if ckpt is not None and (step == n_steps or time.perf_counter() - last_ck >= ckpt_every_s):
                checkpoint(step)
                last_ck = time.perf_counter()
    bar.close()
    res.wall_s = time.perf_counter() - t0
    res.step_ms = 1000 * res.wall_s / n_steps
    res.devices = add_steps(res.devices, str(device), n_steps - start)
    return res


@torch.no_grad()
def accuracy(model: CotTransformer, split: Split, device: str = "cpu", batch: int = 256,
             n: int = 0, progress: bool = False) -> dict:
    """Greedy generation from every prompt: answer accuracy (the paper's metric) and exact CoTs."""
    model.eval().to(device)
    N = len(split) if n <= 0 else min(n, len(split))
    right = exact = with_cot = 0
    for a in tqdm(range(0, N, batch), desc="generate", disable=not (progress and sys.stderr.isatty()), leave=False, dynamic_ncols=True):
        sl = slice(a, min(a + batch, N))
        plen = split.prompt_lens[sl]
        prompts = split.ids[sl, :int(plen.max())].long().to(device)
        out = model.generate(prompts, plen, EOS_ID).cpu()                  # (b, max_len + 1)
        L = split.lengths[sl]
        for i in range(out.shape[0]):
            gen = out[i]
            stop = torch.nonzero(gen == EOS_ID).flatten()
            end = int(stop[stop >= int(plen[i])][0]) if len(stop[stop >= int(plen[i])]) else len(gen)
            answer = int(gen[end - 1]) if end < len(gen) and end > int(plen[i]) else -1   # no <eos>: wrong
            right += answer == int(split.answers[sl][i])
            if bool(split.has_cot[sl][i]):
                with_cot += 1
                want = split.ids[sl][i, :int(L[i])].long()
                exact += end + 1 == int(L[i]) and bool((gen[:end + 1] == want).all())
    return {"accuracy": right / N, "cot_exact": exact / with_cot if with_cot else float("nan"), "n_eval": N}
