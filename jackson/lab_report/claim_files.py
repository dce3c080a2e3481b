"""Claims as data: one TOML file per paper, which a researcher edits by hand.

A claim file holds the paper's name, optional shared commands, and one `[[claim]]` table per claim
(FORMAT_EXAMPLE below).  The lab's own ledger is `papers/jiang-li.toml` and `papers/yang.toml` beside this
module.  Every problem is a UsageError of one line that names the file and the claim (`jackson-report` prints
it and exits 2).
"""
from __future__ import annotations

import difflib
import fnmatch
import tomllib
from pathlib import Path

from ..config import UsageError, read_capped
from ..verdict import Claim, rules

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
"""

TOP_KEYS = {"paper", "commands", "claim"}
CLAIM_KEYS = {"id", "where", "claim", "paper_value", "rule", "params", "command", "folders", "not_testable"}
REQUIRED = ("id", "claim", "rule")


def _close(word: str, known) -> str:
    m = difflib.get_close_matches(str(word), sorted(known), n=1)
    return f" (did you mean {m[0]}?)" if m else ""


def read_claims(path: str | Path) -> tuple[Claim, ...]:
    """The claims in a TOML claim file, checked: a tuple of `Claim` in the file's order."""
    path = Path(path).expanduser()
    where = f"--claims {path}"
    if not path.exists():
        raise UsageError(f"{where}: no such file")
    try:
        doc = tomllib.loads(read_capped(path, "--claims", MAX_BYTES))
    except UnicodeDecodeError:
        raise UsageError(f"{where}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{where}: not TOML ({e})") from None
    extra = sorted(set(doc) - TOP_KEYS)
    if extra:
        raise UsageError(f"{where}: unknown key {extra[0]!r}{_close(extra[0], TOP_KEYS)}; a claims file holds paper, "
                         "commands and [[claim]] tables")
    paper = doc.get("paper")
    if not isinstance(paper, str) or not paper.strip():
        raise UsageError(f'{where}: give the paper\'s name as paper = "..."')
    commands = doc.get("commands", {})
    if not isinstance(commands, dict) or not all(isinstance(v, str) for v in commands.values()):
        raise UsageError(f'{where}: [commands] holds name = "command line" pairs')
    tables = doc.get("claim", [])
    if not isinstance(tables, list) or not tables:
        raise UsageError(f"{where}: no [[claim]] table")
    out, seen = [], set()
    for n, t in enumerate(tables, 1):
        cid = t.get("id") if isinstance(t.get("id"), str) and t.get("id").strip() else None
        at = f"{where}: claim {cid!r}" if cid else f"{where}: claim number {n}"
        for key in REQUIRED:
            if not isinstance(t.get(key), str) or not t[key].strip():
                raise UsageError(f'{at}: give {key} = "..."')
        extra = sorted(set(t) - CLAIM_KEYS)
        if extra:
            raise UsageError(f"{at}: unknown key {extra[0]!r}{_close(extra[0], CLAIM_KEYS)}")
        if cid in seen:
            raise UsageError(f"{at}: a second claim with this id")
        seen.add(cid)
        rule = t["rule"]
        known = rules()
        if rule not in known:
            raise UsageError(f"{at}: unknown rule {rule!r}{_close(rule, known)}; rules: {', '.join(known)}")
        params = _params(at, rule, t.get("params", {}))
        for key in ("where", "paper_value", "command", "not_testable"):
            if key in t and not isinstance(t[key], str):
                raise UsageError(f'{at}: {key} must be a string')
        folders = t.get("folders", [])
        if not isinstance(folders, list) or not all(isinstance(f, str) and f.strip() for f in folders):
            raise UsageError(f'{at}: folders must be a list of folder names under --root, e.g. ["runs/a1"]')
        for f in folders:
            if Path(f).is_absolute() or ".." in Path(f).parts:
                raise UsageError(f"{at}: folder {f!r} is not under --root (give a path relative to it)")
        command = t.get("command", "")
        command = commands.get(command, command)
        not_testable = t.get("not_testable", "")
        if rule == "no_run" and not not_testable:
            raise UsageError(f'{at}: rule no_run needs not_testable = "why no command can test it"')
        if not_testable and command:
            raise UsageError(f"{at}: names a command, so it cannot declare not_testable")
        out.append(Claim(cid, paper, t.get("where", ""), t["claim"], t.get("paper_value", ""), rule, command,
                         params, not_testable, tuple(folders)))
    return tuple(out)


def _params(at: str, rule: str, given) -> tuple:
    if not isinstance(given, dict):
        raise UsageError(f"{at}: params must be a table, e.g. params = {{ alpha = 1.0 }}")
    schema = rules()[rule].params
    extra = sorted(set(given) - set(schema))
    if extra:
        takes = ", ".join(schema) or "no parameters"
        raise UsageError(f"{at}: rule {rule} takes {takes}, not {extra[0]!r}{_close(extra[0], schema)}")
    out = []
    for name, (required, check) in schema.items():
        if name not in given:
            if required:
                raise UsageError(f"{at}: rule {rule} needs params.{name}")
            continue
        try:
            out.append((name, check(given[name])))
        except ValueError as e:
            raise UsageError(f"{at}: params.{name} = {given[name]!r} is not {e}") from None
    return tuple(out)


def lab_claims() -> tuple:
    """The lab's own ledger: the claims of both papers, in LAB_PAPERS order."""
    return tuple(c for name in LAB_PAPERS for c in read_claims(PAPERS_DIR / name))


def match_folders(patterns, folders: list[str]) -> list[str]:
    """The run folders (relative to --root) that glob `patterns` (a claim's `folders`) name."""
    return [f for f in folders if any(fnmatch.fnmatchcase(f, pat.strip("/")) for pat in patterns)]
