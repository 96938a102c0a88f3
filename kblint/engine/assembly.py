"""Putting a run's report together, KB by KB, once the graph is built: the reported entries and
their pass-1 issues, the checks that need the graph, the entries waiting for the judge, the
config errors, and at the end the scores."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..checkers.base import CheckContext
from ..model.facts import EntryFacts
from ..model.graph import LinkGraph
from ..model.issue import Issue, KBReport
from ..model.kbschema import KBSchema
from ..model.plan import Plan
from ..paths import decodable, display_path
from ..rules.config import config_errors
from . import feedback, scoring
from .filters import Suppressed, in_shard
from .pass_entries import FileResult, KBRun, read_entry
from .pass_graph import graph_checks
from .pass_judgment import Pending


@dataclass(slots=True)
class Assembly:
    """What the reported KBs of a run add up to, before suppressions and filters."""

    shard: tuple[int, int] | None
    judging: bool = True  # an LLM will judge: the entries with judgment items wait for it in PENDING
    reports: list[KBReport] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    spilled: set[int] = field(default_factory=set)  # spill slots of the reported entries' pass-1 issues
    suppressed: dict[str, Suppressed] = field(default_factory=dict)
    elsewhere: list[Issue] = field(default_factory=list)  # issues another shard reports (Suppressed)
    rechecked: set[str] = field(default_factory=set)  # unreported entries whose graph checks are reported
    pending: list[Pending] = field(default_factory=list)  # entries with judgment items, when judging
    judgment_checks: int = 0  # judgment items that apply, over the reported entries
    judgment_items: int = 0

    def _counts(self, r: KBRun, facts: EntryFacts) -> bool:
        """Whether an entry's own issues are this run's to report (--changed-since, --shard)."""
        return facts.reported and (self.shard is None or in_shard(r.kb.name, facts.relpath, self.shard))

    def add_kb(self, r: KBRun, graph: LinkGraph) -> None:
        plan = r.ctx.plan
        report = KBReport(name=r.kb.name, root=r.kb.root, coverage=plan.coverage())
        self.reports.append(report)
        self.judgment_items += report.coverage.judgment
        context = CheckContext(schema=r.ctx.schema, inlinks=graph.inlinks, graph=graph)
        candidates = {c.path: c.data for c in r.kb.candidates}
        for result in r.results:
            facts = result.facts
            if self._counts(r, facts):
                self._add_entry(r, result, report, context, graph, candidates.get(facts.path))
                continue
            if facts.suppress and facts.parsed:  # issues of others' may name it (see Suppressed)
                self.suppressed[facts.path] = Suppressed(facts, plan.for_type(facts.type), counted=False)
            if facts.path in self.rechecked and (self.shard is None or in_shard(r.kb.name, facts.relpath, self.shard)):
                self.issues.extend(self._graph_checks(r, facts, context, graph, candidates.get(facts.path)))
        if self.shard is None or self.shard[0] == 1:
            reported = r.kb.reported
            self.issues.extend(i for i in config_errors(r.ctx.schema, plan) if reported is None or i.path in reported)

    def _add_entry(
        self,
        r: KBRun,
        result: FileResult,
        report: KBReport,
        context: CheckContext,
        graph: LinkGraph,
        data: bytes | None,
    ) -> None:
        facts = result.facts
        report.files += 1
        report.paths.append(facts.path)
        report.ids.append(decodable(facts.id) if facts.parsed else None)  # shown as its issues show it
        self.issues.extend(result.issues)
        result.issues = ()  # held once, here
        if result.spilled >= 0:
            self.spilled.add(result.spilled)
        if not facts.parsed:
            return
        report.entries += 1
        plan = r.ctx.plan
        if facts.suppress:
            self.suppressed[facts.path] = Suppressed(facts, plan.for_type(facts.type))
        self.issues.extend(self._graph_checks(r, facts, context, graph, data))
        self.judgment_checks += facts.judgment_items
        if facts.judgment_items and self.judging:
            self.pending.append(Pending(r.ctx, facts, plan.judgment_bindings(facts.type), data))

    @staticmethod
    def _graph_checks(
        r: KBRun, facts: EntryFacts, context: CheckContext, graph: LinkGraph, data: bytes | None
    ) -> list[Issue]:
        whole = lambda: read_entry(r.ctx, facts, data)  # noqa: E731 - read only if a checker needs it
        return graph_checks(facts, r.ctx.plan, context, graph, whole, r.ctx.previous_status(facts.path))

    def score(self, runs: list[KBRun]) -> None:
        """The scores (SPEC §5.4), once every tier has given its outcomes."""
        by_name = {report.name: report for report in self.reports}
        for r in runs:
            entries = [res.facts for res in r.results if res.facts.parsed and self._counts(r, res.facts)]
            report = by_name[r.kb.name]
            lacking = self._lacking_required(r, entries)
            graded = feedback.graded_items(r.ctx.plan)
            for facts in entries:
                self._check_threshold(r.ctx.plan, r.ctx.schema, facts)
                if facts.grades:
                    feedback.add_grades(report, facts, graded)
            if lacking and not report.incomplete:
                first = next(iter(lacking.values()))
                report.incomplete = (
                    f"{len(lacking)} of {len(entries)} entries have no outcome for a required item "
                    f"(e.g. {first!r} on {display_path(next(iter(lacking)))})"
                )
            report.score = None if report.incomplete else scoring.kb_score(entries)

    def _lacking_required(self, r: KBRun, entries: list[EntryFacts]) -> dict[str, str]:
        """Entry path → the text of a `required: true` item that has no outcome on it."""
        plan = r.ctx.plan
        if not plan.has_required:
            return {}
        lacking = {}
        for facts in entries:
            missing = scoring.missing_required(facts, plan.for_type(facts.type))
            if missing:
                lacking[facts.path] = missing[0].text
        return lacking

    def _check_threshold(self, plan: Plan, schema: KBSchema, facts: EntryFacts) -> None:
        issue = scoring.threshold_issue(facts, plan, schema)
        if issue is not None:
            self.issues.append(issue)
