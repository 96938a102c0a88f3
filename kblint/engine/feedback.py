"""Per-criterion feedback of graded items (README "Graded rubrics"): each entry's level and score
on every graded item (`Sources: excellent (1.00)`), and per KB how many entries reached each level."""

from __future__ import annotations

from ..model.facts import EntryFacts
from ..model.issue import Criterion, EntryGrades, KBReport, LevelCounts
from ..model.plan import Binding, Plan
from ..paths import decodable


def graded_items(plan: Plan) -> dict[str, Binding]:
    """The graded items of PLAN by id."""
    return {b.id: b for scope in plan.scopes for b in scope.items if b.graded}


def add_grades(report: KBReport, facts: EntryFacts, items: dict[str, Binding]) -> None:
    """The levels FACTS's entry reached, into REPORT: its criteria, and the KB's counts."""
    criteria = []
    for item_id, level_id, score in facts.grades:
        b = items.get(item_id)
        if b is None:
            continue
        level = next((lv for lv in b.levels if lv.id == level_id), None)
        criteria.append(Criterion(item_id, b.text, level_id, level.name if level else level_id, score))
        counts = _counts(report, b)
        counts[level_id] = counts.get(level_id, 0) + 1
    if criteria:
        report.grades.append(EntryGrades(facts.path, decodable(facts.id), criteria))


def _counts(report: KBReport, b: Binding) -> dict[str, int]:
    found = report.levels.get(b.id)
    if found is None:
        found = report.levels[b.id] = LevelCounts(b.text, {lv.id: 0 for lv in b.levels})
    return found.counts
