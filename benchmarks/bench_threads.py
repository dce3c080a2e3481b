"""One thread or all the cores for a training step: the measurement behind the thread rule
(`jackson.config.training_threads`).

    python benchmarks/bench_threads.py              # every workload, 1 and 2 threads, idle and beside a busy core
    python benchmarks/bench_threads.py --quick      # fewer steps (a smoke run)
    python benchmarks/bench_threads.py --flops      # the rule's FLOP estimate of each step beside torch's count

Each (workload, threads, load) runs in a fresh process, so torch's thread pool is built for that count only.
"beside a busy core" starts one process that keeps one core busy with one-thread matrix products, the way a
second one-thread job does on a 2-core machine.  A workload is a training step the lab really takes:

- rate sweep: Eq. (5) banks (jackson.models.TransformerBank, jackson.fit.fit) from the --quick bank and one member
  up to the card command's 16 members, a bank 8x the card's batch, one at tau 128, and the --features given grid's
  bank (jackson.rate_sweep.given.GivenFeatureBank);
- cot-dp: the standard model of Sec. 6.1 (D = 128, 3 layers, batch 64, 32 tokens), and the same at D = 512.

Printed: milliseconds a step (the median of `--repeats` runs), and the work of a step in FLOPs as the rule
estimates it.  Nothing is written; paste the table into reports/benchmarks.md with the date.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

WORKLOADS = {
    # name: (kind, settings)
    "sweep quick bank (3 members, n 8, width 16, batch 32)":
        ("bank", {"m_hs": [1, 2, 3], "n": 8, "width": 16, "batch": 32, "tau": 16}),
    "sweep tiny fit (1 member, m_h 2, batch 64)":
        ("bank", {"m_hs": [2], "n": 32, "width": 128, "batch": 64, "tau": 16}),
    "sweep bank of 2 members (m_h 1, 2, batch 64)":
        ("bank", {"m_hs": [1, 2], "n": 32, "width": 128, "batch": 64, "tau": 16}),
    "sweep bank of 4 members (m_h 1..4, batch 64)":
        ("bank", {"m_hs": [1, 2, 3, 4], "n": 32, "width": 128, "batch": 64, "tau": 16}),
    "sweep bank of 8 members (m_h 1..8, batch 64)":
        ("bank", {"m_hs": list(range(1, 9)), "n": 32, "width": 128, "batch": 64, "tau": 16}),
    "sweep card bank (16 members, batch 64)":
        ("bank", {"m_hs": list(range(1, 17)), "n": 32, "width": 128, "batch": 64, "tau": 16}),
    "sweep bank at 8x the batch (16 members, batch 512)":
        ("bank", {"m_hs": list(range(1, 17)), "n": 32, "width": 128, "batch": 512, "tau": 16}),
    "sweep bank, long sequences (16 members, batch 64, tau 128)":
        ("bank", {"m_hs": list(range(1, 17)), "n": 32, "width": 128, "batch": 64, "tau": 128}),
    "sweep given-features bank (32 members, batch 256)":
        ("given", {"m_hs": [m for m in range(1, 17) for _ in range(2)], "batch": 256, "tau": 16}),
    "cot-dp standard D 128 (batch 64, L 32)":
        ("cot", {"d_model": 128, "batch": 64, "L": 32}),
    "cot-dp standard D 512 (batch 64, L 32)":
        ("cot", {"d_model": 512, "batch": 64, "L": 32}),
}


# steps a run times: about 4 s of one thread each (the step times of a first pass at 1 thread, idle)
STEPS = dict(zip(WORKLOADS, (300, 200, 200, 120, 80, 40, 8, 8, 60, 60, 12)))


def given_bank(s: dict):
    """The --features given grid's bank (trace-free bases) and the fixed features of 4 batches of inputs."""
    import torch
    from jackson.hparams import ModelConfig
    from jackson.rate_sweep.given import GivenFeatureBank
    bank = GivenFeatureBank(ModelConfig(features="given"), s["m_hs"], list(range(len(s["m_hs"]))), phi="sin", psi="cos")
    x = torch.rand(4 * s["batch"], s["tau"], generator=torch.Generator().manual_seed(0))
    return bank, bank.features(x)


def timed_fit(bank, x, y, batch: int, steps: int) -> float:
    """Seconds for `steps` steps of jackson.fit.fit on (x, y), after a 3-step warm-up."""
    from jackson.fit import fit
    from jackson.hparams import FitConfig

    def budget(n):
        return FitConfig(steps=n, batch_size=batch, warmup=1, eval_every=10 ** 9, eval_size=batch)
    fit(bank, x, y, budget(3), seed=0, progress=False)
    t0 = time.perf_counter()
    fit(bank, x, y, budget(steps), seed=0, progress=False)
    return time.perf_counter() - t0


