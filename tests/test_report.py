"""jackson-report (jackson/lab_report/page.py): the lab report built from small fixture result folders (each
with the report.json its experiment writes: jackson-sweep and rnn-compare through their own writers), the HTML checked with a parser (and headless Chromium when
installed), one-line usage errors."""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jackson.lab_report.claims import VERDICTS
from jackson.lab_report.check import browser_check, browser_report, check_html
from jackson.lab_report.page import ReportConfig, build_report, main
from conftest import png, reports_copy_ignore
from tools import needs, tool

REPO_REPORTS = Path(__file__).resolve().parent.parent / "reports"



def write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))


@pytest.fixture
def root(tmp_path) -> Path:
    """reports/ with a jackson sweep, an rnn-compare run, a tasks run (hook), an unknown section, debris."""
    r = tmp_path / "reports"
    j = r / "jackson" / "fig1"
    write_json(j / "summary.json", {"command": "jackson-sweep --alpha 1.5 --rank 2,inf", "fit_range": [1, 8], "targets": [
        {"alpha": 1.5, "rank": "2", "predicted_exponent": -2.0, "exponents": {},
         "checks": {"knee_drop": 12.0, "knee_ok": True, "drop_r_to_r_plus_1": 1.5, "optimisation_outliers": [5]}},
        {"alpha": 1.5, "rank": "inf", "predicted_exponent": -2.0,
         "exponents": {"test": {"slope": -1.0}, "oracle_self_exact": {"slope": -1.9}},
         "checks": {"max_trained_over_oracle_mh_le_8": 0.5, "within_2x_ok": True, "optimisation_outliers": []}}]})
    write_json(j / "config.json", {"seeds": [0, 1], "tau": 16, "n_train": 100, "n_test": 64, "m_h": [1, 2, 3]})
    (j / "command.txt").write_text("jackson-sweep --alpha 1.5 --rank 2,inf --out reports/jackson/fig1\n")
    (j / "summary.md").write_text("# summary\n")
    png(j / "error_vs_mh.png")
    png(j / "learned_spectrum.png")                      # loss_curves.png is missing on purpose
    png(j / "cells" / "x" / "stray.png")
    write_json(j / "cells" / "x" / "report.json", {"title": "a cell, never a run"})

    c = r / "rnn_compare" / "default"
    write_json(c / "summary.json", {"command": "rnn-compare", "tables": {"ordering": {
        "rnn": {"original": 1e-7, "altered": 1e-2, "ratio": 1e5, "paper_ratio": 3.5e5},
        "transformer": {"original": 2e-5, "altered": 2.4e-5, "ratio": 1.2, "paper_ratio": 1.15}}}})
    write_json(c / "config.json", {"seeds": 3, "tau": 32, "n_train": 8192, "n_test": 2048, "swap": 10,
                                   "filter_length": 5, "mix_direction": "future", "table": "ordering"})
    (c / "command.txt").write_text("rnn-compare --out reports/rnn_compare/default\n")
    (c / "tables_long.csv").write_text("kernel,alteration,model,mean,std,count,paper\n"
                                       "exp,original,rnn,2e-07,1e-08,3,1e-07\nexp,permuted,rnn,0.01,0.001,3,0.0357\n")
    png(c / "mse_bars.png")
    from jackson.rate_sweep.report import write_report_json as sweep_hook        # what run_sweep writes at its end
    from rnn_compare.report import write_report_json as compare_hook   # what run_compare writes at its end
    sweep_hook(j)
    compare_hook(c)

    t = r / "tasks" / "nearest-point"
    png(t / "attention.png", (10, 200, 10))
    png(t / "fof.png")
    write_json(t / "report.json", {
        "title": "Nearest point to a set", "section": "tasks", "data": "synthetic points", "seeds": [0, 1, 2],
        "command": "jackson-tasks nearest-point",
        "figures": [{"file": "attention.png", "caption": "Attention of seed 0. Command: `jackson-tasks nearest-point`."},
                    {"file": "fof.png", "caption": "F_hat∘f_hat against F∘f <identity> & more"}],
        "paper": [{"quantity": "mean A on the nearest point", "paper": 1.0, "measured": 0.9, "compare": "difference"},
                  {"quantity": "a value the paper states in words", "paper": "identity", "measured": 0.01}],
        "text": "Held-out MSE `0.003`."})
    png(r / "zeta_extra" / "run" / "p.png")
    write_json(r / "zeta_extra" / "run" / "report.json", {"title": "Something new", "section": "zeta_extra",
                                                        "figures": [{"file": "p.png", "caption": "a picture"}]})
    (r / "notes.md").write_text("# notes\n")
    return r


def md_images(md: str) -> list[str]:
    return re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)


def test_index_lists_every_section_and_every_image_exists(root):
    res = build_report(ReportConfig(root=str(root)))
    md = (root / "index.md").read_text()
    heads = re.findall(r"^## (\d+)\. (.+)$", md, re.M)
    assert [h[1].split(":")[0].split(" (")[0] for h in heads][:5] == [
        "Jackson-type rate", "RNN vs Transformer", "ViT attention probe", "Appendix B.1 worked examples",
        "Efficient Transformers on CoT DP tasks"]
    assert heads[5][1] == "zeta_extra"                               # unknown sections at the end
    assert "No results yet. Produce them with `vit-probe spectra" in md
    assert "No results yet. Produce them with `cot-dp sweep" in md
    for title in ("jackson-sweep: alpha 1.5; rank 2, inf (fig1)", "rnn-compare: ordering table(s)",
                  "Nearest point to a set", "Something new"):
        assert title in md
    imgs = md_images(md)
    assert len(imgs) == 6 and all((root / p).is_file() for p in imgs)
    assert "cells" not in " ".join(imgs) and "a cell, never a run" not in md
    assert "figure missing or unreadable: `jackson/fig1/loss_curves.png`" in md and res["missing"] == ["jackson/fig1/loss_curves.png"]
    assert dict(res["sections"]) == {"jackson": 1, "rnn_compare": 1, "vit_probe": 0, "tasks": 1, "cot_dp": 0,
                                     "zeta_extra": 1}
    assert "[notes.md](notes.md)" in md and "[jackson/fig1/summary.md](jackson/fig1/summary.md)" in md


