"""cot_dp.train: the loss, training, greedy-generation accuracy, held-out loss."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from cot_dp import data
from cot_dp.model import ArchConfig, CotTransformer, ModelConfig
from cot_dp.train import TrainConfig, accuracy, batch_loss, heldout_loss, train
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
