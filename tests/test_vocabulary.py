"""One CLI vocabulary (ARCHITECTURE.md, "CLI vocabulary"), checked on every console script's parser.

The parsers are the ones the mains build: each main is called in-process with --help while
jackson.command.command_parser (and rnn-mixing-spectrum's spectrum_parser) is watched, so a command
that builds its parser some other way, or a console script added without a line here, fails.
"""
from __future__ import annotations

import contextlib
import io
import itertools
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FIT_WORDS = ("steps", "batch-size", "lr", "warmup", "schedule", "eval-every", "patience", "min-improve", "lr-decay",
             "min-lr", "eval-size", "converged-lr-frac", "explode")   # jackson.hparams.FitConfig's options
# every deprecated spelling each command still reads, and the option it now means
DEPRECATED = {
    "jackson-sweep": {"--scheduler": "--dask-scheduler"},
    "rnn-compare": {"--scheduler": "--dask-scheduler",
                    **{f"--fit-{f}": f"--{f}" for f in FIT_WORDS}, **{f"--rnn-fit-{f}": f"--rnn-{f}" for f in FIT_WORDS}},
    "vit-probe spectra": {"--batch": "--batch-size"},
    "vit-probe sweep-mh": {"--mh": "--m-h", "--scheduler": "--dask-scheduler"},
    "cot-dp data": {"--seed": "--data-seed"},
    "cot-dp sweep": {"--models": "--model", "--dims": "--d-model", "--sizes": "--size", "--scheduler": "--dask-scheduler"},
    "cot-dp train": {"--dim": "--d-model"},
}
# spellings no command offers any more (each still parses where it did, with a note)
RETIRED = {"--mh", "--scheduler", "--dims", "--dim", "--sizes", "--models", "--batch"}
SHARED = {"--config", "--threads", "--force", "--status", "--max-memory", "--max-hours", "-h", "--help"}   # jackson.command.GLOBAL_HELP, argparse's own
DEVELOPER = ("thin entry", "entry point", "library function", "parse, call", "docstring", "cli_run", "run_cli", "__")


