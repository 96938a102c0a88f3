"""Errors that stop a command before it can do its job (exit code 2)."""

from __future__ import annotations

# How to install what the language server, the MCP server and --watch need (kblint is installed
# from its repository, or from a checkout of it).
SERVER_EXTRA = "pip install 'kblint[server]' (in a checkout of kblint: pip install -e '.[server]')"


class UsageError(Exception):
    """kblint cannot do its job with what it was given: the message says what to change."""
