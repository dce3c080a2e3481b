"""A target from any coupling kernel rho(u, v) (numerical POD + Nystrom, synthetic/kernel_target.py), F, f and the
POD bases phi, psi as Python callables, and all of them through jackson-sweep (issue 16): closed-form checks, keys
that do not move, Dask pickling, one-line refusals, and a non-sin/sin kernel and a callable basis pair run end to
end."""
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

from jackson.rates import spectrum_law

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


def sin_basis(x, k):                 # the built-in "sin" family written out: sqrt2 sin(2 pi i x), i = 1..k
    return np.sqrt(2.0) * np.sin(2.0 * np.pi * np.arange(1, k + 1) * np.asarray(x)[..., None])


def cos_basis(x, k):                 # the built-in "cos" family written out
    return np.sqrt(2.0) * np.cos(2.0 * np.pi * np.arange(1, k + 1) * np.asarray(x)[..., None])


def cheb(x, k):                      # a family the lab does not have: sqrt2 cos(pi i x), orthonormal on [0, 1]
    return np.sqrt(2.0) * np.cos(np.pi * np.arange(1, k + 1) * np.asarray(x)[..., None])


class Scaled:
    """A callable basis object with a parameter and a stated sup (for C0): sqrt2 sin(2 pi i x) * w."""

    def __init__(self, w):
        self.w, self.sup = w, math.sqrt(2.0) * abs(w)

    def __call__(self, x, k):
        return self.w * sin_basis(x, k)


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
    a, b = KernelTarget(kernel=GAUSS, rank=5, tau=6), KernelTarget(kernel=_gauss, rank=5, tau=6)
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


# ---- phi and psi as Python callables ----------------------------------------------------------

def test_callable_basis_gives_the_named_family_and_the_direct_computation():
    """phi = sin_basis, psi = cos_basis (callables) is the trace-free pair phi = "sin", psi = "cos": the same logits,
    values and oracles; and the logits are sum_i sigma_i phi_i(x_t) psi_i(x_s), computed here term by term."""
    sp = Spectrum(alpha=1.5, rank=math.inf, k_max=64)
    mine, named = PODTarget(sp, phi=sin_basis, psi=cos_basis, tau=8), PODTarget(sp, phi="sin", psi="cos", tau=8)
    x = named.sample(32, seed=7)
    s = named.sigma
    want = np.zeros((32, 8, 8))
    for i, si in enumerate(s, start=1):
        pu, pv = math.sqrt(2) * np.sin(2 * math.pi * i * x), math.sqrt(2) * np.cos(2 * math.pi * i * x)
        want += si * pu[:, :, None] * pv[:, None, :]
    np.testing.assert_allclose(mine.logits(x), want, atol=1e-12)
    np.testing.assert_allclose(mine.logits(x), named.logits(x), atol=1e-13)
    np.testing.assert_allclose(mine(x), named(x), atol=1e-14)
    om, on = mine.oracle(x, [1, 2, 4]), named.oracle(x, [1, 2, 4])
    np.testing.assert_allclose(om["exact"], on["exact"], atol=1e-14)
    for m in (1, 2, 4):
        np.testing.assert_allclose(om["truncated"][m], on["truncated"][m], atol=1e-14)
        np.testing.assert_allclose(om["self_exact"][m], on["self_exact"][m], atol=1e-14)
    u = np.linspace(0, 1, 9)
    np.testing.assert_allclose(mine.kernel(u, u, m=3), named.kernel(u, u, m=3), atol=1e-13)
    assert mine.complexity()["C1"] == named.complexity()["C1"]
    assert math.isnan(mine.complexity()["C0"]) and named.complexity()["C0"] == pytest.approx(2 * math.sqrt(2))
    stated = PODTarget(sp, phi=Scaled(1.0), psi=Scaled(-1.0), tau=8)        # sup given: C0 as for sin/sin
    assert stated.complexity()["C0"] == pytest.approx(2 * math.sqrt(2))
    np.testing.assert_allclose(stated.logits(x), -PODTarget(sp, tau=8).logits(x), atol=1e-13)


