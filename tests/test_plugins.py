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
    titles = [line.strip() for line in cov.stdout.splitlines() if line.startswith("  type ")]
    assert "type claim (from kblint-journalism):" in titles  # the plugin's type, its items
    assert "type person (built-in items):" in titles  # a core type: the KB need not declare it
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


# A hostile plugin: one package, `badplug`, whose checker `bad.check` is bound by the KB below.

BAD_KB = 'name: k\nevaluation_rubric:\n  - {text: "Bad", checker: bad.check}\n'
ENTRY = {"a.md": "---\ntitle: A\ntype: note\ntags: [t]\n---\n[[a]]\n"}
_MODULES = iter(range(1_000_000))


@pytest.fixture
def badplug(tmp_path: Path):
    """ENV with the package `badplug` installed, its module being SOURCE. kblint runs in this
    process, where a module imported once stays imported: each plugin gets a module name of its own."""
    import sys

    made: list[str] = []

    def install(source: str) -> dict:
        module = f"badplug_{next(_MODULES)}"
        made.append(module)
        site = tmp_path / f"site_{module}"
        make_dist(site, "badplug", {"bad": f"{module}:plugin"}, {module: source}, version="0.1")
        return env_with(site)

    yield install
    for module in made:
        sys.modules.pop(module, None)


def checker_plugin(body: str, attributes: str = "", declarations: str = "") -> str:
    """A plugin's module whose checker runs BODY, with ATTRIBUTES set on the checker function
    and DECLARATIONS added to the plugin object."""
    return (
        "import sys\n\n"
        f"def check(entry, params, context):\n    '''Bad.'''\n    {body}\n\n{attributes}\n\n"
        f"class plugin:\n    checkers = {{'bad.check': check}}\n    {declarations}\n"
    )


def validate_bad(tmp_path: Path, env: dict) -> tuple[int, dict]:
    kb = write_kb(tmp_path / "k", BAD_KB, ENTRY)
    result = run_kblint("validate", str(kb), "--format", "json", "--no-cache", env=env)
    assert "Traceback" not in result.stderr
    return result.code, result.json


@pytest.mark.parametrize(
    ("body", "raised"),
    [
        ("sys.exit(0)", "SystemExit: 0"),
        ("raise SystemExit('bye')", "SystemExit: bye"),
        ("raise BaseException('base')", "BaseException: base"),
    ],
)
def test_a_checker_that_exits_is_a_checker_error(tmp_path: Path, badplug, body: str, raised: str):
    """Not a silent pass (exit code 0, no report), nor a traceback: the run goes on."""
    code, report = validate_bad(tmp_path, badplug(checker_plugin(body)))
    assert code == 1
    assert [i["message"] for i in issues_of(report, "checker_error")] == [
        f"checker 'bad.check' (badplug) raised {raised}"
    ]


def test_a_checker_that_never_returns_is_stopped_at_its_time_limit(tmp_path: Path, badplug):
    """A plugin's checker that loops (or waits) for ever is a checker_error once plugin_timeout is
    up, and the run goes on."""
    kb = write_kb(tmp_path / "k", BAD_KB, ENTRY)
    (kb / "kblint.toml").write_text("[limits]\nplugin_timeout = 0.1\n", encoding="utf-8")
    env = badplug(checker_plugin("while True: pass"))
    result = run_kblint("validate", ".", "--format", "json", "--no-cache", env=env, cwd=kb)
    assert result.code == 1
    assert [i["message"] for i in issues_of(result.json, "checker_error")] == [
        "checker 'bad.check' (badplug) took longer than 0.1 s (the limit, plugin_timeout): not checked on this entry"
    ]


def test_what_a_plugin_prints_goes_to_standard_error_not_into_the_report(tmp_path: Path, badplug):
    """A debugging print in a plugin must not break `--format json` read by CI."""
    module = "print('loading badplug')\n" + checker_plugin("print('checking', entry.id); return []")
    kb = write_kb(tmp_path / "k", BAD_KB, ENTRY)
    result = run_kblint("validate", str(kb), "--format", "json", "--no-cache", env=badplug(module))
    assert result.code == 0 and result.json["summary"]["entries"] == 1  # the report reads as JSON
    assert "loading badplug" in result.stderr and "checking a" in result.stderr
    noncanonical = {"a.md": "---\ntitle: A\ntype: note\ntags: [t]\n---\n[[A]]\n"}
    kb = write_kb(tmp_path / "fixable", BAD_KB, noncanonical)
    diff = run_kblint("validate", str(kb), "--diff", "--no-cache", env=badplug(module))
    assert diff.stdout.startswith("--- ") and "checking" not in diff.stdout and "checking a" in diff.stderr
    fixed = run_kblint("validate", str(kb), "--fix", "--no-cache", "--format", "json", env=badplug(module))
    assert fixed.json["summary"]["entries"] == 1 and "checking a" in fixed.stderr


