"""A real HTTP server on 127.0.0.1 that plays an LLM provider, for the judgment-tier tests.

It speaks OpenAI Chat Completions (`POST /v1/chat/completions`), Anthropic Messages (`POST /v1/messages`)
and Ollama's native chat (`POST /api/chat`, which it answers 400 unless `stream` is false and `options`
an object, as the judge needs; `POST /api/show` gives the model's context length), reads the single ```json block of the last user message, and decides each item's verdict from its text:
"FAIL" → fail 0.9, "UNSURE" → uncertain 0.5, "LOW" → fail 0.4, "NA" → not_applicable 0.9, else pass 0.95.
A graded item (with "levels") is answered with the level its text names as `LEVEL=id` (confidence 0.4 when
the text also says "LOW", else 0.9; `level_confidence` instead), else its highest level; `bad_level` answers
this level id instead.

Knobs (set them before or between runs): `delay` (seconds per request), `garbage` (how many answers are
not JSON; `ALWAYS` for all), `fail_status` + `fail_count` (answer that status N times first), `style`
("bare" | "fenced" | "prose"), `drop_ids` (ids left out of the first `drop_count` answers), `rename_ids`
(answer these ids under another name), `bad_confidence` + `bad_confidence_count` (the confidence of
every verdict in the first N answers), `slots` (requests generated at once; the others queue, and a
request its client abandoned is still generated), `refuse` (structured-output modes — json_schema,
json_object, tool — answered with a 400 that names the field). Anthropic requests with a forced tool
call are answered with a tool_use block. `slow_ids` + `slow_delay`: the answers for these entry ids
take that long instead. `cut`: the first N answers stop at their output budget (a JSON cut in half,
`finish_reason` / `stop_reason` / `done_reason` saying so). Ollama: `context_length` (what /api/show
says; None: model_info without it), `show_status` (/api/show answers this status instead),
`truncate_to` (prompt_eval_count reported; by default the prompt's characters / 4, at most its
num_ctx, as Ollama cuts a longer prompt). llama.cpp: `n_ctx` (what `GET /props` says; None: 404, as
other OpenAI-compatible servers answer). It records every chat request (path, headers, body, the json
blocks found) in `requests`, the /api/show bodies in `shows`, and the largest number of requests it
served at once.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ALWAYS = 10**9
PROMPT_TOKENS = 100  # usage reported per request
COMPLETION_TOKENS = 7

BLOCK_RE = re.compile(r"```json\n(.*?)\n```", re.S)


def decide(text: str) -> tuple[str, float]:
    if "FAIL" in text:
        return "fail", 0.9
    if "UNSURE" in text:
        return "uncertain", 0.5
    if "LOW" in text:
        return "fail", 0.4
    if "NA" in text:
        return "not_applicable", 0.9
    return "pass", 0.95


class FakeLLM:
    def __init__(self):
        self.delay = 0.0
        self.garbage = 0
        self.fail_status = 500
        self.fail_count = 0
        self.retry_after: str | None = None  # the Retry-After header of the simulated failures
        self.style = "bare"
        self.drop_ids: set[str] = set()
        self.drop_count = 0
        self.rename_ids: set[str] = set()
        self.bad_confidence: object = None  # the confidence of every verdict of the first answers
        self.bad_confidence_count = 0
        self.bad_level: str | None = None  # the level every graded item is answered with
        self.level_confidence: float | None = None  # the confidence of every graded item's level
        self.evidence: str | None = None  # the quote every verdict gives as evidence
        self.slots: int | None = None  # serve this many requests at once (the others queue), as llama.cpp does
        self.refuse: set[str] = set()  # structured-output modes answered with an error naming the field
        self.refuse_status = 400
        self.slow_ids: set[str] = set()  # entries whose answers take slow_delay instead of delay
        self.slow_delay = 0.0
        self.cut = 0  # answers cut at their output budget
        self.fixed_text: str | None = None  # the model's text of every answer, whatever was asked
        self.trickle = False  # answers whose body never ends: a byte now and then, until the client leaves
        self.context_length: int | None = 8192  # Ollama /api/show's model_info
        self.show_status: int | None = None  # /api/show answers this status instead
        self.truncate_to: int | None = None  # Ollama prompt_eval_count
        self.shows: list[dict] = []  # /api/show request bodies
        self.n_ctx: int | None = None  # llama.cpp's GET /props: the context of a slot (None: 404, as vLLM)
        self.props_gets = 0
        self.requests: list[dict] = []
        self.dead = False
        self._stopped = False
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._slot_lock = threading.Lock()
        self._semaphore: threading.Semaphore | None = None
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.fake = self  # type: ignore[attr-defined]
        self.port = self._server.server_address[1]
        # stop() waits until serving looks at its flag again: at this interval a test's end waits 5 ms, not 50
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.005}, daemon=True)

    # base URLs as a user would pass them to --llm-base-url
    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    ollama_url = anthropic_url

    def start(self) -> "FakeLLM":
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._server.shutdown()
        self._server.server_close()

    def kill(self) -> None:
        """Go away mid-run: stop listening, and drop kept-alive connections without answering."""
        self.dead = True
        self.stop()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def count(self) -> int:
        return len(self.requests)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.shows.clear()
            self.max_in_flight = 0

    def sent_item_ids(self) -> list[list[str]]:
        """The item ids of each request's block, in order."""
        return [[it["id"] for it in r["block"]["items"]] for r in self.requests if r.get("block")]

    # -- called from handler threads ------------------------------------------------------------

    def _take(self, attr: str) -> bool:
        with self._lock:
            n = getattr(self, attr)
            if n > 0:
                setattr(self, attr, n - 1)
                return True
            return False

    def _generate(self, seconds: float) -> None:
        """Take DELAY seconds, in one of SLOTS; a request whose client gave up is still generated to
        its end, as real servers do, and the requests behind it wait."""
        if self.slots is None:
            time.sleep(seconds)
            return
        with self._slot_lock:
            if self._semaphore is None:
                self._semaphore = threading.Semaphore(self.slots)
            semaphore = self._semaphore
        with semaphore:
            time.sleep(seconds)

    def _record(self, path: str, headers: dict, raw: bytes, query: str) -> dict:
        """The request as the tests read it: its body, the last user message and the JSON block in it."""
        record: dict = {"path": path, "query": query, "headers": headers, "raw": raw.decode("utf-8", "replace")}
        with self._lock:
            self.requests.append(record)
        body = json.loads(raw)
        record["body"] = body
        messages = body.get("messages") or []
        users = [m for m in messages if m.get("role") == "user"]
        last = users[-1]["content"] if users else ""
        if isinstance(last, list):
            last = "".join(p.get("text", "") for p in last if isinstance(p, dict))
        record["last_user"] = last
        blocks = BLOCK_RE.findall(last)
        record["json_fences"] = last.count("```json")
        record["block"] = json.loads(blocks[0]) if len(blocks) == 1 else None
        return record

    def answer(self, path: str, headers: dict, raw: bytes, query: str = "") -> tuple[int, dict | str]:
        record = self._record(path, headers, raw, query)
        body = record["body"]
        entry_id = (record["block"] or {}).get("entry", {}).get("id")
        if self.delay or entry_id in self.slow_ids:
            self._generate(self.slow_delay if entry_id in self.slow_ids else self.delay)
        if self._take("fail_count"):
            return self.fail_status, {"error": {"message": f"simulated {self.fail_status}"}}
        mode = _mode_of(body)
        record["mode"] = mode
        if path == "/api/chat" and _ollama_problem(body):
            return 400, {"error": _ollama_problem(body)}
        if mode in self.refuse:
            if path == "/api/chat":  # Ollama's errors are a string
                return self.refuse_status, {"error": f"invalid format {mode}: not supported by this server"}
            field = "tools" if mode == "tool" else "response_format"
            return self.refuse_status, {
                "error": {"message": f"'{field}' of type {mode} is not supported by this server"}
            }
        text = "Sorry, I cannot help with that {not json" if self._take("garbage") else self._verdicts_text(record)
        text = self.fixed_text if self.fixed_text is not None else text
        cut = self._take("cut")
        if cut:
            text = text[: len(text) // 2]
        if path == "/api/chat":
            return 200, _ollama_reply(body, text, cut, self.truncate_to)
        if path.endswith("/messages"):
            return 200, _anthropic_reply(body, text, cut, mode)
        return 200, _openai_reply(body, text, cut)

    def _verdicts_text(self, record: dict) -> str:
        """The model's answer to the items of the request's block, in the configured style."""
        items = record["block"]["items"] if record["block"] else []
        drop = self._take("drop_count")
        bad_confidence = self._take("bad_confidence_count")
        verdicts = []
        for it in items:
            if drop and it["id"] in self.drop_ids:
                continue
            vid = it["id"] + "-renamed" if it["id"] in self.rename_ids else it["id"]
            if it.get("levels"):
                verdicts.append({"id": vid, **self._level(it)})
                continue
            verdict, conf = decide(it["text"])
            shown = self.bad_confidence if bad_confidence else conf
            verdicts.append({"id": vid, "verdict": verdict, "confidence": shown, "reason": f"judged {it['id']}"})
            if self.evidence is not None:
                verdicts[-1]["evidence"] = self.evidence
        obj = json.dumps({"verdicts": verdicts}, indent=2)
        return {
            "bare": obj,
            "fenced": f"```json\n{obj}\n```",
            "prose": f"Here is my review.\n\n```json\n{obj}\n```\nHope this helps.",
        }[self.style]

    def show(self, raw: bytes) -> tuple[int, dict]:
        """/api/show: the model's details, with its context length in model_info."""
        body = json.loads(raw)
        with self._lock:
            self.shows.append(body)
        if self.show_status is not None:
            return self.show_status, {"error": f"model '{body.get('model')}' not found"}
        info: dict = {"general.architecture": "llama", "llama.embedding_length": 4096}
        if self.context_length is not None:
            info["llama.context_length"] = self.context_length
        return 200, {"modelfile": "# fake", "details": {"family": "llama"}, "model_info": info}

    def _level(self, item: dict) -> dict:
        named = re.search(r"LEVEL=([\w-]+)", item["text"])
        level = self.bad_level or (named.group(1) if named else item["levels"][-1]["id"])
        confidence = 0.4 if "LOW" in item["text"] else 0.9
        if self.level_confidence is not None:
            confidence = self.level_confidence
        return {"level": level, "confidence": confidence, "reason": f"judged {item['id']} {level}"}


def _ollama_problem(body: dict) -> str | None:
    """What is wrong with an /api/chat request for a judge that reads one JSON answer."""
    if body.get("stream") is not False:
        return "stream must be false (the fake does not stream)"
    if not isinstance(body.get("options"), dict) or not isinstance(body.get("messages"), list):
        return "options must be an object and messages a list"
    return None


def _ollama_reply(body: dict, text: str, cut: bool, truncate_to: int | None) -> dict:
    options = body["options"]
    read = sum(len(m.get("content", "")) for m in body["messages"]) // 4
    if isinstance(options.get("num_ctx"), int):
        read = min(read, options["num_ctx"])  # Ollama cuts a longer prompt to the context
    return {
        "model": body.get("model"),
        "created_at": "2025-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": text},
        "done": True,
        "done_reason": "length" if cut else "stop",
        "prompt_eval_count": read if truncate_to is None else truncate_to,
        "eval_count": options.get("num_predict", COMPLETION_TOKENS) if cut else COMPLETION_TOKENS,
    }


