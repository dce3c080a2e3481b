"""index.html: the claims ledger, each section's runs, figures and headline tables, the summaries and notes
rendered in collapsed blocks (jackson.lab_report.page writes it; entries.py reads the folders)."""
from __future__ import annotations

import base64
import html
import urllib.parse
import os
import re
import stat
from pathlib import Path

from ..verdict import BRACKETS, LAB, STATUSES, UNLABELLED
from . import claims
from ..config import MAX_TEXT_BYTES, UsageError, read_capped
from .entries import (BRACKETS_TEXT, HEADLINE, IMAGE_TYPES, INTRO, LEDGER_HEAD, LEDGER_INTRO, MAX_EMBED_BYTES, SAFE_LINK,
                      SEEDS_CELL, VERDICT_CELL, counts_text, current_and_superseded, group_counts, headline_rows,
                      interval_text, ledger_cells, outside, readable_image, refused_documents, regular,
                      rules_of, run_id, seeds_text, unchecked_text, with_refused)
from .words import short


class Refused(Exception):
    """A file the page will not embed or link (outside the wall, not a regular file, too large): why."""


def _inline(text: str) -> str:
    """Escape text for HTML, then `code` spans -> <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text, quote=False))


def img_src(root: Path, path: Path, single_file: bool) -> str:
    """An <img> src: the file itself, base64, when the page must travel alone (--single-file); else its path
    relative to the page (the figures are files beside it, loaded as they scroll into view).  Raises Refused
    for a file outside root (links followed) and, embedded, one that is not a regular file or is larger than
    MAX_EMBED_BYTES."""
    why = outside(root, path, "the report's folder")
    if why:
        raise Refused(why)
    if single_file:
        return _data_uri(path)
    return urllib.parse.quote(Path(os.path.relpath(path, root)).as_posix())


def refused_html(what: str, why: str) -> str:
    """What the page shows in place of a figure it will not embed or link."""
    return f'<em class="refused">(refused: {html.escape(why)}: <code>{html.escape(what)}</code>)</em>'


def _img(root: Path, path: Path, alt: str, single_file: bool, cls: str = "") -> str:
    lazy = "" if single_file else ' loading="lazy"'
    c = f'class="{cls}" ' if cls else ""
    try:
        src = img_src(root, path, single_file)
    except Refused as e:
        return refused_html(os.path.relpath(path, root) if not outside(root, path) else alt, str(e))
    return f'<img {c}src="{src}" alt="{html.escape(alt)}"{lazy}>'


def embed_bytes(path: Path, limit: int = MAX_EMBED_BYTES) -> bytes:
    """The bytes of a file the page embeds: a regular file (a stat before the open; the open never blocks)
    of at most `limit` bytes, else Refused saying which (the size is checked before anything is read)."""
    why = regular(path)
    if why:
        raise Refused(why)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise Refused(f"unreadable ({e.strerror or e})") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise Refused("not a regular file")
        if st.st_size > limit:
            raise Refused(f"{st.st_size:,} bytes, more than the limit of {limit:,} for an embedded file")
        data = fh.read(limit + 1)
    if len(data) > limit:                    # it grew since the stat
        raise Refused(f"more than the limit of {limit:,} bytes for an embedded file")
    return data


def _data_uri(path: Path) -> str:
    mime = IMAGE_TYPES.get(path.suffix.lower(), "application/octet-stream")
    return f"data:{mime};base64," + base64.b64encode(embed_bytes(path)).decode("ascii")


CSS = ("body{font-family:sans-serif;max-width:1200px;margin:1em auto;padding:0 1em;line-height:1.45;color:#222}"
       "figure{margin:1.2em 0}img{max-width:100%;border:1px solid #ddd}figcaption{font-size:.9em;color:#444}"
       "table{border-collapse:collapse;margin:.8em 0;font-size:.9em}td,th{border:1px solid #ccc;padding:.25em .5em}"
       "td.n{text-align:right}code{background:#f4f4f4;padding:0 .2em}.meta{font-size:.9em;color:#555}"
       "table.ledger{font-size:.8em}td.v{white-space:nowrap}td.reproduced{background:#e3f4e1}"
       "td.partly{background:#fdf3d8}td.not-reproduced{background:#f9dfdc}td.inconclusive{background:#e4ecf7}td.untested,td.not-applicable{background:#eee}"
       "details{margin:.6em 0}summary{cursor:pointer;color:#1a4c8a}div.doc{border-left:3px solid #ddd;"
       "padding:0 1em;margin:.4em 0;font-size:.92em}div.doc table{font-size:.85em}div.doc h1{font-size:1.3em}"
       "div.doc h2{font-size:1.15em}div.doc h3{font-size:1em}"
       "h1{margin:.2em 0 .3em;font-size:1.6em}"
       "h2.paper{font-size:1.05em;margin:.7em 0 .2em}h2.paper .counts{font-weight:normal;font-size:.85em;margin-left:.6em}"
       "h2.paper .note{font-weight:normal;font-size:.8em;color:#555}"
       "table.glance{font-size:.78em;width:100%;margin:.2em 0}table.glance td,table.glance th{padding:.05em .4em;"
       "line-height:1.2}table.glance th{font-weight:normal;color:#555;text-align:left}"
       "table.glance td,table.glance th{white-space:nowrap}"
       "p.lead{margin:.2em 0;font-size:.9em;color:#444}p.legend{margin:.3em 0;font-size:.75em;color:#555}"
       "span.bk,td.q{color:#555;font-size:.9em}td.q,td.p{white-space:nowrap}ul.refused{font-size:.85em}"
       "span.unchecked{font-size:.8em;color:#555;font-weight:normal}"
       ".badge{display:inline-block;padding:0 .5em;margin:0 .2em 0 0;border-radius:.8em;font-weight:bold}"
       ".badge.reproduced{background:#e3f4e1}.badge.partly{background:#fdf3d8}.badge.not-reproduced{background:#f9dfdc}"
       ".badge.inconclusive{background:#e4ecf7}.badge.untested,.badge.not-applicable{background:#eee}"
       ".badge.failed,td.failed{background:#f3c4f0}"
       "div.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:.6em;margin:1em 0}"
       "div.grid a.cell{display:block;text-decoration:none;color:#333;font-size:.8em}"
       "div.grid img{width:100%;height:170px;object-fit:contain;background:#fff}")


def ledger_html(rows: list[claims.Row]) -> list[str]:
    H = ['<section id="claims">', "<h2>Claims ledger</h2>", f"<p>{_inline(LEDGER_INTRO)}</p>",
         f"<p>Verdicts: {_inline(counts_text(rows))}</p>"]
    for title, rs in claims.groups(rows):
        H += [f"<h3>{html.escape(title)}: {html.escape(group_counts(rs))}</h3>", '<table class="ledger">',
              "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in LEDGER_HEAD) + "</tr>"]
        for r in rs:
            cells = [_inline(x) for x in ledger_cells(r)]
            cells[SEEDS_CELL] = f'<td class="n">{cells[SEEDS_CELL]}</td>'
            cells[VERDICT_CELL] = f'<td class="v {r.verdict.replace(" ", "-")}"><strong>{cells[VERDICT_CELL]}</strong></td>'
            H.append(f'<tr id="claim-{html.escape(r.claim.id)}">' + "".join(x if x.startswith("<td") else f"<td>{x}</td>"
                                                                      for x in cells) + "</tr>")
        H.append("</table>")
    H += [f"<p>{_inline(BRACKETS_TEXT)}</p>", f"<p>Rules (one function per rule, in each experiment's <code>rules.py</code>; its text below). "
          f"{_inline(claims.PREFERENCE)}</p>", "<ul>"]
    H += [f"<li><code>{html.escape(k)}</code> ({html.escape(', '.join(ids))}): {_inline(text)}</li>"
          for k, text, ids in rules_of(rows)]
    return H + ["</ul>", "</section>"]


def _doc_id(rel: str) -> str:
    return "doc-" + re.sub(r"[^a-z0-9]+", "-", rel.lower()).strip("-")


def doc_html(root: Path, rel: str, inlined: set[str], single_file: bool = False, wall: Path | None = None) -> str:
    """A markdown file beside the page (a run's summary.md, a note) as HTML for the page itself, so the
    page needs nothing beside it: headings get ids and "#x" links point at them under the document's own
    prefix; a link to another document of the page points at its block; a link to any other file
    becomes that file's path as text (it sits next to index.md, not inside the page); images are embedded.
    Markdown is rendered by Python-Markdown (tables, fenced code, heading ids).  The document and every image
    it names must lie inside `wall` (a run's summary: its run folder; a note: root), links followed, and be
    regular files: else the page says refused in their place."""
    import markdown
    pid, here = _doc_id(rel), os.path.dirname(rel)
    wall = root if wall is None else wall
    why = outside(wall, root / rel, "its folder") or regular(root / rel)
    if why:
        return f"<p>{refused_html(rel, why)}</p>"
    try:
        text = read_capped(root / rel, rel, MAX_TEXT_BYTES)
    except (OSError, UnicodeDecodeError, UsageError) as e:
        return f"<p><em>(cannot read <code>{html.escape(rel)}</code>: " \
               f"{html.escape(getattr(e, 'strerror', None) or 'too large, or not UTF-8 text')})</em></p>"
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
        path = root / here / src
        why = outside(wall, path, "its folder")
        if why:
            return refused_html(src, why)
        if readable_image(path):
            return _img(root, path, src, single_file)
        return f"<em>(image <code>{html.escape(src)}</code> missing)</em>"

    body = re.sub(r'<a href="([^"]*)"[^>]*>(.*?)</a>', link, body, flags=re.S)
    body = re.sub(r'<img [^>]*?src="([^"]*)"[^>]*>', image, body)
    return body


def doc_details(root: Path, rel: str, inlined: set[str], single_file: bool = False,
                wall: Path | None = None) -> str:
    """A collapsed block holding one document of the page (see doc_html) when the page travels alone
    (--single-file); else a link to the document, a file beside the page (the page stays small and fast)."""
    if not single_file:
        q = urllib.parse.quote(rel)
        return f'<p class="doc-link">Details: <a href="{q}">{html.escape(rel)}</a></p>'
    return (f'<details id="{_doc_id(rel)}"><summary>{html.escape(rel)}</summary>'
            f'<div class="doc">{doc_html(root, rel, inlined, single_file, wall)}</div></details>')


GLANCE_LEAD = ("Each claim of the papers, judged by its stated rule from the run folders beside this page (never "
               "typed); a claim's id opens its full row: what was measured, on which folder, by which rule.")
BRACKETS_HTML = "Brackets: " + "; ".join(f"<em>{html.escape(k)}</em>: {html.escape(v)}" for k, v in BRACKETS.items()
                                         if k != UNLABELLED) + "."
GLANCE_FIGURES = 8     # headline figures under the first screen: the first figure of each folder the ledger reads
GLANCE_TEXT = 60       # characters of a claim's text on the first screen (cut only where no formula is cut)
GLANCE_PAPER = 24      # characters of the paper's value beside the measured one (in full on hover)
GLANCE_QUANTITY = 28   # characters of what its key number is (the quantity before its first comma; in full on hover)


def _badges(rows: list[claims.Row]) -> str:
    n, k = claims.counts(rows), unchecked_text(rows)
    return (" ".join(f'<span class="badge {v.replace(" ", "-")}">{n[v]} {html.escape(v)}</span>' for v in STATUSES
                     if n[v]) + (f' <span class="unchecked">{html.escape(k)}</span>' if k else ""))


def _key_cell(r: claims.Row) -> str:
    """The first screen's key number: value and labelled bracket; what the value is (its quantity) on hover."""
    o = r.outcome
    if o is None or o.value is None:
        return '<td class="q"></td><td class="n">—</td>'
    iv = interval_text(o)
    kind = f' <span class="bk">{html.escape(iv.split("] ", 1)[1])}</span>' if iv else ""
    what = short(o.quantity.split(",")[0], GLANCE_QUANTITY, "…")
    return (f'<td class="q" title="{html.escape(o.quantity)}">{_inline(what)}</td><td class="n">{o.value:.3g}'
            f'{html.escape(iv.split("] ", 1)[0] + "]") if iv else ""}{kind}</td>')


def glance_html(root: Path, rows: list[claims.Row], entries: list[dict], single_file: bool,
                refused: list[str] = ()) -> list[str]:
    """The first screen: per paper (its own claims, then the variants this lab added, claims.groups), the verdict
    counts and one compact row per claim (id, the claim in a few words cut only where no formula is cut, verdict,
    the paper's value, its key number with its bracket labelled; the id opens the full row); the claims --keep-going refused; then
    the headline figures as a grid (each opens its run), below the fold."""
    H = ['<section id="at-a-glance">', f'<p class="lead">{_inline(GLANCE_LEAD)}</p>']
    for title, rs in claims.groups(rows):
        lab = rs[0].claim.origin == LAB
        H += [f'<h2 class="paper">{html.escape(title)}' + (' <span class="note">(not claims of the paper)</span>' if lab
                                                          else "")
              + f' <span class="counts">{len(rs)} claim{"s" if len(rs) != 1 else ""}: {_badges(rs)}</span></h2>',
              '<table class="glance"><tr><th>claim</th><th>in a few words</th><th>verdict</th>'
              '<th>the paper says</th><th>key number: what it is</th><th>value [bracket] and its kind</th></tr>']
        for r in rs:
            H.append(f'<tr><td><a href="#claim-{html.escape(r.claim.id)}">{html.escape(r.claim.id)}</a></td>'
                     f'<td title="{html.escape(r.claim.text)}">{_inline(short(r.claim.text, GLANCE_TEXT))}</td>'
                     f'<td class="v {r.verdict.replace(" ", "-")}">{html.escape(r.verdict)}</td>'
                     f'<td class="p" title="{html.escape(r.claim.paper_value)}">'
                     f'{_inline(short(r.claim.paper_value, GLANCE_PAPER, "…"))}</td>{_key_cell(r)}</tr>')
        H.append("</table>")
    H.append(f'<p class="legend">{BRACKETS_HTML}</p>')
    if refused:
        H += [f'<h2 class="paper">Refused <span class="counts">{len(refused)} claim{"s" if len(refused) != 1 else ""}, '
              "not judged (--keep-going)</span></h2>", '<ul class="refused">']
        H += [f"<li>{html.escape(x)}</li>" for x in refused]
        H.append("</ul>")
    by_folder = {e["folder"]: e for e in entries}
    shown, cells = set(), []
    for r in rows:
        e = by_folder.get(r.folder)
        if not e or r.folder in shown or len(cells) >= GLANCE_FIGURES:
            continue
        shown.add(r.folder)
        fig = next((f for f in e["figures"] if readable_image(root / f["file"])), None)
        if fig:
            cells.append(f'<a class="cell" href="#{run_id(e["folder"])}">{_img(root, root / fig["file"], e["folder"], single_file, "thumb")}'
                         f"<span>{html.escape(e['folder'])}/</span></a>")
    if cells:
        H += ['<div class="grid">', *cells, "</div>"]
    return H + ["</section>"]


def _run_html(root: Path, e: dict, num: str, inlined: set[str], single_file: bool) -> list[str]:
    """One run folder's block: title, command, data, text, headline table, figures, its summary collapsed."""
    H = [f'<h3 id="{run_id(e["folder"])}">{num} {_inline(e["title"])}</h3>',
         f'<p class="meta">Folder: <code>{html.escape(e["folder"])}/</code> · command: '
         f'<code>{html.escape(e["command"])}</code>'
         + (f' (as run: <code>{html.escape(e["ran"])}</code>)' if e.get("ran") else "")
         + f' · seeds: {html.escape(seeds_text(e["seeds"]))}'
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
    for kind, f in with_refused(e):
        if kind == "refused":
            H.append(f"<p>{refused_html(f['file'], f['why'])}</p>")
            continue
        path = root / f["file"]
        if not readable_image(path):
            H.append(f"<p><em>(figure missing or unreadable: <code>{html.escape(f['file'])}</code>)</em></p>")
            continue
        n += 1
        H += ["<figure>", _img(root, path, f"Figure {num}.{n}", single_file),
              f"<figcaption><strong>Figure {num}.{n}.</strong> {_inline(f['caption'])}</figcaption>", "</figure>"]
    H += [f"<p>{refused_html(r['file'], r['why'])}</p>" for r in e.get("refused", []) if r["kind"] == "summary"]
    return H + [doc_details(root, p, inlined, single_file, root / e["folder"]) for p in e.get("links", [])]


def render_html(root: Path, secs, docs: list[str], rows: list[claims.Row] | None = None,
                single_file: bool = False, refused: list[str] = ()) -> str:
    """index.html: the answer first (glance_html), the full ledger one click away, then each section's current
    runs; superseded runs in an appendix; the notes last."""
    inlined = set(docs) | {p for _, _, _, es in secs for e in es for p in e.get("links", [])}
    current, superseded = current_and_superseded(secs)
    H = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
         '<meta name="viewport" content="width=device-width, initial-scale=1">',
         "<title>jackson-lab report</title>", f"<style>{CSS}</style>", "</head>", "<body>",
         "<h1>jackson-lab report</h1>"]
    if rows or refused:
        H += glance_html(root, rows or [], [e for _, _, _, es in current for e in es], single_file, list(refused))
    if rows:
        H += ["<details><summary>The claims ledger in full: what was measured, the folder, the rule, the other "
              "folders</summary>", *ledger_html(rows), "</details>"]
    H += [f"<p>{_inline(INTRO)}</p>", "<ol>"]
    for k, heading, _, es in current:
        H.append(f'<li><a href="#{k.replace("_", "-")}">{_inline(heading)}</a>{"" if es else " (no results yet)"}</li>')
    if superseded:
        H.append('<li><a href="#appendix">Appendix: superseded runs</a></li>')
    H.append("</ol>")
    for i, (k, heading, how, es) in enumerate(current, 1):
        H += [f'<section id="{k.replace("_", "-")}">', f"<h2>{i}. {_inline(heading)}</h2>"]
        if not es:
            H.append(f"<p>No results yet. Produce them with <code>{html.escape(how)}</code>.</p>" if how
                     else "<p>No results yet.</p>")
        for j, e in enumerate(es, 1):
            H += _run_html(root, e, f"{i}.{j}", inlined, single_file)
        H.append("</section>")
    if superseded:
        H += ['<section id="appendix">', "<h2>Appendix: superseded runs</h2>",
              "<p>Each was replaced by a later run (its SUPERSEDED.md says which and why); none feeds a verdict.</p>"]
        for i, (k, heading, _, es) in enumerate(superseded, 1):
            H.append(f"<h3>A.{i} {_inline(heading)}</h3>")
            for j, e in enumerate(es, 1):
                H += _run_html(root, e, f"A.{i}.{j}", inlined, single_file)
        H.append("</section>")
    refused = refused_documents(root)
    if docs or refused:
        H.append('<h2 id="notes">Notes beside the runs</h2>')
        H += [doc_details(root, d, inlined, single_file) for d in docs]
        H += [f"<p>{refused_html(d, why)}</p>" for d, why in refused]
    from jackson import __version__
    H += [f"<footer><p>Built by jackson-lab {__version__} (<code>jackson-report</code>).</p></footer>",
          "</body>", "</html>", ""]
    return "\n".join(H)
