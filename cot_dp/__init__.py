"""cot_dp: do efficient Transformers save computation? (Yang et al., "Do Efficient Transformers
Really Save Computation?"): sparse and linear attention on chain-of-thought DP tasks."""