def test_callable_basis_sweep_cells_and_keys():
    """The sweep's cells of a callable basis pair build the named pair's targets; their keys, tags and config name
    the functions by function_id (stable, and not the named pair's); named bases keep their keys."""
    from jackson.rate_sweep.cell import RateCell
    mine = sweep_config(quick=True, phi=sin_basis, psi=cos_basis, rank=(3, math.inf))
    named = sweep_config(quick=True, construction="trace-free", rank=(3, math.inf))
    validate(mine)
    x = np.random.default_rng(3).random((16, mine.tau))
    for a, b in zip(mine.cells(), named.cells()):
        np.testing.assert_allclose(a.target()(x), b.target()(x), atol=1e-14)
        assert a.key() != b.key() and a.target_tag() != b.target_tag()
        d = a.as_dict()
        assert (d["phi"], d["psi"]) == (function_id(sin_basis), function_id(cos_basis))
        assert d["phi"].startswith("python:") and "#" in d["phi"]
    again = sweep_config(quick=True, phi=sin_basis, psi=cos_basis, rank=(3, math.inf))
    assert [c.key() for c in mine.cells()] == [c.key() for c in again.cells()]
    assert [c.target_tag() for c in mine.cells()] == [c.target_tag() for c in again.cells()]
    cfg = json.loads(json.dumps(mine.as_dict()))
    assert (cfg["phi"], cfg["psi"]) == (function_id(sin_basis), function_id(cos_basis))
    # a named basis is keyed as before: the hash of the non-default fields, the name itself
    c = RateCell(alpha=1.5, rank=3.0, seed=0, m_hs=(1, 2), phi="cos", psi="sin")
    assert c.key() == f"a1.5_r3_s0_v2_{config_hash(c)}" and "cos" in json.dumps(c.as_dict())


def test_callable_objects_are_keyed_by_their_parameters():
    """Two instances of one callable class (or two partials) with other parameters never share a key."""
    import functools
    ids = [function_id(Scaled(w)) for w in (1.0, 2.0, 1.0)]
    assert ids[0] != ids[1] and ids[0] == ids[2] and ids[0].startswith("python:") and "Scaled#" in ids[0]
    assert function_id(functools.partial(np.multiply, 2.0)) != function_id(functools.partial(np.multiply, 3.0))
    keys = [sweep_config(quick=True, phi=Scaled(w), psi=Scaled(w)).cells()[0].key() for w in (1.0, 2.0)]
    assert keys[0] != keys[1]
    def basis(x, k):
        return sin_basis(x, k)
    plain = function_id(basis)
    basis.sup = math.sqrt(2.0)                     # a stated sup changes C0, so it changes the key too
    assert function_id(basis) != plain and function_id(basis).split("#")[0] == plain.split("#")[0]


def _raises(x, k):
    raise RuntimeError("no\nbasis here")


@pytest.mark.parametrize("basis, why", [
    (_raises, "raised RuntimeError: no basis here"),
    (lambda x, k: np.ones(k), "must return the first k functions"),
    (lambda x, k: np.outer(np.ravel(x), np.arange(1, k + 1)), "must return the first k functions"),  # 1-D only
    (lambda x, k: np.log(x)[..., None] * np.ones(k), "not finite"),
    ("python:__main__:cheb#0123abcd", "--config cannot rerun it"),
])
def test_bad_callable_bases_are_one_line_errors(basis, why):
    for side in ("phi", "psi"):
        with pytest.raises(TargetError, match=why) as e:
            PODTarget(Spectrum(alpha=1.5, rank=4), **{side: basis})
        assert "\n" not in str(e.value) and side in str(e.value)
        with pytest.raises(UsageError, match=why) as e:             # validate: before anything is written
            validate(sweep_config(quick=True, **{side: basis}))
        assert "\n" not in str(e.value)


def test_python_ids_of_F_f_and_kernel_are_refused_in_one_line():
    """What --config reads back from a run made from Python names a function it cannot call."""
    for kw in ({"F": "python:m:F#01234567"}, {"f": "python:numpy:square"}):
        with pytest.raises(TargetError, match="--config cannot rerun it"):
            PODTarget(**kw)
    with pytest.raises(TargetError, match="--kernel: 'python:m:k#0' names a Python callable"):
        KernelTarget(kernel="python:m:k#0")


