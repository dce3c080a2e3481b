"""cot_dp: do efficient Transformers save computation? (Yang et al., "Do Efficient Transformers
Really Save Computation?"): standard, sparse and linear attention on chain-of-thought DP tasks
(arithmetic, edit distance, ED with locality, LIS), the FLOPs they spend, and the sweep behind
`cot-dp sweep`:

    >>> from cot_dp import TaskConfig, generate, attended_keys
    >>> train, test = generate(TaskConfig("lis", 4), n_train=2, n_test=1, seed=0)   # 2 + 1 CoT lines
    >>> len(train), len(test)
    (2, 1)
    >>> attended_keys("standard", L=256), attended_keys("sparse", L=256)   # keys attended over 256 positions
    (32896, 5671)

A sweep from Python: `run_sweep(SweepConfig(...), command="...")`; one model: `CotTransformer(ModelConfig(...))`
and `cot_dp.train.train` (a function of the submodule of the same name).  The names below are imported on
first use (scientific-python's lazy_loader), so `import cot_dp` does not load torch.
"""
import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach(__name__, submod_attrs={
    "tasks": ["TASKS", "TaskConfig", "TaskParams"],
    "data": ["generate", "write_dataset", "load", "Dataset", "DataError"],
    "tokenizer": ["Tokenizer"],
    "settings": ["ModelConfig", "ArchConfig", "TrainConfig"],
    "model": ["CotTransformer", "n_params"],
    "train": ["TrainResult", "accuracy"],
    "flops": ["attended_keys", "per_sequence", "params_flops"],
    "grid": ["SweepConfig"],
    "cell": ["CotCell"],
    "tables": ["min_gflops", "answer_baseline"],
    "sweep": ["run_sweep"],
})
