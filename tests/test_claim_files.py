"""Claims as data: the lab's claims files, a researcher's own file judged on their own folders, and the one-line
refusals of a bad claims file (jackson/lab_report/claim_files.py)."""
from __future__ import annotations

import html
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jackson.config import UsageError
from jackson.lab_report.claim_files import FORMAT_EXAMPLE, LAB_PAPERS, PAPERS_DIR, read_claims
from jackson.lab_report.claims import CLAIMS, ledger, rules_markdown
from jackson.verdict import KINDS, UNTESTED, VERDICTS, rules
from jackson.lab_report.page import main as report_main

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "own-claims"


def test_the_lab_ledger_is_its_two_claims_files_in_order():
    got = [c for name in LAB_PAPERS for c in read_claims(PAPERS_DIR / name)]
    assert tuple(got) == CLAIMS and len(CLAIMS) == 40
    assert [c.paper for c in CLAIMS] == ["Jiang & Li"] * 35 + ["Yang et al."] * 5
    assert {k.module for k in rules().values()} == {
        "jackson.verdict", "jackson.rate_sweep.rules", "jackson.app_b.rules", "rnn_compare.rules", "vit_probe.rules",
        "cot_dp.rules"}                                  # each experiment's rules beside it, found by entry point
    assert [c.params for c in CLAIMS if c.id == "JL-tab2-ordering"] == [
        (("kernel", "exp"), ("alteration", "permuted"), ("expect", (("rnn", "drop"), ("transformer", "no drop"))))]


def test_docs_claims_md_is_what_the_rules_write():
    assert (REPO / "docs" / "claims.md").read_text() == rules_markdown(), "python -m jackson.lab_report.claims"
    for name in KINDS:
        assert f"### `{name}`" in rules_markdown()


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "claims.toml"
    p.write_text(text)
    return p


def run_folder(root: Path, rel: str) -> Path:
    """A finished jackson-sweep folder under root: a copy of a committed one."""
    dst = root / rel
    shutil.copytree(REPO / "reports" / "jackson" / "fig1-given", dst,
                    ignore=shutil.ignore_patterns("cells", "*.png", "*.pdf"))
    return dst


def test_the_format_example_reads(tmp_path):
    (c,) = read_claims(write(tmp_path, FORMAT_EXAMPLE))
    assert (c.id, c.kind, c.p, c.folders) == ("ME-rate-a1", "rate", {"alpha": 1.0}, ("a1",))
    assert c.command == "jackson-sweep --alpha 1.0 --rank inf --out runs/a1"      # [commands] resolved


CLAIM = '''paper = "P"
[[claim]]
id = "X-1"
claim = "c"
rule = "rate"
params = { alpha = 1.0 }
'''


@pytest.mark.parametrize("text, says", [
    ("paper = \"P\"\n[[claim]]\nid = \"X-1\"\nclaim = \"c\"\nrule = \"kne\"\n", "claim 'X-1': unknown rule 'kne' (did you mean knee?)"),
    (CLAIM.replace("alpha = 1.0", "alpha = -1"), "claim 'X-1': params.alpha = -1 is not a positive number"),
    (CLAIM.replace("alpha = 1.0", "alpha = \"one\""), "claim 'X-1': params.alpha = 'one' is not a positive number"),
    (CLAIM.replace("alpha = 1.0", "alpha = 1.0, rank = 2"), "claim 'X-1': rule rate takes alpha, ffn, bases, not 'rank'"),
    (CLAIM.replace("params = { alpha = 1.0 }", ""), "claim 'X-1': rule rate needs params.alpha"),
    (CLAIM.replace('rule = "rate"', 'rule = "knee"').replace("alpha = 1.0", "alpha = 1.0, rank = \"abc\""),
     "claim 'X-1': params.rank = 'abc' is not a finite rank"),
    (CLAIM.replace("params = { alpha = 1.0 }", "params = { alpha = 1.0, ffn = \"tanh\" }"),
     "claim 'X-1': params.ffn = 'tanh' is not one of gelu, relu, sin"),
    (CLAIM + "folders = [\"../elsewhere\"]\n", "claim 'X-1': folder '../elsewhere' is not under --root"),
    (CLAIM + "fodlers = [\"a\"]\n", "claim 'X-1': unknown key 'fodlers' (did you mean folders?)"),
    (CLAIM + CLAIM.split("\n", 1)[1], "claim 'X-1': a second claim with this id"),
    (CLAIM.replace('id = "X-1"\n', ""), "claim number 1: give id = \"...\""),
    ("paper = \"P\"\n", "no [[claim]] table"),
    ("[[claim]]\nid = \"a\"\n", "give the paper's name"),
    ("paper = \"P\"\npapr = 1\n", "unknown key 'papr' (did you mean paper?)"),
    ("paper = \"P\n", "not TOML"),
])
def test_a_bad_claims_file_gets_one_line_naming_the_claim(tmp_path, capsys, text, says):
    path = write(tmp_path, text)
    with pytest.raises(UsageError) as e:
        read_claims(path)
    assert says in str(e.value) and "\n" not in str(e.value)
    (tmp_path / "root").mkdir()
    capsys.readouterr()
    with pytest.raises(SystemExit) as ex:
        report_main(["--claims", str(path), "--root", str(tmp_path / "root")])
    err = capsys.readouterr().err.strip().splitlines()
    assert ex.value.code == 2 and len(err) == 1 and says in err[0]
    assert not (tmp_path / "root" / "index.html").exists()          # nothing written


