"""Training (next-token loss on the CoT and answer) and evaluation (greedy generation).

Sec. 6.1: AdamW (0.9, 0.999), lr 1e-4, weight decay 0.01, dropout 0.1, the negative
log-likelihood of every token after the prompt (CoT steps, answer and <eos>); evaluation
generates the whole CoT greedily until <eos> and scores the final answer.
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field

import torch
from tqdm.auto import tqdm

from jackson.progress import bar as progress_bar
from jackson.schedule import EpochSampler, lr_at, torch_seeded

from .data import Split
from .model import CotTransformer
from .tokenizer import EOS_ID




@dataclass(frozen=True)
class TrainConfig:
    steps: int = 3000            # optimiser steps (used when epochs = 0)
    epochs: float = 0.0          # passes over the training set; > 0 replaces steps (the paper: 100)
    batch_size: int = 64         # sequences per step (the paper: 512)
    lr: float = 1e-4             # AdamW peak learning rate (Sec. 6.1: 1e-4)
    weight_decay: float = 0.01   # AdamW weight decay (Sec. 6.1: 0.01)
    beta1: float = 0.9           # AdamW beta_1
    beta2: float = 0.999         # AdamW beta_2
    warmup: int = 0              # steps of linear learning-rate warm-up
    schedule: str = "constant"   # learning rate after warm-up: constant | cosine (to 0 at the last step)
    grad_clip: float = 1.0       # clip the global gradient norm to this (0: no clipping)
    eval_every: int = 250        # steps between loss-curve points (teacher-forced loss on eval_size test lines)
    eval_size: int = 256         # test sequences behind each loss-curve point
    gen_batch: int = 256         # sequences per greedy-generation batch

    def check(self) -> None:
        """Raise ValueError naming the option and its valid range (nan and inf fail every test below)."""
        finite = math.isfinite
        if not (self.steps >= 1 and self.batch_size >= 1):
            raise ValueError(f"--steps, --batch-size: must be >= 1, got {self.steps}, {self.batch_size}")
        if not (finite(self.epochs) and self.epochs >= 0):
            raise ValueError(f"--epochs: must be a finite number >= 0, got {self.epochs}")
        if not (finite(self.lr) and self.lr > 0):
            raise ValueError(f"--lr: must be a finite number > 0, got {self.lr}")
        if not (finite(self.weight_decay) and self.weight_decay >= 0):
            raise ValueError(f"--weight-decay: must be a finite number >= 0, got {self.weight_decay}")
        if not (0 <= self.beta1 < 1 and 0 <= self.beta2 < 1):
            raise ValueError(f"--beta1, --beta2: must be in [0, 1), got {self.beta1}, {self.beta2}")
        if self.schedule not in ("constant", "cosine"):
            raise ValueError(f"--schedule: constant or cosine, got {self.schedule}")
        if not (finite(self.grad_clip) and self.grad_clip >= 0):
            raise ValueError(f"--grad-clip: must be a finite number >= 0 (0: no clipping), got {self.grad_clip}")
        if not (self.warmup >= 0 and self.eval_every >= 1 and self.eval_size >= 1 and self.gen_batch >= 1):
            raise ValueError(f"--warmup, --eval-every, --eval-size, --gen-batch: need warmup >= 0 and the others "
                             f">= 1, got {self.warmup}, {self.eval_every}, {self.eval_size}, {self.gen_batch}")

    def total_steps(self, n_train: int) -> int:
        if self.epochs > 0:
            return max(1, math.ceil(self.epochs * n_train / self.batch_size))
        return self.steps


@dataclass
class TrainResult:
    steps: int
    wall_s: float
    step_ms: float                                  # mean wall time of one optimiser step (loss-curve points included)
    curve: list[dict] = field(default_factory=list)  # rows: step, train_loss, test_loss, lr
    step_s: list[float] = field(default_factory=list)  # wall time of each optimiser step alone


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


def train(model: CotTransformer, train_split: Split, test_split: Split, cfg: TrainConfig, seed: int,
          device: str = "cpu", progress: bool = True, desc: str = "train") -> TrainResult:
    """AdamW on shuffled passes over the training split; dropout draws come from `seed`."""
    model.to(device)
    n_steps = cfg.total_steps(len(train_split))
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(cfg.beta1, cfg.beta2),
                            weight_decay=cfg.weight_decay)
    sampler = EpochSampler(len(train_split), cfg.batch_size, seed, device=device)
    ids, lengths, plens = (a.to(device) for a in (train_split.ids, train_split.lengths, train_split.prompt_lens))
    res = TrainResult(steps=n_steps, wall_s=0.0, step_ms=0.0)
    run_loss, run_n = 0.0, 0
    bar = progress_bar(n_steps, desc, progress, leave=False)   # a bar on a terminal, lines in a log
    t0 = time.perf_counter()
    devices = [torch.device(device).index or 0] if str(device).startswith("cuda") else []
    with torch_seeded(seed, devices):                         # dropout masks
        for step in range(1, n_steps + 1):
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
    bar.close()
    res.wall_s = time.perf_counter() - t0
    res.step_ms = 1000 * res.wall_s / n_steps
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
