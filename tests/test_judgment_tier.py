"""The judgment tier through `kblint validate`, against a real LLM-protocol server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import issues_of, run_kblint, write_kb
from llm_server import FakeLLM, closed_port

KEY = "sk-test-DO-NOT-LEAK-4242"

KB = """\
name: judged
evaluation_rubric:
  - "Body explains why it matters"
  - {text: "Claims are FAIL checked", id: claims, severity: error}
  - "Tone is UNSURE"
  - "Quotes are NA attributed"
  - "Reasoning is LOW quality"
"""


def note(title: str, link: str) -> str:
    return f"---\ntitle: {title}\ntype: note\ntags: [t]\n---\nSome body about {title}. [[{link}]]\n"


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return write_kb(tmp_path / "judged", KB, {"a.md": note("Alpha", "b"), "b.md": note("Beta", "a")})


@pytest.fixture
def server():
    with FakeLLM() as fake:
        yield fake


def judge_args(server: FakeLLM, cache: Path, *extra: str) -> list[str]:
    return [
        "--llm",
        "openai:test-model",
        "--llm-base-url",
        server.openai_url,
        "--cache-dir",
        str(cache),
        "--format",
        "json",
        "--fail-on",
        "never",
        *extra,
    ]


ENV = {"OPENAI_API_KEY": KEY}


def test_verdicts_become_issues_and_the_block_is_filled(kb: Path, server: FakeLLM, tmp_path: Path):
    cache = tmp_path / "cache"
    result = run_kblint("validate", str(kb), *judge_args(server, cache), env=ENV)
    report = result.json
    assert server.count == 2  # one request per entry, all its items in it
    assert sorted(len(ids) for ids in server.sent_item_ids()) == [5, 5]
    violations = issues_of(report, "llm_rubric_violation")
    assert sorted((i["entry_id"], i["rubric_item"], i["severity"]) for i in violations) == [
        ("a", "Claims are FAIL checked", "error"),
        ("b", "Claims are FAIL checked", "error"),
    ]
    v = violations[0]
    assert v["confidence"] == 0.9 and v["evaluator"] == "openai:test-model" and v["cached"] is False
    assert v["tier"] == "judgment" and v["message"]
    uncertain = issues_of(report, "judgment_uncertain")
    assert sorted((i["entry_id"], i["rubric_item"]) for i in uncertain) == [
        ("a", "Reasoning is LOW quality"),
        ("a", "Tone is UNSURE"),
        ("b", "Reasoning is LOW quality"),
        ("b", "Tone is UNSURE"),
    ]
    assert all(i["severity"] == "info" for i in uncertain)
    assert not any("NA attributed" in (i["rubric_item"] or "") for i in report["issues"])
    block = report["judgment"]
    assert block["enabled"] is True and block["evaluator"] == "openai:test-model"
    assert (block["calls"], block["cache_hits"], block["not_evaluated"]) == (2, 0, 0)
    assert block["prompt_tokens"] == 200 and block["completion_tokens"] == 14
    assert report["kbs"][0]["coverage"]["judgment_evaluated"] is True
    # score: per entry, pass = 1 (the "why it matters" item) + 3 system checkers, fail = 1 (claims)
    assert report["kbs"][0]["score"] == pytest.approx(4 / 5)
    # the key never shows: not in the report, not on stderr, not in the cache
    assert KEY not in result.stdout and KEY not in result.stderr
    for path in cache.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(encoding="utf-8", errors="replace")


def test_second_run_is_served_from_the_cache(kb: Path, server: FakeLLM, tmp_path: Path):
    cache = tmp_path / "cache"
    run_kblint("validate", str(kb), *judge_args(server, cache), env=ENV)
    server.reset()
    report = run_kblint("validate", str(kb), *judge_args(server, cache), env=ENV).json
    assert server.count == 0
    assert report["judgment"]["calls"] == 0 and report["judgment"]["cache_hits"] == 10
    assert all(i["cached"] is True for i in issues_of(report, "llm_rubric_violation"))
    (kb / "a.md").write_text(note("Alpha", "b") + "\nMore text.\n", encoding="utf-8")
    run_kblint("validate", str(kb), *judge_args(server, cache), env=ENV)
    assert server.count == 1  # only the edited entry
    server.reset()
    run_kblint("validate", str(kb), *judge_args(server, cache, "--no-cache"), env=ENV)
    assert server.count == 2
    info = run_kblint("cache", "info", "--cache-dir", str(cache))
    assert info.code == 0 and "15 cached verdicts" in info.stdout  # the edited entry's 5 are new ones
    cleared = run_kblint("cache", "clear", "--cache-dir", str(cache))
    assert cleared.code == 0 and "removed 15" in cleared.stdout
    assert "0 cached verdicts" in run_kblint("cache", "info", "--cache-dir", str(cache)).stdout


def test_budget_leaves_items_not_evaluated(kb: Path, server: FakeLLM, tmp_path: Path):
    result = run_kblint("validate", str(kb), *judge_args(server, tmp_path / "c", "--max-llm-calls", "1"), env=ENV)
    block = result.json["judgment"]
    assert server.count == 1 and block["calls"] == 1
    assert block["not_evaluated"] == 5 and "budget" in block["not_evaluated_reason"]
    text = run_kblint(
        "validate",
        str(kb),
        "--llm",
        "openai:test-model",
        "--llm-base-url",
        server.openai_url,
        "--cache-dir",
        str(tmp_path / "d"),
        "--max-llm-calls",
        "1",
        "--fail-on",
        "never",
        env=ENV,
    ).stdout
    assert "5 checks not evaluated (budget exhausted" in text


def test_unreachable_provider(kb: Path, tmp_path: Path, quick_backoff: None):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    args = [
        "validate",
        str(kb),
        "--llm",
        "openai:m",
        "--llm-base-url",
        url,
        "--cache-dir",
        str(tmp_path / "c"),
        "--format",
        "json",
    ]
    result = run_kblint(*args, env=ENV)
    assert result.code == 0  # warnings only; the run completes
    unavailable = issues_of(result.json, "judgment_unavailable")
    assert len(unavailable) == 1 and unavailable[0]["severity"] == "warning"
    assert result.json["judgment"]["not_evaluated"] == 10
    required = run_kblint(*args, "--llm-required", env=ENV)
    assert required.code == 2
    lines = [line for line in required.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "openai" in lines[0] and "not reachable" in lines[0]
    none = run_kblint("validate", str(kb), "--llm-required", env={"KBLINT_LLM": ""})
    assert none.code == 2 and "no LLM configured" in none.stderr


def test_a_dead_gateway_is_one_judgment_unavailable_and_fails_llm_required(
    kb: Path, server: FakeLLM, tmp_path: Path, quick_backoff: None
):
    for n in range(8):
        (kb / f"more{n}.md").write_text(note(f"More {n}", "a"))
    server.fail_status, server.fail_count = 502, 10**9
    args = ["validate", str(kb), *judge_args(server, tmp_path / "c"), "--llm-concurrency", "1"]
    result = run_kblint(*args, env=ENV)
    assert result.code == 0
    assert len(issues_of(result.json, "judgment_unavailable")) == 1
    # six failed replies in a row, whichever entries they belong to, and the tier stops
    assert len(issues_of(result.json, "judgment_error")) in (5, 10, 15)
    assert 6 <= server.count <= 7
    required = run_kblint(*args, "--llm-required", env=ENV)
    assert required.code == 2 and "HTTP 502" in required.stderr


def test_llm_timeout_and_max_output_reach_the_requests(kb: Path, server: FakeLLM, tmp_path: Path, quick_backoff: None):
    server.delay = 0.3
    args = ["validate", str(kb), *judge_args(server, tmp_path / "c", "--llm-timeout", "0.05", "--llm-concurrency", "1")]
    result = run_kblint(*args, "--llm-max-output", "300", env=ENV)
    assert result.json["judgment"]["timeouts"] >= 2  # no answer within 0.05 s
    (block,) = result.json["judgment"]["providers"].values()
    assert set(block["errors"]) == {"timeout"}  # each item's error is counted as the timeout it was
    assert {r["body"]["max_tokens"] for r in server.requests} == {300}
    server.reset()
    server.delay = 0.0
    (kb / "kblint.toml").write_text("[llm]\ntimeout = 5\nmax_output = 700\n")
    args = ["validate", ".", *judge_args(server, tmp_path / "d")]
    ok = run_kblint(*args, env=ENV, cwd=kb).json
    assert "timeouts" not in ok["judgment"] and {r["body"]["max_tokens"] for r in server.requests} == {700}
    (kb / "kblint.toml").write_text("[llm]\ntimeout = 0\n")
    bad = run_kblint(*args, env=ENV, cwd=kb)
    assert bad.code == 2 and "'llm.timeout' must be a number of seconds above 0" in bad.stderr


def test_the_summary_says_when_the_server_refused_structured_output(kb: Path, server: FakeLLM, tmp_path: Path):
    server.refuse = {"json_schema"}
    report = run_kblint("validate", str(kb), *judge_args(server, tmp_path / "c"), env=ENV).json
    assert report["judgment"]["structured_output"] == "json_object"
    assert report["judgment"]["structured_output_fallbacks"][0].startswith("json_schema refused (HTTP 400")
    server.reset()
    text = run_kblint("validate", str(kb), *judge_args(server, tmp_path / "d")[:-4], env=ENV).stdout
    assert "structured output: json_object (the server refused json_schema)" in text


def test_the_judgment_block_counts_answers_and_verdicts(kb: Path, server: FakeLLM, tmp_path: Path):
    server.garbage = 1  # the first answer is not JSON: asked again
    block = run_kblint("validate", str(kb), *judge_args(server, tmp_path / "c", "--llm-concurrency", "1"), env=ENV)
    judgment = block.json["judgment"]
    assert judgment["answers"] == {"valid": 2, "invalid": 1} and judgment["calls"] == 3
    assert judgment["verdicts"] == {"fail": 4, "not_applicable": 2, "pass": 2, "uncertain": 2}
    assert judgment["structured_output"] == "json_schema"


def test_structured_output_can_be_turned_off_in_the_configuration(kb: Path, server: FakeLLM, tmp_path: Path):
    (kb / "kblint.toml").write_text('[llm]\noutput = "plain"\n')
    report = run_kblint("validate", ".", *judge_args(server, tmp_path / "c"), env=ENV, cwd=kb).json
    assert {r["mode"] for r in server.requests} == {"plain"} and report["judgment"]["structured_output"] == "plain"
    (kb / "kblint.toml").write_text('[llm]\noutput = "tool"\n')  # anthropic's, not openai's
    bad = run_kblint("validate", ".", *judge_args(server, tmp_path / "c"), env=ENV, cwd=kb)
    assert bad.code == 2 and "output 'tool' is not one of openai's: json_schema, json_object, plain" in bad.stderr


def test_a_local_server_gets_a_generous_timeout():
    from kblint.judge import JudgeConfig

    assert JudgeConfig(provider="ollama", model="m").timeout == 600
    assert JudgeConfig(provider="openai", model="m", base_url="http://127.0.0.1:8080/v1").timeout == 600
    assert JudgeConfig(provider="openai", model="m", api_key="k").timeout == 60
    assert JudgeConfig(provider="openai", model="m", base_url="http://localhost:1/v1", timeout=7).timeout == 7


def test_dry_run_sends_nothing(kb: Path, server: FakeLLM, tmp_path: Path):
    args = judge_args(server, tmp_path / "c", "--dry-run")
    args.remove("--format")
    args.remove("json")
    result = run_kblint("validate", str(kb), *args, env=ENV)
    assert result.code == 0 and server.count == 0
    assert "would be sent 2 requests; nothing was sent" in result.stdout
    assert "5 items (" in result.stdout and "prompt tokens" in result.stdout


def test_dry_run_in_json_is_json(kb: Path, server: FakeLLM, tmp_path: Path):
    result = run_kblint("validate", str(kb), *judge_args(server, tmp_path / "c", "--dry-run"), env=ENV)
    assert result.code == 0 and server.count == 0
    dry = result.json["dry_run"]
    assert dry["evaluator"] == "openai:test-model" and dry["requests"] == 2
    assert sorted(e["entry_id"] for e in dry["entries"]) == ["a", "b"]
    assert all(len(e["items"]) == 5 and e["estimated_prompt_tokens"] > 0 for e in dry["entries"])
    assert dry["estimated_prompt_tokens"] == sum(e["estimated_prompt_tokens"] for e in dry["entries"])
    # --output takes the listing as it takes a report
    out = tmp_path / "dry.json"
    written = run_kblint("validate", str(kb), *judge_args(server, tmp_path / "d", "--dry-run"), "-o", str(out), env=ENV)
    assert written.code == 0 and written.stdout == ""
    assert json.loads(out.read_text(encoding="utf-8"))["dry_run"] == dry


def test_when_every_judgment_errs_nothing_is_called_evaluated(kb: Path, server: FakeLLM, tmp_path: Path):
    server.garbage = 10**9  # no answer is ever JSON: every item ends in a judgment_error
    result = run_kblint("validate", str(kb), *judge_args(server, tmp_path / "c"), env=ENV)
    (kb_report,) = result.json["kbs"]
    assert len(issues_of(result.json, "judgment_error")) == 10
    assert kb_report["coverage"]["judgment_evaluated"] is False
    assert kb_report["score"] is None and kb_report["score_incomplete"] == "every judgment failed (10 judgment_error)"
    text = run_kblint("validate", str(kb), *judge_args(server, tmp_path / "c")[:-4], env=ENV)
    assert "score incomplete: every judgment failed" in text.stdout
    server.garbage = 0
    judged = run_kblint("validate", str(kb), *judge_args(server, tmp_path / "c"), env=ENV).json
    assert judged["kbs"][0]["coverage"]["judgment_evaluated"] is True and judged["kbs"][0]["score"] is not None


def test_a_second_run_asks_only_what_erred(kb: Path, server: FakeLLM, tmp_path: Path):
    cache = tmp_path / "c"
    server.drop_ids, server.drop_count = {"claims"}, 2  # entry a's claims item: no verdict twice
    first = run_kblint("validate", str(kb), *judge_args(server, cache, "--llm-concurrency", "1"), env=ENV).json
    assert len(issues_of(first, "judgment_error")) == 1
    server.reset()
    second = run_kblint("validate", str(kb), *judge_args(server, cache), env=ENV).json
    assert server.sent_item_ids() == [["claims"]]  # only the item that erred is asked again
    assert not issues_of(second, "judgment_error")
    server.reset()
    run_kblint("validate", str(kb), *judge_args(server, cache), env=ENV)
    assert server.count == 0  # fully judged and unchanged: no request at all


def test_where_the_verdict_cache_lives(kb: Path, server: FakeLLM, tmp_path: Path):
    """Beside the configuration file found from the current directory upward, else in the current
    directory (README "The judgment tier"); --cache-dir names it wherever kblint runs from."""
    args = judge_args(server, tmp_path / "unused")
    at = args.index("--cache-dir")
    del args[at : at + 2]
    (kb / "kblint.toml").write_text("")
    run_kblint("validate", ".", *args, env=ENV, cwd=kb)
    assert server.count == 2 and (kb / ".kblint_cache" / "judgment").is_dir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    server.reset()
    run_kblint("validate", str(kb), *args, env=ENV, cwd=elsewhere)
    assert server.count == 2 and (elsewhere / ".kblint_cache" / "judgment").is_dir()  # another cache
    server.reset()
    run_kblint("validate", str(kb), *args, "--cache-dir", str(kb / ".kblint_cache"), env=ENV, cwd=elsewhere)
    assert server.count == 0


def test_anthropic_protocol_and_env_configuration(kb: Path, server: FakeLLM, tmp_path: Path):
    env = {"ANTHROPIC_API_KEY": KEY, "KBLINT_LLM": "anthropic:claude-test"}
    report = run_kblint(
        "validate",
        str(kb),
        "--llm-base-url",
        server.anthropic_url,
        "--cache-dir",
        str(tmp_path / "c"),
        "--format",
        "json",
        "--fail-on",
        "never",
        env=env,
    ).json
    assert {r["path"] for r in server.requests} == {"/v1/messages"}
    assert all(r["headers"]["x-api-key"] == KEY for r in server.requests)
    assert report["judgment"]["evaluator"] == "anthropic:claude-test"
    assert len(issues_of(report, "llm_rubric_violation")) == 2


def test_coverage_says_who_evaluates(kb: Path):
    out = run_kblint("checkers", "--kb", str(kb), "--llm", "ollama:llama3").stdout
    assert "[judgment] Body explains why it matters (evaluated by ollama:llama3)" in out
    out = run_kblint("checkers", "--kb", str(kb), env={"KBLINT_LLM": ""}).stdout
    assert "(not evaluated: no LLM configured)" in out


def test_no_judgment_and_config_file(kb: Path, server: FakeLLM, tmp_path: Path):
    report = run_kblint("validate", str(kb), *judge_args(server, tmp_path / "c", "--no-judgment"), env=ENV).json
    assert server.count == 0 and report["judgment"]["enabled"] is False
    assert "--no-judgment" in report["judgment"]["reason"] and report["judgment"]["not_evaluated"] == 10
    conf = tmp_path / "kblint.toml"
    conf.write_text(
        f'[llm]\nprovider = "openai"\nmodel = "from-config"\nbase_url = "{server.openai_url}"\nconcurrency = 2\n',
        encoding="utf-8",
    )
    report = run_kblint("validate", str(kb), "--config", str(conf), "--format", "json", "--no-cache", env=ENV).json
    assert report["judgment"]["evaluator"] == "openai:from-config" and server.count == 2


def test_a_verdict_quotes_the_entry_as_evidence(kb: Path, server: FakeLLM, tmp_path: Path, quick_backoff):
    cache = tmp_path / "cache"
    server.evidence = "Some   body about\nAlpha."  # words of entry a, spaced otherwise
    report = run_kblint("validate", str(kb), *judge_args(server, cache), env=ENV).json
    (claims_a,) = [
        i for i in issues_of(report, "llm_rubric_violation") if i["entry_id"] == "a" and i["item_id"] == "claims"
    ]
    assert claims_a["evidence"] == "Some   body about\nAlpha."
    (claims_b,) = [
        i for i in issues_of(report, "llm_rubric_violation") if i["entry_id"] == "b" and i["item_id"] == "claims"
    ]
    assert "evidence" not in claims_b  # b holds no such words: a quote the model made up is not shown
    again = run_kblint("validate", str(kb), *judge_args(server, cache), env=ENV).json  # from the cache
    assert [i.get("evidence") for i in issues_of(again, "llm_rubric_violation")] == [
        i.get("evidence") for i in issues_of(report, "llm_rubric_violation")
    ]
    text = run_kblint("validate", str(kb), *judge_args(server, cache)[:-4], env=ENV).stdout
    assert '(evidence: "Some   body about\\nAlpha.")' in text
    sent = server.requests[0]["body"]["response_format"]["json_schema"]["schema"]
    assert "evidence" in sent["properties"]["verdicts"]["properties"]["claims"]["required"]


def test_the_judgment_block_gives_each_provider_its_figures(kb: Path, server: FakeLLM, tmp_path: Path, quick_backoff):
    from kblint.judge import PROMPT_VERSION

    server.garbage = 2  # the first entry's answer and its retry are not JSON: its items get errors
    report = run_kblint(
        "validate", str(kb), *judge_args(server, tmp_path / "cache", "--llm-concurrency", "1"), env=ENV
    ).json
    (block,) = report["judgment"]["providers"].values()
    assert block["provider"] == "openai" and block["model"] == "test-model"
    assert block["prompt_version"] == PROMPT_VERSION and block["requests"] == report["judgment"]["calls"] == 3
    assert block["prompt_tokens"] == 300 and block["completion_tokens"] == 21 and block["cache_hits"] == 0
    assert block["errors"] == {"invalid_answer": 5} and block["truncations"] == 0


def test_an_entry_gone_before_the_judge_reads_it_has_its_items_counted_not_evaluated(kb: Path, server: FakeLLM):
    from kblint.config import resolve
    from kblint.engine import inputs, pass_entries, pass_judgment
    from kblint.progress import Progress

    settings = resolve({"paths": [str(kb)], "llm": "openai:test-model", "llm_base_url": server.openai_url})
    (entry_kb,) = inputs.workspace(settings, None, None).kbs
    ctx = pass_entries.context_of(entry_kb, settings)
    facts = pass_entries.lint_file(ctx, str(kb / "a.md"), "a.md").facts
    pending = [pass_judgment.Pending(ctx, facts, ctx.plan.judgment_bindings("note"), None)]
    (kb / "a.md").unlink()  # after pass 1, before the judge
    judged = pass_judgment.run_judgment(pending, settings, Progress(), [])
    assert server.count == 0 and judged.issues == []
    assert judged.summary.not_evaluated == 5
    assert judged.summary.not_evaluated_reason == pass_judgment.UNREADABLE


def test_a_dry_run_without_an_llm_says_it_is_a_usual_run(kb: Path):
    result = run_kblint("validate", str(kb), "--dry-run", "--no-cache", "--format", "json")
    assert result.json["judgment"]["enabled"] is False and "dry_run" not in result.json
    assert "kblint: warning: --dry-run shows what an LLM would be sent, and no LLM is configured" in result.stderr
