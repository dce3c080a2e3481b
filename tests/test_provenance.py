"""Provenance of run folders older than environment.json (jackson/lab_report/provenance.py) and its place in the
lab report: the commits come from git history (checked against `git rev-parse` on a repository built here),
the rest from the folder's own files or "not recorded"; the report shows it per run without reading git."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from jackson.lab_report.page import ReportConfig, build_report
from jackson.lab_report.provenance import derive, main

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / "reports"
# committed run folders without environment.json whose provenance.json another session writes (its own
# folder, reports/rnn_compare/, was not to be touched when the others got theirs)

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="no git on this machine")


def git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "GIT_AUTHOR_DATE": "2026-01-02T03:04:05+00:00", "GIT_COMMITTER_DATE": "2026-01-02T03:04:05+00:00",
           "PATH": "/usr/bin:/bin", "HOME": str(repo)}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture
def repo(tmp_path) -> Path:
    """A repository holding reports/x/run: added, then a table changed, then only a figure changed."""
    r = tmp_path / "repo"
    run = r / "reports" / "x" / "run"
    (run / "cells" / "c1").mkdir(parents=True)
    git(r, "init", "-q")
    (run / "command.txt").write_text("jackson-sweep --alpha 1.5 --out reports/x/run\n")
    (run / "config.json").write_text(json.dumps({"quick": False}))
    (run / "results.csv").write_text("m_h,test_mse\n1,0.5\n")
    (run / "cells" / "c1" / "cell.json").write_text(json.dumps({"torch_threads": 2}))
    git(r, "add", ".")
    git(r, "commit", "-q", "-m", "results of the run")
    (run / "cells" / "c1" / "rows.csv").write_text("m_h\n1\n")
    git(r, "add", ".")
    git(r, "commit", "-q", "-m", "one more cell table")
    (run / "error_vs_mh.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    git(r, "add", ".")
    git(r, "commit", "-q", "-m", "figure redrawn")
    return r


@needs_git
def test_commits_from_history_and_the_rest_from_the_folders_files(repo):
    d = derive(repo / "reports" / "x" / "run")
    assert d["results_added"] == {"commit": git(repo, "rev-parse", "HEAD~2").strip(),
                                  "date": "2026-01-02T03:04:05+00:00"}
    assert d["tables_changed"]["commit"] == git(repo, "rev-parse", "HEAD~1").strip()   # not the figure's commit
    assert d["torch_threads"] == {"value": "2", "from": "cells/*/cell.json torch_threads"}
    assert d["device"] == {"value": None, "from": "not recorded"}
    assert d["packages"] == d["code_commit"] == "not recorded" and d["quick"] is False


@needs_git
def test_the_command_writes_it_and_refuses_in_one_line(repo, tmp_path, capsys):
    run = repo / "reports" / "x" / "run"
    assert main([str(run)]) == 0
    assert json.loads((run / "provenance.json").read_text()) == derive(run)

    def refused(args, why):
        with pytest.raises(SystemExit) as e:
            main(args)
        err = capsys.readouterr().err.strip().splitlines()
        assert e.value.code == 2 and len(err) == 1 and why in err[0], err
        assert err[0].startswith("python -m jackson.lab_report.provenance: error:")

    refused([str(tmp_path / "nope")], "no such folder")
    (run / "environment.json").write_text("{}")
    refused([str(run)], "has environment.json, its own record")
    new = repo / "reports" / "x" / "new"
    new.mkdir()
    (new / "command.txt").write_text("jackson-sweep\n")
    refused([str(new)], "no commit adds a file of it")
    (new / "command.txt").unlink()
    refused([str(new)], "not a run folder")
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", repo.as_uri(), str(shallow)], check=True, capture_output=True)
    refused([str(shallow / "reports" / "x" / "run")], "shallow clone")


def test_the_report_shows_it_per_run_without_reading_git(tmp_path, monkeypatch):
    """environment.json (whole or in part), provenance.json (sound or not), neither: each run's line says what
    is known and what was not recorded (and its quick flag);
    the build runs with subprocess disabled, so it cannot have asked git."""
    r = tmp_path / "reports"
    for name, extra in (("env", {"environment.json": {"commit": "0123456789abcdef", "started_utc": "2026-11-23T12:00:00+00:00",
                                                       "packages": {"torch": "2.14.1"}, "torch_threads": 1, "device": "cpu"}}),
                        ("old", {"provenance.json": {
                            "results_added": {"commit": "a" * 40, "date": "2026-11-22T13:16:50+00:00"},
                            "tables_changed": {"commit": "b" * 40, "date": "2026-11-22T14:50:32+00:00"},
                            "code_commit": "not recorded", "packages": "not recorded",
                            "torch_threads": {"value": "2", "from": "cells/*/cell.json torch_threads"},
                            "device": {"value": None, "from": "not recorded"}, "quick": False}}),
                        ("none", {"config.json": {"quick": True}}),
                        ("part", {"environment.json": {"commit": "0123456789abcdef+dirty", "packages": {}}}),
                        ("bad", {"provenance.json": {"results_added": "?"}})):
        f = r / "jackson" / name
        f.mkdir(parents=True)
        (f / "report.json").write_text(json.dumps({"title": f"run {name}", "section": "jackson"}))
        for file, obj in extra.items():
            (f / file).write_text(json.dumps(obj))

    def no_subprocess(*a, **k):
        raise AssertionError("the report build started a process")
    monkeypatch.setattr(subprocess, "run", no_subprocess)
    monkeypatch.setattr(subprocess, "Popen", no_subprocess)
    build_report(ReportConfig(root=str(r)))
    md, page = (r / "index.md").read_text(), (r / "index.html").read_text()
    lines = {
        "env": "made: commit 0123456789ab, started 2026-11-23, torch 2.14.1, 1 torch thread(s), device cpu, quick run: no",
        "old": (f"made: results committed in {'a' * 12} on 2026-11-22, tables last changed in {'b' * 12} on 2026-11-22 "
                "(git history, provenance.json; the run itself recorded no environment.json), code commit and package "
                "versions not recorded, torch threads 2 (cells/*/cell.json torch_threads), device not recorded, "
                "quick run: no"),
        "none": "made: not recorded (neither environment.json nor provenance.json), quick run: yes",
        "part": ("made: commit 0123456789ab (uncommitted changes), start date not recorded, torch version not recorded, "
                 "torch threads not recorded, device not recorded, quick run: no"),
        "bad": "made: provenance.json unreadable, quick run: no"}
    for text in lines.values():
        assert text in md and text in page


def test_every_committed_run_folder_has_a_record():
    """Each run folder of reports/ states its provenance: environment.json (written by the run) or
    provenance.json (derived from history)."""
    folders = sorted(p.parent for p in REPORTS.rglob("report.json") if "cells" not in p.parts)
    assert folders
    missing = {f.relative_to(REPORTS).as_posix() for f in folders
               if not (f / "environment.json").is_file() and not (f / "provenance.json").is_file()}
    assert not missing, sorted(missing)


def _shallow_or_no_git() -> bool:
    if shutil.which("git") is None:
        return True
    r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"], capture_output=True, text=True)
    return r.returncode != 0 or r.stdout.strip() != "false"


@pytest.mark.skipif(_shallow_or_no_git(), reason="needs the repository's full history (CI clones may be shallow)")
def test_committed_records_are_what_history_says():
    """Every committed provenance.json (of a folder without environment.json) is what derive() reads from the
    history now: the first commit of the folder, the last commit of its tables, its files' threads and device."""
    records = sorted(REPORTS.rglob("provenance.json"))
    for p in records:
        if not (p.parent / "environment.json").exists():
            assert json.loads(p.read_text()) == derive(p.parent), f"{p} is stale: rerun python -m jackson.lab_report.provenance"


