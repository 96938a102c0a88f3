"""bench/judge_eval.py and its calibration set (fixtures/judge-eval): the set is balanced and made of
twins a small edit apart; the figures are right for answers chosen by the protocol-speaking test server
(which decides each verdict from the item's text), and for hand-computed examples."""

from __future__ import annotations

import difflib
import importlib.util
import json
import sys
from collections import defaultdict
from pathlib import Path

import pytest
import yaml
from llm_server import ALWAYS, FakeLLM, closed_port

from kblint.judge import JudgeConfig

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "fixtures" / "judge-eval"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


judge_eval = _load("judge_eval", ROOT / "bench" / "judge_eval.py")
build = _load("judge_eval_build", SET / "build.py")


@pytest.fixture(scope="module")
def server():
    with FakeLLM() as fake:
        yield fake


# -- the calibration set ------------------------------------------------------------------------


def test_the_set_is_balanced_with_unique_ids():
    cases = judge_eval.load_cases(judge_eval.DEFAULT_CASES)
    assert len(cases) >= 60
    assert sum(c.expected == "pass" for c in cases) == sum(c.expected == "fail" for c in cases)
    assert len({c.id for c in cases}) == len(cases)
    # the first N cases are balanced for every even N (what --limit keeps)
    assert all(cases[i].expected == "pass" and cases[i + 1].expected == "fail" for i in range(0, len(cases), 2))