def test_a_missing_folder_is_named(tmp_path, capsys):
    root = tmp_path / "root"
    run_folder(root, "mine/a1")
    (root / "empty").mkdir()
    (root / "file").write_text("not a folder")
    for pat, says in (("a2", "claim 'X-1': folder 'a2' is missing: there is no "),
                      ("a*", "claim 'X-1': folder 'a*' is missing: no folder under --root"),
                      ("file", "claim 'X-1': folder 'file' is not a folder"),
                      ("empty", "claim 'X-1': folder 'empty' holds no run of this lab")):
        path = write(tmp_path, CLAIM + f'folders = ["{pat}"]\n')
        capsys.readouterr()
        with pytest.raises(SystemExit) as ex:
            report_main(["--claims", str(path), "--root", str(root)])
        err = capsys.readouterr().err.strip().splitlines()
        assert ex.value.code == 2 and len(err) == 1 and says in err[0], err


def test_own_claims_are_judged_on_the_named_folders_whatever_their_place(tmp_path):
    """A folder outside the rule's section (here mine/a1, not jackson/...) is judged when the claim names it; the
    verdict is the one the lab's own claim gets on the same folder under jackson/."""
    root = tmp_path / "root"
    run_folder(root, "mine/a1")
    run_folder(root, "jackson/fig1-given")
    own = read_claims(write(tmp_path, CLAIM.replace("alpha = 1.0", "alpha = 1.5") + 'folders = ["mine/*"]\n'))
    (row,) = ledger(root, own)
    lab = {r.claim.id: r for r in ledger(root)}["JL-rate-a1.5"]
    assert row.folder == "mine/a1" and row.verdict == lab.verdict and row.measured == lab.measured
    assert row.verdict in VERDICTS and row.verdict != UNTESTED
    (row,) = ledger(root, own[:0] + (own[0].__class__(**{**own[0].__dict__, "folders": ()}),))
    assert row.folder == "jackson/fig1-given"                      # no folders: the rule's section, as before


