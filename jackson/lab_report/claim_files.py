"""Claims as data: one TOML file per paper, which a researcher edits by hand.

A claim file holds the paper's name, optional shared commands, and one `[[claim]]` table per claim
(FORMAT_EXAMPLE below).  The lab's own ledger is `papers/jiang-li.toml` and `papers/yang.toml` beside this
module.  Every problem is a UsageError of one line that names the file and the claim (`jackson-report` prints
it and exits 2).
"""
from __future__ import annotations

import difflib
import fnmatch
import re
import tomllib
from pathlib import Path

from ..config import UsageError, read_capped
from ..verdict import LAB, PAPER, Claim, _shown, printable, rules

PAPERS_DIR = Path(__file__).resolve().parent / "papers"
LAB_PAPERS = ("jiang-li.toml", "yang.toml")      # the ledger's order
MAX_BYTES = 1_000_000                              # a claims file larger than this is refused unread

FORMAT_EXAMPLE = """paper = "My paper"

[commands]                 # optional: commands several claims share, by name
sweep = "jackson-sweep --alpha 1.0 --rank inf --out runs/a1"

[[claim]]
id = "ME-rate-a1"          # unique in the file
where = "Sec. 4, Fig. 2"   # where in the paper
claim = "the error decays like m_h^-1"
paper_value = "exponent -1"
rule = "rate"              # a rule of docs/claims.md
params = { alpha = 1.0 }   # what the rule reads: docs/claims.md says which it needs
command = "sweep"          # a key of [commands] or a command line; optional
folders = ["a1"]           # optional: run folders under --root (glob patterns) that may test it; default:
                           # every folder of the rule's section (jackson/, vit_probe/, ...)
not_testable = ""          # optional (rule "no_run"): why no command can test it
origin = "paper"           # optional: "paper" (the paper's claim) or "lab" (a variant you added; counted apart)
"""

TOP_KEYS = {"paper", "commands", "claim"}
CLAIM_KEYS = {"id", "where", "claim", "paper_value", "rule", "params", "command", "folders", "not_testable", "origin"}
REQUIRED = ("id", "claim", "rule")
ORIGINS = (PAPER, LAB)          # `origin`: the paper's own claim (default), or a variant this lab added
MAX_NESTING = 16                # arrays and tables nested deeper than this are refused before parsing (the lab's: 3)
MAX_CLAIMS = 20_000             # claims in one file; past it the file is refused unread further (the lab's: 33 and 5).
                                # Measured on a loaded 2-core CPU: reading costs about 0.35 ms a claim, and the whole
                                # report of 15,000 claims on one folder 74 s
TEXT_KEYS = ("where", "claim", "paper_value", "not_testable")   # prose: a line break or tab in it reads as a space

# a TOML file's strings and comments (whose brackets are text), and the brackets that nest arrays and tables
_TOKENS = re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}]', re.S)


def _close(word: str, known) -> str:
    m = difflib.get_close_matches(str(word), sorted(known), n=1)
    return f" (did you mean {m[0]}?)" if m else ""


def _nesting(text: str) -> tuple[int, int]:
    """(the deepest nesting of arrays and inline tables in a TOML text, the line where it is reached), counted
    before parsing: Python's TOML parser recurses once per level and would end in a RecursionError."""
    depth = worst = at = 0
    for m in _TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > worst:
                worst, at = depth, m.start()
        elif c in "]}":
            depth -= 1
    return worst, text.count("\n", 0, at) + 1


def _depth(doc) -> int:
    """How deep tables and arrays nest in a parsed document (dotted keys nest tables without brackets),
    counted without recursion."""
    worst, stack = 0, [(doc, 1)]
    while stack:
        v, d = stack.pop()
        worst = max(worst, d)
        if d > MAX_NESTING:
            break
        children = v.values() if isinstance(v, dict) else v
        stack += [(c, d + 1) for c in children if isinstance(c, (dict, list))]
    return worst


