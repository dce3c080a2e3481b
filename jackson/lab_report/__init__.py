"""The lab report (`jackson-report`): trains nothing; reads the `report.json` every experiment writes
and the run folders' own tables.

`page` (find result folders, reports/index.md + index.html, tables.tex) opens with the claims ledger
(`claims`: every quantitative claim of both papers and the verdict its rule computes -> claims.csv,
claims.tex); `columns` is the dictionary of every CSV column the lab writes (reports/COLUMNS.md).
`redraw` draws a finished run folder's figures again from its committed tables (PNG + PDF), with its
experiment's own plotting code; `provenance` writes provenance.json, derived once from git history, into
a run folder older than environment.json (the report reads the file, never git).
"""