def _worked_example(tmp_path, budget: list[str], run) -> list[dict]:
    """examples/own-claims: its README's two commands on a fresh folder, the sweep's options followed by `budget`
    (later options win); jackson-report --claims writes the two claims' rows, judged on my_runs/a1. Returns them.
    run(module, argv) runs a command's module in tmp_path and gives (exit code, stdout, stderr)."""
    readme = (EXAMPLE / "README.md").read_text()
    sweep = next(l.strip() for l in readme.splitlines() if l.strip().startswith("jackson-sweep"))
    report = next(l.strip() for l in readme.splitlines() if l.strip().startswith("jackson-report"))
    toml = (EXAMPLE / "claims.toml").read_text()
    assert sweep.replace("--threads 1 ", "") in toml                          # the claims name the README's command
    shutil.copy(EXAMPLE / "claims.toml", tmp_path)
    rc, _, err = run("jackson.rate_sweep.cli", [*sweep.split()[1:], *budget])
    assert rc == 0, err[-2000:]
    rc, out, err = run("jackson.lab_report.page", report.split()[1:])
    assert rc == 0, err[-2000:]
    assert "2 claims:" in out
    import csv
    rows = list(csv.DictReader(open(tmp_path / "my_runs" / "claims.csv")))
    assert [x["id"] for x in rows] == ["ME-knee-r2", "ME-rate-a1"]
    assert all(x["folder"] == "a1" and x["verdict"] in VERDICTS for x in rows)
    return rows


def _in_process(tmp_path, monkeypatch, capsys):
    """run(module, argv) for _worked_example: the command's main called here, with tmp_path as the working folder."""
    from jackson.rate_sweep.cli import sweep_main
    mains = {"jackson.rate_sweep.cli": sweep_main, "jackson.lab_report.page": report_main}
    monkeypatch.chdir(tmp_path)

    def run(module, argv):
        capsys.readouterr()
        try:
            rc = mains[module](argv)
        except SystemExit as e:
            rc = e.code
        cap = capsys.readouterr()
        return rc, cap.out, cap.err
    return run


def _as_processes(tmp_path):
    """run(module, argv) for _worked_example: `python -m module argv` in tmp_path, as a user runs the commands."""
    def run(module, argv):
        r = subprocess.run([sys.executable, "-m", module, *argv], cwd=tmp_path, capture_output=True, text=True,
                           timeout=3600)
        return r.returncode, r.stdout, r.stderr
    return run


@pytest.mark.slow
def test_the_worked_example_runs_as_its_readme_says(tmp_path, monkeypatch, capsys):
    """The README's two commands with a budget of seconds (20 steps, 256 training and held-out sequences, 64 POD
    terms, m_h 1..3), in-process: every step runs, the verdicts are whatever so small a fit gives. The README's own
    budget, as two processes, and the verdicts it states: the `full` test below."""
    _worked_example(tmp_path, ["--steps", "20", "--n-train", "256", "--n-test", "256", "--k-max", "64",
                               "--m-h", "1,2,3"], _in_process(tmp_path, monkeypatch, capsys))


@pytest.mark.full
def test_the_worked_example_reads_as_its_readme_says_at_its_own_budget(tmp_path):
    """The README's two commands exactly as written: both claims read "reproduced", as the README says."""
    readme = (EXAMPLE / "README.md").read_text()
    assert 'both claims read "reproduced"' in " ".join(readme.split())
    rows = _worked_example(tmp_path, [], _as_processes(tmp_path))
    assert [x["verdict"] for x in rows] == ["reproduced", "reproduced"], rows


# ---- rules of a researcher's own package, found through the jackson_lab.rules entry points -------------------

OWN_RULES = '''
from jackson.verdict import REPRODUCED, NOT_REPRODUCED, Outcome, positive_number, rule


@rule("min_seeds", "mine", "Reproduced when the folder's config names at least `n` seeds.",
      {"n": (True, positive_number)})
def min_seeds(claim, run):
    n = run.seeds()
    if n is None:
        return None
    return Outcome(REPRODUCED if n >= claim.p["n"] else NOT_REPRODUCED, f"{n} seeds", n, float(n))
'''


@pytest.fixture
def own_rules(tmp_path, monkeypatch):
    """A package of the researcher's own, declared under the jackson_lab.rules entry points (as its pyproject.toml
    would); the lab's registry restored afterwards."""
    from importlib import metadata

    from jackson import verdict
    pkg = tmp_path / "site" / "myrules"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "rules.py").write_text(OWN_RULES)
    (pkg / "broken.py").write_text("raise RuntimeError('my mistake')\n")
    (pkg / "twice.py").write_text(OWN_RULES.replace('"min_seeds", "mine"', '"knee", "mine"'))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(verdict, "KINDS", dict(rules()))
    monkeypatch.setattr(verdict, "_LOADED", set(verdict._LOADED))
    lab = list(metadata.entry_points(group=verdict.ENTRY_POINTS))

    def declare(*values):
        extra = [metadata.EntryPoint(v.split(".")[-1], v, verdict.ENTRY_POINTS) for v in values]
        monkeypatch.setattr(verdict.metadata, "entry_points", lambda group: lab + extra)
    yield declare
    for m in ("myrules", "myrules.rules", "myrules.broken", "myrules.twice"):
        sys.modules.pop(m, None)