def test_captions_and_paper_values(root):
    build_report(ReportConfig(root=str(root)))
    md = (root / "index.md").read_text()
    caps = re.findall(r"^\*Figure [\d.]+\.\* (.+)$", md, re.M)
    assert len(caps) == 6
    sweep = [c for c in caps if "Theorem 4.1" in c][0]
    assert "Held-out MSE" in sweep and "Seeds: 2 (0, 1)" in sweep and \
        "Command: `jackson-sweep --alpha 1.5 --rank 2,inf --out reports/jackson/fig1`" in sweep
    bars = [c for c in caps if "Tables 2-3" in c][0]
    assert "Seeds: 3 (model inits)" in bars and "`rnn-compare --out reports/rnn_compare/default`" in bars
    fof = [c for c in caps if c.startswith("F_hat")][0]          # hook caption without them gets data/seeds/command
    assert "Data: synthetic points." in fof and "Seeds: 3 (0, 1, 2)." in fof and "Command: `jackson-tasks nearest-point`" in fof
    att = [c for c in caps if c.startswith("Attention of seed 0")][0]
    assert att.count("jackson-tasks nearest-point") == 1              # already said: not repeated
    rows = {r[0].strip(): r[1:] for r in re.findall(r"^\| (.+?) \| (.+?) \| (.+?) \| (.+?) \|$", md, re.M)}
    # computed here by hand: exponents by difference (-1 - -2, -1.9 - -2), errors by ratio (2e-7 / 1e-7,
    # 1e5 / 3.5e5), an attention weight by difference as its row declares (0.9 - 1)
    assert rows["alpha = 1.5, rank inf: exponent of held-out MSE in m_h (fit over m_h 1..8; Theorem 4.1 "
                "predicts -(2 alpha - 1))"] == ("-2", "-1", "+1 (difference)")
    assert rows["alpha = 1.5, rank inf: exponent of the rank-m_h oracle, s != t part"] == ("-2", "-1.9", "+0.1 (difference)")
    assert rows["rnn, exp kernel, original: held-out MSE (Table 2)"] == ("1e-07", "2e-07", "2x")
    assert rows["ordering: rnn, altered / original MSE"] == ("3.5e+05", "1e+05", "0.286x")
    assert rows["mean A on the nearest point"] == ("1", "0.9", "-0.1 (difference)")
    assert rows["a value the paper states in words"] == ("identity", "0.01", "—")
    assert "alpha 1.5, rank 2: held-out MSE drops 12x from m_h = 1 to 2" in md and "m_h = 5" in md


def test_html_links_its_figures_as_files_beside_it(root):
    """By default the page names each figure by its path relative to the page (loaded lazily): it stays small,
    and the checker follows each path to an image file under the root."""
    res = build_report(ReportConfig(root=str(root)))
    page = (root / "index.html").read_text()
    problems, n = check_html(page, root)
    assert problems == [] and n - page.count('<img class="thumb" ') == res["images"] == 6
    srcs = re.findall(r'<img src="([^"]+)" alt="[^"]*" loading="lazy">', page)
    assert srcs == md_images((root / "index.md").read_text())               # same files, same order as index.md
    assert "data:image" not in page and len(page.encode()) < 100_000
    assert "&lt;identity&gt; &amp; more" in page and "<code>0.003</code>" in page


def test_single_file_html_embeds_every_figure(root):
    """--single-file: one offline file that travels alone, each figure's bytes inline."""
    res = build_report(ReportConfig(root=str(root), single_file=True))
    page = (root / "index.html").read_text()
    problems, n = check_html(page)
    assert problems == [] and n - page.count('<img class="thumb" ') == res["images"] == 6
    srcs = re.findall(r'<img src="([^"]+)"', page)
    md = (root / "index.md").read_text()
    for src, rel in zip(srcs, md_images(md)):                        # same images, same order, bytes intact
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]) == (root / rel).read_bytes()
    assert 'src="http' not in page and 'src="jackson' not in page and 'loading="lazy"' not in page


def test_the_page_opens_on_the_answer(root):
    """The first screen: the verdict counts, one compact row per claim whose id opens its full row, then the
    headline figures as a grid whose cells open their runs; the full ledger is one click away (collapsed)."""
    res = build_report(ReportConfig(root=str(root)))
    page = (root / "index.html").read_text()
    body = page.split("<body>", 1)[1]
    assert body.index('id="at-a-glance"') < body.index("<details><summary>The claims ledger in full") \
        < body.index('<section id="jackson">')
    glance = body.split('id="at-a-glance"', 1)[1].split("</section>", 1)[0]
    ids = re.findall(r'<tr><td><a href="#claim-([^"]+)">', glance)
    papers_first = [r for r in res["claims"] if r.claim.origin == "paper"] + [r for r in res["claims"]
                                                                             if r.claim.origin == "lab"]
    assert ids == [r.claim.id for r in papers_first]                           # the papers' own claims first
    assert all(f'<tr id="claim-{i}">' in page for i in ids)                    # each id opens its full row
    for cell in re.findall(r'<a class="cell" href="#([^"]+)">', glance):
        assert f'<h3 id="{cell}">' in page                                     # each thumbnail opens its run
    blocks = glance.split('<h2 class="paper">')[1:]                             # one block per paper, then the lab's
    assert len(blocks) == len({(r.claim.origin, r.claim.paper) for r in res["claims"]})
    for block in blocks:
        mine = [r for r in res["claims"] if r.claim.id in re.findall(r'<tr><td><a href="#claim-([^"]+)">', block)]
        n = {v: sum(r.verdict == v for r in mine) for v in VERDICTS}
        for v, k in n.items():
            assert (f'<span class="badge {v.replace(" ", "-")}">{k} {v}</span>' in block) == (k > 0)


