"""jackson-report: one lab report, reports/index.md and reports/index.html, from the result folders under reports/.

It trains nothing; it reads what runs left behind, through one declared interface: every result
folder holds `report.json` =
        {"title", "section", "data", "command", "seeds",
         "figures": [{"file", "caption"}],            file relative to that folder
         "paper": [{"quantity", "paper", "measured"[, "compare"]}],  paper may be null or a string when not a
                                                       number; compare: "difference" or "ratio" (COMPARE)
         "text"}                                       markdown, a paragraph
which each experiment writes at the end of its run (jackson.rate_sweep.results.write_report_json,
rnn_compare.report, jackson.app_b.results, vit_probe (common._report_json), cot_dp.sweep).  A folder with a
SUPERSEDED.md (a later run replaced it) is marked so in its title and text.  Beside each run's command
stands where it was made (`provenance`: its environment.json, else the provenance.json derived from git
history for an older folder, else "not recorded"; and whether it was a quick run), read from files only.

Sections come in the order of SECTIONS, then any other section a report.json names.  A section with
no results says which command produces them.  Every caption says what the figure measures, on which
data, with how many seeds and which command (the run's data, seeds and command are appended to a hook
caption that does not mention them); where the paper reports a number it stands beside the measured one
with their difference (exponents, accuracies, and any quantity whose row says "compare": "difference", e.g.
attention weights in [0, 1]) or ratio (errors).  Each run's command is shown as it
reruns from a clone (jackson.runfolder.rerunnable: --out where the folder sits, shared data where the
README puts it, no machine-local cache, no Dask scheduler address), with the command as run beside it where they differ.  index.md refers to the images and each
run's summary.md by relative path; index.html embeds the images (base64) and the summaries and notes
(rendered, in collapsed <details> blocks), so it is one file that opens offline and carries no link out
of itself.  The HTML is checked with a parser (balanced tags, every image decodes, every link stays in
the page) and, where a Chromium is installed, loaded headless.

The page opens with the claims ledger (jackson.lab_report.claims): every quantitative claim of the two papers with
the folder that tests it and a verdict computed by a stated rule; the same rows go to claims.csv and,
as a LaTeX longtable, to claims.tex.  tables.tex holds every run's headline table (paper beside measured)
in LaTeX, tables.csv the same cells as one long tidy table (one row per cell, `headline_rows` feeds both);
the two .tex files are ASCII (TEX_CHARS turns the lab's Unicode into LaTeX) and compile with pdfLaTeX.
"""
from __future__ import annotations

import base64
import csv
import html
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from ..config import UsageError, cli_run, need
from ..runfolder import rerunnable, write_atomic
from . import claims
from .claim_files import read_claims

