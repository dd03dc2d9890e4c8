"""What a reply carries besides text, for ``ask``: tool calls and the streaming-off note.

``run_turn`` and ``fold`` take the classic events only, so :class:`ReplyStreamer` stands in
for the client there: it reads ``stream_reply`` and keeps the tool-call fragments, the complete
calls and the "streaming was turned off" note aside while passing everything else on.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from flarechat.api.client import WorkersAIClient
from flarechat.api.config import ChatRequest, Connection
from flarechat.api.events import Finished, StreamEvent, StreamingDisabled, ToolCallDelta
from flarechat.api.tools import ToolCall

__all__ = [
    "ReplyStreamer",
    "all_reasoning_note",
    "pretty_json",
    "tool_call_line",
    "tool_calls_record",
]

_INDENT = 2


class ReplyStreamer:
    """A ``ChatStreamer`` over ``WorkersAIClient.stream_reply`` that remembers the extras of
    the latest attempt (a retried attempt starts them afresh)."""

    def __init__(self, client: WorkersAIClient) -> None:
        self._client = client
        self.tool_calls: tuple[ToolCall, ...] = ()
        #: the streamed pieces of the calls, in arrival order (the calls are in ``tool_calls``)
        self.fragments: list[ToolCallDelta] = []
        self.note: str | None = None
        #: the reply opened a ``<think>`` and never closed it (``Finished.reasoning_unclosed``)
        self.reasoning_unclosed = False

    async def stream_chat(
        self, conn: Connection, request: ChatRequest
    ) -> AsyncGenerator[StreamEvent, None]:
        self.tool_calls, self.fragments, self.note = (), [], None
        self.reasoning_unclosed = False
        async with aclosing(self._client.stream_reply(conn, request)) as events:
            async for event in events:
                if isinstance(event, ToolCallDelta):
                    self.fragments.append(event)
                elif isinstance(event, StreamingDisabled):
                    self.note = event.reason
                else:
                    if isinstance(event, Finished):
                        self.tool_calls = event.tool_calls
                        self.reasoning_unclosed = event.reasoning_unclosed
                    yield event


def _arguments(call: ToolCall) -> Any:
    """The parsed arguments object, or the text as received when it is not one."""
    return call.arguments if call.arguments is not None else call.arguments_json


def tool_call_line(call: ToolCall) -> str:
    """``tool call: get_weather({"city": "Paris"})`` (``tool call with no name: {…}``)."""
    arguments = call.arguments
    shown = call.arguments_json if arguments is None else json.dumps(arguments, ensure_ascii=False)
    if not call.name.strip():
        return f"tool call with no name: {shown}"
    return f"tool call: {call.name}({shown})"


def tool_calls_record(calls: tuple[ToolCall, ...]) -> list[dict[str, Any]]:
    """``[{id, name, arguments}]`` for ``--json`` (arguments parsed when they are JSON)."""
    return [{"id": c.id, "name": c.name, "arguments": _arguments(c)} for c in calls]


def all_reasoning_note(*, unclosed: bool) -> str:
    """Why a reply printed nothing on stdout: it was all reasoning."""
    why = "its <think> block was never closed" if unclosed else "no answer followed it"
    return f"the reply was all reasoning ({why}), so there is no answer to print."


def pretty_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=_INDENT) + "\n"