def test_every_pass_case_has_a_fail_twin_a_small_edit_away():
    raw = yaml.safe_load((SET / "cases.yaml").read_text(encoding="utf-8"))["cases"]
    pairs: dict[str, dict[str, dict]] = defaultdict(dict)
    for case in raw:
        assert case["edit"], case["id"]
        pairs[case["pair"]][case["expected"]] = case
    assert len(pairs) * 2 == len(raw)
    for pair_id, twins in pairs.items():
        ok, bad = twins["pass"], twins["fail"]
        assert ok["item"] == bad["item"] and ok["item_id"] == bad["item_id"], pair_id
        assert ok["entry"] != bad["entry"], pair_id
        ratio = difflib.SequenceMatcher(None, ok["entry"], bad["entry"], autojunk=False).ratio()
        changed = [
            line
            for line in difflib.unified_diff(ok["entry"].splitlines(), bad["entry"].splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and line[:3] not in ("+++", "---")
        ]
        assert ratio >= 0.8 and len(changed) <= 8, (pair_id, ratio, changed)
        assert "none: the base entry" in (ok["edit"], bad["edit"]), pair_id


def test_cases_yaml_is_what_the_bases_and_edits_give():
    assert (SET / "cases.yaml").read_text(encoding="utf-8") == build.dump(build.build())


def test_every_entry_reads_and_one_request_carries_an_entrys_items():
    cases = judge_eval.load_cases(judge_eval.DEFAULT_CASES)
    groups = judge_eval.group(cases)
    assert sum(len(members) for _, members in groups) == len(cases)
    assert len(groups) < len(cases)
    for request, members in groups:
        assert request.entry["id"] and request.entry["body"].strip()
        assert [it.id for it in request.items] == [c.item_id for c in members]


# -- the figures --------------------------------------------------------------------------------


def test_kappa_known_values():
    kappa = judge_eval.cohen_kappa
    assert kappa([("pass", "pass"), ("fail", "fail"), ("pass", "pass"), ("fail", "fail")]) == 1
    assert kappa([("pass", "pass"), ("fail", "pass")] * 5) == 0  # one answer whatever the entry: chance
    # by hand: 10 cases, 4 pass/pass, 3 fail/fail, 1 pass/fail, 2 fail/pass: p_o 0.7, p_e 0.5*0.6+0.5*0.4
    pairs = [("pass", "pass")] * 4 + [("fail", "fail")] * 3 + [("pass", "fail")] + [("fail", "pass")] * 2
    assert kappa(pairs) == pytest.approx(0.4)
    assert kappa([("pass", "pass")] * 3) is None and kappa([]) is None


def _write_cases(path: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    entries = {
        "A": "---\nid: a\ntitle: A\ntype: note\n---\nBody of A.\n",
        "B": "---\nid: b\ntitle: B\ntype: note\ntags: [x]\n---\nBody of B.\n",
    }
    cases = [
        {"id": f"{e}-{i}", "item_id": i, "item": text, "expected": exp, "entry": entries[e], "edit": "test"}
        for e, i, text, exp in rows
    ]
    path.write_text(yaml.safe_dump({"cases": cases}), encoding="utf-8")
    return path


# Entry A: pass → pass, fail → fail, pass → uncertain; entry B: fail → not_applicable, fail → fail, fail → pass.
ROWS = [
    ("A", "a1", "Good item", "pass"),
    ("A", "a2", "FAIL item", "fail"),
    ("A", "a3", "UNSURE item", "pass"),
    ("B", "b1", "NA item", "fail"),
    ("B", "b2", "FAIL item", "fail"),
    ("B", "b3", "plain item", "fail"),
]


def test_figures_of_chosen_answers(server, tmp_path, capsys):
    cases = _write_cases(tmp_path / "cases.yaml", ROWS)
    argv = ["openai:fake", "--base-url", server.openai_url, "--cases", str(cases), "--no-cache", "--json"]
    assert judge_eval.main(argv) == 0
    r = json.loads(capsys.readouterr().out)
    assert (r["cases"], r["requests"], r["agreed"], r["agreement"]) == (6, 2, 3, 0.5)
    assert r["confusion"]["pass"] == {"pass": 1, "fail": 0, "uncertain": 1, "not_applicable": 0, "error": 0}
    assert r["confusion"]["fail"] == {"pass": 1, "fail": 2, "uncertain": 0, "not_applicable": 1, "error": 0}
    # three classes: p_o 3/6, p_e (2*2 + 4*2)/36; answered only: p_o 3/4, p_e (1*2 + 3*2)/16
    assert r["kappa"] == pytest.approx(0.25) and r["kappa_answered"] == pytest.approx(0.5)
    assert (r["answered"], r["no_verdict"], r["invalid_rate"]) == (4, 0, 0.0)
    assert r["tokens"] == {"prompt": 200, "completion": 14} and r["seconds_per_request"] is not None
    assert r["by_item"]["a3"] == {"agreed": 0, "cases": 1}


def test_perfect_answers_and_the_cache(server, tmp_path, capsys):
    rows = [(e, i, "FAIL item" if exp == "fail" else "ok", exp) for e, i, _, exp in ROWS]
    cases = _write_cases(tmp_path / "cases.yaml", rows)
    argv = ["openai:fake", "--base-url", server.openai_url, "--cases", str(cases), "--cache-dir", str(tmp_path / "c")]
    for _ in range(2):
        assert judge_eval.main(argv) == 0
        out = capsys.readouterr().out
        assert "agreement 1.000 (6 of 6)" in out and "Cohen's kappa 1.000" in out
    assert "0 HTTP calls, 6 items from the cache" in out


def test_answers_that_never_parse_are_counted_as_no_verdict(server, tmp_path, capsys):
    cases = _write_cases(tmp_path / "cases.yaml", ROWS[:2])
    server.garbage = ALWAYS
    try:
        argv = ["openai:fake", "--base-url", server.openai_url, "--cases", str(cases), "--no-cache", "--json"]
        assert judge_eval.main(argv) == 0
    finally:
        server.garbage = 0
    r = json.loads(capsys.readouterr().out)
    assert (r["no_verdict"], r["invalid_rate"], r["agreement"], r["kappa"]) == (2, 1.0, 0.0, 0.0)
    assert r["confusion"]["fail"]["error"] == 1 and r["answers"]["valid"] == 0
    assert all(case["got"] == "error" and case["error"] for case in r["results"])


def test_bad_input_gets_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("cases:\n  - {id: x, item_id: i, item: t, expected: maybe, entry: e}\n", encoding="utf-8")
    for argv in (["nollm"], ["openai:m", "--cases", str(bad)], ["openai:m", "--limit", "0"]):
        assert judge_eval.main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("judge_eval: "), err


def test_an_unreachable_judge_is_an_error(tmp_path):
    cases = judge_eval.load_cases(_write_cases(tmp_path / "cases.yaml", ROWS[:1]))
    config = JudgeConfig("openai", "m", base_url=f"http://127.0.0.1:{closed_port()}/v1", tries=1)
    with pytest.raises(judge_eval.EvalError, match="unavailable"):
        judge_eval.evaluate(cases, config)


def test_the_script_runs_the_whole_set(server, capsys: pytest.CaptureFixture[str]):
    """As a user runs it: the whole set, the test server answering pass to every item (chance level)."""
    assert judge_eval.main(["openai:fake", "--base-url", server.openai_url, "--no-cache"]) == 0
    printed = capsys.readouterr()
    assert "cases 60 (30 pass, 30 fail) in 36 requests" in printed.out
    assert "agreement 0.500 (30 of 60)" in printed.out and "Cohen's kappa 0.000" in printed.out
    assert "Traceback" not in printed.err
