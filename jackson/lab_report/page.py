"""jackson-report: one lab report, reports/index.md and reports/index.html, from the result folders under reports/.

It trains nothing; it reads what runs left behind, through one declared interface: every result
folder holds `report.json` =
        {"title", "section", "data", "command", "seeds",
         "figures": [{"file", "caption"}],            file relative to that folder
         "paper": [{"quantity", "paper", "measured"[, "compare"]}],  paper may be null or a string when not a
                                                       number; compare: "difference" or "ratio" (COMPARE)
         "text"}                                       markdown, a paragraph
which each experiment writes at the end of its run.  The modules of the report:

    entries.py    the folders: runs, sections, provenance, quick and superseded runs, headline rows, ledger cells
    claims.py     the claims ledger: each claim judged by its rule (claim_files.py reads the claims files)
    html_page.py  index.html: the answer first (verdict counts, one row per claim, headline figures), the
                  full ledger one click away, then each section's current runs, superseded runs in an appendix
    check.py      index.html checked: a parser pass, and a headless Chromium load where one is installed
    tables.py     claims.tex, tables.tex (+ tables-appendix.tex), tables.csv (LaTeX for a paper, one long tidy CSV)
    page.py       index.md, the build and the command (this module)

index.html names its figures and each run's summary.md by path (files beside the page, so it stays small and
opens fast; it is built, not kept in git); with --single-file it embeds them (base64 images, the summaries and
notes rendered in collapsed blocks) and carries no link out of itself.

What a run folder's report.json names (its figures, its summary.md) must lie inside that folder, every symbolic
link followed, or the page shows it as refused in its place; a file is opened only when a stat says it is a
regular file (a FIFO would block); an embedded file is at most wall.MAX_EMBED_BYTES (16 MiB) and a
--single-file page's figures together at most wall.MAX_EMBED_TOTAL (256 MiB), priced before the page is
built (wall.py).  The files of one run are replaced as one set, and only over files the lab wrote (outputs.py).
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ..command import cli_run
from ..config import RunFailed, need
from ..verdict import FAILED
from . import claims
from .check import check_html
from .claim_files import check_claims
from .entries import (BRACKETS_TEXT, HEADLINE, INTRO, LEDGER_HEAD, LEDGER_INTRO, MAX_EMBED_BYTES, MAX_EMBED_TOTAL,
                      SEEDS_CELL, VERDICT_CELL, counts_text, current_and_superseded, find_runs, group_counts,
                      headline_rows, ledger_cells, missing_figures, other_documents, readable_image, refused_documents,
                      refused_text, regular, rules_of, sections, seeds_text, unchecked_text, with_refused)
from .outputs import OutputSet, check_own
from .html_page import render_html
from .tables import claims_full_tex, claims_tex, tables_appendix_tex, tables_csv, tables_tex


@dataclass(frozen=True)
class ReportConfig:
    root: str = "reports"   # folder searched for result folders; the report's files are written into it, replaced as one set and only over files jackson-report wrote
    claims: str = ""        # a claims file (TOML, docs/claims.md) judged instead of the lab's two papers' claims
    single_file: bool = False   # embed every figure in index.html (one file that travels alone; large and slower to open; at most 16 MiB a figure, 256 MiB in all)
    keep_going: bool = False    # with --claims: judge the valid claims and list the refused ones (exit 1) instead of refusing the file

    SHARED = ()   # no run folder, no training, no config.json: none of --config, --threads, --force means anything here


def glance_markdown(rows: list[claims.Row], refused: list[str]) -> list[str]:
    """index.md's first lines: each paper's own claims counted by verdict, then the variants this lab added, and
    the claims of --claims that were refused (--keep-going)."""
    L = [f"- **{title}**: {group_counts(rs)}" + (f"; {k}" if (k := unchecked_text(rs)) else "")
         for title, rs in claims.groups(rows)]
    if refused:
        L.append(f"- **refused** (not judged, --keep-going): {len(refused)} claim{'s' if len(refused) != 1 else ''}")
    return L + [""] + ([f"- refused: {x}" for x in refused] + [""] if refused else [])


def ledger_markdown(rows: list[claims.Row]) -> list[str]:
    L = ['<a id="claims"></a>', "", "## Claims ledger", "", LEDGER_INTRO, "", "Verdicts: " + counts_text(rows), ""]
    for title, rs in claims.groups(rows):
        L += [f"### {title}: {group_counts(rs)}", "",
              "| " + " | ".join(LEDGER_HEAD) + " |",
              "|" + "".join("---:|" if i == SEEDS_CELL else "---|" for i in range(len(LEDGER_HEAD)))]
        for r in rs:
            cells = ledger_cells(r)
            cells[VERDICT_CELL] = f"**{cells[VERDICT_CELL]}**"
            L.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
        L.append("")
    L += [BRACKETS_TEXT, "", "Rules (one function per rule, in each experiment's `rules.py`; its text below). " + claims.PREFERENCE, ""]
    L += [f"- `{k}` ({', '.join(ids)}): {text}" for k, text, ids in rules_of(rows)]
    return L + [""]


def _run_markdown(root: Path, e: dict, num: str) -> list[str]:
    """One run folder's block of index.md."""
    L = [f"### {num} {e['title']}", "",
         f"Folder: `{e['folder']}/` · command: `{e['command']}`"
         + (f" (as run: `{e['ran']}`)" if e.get("ran") else "") + f" · seeds: {seeds_text(e['seeds'])}"
         + (f" · made: {e['made']}" if e.get("made") else ""), "",
         f"Data: {e['data']}", ""]
    if e["text"]:
        L += [e["text"], ""]
    if e["paper"]:
        L += ["| " + " | ".join(HEADLINE) + " |", "|---|---:|---:|---:|"]
        L += ["| " + " | ".join(row.values()) + " |" for row in headline_rows(e)]
        L.append("")
    n = 0
    for kind, f in with_refused(e):
        if kind == "refused":
            L += [f"*(refused: {f['why']}: `{f['file']}`)*", ""]
            continue
        if not readable_image(root / f["file"]):
            L += [f"*(figure missing or unreadable: `{f['file']}`; rerun the command above)*", ""]
            continue
        n += 1
        L += [f"![Figure {num}.{n}]({f['file']})", "", f"*Figure {num}.{n}.* {f['caption']}", ""]
    L += [x for r in e.get("refused", []) if r["kind"] == "summary" for x in (f"*(refused: {r['why']}: `{r['file']}`)*", "")]
    if e.get("links"):
        L += ["Details: " + ", ".join(f"[{p}]({p})" for p in e["links"]), ""]
    return L


