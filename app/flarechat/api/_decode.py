"""Response decoding: both Workers AI result shapes, streamed or not, folded into stream events."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from flarechat import safejson
from flarechat.api import _messages as msg
from flarechat.api._errors_map import classify_payload
from flarechat.api._redact import StreamRedactor, redact, redact_value
from flarechat.api._think import ThinkSplitter
from flarechat.api._tool_calls import ToolCallCollector
from flarechat.api._usage import UsageTracker
from flarechat.api.errors import ServerError, StreamInterrupted, WorkersAIError
from flarechat.api.events import ChatEvent, Finished, ReasoningDelta, TextDelta, ToolCallDelta
from flarechat.api.tools import ToolCall

__all__ = ["DONE_SENTINEL", "ReplyDecoder", "decode_complete", "has_content", "merge_deltas"]

logger = logging.getLogger("flarechat.api")

DONE_SENTINEL = "[DONE]"
_LOG_SNIPPET = 200  # characters of a malformed chunk kept in the log line
_DEFAULT_FINISH = "stop"
_TOOL_CALLS_FINISH = "tool_calls"
#: A streamed chunk with only these keys is plain text (see :func:`_plain_text`).
_PLAIN_KEYS = frozenset({"response", "tool_calls", "p"})


class ReplyDecoder:
    """Folds decoded JSON chunks of one reply into events; knows when the reply is complete.

    Feed ``data:`` payloads with :meth:`feed_data` (or parsed objects with :meth:`feed`), then
    call :meth:`flush` and :meth:`close`. Per-chunk usage and the trailing cumulative usage event
    are never added together (see :class:`UsageTracker`). Tool calls of either shape come out as
    :class:`ToolCallDelta` fragments and, complete, in :attr:`Finished.tool_calls`.
    """

    def __init__(
        self, *, status: int = 200, secrets: Iterable[str] = (), model: str | None = None
    ) -> None:
        self._status = status
        self._secrets = tuple(secrets)
        self._model = model
        self._think = ThinkSplitter()
        self._usage = UsageTracker()
        self._tools = ToolCallCollector()
        self._finish: str | None = None
        # Everything the server says is redacted here, before any of it is shown, printed,
        # stored or exported: text and reasoning as streams (a token split across chunks is
        # still found), tool calls whole.
        self._text = StreamRedactor(self._secrets)
        self._reasoning = StreamRedactor(self._secrets)
        self.done = False
        self.valid_chunks = 0
        self.malformed_chunks = 0

    def feed_data(self, data: str) -> list[ChatEvent]:
        """One SSE ``data:`` payload: ``[DONE]``, a JSON chunk, or junk (skipped and logged)."""
        chunk = self._chunk(data)
        return [] if chunk is None else self.feed(chunk)

    def _redacted(self, events: Iterable[ChatEvent]) -> list[ChatEvent]:
        out: list[ChatEvent] = []
        for event in events:
            if isinstance(event, TextDelta):
                self._end_stream(self._reasoning, ReasoningDelta, out)
                if text := self._text.feed(event.text):
                    out.append(TextDelta(text))
                continue
            if isinstance(event, ReasoningDelta):
                self._end_stream(self._text, TextDelta, out)
                if text := self._reasoning.feed(event.text):
                    out.append(ReasoningDelta(text))
                continue
            self._end_stream(self._reasoning, ReasoningDelta, out)
            self._end_stream(self._text, TextDelta, out)
            if isinstance(event, ToolCallDelta):
                event = ToolCallDelta(
                    event.index,
                    id=event.id,
                    name=None if event.name is None else redact(event.name, self._secrets),
                    arguments=redact(event.arguments, self._secrets),
                )
            elif isinstance(event, Finished) and event.tool_calls:
                calls = tuple(self._redacted_call(call) for call in event.tool_calls)
                event = replace(event, tool_calls=calls)
            out.append(event)
        return out

    @staticmethod
    def _end_stream(
        stream: StreamRedactor, kind: type[TextDelta] | type[ReasoningDelta], out: list[ChatEvent]
    ) -> None:
        if held := stream.flush():
            out.append(kind(held))

    def _redacted_call(self, call: ToolCall) -> ToolCall:
        arguments_json = redact(call.arguments_json, self._secrets)
        arguments = call.arguments
        # Without escapes, every string of the parsed arguments is a piece of their text, so
        # text with nothing to redact has a value with nothing to redact (10,000 calls each
        # walked twice were a tenth of a second of the GUI thread).
        if arguments is not None and (
            arguments_json != call.arguments_json or "\\" in arguments_json
        ):
            arguments = redact_value(arguments, self._secrets)
        return ToolCall(
            id=redact(call.id, self._secrets),
            name=redact(call.name, self._secrets),
            arguments_json=arguments_json,
            arguments=arguments,
        )

    def feed_all(self, payloads: Iterable[str]) -> tuple[list[ChatEvent], WorkersAIError | None]:
        """A read's ``data:`` payloads in order, up to ``[DONE]`` or an error event, which is
        returned (to be raised after the events before it), not raised.

        The same events as :meth:`feed_data` on each, but a run of plain-text chunks (Workers
        AI's own ``{"response": …}``, one per token) goes to the think splitter as one text:
        a fast stream's read holds hundreds of them, and each would otherwise cost a pass
        through every shape :meth:`feed` knows and a delta of its own, merged again later.
        """
        events: list[ChatEvent] = []
        run: list[str] = []
        for data in payloads:
            chunk = self._chunk(data)
            text = _plain_text(chunk)
            if text is not None:
                self.valid_chunks += 1
                run.append(text)
                continue
            if run:
                events.extend(self._think.feed("".join(run)))
                run.clear()
            if chunk is not None:
                try:
                    events.extend(self._feed(chunk))
                except WorkersAIError as error:
                    return self._redacted(events), error
            if self.done:
                break
        if run:
            events.extend(self._think.feed("".join(run)))
        return self._redacted(events), None

    def _chunk(self, data: str) -> Mapping[str, Any] | None:
        """A payload's JSON object; None for blanks, ``[DONE]`` (noted) and junk (logged)."""
        data = data.strip()
        if not data:
            return None
        if data == DONE_SENTINEL:
            self.done = True
            return None
        try:
            chunk = safejson.loads(data)  # bounded: a chunk 100,000 levels deep is junk too
        except ValueError:
            chunk = None
        if not isinstance(chunk, Mapping):
            self.malformed_chunks += 1
            snippet = redact(data, self._secrets)[:_LOG_SNIPPET]
            logger.warning("Skipped a malformed stream chunk: %s", snippet)
            return None
        return chunk

    def feed(self, chunk: Mapping[str, Any]) -> list[ChatEvent]:
        """One parsed chunk (or a whole non-streamed result). Raises on an error event."""
        return self._redacted(self._feed(chunk))

    def _feed(self, chunk: Mapping[str, Any]) -> list[ChatEvent]:
        self._raise_if_error(chunk)
        self.valid_chunks += 1
        events: list[ChatEvent] = []
        choices = chunk.get("choices")
        if isinstance(choices, list):
            for choice in choices:
                if isinstance(choice, Mapping) and choice.get("index", 0) in (0, None):
                    events.extend(self._choice(choice))
        texts = any(isinstance(e, TextDelta | ReasoningDelta) for e in events)
        if "response" in chunk and not texts:  # choices win (as in the official provider)
            events.extend(self._think.feed(_response_text(chunk["response"])))
        events.extend(self._tools.feed(chunk.get("tool_calls")))  # the legacy, top-level place
        output = chunk.get("output")
        if isinstance(output, list):
            events.extend(self._responses_output(output))
        usage = chunk.get("usage")
        if isinstance(usage, Mapping):
            # Workers AI's own trailing event has no "choices": that one is cumulative.
            self._usage.add(usage, cumulative="choices" not in chunk)
        self._note_finish(chunk.get("finish_reason"))
        return events

    def feed_complete(self, payload: Mapping[str, Any]) -> list[ChatEvent]:
        """A whole non-streamed body: the v4 envelope's ``result`` or a bare OpenAI object."""
        self._raise_if_error(payload)
        result = payload.get("result", payload)
        self.done = True
        if isinstance(result, Mapping):
            return self.feed(result)
        self.valid_chunks += 1
        if isinstance(result, str):  # a bare string result: tolerate it as the answer
            return self._redacted(self._think.feed(result))
        return []

    def flush(self) -> list[ChatEvent]:
        """Text held back while deciding whether it was part of a ``<think>`` tag or of a
        secret's form."""
        events = self._redacted(self._think.flush())
        self._end_stream(self._reasoning, ReasoningDelta, events)
        self._end_stream(self._text, TextDelta, events)
        return events

    def close(self) -> list[ChatEvent]:
        """Usage and Finished for a complete reply; raises if the reply was not complete."""
        if self.valid_chunks == 0 and self.malformed_chunks:
            raise ServerError(msg.UNREADABLE_REPLY, status=self._status)
        if not self.done and self._finish is None:
            raise StreamInterrupted(
                msg.INTERRUPTED, detail="The stream ended without [DONE] or a finish reason."
            )
        events: list[ChatEvent] = []
        usage = self._usage.report()
        if usage is not None:
            events.append(usage)
        calls = self._tools.calls()
        default = _TOOL_CALLS_FINISH if calls else _DEFAULT_FINISH
        unclosed = self._think.unclosed
        events.append(
            Finished(self._finish or default, tool_calls=calls, reasoning_unclosed=unclosed)
        )
        return self._redacted(events)  # the calls whole: a token split across fragments too

    def _choice(self, choice: Mapping[str, Any]) -> list[ChatEvent]:
        events: list[ChatEvent] = []
        delta = choice.get("delta")
        if not isinstance(delta, Mapping):
            delta = choice.get("message")
        if isinstance(delta, Mapping):
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                events.append(ReasoningDelta(reasoning))
            content = delta.get("content")
            if isinstance(content, str):
                events.extend(self._think.feed(content))
            events.extend(self._tools.feed(delta.get("tool_calls")))
        elif isinstance(choice.get("text"), str):  # completions-style choice
            events.extend(self._think.feed(choice["text"]))
        self._note_finish(choice.get("finish_reason"))
        return events

    def _responses_output(self, output: list[Any]) -> list[ChatEvent]:
        """An OpenAI Responses object (gpt-oss with ``input``): reasoning and message items."""
        events: list[ChatEvent] = []
        for item in output:
            if not isinstance(item, Mapping) or not isinstance(item.get("content"), list):
                continue
            for part in item["content"]:
                text = part.get("text") if isinstance(part, Mapping) else None
                if isinstance(text, str) and text:
                    is_reasoning = item.get("type") == "reasoning"
                    events.append(ReasoningDelta(text) if is_reasoning else TextDelta(text))
        return events

    def _note_finish(self, reason: object) -> None:
        if isinstance(reason, str) and reason:
            self._finish = reason

    def _raise_if_error(self, chunk: Mapping[str, Any]) -> None:
        errors = chunk.get("errors")
        error = chunk.get("error")
        failed = chunk.get("success") is False
        if (isinstance(errors, list) and errors) or error or failed:
            raise classify_payload(
                chunk, status=self._status, secrets=self._secrets, model=self._model
            )


def decode_complete(
    payload: object, *, status: int = 200, secrets: Iterable[str] = (), model: str | None = None
) -> list[ChatEvent]:
    """A non-streamed reply (v4 envelope or bare OpenAI object) as the same events."""
    if not isinstance(payload, Mapping):
        raise ServerError(msg.UNREADABLE_REPLY, status=status)
    decoder = ReplyDecoder(status=status, secrets=secrets, model=model)
    events = decoder.feed_complete(payload)
    return [*events, *decoder.flush(), *decoder.close()]


def has_content(events: Iterable[ChatEvent]) -> bool:
    """Whether any text, reasoning or tool call came back (an empty gpt-oss reply has none)."""
    return any(
        (isinstance(e, TextDelta | ReasoningDelta) and e.text)
        or (isinstance(e, Finished) and e.tool_calls)
        for e in events
    )


def _plain_text(chunk: Mapping[str, Any] | None) -> str | None:
    """The text of a chunk that holds nothing but Workers AI's ``response`` text (with an
    empty ``tool_calls`` and the ``p`` padding at most); None for any other chunk."""
    if chunk is None or not chunk.keys() <= _PLAIN_KEYS or chunk.get("tool_calls"):
        return None
    text = chunk.get("response")
    return text if type(text) is str else None


def _response_text(value: object) -> str:
    """Legacy ``response``: a string, or (JSON mode, quirks) an object or a number, as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def merge_deltas(events: Iterable[ChatEvent]) -> list[ChatEvent]:
    """``events`` with each run of text (or of reasoning) deltas joined into one delta.

    Order and content are kept exactly; only the number of events shrinks. A network read of
    a fast stream holds hundreds of deltas: merged, everything downstream (the turn fold, the
    session's events, the window's signals) does its work once per read, not once per token.
    """
    merged: list[ChatEvent] = []
    run: list[str] = []
    kind: type[TextDelta] | type[ReasoningDelta] | None = None
    for event in events:
        if kind is not None and type(event) is not kind:
            merged.append(kind("".join(run)))
            run, kind = [], None
        if isinstance(event, TextDelta | ReasoningDelta):
            kind = type(event)
            run.append(event.text)
        else:
            merged.append(event)
    if kind is not None:
        merged.append(kind("".join(run)))
    return merged
