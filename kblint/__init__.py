"""kblint: a linter for markdown knowledge bases."""

__version__ = "0.1.0"
