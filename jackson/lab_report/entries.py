"""The lab report's reading side: the result folders under a root (each one's report.json, provenance,
whether it was quick or superseded), the sections they fall in, each run's headline rows (paper beside
measured), and the claims ledger's cells as text.  Every renderer (page.py's markdown, html_page.py,
tables.py) reads these; none of them is imported here."""
from __future__ import annotations

import json
import math
import os
import re
import stat
from pathlib import Path

from ..config import UsageError, need, read_capped
from ..runfolder import rerunnable
from ..verdict import BRACKETS, NOT_CHECKED_NOTE, STATUSES, UNLABELLED, rules
from . import claims
from .wall import MAX_EMBED_BYTES, MAX_EMBED_TOTAL, inside_file, outside, regular  # noqa: F401  (re-exported)

# section key -> (heading, the command that produces its results)
SECTIONS = {
    "jackson": ("Jackson-type rate: error against m_h (Theorem 4.1, Fig. 1)",
                "jackson-sweep --alpha 0.55,1.0,1.5 --rank 2,6,inf --activation gelu --out reports/jackson/fig1"),
    "rnn_compare": ("RNN vs Transformer: temporal ordering and mixing (Tables 2-3)",
                    "rnn-compare --out reports/rnn_compare/default"),
    "vit_probe": ("ViT attention probe (Sec. 5)", "vit-probe spectra ... (see vit-probe --help)"),
    "tasks": ("Appendix B.1 worked examples: nearest point, weighted averages, qSA (Figs. 4-6)",
              "jackson-tasks all"),
    "cot_dp": ("Efficient Transformers on CoT DP tasks (Yang et al.: Fig. 1, Table 2, locality)",
               "cot-dp sweep --task arithmetic; cot-dp sweep --task ed,ed_local,lis"),
}
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".svg": "image/svg+xml"}
MAGIC = {"image/png": (b"\x89PNG\r\n\x1a\n",), "image/jpeg": (b"\xff\xd8\xff",), "image/gif": (b"GIF87a", b"GIF89a"),
         "image/svg+xml": (b"<svg", b"<?xml")}


# ---- finding result folders ---------------------------------------------------------------------

def _read_json(p: Path) -> dict:
    try:
        return json.loads(read_capped(p, "--root"))
    except UsageError:
        raise
    except UnicodeDecodeError:
        raise UsageError(f"{p}: cannot read (not UTF-8 text)") from None
    except (OSError, ValueError) as e:
        raise UsageError(f"{p}: cannot read ({e})") from None


def find_runs(root: Path) -> list[dict]:
    """Every result folder under root as a normalised entry (hook or adapter), sorted by folder."""
    entries = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "cells" and not d.startswith("."))
        folder = Path(dirpath)
        if "report.json" in filenames:
            entries.append(from_hook(root, folder))
    return sorted(entries, key=lambda e: e["folder"])


def _rel(root: Path, p: Path) -> str:
    return Path(os.path.relpath(p, root)).as_posix()


def seeds_text(seeds) -> str:
    if isinstance(seeds, (list, tuple)):
        return f"{len(seeds)} ({', '.join(map(str, seeds))})"
    return str(seeds)


