"""Thin entry points: rnn-compare (Tables 2-3) and rnn-mixing-spectrum (App. D.3)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jackson.figures import save
from jackson.command import cli_run
from jackson.config import OneLineParser, fail
from jackson.config import read_json


def _take(argv: list[str], opt: str) -> tuple[str | None, list[str]]:
    """(the value of `opt` in argv or None, argv without it); `opt V` and `opt=V` both read."""
    rest, value, i = [], None, 0
    while i < len(argv):
        a = argv[i]
        if a == opt:
            if i + 1 >= len(argv):
                fail("rnn-compare", f"argument {opt}: expected one argument")
            value, i = argv[i + 1], i + 2
            continue
        if a.startswith(opt + "="):
            value = a.split("=", 1)[1]
        else:
            rest.append(a)
        i += 1
    return value, rest


def seeds_from_count(argv: list[str]) -> list[str]:
    """The older spelling of the bank's seeds, a count and a start (--n-seeds N [--first-seed F]), as the seeds
    themselves (--seeds F,...,F+N-1), with a note; the commands in older folders' command.txt run as written."""
    from .config import MAX_SEEDS, CompareConfig      # torch-free
    n, rest = _take(argv, "--n-seeds")
    first, rest = _take(rest, "--first-seed")
    if n is None and first is None:
        return argv
    if any(a == "--seeds" or a.startswith("--seeds=") for a in rest):
        fail("rnn-compare", "--n-seeds / --first-seed: give the seeds themselves with --seeds alone")
    try:
        count = int(n) if n is not None else len(CompareConfig().seeds)     # the old count's default: today's seeds
        start = int(first) if first is not None else 0
    except ValueError:
        fail("rnn-compare", f"--n-seeds / --first-seed: cannot read {n!r} / {first!r} as integers")
    if not (1 <= count <= MAX_SEEDS and start >= 0):
        fail("rnn-compare", f"--n-seeds: must be in 1..{MAX_SEEDS} and --first-seed >= 0, got {count}, {start}")
    seeds = ",".join(str(s) for s in range(start, start + count))
    old = " ".join(o for o, v in (("--n-seeds", n), ("--first-seed", first)) if v is not None)
    sys.stderr.write(f"rnn-compare: note: {old} {'are' if ' ' in old else 'is'} deprecated; use --seeds {seeds}\n")
    return rest + ["--seeds", seeds]


def compare_main(argv: list[str] | None = None) -> int:
    from .config import QUICK, CompareConfig, validate

    def run(cfg, command):
        validate(cfg)                          # every option checked before torch is imported
        from .experiment import run_compare    # torch: only for a run, never for --help or a bad option
        return run_compare(cfg, command)

    def compare_grid(cfg):
        validate(cfg)
        from .experiment import compare_grid
        return compare_grid(cfg)

    cfg, summary = cli_run("rnn-compare", CompareConfig,
                           "RNN vs Transformer under temporal ordering and mixing (Jiang & Li, Tables 2-3): "
                           "measured tables beside the paper's. --quick writes to runs/rnn_compare-quick "
                           "unless --out is given.", QUICK, run,
                           seeds_from_count(sys.argv[1:] if argv is None else argv), compare_grid)
    for d in summary.get("diverged", []):
        print(f"diverged, left out of the means: {d['model']}, {d['kernel']} kernel, {d['alteration']}, seed {d['seed']}")
    for name, t in summary["tables"].items():
        for m, v in t.items():
            print(f"{name:9s} {m:11s} original {v['original']:.2e}  altered {v['altered']:.2e}  "
                  f"ratio {v['ratio']:.3g} (paper {v['paper_ratio']:.3g})")
    if summary["tables"]:
        print(compare_headline(summary["tables"]))
    out = Path(cfg.out)
    print(f"results: {out / 'results.csv'}")
    print(f"tables:  {out / 'summary.md'}, {out / 'tables.tex'}, {out / 'tables_long.csv'}")
    figures = _figures(out)
    if figures:
        print("figures: " + ", ".join(str(f) for f in figures))
    return 0


