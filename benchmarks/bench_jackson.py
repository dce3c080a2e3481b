"""Speed of the jackson-sweep training on this machine (issue 2, part 12).

    python benchmarks/bench_jackson.py efficiency bank     # (b) and (c), a few minutes
    python benchmarks/bench_jackson.py time                # (a): the default sweep, ~10 min

(a) time to quality: wall time of the default `jackson-sweep --alpha 1.5 --rank inf` until every
    member has met its stopping criterion (read from the run's cell.json / results.csv).
(b) hardware efficiency: FLOP/s of the training hot loop (forward + backward + Adam of the default
    16-member bank; FLOPs counted by torch.utils.flop_counter) against a 2048^2 fp32 matmul timed
    in the same run.
(c) bank vs per-model loop: models*steps/s of one 16-member bank against the same 16 members
    trained one after another, at the default batch and at batch 32, in the same run.
Every figure is printed as a markdown table together with the machine and the command.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch.utils.flop_counter import FlopCounterMode

from jackson.fit import fit
from jackson.hparams import FitConfig, ModelConfig
from jackson.models import TransformerBank
from jackson.schedule import member_seed

M_HS = tuple(range(1, 17))
T = 16


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, torch {torch.__version__} ({torch.get_num_threads()} threads), {platform.python_version()}"


def matmul_gflops(n: int = 2048, reps: int = 10) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * n ** 3 * reps / (time.perf_counter() - t) / 1e9


def data(n: int = 4096):
    g = torch.Generator().manual_seed(0)
    x = torch.rand(n, T, generator=g)
    return x, x.mean(dim=1, keepdim=True).expand(n, T).contiguous()


def bank(m_hs, seed=0):
    return TransformerBank(ModelConfig(), m_hs, [member_seed(seed, m) for m in m_hs])


def step_flops(b: TransformerBank, batch: int) -> float:
    """FLOPs of one training step (forward + backward), counted by torch."""
    x, y = data(batch)
    with FlopCounterMode(display=False) as fc:
        ((b(x) - y) ** 2).mean(dim=(1, 2)).sum().backward()
    b.zero_grad(set_to_none=True)
    return float(fc.get_total_flops())


def timed_fit(b, batch, steps) -> float:
    x, y = data()
    cfg = FitConfig(steps=steps, batch_size=batch, eval_every=10 ** 9, warmup=1)
    fit(b, x, y, cfg, seed=0, progress=False)
    t = time.perf_counter()
    fit(b, x, y, cfg, seed=0, progress=False)
    return time.perf_counter() - t


def efficiency(steps: int) -> list[str]:
    peak = matmul_gflops()
    b = bank(M_HS)
    fl = step_flops(b, 64)
    wall = timed_fit(b, 64, steps)
    got = fl * steps / wall / 1e9
    peak2 = matmul_gflops()
    ref = max(peak, peak2)
    return ["| (b) hardware efficiency | 16-member bank, batch 64, "
            f"{steps} steps: {fl / 1e9:.2f} GFLOP/step, {wall / steps * 1e3:.1f} ms/step | "
            f"{got:.1f} GFLOP/s vs 2048^2 matmul {ref:.1f} GFLOP/s (before {peak:.1f}, after {peak2:.1f}) | "
            f"**{got / ref:.0%}** |"]


def bank_vs_loop(steps: int, batches=(64, 32)) -> list[str]:
    out = []
    for batch in batches:
        wb = timed_fit(bank(M_HS), batch, steps)
        wl = sum(timed_fit(bank((m,)), batch, steps) for m in M_HS)
        rb, rl = len(M_HS) * steps / wb, len(M_HS) * steps / wl
        out.append(f"| (c) bank vs loop, batch {batch} | 16 members x {steps} steps | bank {rb:.0f}, "
                   f"loop {rl:.0f} models*steps/s | **{rb / rl:.2f}x** |")
    return out


def rnn_paths(reps: int = 100) -> list[str]:
    """Linear RNN: Eq. (74) Toeplitz convolution vs the step-by-step recurrence, same bank, same input."""
    from rnn_compare.models import RNNBank
    from rnn_compare.settings import RNNConfig
    b = RNNBank(RNNConfig(), (0, 1, 2))
    g = torch.Generator().manual_seed(0)
    x, y = torch.rand(64, 32, generator=g), torch.rand(64, 32, generator=g)

    def ms(f):
        for _ in range(5):
            ((f(x) - y) ** 2).mean().backward()
        t = time.perf_counter()
        for _ in range(reps):
            ((f(x) - y) ** 2).mean().backward()
        return (time.perf_counter() - t) / reps * 1e3
    rec, conv = ms(b.recurrent), ms(b.forward)
    diff = (b(x) - b.recurrent(x)).abs().max().item()
    return [f"| rnn: convolution vs recurrence | 3-member linear RNN bank, hidden 128, batch 64, tau 32, fwd+bwd | "
            f"recurrent {rec:.2f} ms, convolution {conv:.2f} ms, max |diff| {diff:.1e} | **{rec / conv:.2f}x** |"]


def time_to_quality(out: Path) -> list[str]:
    cmd = ["jackson-sweep", "--alpha", "1.5", "--rank", "inf", "--out", str(out)]
    exe = Path(sys.executable).parent / "jackson-sweep"
    t = time.perf_counter()
    subprocess.run([str(exe)] + cmd[1:], check=True)
    wall = time.perf_counter() - t
    import pandas as pd
    rows = pd.read_csv(out / "results.csv")
    n_conv = int((rows.status == "converged").sum())
    cells = [json.loads((d / "cell.json").read_text()) for d in (out / "cells").iterdir() if d.is_dir()]
    fit_s = sum(c["fit_wall_s"] for c in cells)
    return [f"| (a) time to quality | `{' '.join(cmd)}` | wall {wall:.0f} s (fit {fit_s:.0f} s); "
            f"{n_conv}/{len(rows)} members converged, max steps {rows.steps.max()} | "
            f"{'**met**' if wall <= 600 and n_conv == len(rows) else '**not met**'} (goal <= 600 s, all converged) |"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("parts", nargs="+", choices=["time", "efficiency", "bank", "rnn"])
    p.add_argument("--steps", type=int, default=200, help="steps per timing (efficiency, bank)")
    p.add_argument("--out", default="", help="folder for the time-to-quality sweep (default: a temp dir)")
    a = p.parse_args(argv)
    lines = [f"Machine: {machine()}", f"Command: `python benchmarks/bench_jackson.py {' '.join(sys.argv[1:] if argv is None else argv)}`", "",
             "| measure | setting | measured | result |", "|---|---|---|---|"]
    if "efficiency" in a.parts:
        lines += efficiency(a.steps)
    if "bank" in a.parts:
        lines += bank_vs_loop(a.steps)
    if "rnn" in a.parts:
        lines += rnn_paths()
    if "time" in a.parts:
        lines += time_to_quality(Path(a.out or tempfile.mkdtemp(prefix="jackson-ttq-")))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
