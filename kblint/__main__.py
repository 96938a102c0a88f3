"""Entry point for `kblint` and `python -m kblint`."""

from __future__ import annotations

import sys


def main() -> None:
    # `--version` answers before the CLI framework is imported: start-up time is user time.
    if sys.argv[1:] in (["--version"], ["-V"]):
        from . import __version__

        print(f"kblint {__version__}")
        return
    from .cli import run_app

    run_app()


if __name__ == "__main__":
    main()