# section key -> (heading, the command that produces its results)
SECTIONS = {
    "jackson": ("Jackson-type rate: error against m_h (Theorem 4.1, Fig. 1)",
                "jackson-sweep --alpha 0.55,1.0,1.5 --rank 2,6,inf --out reports/jackson/fig1"),
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


@dataclass(frozen=True)
class ReportConfig:
    root: str = "reports"   # folder searched for result folders; index.md and index.html are written into it
    claims: str = ""        # a claims file (TOML, docs/claims.md) judged instead of the lab's two papers' claims


# ---- finding result folders ---------------------------------------------------------------------

def _read_json(p: Path) -> dict:
    try:
        return json.loads(p.read_text())
    except (OSError, json.JSONDecodeError) as e:
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


def _seeds_text(seeds) -> str:
    if isinstance(seeds, (list, tuple)):
        return f"{len(seeds)} ({', '.join(map(str, seeds))})"
    return str(seeds)


def provenance(folder: Path) -> str:
    """Where and with what the run was made: from its environment.json (jackson/runfolder.py), else from the
    provenance.json derived once from git history for a folder written before environment.json existed
    (jackson/lab_report/provenance.py: what the run did not record is said to be not recorded), else that
    nothing was recorded; then whether it was a quick run.  Read from the folder's files only (never git)."""
    quick = f"quick run: {'yes' if is_quick(folder) else 'no'}"
    env, derived = folder / "environment.json", folder / "provenance.json"
    try:
        d = json.loads(env.read_text()) if env.is_file() else None
        p = json.loads(derived.read_text()) if d is None and derived.is_file() else None
    except (OSError, ValueError):
        return f"{'environment.json' if env.is_file() else 'provenance.json'} unreadable, {quick}"
    if isinstance(d, dict):
        pk = d.get("packages") or {}
        commit = str(d.get("commit") or "")
        parts = [f"commit {commit[:12]}{' (uncommitted changes)' if commit.endswith('+dirty') else ''}" if commit
                 else "commit not recorded",
                 f"started {str(d['started_utc'])[:10]}" if d.get("started_utc") else "start date not recorded",
                 f"torch {pk['torch']}" if pk.get("torch") else "torch version not recorded",
                 f"{d['torch_threads']} torch thread(s)" if d.get("torch_threads") else "torch threads not recorded",
                 f"device {d['device']}" if d.get("device") else "device not recorded"]
        earlier = [e for e in d.get("earlier") or [] if isinstance(e, dict)]
        if earlier:   # a resumed or rebuilt run: say when the first invocation started, and on what commit
            first, c0 = earlier[0], str(earlier[0].get("commit") or "")
            parts.append(f"after {len(earlier)} earlier invocation(s), the first started "
                         f"{str(first.get('started_utc') or 'on a date not recorded')[:10]} at "
                         + (f"commit {c0[:12]}" if c0 else "a commit not recorded"))
        return ", ".join(parts + [quick])   # a field the run left empty is said to be unrecorded
    if isinstance(p, dict):
        try:
            return _derived_text(p, quick)
        except (KeyError, TypeError):
            return f"provenance.json unreadable, {quick}"
    return f"not recorded (neither environment.json nor provenance.json), {quick}"


def _derived_text(p: dict, quick: str) -> str:
    """The report's line for a provenance.json (jackson/lab_report/provenance.py)."""
    def when(c: dict) -> str:
        return f"{c['commit'][:12]} on {str(c['date'])[:10]}"

    def stated(k: str, what: str) -> str:
        v = p.get(k) if isinstance(p.get(k), dict) else {}
        return f"{what} {v['value']} ({v['from']})" if v.get("value") else f"{what} not recorded"
    added, tables = p["results_added"], p.get("tables_changed")
    parts = [f"results committed in {when(added)}"
             + (f", tables last changed in {when(tables)}" if tables and tables["commit"] != added["commit"] else "")
             + " (git history, provenance.json; the run itself recorded no environment.json)",
             "code commit and package versions not recorded", stated("torch_threads", "torch threads"),
             stated("device", "device"), quick]
    return ", ".join(parts)


def is_quick(folder: Path) -> bool:
    cfg = folder / "config.json"
    try:
        quick = bool(json.loads(cfg.read_text()).get("quick")) if cfg.is_file() else False
    except (OSError, ValueError, AttributeError):
        quick = False
    cmd = folder / "command.txt"
    return quick or (cmd.is_file() and "--quick" in cmd.read_text().split())


def from_hook(root: Path, folder: Path) -> dict:
    r = _read_json(folder / "report.json")
    need(isinstance(r, dict) and "title" in r, f"{folder / 'report.json'}: needs at least a 'title'")
    for p in r.get("paper") or []:
        need(p.get("compare", "ratio") in COMPARE,
             f"{folder / 'report.json'}: paper row {p.get('quantity')!r}: compare must be one of {COMPARE}, "
             f"got {p.get('compare')!r}")
    e = {"folder": _rel(root, folder), "title": r["title"], "section": r.get("section") or "other",
         "data": r.get("data", ""), "command": r.get("command", ""), "seeds": r.get("seeds", ""),
         "paper": list(r.get("paper") or []), "text": r.get("text", ""), "figures": []}
    ran = e["command"]                       # as recorded; shown as the command that reruns it from a clone
    e["command"] = rerunnable(ran, f"{root.name}/{e['folder']}") if ran else ran
    e["ran"] = ran if ran != e["command"] else ""
    e["text"] = e["text"].replace(ran, e["command"]) if ran else e["text"]
    for f in r.get("figures") or []:
        cap = f.get("caption", "").replace(ran, e["command"]) if ran else f.get("caption", "")
        extra = []
        if e["data"] and e["data"] not in cap:
            extra.append(f"Data: {e['data']}.")
        if e["seeds"] != "" and "seed" not in cap.lower():
            extra.append(f"Seeds: {_seeds_text(e['seeds'])}.")
        if e["command"] and e["command"] not in cap:
            extra.append(f"Command: `{e['command']}`.")
        e["figures"].append({"file": _rel(root, folder / f["file"]), "caption": " ".join([cap, *extra]).strip()})
    e["links"] = [_rel(root, folder / n) for n in ("summary.md",) if (folder / n).exists()]
    e["made"] = provenance(folder)
    if is_quick(folder):                     # a smoke run: never evidence (the claims ledger leaves it out)
        e["title"] = "[quick run] " + e["title"]
    sup = folder / "SUPERSEDED.md"          # a later run replaced this one: say so in its title and text
    if sup.exists():
        e["title"] = "[superseded] " + e["title"]
        e["text"] = ("SUPERSEDED: " + " ".join(sup.read_text().split()) + " " + e["text"]).strip()
    return e


def other_documents(root: Path) -> list[str]:
    """Notes beside the runs: markdown files at the top of root and of its section folders."""
    docs = [p for p in sorted(root.glob("*.md")) if p.name not in ("index.md", "README.md")]
    docs += [p for p in sorted(root.glob("*/*.md"))]
    return [_rel(root, p) for p in docs if not (p.parent / "summary.json").exists()]


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
         "as a LaTeX longtable in `claims.tex`, every run's headline table in `tables.tex` (booktabs; pdfLaTeX "
         "takes both as they are) and, as one long tidy table, in `tables.csv` (columns: `COLUMNS.md`), all beside "
         "this page.")


