"""Running the judgment tier: cache look-up, then one HTTP request per entry, N in flight (SPEC §7).

httpx is imported only when a request is actually sent (SPEC §13: start-up stays small).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from .cache import VerdictCache, item_key
from .context import DEFAULT_CONTEXT, Window, model_context, truncation, window_of
from .model import (
    ItemError,
    JudgeConfig,
    JudgeItem,
    JudgeOutcome,
    JudgeRequest,
    JudgeStats,
    JudgeUnavailable,
    Verdict,
    shown_url,
)
from .prompt import (
    SYSTEM_PROMPT,
    answer_tokens,
    canonical,
    estimate_tokens,
    parse_answer,
    prompt_entry,
    quoted_in,
    user_message,
    verdict_schema,
)
from .providers import Provider, Question

if TYPE_CHECKING:
    import ssl

    import httpx

    from .providers import Answer

log = logging.getLogger("kblint.judge")

RETRY_STATUS = frozenset({408, 409, 425, 429})
MAX_FAILED_REPLIES = 6  # server errors, refusals for load (429) or timeouts in a row: the provider is unavailable
_REFUSED = frozenset({HTTPStatus.UNAUTHORIZED, HTTPStatus.FORBIDDEN})  # the key is wrong: no request will pass
_SNIPPET_CHARS = 200  # of an error response, quoted in the message


@dataclass
class _Attempt:
    """What one request gave: a final result for the caller, or an error after which trying again may help."""

    final: tuple[str, str] | None = None
    error: str = ""
    retry_after: float | None = None  # seconds, when the provider said how long to wait
    connect_detail: str | None = None  # why the connection could not be made, when it could not
    server_error: bool = False  # the provider (or a gateway before it) answered 5xx, or 429
    refused_mode: bool = False  # a 4xx that names the structured-output part of the request
    timed_out: bool = False  # no answer within the timeout
    answer: Answer | None = None  # what a 2xx response carried


Progress = Callable[[int, int], None]  # (entries done, entries in all)
Busy = Callable[[str], None]  # told "N in flight, T tokens" as entries finish


@dataclass
class _Work:
    """One entry's judgment: what the cache answered, what is still to be asked, and what came back."""

    index: int
    request: JudgeRequest
    items: list[JudgeItem]  # de-duplicated by id, in the caller's order
    sent_entry: dict[str, Any]
    guidelines: dict[str, Any]
    keys: dict[str, str] = field(default_factory=dict)
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    errors: dict[str, ItemError] = field(default_factory=dict)
    not_evaluated: list[str] = field(default_factory=list)
    not_evaluated_reason: str | None = None

    @property
    def pending(self) -> list[JudgeItem]:
        return [it for it in self.items if it.id not in self.verdicts]

    def outcome(self) -> JudgeOutcome:
        return JudgeOutcome(
            key=self.request.key,
            verdicts=[self.verdicts[it.id] for it in self.items if it.id in self.verdicts],
            errors=[self.errors[it.id] for it in self.items if it.id in self.errors],
            not_evaluated=list(self.not_evaluated),
            not_evaluated_reason=self.not_evaluated_reason,
        )


def _plan(
    requests: Sequence[JudgeRequest], config: JudgeConfig, cache: VerdictCache | None, stats: JudgeStats | None
) -> list[_Work]:
    works = []
    for i, req in enumerate(requests):
        seen: set[str] = set()
        items = []
        for it in req.items:
            if it.id not in seen:
                seen.add(it.id)
                items.append(it)
        entry = dict(req.entry)
        guidelines = req.guidelines or {}
        w = _Work(
            index=i,
            request=req,
            items=items,
            sent_entry=prompt_entry(entry, config.max_body_chars),
            guidelines=guidelines,
        )
        entry_canon, guidelines_canon = canonical(entry), canonical(guidelines)
        for it in items:
            w.keys[it.id] = key = item_key(config, entry_canon, guidelines_canon, it.cache_text)
            if cache is not None:
                hit = cache.get(key, it.id)
                if hit is not None:
                    w.verdicts[it.id] = hit
                    if stats is not None:
                        stats.cache_hits += 1
        works.append(w)
    return works


