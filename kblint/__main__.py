"""Entry point for `kblint` and `python -m kblint`."""

from __future__ import annotations

import sys


def main() -> None:
    # `--version` answers before the CLI framework is imported: start-up time is user time.
    if sys.argv[1:] in (["--version"], ["-V"]):
        from . import __version__

        print(f"kblint {__version__}")
        return
    from .infra import collector
    from .infra.pool import own_children

    collector.for_one_run()  # before the imports too: they make many objects and no cycles to collect
    own_children()
    try:
        from .cli import run_app
    except ModuleNotFoundError as exc:  # run from a checkout with a Python that lacks kblint's dependencies
        sys.stderr.write(
            f"kblint: cannot start: {exc.name!r} is not installed for {sys.executable}; install "
            "kblint there (pip install kblint, or pip install -e . in a checkout)\n"
        )
        sys.exit(2)
    run_app()


if __name__ == "__main__":
    main()
