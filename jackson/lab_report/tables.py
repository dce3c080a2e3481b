"""The report's tables for a paper: the claims ledger as a LaTeX longtable (claims.tex), every run's
headline table in LaTeX (tables.tex) and as one long tidy CSV (tables.csv).  ASCII LaTeX (TEX_CHARS turns
the lab's Unicode into LaTeX) that pdfLaTeX compiles."""
from __future__ import annotations

import csv
import io
import math
import re

from . import claims
from ..verdict import BRACKETS, UNLABELLED
from .entries import (HEADLINE, counts_text, group_counts, headline_entries, headline_rows, interval_of, key_number,
                      seeds_text, short)


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
    return _tex_texts([text])[0]


def _tex_texts(texts: list[str]) -> list[str]:
    """_tex_text of many texts, escaped by one call of pandas' escaper: a call costs milliseconds whatever it
    escapes, so a table of thousands of cells is not thousands of calls.  A line break in a text reads as a space
    (a cell holds one line)."""
    import pandas as pd
    if not texts:
        return []
    flat = [" ".join(t.replace("`", "\x00").splitlines()) for t in texts]
    out = pd.DataFrame({"x": flat}).to_latex(index=False, header=False, escape=True)
    body = out.split("\\midrule\n", 1)[-1] if "\\midrule" in out else out.split("\\toprule\n", 1)[1]
    rows = body.rsplit("\\bottomrule", 1)[0].split(" \\\\\n")[:-1]      # one "cell \\\\" line per text
    if len(rows) != len(texts):
        raise RuntimeError(f"LaTeX escaping gave {len(rows)} rows for {len(texts)} texts")
    return [_tex_chars(_math(re.sub("\x00(.*?)\x00", r"\\texttt{\1}", r.strip()))) for r in rows]


MATH_WORDS = ((r"m\\_h", "m_h"), (r"m\\_\{?FF\}?", "m_{FF}"), (r"sigma\\_i", r"\sigma_i"),
              (r"rho\\_hat", r"\hat\rho"), (r"alpha\\_hat", r"\hat\alpha"), (r"alpha", r"\alpha"),
              (r"gamma", r"\gamma"), (r"beta", r"\beta"), (r"tau", r"\tau"), (r"sigma", r"\sigma"),
              (r"rho", r"\rho"))
CARET = r"\\textasciicircum(?:\{\}| )"          # what pandas' escaper makes of ^


def _math(tex: str) -> str:
    """The paper's symbols of an escaped text in math mode: a power such as m_h^-(2 alpha - 1) becomes
    $m_h^{-(2\\alpha - 1)}$, and alpha, m_h, m_FF, sigma_i, rho_hat, ... become $\\alpha$, $m_h$, ... (outside
    \\texttt).  Applied after escaping, so it sees m\\_h and \\textasciicircum."""
    def symbols(text: str) -> str:
        for pat, sym in MATH_WORDS:
            text = re.sub(rf"(?<![A-Za-z\\]){pat}(?![A-Za-z])", lambda _, s=sym: s, text)
        return text

    def power(m: re.Match) -> str:
        return f"${symbols(m.group(1))}^{{{symbols(m.group(2))}}}$"
    tex = re.sub(rf"([A-Za-z0-9]+(?:\\_[A-Za-z0-9{{}}]+)?){CARET}(-?\([^()]*\)|-?[A-Za-z0-9.]+)", power, tex)
    parts = re.split(r"(\\texttt\{[^}]*\}|\$[^$]*\$)", tex)        # leave code and what is math already
    for i in range(0, len(parts), 2):
        for pat, sym in MATH_WORDS:
            parts[i] = re.sub(rf"(?<![A-Za-z\\$-]){pat}(?![A-Za-z-])", lambda _, s=sym: f"${s}$", parts[i])
    for i in range(len(parts)):          # a folder path or a long name may break after / and _ (not inside math)
        if not parts[i].startswith("$"):
            parts[i] = re.sub(r"(/|\\_)(?=[A-Za-z0-9])", r"\1\\allowbreak{}", parts[i])
    return "".join(parts)


def _tex_chars(tex: str) -> str:
    for u in sorted(TEX_CHARS, key=len, reverse=True):
        tex = tex.replace(u, TEX_CHARS[u])
    return "".join(ch if ord(ch) < 128 else "?" for ch in tex)


def _tex_table(df, caption: str, label: str, column_format: str, longtable: bool = False) -> str:
    """A booktabs table (pandas' to_latex) whose cells and caption went through _tex_text (code spans in
    cells are shown plain)."""
    import pandas as pd
    flat = _tex_texts([str(v).replace("`", "") for v in df.to_numpy().ravel()])
    cells = pd.DataFrame([flat[i:i + df.shape[1]] for i in range(0, len(flat), df.shape[1])], columns=df.columns) \
        if df.shape[1] else df
    body = cells.to_latex(index=False, escape=False, column_format=column_format, longtable=longtable,
                          caption="\x01", label=label)
    return body.replace("\x01", _tex_text(caption))


