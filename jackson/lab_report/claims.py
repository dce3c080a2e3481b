"""The claims ledger: every quantitative claim of the two papers (or of a researcher's own claims file), the run
folder that tests it, and a verdict computed by a stated rule, never typed.

The claims are data (claim_files: papers/jiang-li.toml, papers/yang.toml); the rules live beside their
experiments and are found through the `jackson_lab.rules` entry points (jackson.verdict.rules), so this
module imports no experiment.  `ledger(root)` judges every claim on every run folder under root:

  * a folder never feeds a verdict when it is a quick or smoke run (config.json "quick": true, or
    --quick in its command), superseded (SUPERSEDED.md) or unfinished (no summary.json, or one a command
    other than command.txt's wrote: a later command is still running into the folder); it is listed
    beside the claims it would test, with the reason;
  * of the folders that hold a claim's quantities, the preferred one (PREFERENCE) gives the row; the
    others are listed with their own verdicts;
  * a claim no folder tests is "untested" and names the command that would test it, unless its entry
    declares why no command of this lab can test it (`Claim.not_testable`): then it is "not applicable"
    and the row says why (the `no_run` rule).

`jackson-report` (jackson.lab_report.page.build_report) puts the ledger first in index.md and index.html and
writes claims.csv (one row per claim, `csv_text`).  The report never loads torch.
"""
from __future__ import annotations

import csv
import functools
import io
import math
import os
from dataclasses import dataclass
from pathlib import Path

from ..config import UsageError
from ..verdict import NOT_APPLICABLE, UNTESTED, VERDICTS, Claim, Outcome, Run, find_runs, rules, same
from .claim_files import lab_claims, match_folders

PREFERENCE = ("Preferred folder where several test a claim: one that tests it (an inconclusive one included: a "
              "less apt folder does not overrule the best folder's own reference; a folder whose grid cannot test it is "
              "untested, one outside the claim's setting not applicable), then the most seeds, then the kind's own "
              "order (its rule says which), then the folder name. Never used: quick or smoke runs (config.json "
              "\"quick\": true, or --quick in the command), superseded folders (SUPERSEDED.md), unfinished "
              "folders (no summary.json, or a summary.json of another command than command.txt's: a later "
              "command, such as a whole grid after one of its pieces, has not ended); they are listed under "
              "other folders with the reason.")



# ---- the declared claims -------------------------------------------------------------------------------

JL, YANG = "Jiang & Li", "Yang et al."
@functools.cache
def lab_claim_set() -> tuple[Claim, ...]:
    """The lab's claims (papers/jiang-li.toml, papers/yang.toml; the rules loaded first), read on first use, so
    that `jackson-report --help` and its option errors load no rule module."""
    return lab_claims()


def __getattr__(name: str):
    if name == "CLAIMS":          # `from jackson.lab_report.claims import CLAIMS`: the same tuple, read on first use
        return lab_claim_set()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---- the ledger ----------------------------------------------------------------------------------------

@dataclass
class Row:
    claim: Claim
    verdict: str
    measured: str
    n_seeds: int | None
    folder: str                     # "" when no folder tests it
    outcome: Outcome | None
    others: list[str]               # the other folders: "folder: verdict, n seeds" or "folder: left out (why)"


def _config_covers(claim: Claim, run: Run) -> bool:
    """An unfinished folder covers a claim when its config names the claim's alpha and rank (when it has them)."""
    for key in ("alpha", "rank"):
        if key in claim.p and key in run.config:
            vals = run.config[key] if isinstance(run.config[key], list) else [run.config[key]]
            if not any(same(v, claim.p[key]) or str(v) == str(claim.p[key]) for v in vals):
                return False
    return True


def _seeds_text(n) -> str:
    return "?" if n is None else f"{n} seed{'s' if n != 1 else ''}"


def judge_claim(claim: Claim, runs: list[Run]) -> Row:
    """One row of the ledger: the claim judged on every folder of its kind's section."""
    k = rules()[claim.kind]
    judged: list[tuple[Run, Outcome]] = []
    left: list[str] = []
    named = set(match_folders(claim.folders, [r.folder for r in runs])) if claim.folders else None
    for run in runs:
        if named is not None:             # the claim names its folders: those, whatever their section
            if run.folder not in named:
                continue
        elif not k.section or run.section != k.section:
            continue
        if run.summary is None:
            if run.left_out and _config_covers(claim, run):
                left.append(f"{run.folder}: left out ({run.left_out})")
            continue
        try:
            out = k.judge(claim, run)
        except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError) as e:
            left.append(f"{run.folder}: unreadable for this rule ({type(e).__name__}: {e})")
            continue
        if out is None:
            continue
        if run.left_out:
            left.append(f"{run.folder}: left out ({run.left_out})")
            continue
        judged.append((run, out))
    # folders that test the claim first (an inconclusive verdict included: the best folder's own reference may say
    # that it cannot decide, and a less apt folder does not overrule it), then those that cannot (untested), then
    # not applicable ones
    weight = {UNTESTED: 1, NOT_APPLICABLE: 2}
    judged.sort(key=lambda ro: (weight.get(ro[1].verdict, 0), -(ro[1].n_seeds or 0), ro[1].tiebreak, ro[0].folder))
    others = [f"{r.folder}: {o.verdict}, {_seeds_text(o.n_seeds)}"
              + (f" ({o.measured})" if o.verdict == NOT_APPLICABLE else "") for r, o in judged[1:]] + left
    if not judged:
        if claim.not_testable:                         # declared in CLAIMS: the no_run kind's rule
            return Row(claim, NOT_APPLICABLE, f"no run folder can test it: {claim.not_testable}", None, "", None, others)
        return Row(claim, UNTESTED, "no run folder" + (f"; would test it: `{claim.command}`" if claim.command else ""),
                   None, "", None, others)
    run, out = judged[0]
    measured = out.measured
    if out.verdict == UNTESTED:
        measured += f"; would test it: `{claim.command}`"
    return Row(claim, out.verdict, measured, out.n_seeds, run.folder, out, others)


