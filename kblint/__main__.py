"""Entry point for `kblint` and `python -m kblint`."""

from __future__ import annotations

import sys


def main() -> None:
    # `--version` answers before the CLI framework is imported: start-up time is user time.
    if sys.argv[1:] in (["--version"], ["-V"]):
        from . import __version__

        print(f"kblint {__version__}")
        return
    try:
        from .cli import run_app
    except ModuleNotFoundError as exc:  # run from a checkout with a Python that lacks kblint's dependencies
        sys.stderr.write(f"kblint: cannot start: {exc.name!r} is not installed for {sys.executable}; install "
                         "kblint there (pip install kblint, or pip install -e . in a checkout)\n")
        sys.exit(2)
    try:
        run_app()
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            _leave(exc.code or 0)
        raise
    _leave(0)


def _leave(code: int) -> None:
    """End the process with CODE as a normal exit would, but without the interpreter's teardown:
    freeing one by one the objects a run leaves (its report, the caches of its parsers, its
    modules) takes longer than the whole run of a small KB. The atexit functions run and what was
    written is flushed. The exit stays the normal one while another thread runs, under a profiler
    or a tracer (`python -m cProfile -m kblint`, coverage: they write their results after kblint
    returns), and when flushing fails (the normal exit then reports it, with code 120)."""
    import atexit
    import os

    threading = sys.modules.get("threading")  # never imported: no other thread was started by it
    if (threading is not None and threading.active_count() > 1) or sys.gettrace() or sys.getprofile():
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, ValueError):  # no stream (pythonw), or a closed one: nothing to flush
            pass
        except OSError:  # a full disk, a reader that went away
            sys.exit(code)
    os._exit(code)


if __name__ == "__main__":
    main()
