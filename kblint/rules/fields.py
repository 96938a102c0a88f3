"""Field value checks: does a value fit its declared field type or a `validation.rules` item?

Each function returns None when the value fits, else a `Misfit` naming the rule
(`invalid_field` or `invalid_date`) and a message.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from .. import userpattern
from ..model.kbschema import FieldRule, FieldSchema

_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(slots=True)
class Misfit:
    """Why a field's value does not fit its declared type."""

    rule: str  # "invalid_field" | "invalid_date" | "checker_error" (a pattern over its time limit)
    message: str
    lenient: bool = False  # allow_other: reported as a warning whatever validation.enforce says


_SHOWN_CHARS = 60  # a value quoted in a message is cut to this length


def show(value: Any) -> str:
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    text = repr(_dates_as_text(value))
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."


def _dates_as_text(value: Any) -> Any:
    """VALUE with the dates inside it as their ISO text, which reads better than their repr."""
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if isinstance(value, list):
        return [_dates_as_text(v) for v in value]
    if isinstance(value, dict):
        return {k: _dates_as_text(v) for k, v in value.items()}
    return value


def is_real_date(value: Any) -> bool:
    if isinstance(value, _dt.date):  # datetime is a date too
        return True
    if isinstance(value, str) and _DATE_RE.match(value.strip()):
        try:
            _dt.date.fromisoformat(value.strip())
            return True
        except ValueError:
            return False
    return False


def is_datetime(value: Any) -> bool:
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


