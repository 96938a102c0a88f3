"""Errors that stop a command before it can do its job (exit code 2)."""

from __future__ import annotations


class UsageError(Exception):
    """kblint cannot do its job with what it was given: the message says what to change."""