SMALL = "\\footnotesize\\setlength{\\tabcolsep}{4pt}"   # the tables' type and column padding: they fit 6.5 in portrait


def _compact(text: str, n: int) -> str:
    """text cut at a word boundary to at most n characters (with an ellipsis), for a compact portrait column."""
    return text if len(text) <= n else text[:n].rsplit(" ", 1)[0].rstrip(",;:") + " ..."


def claims_tex(rows: list[claims.Row]) -> str:
    """The claims ledger as a compact LaTeX longtable (booktabs) that fits a 6.5 in portrait text width: each
    paper's own claims under a line that counts them by verdict, then the variants this lab added under theirs
    (claims.groups); each claim's id, the claim in a few words (cut only where no formula is cut), its verdict and
    key number with its bracket labelled (BRACKETS, in the caption).  The full ledger (what was measured, the
    folder, the paper's value) is claims-full.tex, and claims.csv."""
    import pandas as pd
    grouped = claims.groups(rows)
    ordered = [r for _, rs in grouped for r in rs]
    df = pd.DataFrame([{"claim": r.claim.id, "in a few words": short(r.claim.text, 110, " ..."), "verdict": r.verdict,
                        "key number": key_number(r)} for r in ordered], columns=["claim", "in a few words", "verdict",
                                                                                 "key number"])
    brackets = "; ".join(f"{k}: {v}" for k, v in BRACKETS.items() if k != UNLABELLED)
    body = _tex_table(df, "Claims ledger of jackson-lab: " + counts_text(rows) + f" Brackets: {brackets}. The full "
                          "ledger: claims-full.tex and claims.csv; the rules: docs/claims.md.", "tab:claims",
                      "".join(RAGGED + f"p{{{w}cm}}" for w in (2.9, 6.4, 1.8, 4.0)), longtable=True)
    head, rest = body.split("\\endlastfoot\n", 1)
    lines = rest.split("\n")
    out, i = [], 0
    for title, rs in grouped:           # a line naming the group and its counts above its rows
        out.append(f"\\multicolumn{{4}}{{@{{}}l}}{{\\textbf{{{_tex_text(title)}}}: {_tex_text(group_counts(rs))}}} \\\\")
        out += lines[i:i + len(rs)]
        i += len(rs)
    body = head + "\\endlastfoot\n" + "\n".join(out + lines[i:])
    return TEX_PREAMBLE + "{" + SMALL + "\n" + body + "}\n"


def claims_full_tex(rows: list[claims.Row]) -> str:
    """The whole claims ledger as one LaTeX longtable (booktabs), for a landscape page (geometry's landscape):
    the claim, where in the paper, the paper's value, what was measured, seeds, folder and verdict."""
    import pandas as pd
    df = pd.DataFrame([{"id": r.claim.id, "paper, where": f"{r.claim.paper}, {r.claim.where}",
                        "claim": r.claim.text, "paper's value": r.claim.paper_value, "measured": r.measured,
                        "seeds": "" if r.n_seeds is None else str(r.n_seeds),
                        "folder": r.folder or "none", "verdict": r.verdict} for r in rows])
    return TEX_PREAMBLE.replace("pdfLaTeX", "a landscape page (geometry); pdfLaTeX") + "{" + SMALL + "\n" + _tex_table(
        df, "Claims ledger of jackson-lab, in full: " + counts_text(rows) + " Rules: docs/claims.md.",
        "tab:claims-full", "".join(RAGGED + f"p{{{w}cm}}" if w else "r" for w in (2.4, 2.0, 3.6, 2.0, 5.9, 0, 2.4, 1.6)),
        longtable=True) + "}\n"


def tables_tex(secs) -> str:
    """Every run's headline table (the paper's numbers beside the measured ones, as in the page), one
    LaTeX table each, labelled tab:<folder>, fitting a 6.5 in portrait text width.  The command that made a
    table is in its folder's command.txt and on the page (a command line cannot break across lines)."""
    import pandas as pd
    out = [TEX_PREAMBLE]
    for e in headline_entries(secs):
        df = pd.DataFrame(headline_rows(e), columns=list(HEADLINE))
        label = "tab:" + re.sub(r"[^A-Za-z0-9]+", "-", e["folder"]).strip("-")
        out.append("{" + SMALL + "\n" + _tex_table(df, f"{e['title']}. Folder {e['folder']}/; seeds: "
                                                       f"{seeds_text(e['seeds'])}.", label,
                                                   "".join(RAGGED + f"p{{{w}cm}}" for w in (6.4, 1.8, 3.5, 3.4)))
                   + "}")
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
