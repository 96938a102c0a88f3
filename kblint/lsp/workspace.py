"""The workspace a language server holds: every KB's plan and every entry's facts, indexed once
when the server starts (pass 1 as `kblint validate` runs it: in worker processes, from the result
cache where files did not change), then changed one entry, or one kb.yaml or cross-kb-links.yaml,
at a time.

An entry's issues are worked out when they are asked for, from its text as the editor holds it
(else the file): pass 1 on that text, its link issues and graph checks against the held graph,
judgments from the verdict cache only, its score, then its suppressions and the configuration's
filters. Bodies are not held: an entry that is not open is read again when its issues are asked.

A change tells which other entries' graph issues it may have changed (those whose links name the
entry, those that gained or lost it as a linker, those sharing its id); the graph issues of each
entry are remembered as a fingerprint, so only the entries whose graph issues really changed are
returned to be published again.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..checkers.base import CheckContext
from ..config import Settings, llm_spec
from ..engine import caching, filters, pass_duplicates, pass_entries, pass_graph, scoring
from ..engine.inputs import walk_options
from ..engine.pass_entries import FileResult, KBContext, context_of
from ..engine.pass_judgment import JudgmentSetupError, Pending, cached_issues, judge_config, run_judgment
from ..infra.files import OUTSIDE, FileProblem, leads_outside, over_the_limit, read_regular_file
from ..infra.spill import IssueSpill
from ..model.facts import EntryFacts
from ..model.issue import Issue, sort_key
from ..model.kbschema import ConfigProblem, load_cross_kb_links, load_kb_schema, schema_from_text
from ..paths import display_path, is_within
from ..progress import Progress
from ..rules import RULES, Site
from ..rules import links as link_rules
from ..rules.config import config_errors
from ..workspace import KB, Excluder, UsageError, Workspace, build_workspace, find_kb_roots, is_readme
from ..workspace import nearest_kb_root as kb_root_above
from ..yamlread.lines import YamlFileError
from .index import LiveGraph, names_of

if TYPE_CHECKING:
    from ..judge import JudgeConfig

CROSS_LINKS = "cross-kb-links.yaml"


@dataclass(slots=True)
class HeldKB:
    """One KB as the server holds it: its plan, and the paths of its entries."""

    kb: KB
    ctx: KBContext
    paths: set[str]  # its entry files, and entries the editor has that are not saved yet
    yaml_error: YamlFileError | None = None  # the kb.yaml the editor holds cannot be read: the last plan stays
    unsaved: bool = False  # the plan is of the editor's kb.yaml text, not of the file
    cross_unsaved: bool = False  # the cross links are the editor's cross-kb-links.yaml text, not the file's

    @property
    def name(self) -> str:
        return self.kb.name

    @property
    def root(self) -> str:
        return self.kb.root

    @property
    def kb_yaml(self) -> str:
        return os.path.join(self.kb.root, "kb.yaml")

    @property
    def cross_links_file(self) -> str:
        """Where its cross-kb-links.yaml is, or would be."""
        return os.path.join(self.kb.root, CROSS_LINKS)

    def is_unsaved(self, path: str) -> bool:
        """Whether what is held of PATH (its kb.yaml or cross-kb-links.yaml) is the editor's text."""
        if path == self.cross_links_file:
            return self.cross_unsaved
        return self.unsaved or self.yaml_error is not None

    def graph_kb(self) -> pass_graph.GraphKB:
        return pass_graph.GraphKB(self.name, self.root, [], self.kb.cross_links_path)


@dataclass(slots=True)
class Held:
    """Everything the server holds of the workspace."""

    kbs: dict[str, HeldKB]  # KB name → KB
    live: LiveGraph
    warnings: list[str] = field(default_factory=list)


def workspace_roots(folders: list[str]) -> tuple[list[str], list[str]]:
    """The directories to index for the editor's FOLDERS: each folder that holds KBs, or the KB a
    folder lies inside; and a warning for each folder with no KB."""
    roots, warnings = [], []
    for folder in folders:
        if find_kb_roots(folder):
            roots.append(folder)
        elif (above := kb_root_above(os.path.join(folder, "x"))) is not None:
            roots.append(above)
        else:
            warnings.append(f"no kb.yaml in {display_path(folder)} or below: nothing to lint there")
    return sorted(set(roots)), warnings