def test_a_rule_of_your_own_package_judges_your_claims(tmp_path, own_rules):
    own_rules("myrules.rules")
    root = tmp_path / "root"
    run_folder(root, "mine/a1")
    path = write(tmp_path, 'paper = "Mine"\n[[claim]]\nid = "M-1"\nclaim = "three seeds"\nrule = "min_seeds"\n'
                           'params = { n = 3 }\n')
    (row,) = ledger(root, read_claims(path))
    seeds = json.loads((root / "mine" / "a1" / "config.json").read_text())["seeds"]
    n = len(seeds) if isinstance(seeds, list) else seeds
    assert row.folder == "mine/a1" and row.measured == f"{n} seeds"
    assert row.verdict == ("reproduced" if n >= 3 else "not reproduced")
    assert rules()["min_seeds"].module == "myrules.rules" and "min_seeds" in rules_markdown()
    bad = write(tmp_path, 'paper = "Mine"\n[[claim]]\nid = "M-2"\nclaim = "x"\nrule = "min_seeds"\n'
                          'params = { n = -1 }\n')
    with pytest.raises(UsageError, match=r"claim 'M-2': params.n = -1 is not a positive number"):
        read_claims(bad)


@pytest.mark.parametrize("module, says", [
    ("myrules.broken", "rules module 'myrules.broken' (entry point 'broken' of jackson_lab.rules) does not import: "
                       "RuntimeError: my mistake"),
    ("myrules.twice", "rule 'knee' is defined twice: in jackson.rate_sweep.rules and in myrules.twice"),
])
def test_a_bad_rules_module_is_one_line_naming_it(tmp_path, own_rules, capsys, module, says):
    own_rules(module)
    root = tmp_path / "root"
    run_folder(root, "mine/a1")
    path = write(tmp_path, CLAIM)
    with pytest.raises(SystemExit) as ex:
        report_main(["--claims", str(path), "--root", str(root)])
    err = capsys.readouterr().err.strip().splitlines()
    assert ex.value.code == 2 and len(err) == 1 and says in err[0], err


# ---- every bad claim at once; --keep-going; limits priced before they are paid; printable ids ---------------

T = "tests/test_claim_files.py::"
FAULT_CASES = [
    {"id": "claims-file-several-bad-claims", "class": "one-line",
     "command": "jackson-report --claims my.toml   # five bad claims of five kinds beside a good one",
     "expect": "exit 2, one line per bad claim naming it, all in one run; nothing written",
     "test": T + "test_every_bad_claim_is_named_at_once_and_nothing_is_written"},
    {"id": "claims-file-keep-going", "class": "one-line",
     "command": "jackson-report --claims my.toml --keep-going",
     "expect": "the good claims judged and written; each refused claim listed on the page and in one stderr line; exit 1",
     "test": T + "test_keep_going_judges_the_good_claims_and_lists_the_refused"},
    {"id": "claims-file-missing-folder", "class": "one-line",
     "command": "jackson-report --claims my.toml   # folders = [\"a2\"], no such folder (or a pattern matching none)",
     "expect": "exit 2, one line: the claim's folder is missing (not 'not under --root')",
     "test": T + "test_a_missing_folder_is_named"},
    {"id": "claims-file-nested-20000-deep", "class": "bounded",
     "command": "jackson-report --claims deep.toml   # arrays, inline tables or dotted keys 17 to 20,000 deep",
     "expect": "exit 2, one line naming the depth and the limit; never a RecursionError",
     "test": T + "test_a_claims_file_nested_too_deep_is_one_line"},
    {"id": "claims-file-too-many-claims", "class": "bounded",
     "command": "jackson-report --claims many.toml   # more claims than MAX_CLAIMS",
     "expect": "exit 2, one line naming the count and the limit",
     "test": T + "test_more_claims_than_the_limit_is_refused_in_one_line_naming_count_and_limit"},
    {"id": "claims-ledger-too-many-judgements", "class": "bounded",
     "command": "jackson-report --claims many.toml   # claims x folders past MAX_JUDGEMENTS",
     "expect": "exit 2, one line naming the judgements, the estimated time and the limit, before judging",
     "test": T + "test_a_ledger_past_its_judgement_limit_is_refused_before_judging"},
    {"id": "claims-file-control-character", "class": "input",
     "command": "jackson-report --claims my.toml   # id = \"X\\u00001\" (NUL, ESC, bidi override, U+2028 ...)",
     "expect": "exit 2, one line naming the field and the code point; never written to index.html, claims.csv, claims.tex",
     "test": T + "test_a_control_character_in_a_claim_is_refused_in_one_line"},
]

