"""The GitHub Action (action.yml) and the README's workflows: valid against GitHub's schemas (those of
SchemaStore, in tests/schemas/), inputs that reach the scripts only through the environment, and the
action's own scripts run with bash as a runner runs them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT, write_kb

jsonschema = pytest.importorskip("jsonschema")

SCHEMAS = Path(__file__).parent / "schemas"
VENV = "kblint-venv"  # the action's virtual environment, under $RUNNER_TEMP
INPUT = re.compile(r"\$\{\{\s*inputs\.([A-Za-z_][\w-]*)\s*\}\}")


class _Loader(yaml.SafeLoader):
    """YAML as GitHub reads it: `on`, `yes` and `no` are strings, only true and false are booleans."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regex) for tag, regex in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)


ACTION = load_yaml((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]


def validator(name: str) -> Any:
    schema = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def schema_errors(document: Any, name: str) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator(name).iter_errors(document)]


def ci_yaml_blocks() -> list[Any]:
    """The YAML blocks of the README's CI section."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("\n## In CI\n") :]
    section = section[: section.index("\n## ", 1)]
    return [load_yaml(block) for block in re.findall(r"^```ya?ml\n(.*?)^```", section, re.MULTILINE | re.DOTALL)]


def readme_workflows() -> list[dict]:
    return [b for b in ci_yaml_blocks() if isinstance(b, dict) and "jobs" in b]


# --- the schemas ---------------------------------------------------------------------------------


def test_action_validates_against_the_action_schema():
    assert schema_errors(ACTION, "github-action.json") == []


def test_the_schemas_catch_mistakes():
    broken = {**ACTION, "runs": {"using": "composite", "steps": [{"run": "true"}]}}  # a run step needs a shell
    assert schema_errors(broken, "github-action.json")
    assert schema_errors({"on": "push", "jobs": {"j": {"runs-on": "x", "step": []}}}, "github-workflow.json")


def test_readme_workflows_validate_against_the_workflow_schema():
    blocks, workflows = ci_yaml_blocks(), readme_workflows()
    assert len(workflows) >= 2
    for workflow in workflows:
        assert schema_errors(workflow, "github-workflow.json") == [], workflow.get("name")
    # the section's other YAML block is the pre-commit configuration, naming the hook this repository defines
    (pre_commit,) = [b for b in blocks if b not in workflows]
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert pre_commit["repos"][0]["repo"] == "https://github.com/kblint/kblint"
    assert [h["id"] for h in pre_commit["repos"][0]["hooks"]] == [h["id"] for h in hooks]


def test_readme_workflows_install_kblint_as_it_can_be_installed():
    uses, runs = [], []
    for workflow in readme_workflows():
        for job in workflow["jobs"].values():
            uses += [step["uses"] for step in job["steps"] if "uses" in step]
            runs += [step["run"] for step in job["steps"] if "run" in step]
    assert "kblint/kblint@main" in uses
    installs = [run for run in runs if "pip install" in run]
    assert installs and all("git+https://github.com/kblint/kblint" in run for run in installs)
    assert not any("${{" in run for run in runs)


# --- what reaches the scripts --------------------------------------------------------------------


def test_no_expression_is_interpolated_into_a_script():
    for step in STEPS:
        assert step["shell"] == "bash"
        assert "${{" not in step["run"], step["name"]
        for value in step.get("env", {}).values():
            assert re.fullmatch(r"\$\{\{ (inputs|github)\.[\w-]+ \}\}", value), value


def test_every_input_reaches_a_script_and_the_callers_python_is_left_alone():
    used = {m for step in STEPS for value in step.get("env", {}).values() for m in INPUT.findall(value)}
    assert used == set(ACTION["inputs"])
    assert not any("uses" in step for step in STEPS)  # no setup-python: kblint gets a venv of its own
    assert all(f'"$RUNNER_TEMP/{VENV}"' in step["run"] for step in STEPS)


# --- running the scripts -------------------------------------------------------------------------


def step(step_id: str) -> dict:
    return next(s for s in STEPS if s["id"] == step_id)


def run_step(step_id: str, runner: dict[str, str], cwd: Path, **inputs: str) -> subprocess.CompletedProcess[str]:
    """The step's script run as a runner runs a `shell: bash` step: from a file, with the step's
    env (its expressions given INPUTS, or the inputs' defaults) over the runner's variables."""
    s = step(step_id)
    values = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()} | inputs
    kept = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if k in kept} | runner
    env |= {name: INPUT.sub(lambda m: values[m.group(1)], value) for name, value in s.get("env", {}).items()}
    script = Path(runner["RUNNER_TEMP"]) / f"{step_id}.sh"
    script.write_text(s["run"], encoding="utf-8")
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def runner_variables(root: Path) -> dict[str, str]:
    """The variables a runner gives a step, in directories under ROOT whose names have spaces."""
    temp = root / "runner temp"
    temp.mkdir()
    summary = root / "step summary" / "summary.md"
    summary.parent.mkdir()
    summary.write_text("an earlier step's summary\n", encoding="utf-8")
    return {
        "RUNNER_TEMP": str(temp),
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_WORKSPACE": str(root / "work space"),
        "GITHUB_ACTIONS": "true",
        "CI": "true",
    }


@pytest.fixture
def runner(tmp_path: Path) -> dict[str, str]:
    return runner_variables(tmp_path)


@pytest.fixture(scope="session")
def kblint_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """kblint's virtual environment as the install step makes it. With KBLINT_ACTION_INSTALL=1 (it
    needs the network) the step makes it, once; otherwise the venv the tests run in stands in."""
    if os.environ.get("KBLINT_ACTION_INSTALL") == "1":
        variables = runner_variables(tmp_path_factory.mktemp("install"))
        result = run_step("install", variables, Path(variables["RUNNER_TEMP"]), python=sys.executable)
        assert result.returncode == 0, result.stdout + result.stderr
        return Path(variables["RUNNER_TEMP"]) / VENV
    if not (Path(sys.prefix) / "pyvenv.cfg").is_file():
        pytest.skip("the tests do not run in a virtual environment")
    return Path(sys.prefix)


@pytest.fixture
def installed(runner: dict[str, str], kblint_venv: Path) -> dict[str, str]:
    """A runner whose $RUNNER_TEMP has kblint's virtual environment, where the install step puts it."""
    (Path(runner["RUNNER_TEMP"]) / VENV).symlink_to(kblint_venv, target_is_directory=True)
    return runner