def _redact(text: str, config: JudgeConfig) -> str:
    if config.api_key:
        text = text.replace(config.api_key, "***")
    return text


class _Slots:
    """At most N entries in conversation with the provider. An entry holds its slot while it is asked and
    asked again; during a backoff sleep it gives the slot up, and takes it back before entries that have
    not started yet (so a started entry finishes first, and its retry is not starved by new work).

    The slots start at one and grow in rounds: a round starts as many entries as there are slots,
    and only once all of them have finished does the next round start, with one slot more, up to
    N (after a round of N, entries start as slots come free), and only while that many answers
    could come one after another within the timeout. A timeout halves the slots, and they grow no
    more. A server that generates one answer at a time (llama.cpp, Ollama)
    queues what it is sent at once, and keeps generating an answer whose client gave up: asking
    it more at once than it serves only makes requests time out behind each other; a round that
    finds this out costs one abandoned answer at most."""

    def __init__(self, n: int, timeout: float):
        self.limit = n
        self.timeout = timeout
        self.fastest: float | None = None  # the quickest answer of the current round, in seconds
        self.size = 1
        self.free = 1
        self.owed = 0  # slots to take away as they come back (after shrink)
        self.first: deque = deque()  # started entries waiting to be asked again
        self.waiters: deque = deque()  # entries waiting to start
        self.probing = True  # in rounds, until a round of N has gone well or a request timed out
        self.quota = 1  # entries the current round may still start
        self.active = 0  # entries of the current round not finished

    async def acquire(self, priority: bool = False) -> None:
        """A slot for an entry: PRIORITY for one asked again, else to start one."""
        if priority and self.free > 0:
            self.free -= 1
            return
        if not priority and self._may_start():
            self._start()
            return
        fut = asyncio.get_running_loop().create_future()
        (self.first if priority else self.waiters).append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release(finished=not priority)
            raise

    def release(self, finished: bool = False) -> None:
        """A slot back: FINISHED when its entry is done, else while it backs off."""
        if self.owed:
            self.owed -= 1
        else:
            self.free += 1
        if finished:
            self.finish()
        self._admit()

    def finish(self) -> None:
        """An entry is done: the last one of a round starts the next round, one slot larger."""
        if not self.probing:
            return
        self.active -= 1
        if self.active > 0 or self.quota > 0:
            return
        if self.size < self.limit and self._room_for_one_more():
            self.size += 1
            self.free += 1
            self.quota = self.size
            self.fastest = None
        else:
            self.probing = False  # from now on, this many at a time
        self._admit()

    def answered(self, seconds: float) -> None:
        """An answer took SECONDS from its request."""
        self.fastest = seconds if self.fastest is None else min(self.fastest, seconds)

    def _room_for_one_more(self) -> bool:
        """Whether one more at once could all be answered within the timeout even by a server that
        answers one at a time (as fast as the quickest answer of the round; no answer: no growth)."""
        return self.fastest is not None and (self.size + 1) * self.fastest <= self.timeout

    def shrink(self) -> None:
        """A request timed out: half the slots from now on (at least one), for the rest of the run."""
        self.probing = False
        fewer = self.size - max(1, self.size // 2)
        self.size -= fewer
        for _ in range(fewer):
            if self.free > 0:
                self.free -= 1
            else:
                self.owed += 1
        self._admit()

    def _may_start(self) -> bool:
        return self.free > 0 and not self.first and (not self.probing or self.quota > 0)

    def _start(self) -> None:
        self.free -= 1
        if self.probing:
            self.quota -= 1
            self.active += 1

    def _admit(self) -> None:
        """Hand the free slots over: to entries waiting to be asked again first, then to new ones."""
        while self.first and self.free > 0:
            fut = self.first.popleft()
            if not fut.done():
                self.free -= 1
                fut.set_result(None)
        while self.waiters and self._may_start():
            fut = self.waiters.popleft()
            if not fut.done():
                self._start()
                fut.set_result(None)


class _Hold:
    """One entry's claim on the slots, from its start to its end."""

    def __init__(self, slots: _Slots):
        self.slots = slots
        self.held = False
        self.started = False

    async def take(self, priority: bool = False) -> None:
        await self.slots.acquire(priority)
        self.held = self.started = True

    def give(self) -> None:
        """The slot back while the entry backs off."""
        if self.held:
            self.held = False
            self.slots.release()

    def done(self) -> None:
        """The entry is finished (with or without its slot at that moment)."""
        if self.held:
            self.held = False
            self.slots.release(finished=True)
        elif self.started:
            self.slots.finish()


class _Runner:
    def __init__(
        self, config: JudgeConfig, cache: VerdictCache | None, stats: JudgeStats, total: int, progress: Progress | None
    ):
        self.config = config
        self.cache = cache
        self.stats = stats
        self.total = total
        self.done = 0
        self.progress = progress
        self.busy: Busy | None = None
        self.slots = _Slots(config.concurrency, config.timeout)
        self.unavailable: str | None = None
        self.reached = False  # some HTTP response came back from the provider
        self.succeeded = False  # some 2xx came back
        self.budget_used = 0
        # Entries that used up their tries on refused connections, with no answer since: after a few,
        # the provider has gone away, and the rest of the run stops asking (no hammering).
        self.connect_streak = 0
        self.max_connect_streak = max(3, config.concurrency)
        # Replies in a row that were server errors (502/503 from a gateway whose model is gone) or
        # timeouts (a server that no longer answers), with no answer since: after MAX_FAILED_REPLIES
        # the provider is unavailable, whatever the number of entries under way.
        self.failed_replies = 0
        self.url = config.url
        self.shown = shown_url(config.url)  # the URL in messages: without its credentials
        self.mode = config.output_mode or config.wire.output_modes[0]  # stats.output_mode at the end
        self.window = Window()  # the context of the requests: prepare() sets it before the first

    async def prepare(self, client: httpx.AsyncClient, works: list[_Work]) -> None:
        """Before the first request: the model's context length, asked once per run where the
        server tells it, and the context size of the run's requests."""
        c = self.config
        wire = c.wire
        request = wire.context_request(c.base_url or "", c.model)
        model, why = None, None
        if request is not None and c.max_calls != 0:
            model, why = await model_context(client, wire, request, wire.headers(c.api_key))
        self.window = window_of(model, c.context, wire.sets_context)
        if self.window.source == "assumed" and why:
            self.stats.notes.append(
                f"context length unknown ({why}): {DEFAULT_CONTEXT} tokens assumed; --llm-context sets it"
            )
        if wire.sets_context:
            needs = []
            for w in works:
                user = user_message(w.sent_entry, w.pending, w.guidelines)
                needs.append((estimate_tokens(SYSTEM_PROMPT, user), answer_tokens(len(w.pending), c.max_tokens)))
            self.window.plan(needs)

    # -- one entry ----------------------------------------------------------------------------------

    def _finish(self, w: _Work) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.total)
        if self.busy is not None:
            in_flight = self.slots.size - self.slots.free
            tokens = self.stats.prompt_tokens + self.stats.completion_tokens
            self.busy(f"{in_flight} in flight, {tokens:,} tokens")

    def _skip(self, w: _Work, items: list[JudgeItem], reason: str) -> None:
        w.not_evaluated.extend(it.id for it in items)
        w.not_evaluated_reason = reason

    def _fail(self, w: _Work, items: list[JudgeItem], message: str) -> None:
        for it in items:
            w.errors[it.id] = ItemError(it.id, message)

    async def judge_entry(self, client: httpx.AsyncClient, w: _Work) -> None:
        hold = _Hold(self.slots)
        try:
            await hold.take()
            for items, sent in self._groups(w, w.pending):  # one group unless the context is too small
                if not await self._judge_group(client, hold, w, items, sent):
                    return
        finally:
            hold.done()
            self._finish(w)

    def _groups(self, w: _Work, items: list[JudgeItem]) -> list[tuple[list[JudgeItem], dict[str, Any]]]:
        """ITEMS in groups whose prompts fit the context, in order: all at once when they fit, else
        as many at a time as fit; an item that does not fit alone is sent with the body cut to fit."""
        if self.window.limit is None or self._fits(w, items, w.sent_entry):
            return [(items, w.sent_entry)]
        groups: list[list[JudgeItem]] = []
        for it in items:
            if groups and self._fits(w, [*groups[-1], it], w.sent_entry):
                groups[-1].append(it)
            else:
                groups.append([it])
        self.stats.split_entries += 1
        return [
            (group, w.sent_entry if self._fits(w, group, w.sent_entry) else self._shortened(w, group))
            for group in groups
        ]

    def _fits(self, w: _Work, items: list[JudgeItem], sent: dict[str, Any]) -> bool:
        prompt = estimate_tokens(SYSTEM_PROMPT, user_message(sent, items, w.guidelines))
        return self.window.overflow(prompt, answer_tokens(len(items), self.config.max_tokens)) is None

    def _shortened(self, w: _Work, items: list[JudgeItem]) -> dict[str, Any]:
        """The entry as sent with its body cut until ITEMS' prompt fits (the block says so); as sent
        when even no body would not fit (the request then reports why it was not sent)."""
        body = str(w.request.entry.get("body") or "")
        low, high = 0, min(len(body), self.config.max_body_chars)
        while low < high:  # the longest body that fits
            middle = (low + high + 1) // 2
            if self._fits(w, items, prompt_entry(dict(w.request.entry), middle)):
                low = middle
            else:
                high = middle - 1
        shortened = prompt_entry(dict(w.request.entry), low)
        if not self._fits(w, items, shortened):
            return w.sent_entry
        self.stats.bodies_truncated += 1
        return shortened

    async def _judge_group(
        self, client: httpx.AsyncClient, hold: _Hold, w: _Work, items: list[JudgeItem], sent: dict[str, Any]
    ) -> bool:
        """Ask for ITEMS' verdicts (an invalid answer is asked again once, for the unanswered
        items); False when the run must not ask for the entry's other items (budget, provider)."""
        note = None
        for answer_no in (1, 2):
            kind, value = await self._ask(client, hold, w, items, note, sent)
            if kind == "budget":
                if answer_no == 1:
                    self._skip(w, items, value)
                else:
                    self._fail(
                        w, items, f"invalid answer from {self.config.evaluator} ({note}); not asked again: {value}"
                    )
                return False
            if kind in ("skip", "error"):
                (self._skip if kind == "skip" else self._fail)(w, items, value)
                return kind == "error"
            items, note = self._take_answer(w, items, value)
            if not items:
                return True
            log.debug("entry %s: invalid answer (%s)", w.request.key, note)
        self._fail(w, items, f"{self.config.evaluator} gave no valid verdict after 2 answers: {note}")
        return True

    def _take_answer(self, w: _Work, items: list[JudgeItem], text: str) -> tuple[list[JudgeItem], str | None]:
        """Keep (and cache) the verdicts an answer gives; the items it left unanswered, and why."""
        levels = {it.id: it.level_ids for it in items if it.levels}
        got, problem = parse_answer(text, [it.id for it in items], levels, str(w.request.entry.get("body") or ""))
        self.stats.count_answer(problem is None, [answer.verdict for answer in got.values()])
        for it in items:
            if it.id in got:
                a = got[it.id]
                evidence = a.evidence if quoted_in(a.evidence, w.request.entry) else ""
                v = Verdict(it.id, a.verdict, a.confidence, a.reason, cached=False, level=a.level, evidence=evidence)
                w.verdicts[it.id] = v
                if self.cache is not None:
                    self.cache.put(w.keys[it.id], v, self.config.evaluator)
        return [it for it in items if it.id not in got], problem

    async def _ask(
        self,
        client: httpx.AsyncClient,
        hold: _Hold,
        w: _Work,
        items: list[JudgeItem],
        note: str | None,
        sent: dict[str, Any],
    ) -> tuple[str, str]:
        """Ask for ITEMS' verdicts: ("ok", answer text) | ("error", message) | ("skip", reason: provider
        unavailable) | ("budget", reason: --max-llm-calls reached before the first attempt). An answer cut
        by its output budget is asked again once with twice the budget (at most --llm-max-output)."""
        c = self.config
        user = user_message(sent, items, w.guidelines, note)
        prompt, user_tokens = estimate_tokens(SYSTEM_PROMPT, user), estimate_tokens(user)
        budget = answer_tokens(len(items), c.max_tokens)
        schema = verdict_schema(items)
        while True:
            too_long = self.window.overflow(prompt, budget)
            if too_long is not None:  # even one item with a cut body does not fit (_groups)
                return "error", too_long
            context = self.window.request_size(prompt, budget) if c.wire.sets_context else None
            ask = Question(user, budget, schema, prompt, user_tokens, context)
            kind, value = await self._ask_once(client, hold, w, ask)
            if kind != "cut":
                return kind, value
            larger = min(c.max_tokens, 2 * budget, self.window.room(prompt) or c.max_tokens)
            if larger == budget or budget > answer_tokens(len(items), c.max_tokens):
                hint = ": raise --llm-max-output" if budget == c.max_tokens else ""
                return "error", f"answer cut at {value} tokens by the output limit{hint}"
            log.debug("entry %s: answer cut at %s tokens; asked again with %d", w.request.key, value, larger)
            budget = larger

    async def _ask_once(self, client: httpx.AsyncClient, hold: _Hold, w: _Work, ask: Question) -> tuple[str, str]:
        """Send one request, with retries: what _ask returns, or ("cut", tokens) for an answer cut by
        its output budget."""
        c = self.config
        headers = c.wire.headers(c.api_key)
        last_error = "no attempt made"
        timed_out = False
        for attempt in range(1, c.tries + 1):
            refused = self._refusal(attempt, last_error)
            if refused is not None:
                return refused
            self.budget_used += 1
            sent = await self._send_in_a_mode(client, ask, headers)
            if sent.final is not None:
                return self._checked(ask, sent.final, sent.answer)
            last_error = sent.error
            log.debug("entry %s: attempt %d failed: %s", w.request.key, attempt, last_error)
            if sent.server_error or sent.timed_out:
                self._failed_reply(last_error)
            if sent.timed_out and timed_out:  # a third would pile up behind the abandoned answers
                await c.sleep(c.timeout)  # slot kept: the next entry is not queued behind this one's answer
                return "error", f"{last_error}, twice (not tried again)"
            timed_out = timed_out or sent.timed_out
            if attempt < c.tries:
                await self._back_off(hold, attempt, sent)
            elif sent.connect_detail is not None:
                self._connect_failed(sent.connect_detail)
                if not self.reached:
                    return "skip", f"provider unavailable: {self.unavailable}"
        return "error", f"{last_error} (after {c.tries} tries)"

    def _checked(self, ask: Question, final: tuple[str, str], answer: Answer | None) -> tuple[str, str]:
        """FINAL, unless its answer was cut by the output budget or read from a truncated prompt."""
        if answer is None:
            return final
        if answer.cut:
            return "cut", str(answer.completion_tokens or ask.max_tokens)
        if self.config.wire.sets_context:
            truncated = truncation(answer.prompt_tokens, ask.prompt_tokens, ask.user_tokens, ask.context)
            if truncated is not None:
                return "error", truncated
        return final

    async def _back_off(self, hold: _Hold, attempt: int, sent: _Attempt) -> None:
        """Wait before trying again. Others may talk to the provider meanwhile, except after a
        timeout: the server is likely still generating the abandoned answer, and a request sent
        now would queue behind it; the wait is then at least the timeout, slot kept."""
        c = self.config
        delay = self._delay(attempt, sent.retry_after)
        if sent.timed_out:
            await c.sleep(max(delay, c.timeout))
            return
        hold.give()
        await c.sleep(delay)
        await hold.take(priority=True)

    def _refusal(self, attempt: int, last_error: str) -> tuple[str, str] | None:
        """Why attempt ATTEMPT is not made, if it is not: the provider is unavailable or the budget spent."""
        c = self.config
        if self.unavailable is not None:
            return "skip", f"provider unavailable: {self.unavailable}"
        if c.max_calls is not None and self.budget_used >= c.max_calls:
            budget = f"budget exhausted (--max-llm-calls {c.max_calls})"
            return ("budget", budget) if attempt == 1 else ("error", f"{last_error}; not tried again: {budget}")
        return None

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Exponential back-off, or longer when the provider asks for it (up to max_retry_delay)."""
        c = self.config
        delay = c.retry_base_delay * (2 ** (attempt - 1))
        return delay if retry_after is None else max(delay, min(retry_after, c.max_retry_delay))

    async def _send_in_a_mode(self, client: httpx.AsyncClient, ask: Question, headers: dict[str, str]) -> _Attempt:
        """Send ASK in the run's structured-output mode; when the server refuses that mode, in the
        next one (once per run: later requests start from there)."""
        c = self.config
        while True:
            mode = self.mode
            body = c.wire.body(c.model, SYSTEM_PROMPT, ask, mode)
            sent = await self._send(client, json.dumps(body).encode("utf-8"), headers)
            if not sent.refused_mode or not self._fall_back(mode, sent.error):
                return sent
            if c.max_calls is not None and self.budget_used >= c.max_calls:
                return _Attempt(final=("error", f"{sent.error}; not asked again: budget exhausted (--max-llm-calls)"))
            self.budget_used += 1

    def _fall_back(self, mode: str, why: str) -> bool:
        """The server refused MODE: the run goes on in the next mode (False when none is left)."""
        modes = self.config.wire.output_modes
        if self.mode == mode:
            if modes.index(mode) + 1 >= len(modes):
                return False
            self.mode = modes[modes.index(mode) + 1]
            self.stats.fallbacks.append(f"{mode} refused ({why})")
            log.debug("structured output %s refused; now %s", mode, self.mode)
        return True

    async def _send(self, client: httpx.AsyncClient, body: bytes, headers: dict[str, str]) -> _Attempt:
        import httpx

        sent = time.monotonic()
        try:
            # httpx's timeout bounds each read; a body that trickles in forever is bounded here
            resp = await asyncio.wait_for(_post(client, self.url, body, headers), self.config.timeout)
        except _TooLarge:
            self.reached = True
            too_large = f"an answer from {self.shown} of more than {MAX_ANSWER_BYTES:,} bytes: not read"
            return _Attempt(final=("error", too_large))
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            self.budget_used -= 1  # nothing reached the provider
            detail = _describe(exc)
            return _Attempt(error=f"cannot connect to {self.shown}: {detail}", connect_detail=detail)
        except (httpx.TimeoutException, asyncio.TimeoutError):
            # the server may go on with the abandoned request: ask it less at once from now on
            self.stats.timeouts += 1
            self.slots.shrink()
            return _Attempt(error=f"no answer from {self.shown} within {self.config.timeout:g} s", timed_out=True)
        except httpx.HTTPError as exc:  # dropped connections, protocol errors
            return _Attempt(error=f"network error talking to {self.shown}: {_describe(exc)}")
        self.reached = True
        self.connect_streak = 0
        if resp.is_success:
            self.slots.answered(time.monotonic() - sent)
        return self._response(resp)

    def _response(self, resp: httpx.Response) -> _Attempt:
        """The answer of a response, or the error it reports and whether trying again may help."""
        c = self.config
        status = resp.status_code
        if resp.is_success:
            try:
                data = resp.json()
            except (ValueError, RecursionError):  # not JSON, or nested past what the decoder takes
                data = None
            answer = c.wire.read(data)
            self.stats.prompt_tokens += answer.prompt_tokens
            self.stats.completion_tokens += answer.completion_tokens
            self.succeeded = True
            self.failed_replies = 0
            return _Attempt(final=("ok", answer.text), answer=answer)
        detail = _redact(_snippet(resp, c.wire), c)
        error = f"HTTP {status} from {self.shown}" + (f": {detail}" if detail else "")
        if status in _REFUSED or (status == HTTPStatus.NOT_FOUND and not self.succeeded):
            self._mark_unavailable(f"HTTP {status}" + (f": {detail}" if detail else ""))
            return _Attempt(final=("skip", f"provider unavailable: {self.unavailable}"))
        if self.mode != "plain" and any(f in detail.lower() for f in c.wire.output_fields):
            # the server refused the structured-output part of the request (some answer 500 for it)
            return _Attempt(error=error, refused_mode=True)
        if status not in RETRY_STATUS and status < HTTPStatus.INTERNAL_SERVER_ERROR:
            return _Attempt(final=("error", error))
        # a 429 that never ends (a spent quota answers so too) counts as a failed reply, as a 5xx does
        failed = status >= HTTPStatus.INTERNAL_SERVER_ERROR or status == HTTPStatus.TOO_MANY_REQUESTS
        return _Attempt(error=error, retry_after=_retry_after(resp), server_error=failed)

    def _failed_reply(self, error: str) -> None:
        """A server error or a timeout: after a few in a row, the provider is unavailable (the rest
        of the run does not ask it)."""
        self.failed_replies += 1
        if self.failed_replies >= MAX_FAILED_REPLIES:
            self._mark_unavailable(f"{error} ({self.failed_replies} requests in a row failed)")

    def _connect_failed(self, detail: str) -> None:
        """The last try of a request could not connect: the provider is unavailable when it never answered
        or when too many requests in a row could not reach it."""
        base_url = shown_url(self.config.base_url or "")
        if not self.reached:
            self._mark_unavailable(f"cannot connect to {base_url}: {detail}")
            return
        self.connect_streak += 1
        if self.connect_streak >= self.max_connect_streak:
            self._mark_unavailable(
                f"cannot connect to {base_url} any more ({self.connect_streak} requests in a row failed): {detail}"
            )

    def _mark_unavailable(self, reason: str) -> None:
        if self.unavailable is None:
            self.unavailable = reason
            log.debug("provider %s unavailable: %s", self.config.provider, reason)


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


MAX_ANSWER_BYTES = 16 * 1024 * 1024  # far past any output budget: what is more is no answer


class _TooLarge(Exception):
    """An answer longer than MAX_ANSWER_BYTES once decoded (a gzip body may be a small one)."""


async def _post(client: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    """The response to a POST, its body read up to MAX_ANSWER_BYTES (decoded); _TooLarge past it."""
    import httpx

    async with client.stream("POST", url, content=body, headers=headers) as resp:
        chunks: list[bytes] = []
        size = 0
        async for chunk in resp.aiter_bytes():
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise _TooLarge
            chunks.append(chunk)
    # the body as read, decoded already: the headers that say how it was sent do not apply to it
    kept = [(k, v) for k, v in resp.headers.items() if k.lower() not in _SENT_AS]
    return httpx.Response(resp.status_code, headers=kept, content=b"".join(chunks), request=resp.request)


_SENT_AS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


def _snippet(resp: httpx.Response, wire: Provider) -> str:
    """The start of what an error response says: its message in the provider's form, else its text."""
    try:
        text = wire.error_text(resp.json()) or resp.text
    except (ValueError, RecursionError):
        text = resp.text
    text = " ".join(text.split())
    return text[:_SNIPPET_CHARS] + ("…" if len(text) > _SNIPPET_CHARS else "")


