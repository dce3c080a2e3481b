"""Thin entry points: parse, call a library function, print where the results went."""
from __future__ import annotations

import shlex
import sys
from dataclasses import replace

from .config import UsageError, build_parser, fail, from_args


def sweep_main(argv: list[str] | None = None) -> int:
    from .experiment import QUICK, SweepConfig, run_sweep

    argv = sys.argv[1:] if argv is None else argv
    prog = "jackson-sweep"
    parser = build_parser(SweepConfig, prog,
                          "Fit the Eq. (5) Transformer to POD targets for each m_h and measure the rate "
                          "(Jiang & Li, Theorem 4.1 / Fig. 1).")
    given = vars(parser.parse_args(argv))
    base = replace(SweepConfig(), **QUICK) if given.get("quick") else SweepConfig()
    cfg = from_args(SweepConfig, given, base)  # options given on the command line win over --quick
    command = " ".join([prog] + [shlex.quote(a) for a in argv])
    try:
        summary = run_sweep(cfg, command)
    except UsageError as e:
        fail(prog, str(e))
    except KeyboardInterrupt:
        fail(prog, "interrupted; finished cells are kept, rerun the same command to resume")
    out = cfg.resolved_out()
    print(f"results: {out}/results.csv")
    print(f"summary: {out}/summary.md")
    print(f"figures: {out}/error_vs_mh.png, {out}/learned_spectrum.png, {out}/loss_curves.png")
    for t in summary["targets"]:
        e = t["exponents"].get("test")
        if e:
            print(f"alpha={t['alpha']:g} rank={t['rank']}: fitted exponent {e['slope']:+.2f} "
                  f"[{e['lo']:+.2f}, {e['hi']:+.2f}], predicted {t['predicted_exponent']:+.2f}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(sweep_main())