def test_superseded_runs_go_to_an_appendix(root):
    (root / "jackson" / "fig1" / "SUPERSEDED.md").write_text("Replaced by a later run.\n")
    build_report(ReportConfig(root=str(root)))
    page = (root / "index.html").read_text()
    assert page.index('<section id="appendix">') > page.index('<section id="cot-dp">')
    appendix = page.split('<section id="appendix">', 1)[1]
    assert "[superseded]" in appendix and "[superseded]" not in page.split('<section id="appendix">', 1)[0]


def test_the_page_carries_its_summaries_and_notes_and_no_link_out(root):
    """index.html travels alone: each run's summary.md and each note are rendered inside it (collapsed),
    a link between them points inside the page, a link to any other file becomes its path as text, and
    markdown text that looks like HTML stays text."""
    j = root / "jackson" / "fig1"
    (j / "summary.md").write_text("# Sweep summary\n\n| m_h | MSE |\n|---|---|\n| 1 | 0.5 |\n\n"
                                  "See [the notes](../../notes.md), [rows](results.csv), [top](#sweep-summary) and "
                                  "[the paper](https://arxiv.org/abs/2306.00000); cells are `a<alpha>_s<seed>`, "
                                  "a <seed> placeholder.\n")
    build_report(ReportConfig(root=str(root), single_file=True))
    page = (root / "index.html").read_text()
    assert check_html(page)[0] == []
    hrefs = re.findall(r'<a href="([^"]*)"', page)
    assert hrefs and all(h.startswith(("#", "https:")) for h in hrefs), [h for h in hrefs if not h.startswith("#")]
    assert re.search(r'<details id="doc-jackson-fig1-summary-md"><summary>jackson/fig1/summary.md</summary>', page)
    assert '<details id="doc-notes-md">' in page
    block = page.split('<details id="doc-jackson-fig1-summary-md">', 1)[1].split("</details>", 1)[0]
    assert "<th>m_h</th>" in block and "<td>0.5</td>" in block                  # the table is a table
    assert '<a href="#doc-notes-md">the notes</a>' in block                      # doc -> doc: inside the page
    assert "rows (<code>jackson/fig1/results.csv</code> beside this page)" in block
    assert 'id="doc-jackson-fig1-summary-md--sweep-summary"' in block            # heading ids, prefixed
    assert 'href="#doc-jackson-fig1-summary-md--sweep-summary"' in block
    assert '<a href="https://arxiv.org/abs/2306.00000">' in block
    assert "a &lt;seed&gt; placeholder" in block and "<code>a&lt;alpha&gt;_s&lt;seed&gt;</code>" in block
    md = (root / "index.md").read_text()
    assert "[jackson/fig1/summary.md](jackson/fig1/summary.md)" in md and "[notes.md](notes.md)" in md
    bad = page.replace('<a href="#doc-notes-md">', '<a href="notes.md">', 1)
    assert any("breaks when the page travels alone" in x for x in check_html(bad)[0])


def test_build_is_deterministic(root):
    build_report(ReportConfig(root=str(root)))
    a = (root / "index.md").read_bytes(), (root / "index.html").read_bytes()
    build_report(ReportConfig(root=str(root)))
    assert ((root / "index.md").read_bytes(), (root / "index.html").read_bytes()) == a


def test_checker_catches_broken_pages(tmp_path):
    good = base64.b64encode(png(tmp_path / "a.png")).decode()
    assert check_html(f'<html><body><p>x</p><img src="data:image/png;base64,{good}"></body></html>') == ([], 1)
    cases = {"<html><body><p>x</body></html>": "closes <p>",
             "<html><body><div>": "never closed",
             '<html><body><img src="a.png"></body></html>': "not an inline base64 image",
             '<html><body><img src="data:image/png;base64,@@@"></body></html>': "not an inline base64 image",
             f'<html><body><img src="data:image/png;base64,{base64.b64encode(b"not a png at all!").decode()}"></body></html>':
                 "not a image/png"}
    for page, why in cases.items():
        problems, _ = check_html(page)
        assert problems and why in " ".join(problems), (page[:60], problems)
    (tmp_path / "notes.txt").write_text("not an image")
    assert check_html('<html><body><img src="a.png"></body></html>', tmp_path) == ([], 1)    # a file beside it
    for src, why in (("b.png", "no such file beside the page"), ("notes.txt", "the file is not an image"),
                     ("../a.png", "is not a path inside the report's folder"),
                     ("/etc/passwd", "is not a path inside the report's folder"),
                     ("file:///etc/passwd", "is not a path inside the report's folder")):
        problems, _ = check_html(f'<html><body><img src="{src}"></body></html>', tmp_path)
        assert len(problems) == 1 and why in problems[0], (src, problems)


needs_chromium = needs("chromium")


def _chromium() -> str:
    return tool("chromium")


def _embedded_pngs(page: str) -> list[str]:
    return re.findall(r'src="data:image/png;base64,([^"]+)"', page)


@pytest.mark.slow
@needs_chromium
def test_html_loads_in_headless_chromium(root):
    """Every image decodes (linked files, the default), every #link has its element, no console error: in a real
    browser."""
    build_report(ReportConfig(root=str(root)))
    page = (root / "index.html").read_text()
    r = browser_report(root / "index.html", _chromium())
    assert r["images"] == page.count("<img ") >= 5 and r["broken"] == []
    assert r["links"] >= 1 and r["dangling"] == [] and r["errors"] == []
    assert browser_check(root / "index.html", _chromium(), alone=False) is None    # links to files beside it
    assert "links lead out of the page" in browser_check(root / "index.html", _chromium())
    build_report(ReportConfig(root=str(root), single_file=True))               # the page that travels alone
    assert browser_check(root / "index.html", _chromium()) is None


