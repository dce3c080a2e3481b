"""benchmarks/device_plan.py, the prepared GPU plan, tested where no GPU is.

The dry run (`--device cpu --tiny`) makes every folder the real plan makes, so the ledger is tested on the shape of
what a GPU call brings back: each of the six rows the plan is for reads one of its folders (the suite dry-runs the
sweep_mh part; `-m full` every part).  The pieces around it
(the deadline, the bundle and its cap, resuming from a bundle, the refusals) are tested on their own, in seconds."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "device_plan.py"
ROWS = ("JL-fig3a-converge", "JL-fig3b-fit", "JL-tab1-vit", "Y-fig1-lis", "Y-fig1-arithmetic", "Y-fig1-ed")


def _load():
    spec = importlib.util.spec_from_file_location("device_plan", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod          # its dataclasses look their module up while the class is made
    spec.loader.exec_module(mod)
    return mod


dp = _load()


def _env():
    return dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")


def _kind(folder: str) -> str:
    """A combined folder's name without its sizes: the same for the real plan and the dry run."""
    return re.sub(r"vit_p\w+?_e\d+$|\d+steps$", "*", folder)


# ---- the dry run ------------------------------------------------------------------------------------------

# The suite's dry run is one part, sweep_mh (two pieces combined into one folder, the ledger's two Fig. 3 rows): the
# plan's running, combining, recording, bundling and resuming, in three processes.  Every part (eleven processes,
# every folder and row of the real plan) is the `full` form: `python -m pytest tests -m full`.
SMALL_PARTS = "sweep_mh"
ROW_PART = {"JL-fig3a-converge": "sweep_mh", "JL-fig3b-fit": "sweep_mh", "JL-tab1-vit": "permute",
            "Y-fig1-lis": "cot_dp", "Y-fig1-arithmetic": "cot_dp", "Y-fig1-ed": "cot_dp"}


@pytest.fixture(scope="module", params=[pytest.param(SMALL_PARTS, id="sweep_mh"),
                                        pytest.param(",".join(dp.PARTS), id="every-part", marks=pytest.mark.full)])
def dry(request, tmp_path_factory):
    """(work folder, bundle folder, the parts run) of `device_plan.py --device cpu --tiny --parts PARTS`."""
    parts = request.param
    base = tmp_path_factory.mktemp("plan")
    work, out = base / "work", base / "out"
    r = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--tiny", "--parts", parts, "--work", str(work),
                        "--out", str(out)], cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return work, out, set(parts.split(","))


def test_the_dry_run_plans_every_folder_the_real_plan_makes():
    real = {p.folder for p in dp.plan("cuda", False, "DATA", Path("W")) if p.combine or p.part == "permute"}
    tiny = {p.folder for p in dp.plan("cpu", True, "DATA", Path("W")) if p.combine or p.part == "permute"}
    assert {_kind(f) for f in real} == {_kind(f) for f in tiny}
    assert {f.split("/")[0] for f in real} == {"jackson", "vit_probe", "cot_dp"}   # the sections the ledger's rules read
    assert set(ROW_PART) == set(ROWS) and set(ROW_PART.values()) == set(dp.PARTS) - {"device_check", "card"}


def test_the_card_part_comes_first_with_its_partner_and_doubling_check():
    """The card at 3 seeds and CARD's steps, each seed's partner at doubling.FACTOR x the steps, each budget combined
    into one folder under jackson/ (--force: the combination is written over its first piece's one-seed run), and
    the doubling check after both combinations; the part is the plan's first."""
    from jackson.rate_sweep.doubling import FACTOR
    pieces = dp.plan("cuda", False, "DATA", Path("W"))
    card = [p for p in pieces if p.part == "card"]
    assert pieces[:len(card)] == card and dp.PARTS[0] == "card"
    runs = [p for p in card if not p.combine and p.argv[0] == "jackson-sweep"]
    steps = sorted({int(p.argv[p.argv.index("--steps") + 1]) for p in runs})
    assert steps == [dp.CARD["steps"], FACTOR * dp.CARD["steps"]] and len(runs) == 2 * len(dp.CARD["seeds"]) == 6
    assert all(p.argv[p.argv.index("--device") + 1] == "cuda" for p in runs)
    combos = [p for p in card if p.combine]
    assert len(combos) == 2 and all("--force" in p.argv and p.folder.startswith("jackson/") for p in combos)
    doubling = next(p for p in card if p.argv[0] == "jackson-doubling")
    assert set(doubling.after) == {p.name for p in combos} and doubling.argv[1:] == [p.folder for p in combos]


