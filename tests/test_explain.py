"""`kblint explain`: every rule, every checker, the policy grammar; close names for a typo."""

from __future__ import annotations

import pytest
from conftest import run_kblint

from kblint.checkers.registry import registry
from kblint.measures import count_values
from kblint.rules import RULES, TIERS, doc_url
from kblint.rules.docs import RULE_DOCS, TIER_DOCS, tier_rules


def _words(text: str) -> str:
    return " ".join(text.split())


SECTIONS = (
    "What triggers it",
    "How to fix it",
    "How to suppress it",
    "Example that triggers it",
    "Example that passes",
    "Documentation: ",
)


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_rule_is_explained(name):
    result = run_kblint("explain", name)
    assert result.code == 0
    assert result.stdout.startswith(f"{name} — rule, tier {RULES[name].tier}, default severity {RULES[name].severity}")
    assert _words(RULES[name].summary) in _words(result.stdout)
    lines = result.stdout.splitlines()
    at = [next(i for i, line in enumerate(lines) if line.startswith(section)) for section in SECTIONS]
    assert at == sorted(at)
    doc = RULE_DOCS[name]
    assert _words(doc.triggers) in _words(result.stdout) and _words(doc.fix) in _words(result.stdout)
    assert lines[-1] == f"Documentation: {doc_url(name)}"
    for path in doc.bad.files:
        assert f"==> {path} <==" in result.stdout


def test_a_rule_page_says_how_to_suppress_it_with_its_name():
    page = _words(run_kblint("explain", "orphan_entry").stdout)
    for form in (
        "kblint: {disable: [orphan_entry]}",
        "<!-- kblint-disable orphan_entry -->",
        "<!-- kblint-disable-next-line orphan_entry -->",
        "<!-- kblint-enable orphan_entry -->",
        'per_file_ignores = {"drafts/**" = ["orphan_entry"]}',
        "--ignore orphan_entry",
    ):
        assert form in page
    config = _words(run_kblint("explain", "config_error").stdout)
    assert "kblint-disable" not in config and 'per_file_ignores = {"kb.yaml" = ["config_error"]}' in config


def test_explain_without_a_name_lists_every_rule_checker_tier_and_topic():
    result = run_kblint("explain")
    assert result.code == 0
    lines = result.stdout.splitlines()
    for name, rule in RULES.items():
        row = next(line for line in lines if line.split()[:1] == [name])
        assert row.split()[1:3] == [rule.tier, rule.severity] and row.endswith(rule.summary)
    for name in registry().names():
        assert any(line.split()[:1] == [name] and line.endswith(registry().get(name).description) for line in lines)
    for tier in TIERS:
        assert f"{tier}:" in lines
    assert any(line.split()[:1] == ["policy"] for line in lines[lines.index("Topics:") :])
    rows = [line for line in lines if line.split()[:1] and line.split()[0] in RULES]
    assert len({row.index(RULES[row.split()[0]].summary) for row in rows}) == 1  # one table across the tiers


@pytest.mark.parametrize("tier", TIERS)
def test_every_tier_is_explained_with_its_rules(tier):
    result = run_kblint("explain", tier)
    assert result.code == 0
    assert _words(TIER_DOCS[tier]) in _words(result.stdout)
    listed = [line.split()[0] for line in result.stdout.split("Rules:\n", 1)[1].splitlines() if line.strip()]
    assert listed == tier_rules(tier) and listed
    if tier == "policy":  # also the topic: the grammar
        assert result.stdout.startswith("policy — deterministic rubric items") and "Grammar" in result.stdout
    else:
        assert result.stdout.startswith(f"{tier} — tier")


def test_a_checker_page_links_its_documentation():
    assert run_kblint("explain", "has_tags").stdout.endswith(f"Documentation: {doc_url('has_tags')}\n")


def test_every_checker_is_explained_with_its_params_and_docstring():
    for name in registry().names():
        checker = registry().get(name)
        if checker.source != "core":
            continue
        out = run_kblint("explain", name).stdout
        assert out.startswith(f"{name} — checker (core)")
        assert checker.doc in out
        for param in checker.params:
            assert f"  {param.name} ({param.kind}," in out


def test_unknown_name_suggests_close_ones():
    for name in ("brokn_link", "BROKEN_LINK"):
        result = run_kblint("explain", name)
        assert result.code == 2 and "did you mean 'broken_link'" in result.stderr
    long = run_kblint("explain", "x" * 100_000 + "\x1b[31m")  # a name may be anything: its start is shown, escaped
    assert long.code == 2 and long.stderr.strip() == "kblint: no rule, checker, tier or topic named '" + "x" * 80 + "…'"
    assert run_kblint("explain", "policy").stdout.startswith("policy — deterministic rubric items")


def test_metadata_counts_for_policies():
    assert count_values(["a", "", None, "b"]) == 2
    assert count_values("scalar") == 1
    assert count_values(None) == 0 and count_values([]) == 0 and count_values("  ") == 0
    assert count_values(["https://a.example/x", "ftp://b", "not a url"], url_only=True) == 1


def test_migrate_command(tmp_path):
    import shutil

    from conftest import FIXTURES

    kb = tmp_path / "kb"
    shutil.copytree(FIXTURES / "migrate", kb)
    before = (kb / "kb.yaml").read_text(encoding="utf-8")
    dry = run_kblint("migrate", str(kb))
    assert dry.code == 0 and dry.stdout.startswith("---") and "bound 17, left 9 as judgment" in dry.stdout
    assert (kb / "kb.yaml").read_text(encoding="utf-8") == before  # nothing written without --write
    wrote = run_kblint("migrate", str(kb), "--write")
    assert wrote.code == 0 and "wrote" in wrote.stdout
    again = run_kblint("migrate", str(kb), "--write")
    assert again.code == 0 and "bound 0" in again.stdout and "wrote" not in again.stdout
    cov = run_kblint("checkers", "--kb", str(kb))
    assert cov.code == 0 and "[broken]" not in cov.stdout
    assert run_kblint("migrate", str(tmp_path / "nowhere")).code == 2
