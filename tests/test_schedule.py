"""jackson/schedule.py: the one learning-rate schedule, batch sampler and seed derivation.

The three training loops (jackson.fit.fit, cot_dp.train.train, vit_probe.train.train) were moved
onto jackson/schedule.py; `tests/data/before_schedule_move.json` holds what tiny runs of each gave
*before* the move (recorded with `python tests/test_schedule.py --record` at commit 419a07c).
They must give the same numbers after it: every status, step, seed and learning rate of
jackson.fit and cot-dp exactly (`==` on the floats, which JSON round-trips), and every trained number
(losses, errors: computed in float32) exactly or within ROUNDOFF_RTOL.  Why a tolerance there: the
numbers were recorded on one lab machine; on another (an AMD EPYC, AVX2, 2026-11-25) the same code
gives the same statuses, steps and learning rates, but trained numbers that differ in the last
float32 bits (largest relative difference 2.3e-7 over all five recipes, about 2 float32 ulps: the
kernels' summation order differs with the processor).  ROUNDOFF_RTOL = 1e-5 is ~40x that; a change of
the schedule moves them by far more (`test_a_changed_schedule_is_caught_by_the_tolerance`: the lr
x 1.001 moves the losses of an 8-step fit by more than 10 x ROUNDOFF_RTOL).
One exception for the learning rates, on purpose: vit-probe's warm-up learning rate was
lr * (s / W) before and is peak * min(1, s / W) now (the one formula of jackson/schedule.py, the
one jackson.fit and cot-dp write to their tables); the two round differently in the last bit of
the double on about a quarter of the warm-up steps (15 of 58 in `vit_long_warmup`), so those
are held to within 1 ulp.
"""
from __future__ import annotations

import csv
import gzip
import json
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

sys.path.insert(0, str(Path(__file__).parent))   # conftest's tiny configs when run as a script

from conftest import TINY_MODEL, tiny_cell  # noqa: E402
from jackson.fit import fit  # noqa: E402
from jackson.hparams import FitConfig
from jackson.models import TransformerBank  # noqa: E402
from jackson.schedule import (EpochSampler, Plateau, derive_seed, derive_seeds, lr_at, member_seed,  # noqa: E402
                              seeded_generator, stable_tag, torch_seeded)
from synthetic.pod_target import PODTarget, Spectrum  # noqa: E402

STORED = Path(__file__).parent / "data" / "before_schedule_move.json"


class LrLog:
    """Every optimiser step's learning rate of each parameter group (a public torch hook)."""

    def __enter__(self):
        self.lrs: list[list[float]] = []
        self._h = register_optimizer_step_pre_hook(
            lambda opt, args, kwargs: self.lrs.append([g["lr"] for g in opt.param_groups]))
        return self

    def __exit__(self, *exc):
        self._h.remove()


# trained numbers (float32 losses and errors) may differ from the stored ones by round-off only
ROUNDOFF_RTOL = 1e-5
TRAINED = {"test_mse", "train_mse", "curve_train_mse", "train_loss", "test_loss", "history"}


def _trained(path: tuple) -> bool:
    """A trained number: under one of TRAINED, or the train_mse column (index 2) of a fit curve row
    [step, member, train_mse, lr]."""
    return bool(TRAINED.intersection(path)) or (len(path) == 3 and path[0] == "curve" and path[2] == 2)


def roundoff_deviations(now, before, path: tuple = ()) -> list[tuple[float, tuple]]:
    """Compare a recipe's record with the stored one: everything exactly (an AssertionError names the
    first difference), except trained floats, whose relative differences are returned (nonzero only)."""
    if isinstance(before, dict):
        assert isinstance(now, dict) and now.keys() == before.keys(), (path, sorted(now), sorted(before))
        return [d for k in before for d in roundoff_deviations(now[k], before[k], path + (k,))]
    if isinstance(before, list):
        assert isinstance(now, list) and len(now) == len(before), (path, len(now), len(before))
        return [d for i, (a, b) in enumerate(zip(now, before)) for d in roundoff_deviations(a, b, path + (i,))]
    if isinstance(before, float) and isinstance(now, float) and now != before and _trained(path):
        return [(abs(now - before) / max(abs(before), 1e-300), path)]
    assert type(now) is type(before) and now == before, (path, now, before)
    return []


def assert_same_numbers(now, before) -> None:
    """Exactly the stored numbers, trained floats within ROUNDOFF_RTOL (see the module docstring)."""
    worst = max(roundoff_deviations(now, before), default=(0.0, ()))
    assert worst[0] <= ROUNDOFF_RTOL, f"trained number off by {worst[0]:.3g} (relative) at {worst[1]}"


