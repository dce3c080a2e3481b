"""Whose claim it is and what its bracket means: the ledger counts each paper's own claims by verdict, then the
variants the lab added, in the headline, index.md, the first screen and claims.tex; the counts always sum; every
bracket says its kind; a family of rows judged on different folders says so; the first screen is one screen at
1280x1000 and cuts no claim mid-formula."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from jackson.lab_report import claims as ledger_mod
from jackson.lab_report.claims import CLAIMS, Row, counts, groups, ledger, note_families
from jackson.lab_report.entries import counts_text, interval_text, key_number
from jackson.lab_report.words import OPERATORS, short
from jackson.lab_report.html_page import glance_html
from jackson.lab_report.tables import claims_tex
from tools import needs, tool
from jackson.verdict import (BRACKETS, CI95, FAILED, HEAD_RANGE, LAB, ONE_SEED, PAIR_RANGE, PAPER, SEED_RANGE, STATUSES,
                             UNLABELLED, Claim, Outcome, bracket_of, seed_bootstrap, seed_range)

REPO_REPORTS = Path(__file__).resolve().parent.parent / "reports"


def claim(cid: str, paper: str = "P", origin: str = PAPER, kind: str = "rate", command: str = "sweep",
          params: tuple = (("alpha", 1.0),)) -> Claim:
    return Claim(cid, paper, "Sec. 1", f"claim {cid}", "", kind, command, params, origin=origin)


def row(c: Claim, verdict: str, folder: str = "f", others=(), lo=None, hi=None, bracket="") -> Row:
    out = Outcome(verdict, "m", 3, 1.0, lo, hi, "q", bracket=bracket) if verdict != FAILED else None
    return Row(c, verdict, "m" if verdict != FAILED else "failed: rule", 3, folder, out, list(others))


@pytest.fixture(scope="module")
def lab_rows() -> list[Row]:
    return ledger(REPO_REPORTS)                         # reads the committed folders, writes nothing


# ---- whose claim --------------------------------------------------------------------------------------------

def test_the_lab_files_mark_every_variant_they_added_and_only_those():
    added = [c.id for c in CLAIMS if "(this lab)" in c.where or "added by this lab" in c.where]
    assert [c.id for c in CLAIMS if c.origin == LAB] == added and len(added) == 14
    assert Counter((c.paper, c.origin) for c in CLAIMS) == {("Jiang & Li", PAPER): 21, ("Jiang & Li", LAB): 14,
                                                            ("Yang et al.", PAPER): 5}


def test_groups_put_each_papers_own_claims_first_then_the_labs_variants():
    rs = [row(claim("a1"), "reproduced"), row(claim("l1", origin=LAB), "partly"), row(claim("b1", "Q"), "untested"),
          row(claim("a2"), FAILED), row(claim("l2", "Q", LAB), "inconclusive")]
    got = groups(rs)
    assert [t for t, _ in got] == ["P", "Q", "this lab's variants of P", "this lab's variants of Q"]
    assert [[r.claim.id for r in g] for _, g in got] == [["a1", "a2"], ["b1"], ["l1"], ["l2"]]
    assert sorted(r.claim.id for _, g in got for r in g) == sorted(r.claim.id for r in rs)   # each row once


def _clauses(text: str) -> list[tuple[str, int, dict[str, int]]]:
    """counts_text parsed back: (title, N, {status: n})."""
    out = []
    for part in text.rstrip(".").split(" (")[0].split("; "):
        title, rest = part.split(": ", 1)
        total, tail = rest.split(" claim", 1)
        tail = tail.split(": ", 1)[1]
        out.append((title, int(total), {m.group(2): int(m.group(1)) for m in re.finditer(r"(\d+) ([a-z ]+?)(?:,|$)",
                                                                                          tail)}))
    return out


@pytest.mark.parametrize("seed", range(5))
def test_the_headline_counts_sum_whatever_the_statuses(seed):
    """Rows of every status (failed included), in two papers and the lab's: each clause's counts sum to its claims,
    the clauses to all rows; counts() over STATUSES sums to the rows."""
    import random
    rnd = random.Random(seed)
    rs = [row(claim(f"c{i}", rnd.choice("PQ"), rnd.choice([PAPER, LAB])), rnd.choice(STATUSES)) for i in range(40)]
    assert sum(counts(rs).values()) == len(rs) and set(counts(rs)) == set(STATUSES)
    parsed = _clauses(counts_text(rs))
    assert sum(n for _, n, _ in parsed) == len(rs) and f"({len(rs)} in all)" in counts_text(rs)
    for (title, n, by), (gtitle, grows) in zip(parsed, groups(rs)):
        assert title == gtitle and n == len(grows) and sum(by.values()) == n
        assert by == {v: k for v, k in Counter(r.verdict for r in grows).items()}


def test_the_lab_headline_counts_the_papers_claims_apart_from_the_labs(lab_rows):
    parsed = _clauses(counts_text(lab_rows))
    assert [t for t, _, _ in parsed] == ["Jiang & Li", "Yang et al.", "this lab's variants of Jiang & Li"]
    for title, n, by in parsed:
        mine = [r for r in lab_rows if (r.claim.paper if r.claim.origin == PAPER
                                        else f"this lab's variants of {r.claim.paper}") == title]
        assert n == len(mine) and by == dict(Counter(r.verdict for r in mine))


def test_index_md_opens_with_the_counts_by_paper(tmp_path, lab_rows):
    from jackson.lab_report.page import render_markdown
    md = render_markdown(tmp_path, [], [], lab_rows).splitlines()
    first = [l for l in md[:8] if l.startswith("- **")]
    assert [l.split("**")[1] for l in first] == [t for t, _ in groups(lab_rows)]
    for line, (_, rs) in zip(first, groups(lab_rows)):
        assert line.split("**: ")[1].startswith(f"{len(rs)} claims: ")


# ---- the first screen ---------------------------------------------------------------------------------------

def test_the_first_screen_counts_per_paper(tmp_path):
    rs = [row(claim("a1"), "reproduced"), row(claim("a2"), "reproduced"), row(claim("a3"), FAILED),
          row(claim("b1", "Q"), "partly"), row(claim("l1", origin=LAB), "not reproduced")]
    H = "\n".join(glance_html(tmp_path, rs, [], False))
    blocks = H.split('<h2 class="paper">')[1:]
    assert [b.split(" <span", 1)[0] for b in blocks] == ["P", "Q", "this lab&#x27;s variants of P"]
    assert '3 claims: <span class="badge reproduced">2 reproduced</span> <span class="badge failed">1 failed</span>' \
        in blocks[0]
    assert '1 claim: <span class="badge partly">1 partly</span>' in blocks[1] and "reproduced</span>" not in blocks[1]
    assert "(not claims of the paper)" in blocks[2] and '1 not reproduced</span>' in blocks[2]
    for b, ids in zip(blocks, (["a1", "a2", "a3"], ["b1"], ["l1"])):
        assert re.findall(r'<tr><td><a href="#claim-([^"]+)">', b) == ids


def test_a_short_text_never_cuts_a_formula():
    """Every claim text of the lab, at every length: the cut keeps parentheses whole and never falls beside an
    operator (m_h >= r, a / m_h^gamma + b, m_h^-(2 alpha - 1))."""
    for c in CLAIMS:
        for n in range(5, len(c.text) + 2):
            s = short(c.text, n)
            if s == c.text:
                continue
            kept = s[:-2]
            assert s.endswith(" …") and len(kept) <= n and c.text.startswith(kept)
            assert kept.count("(") == kept.count(")") and kept.count("[") == kept.count("]")
            nxt = c.text[len(kept):].lstrip(",;: ")
            assert kept.rstrip()[-1] not in OPERATORS and nxt[:1] not in OPERATORS, (c.id, n, s)
    assert short("the error decays like m_h^-(2 alpha - 1)", 35) == "the error decays like …"


PROBE = """<script>window.addEventListener('load', () => {
  const g = document.getElementById('at-a-glance');
  const rows = [...g.querySelectorAll('table.glance tr')].map(r => r.getBoundingClientRect().height);
  const tables = [...g.querySelectorAll('table.glance')].map(t => t.getBoundingClientRect().bottom);
  const out = {bottom: Math.max(...tables), legend: g.querySelector('p.legend').getBoundingClientRect().bottom,
               rows: rows, width: document.documentElement.scrollWidth, inner: window.innerWidth};
  const pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});</script>"""


@needs("chromium")
def test_the_first_screen_is_one_screen_at_1280_by_1000(tmp_path, lab_rows):
    """The lab's ledger, rendered, in headless Chromium at 1280x1000: every paper's block and the brackets' legend
    end above the fold, each claim on one line, nothing wider than the window."""
    from jackson.lab_report.html_page import render_html
    page = render_html(tmp_path, [], [], lab_rows).replace("</body>", PROBE + "</body>")
    (tmp_path / "index.html").write_text(page)
    p = subprocess.run([tool("chromium"), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        f"--user-data-dir={tmp_path}/profile", "--window-size=1280,1000", "--virtual-time-budget=5000",
                        "--dump-dom", (tmp_path / "index.html").as_uri()], capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="probe">(.*?)</pre>', p.stdout, re.S)
    assert m, p.stderr[-500:]
    got = json.loads(m.group(1).replace("&quot;", '"'))
    assert got["bottom"] <= 1000 and got["legend"] <= 1000, got
    body = got["rows"]
    assert max(body) <= 1.5 * min(body), body                    # no row wraps onto a second line
    assert got["width"] <= got["inner"]


# ---- brackets -----------------------------------------------------------------------------------------------

def test_the_helpers_label_their_brackets():
    assert seed_range([1.0, 2.0, 3.0], "x")[2].bracket == SEED_RANGE
    assert seed_bootstrap(["a", "b", "c"], lambda s: float(len(set(s))), "x")[2].bracket == CI95
    assert seed_range([1.0], "x")[2] == ONE_SEED
    lo, hi, iv = seed_range([1.0, 4.0], "x")
    assert Outcome("partly", "m", 2, 2.0, lo, hi, "q", interval=iv).bracket == SEED_RANGE
    assert Outcome("partly", "m", 1, 2.0, None, None, "q", interval=ONE_SEED).bracket == ""
    assert Outcome("partly", "m", 1, 2.0, 1.0, 3.0, "q", interval="anything", bracket="my own kind").bracket \
        == "my own kind"


@pytest.mark.parametrize("text, kind", [
    ("95% percentile bootstrap (1000 resamples of the seeds, then of the held-out blocks)", CI95),
    ("gamma +- 1.96 standard errors of the least-squares fit", CI95),
    ("95% normal interval of a difference of two binomial proportions", CI95),
    ("range over every (altered, original; transformer) pair of seeds (3 x 3)", PAIR_RANGE),
    ("range over the 16 heads of one model (min, max head exponent; 1 seed)", HEAD_RANGE),
    ("range over 3 seeds (min, max) of the per-seed mass", SEED_RANGE),
    ("something else", UNLABELLED),
])
def test_a_hand_written_interval_text_is_read_for_its_kind(text, kind):
    assert bracket_of(text, 0.0, 1.0) == kind and bracket_of(text, None, 1.0) == ""


def test_every_bracket_of_the_lab_ledger_is_labelled(lab_rows, tmp_path):
    with_bracket = [r for r in lab_rows if r.outcome and r.outcome.lo is not None and r.outcome.hi is not None]
    assert len(with_bracket) >= 30
    for r in with_bracket:
        assert r.outcome.bracket in BRACKETS and r.outcome.bracket != UNLABELLED, (r.claim.id, r.outcome.interval)
        assert key_number(r).endswith(interval_text(r.outcome)) and interval_text(r.outcome).endswith(r.outcome.bracket)
    tex = claims_tex(lab_rows)
    for m in re.finditer(r"\[[^\]]*?, [^\]]*?\] ([^\\&]+?) \\\\", tex):          # every [lo, hi] in claims.tex
        assert any(m.group(1).replace("\\%", "%").startswith(k) for k in BRACKETS), m.group(0)
    assert all(k.replace("%", "\\%") in tex for k in (CI95, SEED_RANGE))          # the caption says what they are


def test_claims_tex_counts_each_group_above_its_rows(lab_rows):
    tex = claims_tex(lab_rows)
    heads = re.findall(r"\\multicolumn\{4\}\{@\{\}l\}\{\\textbf\{(.*?)\}: (\d+) claims?: ", tex)
    assert [(t.replace("\\&", "&"), int(n)) for t, n in heads] == [(t, len(rs)) for t, rs in groups(lab_rows)]


# ---- families ----------------------------------------------------------------------------------------------

def test_a_family_judged_on_different_folders_says_so_in_the_row():
    a, b, c = (claim(f"R-{x}", params=(("alpha", x),)) for x in (0.55, 1.0, 1.5))
    other = claim("K", kind="knee", params=(("alpha", 1.0), ("rank", "2")))
    sin = claim("S", params=(("alpha", 1.0), ("ffn", "sin")))               # not a grid axis: its own family
    rs = [row(a, "inconclusive", "given", others=["full: not applicable, 3 seeds (flat fit)"]),
          row(b, "reproduced", "full"), row(c, "partly", "full"), row(other, "reproduced", "given"),
          row(sin, "reproduced", "sin")]
    note_families(rs)
    assert rs[0].measured == ("m; judged on given/, not on full/ like R-1.0, R-1.5 of its family (same rule and "
                              "command): there: not applicable, 3 seeds (flat fit)")
    assert [r.measured for r in rs[1:]] == ["m"] * 4
    lone = [row(a, "inconclusive", "given"), row(b, "reproduced", "full"), row(c, "partly", "full")]
    note_families(lone)
    assert lone[0].measured.endswith("full/ does not hold its quantities")


def test_the_lab_ledger_says_why_jl_rate_a055_reads_another_folder(lab_rows):
    by = {r.claim.id: r for r in lab_rows}
    peers = {by[i].folder for i in ("JL-rate-a1", "JL-rate-a1.5")}
    if len(peers) == 1 and by["JL-rate-a0.55"].folder not in peers:
        (main,) = peers
        assert f"not on {main}/ like JL-rate-a1, JL-rate-a1.5" in by["JL-rate-a0.55"].measured
    for r in lab_rows:                    # a row whose family reads one folder carries no note
        fam = [s for s in lab_rows if (s.claim.kind, s.claim.command) == (r.claim.kind, r.claim.command)
               and {k: v for k, v in s.claim.params if k not in ("alpha", "rank")}
               == {k: v for k, v in r.claim.params if k not in ("alpha", "rank")} and s.folder]
        if len({s.folder for s in fam}) == 1:
            assert "of its family" not in r.measured


def test_latex_cells_are_escaped_in_one_call_whatever_their_number(monkeypatch):
    """A claims.tex of thousands of claims once cost one pandas to_latex call per cell (milliseconds each): the
    cells of a table are escaped in one call, to the same text as one by one."""
    import pandas as pd

    from jackson.lab_report import tables
    texts = [c.text for c in CLAIMS] + ["a & b_c `code` 50%", "", "x  ", "line\nbreak", "m_h^-(2 alpha - 1) ~0 {}"]
    one_by_one = [tables._tex_texts([t])[0] for t in texts]
    calls = []
    real = pd.DataFrame.to_latex
    monkeypatch.setattr(pd.DataFrame, "to_latex", lambda self, *a, **k: calls.append(len(self)) or real(self, *a, **k))
    assert tables._tex_texts(texts) == one_by_one and calls == [len(texts)]
    assert one_by_one[-2] == "line break" and "\\texttt{code}" in one_by_one[-5] and one_by_one[-4] == ""
    n_calls = []
    for n in (5, 500):                           # as many calls for 500 claims as for 5
        calls.clear()
        tables.claims_tex([row(claim(f"c{i}"), "reproduced") for i in range(n)])
        n_calls.append(len(calls))
    assert n_calls[0] == n_calls[1] <= 5


def test_the_counts_say_how_many_verdicts_read_unchecked_fits(tmp_path):
    """A row whose measured text carries the doubling check's note counts as judged on fits not checked by training
    on, whatever its verdict; the per-paper counts (index.md, the page's first screen) say how many, and say
    nothing when none (the control)."""
    from jackson.lab_report.claims import unchecked
    from jackson.lab_report.entries import unchecked_text
    from jackson.lab_report.page import render_markdown
    from jackson.verdict import NOT_CHECKED_NOTE
    rs = [row(claim("a1"), "reproduced"), row(claim("a2"), "inconclusive"), row(claim("a3"), "reproduced")]
    assert unchecked(rs) == 0 and unchecked_text(rs) == ""
    assert 'class="unchecked"' not in "\n".join(glance_html(tmp_path, rs, [], False))
    for r in rs[:2]:
        r.measured = f"e(1)/e(2) = 133; {NOT_CHECKED_NOTE}"
    assert unchecked(rs) == 2 and unchecked_text(rs) == "2 of them judged on fits not checked by training on"
    H = "\n".join(glance_html(tmp_path, rs, [], False))
    assert '<span class="unchecked">2 of them judged on fits not checked by training on</span>' in H
    md = render_markdown(tmp_path, [], [], rs)
    assert "- **P**: 3 claims: 2 reproduced, 1 inconclusive; 2 of them judged on fits not checked by training on" in md


def test_the_committed_ledger_counts_its_unchecked_verdicts(lab_rows):
    from jackson.lab_report.claims import unchecked
    from jackson.verdict import NOT_CHECKED_NOTE
    k = unchecked(lab_rows)
    assert k == sum(NOT_CHECKED_NOTE in r.measured for r in lab_rows) and 0 < k < len(lab_rows)
    assert all(r.claim.kind in ("rate", "knee") for r in lab_rows if NOT_CHECKED_NOTE in r.measured)
