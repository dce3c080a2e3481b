"""What a cot-dp model and its training are, as settings, without torch: `ArchConfig`, `ModelConfig` (the
decoder's attention and embedding dimension D), `TrainConfig` (AdamW and its schedule).  cot_dp.model and
cot_dp.train build and train what they describe; a command's options and --help need only these."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from jackson.hparams import block_size


MODELS = {"standard": "softmax", "sparse": "sparse", "linear": "linear"}   # model name -> attention kind


@dataclass(frozen=True)
class ArchConfig:
    n_layers: int = 3           # Transformer blocks M (Sec. 6.1: 3; App. D: 5)
    n_heads: int = 4            # attention heads H per block (Sec. 6.1: 4)
    dropout: float = 0.1        # dropout on embeddings, attention and FFN outputs (Sec. 6.1: 0.1)
    sparse_c: int = 1           # sparse: summary tokens at the end of every block, c in Eq. (6) (Sec. 6.1: 1)
    sparse_k: int = 1           # sparse: blocks in the local window, k in Eq. (6)
    linear_chunk: int = 64      # linear: chunk length of the prefix sums (speed only; results agree to rounding)


@dataclass(frozen=True)
class ModelConfig:
    model: str = "standard"     # attention: standard (softmax) | sparse (Eq. 6 blocks) | linear (elu + 1 features)
    d_model: int = 128          # D, the embedding dimension (Sec. 6.1 sweeps 32..1024)
    arch: ArchConfig = field(default_factory=ArchConfig)   # everything else, shared by a sweep's models

    @property
    def kind(self) -> str:
        return MODELS[self.model]

    def check(self, max_len: int | None = None) -> None:
        """Raise ValueError naming the option and its valid range."""
        a = self.arch
        if self.model not in MODELS:
            raise ValueError(f"--model: choose from {', '.join(MODELS)}, got {self.model}")
        if not 1 <= a.n_heads <= 64:
            raise ValueError(f"--n-heads: must be in 1..64, got {a.n_heads}")
        if not (8 <= self.d_model <= 8192 and self.d_model % a.n_heads == 0):
            raise ValueError(f"--d-model: D must be in 8..8192 and a multiple of --n-heads ({a.n_heads}), got {self.d_model}")
        if not 1 <= a.n_layers <= 48:
            raise ValueError(f"--n-layers: must be in 1..48, got {a.n_layers}")
        if not 0 <= a.dropout < 1:
            raise ValueError(f"--dropout: must be in [0, 1), got {a.dropout}")
        if a.sparse_k < 1 or a.sparse_c < 0 or a.linear_chunk < 1:
            raise ValueError("--sparse-k, --linear-chunk: must be >= 1 and --sparse-c >= 0")
        if max_len is not None and self.model == "sparse" and a.sparse_c > block_size(max_len):
            raise ValueError(f"--sparse-c: must be <= the block size B = {block_size(max_len)}, got {a.sparse_c}")


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 3000            # optimiser steps (used when epochs = 0)
    epochs: float = 0.0          # passes over the training set; > 0 replaces steps (the paper: 100)
    batch_size: int = 64         # sequences per step (the paper: 512)
    lr: float = 1e-4             # AdamW peak learning rate (Sec. 6.1: 1e-4)
    weight_decay: float = 0.01   # AdamW weight decay (Sec. 6.1: 0.01)
    beta1: float = 0.9           # AdamW beta_1
    beta2: float = 0.999         # AdamW beta_2
    warmup: int = 0              # steps of linear learning-rate warm-up
    schedule: str = "constant"   # learning rate after warm-up: constant | cosine (to 0 at the last step)
    grad_clip: float = 1.0       # clip the global gradient norm to this (0: no clipping)
    eval_every: int = 250        # steps between loss-curve points (teacher-forced loss on eval_size test lines)
    eval_size: int = 256         # test sequences behind each loss-curve point
    gen_batch: int = 256         # sequences per greedy-generation batch

    def check(self) -> None:
        """Raise ValueError naming the option and its valid range (nan and inf fail every test below)."""
        finite = math.isfinite
        if not (self.steps >= 1 and self.batch_size >= 1):
            raise ValueError(f"--steps, --batch-size: must be >= 1, got {self.steps}, {self.batch_size}")
        if not (finite(self.epochs) and self.epochs >= 0):
            raise ValueError(f"--epochs: must be a finite number >= 0, got {self.epochs}")
        if not (finite(self.lr) and self.lr > 0):
            raise ValueError(f"--lr: must be a finite number > 0, got {self.lr}")
        if not (finite(self.weight_decay) and self.weight_decay >= 0):
            raise ValueError(f"--weight-decay: must be a finite number >= 0, got {self.weight_decay}")
        if not (0 <= self.beta1 < 1 and 0 <= self.beta2 < 1):
            raise ValueError(f"--beta1, --beta2: must be in [0, 1), got {self.beta1}, {self.beta2}")
        if self.schedule not in ("constant", "cosine"):
            raise ValueError(f"--schedule: constant or cosine, got {self.schedule}")
        if not (finite(self.grad_clip) and self.grad_clip >= 0):
            raise ValueError(f"--grad-clip: must be a finite number >= 0 (0: no clipping), got {self.grad_clip}")
        if not (self.warmup >= 0 and self.eval_every >= 1 and self.eval_size >= 1 and self.gen_batch >= 1):
            raise ValueError(f"--warmup, --eval-every, --eval-size, --gen-batch: need warmup >= 0 and the others "
                             f">= 1, got {self.warmup}, {self.eval_every}, {self.eval_size}, {self.gen_batch}")

    def total_steps(self, n_train: int) -> int:
        if self.epochs > 0:
            return max(1, math.ceil(self.epochs * n_train / self.batch_size))
        return self.steps


def run_bytes(model: ModelConfig, train: TrainConfig, L: int, vocab: int) -> dict[str, float]:
    """The memory of training and scoring `model` on sequences of L tokens (`jackson.budget.transformer_bytes`):
    the larger of a training step (batch_size sequences, activations kept for the backward pass, AdamW's
    moments), a teacher-forced evaluation (eval_size) and greedy generation (gen_batch, one position at a time
    with the keys and values cached), plus each block's L x L attention mask.  Linear attention holds no L x L
    matrix: its chunks of linear_chunk positions stand in for it."""
    from jackson import budget
    a, D = model.arch, model.d_model
    heads = a.n_heads * (min(1.0, a.linear_chunk / max(L, 1)) if model.model == "linear" else 1.0)
    params = a.n_layers * 12 * D * D + 2 * vocab * D + L * D
    step = budget.transformer_bytes(train.batch_size, L, D, a.n_layers, heads=heads, mlp=4 * D, params=params,
                                    vocab=vocab)
    evaluate = budget.transformer_bytes(train.eval_size, L, D, a.n_layers, heads=heads, mlp=4 * D, params=params,
                                        train=False, vocab=vocab)
    generate = {"the cached keys and values": 2 * budget.F32 * train.gen_batch * L * D * a.n_layers,
                "the weights": budget.F32 * params}
    parts = dict(max((step, evaluate, generate), key=budget.total))
    parts["the attention masks"] = float(a.n_layers * L * L) if model.model != "linear" else 0.0
    return parts


def check_run_memory(model: ModelConfig, train: TrainConfig, L: int, vocab: int, what: str) -> None:
    """Refuse, in one line naming the estimate and the limit, a model whose run on L-token sequences cannot fit."""
    from jackson import budget
    budget.check(f"{what}: the {model.model} model, D {model.d_model}, on sequences of {L:,} tokens",
                 run_bytes(model, train, L, vocab))


def step_flops_floor(model: ModelConfig, train: TrainConfig, L: int, vocab: int) -> float:
    """A floor on one training step's FLOPs on batch_size sequences of L tokens (jackson.threads.step_flops, as
    cot_dp.train.step_work counts it): the blocks' 12 D^2 weights a layer and the embedding on every token, and, for
    the standard model only, the scores and weighted sums over L^2 token pairs (sparse and linear attention do
    less, so they are left out).  Biases, norms and the output head are left out too."""
    from jackson.threads import step_flops
    a, D, tokens = model.arch, model.d_model, train.batch_size * L
    pairs = a.n_layers * train.batch_size * L * L * 2 * D if model.model == "standard" else 0
    return step_flops(a.n_layers * 12 * D * D + vocab * D, tokens, attention=pairs)