def test_a_piece_after_others_waits_and_is_not_started_when_one_failed(tmp_path):
    (tmp_path / "logs").mkdir()
    ok = dp.Piece("ok", "card", ["python", "-c", "import time; time.sleep(0.5)"])
    bad = dp.Piece("bad", "card", ["python", "-c", "raise SystemExit(3)"])
    then = dp.Piece("then", "card", ["python", "-c", "open('then.txt', 'w').write('ran')"], after=("ok",))
    never = dp.Piece("never", "card", ["python", "-c", "open('never.txt', 'w').write('ran')"], after=("ok", "bad"))
    dp.run_pieces([then, never, ok, bad], tmp_path, time.time() + 30, time.time(), tiny=False)
    assert ok.status == then.status == "done" and (tmp_path / "then.txt").read_text() == "ran"
    assert never.status == "not started: bad unfinished" and not (tmp_path / "never.txt").exists()


@pytest.mark.slow
def test_the_dry_run_makes_every_folder_the_real_plan_makes(dry):
    """Each folder the plan has for the parts run is made, finished; the other parts' pieces are skipped."""
    work, out, parts = dry
    tiny = {p.folder for p in dp.plan("cpu", True, "DATA", Path("W")) if (p.combine or p.part == "permute")
            and p.part in parts}
    assert tiny
    for f in tiny:
        assert (work / f / "summary.json").is_file() and (work / f / "report.json").is_file(), f
    record = json.loads((work / "plan.json").read_text())
    assert all(p["status"] == "done" if p["part"] in parts else p["status"] == "skipped: not in --parts"
               for p in record["pieces"]), [(p["name"], p["status"]) for p in record["pieces"]]
    assert any(p["status"] == "done" for p in record["pieces"])
    # the returned files: at most 8, each named as the device tool brings files back, none over its 16 MiB
    files = sorted(out.iterdir())
    assert 3 <= len(files) <= 8
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", f.name) and f.stat().st_size <= 16 * 2**20 for f in files)


@pytest.mark.slow
def test_the_ledger_reads_each_row_from_a_dry_run_folder(dry):
    from jackson.lab_report.claims import ledger
    work, _, parts = dry
    rows = {r.claim.id: r for r in ledger(work)}
    made = {p.folder for p in dp.plan("cpu", True, "DATA", Path("W")) if p.combine or p.part == "permute"}
    assert [c for c in ROWS if ROW_PART[c] in parts]
    for cid in ROWS:
        if ROW_PART[cid] not in parts:
            continue
        r = rows[cid]
        assert r.folder in made, (cid, r.verdict, r.measured, r.others)
        assert not any("unreadable" in o for o in r.others), r.others
    # the pieces' own folders are under pieces/: no rule reads them, so no claim is judged twice
    assert not any(r.folder.startswith("pieces/") for r in rows.values())


@pytest.mark.slow
def test_the_record_holds_the_numbers_the_report_quotes(dry):
    work, _, parts = dry
    res = json.loads((work / "plan.json").read_text())["results"]
    assert set(res) == parts
    if "device_check" in parts:
        # the CPU as the device: the same float32 run twice, so the device's deviation is the CPU's
        assert [r["features"] for r in res["device_check"]] == ["learned", "given"]
        assert all(r["agrees"] and r["device_deviation"] == r["cpu_float32_deviation"] for r in res["device_check"])
    if "sweep_mh" in parts:
        accs = res["sweep_mh"]["vit_probe/sweep_mh_vit_p8_d32_l2_h1_e1"]
        assert sorted(int(a["m_h"]) for a in accs) == [1, 2, 4, 8] and all(0 <= float(a["test_acc"]) <= 1 for a in accs)
    if "permute" in parts:
        assert set(res["permute"]) >= {"before", "after", "control", "reaches_0.9"}
    if "cot_dp" in parts:
        assert {k.split("_")[0] for k in res["cot_dp"]} == {"lis-4", "ed-4", "arithmetic-2"}
    if "card" in parts:       # the doubling check labelled the tiny card's members against their partner
        assert list(res["card"]) == ["jackson/card-a1.5-rinf-20steps"] and "doubling check" in res["card"][
            "jackson/card-a1.5-rinf-20steps"]


