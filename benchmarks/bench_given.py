"""Speed of the given-features model (jackson/rate_sweep/given.py, issue 12) on this machine.

    python benchmarks/bench_given.py step        # one training step: the folded forward vs a per-member reference
    python benchmarks/bench_given.py grid DIR     # the wall time of a finished grid, from its cells' cell.json

`step` times forward + backward of one training step of the default given-features bank of the
Fig. 1 grid (m_h = 1..16, 2 restarts = 32 members, batch 256, tau 16, trace-free features: dim h = 32)
three ways in one process, after warm-up, alternating: the bank's own forward (rho_hat = (h_t^T A_M) . h_s,
members folded into the query side of one batched matmul per sequence, logits [b, t, member, s]), the
same fold on the key side with logits [b, t, s, member] (the bank's forward until 2026-11-23), and a
reference that forms q = W_Q h, k = W_K h and one (T x m_max) x (m_max x T) product per member and
sequence.  All three compute the same function (checked).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

from jackson.rate_sweep.given import TORCH_F, GivenFeatureBank
from jackson.hparams import ModelConfig


def reference_forward(bank: GivenFeatureBank, hv: torch.Tensor) -> torch.Tensor:
    fx, h = hv[..., 0], hv[..., 1:]
    B, T, _ = h.shape
    M = len(bank)
    W_Q = torch.stack([nn.functional.pad(mb.W_Q, (0, 0, 0, bank.m_max - mb.m_h)) for mb in bank.members])
    W_K = torch.stack([nn.functional.pad(mb.W_K, (0, 0, 0, bank.m_max - mb.m_h)) for mb in bank.members])
    q = torch.matmul(h, W_Q.transpose(1, 2)[:, None]).reshape(M * B, T, -1)   # (M*B, T, m_max)
    k = torch.matmul(h, W_K.transpose(1, 2)[:, None]).reshape(M * B, T, -1)
    att = torch.softmax(q @ k.transpose(1, 2), dim=-1).view(M, B, T, T)
    z = (att * fx[None, :, None, :]).sum(-1)
    a = torch.stack([mb.a for mb in bank.members]).view(M, 1, 1)
    b = torch.stack([mb.b for mb in bank.members]).view(M, 1, 1)
    return TORCH_F[bank.F](a * z + b)


def key_side_forward(bank: GivenFeatureBank, hv: torch.Tensor) -> torch.Tensor:
    """The bank's forward before 2026-11-23: members folded into the key side, logits [b, t, s, member],
    so the softmax and the sum over s ran along a strided axis."""
    fx, h = hv[..., 0], hv[..., 1:]
    B, T, d = h.shape
    M = len(bank)
    A = bank.coupling()
    X = h.reshape(B * T, d) @ A.permute(2, 0, 1).reshape(d, M * d)
    logits = torch.bmm(h, X.view(B, T * M, d).transpose(1, 2)).view(B, T, T, M)
    z = torch.einsum("btsm,bs->mbt", torch.softmax(logits, dim=2), fx)
    a = torch.stack([mb.a for mb in bank.members]).view(M, 1, 1)
    b = torch.stack([mb.b for mb in bank.members]).view(M, 1, 1)
    return TORCH_F[bank.F](a * z + b)


def step(reps: int = 20) -> None:
    torch.set_num_threads(1)
    m_hs = tuple(m for m in range(1, 17) for _ in range(2))
    bank = GivenFeatureBank(ModelConfig(features="given"), m_hs, tuple(range(len(m_hs))), phi="sin", psi="cos")
    hv = bank.features(torch.rand(256, 16, generator=torch.Generator().manual_seed(0)))
    torch.testing.assert_close(bank(hv), reference_forward(bank, hv), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(bank(hv), key_side_forward(bank, hv), rtol=1e-4, atol=1e-5)
    fns = {"folded, query side (the bank)": lambda: bank(hv),
           "folded, key side (before 2026-11-23)": lambda: key_side_forward(bank, hv),
           "per-member reference": lambda: reference_forward(bank, hv)}
    times = {name: [] for name in fns}
    for _ in range(3):
        for f in fns.values():
            f().sum().backward()
    for _ in range(reps):
        for name, f in fns.items():
            t0 = time.perf_counter()
            f().sum().backward()
            times[name].append(time.perf_counter() - t0)
    print(f"command: python benchmarks/bench_given.py step; torch {torch.__version__}, 1 thread, "
          f"{len(m_hs)} members, batch 256, tau 16, dim h 32, {reps} alternating repetitions")
    print("| forward + backward | median ms | min ms |\n|---|---:|---:|")
    for name, ts in times.items():
        print(f"| {name} | {1e3 * statistics.median(ts):.1f} | {1e3 * min(ts):.1f} |")


def grid(folder: Path) -> None:
    metas = [json.loads(p.read_text()) for p in sorted((folder / "cells").glob("*/cell.json"))]
    if not metas:
        sys.exit(f"bench_given: no finished cells under {folder / 'cells'}")
    cell = sum(m["cell_wall_s"] for m in metas)
    print(f"{folder}: {len(metas)} cells, summed cell wall {cell:.0f} s ({cell / 60:.1f} min of worker time), "
          f"longest cell {max(m['cell_wall_s'] for m in metas):.0f} s, torch threads {metas[0]['torch_threads']}")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=["step", "grid"])
    p.add_argument("folder", nargs="?", type=Path)
    a = p.parse_args()
    step() if a.what == "step" else grid(a.folder)