def ledger(root: str | os.PathLike, claims: tuple[Claim, ...] | None = None) -> list[Row]:
    """Every claim (default: the lab's, CLAIMS), judged on the run folders under root, in the claims' order.  A
    claim that names folders none of which is a run folder under root is a UsageError naming the claim."""
    runs = find_runs(Path(root))
    claims = lab_claim_set() if claims is None else claims
    folders = [r.folder for r in runs]
    for c in claims:
        for pat in c.folders:
            if not match_folders((pat,), folders):
                there = (Path(root) / pat).is_dir()
                raise UsageError(f"claim {c.id!r}: folder {pat!r} " + ("holds no run of this lab (no config.json or "
                                 "summary.json)" if there else "is not under") + f" --root {root}")
    return [judge_claim(c, runs) for c in claims]


def counts(rows: list[Row]) -> dict[str, int]:
    return {v: sum(r.verdict == v for r in rows) for v in VERDICTS}


CSV_COLUMNS = ("id", "paper", "where", "claim", "paper_value", "verdict", "measured", "quantity", "value", "lo", "hi",
               "interval", "n_seeds", "folder", "other_folders", "rule", "rule_text", "command")


def _num(x) -> str:
    return "" if x is None or (isinstance(x, float) and not math.isfinite(x)) else repr(float(x))


def csv_text(rows: list[Row]) -> str:
    """claims.csv: one row per claim (tidy), the numbers at full precision."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in rows:
        c, o = r.claim, r.outcome
        w.writerow([c.id, c.paper, c.where, c.text, c.paper_value, r.verdict, r.measured,
                    o.quantity if o else "", _num(o.value if o else None), _num(o.lo if o else None),
                    _num(o.hi if o else None), o.interval if o else "", "" if r.n_seeds is None else r.n_seeds, r.folder,
                    " | ".join(r.others), c.kind, rules()[c.kind].rule, c.command])
    return buf.getvalue()


# ---- docs/claims.md: the format and every rule ---------------------------------------------------------

DOC_PATH = Path(__file__).resolve().parents[2] / "docs" / "claims.md"


def rules_markdown() -> str:
    """docs/claims.md: how to write a claims file, and every rule with its parameters and its text (written by
    `python -m jackson.lab_report.claims`; a test checks that the committed file is this)."""
    from . import claim_files as cf
    lines = ["# Claims files", "",
             "A claims file states the claims of one paper as data: which rule judges each claim, the rule's",
             "parameters, the command that makes its data and, optionally, the run folders that may test it.",
             "`jackson-report` judges the lab's own two files (`jackson/lab_report/papers/jiang-li.toml`,",
             "`yang.toml`); `jackson-report --claims FILE --root DIR` judges yours against your folders",
             "(a worked example: `examples/own-claims/`).", "",
             "## Format (TOML)", "", "```toml", *cf.FORMAT_EXAMPLE.strip().splitlines(), "```", "",
             "Required in each claim: `id`, `claim`, `rule`, and the rule's required parameters. Anything else is refused",
             "with one line that names the claim: an unknown key (with the closest known one), an unknown rule, a",
             "parameter the rule does not take or of the wrong kind, a second claim with the same id, a folder that is",
             "not under `--root` or holds no run. A file larger than "
             f"{cf.MAX_BYTES:,} bytes is refused unread.", "",
             "## Verdicts", "",
             f"{', '.join(VERDICTS)}. *Inconclusive*: the folder holds the quantities, but its own reference (a power",
             "condition the rule states) says they could not show the effect. *Untested*: no folder holds the quantities,",
             "or the folder cannot test the claim (an untrained model, a grid without the needed sizes).", "",
             "## Rules", "",
             "Each experiment keeps its rules beside its code, in its `rules.py`, and names that module under the",
             "entry-point group `jackson_lab.rules` of pyproject.toml; the report imports the modules of that group and",
             "no experiment. Below, each rule with the module that defines it.", ""]
    for name, k in rules().items():
        params = k.params
        ptxt = "; ".join(f"`{p}` ({'required' if req else 'optional'})" for p, (req, _) in params.items()) or "none"
        reads = (f"Reads run folders under `{k.section}/` of the root (or the claim's `folders`)." if k.section
                 else "Reads no run folder.")
        lines += [f"### `{name}`", "", f"Defined in `{k.module}`. {reads}", "", f"Parameters: {ptxt}.", "", k.rule, ""]
    lines += ["## Choosing between folders", "", PREFERENCE, "",
              "## A rule of your own", "",
              "A rule is a function `judge(claim, run) -> Outcome | None` in a module of your package, registered with",
              "`jackson.verdict.rule(name, section, text, params)`: `run` is the folder as read (`run.summary`,",
              "`run.config`, `run.table(\"results.csv\")`), `claim.p` its parameters; it returns None when the folder",
              "does not hold the claim's quantities, else an `Outcome` with one of the verdicts above and the numbers",
              "it read. State the rule's reference, control and power condition in its text. Declare the module in",
              "your package's pyproject.toml and install the package; `jackson-report` then knows the rule:", "",
              "```toml", '[project.entry-points."jackson_lab.rules"]', 'my_rules = "mypackage.rules"', "```", "",
              "A rule name another module already defines, or a module that fails to import, is refused in one line",
              "naming the module.", ""]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    DOC_PATH.parent.mkdir(exist_ok=True)
    DOC_PATH.write_text(rules_markdown())
    print(f"wrote {DOC_PATH}")

