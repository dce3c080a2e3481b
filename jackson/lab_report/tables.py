"""The report's tables for a paper: the claims ledger as a LaTeX longtable (claims.tex), every run's
headline table in LaTeX (tables.tex) and as one long tidy CSV (tables.csv).  ASCII LaTeX (TEX_CHARS turns
the lab's Unicode into LaTeX) that pdfLaTeX compiles."""
from __future__ import annotations

import csv
import io
import math
import re
from collections import Counter

from . import claims
from ..verdict import BRACKETS, UNLABELLED
from .entries import (HEADLINE, counts_text, group_counts, headline_entries, headline_rows, interval_of, key_number,
                      seeds_text)
from .words import short


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


def _in_math(tex: str, fn) -> str:
    """Apply `fn` to the parts of `tex` outside math ($...$) and \texttt{...}."""
    parts = re.split(r"(\\texttt\{[^}]*\}|\$[^$]*\$)", tex)
    return "".join(fn(x) if i % 2 == 0 else x for i, x in enumerate(parts))


NUMBER = r"(?<![\w.$\\/-])([+-]?)(\d+(?:\.\d+)?)(?:e([+-]?\d+))?(x\b)?(?![\w.])"


def _number(m: re.Match, every: bool) -> str:
    """A number as the paper prints it: a real minus sign, 6e-05 as 6 x 10^-5, a ratio 3x as 3 times; in running
    text (not `every`) only those, so "Theorem 4.1" stays text."""
    sign, digits, exp, times = m.groups()
    if sign == "-" and m.start() > 0 and m.string[m.start() - 1].isalnum():
        return m.group(0)                           # a hyphen between words or a range (a-b), not a sign
    if not (every or sign or exp is not None or times):
        return m.group(0)
    body = f"{'-' if sign == '-' else sign}{digits}"
    if exp is not None:
        body += rf"\times 10^{{{int(exp)}}}"
    return "$" + body + (r"\times" if times else "") + "$"


def _paper_tex(tex: str, numbers: bool = False) -> str:
    """Escaped LaTeX (`_tex_text`) in a paper's notation: signed numbers in math mode with real minus signs
    (-0.61 as $-0.61$), 6e-05 as $6\times 10^{-5}$, a ratio 3x as $3\times$ (every number where `numbers`: a
    column of numbers), ~0 as $\approx 0$ (not a tilde accent), -(2 alpha - 1), s != t, rank-m_h, inf."""
    tex = tex.replace(r"\textasciitilde ", "~").replace(r"\textasciitilde{}", "~")
    tex = re.sub(r"~\s*(?=\d)", r"$\\approx$ ", tex)
    tex = re.sub(r"([+-]?)\((\d+) \$\\(alpha|hat\\alpha)\$ - (\d+)\)", lambda m: f"${m[1]}({m[2]}\\{m[3]} - {m[4]})$", tex)
    tex = tex.replace(r"s $\ne$ t", r"$s \ne t$")
    tex = re.sub(r"rank-m\\_(?:\\allowbreak\{\})?h\b", lambda _: r"rank-$m_h$", tex)
    return _in_math(tex, lambda t: re.sub(r"\binf\b", r"$\\infty$", re.sub(NUMBER, lambda m: _number(m, numbers), t)))


COMMANDS = ("jackson-sweep", "rnn-compare", "rnn-mixing-spectrum", "cot-dp", "vit-probe", "jackson-tasks")


def caption_words(e: dict, heading: str) -> str:
    """A headline table's caption in words: what the run measured (its title without the command's name, the
    folder's name or option spellings; a kernel written as a formula, not code), under the section's heading
    where the title alone would not say it, and its seeds.  The folder is the table's label."""
    t = e["title"].removeprefix("[superseded] ").strip()
    name = e["folder"].rstrip("/").rsplit("/", 1)[-1]
    t = re.sub(rf"\s*\((?:{re.escape(e['folder'])}|{re.escape(name)})\)$", "", t)
    prog = next((c for c in COMMANDS if t.startswith(c + ": ")), None)
    if prog:
        t = f"{heading}: {t[len(prog) + 2:]}"
    t = re.sub(r"--([a-z][\w-]*)", r"\1", t).replace("table(s)", "tables")
    t = re.sub(r"\b(minimum|maximum)\(", lambda m: m[1][:3] + "(", t)
    t = re.sub(r"(\d)\*(?=[A-Za-z(])", r"\1 ", t).replace("**", "^").replace("*", r" · ")
    t = re.sub(r"(?<![\w.])1 ([uv])\b", r"\1", t)                   # 1 u + 1 v: u + v
    t = re.sub(r"\balpha ([\d.]+(?:, [\d.]+)*)", r"alpha = \1", t)
    return f"{t}. Seeds: {seeds_text(e['seeds'])}."


