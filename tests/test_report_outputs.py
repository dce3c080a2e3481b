"""jackson-report's outputs (jackson/lab_report/outputs.py, wall.py, page.py, html_page.py, check.py): the set of
files is replaced whole (kill -9 at seeded points of the writer leaves the old set or the new one), a file the lab
did not write is never replaced, and what a report.json names must lie inside its run folder, be a regular file
and, to be embedded, be small enough.  Every root here is a tiny one built in tmp_path.

FAULT_CASES is what tests/reliability.py turns into the "jackson-report" section of reports/RELIABILITY.md."""
from __future__ import annotations

import base64
import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import png
from jackson.lab_report import outputs
from jackson.lab_report.outputs import SET, OutputSet, foreign, state
from jackson.lab_report.page import ReportConfig, build_report, main
from jackson.lab_report.check import check_html
from jackson.lab_report.wall import MAX_EMBED_BYTES, MAX_EMBED_TOTAL, outside

REPO = Path(__file__).resolve().parent.parent
FAULT_SECTION = "jackson-report"
FAULT_NOTE = (f"The limits jackson-report states: an embedded file (`--single-file`) is at most {MAX_EMBED_BYTES:,} "
              f"bytes (16 MiB; a larger one is shown as refused in its place), and a `--single-file` page's figures "
              f"together at most {MAX_EMBED_TOTAL:,} bytes (256 MiB; priced from a stat of each before anything is "
              "read, refused in one line); a report.json, SUPERSEDED.md, summary or note is read whole only up to "
              "16 MiB; what a run folder's report.json names must lie inside that folder, symbolic links followed; "
              "a file is opened only when a stat says it is a regular file.  The set (index.md, index.html, "
              "claims.csv, claims.tex, claims-full.tex, tables.tex, tables.csv) is staged in `.jackson-report/`, "
              "committed by one folder rename and swapped in; a kill after the commit leaves a journal the next "
              "run completes first.")
FAULT_CASES: list[dict] = []


def case(id: str, cls: str, command: str, expect: str, n: int = 1):
    def deco(fn):
        FAULT_CASES.append({"id": id, "class": cls, "command": command, "expect": expect, "n": n,
                            "test": f"tests/test_report_outputs.py::{fn.__name__}" + (f" ({n} cases)" if n > 1 else "")})
        return fn
    return deco



def claims_toml(path: Path, n: int) -> Path:
    path.write_text('paper = "P"\n' + "".join(
        f'[[claim]]\nid = "T-{i}"\nclaim = "claim {i}"\nrule = "no_run"\nnot_testable = "no command"\n'
        for i in range(n)))
    return path


def tiny(base: Path, n_claims: int = 3, measured: float = 0.9, figures=None) -> tuple[Path, Path]:
    """(root, claims file): one run folder with a figure and a headline row, and n no_run claims."""
    root = base / "reports"
    run = root / "tasks" / "a"
    png(run / "f.png")
    (run / "report.json").write_text(json.dumps({
        "title": "A", "section": "tasks", "figures": figures or [{"file": "f.png", "caption": "c"}],
        "paper": [{"quantity": "q", "paper": 1.0, "measured": measured}]}))
    return root, claims_toml(base / "claims.toml", n_claims)


def report(argv, capsys) -> tuple[int, str, str]:
    try:
        rc = main(argv)
    except SystemExit as e:
        rc = e.code
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jackson-report: error:") and "Traceback" not in err, err
    return lines[0]


def snapshot(root: Path) -> dict[str, bytes]:
    return {n: (root / n).read_bytes() for n in SET if (root / n).exists()}


@contextlib.contextmanager
def deadline(seconds: float):
    """Fail (not hang) when the block takes longer: a FIFO opened by mistake would block forever."""
    def boom(*_):
        raise TimeoutError(f"still running after {seconds} s")
    old = signal.signal(signal.SIGALRM, boom)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# ---- a set is one unit: kill -9 at seeded points -------------------------------------------------------

