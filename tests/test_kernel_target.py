"""A target from any coupling kernel rho(u, v) (numerical POD + Nystrom, synthetic/kernel_target.py), F and f as
Python callables, and both through jackson-sweep (issue 16): closed-form checks, keys that do not move, Dask
pickling, one-line refusals, and a non-sin/sin kernel run end to end into a report.json."""
from __future__ import annotations

import dataclasses
import json
import math
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jackson import sweep_config
from jackson.config import UsageError
from jackson.rate_sweep.experiment import validate
from jackson.pod import pod
from jackson.sweep import config_hash, function_id
from synthetic.kernel_target import KernelTarget
from sweep_helpers import refused_line
from synthetic.pod_target import PODTarget, Spectrum, TargetError, basis_matrix

ROOT = Path(__file__).resolve().parent.parent
SIGMA = (1.0, 0.5, 0.3, 0.12)       # distinct: each POD function is defined up to sign only
GAUSS = "exp(-(u - v)**2 / 0.1)"


def _sum_text(sigma, psi="sin"):
    """rho = sum_i sigma_i sqrt2 sin(2 pi i u) sqrt2 <psi>(2 pi i v) as an expression in u, v."""
    return " + ".join(f"2*{s!r}*sin({2 * i}*pi*u)*{psi}({2 * i}*pi*v)" for i, s in enumerate(sigma, start=1))


def _gauss(u, v):
    return np.exp(-(u - v) ** 2 / 0.1)


def F_cube_tanh(z):                  # module-level: pickled by reference, keyed by name + source hash
    return np.tanh(z) ** 3


# ---- the POD of a kernel of known POD ----------------------------------------------------------

@pytest.mark.parametrize("psi", ["sin", "cos"])
def test_finite_sin_sum_gives_back_its_sigma_basis_and_target(psi):
    k = KernelTarget(kernel=_sum_text(SIGMA, psi), rank=len(SIGMA), tau=8)
    closed = PODTarget(Spectrum(explicit=SIGMA), phi="sin", psi=psi, tau=8)
    np.testing.assert_allclose(k.sigma, SIGMA, atol=1e-12)
    assert k.numerical_rank == len(SIGMA)
    u = np.random.default_rng(0).random(300)
    for mine, want in ((k.phi(u, 4), basis_matrix("sin", u, 4)), (k.psi(u, 4), basis_matrix(psi, u, 4))):
        sign = np.sign(np.sum(mine * want, axis=0))              # up to the sign of each pair
        np.testing.assert_allclose(mine * sign, want, atol=1e-10)
    x = closed.sample(32, seed=5)
    np.testing.assert_allclose(k.logits(x), closed.logits(x), atol=1e-10)
    np.testing.assert_allclose(k(x), closed(x), atol=1e-12)
    ok, oc = k.oracle(x, [1, 2, 3]), closed.oracle(x, [1, 2, 3])
    for m in (1, 2, 3):
        np.testing.assert_allclose(ok["truncated"][m], oc["truncated"][m], atol=1e-12)
        np.testing.assert_allclose(ok["self_exact"][m], oc["self_exact"][m], atol=1e-12)
    assert k.complexity()["C1"] == pytest.approx(closed.complexity()["C1"], rel=1e-9)
    assert k.complexity()["C0"] == pytest.approx(2 * math.sqrt(2), rel=1e-3)   # sup of the Nystrom basis ~ sqrt2


def test_nystrom_gives_back_the_node_values_and_the_kernel():
    k = KernelTarget(kernel=GAUSS)                           # rank inf: K by tail_tol
    res = pod(lambda u, v: _gauss(u[:, None], v[None, :]), 256)    # the POD at the nodes, independently
    K = len(k.sigma)
    np.testing.assert_allclose(k.phi(res.nodes, K), res.phi[:, :K], atol=1e-9)
    np.testing.assert_allclose(k.psi(res.nodes, K), res.psi[:, :K], atol=1e-9)
    u, v = np.random.default_rng(1).random((2, 400))
    rho_k = np.einsum("ak,k,ak->a", k.phi(u, K), k.sigma, k.psi(v, K))
    err = np.sqrt(np.mean((rho_k - _gauss(u, v)) ** 2))
    info = k.resolved()
    assert info["tail_tol_met"] and info["tail_energy"] <= 1e-6
    assert err < 10 * math.sqrt(info["tail_energy"])         # pointwise error of the order of the tail left
    assert k.alpha_hat == pytest.approx(np.polyfit(np.log(np.arange(1, K + 1)), np.log(k.sigma), 1)[0] * -1)