def readable_image(path: Path) -> bool:
    """The file exists, is readable and starts with the signature of its type (a corrupt or truncated
    figure is shown as missing, never embedded)."""
    mime = IMAGE_TYPES.get(path.suffix.lower())
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return False
    return mime is not None and any(head.startswith(m) for m in MAGIC[mime]) and path.stat().st_size > len(head)


def _missing(root: Path, e: dict) -> list[str]:
    return [f["file"] for f in e["figures"] if not readable_image(root / f["file"])]


LEDGER_INTRO = ("Every quantitative claim of Jiang & Li (Jackson-type rates for the Transformer) and Yang et al. "
                "(efficient Transformers on CoT dynamic programming), the run folder that tests it and a verdict "
                "computed from that folder's files by the rule of its kind (the rules and their thresholds follow "
                "the table; code: `jackson/lab_report/claims.py`), never typed. Quick runs, superseded and unfinished folders "
                "never feed a verdict. The same rows, one per claim: `claims.csv` beside this page.")
LEDGER_HEAD = ("id", "paper, where", "claim", "paper's value", "measured", "seeds", "folder", "verdict", "rule",
               "other folders")


def _ledger_cells(r: claims.Row) -> list[str]:
    """One ledger row as plain-text cells (`code` spans kept for the renderers)."""
    c = r.claim
    return [c.id, f"{c.paper}, {c.where}", c.text, c.paper_value, r.measured,
            "" if r.n_seeds is None else str(r.n_seeds), f"`{r.folder}/`" if r.folder else "none",
            r.verdict, f"`{c.kind}`", "; ".join(f"`{o.split(': ', 1)[0]}/`: {o.split(': ', 1)[1]}" for o in r.others)]


def _counts_text(rows: list[claims.Row]) -> str:
    n = claims.counts(rows)
    return f"{len(rows)} claims: " + ", ".join(f"{n[v]} {v}" for v in claims.VERDICTS) + "."


def _rules(rows: list[claims.Row]) -> list[tuple[str, str, list[str]]]:
    """(kind, its rule's text, the claim ids it judges), in the order the ledger first uses them."""
    kinds: dict[str, list[str]] = {}
    for r in rows:
        kinds.setdefault(r.claim.kind, []).append(r.claim.id)
    return [(k, claims.KINDS[k].rule, ids) for k, ids in kinds.items()]


def ledger_markdown(rows: list[claims.Row]) -> list[str]:
    L = ['<a id="claims"></a>', "", "## Claims ledger", "", LEDGER_INTRO, "", "Verdicts: " + _counts_text(rows), "",
         "| " + " | ".join(LEDGER_HEAD) + " |", "|" + "---|" * 5 + "---:|" + "---|" * 4]
    for r in rows:
        cells = _ledger_cells(r)
        cells[7] = f"**{cells[7]}**"
        L.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    L += ["", "Rules (one function per kind in `jackson/lab_report/claims.py`, its text below). " + claims.PREFERENCE, ""]
    L += [f"- `{k}` ({', '.join(ids)}): {text}" for k, text, ids in _rules(rows)]
    return L + [""]


def render_markdown(root: Path, secs, docs: list[str], rows: list[claims.Row] | None = None) -> str:
    L = ["# jackson-lab report", "", INTRO, "", "Also as one offline page: [index.html](index.html).", ""]
    L += ledger_markdown(rows) if rows else []
    L += ["Contents:", ""]
    for i, (k, heading, _, es) in enumerate(secs, 1):
        L.append(f"{i}. [{heading}](#{k.replace('_', '-')}){'' if es else ' (no results yet)'}")
    L.append("")
    for i, (k, heading, how, es) in enumerate(secs, 1):
        L += [f'<a id="{k.replace("_", "-")}"></a>', "", f"## {i}. {heading}", ""]
        if not es:
            L += [f"No results yet. Produce them with `{how}`." if how else "No results yet.", ""]
            continue
        for j, e in enumerate(es, 1):
            L += [f"### {i}.{j} {e['title']}", "",
                  f"Folder: `{e['folder']}/` · command: `{e['command']}`"
                  + (f" (as run: `{e['ran']}`)" if e.get("ran") else "") + f" · seeds: {_seeds_text(e['seeds'])}"
                  + (f" · made: {e['made']}" if e.get("made") else ""), "",
                  f"Data: {e['data']}", ""]
            if e["text"]:
                L += [e["text"], ""]
            if e["paper"]:
                L += ["| " + " | ".join(HEADLINE) + " |", "|---|---:|---:|---:|"]
                L += ["| " + " | ".join(row.values()) + " |" for row in headline_rows(e)]
                L.append("")
            n = 0
            for f in e["figures"]:
                if not readable_image(root / f["file"]):
                    L += [f"*(figure missing or unreadable: `{f['file']}`; rerun the command above)*", ""]
                    continue
                n += 1
                L += [f"![Figure {i}.{j}.{n}]({f['file']})", "", f"*Figure {i}.{j}.{n}.* {f['caption']}", ""]
            if e.get("links"):
                L += ["Details: " + ", ".join(f"[{p}]({p})" for p in e["links"]), ""]
    if docs:
        L += ["## Notes beside the runs", ""] + [f"- [{d}]({d})" for d in docs] + [""]
    return "\n".join(L)


