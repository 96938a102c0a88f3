"""The cyclic garbage collector, set for the kind of process kblint is: one lint run, or a server
that lives on."""

from __future__ import annotations

import gc


def for_one_run() -> None:
    """For a process that runs one lint: the collector is off. A run makes millions of objects and
    next to no reference cycles, and the main process keeps every entry's facts until the graph
    pass: the collector would scan them again and again for nothing. Reference counting frees
    everything else as usual."""
    gc.disable()


def for_a_long_life() -> None:
    """For a server, once it holds what it serves (the language server: its indexed workspace,
    again after a KB is read anew): what it holds is set aside for the collector, which then runs
    on what the server makes from there on, without scanning the held objects again and again.
    What an earlier call set aside is looked at again first: some of it may be garbage by now."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    gc.enable()
    try:  # what start-up freed goes back to the system (glibc keeps it for reuse, and the server lives on)
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # another C library: it keeps what it keeps


def between_runs() -> None:
    """For a process that lints again and again with the collector off (`--watch`): what a run
    left in reference cycles goes before the next run."""
    gc.collect()
