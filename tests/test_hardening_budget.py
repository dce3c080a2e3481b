"""Prices before payment, deadlines on every wait, caches keyed by content, foreign code in a box: the commands
jackson-sweep, jackson-tasks, rnn-compare, vit-probe and cot-dp (jackson/budget.py and each command's estimate).

Each class has a generator of cases that stops by itself: sizes and depths that grow geometrically until they
pass the limit, servers on 127.0.0.1 that speak the wrong protocol, model factories that misbehave in each way.
Every refusal is one line, a non-zero exit, no traceback, and no run folder."""
from __future__ import annotations

import http.server
import json
import os
import socket
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import one_line_exit
from jackson import budget
from jackson.config import MAX_JSON_DEPTH, UsageError, loads_json, read_config
from jackson.runfolder import check_scheduler

LIMIT = "64M"                 # the limit the growth generators run under ($JACKSON_MAX_MEMORY)


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setenv(budget.ENV, LIMIT)
    monkeypatch.setattr(budget, "GIVEN", None)
    return budget.parse_size(LIMIT)


def growing(start: int, factor: int, stop: int):
    """start, start*factor, ... up to stop: a bounded generator of sizes."""
    v = start
    while v <= stop:
        yield v
        v *= factor


# ---------------------------------------------------------------- the limit itself

def test_sizes_read_and_print_as_people_write_them(monkeypatch):
    assert budget.parse_size("64G") == 64 * 2 ** 30 and budget.parse_size("1.5TiB") == int(1.5 * 2 ** 40)
    assert budget.parse_size("500MB") == 500 * 10 ** 6 and budget.parse_size("2048") == 2048
    for bad in ("", "lots", "-1G", "1Q", "0"):
        with pytest.raises(UsageError, match="--max-memory"):
            budget.parse_size(bad)
    assert budget.fmt(2 * 2 ** 40) == "2 TiB" and budget.fmt(36.6 * 2 ** 30) == "36.6 GiB"
    monkeypatch.setattr(budget, "GIVEN", None)
    monkeypatch.setenv(budget.ENV, "3G")
    assert budget.limit() == (3 * 2 ** 30, f"${budget.ENV}")
    monkeypatch.setattr(budget, "GIVEN", 5)
    assert budget.limit() == (5, "--max-memory")          # the option wins over the environment
    monkeypatch.setattr(budget, "GIVEN", None)
    monkeypatch.delenv(budget.ENV)
    assert budget.limit()[1] == "this machine's memory" and budget.limit()[0] == budget.machine_memory()


def test_the_estimate_of_a_pod_target_counts_the_arrays_it_makes():
    """Independent computation: the basis values `_parts` builds for a chunk of 256 sequences are within the
    estimate's basis part (3 arrays of chunk x tau x K float64)."""
    import numpy as np
    from synthetic.pod_target import PODTarget, Spectrum, chunk_bytes
    t = PODTarget(Spectrum(alpha=1.5, rank=40), tau=12)
    pu, pv = t._parts(t.sample(256, 0))
    made = pu.nbytes + pv.nbytes + np.asarray(t.sigma).nbytes
    est = chunk_bytes(12, 40)["the basis values of 256 sequences"]
    assert made <= est <= 3 * made


def test_the_estimate_of_a_vit_counts_its_weights_exactly():
    """vit_probe.arch.params against the model timm builds (the number of weights the estimate prices)."""
    from vit_probe import models
    from vit_probe.arch import params, parse_arch
    for spec in ("vit_p8_d32_l2_h2", "vit_p8_d48_l1_h3_m3_q4"):
        a = parse_arch(spec)
        assert params(a) == sum(p.numel() for p in models.build(a).parameters()), spec


# ---------------------------------------------------------------- sizes that grow: each command

def _sweep(argv, capsys, tmp_path):
    from jackson.rate_sweep.cli import sweep_main
    return one_line_exit(sweep_main, ["--quick", *argv, "--out", str(tmp_path / "o")], capsys)


SWEEP_GROWTH = {   # option -> (first value, factor, last): each grows past any limit
    "--tau": (16, 8, 16 * 8 ** 7), "--n-test": (128, 16, 128 * 16 ** 6), "--n-train": (256, 16, 256 * 16 ** 6),
    "--width": (16, 8, 16 * 8 ** 6), "--k-max": (128, 16, 128 * 16 ** 6)}


@pytest.mark.parametrize("option", list(SWEEP_GROWTH))
def test_sweep_sizes_that_grow_are_priced_then_refused(option, small_limit, tmp_path, capsys):
    """Each size grows until its estimate passes the limit: below it the price is checked and passes (nothing
    runs), past it the command refuses in one line naming the estimate and the limit, with no run folder."""
    from jackson.rate_sweep import cost
    from jackson.rate_sweep.config import sweep_config
    extra = ["--alpha", "0.6"] if option == "--k-max" else []     # alpha 0.6: rank inf reaches k_max
    estimates, refused = [], 0
    for v in growing(*SWEEP_GROWTH[option]):
        key = option[2:].replace("-", "_")
        fields = {"model": {"width": v}} if key == "width" else {key: v}
        cfg = sweep_config(quick=True, **({"alpha": (0.6,)} if extra else {}), **fields)
        est = budget.total(cost.cell_bytes(cfg, cost.terms(cfg, cfg.alpha[0], cfg.rank[0]), cfg.widths()[0]))
        estimates.append(est)
        if est <= small_limit:
            cost.check(cfg)                                        # passes: priced, nothing allocated
            continue
        refused += 1
        line = _sweep([option, str(v), *extra], capsys, tmp_path)
        assert f"needs about {budget.fmt(est)} of memory" in line and f"limit of {budget.fmt(small_limit)}" in line, line
        assert budget.ENV in line and "--max-memory" in line
        assert not (tmp_path / "o").exists()
    assert estimates == sorted(estimates) and refused >= 1 and estimates[0] <= small_limit