def _text(at: str, key: str, v) -> str:
    """A claim's string field, checked: printable (no NUL, escape, bidi override, ...); in prose (TEXT_KEYS) a line
    break or tab reads as a space."""
    if key in TEXT_KEYS:
        v = " ".join(v.split()) if any(ch in v for ch in "\t\n\r") else v
    if not printable(v):
        bad = next(ch for ch in v if not printable(ch))
        raise UsageError(f"{at}: {key} holds the control character U+{ord(bad):04X}; a claim's text is printable")
    return v


def read_claims(path: str | Path, keep_going: bool = False) -> tuple[Claim, ...]:
    """The claims in a TOML claim file, checked: a tuple of `Claim` in the file's order.  Every bad claim is named,
    all of them at once: a UsageError of one line per claim (check_claims); with keep_going, the good claims alone."""
    claims, refused = check_claims(path)
    if refused and not keep_going:
        raise UsageError("\n".join(refused))
    return claims


def check_claims(path: str | Path) -> tuple[tuple[Claim, ...], list[str]]:
    """(the good claims of a TOML claims file in its order, one line for each bad one).  A fault of the file
    itself (not a regular file, too large, nested too deep, not TOML, no paper, more than MAX_CLAIMS claims) is a
    UsageError of one line."""
    path = Path(path).expanduser()
    where = f"--claims {path}"
    if not path.exists():
        raise UsageError(f"{where}: no such file")
    try:
        text = read_capped(path, "--claims", MAX_BYTES)
    except UnicodeDecodeError:
        raise UsageError(f"{where}: not UTF-8 text") from None
    deepest, line = _nesting(text)
    if deepest > MAX_NESTING:
        raise UsageError(f"{where}: arrays or tables nested {deepest} deep (line {line}); the limit is {MAX_NESTING}")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{where}: not TOML ({e})") from None
    except RecursionError:         # a nesting _nesting did not see: still one line
        raise UsageError(f"{where}: nested too deep for the TOML parser; the limit is {MAX_NESTING}") from None
    if _depth(doc) > MAX_NESTING:
        raise UsageError(f"{where}: tables (dotted keys) nested more than {MAX_NESTING} deep; the limit is {MAX_NESTING}")
    extra = sorted(set(doc) - TOP_KEYS)
    if extra:
        raise UsageError(f"{where}: unknown key {_shown(extra[0])}{_close(extra[0], TOP_KEYS)}; a claims file holds "
                         "paper, commands and [[claim]] tables")
    paper = doc.get("paper")
    if not isinstance(paper, str) or not paper.strip():
        raise UsageError(f'{where}: give the paper\'s name as paper = "..."')
    paper = _text(where, "paper", paper)
    commands = doc.get("commands", {})
    if not isinstance(commands, dict) or not all(isinstance(v, str) for v in commands.values()):
        raise UsageError(f'{where}: [commands] holds name = "command line" pairs')
    for name, v in commands.items():
        _text(f"{where}: [commands] {_shown(name)}", "command", v)
    tables = doc.get("claim", [])
    if not isinstance(tables, list) or not tables:
        raise UsageError(f"{where}: no [[claim]] table")
    if len(tables) > MAX_CLAIMS:
        raise UsageError(f"{where}: {len(tables):,} claims, more than the limit of {MAX_CLAIMS:,} for one file "
                         "(split it)")
    out, refused, seen, known = [], [], set(), rules()
    for n, t in enumerate(tables, 1):
        cid = t.get("id") if isinstance(t, dict) and isinstance(t.get("id"), str) and t["id"].strip() else None
        at = f"{where}: claim {_shown(cid)}" if cid else f"{where}: claim number {n}"
        try:
            c = _claim(at, t, paper, commands, known)
            if cid in seen:
                raise UsageError(f"{at}: a second claim with this id")
        except UsageError as e:
            refused.append(str(e))
        else:
            out.append(c)
        if cid:
            seen.add(cid)
    return tuple(out), refused