def provenance(folder: Path) -> str:
    """Where and with what the run was made: from its environment.json (jackson/runfolder.py), else from the
    provenance.json derived once from git history for a folder written before environment.json existed
    (jackson/lab_report/provenance.py: what the run did not record is said to be not recorded), else that
    nothing was recorded; then whether it was a quick run.  Read from the folder's files only (never git)."""
    quick = f"quick run: {'yes' if is_quick(folder) else 'no'}"
    env, derived = inside_file(folder, "environment.json"), inside_file(folder, "provenance.json")
    try:
        d = json.loads(read_capped(env, "--root")) if env else None
        p = json.loads(read_capped(derived, "--root")) if d is None and derived else None
    except (OSError, ValueError):                    # a UsageError (too large) included: said unreadable
        return f"{'environment.json' if env else 'provenance.json'} unreadable, {quick}"
    if isinstance(d, dict):
        pk = d.get("packages") or {}
        commit = str(d.get("commit") or "")
        parts = ([f"jackson-lab {d['lab_version']}"] if d.get("lab_version") else []) + [
                 f"commit {commit[:12]}{' (uncommitted changes)' if commit.endswith('+dirty') else ''}" if commit
                 else "commit not recorded",
                 f"started {str(d['started_utc'])[:10]}" if d.get("started_utc") else "start date not recorded",
                 f"torch {pk['torch']}" if pk.get("torch") else "torch version not recorded",
                 f"{d['torch_threads']} torch thread(s)" if d.get("torch_threads") else "torch threads not recorded",
                 f"device {d['device']}" if d.get("device") else "device not recorded"]
        earlier = [e for e in d.get("earlier") or [] if isinstance(e, dict)]
        if earlier:   # a resumed or rebuilt run: say when the first invocation started, and on what commit
            first, c0 = earlier[0], str(earlier[0].get("commit") or "")
            parts.append(f"after {len(earlier)} earlier invocation(s), the first started "
                         + (str(first["started_utc"])[:10] if first.get("started_utc") else "on a date not recorded")
                         + " at " + (f"commit {c0[:12]}" if c0 else "a commit not recorded")
                         + ("" if first.get("started_utc") else _committed(derived, first)))
            devices = sorted({str(e["device"]) for e in [*earlier, d] if e.get("device")})
            if len(devices) > 1:   # cells trained on different devices: the last invocation's alone would hide it
                parts.append(f"devices over all invocations: {', '.join(devices)}")
        return ", ".join(parts + [quick])   # a field the run left empty is said to be unrecorded
    if isinstance(p, dict):
        try:
            return _derived_text(p, quick)
        except (KeyError, TypeError):
            return f"provenance.json unreadable, {quick}"
    return f"not recorded (neither environment.json nor provenance.json), {quick}"


def _when(c: dict) -> str:
    """A provenance.json commit entry as the report states it: the short hash and the day."""
    return f"{str(c['commit'])[:12]} on {str(c['date'])[:10]}"


def _committed(derived: Path | None, first: dict) -> str:
    """For a first invocation that recorded no date: when its results entered git, from the folder's
    provenance.json (derived from git history before the folder had an environment.json), else from the record
    itself (`results_added`: cells copied from such a folder into another carry its date with them); "" if
    unknown."""
    try:
        if derived:
            added, where = json.loads(read_capped(derived, "--root"))["results_added"], "provenance.json"
        else:
            added, where = first["results_added"], "environment.json"
        return f" (its results committed in {_when(added)}: git history, {where})"
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def _derived_text(p: dict, quick: str) -> str:
    """The report's line for a provenance.json (jackson/lab_report/provenance.py)."""
    def stated(k: str, what: str) -> str:
        v = p.get(k) if isinstance(p.get(k), dict) else {}
        return f"{what} {v['value']} ({v['from']})" if v.get("value") else f"{what} not recorded"
    added, tables = p["results_added"], p.get("tables_changed")
    parts = [f"results committed in {_when(added)}"
             + (f", tables last changed in {_when(tables)}" if tables and tables["commit"] != added["commit"] else "")
             + " (git history, provenance.json; the run itself recorded no environment.json)",
             "code commit and package versions not recorded", stated("torch_threads", "torch threads"),
             stated("device", "device"), quick]
    return ", ".join(parts)


def is_quick(folder: Path) -> bool:
    cfg = inside_file(folder, "config.json")
    try:
        quick = bool(json.loads(read_capped(cfg, "--root")).get("quick")) if cfg else False
    except (OSError, ValueError, AttributeError):
        quick = False
    cmd = inside_file(folder, "command.txt")
    try:
        return quick or (cmd is not None and "--quick" in read_capped(cmd, "--root").split())
    except (OSError, ValueError):
        return quick