def render_markdown(root: Path, secs, docs: list[str], rows: list[claims.Row] | None = None,
                    refused: list[str] = ()) -> str:
    current, superseded = current_and_superseded(secs)
    from jackson import __version__
    L = ["# jackson-lab report", ""] + (glance_markdown(rows, list(refused)) if rows or refused else [])
    L += [INTRO, "", f"Built by jackson-lab {__version__} (`jackson-report`); the same as a page: `index.html`.", ""]
    L += ledger_markdown(rows) if rows else []
    L += ["Contents:", ""]
    for i, (k, heading, _, es) in enumerate(current, 1):
        L.append(f"{i}. [{heading}](#{k.replace('_', '-')}){'' if es else ' (no results yet)'}")
    if superseded:
        L.append(f"{len(current) + 1}. [Appendix: superseded runs](#appendix)")
    L.append("")
    for i, (k, heading, how, es) in enumerate(current, 1):
        L += [f'<a id="{k.replace("_", "-")}"></a>', "", f"## {i}. {heading}", ""]
        if not es:
            L += [f"No results yet. Produce them with `{how}`." if how else "No results yet.", ""]
            continue
        for j, e in enumerate(es, 1):
            L += _run_markdown(root, e, f"{i}.{j}")
    if superseded:
        L += ['<a id="appendix"></a>', "", "## Appendix: superseded runs", "",
              "Each was replaced by a later run (its SUPERSEDED.md says which and why); none feeds a verdict.", ""]
        for i, (k, heading, _, es) in enumerate(superseded, 1):
            L += [f"### A.{i} {heading}", ""]
            for j, e in enumerate(es, 1):
                L += _run_markdown(root, e, f"A.{i}.{j}")
    refused = refused_documents(root)
    if docs or refused:
        L += ["## Notes beside the runs", ""] + [f"- [{d}]({d})" for d in docs]
        L += [f"- *(refused: {why}: `{d}`)*" for d, why in refused] + [""]
    return "\n".join(L)


# ---- the command ----------------------------------------------------------------------------------