def test_an_exception_whose_message_raises_is_still_a_checker_error(tmp_path: Path, badplug):
    source = checker_plugin(
        "raise Odd()",
        declarations="",
        attributes="class Odd(Exception):\n    def __str__(self):\n        sys.exit(0)\n",
    )
    code, report = validate_bad(tmp_path, badplug(source))
    assert code == 1
    assert [i["message"] for i in issues_of(report, "checker_error")] == ["checker 'bad.check' (badplug) raised Odd"]


def test_ctrl_c_in_a_checker_still_stops_the_run(tmp_path: Path, badplug):
    kb = write_kb(tmp_path / "k", BAD_KB, ENTRY)
    result = run_kblint("validate", str(kb), "--no-cache", env=badplug(checker_plugin("raise KeyboardInterrupt")))
    assert (result.code, result.stderr.strip()) == (2, "kblint: interrupted")


def test_a_plugin_that_exits_on_import_is_reported(tmp_path: Path, badplug):
    env = badplug("import sys\nsys.exit(0)\n")
    listed = run_kblint("checkers", env=env)
    assert listed.code == 0
    assert "plugin badplug: failed to import (badplug_" in listed.stderr and "): SystemExit: 0" in listed.stderr
    kb = write_kb(tmp_path / "k", "name: k\n", ENTRY)
    validate = run_kblint("validate", str(kb), "--no-cache", env=env)
    assert validate.code == 0 and "SystemExit: 0" in validate.stderr and "1 entry:" in validate.stdout


@pytest.mark.parametrize("verbose", [False, True])
def test_an_unexpected_base_exception_is_a_one_line_internal_error(monkeypatch, verbose: bool):
    from kblint import cli

    def app() -> None:
        raise BaseException("base")

    monkeypatch.setattr(cli, "app", app)
    result = run_kblint("checkers", *(["--verbose"] if verbose else []))
    assert result.code == 2
    last = "kblint: internal error: BaseException: base (run with --verbose for details)"
    assert result.stderr.splitlines()[-1] == last
    assert ("Traceback" in result.stderr) == verbose


@pytest.mark.parametrize(
    "declarations",
    [
        "kb_types = 5",
        "types = {'claim': {}}\n    kb_types = 5",
        "types = {'claim': {}}\n    kb_types = 'journalism'",
        "types = {'claim': {}}\n    kb_types = [1]",
        "types = {'claim': {}}\n    kb_types = {'journalism': 1}",
    ],
)
def test_kb_types_of_the_wrong_type_is_a_plugin_problem(tmp_path: Path, badplug, declarations: str):
    source = checker_plugin("return None", declarations=declarations)
    env = badplug(source)
    listed = run_kblint("checkers", env=env)
    assert listed.code == 0
    assert "plugin badplug: `kb_types` must be a list of kb_type names, got " in listed.stderr
    assert "its types are not loaded" in listed.stderr and "badplug 0.1 (bad): bad.check\n" in listed.stdout
    code, report = validate_bad(tmp_path, env)
    assert code == 0 and issues_of(report, "checker_error") == []


@pytest.mark.parametrize(
    ("attributes", "declarations", "problem"),
    [
        (
            "check.params = 5",
            "",
            "checker 'bad.check': `params` must be a mapping of param name to spec, or a list of Param, got int",
        ),
        (
            "check.params = [5]",
            "",
            "checker 'bad.check': `params` must be a mapping of param name to spec, or a list of Param, got list",
        ),
        ("check.params = {'min': 5}", "", "checker 'bad.check': param 'min' must be a mapping (type, required,"),
        ("check.params = {1: 'int'}", "", "checker 'bad.check': param names must be strings, got int"),
        ("check.params = {'min': {'type': 5}}", "", "checker 'bad.check': param 'min': `type` must be a str, got int"),
        (
            "check.params = {'min': {'required': 'no'}}",
            "",
            "checker 'bad.check': param 'min': `required` must be a bool, got str",
        ),
        ("check.needs_graph = 'no'", "", "checker 'bad.check': `needs_graph` must be True or False, got str"),
        (
            "check.params = {'n': {'type': 'integer'}}",
            "",
            "checker 'bad.check': param 'n': `type` must be one of int, str, regex, str_list, got 'integer'",
        ),
        (
            "check.params = {'m': {'type': 'int', 'default': 'zz'}}",
            "",
            "checker 'bad.check': param 'm': its default must be an integer, got 'zz'",
        ),
        ("check.field = 5", "", "checker 'bad.check': `field` must be a string, got int"),
        ("check.__doc__ = 5", "", "checker 'bad.check': its docstring must be a string, got int"),
        ("", "checkers = {5.5: check}", "checker names must be strings, got float 5.5"),
        ("", "checkers = [check]", "`checkers` must be a mapping of name to checker"),
        (
            "",
            "checkers = None",
            "its entry point names type, which has neither `checkers` nor `types`: nothing to load",
        ),
        ("", "types = [5]", "`types` must be a mapping of type name to defaults"),
        ("", "types = {5: {}}", "type names must be strings, got int 5"),
        ("", "types = property(lambda self: sys.exit(0))\nplugin = plugin()", "could not be read: SystemExit: 0"),
    ],
)
def test_plugin_attributes_of_the_wrong_type_are_plugin_problems(
    tmp_path: Path, badplug, attributes: str, declarations: str, problem: str
):
    """Each one is reported, naming the package, and what it declared wrong is not used: the run goes on."""
    env = badplug(checker_plugin("return 'Fails'", attributes, declarations))
    listed = run_kblint("checkers", env=env)
    assert listed.code == 0 and f"plugin badplug: {problem}" in listed.stderr
    kb = write_kb(tmp_path / "k", "name: k\n", ENTRY)
    validate = run_kblint("validate", str(kb), "--no-cache", env=env)
    assert validate.code == 0 and problem in validate.stderr and "Traceback" not in validate.stderr


