"""The rule documentation: a page for every rule, its examples run through `kblint validate` (the one
that triggers the rule does, the one that passes does not), and docs/rules.md generated from it.

Regenerate docs/rules.md after a change with `KBLINT_UPDATE_DOCS=1 python -m pytest tests/test_rule_docs.py`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import llm_server
import pytest
from conftest import ROOT, issues_of, run_kblint, write_kb
from llm_server import FakeLLM, closed_port

from kblint.checkers.registry import registry
from kblint.explain import rules_markdown
from kblint.report import issue_url
from kblint.rules import RULES, RULES_DOC, doc_url
from kblint.rules.docs import RULE_DOCS, Example, suppression_forms


def test_every_rule_has_a_page_and_no_page_is_left_over():
    assert list(RULE_DOCS) == list(RULES)
    for name, doc in RULE_DOCS.items():
        assert doc.name == name and doc.triggers and doc.fix and "\n" not in doc.fix


def _judge_args(example: Example, tmp_path: Path, monkeypatch, server: FakeLLM) -> list[str]:
    reply = example.judge
    if reply is None:
        return []
    monkeypatch.setattr(llm_server, "decide", lambda text: (reply.verdict, reply.confidence))
    monkeypatch.setattr(server, "bad_level", reply.level)
    url = server.openai_url if reply.reachable else f"http://127.0.0.1:{closed_port()}/v1"
    return ["--llm", "openai:test-model", "--llm-base-url", url, "--cache-dir", str(tmp_path / "cache")]


def _rules_of(example: Example, tmp_path: Path, monkeypatch, server: FakeLLM) -> list[dict]:
    files = dict(example.files)
    kb = write_kb(tmp_path / "kb", files.pop("kb.yaml"), files)
    args = _judge_args(example, tmp_path, monkeypatch, server)
    result = run_kblint("validate", ".", "--format", "json", "--no-cache", *args, *example.args, cwd=kb)
    assert result.code in (0, 1), result.stderr
    return result.json["issues"]


@pytest.fixture(scope="module")
def server():
    with FakeLLM() as fake:
        yield fake


@pytest.mark.parametrize("name", list(RULE_DOCS))
def test_the_examples_of_a_rule(name, tmp_path: Path, monkeypatch, server: FakeLLM, quick_backoff: None):
    doc = RULE_DOCS[name]
    bad = _rules_of(doc.bad, tmp_path / "bad", monkeypatch, server)
    assert issues_of({"issues": bad}, name), f"the example that triggers {name} gives {bad}"
    good = _rules_of(doc.good, tmp_path / "good", monkeypatch, server)
    assert not issues_of({"issues": good}, name), f"the example that passes gives {issues_of({'issues': good}, name)}"


def test_docs_rules_md_is_generated_from_the_rule_pages():
    path = ROOT / RULES_DOC
    expected = rules_markdown()
    if os.environ.get("KBLINT_UPDATE_DOCS"):
        path.write_text(expected, encoding="utf-8")
    assert path.exists(), f"missing {RULES_DOC}; run with KBLINT_UPDATE_DOCS=1"
    assert path.read_text(encoding="utf-8") == expected, f"{RULES_DOC} is stale; run with KBLINT_UPDATE_DOCS=1"


def test_every_rule_and_built_in_checker_has_its_own_anchor_in_the_docs():
    headings = re.findall(r"^## (\S+)$", rules_markdown(), flags=re.M)
    core = [name for name in registry().names() if registry().get(name).source == "core"]
    assert headings == [*RULES, *core, "json_schema"]  # GitHub's anchor of `## name` is `#name`, what doc_url links to


def test_json_issues_link_their_documentation(tmp_path: Path):
    """Each issue's `url` is its rule's anchor, or its checker's for a built-in checker's rubric_violation."""
    files = dict(RULE_DOCS["rubric_violation"].bad.files)
    files["notes/orphan.md"] = "---\ntitle: Harbor lease\ntags: [harbor]\n---\nSigned in June.\n"
    kb = write_kb(tmp_path, files.pop("kb.yaml"), files)
    issues = run_kblint("validate", str(kb), "--format", "json", "--no-cache").json["issues"]
    assert {i["rule"] for i in issues} >= {"rubric_violation", "orphan_entry"}
    for issue in issues:
        anchor = issue["checker"] if issue["rule"] == "rubric_violation" else issue["rule"]
        assert issue["url"] == doc_url(anchor)
    assert issue_url("rubric_violation", "a_plugin_checker") == doc_url("rubric_violation")
    assert issue_url("checker_error", "has_tags") == doc_url("checker_error")


def test_the_streamed_json_issue_is_the_issue_dict():
    from kblint.model.issue import Issue, Report
    from kblint.report.json import IssueLines, issue_dict

    issue = Issue(
        "rubric_violation", "warning", "checker", "Entry 'a' has no tags", "k", "a", "/kb/a.md", checker="has_tags"
    )
    report = Report(kbs=[], issues=[issue])
    assert json.loads(IssueLines(report)(issue)) == issue_dict(issue, report)


def _suppressed(tmp_path: Path, files: dict[str, str], *args: str) -> dict[str, list[dict]]:
    files = dict(files)
    kb = write_kb(tmp_path, files.pop("kb.yaml"), files)
    report = run_kblint("validate", ".", "--format", "json", "--no-cache", *args, cwd=kb).json
    return {rule: issues_of(report, rule) for rule in ("broken_link", "unused_suppression", "invalid_suppression")}


def test_each_documented_suppression_hides_the_issue(tmp_path: Path):
    """The forms a rule page gives, applied as written to its example that triggers it."""
    doc = RULE_DOCS["broken_link"]
    forms = [re.findall(r"`([^`]*)`", form) for form in suppression_forms(doc)]
    files = dict(doc.bad.files)
    path = "notes/council.md"
    assert _suppressed(tmp_path / "bad", files)["broken_link"]
    head, body = files[path].rsplit("---\n", 1)
    link = next(line for line in body.splitlines() if "[[" in line)

    def entry(frontmatter: str = "", before: str = "", after: str = "", end: str = "") -> str:
        lines = [line for line in (before, link, after) if line]
        return head + frontmatter + "---\n" + body.replace(link, "\n".join(lines)) + end

    variants = {
        "frontmatter": ({path: entry(frontmatter=forms[0][0] + "\n")}, ()),
        "comment": ({path: entry(end=forms[0][1] + "\n")}, ()),
        "next line": ({path: entry(before=forms[1][0])}, ()),
        "range": ({path: entry(before=forms[2][0], after=forms[2][1])}, ()),
        "per file": ({"kblint.toml": forms[3][0].replace("drafts/**", "notes/**") + "\n"}, ()),
        "--ignore": ({}, tuple(forms[4][0].split())),
    }
    for name, (changed, args) in variants.items():
        found = _suppressed(tmp_path / name.replace(" ", "_"), {**files, **changed}, *args)
        assert found == {"broken_link": [], "unused_suppression": [], "invalid_suppression": []}, name