def _inline(text: str) -> str:
    """Escape text for HTML, then `code` spans -> <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text, quote=False))


def _data_uri(path: Path) -> str:
    mime = IMAGE_TYPES.get(path.suffix.lower(), "application/octet-stream")
    return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


CSS = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;line-height:1.45;color:#222}"
       "figure{margin:1.2em 0}img{max-width:100%;border:1px solid #ddd}figcaption{font-size:.9em;color:#444}"
       "table{border-collapse:collapse;margin:.8em 0;font-size:.9em}td,th{border:1px solid #ccc;padding:.25em .5em}"
       "td.n{text-align:right}code{background:#f4f4f4;padding:0 .2em}.meta{font-size:.9em;color:#555}"
       "table.ledger{font-size:.8em}td.v{white-space:nowrap}td.reproduced{background:#e3f4e1}"
       "td.partly{background:#fdf3d8}td.not-reproduced{background:#f9dfdc}td.inconclusive{background:#e4ecf7}td.untested,td.not-applicable{background:#eee}"
       "details{margin:.6em 0}summary{cursor:pointer;color:#1a4c8a}div.doc{border-left:3px solid #ddd;"
       "padding:0 1em;margin:.4em 0;font-size:.92em}div.doc table{font-size:.85em}div.doc h1{font-size:1.3em}"
       "div.doc h2{font-size:1.15em}div.doc h3{font-size:1em}")


def ledger_html(rows: list[claims.Row]) -> list[str]:
    H = ['<section id="claims">', "<h2>Claims ledger</h2>", f"<p>{_inline(LEDGER_INTRO)}</p>",
         f"<p>Verdicts: {_inline(_counts_text(rows))}</p>", '<table class="ledger">',
         "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in LEDGER_HEAD) + "</tr>"]
    for r in rows:
        cells = [_inline(x) for x in _ledger_cells(r)]
        cells[5] = f'<td class="n">{cells[5]}</td>'
        cells[7] = f'<td class="v {r.verdict.replace(" ", "-")}"><strong>{cells[7]}</strong></td>'
        H.append("<tr>" + "".join(x if x.startswith("<td") else f"<td>{x}</td>" for x in cells) + "</tr>")
    H += ["</table>", f"<p>Rules (one function per kind in <code>jackson/lab_report/claims.py</code>, its text below). "
          f"{_inline(claims.PREFERENCE)}</p>", "<ul>"]
    H += [f"<li><code>{html.escape(k)}</code> ({html.escape(', '.join(ids))}): {_inline(text)}</li>"
          for k, text, ids in _rules(rows)]
    return H + ["</ul>", "</section>"]


def _doc_id(rel: str) -> str:
    return "doc-" + re.sub(r"[^a-z0-9]+", "-", rel.lower()).strip("-")


SAFE_LINK = re.compile(r"(#|https?:|mailto:)", re.I)    # links that work wherever the page is opened


def doc_html(root: Path, rel: str, inlined: set[str]) -> str:
    """A markdown file beside the page (a run's summary.md, a note) as HTML for the page itself, so the
    page needs nothing beside it: headings get ids and "#x" links point at them under the document's own
    prefix; a link to another document of the page points at its block; a link to any other file
    becomes that file's path as text (it sits next to index.md, not inside the page); images are embedded.
    Markdown is rendered by Python-Markdown (tables, fenced code, heading ids)."""
    import markdown
    pid, here = _doc_id(rel), os.path.dirname(rel)
    try:
        text = (root / rel).read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        return f"<p><em>(cannot read <code>{html.escape(rel)}</code>: {html.escape(e.strerror or str(e))})</em></p>"
    md = markdown.Markdown(extensions=["tables", "fenced_code", "toc"], output_format="html")
    md.preprocessors.deregister("html_block")      # raw HTML in a note (`<seed>` placeholders) stays text
    md.inlinePatterns.deregister("html")
    body = md.convert(text)
    body = re.sub(r'\bid="([^"]*)"', lambda m: f'id="{pid}--{m.group(1)}"', body)

    def link(m: re.Match) -> str:
        href, inner = html.unescape(m.group(1)), m.group(2)
        if href.startswith("#"):
            return f'<a href="#{pid}--{html.escape(href[1:])}">{inner}</a>'
        if SAFE_LINK.match(href):
            return m.group(0)
        target = os.path.normpath(os.path.join(here, href.split("#", 1)[0])).replace(os.sep, "/")
        if target in inlined:
            return f'<a href="#{_doc_id(target)}">{inner}</a>'
        return f'{inner} (<code>{html.escape(target)}</code> beside this page)'

    def image(m: re.Match) -> str:
        src = html.unescape(m.group(1))
        path = root / os.path.normpath(os.path.join(here, src))
        if readable_image(path):
            return f'<img src="{_data_uri(path)}" alt="{html.escape(src)}">'
        return f"<em>(image <code>{html.escape(src)}</code> missing)</em>"

    body = re.sub(r'<a href="([^"]*)"[^>]*>(.*?)</a>', link, body, flags=re.S)
    body = re.sub(r'<img [^>]*?src="([^"]*)"[^>]*>', image, body)
    return body


def doc_details(root: Path, rel: str, inlined: set[str]) -> str:
    """A collapsed block holding one document of the page (see doc_html)."""
    return (f'<details id="{_doc_id(rel)}"><summary>{html.escape(rel)}</summary>'
            f'<div class="doc">{doc_html(root, rel, inlined)}</div></details>')


def render_html(root: Path, secs, docs: list[str], rows: list[claims.Row] | None = None) -> str:
    inlined = set(docs) | {p for _, _, _, es in secs for e in es for p in e.get("links", [])}
    H = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
         "<title>jackson-lab report</title>", f"<style>{CSS}</style>", "</head>", "<body>",
         "<h1>jackson-lab report</h1>", f"<p>{_inline(INTRO)}</p>"]
    H += ledger_html(rows) if rows else []
    H.append("<ol>")
    for i, (k, heading, _, es) in enumerate(secs, 1):
        H.append(f'<li><a href="#{k.replace("_", "-")}">{_inline(heading)}</a>{"" if es else " (no results yet)"}</li>')
    H.append("</ol>")
    for i, (k, heading, how, es) in enumerate(secs, 1):
        H.append(f'<section id="{k.replace("_", "-")}">')
        H.append(f"<h2>{i}. {_inline(heading)}</h2>")
        if not es:
            H.append(f"<p>No results yet. Produce them with <code>{html.escape(how)}</code>.</p>" if how
                     else "<p>No results yet.</p>")
        for j, e in enumerate(es, 1):
            H += [f"<h3>{i}.{j} {_inline(e['title'])}</h3>",
                  f'<p class="meta">Folder: <code>{html.escape(e["folder"])}/</code> · command: '
                  f'<code>{html.escape(e["command"])}</code>'
                  + (f' (as run: <code>{html.escape(e["ran"])}</code>)' if e.get("ran") else "")
                  + f' · seeds: {html.escape(_seeds_text(e["seeds"]))}'
                  + (f' · made: {html.escape(e["made"])}' if e.get("made") else "") + "</p>",
                  f"<p>Data: {_inline(e['data'])}</p>"]
            if e["text"]:
                H.append(f"<p>{_inline(e['text'])}</p>")
            if e["paper"]:
                H.append("<table><tr>" + "".join(f"<th>{h}</th>" for h in HEADLINE) + "</tr>")
                for row in headline_rows(e):
                    q, paper, measured, vs = row.values()
                    H.append(f"<tr><td>{_inline(q)}</td><td class=\"n\">{html.escape(paper)}</td>"
                             f"<td class=\"n\">{html.escape(measured)}</td><td class=\"n\">{vs}</td></tr>")
                H.append("</table>")
            n = 0
            for f in e["figures"]:
                path = root / f["file"]
                if not readable_image(path):
                    H.append(f"<p><em>(figure missing or unreadable: <code>{html.escape(f['file'])}</code>)</em></p>")
                    continue
                n += 1
                H += ["<figure>", f'<img src="{_data_uri(path)}" alt="Figure {i}.{j}.{n}">',
                      f"<figcaption><strong>Figure {i}.{j}.{n}.</strong> {_inline(f['caption'])}</figcaption>",
                      "</figure>"]
            H += [doc_details(root, p, inlined) for p in e.get("links", [])]
        H.append("</section>")
    if docs:
        H.append('<h2 id="notes">Notes beside the runs</h2>')
        H += [doc_details(root, d, inlined) for d in docs]
    H += ["</body>", "</html>", ""]
    return "\n".join(H)


# ---- checking the page ------------------------------------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Checker(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.images = 0

    def handle_starttag(self, tag, attrs):
        href = dict(attrs).get("href")
        if tag == "a" and href is not None and not SAFE_LINK.match(href):
            self.problems.append(f"line {self.getpos()[0]}: <a href=\"{href[:60]}\"> breaks when the page travels alone")
        if tag == "img":
            self.images += 1
            self._check_img(dict(attrs).get("src") or "")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        if tag == "img":
            self.images += 1
            self._check_img(dict(attrs).get("src") or "")

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"line {self.getpos()[0]}: </{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}>")
            if tag in self.stack:
                while self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()

    def _check_img(self, src: str):
        m = re.fullmatch(r"data:(image/[\w.+-]+);base64,([A-Za-z0-9+/=]+)", src)
        if not m:
            self.problems.append(f"line {self.getpos()[0]}: <img> is not an inline base64 image")
            return
        try:
            data = base64.b64decode(m.group(2), validate=True)
        except ValueError:
            self.problems.append(f"line {self.getpos()[0]}: <img> base64 does not decode")
            return
        if not any(data.startswith(x) for x in MAGIC.get(m.group(1), (b"",))) or len(data) < 16:
            self.problems.append(f"line {self.getpos()[0]}: <img> bytes are not a {m.group(1)}")


def check_html(text: str) -> tuple[list[str], int]:
    """(problems, number of images): balanced tags, every <img> an inline image whose bytes decode."""
    c = _Checker()
    c.feed(text)
    c.close()
    c.problems += [f"<{t}> never closed" for t in c.stack]
    return c.problems, c.images


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


# What the browser check injects first in <head> of a copy of the page: console.error, uncaught exceptions
# and resources that fail to load are recorded from the start; at `load` the script writes, as JSON into
# <pre id="__browser_check__">, the images that did not decode (naturalWidth 0), the "#id" links with no
# element of that id (or <a name>), and the errors.  `--dump-dom` then prints the DOM with it.
PROBE_ID = "__browser_check__"
PROBE = """<script>(function () {
  var errors = [];
  var error = console.error;
  console.error = function () {
    errors.push("console.error: " + Array.prototype.map.call(arguments, String).join(" "));
    return error.apply(console, arguments);
  };
  window.addEventListener("error", function (ev) {
    var t = ev.target;
    if (t && t !== window && t.tagName) {
      var src = String(t.src || t.href || "");
      errors.push("failed to load <" + t.tagName.toLowerCase() + "> " + (src.slice(0, 5) === "data:" ? src.slice(0, 40) : src));
    } else {
      errors.push("uncaught: " + ev.message);
    }
  }, true);
  window.addEventListener("unhandledrejection", function (ev) { errors.push("unhandled rejection: " + ev.reason); });
  window.addEventListener("load", function () {
    var imgs = Array.prototype.slice.call(document.images);
    var broken = [];
    imgs.forEach(function (i, k) {
      if (!i.complete || !(i.naturalWidth > 0)) {
        broken.push("image #" + (k + 1) + " '" + (i.getAttribute("alt") || "") + "' ("
                    + String(i.getAttribute("src") || "").slice(0, 40) + ")");
      }
    });
    var links = Array.prototype.slice.call(document.querySelectorAll("a[href^='#']"));
    var dangling = links.map(function (a) { return a.getAttribute("href"); }).filter(function (h) {
      var id = h.slice(1);
      try { id = decodeURIComponent(id); } catch (e) {}
      return id !== "" && !document.getElementById(id) && document.getElementsByName(id).length === 0;
    });
    var outside = Array.prototype.slice.call(document.querySelectorAll("a[href]")).map(function (a) {
      return a.getAttribute("href");
    }).filter(function (h) { return !/^(#|https?:|mailto:)/i.test(h); });
    var out = document.createElement("pre");
    out.id = "__browser_check__";
    out.textContent = JSON.stringify({images: imgs.length, broken: broken, links: links.length,
                                      dangling: dangling, outside: outside, errors: errors});
    document.body.appendChild(out);
  });
})();</script>"""


def _probed(page: str, base: str) -> str:
    """The page with <base> (relative URLs resolve as beside the original) and PROBE first in <head>."""
    inject = f'<base href="{html.escape(base)}">' + PROBE
    m = re.search(r"<head\b[^>]*>", page, re.I)
    if m:
        return page[:m.end()] + inject + page[m.end():]
    m = re.search(r"<html\b[^>]*>", page, re.I)
    at = m.end() if m else 0
    return page[:at] + "<head>" + inject + "</head>" + page[at:]


def browser_report(path: Path, exe: str, timeout: int = 120) -> dict:
    """Load a copy of the page, with PROBE injected, in headless Chromium (`--dump-dom`, the command line
    only) and return what PROBE found: images, broken, links, dangling, errors.  Raises RuntimeError
    when Chromium fails or the page never reached `load`."""
    import tempfile
    path = Path(path).resolve()
    with tempfile.TemporaryDirectory(prefix="browser-check-") as tmp:
        copy = Path(tmp) / path.name
        copy.write_text(_probed(path.read_text(encoding="utf-8"), path.parent.as_uri() + "/"), encoding="utf-8")
        args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
                f"--user-data-dir={tmp}/profile", "--virtual-time-budget=10000", "--dump-dom", copy.as_uri()]
        try:
            p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise RuntimeError(f"{exe}: {e}") from None
    m = re.search(rf'<pre id="{PROBE_ID}">(.*?)</pre>', p.stdout, re.S)
    if p.returncode != 0 or not m:
        raise RuntimeError(f"{path.name} did not finish loading in Chromium (exit {p.returncode}): "
                           + p.stderr.strip()[-300:])
    return json.loads(html.unescape(m.group(1)))


def browser_check(path: Path, exe: str, timeout: int = 120) -> str | None:
    """Load the page in headless Chromium: None if every <img> decoded, every "#id" link has its element
    and nothing was logged as an error; else one line saying what went wrong."""
    try:
        r = browser_report(path, exe, timeout)
    except RuntimeError as e:
        return str(e)
    problems = ([f"{len(r['broken'])} of {r['images']} images did not decode: " + "; ".join(r["broken"][:3])]
                if r["broken"] else [])
    problems += [f"{len(r['dangling'])} of {r['links']} internal links lead nowhere: " + ", ".join(r["dangling"][:5])] \
        if r["dangling"] else []
    problems += [f"{len(r['outside'])} links lead out of the page (they break when it travels alone): "
                 + ", ".join(r["outside"][:5])] if r.get("outside") else []
    problems += [f"{len(r['errors'])} console errors: " + "; ".join(r["errors"][:3])] if r["errors"] else []
    return " | ".join(problems) or None


# ---- LaTeX -----------------------------------------------------------------------------------------

# Characters of the lab's text that pdfLaTeX does not take as they are, and their LaTeX (applied after
# pandas has escaped the LaTeX specials, so the $...$ here are not escaped again).
TEX_CHARS = {"α": r"$\alpha$", "β": r"$\beta$", "γ": r"$\gamma$", "ρ": r"$\rho$", "σ": r"$\sigma$",
             "τ": r"$\tau$", "φ": r"$\phi$", "ψ": r"$\psi$", "θ": r"$\theta$", "ε": r"$\varepsilon$",
             "Σ": r"$\Sigma$", "≤": r"$\le$", "≥": r"$\ge$", "≈": r"$\approx$", "≲": r"$\lesssim$",
             "×": r"$\times$", "→": r"$\to$", "∘": r"$\circ$", "−": "-", "±": r"$\pm$", "∞": r"$\infty$",
             "—": "---", "–": "--", "·": r"$\cdot$", "…": r"\ldots{}", "’": "'", "‘": "`", "“": "``", "”": "''",
             "ρ̂": r"$\hat\rho$", "√": r"$\surd$", "½": "1/2", "²": r"$^2$", "≠": r"$\ne$", "∑": r"$\sum$",
             ">=": r"$\ge$", "<=": r"$\le$", "!=": r"$\ne$", "<": "$<$", ">": "$>$", "|": "$|$"}   # < > | are not text in OT1
TEX_PREAMBLE = ("% Needs \\usepackage{booktabs,array} (and longtable for the ledger); pdfLaTeX is enough:\n"
                "% every non-ASCII character is written as LaTeX.\n")
RAGGED = r">{\raggedright\arraybackslash}"   # a p{} column set ragged right (array package)


def _tex_text(text: str) -> str:
    """Plain text (with `code` spans) as LaTeX: the specials escaped (the escaper pandas uses for tables),
    code spans in \\texttt, the lab's Unicode as LaTeX (TEX_CHARS); anything else non-ASCII is dropped
    with a marker so the file always compiles."""
    import pandas as pd
    one = pd.DataFrame({"x": [text.replace("`", "\x00")]}).to_latex(index=False, header=False, escape=True)
    body = one.split("\\midrule\n", 1)[-1] if "\\midrule" in one else one.split("\\toprule\n", 1)[1]
    body = body.rsplit("\\\\\n\\bottomrule", 1)[0].strip()
    return _tex_chars(re.sub("\x00(.*?)\x00", r"\\texttt{\1}", body))


def _tex_chars(tex: str) -> str:
    for u in sorted(TEX_CHARS, key=len, reverse=True):
        tex = tex.replace(u, TEX_CHARS[u])
    return "".join(ch if ord(ch) < 128 else "?" for ch in tex)


def _tex_table(df, caption: str, label: str, column_format: str, longtable: bool = False) -> str:
    """A booktabs table (pandas' to_latex) whose cells and caption went through _tex_text (code spans in
    cells are shown plain)."""
    cells = df.map(lambda v: _tex_text(str(v).replace("`", "")))
    body = cells.to_latex(index=False, escape=False, column_format=column_format, longtable=longtable,
                          caption="\x01", label=label)
    return body.replace("\x01", _tex_text(caption))


def claims_tex(rows: list[claims.Row]) -> str:
    """The claims ledger as one LaTeX longtable (booktabs): what a paper would cite."""
    import pandas as pd
    df = pd.DataFrame([{"id": r.claim.id, "paper, where": f"{r.claim.paper}, {r.claim.where}",
                        "claim": r.claim.text, "paper's value": r.claim.paper_value, "measured": r.measured,
                        "seeds": "" if r.n_seeds is None else str(r.n_seeds),
                        "folder": r.folder or "none", "verdict": r.verdict} for r in rows])
    return TEX_PREAMBLE + _tex_table(
        df, "Claims ledger of jackson-lab: " + _counts_text(rows) + " Rules: jackson/lab_report/claims.py.",
        "tab:claims", "".join(RAGGED + f"p{{{w}cm}}" if w else "r" for w in (2.2, 1.8, 3.4, 1.8, 4.6, 0, 2.2, 1.6)),
        longtable=True)


def tables_tex(secs) -> str:
    """Every run's headline table (the paper's numbers beside the measured ones, as in the page), one
    LaTeX table each, labelled tab:<folder>."""
    import pandas as pd
    out = [TEX_PREAMBLE]
    for e in headline_entries(secs):
        df = pd.DataFrame(headline_rows(e), columns=list(HEADLINE))
        label = "tab:" + re.sub(r"[^A-Za-z0-9]+", "-", e["folder"]).strip("-")
        out.append(_tex_table(df, f"{e['title']}. Folder {e['folder']}/; seeds: {_seeds_text(e['seeds'])}; "
                                  f"command: `{e['command']}`.", label, RAGGED + "p{6cm}rrr"))
    return "\n".join(out)


TABLES_CSV_COLUMNS = ("folder", "title", "row", "column", "value", "number", "lo", "hi")


def _full(v) -> str:
    """A number at full precision (repr), '' for anything else (text, None, a bool, inf, nan)."""
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    return repr(float(v)) if ok else ""


def tables_csv(secs) -> str:
    """tables.csv: every headline table of tables.tex, long and tidy: one row per cell (the run folder, the
    table's title, its row from 1, the column, the cell as shown), with the number behind a paper or
    measured cell at full precision and, for a measured cell with an interval, its ends (lo, hi)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(TABLES_CSV_COLUMNS)
    for e in headline_entries(secs):
        for i, (p, row) in enumerate(zip(e["paper"], headline_rows(e)), 1):
            iv = interval_of(p) if "measured" in p else None
            for col, text in row.items():
                w.writerow([e["folder"], e["title"], i, col, text,
                            _full(p.get(col)) if col in ("paper", "measured") else "",
                            *((_full(iv[0]), _full(iv[1])) if iv and col == "measured" else ("", ""))])
    return buf.getvalue()


# ---- the command ----------------------------------------------------------------------------------

def build_report(cfg: ReportConfig, command: str = "jackson-report") -> dict:
    """Write <root>/index.md and <root>/index.html from the result folders under root."""
    root = Path(cfg.root)
    need(root.is_dir(), f"--root: {root} is not a folder")
    need(os.access(root, os.W_OK), f"--root: cannot write into {root}")
    own = read_claims(cfg.claims) if cfg.claims else None
    entries = find_runs(root)
    secs = sections(entries)
    docs = other_documents(root)
    rows = claims.ledger(root, own)
    md = render_markdown(root, secs, docs, rows)
    page = render_html(root, secs, docs, rows)
    problems, n_img = check_html(page)
    if problems:
        raise RuntimeError("index.html failed its own check: " + "; ".join(problems[:5]))
    write_atomic(root / "index.md", md)
    write_atomic(root / "index.html", page)
    write_atomic(root / "claims.csv", claims.csv_text(rows))
    write_atomic(root / "claims.tex", claims_tex(rows))
    write_atomic(root / "tables.tex", tables_tex(secs))
    write_atomic(root / "tables.csv", tables_csv(secs))
    return {"entries": entries, "sections": [(k, len(es)) for k, _, _, es in secs], "images": n_img,
            "missing": [f for e in entries for f in _missing(root, e)], "claims": rows}


def main(argv: list[str] | None = None) -> int:
    cfg, res = cli_run("jackson-report", ReportConfig,
                       "Rebuild reports/index.md and reports/index.html from the result folders under reports/ "
                       "(trains nothing).", {}, build_report, sys.argv[1:] if argv is None else argv)
    root = Path(cfg.root)
    print(f"report: {root}/index.md, {root}/index.html ({res['images']} figures inline)")
    print(f"  claims ledger ({root}/claims.csv): {_counts_text(res['claims'])}")
    for k, n in res["sections"]:
        print(f"  {k}: {n} run folder(s)" if n else f"  {k}: no results yet")
    for f in res["missing"]:
        print(f"  missing or unreadable figure: {f}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
