"""Foreign code in a box: a rule of a researcher's package (entry-point group jackson_lab.rules) that raises, exits,
recurses without end or returns what is not an Outcome with one of the lab's verdicts marks its claim "failed: <rule>
<what happened>" in one line; the counts still sum to the claims; jackson-report writes the page and exits 1.  Each
misbehaviour is a generated plugin module, registered in-process the way jackson.verdict.rules() discovers them."""
from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path

import pytest

from jackson import verdict
from jackson.lab_report import claims as ledger_mod
from jackson.lab_report.claim_files import read_claims
from jackson.lab_report.page import main as report_main
from jackson.verdict import FAILED, STATUSES, UNTESTED, VERDICTS, rules

REPO = Path(__file__).resolve().parents[1]

# name -> the body of judge(claim, run); each one misbehaves in its own way
MISBEHAVIOURS = {
    "raises": ("raise RuntimeError('my rule broke')", "raised RuntimeError: my rule broke"),
    "raises_value": ("raise ValueError('bad number')", "raised ValueError: bad number"),
    "raises_key": ("return {}['missing']", "raised KeyError"),
    "exits_0": ("sys.exit(0)", "called sys.exit(0)"),
    "exits_3": ("sys.exit(3)", "called sys.exit(3)"),
    "recurses": ("return judge(claim, run)", "recursed without end"),
    "returns_dict": ("return {'verdict': 'reproduced'}", "returned dict"),
    "returns_str": ("return 'reproduced'", "returned str"),
    "made_up_word": ("return Outcome('great', 'x')", "returned the verdict 'great', not one of the lab's"),
    "failed_word": ("return Outcome('failed', 'x')", "returned the verdict 'failed', not one of the lab's"),
    "measured_none": ("return Outcome('reproduced', None)", "whose measured is NoneType"),
    "value_text": ("return Outcome('reproduced', 'x', 3, 'big')", "whose value is str"),
    "nul_in_text": ("return Outcome('reproduced', 'a\\x00b')", "whose measured holds a control character"),
    "bool_seeds": ("return Outcome('reproduced', 'x', True)", "whose n_seeds is True"),
}

T = "tests/test_rule_box.py::"
FAULT_CASES = [
    {"id": f"rule-plugin-{name}", "class": "contained",
     "command": f"jackson-report --claims my.toml   # a jackson_lab.rules plugin whose rule does: {body}",
     "expect": f"the claim reads 'failed: rule ... {says} on <folder>/' in one line; the other claims are judged; "
               "the page is written, one stderr line per failed claim, exit 1",
     "test": T + "test_a_misbehaving_rule_marks_its_claim_failed_in_one_line"}
    for name, (body, says) in sorted(MISBEHAVIOURS.items())] + [
    {"id": "rules-module-exits-on-import", "class": "contained",
     "command": "jackson-report --claims my.toml   # a jackson_lab.rules module that calls sys.exit(0) as it is imported",
     "expect": "exit 2, one line naming the module and the sys.exit; no page written",
     "test": T + "test_a_rules_module_that_exits_as_it_is_imported_is_one_line"},
    {"id": "rule-plugin-parameter-check-misbehaves", "class": "contained",
     "command": "jackson-report --claims my.toml   # a plugin rule whose parameter check raises TypeError, exits, "
                "or whose schema is not name -> (required, check)",
     "expect": "exit 2, one line naming the claim, the rule, its module and what happened",
     "test": T + "test_a_rules_own_parameter_check_that_misbehaves_refuses_the_claim_in_one_line"},
    {"id": "rule-table-too-large", "class": "bounded",
     "command": "jackson-report   # a run folder's table decompresses past the rule's read limit",
     "expect": "the claim is untested and its row names the folder and the limit, never 'no run folder'",
     "test": T + "test_a_folder_too_large_to_read_is_untested_naming_it_never_no_run_folder"},
] + [
    {"id": f"rule-plugin-{name}", "class": "contained",
     "command": f"jackson-report --claims my.toml   # a jackson_lab.rules plugin whose rule {what}",
     "expect": "the claim reads 'failed: rule ... did not return within <RULE_DEADLINE_S> s on <folder>/' in one line; "
               "the other claims are judged; the page is written, exit 1; the previous SIGALRM handler is restored",
     "test": T + "test_a_rule_that_never_returns_fails_at_its_deadline_in_one_line"}
    for name, what in (("loops", "loops forever"), ("loops_swallowing", "loops forever catching every Exception"),
                       ("sleeps", "sleeps past the deadline"))]