@pytest.mark.slow
@needs_chromium
def test_browser_check_fails_on_one_broken_image(root):
    """A PNG whose header is right and whose body is junk passes the parser check (magic bytes) but not
    the browser: the check names it."""
    build_report(ReportConfig(root=str(root), single_file=True))
    page = (root / "index.html").read_text()
    good = _embedded_pngs(page)
    junk = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(range(256)) * 4).decode()
    second = list(re.finditer(r'src="data:image/png;base64,([^"]+)"', page))[1].span(1)   # the 2nd <img>
    broken = page[:second[0]] + junk + page[second[1]:]
    assert check_html(broken)[0] == []                      # the parser check cannot tell
    (root / "index.html").write_text(broken)
    r = browser_report(root / "index.html", _chromium())
    assert len(r["broken"]) == 1 and r["broken"][0].startswith("image #2 ") and r["images"] == len(good)
    why = browser_check(root / "index.html", _chromium())
    assert why and f"1 of {len(good)} images did not decode" in why


@pytest.mark.slow
@needs_chromium
def test_browser_check_fails_on_a_dangling_link_and_a_console_error(tmp_path):
    good = base64.b64encode(png(tmp_path / "a.png")).decode()
    page = tmp_path / "p.html"
    page.write_text(f'<!doctype html><html><head><meta charset="utf-8"></head><body>'
                    f'<a href="#here">ok</a><a href="#nowhere">bad</a><h2 id="here">x</h2>'
                    f'<img alt="dot" src="data:image/png;base64,{good}"><img alt="gone" src="missing.png">'
                    f'<script>console.error("boom")</script></body></html>')
    r = browser_report(page, _chromium())
    assert r["links"] == 2 and r["dangling"] == ["#nowhere"]
    assert r["images"] == 2 and len(r["broken"]) == 1 and r["broken"][0].startswith("image #2 'gone'")
    assert any("boom" in e for e in r["errors"]) and any("missing.png" in e for e in r["errors"])
    why = browser_check(page, _chromium())
    assert "internal links lead nowhere: #nowhere" in why and "console errors" in why


@pytest.mark.slow
@needs_chromium
def test_browser_check_fails_on_a_link_out_of_the_page(tmp_path):
    """A link to a file beside the page breaks when the page is sent alone: the browser check names it
    (links to the web and inside the page pass)."""
    page = tmp_path / "p.html"
    (tmp_path / "summary.md").write_text("# here now, gone when the page travels\n")
    page.write_text('<!doctype html><html><head><meta charset="utf-8"></head><body><h2 id="a">a</h2>'
                    '<a href="#a">in</a><a href="https://example.org/">web</a><a href="summary.md">out</a>'
                    '</body></html>')
    r = browser_report(page, _chromium())
    assert r["outside"] == ["summary.md"] and r["dangling"] == []
    assert "1 links lead out of the page" in browser_check(page, _chromium())


@pytest.mark.slow
@needs_chromium
def test_the_committed_results_page_loads_clean_in_headless_chromium(tmp_path):
    """reports/index.html as jackson-report builds it from the committed folders (the page people open): every
    figure decodes, links resolve, no error."""
    dst = tmp_path / "reports"
    shutil.copytree(REPO_REPORTS, dst, ignore=reports_copy_ignore("index.*", "*.tex", "tables.csv"))
    build_report(ReportConfig(root=str(dst)))
    page = (dst / "index.html").read_text()
    r = browser_report(dst / "index.html", _chromium())
    assert r["images"] == page.count("<img ") > 0
    assert (r["broken"], r["dangling"], r["errors"]) == ([], [], [])
    assert browser_check(dst / "index.html", _chromium(), alone=False) is None     # every link is a file beside it


def test_report_of_the_committed_results(tmp_path):
    """The real reports/ folder (without checkpoints and the cells' files), copied: every image it refers to exists."""
    dst = tmp_path / "reports"
    shutil.copytree(REPO_REPORTS, dst, ignore=reports_copy_ignore("index.*", "*.tex", "tables.csv"))
    res = build_report(ReportConfig(root=str(dst)))
    md = (dst / "index.md").read_text()
    assert all((dst / p).is_file() for p in md_images(md))
    page = (dst / "index.html").read_text()
    problems, n = check_html(page, dst)
    assert problems == [] and n - page.count('<img class="thumb" ') == len(md_images(md))
    assert dict(res["sections"])["jackson"] >= 2 and dict(res["sections"])["rnn_compare"] >= 2
    # the committed page is what the committed folders rebuild to, byte for byte (rerun jackson-report
    # after adding or changing a run folder)
    assert md == (REPO_REPORTS / "index.md").read_text(), "reports/index.md is stale: run jackson-report"
    for name in ("claims.tex", "tables.tex", "tables-appendix.tex", "tables.csv"):
        assert (dst / name).read_text() == (REPO_REPORTS / name).read_text(), f"reports/{name} is stale: run jackson-report"


