"""The shape every command shares: the shared options (--config, --threads, --force, --status, --max-memory,
--max-hours) parsed by argparse beside the command's own, the config built from the defaults, a --quick preset, a config.json and the command line, and the
run inside the lab's exit contract (jackson.config.guarded).

    cfg, result = cli_run("jackson-sweep", SweepConfig, "...", QUICK, run, argv, grid=grid)

A command's options come from its config dataclass (jackson.config.build_parser); this module adds the
shared ones, so every command spells them alike.
"""
from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from . import budget, runfolder
from .config import (ConfigParser, UsageError, build_parser, from_args, guarded, need,
                     read_config)
from .runfolder import folder_kind, same_kind
from .sweep import format_status, grid_status
from .threads import SMALL_STEP_FLOPS, apply_threads

GLOBAL_HELP = {
    "--config": "start from this config.json (one a run wrote) instead of the defaults; options given win; "
                "presets (--quick, --gpu, ...) are not re-applied: the file holds their resolved values",
    "--threads": "torch threads for this process, training steps included (default: the cores it may use, or "
                 f"$OMP_NUM_THREADS if smaller; a training step below {SMALL_STEP_FLOPS / 1e9:g} GFLOP runs on one thread "
                 "unless --threads or $OMP_NUM_THREADS is given)",
    "--force": "write into a non-empty --out that holds no run of this command, or (jackson-sweep) a run of another "
              "config over that run's summary (nothing there is deleted)",
    "--max-memory": "the memory this run may plan to use, e.g. 64G (K, M, G, T: powers of 1024); a request whose "
                    "estimate is larger is refused before anything runs (default: $JACKSON_MAX_MEMORY, else this "
                    "machine's memory)",
    "--max-hours": "the compute time this run may plan to use, in hours (or with s, m, d: 90m, 3d); a training "
                   "request whose work (a resumed grid's finished cells not counted) at the fastest rate measured on "
                   "the lab's machine takes longer is refused before anything runs (default: $JACKSON_MAX_HOURS, else 48)",
    "--status": "print where this command's run stands in its --out (finished cells, fits in progress with their "
                "step and time left, cells not started) and exit; trains and writes nothing, safe beside a live run",
}


def _threads(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"cannot read '{text}'") from None
    if not 1 <= n <= 4096:
        raise argparse.ArgumentTypeError(f"must be in 1..4096, got {n}")
    return n


def _converter(parse, option: str):
    """budget's parser for `option` as an argparse type: its message, without the option argparse already names."""
    def convert(text: str):
        try:
            return parse(text)
        except UsageError as e:
            raise argparse.ArgumentTypeError(str(e).removeprefix(f"{option}: ")) from None
    return convert


GLOBAL_TYPES = {"--config": str, "--threads": _threads, "--max-memory": _converter(budget.parse_size, "--max-memory"),
                "--max-hours": _converter(budget.parse_hours, "--max-hours")}
GLOBAL_DEFAULTS = {"threads": None, "force": False, "config": None, "status": False, "max_memory": None,
                   "max_hours": None}


SHARED_OPTIONS = ("--config", "--threads", "--force", "--max-memory", "--max-hours")


def shared_options(cls) -> tuple[str, ...]:
    """The shared options a command takes: its config's SHARED (a command with no run folder and no training,
    such as jackson-report, takes none of them), else all of SHARED_OPTIONS."""
    return tuple(getattr(cls, "SHARED", SHARED_OPTIONS))


def command_parser(cls, prog: str, description: str = "", status: bool = False) -> ConfigParser:
    """The parser a command built by `cli_run` reads its options with: the config's options, then the
    shared --config, --threads and --force (where the config does not declare one itself), and --status for
    a command that runs a grid of cells (the others refuse it in one line), each with its converter."""
    parser = build_parser(cls, prog, description)
    own = frozenset(f.name for f in dataclasses.fields(cls))
    takes = shared_options(cls)
    run = parser.add_argument_group("run options (shared by the lab's commands)")
    for opt, text in GLOBAL_HELP.items():
        if opt[2:].replace("-", "_") in own or (opt != "--status" and opt not in takes):
            continue
        flag = opt in ("--force", "--status")
        metavar = {"--config": "FILE", "--max-memory": "SIZE", "--max-hours": "H"}.get(opt, "N")
        run.add_argument(opt, action="store_true" if flag else None, default=argparse.SUPPRESS,
                            **({} if flag else {"metavar": metavar, "type": GLOBAL_TYPES[opt]}),
                            help=text if status or opt != "--status" else argparse.SUPPRESS)
    return parser


def cli_run(prog: str, cls, description: str, quick: dict, run, argv: list[str], grid=None):
    """The shape every entry point shares: options -> config (--quick shrinks the defaults -- `quick` is
    that preset, or a function of the given options returning the preset to apply -- options given on
    the command line win) -> run(cfg, command) -> (cfg, result).  Bad input exits 2 in one line; see
    `guarded` for signals and OS errors.  --threads and --force are shared by every command.
    grid: for a command that runs a grid of cells, grid(cfg) -> (its run folder, its cells) after checking
    cfg as run would; then `--status` prints where that grid stands (jackson.sweep.grid_status) and exits 0."""

    def body():
        own = frozenset(f.name for f in dataclasses.fields(cls))
        given = vars(command_parser(cls, prog, description, status=grid is not None).parse_args(argv))
        opts = {k: d if k in own else given.pop(k, d) for k, d in GLOBAL_DEFAULTS.items()}   # a config's own --force: its
        if opts["status"] and grid is None:
            raise UsageError("--status: this command runs no grid of cells; its run folder's summary says what it did")
        budget.GIVEN = opts["max_memory"]     # this command line's, never a previous call's (in-process runs)
        budget.HOURS_GIVEN = opts["max_hours"]
        apply_threads(opts["threads"])
        runfolder.FORCE = opts["force"]
        if opts["config"]:
            base = read_config(cls, opts["config"])
        else:
            preset = quick(given) if callable(quick) else (quick if given.get("quick") else {})
            base = dataclasses.replace(cls(), **preset) if preset else cls()
        cfg = from_args(cls, given, base)
        if opts["status"]:
            show_status(prog, *grid(cfg))
            raise SystemExit(0)
        command = runfolder.command_line(prog, argv)
        return cfg, run(cfg, command)

    try:
        return guarded(prog, body)
    finally:
        budget.GIVEN = None        # --max-memory is this command's: a later call in the same process starts without it
        budget.HOURS_GIVEN = None


def show_status(prog: str, out, cells) -> None:
    """`--status`: where the grid of `cells` stands in the run folder `out` (read only)."""
    out = Path(out).expanduser().resolve()
    if out.exists():
        need(out.is_dir(), f"--status: {out} is not a folder")
        held = folder_kind(out)
        need(held is None or same_kind(held, prog), f"--status: {out} holds a `{held}` run, not `{prog}`")
    print(format_status(prog, out, grid_status(cells, out)), flush=True)