# ---- the tiny recipes (one per training loop, and both fit schedules) ---------------------------

def sweep_cell(tmp: Path) -> dict:
    """jackson-sweep: the tests' tiny cell through the runner (fit, cosine schedule)."""
    from jackson.sweep import run_cells
    with LrLog() as log:
        (folder,) = run_cells([tiny_cell()], tmp, progress=False)
    rows, curve = _csv(folder / "rows.csv"), _csv(folder / "curve.csv.gz")
    return {"key": folder.name, "test_mse": [float(r["test_mse"]) for r in rows],
            "train_mse": [float(r["train_mse"]) for r in rows], "status": [r["status"] for r in rows],
            "init_seed": [int(r["init_seed"]) for r in rows], "curve_lr": [float(r["lr"]) for r in curve],
            "curve_train_mse": [float(r["train_mse"]) for r in curve], "step_lrs": log.lrs}


def _csv(path: Path) -> list[dict]:
    """Rows as strings: float() of the repr pandas wrote gives back the exact double (NAME.csv.gz: gzip)."""
    with (gzip.open(path, "rt", newline="") if path.suffix == ".gz" else open(path, newline="")) as f:
        return list(csv.DictReader(f))


PLATEAU = FitConfig(steps=30, batch_size=32, lr=3e-3, warmup=4, eval_every=3, patience=1, schedule="plateau",
                    min_improve=0.05, lr_decay=0.3, min_lr=5e-4, eval_size=64)


def fit_plateau() -> dict:
    """jackson.fit with per-member reduce-on-plateau: members cut and stop at their own steps."""
    target = PODTarget(Spectrum(alpha=1.5, rank=4), tau=8)
    xs = target.sample(256, seed=0)
    x, y = torch.tensor(xs, dtype=torch.float32), torch.tensor(target(xs), dtype=torch.float32)
    bank = TransformerBank(TINY_MODEL, (1, 2, 4), (101, 7, 55))
    with LrLog() as log:
        res = fit(bank, x, y, PLATEAU, seed=3, progress=False)
    return {"status": res.status, "steps": res.steps, "curve": [[c["step"], c["member"], c["train_mse"], c["lr"]]
                                                                for c in res.curve], "step_lrs": log.lrs}


def fit_small_data() -> dict:
    """jackson.fit with a batch larger than the data (each step takes a whole fresh permutation)."""
    target = PODTarget(Spectrum(alpha=1.5, rank=4), tau=8)
    xs = target.sample(24, seed=1)
    x, y = torch.tensor(xs, dtype=torch.float32), torch.tensor(target(xs), dtype=torch.float32)
    bank = TransformerBank(TINY_MODEL, (1, 3), (5, 6))
    cfg = FitConfig(steps=8, batch_size=32, lr=3e-3, warmup=3, eval_every=2, min_lr=1e-4, eval_size=16)
    with LrLog() as log:
        res = fit(bank, x, y, cfg, seed=4, progress=False)
    return {"status": res.status, "curve": [[c["step"], c["member"], c["train_mse"], c["lr"]] for c in res.curve],
            "step_lrs": log.lrs}


def cot_dataset(tmp: Path):
    from cot_dp import data
    from cot_dp.tasks import TaskConfig, TaskParams
    cfg = TaskConfig(name="arithmetic", size=2, params=TaskParams())
    tr, te = data.generate(cfg, 64, 16, seed=1)
    return data.load(data.write_dataset(tmp / "a2", cfg, tr, te, 1), cfg)


def cot_runs(tmp: Path) -> dict:
    """cot_dp.train: warm-up + cosine and warm-up + constant, dropout on (its global-RNG path)."""
    from cot_dp.model import CotTransformer
    from cot_dp.settings import ModelConfig
    from cot_dp.settings import TrainConfig
    from cot_dp.train import train
    ds = cot_dataset(tmp)
    out = {}
    for name, cfg in {"cosine": TrainConfig(steps=12, batch_size=16, lr=3e-3, warmup=4, schedule="cosine",
                                            eval_every=1, eval_size=16),
                      "constant": TrainConfig(steps=12, batch_size=24, lr=2e-3, warmup=3, schedule="constant",
                                              eval_every=1, eval_size=16),
                      "epochs": TrainConfig(epochs=2.5, batch_size=20, lr=1e-3, schedule="cosine",
                                            eval_every=1, eval_size=16)}.items():
        m = CotTransformer(ModelConfig(d_model=16), len(ds.tokenizer), ds.max_len, 0)
        res = train(m, ds.train, ds.test, cfg, seed=5, progress=False)
        out[name] = {k: [c[k] for c in res.curve] for k in ("step", "train_loss", "test_loss", "lr")}
    return out


