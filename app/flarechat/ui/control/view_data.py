"""View data: the plain values controllers hand to widgets (no Qt, no api objects), so
controller modules never import a widget module."""

from __future__ import annotations

from dataclasses import dataclass

from flarechat.api.config import Secret
from flarechat.core.conversation import Attachment
from flarechat.core.session.structured import JsonVerdict
from flarechat.settings.schema import Settings

__all__ = ["MessageData", "ToolCallData", "VerifyInput"]


@dataclass(frozen=True, slots=True)
class ToolCallData:
    """One tool call of a reply: ``arguments`` as the model sent them (JSON text), and the
    canned result defined with the tool (None when it has none)."""

    id: str
    name: str
    arguments: str
    canned: str | None = None


@dataclass(frozen=True, slots=True)
class MessageData:
    """Plain values the transcript shows for one message (no Qt, no api objects).

    ``role``: "user" | "assistant" | "system". ``status``: "waiting" | "streaming" | "done" |
    "stopped" | "interrupted" | "failed". ``meta_line`` is already formatted ("TTFT 0.42 s ·
    38 tok/s · …"); the log id is added as a copy link (or linked in place if the line has it).
    ``sibling_index`` is 0-based: index 0 of count 2 shows "< 1/2 >". A ``tool`` message is
    the result the user gave for one call (``content``).
    """

    id: str
    role: str
    content: str = ""
    reasoning: str = ""
    status: str = "done"
    model: str = ""
    finish_reason: str | None = None
    meta_line: str = ""
    log_id: str | None = None
    error_text: str | None = None
    can_continue: bool = True
    sibling_index: int = 0
    sibling_count: int = 1
    #: images on a user message
    attachments: tuple[Attachment, ...] = ()
    #: the calls a reply made, and whether they wait for results (the reply is the last)
    tool_calls: tuple[ToolCallData, ...] = ()
    awaiting_tool_results: bool = False
    #: a reply asked for as JSON: its verdict, and "json_object" or "json_schema"
    json_verdict: JsonVerdict | None = None
    json_kind: str = ""
    #: how the reply came, when that is worth saying (e.g. streaming was turned off)
    note: str = ""


@dataclass(frozen=True, slots=True)
class VerifyInput:
    """What the dialog hands the verify callable: the values as typed, the token wrapped."""

    account_id: str
    api_token: Secret
    api_base: str = ""  # "" = the default Cloudflare API base
    request_timeout: float = Settings().request_timeout
