"""The JUnit XML report (SPEC §9): one testsuite per KB, one testcase per entry, a failure per issue
at or above `--fail-on`.

The testcases come from `KBReport.paths` (the reported files of the KB) when the report has it.
Without it, the KB's files that have issues get a testcase each and the others share one testcase,
`<kb> (all other entries)`, whose `count` property says how many files it stands for.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ..model.issue import Issue, KBReport, Report, at_or_above
from ..paths import display_path
from .text import issue_line

NO_KB = "(no kb)"
# Characters XML 1.0 cannot hold at all, even escaped.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def _failure(case: ET.Element, issue: Issue) -> None:
    failure = ET.SubElement(case, "failure", {"message": _clean(f"{issue.rule}: {issue.message}"), "type": issue.rule})
    failure.text = _clean(issue_line(issue, False))


def _is_entry_file(path: str) -> bool:
    return path.endswith(".md")


def _testcase_name(path: str) -> str:
    return _clean(display_path(path))


def _suite(name: str, kb: KBReport | None, issues: list[Issue], report: Report) -> ET.Element:
    testcase_name = _testcase_name

    by_path: dict[str, list[Issue]] = {}
    for issue in issues:
        by_path.setdefault(issue.path, []).append(issue)
    paths: list[str] | None = getattr(kb, "paths", None) if kb is not None else None

    cases: list[tuple[str, list[Issue], dict]] = []  # (name, issues, properties)
    if paths is not None:
        listed = list(dict.fromkeys(paths))
        listed_set = set(listed)
        extra = sorted(p for p in by_path if p not in listed_set)  # kb.yaml and other non-entry files
        for path in sorted(listed, key=testcase_name) + extra:
            cases.append((testcase_name(path), by_path.get(path, []), {}))
    else:
        for path in sorted(by_path, key=testcase_name):
            cases.append((testcase_name(path), by_path[path], {}))
        if kb is not None:
            with_issues = sum(1 for p in by_path if _is_entry_file(p))
            others = max(kb.files - with_issues, 0)
            cases.append((_clean(f"{name} (all other entries)"), [], {"count": str(others)}))

    suite = ET.Element("testsuite", {"name": _clean(name)})
    failures = 0
    for case_name, case_issues, props in cases:
        case = ET.SubElement(suite, "testcase", {"classname": _clean(name), "name": case_name})
        if props:
            holder = ET.SubElement(case, "properties")
            for key, value in props.items():
                ET.SubElement(holder, "property", {"name": key, "value": value})
        below = []
        for issue in case_issues:
            if at_or_above(issue.severity, report.fail_on):
                _failure(case, issue)
                failures += 1
            else:
                below.append(issue)
        if below:
            out = ET.SubElement(case, "system-out")
            out.text = _clean("\n".join(issue_line(i, False) for i in below) + "\n")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    if kb is not None:
        holder = ET.Element("properties")
        for key, value in (
            ("path", _clean(display_path(kb.root))),
            ("files", str(kb.files)),
            ("entries", str(kb.entries)),
        ):
            ET.SubElement(holder, "property", {"name": key, "value": value})
        suite.insert(0, holder)
    return suite


def as_element(report: Report) -> ET.Element:
    root = ET.Element("testsuites", {"name": "kblint"})
    names = {kb.name for kb in report.kbs}
    by_kb: dict[str | None, list[Issue]] = {}
    for issue in report.issues:
        key = issue.kb_name if issue.kb_name in names else None
        by_kb.setdefault(key, []).append(issue)
    suites = [_suite(kb.name, kb, by_kb.get(kb.name, []), report) for kb in report.kbs]
    if None in by_kb:
        suites.append(_suite(NO_KB, None, by_kb[None], report))
    problems = report.problems
    if problems:
        suite = ET.Element(
            "testsuite",
            {
                "name": "kblint",
                "tests": str(len(problems)),
                "failures": "0",
                "errors": str(len(problems)),
                "skipped": "0",
            },
        )
        for text in map(_clean, problems):
            case = ET.SubElement(suite, "testcase", {"classname": "kblint", "name": text.split(": ", 1)[0]})
            error = ET.SubElement(case, "error", {"message": text, "type": "kblint"})
            error.text = text
        suites.append(suite)
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(sum(int(s.get(key, "0")) for s in suites)))
    root.extend(suites)
    return root


def render(report: Report) -> str:
    root = as_element(report)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