def _main_help(main, argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 0, argv
    return out.getvalue()


@pytest.fixture(scope="module")
def parsers():
    """{prog: (config class or None, parser)} as each console script's main builds them."""
    import jackson.command as C
    import rnn_compare.cli as R
    from cot_dp.cli import COMMANDS, main as cot_main
    from jackson.app_b.cli import tasks_main
    from jackson.rate_sweep.cli import sweep_main
    from jackson.lab_report.page import main as report_main
    from jackson.rate_sweep.device_check import main as device_check_main
    from jackson.app_b.config import DESCRIPTION
    from vit_probe.cli import DESCRIPTIONS, main as vit_main

    seen = {}
    build, spectrum = C.command_parser, R.spectrum_parser

    def watched(cls, prog, description="", status=False):
        seen[prog] = (cls, build(cls, prog, description, status))
        return seen[prog][1]

    def watched_spectrum():
        seen["rnn-mixing-spectrum"] = (None, spectrum())
        return seen["rnn-mixing-spectrum"][1]

    mains = [(sweep_main, []), (report_main, []), (device_check_main, []), (R.compare_main, []), (R.spectrum_main, [])]
    mains += [(tasks_main, [t]) for t in DESCRIPTION] + [(vit_main, [c]) for c in DESCRIPTIONS]
    mains += [(cot_main, [c]) for c in COMMANDS]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(C, "command_parser", watched)
        mp.setattr(R, "spectrum_parser", watched_spectrum)
        for main, argv in mains:
            _main_help(main, argv + ["--help"])
    return seen


def test_every_console_script_and_command_is_walked(parsers):
    from cot_dp.cli import COMMANDS
    from jackson.app_b.config import DESCRIPTION
    from vit_probe.cli import DESCRIPTIONS
    scripts = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"])
    assert scripts == {"jackson-sweep", "jackson-tasks", "jackson-report", "jackson-device-check", "rnn-compare",
                       "rnn-mixing-spectrum", "vit-probe", "cot-dp"}, "a new console script: add its main to the `parsers` fixture"
    want = ({"jackson-sweep", "jackson-report", "jackson-device-check", "rnn-compare", "rnn-mixing-spectrum"}
            | {f"jackson-tasks {t}" for t in DESCRIPTION} | {f"vit-probe {c}" for c in DESCRIPTIONS}
            | {f"cot-dp {c}" for c in COMMANDS})
    assert set(parsers) == want


def _options(parser):
    return [(o, a) for a in parser._actions for o in a.option_strings]


def _parses(parser, argv):
    """The parsed options as a dict, or None where the parser refuses argv (its one error line swallowed)."""
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            return vars(parser.parse_args(argv))
        except SystemExit:
            return None


# ---- (a) the vocabulary ------------------------------------------------------------------------

def test_no_command_offers_a_deprecated_spelling(parsers):
    for prog, (_, p) in parsers.items():
        offered = {o for o, _ in _options(p)}
        assert not offered & RETIRED, (prog, offered & RETIRED)
        assert not offered & set(DEPRECATED.get(prog, {})), prog
        assert getattr(p, "deprecated", {}) == DEPRECATED.get(prog, {}), prog   # the whole alias table, pinned
        for old, new in DEPRECATED.get(prog, {}).items():
            assert new in offered, (prog, new)


def test_one_word_per_quantity(parsers):
    """The table of ARCHITECTURE.md as rules on option names, read from the field each option sets."""
    for prog, (_, p) in parsers.items():
        for opt, a in _options(p):
            if opt in SHARED or a.dest in (None, "help"):
                continue
            leaf, help_ = a.dest.rsplit(".", 1)[-1], a.help or ""
            where = (prog, opt, a.dest)
            if leaf in ("m_h", "mh"):
                assert opt == "--m-h", where
            if leaf == "scheduler" or "Dask" in help_:
                assert opt == "--dask-scheduler", where
            if leaf in ("d_model", "dim", "dims"):
                assert opt == "--d-model", where
            if leaf in ("size", "sizes"):
                assert opt == "--size", where
            if leaf in ("batch", "batch_size"):
                assert opt.endswith("batch-size"), where
            if leaf in ("steps", "epochs"):
                assert opt.endswith(leaf.replace("_", "-")), where
            if opt.endswith("schedule"):
                assert "learning rate" in help_ or "lr" in help_ or "cosine" in help_, where


def test_seeds_is_a_list_seed_is_one_and_a_count_says_so(parsers):
    for prog, (_, p) in parsers.items():
        for opt, a in _options(p):
            if not opt.endswith(("seed", "seeds")):
                continue
            as_list = _parses(p, [opt, "0,1"])
            if opt == "--seeds":
                assert as_list is not None and as_list[a.dest] == (0, 1), (prog, opt)
            else:   # --seed, --data-seed, ... take one seed; --n-seeds counts them
                assert as_list is None and _parses(p, [opt, "1"]) is not None, (prog, opt)
                assert opt != "--seeds" and (opt.endswith("-seed") or opt == "--n-seeds"), (prog, opt)


def _sample(parser, opt):
    """A value the option reads (ranges are checked later, by the run's validate)."""
    for v in ("4", "2,4", "x"):
        if _parses(parser, [opt, v]) is not None:
            return v
    raise AssertionError(f"{parser.prog} {opt}: no sample value parses")


def test_every_deprecated_spelling_parses_to_the_same_config_with_one_note(parsers, capsys):
    from jackson.config import from_args
    checked = 0
    for prog, pairs in DEPRECATED.items():
        cls, p = parsers[prog]
        for old, new in pairs.items():
            v = _sample(p, new)
            want = vars(p.parse_args([new, v]))
            assert capsys.readouterr().err == ""
            for argv in ([old, v], [f"{old}={v}"], [old, v, old, v]):
                got = vars(p.parse_args(argv))
                err = capsys.readouterr().err
                assert got == want and from_args(cls, got) == from_args(cls, want), (prog, argv)
                assert err == f"{prog}: note: {old} is deprecated; use {new}\n", (prog, argv, err)
                checked += 1
    assert checked == 3 * sum(map(len, DEPRECATED.values()))


def test_an_old_spelling_through_a_console_entry_point(tmp_path, capsys):
    """The note comes before anything else, and the error that follows names the new option."""
    from jackson.rate_sweep.cli import sweep_main
    from rnn_compare.cli import compare_main
    for main, argv, old, new in ((sweep_main, ["--quick", "--scheduler=notaurl"], "--scheduler", "--dask-scheduler"),
                                 (compare_main, ["--fit-steps", "0"], "--fit-steps", "--steps")):
        with pytest.raises(SystemExit) as e:
            main(argv + ["--out", str(tmp_path / "o")])
        lines = capsys.readouterr().err.strip().splitlines()
        assert e.value.code == 2 and len(lines) == 2, lines
        assert lines[0].endswith(f": note: {old} is deprecated; use {new}") and ": error: " + new in lines[1], lines
        assert not (tmp_path / "o").exists()


def test_cot_dp_commands_give_a_shared_option_one_default(parsers):
    """cot-dp data writes the sweep's dataset and cot-dp train trains as a sweep cell; only the grid axes
    differ (sweep's default is its preset's grid, train takes one value, or reads it from meta.json)."""
    grid = {"--task", "--size", "--model", "--d-model", "--out"}

    def defaults(prog):
        cls, p = parsers[prog]
        out = {}
        for opt, a in _options(p):
            if opt in SHARED or opt.startswith("--no-"):
                continue
            v = cls()
            for k in a.dest.split("."):
                v = getattr(v, k)
            out[opt] = v
        return out

    for a, b in itertools.combinations(("cot-dp data", "cot-dp sweep", "cot-dp train"), 2):
        da, db = defaults(a), defaults(b)
        shared = (set(da) & set(db)) - grid
        assert shared, (a, b)
        assert {o: da[o] for o in shared} == {o: db[o] for o in shared}, (a, b)


# ---- (b) help texts ----------------------------------------------------------------------------

def test_every_option_states_its_default_at_most_once(parsers, monkeypatch):
    monkeypatch.setenv("COLUMNS", "10000")            # one line per option: its help is never wrapped
    for prog, (_, p) in parsers.items():
        text = p.format_help()
        for line in text.splitlines():
            assert len(re.findall(r"\(default\b", line)) <= 1, (prog, line)
        for bad in ("(default: )", "(default: None)", "(default: False)", "(default: True)", "(default: ())"):
            assert bad not in text, (prog, bad)


# ---- (c) no developer text in the helps ----------------------------------------------------------

def test_top_level_helps_are_for_users():
    from cot_dp.cli import COMMANDS, main as cot_main
    from jackson.app_b.cli import main as tasks_main
    from jackson.app_b.config import DESCRIPTION
    from vit_probe.cli import DESCRIPTIONS, main as vit_main
    for prog, main, commands in (("cot-dp", cot_main, COMMANDS), ("vit-probe", vit_main, DESCRIPTIONS),
                                 ("jackson-tasks", tasks_main, DESCRIPTION)):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                rc = main(["--help"])
            except SystemExit as e:
                rc = e.code
        text = out.getvalue()
        assert rc == 0 and text.startswith(f"usage: {prog} "), (prog, text[:80])
        assert all(re.search(rf"^\s+{re.escape(c)}\s", text, re.M) for c in commands), prog
        assert f"{prog} " in text and "--help" in text.split("usage:", 1)[1], prog
        assert not [d for d in DEVELOPER if d in text], (prog, [d for d in DEVELOPER if d in text])
        assert not [r for r in RETIRED if re.search(rf"{re.escape(r)}\b(?!-)", text)], prog


def test_command_helps_hold_no_developer_text(parsers):
    for prog, (_, p) in parsers.items():
        text = p.format_help()
        assert not [d for d in DEVELOPER if d in text], (prog, [d for d in DEVELOPER if d in text])


def test_readme_commands_use_the_new_spellings():
    text = (ROOT / "README.md").read_text() + (ROOT / "docs" / "commands.md").read_text()
    commands = [l for l in text.splitlines() if l.startswith("    ") and
                l.split()[0] in ("jackson-sweep", "jackson-tasks", "rnn-compare", "vit-probe", "cot-dp")]
    assert len(commands) > 20
    for line in commands:
        opts = set(re.findall(r"(?<!\S)--[a-z][\w-]*", line))
        assert not opts & RETIRED, line
        if line.startswith("    rnn-compare"):
            assert not opts & {"--n-seeds", "--first-seed"} and not [o for o in opts if "-fit-" in o], line


def test_rnn_compare_takes_the_seeds_themselves_and_reads_the_older_count_with_a_note(tmp_path, capsys):
    """--seeds lists the bank members' seeds, as in every command; the older --n-seeds N --first-seed F (a count and
    a start) still runs as --seeds F,...,F+N-1, with one note, and finds the same cells."""
    from rnn_compare.cli import seeds_from_count
    assert seeds_from_count(["--table", "mixing"]) == ["--table", "mixing"]
    assert seeds_from_count(["--n-seeds", "3", "--first-seed=3", "--quick"]) == ["--quick", "--seeds", "3,4,5"]
    assert capsys.readouterr().err == "rnn-compare: note: --n-seeds --first-seed are deprecated; use --seeds 3,4,5\n"
    assert seeds_from_count(["--n-seeds=2"]) == ["--seeds", "0,1"]
    capsys.readouterr()
    for argv in (["--n-seeds", "2", "--seeds", "0,1"], ["--n-seeds", "x"], ["--n-seeds", "0"]):
        with pytest.raises(SystemExit) as e:
            seeds_from_count(argv)
        assert e.value.code == 2 and len(capsys.readouterr().err.strip().splitlines()) == 1, argv
    from rnn_compare.config import CompareConfig
    old = CompareConfig(seeds=(3, 4, 5)).cells()
    assert [c.key() for c in old] == [c.key() for c in CompareConfig(seeds=(3, 4, 5)).cells()]
    assert all(c.seeds == (3, 4, 5) for c in old)


def test_rnn_mixing_spectrum_takes_threads(capsys):
    from rnn_compare.cli import spectrum_main
    assert spectrum_main(["--threads", "1", "--k", "3"]) == 0
    assert "after:" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        spectrum_main(["--threads", "0"])
    assert e.value.code == 2 and "--threads: must be in 1..4096" in capsys.readouterr().err
