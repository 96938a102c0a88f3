"""`kblint explain`: every rule, every checker, the policy grammar; close names for a typo."""

from __future__ import annotations

import pytest
from conftest import run_kblint

from kblint.checkers.registry import registry
from kblint.measures import count_values
from kblint.rules import RULES


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_rule_is_explained(name):
    result = run_kblint("explain", name)
    assert result.code == 0
    assert result.stdout.startswith(f"{name} — rule, tier {RULES[name].tier}, default severity {RULES[name].severity}")
    assert RULES[name].summary in result.stdout


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
    result = run_kblint("explain", "brokn_link")
    assert result.code == 2 and "did you mean 'broken_link'" in result.stderr
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
