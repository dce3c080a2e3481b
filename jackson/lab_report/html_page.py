"""index.html: the claims ledger, each section's runs, figures and headline tables, the summaries and notes
rendered in collapsed blocks (jackson.lab_report.page writes it; entries.py reads the folders)."""
from __future__ import annotations

import base64
import html
import os
import re
from pathlib import Path

from . import claims
from .entries import HEADLINE, IMAGE_TYPES, INTRO, LEDGER_HEAD, LEDGER_INTRO, SAFE_LINK, counts_text, headline_rows, ledger_cells, readable_image, rules_of, seeds_text


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
         f"<p>Verdicts: {_inline(counts_text(rows))}</p>", '<table class="ledger">',
         "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in LEDGER_HEAD) + "</tr>"]
    for r in rows:
        cells = [_inline(x) for x in ledger_cells(r)]
        cells[5] = f'<td class="n">{cells[5]}</td>'
        cells[7] = f'<td class="v {r.verdict.replace(" ", "-")}"><strong>{cells[7]}</strong></td>'
        H.append("<tr>" + "".join(x if x.startswith("<td") else f"<td>{x}</td>" for x in cells) + "</tr>")
    H += ["</table>", f"<p>Rules (one function per kind in <code>jackson/lab_report/claims.py</code>, its text below). "
          f"{_inline(claims.PREFERENCE)}</p>", "<ul>"]
    H += [f"<li><code>{html.escape(k)}</code> ({html.escape(', '.join(ids))}): {_inline(text)}</li>"
          for k, text, ids in rules_of(rows)]
    return H + ["</ul>", "</section>"]


def _doc_id(rel: str) -> str:
    return "doc-" + re.sub(r"[^a-z0-9]+", "-", rel.lower()).strip("-")


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