def embed_price(root: Path, entries: list[dict]) -> int:
    """An upper bound on the bytes of figures a --single-file page would embed (those within MAX_EMBED_BYTES, and
    each folder's first again, as the first screen may show it), from a stat of each: nothing is read."""
    total = 0
    for e in entries:
        sizes = [os.stat(root / f["file"]).st_size for f in e["figures"] if not regular(root / f["file"])]
        sizes = [n for n in sizes if n <= MAX_EMBED_BYTES]
        total += sum(sizes) + (sizes[0] if sizes else 0)
    return total


def build_report(cfg: ReportConfig, command: str = "jackson-report") -> dict:
    """Write the report's set (index.md, index.html, claims.csv, claims.tex, claims-full.tex, tables.tex,
    tables.csv) into root from the result folders under it, as one unit and only over the lab's own files
    (outputs.OutputSet)."""
    root = Path(cfg.root)
    need(root.is_dir(), f"--root: {root} is not a folder")
    need(os.access(root, os.W_OK), f"--root: cannot write into {root}")
    need(cfg.claims or not cfg.keep_going, "--keep-going: goes with --claims (the lab's own claims files are never "
                                           "refused)")
    own, refused = check_claims(cfg.claims) if cfg.claims else (None, [])
    check_own(root)                         # a root holding files the lab did not write: refused before any work
    rows = claims.ledger(root, own, refused, cfg.keep_going)    # every refused claim named, all at once
    entries = find_runs(root)
    if cfg.single_file:                     # priced before anything is read into memory
        price = embed_price(root, entries)
        need(price <= MAX_EMBED_TOTAL, f"--single-file: the page would embed {price:,} bytes of figures, more "
                                       f"than the limit of {MAX_EMBED_TOTAL:,}; build it without --single-file")
    secs = sections(entries)
    docs = other_documents(root)
    md = render_markdown(root, secs, docs, rows, refused)
    page = render_html(root, secs, docs, rows, cfg.single_file, refused)
    problems, n_img = check_html(page, root)
    if problems:
        raise RunFailed("index.html failed its own check, nothing written: " + "; ".join(problems[:3]))
    with OutputSet(root) as out:            # the first write: the lock, what a killed run left settled, the swap
        build = out.replace({"index.md": md, "index.html": page, "claims.csv": claims.csv_text(rows),
                             "claims.tex": claims_tex(rows), "claims-full.tex": claims_full_tex(rows),
                             "tables.tex": tables_tex(secs, rows),
                             "tables-appendix.tex": tables_appendix_tex(secs, rows), "tables.csv": tables_csv(secs, rows)})
    return {"entries": entries, "sections": [(k, len(es)) for k, _, _, es in secs],
            "images": n_img - page.count('<img class="thumb" '),           # the figures, not the summary's thumbnails
            "missing": [f for e in entries for f in missing_figures(root, e)], "claims": rows, "build": build,
            "refused": [refused_text(e, r) for e in entries for r in e["refused"]]
                       + [f"{d}: refused: {why}" for d, why in refused_documents(root)],
            "refused_claims": refused, "settled": out.settled}


def main(argv: list[str] | None = None) -> int:
    cfg, res = cli_run("jackson-report", ReportConfig,
                       "Rebuild reports/index.md and reports/index.html from the result folders under reports/ "
                       "(trains nothing). A figure or summary a report.json names outside its run folder (links "
                       "followed) is shown as refused.", {}, build_report, sys.argv[1:] if argv is None else argv)
    root = Path(cfg.root)
    how = "inline: the page travels alone" if cfg.single_file else "linked: files beside the page"
    for k, n in res["sections"]:
        print(f"{k}: {n} run folder(s)" if n else f"{k}: no results yet")
    for f in res["missing"]:
        print(f"missing or unreadable figure: {f}")
    for line in res["refused"]:
        print(line)
    if res["settled"]:
        print(res["settled"])
    print(f"claims ledger: {counts_text(res['claims'])}")             # the headline, then the paths written
    print(f"report: {root}/index.md, {root}/index.html ({res['images']} figures {how})")
    print(f"tables: {root}/claims.csv, {root}/claims.tex, {root}/claims-full.tex, {root}/tables.tex, "
          f"{root}/tables-appendix.tex, {root}/tables.csv")
    # what the report could not do: claims refused (--keep-going) and claims whose rule failed, one line each
    bad = [f"refused: {x}" for x in res["refused_claims"]] + [f"{r.claim.id}: {r.measured}" for r in res["claims"]
                                                       if r.verdict == FAILED]
    for line in bad:
        sys.stderr.write(f"jackson-report: {line}\n")
    return 1 if bad else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