def vit_run(n: int = 80, **kw) -> dict:
    """vit_probe.train: per-epoch shuffles and per-batch augmentation seeded by (seed, epoch[, batch])."""
    from vit_probe import models
    from vit_probe.train import TrainConfig, train
    torch.manual_seed(0)
    m = models.build(models.parse_arch("vit_p8_d32_l2_h2"))
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
    y = rng.integers(0, 10, n)
    cfg = TrainConfig(**{**dict(epochs=3, n_train=n, batch_size=32, warmup_frac=0.5, ckpt_every_s=1e9), **kw})
    with LrLog() as log:
        hist = train(m, x, y, cfg, seed=2, progress=False)
    return {"history": [[h["epoch"], h["step"], h["train_loss"], h["train_err"]] for h in hist], "step_lrs": log.lrs}


def vit_long_warmup() -> dict:
    """58 warm-up steps at lr 1e-3 (the ones where lr * s / W and lr * (s / W) round differently)."""
    return vit_run(n=40, epochs=3, batch_size=2, warmup_frac=0.97, augment=False)


def record_all(tmp: Path) -> dict:
    return {"sweep_cell": sweep_cell(tmp / "sweep"), "fit_plateau": fit_plateau(),
            "fit_small_data": fit_small_data(), "cot": cot_runs(tmp), "vit": vit_run(),
            "vit_long_warmup": vit_long_warmup()}


# ---- the module's own behaviour ------------------------------------------------------------------

def test_lr_at_warms_up_from_peak_over_warmup_then_decays_to_the_floor():
    peak, total, W = 0.2, 20, 4
    lrs = [lr_at(s, peak, total, W, "cosine", floor=0.01) for s in range(1, total + 1)]
    assert lrs[0] == pytest.approx(peak / W) and lrs[W - 1] == pytest.approx(peak)
    assert all(a >= b for a, b in zip(lrs[W - 1:], lrs[W:]))                 # non-increasing after the warm-up
    assert lrs[-1] == pytest.approx(0.01)                                    # the floor at the last step
    assert [lr_at(s, peak, total, W, "constant") for s in (1, W, total)] == pytest.approx([peak / W, peak, peak])
    assert lr_at(1, peak, total, 0, "constant") == peak                      # no warm-up
    assert lr_at(total, peak, total, W, decay_from=0, floor=0.0) == pytest.approx(0.0, abs=1e-18)
    with pytest.raises(ValueError, match="shape"):
        lr_at(1, peak, total, W, "linear")


def test_plateau_cuts_each_member_on_its_own_and_stops_below_min_lr():
    p = Plateau(2, lr=1.0, patience=2, min_improve=0.1, factor=0.5, min_lr=0.3)
    for v in (10.0, 9.5, 9.4):                   # member 0: two checks without a 10% gain -> cut
        assert not p.check(0, v)
    assert p.lr == [0.5, 1.0] and p.best[0] == 9.4 and p.stale == [0, 0]
    assert not p.check(1, 5.0) and p.lr[1] == 1.0
    assert not p.check(0, 9.4) and p.check(0, 9.4)   # second cut: 0.25 < min_lr -> converged
    assert not p.check(1, 5.0, cut=False) and not p.check(1, 5.0, cut=False) and p.flat(1) and p.lr[1] == 1.0