PLUGIN = '''import sys
from jackson.verdict import Outcome, rule


@rule("{name}", "mine", "A rule that misbehaves: {name}.")
def judge(claim, run):
    {body}
'''


LOOPS = {"loops": "while True:\n        pass",
         "loops_swallowing": "while True:\n        try:\n            sum(range(1000))\n        except Exception:\n"
                             "            pass",
         "sleeps": "import time\n    time.sleep(60)"}


def run_folder(root: Path, rel: str) -> Path:
    dst = root / rel
    shutil.copytree(REPO / "reports" / "jackson" / "fig1-given", dst,
                    ignore=shutil.ignore_patterns("cells", "*.png", "*.pdf"))
    return dst


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    """A package of the researcher's own with one module per MISBEHAVIOURS entry (and a good one), declared under
    the jackson_lab.rules entry points; the lab's registry restored afterwards."""
    from importlib import metadata
    pkg = tmp_path / "site" / "boxrules"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for name, (body, _) in MISBEHAVIOURS.items():
        (pkg / f"{name}.py").write_text(PLUGIN.format(name=name, body=body))
    (pkg / "good.py").write_text(PLUGIN.format(name="good", body="return Outcome('reproduced', 'fine', 3, 1.0)"))
    for name, body in LOOPS.items():
        (pkg / f"{name}.py").write_text(PLUGIN.format(name=name, body=body))
    (pkg / "exits_on_import.py").write_text("import sys\nsys.exit(0)\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(verdict, "KINDS", dict(rules()))
    monkeypatch.setattr(verdict, "_LOADED", set(verdict._LOADED))
    lab = list(metadata.entry_points(group=verdict.ENTRY_POINTS))

    def declare(*names):
        extra = [metadata.EntryPoint(n, f"boxrules.{n}", verdict.ENTRY_POINTS) for n in names]
        monkeypatch.setattr(verdict.metadata, "entry_points", lambda group: lab + extra)
    yield declare
    for m in [m for m in sys.modules if m == "boxrules" or m.startswith("boxrules.")]:
        sys.modules.pop(m, None)


def claims_file(tmp_path: Path, names) -> Path:
    text = 'paper = "Mine"\n' + "".join(f'[[claim]]\nid = "M-{n}"\nclaim = "c {n}"\nrule = "{n}"\nfolders = ["mine/a1"]\n'
                                        for n in names)
    p = tmp_path / "claims.toml"
    p.write_text(text)
    return p


@pytest.mark.parametrize("name", sorted(MISBEHAVIOURS))
def test_a_misbehaving_rule_marks_its_claim_failed_in_one_line(tmp_path, plugins, name):
    plugins(name, "good")
    root = tmp_path / "root"
    run_folder(root, "mine/a1")
    bad, good = ledger_mod.ledger(root, read_claims(claims_file(tmp_path, [name, "good"])))
    says = MISBEHAVIOURS[name][1]
    assert bad.verdict == FAILED and bad.outcome is None
    assert bad.measured.startswith(f"failed: rule '{name}' (boxrules.{name}) ") and says in bad.measured
    assert bad.measured.endswith("on mine/a1/") and "\n" not in bad.measured and verdict.printable(bad.measured)
    assert "no run folder" not in bad.measured and bad.verdict != UNTESTED
    assert good.verdict == "reproduced"                                 # the next claim is judged as before
    n = ledger_mod.counts([bad, good])
    assert sum(n.values()) == 2 and n[FAILED] == 1 and set(n) == set(STATUSES)


def test_the_report_writes_the_failed_rows_and_exits_1(tmp_path, plugins, capsys):
    """Every misbehaviour at once: each claim failed in claims.csv and on the page, one stderr line each, exit 1;
    the headline's counts sum to the claims."""
    names = sorted(MISBEHAVIOURS)
    plugins(*names, "good")
    root = tmp_path / "root"
    run_folder(root, "mine/a1")
    path = claims_file(tmp_path, names + ["good"])
    rc = report_main(["--claims", str(path), "--root", str(root)])
    out, err = capsys.readouterr()
    assert rc == 1
    lines = err.strip().splitlines()
    assert len(lines) == len(names) and all(l.startswith(f"jackson-report: M-") and ": failed: rule " in l for l in lines)
    rows = list(csv.DictReader(open(root / "claims.csv", newline="")))
    assert [r["verdict"] for r in rows] == [FAILED] * len(names) + ["reproduced"]
    headline = next(l for l in out.splitlines() if l.startswith("claims ledger:"))
    assert f"{len(names) + 1} claims: 1 reproduced, {len(names)} failed" in headline
    page = (root / "index.html").read_text()
    assert page.count('class="v failed"') == 2 * len(names)            # the first screen and the full ledger
    assert f'{len(names)} failed</span>' in page


def test_a_rules_module_that_exits_as_it_is_imported_is_one_line(tmp_path, plugins, capsys):
    plugins("exits_on_import")
    root = tmp_path / "root"
    run_folder(root, "mine/a1")
    path = tmp_path / "c.toml"
    path.write_text('paper = "P"\n[[claim]]\nid = "X-1"\nclaim = "c"\nrule = "rate"\nparams = { alpha = 1.0 }\n')
    with pytest.raises(SystemExit) as ex:
        report_main(["--claims", str(path), "--root", str(root)])
    err = capsys.readouterr().err.strip().splitlines()
    assert ex.value.code == 2 and len(err) == 1
    assert "rules module 'boxrules.exits_on_import'" in err[0] and "called sys.exit(0)" in err[0]
    assert not (root / "index.html").exists()


def test_a_rules_own_parameter_check_that_misbehaves_refuses_the_claim_in_one_line(tmp_path, plugins):
    """A plugin's parameter check is its code too: one that raises something else than ValueError, or exits, and
    a schema that is not name -> (required, check), refuse the claim in one line naming the rule."""
    from jackson.config import UsageError
    pkg = tmp_path / "site" / "boxrules"
    (pkg / "checks.py").write_text('''import sys
from jackson.verdict import Outcome, rule


def explodes(v):
    raise TypeError("no such thing")


def leaves(v):
    sys.exit(1)


@rule("check_raises", "mine", "x", {"n": (True, explodes)})
def a(claim, run):
    return None


@rule("check_exits", "mine", "x", {"n": (True, leaves)})
def b(claim, run):
    return None


@rule("bad_schema", "mine", "x", {"n": 5})
def c(claim, run):
    return None
''')
    plugins("checks")
    for name, says in (("check_raises", "the check of rule check_raises (boxrules.checks) failed: TypeError: no such thing"),
                       ("check_exits", "the check of rule check_exits (boxrules.checks) failed: SystemExit"),
                       ("bad_schema", "rule bad_schema (boxrules.checks) declares its parameters wrongly")):
        path = tmp_path / "c.toml"
        path.write_text(f'paper = "P"\n[[claim]]\nid = "X"\nclaim = "c"\nrule = "{name}"\nparams = {{ n = 1 }}\n')
        with pytest.raises(UsageError) as e:
            read_claims(path)
        assert says in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_a_folder_too_large_to_read_is_untested_naming_it_never_no_run_folder(tmp_path, monkeypatch):
    """The folder's file, not the rule, is at fault (jackson.verdict.UnreadableEvidence): untested, and the row
    names the folder and why."""
    root = tmp_path / "root"
    shutil.copytree(REPO / "reports" / "cot_dp" / "cpu-arithmetic", root / "cot_dp" / "a",
                    ignore=shutil.ignore_patterns("cells", "*.png", "*.pdf"))
    (row,) = [r for r in ledger_mod.ledger(root) if r.claim.id == "Y-tab2-flops"]
    assert row.folder == "cot_dp/a" and row.verdict != UNTESTED              # readable: judged
    monkeypatch.setattr(verdict, "MAX_TABLE_CHARS", 100)
    (row,) = [r for r in ledger_mod.ledger(root) if r.claim.id == "Y-tab2-flops"]
    assert row.verdict == UNTESTED and "no run folder" not in row.measured
    assert "no folder it could read (cot_dp/a: unreadable for this rule (" in row.measured
    assert "more than 100 characters" in row.measured


def test_call_rule_passes_a_good_outcome_and_none_through(tmp_path):
    root = tmp_path / "root"
    run_folder(root, "jackson/a1")
    run = verdict.find_runs(root)[0]
    kind = rules()["knee"]
    claim = next(c for c in ledger_mod.lab_claim_set() if c.id == "JL-knee-a1-r2")
    assert verdict.call_rule(kind, claim, run) == kind.judge(claim, run)
    assert verdict.call_rule(kind, claim, run).verdict in VERDICTS
    cot = next(c for c in ledger_mod.lab_claim_set() if c.kind == "dp_fig1")
    assert verdict.call_rule(rules()["dp_fig1"], cot, run) is None         # not its folder: None, as the rule says


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_a_rule_that_never_returns_fails_at_its_deadline_in_one_line(tmp_path, plugins, monkeypatch, capsys, name):
    """A rule that loops (even one catching every Exception) or sleeps is stopped at RULE_DEADLINE_S: its claim is
    failed in one line naming the deadline, the next claim is judged, the report exits 1, and SIGALRM's handler and
    an outer timer are as they were."""
    import signal
    import time
    monkeypatch.setattr(verdict, "RULE_DEADLINE_S", 0.2)
    plugins(name, "good")
    root = tmp_path / "root"
    run_folder(root, "mine/a1")
    mine = lambda signum, frame: None                                   # noqa: E731  (a caller's own handler)
    before = signal.signal(signal.SIGALRM, mine)
    signal.setitimer(signal.ITIMER_REAL, 30.0)                          # a caller's own timer, far off
    try:
        t0 = time.monotonic()
        bad, good = ledger_mod.ledger(root, read_claims(claims_file(tmp_path, [name, "good"])))
        took = time.monotonic() - t0
        assert signal.getsignal(signal.SIGALRM) is mine
        left = signal.getitimer(signal.ITIMER_REAL)[0]
        assert 25.0 < left <= 30.0                                      # the outer timer runs on, not reset
        rc = report_main(["--claims", str(claims_file(tmp_path, [name, "good"])), "--root", str(root)])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
    assert took < 2.0
    assert bad.verdict == FAILED and good.verdict == "reproduced"
    assert bad.measured == f"failed: rule '{name}' (boxrules.{name}) did not return within 0.2 s on mine/a1/"
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "did not return within 0.2 s" in err[0]


def test_the_deadline_does_not_touch_a_rule_that_returns_in_time(tmp_path):
    """A rule that returns: its outcome as before, and no alarm left set."""
    import signal
    root = tmp_path / "root"
    run_folder(root, "jackson/a1")
    run = verdict.find_runs(root)[0]
    claim = next(c for c in ledger_mod.lab_claim_set() if c.id == "JL-knee-a1-r2")
    before = signal.getsignal(signal.SIGALRM)
    assert verdict.call_rule(rules()["knee"], claim, run) == rules()["knee"].judge(claim, run)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0) and signal.getsignal(signal.SIGALRM) is before