GOOD = CLAIM.replace("X-1", "G-1") + 'folders = ["mine/a1"]\n'
BAD_CLAIMS = [   # (the [[claim]] table, what its line says): each fault of a different kind
    (CLAIM.split("\n", 1)[1].replace("X-1", "B-1").replace('"rate"', '"kne"'), "claim 'B-1': unknown rule 'kne'"),
    (CLAIM.split("\n", 1)[1].replace("X-1", "B-2").replace("alpha = 1.0", "alpha = -1"),
     "claim 'B-2': params.alpha = -1 is not a positive number"),
    (CLAIM.split("\n", 1)[1].replace("X-1", "B-3") + 'folders = ["nowhere"]\n',
     "claim 'B-3': folder 'nowhere' is missing: there is no "),
    (CLAIM.split("\n", 1)[1].replace("X-1", "B-4\\u0000x"), "claim 'B-4\\x00x': id holds the control character U+0000"),
    (CLAIM.split("\n", 1)[1].replace("X-1", "B-5") + "fodlers = []\n", "claim 'B-5': unknown key 'fodlers'"),
]


def bad_file(tmp_path: Path) -> Path:
    return write(tmp_path, GOOD + "".join(t for t, _ in BAD_CLAIMS))


def test_every_bad_claim_is_named_at_once_and_nothing_is_written(tmp_path, capsys):
    root = tmp_path / "root"
    run_folder(root, "mine/a1")
    path = bad_file(tmp_path)
    with pytest.raises(SystemExit) as ex:
        report_main(["--claims", str(path), "--root", str(root)])
    err = capsys.readouterr().err.strip().splitlines()
    assert ex.value.code == 2 and len(err) == len(BAD_CLAIMS)
    assert all(line.startswith("jackson-report: error: ") for line in err)
    for _, says in BAD_CLAIMS:                                  # one line each (the file's faults, then the folders')
        assert sum(says in line for line in err) == 1, (says, err)
    assert "\x00" not in "".join(err)
    assert not any((root / n).exists() for n in ("index.html", "index.md", "claims.csv", "claims.tex"))


def test_keep_going_judges_the_good_claims_and_lists_the_refused(tmp_path, capsys):
    root = tmp_path / "root"
    run_folder(root, "mine/a1")
    path = bad_file(tmp_path)
    rc = report_main(["--claims", str(path), "--root", str(root), "--keep-going"])
    out, err = capsys.readouterr()
    assert rc == 1
    refused = err.strip().splitlines()
    assert len(refused) == len(BAD_CLAIMS) and all(l.startswith("jackson-report: refused: ") for l in refused)
    for _, says in BAD_CLAIMS:
        assert sum(says in line for line in refused) == 1, (says, refused)
    import csv
    rows = list(csv.DictReader(open(root / "claims.csv", newline="")))
    assert [r["id"] for r in rows] == ["G-1"] and rows[0]["folder"] == "mine/a1" and rows[0]["verdict"] in VERDICTS
    md, page = (root / "index.md").read_text(), (root / "index.html").read_text()
    for _, says in BAD_CLAIMS:
        assert says.split(": ", 1)[0] in md and html.escape(says.split(": ", 1)[0]) in page   # each one listed
    assert "refused" in md.split("## Claims ledger")[0]                         # on the first lines
    for name in ("index.html", "index.md", "claims.csv", "claims.tex", "claims-full.tex"):
        assert "\x00" not in (root / name).read_text()                          # the NUL id is nowhere


