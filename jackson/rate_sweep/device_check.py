"""Does a device train the Eq. (5) bank to the CPU's numbers?  `jackson-device-check --device cuda`.

`jackson-sweep --device cuda` promises the CPU's numbers up to float32 round-off, not bit for bit
(another device sums in another order).  This check makes that promise testable where a GPU is:
it trains one small cell (`check_cell`, both feature modes) three times from the same initialisations
and the same batches --

  * on the CPU in float64: the reference, free of float32 round-off;
  * on the CPU in float32: what the committed runs did; its distance from the reference is the
    size of float32 round-off on this check;
  * on the device in float32 (or the `dtype` asked for),

and compares every point of the training curves (each member's training-subset MSE at each check)
and each member's final held-out MSE with the reference.

The stated tolerance: the device *agrees* when every such number is within TOLERANCE = 1e-4
(relative) of the float64 reference.  Measured on the 2-core lab CPU (2026-11-25,
`jackson-device-check --device cpu`): the CPU's float32 run is at most 8.5e-6 (learned features) and
1.6e-6 (given) from the reference over the 300 steps, so the tolerance leaves >= 10x for another
device's summation order; a bfloat16 run of the check does not
pass (tested); TF32 matmuls (a 10-bit mantissa) are expected to fail it too (not tried: no GPU).  The
check is short on purpose: over thousands of steps training amplifies round-off, so members of a
full sweep trained on two devices can end further apart than this while the curves, exponents and
verdicts agree.
"""
from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..command import cli_run
from ..config import need
from ..hparams import FitConfig

if TYPE_CHECKING:
    from .cell import RateCell

TOLERANCE = 1e-4     # relative, against the float64 CPU reference (see the module docstring)

GIVEN_FIT = FitConfig(steps=300, batch_size=256, lr=3e-2, warmup=30, eval_every=25)


def check_cell() -> "RateCell":
    """The check's cell: a rank-6 target, three members, 300 steps (learned features: ~25 s on one CPU core in
    float32).  Built on call: the cells import torch, which --help and a bad option never need."""
    from .cell import RateCell
    return RateCell(alpha=1.5, rank=6, seed=0, m_hs=(1, 2, 4), n_train=2048, n_test=1024,
                    fit=FitConfig(steps=300, warmup=30, eval_every=25))


def check_cells(base: "RateCell | None" = None) -> dict[str, "RateCell"]:
    """The cell in both feature modes (given features with the fit of the GIVEN preset, shortened)."""
    base = check_cell() if base is None else base
    return {"learned": base,
            "given": dataclasses.replace(base, model=dataclasses.replace(base.model, features="given"), fit=GIVEN_FIT)}


def trained_numbers(cell: RateCell, dtype: str, progress: bool = False) -> dict:
    """One training of `cell` in `dtype` on `cell.device`: its curve (every check of every member),
    each member's held-out MSE and status, and the wall time."""
    import torch

    from .cell import data_seeds, train_bank
    target = cell.target()
    s_train, s_test = data_seeds(cell.seed)
    x_tr, x_te = target.sample(cell.n_train, s_train), target.sample(cell.n_test, s_test)
    t0 = time.perf_counter()
    _, res, _, err_te = train_bank(cell, x_tr, target(x_tr), x_te, target(x_te), dtype=getattr(torch, dtype),
                                   progress=progress)
    return {"curve": np.array([c["train_mse"] for c in res.curve]), "held_out": err_te.mean(axis=1),
            "status": list(res.status), "wall_s": time.perf_counter() - t0}


def deviation(run: dict, ref: dict) -> float:
    """The largest relative difference of a run's curve points and held-out MSEs from the reference's."""
    need(len(run["curve"]) == len(ref["curve"]),
         f"the runs stopped at different checks ({len(run['curve'])} vs {len(ref['curve'])} curve points)")
    a = np.concatenate([run["curve"], run["held_out"]])
    b = np.concatenate([ref["curve"], ref["held_out"]])
    return float(np.max(np.abs(a - b) / np.abs(b)))


def check(device: str, dtype: str = "float32", modes: tuple[str, ...] = ("learned", "given"),
          cells: dict[str, RateCell] | None = None, progress: bool = True) -> list[dict]:
    """Per feature mode: the CPU float32 and the device runs' deviations from the CPU float64 reference,
    and whether the device agrees (deviation <= TOLERANCE).  `cells`: the cell of each mode (default
    `check_cells()`)."""
    out = []
    cells = cells or check_cells()
    for mode in modes:
        cell = cells[mode]
        runs = {}
        for name, dev, dt in (("reference", "cpu", "float64"), ("cpu", "cpu", "float32"), ("device", device, dtype)):
            if progress:
                print(f"{mode} features: training on {dev} in {dt} ...", file=sys.stderr, flush=True)
            runs[name] = trained_numbers(dataclasses.replace(cell, device=dev), dt, progress)   # fit's bar and ETA
        dev_dev, cpu_dev = deviation(runs["device"], runs["reference"]), deviation(runs["cpu"], runs["reference"])
        out.append({"features": mode, "device": device, "dtype": dtype, "cpu_float32_deviation": cpu_dev,
                    "device_deviation": dev_dev, "tolerance": TOLERANCE, "agrees": dev_dev <= TOLERANCE,
                    "same_status": runs["device"]["status"] == runs["reference"]["status"],
                    "wall_s": {k: round(r["wall_s"], 2) for k, r in runs.items()}})
    return out


def report_lines(rows: list[dict]) -> list[str]:
    lines = []
    for r in rows:
        verdict = "agrees" if r["agrees"] else "DOES NOT agree"
        lines.append(f"{r['features']} features: {r['device']} ({r['dtype']}) is {r['device_deviation']:.2g} from the "
                     f"CPU float64 reference (CPU float32: {r['cpu_float32_deviation']:.2g}); tolerance "
                     f"{r['tolerance']:g}: {verdict}" + ("" if r["same_status"] else "; member statuses differ"))
    return lines


@dataclass(frozen=True)
class DeviceCheckConfig:
    device: str = "cuda"              # torch device to check: cuda, cuda:N or cpu
    dtype: str = "float32"            # the device run's dtype: float32 (what jackson-sweep trains in), bfloat16 or float16
    features: str = "learned,given"   # feature modes to check, comma-separated: learned, given


DTYPES = ("float32", "bfloat16", "float16")


def run_check(cfg: DeviceCheckConfig, command: str = "") -> list[dict]:
    """Validate, run `check` and print one line per feature mode."""
    modes = tuple(m for m in cfg.features.split(",") if m)
    need(bool(modes) and set(modes) <= {"learned", "given"}, f"--features: choose learned and/or given, got {cfg.features!r}")
    need(cfg.dtype in DTYPES, f"--dtype: choose {', '.join(DTYPES)}, got {cfg.dtype!r}")
    from .config import check_device
    check_device(cfg.device)
    rows = check(cfg.device, cfg.dtype, modes)
    for line in report_lines(rows):
        print(line)
    return rows


def main(argv: list[str] | None = None) -> int:
    _, rows = cli_run("jackson-device-check", DeviceCheckConfig,
                      "Train a small jackson-sweep cell on the CPU (float64 reference, float32) and on DEVICE, and say "
                      f"whether DEVICE gives the CPU's numbers within the stated tolerance ({TOLERANCE:g} relative). "
                      "Exit 0 if it does, 1 if not.", {}, run_check, sys.argv[1:] if argv is None else argv)
    return 0 if all(r["agrees"] for r in rows) else 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