@pytest.mark.slow
def test_a_bundle_unpacks_and_a_resumed_call_reruns_nothing_finished(dry, tmp_path):
    work, out, parts = dry
    r = subprocess.run([sys.executable, str(SCRIPT), "--unpack", str(out), "--work", str(tmp_path / "unpacked")],
                       cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    sections = ({"vit_probe"} if parts & {"sweep_mh", "permute"} else set()) | ({"cot_dp"} & parts)
    for f in ("plan.json", "pieces", *sections):
        assert (tmp_path / "unpacked" / f).exists(), f
    summary = next(work.glob(f"{sorted(sections)[0]}/*/summary.json"))
    assert (tmp_path / "unpacked" / summary.relative_to(work)).read_bytes() == summary.read_bytes()
    r = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--tiny", "--parts", ",".join(sorted(parts)),
                        "--resume-from", str(out), "--work", str(tmp_path / "again"), "--out", str(tmp_path / "out2")],
                       cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "started" not in r.stdout and "0 pieces to run" in r.stdout
    assert sorted(p.name for p in (tmp_path / "out2").iterdir())   # a bundle again, for a later call


# ---- the pieces around it, in seconds ---------------------------------------------------------------------

def test_a_piece_past_the_deadline_is_stopped_and_one_that_ignores_sigterm_is_killed(tmp_path, monkeypatch):
    monkeypatch.setattr(dp, "STOP_GRACE_S", 1.0)
    (tmp_path / "logs").mkdir()
    obey = dp.Piece("obey", "cot_dp", ["python", "-c", "import time; time.sleep(60)"])
    deaf = dp.Piece("deaf", "permute", ["python", "-c", "import signal, time; signal.signal(signal.SIGTERM, "
                                        "signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"])
    quick = dp.Piece("quick", "device_check", ["python", "-c", "print('fine')"])
    t0 = time.time()
    dp.run_pieces([quick, obey, deaf], tmp_path, time.time() + 2.0, t0, tiny=False)
    assert time.time() - t0 < 15
    assert quick.status == "done" and (tmp_path / "logs" / "quick.log").read_text().strip() == "fine"
    assert obey.status == "stopped at deadline" and deaf.status == "stopped at deadline"


def test_a_combination_waits_for_its_pieces_and_is_not_started_when_one_failed(tmp_path):
    (tmp_path / "logs").mkdir()
    ok = dp.Piece("ok", "cot_dp", ["python", "-c", "pass"], folder="pieces/ok", group="g")
    bad = dp.Piece("bad", "cot_dp", ["python", "-c", "raise SystemExit(4)"], folder="pieces/bad", group="g")
    comb = dp.Piece("g", "cot_dp", ["python", "-c", "pass"], folder="g", group="g", combine=True)
    dp.run_pieces([comb, ok, bad], tmp_path, time.time() + 30, time.time(), tiny=False)
    assert ok.status == "done" and bad.status == "failed (rc 4)"
    assert comb.status == "not started: bad unfinished" and not (tmp_path / "g").exists()


