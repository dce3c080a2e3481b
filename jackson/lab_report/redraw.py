"""Draw a finished run folder's figures again from its committed tables: no training, no number changed.

    python -m jackson.lab_report.redraw reports/jackson/linear reports/vit_probe/sweep_mh ...

For folders whose figures predate jackson/figures.py (PNG below 200 dpi, no PDF) and whose command cannot
simply be rerun (cells of an older key scheme would train again).  The command that made a folder
(environment.json's kind, else command.txt) picks the experiment's own `redraw`, which reads the folder's
tables and summary and calls the plotting function the run itself calls, so each figure comes out as a
PNG at 200 dpi with a PDF beside it (matplotlib's PDF backend, from the same drawing).  Only figures are
written: every table, summary, report.json and cell stays byte for byte as it was.

    python -m jackson.lab_report.redraw --report-json reports/cot_dp/cpu-arithmetic ...

also writes report.json again, with the experiment's own writer from the folder's own files (`REPORT`), so
the captions describe the figures as they are now drawn; the rest of report.json comes out as the run wrote
it, where the writer has not changed.  Experiments whose report.json holds texts of the run alone (vit-probe)
are refused.

The experiments' functions are found through the entry-point groups `jackson_lab.redraw` and
`jackson_lab.report_json` (pyproject.toml): this module imports no experiment.
"""
from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

from ..config import OneLineParser, UsageError, guarded, need
from ..threads import apply_threads
from ..runfolder import folder_kind

PROG = "python -m jackson.lab_report.redraw"


def _hooks(group: str) -> dict:
    """The experiments' own functions of an entry-point group (pyproject.toml), by the command that makes their
    folders: this module imports no experiment; the one a folder needs is imported when it is called."""
    return {ep.name: ep for ep in sorted(metadata.entry_points(group=group), key=lambda e: e.name)}


REDRAW = _hooks("jackson_lab.redraw")            # the command that made a folder -> its experiment's redraw
REPORT = _hooks("jackson_lab.report_json")       # -> its report.json written again from the folder's own files


def redraw(folder: str | Path, report_json: bool = False) -> list[Path]:
    """The figures of one finished run folder drawn again (PNG at 200 dpi + PDF); returns the PNG paths.
    report_json: report.json written again too (`REPORT`), its captions those of the figures as drawn."""
    folder = Path(folder)
    need(folder.is_dir(), f"{folder}: no such folder")
    kind = folder_kind(folder)
    need(kind is not None, f"{folder}: neither environment.json nor command.txt says which command made it")
    need(kind in REDRAW, f"{folder}: made by '{kind}'; redraw knows folders of {', '.join(REDRAW)}")
    need(not report_json or kind in REPORT, f"{folder}: --report-json: a '{kind}' folder's report.json holds texts "
                                            f"of the run alone; it is written again for folders of {', '.join(REPORT)}")
    try:
        pngs = REDRAW[kind].load()(folder)
        if report_json:
            REPORT[kind].load()(folder)
        return pngs
    except UsageError:
        raise
    except (ValueError, KeyError, IndexError) as e:     # a table or summary.json that does not read as the run wrote it
        raise UsageError(f"{folder}: cannot redraw from its files ({type(e).__name__}: {e})") from None


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog=PROG, description="Draw finished run folders' figures again from their "
                                     "tables (PNG at 200 dpi and a PDF beside it); trains nothing, changes no table.")
    parser.add_argument("folders", nargs="+", metavar="FOLDER", help="a finished jackson-sweep, vit-probe spectra, "
                        "vit-probe sweep-mh, cot-dp sweep, rnn-compare or jackson-tasks run folder")
    parser.add_argument("--report-json", action="store_true", help="also write report.json again from the "
                        "folder's own files, so its captions describe the figures as drawn now (jackson-sweep, "
                        "cot-dp sweep; default: off, only figures are written)")
    parser.add_argument("--threads", type=int, default=1, metavar="N", help="torch threads (default: 1)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)

    def body():
        need(args.threads >= 1, f"--threads must be >= 1, got {args.threads}")
        apply_threads(args.threads)
        done = []
        for f in args.folders:
            pngs = redraw(f, args.report_json)
            done.append(f"{f}: " + ", ".join(f"{p.name} + {p.with_suffix('.pdf').name}" for p in pngs)
                        + (", report.json" if args.report_json else ""))
        return done

    for line in guarded(PROG, body):
        print(line)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
