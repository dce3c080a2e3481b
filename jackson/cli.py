"""Thin entry points: parse, call a library function, print where the results went."""
from __future__ import annotations

import sys

from .config import cli_run


def sweep_main(argv: list[str] | None = None) -> int:
    from .experiment import QUICK, SweepConfig, run_sweep

    cfg, summary = cli_run("jackson-sweep", SweepConfig,
                           "Fit the Eq. (5) Transformer to POD targets for each m_h and measure the rate "
                           "(Jiang & Li, Theorem 4.1 / Fig. 1).", QUICK, run_sweep,
                           sys.argv[1:] if argv is None else argv)
    out = cfg.resolved_out()
    print(f"results: {out}/results.csv")
    print(f"summary: {out}/summary.md")
    print(f"figures: {out}/error_vs_mh.png, {out}/learned_spectrum.png, {out}/loss_curves.png")
    for t in summary["targets"]:
        e = t["exponents"].get("test")
        if e:
            print(f"alpha={t['alpha']:g} rank={t['rank']} ({t['attention']} attention): fitted exponent {e['slope']:+.2f} "
                  f"[{e['lo']:+.2f}, {e['hi']:+.2f}], predicted {t['predicted_exponent']:+.2f}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(sweep_main())