def compare_headline(tables: dict) -> str:
    """One line: each table's altered/original MSE ratio, RNN vs Transformer, beside the paper's."""
    def ratio(v: dict, key: str) -> str:
        return "all seeds diverged" if v[key] != v[key] else f"{v[key]:.3g}"
    parts = []
    for name, t in tables.items():
        rnn, tf = t.get("rnn"), t.get("transformer")
        if rnn is None or tf is None:
            continue
        parts.append(f"{name} {ratio(rnn, 'ratio')} vs {ratio(tf, 'ratio')} "
                     f"(paper {ratio(rnn, 'paper_ratio')} vs {ratio(tf, 'paper_ratio')})")
    return "altered/original held-out MSE, RNN vs Transformer: " + "; ".join(parts)


def _figures(out) -> list:
    """The figures a finished run folder's report.json lists, as paths (none when it has no report.json)."""
    rep = Path(out) / "report.json"
    if not rep.is_file():
        return []
    return [Path(out) / f["file"] for f in read_json(rep).get("figures", [])]


def spectrum_parser() -> OneLineParser:
    from jackson.expr import FUNCTIONS
    p = OneLineParser(prog="rnn-mixing-spectrum", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                      description="Spectrum of rho(u, v) before and after the mixing x~ = (x1, a x1 + b x2) (App. D.3).")
    p.add_argument("--kernel", default="1 + 2*sin(2*pi*u)*sin(2*pi*v)",
                   help="rho(u, v): arithmetic (+ - * / ** %%) in u, v, pi, e and the functions "
                        f"{', '.join(FUNCTIONS)} (never run as Python)")
    p.add_argument("--a", type=float, default=1.0, help="weight of x1 in the mixed second input")
    p.add_argument("--b", type=float, default=1.0, help="weight of x2 in the mixed second input")
    p.add_argument("--k", type=int, default=6, help="how many singular values to print")
    p.add_argument("--png", default=argparse.SUPPRESS,    # SUPPRESS: no "(default: )" in --help
                   help="also save a plot here, a .png with its .pdf copy beside it (missing parent folders are "
                        "created; an existing file is refused without --force; default: no plot)")
    p.add_argument("--force", action="store_true", default=argparse.SUPPRESS,
                   help="replace an existing --png file (and its .pdf copy); write --out into a non-empty folder "
                        "that holds no run of this command (nothing there is deleted)")
    p.add_argument("--out", default=argparse.SUPPRESS,
                   help="also write a run folder here (spectra.csv, summary, figure, report.json for "
                        "jackson-report; default: none, print only)")
    p.add_argument("--threads", type=int, default=argparse.SUPPRESS, metavar="N",
                   help="threads of the linear algebra (the SVDs; numpy's BLAS through threadpoolctl; default: the "
                        "cores this process may use, or $OMP_NUM_THREADS if smaller)")
    return p


def spectrum_main(argv: list[str] | None = None) -> int:
    """rnn-mixing-spectrum: the App. D.3 spectra of a kernel before and after a mixing, printed (and drawn).
    Runs inside the lab's exit contract (jackson.config.guarded): Ctrl-C 130, SIGTERM 143, OS errors 1."""
    from jackson.config import guarded, install_signals
    install_signals()
    return guarded("rnn-mixing-spectrum", lambda: _spectrum(argv))