def consistent(root: Path) -> int:
    """Check that the set at root is one build's, by the files' own words; returns its claims count."""
    st = state(root)
    assert not st["pending"] and all(st["matches"].values()), st
    marks = {st["marks"][n] for n in SET if not n.endswith(".csv")}
    assert marks == {st["build"]}, st                                  # every marked file names the manifest's build
    md, tex, full = ((root / n).read_text() for n in ("index.md", "claims.tex", "claims-full.tex"))
    html_ = (root / "index.html").read_text()
    n_csv = len((root / "claims.csv").read_text().strip().splitlines()) - 1
    for text in (md, tex, full, html_):                                # the same claims count everywhere
        assert re.search(rf"(\b|of ){n_csv} claims?\b", text), n_csv            # "1 claim:", "3 claims:", "of 3 claims"
    return n_csv


def _ops_of_a_build(root: Path, claims: Path) -> list[str]:
    seen: list[str] = []
    outputs._STEP = seen.append
    try:
        build_report(ReportConfig(root=str(root), claims=str(claims)))
    finally:
        outputs._STEP = None
    return seen


def _kill_at(root: Path, claims: Path, k: int) -> int:
    """Fork; the child builds the report and SIGKILLs itself just before its k-th file operation.  The
    child's wait status: killed (SIGKILL) or exited 0 when the build has fewer operations."""
    pid = os.fork()
    if pid == 0:                                            # the child: never returns into pytest
        try:
            n = [0]

            def step(what):
                n[0] += 1
                if n[0] == k:
                    os.kill(os.getpid(), signal.SIGKILL)
            outputs._STEP = step
            with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
                build_report(ReportConfig(root=str(root), claims=str(claims)))
            os._exit(0)
        except BaseException:
            os._exit(3)
    return os.waitpid(pid, 0)[1]


@case("kill-9-at-50-points", "atomic", "jackson-report --root R --claims C   # killed (SIGKILL) before its k-th "
      "file operation, k at 50 seeded points covering every operation",
      "the old set or the new set, whole (every file the same build, the same claims count, byte for byte one of "
      "the two builds); a kill after the commit point leaves a journal the next run completes first", n=50)
def test_kill_9_at_50_seeded_points_leaves_the_old_set_or_the_new(tmp_path):
    base_old, base_new = tmp_path / "old", tmp_path / "new"
    root, claims_old = tiny(base_old, n_claims=3, measured=0.9)
    build_report(ReportConfig(root=str(root), claims=str(claims_old)))
    assert consistent(root) == 3
    old = snapshot(root)
    pristine = tmp_path / "pristine"
    shutil.copytree(base_old, pristine, symlinks=True)

    ref_root, _ = tiny(base_new, n_claims=2, measured=0.5)        # the new set, built whole elsewhere
    claims_new = claims_toml(tmp_path / "claims-new.toml", 2)
    ops = _ops_of_a_build(ref_root, claims_new)
    assert consistent(ref_root) == 2
    new = snapshot(ref_root)
    assert set(old) == set(new) == set(SET) and all(old[n] != new[n] for n in SET)

    rng = random.Random(20261128)
    points = list(range(1, len(ops) + 2))                          # every operation, and one past the last
    points += [rng.randint(1, len(ops) + 1) for _ in range(50 - len(points))]
    assert len(points) >= 50
    outcomes = {"old": 0, "new": 0, "pending": 0}
    for k in points:
        shutil.rmtree(base_old)
        shutil.copytree(pristine, base_old, symlinks=True)
        (root / "tasks" / "a" / "report.json").write_text(
            (ref_root / "tasks" / "a" / "report.json").read_text())
        status = _kill_at(root, claims_new, k)
        if k <= len(ops):
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (k, ops[k - 1], status)
        else:
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        raw = state(root)
        if raw["pending"]:                                         # after the commit point: the journal says so
            outcomes["pending"] += 1
        else:                                                      # before it (or done): the root is one set, as is
            assert snapshot(root) in (old, new), (k, ops[k - 1] if k <= len(ops) else "end")
        with OutputSet(root):                                      # what the next run does first
            pass
        got = snapshot(root)
        assert got in (old, new), (k, ops[k - 1] if k <= len(ops) else "end")
        consistent(root)
        outcomes["old" if got == old else "new"] += 1
        leftovers = sorted(p.name for p in (root / outputs.WORK).iterdir())
        assert leftovers == ["lock", "manifest.json"], leftovers   # no stage or swap folder left behind
    assert outcomes["old"] and outcomes["new"] and outcomes["pending"], outcomes   # every phase was hit


