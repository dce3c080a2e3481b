"""The `jackson-tasks` console script: signals first, then the task's config (no torch); the run, which imports
torch, only once the options are read and checked."""
from __future__ import annotations

import sys
from pathlib import Path

from ..command import cli_run
from ..config import fail, guarded, install_signals
from .config import DESCRIPTION, QUICK, RUNS, USAGE, AllRun, resolved_out, validate


def tasks_main(argv: list[str] | None = None) -> int:
    """jackson-tasks: signals first, then the task's options; torch is imported only for a run."""
    install_signals()
    return guarded("jackson-tasks", lambda: main(argv))


def run_task(cfg, command: str):
    validate(cfg)                      # every option checked before torch is imported
    from .experiment import run_task
    return run_task(cfg, command)


def run_all(cfg, command: str):
    from .experiment import run_all
    return run_all(cfg, command)


def task_grid(cfg):
    validate(cfg)
    from .experiment import task_grid
    return task_grid(cfg)


def _print_summary(s: dict, out: Path) -> None:
    from .results import fmt_sd
    m = s["metrics"]
    figures = ", ".join(f"{out}/{name}" for name in ("attention.png", "graph.png", "fof.png", "loss_curves.png"))
    print(f"{s['task']}: results {out}/results.csv, summary {out}/summary.md, figures {figures}")
    print(f"  held-out MSE {fmt_sd(m['test_mse'], '.3g')} ({m['rel_test_mse']['mean']:.2%} of Var y); argmax of A in "
          f"support {m['argmax_in_support']['mean']:.1%}; TV(A, S) {m['tv']['mean']:.3f}; "
          f"F_hat∘f_hat vs F∘f: {m['fof_rel']['mean']:.2%} of Var")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    prog = "jackson-tasks"
    if argv and argv[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0
    if not argv or argv[0] not in DESCRIPTION:
        got = f", got '{argv[0]}'" if argv else ""
        fail(prog, f"choose a task: {', '.join(DESCRIPTION)}{got} (jackson-tasks --help)")
    sub, rest = argv[0], argv[1:]
    if sub == "all":
        cfg, summaries = cli_run(f"{prog} all", AllRun, DESCRIPTION["all"], {}, run_all, rest)
        from .experiment import all_configs
        for c in all_configs(cfg):
            _print_summary(summaries[c.task.name], resolved_out(c))
        return 0
    cfg, summary = cli_run(f"{prog} {sub}", RUNS[sub], DESCRIPTION[sub], QUICK, run_task, rest, task_grid)
    _print_summary(summary, resolved_out(cfg))
    return 0