def test_callable_kernel_equals_the_expression():
    a, b = KernelTarget(kernel=GAUSS, rank=5, tau=6), PODTarget.from_kernel(_gauss, rank=5, tau=6)
    x = a.sample(16, seed=2)
    np.testing.assert_allclose(a.sigma, b.sigma, atol=1e-14)
    np.testing.assert_allclose(a(x), b(x), atol=1e-12)


@pytest.mark.parametrize("kernel, why", [
    ("log(u - v)", "not finite"),
    ("u.__class__", "attribute access"),
    ("__import__('os')", "unknown function"),
    (lambda u, v: np.ones(3), "must broadcast"),
    (lambda u, v: 1 / 0, "ZeroDivisionError"),
    ("0*u*v", "zero"),
])
def test_bad_kernels_are_one_line_target_errors(kernel, why):
    with pytest.raises(TargetError, match=why) as e:
        KernelTarget(kernel=kernel)
    assert "\n" not in str(e.value)


def test_rank_above_the_numerical_rank_is_refused():
    with pytest.raises(TargetError, match="numerical rank is 2"):
        KernelTarget(kernel=_sum_text((1.0, 0.5)), rank=3)


# ---- F and f as Python callables --------------------------------------------------------------

def test_callable_F_and_f_give_the_direct_computation():
    t = PODTarget(Spectrum(alpha=1.5, rank=3), F=np.sin, f=lambda x: x ** 3, tau=6)
    x = t.sample(8, seed=4)
    lg = t.logits(x)
    w = np.exp(lg - lg.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(t(x), np.sin((w * x[:, None, :] ** 3).sum(-1)), atol=1e-14)
    c = t.complexity()                                       # K_F = max |cos| on [0, 1] = 1, ||x^3||_inf = 1
    assert c["C0"] == pytest.approx(1.0 * 1.0 * 2 * math.sqrt(2), rel=1e-6)


@pytest.mark.parametrize("F, f, why", [
    (np.sin, lambda x: np.log(x), "not finite"),
    (lambda z: z[:1], "identity", "elementwise"),
    (np.sin, lambda x: x.nonexistent, "AttributeError"),
    (42, "identity", "give a registry name"),
])
def test_bad_callables_are_one_line_target_errors(F, f, why):
    with pytest.raises(TargetError, match=why) as e:
        PODTarget(F=F, f=f)
    assert "\n" not in str(e.value)


# ---- keys: what a callable is called, and committed runs keep theirs --------------------------

def test_function_id_is_stable_and_names_the_code():
    assert function_id(np.tanh) == "python:numpy:tanh"
    fid = function_id(F_cube_tanh)
    assert fid.startswith("python:test_kernel_target:F_cube_tanh#") or fid.startswith("python:tests.test_kernel_target")
    a = [function_id(lambda x, c=c: c * x) for c in (1.0, 2.0)]        # the same source, other constants
    assert a[0] != a[1] and "at 0x" not in a[0]
    cells = sweep_config(quick=True, kernel=_gauss, F=F_cube_tanh, f=np.square).cells()
    again = sweep_config(quick=True, kernel=_gauss, F=F_cube_tanh, f=np.square).cells()
    assert [c.key() for c in cells] == [c.key() for c in again]
    json.dumps(cells[0].as_dict())                          # JSON-able: callables by their id
    assert cells[0].as_dict()["F"] == fid


def test_new_fields_at_their_defaults_keep_every_committed_cell_key():
    """Every committed jackson-sweep cell (fig1-full is being written by a live run: left alone) rebuilt from its
    cell.json hashes to its folder's name (old v1 folders lack only the scheme tag, not the hash)."""
    from jackson.fit import FitConfig
    from jackson.models import ModelConfig
    from jackson.rate_sweep.cell import RateCell
    names = {f.name for f in dataclasses.fields(RateCell)}
    seen = 0
    for cj in sorted((ROOT / "reports" / "jackson").glob("*/cells/*/cell.json")):
        if cj.parts[-4] == "fig1-full":
            continue
        c = {k: v for k, v in json.loads(cj.read_text())["cell"].items() if k in names}
        c.update(rank=float(c["rank"]), m_hs=tuple(c["m_hs"]), fit=FitConfig(**c["fit"]),
                 model=ModelConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in c["model"].items()}))
        if "sigma" in c:
            c["sigma"] = tuple(c["sigma"])
        assert config_hash(RateCell(**c)) == cj.parent.name.rsplit("_", 1)[1], cj
        seen += 1
    assert seen >= 40