def worker(kind: str, s: dict, steps: int) -> dict:
    import torch
    if kind in ("bank", "given"):
        from jackson.fit import bank_step_flops
        if kind == "bank":
            from jackson.hparams import ModelConfig
            from jackson.models import TransformerBank
            bank = TransformerBank(ModelConfig(n=s["n"], d_v=s["n"], width=s["width"]), s["m_hs"],
                                   list(range(len(s["m_hs"]))))
            g = torch.Generator().manual_seed(0)
            x = torch.rand(4 * s["batch"], s["tau"], generator=g)
            y = torch.rand(4 * s["batch"], s["tau"], generator=g)
        else:
            bank, x = given_bank(s)
            y = x[..., 0]
        wall = timed_fit(bank, x, y, s["batch"], steps)
        flops = bank_step_flops(bank, s["batch"], s["tau"])
    else:
        from cot_dp.model import CotTransformer
        from cot_dp.settings import ArchConfig, ModelConfig
        from cot_dp.train import step_work
        cfg = ModelConfig(d_model=s["d_model"], arch=ArchConfig(dropout=0.0))
        model = CotTransformer(cfg, vocab_size=64, max_len=s["L"], seed=0)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        g = torch.Generator().manual_seed(0)
        ids = torch.randint(0, 64, (s["batch"], s["L"]), generator=g)

        def step():
            logits = model(ids)
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 64), ids.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
        for _ in range(3):
            step()
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        wall = time.perf_counter() - t0
        flops = step_work(model, s["batch"], s["L"])
    return {"ms_per_step": 1e3 * wall / steps, "threads": torch.get_num_threads(), "flops": flops}


def counted(kind: str, s: dict) -> tuple[float, float]:
    """(the rule's estimate, torch's FlopCounterMode count) of one training step's FLOPs (forward and backward)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    if kind == "bank":
        from jackson.fit import bank_step_flops
        from jackson.hparams import ModelConfig
        from jackson.models import TransformerBank
        bank = TransformerBank(ModelConfig(n=s["n"], d_v=s["n"], width=s["width"]), s["m_hs"], list(range(len(s["m_hs"]))))
        x = torch.rand(s["batch"], s["tau"])
        with FlopCounterMode(display=False) as fc:
            ((bank(x) - x) ** 2).mean(dim=(1, 2)).sum().backward()
        return bank_step_flops(bank, s["batch"], s["tau"]), float(fc.get_total_flops())
    if kind == "given":
        from jackson.fit import bank_step_flops
        bank, h = given_bank(s)
        h = h[:s["batch"]]
        with FlopCounterMode(display=False) as fc:
            ((bank(h) - h[..., 0]) ** 2).mean(dim=(1, 2)).sum().backward()
        return bank_step_flops(bank, s["batch"], s["tau"]), float(fc.get_total_flops())
    from cot_dp.model import CotTransformer
    from cot_dp.settings import ArchConfig, ModelConfig
    from cot_dp.train import step_work
    model = CotTransformer(ModelConfig(d_model=s["d_model"], arch=ArchConfig(dropout=0.0)), 64, s["L"], 0)
    ids = torch.randint(0, 64, (s["batch"], s["L"]))
    with FlopCounterMode(display=False) as fc:
        torch.nn.functional.cross_entropy(model(ids).reshape(-1, 64), ids.reshape(-1)).backward()
    return step_work(model, s["batch"], s["L"]), float(fc.get_total_flops())


def burner(seconds: float) -> None:
    """Keep one core busy with one-thread matrix products."""
    import torch
    torch.set_num_threads(1)
    a = torch.rand(256, 256)
    end = time.time() + seconds
    while time.time() < end:
        a = torch.tanh(a @ a)


def measure(name: str, threads: int, steps: int, busy: bool) -> dict:
    kind, s = WORKLOADS[name]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    burn = None
    if busy:
        burn = subprocess.Popen([sys.executable, __file__, "--burn", "600"], env=dict(os.environ, OMP_NUM_THREADS="1"))
        time.sleep(1.0)
    try:
        out = subprocess.run([sys.executable, __file__, "--worker", json.dumps([kind, s, steps])], env=env,
                             capture_output=True, text=True, check=True)
    finally:
        if burn is not None:
            burn.kill()
            burn.wait()
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="few steps and one repeat (a smoke run)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per setting; the median is printed (default: 3)")
    ap.add_argument("--only", default="", help="run only the workloads whose name contains this text")
    ap.add_argument("--flops", action="store_true", help="print the rule's FLOP estimate of each workload's step beside "
                    "torch's own count (FlopCounterMode) and exit")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--burn", type=float, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.burn:
        burner(a.burn)
        return
    if a.flops:
        print("| workload | GFLOP a step: the rule's estimate | torch's count | ratio |\n|---|---|---|---|")
        for name in (n for n in WORKLOADS if a.only in n):
            est, cnt = counted(*WORKLOADS[name])
            print(f"| {name} | {est / 1e9:.3f} | {cnt / 1e9:.3f} | {est / cnt:.2f} |")
        return
    if a.worker:
        kind, s, steps = json.loads(a.worker)
        print(json.dumps(worker(kind, s, steps)))
        return
    repeats = 1 if a.quick else a.repeats
    names = [n for n in WORKLOADS if a.only in n]
    print(f"{len(names)} workloads x threads 1, 2 x idle, busy core x {repeats} repeats; load average now "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    print("| workload | GFLOP a step (rule's estimate) | idle: 1 thread | idle: 2 threads | busy core: 1 thread | "
          "busy core: 2 threads |")
    print("|---|---|---|---|---|---|")
    t_all = time.time()
    for i, name in enumerate(names):
        steps = 5 if a.quick else STEPS[name]
        cells, flops = [], 0.0
        for busy in (False, True):
            for threads in (1, 2):
                ms = []
                for _ in range(repeats):
                    r = measure(name, threads, steps, busy)
                    ms.append(r["ms_per_step"])
                    flops = r["flops"]
                cells.append(f"{statistics.median(ms):.2f} ms" + (f" ({min(ms):.2f}-{max(ms):.2f})" if repeats > 1 else ""))
        print(f"| {name} | {flops / 1e9:.3f} | " + " | ".join(cells) + " |", flush=True)
        print(f"  [{i + 1}/{len(names)} done, {time.time() - t_all:.0f} s]", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