def from_hook(root: Path, folder: Path) -> dict:
    """A run folder's entry from its report.json.  The file is checked before anything is built from it, each
    fault one line naming the file and the entry (UsageError): a JSON object with a string 'title'; 'section',
    'data', 'command' and 'text' strings where given; 'paper' a list of objects, each with a string 'quantity'
    and a 'compare' of COMPARE where given; 'figures' a list of objects, each with a string 'file' (a path
    beside report.json) and a string 'caption' where given.

    The wall: report.json, each figure, summary.md and SUPERSEDED.md must lie inside the folder, every symbolic
    link followed.  A report.json that does not is refused (UsageError, quoting nothing of it); a figure or
    summary that does not is kept out of the entry and listed in `refused` ({"kind": figure or summary, "file"
    as report.json wrote it, "why", "caption", "at": how many shown figures come before it}), which the page
    shows in its place."""
    where = folder / "report.json"
    why = outside(folder, where) or outside(root, folder, "the report's folder")
    need(not why, f"{where}: refused: {why} (a symbolic link out of it); it is not read")
    need(not regular(where), f"{where}: {regular(where)}")

    def shown(v) -> str:
        t = json.dumps(v) if isinstance(v, (list, dict, str, int, float, bool, type(None))) else repr(v)
        return t if len(t) <= 60 else t[:57] + "..."
    try:
        r = _read_json(where)
    except UnicodeDecodeError:
        raise UsageError(f"{where}: cannot read (not UTF-8 text)") from None
    need(isinstance(r, dict) and "title" in r, f"{where}: needs at least a 'title'")
    need(isinstance(r["title"], str), f"{where}: 'title' must be a string, got {shown(r['title'])}")
    for k in ("section", "data", "command", "text"):
        need(r.get(k) is None or isinstance(r[k], str), f"{where}: '{k}' must be a string, got {shown(r.get(k))}")
    paper, figures = r.get("paper") or [], r.get("figures") or []
    need(isinstance(paper, list), f"{where}: 'paper' must be a list of rows (objects with a 'quantity', 'paper' "
                                  f"and 'measured'), got {shown(paper)}")
    for i, p in enumerate(paper, 1):
        need(isinstance(p, dict), f"{where}: paper row {i} must be an object (with a 'quantity', 'paper' and "
                                  f"'measured'), got {shown(p)}")
        need(isinstance(p.get("quantity"), str), f"{where}: paper row {i}: 'quantity' must be a string, "
                                                 f"got {shown(p.get('quantity'))}")
        need(p.get("compare", "ratio") in COMPARE,
             f"{where}: paper row {p.get('quantity')!r}: compare must be one of {COMPARE}, got {p.get('compare')!r}")
    need(isinstance(figures, list), f"{where}: 'figures' must be a list of objects (each a 'file' beside "
                                    f"report.json and its 'caption'), got {shown(figures)}")
    for i, f in enumerate(figures, 1):
        need(isinstance(f, dict) and isinstance(f.get("file"), str) and f["file"] != "",
             f"{where}: figure {i} must be an object with a 'file' (a path beside report.json), got {shown(f)}")
        need(isinstance(f.get("caption", ""), str), f"{where}: figure {i}: 'caption' must be a string, "
                                                    f"got {shown(f.get('caption'))}")
    e = {"folder": _rel(root, folder), "title": r["title"], "section": r.get("section") or "other",
         "data": r.get("data") or "", "command": r.get("command") or "", "seeds": r.get("seeds", ""),
         "paper": list(paper), "text": r.get("text") or "", "figures": [], "refused": []}
    ran = e["command"]                       # as recorded; shown as the command that reruns it from a clone
    e["command"] = rerunnable(ran, f"{root.name}/{e['folder']}") if ran else ran
    e["ran"] = ran if ran != e["command"] else ""
    e["text"] = e["text"].replace(ran, e["command"]) if ran else e["text"]
    for f in figures:
        cap = f.get("caption", "").replace(ran, e["command"]) if ran else f.get("caption", "")
        extra = []
        if e["data"] and e["data"] not in cap:
            extra.append(f"Data: {e['data']}.")
        if e["seeds"] != "" and "seed" not in cap.lower():
            extra.append(f"Seeds: {seeds_text(e['seeds'])}.")
        if e["command"] and e["command"] not in cap:
            extra.append(f"Command: `{e['command']}`.")
        caption = " ".join([cap, *extra]).strip()
        why = outside(folder, folder / f["file"])
        if why:
            e["refused"].append({"kind": "figure", "file": f["file"], "why": why, "caption": caption,
                                 "at": len(e["figures"])})
            continue
        e["figures"].append({"file": _rel(root, folder / f["file"]), "caption": caption})
    e["links"] = []
    for n in ("summary.md",):
        if not (folder / n).is_symlink() and not (folder / n).exists():
            continue
        why = outside(folder, folder / n) or regular(folder / n)
        if why:
            e["refused"].append({"kind": "summary", "file": n, "why": why, "caption": "", "at": len(e["figures"])})
        else:
            e["links"].append(_rel(root, folder / n))
    e["made"] = provenance(folder)
    if is_quick(folder):                     # a smoke run: never evidence (the claims ledger leaves it out)
        e["title"] = "[quick run] " + e["title"]
    sup = folder / "SUPERSEDED.md"          # a later run replaced this one: say so in its title and text
    e["superseded"] = sup.exists() or sup.is_symlink()
    if e["superseded"]:
        e["title"] = "[superseded] " + e["title"]
        e["text"] = ("SUPERSEDED: " + _superseded_text(folder) + " " + e["text"]).strip()
    return e


