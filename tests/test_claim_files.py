"""Claims as data: the lab's claims files, a researcher's own file judged on their own folders, and the one-line
refusals of a bad claims file (jackson/lab_report/claim_files.py)."""
from __future__ import annotations

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
    assert tuple(got) == CLAIMS and len(CLAIMS) == 38
    assert [c.paper for c in CLAIMS] == ["Jiang & Li"] * 33 + ["Yang et al."] * 5
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
    (CLAIM.replace("alpha = 1.0", "alpha = 1.0, rank = 2"), "claim 'X-1': rule rate takes alpha, ffn, not 'rank'"),
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
    for pat, says in (("a2", "claim 'X-1': folder 'a2' is not under --root"),
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


def _worked_example(tmp_path, budget: list[str]) -> list[dict]:
    """examples/own-claims: its README's two commands on a fresh folder, the sweep's options followed by `budget`
    (later options win); jackson-report --claims writes the two claims' rows, judged on my_runs/a1. Returns them."""
    readme = (EXAMPLE / "README.md").read_text()
    sweep = next(l.strip() for l in readme.splitlines() if l.strip().startswith("jackson-sweep"))
    report = next(l.strip() for l in readme.splitlines() if l.strip().startswith("jackson-report"))
    toml = (EXAMPLE / "claims.toml").read_text()
    assert sweep.replace("--threads 1 ", "") in toml                          # the claims name the README's command
    shutil.copy(EXAMPLE / "claims.toml", tmp_path)
    r = subprocess.run([sys.executable, "-m", "jackson.rate_sweep.cli", *sweep.split()[1:], *budget], cwd=tmp_path,
                       capture_output=True, text=True, timeout=3600)
    assert r.returncode == 0, r.stderr[-2000:]
    r = subprocess.run([sys.executable, "-m", "jackson.lab_report.page", *report.split()[1:]], cwd=tmp_path,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "2 claims:" in r.stdout
    import csv
    rows = list(csv.DictReader(open(tmp_path / "my_runs" / "claims.csv")))
    assert [x["id"] for x in rows] == ["ME-knee-r2", "ME-rate-a1"]
    assert all(x["folder"] == "a1" and x["verdict"] in VERDICTS for x in rows)
    return rows


@pytest.mark.slow
def test_the_worked_example_runs_as_its_readme_says(tmp_path):
    """The README's two commands with a budget of seconds (60 steps, 256 training and held-out sequences, 64 POD
    terms, m_h 1..3): every step runs, the verdicts are whatever so small a fit gives. The README's own budget, and
    the verdicts it states: the `full` test below."""
    _worked_example(tmp_path, ["--steps", "60", "--n-train", "256", "--n-test", "256", "--k-max", "64",
                               "--m-h", "1,2,3"])


@pytest.mark.full
def test_the_worked_example_reads_as_its_readme_says_at_its_own_budget(tmp_path):
    """The README's two commands exactly as written: both claims read "reproduced", as the README says."""
    readme = (EXAMPLE / "README.md").read_text()
    assert 'both claims read "reproduced"' in " ".join(readme.split())
    rows = _worked_example(tmp_path, [])
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