def test_given_features_take_a_callable_basis():
    """--features given reads the target's own bases: callables give the named families' features."""
    from jackson.rate_sweep.given import given_features
    x = np.random.default_rng(2).random((5, 6))
    np.testing.assert_array_equal(given_features(x, sin_basis, cos_basis, "square", 8).numpy(),
                                  given_features(x, "sin", "cos", "square", 8).numpy())
    validate(sweep_config(quick=True, phi=cheb, psi=cheb, model={"features": "given", "features_k": 8}))


@pytest.mark.slow
def test_callable_basis_sweep_end_to_end(tmp_path, capsys):
    """The issue's example: a quick run_sweep on an explicit spectrum with a basis of the user's; config.json, the cell
    and the summary name it; C0 is stated unknown; `--config` refuses to rerun it in one line."""
    from jackson import run_sweep
    from jackson.rate_sweep.cli import sweep_main
    out = tmp_path / "btq"
    cfg = sweep_config(quick=True, sigma=(1.0, 0.5, 0.25, 0.1), phi=cheb, psi=cheb, fit={"steps": 20}, out=str(out))
    result = run_sweep(cfg, command="test", progress=False)
    fid = function_id(cheb)
    (t,) = result.targets
    assert (t["phi"], t["psi"]) == (fid, fid) and math.isnan(t["C0"]) and "test" in t["exponents"]
    conf = json.loads((out / "config.json").read_text())
    assert (conf["phi"], conf["psi"]) == (fid, fid) and "0x" not in json.dumps(conf)
    (cell,) = cfg.cells()
    meta = json.loads((out / "cells" / cell.key() / "cell.json").read_text())
    assert meta["cell"]["phi"] == fid and meta["key"] == cell.key()
    x = np.random.default_rng(0).random((8, cfg.tau))                   # the cell's target is cheb's
    want = PODTarget(Spectrum(explicit=(1.0, 0.5, 0.25, 0.1)), phi=cheb, psi=cheb, tau=cfg.tau)
    np.testing.assert_array_equal(cell.target()(x), want(x))
    md = (out / "summary.md").read_text()
    assert f"phi = {fid}, psi = {fid}" in md and "C0 = nan (unknown" in md
    with pytest.raises(SystemExit) as e:
        sweep_main(["--config", str(out / "config.json"), "--out", str(tmp_path / "again")])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--phi" in err[0] and "--config cannot rerun it" in err[0], err
    assert not (tmp_path / "again").exists()


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
    from jackson.hparams import FitConfig
    from jackson.hparams import model_config
    from jackson.rate_sweep.cell import RateCell
    names = {f.name for f in dataclasses.fields(RateCell)}
    seen = 0
    for cj in sorted((ROOT / "reports" / "jackson").glob("*/cells/*/cell.json")):
        if cj.parts[-4] == "fig1-full":
            continue
        c = {k: v for k, v in json.loads(cj.read_text())["cell"].items() if k in names}
        c.update(rank=float(c["rank"]), m_hs=tuple(c["m_hs"]), fit=FitConfig(**c["fit"]),
                 model=model_config(c["model"]))
        if "sigma" in c:
            c["sigma"] = tuple(c["sigma"])
        assert config_hash(RateCell(**c)) == cj.parent.name.rsplit("_", 1)[1], cj
        seen += 1
    assert seen >= 40


