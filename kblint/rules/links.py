"""Structure rules of the link graph: broken_link, unresolved_external, duplicate_id, orphan_entry
(SPEC §3, §8). The graph pass (`kblint.engine.pass_graph`) finds the cases; these make the issues."""

from __future__ import annotations

from collections import defaultdict

from ..model.facts import EntryFacts
from ..model.issue import Issue
from ..model.link import Link
from ..paths import display_path, leaves_kb
from . import RULES, Rule, Site


def _link_site(facts: EntryFacts, link: Link, kb_name: str) -> Site:
    """Where a link's issue goes: the file the link is written in (the entry, or cross-kb-links.yaml)."""
    return Site(kb_name, link.origin if link.origin is not None else facts.path, facts.id, facts.type)


def _link_issue(rule: Rule, facts: EntryFacts, link: Link, kb_name: str, message: str, discriminator: str) -> Issue:
    """An issue of RULE at the place the link is written. In cross-kb-links.yaml, which declares
    the links of many entries, the entry's id tells apart the issues of two entries' links to one
    target (their fingerprints)."""
    if link.origin is not None:
        discriminator = f"{discriminator}\nfrom {facts.id}"
    return rule.issue(
        _link_site(facts, link, kb_name),
        message,
        line=link.line,
        column=link.column,
        field=link.field,
        discriminator=discriminator,
    )


def unresolved_external(facts: EntryFacts, link: Link, kb_name: str, target_kb: str, named: str, strict: bool) -> Issue:
    """A link into a KB that is not in the run (a broken_link with --strict-links)."""
    rule = RULES["broken_link" if strict else "unresolved_external"]
    message = f"Link to '{target_kb}:{link.target}': KB '{target_kb}' is not in this run"
    return _link_issue(rule, facts, link, kb_name, message, f"{target_kb}:{named}")


def broken_link(facts: EntryFacts, link: Link, kb_name: str, target_kb: str, named: str, hint: str | None) -> Issue:
    """A link that resolves to no entry or file of the workspace, with a close id when there is one."""
    where_kb = "" if target_kb == kb_name else f" in KB '{target_kb}'"
    if leaves_kb(link.target):
        message = f"Link target '{link.target}' is outside the KB and no entry of the run (not looked up)"
    else:
        message = f"Link target '{link.target}' not found{where_kb}" + (f"; did you mean '{hint}'?" if hint else "")
    return _link_issue(RULES["broken_link"], facts, link, kb_name, message, f"{target_kb}:{named}")


def noncanonical_link(
    facts: EntryFacts, link: Link, kb_name: str, target_kb: str, named: str, target: EntryFacts
) -> Issue:
    """A link that resolves, by a file name, an alias or another case of the id, not by the id.
    Its discriminator gives the fix what it needs: whether the link names an alias (a name for
    readers, which a wikilink then keeps as its label) and the id, each on a line of its own (an
    id never holds a newline), then the KB and the name it was linked by."""
    written = link.target
    if written == target.stem:
        how = "its file name"
    elif written in target.aliases:
        how = "an alias"
    elif written.casefold() == target.id.casefold():
        how = "its id in another case"
    elif written.casefold() == target.stem.casefold():
        how = "its file name in another case"
    else:
        how = "an alias in another case"
    message = f"Link '{written}' names entry '{target.id}' by {how}; link it by its id"
    kind = "alias" if how.startswith("an alias") else "name"
    discriminator = f"{kind}\n{target.id}\n{target_kb}:{named}"
    return _link_issue(RULES["noncanonical_link"], facts, link, kb_name, message, discriminator)


def unmatched_cross_source(kb_name: str, cross_links_path: str, source: str, line: int) -> Issue:
    """A cross-kb-links.yaml link whose source is no entry of its KB."""
    message = f"cross-kb-links.yaml: source '{source}' is not an entry of KB '{kb_name}'"
    return RULES["broken_link"].issue(
        Site(kb_name, cross_links_path), message, line=line, discriminator=f"source:{source}"
    )


_NAMED_OTHERS = 5  # the other entries of one id a duplicate_id names, before "and N more"


def duplicate_ids(kb_name: str, facts: list[EntryFacts], involve: bool = False) -> list[Issue]:
    """duplicate_id on each reported entry that shares its id with another of the KB. INVOLVE
    (--changed-since): also on unreported entries that share an id with a reported one."""
    groups: dict[str, list[EntryFacts]] = defaultdict(list)
    for f in facts:
        if f.parsed:
            groups[f.id].append(f)
    issues = []
    for entry_id, members in groups.items():
        if len(members) < 2:  # noqa: PLR2004 - a pair at least
            continue
        involved = involve and any(m.reported for m in members)
        shown = [(m, display_path(m.path)) for m in members[: _NAMED_OTHERS + 1]]
        for f in members:
            if f.reported or involved:
                others = [path for m, path in shown if m is not f][:_NAMED_OTHERS]
                more = len(members) - 1 - len(others)
                also = ", ".join(others) + (f" and {more} more" if more else "")
                issues.append(
                    RULES["duplicate_id"].issue(
                        f.site,
                        f"Duplicate id '{entry_id}' (also in {also})",
                        line=f.id_line,
                        field="id",
                        discriminator=entry_id,
                    )
                )
    return issues


def orphan_entry(facts: EntryFacts) -> Issue:
    return RULES["orphan_entry"].issue(facts.site, f"Entry '{facts.id}' has no links in or out")
