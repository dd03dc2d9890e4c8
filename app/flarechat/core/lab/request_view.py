"""View as code: the request a sent reply was made with, as curl, Python, the openai SDK and
a Workers binding call. It is the request its record gives back over its conversation's
history (``records.request_from_record``, the inverse of the record the session wrote when it
sent it), never a request rebuilt here from some of its fields.

``request_code_for(tree, message_id, conn=…)`` is the one entry point: the window's dialog and
a compare column both call it. The record supplies the model, route, endpoint, parameters,
system prompt and gateway options; ``conn`` the account. No token is ever printed: the code
reads it from the environment (``core.request_code``), and every form is checked once more.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flarechat.api._redact import connection_secrets, secret_variants
from flarechat.api.config import ChatRequest, Connection, Endpoint, Route, Secret
from flarechat.core.conversation import ROLE_ASSISTANT, ConversationTree
from flarechat.core.request_code import CodeKind, render, request_spec
from flarechat.core.session.continuing import continued_history, request_note
from flarechat.core.session.records import request_from_record

__all__ = [
    "ACCOUNT_PLACEHOLDER",
    "NoRequestRecord",
    "RequestCode",
    "connection_of",
    "request_code_for",
    "request_of",
]

#: The account in printed code when no account is set up (the user pastes theirs).
ACCOUNT_PLACEHOLDER = "YOUR_ACCOUNT_ID"


class NoRequestRecord(ValueError):
    """The message is not a sent reply with a stored request (the message says why)."""


@dataclass(frozen=True, slots=True)
class RequestCode:
    """Each form's code, or why that form cannot express the request."""

    message_id: str
    model: str
    forms: Mapping[CodeKind, str] = field(default_factory=dict)
    problems: Mapping[CodeKind, str] = field(default_factory=dict)
    #: what to know about the request shown (a Continue's: the last of the reply's requests)
    note: str = ""


def _record(tree: ConversationTree, message_id: str) -> Mapping[str, Any]:
    if message_id not in tree:
        raise NoRequestRecord("That message is not in this conversation.")
    message = tree.get(message_id)
    if message.role != ROLE_ASSISTANT:
        raise NoRequestRecord("Only a reply has a request to show.")
    if not message.request:
        raise NoRequestRecord("This reply was never sent, so it has no request to show.")
    return message.request


def _choice(kind: type[Route] | type[Endpoint], value: object, default: Any) -> Any:
    try:
        return kind(str(value))
    except ValueError:
        return default


def connection_of(record: Mapping[str, Any], conn: Connection | None) -> Connection:
    """Where the recorded request went, with ``conn``'s account (and no real token)."""
    base = conn or Connection(account_id=ACCOUNT_PLACEHOLDER, token=Secret(""))
    route = _choice(Route, record.get("route"), base.route)
    text = {k: v for k, v in record.items() if isinstance(v, str) and v}
    return dataclasses.replace(
        base,
        route=route,
        endpoint=_choice(Endpoint, record.get("endpoint"), base.endpoint),
        api_base=text.get("api_base", base.api_base),
        gateway_base=text.get("gateway_base", base.gateway_base),
        gateway_id=text.get("gateway_id", base.gateway_id if route is not Route.DIRECT else ""),
    )


def request_of(tree: ConversationTree, message_id: str) -> ChatRequest:
    """The request that produced reply ``message_id``: its record over its history."""
    record = _record(tree, message_id)
    message = tree.get(message_id)
    path = tree.path_to(message.parent_id) if message.parent_id else []
    history = continued_history(path, record, message)  # a Continue's prefill (and words)
    if not record.get("model") and message.model:
        record = {**record, "model": message.model}
    try:
        request = request_from_record(record, history)
    except ValueError as error:
        problems = getattr(error, "problems", None) or [str(error)]
        raise NoRequestRecord(
            "This reply's stored request cannot be read: " + " ".join(problems)
        ) from error
    count = record.get("message_count")
    if isinstance(count, int) and count != len(request.messages):
        # Never show a request that was not sent: the messages before it are not those it had.
        raise NoRequestRecord(
            "The messages before this reply changed after it was sent, so its exact request "
            "cannot be shown."
        )
    return request


def _check_no_secret(text: str, conn: Connection | None) -> None:
    forms = secret_variants(connection_secrets(conn)) if conn is not None else ()
    if any(form in text for form in forms):
        raise RuntimeError("A credential reached the printed request.")  # a bug, never shown


def request_code_for(
    tree: ConversationTree, message_id: str, *, conn: Connection | None
) -> RequestCode:
    """Every code form of reply ``message_id``'s request; ``NoRequestRecord`` when it has none.

    ``conn``: the current connection (its account id; its token is never printed), or None
    when no account is set up (the code then names ``ACCOUNT_PLACEHOLDER``).
    """
    request = request_of(tree, message_id)
    record = _record(tree, message_id)
    note = request_note(record)
    try:
        spec = request_spec(connection_of(record, conn), request)
    except ValueError as error:
        problem = str(error)
        unmade = dict.fromkeys(CodeKind, problem)
        return RequestCode(message_id, request.model, problems=unmade, note=note)
    forms: dict[CodeKind, str] = {}
    problems: dict[CodeKind, str] = {}
    for kind in CodeKind:
        try:
            forms[kind] = render(kind, spec)
        except ValueError as error:
            problems[kind] = str(error)
        else:
            _check_no_secret(forms[kind], conn)
    return RequestCode(message_id, request.model, forms, problems, note)
