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

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ..config import cli_run, need
from ..runfolder import write_atomic
from . import claims
from .check import check_html
from .claim_files import read_claims
from .entries import (HEADLINE, INTRO, LEDGER_HEAD, LEDGER_INTRO, counts_text, find_runs, headline_rows, ledger_cells,
                      missing_figures, other_documents, readable_image, rules_of, sections, seeds_text)
from .html_page import render_html
from .tables import claims_tex, tables_csv, tables_tex


@dataclass(frozen=True)
class ReportConfig:
    root: str = "reports"   # folder searched for result folders; index.md and index.html are written into it
    claims: str = ""        # a claims file (TOML, docs/claims.md) judged instead of the lab's two papers' claims


def ledger_markdown(rows: list[claims.Row]) -> list[str]:
    L = ['<a id="claims"></a>', "", "## Claims ledger", "", LEDGER_INTRO, "", "Verdicts: " + counts_text(rows), "",
         "| " + " | ".join(LEDGER_HEAD) + " |", "|" + "---|" * 5 + "---:|" + "---|" * 4]
    for r in rows:
        cells = ledger_cells(r)
        cells[7] = f"**{cells[7]}**"
        L.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    L += ["", "Rules (one function per kind in `jackson/lab_report/claims.py`, its text below). " + claims.PREFERENCE, ""]
    L += [f"- `{k}` ({', '.join(ids)}): {text}" for k, text, ids in rules_of(rows)]
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
            "missing": [f for e in entries for f in missing_figures(root, e)], "claims": rows}


def main(argv: list[str] | None = None) -> int:
    cfg, res = cli_run("jackson-report", ReportConfig,
                       "Rebuild reports/index.md and reports/index.html from the result folders under reports/ "
                       "(trains nothing).", {}, build_report, sys.argv[1:] if argv is None else argv)
    root = Path(cfg.root)
    print(f"report: {root}/index.md, {root}/index.html ({res['images']} figures inline)")
    print(f"  claims ledger ({root}/claims.csv): {counts_text(res['claims'])}")
    for k, n in res["sections"]:
        print(f"  {k}: {n} run folder(s)" if n else f"  {k}: no results yet")
    for f in res["missing"]:
        print(f"  missing or unreadable figure: {f}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