def _superseded_text(folder: Path) -> str:
    """A SUPERSEDED.md's words on one line: read only when it is a regular file inside its folder, at most
    MAX_TEXT_BYTES; else what kept it out (never its content)."""
    p = folder / "SUPERSEDED.md"
    why = outside(folder, p) or regular(p)
    if why:
        return f"(its SUPERSEDED.md is refused: {why})"
    try:
        return " ".join(read_capped(p, "--root").split())
    except (OSError, UnicodeDecodeError, UsageError) as e:
        return f"(its SUPERSEDED.md is unreadable: {getattr(e, 'strerror', None) or 'too large or not text'})"


def other_documents(root: Path) -> list[str]:
    """Notes beside the runs: markdown files at the top of root and of its section folders."""
    docs = [p for p in sorted(root.glob("*.md")) if p.name not in ("index.md", "README.md")]
    docs += [p for p in sorted(root.glob("*/*.md"))]
    return [_rel(root, p) for p in docs if not (p.parent / "summary.json").exists() and not document_refused(root, p)]


def document_refused(root: Path, p: Path) -> str:
    """'' when a note may be shown (a regular file inside root, links followed); else why not."""
    return outside(root, p, "the report's folder") or regular(p)


def refused_documents(root: Path) -> list[tuple[str, str]]:
    """The notes other_documents leaves out because they lie outside the root or are not regular files:
    (path under root, why)."""
    docs = [p for p in sorted(root.glob("*.md")) if p.name not in ("index.md", "README.md")]
    docs += [p for p in sorted(root.glob("*/*.md"))]
    return [(_rel(root, p), document_refused(root, p)) for p in docs
            if not (p.parent / "summary.json").exists() and document_refused(root, p)]


def current_and_superseded(secs) -> tuple[list, list]:
    """The sections with their current runs, and with their superseded ones (SUPERSEDED.md; sections without
    any left out): the page shows the first, and the second in an appendix."""
    cur = [(k, h, how, [e for e in es if not e.get("superseded")]) for k, h, how, es in secs]
    old = [(k, h, how, [e for e in es if e.get("superseded")]) for k, h, how, es in secs]
    return cur, [s for s in old if s[3]]


def interval_text(o) -> str:
    """An outcome's interval as the page and claims.tex show it: " [lo, hi] kind" (kind: the Outcome's bracket, a
    95% CI, a seed range, ...), "" without one."""
    if o is None or o.lo is None or o.hi is None:
        return ""
    return f" [{o.lo:.3g}, {o.hi:.3g}] {o.bracket or UNLABELLED}"


def key_number(r: claims.Row) -> str:
    """A ledger row's headline number for the summary: its quantity, value and labelled interval, or what it
    lacks."""
    o = r.outcome
    if o is None or o.value is None:
        return "—"
    return f"{o.quantity}: {o.value:.3g}{interval_text(o)}"


def run_id(folder: str) -> str:
    """The page anchor of a run folder's section."""
    return "run-" + re.sub(r"[^a-z0-9]+", "-", folder.lower()).strip("-")


def sections(entries: list[dict]) -> list[tuple[str, str, str, list[dict]]]:
    """[(key, heading, how to produce, entries)]: the known sections in order, then others by name."""
    keys = list(SECTIONS) + sorted({e["section"] for e in entries} - set(SECTIONS))
    out = []
    for k in keys:
        heading, how = SECTIONS.get(k, (k, ""))
        es = [dict(e) for e in entries if e["section"] == k]
        titles = [e["title"] for e in es]
        for e in es:                              # two runs with one title: say which folder is which
            if titles.count(e["title"]) > 1:
                e["title"] = f"{e['title']} ({e['folder']})"
        out.append((k, heading, how, es))
    return out


