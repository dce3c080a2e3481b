"""The lab's GPU-bound rows in one prepared call of at most 10 minutes on one H100 / H200.

    python benchmarks/device_plan.py --device cuda [--resume-from DIR] [--parts P,...] [--out DIR]
    python benchmarks/device_plan.py --device cpu --tiny --work DIR      # the dry run (tests/test_device_plan.py)
    python benchmarks/device_plan.py --unpack DIR --work DIR             # a call's bundle, back into run folders

Five parts, run side by side as subprocesses (one process per resumable piece), each with a deadline, all of them
stopped (SIGTERM: finished cells kept, the in-flight cell's checkpoint on disk) before the plan's own deadline so
that what finished and what can resume is packed into at most 8 files under --out ($OUT on the device machine):

  card          first: the card (jackson-sweep --alpha 1.5 --rank inf) at 3 seeds and CARD["steps"], beside its
                doubling partner at doubling.FACTOR x the steps (one piece per seed and budget), each combined into
                one folder, then the doubling check (python -m jackson.rate_sweep.doubling) labels its members;
  device_check  jackson-device-check --device cuda: the CPU/GPU difference against the stated tolerance;
  sweep_mh      vit-probe sweep-mh (Fig. 3a/3b): one piece per seed, combined into one folder when all finish;
  permute       vit-probe permute (Table 1, ViT): trained on the original data, then the permuted and control arms;
  cot_dp        cot-dp sweep cells (Yang et al. Fig. 1), LIS first, then ED, then arithmetic: one process per cell,
                checkpoints every 30 s; a grid whose cells have all finished is combined into one folder.

Everything is written into a fresh work folder (default runs/device-plan-<UTC time>-<pid>): an existing one is
refused, nothing is cleared or overwritten.  --resume-from reads a previous call's bundle (or an unpacked work
folder) and copies it into the fresh folder first: finished pieces are skipped, stopped ones resume from their
checkpoints.  The parts' settings, time estimates and their sources: PARTS below and reports/benchmarks.md
("The GPU plan").  No console script is needed: each command runs as `python -c` on its entry function with the
repository on PYTHONPATH, so the device machine's python3 (which holds torch, timm, numpy, pandas, ...) runs the
lab from the copied tree without an install.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENTRY = {"jackson-device-check": "jackson.rate_sweep.device_check:main", "vit-probe": "vit_probe.cli:main",
         "cot-dp": "cot_dp.entry:main", "jackson-sweep": "jackson.rate_sweep.cli:sweep_main",
         "jackson-doubling": "jackson.rate_sweep.doubling:main"}
PARTS = ("card", "device_check", "sweep_mh", "permute", "cot_dp")
# where the CIFAR-10 archive is looked for, in order: the copy a device call carries inside the checkout (the tool
# sends `shared/` of the checkout, never the `../shared` beside it), then the lab machine's shared folder
DATA_PLACES = ("shared/data/cifar10-jpeg/cifar10-jpeg-q75.tar.gz", "../shared/data/cifar10-jpeg/cifar10-jpeg-q75.tar.gz")
BUDGET_S = 540          # the whole plan, bundle included, inside a 600 s call (python start-up and transfer: the rest)
BUNDLE_RESERVE_S = 30   # parts are stopped this long before the budget ends, so the bundle is written in time
STOP_GRACE_S = 20       # after SIGTERM, this long for a piece to save and leave before SIGKILL
CHUNK_MIB = 15          # one returned file (the device tool takes files of at most 16 MiB, 8 files, 64 MiB in all)
BUNDLE_MIB = 20         # the bundle's cap: a second call carries it back beside the ~20 MiB tree and the 19 MiB
                        # CIFAR-10 archive, inside the tool's 64 MiB

# ---- the plan's settings -----------------------------------------------------------------------------------

# The card at the budget its largest members need (reports/jackson/FITTING.md, TIME_TO_QUALITY.md: m_h 16 is still
# moving at 24,000 steps), checked by training on at twice that: the 3-seed converged card the CPU cannot afford.
CARD = dict(seeds=(0, 1, 2), steps=48000)
TINY_CARD = dict(seeds=(0,), steps=20)
VIT = dict(arch="vit_p4_d128_l4_h1", groups=("1,4,16,64", "2,8,32"), seeds=(0, 1), epochs=40, batch=512)
PERMUTE = dict(arch="vit_p4_d128_l4_h4", original_epochs=200, finetune_epochs=20, batch=512)
COT_STEPS = 10000
COT_GRIDS = (   # (grid name, task, sizes, dims): the queue's order is LIS first
    ("lis", "lis", (20, 35), (64, 128)),
    ("ed", "ed", (4, 6), (64, 128)),
    ("arithmetic", "arithmetic", (3, 4, 5), (32, 64, 128)),
)
COT_MODELS = ("standard", "sparse", "linear")
COT_PROCS = 8           # cot-dp processes at once (16 cores: the ViT parts and the device check hold the others)
TINY_VIT = dict(arch="vit_p8_d32_l2_h1", groups=("1,4", "2,8"), seeds=(0,), epochs=1, batch=32)
TINY_PERMUTE = dict(arch="vit_p8_d32_l2_h2", original_epochs=1, finetune_epochs=1, batch=32)
TINY_COT = (("lis", "lis", (4,), (16,)), ("ed", "ed", (4,), (16,)), ("arithmetic", "arithmetic", (2,), (16,)))

# Each part's time on one H100 at the rates measured there (solo unless said), and the source of each rate; the parts
# run side by side, so the plan's wall time is the longest lane, cut at the deadline (reports/benchmarks.md, "The GPU
# plan", gives the arithmetic).  A part cut at the deadline resumes in the next call.
ESTIMATES = {
    "card": (510, "a call's whole budget, and more: unmeasured on a GPU: the 16-member bank ran 6.4-9.5 steps/s on one thread of the lab CPU "
                  "(48,000 steps of seed 0, 2026-12-07), so 3 seeds at 48,000 plus their 96,000-step partners are "
                  "432,000 bank steps; a piece cut at the deadline resumes its cell in the next call from the "
                  "checkpoint it saves every 120 s (cells/.ckpt-<key>.pt), so the part takes as many calls as it needs"),
    "device_check": (60, "two CPU trainings of each feature mode (float64 reference, float32): the whole check with "
                         "--device cpu took 174 s wall at 33% of a core on the loaded 2-core lab CPU (2026-11-28), "
                         "~58 s of CPU time for three trainings per mode; the GPU training unmeasured"),
    "sweep_mh": (340, "per piece 4 cells x 51-66 s (cell_wall_s of reports/vit_probe/sweep_mh_gpu_e40/cells, H100, "
                      "40 epochs of batch 512, one process) = 204-264 s, plus reading CIFAR-10 (<= 47 s on the loaded "
                      "lab CPU) and the combination (15-24 s in the dry run)"),
    "permute": (360, "240 epochs x 0.9-1.25 s (train_wall_s of the same cells: 36-50 s per 40 epochs of batch 512) "
                     "= 216-300 s, plus reading CIFAR-10 and three evaluations of 10,000 images"),
    "cot_dp": (510, "each cell 10,000 steps x 27-55 ms (reports/cot_dp/PRESETS.md: H100, 11-18 runs side by side, "
                    "batch 64) = 270-550 s; 8 cells at a time, LIS first, stopped at the deadline with checkpoints "
                    "<= 30 s old: the LIS grid's 12 cells take one or two calls"),
}


@dataclass
class Piece:
    name: str                  # unique; its log is logs/<name>.log
    part: str
    argv: list[str]            # console-script name first
    folder: str = ""           # its run folder, relative to the work folder ("" when it writes none)
    group: str = ""            # the combined folder it feeds (sweep_mh, cot_dp grids)
    after: tuple = ()          # the pieces that must be done before it starts (the card's doubling check)
    combine: bool = False      # the whole command over the group's finished pieces
    status: str = "not started"   # done | stopped at deadline | failed (rc N) | not started | skipped: why
    wall_s: float = 0.0
    note: str = ""


def find_data(root: Path) -> str:
    """The CIFAR-10 archive: the first of DATA_PLACES (relative to the checkout) that is a file, absolute; ""."""
    return next((str((root / p).resolve()) for p in DATA_PLACES if (root / p).is_file()), "")


def _shim(argv: list[str]) -> list[str]:
    prog, mod_fn = argv[0], ENTRY[argv[0]]
    mod, fn = mod_fn.split(":")
    code = f"import sys; sys.argv[0] = {prog!r}; from {mod} import {fn}; sys.exit({fn}())"
    return [sys.executable, "-c", code, *argv[1:]]


TINY_CHECK = """import dataclasses, sys
from jackson.hparams import FitConfig
from jackson.rate_sweep import device_check as dc
base = dataclasses.replace(dc.check_cell(), m_hs=(1, 2), n_train=256, n_test=128,
                           fit=FitConfig(steps=10, warmup=2, eval_every=5))