@case("kill-9-external", "atomic", "jackson-report --root R --claims C   # the process killed with kill -9 after "
      "a seeded delay (5 seeds)", "the old set or the new set, whole, once the next run has settled it", n=5)
def test_an_external_kill_9_of_the_command_leaves_the_old_set_or_the_new(tmp_path):
    root, claims_old = tiny(tmp_path / "old", n_claims=3)
    build_report(ReportConfig(root=str(root), claims=str(claims_old)))
    old = snapshot(root)
    claims_new = claims_toml(tmp_path / "claims-new.toml", 1)
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    cmd = [sys.executable, "-m", "jackson.lab_report.page", "--root", str(root), "--claims", str(claims_new)]
    t0 = time.monotonic()
    subprocess.run(cmd, env=env, capture_output=True, timeout=120, check=True)
    full = time.monotonic() - t0
    new = snapshot(root)
    rng = random.Random(7)
    for _ in range(5):
        shutil.rmtree(root / outputs.WORK)
        for n, data in old.items():                         # back to the old set (its manifest rebuilt by a run)
            (root / n).write_bytes(data)
        build_report(ReportConfig(root=str(root), claims=str(claims_old)))
        assert snapshot(root) == old
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 1.0) * full)
        p.kill()
        p.wait(timeout=60)
        with OutputSet(root):
            pass
        assert snapshot(root) in (old, new)
        consistent(root)


# ---- a file the lab did not write is never replaced ----------------------------------------------------

def _fifo(p: Path) -> None:
    os.mkfifo(p)


FOREIGN = {   # how a file (or the working folder) the user made sits in the root
    "own-index-html": ("index.html", lambda p: p.write_text("<!DOCTYPE html><title>my page</title>\n")),
    "own-index-md": ("index.md", lambda p: p.write_text("# My notes\n\nkeep me\n")),
    "own-claims-csv": ("claims.csv", lambda p: p.write_text("name,value\na,1\n")),
    "own-tables-tex": ("tables.tex", lambda p: p.write_text("\\section{mine}\n")),
    "own-claims-full-tex": ("claims-full.tex", lambda p: p.write_text("% my own\n")),
    "empty-index-md": ("index.md", lambda p: p.write_bytes(b"")),
    "binary-tables-csv": ("tables.csv", lambda p: p.write_bytes(b"\x00\xff" * 100)),
    "index-html-a-link": ("index.html", lambda p: p.symlink_to(p.parent.parent / "elsewhere.html")),
    "index-md-a-link-to-a-lab-file": ("index.md", lambda p: p.symlink_to(REPO / "reports" / "index.md")),
    "index-md-a-folder": ("index.md", lambda p: p.mkdir()),
    "index-html-a-fifo": ("index.html", _fifo),
    "work-folder-a-file": (outputs.WORK, lambda p: p.write_text("mine\n")),
    "work-folder-a-link": (outputs.WORK, lambda p: p.symlink_to(p.parent.parent)),
}


@case("foreign-files", "own", "jackson-report --root DIR   # DIR holds the user's own index.html, index.md, "
      "claims.csv, a .tex, an empty or binary file, a link, a folder or a FIFO under a name of the set, or a "
      "file named .jackson-report",
      "exit 2, one line naming the file; nothing in DIR written, replaced or removed", n=len(FOREIGN))
@pytest.mark.parametrize("kind", sorted(FOREIGN))
def test_a_file_the_lab_did_not_write_is_never_replaced(kind, tmp_path, capsys):
    root, claims = tiny(tmp_path)
    (tmp_path / "elsewhere.html").write_text("<p>the user's</p>\n")
    name, make = FOREIGN[kind]
    make(root / name)
    before = sorted((p.relative_to(root), p.is_symlink() or p.is_file() and p.read_bytes())
                    for p in root.rglob("*") if not p.is_dir() or p.is_symlink())
    with deadline(30):
        rc, out, err = report(["--root", str(root), "--claims", str(claims)], capsys)
    line = one_line(err)
    assert rc == 2 and str(root / name) in line and ("jackson-report" in line)
    after = sorted((p.relative_to(root), p.is_symlink() or p.is_file() and p.read_bytes())
                   for p in root.rglob("*") if not p.is_dir() or p.is_symlink())
    assert after == before                                             # nothing written, replaced or removed
    assert (tmp_path / "elsewhere.html").read_text() == "<p>the user's</p>\n"
    if name != outputs.WORK:
        assert not (root / outputs.WORK).exists()


