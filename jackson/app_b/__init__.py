"""The App. B tasks (Jiang & Li, App. B.1, Figs. 4-6; `jackson-tasks`): does a one-layer Transformer
fitted to nearest point, weighted average and qSA learn the target's own selection S and F∘f, as
Proposition B.1 says?

config, the Eq. (53) `TaskBank` and cells (`experiment`) -> the core runner (`jackson.sweep.run_cells`)
-> tidy tables, summary and `report.json` (`results`) -> pictures from the cell tables (`figures`)
-> the entry point (`cli`).
"""