@pytest.mark.parametrize("n,bs", [(10, 3), (9, 3), (4, 6)])
def test_sampler_epochs_are_permutations_and_a_per_epoch_sampler_resumes_anywhere(n, bs):
    stream = EpochSampler(n, bs, seed=1)
    spe = stream.steps_per_epoch
    batches = [stream.batch(t) for t in range(3 * spe)]
    for e in range(3):
        seen = torch.cat(batches[e * spe:(e + 1) * spe])
        assert len(set(seen.tolist())) == len(seen) == min(n, max(1, n // bs) * bs)   # no index twice in an epoch
    with pytest.raises(ValueError, match="in order"):
        EpochSampler(n, bs, seed=1).batch(spe)                                 # a stream cannot skip an epoch
    full = EpochSampler(n, bs, seed=1, per_epoch=True)
    want = [full.batch(t) for t in range(3 * spe)]
    late = EpochSampler(n, bs, seed=1, per_epoch=True)                         # a resumed run, from step spe + 1
    assert all(torch.equal(late.batch(t), want[t]) for t in range(spe + 1, 3 * spe))
    for start in range(3 * spe):                                               # a stream resumed at any step (cot-dp)
        resumed = EpochSampler(n, bs, seed=1)
        resumed.skip_to(start)
        assert all(torch.equal(resumed.batch(t), batches[t]) for t in range(start, 3 * spe)), start


def test_seeds_are_the_values_the_loops_used_before():
    ss = lambda *p, n=1: [int(v) for v in np.random.SeedSequence(list(p)).generate_state(n)]  # noqa: E731
    assert derive_seed(7, 3, 0, 12345) == ss(7, 3, 0, 12345)[0]
    assert list(derive_seeds(0, 10_000, n=2)) == ss(0, 10_000, n=2)
    assert member_seed(0, 3) == ss(0, 3)[0] and member_seed(0, 3) != member_seed(1, 3)
    g = seeded_generator(2, 1, 0)
    old = torch.Generator().manual_seed(ss(2, 1, 0)[0])                      # vit-probe's former _seeded(2, 1, 0)
    assert torch.equal(torch.randperm(9, generator=g), torch.randperm(9, generator=old))
    assert stable_tag({"b": 1, "a": "x"}) == zlib.crc32(b'{"a": "x", "b": 1}')
    assert tiny_cell().key() == "a1.5_rinf_s0_v2_7c8908beff"                 # cell keys did not move


# ---- the numbers after the move equal the numbers before it ------------------------------------

@pytest.fixture(scope="module")
def stored() -> dict:
    return json.loads(STORED.read_text())


def test_sweep_cell_numbers_unchanged(stored, tmp_path):
    assert_same_numbers(sweep_cell(tmp_path), stored["sweep_cell"])


def test_fit_plateau_numbers_unchanged(stored):
    assert_same_numbers(fit_plateau(), stored["fit_plateau"])


def test_fit_small_data_numbers_unchanged(stored):
    assert_same_numbers(fit_small_data(), stored["fit_small_data"])


def test_cot_dp_numbers_unchanged(stored, tmp_path):
    assert_same_numbers(cot_runs(tmp_path), stored["cot"])


def test_vit_probe_numbers_unchanged(stored):
    assert_same_numbers(vit_run(), stored["vit"])
    now, before = vit_long_warmup(), stored["vit_long_warmup"]
    assert_same_numbers({"history": now["history"]}, {"history": before["history"]})   # trained numbers
    np.testing.assert_array_max_ulp(np.array(now["step_lrs"]), np.array(before["step_lrs"]), maxulp=1)
    warm = int(0.97 * 60)
    assert now["step_lrs"][warm:] == before["step_lrs"][warm:]       # after the warm-up: exactly


def test_a_changed_schedule_is_caught_by_the_tolerance(stored, monkeypatch):
    """ROUNDOFF_RTOL still tells a real change from round-off: the lr x 1.001 at every step of the
    8-step fit moves its trained losses by more than 10 x the tolerance (and the exact lrs differ)."""
    import jackson.fit
    monkeypatch.setattr(jackson.fit, "lr_at", lambda *a, **k: 1.001 * lr_at(*a, **k))
    now, before = fit_small_data(), stored["fit_small_data"]
    moved = roundoff_deviations({"curve": now["curve"]}, {"curve": [r[:3] + [r[3] * 1.001] for r in before["curve"]]})
    assert max(d for d, _ in moved) > 10 * ROUNDOFF_RTOL
    with pytest.raises(AssertionError):
        assert_same_numbers(now, before)


def test_torch_seeded_draws_from_the_seed_and_restores_the_global_state():
    """The one fork_rng + manual_seed block (a model's init in vit_probe.model_source, cot-dp's dropout)."""
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    with torch_seeded(7):
        inside = torch.rand(3)
    assert torch.equal(torch.random.get_rng_state(), before)          # nobody else's stream moved
    assert torch.equal(inside, torch.rand(3, generator=torch.Generator().manual_seed(7)))

if __name__ == "__main__":
    import tempfile
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python tests/test_schedule.py --record   (rewrites tests/data/before_schedule_move.json)")
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as d:
        rec = record_all(Path(d))
    STORED.parent.mkdir(exist_ok=True)
    STORED.write_text(json.dumps(rec, indent=1) + "\n")
    print(f"wrote {STORED}")