# ---- rendering ------------------------------------------------------------------------------------

def _num(v) -> str:
    if isinstance(v, bool) or v is None:
        return "—" if v is None else str(v)
    if isinstance(v, (int, float)):
        return f"{v:.3g}"
    return str(v)


ADDITIVE = ("exponent", "accuracy", "gamma", " b in ")   # quantities compared by their difference
COMPARE = ("difference", "ratio")   # what a report.json paper row may declare (its "compare"), overriding ADDITIVE


def interval_of(row: dict) -> tuple[float, float] | None:
    """A headline row's interval for its measured value (`lo`, `hi`, where its experiment gives one; what kind
    of interval the row's quantity says), or None."""
    lo, hi = row.get("lo"), row.get("hi")
    ok = all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in (lo, hi))
    return (float(lo), float(hi)) if ok else None


def ratio(paper, measured, quantity: str = "", compare: str | None = None,
          interval: tuple[float, float] | None = None) -> str:
    """How far the measured value is from the paper's: the difference for exponents, accuracies and bounded
    quantities (a ratio of two exponents, or of two weights in [0, 1] near 1 or at 0, means nothing), the
    ratio for errors and other positive scales.  `compare`, when the row declares it, decides; else the
    quantity's words (ADDITIVE).  With the measured value's `interval`, the same comparison of its ends."""
    if isinstance(paper, (int, float)) and isinstance(measured, (int, float)) and not isinstance(paper, bool) \
            and math.isfinite(paper) and math.isfinite(measured):
        if compare == "difference" or (compare is None and any(w in quantity.lower() for w in ADDITIVE)):
            ends = f" [{interval[0] - paper:+.3g}, {interval[1] - paper:+.3g}]" if interval else ""
            return f"{measured - paper:+.3g}{ends} (difference)"
        if paper != 0:
            ends = sorted(v / paper for v in interval) if interval else None
            return f"{measured / paper:.3g}x" + (f" [{ends[0]:.3g}x, {ends[1]:.3g}x]" if ends else "")
    return "—"


def measured_text(row: dict) -> str:
    """A headline row's measured cell: the value, and its interval in brackets where the row gives one."""
    iv = interval_of(row)
    return _num(row.get("measured")) + (f" [{_num(iv[0])}, {_num(iv[1])}]" if iv else "")


HEADLINE = ("quantity", "paper", "measured", "measured vs paper")   # the columns of a run's headline table


def headline_rows(e: dict) -> list[dict[str, str]]:
    """A run's headline table as every output shows it (the page, tables.tex, tables.csv): one row per
    quantity its report.json gives a paper value for, the HEADLINE cells as text."""
    return [dict(zip(HEADLINE, (p["quantity"], _num(p.get("paper")), measured_text(p),
                                ratio(p.get("paper"), p.get("measured"), p.get("quantity", ""), p.get("compare"),
                                      interval_of(p)))))
            for p in e["paper"]]


def headline_entries(secs) -> list[dict]:
    """The runs with a headline table, in the page's order."""
    return [e for _, _, _, es in secs for e in es if e["paper"]]


INTRO = ("Built by `jackson-report` from the result folders under this folder: it trains nothing, it reads the "
         "tables the runs wrote. Each caption says what the figure measures, on which data, with how many seeds "
         "and the command that produced it; where the paper gives a number it stands beside the measured one "
         "with their difference (exponents, accuracies) or ratio (errors). The claims ledger first gives each "
         "claim its verdict. Sections without results say which command produces them. For a paper: the ledger "
         "as LaTeX longtables in `claims.tex` (compact, for a portrait page) and `claims-full.tex` (landscape), the "
         "headline tables of the runs it reads in `tables.tex` (the others in `tables-appendix.tex`; booktabs, "
         "portrait; pdfLaTeX "
         "takes them as they are) and, as one long tidy table, in `tables.csv` (columns: `COLUMNS.md`), all beside "
         "this page.")


def readable_image(path: Path) -> bool:
    """The file is a regular file (checked by a stat before it is opened: a FIFO would block), readable, and
    starts with the signature of its type (a corrupt or truncated figure is shown as missing, never embedded)."""
    mime = IMAGE_TYPES.get(Path(path).suffix.lower())
    if mime is None or regular(path):
        return False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)     # never blocks, even if it became a FIFO since the stat
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            head = fh.read(16) if stat.S_ISREG(st.st_mode) else b""
    except (OSError, ValueError):
        return False
    return any(head.startswith(m) for m in MAGIC[mime]) and st.st_size > len(head)


