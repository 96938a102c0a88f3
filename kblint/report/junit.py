"""The JUnit XML report (SPEC §9), in the dialect of the Jenkins xUnit plugin's junit-10.xsd, which
Jenkins, GitLab and the other CI tools read.

One testsuite per KB, with one testcase per linted entry (`KBReport.paths`) and one for each other
file of the KB that has issues (its kb.yaml): classname is the KB's name, name the file's path in
the KB. A testcase with issues at or above `--fail-on` holds one failure, whose message counts
them and whose text lists them one per line (`line:col severity rule message`); its issues below
`--fail-on` are in its system-out. So `failures` never exceeds `tests`, and tests − failures is the
number of files that pass. What stopped kblint from running (an unreadable kb.yaml) is an error in
a testsuite of its own.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET

from ..model.issue import SEVERITIES, Issue, KBReport, Report, at_or_above
from ..paths import display_path, quote_name, relative_to

NO_KB = "(no kb)"
COUNTS = ("tests", "failures", "errors", "skipped")
# Characters XML 1.0 cannot hold at all, even escaped.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def _line(issue: Issue) -> str:
    """One issue in a testcase: `line:col severity rule message [checker]`."""
    extra = f" [{issue.checker}]" if issue.checker else ""
    return f"{issue.line}:{issue.column} {issue.severity} {issue.rule} {issue.message}{extra}"


def _counted(issues: list[Issue]) -> str:
    """`3 issues (1 error, 2 warnings)`."""
    counts = {s: sum(1 for i in issues if i.severity == s) for s in SEVERITIES}
    parts = [f"{n} {s}{'s' if n > 1 and s != 'info' else ''}" for s, n in counts.items() if n]
    return f"{len(issues)} issue{'s' if len(issues) > 1 else ''} ({', '.join(parts)})"


def _testcase(classname: str, name: str, path: str, issues: list[Issue], fail_on: str) -> ET.Element:
    case = ET.Element("testcase", {"classname": classname, "name": name})
    failing = [i for i in issues if at_or_above(i.severity, fail_on)]
    below = [i for i in issues if not at_or_above(i.severity, fail_on)]
    if failing:
        worst = min((i.severity for i in failing), key=SEVERITIES.index)
        message = f"{display_path(path)}: {_counted(failing)} at or above {fail_on}"
        failure = ET.SubElement(case, "failure", {"message": _clean(message), "type": worst})
        failure.text = _clean("\n".join(map(_line, failing)))
    if below:
        out = ET.SubElement(case, "system-out")
        out.text = _clean("".join(_line(i) + "\n" for i in below))
    return case


def _case_name(path: str, kb: KBReport | None) -> str:
    """A file's path in its KB, quoted as display paths are (its display path when it is not
    inside the KB's folder)."""
    if kb is not None and path.startswith(kb.root.rstrip(os.sep) + os.sep):
        return quote_name(relative_to(path, kb.root))
    return display_path(path)


def _suite(name: str, kb: KBReport | None, issues: list[Issue], fail_on: str) -> ET.Element:
    by_path: dict[str, list[Issue]] = {}
    for issue in issues:
        by_path.setdefault(issue.path, []).append(issue)
    paths = dict.fromkeys(kb.paths if kb is not None else ())
    paths.update(dict.fromkeys(by_path))  # files that are not entries: kb.yaml
    cases = sorted((_clean(_case_name(path, kb)), path) for path in paths)
    suite = ET.Element("testsuite", {"name": _clean(name)})
    if kb is not None:
        holder = ET.SubElement(suite, "properties")
        for key, value in (("path", display_path(kb.root)), ("files", str(kb.files)), ("entries", str(kb.entries))):
            ET.SubElement(holder, "property", {"name": key, "value": _clean(value)})
    classname = _clean(name)
    suite.extend(_testcase(classname, case, path, by_path.get(path, []), fail_on) for case, path in cases)
    failures = sum(1 for case in suite.iter("testcase") if case.find("failure") is not None)
    _set_counts(suite, len(cases), failures, 0)
    return suite


def _problems_suite(problems: list[str]) -> ET.Element:
    """What stopped kblint from doing its whole job, one testcase with an error each."""
    suite = ET.Element("testsuite", {"name": "kblint"})
    for text in map(_clean, problems):
        case = ET.SubElement(suite, "testcase", {"classname": "kblint", "name": text.split(": ", 1)[0]})
        error = ET.SubElement(case, "error", {"message": text, "type": "kblint"})
        error.text = text
    _set_counts(suite, len(problems), 0, len(problems))
    return suite


def _set_counts(suite: ET.Element, tests: int, failures: int, errors: int) -> None:
    for key, value in zip(COUNTS, (tests, failures, errors, 0), strict=True):
        suite.set(key, str(value))


def as_element(report: Report) -> ET.Element:
    root = ET.Element("testsuites", {"name": "kblint"})
    names = {kb.name for kb in report.kbs}
    by_kb: dict[str | None, list[Issue]] = {}
    for issue in report.issues:
        key = issue.kb_name if issue.kb_name in names else None
        by_kb.setdefault(key, []).append(issue)
    suites = [_suite(kb.name, kb, by_kb.get(kb.name, []), report.fail_on) for kb in report.kbs]
    if None in by_kb:
        suites.append(_suite(NO_KB, None, by_kb[None], report.fail_on))
    if report.problems:
        suites.append(_problems_suite(report.problems))
    # junit-10.xsd gives testsuites no `skipped`: kblint skips nothing, and each suite says 0.
    for key in COUNTS[:3]:
        root.set(key, str(sum(int(s.get(key, "0")) for s in suites)))
    root.extend(suites)
    return root


def render(report: Report) -> str:
    root = as_element(report)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