def test_the_bundle_keeps_results_before_checkpoints_and_splits_into_chunks(tmp_path):
    work = tmp_path / "work"
    (work / "pieces" / "a" / "checkpoints").mkdir(parents=True)
    (work / "pieces" / "a" / "data" / "lis-20").mkdir(parents=True)
    (work / "cache").mkdir()
    (work / "pieces" / "a" / "results.csv").write_bytes(os.urandom(300_000))
    (work / "pieces" / "a" / "checkpoints" / "small.pt").write_bytes(os.urandom(200_000))
    (work / "pieces" / "a" / "checkpoints" / "big.pt").write_bytes(os.urandom(900_000))
    (work / "pieces" / "a" / "data" / "lis-20" / "train.txt").write_text("regenerated from its seed\n")
    (work / "cache" / "x.npz").write_bytes(b"cache")
    (work / "pieces" / "a" / ".jackson-lab.lock").write_text("")
    out = tmp_path / "out"
    out.mkdir()
    b = dp.bundle(work, out, "S", cap_mib=0.7, chunk_mib=0.25)
    assert b["checkpoints_left_out"] == ["pieces/a/checkpoints/big.pt"]
    assert len(b["chunks"]) >= 2 and all((out / c).stat().st_size <= 0.25 * 2**20 for c in b["chunks"])
    dp.unpack(out, tmp_path / "back")
    back = {p.relative_to(tmp_path / "back").as_posix() for p in (tmp_path / "back").rglob("*") if p.is_file()}
    assert back == {"pieces/a/results.csv", "pieces/a/checkpoints/small.pt"}
    assert (tmp_path / "back/pieces/a/checkpoints/small.pt").read_bytes() == \
        (work / "pieces/a/checkpoints/small.pt").read_bytes()
    # a finished piece's checkpoints resume nothing: left behind, whatever room there is
    out2 = tmp_path / "out2"
    out2.mkdir()
    b = dp.bundle(work, out2, "T", cap_mib=5, finished=("pieces/a",))
    assert b["checkpoints_left_out"] == [] and b["files"] == 1


def test_the_device_check_lines_are_read_back_as_its_numbers():
    from jackson.rate_sweep import device_check as dc
    rows = [{"features": "learned", "device": "cuda", "dtype": "float32", "device_deviation": 3.1e-6,
             "cpu_float32_deviation": 7.7e-6, "tolerance": dc.TOLERANCE, "agrees": True, "same_status": True},
            {"features": "given", "device": "cuda", "dtype": "float32", "device_deviation": 0.0021,
             "cpu_float32_deviation": 1.6e-6, "tolerance": dc.TOLERANCE, "agrees": False, "same_status": True}]
    got = dp.device_check_rows("noise\n" + "\n".join(dc.report_lines(rows)))
    assert [(g["features"], g["device_deviation"], g["cpu_float32_deviation"], g["agrees"]) for g in got] == \
        [("learned", 3.1e-6, 7.7e-6, True), ("given", 0.0021, 1.6e-6, False)]


def test_every_command_of_the_real_plan_parses_and_its_parts_fit_the_deadline():
    import contextlib
    import io
    import jackson.command as C
    from cot_dp.cli import main as cot_main
    from jackson.rate_sweep.cli import sweep_main
    from jackson.rate_sweep.device_check import main as check_main
    from vit_probe.cli import main as vit_main
    seen = {}
    build = C.command_parser

    def watched(cls, prog, description="", status=False):
        seen[prog] = build(cls, prog, description, status)
        return seen[prog]

    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(io.StringIO()):
        mp.setattr(C, "command_parser", watched)
        for main, argv in ((cot_main, ["sweep"]), (check_main, []), (vit_main, ["sweep-mh"]), (vit_main, ["permute"]),
                           (sweep_main, [])):
            with pytest.raises(SystemExit):
                main(argv + ["--help"])
    pieces = dp.plan("cuda", False, "DATA", Path("W"))
    single = ("jackson-device-check", "jackson-sweep")         # commands without subcommands
    for p in pieces:
        if p.argv[0] == "jackson-doubling":                       # its own argparse: two folders (the card test)
            continue
        prog = p.argv[0] + ("" if p.argv[0] in single else " " + p.argv[1])
        rest = p.argv[1:] if p.argv[0] in single else p.argv[2:]
        seen[prog].parse_args(rest)                                 # SystemExit (the test fails) on a bad option
    assert [p.name for p in pieces if p.part == "cot_dp"][:12] == [
        f"cot-lis-{s}-{m}-d{d}" for s in (20, 35) for d in (64, 128) for m in dp.COT_MODELS]   # LIS first
    assert set(dp.ESTIMATES) == set(dp.PARTS)
    assert all(sec <= dp.BUDGET_S - dp.BUNDLE_RESERVE_S for sec, _ in dp.ESTIMATES.values())
    assert dp.BUDGET_S + 60 <= 600      # the device tool's 10-minute command, with a minute for python and torch