def _claim(at: str, t, paper: str, commands: dict, known: dict) -> Claim:
    """One [[claim]] table as a Claim, or a UsageError of one line (`at` names the file and the claim)."""
    if not isinstance(t, dict):
        raise UsageError(f"{at}: a [[claim]] table, not {type(t).__name__}")
    for key in REQUIRED:
        if not isinstance(t.get(key), str) or not t[key].strip():
            raise UsageError(f'{at}: give {key} = "..."')
    extra = sorted(set(t) - CLAIM_KEYS)
    if extra:
        raise UsageError(f"{at}: unknown key {_shown(extra[0])}{_close(extra[0], CLAIM_KEYS)}")
    for key in ("where", "paper_value", "command", "not_testable", "origin"):
        if key in t and not isinstance(t[key], str):
            raise UsageError(f'{at}: {key} must be a string')
    cid = _text(at, "id", t["id"])
    rule = _text(at, "rule", t["rule"])
    if rule not in known:
        raise UsageError(f"{at}: unknown rule {_shown(rule)}{_close(rule, known)}; rules: {', '.join(known)}")
    params = _params(at, known[rule], t.get("params", {}))
    text = {k: _text(at, k, t.get(k, "")) for k in TEXT_KEYS}
    folders = t.get("folders", [])
    if not isinstance(folders, list) or not all(isinstance(f, str) and f.strip() for f in folders):
        raise UsageError(f'{at}: folders must be a list of folder names under --root, e.g. ["runs/a1"]')
    for f in folders:
        _text(at, "folders", f)
        if Path(f).is_absolute() or ".." in Path(f).parts:
            raise UsageError(f"{at}: folder {_shown(f)} is not under --root (give a path relative to it)")
    command = t.get("command", "")
    command = _text(at, "command", commands.get(command, command))
    origin = t.get("origin", PAPER)
    if origin not in ORIGINS:
        raise UsageError(f"{at}: origin = {_shown(origin)} is not one of {', '.join(ORIGINS)} (a claim of the paper, "
                         "or a variant this lab added)")
    if rule == "no_run" and not text["not_testable"]:
        raise UsageError(f'{at}: rule no_run needs not_testable = "why no command can test it"')
    if text["not_testable"] and command:
        raise UsageError(f"{at}: names a command, so it cannot declare not_testable")
    return Claim(cid, paper, text["where"], text["claim"], text["paper_value"], rule, command, params,
                 text["not_testable"], tuple(folders), origin)


def _params(at: str, kind, given) -> tuple:
    if not isinstance(given, dict):
        raise UsageError(f"{at}: params must be a table, e.g. params = {{ alpha = 1.0 }}")
    rule, schema = kind.name, kind.params
    extra = sorted(set(given) - set(schema))
    if extra:
        takes = ", ".join(schema) or "no parameters"
        raise UsageError(f"{at}: rule {rule} takes {takes}, not {_shown(extra[0])}{_close(extra[0], schema)}")
    try:            # a rule of a researcher's package may declare them wrongly: one line naming it
        items = [(name, required, check) for name, (required, check) in schema.items()]
    except (TypeError, ValueError):
        raise UsageError(f"{at}: rule {rule} ({kind.module}) declares its parameters wrongly (each name -> "
                         "(required, check))") from None
    out = []
    for name, required, check in items:
        if name not in given:
            if required:
                raise UsageError(f"{at}: rule {rule} needs params.{name}")
            continue
        try:
            out.append((name, check(given[name])))
        except ValueError as e:
            raise UsageError(f"{at}: params.{name} = {_shown(given[name])} is not {e}") from None
        except (Exception, SystemExit) as e:           # the check is the rule's code: contained, as call_rule does
            raise UsageError(f"{at}: params.{name}: the check of rule {rule} ({kind.module}) failed: "
                             f"{type(e).__name__}: {_shown(str(e))[1:-1]}") from None
    return tuple(out)


def lab_claims() -> tuple:
    """The lab's own ledger: the claims of both papers, in LAB_PAPERS order."""
    return tuple(c for name in LAB_PAPERS for c in read_claims(PAPERS_DIR / name))


def match_folders(patterns, folders: list[str]) -> list[str]:
    """The run folders (relative to --root) that glob `patterns` (a claim's `folders`) name."""
    return [f for f in folders if any(fnmatch.fnmatchcase(f, pat.strip("/")) for pat in patterns)]
