"""Plugins (SPEC §11) found through real entry-point metadata: a dist-info directory on the path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import ROOT, issues_of, run_kblint, write_kb

PLUGIN_SRC = ROOT / "plugins" / "kblint-journalism"


def make_dist(
    site: Path, name: str, entry_points: dict[str, str], modules: dict[str, str] | None = None, version: str = "0.1.0"
) -> None:
    """Write an installed distribution's metadata (and modules) into SITE, as pip would."""
    dist = site / f"{name.replace('-', '_')}-{version}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    lines = ["[kblint.plugins]"] + [f"{k} = {v}" for k, v in entry_points.items()]
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for module, source in (modules or {}).items():
        (site / f"{module}.py").write_text(source, encoding="utf-8")


def env_with(*paths: Path) -> dict:
    existing = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": os.pathsep.join([*(str(p) for p in paths), *([existing] if existing else [])])}


@pytest.fixture
def journalism_site(tmp_path: Path) -> dict:
    site = tmp_path / "site"
    make_dist(site, "kblint-journalism", {"journalism": "kblint_journalism:plugin"})
    return env_with(site, PLUGIN_SRC)


JOURNALISM_KB = """\
name: desk
kb_type: journalism
evaluation_rubric:
  - {text: "Named sources", checker: journalism.named_sources, applies_to: [note]}
"""


def claim(sources: str) -> str:
    return f"---\ntitle: A claim\ntype: claim\ntags: [x]\nsources: {sources}\n---\nBody [[d1]].\n"


def test_plugin_checkers_are_listed_with_their_package(journalism_site: dict):
    result = run_kblint("checkers", env=journalism_site)
    assert result.code == 0 and result.stderr == ""
    rows = {line.split()[0]: line for line in result.stdout.splitlines() if line.strip()}
    assert "kblint-journalism" in rows["journalism.named_sources"]
    assert "min=1" in rows["journalism.named_sources"]
    assert (
        "kblint-journalism 0.1.0 (journalism): journalism.named_sources, journalism.corroborated, type claim"
        in result.stdout
    )
    explained = run_kblint("explain", "journalism.corroborated", env=journalism_site)
    assert "runs after the graph pass" in explained.stdout and "Passes (min: 2):" in explained.stdout


def test_plugin_type_checker_and_graph_checker_run(tmp_path: Path, journalism_site: dict):
    kb = write_kb(
        tmp_path / "desk",
        JOURNALISM_KB,
        {
            "claims/strong.md": claim("[minutes, interview]"),
            "claims/weak.md": claim("[anonymous]"),
            "docs/d1.md": "---\ntitle: D1\ntype: document\ntags: [x]\nurl: https://x.example\ndocument_type: memo\n---\n"
            "[[strong]] [[weak]]\n",
            "docs/d2.md": "---\ntitle: D2\ntype: document\ntags: [x]\nurl: https://x.example\ndocument_type: memo\n---\n"
            "[[strong]]\n",
            "notes/n.md": "---\ntitle: N\ntype: note\ntags: [x]\nsources: [anonymous]\n---\n[[d1]]\n",
        },
    )
    cov = run_kblint("checkers", "--kb", str(kb), env=journalism_site)
    assert cov.code == 0
    assert "[checker] Claim is corroborated by two documents → journalism.corroborated(min=2)" in cov.stdout
    assert "[judgment] Claim says what is not known" in cov.stdout
    report = run_kblint("validate", str(kb), "--format", "json", env=journalism_site).json
    found = sorted((i["entry_id"], i["checker"]) for i in issues_of(report, "rubric_violation"))
    assert found == [
        ("n", "journalism.named_sources"),
        ("weak", "journalism.corroborated"),
        ("weak", "journalism.named_sources"),
    ]
    assert issues_of(report, "unknown_type") == []
    weak = next(
        i
        for i in issues_of(report, "rubric_violation")
        if i["checker"] == "journalism.named_sources" and i["entry_id"] == "weak"
    )
    assert weak["field"] == "sources" and weak["line"] == 5


def test_plugin_type_only_for_its_kb_type(tmp_path: Path, journalism_site: dict):
    kb = write_kb(tmp_path / "other", "name: other\n", {"claims/c.md": claim("[a]")})
    report = run_kblint("validate", str(kb), "--format", "json", env=journalism_site).json
    assert [i["rule"] for i in issues_of(report, "unknown_type")] == ["unknown_type"]


