"""Quality levels of a graded rubric item (README "Graded rubrics"):

    - text: Tags
      levels:                    # lowest first; ids unique, scores from 0 to 1, not going down
        - {id: fail, score: 0}
        - {id: pass, score: 0.7, when: "tags count >= 2"}
        - {id: excellent, score: 1, when: "tags count >= 5", description: ..., indicators: [...]}
      pass_level: pass           # below it the item is violated (default: the second lowest level)
      weight: 2                  # relative to the item's neighbours (default 1)
      required: true             # without an outcome the entry's score is incomplete

An item whose levels have `when:` policies is graded deterministically: it reaches the highest
level whose policy holds (the lowest needs none). The policies may measure the entry (`tags`,
`body.words`) and its links (`inlinks`) alike. A level whose policy is a status gate that does
not apply to the entry neither holds nor fails; when the needed level's does not apply and no
level from it up holds (or no level's applies), the item has no outcome there.
Levels without `when:` are left to the judge, which is shown each level's description and
indicators and must answer exactly one level id. The violation names the level reached and the
one needed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import policy
from ..policy import Evaluator, Measures, Policy

LEVEL_KEYS = ("id", "score", "label", "description", "indicators", "when")
FEWEST_LEVELS = 2
_ROUNDING = 1e-9  # a score is a weighted mean of floats: (1 + 1 + 4 × 0.9) / 7 is 0.7999999999999999


def reaches(score: float, threshold: float) -> bool:
    """Whether SCORE is at or above THRESHOLD, as written in kb.yaml: up to float rounding."""
    return score >= threshold - _ROUNDING


@dataclass(frozen=True, slots=True)
class Level:
    id: str
    score: float
    label: str | None = None
    description: str | None = None
    indicators: tuple[str, ...] = ()
    when: str | None = None  # a policy expression; None for the lowest level
    evaluate: Evaluator | None = field(default=None, compare=False, repr=False)
    needs_graph: bool = False
    parsed: Policy | None = field(default=None, compare=False, repr=False)  # `when:` parsed

    @property
    def field_name(self) -> str | None:
        """The frontmatter key its policy measures (where a violation points)."""
        return policy.field_of(self.parsed) if self.parsed is not None else None

    @property
    def name(self) -> str:
        return self.label or self.id


class LevelsError(Exception):
    """Levels kblint cannot use; the message says which and why."""


@dataclass(frozen=True, slots=True)
class Grade:
    """The level an item reached on an entry, and the level it needed."""

    level: Level
    required: Level

    @property
    def passed(self) -> bool:
        return self.level.score >= self.required.score

    def describe(self) -> str:
        return f"'{self.level.name}' ({self.level.score:.2f}), needs '{self.required.name}'"


def read_levels(raw: Any, pass_level: Any, deterministic: bool) -> tuple[tuple[Level, ...], Level]:
    """The levels written as RAW and the level an entry needs; raises LevelsError. DETERMINISTIC:
    every level above the lowest needs a `when:` policy."""
    if not isinstance(raw, list) or len(raw) < FEWEST_LEVELS:
        raise LevelsError("levels must be a list of at least two levels, lowest first")
    levels = tuple(_level(item, n, deterministic) for n, item in enumerate(raw))
    ids = [level.id for level in levels]
    duplicate = next((i for n, i in enumerate(ids) if i in ids[:n]), None)
    if duplicate is not None:
        raise LevelsError(f"level id '{duplicate}' is used twice")
    return levels, _required(levels, pass_level)


def unordered(levels: tuple[Level, ...]) -> tuple[Level, Level] | None:
    """The first pair of adjacent levels whose scores go down, if any."""
    return next(((a, b) for a, b in zip(levels, levels[1:], strict=False) if b.score < a.score), None)


def _level(raw: Any, n: int, deterministic: bool) -> Level:
    if not isinstance(raw, dict):
        raise LevelsError(f"level {n + 1} must be a mapping such as {{id: pass, score: 0.7}}")
    unknown = [str(k) for k in raw if k not in LEVEL_KEYS]
    if unknown:
        raise LevelsError(f"level {n + 1} has unknown key '{unknown[0]}'; allowed: {', '.join(LEVEL_KEYS)}")
    level_id, score = raw.get("id"), raw.get("score")
    if level_id is None:
        raise LevelsError(f"level {n + 1} has no 'id'")
    if not isinstance(level_id, str) or not level_id.strip():
        raise LevelsError(f"level {n + 1}: 'id' must be a name such as pass, got {level_id!r}{_quote_it(level_id)}")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
        raise LevelsError(f"level '{level_id}' needs a 'score' from 0 to 1, got {score!r}")
    indicators = raw.get("indicators") or []
    if not isinstance(indicators, list) or not all(isinstance(i, str) for i in indicators):
        raise LevelsError(f"level '{level_id}': indicators must be a list of strings")
    for key in ("label", "description"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise LevelsError(f"level '{level_id}': {key} must be a string")
    level = Level(level_id, float(score), raw.get("label"), raw.get("description"), tuple(indicators))
    return _with_condition(level, raw.get("when"), n, deterministic)


def _with_condition(level: Level, when: Any, n: int, deterministic: bool) -> Level:
    if when is None:
        if deterministic and n > 0:
            raise LevelsError(f"level '{level.id}' needs a 'when:' policy (only the lowest level has none)")
        return level
    if not deterministic:
        raise LevelsError(f"level '{level.id}': 'when:' is for items graded by policies, not by the judge")
    if n == 0:
        raise LevelsError(f"level '{level.id}' is the lowest: it needs no 'when:'")
    if not isinstance(when, str) or not when.strip():
        raise LevelsError(f"level '{level.id}': 'when:' must be a policy expression")
    try:
        parsed = policy.parse(when.strip())
    except policy.PolicyError as exc:
        raise LevelsError(f"level '{level.id}': policy does not parse: {exc.render()}") from None
    return Level(
        level.id,
        level.score,
        level.label,
        level.description,
        level.indicators,
        when.strip(),
        policy.evaluator(parsed),
        policy.needs_graph(parsed),
        parsed,
    )


def _required(levels: tuple[Level, ...], pass_level: Any) -> Level:
    if pass_level is None:
        return levels[1]
    found = next((level for level in levels if level.id == pass_level), None)
    if found is None:
        ids = ", ".join(lv.id for lv in levels)
        raise LevelsError(f"pass_level {pass_level!r} is none of the levels ({ids}){_quote_it(pass_level)}")
    return found


def _quote_it(value: Any) -> str:
    """A hint for a name YAML read as something else than text (`no`, `1`)."""
    if isinstance(value, bool):
        return ": YAML reads yes, no, on, off, true and false unquoted as booleans; quote the name"
    return f": YAML reads it as a number; quote the name ('{value}')" if isinstance(value, (int, float)) else ""


def grade(
    levels: tuple[Level, ...], needed: Level, measures: Measures, previous: object, has_base: bool
) -> tuple[Level, str] | None:
    """The highest level whose condition holds on an entry, and why NEEDED (the level an entry
    needs) does not hold when it does not (its policy's message; else empty). A level whose
    condition is a status gate that does not apply to the entry neither holds nor fails. None when
    no level's condition applies, or when NEEDED's does not and no level from it up holds: the
    item has no outcome on the entry, as a plain gate then has none."""
    said = {level.id: level.evaluate(measures, previous, has_base) for level in levels if level.evaluate is not None}
    if all(message is None for message in said.values()):
        return None
    at = next((n for n in range(len(levels) - 1, 0, -1) if said.get(levels[n].id) == ""), 0)
    if needed.id in said and said[needed.id] is None and at < levels.index(needed):
        return None
    return levels[at], said.get(needed.id) or ""