def _retry_after(resp: httpx.Response) -> float | None:
    """The seconds a Retry-After header asks for: given as seconds, or as the HTTP date to wait until."""
    value = resp.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils
    from datetime import datetime, timezone

    try:
        until = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: a zone offset no clock has
        return None
    if until.tzinfo is None:  # `-0000`: no zone said; HTTP dates are in GMT
        until = until.replace(tzinfo=timezone.utc)
    return max(0.0, (until - datetime.now(timezone.utc)).total_seconds())


async def _run(works: list[_Work], runner: _Runner) -> None:
    import httpx

    c = runner.config
    limits = httpx.Limits(max_connections=c.concurrency, max_keepalive_connections=c.concurrency)
    timeout = httpx.Timeout(c.timeout, connect=min(c.timeout, 10.0))
    async with httpx.AsyncClient(limits=limits, timeout=timeout, verify=_tls_context()) as client:
        await runner.prepare(client, works)
        await asyncio.gather(*(runner.judge_entry(client, w) for w in works))


_THREAD = threading.local()


def _tls_context() -> ssl.SSLContext:
    """The TLS settings httpx would make for each client, made once per thread: reading the
    certificate bundle is most of what making a client costs, and the language and MCP servers
    judge many times. httpx sets a context's ALPN protocols on each connection, which OpenSSL does
    not allow while another thread connects with it: threads do not share one (a thread the MCP
    server starts anew after one has idled makes its own)."""
    context: ssl.SSLContext | None = getattr(_THREAD, "tls", None)
    if context is None:
        import httpx

        context = _THREAD.tls = httpx.create_ssl_context()
    return context