def index(roots: list[str], settings: Settings) -> Held:
    """Pass 1 over every entry of the KBs under ROOTS, and the link graph of their facts."""
    held_kbs: dict[str, HeldKB] = {}
    warnings: list[str] = []
    ws = Workspace([])
    if roots:
        try:
            ws = build_workspace(roots, options=walk_options(settings))
        except UsageError as exc:
            warnings.append(str(exc))
    warnings += ws.warnings + [f"cannot read this KB: {e}" for e in ws.unreadable]
    kbs = []
    for kb in ws.kbs:
        if kb.name in held_kbs:
            warnings.append(f"two KBs are named '{kb.name}': {display_path(kb.root)} is not linted")
            continue
        held_kbs[kb.name] = HeldKB(kb, context_of(kb, settings), set(kb.files))
        kbs.append(kb)
    facts = pass_one(Workspace(kbs), settings, use_cache=True)
    return Held(held_kbs, link_graph(held_kbs, facts, settings), warnings)


def pass_one(ws: Workspace, settings: Settings, *, use_cache: bool) -> dict[str, list[EntryFacts]]:
    """Every entry's facts, by KB name (its issues are worked out again when they are asked for)."""
    caches = caching.caches_for(ws, settings) if use_cache else None
    spill = IssueSpill()
    try:
        runs = pass_entries.run_all(ws, settings, caches, spill, Progress())
    finally:
        spill.close()
    # Made as the command line makes them, so that both can share the result cache; the server
    # does not compare entries with each other, and holds every entry's facts for its session.
    pass_duplicates.forget_sketches(runs)
    return {r.kb.name: [result.facts for result in r.results] for r in runs}


def link_graph(kbs: dict[str, HeldKB], facts: dict[str, list[EntryFacts]], settings: Settings) -> LiveGraph:
    graph_kbs = []
    for name, held in kbs.items():
        graph_kb = held.graph_kb()
        graph_kb.facts = facts.get(name, [])
        graph_kbs.append(graph_kb)
    graph, _ = pass_graph.analyse(graph_kbs, strict_links=settings.strict_links)
    return LiveGraph(graph, (f for kb in graph_kbs for f in kb.facts))


def _issue_filter(settings: Settings, warnings: list[str]) -> filters.IssueFilter:
    """The configuration's select, ignore, min_severity and per_file_ignores (names it does not
    know are left out, and said)."""
    try:
        per_file = filters.per_file_ignores(settings.per_file_ignores)
    except UsageError as exc:
        warnings.append(f"{exc}: per_file_ignores left out")
        per_file = []
    select, ignore = set(settings.select), set(settings.ignore)
    for names, option in ((select, "select"), (ignore, "ignore")):
        try:
            filters.check_names(sorted(names), option)
        except UsageError as exc:
            warnings.append(f"{exc}: {option} left out")
            names.clear()
    return filters.IssueFilter(select, ignore, None, min_severity=settings.min_severity, per_file=per_file)


def _judge(settings: Settings, warnings: list[str]) -> JudgeConfig | None:
    """The judge of the configured LLM (None: none is configured, or judgment is off)."""
    if llm_spec(settings) is None or settings.no_judgment:
        return None
    try:
        return judge_config(settings)
    except JudgmentSetupError as exc:
        warnings.append(f"{exc}: judgment items are not evaluated")
        return None