def test_keep_going_needs_a_claims_file(tmp_path, capsys):
    with pytest.raises(SystemExit) as ex:
        report_main(["--root", str(tmp_path), "--keep-going"])
    assert ex.value.code == 2 and "--keep-going" in capsys.readouterr().err


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\x7f", "\u202e", "\u2028", "\u200b", "\x85"])
@pytest.mark.parametrize("key", ["id", "claim", "where", "command", "rule", "folders"])
def test_a_control_character_in_a_claim_is_refused_in_one_line(tmp_path, char, key):
    """Written as a TOML escape (legal TOML); the claim is refused, the line quotes the character escaped."""
    esc = f"\\u{ord(char):04X}"
    text = {"id": CLAIM.replace("X-1", f"X{esc}1"), "claim": CLAIM.replace('claim = "c"', f'claim = "c{esc}"'),
            "where": CLAIM + f'where = "Sec. {esc}1"\n', "command": CLAIM + f'command = "run {esc}"\n',
            "rule": CLAIM.replace('"rate"', f'"ra{esc}te"'), "folders": CLAIM + f'folders = ["a{esc}"]\n'}[key]
    with pytest.raises(UsageError) as e:
        read_claims(write(tmp_path, text))
    msg = str(e.value)
    assert "\n" not in msg and verdict_printable(msg) and f"{key} holds the control character U+{ord(char):04X}" in msg


def test_a_raw_nul_byte_is_not_toml_in_one_line(tmp_path):
    path = tmp_path / "c.toml"
    path.write_bytes(CLAIM.replace("X-1", "X\x001").encode())
    with pytest.raises(UsageError) as e:
        read_claims(path)
    assert "not TOML" in str(e.value) and verdict_printable(str(e.value)) and "\n" not in str(e.value)


def verdict_printable(text: str) -> bool:
    from jackson.verdict import printable
    return printable(text)


def test_line_breaks_in_prose_read_as_spaces(tmp_path):
    (c,) = read_claims(write(tmp_path, CLAIM.replace('claim = "c"', 'claim = """the error\n  falls\tfast"""')))
    assert c.text == "the error falls fast"


@pytest.mark.parametrize("shape", ["array", "inline", "dotted", "params"])
@pytest.mark.parametrize("depth", [17, 100, 1_000, 20_000])
def test_a_claims_file_nested_too_deep_is_one_line(tmp_path, shape, depth):
    """Depths that grow past the stated limit (MAX_NESTING), each under the size cap: one line naming the limit,
    never a RecursionError."""
    from jackson.lab_report.claim_files import MAX_BYTES, MAX_NESTING
    text = {"array": 'paper = "P"\nx = ' + "[" * depth + "]" * depth + "\n",
            "inline": 'paper = "P"\nx = ' + "{a = " * depth + "1" + "}" * depth + "\n",
            "dotted": 'paper = "P"\n' + ".".join(["x"] * depth) + " = 1\n",
            "params": CLAIM.replace("params = { alpha = 1.0 }", "params = { alpha = " + "[" * depth + "]" * depth
                                    + " }")}[shape]
    assert len(text) < MAX_BYTES
    path = write(tmp_path, text)
    with pytest.raises(UsageError) as e:
        read_claims(path)
    assert "\n" not in str(e.value) and f"the limit is {MAX_NESTING}" in str(e.value)


def test_nesting_within_the_limit_reads_and_strings_and_comments_do_not_count():
    from jackson.lab_report.claim_files import MAX_NESTING, _nesting
    deepest = max(_nesting((PAPERS_DIR / name).read_text())[0] for name in LAB_PAPERS)
    assert 2 <= deepest < MAX_NESTING and len(CLAIMS) == 40          # the lab's files (expect = { ... }) read
    assert _nesting("a = [[1], {b = \"[[[\"}] # [[[[\nx = '''[[[[['''\nc = [[[1]]]") == (3, 3)