def test_cli(root, capsys):
    assert main(["--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert f"report: {root}/index.md, {root}/index.html (6 figures linked: files beside the page)" in out
    last = out.strip().splitlines()[-3:]                       # it ends with its headline and the paths it wrote
    assert last[0].startswith("claims ledger: ") and last[1].startswith("report: ") and last[2].startswith("tables: ")
    assert all((root / p.strip().rstrip(",")).is_file() for p in last[2].split(": ", 1)[1].replace(str(root) + "/", "").split(","))
    assert "vit_probe: no results yet" in out and "missing or unreadable figure: jackson/fig1/loss_curves.png" in out


@pytest.mark.parametrize("args, option", [(["--root", "/nonexistent/reports"], "--root"), (["--bogus"], "--bogus")])
def test_bad_input_one_line_exit_2(args, option, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("jackson-report: error:") and option in err[0]


def test_a_paper_row_declaring_an_unknown_comparison_is_refused_in_one_line(root, capsys):
    hook = root / "tasks" / "nearest-point" / "report.json"
    rep = json.loads(hook.read_text())
    rep["paper"][0]["compare"] = "percent"
    hook.write_text(json.dumps(rep))
    with pytest.raises(SystemExit) as e:
        main(["--root", str(root)])
    err = capsys.readouterr().err.splitlines()
    assert e.value.code == 2 and len(err) == 1 and "compare must be one of ('difference', 'ratio'), got 'percent'" in err[0]


def test_report_never_loads_torch():
    """It reads tables; it cannot train (torch is never imported)."""
    code = "import sys, jackson.lab_report.page; sys.exit(int('torch' in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 0


def test_runs_sharing_a_title_are_told_apart_by_folder(tmp_path):
    for name in ("a", "b"):
        png(tmp_path / "tasks" / name / "p.png")
        write_json(tmp_path / "tasks" / name / "report.json",
                   {"title": "Same task", "section": "tasks", "command": f"run {name}", "seeds": [0],
                    "data": "d", "figures": [{"file": "p.png", "caption": "c"}]})
    build_report(ReportConfig(root=str(tmp_path)))
    md = (tmp_path / "index.md").read_text()
    assert "### 4.1 Same task (tasks/a)" in md and "### 4.2 Same task (tasks/b)" in md


def test_non_softmax_jackson_runs_are_named_and_get_no_paper_exponent(tmp_path):
    """A jackson-sweep folder whose summary.json says attention = linear: the title and captions say
    so, and Theorem 4.1's softmax prediction is not set beside its exponent."""
    from jackson.rate_sweep.report import report_hook
    f = tmp_path / "jackson" / "lin"
    f.mkdir(parents=True)
    (f / "config.json").write_text(json.dumps({"seeds": [0], "m_h": [1, 2], "tau": 16}))
    (f / "command.txt").write_text("jackson-sweep --attention linear\n")
    s = {"attention": "linear", "fit_range": [1, 2],
         "targets": [{"alpha": 1.5, "rank": "inf", "predicted_exponent": -2.0,
                      "exponents": {"test": {"slope": -2.4}}, "checks": {}}]}
    (f / "summary.json").write_text(json.dumps(s))
    e = report_hook(f)
    assert "linear attention" in e["title"] and e["paper"] == []
    assert all("with linear attention" in fig["caption"] for fig in e["figures"] if "Held-out" in fig["caption"])
    s["attention"] = "softmax"
    (f / "summary.json").write_text(json.dumps(s))
    assert report_hook(f)["paper"][0]["measured"] == -2.4


def test_provenance_and_quick_runs_are_shown(root):
    """A folder's environment.json (commit, date, versions, threads, device) appears beside its command;
    a quick run's title says so."""
    j = root / "jackson" / "fig1"
    (j / "environment.json").write_text(json.dumps({"kind": "jackson-sweep", "commit": "0123456789abcdef+dirty",
                                                   "started_utc": "2026-11-23T12:00:00+00:00", "packages": {"torch": "2.14.1"},
                                                   "torch_threads": 1, "device": "cpu",
                                                   "earlier": [{"commit": "fedcba9876543210", "started_utc": "2026-11-20T08:00:00+00:00"},
                                                               {"commit": "0000", "started_utc": "2026-11-22T08:00:00+00:00"}]}))
    t = root / "tasks" / "nearest-point"
    (t / "config.json").write_text(json.dumps({"quick": True}))
    build_report(ReportConfig(root=str(root)))
    md = (root / "index.md").read_text()
    assert ("made: commit 0123456789ab (uncommitted changes), started 2026-11-23, torch 2.14.1, "
            "1 torch thread(s), device cpu, after 2 earlier invocation(s), the first started 2026-11-20 at commit "
            "fedcba987654") in md
    assert "[quick run] Nearest point to a set" in md
    assert "made: commit 0123456789ab" in (root / "index.html").read_text()
    assert "devices over all invocations" not in md                       # one device: nothing more to say


def test_provenance_names_every_device_and_an_unrecorded_first_start(root):
    """A folder whose cells came from invocations on different devices names them all, and an earlier record
    without a start date or commit (a run that recorded none) says so in whole words."""
    j = root / "jackson" / "fig1"
    (j / "environment.json").write_text(json.dumps({
        "commit": "0123456789abcdef", "started_utc": "2026-11-27T12:00:00+00:00", "device": "cpu",
        "earlier": [{"started_utc": None, "commit": None, "device": "cpu"},
                    {"commit": "fedcba9876543210", "started_utc": "2026-11-26T08:00:00+00:00", "device": "cuda"}]}))
    build_report(ReportConfig(root=str(root)))
    md = (root / "index.md").read_text()
    assert ("after 2 earlier invocation(s), the first started on a date not recorded at a commit not recorded, "
            "devices over all invocations: cpu, cuda") in md
    # a folder older than environment.json keeps its provenance.json: the line says when the results entered git
    (j / "provenance.json").write_text(json.dumps({"results_added": {"commit": "915a11b205a19a79",
                                                                     "date": "2026-11-22T16:13:48+00:00"}}))
    build_report(ReportConfig(root=str(root)))
    assert ("the first started on a date not recorded at a commit not recorded (its results committed in 915a11b205a1 "
            "on 2026-11-22: git history, provenance.json), devices over all invocations: cpu, cuda") in \
        (root / "index.md").read_text()


def test_commands_are_shown_as_they_rerun_from_a_clone(tmp_path):
    """A run made on another machine (data copied to a local folder, a /tmp cache, --out in /tmp) is shown
    with the command that remakes it where it sits, the recorded one beside it; nothing else changes."""
    from jackson.runfolder import SHARED_FILES, rerunnable
    ran = ("vit-probe permute --device cuda --data /gpu/box/.gpu_data/cifar10-jpeg-q75.tar.gz --cache /tmp/c "
           "--checkpoint=/gpu/box/vit_p4_d128_l4_h4_cifar10_timm.pth --seeds 0,1 --note '' --quick --out /tmp/r/p")
    assert rerunnable(ran, "reports/vit_probe/p") == (
        "vit-probe permute --device cuda --data " + SHARED_FILES["cifar10-jpeg-q75.tar.gz"]
        + " --checkpoint " + SHARED_FILES["vit_p4_d128_l4_h4_cifar10_timm.pth"]
        + " --seeds 0,1 --note '' --quick --out reports/vit_probe/p")
    own = "vit-probe spectra --checkpoint /home/me/my_vit.pth --out reports/vit_probe/s"
    assert rerunnable(own, "reports/vit_probe/s") == own          # the user's own file: kept as typed
    # where the cells ran (a Dask scheduler, either spelling) does not change them: left out, so it runs in-process
    for opt in ("--dask-scheduler tcp://127.0.0.1:8786", "--scheduler tcp://127.0.0.1:8786",
                "--dask-scheduler=tls://10.0.0.5:8786", "--dask-scheduler ''"):
        assert rerunnable(f"jackson-sweep --alpha 1.5 {opt} --seeds 0,1 --out /tmp/x",
                          "reports/jackson/x") == "jackson-sweep --alpha 1.5 --seeds 0,1 --out reports/jackson/x"
    scheduled = [c for c in REPO_REPORTS.rglob("command.txt") if "scheduler" in c.read_text()]
    assert scheduled                                              # the committed folders run on a local scheduler
    for c in scheduled:
        assert "scheduler" not in rerunnable(c.read_text().splitlines()[0], "reports/x")

    r = tmp_path / "reports"
    write_json(r / "vit_probe" / "p" / "report.json", {
        "title": "Permutation", "section": "vit_probe", "command": ran, "seeds": [0],
        "text": f"Made by `{ran}`.", "figures": []})
    build_report(ReportConfig(root=str(r)))
    md, page = (r / "index.md").read_text(), (r / "index.html").read_text()
    again = rerunnable(ran, "reports/vit_probe/p")
    assert f"command: `{again}` (as run: `{ran}`)" in md and f"Made by `{again}`." in md
    assert "/tmp/c" not in md.replace(ran, "")                    # only in the as-run record
    assert "(as run: <code>" in page


def test_recorded_commands_are_relative_inside_the_working_directory(tmp_path):
    from jackson.runfolder import portable_argv
    cwd = tmp_path / "lab"
    argv = ["--data", str(cwd / "data" / "x.tgz"), f"--out={cwd}/reports/r", "--cache", "/var/c", "--seeds", "0"]
    assert portable_argv(argv, cwd) == ["--data", "data/x.tgz", "--out=reports/r", "--cache", "/var/c",
                                        "--seeds", "0"]


def _tex_rows(tex: str, start: str, end: str) -> list[list[str]]:
    """The data rows of a booktabs table (between `start` and `end`), split at unescaped &."""
    body = tex.split(start, 1)[1].split(end, 1)[0]
    return [[c.strip() for c in re.split(r"(?<!\\)&", line.rsplit("\\\\", 1)[0])]
            for line in body.strip().splitlines() if line.strip().endswith("\\\\")]


def _tex_well_formed(tex: str) -> None:
    assert tex.isascii()                                           # pdfLaTeX takes it as it is
    depth = 0
    for ch in re.sub(r"\\[{}]", "", tex):                          # braces balance (escaped ones aside)
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0
    text = "\n".join(line for line in tex.splitlines() if not line.startswith("%"))
    # specials escaped outside math; math spans hold only symbols, sub- and superscripts (no stray $ or %)
    maths = re.findall(r"\$([^$]*)\$", text)
    assert all(re.fullmatch(r"[A-Za-z0-9\\{}_^()+\-*/ .,<>|=]*", m) for m in maths), [m for m in maths][:5]
    assert not re.search(r"(?<!\\)[%#_$]", re.sub(r"\$[^$]*\$", "", text))


def test_latex_of_the_ledger_and_of_every_headline_table(root):
    """claims.tex holds one row per claim with the verdict claims.csv gives it; tables.tex one table per run
    that the paper gives numbers for, the numbers as report.json has them; both ASCII, braces balanced,
    the LaTeX specials escaped."""
    import csv
    build_report(ReportConfig(root=str(root)))
    ledger, full = (root / "claims.tex").read_text(), (root / "claims-full.tex").read_text()
    _tex_well_formed(ledger)
    _tex_well_formed(full)
    rows = _tex_rows(full, "\\endlastfoot", "\\end{longtable}")
    with open(root / "claims.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    want = [(r["id"], r["verdict"], r["n_seeds"]) for r in table]
    assert [(r[0], r[7], r[5]) for r in rows] == want and all(len(r) == 8 for r in rows)
    compact = [r for r in _tex_rows(ledger, "\\endlastfoot", "\\end{longtable}")    # the portrait one: id, words,
               if not r[0].startswith("\\multicolumn")]                                # verdict, number; the papers'
    first = [r for r in table if r["origin"] == "paper"] + [r for r in table if r["origin"] == "lab"]  # claims first
    assert [(r[0], r[2]) for r in compact] == [(r["id"], r["verdict"]) for r in first] and all(len(r) == 4 for r in compact)
    for tex in (ledger, full):                                                  # the paper's symbols in math mode
        assert "textasciicircum" not in tex and "m\\_h" not in tex and not re.search(r"(?<![\\$-])\balpha\b", tex)
    current, appendix = (root / "tables.tex").read_text(), (root / "tables-appendix.tex").read_text()
    _tex_well_formed(current)
    _tex_well_formed(appendix)
    tables = current + appendix
    hooks = [json.loads(p.read_text()) for p in sorted(root.rglob("report.json")) if "cells" not in p.parts]
    with_paper = [h for h in hooks if h.get("paper")]
    assert tables.count("\\begin{table}") == len(with_paper) >= 2          # every table once, in one of the two
    read = {r["folder"] for r in table if r["folder"]}                        # tables.tex: the runs the ledger reads
    labels = re.findall(r"\\label\{tab:([^}]*)\}", current)
    assert labels == [label for label in labels if any(re.sub(r"[^A-Za-z0-9]+", "-", f) == label for f in read)]
    assert "Superseded" not in current and "[superseded]" not in tables and "Exploratory" not in current
    task = _tex_rows(tables.split("\\label{tab:tasks-nearest-point}", 1)[1], "\\midrule", "\\bottomrule")
    assert [r[:3] for r in task] == [["mean A on the nearest point", "$1$", "$0.9$"],
                                     ["a value the paper states in words", "identity", "$0.01$"]]
    assert not re.search(r"(?<![$\w])-\d", re.sub(r"\$[^$]*\$", "", "".join(
        c for part in tables.split("\\midrule")[1:] for c in part.split("\\bottomrule")[0]))), "a hyphen as minus"
    assert "F\\_hat" not in tables and "$\\alpha$" in (
        __import__("jackson.lab_report.tables", fromlist=["x"])._tex_text("α_1 & 50%"))


def _tex_key(text: str, tex: bool) -> str:
    """A cell reduced to its letters, digits, dots and signs: LaTeX commands and escapes dropped from a .tex
    cell, an em dash written as LaTeX's --- in a plain one, so the two spellings of one cell compare equal."""
    if tex:                                     # LaTeX commands dropped; a symbol in math mode keeps its name
        text = re.sub(r"\\times 10\^\{(-?\d+)\}", r"e\1", text)     # 6\times 10^{-5}: 6e-5
        text = text.replace("\\times", "x").replace("\\infty", "inf")
        text = re.sub(r"\\(alpha|beta|gamma|sigma|rho|tau)\b", r"\1", text)
        text = re.sub(r"\\[A-Za-z]+", "", text).replace("_", "")
    else:
        text = text.replace("—", "---")
        text = re.sub(r"e([+-]?)0*(\d)", lambda m: f"e{'-' if m[1] == '-' else ''}{m[2]}", text)   # 6e-05: 6e-5
    return re.sub(r"[^A-Za-z0-9.+-]", "", text)


def test_tables_csv_holds_every_cell_of_tables_tex(root, tmp_path):
    """tables.csv is tables.tex long: the same tables in the same order, every cell (parsed from the .tex on
    its own), the paper and measured numbers as report.json has them; a rebuild elsewhere writes the same bytes."""
    import csv
    from jackson.lab_report.entries import HEADLINE
    from jackson.lab_report.tables import TABLES_CSV_COLUMNS
    build_report(ReportConfig(root=str(root)))
    tex = (root / "tables.tex").read_text() + (root / "tables-appendix.tex").read_text()
    tex_tables = {re.search(r"\\label\{([^}]*)\}", part).group(1): _tex_rows(part, "\\midrule", "\\bottomrule")
                  for part in tex.split("\\begin{table}")[1:]}
    with open(root / "tables.csv", newline="") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames) == TABLES_CSV_COLUMNS
        rows = list(reader)
    cells: dict[str, dict[int, dict[str, dict]]] = {}
    for r in rows:
        label = "tab:" + re.sub(r"[^A-Za-z0-9]+", "-", r["folder"]).strip("-")
        cells.setdefault(label, {}).setdefault(int(r["row"]), {})[r["column"]] = r
    assert list(cells) == list(tex_tables) and len(tex_tables) >= 2
    for label, tex_rows in tex_tables.items():
        assert sorted(cells[label]) == list(range(1, len(tex_rows) + 1))
        for i, tex_row in enumerate(tex_rows, 1):
            row = cells[label][i]
            assert tuple(row) == HEADLINE
            assert [_tex_key(c, True) for c in tex_row] == [_tex_key(row[c]["value"], False) for c in HEADLINE]
    for hook in sorted(root.rglob("report.json")):                  # the numbers, against the runs' own files
        if "cells" in hook.parts or not json.loads(hook.read_text()).get("paper"):
            continue
        folder = hook.parent.relative_to(root).as_posix()
        paper = json.loads(hook.read_text())["paper"]
        mine = [r for r in rows if r["folder"] == folder]
        assert len(mine) == len(HEADLINE) * len(paper)
        for r in mine:
            if r["column"] in ("paper", "measured"):
                v = paper[int(r["row"]) - 1][r["column"]]
                numeric = isinstance(v, (int, float)) and not isinstance(v, bool)
                assert r["number"] == (repr(float(v)) if numeric else "")
                shown = r["value"].split(" [")[0]                   # a measured value's interval follows in brackets
                assert float(shown) == float(f"{v:.3g}") if numeric else shown == str(v)
                p = paper[int(r["row"]) - 1]
                ends = (repr(float(p["lo"])), repr(float(p["hi"]))) if r["column"] == "measured" and "lo" in p else ("", "")
                assert (r["lo"], r["hi"]) == ends
                if ends[0]:
                    assert r["value"].endswith(f" [{float(p['lo']):.3g}, {float(p['hi']):.3g}]")
    nearest = [r["value"] for r in rows if r["folder"] == "tasks/nearest-point"]
    assert nearest == ["mean A on the nearest point", "1", "0.9", "-0.1 (difference)", "a value the paper states in words",
                       "identity", "0.01", "—"]

    again = tmp_path / "again" / "reports"
    shutil.copytree(root, again)
    for name in ("index.md", "index.html", "claims.csv", "claims.tex", "tables.tex", "tables-appendix.tex", "tables.csv"):
        (again / name).unlink()                                     # what jackson-report writes
    build_report(ReportConfig(root=str(again)))
    assert (again / "tables.csv").read_bytes() == (root / "tables.csv").read_bytes()
    build_report(ReportConfig(root=str(root)))
    assert (root / "tables.csv").read_bytes() == (again / "tables.csv").read_bytes()


def test_a_measured_interval_is_shown_and_compared_like_its_value():
    """Issue 15: 'exponents as differences with intervals': a headline row with lo/hi shows them beside the
    measured value and carries them into the comparison (difference for exponents, ratio for scales)."""
    from jackson.lab_report.entries import headline_rows
    rows = headline_rows({"paper": [
        {"quantity": "alpha = 1: exponent of held-out MSE", "paper": -1.0, "measured": -0.166, "lo": -0.231, "hi": -0.119},
        {"quantity": "held-out MSE", "paper": 2e-5, "measured": 6e-5, "lo": 4e-5, "hi": 1e-4},
        {"quantity": "held-out MSE", "paper": 2e-5, "measured": 6e-5, "lo": float("nan"), "hi": 1e-4}]})
    assert rows[0]["measured"] == "-0.166 [-0.231, -0.119]"
    assert rows[0]["measured vs paper"] == "+0.834 [+0.769, +0.881] (difference)"
    assert rows[1]["measured"] == "6e-05 [4e-05, 0.0001]" and rows[1]["measured vs paper"] == "3x [2x, 5x]"
    assert rows[2]["measured"] == "6e-05" and rows[2]["measured vs paper"] == "3x"      # no finite interval: none shown


def test_committed_latex_is_current():
    """reports/claims.tex and reports/tables.tex are what jackson-report writes from the committed folders
    (checked whole by test_report_of_the_committed_results); here: they exist and are well formed."""
    for name in ("claims.tex", "tables.tex", "tables-appendix.tex"):
        _tex_well_formed((REPO_REPORTS / name).read_text())


def _pdflatex(tmp_path, name: str, geometry: str, inputs: list[Path]) -> str:
    """Compile the inputs in an article with the given geometry; the log."""
    doc = tmp_path / f"{name}.tex"
    doc.write_text(f"\\documentclass{{article}}\\usepackage[{geometry}]{{geometry}}"
                   "\\usepackage{booktabs,longtable,array}\\begin{document}"
                   + "".join(f"\\input{{{p}}}" for p in inputs) + "\\end{document}\n")
    p = subprocess.run([tool("pdflatex"), "-interaction=nonstopmode", "-halt-on-error", doc.name], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and (tmp_path / f"{name}.pdf").stat().st_size > 1000, p.stdout[-800:]
    return (tmp_path / f"{name}.log").read_text(errors="replace")


@needs("pdflatex")        # the well-formedness test above runs everywhere
def test_latex_compiles_with_pdflatex_without_overfull_boxes(tmp_path):
    """The committed folders' tables: claims.tex and tables.tex in portrait on a 6.5 in text width (letter, 1 in
    margins), claims-full.tex on a landscape page; pdfLaTeX reports no overfull box in either."""
    dst = tmp_path / "reports"
    shutil.copytree(REPO_REPORTS, dst, ignore=reports_copy_ignore("index.*", "*.tex", "tables.csv"))
    build_report(ReportConfig(root=str(dst)))
    log = _pdflatex(tmp_path, "portrait", "letterpaper,margin=1in",
                    [dst / "claims.tex", dst / "tables.tex", dst / "tables-appendix.tex"])
    assert "Overfull" not in log, [l for l in log.splitlines() if "Overfull" in l][:5]
    log = _pdflatex(tmp_path, "landscape", "letterpaper,landscape,margin=1in", [dst / "claims-full.tex"])
    assert "Overfull" not in log, [l for l in log.splitlines() if "Overfull" in l][:5]


@pytest.mark.slow
@needs_chromium
def test_the_page_loads_as_fast_as_a_plain_page_of_its_size_and_figures(tmp_path):
    """Load time in headless Chromium, as a ratio (no timed assertion): index.html built from the committed
    folders against a plain page of the same byte size holding the same <img> tags and filler text, each loaded
    three times, alternately, as a reader's browser would (lazy images lazy).  The page's own structure (tables,
    styles, the summary) may cost at most half again the plain page's median."""
    dst = tmp_path / "reports"
    shutil.copytree(REPO_REPORTS, dst, ignore=reports_copy_ignore("index.*", "*.tex", "tables.csv"))
    build_report(ReportConfig(root=str(dst)))
    page = (dst / "index.html").read_text()
    imgs = "".join(re.findall(r"<img [^>]*>", page))
    filler = "lorem ipsum dolor sit amet\n" * max(0, (len(page.encode()) - len(imgs)) // 27)
    plain = dst / "plain.html"
    plain.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>{imgs}<pre>{filler}</pre>"
                     "</body></html>")
    ours, base = [], []
    for _ in range(3):
        ours.append(browser_report(dst / "index.html", _chromium(), eager=False)["load_ms"])
        base.append(browser_report(plain, _chromium(), eager=False)["load_ms"])
    ours, base = sorted(ours)[1], sorted(base)[1]
    assert ours <= 1.5 * base + 50, f"index.html loads in {ours:.0f} ms, a plain page of its size in {base:.0f} ms"


@pytest.mark.parametrize("opt", [["--threads", "2"], ["--force"], ["--config", "c.json"]])
def test_jackson_report_offers_no_option_that_does_nothing(opt, tmp_path, capsys):
    """jackson-report trains nothing and writes no run folder: --threads, --force and --config mean nothing to it,
    so its --help lists none of them and it refuses each in one line."""
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    shown = capsys.readouterr().out
    assert "--threads" not in shown and "--force" not in shown and "--config" not in shown
    with pytest.raises(SystemExit) as e:
        main([*opt, "--root", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and "unrecognized arguments" in err[0] and opt[0] in err[0]
    assert not (tmp_path / "index.html").exists()