@pytest.mark.parametrize("args", [["--tau", "1000000000"], ["--n-test", "1000000000"], ["--rank", "1000000000000"],
                                  ["--k-max", "100000000", "--alpha", "0.6"], ["--width", "1000000"]],
                         ids=["tau-1e9", "n-test-1e9", "rank-1e12", "k-max-1e8", "width-1e6"])
def test_sweep_requests_past_any_machine_are_one_line(args, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(budget.ENV, raising=False)
    line = _sweep(args, capsys, tmp_path)
    assert "needs about" in line and "this machine's memory" in line, line
    assert not (tmp_path / "o").exists()


def test_a_sigma_file_of_a_million_values_is_priced_before_a_target_is_built(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(budget.ENV, raising=False)
    f = tmp_path / "sigma.txt"
    f.write_text("\n".join(["1"] * 1_200_000) + "\n")          # 2.4 MB, far under the byte cap
    line = _sweep(["--sigma-file", str(f), "--m-h", "1,2,3"], capsys, tmp_path)
    assert "K 1,200,000" in line and "the basis values of 256 sequences" in line, line
    assert not (tmp_path / "o").exists()


def test_max_memory_raises_and_lowers_the_limit(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(budget.ENV, raising=False)
    line = _sweep(["--max-memory", "1M"], capsys, tmp_path)
    assert "more than the limit of 1 MiB (--max-memory)" in line
    line = _sweep(["--max-memory", "12 parsecs"], capsys, tmp_path)
    assert "--max-memory: cannot read '12 parsecs' as a size" in line
    from jackson.rate_sweep import cost
    from jackson.rate_sweep.config import sweep_config
    cfg = sweep_config(quick=True, tau=4096)                          # about 1.4 TiB
    with pytest.raises(budget.BudgetError):
        cost.check(cfg)
    monkeypatch.setattr(budget, "GIVEN", 2 ** 50)                    # someone with the machine
    cost.check(cfg)


def test_the_python_api_prices_before_it_allocates(monkeypatch, tmp_path):
    """run_sweep with tau 1e9, a PODTarget with a 10^7-term explicit spectrum or tau 1e9, a Spectrum of rank 1e12:
    each refused by its own check in one line, before any array of that size exists."""
    import numpy as np
    from jackson import run_sweep
    from synthetic.pod_target import PODTarget, Spectrum, TargetError
    monkeypatch.delenv(budget.ENV, raising=False)
    with pytest.raises(UsageError, match="needs about .* of memory") as e:
        run_sweep(quick=True, tau=10 ** 9, out=str(tmp_path / "o"))
    assert "\n" not in str(e.value) and not (tmp_path / "o").exists()
    with pytest.raises(TargetError, match=r"K 10,000,000 terms\) needs about"):
        PODTarget(Spectrum(explicit=np.linspace(1.0, 0.0, 10 ** 7)))
    with pytest.raises(TargetError, match=r"tau 1,000,000,000"):
        PODTarget(Spectrum(alpha=1.5, rank=4), tau=10 ** 9)
    with pytest.raises(TargetError, match="a spectrum of rank 1,000,000,000,000 needs about"):
        Spectrum(alpha=1.5, rank=1e12)
    t = PODTarget(Spectrum(alpha=1.5, rank=4), tau=8)
    with pytest.raises(TargetError, match="10,000,000,000,000 sequences"):
        t.sample(10 ** 13, 0)
    with pytest.raises(TargetError, match="the logits of 100,000,000,000 sequences"):
        t.logits(np.broadcast_to(np.zeros(8), (10 ** 11, 8)))          # a view: nothing of that size exists
    from jackson.pod import pod
    with pytest.raises(budget.BudgetError, match="the POD on 1,000,000 nodes needs about"):
        pod(lambda u, v: u[:, None] * v[None, :], n=10 ** 6)


TASKS_AND_COMPARE = [   # (command, its arguments, the option that grows, its first value)
    ("jackson-tasks", ["nearest-point", "--quick"], "--n-train", 256),
    ("jackson-tasks", ["weighted-average", "--quick"], "--tau", 10),
    ("rnn-compare", ["--quick"], "--n-train", 256),
]


def _priced_config(prog: str, args: list[str], option: str, v: int):
    """The config the command line builds, with `option` = v, and its price check (which refuses or passes)."""
    import dataclasses
    if prog == "jackson-tasks":
        from jackson.app_b.config import QUICK, RUNS, check_cost
        cfg = dataclasses.replace(RUNS[args[0]](), **QUICK)
        if option == "--tau":
            cfg = dataclasses.replace(cfg, task=dataclasses.replace(cfg.task, tau=v))
        else:
            cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, n_train=v))
    else:
        from rnn_compare.config import QUICK, CompareConfig, check_cost
        cfg = dataclasses.replace(CompareConfig(), **{**QUICK, "n_train": v})
    return cfg, check_cost


@pytest.mark.parametrize("prog,args,option,start", TASKS_AND_COMPARE, ids=[f"{p}-{o}" for p, _, o, _ in TASKS_AND_COMPARE])
def test_tasks_and_compare_sizes_that_grow(prog, args, option, start, small_limit, tmp_path, capsys):
    """jackson-tasks and rnn-compare: a size grows by 16; below the limit the price passes (nothing runs), and
    the first size past it is refused by the command in one line naming the estimate and the limit, with no run
    folder."""
    from jackson.app_b.cli import tasks_main
    from rnn_compare.cli import compare_main
    main = tasks_main if prog == "jackson-tasks" else compare_main
    passed = 0
    for v in growing(start, 4, start * 4 ** 12):
        cfg, check_cost = _priced_config(prog, args, option, v)
        try:
            check_cost(cfg)
            passed += 1
            continue
        except budget.BudgetError as e:
            want = str(e)
        line = one_line_exit(main, [*args, option, str(v), "--out", str(tmp_path / "o")], capsys)
        assert line.endswith(want) and f"limit of {budget.fmt(small_limit)}" in line, line
        assert not (tmp_path / "o").exists()
        assert passed >= 1
        return
    pytest.fail("no size was refused")


def test_tasks_and_compare_defaults_pass_their_price(monkeypatch):
    """The committed defaults and --quick fit this machine: the price refuses nothing the lab runs."""
    from jackson.app_b.config import check_cost as tasks_cost, QUICK
    from jackson.app_b.cli import RUNS
    from rnn_compare.config import CompareConfig, check_cost as compare_cost
    import dataclasses
    monkeypatch.setenv(budget.ENV, "8G")
    for cls in RUNS.values():
        tasks_cost(cls())
        tasks_cost(dataclasses.replace(cls(), **QUICK))
    compare_cost(CompareConfig())


@pytest.mark.parametrize("spec", ["vit_p1_d100000_l1000_h1", "vit_p4_d65536_l64_h4", "vit_p1_d4096_l12_h8"])
def test_vit_probe_architectures_past_the_limit_are_one_line(spec, tmp_path, capsys, monkeypatch):
    from vit_probe_helpers import _exit2
    monkeypatch.delenv(budget.ENV, raising=False)
    for cmd in (["spectra", "--arch", spec], ["sweep-mh", "--arch", spec], ["permute", "--arch", spec]):
        line = _exit2([*cmd, "--data", str(tmp_path / "none"), "--out", str(tmp_path / "o")], capsys)
        assert f"--arch {spec}" in line and "needs about" in line and "weights" in line, line
        assert not (tmp_path / "o").exists()


def test_a_torch_vit_description_past_the_limit_is_refused_unbuilt(tmp_path, monkeypatch):
    from vit_probe import model_source
    monkeypatch.delenv(budget.ENV, raising=False)
    f = tmp_path / "m.json"
    f.write_text(json.dumps({"kind": "torch-vit", "dim": 1_000_000, "depth": 1000, "heads": 1}))
    with pytest.raises(budget.BudgetError, match=r"a torch-vit of dim 1,000,000, depth 1,000.* needs about"):
        model_source.load(model_source.read_description(f), "", 0)


def test_vit_depth_and_width_that_grow_are_refused_by_build(small_limit):
    """vit_probe.models.build (the Python API by arch): weights priced before timm builds anything."""
    from vit_probe import models
    from vit_probe.arch import params, parse_arch
    refused = 0
    for d in growing(32, 4, 32 * 4 ** 6):
        a = parse_arch(f"vit_p8_d{d}_l{d // 16}_h2")
        if params(a) * budget.F32 <= small_limit:
            continue
        refused += 1
        with pytest.raises(budget.BudgetError, match=f"--arch vit_p8_d{d}_l{d // 16}_h2"):
            models.build(a)
    assert refused >= 2


def test_cot_dp_sequence_lengths_that_grow_are_priced(small_limit):
    """cot-dp: a data line of L tokens sets the attention matrices; L grows (a 64 KB arithmetic line is
    about 32,000 tokens) until the model's run is refused, naming L, the estimate and the limit."""
    from cot_dp.settings import ModelConfig, TrainConfig, check_run_memory, run_bytes
    m, t = ModelConfig(model="standard", d_model=64), TrainConfig()
    seen = []
    for L in growing(16, 4, 16 * 4 ** 8):
        est = budget.total(run_bytes(m, t, L, 20))
        seen.append(est)
        if est <= small_limit:
            check_run_memory(m, t, L, 20, "x")
            continue
        with pytest.raises(budget.BudgetError, match=rf"on sequences of {L:,} tokens needs about"):
            check_run_memory(m, t, L, 20, "x")
    assert seen == sorted(seen) and seen[-1] > small_limit
    lin = budget.total(run_bytes(ModelConfig(model="linear", d_model=64), t, 32768, 20))
    assert lin < budget.total(run_bytes(m, t, 32768, 20)) / 50     # linear attention holds no L x L matrix


@pytest.mark.parametrize("k", list(growing(64, 4, 64 * 4 ** 4)))
def test_cot_dp_prompts_that_grow_are_refused_before_they_are_solved(k, tmp_path):
    """An arithmetic prompt of k tokens (their prompt-only test lines are solved to check the answer; the CoT of a
    prompt grows as k^2): past MAX_PROMPT_TOKENS one line naming the line and the limit, nothing solved."""
    from cot_dp import data
    from cot_dp.tasks import TaskConfig
    from cot_dp.tokenizer import Tokenizer
    task = TaskConfig("arithmetic", 4)
    ops = (k - 1) // 2
    prompt = " ".join(["1"] + ["+ 1"] * ops) + " ="
    f = tmp_path / "chain" / "test_data.txt"
    f.parent.mkdir(parents=True)
    f.write_text(prompt + "\n")
    (tmp_path / "chain" / "test_ans.txt").write_text(f"{(ops + 1) % task.params.p}\n")
    n = len(prompt.split())
    if n <= data.MAX_PROMPT_TOKENS:
        (line,) = data.read_lines(f, task, Tokenizer.for_task(task), answers=data.read_answers(tmp_path / "chain" / "test_ans.txt"))
        assert line[-1] == str((ops + 1) % task.params.p)
    else:
        with pytest.raises(data.DataError, match=rf"line 1: a prompt of {n:,} tokens, longer than any task's"):
            data.read_lines(f, task, Tokenizer.for_task(task), answers=["0"])


def test_cot_dp_train_and_sweep_price_before_the_run_folder(tmp_path, capsys, monkeypatch):
    from cot_dp.cli import main
    monkeypatch.setenv(budget.ENV, "1M")
    assert main(["data", "--task", "arithmetic", "--size", "2", "--n-train", "32", "--n-test", "8",
                 "--out", str(tmp_path / "d")]) == 0
    line = one_line_exit(main, ["train", "--data", str(tmp_path / "d"), "--out", str(tmp_path / "o")], capsys)
    assert "sequences of" in line and "limit of 1 MiB" in line and not (tmp_path / "o").exists(), line
    line = one_line_exit(main, ["sweep", "--quick", "--out", str(tmp_path / "s")], capsys)
    assert "needs about" in line and not (tmp_path / "s").exists(), line
    monkeypatch.delenv(budget.ENV)
    for cmd in (["data", "--task", "lis", "--size", "8"], ["sweep", "--quick"]):
        line = one_line_exit(main, [*cmd, "--n-train", "1000000000000", "--out", str(tmp_path / "n")], capsys)
        assert "--n-train/--n-test: generating" in line and "examples of about" in line, line
        assert not (tmp_path / "n").exists()


# ---------------------------------------------------------------- depths that grow

def _nested(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


@pytest.mark.parametrize("depth", list(growing(8, 4, 8 * 4 ** 7)) + [100_000])
def test_json_nesting_that_grows_is_refused_past_the_limit(depth, tmp_path):
    """A --config nested `depth` levels: within the limit it is read (and then refused for its unknown key, as
    any typo is), past it one line naming the limit -- never a RecursionError (100,000 levels included)."""
    from jackson.rate_sweep.config import SweepConfig
    f = tmp_path / "c.json"
    f.write_text(_nested(depth))
    with pytest.raises(UsageError) as e:
        read_config(SweepConfig, str(f))
    msg = str(e.value)
    if depth + 1 > MAX_JSON_DEPTH:
        assert f"nested more than {MAX_JSON_DEPTH} levels deep" in msg
    else:
        assert "unknown key 'a'" in msg
    assert "\n" not in msg


def test_a_deep_config_on_the_command_line_is_one_line(tmp_path, capsys):
    f = tmp_path / "c.json"
    f.write_text("[" * 100_000 + "]" * 100_000)
    line = _sweep(["--config", str(f)], capsys, tmp_path)
    assert f"--config: {f} is nested more than {MAX_JSON_DEPTH} levels deep" in line


def test_a_deep_meta_json_is_one_line(tmp_path):
    from cot_dp import data
    (tmp_path / "meta.json").write_text(_nested(50_000))
    with pytest.raises(data.DataError, match="nested more than"):
        data.read_meta(tmp_path)
    assert loads_json(_nested(3), "x") == {"a": {"a": {"a": 1}}}


# ---------------------------------------------------------------- servers that speak the wrong protocol

@contextmanager
def server(kind: str):
    """A server on 127.0.0.1 that is not a Dask scheduler, for as long as the block runs: `silent` accepts and
    never answers, `http` is an HTTP server, `banner` opens with an SSH banner, `close` hangs up at once,
    `stall` sends the first 8 bytes of a frame header and stops, `huge` announces a 1 TB first frame."""
    if kind == "http":
        class Quiet(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):        # the server's own log lines would reach the command's stderr
                pass
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
        th = threading.Thread(target=srv.serve_forever, daemon=True)
        th.start()
        try:
            yield srv.server_address[1]
        finally:
            srv.shutdown()
            srv.server_close()
        return
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.settimeout(0.2)
    stop = threading.Event()
    held = []

    def serve():
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            held.append(conn)
            if kind == "banner":
                conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")
            elif kind == "close":
                conn.close()
            elif kind == "stall":
                conn.sendall((64).to_bytes(8, "little"))
            elif kind == "huge":
                conn.sendall((10 ** 12).to_bytes(8, "little") + (1).to_bytes(8, "little"))

    th = threading.Thread(target=serve, daemon=True)
    th.start()
    try:
        yield sock.getsockname()[1]
    finally:
        stop.set()
        th.join(2)
        for c in held:
            c.close()
        sock.close()


SERVERS = {"silent": "sent no Dask scheduler's opening message in 0.5 s (and nothing to an HTTP request in 1 s more)",
           "http": "is an HTTP server, not a Dask scheduler: it sent no Dask opening message in 0.5 s and answered an HTTP request",
           "banner": "is not a Dask scheduler: it opened with 'SSH-2.0-OpenSSH_'",
           "close": "closed the connection without a Dask scheduler's opening message",
           "stall": "sent no Dask scheduler's opening message in 0.5 s",
           "huge": "is not a Dask scheduler: it opened with"}


@pytest.mark.parametrize("kind", list(SERVERS))
def test_a_server_that_is_not_a_dask_scheduler_is_named_within_the_deadline(kind):
    with server(kind) as port:
        t0 = time.monotonic()
        with pytest.raises(UsageError) as e:
            check_scheduler(f"tcp://127.0.0.1:{port}", timeout=0.5)
        waited = time.monotonic() - t0
    assert SERVERS[kind] in str(e.value), str(e.value)
    assert "\n" not in str(e.value) and waited < 3


@pytest.mark.parametrize("prog", ["jackson-sweep", "cot-dp sweep"])
@pytest.mark.parametrize("kind", ["silent", "http"])
def test_sweeps_refuse_a_silent_or_http_scheduler_without_a_run_folder(prog, kind, tmp_path, capsys, monkeypatch):
    """The issue's cases: a port that accepts and never answers, and an HTTP server: one line naming the seconds
    waited, before the run folder exists (they used to hang past 150 s and leave one)."""
    from cot_dp.cli import main as cot_main
    from jackson.rate_sweep.cli import sweep_main
    monkeypatch.setattr(budget, "SCHEDULER_TIMEOUT_S", 0.5)
    with server(kind) as port:
        t0 = time.monotonic()
        if prog == "jackson-sweep":
            line = one_line_exit(sweep_main, ["--quick", "--dask-scheduler", f"tcp://127.0.0.1:{port}",
                                              "--out", str(tmp_path / "o")], capsys)
        else:
            line = one_line_exit(cot_main, ["sweep", "--quick", "--dask-scheduler", f"127.0.0.1:{port}",
                                            "--out", str(tmp_path / "o")], capsys)
        waited = time.monotonic() - t0
    assert "not a Dask scheduler" in line and "in 0.5 s" in line and not (tmp_path / "o").exists(), line
    assert waited < 10


def test_a_real_dask_scheduler_passes_the_handshake():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp", dashboard_address=None) as c:
        check_scheduler(c.scheduler_address, timeout=5)
        host, port = c.scheduler_address.removeprefix("tcp://").rsplit(":", 1)
        assert budget.scheduler_handshake(host, int(port), 5) == ""


# ---------------------------------------------------------------- file opens: regular files only

@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_inputs_that_are_not_regular_files_are_refused_before_they_are_opened(kind, tmp_path):
    from cot_dp import data
    from vit_probe import models
    from vit_probe.cifar_io import decode_image
    if kind == "fifo":
        path = tmp_path / "x.png"
        os.mkfifo(path)
    elif kind == "device":
        path = Path("/dev/zero")
    else:
        path = tmp_path / "x.png"
        path.mkdir()
    with pytest.raises(UsageError, match="not a regular file"):
        models.read_checkpoint(path)
    with pytest.raises(UsageError, match="not a regular file"):
        decode_image(path, path)
    with pytest.raises(data.DataError, match="not a regular file"):
        list(data._split_lines(path))


# ---------------------------------------------------------------- content of files outside the named inputs

SECRET = "root-SECRET:x:0:0:root:/root:/bin/bash"


@pytest.mark.parametrize("name", ["chain/train_data.txt", "chain/test_data.txt", "meta.json"])
def test_cot_dp_quotes_nothing_of_a_linked_file_outside_the_dataset(name, tmp_path, capsys):
    from cot_dp.cli import main
    outside = tmp_path / "passwd"
    outside.write_text(SECRET + "\n" + "daemon:x:1:1::/:/bin/false\n")
    assert main(["data", "--task", "arithmetic", "--size", "2", "--n-train", "32", "--n-test", "8",
                 "--out", str(tmp_path / "d")]) == 0
    capsys.readouterr()
    (tmp_path / "d" / name).unlink()
    (tmp_path / "d" / name).symlink_to(outside)
    line = one_line_exit(main, ["train", "--data", str(tmp_path / "d"), "--out", str(tmp_path / "o")], capsys)
    assert "SECRET" not in line and "daemon" not in line, line
    assert not (tmp_path / "o").exists()


def test_cot_dp_still_quotes_a_bad_token_of_its_own_file(tmp_path, capsys):
    from cot_dp.cli import main
    assert main(["data", "--task", "arithmetic", "--size", "2", "--n-train", "32", "--n-test", "8",
                 "--out", str(tmp_path / "d")]) == 0
    f = tmp_path / "d" / "chain" / "train_data.txt"
    f.write_text("zebra " + f.read_text())
    line = one_line_exit(main, ["train", "--data", str(tmp_path / "d"), "--out", str(tmp_path / "o")], capsys)
    assert "token 'zebra' is not in the arithmetic vocabulary" in line, line


# ---------------------------------------------------------------- caches keyed by content

def test_an_image_folder_replaced_with_sizes_and_mtimes_kept_is_read_again(folder_tree, tmp_path):
    """JPEGs (here PNGs stored uncompressed, so every image has the same byte size) replaced by others of the
    same size with their mtimes put back, as cp -p, rsync -a and tar x leave them: the cache is not served."""
    import shutil
    import numpy as np
    from PIL import Image
    from vit_probe import data
    root = tmp_path / "cifar"
    shutil.copytree(folder_tree, root)
    files = sorted((root / "test").rglob("*.png"))
    for f in files:                                  # one byte size for every image: PNG without compression
        Image.open(f).convert("RGB").save(f, compress_level=0)
    first = data.load(root, "test", cache=tmp_path / "c")
    for i, f in enumerate(files):
        st = f.stat()
        Image.fromarray(np.full((32, 32, 3), 7 * i % 256, dtype=np.uint8)).save(f, compress_level=0)
        assert f.stat().st_size == st.st_size
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    again = data.load(root, "test", cache=tmp_path / "c")
    assert not np.array_equal(first.images, again.images)
    assert again.images[0].max() == again.images[0].min()        # the new, flat images
    assert len(list((tmp_path / "c").glob("cifar10-*-test.npz"))) == 2


# ---------------------------------------------------------------- smaller: --normalize, a bare pickle

@pytest.mark.parametrize("text", ["0.5/5e-324", "0.5/1e-300", "0.5/1e-7", "1e300/0.5", "0.5/1e7"])
def test_normalize_values_that_blow_the_input_up_are_one_line(text, official, tmp_path, capsys):
    from vit_probe_helpers import _exit2
    line = _exit2(["spectra", "--arch", "vit_p8_d32_l2_h2", "--normalize", text, "--data", str(official),
                   "--out", str(tmp_path / "o")], capsys)
    assert line.startswith("vit-probe spectra: error: --normalize: ") and not (tmp_path / "o").exists(), line


@pytest.mark.parametrize("payload", [{"a": [1, 2]}, [1, 2, 3], "text"], ids=["dict", "list", "str"])
def test_a_bare_pickle_checkpoint_is_exactly_one_line(payload, official, tmp_path, capsys):
    import pickle
    from vit_probe_helpers import _exit2
    w = tmp_path / "w.pth"
    w.write_bytes(pickle.dumps(payload, protocol=4))
    line = _exit2(["spectra", "--checkpoint", str(w), "--arch", "vit_p8_d32_l2_h2", "--data", str(official),
                   "--out", str(tmp_path / "o")], capsys)      # _exit2: exactly one line on stderr, no warning
    assert "--checkpoint:" in line and str(w) in line, line


# ---------------------------------------------------------------- foreign code: model factories

FACTORIES = {   # name -> (the factory module's source, what the line must say)
    "raises": ("def build():\n    raise ValueError('no such layer')\n", "raised ValueError: no such layer"),
    "exits": ("import sys\ndef build():\n    sys.exit(3)\n", "exited (SystemExit 3) without returning a model"),
    "exits-0": ("def build():\n    exit()\n", "exited (SystemExit None) without returning a model"),
    "recurses": ("def build():\n    return build()\n", "recursed past Python's limit (RecursionError)"),
    "returns-none": ("def build():\n    return None\n", "returned None, not a model"),
    "returns-int": ("def build():\n    return 42\n", "returned a int, not a model"),
    "returns-dict": ("def build():\n    return {'weights': 1}\n", "returned a dict, not a model"),
    "exits-on-import": ("import sys\nsys.exit(0)\ndef build():\n    pass\n", "exited while its module was imported"),
}


def _failed_line(run, argv, capsys) -> tuple[int, str]:
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        run(argv)
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return e.value.code, lines[0]


@pytest.mark.parametrize("name", list(FACTORIES))
def test_a_factory_that_misbehaves_is_one_failed_line(name, official, tmp_path, capsys, monkeypatch):
    from vit_probe.cli import main
    mod = f"factory_{name.replace('-', '_')}_hf"
    (tmp_path / f"{mod}.py").write_text(FACTORIES[name][0])
    monkeypatch.chdir(tmp_path)
    try:
        rc, line = _failed_line(main, ["spectra", "--model-factory", f"{mod}:build", "--data", str(official),
                                       "--cache", str(tmp_path / "c"), "--out", str(tmp_path / "o")], capsys)
    finally:
        sys.modules.pop(mod, None)
    assert rc == 1 and line.startswith(f"vit-probe spectra: failed: {mod}:build "), line
    assert FACTORIES[name][1] in line and "(--model-factory)" in line, line
    assert not (tmp_path / "o").exists()


def test_builtins_exit_as_a_factory_fails_instead_of_exiting_0(official, tmp_path, capsys):
    from vit_probe.cli import main
    rc, line = _failed_line(main, ["spectra", "--model-factory", "builtins:exit", "--data", str(official),
                                   "--cache", str(tmp_path / "c"), "--out", str(tmp_path / "o")], capsys)
    assert rc == 1 and "failed: builtins:exit exited (SystemExit None)" in line, line


FAULT_CASES = (
    [{"id": f"sweep-{o[2:]}-grows", "class": "bounded", "command": f"JACKSON_MAX_MEMORY={LIMIT} jackson-sweep --quick {o} N   # N x{f} until past the limit",
      "expect": "below: priced and passed; past: exit 2, one line naming the estimate, its largest part and the limit; no run folder",
      "test": "tests/test_hardening_budget.py::test_sweep_sizes_that_grow_are_priced_then_refused"}
     for o, (_, f, _) in SWEEP_GROWTH.items()]
    + [{"id": f"sweep-{i}", "class": "bounded", "command": f"jackson-sweep --quick {a}",
        "expect": "exit 2, one line: needs about <estimate>, more than the limit of <this machine's memory>; no run folder",
        "test": "tests/test_hardening_budget.py::test_sweep_requests_past_any_machine_are_one_line"}
       for i, a in (("tau-1e9", "--tau 1000000000"), ("n-test-1e9", "--n-test 1000000000"), ("rank-1e12", "--rank 1000000000000"),
                    ("k-max-1e8", "--k-max 100000000 --alpha 0.6"), ("width-1e6", "--width 1000000"))]
    + [{"id": "sweep-sigma-file-1.2M", "class": "bounded", "command": "jackson-sweep --quick --sigma-file s.txt   # 1.2 M values, 2.4 MB",
        "expect": "exit 2, one line naming K 1,200,000 and the basis values' memory; no run folder",
        "test": "tests/test_hardening_budget.py::test_a_sigma_file_of_a_million_values_is_priced_before_a_target_is_built"},
       {"id": "max-memory", "class": "bounded", "command": "jackson-sweep --quick --max-memory 1M   # or 2**50 from Python",
        "expect": "the limit is the option's (named in the line); an unreadable size is one line; a larger limit lets the run pass",
        "test": "tests/test_hardening_budget.py::test_max_memory_raises_and_lowers_the_limit"},
       {"id": "python-api-sizes", "class": "bounded", "command": "run_sweep(tau=10**9); PODTarget(Spectrum(explicit=<10^7 values>)); Spectrum(rank=1e12); target.sample(10**13)",
        "expect": "one-line UsageError / TargetError naming the estimate, before the allocation (also target.logits of 1e11 sequences, jackson.pod.pod(kernel, n=10**6)); no run folder",
        "test": "tests/test_hardening_budget.py::test_the_python_api_prices_before_it_allocates"}]
    + [{"id": f"{p}-{o[2:]}-grows", "class": "bounded", "command": f"JACKSON_MAX_MEMORY={LIMIT} {p} {' '.join(a)} {o} N   # N x4",
        "expect": "exit 2, one line naming the estimate and the limit at the first size past it; no run folder",
        "test": "tests/test_hardening_budget.py::test_tasks_and_compare_sizes_that_grow"} for p, a, o, _ in TASKS_AND_COMPARE]
    + [{"id": f"vit-arch-{s}", "class": "bounded", "command": f"vit-probe spectra|sweep-mh|permute --arch {s}",
        "expect": "exit 2, one line naming the arch, its weights, the estimate and the limit; nothing built, no run folder",
        "test": "tests/test_hardening_budget.py::test_vit_probe_architectures_past_the_limit_are_one_line"}
       for s in ("vit_p1_d100000_l1000_h1", "vit_p4_d65536_l64_h4", "vit_p1_d4096_l12_h8")]
    + [{"id": "vit-torch-vit-description-huge", "class": "bounded", "command": 'vit-probe spectra --model-json m.json   # {"kind": "torch-vit", "dim": 1000000, "depth": 1000}',
        "expect": "one line naming the description's sizes, the estimate and the limit; nothing built",
        "test": "tests/test_hardening_budget.py::test_a_torch_vit_description_past_the_limit_is_refused_unbuilt"}]
    + [{"id": "vit-build-grows", "class": "bounded", "command": "vit_probe.models.build(parse_arch('vit_p8_d<D>_l<D/16>_h2'))   # D x4",
        "expect": "BudgetError naming the arch past the limit, before timm builds it",
        "test": "tests/test_hardening_budget.py::test_vit_depth_and_width_that_grow_are_refused_by_build"},
       {"id": "cot-dp-line-length-grows", "class": "bounded", "command": "cot-dp train --data d   # the longest line L x4 up to 1M tokens (a 64 KB arithmetic line: about 32k)",
        "expect": "priced from L: one line naming L, the estimate and the limit; linear attention priced without an L x L matrix",
        "test": "tests/test_hardening_budget.py::test_cot_dp_sequence_lengths_that_grow_are_priced"},
       {"id": "cot-dp-prompt-grows", "class": "bounded", "command": "cot-dp train --data d   # a prompt-only test line of k tokens, k x4 to 16,384",
        "expect": "solved and checked up to 2,048 tokens; past it one line naming the line and the limit, nothing solved",
        "test": "tests/test_hardening_budget.py::test_cot_dp_prompts_that_grow_are_refused_before_they_are_solved"},
       {"id": "cot-dp-price-before-folder", "class": "bounded", "command": "JACKSON_MAX_MEMORY=1M cot-dp train --data d; cot-dp sweep --quick; cot-dp data|sweep --n-train 1000000000000",
        "expect": "exit 2, one line; no run folder",
        "test": "tests/test_hardening_budget.py::test_cot_dp_train_and_sweep_price_before_the_run_folder"}]
    + [{"id": f"config-depth-{d}", "class": "bounded", "command": f"jackson-sweep --config c.json   # nested {d} levels",
        "expect": ("read, then refused for its unknown key" if d + 1 <= MAX_JSON_DEPTH else
                   f"exit 2, one line: nested more than {MAX_JSON_DEPTH} levels deep (no RecursionError)"),
        "test": "tests/test_hardening_budget.py::test_json_nesting_that_grows_is_refused_past_the_limit"}
       for d in list(growing(8, 4, 8 * 4 ** 7)) + [100_000]]
    + [{"id": "config-depth-cli", "class": "bounded", "command": "jackson-sweep --config c.json   # [[[...]]] 100,000 deep",
        "expect": "exit 2, one line naming --config and the limit", "test": "tests/test_hardening_budget.py::test_a_deep_config_on_the_command_line_is_one_line"},
       {"id": "meta-json-depth", "class": "bounded", "command": "cot-dp train --data d   # d/meta.json nested 50,000 deep",
        "expect": "one line naming meta.json and the limit", "test": "tests/test_hardening_budget.py::test_a_deep_meta_json_is_one_line"}]
    + [{"id": f"scheduler-{k}", "class": "wait", "command": f"--dask-scheduler tcp://127.0.0.1:<a {k} server>",
        "expect": f"one line within the deadline: {v}", "test": "tests/test_hardening_budget.py::test_a_server_that_is_not_a_dask_scheduler_is_named_within_the_deadline"}
       for k, v in SERVERS.items()]
    + [{"id": f"{p.replace(' ', '-')}-scheduler-{k}", "class": "wait", "command": f"{p} --quick --dask-scheduler 127.0.0.1:<{k} server>",
        "expect": "exit 2, one line naming the seconds waited ('not a Dask scheduler'); no run folder",
        "test": "tests/test_hardening_budget.py::test_sweeps_refuse_a_silent_or_http_scheduler_without_a_run_folder"}
       for p in ("jackson-sweep", "cot-dp sweep") for k in ("silent", "http")]
    + [{"id": "scheduler-real", "class": "wait", "command": "--dask-scheduler <a LocalCluster's tcp:// address>",
        "expect": "the handshake passes", "test": "tests/test_hardening_budget.py::test_a_real_dask_scheduler_passes_the_handshake"}]
    + [{"id": f"not-a-regular-file-{k}", "class": "wait", "command": f"vit-probe --checkpoint / an image / cot-dp split file that is a {k}",
        "expect": "refused before the open, one line: not a regular file (a FIFO never blocks)",
        "test": "tests/test_hardening_budget.py::test_inputs_that_are_not_regular_files_are_refused_before_they_are_opened"}
       for k in ("fifo", "device", "folder")]
    + [{"id": f"cot-dp-link-outside-{n.replace('/', '-')}", "class": "contained", "command": f"cot-dp train --data d   # d/{n} -> a copy of /etc/passwd",
        "expect": "exit 2, one line that quotes nothing of the linked file", "test": "tests/test_hardening_budget.py::test_cot_dp_quotes_nothing_of_a_linked_file_outside_the_dataset"}
       for n in ("chain/train_data.txt", "chain/test_data.txt", "meta.json")]
    + [{"id": "cot-dp-own-file-quoted", "class": "contained", "command": "cot-dp train --data d   # a bad token in d's own file",
        "expect": "the token is quoted (the file is the named input's)", "test": "tests/test_hardening_budget.py::test_cot_dp_still_quotes_a_bad_token_of_its_own_file"},
       {"id": "image-folder-replaced-same-size-mtime", "class": "input", "command": "vit-probe spectra --data tree/   # images replaced, sizes and mtimes kept (cp -p)",
        "expect": "read again: the cache is keyed by the content's sha1, not size and mtime",
        "test": "tests/test_hardening_budget.py::test_an_image_folder_replaced_with_sizes_and_mtimes_kept_is_read_again"}]
    + [{"id": f"normalize-{t}", "class": "input", "command": f"vit-probe spectra --normalize {t}",
        "expect": "exit 2, one line naming --normalize and its range (no LinAlgError)",
        "test": "tests/test_hardening_budget.py::test_normalize_values_that_blow_the_input_up_are_one_line"}
       for t in ("0.5/5e-324", "0.5/1e-300", "0.5/1e-7", "1e300/0.5", "0.5/1e7")]
    + [{"id": f"bare-pickle-{k}", "class": "input", "command": f"vit-probe spectra --checkpoint w.pth   # pickle.dumps({k})",
        "expect": "exit 2, exactly one line (torch's warning kept off the terminal)",
        "test": "tests/test_hardening_budget.py::test_a_bare_pickle_checkpoint_is_exactly_one_line"} for k in ("dict", "list", "str")]
    + [{"id": f"factory-{k}", "class": "contained", "command": f"vit-probe spectra --model-factory m:build   # build() {k}",
        "expect": f"exit 1, one line 'failed: m:build {v} (--model-factory)'; no run folder",
        "test": "tests/test_hardening_budget.py::test_a_factory_that_misbehaves_is_one_failed_line"} for k, (_, v) in FACTORIES.items()]
    + [{"id": "factory-builtins-exit", "class": "contained", "command": "vit-probe spectra --model-factory builtins:exit",
        "expect": "exit 1, one line 'failed: builtins:exit exited (SystemExit None) ...' (it used to exit 0 having computed nothing)",
        "test": "tests/test_hardening_budget.py::test_builtins_exit_as_a_factory_fails_instead_of_exiting_0"}]
)


def RELIABILITY_SECTION() -> tuple[str, str]:
    """The section of reports/RELIABILITY.md for the commands this module covers: cases per class (counted by
    tests/reliability.py) and the limits each command states, read from the code that enforces them."""
    from cot_dp import data as cot_data
    from jackson.config import MAX_TEXT_BYTES
    from vit_probe import models, model_source, normalize
    from vit_probe.data import DOWNLOAD_TIMEOUT_S
    f = budget.fmt
    rows = [
        ("every command below", f"the memory its request needs at its peak, from the sizes given, before data is read, "
         f"a model built or the run folder opened; refused past the limit: `--max-memory SIZE`, else "
         f"`${budget.ENV}`, else this machine's memory"),
        ("jackson-sweep", "per cell: sequences and targets (n x tau), the target's logits (n x tau x tau), the oracles, "
         "one chunk of 256 sequences' basis values (tau x K), the bank's training step or evaluation batch "
         "(members x batch x tau x tau attention, MLP width and depth); from Python the same in `run_sweep`, and "
         "`PODTarget`, `Spectrum` and `PODTarget.sample` price their own arrays"),
        ("jackson-tasks", "per cell: sequences, targets and the target attention (n x tau x tau), a training step"),
        ("rnn-compare", "per cell: sequences and targets, the larger of the Transformer's and the RNN's training steps"),
        ("vit-probe", "`--arch`: its weights (with gradients and AdamW's moments when training) and one batch's "
         "activations; `vit_probe.models.build` prices the weights before timm builds them"),
        ("cot-dp", "`sweep`: each task, size, model and D from a few examples' length; `train`: from the data's "
         "longest line (a model step, evaluation or generation, and the L x L masks); reading a dataset: its token lists"),
    ]
    limits = [
        ("a `--config`, `--sigma-file`, run-folder JSON", f"at most {f(MAX_TEXT_BYTES)}, a regular file, JSON nested at most {MAX_JSON_DEPTH} levels"),
        ("`--model-json`", f"at most {f(model_source.MAX_DESCRIPTION_BYTES)}, nested at most {MAX_JSON_DEPTH} levels"),
        ("`--checkpoint`", f"at most {f(models.MAX_CHECKPOINT_BYTES)}, a regular file, read weights-only (no code runs, torch's warnings kept off)"),
        ("cot-dp's meta.json, split lines", f"meta.json at most {f(cot_data.MAX_META_BYTES)} and {MAX_JSON_DEPTH} levels; a line at most "
         f"{f(cot_data.MAX_LINE_BYTES)}; files regular; a file linked outside its dataset folder is read but never quoted"),
        ("`--dask-scheduler`", f"a TCP connect within {budget.SCHEDULER_TIMEOUT_S:g} s, then Dask's own handshake "
         f"(distributed.comm.connect) within {budget.SCHEDULER_TIMEOUT_S:g} s more, checked before the run folder is opened"),
        ("`--normalize`", f"every std at least {normalize.MIN_STD:g}, every mean and std within +-{normalize.MAX_SCALE:g}"),
        ("`--download`", f"each network wait at most {DOWNLOAD_TIMEOUT_S:g} s"),
        ("subprocesses", "git (the commit in environment.json) at most 5 s a call"),
        ("`--model-factory`", "the factory's exception, exit, recursion or non-model result ends the run as one 'failed:' line, exit 1"),
    ]
    text = ["What each command prices before it runs:", "", "| command | priced |", "|---|---|"]
    text += [f"| {c} | {w} |" for c, w in rows]
    text += ["", "The limits they state:", "", "| input or wait | limit |", "|---|---|"]
    text += [f"| {c} | {w} |" for c, w in limits]
    return ("Prices, deadlines, contained code: jackson-sweep, jackson-tasks, rnn-compare, vit-probe, cot-dp",
            "\n".join(text))