def _note_context(stats: JudgeStats) -> None:
    """What fitting the context cost, for the summary: never silent."""
    if stats.split_entries:
        stats.notes.append(
            f"{stats.split_entries} entr{'y' if stats.split_entries == 1 else 'ies'} judged in several requests: "
            "the context holds only some of their items at a time"
        )
    if stats.bodies_truncated:
        stats.notes.append(
            f"{stats.bodies_truncated} request{'' if stats.bodies_truncated == 1 else 's'} sent with the body cut "
            "to fit the context (body_truncated); --llm-context raises it"
        )


def _run_sync(coro: Coroutine[Any, Any, None]) -> None:
    """asyncio.run, also when the caller already runs an event loop (then in a helper thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(coro)
        return
    failure: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(coro)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            failure.append(exc)

    t = threading.Thread(target=target, name="kblint-judge")
    t.start()
    t.join()
    if failure:
        raise failure[0]


def judge(
    requests: Sequence[JudgeRequest],
    config: JudgeConfig,
    progress: Progress | None = None,
    raise_unavailable: bool = False,
    busy: Busy | None = None,
) -> tuple[list[JudgeOutcome], JudgeStats, str | None]:
    """Judge every request's items; see the package docstring. BUSY is told the requests in
    flight and the tokens so far, as entries finish."""
    stats = JudgeStats()
    cache = VerdictCache(config.cache_dir) if config.cache_dir else None
    works = _plan(requests, config, cache, stats)
    total = len(works)
    todo = [w for w in works if w.pending]
    done = total - len(todo)
    if progress is not None:
        progress(done, total)
    unavailable: str | None = None
    if todo:
        unavailable = config.wire.missing_key(config.base_url or "", config.api_key)
        if unavailable is None:
            runner = _Runner(config, cache, stats, total, progress)
            runner.busy = busy
            runner.done = done
            _run_sync(_run(todo, runner))
            stats.calls = runner.budget_used
            stats.output_mode = runner.mode
            unavailable = runner.unavailable
            _note_context(stats)
        else:
            for w in todo:
                w.not_evaluated = [it.id for it in w.pending]
                w.not_evaluated_reason = f"provider unavailable: {unavailable}"
            if progress is not None:
                progress(total, total)
    if unavailable is not None:
        if raise_unavailable:
            raise JudgeUnavailable(config.provider, unavailable)
        unavailable = f"{config.provider}: {unavailable}"
    return [w.outcome() for w in works], stats, unavailable


def dry_run(requests: Sequence[JudgeRequest], config: JudgeConfig) -> list[dict]:
    """What `judge` would send, sending nothing: per entry its key and id, the item ids that would be asked
    (cached ones apart), and the estimated prompt tokens (characters / 4) of that request (0: no request)."""
    cache = VerdictCache(config.cache_dir) if config.cache_dir else None
    out = []
    for w in _plan(requests, config, cache, None):
        pending = w.pending
        tokens = estimate_tokens(SYSTEM_PROMPT, user_message(w.sent_entry, pending, w.guidelines)) if pending else 0
        out.append(
            {
                "key": w.request.key,
                "entry_id": w.request.entry.get("id"),
                "items": [it.id for it in pending],
                "cached_items": [it.id for it in w.items if it.id in w.verdicts],
                "estimated_prompt_tokens": tokens,
                "body_truncated": bool(w.sent_entry.get("body_truncated")),
            }
        )
    return out


def render_prompt(request: JudgeRequest, config: JudgeConfig) -> dict:
    """The system and user messages that would be sent for `request` (all its items), e.g. for --verbose."""
    w = _plan([request], config, None, None)[0]
    return {"system": SYSTEM_PROMPT, "user": user_message(w.sent_entry, w.items, w.guidelines)}