def _anthropic_reply(body: dict, text: str, cut: bool, mode: str) -> dict:
    content: list[dict] = [{"type": "text", "text": text}]
    if mode == "tool" and not cut:  # the forced tool call: its input is the answer (garbage stays text)
        with contextlib.suppress(ValueError):
            content = [{"type": "tool_use", "id": "toolu_1", "name": "record_verdicts", "input": json.loads(text)}]
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": content,
        "stop_reason": "max_tokens" if cut else "tool_use" if mode == "tool" else "end_turn",
        "usage": {"input_tokens": PROMPT_TOKENS, "output_tokens": body["max_tokens"] if cut else COMPLETION_TOKENS},
    }


def _openai_reply(body: dict, text: str, cut: bool) -> dict:
    completion = body["max_tokens"] if cut else COMPLETION_TOKENS
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": body.get("model"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "length" if cut else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": PROMPT_TOKENS,
            "completion_tokens": completion,
            "total_tokens": PROMPT_TOKENS + completion,
        },
    }


def _mode_of(body: dict) -> str:
    """How a request asks for structured output: json_schema, json_object, tool, json (Ollama), or plain."""
    if body.get("tools"):
        return "tool"
    if "format" in body:  # Ollama: a JSON Schema, or "json"
        return "json_schema" if isinstance(body["format"], dict) else "json"
    response_format = body.get("response_format")
    return response_format.get("type", "plain") if isinstance(response_format, dict) else "plain"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        fake: FakeLLM = self.server.fake  # type: ignore[attr-defined]
        if fake.dead:
            self.close_connection = True
            return
        route = self.path.partition("?")[0]
        with fake._lock:
            fake.props_gets += route == "/props"
        if route == "/props" and fake.n_ctx is not None:
            self._reply(200, {"default_generation_settings": {"n_ctx": fake.n_ctx}, "total_slots": 1})
        else:
            self._reply(404, {"error": {"message": f"no route {route}"}})

    def _reply(self, status: int, payload: object) -> None:
        if self.server.fake.trickle:  # type: ignore[attr-defined]
            self._trickle()
            return
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("content-type", "application/json")
        retry_after = self.server.fake.retry_after  # type: ignore[attr-defined]
        if status >= 400 and retry_after is not None:
            self.send_header("retry-after", retry_after)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting: its loss
            self.close_connection = True

    def _trickle(self) -> None:
        """Headers, then a body of a million bytes sent a byte at a time, slowly: each read is quick,
        the whole never comes."""
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", "1000000")
        self.end_headers()
        try:
            while not self.server.fake._stopped:  # type: ignore[attr-defined]
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.02)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def do_POST(self):
        fake: FakeLLM = self.server.fake  # type: ignore[attr-defined]
        if fake.dead:
            self.close_connection = True
            return
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        with fake._lock:
            fake.in_flight += 1
            fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
        route, _, query = self.path.partition("?")
        try:
            if route == "/api/show":
                status, payload = fake.show(raw)
            elif route not in ("/v1/chat/completions", "/v1/messages", "/api/chat"):
                status, payload = 404, {"error": {"message": f"no route {route}"}}
            else:
                status, payload = fake.answer(route, {k.lower(): v for k, v in self.headers.items()}, raw, query)
        finally:
            with fake._lock:
                fake.in_flight -= 1
        self._reply(status, payload)


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
