"""The rules `kblint validate --fix` can fix, and what its fix does. Not every issue of them has a
fix (an `invalid_field` about a number out of range has none): the text report marks with `[*]`
the issues that have one; `kblint explain RULE` and docs/rules.md say what the fix does."""

from __future__ import annotations

FIXES = {
    "missing_type": (
        "when the entry's folder is under the `subdirectory` of exactly one type, a line "
        "`type: TYPE` is added to the frontmatter."
    ),
    "invalid_field": (
        "a `select` or `multi-select` value that differs from an allowed value only by case or "
        "surrounding spaces is written as the allowed value."
    ),
    "invalid_date": (
        "an unquoted date written `2024-3-7` (year, month and day, with one-digit month or day) "
        "is written `2024-03-07`."
    ),
    "noncanonical_link": (
        "the link's target is written as the entry's id, in the same form of link; a wikilink by an "
        "alias that has no label keeps the alias as its label (`[[Seacrest Holdings]]` becomes "
        "`[[seacrest-holdings|Seacrest Holdings]]`), so that readers see the same text."
    ),
}
FIXABLE = frozenset(FIXES)


def fix_note(rule: str) -> str | None:
    """The sentence the documentation of RULE gives about its fix, if it has one."""
    what = FIXES.get(rule)
    return f"`kblint validate --fix` fixes it (a safe fix; `--diff` shows it first): {what}" if what else None