@pytest.mark.parametrize(
    ("returned", "problem"),
    [
        ('b"\\xff\\xfe"', "returned bytes"),
        ('{"message": "x", "line": 3}', "returned dict"),
        ('""', "returned an empty str"),
        ('"  \\n"', "returned an empty str"),
        ('["x", ""]', "returned an empty str"),
        ("[b'x']", "returned bytes"),
        ("5", "returned int"),
        ("False", "returned bool"),
    ],
)
def test_a_checker_returning_what_kblint_does_not_accept_is_a_checker_error(
    tmp_path: Path, badplug, returned: str, problem: str
):
    code, report = validate_bad(tmp_path, badplug(checker_plugin(f"return {returned}")))
    assert code == 1 and [i for i in issues_of(report, "rubric_violation") if i["checker"] == "bad.check"] == []
    expected = f"checker 'bad.check' (badplug) {problem}, expected None, a message, an Issue or an iterable of those"
    assert [i["message"] for i in issues_of(report, "checker_error")] == [expected]


@pytest.mark.parametrize(
    ("returned", "found"),
    [
        ("None", []),
        ("[]", []),
        ("'Fails'", ["Fails"]),
        ("['One', 'Two']", ["One", "Two"]),
        ("(m for m in ('One', 'Two'))", ["One", "Two"]),
        ("['One', None, ['Two']]", ["One", "Two"]),  # as the interface has always read them
        ("type('Text', (str,), {})('Fails')", ["Fails"]),
    ],
)
def test_what_a_checker_may_return(tmp_path: Path, badplug, returned: str, found: list[str]):
    code, report = validate_bad(tmp_path, badplug(checker_plugin(f"return {returned}")))
    assert issues_of(report, "checker_error") == []
    assert sorted(i["message"] for i in issues_of(report, "rubric_violation") if i["checker"] == "bad.check") == found
    assert code == 0


def test_a_broken_rubric_item_of_a_plugins_type_names_the_plugin(tmp_path: Path, badplug):
    env = badplug("class plugin:\n    types = {'weirdtype': {'evaluation_rubric': [5]}}\n")
    kb = write_kb(tmp_path / "k", "name: k\n", {"a.md": "---\ntitle: A\ntype: weirdtype\n---\nB.\n"})
    report = run_kblint("validate", str(kb), "--format", "json", "--no-cache", env=env).json
    assert [i["message"] for i in issues_of(report, "config_error")] == [
        "rubric item '5' (from the plugin badplug) is not enforced: a rubric item must be a string or a mapping, got a number"
    ]


def test_a_plugin_types_rubric_of_the_wrong_shape_names_its_type_and_key(tmp_path: Path, badplug):
    env = badplug("class plugin:\n    types = {'claim': {'rubric': 'x'}}\n")
    kb = write_kb(
        tmp_path / "k", "name: k\ntypes:\n  note:\n    evaluation_rubric: y\n", {"a.md": "---\ntitle: A\n---\nB.\n"}
    )
    result = run_kblint("validate", str(kb), "--format", "json", "--no-cache", env=env)
    assert sorted(i["message"] for i in issues_of(result.json, "config_error")) == [
        "plugin badplug: type 'claim': rubric must be a list of items",
        "type 'note': evaluation_rubric must be a list of items",
    ]