@case("foreign-file-moved-away", "own", "jackson-report --root DIR   # after the refusal the user moves their "
      "index.html away", "builds; the moved file untouched")
def test_after_the_user_moves_their_file_away_the_report_builds(tmp_path, capsys):
    root, claims = tiny(tmp_path)
    (root / "index.html").write_text("mine\n")
    assert report(["--root", str(root), "--claims", str(claims)], capsys)[0] == 2
    (root / "index.html").rename(tmp_path / "mine.html")
    assert report(["--root", str(root), "--claims", str(claims)], capsys)[0] == 0
    assert (tmp_path / "mine.html").read_text() == "mine\n" and consistent(root) == 3


@case("lab-files-recognised", "own", "jackson-report --root reports   # the committed reports/ files, written "
      "before the lab marked them; and marked ones, and one the manifest lists",
      "each recognised as the lab's and replaced; a marked file edited by hand is still the lab's (it says: "
      "do not edit)")
def test_the_labs_own_files_are_recognised_old_and_new(tmp_path):
    committed = [n for n in SET if (REPO / "reports" / n).is_file()]
    assert {"index.md", "claims.csv", "claims.tex", "claims-full.tex", "tables.tex", "tables.csv"} <= set(committed)
    for n in committed:                                                # the committed files, as they are in git
        assert foreign(REPO / "reports" / n, n) == "", n
    root, claims = tiny(tmp_path)
    for n in committed:                                                # a root holding the committed files: replaced
        shutil.copy(REPO / "reports" / n, root / n)
    build_report(ReportConfig(root=str(root), claims=str(claims)))
    assert consistent(root) == 3
    for n in SET:                                                      # marked files
        assert foreign(root / n, n) == "", n
    with open(root / "index.md", "a") as fh:                           # edited by hand below its mark
        fh.write("\nmy edit\n")
    assert foreign(root / "index.md", "index.md") == ""
    html_ = (root / "index.html").read_text()                          # an index.html from before the mark
    legacy = html_.replace(html_[html_.index('\n<meta name="generator"'):html_.index('">', html_.index(
        '<meta name="generator"')) + 2], "", 1)
    assert "generator" not in legacy and legacy.startswith("<!DOCTYPE html>")
    (root / "index.html").write_text(legacy)
    assert foreign(root / "index.html", "index.html") == ""
    (root / "claims.csv").write_text("x,y\n1,2\n")                     # a CSV whose header is not the lab's ...
    m = outputs.manifest(root / outputs.WORK)["files"]
    assert foreign(root / "claims.csv", "claims.csv", m) != ""
    digest = outputs._sha256(root / "claims.csv")                      # ... unless the manifest lists these bytes
    assert foreign(root / "claims.csv", "claims.csv", {**m, "claims.csv": digest}) == ""


# ---- the root is a wall --------------------------------------------------------------------------------

def _outside_png(tmp_path: Path) -> tuple[Path, bytes]:
    p = tmp_path / "outside" / "secret.png"
    return p, png(p, (1, 2, 3))


def _climb(tmp_path, run):                       # paths that climb out of the run folder in different ways
    secret, _ = _outside_png(tmp_path)
    rel = os.path.relpath(secret, run)
    return {"dotdot": rel, "dot-dotdot": "./" + rel, "sub-then-climb": "sub/../" + rel,
            "deep-climb": "a/b/../../" + rel, "sibling-run": "../b/g.png", "absolute": str(secret),
            "absolute-inside-then-out": str(run) + "/../../../outside/secret.png", "double-slash": "//" + str(secret)}