def is_url(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        parsed = urlparse(value.strip())
    except ValueError:
        return False
    return parsed.scheme in ("http", "https") and bool(parsed.netloc) and " " not in value.strip()


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _in_values(value: Any, values: list[Any]) -> bool:
    if value in values:
        return True
    text = str(value)
    return any(text == str(v) for v in values)


def _range_misfit(name: str, value: Any, low: float | None, high: float | None) -> Misfit | None:
    if not _is_number(value):
        return Misfit("invalid_field", f"Field '{name}' must be a number, got {show(value)}")
    if isinstance(value, float) and math.isnan(value) and (low is not None or high is not None):  # no < holds
        return Misfit("invalid_field", f"Field '{name}' is nan, not a number within its range")
    if low is not None and value < low:
        return Misfit("invalid_field", f"Field '{name}' is {value}, below the minimum {low}")
    if high is not None and value > high:
        return Misfit("invalid_field", f"Field '{name}' is {value}, above the maximum {high}")
    return None


def _string(spec: FieldSchema, value: Any) -> Misfit | None:
    if isinstance(value, (list, dict)):
        what = "list" if isinstance(value, list) else "mapping"
        return Misfit("invalid_field", f"Field '{spec.name}' must be a single value, got a {what}")
    return None


def _number_field(spec: FieldSchema, value: Any) -> Misfit | None:
    if spec.type == "integer" and isinstance(value, float) and not value.is_integer():
        return Misfit("invalid_field", f"Field '{spec.name}' must be a whole number, got {show(value)}")
    return _range_misfit(spec.name, value, spec.min, spec.max)


def _boolean(spec: FieldSchema, value: Any) -> Misfit | None:
    if not isinstance(value, bool):
        return Misfit("invalid_field", f"Field '{spec.name}' must be true or false, got {show(value)}")
    return None


def _date(spec: FieldSchema, value: Any) -> Misfit | None:
    if not is_real_date(value):
        return Misfit("invalid_date", f"Field '{spec.name}' is not a real date (YYYY-MM-DD): {show(value)}")
    return None


def _datetime(spec: FieldSchema, value: Any) -> Misfit | None:
    if not is_datetime(value):
        return Misfit("invalid_field", f"Field '{spec.name}' is not an ISO 8601 date-time: {show(value)}")
    return None


def _select(spec: FieldSchema, value: Any) -> Misfit | None:
    if isinstance(value, (list, dict)):
        return Misfit("invalid_field", f"Field '{spec.name}' must be one value, got a list", lenient=spec.allow_other)
    if spec.values is not None and not _in_values(value, spec.values):
        allowed = ", ".join(str(v) for v in spec.values)
        return Misfit(
            "invalid_field",
            f"Field '{spec.name}' has value {show(value)}, not one of: {allowed}",
            lenient=spec.allow_other,
        )
    return None


def _multi_select(spec: FieldSchema, value: Any) -> Misfit | None:
    members = value if isinstance(value, list) else [value]
    if spec.values is None:
        return None
    bad = [m for m in members if not _in_values(m, spec.values)]
    if not bad:
        return None
    allowed = ", ".join(str(v) for v in spec.values)
    return Misfit(
        "invalid_field",
        f"Field '{spec.name}' has {', '.join(show(b) for b in bad)}, not among: {allowed}",
        lenient=spec.allow_other,
    )


def _list(spec: FieldSchema, value: Any) -> Misfit | None:
    if not isinstance(value, list):
        return Misfit("invalid_field", f"Field '{spec.name}' must be a list, got {show(value)}")
    return None


def _tags(spec: FieldSchema, value: Any) -> Misfit | None:
    if isinstance(value, str):
        return None
    if not isinstance(value, list) or any(isinstance(v, (list, dict)) for v in value):
        return Misfit("invalid_field", f"Field '{spec.name}' must be a list of tags, got {show(value)}")
    return None


def _url(spec: FieldSchema, value: Any) -> Misfit | None:
    if not is_url(value):
        return Misfit("invalid_field", f"Field '{spec.name}' must be an absolute http(s) URL, got {show(value)}")
    return None


def _object_ref(spec: FieldSchema, value: Any) -> Misfit | None:
    members = value if isinstance(value, list) else [value]
    if any(isinstance(m, (list, dict)) for m in members):
        return Misfit("invalid_field", f"Field '{spec.name}' must name an entry id, got {show(value)}")
    return None


_FIELD_CHECKS: dict[str, Callable[[FieldSchema, Any], Misfit | None]] = {
    "string": _string,
    "number": _number_field,
    "integer": _number_field,
    "boolean": _boolean,
    "date": _date,
    "datetime": _datetime,
    "select": _select,
    "multi-select": _multi_select,
    "list": _list,
    "tags": _tags,
    "url": _url,
    "object-ref": _object_ref,
}


def check_field(spec: FieldSchema, value: Any) -> Misfit | None:
    """Check a present, non-empty VALUE against its field declaration."""
    check = _FIELD_CHECKS.get(spec.type or "")
    return check(spec, value) if check is not None else None


def _format_misfit(name: str, fmt: str, value: Any) -> Misfit | None:
    fmt = fmt.upper()
    if fmt in ("ISO8601", "DATE"):
        ok = is_real_date(value) if fmt == "DATE" else (is_real_date(value) or is_datetime(value))
        return None if ok else Misfit("invalid_date", f"Field '{name}' is not a real ISO 8601 date: {show(value)}")
    if fmt == "DATETIME" and not is_datetime(value):
        return Misfit("invalid_field", f"Field '{name}' is not an ISO 8601 date-time: {show(value)}")
    if fmt == "URL" and not is_url(value):
        return Misfit("invalid_field", f"Field '{name}' must be an absolute http(s) URL, got {show(value)}")
    return None


def _matches(pattern: str, value: Any) -> bool:
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        return False
    return userpattern.search(pattern, str(value))


def _pattern_misfit(name: str, pattern: str, value: Any) -> Misfit | None:
    try:
        if _matches(pattern, value):
            return None
    except userpattern.PatternTooSlow as exc:
        return Misfit("checker_error", f"Field '{name}': {exc}")
    return Misfit("invalid_field", f"Field '{name}' value {show(value)} does not match pattern {pattern!r}")


def check_rule(rule: FieldRule, value: Any) -> list[Misfit]:
    """Check a present, non-empty VALUE against one `validation.rules` item."""
    name = rule.field
    found: list[Misfit | None] = []
    if rule.range is not None:
        found.append(_range_misfit(name, value, rule.range[0], rule.range[1]))
    if rule.enum is not None and not _in_values(value, rule.enum):
        allowed = ", ".join(str(v) for v in rule.enum)
        found.append(Misfit("invalid_field", f"Field '{name}' has value {show(value)}, not one of: {allowed}"))
    if rule.pattern is not None:
        found.append(_pattern_misfit(name, rule.pattern, value))
    if rule.format is not None:
        found.append(_format_misfit(name, rule.format, value))
    return [misfit for misfit in found if misfit is not None]