def test_without_the_plugin_its_checker_is_unknown(tmp_path: Path):
    kb = write_kb(tmp_path / "desk", JOURNALISM_KB, {})
    result = run_kblint("checkers", "--kb", str(kb))
    assert result.code == 1 and "unknown checker 'journalism.named_sources'" in result.stdout


def test_broken_clashing_and_shadowing_plugins_are_reported(tmp_path: Path):
    site = tmp_path / "site"
    make_dist(
        site,
        "kblint-broken",
        {"broken": "kblint_broken:plugin"},
        {"kblint_broken": "raise ImportError('needs a missing library')\n"},
    )
    check = "def check(entry, params, context):\n    '''Always passes.'''\n    return None\n"
    make_dist(
        site,
        "kblint-first",
        {"first": "kblint_first:plugin"},
        {"kblint_first": check + "class plugin:\n    checkers = {'shared.check': check}\n"},
    )
    make_dist(
        site,
        "kblint-second",
        {"second": "kblint_second:plugin"},
        {
            "kblint_second": check + "class plugin:\n    checkers = {'shared.check': check, 'has_tags': check,"
            " 'plain': check}\n"
        },
    )
    env = env_with(site)
    result = run_kblint("checkers", env=env)
    assert result.code == 0
    for text in (
        "plugin kblint-broken: failed to import (kblint_broken:plugin): ImportError: needs a missing library",
        "plugin kblint-second: checker 'shared.check' is also defined by plugin kblint-first",
        "plugin kblint-second: checker 'has_tags' shadows the core checker",
        "plugin kblint-second: checker 'plain' must be namespaced",
    ):
        assert text in result.stderr
        assert text in result.stdout
    rows = {line.split()[0]: line for line in result.stdout.splitlines() if line.strip()}
    assert "kblint-first" in rows["shared.check"] and "core" in rows["has_tags"]
    # a run still works, and says so on standard error
    kb = write_kb(tmp_path / "k", "name: k\n", {"a.md": "---\ntitle: A\ntype: note\ntags: [t]\n---\n[[a]]\n"})
    validate = run_kblint("validate", str(kb), env=env)
    assert validate.code == 0 and "kblint-broken" in validate.stderr


def test_the_quick_look_for_plugins_sees_what_importlib_metadata_would(tmp_path: Path, monkeypatch):
    import sys
    import zipfile

    from kblint.plugins import GROUP, _may_declare_plugins

    bare = tmp_path / "bare"
    make_dist(bare, "kblint-other", {})
    (bare / "kblint_other-0.1.0.dist-info" / "entry_points.txt").write_text("[console_scripts]\nx = y:z\n")
    monkeypatch.setattr(sys, "path", [str(bare), str(tmp_path / "missing")])
    assert not _may_declare_plugins()

    egg = tmp_path / "old.egg"
    (egg / "EGG-INFO").mkdir(parents=True)
    (egg / "EGG-INFO" / "entry_points.txt").write_text(f"[ {GROUP} ]\nold = old:plugin\n")
    monkeypatch.setattr(sys, "path", [str(bare), str(egg)])
    assert _may_declare_plugins()

    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("readme.txt", "a zip on the path: its metadata is not looked into")
    monkeypatch.setattr(sys, "path", [str(bare), str(archive)])
    assert _may_declare_plugins()

    site = tmp_path / "site"
    make_dist(site, "kblint-journalism", {"journalism": "kblint_journalism:plugin"})
    monkeypatch.setattr(sys, "path", [str(site)])
    assert _may_declare_plugins()


@pytest.mark.parametrize("name", ["journalism.named_sources", "journalism.corroborated"])
def test_plugin_docstring_examples(name: str, journalism_site: dict, tmp_path: Path):
    """A plugin checker documents itself as a core one does, and its examples hold."""
    from checker_examples import examples, run_example

    result = run_kblint("explain", name, env=journalism_site)
    assert result.code == 0, result.stderr
    found = examples(result.stdout[result.stdout.index("Passes") :])
    assert {e.passes for e in found} == {True, False}
    for i, example in enumerate(found):
        messages = run_example(tmp_path / str(i), name, example, env=journalism_site)
        assert len(messages) == (0 if example.passes else 1), f"{example}: {messages}"
