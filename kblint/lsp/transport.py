"""What stands between the language server and its standard input and error: a bound on what one
message may make the server read or hold, and log lines without tracebacks.

A client is trusted to speak the protocol, not to be bug-free: a header that announces more bytes
than any message needs, or a body that is no JSON, costs a line on standard error and the server
goes on.
"""

from __future__ import annotations

import logging
import re
import sys
from typing import BinaryIO

MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # a message's body: an entry at the file limit, escaped, fits
_SKIP_CHUNK = 1024 * 1024
# What the server is given in place of a message over the limit: a notification LSP lets a
# server leave alone (a `$/` method), so the message is dropped and the server goes on.
SKIPPED_METHOD = "$/kblint/skipped"
SKIPPED = b'{"jsonrpc": "2.0", "method": "$/kblint/skipped", "params": {}}'

_LENGTH = re.compile(rb"Content-Length: (\d+)\r\n")
_PAST_ANY_MESSAGE = 10**30  # bytes: no client sends them, so the rest of the input is dropped

log = logging.getLogger(__name__)


class BoundedInput:
    """Standard input as pygls reads it (`readline`, `read`), never holding more than LIMIT bytes
    for one header line or one message body."""

    def __init__(self, raw: BinaryIO, limit: int = MAX_MESSAGE_BYTES):
        self.raw = raw
        self.limit = limit

    def readline(self) -> bytes:
        """A header line, or its first LIMIT bytes (the rest comes as the next line: no header
        reads as one, so it is passed over). A length of more digits than Python makes a number
        of is given as one that is merely over the limit: `read` then drops what follows."""
        line = self.raw.readline(self.limit)
        at = line.find(b"Content-Length: ")
        if at > 0:  # glued to what a message without a length left: the next message starts here
            log.warning("%d bytes that no header announced: dropped", at)
            line = line[at:]
        m = _LENGTH.fullmatch(line)
        if m is not None and len(m.group(1)) > len(str(self.limit)):
            log.warning("a Content-Length of %d digits: the rest of the input is dropped", len(m.group(1)))
            return b"Content-Length: %d\r\n" % _PAST_ANY_MESSAGE
        return line

    def read(self, size: int) -> bytes:
        """The body of SIZE bytes the header announced; over the limit, it is read and dropped
        (so that the next message is found where it starts) and SKIPPED stands in for it."""
        if size <= self.limit:
            return self.raw.read(size)
        if size != _PAST_ANY_MESSAGE:  # readline said why
            log.warning("a message of %d bytes is over the limit of %d bytes: skipped", size, self.limit)
        left = size
        while left > 0 and (chunk := self.raw.read(min(left, _SKIP_CHUNK))):
            left -= len(chunk)
        return SKIPPED


class OneLine(logging.Formatter):
    """A log record as one line on standard error: what went wrong, without the traceback."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage().strip().split("\n", 1)[0]  # the framework writes tracebacks below
        error = record.exc_info[1] if record.exc_info else None
        if error is not None:
            text += f": {type(error).__name__}: {error}"
        return f"kblint server: {text}".replace("\n", " ")


def one_line_logs() -> None:
    """Warnings and errors of the server and its framework as one line each on standard error,
    unless logging is set up already (`kblint server --verbose` logs everything, tracebacks too)."""
    if logging.getLogger().handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLine())
    handler.setLevel(logging.WARNING)
    for name in ("pygls", "kblint"):
        logging.getLogger(name).addHandler(handler)