def missing_figures(root: Path, e: dict) -> list[str]:
    return [f["file"] for f in e["figures"] if not readable_image(root / f["file"])]


def refused_text(e: dict, r: dict) -> str:
    """A refused figure or summary of run `e` as the report's line names it: the folder, the path as
    report.json wrote it (nothing of the file it leads to), why."""
    return f"{e['folder']}/: {r['file']!r} refused: {r['why']}"


def with_refused(e: dict) -> list[tuple[str, dict]]:
    """A run's figures in report.json's order, each ("figure", f) or ("refused", r): what the page shows in
    place of a refused one is the refusal."""
    out, refused = [], [r for r in e.get("refused", []) if r["kind"] == "figure"]
    for i, f in enumerate(e["figures"]):
        out += [("refused", r) for r in refused if r["at"] == i] + [("figure", f)]
    return out + [("refused", r) for r in refused if r["at"] >= len(e["figures"])]


LEDGER_INTRO = ("Every quantitative claim of Jiang & Li (Jackson-type rates for the Transformer) and Yang et al. "
                "(efficient Transformers on CoT dynamic programming), the run folder that tests it and a verdict "
                "computed from that folder's files by the rule of its kind (the rules and their thresholds follow "
                "the table; code: each experiment's `rules.py`), never typed. Quick runs, superseded and unfinished folders "
                "never feed a verdict. The same rows, one per claim: `claims.csv` beside this page.")
BRACKETS_TEXT = ("Brackets after a key number say what they are: " + "; ".join(f"*{k}*: {v}" for k, v in BRACKETS.items())
                 + ". claims.csv gives each row's interval in full (its `interval` column).")
LEDGER_HEAD = ("id", "paper, where", "claim", "paper's value", "measured", "key number [bracket] kind", "seeds",
               "folder", "verdict", "rule", "other folders")
SEEDS_CELL, VERDICT_CELL = LEDGER_HEAD.index("seeds"), LEDGER_HEAD.index("verdict")


def ledger_cells(r: claims.Row) -> list[str]:
    """One ledger row as plain-text cells (`code` spans kept for the renderers)."""
    c = r.claim
    return [c.id, f"{c.paper}, {c.where}", c.text, c.paper_value, r.measured, key_number(r),
            "" if r.n_seeds is None else str(r.n_seeds), f"`{r.folder}/`" if r.folder else "none",
            r.verdict, f"`{c.kind}`", "; ".join(f"`{o.split(': ', 1)[0]}/`: {o.split(': ', 1)[1]}" for o in r.others)]


def group_counts(rows: list[claims.Row]) -> str:
    """"N claims: a reproduced, b partly, ..." over the statuses the rows hold (claims.counts; they sum to N)."""
    n = claims.counts(rows)
    return f"{len(rows)} claim{'s' if len(rows) != 1 else ''}: " + ", ".join(f"{n[v]} {v}" for v in STATUSES if n[v])


def unchecked_text(rows: list[claims.Row]) -> str:
    """How many of the rows were judged on fits not checked by training on (claims.unchecked); "" when none."""
    k = claims.unchecked(rows)
    return f"{k} of them judged on {NOT_CHECKED_NOTE}" if k else ""


def counts_text(rows: list[claims.Row]) -> str:
    """The headline: each paper's own claims counted by verdict, then the variants this lab added (claims.groups),
    one clause each."""
    parts = [f"{title}: {group_counts(rs)}" for title, rs in claims.groups(rows)]
    return "; ".join(parts) + (f" ({len(rows)} in all)." if len(parts) > 1 else ".")


def rules_of(rows: list[claims.Row]) -> list[tuple[str, str, list[str]]]:
    """(kind, its rule's text, the claim ids it judges), in the order the ledger first uses them."""
    kinds: dict[str, list[str]] = {}
    for r in rows:
        kinds.setdefault(r.claim.kind, []).append(r.claim.id)
    return [(k, rules()[k].rule, ids) for k, ids in kinds.items()]


SAFE_LINK = re.compile(r"(#|https?:|mailto:)", re.I)    # links that work wherever the page is opened
