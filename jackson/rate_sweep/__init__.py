"""The rate sweep (Jiang & Li, Fig. 1; `jackson-sweep`): does the error of the Eq. (5) Transformer fall
as m_h^-(2 alpha - 1) on POD targets of decay alpha and rank r?

config (`config.SweepConfig`, presets, `sweep_config`, `validate`) -> cells (`cell.RateCell`, one target x seed;
`given.GivenFeatureBank` for the attention term alone) -> the core runner (`jackson.sweep.run_cells`)
-> tidy tables, verdicts, summary, figures and `report.json` (`results`); the run that strings them together
(`experiment.run_sweep`) -> the entry point (`cli`).
"""