@pytest.mark.parametrize("callables", ["kernel", "basis"])
def test_a_cell_with_lambdas_crosses_to_a_dask_worker(callables):
    """stdlib pickle refuses a lambda; Dask's pickling (distributed.protocol.pickle: pickle, then cloudpickle)
    sends it by value, and a fresh process loads it with plain pickle and builds the same target."""
    from distributed.protocol import pickle as dask_pickle

    from jackson.rate_sweep.cell import RateCell
    if callables == "kernel":
        cell = RateCell(alpha=1.5, rank=3, seed=0, m_hs=(1,), tau=6, kernel=lambda u, v: np.exp(-(u - v) ** 2 / 0.1),
                        F=np.tanh, f=lambda x: x ** 3)
    else:
        cell = RateCell(alpha=1.5, rank=3, seed=0, m_hs=(1,), tau=6, f=lambda x: x ** 3,
                        phi=lambda x, k: np.sqrt(2) * np.cos(np.pi * np.arange(1, k + 1) * x[..., None]),
                        psi=lambda x, k: np.sqrt(2) * np.sin(2 * np.pi * np.arange(1, k + 1) * x[..., None]))
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
FAULT_CASES.append({"id": "config-of-a-python-basis-run",
                    "command": "jackson-sweep --config <config.json of run_sweep(sweep_config(phi=my_basis, psi=my_basis, ...))>",
                    "expect": "exit 2, one line (--phi: 'python:...' names a Python callable ...; --config cannot rerun it); "
                              "nothing written",
                    "test": "tests/test_kernel_target.py::test_callable_basis_sweep_end_to_end"})


@pytest.mark.parametrize("case", list(BAD))
def test_bad_kernel_option_one_line_exit_2(tmp_path, capsys, case):
    args, why = BAD[case]
    refused_line(capsys, args, tmp_path / "out", why)


def test_kernel_with_alpha_from_python_is_refused():
    with pytest.raises(UsageError, match="--alpha does not apply"):
        validate(sweep_config(quick=True, kernel=GAUSS, alpha=(2.0,)))


# ---- the whole pipeline on a kernel that is not of the sin/sin family -------------------------

@pytest.mark.slow
def test_kernel_sweep_end_to_end_lands_in_the_report(tmp_path, capsys):
    """jackson-sweep --kernel (in-process) to jackson-report: the kernel's POD is the cells' target, the line and
    report.json say no exponent is predicted for a non-power-law sigma, and the report finds the folder."""
    from jackson.lab_report.entries import find_runs
    from jackson.rate_sweep.cli import sweep_main
    out = tmp_path / "reports" / "kernel-run"
    capsys.readouterr()
    assert sweep_main(["--quick", "--kernel", GAUSS, "--rank", "2,inf", "--steps", "20", "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    # the Gaussian kernel's POD sigma decays faster than any power (exponentially): it fails the power-law test,
    # so no -(2 alpha_hat - 1) is predicted or judged
    assert f"kernel rho(u, v) = {GAUSS}" in stdout and "no predicted exponent: sigma is not a power law" in stdout
    k = KernelTarget(kernel=GAUSS, k_max=128)
    a_hat = round(k.alpha_hat, 4)
    s = json.loads((out / "summary.json").read_text())
    inf = next(t for t in s["targets"] if t["rank"] == "inf")
    law = inf["kernel"].pop("law")
    assert inf["kernel"] == {"expression": GAUSS, "alpha_hat": a_hat, "nodes": 256}
    assert law == spectrum_law(k.sigma[:64]) and law["law"] == "not a power law"
    assert inf["K"] == len(k.sigma) and inf["predicted_exponent"] == pytest.approx(-(2 * a_hat - 1))
    cell = json.loads(next((out / "cells").glob("*rinf*/cell.json")).read_text())
    np.testing.assert_allclose(cell["sigma_head"], k.sigma, rtol=1e-12)      # the cell's target is the kernel's POD
    rep = json.loads((out / "report.json").read_text())
    assert rep["title"].startswith(f"jackson-sweep: kernel rho(u, v) = {GAUSS}; rank 2, inf")
    qs = {p["quantity"].split(" (fit")[0].split(" -- ")[0].split("; in brackets")[0]: p for p in rep["paper"]}
    held = qs[f"kernel rho(u, v) = {GAUSS} (alpha_hat = {a_hat:g}), rank inf: exponent of held-out MSE in m_h"]
    orc = qs[f"kernel rho(u, v) = {GAUSS} (alpha_hat = {a_hat:g}), rank inf: exponent of the rank-m_h oracle, s != t part"]
    assert held["paper"] is None and "sigma is not a power law" in held["quantity"] and math.isfinite(held["measured"])
    assert orc["measured"] == pytest.approx(inf["exponents"]["oracle_self_exact"]["slope"])
    assert (held["lo"], held["hi"]) == (inf["exponents"]["test"]["lo"], inf["exponents"]["test"]["hi"])   # its 95% interval
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
