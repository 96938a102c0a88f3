"""Settings: everything a run is configured by (command-line flags, later configuration files)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Settings:
    paths: list[str] = field(default_factory=list)
    format: str | None = None  # None: text, or github under GitHub Actions
    output: str | None = None
    fail_on: str = "error"
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    kb: str | None = None  # a KB name (restricts the run) or a directory holding kb.yaml (context)
    type: str | None = None
    strict_links: bool = False
    respect_gitignore: bool = True
    exclude: list[str] = field(default_factory=list)
    stdin: bool = False
    stdin_path: str | None = None
    statistics: bool = False
    quiet: bool = False
    verbose: bool = False
    no_judgment: bool = False
    base: str | None = None  # git revision: status gates apply to real transitions since it


def split_names(values: list[str] | None) -> list[str]:
    """`--select a,b --select c` → [a, b, c]."""
    names: list[str] = []
    for value in values or []:
        names.extend(part.strip() for part in value.split(",") if part.strip())
    return names