class HeldWorkspace:
    """The held workspace, and each entry's issues from the text the editor holds."""

    def __init__(self, settings: Settings, roots: list[str], warnings: list[str] | None = None):
        self.settings = settings
        self.roots = roots
        self.texts: dict[str, bytes] = {}  # the editor's text of each open file, by path
        self.results: dict[str, FileResult] = {}  # pass 1 of each open entry's text
        self.signatures: dict[str, int] = {}  # path → fingerprint of its graph issues (none: no such issue)
        self.judged: dict[str, tuple[bytes | None, list[Issue]]] = {}  # the judge's last issues, for the text judged
        self.warnings = list(warnings or [])
        self.filter = _issue_filter(settings, self.warnings)
        self.judge = _judge(settings, self.warnings)
        self.held = Held({}, LiveGraph(pass_graph.analyse([])[0], []))
        self.excluder = Excluder(settings.exclude)

    def load(self) -> None:
        """Index the workspace (again)."""
        self.held = index(self.roots, self.settings)
        self.warnings += self.held.warnings
        self.filter.roots = {name: held.root for name, held in self.held.kbs.items()}
        self.signatures = {}
        for path in self.held.live.facts:
            self._resign(path)
        for held in self.kbs.values():
            self._resign(held.cross_links_file)
        for path in list(self.texts):
            if self.is_entry(path):
                self.refresh(path)
        for path in list(self.texts):  # a kb.yaml or cross-kb-links.yaml the editor holds unsaved
            kb = self.config_of(path)
            if kb is not None and self.texts[path] != self._on_disk(kb, path):
                self.reload_config(kb, path, self.texts[path].decode("utf-8", "replace"))

    @property
    def live(self) -> LiveGraph:
        return self.held.live

    @property
    def kbs(self) -> dict[str, HeldKB]:
        return self.held.kbs

    # -- where a file belongs

    def kb_of(self, path: str) -> HeldKB | None:
        """The KB a file belongs to: the innermost KB whose directory holds it."""
        found = None
        for held in self.kbs.values():
            if is_within(path, held.root) and (found is None or len(held.root) > len(found.root)):
                found = held
        return found

    def is_entry(self, path: str) -> bool:
        """Whether PATH is (or would be, once saved) an entry file of a held KB."""
        if path in self.live.facts:
            return True
        held = self.kb_of(path)
        if held is None or not path.endswith(".md") or is_readme(os.path.basename(path)):
            return False
        relpath = held.kb.relpath(path)
        hidden = any(part.startswith(".") or part == "_templates" for part in relpath.split("/"))
        return not hidden and not self.excluder(relpath)  # where the walk of the KB would not go

    def is_kb_yaml(self, path: str) -> HeldKB | None:
        held = self.kb_of(path)
        return held if held is not None and path == held.kb_yaml else None

    def is_cross_links(self, path: str) -> HeldKB | None:
        held = self.kb_of(path)
        return held if held is not None and path == held.cross_links_file else None

    def config_of(self, path: str) -> HeldKB | None:
        """The KB whose kb.yaml or cross-kb-links.yaml PATH is."""
        return self.is_kb_yaml(path) or self.is_cross_links(path)

    def read(self, path: str) -> bytes | None:
        """The bytes of an entry, a kb.yaml or a cross-kb-links.yaml of a held KB: the editor's,
        else the file's when the engine would read it (a regular file within the size limit, not
        reached through a symlink that leads outside the KB, opened without blocking). None for
        anything else: what a client names is never read otherwise, be it a FIFO, a device or a
        file elsewhere on the machine."""
        data = self.texts.get(path)
        if data is not None:
            return data
        held = self.kb_of(path)
        if held is None or not (self.config_of(path) is held or self.is_entry(path)):
            return None
        return self._on_disk(held, path)

    def _on_disk(self, held: HeldKB, path: str) -> bytes | None:
        if leads_outside(held.root, path):
            return None
        try:
            return read_regular_file(path, held.ctx.limits.max_file_bytes)
        except FileProblem:
            return None

    # -- changes

    def refresh(self, path: str) -> set[str]:
        """Lint the entry at PATH again from its text (the editor's, else the file's; a file that
        is gone is removed). The other entries whose graph issues changed."""
        held = self.kb_of(path)
        if held is None:
            return set()
        if path not in self.texts and not os.path.lexists(path):
            return self.remove(path)
        result = self._lint(held, path)
        if path in self.texts:
            self.results[path] = result
        held.paths.add(path)
        return self._swap(path, result.facts)

    def remove(self, path: str) -> set[str]:
        """The entry at PATH is gone. The other entries whose graph issues changed."""
        held = self.kb_of(path)
        self.results.pop(path, None)
        self.judged.pop(path, None)
        if held is None or path not in self.live.facts:
            return set()
        held.paths.discard(path)
        return self._swap(path, None)

    def _swap(self, path: str, facts: EntryFacts | None) -> set[str]:
        change = self.live.replace(path, facts)
        self._resign(path)
        others = change.others(path)
        changed = {other for other in others if self._resign(other)}
        return changed | self._resign_cross_links({path, *others})

    def _resign_cross_links(self, paths: set[str]) -> set[str]:
        """The cross-kb-links.yaml files, of the KBs of the entries at PATHS, whose graph issues
        changed: its sources name entries of its KB, its links entries of any."""
        kbs = {held.name: held for held in map(self.kb_of, paths) if held is not None}
        files = [held.cross_links_file for held in kbs.values() if held.kb.cross_links_path is not None]
        return {file for file in files if self._resign(file)}

    def _resign(self, path: str) -> bool:
        """Fingerprint PATH's graph issues again (an entry's, or a cross-kb-links.yaml's); whether
        they changed."""
        facts = self.live.facts.get(path)
        if facts is not None:
            issues = self.graph_issues(copy.copy(facts), self.texts.get(path))
        else:
            cross = self.is_cross_links(path)
            issues = self.cross_issues(cross) if cross is not None else []
        new = hash(tuple((i.rule, i.line, i.column, i.field, i.message) for i in issues)) if issues else None
        old = self.signatures.pop(path, None)
        if new is not None:
            self.signatures[path] = new
        return new != old

    def reload_kb(self, held: HeldKB, text: str | None) -> set[str]:
        """Plan the KB again from its kb.yaml (TEXT: as the editor holds it, else the file), lint
        its entries again, and build the link graph again. The entries whose graph issues changed."""
        from ..checkers.registry import registry

        plugins = registry().plugins
        types = tuple(plugins.types) if plugins else ()
        try:
            schema = load_kb_schema(held.root, types) if text is None else schema_from_text(text, held.kb_yaml, types)
        except YamlFileError as exc:
            held.yaml_error, held.unsaved = exc, True
            return set()
        held.unsaved = text is not None
        other = self.kbs.get(schema.name)
        if other is not None and other is not held:
            held.yaml_error = YamlFileError(held.kb_yaml, 1, f"another KB is named '{schema.name}' ({other.root})")
            held.unsaved = True
            return set()
        held.yaml_error = None
        old_name = held.name
        del self.kbs[old_name]
        schema.problems += [p for p in held.kb.schema.problems if p.path == held.cross_links_file]
        held.kb.schema = schema
        held.ctx = context_of(held.kb, self.settings)
        self.kbs[held.name] = held
        return self._relink(held, old_name)

    def reload_cross_links(self, held: HeldKB, text: str | None) -> set[str]:
        """Read the KB's cross-kb-links.yaml again (TEXT: as the editor holds it, else the file),
        lint its entries again with the links it declares, and build the link graph again. The
        files whose graph issues changed."""
        problems: list[ConfigProblem] = []
        held.kb.cross_links_path, held.kb.cross_links = load_cross_kb_links(held.root, problems, text)
        held.cross_unsaved = text is not None
        schema = held.kb.schema
        schema.problems = [p for p in schema.problems if p.path != held.cross_links_file] + problems
        held.ctx = context_of(held.kb, self.settings)
        return self._relink(held, held.name)

    def reload_config(self, held: HeldKB, path: str, text: str | None) -> set[str]:
        """PATH, the KB's kb.yaml or cross-kb-links.yaml, changed: see reload_kb, reload_cross_links."""
        if path == held.cross_links_file:
            return self.reload_cross_links(held, text)
        return self.reload_kb(held, text)

    def _relink(self, held: HeldKB, old_name: str) -> set[str]:
        on_disk = sorted(p for p in held.paths if p not in self.texts and os.path.lexists(p))
        kb = KB(schema=held.kb.schema, files=on_disk, cross_links_path=held.kb.cross_links_path)
        kb.problems = {p: OUTSIDE for p in on_disk if leads_outside(held.root, p)}  # as the walk: not read
        kb.cross_links = held.kb.cross_links
        facts = {name: [f for f in self.live.facts.values() if f.kb_name == name] for name in self.kbs}
        facts[held.name] = pass_one(Workspace([kb]), self.settings, use_cache=False)[held.name]
        for path in sorted(held.paths - set(on_disk)):
            if path in self.texts:
                self.results[path] = self._lint(held, path)
                facts[held.name].append(self.results[path].facts)
        for found in facts.values():
            found.sort(key=lambda f: f.path)  # a KB's files in the order of a run: the first of an id wins
        held.paths = {f.path for f in facts[held.name]}
        self.filter.roots = {name: kb.root for name, kb in self.kbs.items()}
        # Whose graph issues the new plan may change: the KB's entries, the entries that link
        # into the KB, and those that gained or lost a linker.
        before = {path: set(linkers) for path, linkers in self.live.graph.inlinks.items()}
        affected = held.paths | self._linking_into(old_name)
        self.held.live = link_graph(self.kbs, facts, self.settings)
        after = self.live.graph.inlinks
        affected |= self._linking_into(held.name)
        affected |= {p for p in before.keys() | after.keys() if before.get(p, set()) != set(after.get(p, ()))}
        affected = {path for path in affected if path in self.live.facts}
        affected |= {kb.cross_links_file for kb in self.kbs.values()}  # their links may name the KB's entries
        return {path for path in affected if self._resign(path)}

    def _linking_into(self, kb_name: str) -> set[str]:
        """The entries (of any KB) with a link into the KB named KB_NAME."""
        return {path for paths in self.live.linkers.get(kb_name, {}).values() for path in paths}

    # -- an entry's issues

    def _lint(self, held: HeldKB, path: str) -> FileResult:
        relpath = held.kb.relpath(path)
        data = self.texts.get(path)
        if data is None:
            if leads_outside(held.root, path):  # as the walk of the KB decides: not read
                return pass_entries.parse_failure(held.ctx, path, relpath, OUTSIDE)
            return pass_entries.lint_file(held.ctx, path, relpath)
        if len(data) > held.ctx.limits.max_file_bytes:
            message = f"cannot read the file: {over_the_limit(held.ctx.limits.max_file_bytes)}"
            return pass_entries.parse_failure(held.ctx, path, relpath, message)
        return pass_entries.lint_source(held.ctx, path, relpath, data)

    def issues(self, path: str) -> list[Issue]:
        """Every issue of the file at PATH (an entry, or a kb.yaml), as the editor holds it."""
        held = self.kb_of(path)
        if held is None:
            return []
        if path == held.kb_yaml:
            return self.yaml_issues(held)
        if path == held.cross_links_file:
            return self.cross_issues(held)
        if not self.is_entry(path):
            return []
        result = self.results.get(path) if path in self.texts else None
        result = result or self._lint(held, path)
        facts = copy.copy(result.facts)  # scored below: the held facts keep pass 1's outcomes only
        found = list(result.issues)
        data = self.texts.get(path)
        if facts.parsed:
            found += self.graph_issues(facts, data)
            found += self.judgment_issues(held, facts, data)
            below = scoring.threshold_issue(facts, held.ctx.plan, held.ctx.schema)
            if below is not None:
                found.append(below)
        suppressed = {path: filters.Suppressed(facts, held.ctx.plan.for_type(facts.type))} if facts.suppress else {}
        found = filters.apply_suppressions(found, suppressed, {})
        found = [i for i in found if i.path == path and self.filter.keep(i)]
        return sorted(found, key=sort_key)

    def graph_issues(self, facts: EntryFacts, data: bytes | None) -> list[Issue]:
        """The issues of an entry that need the link graph: its links, orphan and duplicate id,
        and the checks of its type that run after the graph pass (FACTS is scored by them)."""
        held = self.kbs.get(facts.kb_name)
        if held is None or not facts.parsed:
            return []
        graph = self.live.graph
        found, links_out = pass_graph.entry_links(
            graph, held.graph_kb(), facts, strict_links=self.settings.strict_links
        )
        found = [i for i in found if i.path == facts.path]
        if not links_out and not graph.inlinks.get(facts.path):
            found.append(link_rules.orphan_entry(facts))
        same = [b for b in self.live.bearers(held.name, facts.id) if b.parsed and b.id == facts.id]
        if len(same) > 1:
            members = [facts if b.path == facts.path else b for b in same]
            found += [i for i in link_rules.duplicate_ids(held.name, members) if i.path == facts.path]
        whole = lambda: pass_entries.read_entry(held.ctx, facts, data)  # noqa: E731 - read only if asked
        context = CheckContext(schema=held.ctx.schema, inlinks=graph.inlinks, graph=graph)
        previous = held.ctx.previous_status(facts.path)
        found += pass_graph.graph_checks(facts, held.ctx.plan, context, graph, whole, previous)
        return found

    def judgment_issues(self, held: HeldKB, facts: EntryFacts, data: bytes | None) -> list[Issue]:
        """The judgment tier: the verdicts the verdict cache holds for the text as it is (no LLM is
        asked here), and what the judge last said of this very text that the cache does not keep
        (its errors, and everything when there is no cache)."""
        bindings = held.ctx.plan.judgment_bindings(facts.type)
        if not bindings or self.judge is None:
            return []
        found = cached_issues(Pending(held.ctx, facts, bindings, data), self.judge)
        judged = self.judged.get(facts.path)
        if judged is not None and judged[0] == data:
            shown = {(i.rule, i.item_id) for i in found}
            found += [i for i in judged[1] if (i.rule, i.item_id) not in shown and i.path == facts.path]
        return found

    def judge_now(self, path: str) -> str:
        """Ask the judge about the entry at PATH as the editor holds it (the one place the server
        sends anything to an LLM); what it did, in a sentence."""
        held = self.kb_of(path)
        facts = self.live.facts.get(path)
        if self.judge is None:
            return "no LLM is configured (llm in the configuration file, or KBLINT_LLM): nothing was judged"
        if held is None or facts is None or not facts.parsed:
            return "not an entry kblint can read: nothing was judged"
        bindings = held.ctx.plan.judgment_bindings(facts.type)
        if not bindings:
            return f"no judgment item applies to entries of type '{facts.type}'"
        data = self.texts.get(path)
        result = run_judgment([Pending(held.ctx, copy.copy(facts), bindings, data)], self.settings, Progress(), [])
        self.judged[path] = (data, result.issues)
        summary = result.summary
        if result.unavailable:
            return f"the LLM is not reachable ({result.unavailable}): nothing was judged"
        return (
            f"{len(bindings)} judgment item(s) of '{facts.id}': {summary.calls} request(s), "
            f"{summary.cache_hits} cached verdict(s), {len(result.issues)} issue(s)"
        )

    def yaml_issues(self, held: HeldKB) -> list[Issue]:
        """kb.yaml's issues: why it cannot be read, else the plan's config errors and rubric findings."""
        if held.yaml_error is not None:
            error = held.yaml_error
            site = Site(held.name, held.kb_yaml)
            return [RULES["config_error"].issue(site, f"kb.yaml cannot be read: {error.reason}", line=error.line)]
        found = config_errors(held.ctx.schema, held.ctx.plan)
        return sorted((i for i in found if i.path == held.kb_yaml and self.filter.keep(i)), key=sort_key)

    def cross_issues(self, held: HeldKB) -> list[Issue]:
        """cross-kb-links.yaml's issues, as a run reports them: why it cannot be read, its links
        that do not resolve (at the place each is declared) and its sources that are no entry."""
        path = held.cross_links_file
        found = [i for i in config_errors(held.ctx.schema, held.ctx.plan) if i.path == path]
        graph_kb = held.graph_kb()
        declared: dict[str, EntryFacts] = {}  # the entries that answer to a source, by path
        for link in held.kb.cross_links:
            sources = [f for f in self.live.bearers(held.name, link.source) if f.parsed and link.source in names_of(f)]
            declared.update((f.path, f) for f in sources)
            if not sources:
                found.append(link_rules.unmatched_cross_source(held.name, path, link.source, link.source_line))
        for facts in declared.values():
            links, _ = pass_graph.entry_links(self.live.graph, graph_kb, facts, strict_links=self.settings.strict_links)
            found += [i for i in links if i.path == path]
        return sorted((i for i in found if self.filter.keep(i)), key=sort_key)