def _links(tmp_path, run):                       # symbolic links that lead out, alone, chained, through a folder
    secret, _ = _outside_png(tmp_path)
    (run / "l1.png").symlink_to(secret)
    (run / "c1.png").symlink_to("c2.png")
    (run / "c2.png").symlink_to("c3.png")
    (run / "c3.png").symlink_to(secret)
    (run / "dir").symlink_to(secret.parent)
    (run / "rel.png").symlink_to(os.path.relpath(secret, run))
    (run / "loop1.png").symlink_to("loop2.png")
    (run / "loop2.png").symlink_to("loop1.png")
    return {"link-out": "l1.png", "link-chain-out": "c1.png", "link-folder-out": "dir/secret.png",
            "relative-link-out": "rel.png", "link-loop": "loop1.png"}


WALL = sorted(["dotdot", "dot-dotdot", "sub-then-climb", "deep-climb", "sibling-run", "absolute",
               "absolute-inside-then-out", "double-slash", "link-out", "link-chain-out", "link-folder-out",
               "relative-link-out", "link-loop"])


@case("figure-outside-its-run-folder", "input", "jackson-report [--single-file]   # a report.json figure that "
      "climbs with ../ (5 ways), is absolute (3 ways), or is a symbolic link out (alone, chained, through a "
      "folder, relative) or a loop",
      "exit 0; in its place on both pages 'refused: outside its run folder' (or 'a symbolic link loop'); the "
      "outside file neither embedded nor linked; one printed line per refusal", n=2 * len(WALL))
@pytest.mark.parametrize("single", [False, True])
@pytest.mark.parametrize("kind", WALL)
def test_a_figure_outside_its_run_folder_is_refused_on_the_page(kind, single, tmp_path, capsys):
    root, claims = tiny(tmp_path)
    run = root / "tasks" / "a"
    png(root / "tasks" / "b" / "g.png", (1, 2, 3))                    # another run folder's figure
    (root / "tasks" / "b" / "report.json").write_text(json.dumps({"title": "B", "section": "tasks"}))
    paths = {**_climb(tmp_path, run), **_links(tmp_path, run)}
    (run / "report.json").write_text(json.dumps({"title": "A", "section": "tasks", "figures": [
        {"file": "f.png", "caption": "inside"}, {"file": paths[kind], "caption": "outside"}]}))
    _, secret_bytes = _outside_png(tmp_path)
    with deadline(60):
        rc, out, err = report(["--root", str(root), "--claims", str(claims)] + ["--single-file"] * single, capsys)
    assert rc == 0 and err == "" and "Traceback" not in out
    why = "a symbolic link loop" if kind == "link-loop" else "outside its run folder"
    assert f"tasks/a/: {paths[kind]!r} refused: {why}" in out
    page, md = (root / "index.html").read_text(), (root / "index.md").read_text()
    assert f"(refused: {why}: <code>" in page and f"*(refused: {why}: `" in md
    assert base64.b64encode(secret_bytes).decode() not in page          # not embedded ...
    refs = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert not [r for r in refs if not r.startswith(("#", "data:", "http")) and outside(root, root / r)]  # ... nor linked
    assert check_html(page, root)[0] == []
    inside = png(tmp_path / "probe.png")                                 # the inside figure is shown, once
    shown = [r for r in refs if r == "tasks/a/f.png" or r == "data:image/png;base64," + base64.b64encode(inside).decode()]
    assert len(shown) == 1 and page.count("<img ") == 1
    assert re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md) == ["tasks/a/f.png"]


SECRET = "root:x:0:0:the-content-of-a-file-outside\n"


def _secret(tmp_path: Path) -> Path:
    p = tmp_path / "outside" / "passwd"
    p.parent.mkdir(exist_ok=True)
    p.write_text(SECRET)
    return p


@case("text-outside-its-folder", "input", "jackson-report [--single-file]   # summary.md, SUPERSEDED.md or a note "
      "that is a symbolic link to a file outside; an image in a summary that climbs out",
      "exit 0; the page shows it refused; no byte of the outside file on either page", n=8)