KB_YAML = "name: {name}\nevaluation_rubric:\n  - {{text: Has status, checker: status_present}}\n"


def entry(title: str, link: str, status: str | None = None) -> str:
    st = f"status: {status}\n" if status else ""
    return f"---\ntitle: {title}\ntype: note\ntags: [t]\n{st}---\nSee [[{link}]].\n"


@pytest.fixture
def workspace(runner: dict[str, str]) -> Path:
    """Two KBs in directories with spaces in their names: `kb one` has a warning, `kb two` none."""
    root = Path(runner["GITHUB_WORKSPACE"])
    write_kb(root / "kb one", KB_YAML.format(name="one"), {"a.md": entry("A", "b"), "b.md": entry("B", "a", "ok")})
    write_kb(
        root / "kb two", KB_YAML.format(name="two"), {"c.md": entry("C", "d", "ok"), "d.md": entry("D", "c", "ok")}
    )
    return root


def test_the_action_lints_once_and_annotates_writes_sarif_and_summarizes(installed: dict[str, str], workspace: Path):
    assert step("lint")["run"].count(" -m kblint ") == 1  # one run makes every report
    result = run_step(
        "lint",
        installed,
        workspace,
        paths="  kb one\n\nkb two  \n",
        args="--fail-on=warning\n --no-judgment\n",
        sarif="reports dir/kblint.sarif",
    )
    assert result.returncode == 1, result.stderr
    commands = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert len(commands) == 1
    assert commands[0].startswith("::warning file=kb one/a.md,line=1,col=1,title=rubric_violation/status_present::")
    sarif = json.loads((workspace / "reports dir" / "kblint.sarif").read_text(encoding="utf-8"))
    (sarif_result,) = sarif["runs"][0]["results"]
    assert sarif_result["ruleId"] == "rubric_violation/status_present"
    summary = Path(installed["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert summary.startswith("an earlier step's summary\n### ❌ kblint: failed (fails on warning)\n")
    assert "| one | kb one | 2 | 2 | 0 | 1 | 0 |" in summary and "| two | kb two | 2 | 2 | 0 | 0 | 0 |" in summary
    assert "#### Top rules" in summary


def test_the_steps_result_is_kblints_exit_code(installed: dict[str, str], workspace: Path):
    before = Path(installed["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    result = run_step("lint", installed, workspace, paths="kb two", summary="false")
    assert result.returncode == 0, result.stderr
    assert Path(installed["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8") == before
    assert result.stdout.splitlines()[-1] == "kblint: 0 errors, 0 warnings, 0 info"
    # the default paths: the working directory
    assert run_step("lint", installed, workspace).returncode == 0
    assert run_step("lint", installed, workspace, args="--fail-on=warning").returncode == 1


def test_a_run_that_stops_still_leaves_a_summary(installed: dict[str, str], workspace: Path):
    result = run_step("lint", installed, workspace, paths="kb three")
    assert result.returncode == 2 and "kb three" in result.stderr
    assert "::error title=kblint::kblint could not run (exit code 2)" in result.stdout  # an annotation says so
    summary = Path(installed["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert "kblint stopped with exit code 2 before writing its summary" in summary


def test_inputs_are_never_split_or_expanded(installed: dict[str, str], workspace: Path):
    result = run_step("lint", installed, workspace, paths="$(touch pwned)\n*\nkb one")
    assert result.returncode == 2 and "kblint: $(touch pwned): no such file or directory" in result.stderr
    assert not (workspace / "pwned").exists()
    result = run_step("lint", installed, workspace, args="--fail-on warning\n$HOME")
    assert result.returncode == 2 and "No such option: --fail-on warning" in result.stderr
    assert "::warning title=kblint::Each line of the args input is one argument" in result.stdout
    bad = run_step("lint", installed, workspace, summary="yes")
    assert bad.returncode == 2 and "::error title=kblint::The summary input is true or false" in bad.stdout


def test_install_wants_python_3_11(runner: dict[str, str], tmp_path: Path):
    old = tmp_path / "old python"
    old.write_text('#!/bin/sh\ncase "$2" in *version_info*) exit 1 ;; *) echo 3.10.12 ;; esac\n', encoding="utf-8")
    old.chmod(0o755)
    result = run_step("install", runner, tmp_path, python=str(old))
    assert result.returncode == 2
    assert "::error title=kblint::kblint needs Python 3.11 or newer; the python input runs 3.10.12." in result.stdout
    assert not (Path(runner["RUNNER_TEMP"]) / VENV).exists()
    missing = run_step("install", runner, tmp_path, python="no such python")
    assert missing.returncode == 2
    assert "::error title=kblint::The python input names no interpreter on PATH: no\\ such\\ python" in missing.stdout
