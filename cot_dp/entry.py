"""The `cot-dp` console script: signal handlers first, then the torch-importing CLI module, so a
Ctrl-C or SIGTERM during start-up ends in one line (exit 130 / 143) like one at any later moment."""
from __future__ import annotations

import sys

from jackson.config import guarded, install_signals


def main(argv: list[str] | None = None) -> int:
    install_signals()

    def body():
        from .cli import main as cli_main
        return cli_main(sys.argv[1:] if argv is None else argv)

    return guarded("cot-dp", body)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