def test_more_claims_than_the_limit_is_refused_in_one_line_naming_count_and_limit(tmp_path, monkeypatch):
    from jackson.lab_report import claim_files
    monkeypatch.setattr(claim_files, "MAX_CLAIMS", 50)
    path = write(tmp_path, 'paper = "P"\n' + "".join(f'[[claim]]\nid="{i}"\nclaim="c"\nrule="rate"\nparams={{alpha=1}}\n'
                                                     for i in range(51)))
    with pytest.raises(UsageError, match=r"51 claims, more than the limit of 50 for one file"):
        read_claims(path)


def test_reading_and_judging_claims_scans_the_entry_points_once_not_per_claim(tmp_path, monkeypatch):
    """What made 15,000 claims cost 20 ms each: the entry points were read again for every claim.  N claims read
    and judged: the rules found once per file and once per ledger, whatever N."""
    from importlib import metadata

    from jackson import verdict
    calls = []
    real = metadata.entry_points
    monkeypatch.setattr(verdict.metadata, "entry_points", lambda **kw: calls.append(1) or real(**kw))
    root = tmp_path / "root"
    run_folder(root, "mine/a1")
    for n in (3, 300):
        calls.clear()
        path = write(tmp_path, 'paper = "P"\n' + "".join(
            f'[[claim]]\nid="{i}"\nclaim="c"\nrule="rate"\nparams={{alpha=1}}\nfolders=["mine/a1"]\n' for i in range(n)))
        own = read_claims(path)
        assert len(calls) == 1
        rows = ledger(root, own)
        assert len(rows) == n and len(calls) <= 3


def test_a_ledger_past_its_judgement_limit_is_refused_before_judging(tmp_path, monkeypatch):
    from jackson.lab_report import claims as ledger_mod
    root = tmp_path / "root"
    for i in range(3):
        run_folder(root, f"jackson/a{i}")
    monkeypatch.setattr(ledger_mod, "MAX_JUDGEMENTS", 10)
    judged = []
    monkeypatch.setattr(ledger_mod, "judge_claim", lambda *a, **k: judged.append(a))
    path = write(tmp_path, 'paper = "P"\n' + "".join(f'[[claim]]\nid="{i}"\nclaim="c"\nrule="rate"\nparams={{alpha=1}}\n'
                                                     for i in range(4)))
    with pytest.raises(UsageError) as e:
        ledger(root, read_claims(path))
    assert "4 claims on 3 run folders: 12 judgements" in str(e.value) and "the limit is 10 judgements" in str(e.value)
    assert "\n" not in str(e.value) and judged == []


def test_among_equal_folders_a_claim_is_judged_on_the_one_its_command_writes():
    """The tie-break after seeds and the kind's own order: the folder the claim's --out names, matched relative to the
    ledger's root (reports/); the committed Legendre claims read their own folders, not a 3-seed folder of the same
    alpha and FFN class on the sin bases that sorts first."""
    from jackson.lab_report.claims import _is_own, _own_folder
    assert _own_folder("jackson-sweep --alpha 1.5 --out reports/jackson/legendre-gelu") == "reports/jackson/legendre-gelu"
    assert _own_folder("jackson-sweep --out=reports/jackson/x/ --seeds 0") == "reports/jackson/x"
    assert _own_folder("jackson-sweep --alpha 1.5") == ""
    assert _is_own("jackson/legendre-gelu", "reports/jackson/legendre-gelu")
    assert not _is_own("jackson/gelu", "reports/jackson/legendre-gelu") and not _is_own("jackson/x", "")
    rows = {r.claim.id: r for r in ledger(REPO / "reports")}
    assert rows["JL-rate-a1.5-legendre"].folder == "jackson/legendre-gelu"
    assert rows["JL-rate-a1.5-legendre-sin"].folder == "jackson/legendre-sin"
    assert rows["JL-rate-a1.5-sin"].folder == "jackson/fig1-sin-cycles"   # 3 seeds, like fig1-sin/: its --out decides
