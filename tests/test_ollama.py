"""Ollama's native API (`/api/chat`, `/api/show`) and the context and output limits of the judge's
requests, against a real HTTP server on 127.0.0.1 (tests/llm_server.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import issues_of, no_wait, run_kblint, write_kb
from llm_server import FakeLLM

from kblint.judge import JudgeConfig, JudgeItem, JudgeRequest, judge
from kblint.judge.prompt import SYSTEM_PROMPT, answer_tokens, estimate_tokens, user_message, verdict_schema


@pytest.fixture
def server():
    with FakeLLM() as s:
        yield s


def cfg(server: FakeLLM, provider: str = "ollama", **kw) -> JudgeConfig:
    kw.setdefault("base_url", server.openai_url if provider == "openai" else server.ollama_url)
    kw.setdefault("sleep", no_wait)  # the judge's clock: its waits pass at once
    kw.setdefault("timeout", 10.0)
    return JudgeConfig(provider=provider, model="test-model", api_key="k" if provider != "ollama" else None, **kw)


def req(key: str, items: dict[str, str], body: str = "Some body text.") -> JudgeRequest:
    entry = {"id": key, "type": "note", "title": f"Title of {key}", "metadata": {}, "body": body}
    return JudgeRequest(key=key, entry=entry, items=[JudgeItem(i, t) for i, t in items.items()])


def prompt_tokens(request: JudgeRequest) -> int:
    """The judge's estimate of a request's prompt (system prompt and user message)."""
    from kblint.judge.prompt import prompt_entry

    return estimate_tokens(SYSTEM_PROMPT, user_message(prompt_entry(request.entry, 12_000), request.items, {}))


def options(server: FakeLLM) -> list[dict]:
    return [r["body"]["options"] for r in server.requests]


LONG = "A sentence of the body, long enough to count. " * 200  # 9,200 characters: ~2,300 tokens


# -------------------------------------------------------------------------------------------------
# the request


def test_the_native_chat_request_carries_the_schema_the_context_and_the_budget(server):
    request = req("e1", {"a": "one", "bad": "FAIL"})
    outcomes, stats, unavailable = judge([request], cfg(server))
    assert unavailable is None and {v.item_id: v.verdict for v in outcomes[0].verdicts} == {"a": "pass", "bad": "fail"}
    (sent,) = server.requests
    body = sent["body"]
    assert sent["path"] == "/api/chat" and "authorization" not in sent["headers"]
    assert body["model"] == "test-model" and body["stream"] is False
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["format"] == verdict_schema(request.items)
    assert body["format"]["properties"]["verdicts"]["required"] == ["a", "bad"]
    estimate, budget = prompt_tokens(request), answer_tokens(2, 4096)
    assert body["options"]["num_predict"] == budget and body["options"]["temperature"] == 0
    num_ctx = body["options"]["num_ctx"]
    assert num_ctx == 2048  # a small prompt asks for the smallest context, which loads fastest
    assert estimate + budget < num_ctx <= server.context_length
    assert stats.output_mode == "json_schema" and stats.notes == []
    assert (stats.prompt_tokens, stats.completion_tokens) == (estimate, 7)  # prompt_eval_count, eval_count


def test_the_model_context_is_asked_once_per_run_and_one_context_serves_every_request(server):
    requests = [req("short", {"a": "one"}), req("long", {"a": "one", "b": "two"}, body=LONG), req("s2", {"a": "x"})]
    judge(requests, cfg(server, concurrency=2))
    assert server.shows == [{"model": "test-model"}]
    sizes = {o["num_ctx"] for o in options(server)}
    assert len(sizes) == 1  # a new size would make Ollama load the model again
    (size,) = sizes
    largest = prompt_tokens(requests[1]) + answer_tokens(2, 4096)
    assert size % 1024 == 0 and largest < size <= largest * 1.25 + 256 + 1024
    judge([req("again", {"a": "one"})], cfg(server))
    assert len(server.shows) == 2  # once per run


def test_the_context_is_capped_by_the_model_and_by_llm_context(server):
    request = req("long", {"a": "one"}, body=LONG)
    need = prompt_tokens(request) + answer_tokens(1, 4096)
    server.context_length = need + 100  # below what the judge would ask for, above what it needs
    judge([request], cfg(server))
    assert options(server)[-1]["num_ctx"] == need + 100
    judge([request], cfg(server, context=need + 10))
    assert options(server)[-1]["num_ctx"] == need + 10
    server.context_length = need + 5  # the smaller of the two wins
    judge([request], cfg(server, context=need + 10))
    assert options(server)[-1]["num_ctx"] == need + 5


def test_a_prompt_larger_than_the_context_is_sent_with_its_body_cut(server):
    server.context_length = 2048
    reqs = [req("long", {"a": "one"}, body=LONG), req("short", {"a": "one"})]
    outcomes, stats, unavailable = judge(reqs, cfg(server))
    assert unavailable is None and all(o.verdicts and not o.errors for o in outcomes)
    sent = {r["block"]["entry"]["id"]: r["block"]["entry"] for r in server.requests}
    assert sent["long"]["body_truncated"] is True and sent["long"]["body_chars"] == len(LONG)
    assert 0 < len(sent["long"]["body"]) < len(LONG) and "body_truncated" not in sent["short"]
    assert stats.bodies_truncated == 1 and stats.notes[-1].startswith("1 request sent with the body cut")
    server.context_length = 100_000
    outcomes, _, _ = judge([req("long", {"a": "one"}, body=LONG)], cfg(server, context=300))
    assert "do not fit in the context of 300 tokens (--llm-context): not sent" in outcomes[0].errors[0].message


def test_items_that_do_not_fit_together_are_asked_in_several_requests(server):
    server.context_length = 2048
    items = {f"i{n}": f"Item {n}: " + "the entry states its evidence clearly " * 20 for n in range(8)}
    outcomes, stats, _ = judge([req("many", items)], cfg(server))
    assert sorted(v.item_id for v in outcomes[0].verdicts) == sorted(items) and not outcomes[0].errors
    asked = [[it["id"] for it in r["block"]["items"]] for r in server.requests]
    assert len(asked) > 1 and sorted(sum(asked, [])) == sorted(items)  # each item asked once
    assert all("body_truncated" not in r["block"]["entry"] for r in server.requests)
    assert stats.split_entries == 1 and stats.notes[-1].startswith("1 entry judged in several requests")


@pytest.mark.parametrize(("knob", "why"), [("show_status", "/api/show answered HTTP 404"), ("context_length", None)])
def test_a_server_that_does_not_say_its_context_gets_4096_tokens_and_the_summary_says_so(server, knob, why):
    setattr(server, knob, 404 if knob == "show_status" else None)
    why = why or "/api/show does not give the model's context length"
    outcomes, stats, _ = judge([req("e1", {"a": "one"}), req("long", {"a": "one"}, body=LONG)], cfg(server))
    assert all(o.verdicts for o in outcomes) and options(server)[0]["num_ctx"] == 4096
    assert stats.notes == [f"context length unknown ({why}): 4096 tokens assumed; --llm-context sets it"]
    server.reset()
    _, stats, _ = judge([req("long", {"a": "one"}, body=LONG)], cfg(server, context=3600))
    assert options(server)[0]["num_ctx"] == 3600 and stats.notes == []  # the user said it


# -------------------------------------------------------------------------------------------------
# what the server read and wrote


def test_a_truncated_prompt_is_a_judgment_error_never_a_verdict_nor_cached(server, tmp_path: Path):
    request = req("e1", {"a": "one", "b": "two"}, body=LONG)
    server.truncate_to = 500  # the server kept 500 tokens of it
    config = cfg(server, cache_dir=str(tmp_path))
    outcomes, _, _ = judge([request], config)
    estimate = prompt_tokens(request)
    assert outcomes[0].verdicts == [] and len(server.requests) == 1  # not asked again: it would read as little
    assert [e.message for e in outcomes[0].errors] == 2 * [
        f"prompt truncated by the server (500 of ~{estimate} tokens read): raise --llm-context or shorten the entry"
    ]
    server.truncate_to = None
    outcomes, stats, _ = judge([request], config)
    assert len(outcomes[0].verdicts) == 2 and stats.cache_hits == 0  # the error was not cached


def test_a_prompt_that_filled_the_context_was_truncated_and_a_missing_count_says_nothing(server):
    server.truncate_to = 2048  # all of the context it was given: Ollama cut the prompt to it
    outcomes, _, _ = judge([req("e1", {"a": "one"})], cfg(server))
    assert outcomes[0].errors[0].message.startswith("prompt truncated by the server (2048 of ~")
    server.truncate_to = 0  # Ollama leaves the count out when it had the whole prompt cached
    outcomes, _, _ = judge([req("e1", {"a": "one"})], cfg(server))
    assert outcomes[0].verdicts[0].verdict == "pass"


def _budget(body: dict) -> int:
    return body["options"]["num_predict"] if "options" in body else body["max_tokens"]


@pytest.mark.parametrize("provider", ["ollama", "openai", "anthropic"])
def test_an_answer_cut_by_its_budget_is_asked_again_once_with_twice_the_budget(server, provider):
    server.cut = 1
    outcomes, _, _ = judge([req("e1", {"a": "one", "b": "FAIL"})], cfg(server, provider=provider))
    assert {v.item_id: v.verdict for v in outcomes[0].verdicts} == {"a": "pass", "b": "fail"}
    first = answer_tokens(2, 4096)
    assert [_budget(r["body"]) for r in server.requests] == [first, 2 * first]
    server.reset()
    server.cut = 2
    outcomes, _, _ = judge([req("e2", {"a": "one", "b": "two"})], cfg(server, provider=provider))
    assert [e.message for e in outcomes[0].errors] == 2 * [f"answer cut at {2 * first} tokens by the output limit"]
    assert outcomes[0].verdicts == [] and server.count == 2


def test_an_answer_cut_at_llm_max_output_is_not_asked_again(server):
    server.cut = 1
    outcomes, _, _ = judge([req("e1", {"a": "one"})], cfg(server, max_tokens=300))
    assert server.count == 1 and [_budget(r["body"]) for r in server.requests] == [300]
    assert outcomes[0].errors[0].message == "answer cut at 300 tokens by the output limit: raise --llm-max-output"
    server.reset()
    server.cut = 1
    judge([req("e1", {"a": "one"})], cfg(server, max_tokens=600))  # twice 456 is above the cap: the cap
    assert [_budget(r["body"]) for r in server.requests] == [answer_tokens(1, 600), 600]


def test_an_openai_compatible_server_is_asked_its_context_where_llama_cpp_says_it(server):
    judge([req("long", {"a": "one"}, body=LONG)], cfg(server, provider="openai"))
    assert server.props_gets == 1 and server.count == 1  # 404 (as vLLM answers): nothing held back
    server.reset()
    server.n_ctx = 2048  # llama.cpp: each slot's context
    outcomes, stats, _ = judge([req("long", {"a": "one"}, body=LONG), req("s", {"a": "one"})], cfg(server, "openai"))
    assert all(o.verdicts and not o.errors for o in outcomes) and stats.bodies_truncated == 1
    sent = {r["block"]["entry"]["id"]: r["block"]["entry"] for r in server.requests}
    assert sent["long"]["body_truncated"] is True and "body_truncated" not in sent["s"]
    assert "num_ctx" not in server.requests[0]["body"] and server.props_gets == 2
    server.reset()
    _, stats, _ = judge([req("long", {"a": "one"}, body=LONG)], cfg(server, provider="openai", context=100_000))
    assert stats.bodies_truncated == 1  # --llm-context caps what the server says, never raises it
    openai = JudgeConfig.from_spec("openai:m", env={"OPENAI_API_KEY": "k"})
    assert openai.wire.context_request(openai.base_url or "", "m") is None  # OpenAI itself has no /props


# -------------------------------------------------------------------------------------------------
# base URLs and structured output


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/", "/api"])
def test_a_base_url_of_the_openai_compatible_route_means_the_same_server(server, suffix):
    config = cfg(server, base_url=server.ollama_url + suffix)
    assert config.base_url == server.ollama_url and config.url == server.ollama_url + "/api/chat"
    outcomes, _, _ = judge([req("e1", {"a": "one"})], config)
    assert outcomes[0].verdicts and server.requests[0]["path"] == "/api/chat"
    assert JudgeConfig.from_spec("ollama:m", env={}).base_url == "http://localhost:11434"


def test_a_server_that_refuses_the_schema_is_asked_for_json_then_plain(server):
    server.refuse = {"json_schema"}
    outcomes, stats, _ = judge([req("e1", {"a": "one"}), req("e2", {"a": "two"})], cfg(server, concurrency=1))
    assert all(o.verdicts for o in outcomes)
    assert [r["body"].get("format") for r in server.requests][1:] == ["json", "json"]
    assert stats.output_mode == "json" and stats.fallbacks[0].startswith("json_schema refused (HTTP 400")
    assert "invalid format json_schema: not supported by this server" in stats.fallbacks[0]
    assert '"error"' not in stats.fallbacks[0]  # the text of Ollama's error, not its JSON
    server.reset()
    server.refuse = {"json_schema", "json"}
    _, stats, _ = judge([req("e3", {"a": "one"})], cfg(server))
    assert "format" not in server.requests[-1]["body"] and stats.output_mode == "plain"


# -------------------------------------------------------------------------------------------------
# kblint validate


KB = 'name: judged\nevaluation_rubric:\n  - "Body explains why it matters"\n  - "Claims are FAIL checked"\n'


def entry(title: str, body: str = "Some body.") -> str:
    return f"---\ntitle: {title}\ntype: note\ntags: [t]\n---\n{body}\n"


def test_validate_with_ollama_end_to_end(server, tmp_path: Path):
    kb = write_kb(tmp_path / "judged", KB, {"a.md": entry("Alpha"), "b.md": entry("Beta", LONG)})
    args = ["validate", str(kb), "--llm", "ollama:llama3.1:8b", "--llm-base-url", server.openai_url, "--no-cache"]
    report = run_kblint(*args, "--format", "json", "--fail-on", "never").json
    assert {r["path"] for r in server.requests} == {"/api/chat"} and server.shows == [{"model": "llama3.1:8b"}]
    assert report["judgment"]["evaluator"] == "ollama:llama3.1:8b" and report["judgment"]["calls"] == 2
    assert len(issues_of(report, "llm_rubric_violation")) == 2 and "notes" not in report["judgment"]
    server.reset()
    server.show_status = 404
    text = run_kblint(*args, "--llm-context", "2500", "--fail-on", "never").stdout
    assert max(o["num_ctx"] for o in options(server)) <= 2500  # the long entry fits, cut
    assert "requests sent with the body cut to fit the context (body_truncated)" in text
    server.reset()
    (kb / "kblint.toml").write_text("[llm]\ncontext = 100000\n")
    text = run_kblint(*args, "--fail-on", "never", cwd=kb).stdout
    assert "context length unknown" not in text and server.count == 2  # the configuration said it


def test_the_summary_says_what_context_was_assumed(server, tmp_path: Path):
    kb = write_kb(tmp_path / "judged", KB, {"a.md": entry("Alpha")})
    server.context_length = None
    args = ["validate", str(kb), "--llm", "ollama:m", "--llm-base-url", server.ollama_url, "--no-cache"]
    report = run_kblint(*args, "--format", "json", "--fail-on", "never").json
    note = "context length unknown (/api/show does not give the model's context length): 4096 tokens assumed"
    assert report["judgment"]["notes"] == [f"{note}; --llm-context sets it"]
    assert note in run_kblint(*args, "--fail-on", "never").stdout