def _current(secs, rows) -> tuple[list, list]:
    """(current, appendix) headline entries: current ones are read by a claim of the ledger and not superseded;
    the appendix holds the superseded and the exploratory ones (no claim reads them), with why."""
    read = {r.folder for r in rows or () if r.folder}
    cur, rest = [], []
    for _, heading, _, es in secs:
        for e in es:
            if e["paper"]:
                (cur if e["folder"] in read and not e.get("superseded") else rest).append((heading, e))
    return cur, rest


def _twins(entries) -> set[str]:
    """The folders whose caption in words is another table's too: their captions name the run as well."""
    n = Counter(caption_words(e, h) for h, e in entries)
    return {e["folder"] for h, e in entries if n[caption_words(e, h)] > 1}


def _one_table(heading: str, e: dict, why: str = "", twin: set = frozenset()) -> str:
    import pandas as pd
    df = pd.DataFrame(headline_rows(e), columns=list(HEADLINE))
    label = "tab:" + re.sub(r"[^A-Za-z0-9]+", "-", e["folder"]).strip("-")
    cells = df.apply(lambda col: col.map(lambda v: _paper_tex(_tex_text(str(v).replace("`", "")),
                                                            numbers=col.name != "quantity")))
    body = cells.to_latex(index=False, escape=False, label=label, caption="\x01",
                          column_format="".join(RAGGED + f"p{{{w}cm}}" for w in (6.4, 1.8, 3.5, 3.4)))
    words = caption_words(e, heading)
    if e["folder"] in twin:          # two runs alike in words (e.g. another budget): the run's name tells them apart
        words += f" Run {e['folder']}."
    caption = _paper_tex(_tex_text(words)) + (f" {why}" if why else "")
    return "{" + SMALL + "\n" + body.replace("\x01", caption) + "}"


def tables_tex(secs, rows=None) -> str:
    """The headline tables a paper would print (the paper's numbers beside the measured ones, as in the page):
    one LaTeX table per run folder that a claim of the ledger reads and that is not superseded, labelled
    tab:<folder>, captioned in words, numbers in math mode; fitting a 6.5 in portrait text width.  Without a
    ledger (rows None) every current run's table.  The others are in `tables_appendix_tex`."""
    cur, rest = _current(secs, rows) if rows is not None else (
        [(h, e) for _, h, _, es in secs for e in es if e["paper"] and not e.get("superseded")], [])
    return "\n".join([TEX_PREAMBLE.rstrip("\n") + "\n% The other runs' tables (superseded, exploratory): "
                      "tables-appendix.tex.\n"] + [_one_table(h, e, twin=_twins(cur)) for h, e in cur])


def tables_appendix_tex(secs, rows) -> str:
    """tables-appendix.tex: the headline tables that tables.tex leaves out, each saying why: superseded runs
    (SUPERSEDED.md in their folder) and exploratory ones (no claim of the ledger reads them)."""
    _, rest = _current(secs, rows)
    # an appendix on its own pages: \clearpage sets the tables still waiting first.  Input after claims.tex and
    # tables.tex without it, the queue of floats outgrew pdfLaTeX ("Output loop---100 consecutive dead cycles",
    # 2026-11-28, at 50 tables)
    out = [TEX_PREAMBLE.rstrip("\n") + "\n% The runs behind the ledger's claims: tables.tex.\n\\clearpage\n"]
    twins = _twins(rest)
    for h, e in rest:
        why = ("Superseded: a later run replaced it." if e.get("superseded")
               else "Exploratory: no claim of the ledger reads it.")
        out.append(_one_table(h, e, why, twins))
    return "\n".join(out)


TABLES_CSV_COLUMNS = ("folder", "title", "row", "column", "value", "number", "lo", "hi")


def _full(v) -> str:
    """A number at full precision (repr), '' for anything else (text, None, a bool, inf, nan)."""
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    return repr(float(v)) if ok else ""


def tables_csv(secs, rows=None) -> str:
    """tables.csv: every headline table of tables.tex and then of tables-appendix.tex (the runs' order of the
    page without a ledger), long and tidy: one row per cell (the run folder, the
    table's title, its row from 1, the column, the cell as shown), with the number behind a paper or
    measured cell at full precision and, for a measured cell with an interval, its ends (lo, hi)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(TABLES_CSV_COLUMNS)
    cur, rest = _current(secs, rows) if rows is not None else ([(None, e) for e in headline_entries(secs)], [])
    for _, e in cur + rest:
        for i, (p, row) in enumerate(zip(e["paper"], headline_rows(e)), 1):
            iv = interval_of(p) if "measured" in p else None
            for col, text in row.items():
                w.writerow([e["folder"], e["title"], i, col, text,
                            _full(p.get(col)) if col in ("paper", "measured") else "",
                            *((_full(iv[0]), _full(iv[1])) if iv and col == "measured" else ("", ""))])
    return buf.getvalue()