@pytest.mark.parametrize("single", [False, True])
@pytest.mark.parametrize("which", ["summary", "superseded", "note", "summary-image"])
def test_text_outside_its_folder_never_reaches_the_page(which, single, tmp_path, capsys):
    root, claims = tiny(tmp_path)
    run = root / "tasks" / "a"
    secret = _secret(tmp_path)
    spng, sbytes = _outside_png(tmp_path)
    if which == "summary":
        (run / "summary.md").symlink_to(secret)
    elif which == "superseded":
        (run / "SUPERSEDED.md").symlink_to(secret)
    elif which == "note":
        (root / "notes.md").symlink_to(secret)
    else:
        (run / "summary.md").write_text(f"# s\n\n![x]({os.path.relpath(spng, run)})\n\n![y]({spng})\n")
    rc, out, err = report(["--root", str(root), "--claims", str(claims)] + ["--single-file"] * single, capsys)
    assert rc == 0 and err == ""
    for name in ("index.html", "index.md"):
        text = (root / name).read_text()
        assert "the-content-of-a-file-outside" not in text and base64.b64encode(sbytes).decode() not in text
    page = (root / "index.html").read_text()
    if which in ("summary", "note"):
        assert "(refused: outside " in page and "refused: outside" in out
    if which == "superseded":
        assert "SUPERSEDED.md is refused: outside its run folder" in page
    if which == "summary-image" and single:
        assert page.count("(refused: outside its folder: <code>") == 2


@case("report-json-outside", "input", "jackson-report   # a run folder's report.json is a symbolic link to a file "
      "outside", "exit 2, one line naming it; nothing of the outside file quoted; nothing written")
def test_a_report_json_that_leads_out_is_refused_quoting_nothing(tmp_path, capsys):
    root, claims = tiny(tmp_path)
    secret = tmp_path / "outside.json"
    secret.write_text(json.dumps({"title": "the-content-of-a-file-outside"}))
    (root / "tasks" / "c").mkdir()
    (root / "tasks" / "c" / "report.json").symlink_to(secret)
    rc, out, err = report(["--root", str(root), "--claims", str(claims)], capsys)
    line = one_line(err)
    assert rc == 2 and "tasks/c/report.json" in line and "outside" in line and "the-content" not in err + out
    assert not any((root / n).exists() for n in SET)


FIFOS = ["figure", "summary", "superseded", "note", "report-json"]


@case("fifo", "bounded", "jackson-report [--single-file]   # a figure, summary.md, SUPERSEDED.md, note or "
      "report.json that is a FIFO", "no wait: the FIFO is never opened (a stat first); a figure is shown missing, "
      "a text refused, a report.json refused in one line (exit 2)", n=2 * len(FIFOS))
@pytest.mark.parametrize("single", [False, True])
@pytest.mark.parametrize("which", FIFOS)
def test_a_fifo_is_never_opened(which, single, tmp_path, capsys):
    root, claims = tiny(tmp_path, figures=[{"file": "f.png"}, {"file": "pipe.png"}])
    run = root / "tasks" / "a"
    where = {"figure": run / "pipe.png", "summary": run / "summary.md", "superseded": run / "SUPERSEDED.md",
             "note": root / "notes.md", "report-json": root / "tasks" / "c" / "report.json"}[which]
    where.parent.mkdir(exist_ok=True)
    os.mkfifo(where)
    with deadline(60):
        rc, out, err = report(["--root", str(root), "--claims", str(claims)] + ["--single-file"] * single, capsys)
    if which == "report-json":
        assert rc == 2 and "not a regular file" in one_line(err)
        return
    assert rc == 0 and err == ""
    page = (root / "index.html").read_text()
    if which == "figure":
        assert "missing or unreadable figure: tasks/a/pipe.png" in out
    elif which == "superseded":
        assert "SUPERSEDED.md is refused: not a regular file" in page
    else:
        assert "(refused: not a regular file: <code>" in page


SIZES = {"limit-plus-1": MAX_EMBED_BYTES + 1, "1.5-GB": 1_500_000_000, "at-the-limit": MAX_EMBED_BYTES}


@case("oversize-figure", "bounded", "jackson-report --single-file   # a figure of 16 MiB + 1 byte or 1.5 GB "
      "(sparse), and one of exactly 16 MiB", "exit 0; above the limit: not read, 'refused: N bytes, more than the "
      "limit of 16,777,216 for an embedded file' in its place; at the limit: embedded; without --single-file: "
      "linked", n=len(SIZES))
