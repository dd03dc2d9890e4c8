"""Rows to dataclasses and back, JSON columns, and scrubbing credentials out of records."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from flarechat.api import redact
from flarechat.core.conversation import Attachment, Conversation, Message
from flarechat.safejson import scrub_surrogates

__all__ = [
    "ATTACHMENT_COLUMNS",
    "CONVERSATION_COLUMNS",
    "MESSAGE_COLUMNS",
    "REDACTED",
    "STORED_MESSAGE_COLUMNS",
    "attachment_from_row",
    "attachment_values",
    "conversation_from_row",
    "conversation_values",
    "decode_selected",
    "dump_json",
    "encode_selected",
    "message_from_row",
    "message_values",
    "scrub",
    "storable",
]

log = logging.getLogger(__name__)

#: The C scanner behind json.loads: one value from a position, nothing around it (an
#: attribute the stubs leave out: ``(value, end)``, StopIteration when nothing starts there).
_scan_once: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]

REDACTED = "[redacted]"
#: Keys whose values are credentials. ``max_tokens``/``prompt_tokens`` end in "tokens" and stay.
_SECRET_KEY = re.compile(
    r"(token|authori[sz]ation|api[_-]?key|auth[_-]?key|secret|password|passwd|cookie|bearer)$",
    re.IGNORECASE,
)
#: Basic credentials inside a string value (api.redact covers Bearer and the known tokens).
_SECRET_VALUE = re.compile(r"\b(Basic)\s+[A-Za-z0-9._~+/=-]+", re.IGNORECASE)
#: JSON keys cannot be null, so the roots' entry of ``selected`` is stored under "".
_ROOT_KEY = ""

CONVERSATION_COLUMNS = (
    "id, title, created_at, updated_at, pinned, deleted_at, model, system_prompt, "
    "params_json, selected_json"
)
MESSAGE_COLUMNS = (
    "id, conversation_id, parent_id, role, content, reasoning, status, created_at, model, "
    "finish_reason, request_json, usage_json, meta_json, timings_json, error_json, "
    "tool_calls_json, tool_call_id"
)
ATTACHMENT_COLUMNS = "message_id, position, mime_type, name, width, height, data"


def scrub(value: Any, secrets: Sequence[str] = ()) -> Any:
    """A copy of a JSON-like value with credential-named keys redacted, and every string (keys
    too) put through ``flarechat.api.redact``: ``secrets`` in plain, base64 (standard and
    URL-safe, padded or not) or URL-encoded form, and anything bearer- or token-shaped."""
    if isinstance(value, Mapping):
        return {
            _scrub_text(str(key), secrets): REDACTED
            if _SECRET_KEY.search(str(key).strip())
            else scrub(item, secrets)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [scrub(item, secrets) for item in value]
    if isinstance(value, str):
        return _scrub_text(value, secrets)
    return value


def _scrub_text(text: str, secrets: Sequence[str]) -> str:
    text = redact(text, secrets)
    return _SECRET_VALUE.sub(lambda m: f"{m.group(1)} {REDACTED}", text)


def dump_json(value: Mapping[str, Any] | None, secrets: Sequence[str] = ()) -> str | None:
    """Scrubbed, compact JSON (``None`` stays NULL); odd values are stored as their text
    (scrubbed too: ``default=str`` output is text like any other)."""
    if value is None:
        return None
    text = json.dumps(scrub(value, secrets), ensure_ascii=False, separators=(",", ":"), default=str)
    return _scrub_text(text, secrets)


def _load_json(text: str | None) -> dict[str, Any] | None:
    """The object a JSON column holds; ``None`` for NULL, and for text that is not a JSON object
    (a damaged or hand-edited row must not stop a conversation from opening — it is logged)."""
    if text is None:
        return None
    # The common case in one C call: json.loads costs three Python frames and a regex per
    # value, which a conversation's thousands of records add up to (issue #12, switching).
    try:
        loaded, end = _scan_once(text, 0)
    except (StopIteration, ValueError, RecursionError, TypeError):
        loaded, end = None, -1
    if end == len(text) and isinstance(loaded, dict):
        return loaded
    return _load_json_slowly(text)


def _load_json_slowly(text: str) -> dict[str, Any] | None:
    """``json.loads`` with its whitespace rules and error messages (anything unusual)."""
    try:
        loaded = json.loads(text)
    except (ValueError, RecursionError, TypeError) as error:
        log.warning("a stored record is not valid JSON and is treated as empty: %s", error)
        return None
    return loaded if isinstance(loaded, dict) else None


def encode_selected(selected: Mapping[str | None, str]) -> str:
    return json.dumps({_ROOT_KEY if k is None else k: v for k, v in selected.items()})


def decode_selected(text: str | None) -> dict[str | None, str]:
    raw = _load_json(text) or {}
    return {(None if k == _ROOT_KEY else k): str(v) for k, v in raw.items()}


def storable(text: str) -> str:
    """``text`` as SQLite can hold it: UTF-8 cannot encode a lone surrogate (a server's
    ``"\\ud800"`` escape), so each becomes U+FFFD instead of the whole row being refused."""
    return scrub_surrogates(text)


def _storable(values: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(scrub_surrogates(v) if isinstance(v, str) else v for v in values)


def conversation_values(conversation: Conversation, secrets: Sequence[str] = ()) -> tuple[Any, ...]:
    """Values for CONVERSATION_COLUMNS except ``selected_json`` (params scrubbed)."""
    c = conversation
    return _storable(
        (
            c.id,
            c.title,
            c.created_at,
            c.updated_at,
            int(c.pinned),
            c.deleted_at,
            c.model,
            c.system_prompt,
            dump_json(c.params, secrets) or "{}",
        )
    )


def conversation_from_row(row: sqlite3.Row) -> Conversation:
    return Conversation(
        id=row["id"],
        title=row["title"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        pinned=bool(row["pinned"]),
        deleted_at=row["deleted_at"],
        model=row["model"],
        system_prompt=row["system_prompt"],
        params=_load_json(row["params_json"]) or {},
    )


def message_values(message: Message, secrets: Sequence[str] = ()) -> tuple[Any, ...]:
    """Values for MESSAGE_COLUMNS, in order, with every record scrubbed (and every text
    :func:`storable`)."""
    m = message
    return _storable(
        (
            m.id,
            m.conversation_id,
            m.parent_id,
            m.role,
            m.content,
            m.reasoning,
            m.status,
            m.created_at,
            m.model,
            m.finish_reason,
            dump_json(m.request, secrets),
            dump_json(m.usage, secrets),
            dump_json(m.meta, secrets),
            dump_json(m.timings, secrets),
            dump_json(m.error, secrets),
            _dump_calls(m.tool_calls),
            m.tool_call_id,
        )
    )


def _dump_calls(calls: Sequence[Mapping[str, Any]]) -> str | None:
    """A reply's tool calls as JSON (NULL when none). Not scrubbed: like the reply's text,
    they are the model's words, shown and sent back exactly."""
    if not calls:
        return None
    return json.dumps([dict(c) for c in calls], ensure_ascii=False, separators=(",", ":"))


