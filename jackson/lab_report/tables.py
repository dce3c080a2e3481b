"""The report's tables for a paper: the claims ledger as a LaTeX longtable (claims.tex), every run's
headline table in LaTeX (tables.tex) and as one long tidy CSV (tables.csv).  ASCII LaTeX (TEX_CHARS turns
the lab's Unicode into LaTeX) that pdfLaTeX compiles."""
from __future__ import annotations

import csv
import io
import math
import re

from . import claims
from .entries import HEADLINE, counts_text, headline_entries, headline_rows, interval_of, seeds_text


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
        df, "Claims ledger of jackson-lab: " + counts_text(rows) + " Rules: jackson/lab_report/claims.py.",
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
        out.append(_tex_table(df, f"{e['title']}. Folder {e['folder']}/; seeds: {seeds_text(e['seeds'])}; "
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