# An absolute path of a machine: a root folder where checkouts, homes and scratch folders live, at the start of a
# path (not inside a URL or a relative path).  The checkout's own absolute root is one too, wherever it lies.
MACHINE_PATH = r"(?<![\w:/.~$<>-])/(?:work|tmp|home|root|Users|mnt|scratch|private|var|opt|srv|gpu)/[\w.<-]"


def machine_paths(text: str) -> list[str]:
    import re
    hits = [m.start() for m in re.finditer(MACHINE_PATH, text)]
    hits += [i for i in range(len(text)) if text.startswith(str(ROOT) + "/", i)]
    return [text[max(0, i - 30):i + 40] for i in sorted(set(hits))]


def test_the_machine_path_detector_has_a_control():
    assert machine_paths("--out /tmp/r/p --data /work/main/.gpu_data/x.tgz") != []
    assert len(machine_paths('"data_dir": "/home/me/lab/data", "c": "/Users/x/y"')) == 2
    assert machine_paths(f"--out {ROOT}/reports/x") != []
    assert machine_paths("--out <scratch>/r/p --data .gpu_data/x.tgz https://x.org/tmp/a reports/tmp/b "
                         "/usr/bin/time --out /proc/x /etc/passwd ../shared/data/a") == []


@needs_git
def test_no_committed_file_under_reports_names_a_machine_path():
    """Records say paths relative to the repository root, and `<scratch>/...` for a folder outside the checkout
    of the machine that ran the command: another machine's absolute path tells a reader nothing."""
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "reports"], capture_output=True, text=True,
                           check=True).stdout.split()
    found = {}
    for f in files:
        try:
            text = (ROOT / f).read_text()
        except (UnicodeDecodeError, FileNotFoundError):
            continue                                   # figures and compressed tables hold no recorded path
        if hits := machine_paths(text):
            found[f] = hits[:2]
    assert len(files) > 1000 and not found, found