def _spectrum(argv: list[str] | None) -> int:
    import math
    from pathlib import Path

    from jackson.config import UsageError, check_out_dir, need
    from jackson.expr import Expression
    from jackson.figures import check_figure_file
    from jackson.runfolder import check_run_folder
    from .mixing import spectra_before_after

    prog = "rnn-mixing-spectrum"
    a = spectrum_parser().parse_args(sys.argv[1:] if argv is None else argv)
    a.png, a.out, a.force = getattr(a, "png", ""), getattr(a, "out", ""), getattr(a, "force", False)
    threads = getattr(a, "threads", None)
    if threads is not None and not 1 <= threads <= 4096:
        fail(prog, f"argument --threads: must be in 1..4096, got {threads}")
    from threadpoolctl import threadpool_limits
    from jackson.threads import apply_threads
    threadpool_limits(apply_threads(threads))     # numpy is loaded already: its BLAS is limited in place
    n = 256                      # quadrature nodes of the POD (spectra_before_after's default)
    try:   # every option checked before any compute or write; then the (cheap) spectra, whose kernel
           # values are checked finite on both grids
        k = Expression(a.kernel, variables=("u", "v"), name="--kernel")
        need(math.isfinite(a.a) and math.isfinite(a.b), f"--a, --b: must be finite numbers, got {a.a:g}, {a.b:g}")
        need(math.isfinite(abs(a.a) + abs(a.b)), f"--a, --b: a u + b v overflows for a = {a.a:g}, b = {a.b:g}")
        need(1 <= a.k <= n, f"--k: must be in 1..{n} (the quadrature nodes), got {a.k}")
        if a.png:
            png = Path(a.png)
            need(not png.is_dir(), f"--png: {png} is a folder; give a file name such as {png / 'd3.png'}")
            check_out_dir(png.resolve().parent, "--png")
            check_figure_file(png, a.force)
            fmt = png.suffix[1:].lower()
            if fmt:
                import matplotlib
                matplotlib.use("Agg")
                from matplotlib.backend_bases import FigureCanvasBase
                known = FigureCanvasBase.get_supported_filetypes()
                need(fmt in known, f"--png: cannot write .{fmt} figures; use one of {', '.join(sorted(known))}")
        if a.out:
            check_run_folder(a.out, prog, force=a.force)
        r = spectra_before_after(k, a.a, a.b, n=n, k=a.k)
    except UsageError as e:
        fail(prog, str(e))
    if a.out:
        from jackson.runfolder import command_line, open_run
        from .report import write_spectrum_folder
        command = command_line(prog, sys.argv[1:] if argv is None else argv)
        config = {"kernel": a.kernel, "a": a.a, "b": a.b, "k": a.k, "quadrature_nodes": n}
        try:
            with open_run(a.out, prog, command, config, force=a.force) as out:
                write_spectrum_folder(out, command, a.kernel, a.a, a.b, n, r)
        except UsageError as e:
            fail(prog, str(e))
    if a.png:   # before printing, so a place that refuses the file leaves one line and nothing else
        import matplotlib.pyplot as plt
        from .report import is_paper_d3, spectrum_figure
        fig = spectrum_figure(r["before"], r["after"], a.a, a.b, is_paper_d3(a.kernel, a.a, a.b))
        try:   # check_out_dir cannot see every unwritable place (root may "write" under /proc)
            png.parent.mkdir(parents=True, exist_ok=True)
            save(fig, png)
        except OSError as e:
            fail(prog, f"--png: cannot write {png} ({e.strerror or e})")
        finally:
            plt.close(fig)
    from .report import RANK_TOL, numerical_rank
    print(f"rho(u, v) = {a.kernel};  mixing x~ = (x1, {a.a:g} x1 + {a.b:g} x2)")
    print("before: " + "  ".join(f"{s:.4f}" for s in r["before"]))
    print("after:  " + "  ".join(f"{s:.4f}" for s in r["after"]))
    print(f"numerical rank {numerical_rank(r['before'])} before the mixing, {numerical_rank(r['after'])} after "
          f"(sigma_i > {RANK_TOL:g} sigma_1, first {a.k} singular values)")
    figures = ([str(Path(a.out) / "mixing_spectrum.png")] if a.out else []) + ([a.png] if a.png else [])
    if a.out:
        print(f"results: {Path(a.out) / 'spectra.csv'}")
        print(f"summary: {Path(a.out) / 'summary.md'}")
    if figures:
        print(f"figure{'s' if len(figures) > 1 else ''}: {', '.join(figures)}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(compare_main())