def test_a_cell_with_lambdas_crosses_to_a_dask_worker():
    """stdlib pickle refuses a lambda; Dask's pickling (distributed.protocol.pickle: pickle, then cloudpickle)
    sends it by value, and a fresh process loads it with plain pickle and builds the same target."""
    from distributed.protocol import pickle as dask_pickle

    from jackson.rate_sweep.cell import RateCell
    cell = RateCell(alpha=1.5, rank=3, seed=0, m_hs=(1,), tau=6, kernel=lambda u, v: np.exp(-(u - v) ** 2 / 0.1),
                    F=np.tanh, f=lambda x: x ** 3)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(cell)
    x = cell.target().sample(4, seed=1)
    code = ("import pickle, sys, numpy as np; sys.path.insert(0, sys.argv[1]); c = pickle.loads(sys.stdin.buffer.read()); "
            "t = c.target(); print(np.asarray(t(t.sample(4, seed=1))).tobytes().hex())")
    r = subprocess.run([sys.executable, "-c", code, str(ROOT)], input=dask_pickle.dumps(cell), capture_output=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    np.testing.assert_array_equal(np.frombuffer(bytes.fromhex(r.stdout.decode().strip())), cell.target()(x).ravel())


# ---- the sweep config ---------------------------------------------------------------------------

def test_kernel_sweep_config_one_target_per_rank():
    cfg = sweep_config(quick=True, kernel=GAUSS, rank=(2, math.inf))
    validate(cfg)
    cells = cfg.cells()
    a_hat = round(KernelTarget(kernel=GAUSS, k_max=cfg.k_max).alpha_hat, 4)
    assert [(c.alpha, c.rank) for c in cells] == [(a_hat, 2.0), (a_hat, math.inf)]
    assert [len(c.target().sigma) for c in cells] == [2, len(KernelTarget(kernel=GAUSS, k_max=cfg.k_max).sigma)]
    assert str(cfg.resolved_out()).startswith("runs/jackson/sweep-kernel-")
    assert cells[0].key() != sweep_config(quick=True, kernel=GAUSS, rank=(2,), pod_nodes=128).cells()[0].key()


BAD = {
    "kernel-not-finite": (["--kernel", "1/(u-v)"], "not finite"),
    "kernel-code": (["--kernel", "__import__('os').system('true')"], "--kernel"),
    "kernel-unknown-name": (["--kernel", "exp(-(u-w)**2)"], "unknown name"),
    "kernel-rank-above-numerical": (["--kernel", "u*v + u**2*v**2", "--rank", "3"], "numerical rank is 2"),
    "kernel-rank-one": (["--kernel", "u*v"], "numerical rank 1"),
    "kernel-with-alpha": (["--kernel", GAUSS, "--alpha", "2"], "--alpha does not apply"),
    "kernel-with-phi": (["--kernel", GAUSS, "--phi", "cos"], "--phi does not apply"),
    "kernel-with-sigma": (["--kernel", GAUSS, "--sigma", "1,0.5"], "does not apply"),
    "kernel-given-features": (["--kernel", GAUSS, "--features", "given", "--features-k", "8"], "--features learned"),
    "pod-nodes-too-few": (["--kernel", GAUSS, "--pod-nodes", "1"], "--pod-nodes"),
}

FAULT_CASES = [{"id": cid, "command": "jackson-sweep --quick " + " ".join(repr(a) if " " in a or "(" in a else a for a in args),
                "expect": f"exit 2, one line ({why}); nothing written",
                "test": "tests/test_kernel_target.py::test_bad_kernel_option_one_line_exit_2"}
               for cid, (args, why) in BAD.items()]


@pytest.mark.parametrize("case", list(BAD))
def test_bad_kernel_option_one_line_exit_2(tmp_path, capsys, case):
    args, why = BAD[case]
    refused_line(capsys, args, tmp_path / "out", why)


def test_kernel_with_alpha_from_python_is_refused():
    with pytest.raises(UsageError, match="--alpha does not apply"):
        validate(sweep_config(quick=True, kernel=GAUSS, alpha=(2.0,)))


# ---- the whole pipeline on a kernel that is not of the sin/sin family -------------------------

@pytest.mark.slow
def test_kernel_sweep_end_to_end_lands_in_the_report(tmp_path, sweep_exe, sub_env):
    from jackson.lab_report.page import find_runs
    out = tmp_path / "reports" / "kernel-run"
    r = subprocess.run([str(sweep_exe), "--quick", "--kernel", GAUSS, "--rank", "2,inf", "--steps", "20",
                        "--out", str(out)], capture_output=True, text=True, env=sub_env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert f"kernel rho(u, v) = {GAUSS}" in r.stdout and "predicted -(2 alpha_hat - 1)" in r.stdout
    k = KernelTarget(kernel=GAUSS, k_max=128)
    a_hat = round(k.alpha_hat, 4)
    s = json.loads((out / "summary.json").read_text())
    inf = next(t for t in s["targets"] if t["rank"] == "inf")
    assert inf["kernel"] == {"expression": GAUSS, "alpha_hat": a_hat, "nodes": 256}
    assert inf["K"] == len(k.sigma) and inf["predicted_exponent"] == pytest.approx(-(2 * a_hat - 1))
    cell = json.loads(next((out / "cells").glob("*rinf*/cell.json")).read_text())
    np.testing.assert_allclose(cell["sigma_head"], k.sigma, rtol=1e-12)      # the cell's target is the kernel's POD
    rep = json.loads((out / "report.json").read_text())
    assert rep["title"].startswith(f"jackson-sweep: kernel rho(u, v) = {GAUSS}; rank 2, inf")
    qs = {p["quantity"].split(" (fit")[0].split(" -- ")[0]: p for p in rep["paper"]}
    held = qs[f"kernel rho(u, v) = {GAUSS} (alpha_hat = {a_hat:g}), rank inf: exponent of held-out MSE in m_h"]
    orc = qs[f"kernel rho(u, v) = {GAUSS} (alpha_hat = {a_hat:g}), rank inf: exponent of the rank-m_h oracle, s != t part"]
    assert held["paper"] == pytest.approx(-(2 * a_hat - 1)) and math.isfinite(held["measured"])
    assert orc["measured"] == pytest.approx(inf["exponents"]["oracle_self_exact"]["slope"])
    (entry,) = find_runs(tmp_path / "reports")                  # jackson-report picks the folder up
    assert "kernel rho(u, v)" in entry["title"] and len(entry["paper"]) == 2
    for png in ("error_vs_mh.png", "learned_spectrum.png", "loss_curves.png"):
        assert (out / png).stat().st_size > 0


def test_docstring_examples_run():
    import doctest

    import jackson.sweep
    import synthetic.kernel_target
    import synthetic.pod_target
    for mod in (synthetic.kernel_target, synthetic.pod_target, jackson.sweep):
        r = doctest.testmod(mod)
        assert r.failed == 0 and r.attempted >= 1, mod.__name__