cells = {"learned": base, "given": dataclasses.replace(base, model=dataclasses.replace(base.model, features="given"),
                                                       fit=dataclasses.replace(dc.GIVEN_FIT, steps=10, warmup=2, eval_every=5))}
rows = dc.check(sys.argv[1], cells=cells, progress=False)
print("\\n".join(dc.report_lines(rows)))
sys.exit(0 if all(r["agrees"] for r in rows) else 1)
"""


def card_pieces(device: str, tiny: bool) -> list[Piece]:
    """The card part: per seed a piece at CARD's steps and its partner at FACTOR x them, each budget combined into
    one folder under jackson/ (the ledger reads it as the card's target), then the doubling check."""
    from jackson.rate_sweep.doubling import FACTOR
    c = TINY_CARD if tiny else CARD
    common = ["jackson-sweep", "--device", device, "--alpha", "1.5", "--rank", "inf", "--threads", "1",
              *(["--quick"] if tiny else [])]
    pieces, folders = [], []
    for steps in (c["steps"], FACTOR * c["steps"]):
        group = f"jackson/card-a1.5-rinf-{steps}steps"
        folders.append(group)
        budget = ["--steps", str(steps)]
        for s in c["seeds"]:
            name = f"card-{steps}-s{s}"
            pieces.append(Piece(name, "card", [*common, *budget, "--seeds", str(s), "--out", f"pieces/{name}"],
                                f"pieces/{name}", group))
        # the combination's folder starts as the first piece's run (one seed): --force lets the whole command's
        # config (every seed) be written over it
        pieces.append(Piece(f"card-{steps}", "card", [*common, *budget, "--seeds", ",".join(map(str, c["seeds"])),
                                                      "--force", "--out", group], group, group, combine=True))
    pieces.append(Piece("card-doubling", "card", ["jackson-doubling", *folders], after=(f"card-{c['steps']}",
                                                                                      f"card-{FACTOR * c['steps']}")))
    return pieces


def plan(device: str, tiny: bool, data: str, work: Path) -> list[Piece]:
    """Every piece of the four parts, in the order they start."""
    cache = str(work / "cache")
    pieces = card_pieces(device, tiny)
    if tiny:
        pieces.append(Piece("device_check", "device_check", ["python", "-c", TINY_CHECK, device]))
    else:
        pieces.append(Piece("device_check", "device_check", ["jackson-device-check", "--device", device,
                                                             "--threads", "2"]))
    v, p = (TINY_VIT, TINY_PERMUTE) if tiny else (VIT, PERMUTE)
    small = ["--n-train", "256", "--n-eval-train", "64", "--n-spectra", "16"] if tiny else []
    pf = (["--original-n-train", "256", "--finetune-n-train", "256", "--n-first", "3"] if tiny else [])
    tag = f"{p['arch']}_e{p['original_epochs']}"
    pieces.append(Piece("permute", "permute", ["vit-probe", "permute", "--device", device, "--data", data, "--cache",
                                               cache, "--arch", p["arch"], "--original-epochs", str(p["original_epochs"]),
                                               "--original-batch-size", str(p["batch"]),
                                               "--finetune-epochs", str(p["finetune_epochs"]),
                                               "--finetune-batch-size", str(p["batch"]), "--original-ckpt-every-s", "30",
                                               "--finetune-ckpt-every-s", "30", *pf, "--threads", "1",
                                               "--out", f"vit_probe/permute_{tag}"], f"vit_probe/permute_{tag}"))
    group = f"vit_probe/sweep_mh_{v['arch']}_e{v['epochs']}"
    base = ["vit-probe", "sweep-mh", "--device", device, "--data", data, "--cache", cache, "--arch", v["arch"],
            "--epochs", str(v["epochs"]), "--batch-size", str(v["batch"]), "--ckpt-every-s", "30",
            *small, "--threads", "1"]
    for s in v["seeds"]:
        for i, mh in enumerate(v["groups"]):
            name = f"sweep_mh-s{s}-{i}"
            pieces.append(Piece(name, "sweep_mh", [*base, "--m-h", mh, "--seeds", str(s), "--out", f"pieces/{name}"],
                                f"pieces/{name}", group))
    every = ",".join(map(str, sorted(int(m) for g in v["groups"] for m in g.split(","))))
    pieces.append(Piece("sweep_mh", "sweep_mh", [*base, "--m-h", every, "--seeds", ",".join(map(str, v["seeds"])),
                                                 "--out", group], group, group, combine=True))
    steps = (["--steps", "30", "--batch-size", "16", "--eval-every", "15", "--eval-size", "32", "--gen-batch", "64",
              "--n-train", "256", "--n-test", "48"] if tiny else ["--steps", str(COT_STEPS)])
    for grid, task, sizes, dims in (TINY_COT if tiny else COT_GRIDS):
        gfolder = f"cot_dp/gpu-{grid}-{steps[1]}steps"
        common = ["cot-dp", "sweep", "--task", task, "--device", device, *steps, "--ckpt-every-s", "30",
                  "--threads", "1"]
        # one process per cell on the GPU (side by side); --tiny: one process per grid, its cells in turn
        cells = ([(str(s), str(D), m) for s in sizes for D in dims for m in COT_MODELS] if not tiny else
                 [(",".join(map(str, sizes)), ",".join(map(str, dims)), ",".join(COT_MODELS))])
        for s, D, m in cells:
            name = f"cot-{grid}-{s}-{m}-d{D}" if not tiny else f"cot-{grid}-all"
            pieces.append(Piece(name, "cot_dp", [*common, "--size", s, "--d-model", D, "--model", m,
                                                 "--out", f"pieces/{name}"], f"pieces/{name}", gfolder))
        pieces.append(Piece(f"cot-{grid}", "cot_dp", [*common, "--size", ",".join(map(str, sizes)), "--d-model",
                                                       ",".join(map(str, dims)), "--out", gfolder],
                            gfolder, gfolder, combine=True))
    return pieces


# ---- running ----------------------------------------------------------------------------------------------

def fail(message: str) -> None:
    """Bad input: one line on stderr, exit 2 (the lab's exit contract)."""
    print(f"device_plan.py: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def say(t0: float, text: str) -> None:
    print(f"[{time.time() - t0:6.1f} s] {text}", flush=True)


def _copy_into_group(work: Path, piece: Piece, members: list[Piece]) -> None:
    """The combined folder: the first piece's config.json, command.txt and environment.json (a run of the same
    command, so the whole command may run there), then every piece's finished cells and data, copied; the whole
    command then reuses them, trains nothing and writes the tables and summary.  Until it has, the folder has no
    summary.json: it never looks finished."""
    dest = work / piece.folder
    if dest.exists():
        return                                 # a resumed combination: the folder is already there
    dest.mkdir(parents=True)
    first = work / members[0].folder
    for name in ("config.json", "command.txt", "environment.json"):
        if (first / name).is_file():
            shutil.copy2(first / name, dest / name)
    for m in members:
        src = work / m.folder
        for sub in ("cells", "data"):
            for d in sorted((src / sub).glob("*")) if (src / sub).is_dir() else []:
                if d.is_dir() and not d.name.startswith(".") and not (dest / sub / d.name).exists():
                    shutil.copytree(d, dest / sub / d.name)


def run_pieces(pieces: list[Piece], work: Path, end: float, t0: float, tiny: bool) -> None:
    """Start pieces as slots free up (at most COT_PROCS cot-dp processes at once), a group's combination once all
    its pieces are done; stop everything still running at `end` (SIGTERM, then SIGKILL after STOP_GRACE_S)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
               PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    running: dict[str, tuple[subprocess.Popen, float]] = {}
    by_name = {p.name: p for p in pieces}
    todo = [p for p in pieces if p.status != "done" and not p.status.startswith("skipped")]
    limit = 2 if tiny else COT_PROCS
    stop_at = end
    while todo or running:
        now = time.time()
        for name, (proc, started) in list(running.items()):
            p = by_name[name]
            if proc.poll() is not None:
                p.wall_s += time.time() - started
                p.status = "done" if proc.returncode == 0 else (
                    "stopped at deadline" if p.note == "stopping" else f"failed (rc {proc.returncode})")
                p.note = "" if p.note == "stopping" else p.note
                del running[name]
                say(t0, f"{name}: {p.status} after {p.wall_s:.0f} s")
            elif now >= stop_at and p.note != "stopping":
                p.note = "stopping"
                os.killpg(proc.pid, signal.SIGTERM)
            elif p.note == "stopping" and now >= stop_at + STOP_GRACE_S:
                os.killpg(proc.pid, signal.SIGKILL)
        if now >= stop_at:
            for p in todo:
                p.status = "not started: the deadline came first"
            todo = []
        for p in list(todo):
            if p.after and any(by_name[n].status != "done" for n in p.after):
                if all(n not in running and by_name[n] not in todo for n in p.after):
                    p.status = "not started: " + ", ".join(n for n in p.after if by_name[n].status != "done") + " unfinished"
                    todo.remove(p)
                continue
            members = [q for q in pieces if q.group == p.group and not q.combine] if p.combine else []
            if p.combine and any(q.status != "done" for q in members):
                if all(q.name not in running and q not in todo for q in members):
                    p.status = "not started: " + ", ".join(q.name for q in members if q.status != "done") + " unfinished"
                    todo.remove(p)
                continue
            busy_cot = sum(by_name[n].part == "cot_dp" for n in running)
            if p.part == "cot_dp" and not p.combine and busy_cot >= limit:
                continue
            if tiny and len(running) >= limit:
                break
            if p.combine:
                _copy_into_group(work, p, members)
            log = open(work / "logs" / f"{p.name}.log", "a")
            argv = p.argv if p.argv[0] == "python" else _shim(p.argv)
            argv = [sys.executable, *argv[1:]] if argv[0] == "python" else argv
            proc = subprocess.Popen(argv, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            log.close()
            running[p.name] = (proc, time.time())
            todo.remove(p)
            say(t0, f"{p.name}: started ({' '.join(p.argv[:2])} ...)")
        time.sleep(0.2 if tiny else 1.0)


# ---- the bundle -------------------------------------------------------------------------------------------

def _skip(rel: str) -> bool:
    """Left out of the bundle: regenerable datasets and image caches, locks."""
    parts = rel.split("/")
    return (parts[0] in ("cache", "bundle") or "data" in parts[1:3] and parts[0] in ("pieces", "cot_dp")
            or parts[-1] in (".lock", ".jackson-lab.lock"))


def bundle(work: Path, out: Path, stamp: str, cap_mib: float, chunk_mib: float = CHUNK_MIB,
           finished: tuple[str, ...] = ()) -> dict:
    """work -> out/bundle-<stamp>.tar.gz.NNN (chunks of CHUNK_MIB) beside out/plan-<stamp>.json.  Every file
    but checkpoints goes in; checkpoints (resume state) smallest first while the cap allows, none of a finished
    piece's folder (`finished`: nothing there resumes); the rest are listed."""
    files, ckpts = [], []
    for p in sorted(work.rglob("*")):
        rel = p.relative_to(work).as_posix()
        if p.is_file() and not p.is_symlink() and not _skip(rel):
            if "/checkpoints/" not in f"/{rel}":
                files.append((rel, p.stat().st_size))
            elif not any(rel.startswith(f.rstrip("/") + "/") for f in finished):
                ckpts.append((rel, p.stat().st_size))
    room = cap_mib * 2**20 - sum(s for _, s in files)
    left_out = []
    for rel, size in sorted(ckpts, key=lambda t: t[1]):
        if size <= room:
            files.append((rel, size))
            room -= size
        else:
            left_out.append(rel)
    tmp = out / f".bundle-{stamp}.tar.gz"
    with tarfile.open(tmp, "x:gz", compresslevel=1) as tar:
        for rel, _ in files:
            tar.add(work / rel, arcname=rel, recursive=False)
    chunks, data = [], tmp.read_bytes()
    tmp.unlink()                                 # the plan's own temporary file
    step = int(chunk_mib * 2**20)
    for i in range(0, max(1, len(data)), step):
        name = f"bundle-{stamp}.tar.gz.{i // step:03d}"
        with open(out / name, "xb") as fh:
            fh.write(data[i:i + step])
        chunks.append(name)
    return {"chunks": chunks, "bytes": len(data), "files": len(files), "checkpoints_left_out": left_out}


def unpack(src: Path, dest: Path) -> None:
    """A bundle's chunks (src holds bundle-<stamp>.tar.gz.NNN of one stamp) or an unpacked work folder, into dest
    (new).  Safe extraction: tarfile's 'data' filter refuses links out and absolute paths."""
    chunks = sorted(src.glob("bundle-*.tar.gz.[0-9][0-9][0-9]"))
    stamps = {c.name.split(".tar.gz.")[0] for c in chunks}
    if len(stamps) > 1:
        fail(f"{src} holds bundles of {len(stamps)} calls ({', '.join(sorted(stamps))}); "
                         "give a folder with one")
    if not chunks and not (src / "plan.json").is_file():
        fail(f"{src} holds no bundle-*.tar.gz.NNN and no plan.json")
    dest.mkdir(parents=True)
    if chunks:
        tmp = dest / ".bundle.tar.gz"
        with open(tmp, "xb") as fh:
            for c in chunks:
                fh.write(c.read_bytes())
        with tarfile.open(tmp, "r:gz") as tar:
            tar.extractall(dest, filter="data")
        tmp.unlink()
    else:
        shutil.copytree(src, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".lock", ".jackson-lab.lock"))


def previous_done(src: Path) -> set[str]:
    """The pieces a previous call finished: its plan-<stamp>.json beside the bundle, or an unpacked plan.json."""
    found = sorted(src.glob("plan-*.json")) or [src / "plan.json"]
    if len(found) > 1:
        fail(f"{src} holds the plans of {len(found)} calls; give a folder with one call's files")
    try:
        old = json.loads(found[0].read_text())
    except (OSError, ValueError) as e:
        fail(f"cannot read {found[0]}: {e}")
    return {p["name"] for p in old.get("pieces", []) if p.get("status") == "done"}


# ---- the plan's record ------------------------------------------------------------------------------------

LINE = re.compile(r"^(\w+) features: (\S+) \((\w+)\) is (\S+) from the CPU float64 reference \(CPU float32: (\S+)\); "
                  r"tolerance (\S+): (agrees|DOES NOT agree)")


def device_check_rows(text: str) -> list[dict]:
    """jackson-device-check's printed lines as numbers (its report_lines)."""
    return [{"features": m[1], "device": m[2], "dtype": m[3], "device_deviation": float(m[4]),
             "cpu_float32_deviation": float(m[5]), "tolerance": float(m[6]), "agrees": m[7] == "agrees"}
            for m in (LINE.match(line) for line in text.splitlines()) if m]


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def results(work: Path) -> dict:
    """What the finished folders say, for plan.json and the closing lines: the device check's numbers, each ViT
    m_h's accuracy, the permutation's accuracies, each cot-dp cell's accuracy."""
    res: dict = {}
    for f in sorted(work.glob("jackson/*/doubling.json")):
        res.setdefault("card", {})[f.parent.relative_to(work).as_posix()] = json.loads(f.read_text()).get("line", "")
    log = work / "logs" / "device_check.log"
    if log.is_file():
        res["device_check"] = device_check_rows(log.read_text(errors="replace"))
    for f in sorted(work.glob("vit_probe/sweep_mh_*/results.csv")) + sorted(work.glob("pieces/sweep_mh-*/results.csv")):
        res.setdefault("sweep_mh", {})[f.parent.relative_to(work).as_posix()] = [
            {k: r[k] for k in ("m_h", "seed", "train_loss_eval", "test_acc") if k in r} for r in _rows(f)]
    for f in sorted(work.glob("vit_probe/*/summary.json")):
        s = json.loads(f.read_text())
        if "before" in s:
            res["permute"] = {k: s.get(k) for k in ("before", "after", "control", "zero_shot_permuted")}
            res["permute"]["reaches_0.9"] = bool(s.get("before", 0) >= 0.9)
    for f in sorted(work.glob("pieces/cot-*/cells/*/rows.csv")) + sorted(work.glob("cot_dp/*/cells/*/rows.csv")):
        for r in _rows(f):
            res.setdefault("cot_dp", {})[f.parent.name] = {k: r.get(k) for k in ("accuracy", "steps", "step_ms",
                                                                                  "train_s", "device")}
    return res


def summary_lines(res: dict) -> list[str]:
    """The numbers of a call in a few lines (the end of its output is what a device call shows first)."""
    lines = [f"{folder}: {line}" for folder, line in res.get("card", {}).items()]
    lines += [f"device check, {r['features']} features: {r['device_deviation']:.2g} from the float64 reference "
             f"(CPU float32 {r['cpu_float32_deviation']:.2g}), tolerance {r['tolerance']:g}: "
             + ("agrees" if r["agrees"] else "DOES NOT agree") for r in res.get("device_check", [])]
    for folder, rows in res.get("sweep_mh", {}).items():
        if not folder.startswith("pieces/"):
            lines.append(f"{folder}: test accuracy by m_h (seed): " + ", ".join(
                f"{r['m_h']} ({r['seed']}) {float(r['test_acc']):.4f}" for r in rows))
    if "permute" in res:
        r = res["permute"]
        lines.append(f"permutation: before {r['before']}, permuted {r['after']}, control {r['control']}; the starting "
                     "model " + ("reached" if r["reaches_0.9"] else "did NOT reach") + " 0.9")
    if "cot_dp" in res:
        lines.append(f"cot-dp: {len(res['cot_dp'])} finished cells, best accuracy "
                     f"{max(float(r['accuracy']) for r in res['cot_dp'].values()):.3f}")
    return lines


def write_plan(work: Path, record: dict) -> None:
    tmp = work / ".plan.json.tmp"
    tmp.write_text(json.dumps(record, indent=1, default=str))
    tmp.replace(work / "plan.json")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="device_plan.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu (default: cuda)")
    ap.add_argument("--tiny", action="store_true", help="the dry run: every part at seconds-long sizes, same folders")
    ap.add_argument("--work", default="", help="a new folder for the run folders (default runs/device-plan-<time>-<pid>)")
    ap.add_argument("--out", default=os.environ.get("OUT", ""), help="where the bundle goes (default $OUT; none: "
                    "<work>/bundle)")
    ap.add_argument("--data", default="", help="the CIFAR-10 archive (default: the first of " + ", ".join(DATA_PLACES)
                    + "; --tiny: a random-image fixture)")
    ap.add_argument("--parts", default=",".join(PARTS), help="comma list of " + ", ".join(PARTS) + " (default: all)")
    ap.add_argument("--resume-from", default="", help="a previous call's bundle folder or unpacked work folder")
    ap.add_argument("--budget-s", type=float, default=BUDGET_S, help=f"the plan's wall time (default {BUDGET_S})")
    ap.add_argument("--bundle-mib", type=float, default=BUNDLE_MIB, help=f"the bundle's cap (default {BUNDLE_MIB})")
    ap.add_argument("--unpack", default="", help="only unpack this bundle folder into --work, run nothing")
    ap.add_argument("--print-plan", action="store_true", help="print each piece's command and each part's estimate; "
                    "run nothing")
    a = ap.parse_args(argv)
    if a.print_plan:
        for p in plan(a.device, a.tiny, a.data or DATA_PLACES[0], Path("WORK")):
            print(f"{p.part:12s} {p.name:28s} {' '.join(p.argv)}" if p.argv[0] != "python" else f"{p.part:12s} {p.name}")
        for part, (sec, source) in ESTIMATES.items():
            print(f"estimate {part}: {sec} s ({source})")
        return 0
    t0 = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(t0)) + f"-{os.getpid()}"
    work = Path(a.work or ROOT / "runs" / f"device-plan-{stamp}").resolve()
    if work.exists():
        fail(f"--work: {work} exists; the plan writes into a new folder only (nothing there is cleared)")
    if a.unpack:
        unpack(Path(a.unpack), work)
        print("\n".join(summary_lines(results(work))) or "no finished results in the bundle")
        return 0
    parts = [p for p in a.parts.split(",") if p]
    if not parts or not set(parts) <= set(PARTS):
        fail(f"--parts: choose from {', '.join(PARTS)}, got {a.parts!r}")
    if a.tiny and (ROOT / "reports") in [work, *work.parents]:
        fail("--tiny writes no folder under reports/ (its numbers are a dry run's)")
    if a.device.startswith("cuda"):
        import torch
        if not torch.cuda.is_available():
            fail(f"--device {a.device}: torch sees no CUDA device on this machine")
    elif a.device != "cpu":
        fail(f"--device: cpu, cuda or cuda:N, got {a.device!r}")
    out = Path(a.out).resolve() if a.out else work / "bundle"
    if out.exists() and any(out.glob(f"*{stamp}*")):
        fail(f"--out: {out} already holds this call's files")
    done = previous_done(Path(a.resume_from)) if a.resume_from else set()
    need_vit = any(p.part in ("sweep_mh", "permute") and p.part in parts and p.name not in done
                   for p in plan(a.device, a.tiny, "", work))
    data = a.data
    if need_vit and not a.tiny and not data:
        data = find_data(ROOT)
    if need_vit and (data or not a.tiny) and not (data and Path(data).exists()):
        fail("the CIFAR-10 archive is not here (looked for " + ", ".join(a.data and [a.data] or DATA_PLACES)
             + "); before the call copy it into the checkout: mkdir -p shared/data/cifar10-jpeg && cp "
             "../shared/data/cifar10-jpeg/cifar10-jpeg-q75.tar.gz shared/data/cifar10-jpeg/, or leave the ViT "
             "parts out with --parts device_check,cot_dp")
    if a.resume_from:
        unpack(Path(a.resume_from), work)
    else:
        work.mkdir(parents=True)
    if need_vit and not data:          # --tiny without --data: random images in the official layout
        from vit_probe.data import write_official_fixture
        data = str(write_official_fixture(work / "fixture", n_train_per_batch=64, n_test=64))
    (work / "logs").mkdir(exist_ok=True)
    pieces = plan(a.device, a.tiny, data, work)
    for p in pieces:
        if p.name in done:
            p.status = "done"
        elif p.part not in parts:
            p.status = "skipped: not in --parts"
    end = t0 + a.budget_s - BUNDLE_RESERVE_S
    record = {"stamp": stamp, "device": a.device, "tiny": a.tiny, "budget_s": a.budget_s, "data": data,
              "resumed_from": a.resume_from, "pieces": [asdict(p) for p in pieces]}
    if a.device.startswith("cuda"):
        import torch
        record.update(gpu=torch.cuda.get_device_name(0), torch=torch.__version__)
    write_plan(work, record)
    say(t0, f"work folder {work}; {sum(p.status != 'done' and not p.status.startswith('skipped') for p in pieces)} "
            f"pieces to run, parts stop at {end - t0:.0f} s")
    try:
        run_pieces(pieces, work, end, t0, a.tiny)
    finally:
        record.update(pieces=[asdict(p) for p in pieces], wall_s=round(time.time() - t0, 1), results=results(work))
        write_plan(work, record)
        out.mkdir(parents=True, exist_ok=True)
        with open(out / f"plan-{stamp}.json", "x") as fh:
            json.dump(record, fh, indent=1, default=str)
        b = bundle(work, out, stamp, a.bundle_mib, finished=tuple(p.folder for p in pieces
                                                                   if p.status == "done" and p.folder))
        say(t0, f"bundle: {len(b['chunks'])} file(s), {b['bytes'] / 2**20:.1f} MiB, {b['files']} files"
                + (f"; {len(b['checkpoints_left_out'])} checkpoint(s) left out (cap {a.bundle_mib:g} MiB)"
                   if b["checkpoints_left_out"] else ""))
        with open(out / f"bundle-{stamp}.json", "x") as fh:
            json.dump(b, fh, indent=1)
    for p in pieces:
        print(f"{p.name}: {p.status}" + (f", {p.wall_s:.0f} s" if p.wall_s else ""))
    print("\n".join(summary_lines(record["results"])))
    return 0 if all(p.status == "done" or p.status.startswith("skipped") for p in pieces) else 3


if __name__ == "__main__":
    raise SystemExit(main())