@pytest.mark.parametrize("size", sorted(SIZES))
def test_an_oversize_figure_is_not_embedded(size, tmp_path, capsys):
    root, claims = tiny(tmp_path, figures=[{"file": "big.png"}])
    big = root / "tasks" / "a" / "big.png"
    shutil.copy(root / "tasks" / "a" / "f.png", big)
    os.truncate(big, SIZES[size])                                     # sparse: costs no disk
    rc, out, err = report(["--root", str(root), "--claims", str(claims), "--single-file"], capsys)
    assert rc == 0 and err == ""
    page = (root / "index.html").read_text()
    if SIZES[size] > MAX_EMBED_BYTES:
        assert f"(refused: {SIZES[size]:,} bytes, more than the limit of {MAX_EMBED_BYTES:,} for an embedded " \
               f"file: <code>tasks/a/big.png</code>)" in page
        assert len(page) < 1_000_000 and "(0 figures inline" in out
    else:
        assert len(page) > MAX_EMBED_BYTES and "(1 figures inline" in out
    rc, out, _ = report(["--root", str(root), "--claims", str(claims)], capsys)
    assert rc == 0 and '<img src="tasks/a/big.png"' in (root / "index.html").read_text()


@case("oversize-page", "bounded", "jackson-report --single-file   # 17 figures of 16 MiB each (sparse)",
      "exit 2, one line naming the bytes the page would embed and the limit of 268,435,456; nothing read, "
      "nothing written")
def test_a_single_file_page_too_large_is_priced_and_refused(tmp_path, capsys):
    n = MAX_EMBED_TOTAL // MAX_EMBED_BYTES + 1
    root, claims = tiny(tmp_path, figures=[{"file": f"big{i}.png"} for i in range(n)])
    for i in range(n):
        p = root / "tasks" / "a" / f"big{i}.png"
        shutil.copy(root / "tasks" / "a" / "f.png", p)
        os.truncate(p, MAX_EMBED_BYTES)
    rc, out, err = report(["--root", str(root), "--claims", str(claims), "--single-file"], capsys)
    line = one_line(err)
    assert rc == 2 and "--single-file" in line and f"{MAX_EMBED_TOTAL:,}" in line
    assert f"{(n + 1) * MAX_EMBED_BYTES:,} bytes" in line                # n figures and the first again, on top
    assert not any((root / x).exists() for x in SET)


def test_reliability_lists_this_section():
    """The page RELIABILITY.md is generated from FAULT_CASES (tests/test_faults.py checks it is current)."""
    assert FAULT_CASES and all(c["class"] in ("own", "atomic", "input", "bounded") for c in FAULT_CASES)


@case("two-runs-at-once", "own", "jackson-report --root R   # while another jackson-report is replacing R's set",
      "exit 2, one line: another jackson-report is writing into R; the set left as it was")
def test_a_second_run_into_the_same_root_waits_for_nothing_and_writes_nothing(tmp_path, capsys):
    root, claims = tiny(tmp_path)
    build_report(ReportConfig(root=str(root), claims=str(claims)))
    before = snapshot(root)
    with OutputSet(root):                                              # the first run, holding the set
        with deadline(60):
            rc, out, err = report(["--root", str(root), "--claims", str(claims)], capsys)
    assert rc == 2 and "another jackson-report is writing into" in one_line(err)
    assert snapshot(root) == before


def test_a_second_build_replaces_the_csvs_of_the_first_whatever_their_header(tmp_path):
    """The CSVs carry no mark: the manifest's hash is what says they are the lab's.  A build after one whose CSVs had
    a header the lab never wrote before (new columns) must find the old files by the old build's hash, not the new."""
    from jackson.lab_report.outputs import SET, OutputSet

    def files(tag):
        out = {}
        for n in SET:
            if n.endswith(".html"):
                out[n] = f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>jackson-lab report</title></head><body>{tag}</body></html>\n'
            elif n.endswith(".csv"):
                out[n] = f"id,new_column_{tag}\nx,{tag}\n"
            else:
                out[n] = f"{tag}\n"
        return out
    for tag in ("one", "two", "three"):
        with OutputSet(tmp_path) as out:
            out.replace(files(tag))
        assert (tmp_path / "claims.csv").read_text() == f"id,new_column_{tag}\nx,{tag}\n"
        assert not (tmp_path / ".jackson-report" / "swap").exists()