def _load_calls(text: str | None) -> list[dict[str, Any]]:
    """The stored tool calls; a damaged value is logged and read as none."""
    if text is None:
        return []
    try:
        loaded = json.loads(text)
    except (ValueError, RecursionError) as error:
        log.warning("stored tool calls are not valid JSON and are left out: %s", error)
        return []
    if not isinstance(loaded, list):
        return []
    return [dict(c) for c in loaded if isinstance(c, dict)]


#: The message columns load_tree reads: MESSAGE_COLUMNS but the conversation's id, which is
#: the same for every row (5,000 copies of one string to make and free for a long chat).
STORED_MESSAGE_COLUMNS = (
    "id, parent_id, role, content, reasoning, status, created_at, model, finish_reason, "
    "request_json, usage_json, meta_json, timings_json, error_json, tool_calls_json, tool_call_id"
)


def message_from_row(row: Sequence[Any], conversation_id: str) -> Message:
    """A message of ``conversation_id`` from a row of STORED_MESSAGE_COLUMNS, by position (a
    plain tuple or a Row: reading thousands of rows by column name costs more than building
    the messages). Its records are read when first asked for (most messages of a long chat
    are never shown), its lists made when first read, or here when it has tool calls."""
    (
        message_id,
        parent_id,
        role,
        content,
        reasoning,
        status,
        created_at,
        model,
        finish_reason,
        request,
        usage,
        meta,
        timings,
        error,
        tool_calls,
        tool_call_id,
    ) = row
    message = Message.unset()
    message.id = message_id
    message.conversation_id = conversation_id
    message.parent_id = parent_id
    message.role = role
    message.content = content
    message.reasoning = reasoning
    message.status = status
    message.created_at = created_at
    message.model = model
    message.finish_reason = finish_reason
    message.tool_call_id = tool_call_id
    if tool_calls is not None:  # (images are added after, to the list made when first read)
        message.tool_calls = _load_calls(tool_calls)
    if request is None and usage is None and meta is None and timings is None and error is None:
        message.request = message.usage = message.meta = message.timings = message.error = None
    else:
        message.stored_records(_load_json, (request, usage, meta, timings, error))
    return message


def attachment_values(message_id: str, position: int, attachment: Attachment) -> tuple[Any, ...]:
    """Values for ATTACHMENT_COLUMNS, in order."""
    a = attachment
    return _storable((message_id, position, a.mime_type, a.name, a.width, a.height, a.data))


def attachment_from_row(row: sqlite3.Row) -> Attachment:
    return Attachment(
        mime_type=row["mime_type"],
        data=bytes(row["data"]),
        width=int(row["width"]),
        height=int(row["height"]),
        name=row["name"],
    )