@pytest.mark.parametrize("argv, words", [
    (["--parts", "sweep"], "--parts: choose from"),
    (["--device", "tpu"], "--device: cpu, cuda or cuda:N"),
    (["--device", "cpu", "--data", "/nowhere/cifar.tar.gz"], "the CIFAR-10 archive is not here"),
    (["--device", "cpu", "--tiny", "--work", str(ROOT / "reports" / "plan-dry")], "--tiny writes no folder under reports/"),
    (["--device", "cpu", "--unpack", str(ROOT / "tests")], "holds no bundle"),
])
def test_bad_input_is_one_line_and_exit_2_and_writes_nothing(argv, words, tmp_path, capsys):
    if "--work" not in argv:
        argv = argv + ["--work", str(tmp_path / "w")]
    with pytest.raises(SystemExit) as e:
        dp.main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and words in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "w").exists() and not (ROOT / "reports" / "plan-dry").exists()


def test_an_existing_work_folder_is_refused_and_left_as_it_was(tmp_path, capsys):
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "mine.txt").write_text("kept")
    with pytest.raises(SystemExit) as e:
        dp.main(["--device", "cpu", "--tiny", "--work", str(tmp_path / "w")])
    assert e.value.code == 2 and "exists" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "w").iterdir()] == ["mine.txt"]


def test_the_archive_is_found_in_the_checkouts_shared_folder_first_then_beside_it(tmp_path):
    repo = tmp_path / "lab"
    (repo / "shared/data/cifar10-jpeg").mkdir(parents=True)
    (tmp_path / "shared/data/cifar10-jpeg").mkdir(parents=True)
    assert dp.find_data(repo) == ""
    beside = tmp_path / "shared/data/cifar10-jpeg/cifar10-jpeg-q75.tar.gz"
    beside.write_bytes(b"x")
    assert dp.find_data(repo) == str(beside.resolve())              # the lab machine's layout
    inside = repo / "shared/data/cifar10-jpeg/cifar10-jpeg-q75.tar.gz"
    inside.write_bytes(b"x")
    assert dp.find_data(repo) == str(inside.resolve())              # what a GPU call carries


def test_cuda_asked_for_where_torch_sees_none_is_one_line(tmp_path, capsys):
    import torch
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(SystemExit) as e:
        dp.main(["--device", "cuda", "--work", str(tmp_path / "w")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "torch sees no CUDA device" in err and err.count("\n") == 1
    assert not (tmp_path / "w").exists()


def test_the_real_plans_grids_are_valid_and_a_piece_names_the_cells_of_its_combined_folder(tmp_path, capsys, monkeypatch):
    """--status of the real settings (on the CPU: the same validation, no GPU needed, nothing written): every cell a
    piece trains is a cell of its combined folder, by key, so the combination trains nothing."""
    from cot_dp.entry import main as cot_main
    from vit_probe.cli import main as vit_main
    monkeypatch.chdir(tmp_path)
    pieces = dp.plan("cpu", False, str(tmp_path / "cifar.tar.gz"), tmp_path)
    (tmp_path / "cifar.tar.gz").write_bytes(b"")              # --status reads no data

    def keys(p):
        main = cot_main if p.argv[0] == "cot-dp" else vit_main
        with pytest.raises(SystemExit) as e:
            main(p.argv[1:] + ["--status"])
        out = capsys.readouterr().out
        assert e.value.code in (0, None), out
        return set(re.findall(r"not started\s+(\S+_s\d+_[0-9a-f]{10})\b", out))

    for group in ("vit_probe/sweep_mh_vit_p4_d128_l4_h1_e40", "cot_dp/gpu-lis-10000steps"):
        members = [p for p in pieces if p.group == group and not p.combine]
        whole = keys(next(p for p in pieces if p.group == group and p.combine))
        parts = set().union(*(keys(p) for p in members))
        assert parts == whole and len(whole) == (14 if "sweep_mh" in group else 12)
    assert not any(tmp_path.glob("pieces/*")) and not (tmp_path / "vit_probe").exists()
