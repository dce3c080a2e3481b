"""Train (or continue training) a ViT on CIFAR-10, resumably.

Deterministic by construction: the shuffle of epoch e and the augmentation of batch b are drawn
from generators seeded by (seed, e) and (seed, e, b), so a run killed and resumed from its last
checkpoint takes exactly the steps an uninterrupted run takes.  Checkpoints (model, optimiser,
schedule position, and the arch spec when the caller gives it) are written atomically every
`ckpt_every_s` seconds and at each epoch end.  A checkpoint that cannot be resumed from (truncated,
corrupt, another architecture) is set aside as `<name>.corrupt-<time>` -- never deleted -- with
one line on stderr, and training starts from scratch.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from jackson.progress import bar as progress_bar
from jackson.checkpoint import load_checkpoint, save_atomic, set_aside
from jackson.schedule import EpochSampler, lr_at, seeded_generator
from jackson.threads import step_flops, training_threads

from .configs import TrainConfig
from .data import normalise, subset


def tokens_per_image(model: torch.nn.Module) -> int:
    """The tokens a model sees per image, for the thread rule's estimate of a step: timm's patch count and prefix
    tokens; a model that does not say (the torch-vit model's patch_embed is a plain convolution) counts as the lab's
    ViTs, 8 x 8 patches of 4 x 4 pixels and a class token."""
    return getattr(getattr(model, "patch_embed", None), "num_patches", 64) + getattr(model, "num_prefix_tokens", 1)


def augment(x: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """Random 32x32 crop of the zero-padded (40x40) image and a random horizontal flip.
    x: (B, 3, 32, 32) float; the randomness comes from g (CPU generator)."""
    B = x.shape[0]
    pad = F.pad(x, (4, 4, 4, 4))                                      # (B, 3, 40, 40)
    oy = torch.randint(0, 9, (B,), generator=g).to(x.device)
    ox = torch.randint(0, 9, (B,), generator=g).to(x.device)
    flip = (torch.rand(B, generator=g) < 0.5).to(x.device)
    ar = torch.arange(32, device=x.device)
    rows = (oy[:, None] + ar)[:, :, None]                            # (B, 32, 1)
    cols = (ox[:, None] + ar)[:, None, :]                            # (B, 1, 32)
    cols = torch.where(flip[:, None, None], ox[:, None, None] + 31 - ar[None, None, :], cols)
    bi = torch.arange(B, device=x.device)[:, None, None]
    return pad.permute(0, 2, 3, 1)[bi, rows, cols].permute(0, 3, 1, 2)  # (B, 3, 32, 32)


def _resume(ckpt: Path, model, opt, dev, arch: str) -> dict:
    """Load the saved state into model and opt and return its step, wall time, history and running
    sums; or {"error": why} with model and opt as they were, when the file is unusable."""
    def read(st: dict) -> dict:
        if arch and st.get("arch", arch) != arch:
            raise ValueError(f"it holds {st['arch']}, this run trains {arch}")
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["opt"])
        state = {"step": int(st["step"]), "wall_s": float(st["wall_s"]),
                 "history": [dict(zip(st["history_keys"], row)) for row in st["history"].tolist()],
                 "running": [float(v) for v in st["running"].tolist()]}
        if len(state["running"]) != 3:
            raise ValueError("malformed running sums")
        return state
    return load_checkpoint(ckpt, None, "vit-probe training", [model, opt], read, map_location=dev)


def train(model: torch.nn.Module, images: np.ndarray, labels: np.ndarray, cfg: TrainConfig, seed: int,
          ckpt: Path | None = None, progress: bool = True, desc: str = "train",
          transform=None, device: str = "cpu", arch: str = "") -> list[dict]:
    """Train in place; returns the per-epoch history [{epoch, step, train_loss, train_err, wall_s}].

    transform: optional callable applied to the normalised batch before the model (unused by
    the default pipeline; the permutation test permutes tokens inside the model instead).
    arch: the model's spec, stored in the checkpoint (so `vit-probe --checkpoint` can check it)
    and checked on resume.  Resumes from `ckpt` when it exists and is usable (else sets it aside);
    deletes nothing (the caller removes it when done).
    """
    n_params = sum(p.numel() for p in model.parameters())
    with training_threads(step_flops(n_params, cfg.batch_size * tokens_per_image(model))):
        return _train(model, images, labels, cfg, seed, ckpt, progress, desc, transform, device, arch)


def _train(model: torch.nn.Module, images: np.ndarray, labels: np.ndarray, cfg: TrainConfig, seed: int,
           ckpt: Path | None, progress: bool, desc: str, transform, device: str, arch: str) -> list[dict]:
    dev = torch.device(device)
    if dev.type == "cuda":   # TF32 matmuls: the usual GPU setting for ViT training
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    model.to(dev)
    n = min(cfg.n_train, len(labels))
    if n < len(labels):   # never the first n: data folders are sorted by class
        keep = subset(labels, n, seed)
        images, labels = images[keep], np.asarray(labels)[keep]
    X = torch.from_numpy(np.ascontiguousarray(images)).to(dev)      # (n, 32, 32, 3) uint8
    Y = torch.from_numpy(np.asarray(labels)).long().to(dev)
    steps_per_epoch = max(1, n // cfg.batch_size)
    total = max(1, int(round(cfg.epochs * steps_per_epoch)))
    warm = max(1, int(cfg.warmup_frac * total))   # warm-up steps
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim < 2 or "pos_embed" in name or "cls_token" in name else decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr, betas=(0.9, 0.999))
    step, history, wall0 = 0, [], 0.0
    run_loss = run_err = run_n = 0.0     # sums over the current epoch's steps
    if ckpt is not None and Path(ckpt).is_file():
        st = _resume(Path(ckpt), model, opt, dev, arch)
        if "error" in st:
            set_aside(Path(ckpt), st["error"], desc)
        else:
            step, wall0, history = st["step"], st["wall_s"], st["history"]
            run_loss, run_err, run_n = st["running"]
    t0, last_ck = time.time() - wall0, time.time()
    keys = ["epoch", "step", "train_loss", "train_err", "wall_s"]

    def checkpoint():
        if ckpt is not None:
            save_atomic(Path(ckpt), {"model": model.state_dict(), "opt": opt.state_dict(), "step": torch.tensor(step),
                                    **({"arch": arch} if arch else {}),
                                    "wall_s": torch.tensor(time.time() - t0), "history_keys": keys,
                                    "running": torch.tensor([run_loss, run_err, run_n], dtype=torch.float64),
                                    "history": torch.tensor([[h[k] for k in keys] for h in history], dtype=torch.float64)
                                    .reshape(-1, len(keys))})

    bar = progress_bar(total, desc, progress, initial=step, unit="step")   # a bar on a terminal, lines in a log
    model.train()
    sampler = EpochSampler(n, cfg.batch_size, seed, per_epoch=True, device=dev)   # batch b of epoch e: any step first
    sums = torch.zeros(3, dtype=torch.float64, device=dev)   # loss*n, wrong, n of this epoch (no per-step sync)
    sums += torch.tensor([run_loss, run_err, run_n], dtype=torch.float64, device=dev)
    while step < total:
        epoch, b = divmod(step, steps_per_epoch)
        idx = sampler.batch(step)
        x = normalise(X[idx])
        if cfg.augment:
            x = augment(x, seeded_generator(seed, epoch, b))
        if transform is not None:
            x = transform(x)
        for grp in opt.param_groups:
            # the cosine starts at its peak on the step after the warm-up's last and spans total - warm
            # steps, so the last step's lr is just above 0 (the schedule every vit-probe run used)
            grp["lr"] = lr_at(step + 1, cfg.lr, total, warm, decay_from=warm + 1, decay_steps=max(1, total - warm))
        out = model(x)
        loss = F.cross_entropy(out, Y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        with torch.no_grad():
            sums[0] += loss.detach().double() * len(idx)
            sums[1] += (out.argmax(-1) != Y[idx]).sum()
            sums[2] += len(idx)
        step += 1
        bar.update(1)
        if step % steps_per_epoch == 0 or step == total:
            run_loss, run_err, run_n = sums.tolist()
            if not np.isfinite(run_loss):
                raise FloatingPointError(f"{desc}: the training loss became {run_loss} in epoch {epoch}")
            history.append({"epoch": step / steps_per_epoch, "step": step, "train_loss": run_loss / max(run_n, 1),
                            "train_err": run_err / max(run_n, 1), "wall_s": time.time() - t0})
            bar.set_postfix(loss=f"{history[-1]['train_loss']:.3f}", err=f"{history[-1]['train_err']:.3f}")
            sums.zero_()
            run_loss = run_err = run_n = 0.0
            checkpoint()
            last_ck = time.time()
        elif time.time() - last_ck > cfg.ckpt_every_s:
            run_loss, run_err, run_n = sums.tolist()
            checkpoint()
            last_ck = time.time()
    bar.close()
    model.eval()
    return history
