"""Start-up of every command, two source trees side by side: `--help`, and one quick run per command.

    python benchmarks/bench_startup.py BEFORE_TREE AFTER_TREE [--reps 5] [--quick]

Each measurement is a fresh `python -c` process with PYTHONPATH set to the tree, so the tree's own code is
imported (both share this venv's packages).  The two trees alternate, repetition by repetition, so a load that
changes while the script runs hits both alike; the table gives each command's median wall time over the
repetitions and whether the process imported torch (`-X importtime`).  `--quick` adds one quick run per command
(the command's own --quick or a tiny setting; outputs under a temporary folder), once per tree.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# command -> (module, function, argv for --help)
COMMANDS = {
    "jackson-sweep": ("jackson.rate_sweep.cli", "sweep_main", []),
    "jackson-tasks": ("jackson.app_b.cli", "tasks_main", ["nearest-point"]),
    "jackson-report": ("jackson.lab_report.page", "main", []),
    "jackson-device-check": ("jackson.rate_sweep.device_check", "main", []),
    "rnn-compare": ("rnn_compare.cli", "compare_main", []),
    "rnn-mixing-spectrum": ("rnn_compare.cli", "spectrum_main", []),
    "vit-probe spectra": ("vit_probe.cli", "main", ["spectra"]),
    "vit-probe sweep-mh": ("vit_probe.cli", "main", ["sweep-mh"]),
    "cot-dp sweep": ("cot_dp.entry", "main", ["sweep"]),
    "cot-dp data": ("cot_dp.entry", "main", ["data"]),
}
# command -> argv of one quick run ({out}: a fresh folder)
QUICK = {
    "jackson-sweep": ["--quick", "--threads", "1", "--out", "{out}"],
    "jackson-tasks": ["nearest-point", "--quick", "--threads", "1", "--out", "{out}"],
    "rnn-compare": ["--quick", "--threads", "1", "--out", "{out}"],
    "rnn-mixing-spectrum": ["--out", "{out}"],
    "cot-dp sweep": ["sweep", "--quick", "--threads", "1", "--out", "{out}"],
}


def run(tree: Path, module: str, function: str, argv: list[str]) -> tuple[float, bool, int]:
    """(wall seconds, whether torch was imported, exit code) of `function(argv)` in a fresh process."""
    code = f"import sys; from {module} import {function} as f; sys.exit(f({argv!r}))"
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", code], env=env, cwd=tree, capture_output=True,
                       text=True, timeout=1800)
    wall = time.perf_counter() - t0
    torch = any(line.startswith("import time:") and line.rsplit("|", 1)[-1].strip() == "torch"
                for line in r.stderr.splitlines())
    return wall, torch, r.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="also one quick run per command and tree")
    a = ap.parse_args()
    trees = {"before": a.before.resolve(), "after": a.after.resolve()}
    help_s = {(c, t): [] for c in COMMANDS for t in trees}
    torch = {}
    for rep in range(a.reps):
        for name, (mod, fn, argv) in COMMANDS.items():
            for t, tree in (trees.items() if rep % 2 == 0 else reversed(trees.items())):
                wall, imp, rc = run(tree, mod, fn, argv + ["--help"])
                help_s[(name, t)].append(wall)
                torch[(name, t)] = imp
                print(f"rep {rep + 1}/{a.reps} {name} --help ({t}): {wall:.2f} s, torch {'yes' if imp else 'no'}, "
                      f"exit {rc}", file=sys.stderr, flush=True)
    rows = ["| command | `--help` before (s) | torch | `--help` after (s) | torch |", "|---|---:|---|---:|---|"]
    for name in COMMANDS:
        b, f = (statistics.median(help_s[(name, t)]) for t in trees)
        rows.append(f"| {name} | {b:.2f} | {'yes' if torch[(name, 'before')] else 'no'} | {f:.2f} | "
                    f"{'yes' if torch[(name, 'after')] else 'no'} |")
    if a.quick:
        rows += ["", "| command, one quick run | before (s) | after (s) |", "|---|---:|---:|"]
        for name, argv in QUICK.items():
            mod, fn, _ = COMMANDS[name]
            walls = {}
            for t, tree in trees.items():
                with tempfile.TemporaryDirectory() as tmp:
                    w, _, rc = run(tree, mod, fn, [x.replace("{out}", str(Path(tmp) / "o")) for x in argv])
                walls[t] = f"{w:.1f}" if rc == 0 else f"{w:.1f} (exit {rc})"
                print(f"{name} quick ({t}): {walls[t]} s", file=sys.stderr, flush=True)
            shown = name.split()[0] + " " + " ".join(argv).replace("{out}", "DIR")
            rows.append(f"| `{shown}` | {walls['before']} | {walls['after']} |")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
