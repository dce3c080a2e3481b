"""cot_dp.train: the loss, training, greedy-generation accuracy, held-out loss."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from cot_dp import data
from cot_dp.model import CotTransformer
from cot_dp.settings import ArchConfig, ModelConfig
from cot_dp.settings import TrainConfig
from cot_dp.train import accuracy, batch_loss, device_steps, heldout_loss, position_accuracy, train
from jackson.checkpoint import devices_label
from cot_dp_helpers import task


# ---- training and evaluation --------------------------------------------------------------------

@pytest.fixture(scope="module")
def small_ds(tmp_path_factory):
    cfg = task("arithmetic", 2)
    tr, te = data.generate(cfg, 400, 40, seed=1)
    return data.load(data.write_dataset(tmp_path_factory.mktemp("ds") / "a2", cfg, tr, te, 1), cfg)


def test_loss_counts_only_tokens_after_the_prompt(small_ds):
    s = small_ds.train
    m = CotTransformer(ModelConfig(d_model=16), len(small_ds.tokenizer), small_ds.max_len, 0)
    _, count = batch_loss(m, s.ids[:8], s.lengths[:8], s.prompt_lens[:8])
    assert count == int((s.lengths[:8] - s.prompt_lens[:8]).sum())   # CoT, answer and <eos>


def test_training_fits_a_small_set_and_is_reproducible(small_ds):
    s = small_ds.train
    few = data.Split(s.ids[:32], s.lengths[:32], s.prompt_lens[:32], s.answers[:32], s.has_cot[:32])
    cfg = TrainConfig(steps=40, batch_size=32, lr=3e-3, eval_every=20, eval_size=32)
    runs = []
    for _ in range(2):
        m = CotTransformer(ModelConfig(d_model=16, arch=ArchConfig(dropout=0.0)), len(small_ds.tokenizer),
                           small_ds.max_len, 0)
        before = heldout_loss(m, few, 32, "cpu")
        runs.append((train(m, few, few, cfg, seed=0, progress=False), m))
    (r1, m1), (r2, m2) = runs
    assert [c["train_loss"] for c in r1.curve] == [c["train_loss"] for c in r2.curve]
    assert all(torch.equal(p, q) for p, q in zip(m1.parameters(), m2.parameters()))
    assert r1.curve[-1]["test_loss"] == pytest.approx(heldout_loss(m1, few, 32, "cpu"))
    assert r1.curve[-1]["test_loss"] < 0.5 * before       # it learns the 32 sequences it sees


class Oracle(torch.nn.Module):
    """Stands in for a model: generates the true sequences (or corrupts the answer)."""

    def __init__(self, split, corrupt=False):
        super().__init__()
        self.split, self.corrupt = split, corrupt

    def generate(self, prompts, plens, eos_id):
        i = next(k for k in range(len(self.split)) if torch.equal(self.split.ids[k, :prompts.shape[1]].long(), prompts[0]))
        ids = self.split.ids[i:i + len(prompts)].long().clone()
        if self.corrupt:
            ends = self.split.lengths[i:i + len(prompts)] - 2
            ids[torch.arange(len(prompts)), ends] = 2          # a wrong answer token
        return torch.cat([ids, torch.full((len(prompts), 2), eos_id)], dim=1)


def test_accuracy_scores_the_final_answer(small_ds):
    s = small_ds.test
    right = accuracy(Oracle(s), s, batch=len(s))
    assert right["accuracy"] == 1.0 and right["cot_exact"] == 1.0 and right["n_eval"] == len(s)
    wrong = accuracy(Oracle(s, corrupt=True), s, batch=len(s))
    assert wrong["accuracy"] == 0.0 and wrong["cot_exact"] == 0.0


def test_heldout_loss_is_nan_without_cot_lines(small_ds):
    s = small_ds.test
    no_cot = data.Split(s.ids[:4], s.lengths[:4], s.prompt_lens[:4], s.answers[:4], torch.zeros(4, dtype=torch.bool))
    m = CotTransformer(ModelConfig(d_model=16), len(small_ds.tokenizer), small_ds.max_len, 0)
    assert np.isnan(heldout_loss(m, no_cot, 4, "cpu")) and heldout_loss(m, s, 4, "cpu") > 0


# ---- resumable training (issue 17: a --full cell outlasts any one session) ---------------------------

RESUME_CFG = TrainConfig(steps=12, batch_size=8, lr=3e-3, warmup=3, schedule="cosine", eval_every=5, eval_size=16)


def _split(ds, n):
    s = ds.train
    return data.Split(s.ids[:n], s.lengths[:n], s.prompt_lens[:n], s.answers[:n], s.has_cot[:n])


def _resumable_run(ds, ckpt=None, d_model=16, cfg=RESUME_CFG, ident="cell"):
    """A tiny model with dropout 0.1 (so the dropout RNG must be restored), 40 examples in batches of 8:
    5 steps an epoch, so the 12 steps cross two epoch boundaries and a curve point falls every 5."""
    m = CotTransformer(ModelConfig(d_model=d_model, arch=ArchConfig(n_layers=1, n_heads=2, dropout=0.1)),
                       len(ds.tokenizer), ds.max_len, 0)
    res = train(m, _split(ds, 40), ds.test, cfg, seed=3, progress=False, ckpt=ckpt, ckpt_every_s=0.0, ident=ident)
    return m, res


def _stop_at(monkeypatch, k):
    """Raise KeyboardInterrupt (what Ctrl-C and, via jackson.config, SIGTERM raise) inside optimiser step k,
    before its update: the last checkpoint holds step k - 1."""
    import cot_dp.train as T
    real = T.lr_at

    def lr_at(step, *a, **kw):
        if step == k:
            raise KeyboardInterrupt
        return real(step, *a, **kw)
    monkeypatch.setattr(T, "lr_at", lr_at)


def _same_run(a, b):
    (ma, ra), (mb, rb) = a, b
    sa, sb = ma.state_dict(), mb.state_dict()
    assert list(sa) == list(sb) and all(torch.equal(sa[k], sb[k]) for k in sa), \
        [k for k in sa if not torch.equal(sa[k], sb[k])]
    assert ra.curve == rb.curve                      # every float bit for bit (no NaN: the test split has CoTs)
    assert len(ra.step_s) == len(rb.step_s) == ra.steps


@pytest.mark.parametrize("k", [4, 8, 12])   # inside the first epoch, the second, at the very last step
def test_a_stopped_and_resumed_run_equals_an_uninterrupted_one(small_ds, tmp_path, monkeypatch, capsys, k):
    whole = _resumable_run(small_ds)
    ck = tmp_path / "ck" / "cell.pt"
    with monkeypatch.context() as mp:
        _stop_at(mp, k)
        with pytest.raises(KeyboardInterrupt):
            _resumable_run(small_ds, ck)
    st = torch.load(ck, weights_only=True)
    assert st["step"] == k - 1 and len(st["curve"]) == (k - 1) // 5
    capsys.readouterr()
    resumed = _resumable_run(small_ds, ck)
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"train: resuming from {ck} at step {k - 1} of 12 ({st['wall_s']:.0f} s trained before)"]
    _same_run(whole, resumed)
    assert torch.load(ck, weights_only=True)["step"] == 12        # kept after the last step: the caller removes it
    assert sorted(p.name for p in ck.parent.iterdir()) == ["cell.pt"]   # no temporary file left


def test_a_finished_checkpoint_resumes_without_training(small_ds, tmp_path, monkeypatch):
    ck = tmp_path / "cell.pt"
    whole = _resumable_run(small_ds, ck)
    monkeypatch.setattr("cot_dp.train.batch_loss", lambda *a, **k: pytest.fail("trained again"))
    _same_run(whole, _resumable_run(small_ds, ck))


def _one_set_aside(tmp_path, ck, bad, capsys, why):
    aside = list(tmp_path.glob("cell.pt.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == bad          # kept, never deleted
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"train: cannot resume from {ck} (") and why in err[0] \
        and err[0].endswith(f"set aside as {aside[0].name}, training from scratch"), err


@pytest.mark.parametrize("how", ["garbage", "truncated", "empty"])
def test_an_unreadable_checkpoint_is_set_aside_and_training_starts_afresh(small_ds, tmp_path, capsys, how):
    whole = _resumable_run(small_ds)
    ck = tmp_path / "cell.pt"
    _resumable_run(small_ds, ck)
    bad = {"garbage": bytes(range(256)) * 8, "truncated": ck.read_bytes()[:len(ck.read_bytes()) // 2], "empty": b""}[how]
    ck.write_bytes(bad)
    capsys.readouterr()
    _same_run(whole, _resumable_run(small_ds, ck))
    _one_set_aside(tmp_path, ck, bad, capsys, "Error")
    assert ck.is_file()                                           # the new run wrote its own


@pytest.mark.parametrize("other, why", [({"d_model": 8}, "another model: embed.weight is 20x16 here, 20x8 in the checkpoint"),
                                        ({"cfg": dataclasses.replace(RESUME_CFG, lr=1e-3)}, "differs in train.lr"),
                                        ({"ident": "another cell"}, "differs in ident")])
def test_a_checkpoint_of_another_model_or_run_is_set_aside(small_ds, tmp_path, capsys, other, why):
    ck = tmp_path / "cell.pt"
    with pytest.MonkeyPatch.context() as mp:
        _stop_at(mp, 7)
        with pytest.raises(KeyboardInterrupt):
            _resumable_run(small_ds, ck, **other)
    bad = ck.read_bytes()
    whole = _resumable_run(small_ds)
    capsys.readouterr()
    _same_run(whole, _resumable_run(small_ds, ck))
    _one_set_aside(tmp_path, ck, bad, capsys, why)


def _stopped_checkpoint(small_ds, ck, k=7) -> dict:
    """A fresh run into ck, stopped inside step k: its checkpoint holds step k - 1."""
    ck.unlink(missing_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        _stop_at(mp, k)
        with pytest.raises(KeyboardInterrupt):
            _resumable_run(small_ds, ck)
    return torch.load(ck, weights_only=True)


def test_the_devices_a_run_trained_on_are_recorded_in_order(small_ds, tmp_path):
    ck = tmp_path / "cell.pt"
    _, res = _resumable_run(small_ds, ck)
    assert res.devices == [{"device": "cpu", "steps": 12}] and devices_label(res.devices) == "cpu"
    assert device_steps(res) == [{"device": "cpu", "steps": 12, "step_ms": 1000 * sum(res.step_s) / 12}]
    # a run started elsewhere (its checkpoint says 6 steps on cuda) and finished here names both, in order
    st = _stopped_checkpoint(small_ds, ck)
    assert st["devices"] == [{"device": "cpu", "steps": 6}]
    st["devices"] = [{"device": "cuda", "steps": 6}]
    torch.save(st, ck)
    _, res = _resumable_run(small_ds, ck)
    assert res.devices == [{"device": "cuda", "steps": 6}, {"device": "cpu", "steps": 6}]
    assert devices_label(res.devices) == "cuda+cpu"
    parts = device_steps(res)
    assert [p["steps"] for p in parts] == [6, 6]
    assert parts[0]["step_ms"] == pytest.approx(1000 * sum(res.step_s[:6]) / 6)
    assert parts[1]["step_ms"] == pytest.approx(1000 * sum(res.step_s[6:]) / 6)
    # a checkpoint written before devices were recorded: its steps are not named, the rest are
    st = _stopped_checkpoint(small_ds, ck)
    del st["devices"]
    torch.save(st, ck)
    _, res = _resumable_run(small_ds, ck)
    assert res.devices == [{"device": None, "steps": 6}, {"device": "cpu", "steps": 6}]
    assert devices_label(res.devices) == "cpu" and device_steps(res)[0]["device"] is None


@pytest.mark.parametrize("record", [[{"device": "cuda", "steps": 5}], [{"device": 3, "steps": 6}],
                                    [{"device": "cpu", "steps": -1}, {"device": "cpu", "steps": 7}], "cpu"])
def test_a_checkpoint_with_a_malformed_device_record_is_set_aside(small_ds, tmp_path, capsys, record):
    ck = tmp_path / "cell.pt"
    st = _stopped_checkpoint(small_ds, ck)
    st["devices"] = record
    torch.save(st, ck)
    bad = ck.read_bytes()
    whole = _resumable_run(small_ds)
    capsys.readouterr()
    _same_run(whole, _resumable_run(small_ds, ck))
    _one_set_aside(tmp_path, ck, bad, capsys, "malformed device record")


# ---- teacher-forced accuracy by CoT position ---------------------------------------------------

def _naive_position_accuracy(model, split, comma_id):
    """The same table, one line and one token at a time."""
    hits = {}
    for i in range(len(split)):
        n, p0 = int(split.lengths[i]), int(split.prompt_lens[i])
        ids = split.ids[i, :n].long()
        with torch.no_grad():
            pred = model(ids[None, :-1]).argmax(-1)[0]
        row = col = 0
        for t in range(p0, n):
            h = hits.setdefault((t - p0, row, col), [])
            h.append(int(pred[t - 1]) == int(ids[t]))
            row, col = (row + 1, 0) if int(ids[t]) == comma_id else (row, col + 1)
    return {k: (sum(v), len(v)) for k, v in hits.items()}


@pytest.mark.parametrize("batch", [7, 256])
def test_position_accuracy_equals_a_line_by_line_count(tmp_path, batch):
    cfg = task("ed", 4, ins_cost=1, del_cost=1, sub_cost=1)        # varying |s2|: rows differ in length
    tr, te = data.generate(cfg, 64, 30, seed=3)
    ds = data.load(data.write_dataset(tmp_path / "ed", cfg, tr, te, 3), cfg)
    m = CotTransformer(ModelConfig(d_model=16, arch=ArchConfig(dropout=0.0)), len(ds.tokenizer), ds.max_len, 0)
    short = dataclasses.replace(TrainConfig(), steps=30, batch_size=16, lr=3e-3, eval_every=30, eval_size=8)
    train(m, ds.train, ds.test, short, seed=0, progress=False)      # some positions right, some wrong
    comma = ds.tokenizer.ids[","]
    got = position_accuracy(m, ds.test, comma, batch=batch)
    want = _naive_position_accuracy(m, ds.test, comma)
    assert {(int(r.position), int(r.row), int(r.col)): (round(r.accuracy * r.n), int(r.n))
            for r in got.itertuples()} == want
    assert got.accuracy.min() < 0.5 < got.accuracy.max()          # a table with right and wrong places
    assert got.row.max() >= 3 and int(got.n.max()) == len(ds.test)   # every line reaches position 0
    limited = position_accuracy(m, ds.test, comma, batch=batch, n=5)
    assert int(limited.n.max()) == 5
    assert set(position_accuracy(m, ds.test, None).row) == {0}       # no comma token: one segment
