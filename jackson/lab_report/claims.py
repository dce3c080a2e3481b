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

  * a claim's rule is called in a box (jackson.verdict.call_rule): one that raises, exits, recurses or returns no
    Outcome makes the row FAILED, naming the rule, what happened and the folder;
  * the rows are counted by whose claim they are (`groups`: each paper's own, then the variants the lab added,
    a claims file's origin = "lab"), and a family of rows judged on different folders says why (`note_families`).

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
from ..verdict import (FAILED, LAB, NOT_APPLICABLE, NOT_CHECKED_NOTE, PAPER, STATUSES, UNTESTED, VERDICTS, Claim,
                       Outcome, RuleFailed, Run, UnreadableEvidence, _shown, call_rule, find_runs, rules, same)
from .claim_files import lab_claims, match_folders

PREFERENCE = ("Preferred folder where several test a claim: one that tests it (an inconclusive one included: a "
              "less apt folder does not overrule the best folder's own reference; a folder whose grid cannot test it is "
              "untested, one outside the claim's setting not applicable), then the most seeds, then the kind's own "
              "order (its rule says which), then the folder the claim's own command writes (its --out), then the folder name. "
              "Never used: quick or smoke runs (config.json "
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


def _own_folder(command: str) -> str:
    """The folder a claim's command writes (its --out), as the command names it; '' when it names none."""
    words = str(command or "").split()
    for i, w in enumerate(words):
        if w == "--out" and i + 1 < len(words):
            return words[i + 1].rstrip("/")
        if w.startswith("--out="):
            return w[len("--out="):].rstrip("/")
    return ""


def _is_own(folder: str, own: str) -> bool:
    """A run folder (relative to the ledger's root) is the one the command's --out names (relative to the checkout)."""
    return bool(own) and (own == folder or own.endswith("/" + folder))


def judge_claim(claim: Claim, runs: list[Run], kinds: dict | None = None) -> Row:
    """One row of the ledger: the claim judged on every folder of its kind's section (kinds: rules(), passed in by a
    caller judging many claims).  Its rule is called in a box (jackson.verdict.call_rule): a rule that fails on any
    folder makes the row FAILED, naming the rule, what happened and the folder."""
    k = (kinds or rules())[claim.kind]
    judged: list[tuple[Run, Outcome]] = []
    left: list[str] = []
    unreadable: list[str] = []
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
        before = set(run.refused)
        try:
            out = call_rule(k, claim, run)
        except UnreadableEvidence as e:
            unreadable.append(f"{run.folder}: unreadable for this rule ({e})")
            continue
        except RuleFailed as e:
            return Row(claim, FAILED, f"failed: {e}", None, run.folder, None, [])
        if out is None:
            walled = [n for n in run.refused if n not in before or n in ("config.json", "command.txt")]
            if walled:       # files the wall refused (jackson.verdict.Run.refused): named, never "no run folder"
                unreadable.append(f"{run.folder}: not read for this rule ("
                                  + "; ".join(f"{_shown(n)[1:-1]}: {run.refused[n]}" for n in walled) + ")")
            continue
        if run.left_out:
            left.append(f"{run.folder}: left out ({run.left_out})")
            continue
        judged.append((run, out))
    # folders that test the claim first (an inconclusive verdict included: the best folder's own reference may say
    # that it cannot decide, and a less apt folder does not overrule it), then those that cannot (untested), then
    # not applicable ones; among folders with as many seeds and the same place in the kind's own order, the one the
    # claim's own command writes first (another folder may hold the same parameters on another basis or construction)
    weight = {UNTESTED: 1, NOT_APPLICABLE: 2}
    own = _own_folder(claim.command)
    try:
        judged.sort(key=lambda ro: (weight.get(ro[1].verdict, 0), -(ro[1].n_seeds or 0), ro[1].tiebreak,
                                    not _is_own(ro[0].folder, own), ro[0].folder))
    except TypeError:               # a rule whose tiebreaks do not compare with each other: the folder name decides
        judged.sort(key=lambda ro: (weight.get(ro[1].verdict, 0), -(ro[1].n_seeds or 0), not _is_own(ro[0].folder, own),
                                    ro[0].folder))
    others = [f"{r.folder}: {o.verdict}, {_seeds_text(o.n_seeds)}"
              + (f" ({o.measured})" if o.verdict == NOT_APPLICABLE else "") for r, o in judged[1:]] + unreadable + left
    if not judged:
        if claim.not_testable:                         # declared in CLAIMS: the no_run kind's rule
            return Row(claim, NOT_APPLICABLE, f"no run folder can test it: {claim.not_testable}", None, "", None, others)
        what = ("no folder it could read (" + "; ".join(unreadable) + ")") if unreadable else "no run folder"
        return Row(claim, UNTESTED, what + (f"; would test it: `{claim.command}`" if claim.command else ""),
                   None, "", None, others)
    run, out = judged[0]
    measured = out.measured
    if out.verdict == UNTESTED:
        measured += f"; would test it: `{claim.command}`"
    return Row(claim, out.verdict, measured, out.n_seeds, run.folder, out, others)


def folder_problems(root: str | os.PathLike, claims: tuple[Claim, ...], folders: list[str]) -> dict[str, str]:
    """{claim id: one line} for each claim naming a folder that is not a run folder under root: missing (no such
    folder, or no folder matches the pattern), not a folder, or holding no run of this lab."""
    out = {}
    for c in claims:
        for pat in c.folders:
            if match_folders((pat,), folders):
                continue
            path, at = Path(root) / pat, f"claim {_shown(c.id)}: folder {_shown(pat)}"
            if any(ch in pat for ch in "*?["):
                why = f"is missing: no folder under --root {root} matches it"
            elif not path.exists():
                why = f"is missing: there is no {path}"
            elif not path.is_dir():
                why = f"is not a folder: {path}"
            else:
                why = f"holds no run of this lab (no config.json or summary.json) under --root {root}"
            out[c.id] = f"{at} {why}"
            break
    return out


def price(claims: tuple[Claim, ...], runs: list[Run], kinds: dict) -> int:
    """How many (claim, folder) judgements the ledger will make: each claim on each folder it names, or on each
    folder of its rule's section."""
    folders = [r.folder for r in runs]
    by_section: dict[str, int] = {}
    for r in runs:
        by_section[r.section] = by_section.get(r.section, 0) + 1
    n = 0
    for c in claims:
        if c.folders:
            n += len(match_folders(c.folders, folders))
        else:
            n += by_section.get(kinds[c.kind].section, 0) if kinds[c.kind].section else 0
    return n


MAX_JUDGEMENTS = 50_000      # (claim, folder) judgements in one ledger; past it the ledger is refused before judging
JUDGEMENT_MS = 1.5           # what one judgement costs, about: the lab's 38 claims make 602 judgements over its 57
                             # folders in 0.8 s on a 2-core CPU (1.35 ms each, folders read included)


def ledger(root: str | os.PathLike, claims: tuple[Claim, ...] | None = None, refused: list[str] | None = None,
           keep_going: bool = False) -> list[Row]:
    """Every claim (default: the lab's, CLAIMS), judged on the run folders under root, in the claims' order.  A
    claim that names a folder that is not a run folder under root (folder_problems) is refused, one line each,
    added to `refused` (the lines of the claims a claims file already refused, claim_files.check_claims).  Any
    refused claim is a UsageError of all those lines, before anything is judged; with keep_going the refused claims
    are left out and the others judged.  More than MAX_JUDGEMENTS (claim, folder) judgements is a UsageError
    naming the estimate and the limit."""
    runs = find_runs(Path(root))
    claims = lab_claim_set() if claims is None else claims
    refused = [] if refused is None else refused
    kinds = rules()
    problems = folder_problems(root, claims, [r.folder for r in runs])
    refused.extend(problems.values())
    if refused and not keep_going:
        raise UsageError("\n".join(refused))
    claims = tuple(c for c in claims if c.id not in problems)
    n = price(claims, runs, kinds)
    if n > MAX_JUDGEMENTS:
        raise UsageError(f"the ledger would judge {len(claims):,} claims on {len(runs):,} run folders: {n:,} judgements, "
                         f"about {n * JUDGEMENT_MS / 1000:,.0f} s; the limit is {MAX_JUDGEMENTS:,} judgements "
                         "(fewer claims, or name each claim's folders)")
    rows = [judge_claim(c, runs, kinds) for c in claims]
    note_families(rows)
    return rows


def unchecked(rows: list[Row]) -> int:
    """How many rows were judged on fits that no run with twice the steps has checked: their measured text carries
    the doubling check's note (NOT_CHECKED_NOTE), whatever their verdict."""
    return sum(NOT_CHECKED_NOTE in r.measured for r in rows)


def counts(rows: list[Row]) -> dict[str, int]:
    """How many rows say each status (STATUSES: the verdicts, then failed); they sum to len(rows)."""
    return {v: sum(r.verdict == v for r in rows) for v in STATUSES}


def groups(rows: list[Row]) -> list[tuple[str, list[Row]]]:
    """The rows by whose claim they are: each paper's own claims (papers in the ledger's order), then the variants
    this lab added (origin "lab"), by paper: [(title, rows)]."""
    out: dict[tuple[str, str], list[Row]] = {}
    for origin in (PAPER, LAB):
        for r in rows:
            if r.claim.origin == origin:
                out.setdefault((origin, r.claim.paper), []).append(r)
    return [(paper if origin == PAPER else f"this lab's variants of {paper}", rs) for (origin, paper), rs in out.items()]


GRID_AXES = ("alpha", "rank")    # parameters that pick a cell of one grid: claims differing only in these are a family


def note_families(rows: list[Row]) -> None:
    """Each family of rows (one rule, one command, parameters that differ only in GRID_AXES: the cells of one
    sweep) is judged on one folder, or its rows say why not: a row judged elsewhere than most of its family gets
    "judged on X/, not on Y/ like ...", with the verdict Y/ gives it (from its other folders) or that Y/ does not
    hold its quantities.  Changes `measured` in place."""
    fams: dict[tuple, list[Row]] = {}
    for r in rows:
        c = r.claim
        if c.command and r.folder and r.verdict != FAILED:
            fams.setdefault((c.kind, c.command, tuple(kv for kv in c.params if kv[0] not in GRID_AXES)), []).append(r)
    for members in fams.values():
        folders = [r.folder for r in members]
        if len(set(folders)) < 2:
            continue
        main = max(dict.fromkeys(folders), key=folders.count)     # the most rows; the first such in the ledger
        peers = [r.claim.id for r in members if r.folder == main]
        for r in members:
            if r.folder == main:
                continue
            there = next((o.split(": ", 1)[1] for o in r.others if o.split(": ", 1)[0] == main), "")
            why = f"there: {there}" if there else f"{main}/ does not hold its quantities"
            r.measured += (f"; judged on {r.folder}/, not on {main}/ like {', '.join(peers)} of its family "
                           f"(same rule and command): {why}")


CSV_COLUMNS = ("id", "paper", "origin", "where", "claim", "paper_value", "verdict", "measured", "quantity", "value", "lo",
               "hi", "bracket", "interval", "n_seeds", "folder", "other_folders", "rule", "rule_text", "command")


def _num(x) -> str:
    return "" if x is None or (isinstance(x, float) and not math.isfinite(x)) else repr(float(x))


def csv_text(rows: list[Row]) -> str:
    """claims.csv: one row per claim (tidy), the numbers at full precision."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    kinds = rules()
    for r in rows:
        c, o = r.claim, r.outcome
        w.writerow([c.id, c.paper, c.origin, c.where, c.text, c.paper_value, r.verdict, r.measured,
                    o.quantity if o else "", _num(o.value if o else None), _num(o.lo if o else None),
                    _num(o.hi if o else None), o.bracket if o else "", o.interval if o else "",
                    "" if r.n_seeds is None else r.n_seeds, r.folder, " | ".join(r.others), c.kind, kinds[c.kind].rule,
                    c.command])
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
             "Required in each claim: `id`, `claim`, `rule`, and the rule's required parameters. `origin = \"lab\"` marks",
             "a variant you added, not a claim of the paper: the ledger counts it apart. Anything else is refused",
             "with one line that names the claim: an unknown key (with the closest known one), an unknown rule, a",
             "parameter the rule does not take or of the wrong kind, a second claim with the same id, a control",
             "character in its text, a folder that is not under `--root`, missing, or holds no run. Every bad claim",
             "is named at once (exit 2, nothing written); `jackson-report --keep-going` judges the others, lists the",
             "refused ones on the page and exits 1. A file larger than "
             f"{cf.MAX_BYTES:,} bytes, with arrays or tables nested more than {cf.MAX_NESTING} deep or with more",
             f"than {cf.MAX_CLAIMS:,} claims is refused unjudged, as is a ledger of more than {MAX_JUDGEMENTS:,}",
             "(claim, folder) judgements.", "",
             "## Verdicts", "",
             f"{', '.join(VERDICTS)} (and *failed*, when the rule itself failed). *Inconclusive*: the folder holds the quantities, but its own reference (a power",
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
              "it read (an interval from `seed_range` or `seed_bootstrap` is labelled by itself; one of your own",
              "says what it is in `Outcome.bracket`). State the rule's reference, control and power condition in its",
              "text. A rule that raises, exits, recurses without end or returns anything else (a dict, a verdict word",
              "not above) marks its claim `failed`, naming the rule and what happened, and `jackson-report` exits 1.",
              "Declare the module in",
              "your package's pyproject.toml and install the package; `jackson-report` then knows the rule:", "",
              "```toml", '[project.entry-points."jackson_lab.rules"]', 'my_rules = "mypackage.rules"', "```", "",
              "A rule name another module already defines, or a module that fails to import, is refused in one line",
              "naming the module.", ""]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    DOC_PATH.parent.mkdir(exist_ok=True)
    DOC_PATH.write_text(rules_markdown())
    print(f"wrote {DOC_PATH}")

