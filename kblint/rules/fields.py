"""Field value checks: does a value fit its declared field type or a `validation.rules` item?

Each function returns None when the value fits, else a `Misfit` naming the rule
(`invalid_field` or `invalid_date`) and a message.
"""

from __future__ import annotations

import datetime as _dt
import re
from functools import lru_cache
from urllib.parse import urlparse

from ..kbschema import FieldRule, FieldSchema
from ..plainclass import dataclass

_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(slots=True)
class Misfit:
    """Why a field's value does not fit its declared type."""

    rule: str  # "invalid_field" | "invalid_date"
    message: str
    lenient: bool = False  # allow_other: reported as a warning whatever validation.enforce says


def show(value) -> str:
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def is_real_date(value) -> bool:
    if isinstance(value, _dt.date):  # datetime is a date too
        return True
    if isinstance(value, str) and _DATE_RE.match(value.strip()):
        try:
            _dt.date.fromisoformat(value.strip())
            return True
        except ValueError:
            return False
    return False


def is_datetime(value) -> bool:
    if isinstance(value, _dt.date):
        return True
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        try:
            _dt.datetime.fromisoformat(text)
            return True
        except ValueError:
            return False
    return False


def is_url(value) -> bool:
    if not isinstance(value, str):
        return False
    try:
        parsed = urlparse(value.strip())
    except ValueError:
        return False
    return parsed.scheme in ("http", "https") and bool(parsed.netloc) and " " not in value.strip()


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _in_values(value, values: list) -> bool:
    if value in values:
        return True
    text = str(value)
    return any(text == str(v) for v in values)


def _range_misfit(name: str, value, low, high) -> Misfit | None:
    if not _is_number(value):
        return Misfit("invalid_field", f"Field '{name}' must be a number, got {show(value)}")
    if low is not None and value < low:
        return Misfit("invalid_field", f"Field '{name}' is {value}, below the minimum {low}")
    if high is not None and value > high:
        return Misfit("invalid_field", f"Field '{name}' is {value}, above the maximum {high}")
    return None


def check_field(spec: FieldSchema, value) -> Misfit | None:
    """Check a present, non-empty VALUE against its field declaration."""
    kind = spec.type
    name = spec.name
    if kind is None:
        return None
    if kind == "string":
        if isinstance(value, (list, dict)):
            return Misfit("invalid_field", f"Field '{name}' must be a single value, got a "
                                           f"{'list' if isinstance(value, list) else 'mapping'}")
        return None
    if kind in ("number", "integer"):
        if kind == "integer" and isinstance(value, float) and not value.is_integer():
            return Misfit("invalid_field", f"Field '{name}' must be a whole number, got {show(value)}")
        return _range_misfit(name, value, spec.min, spec.max)
    if kind == "boolean":
        if not isinstance(value, bool):
            return Misfit("invalid_field", f"Field '{name}' must be true or false, got {show(value)}")
        return None
    if kind == "date":
        if not is_real_date(value):
            return Misfit("invalid_date", f"Field '{name}' is not a real date (YYYY-MM-DD): {show(value)}")
        return None
    if kind == "datetime":
        if not is_datetime(value):
            return Misfit("invalid_field", f"Field '{name}' is not an ISO 8601 date-time: {show(value)}")
        return None
    if kind == "select":
        if isinstance(value, (list, dict)):
            return Misfit("invalid_field", f"Field '{name}' must be one value, got a list", lenient=spec.allow_other)
        if spec.values is not None and not _in_values(value, spec.values):
            allowed = ", ".join(str(v) for v in spec.values)
            return Misfit("invalid_field", f"Field '{name}' has value {show(value)}, not one of: {allowed}",
                          lenient=spec.allow_other)
        return None
    if kind == "multi-select":
        members = value if isinstance(value, list) else [value]
        if spec.values is not None:
            bad = [m for m in members if not _in_values(m, spec.values)]
            if bad:
                allowed = ", ".join(str(v) for v in spec.values)
                return Misfit("invalid_field", f"Field '{name}' has {', '.join(show(b) for b in bad)}, not among: "
                                               f"{allowed}", lenient=spec.allow_other)
        return None
    if kind == "list":
        if not isinstance(value, list):
            return Misfit("invalid_field", f"Field '{name}' must be a list, got {show(value)}")
        return None
    if kind == "tags":
        if isinstance(value, str):
            return None
        if not isinstance(value, list) or any(isinstance(v, (list, dict)) for v in value):
            return Misfit("invalid_field", f"Field '{name}' must be a list of tags, got {show(value)}")
        return None
    if kind == "url":
        if not is_url(value):
            return Misfit("invalid_field", f"Field '{name}' must be an absolute http(s) URL, got {show(value)}")
        return None
    if kind == "object-ref":
        members = value if isinstance(value, list) else [value]
        if any(isinstance(m, (list, dict)) for m in members):
            return Misfit("invalid_field", f"Field '{name}' must name an entry id, got {show(value)}")
        return None
    return None


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern:
    return re.compile(pattern)


def check_rule(rule: FieldRule, value) -> list[Misfit]:
    """Check a present, non-empty VALUE against one `validation.rules` item."""
    name = rule.field
    found: list[Misfit] = []
    if rule.range is not None:
        misfit = _range_misfit(name, value, rule.range[0], rule.range[1])
        if misfit:
            found.append(misfit)
    if rule.enum is not None and not _in_values(value, rule.enum):
        found.append(Misfit("invalid_field", f"Field '{name}' has value {show(value)}, not one of: "
                                             f"{', '.join(str(v) for v in rule.enum)}"))
    if rule.pattern is not None:
        if not isinstance(value, (str, int, float)) or isinstance(value, bool) or not _compiled(rule.pattern).search(str(value)):
            found.append(Misfit("invalid_field", f"Field '{name}' value {show(value)} does not match pattern "
                                                 f"{rule.pattern!r}"))
    if rule.format is not None:
        fmt = rule.format.upper()
        if fmt in ("ISO8601", "DATE"):
            ok = is_real_date(value) if fmt == "DATE" else (is_real_date(value) or is_datetime(value))
            if not ok:
                found.append(Misfit("invalid_date", f"Field '{name}' is not a real ISO 8601 date: {show(value)}"))
        elif fmt == "DATETIME" and not is_datetime(value):
            found.append(Misfit("invalid_field", f"Field '{name}' is not an ISO 8601 date-time: {show(value)}"))
        elif fmt == "URL" and not is_url(value):
            found.append(Misfit("invalid_field", f"Field '{name}' must be an absolute http(s) URL, got {show(value)}"))
    return found
