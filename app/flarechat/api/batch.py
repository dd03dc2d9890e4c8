"""The async Batch API's values (§11) and reading its replies; no HTTP here (see ``client``).

A submit answers ``queued`` with a ``request_id``; a poll answers ``queued``/``running`` (in the
v4 envelope or bare) or the results: ``responses[]`` whose ``id`` is the item's index (order not
guaranteed), each ``result`` nested once or twice, ``success: false`` items failing alone.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flarechat.api.errors import BadRequest

__all__ = [
    "BATCH_UNKNOWN",
    "MAX_BATCH_BYTES",
    "BatchItem",
    "BatchPoll",
    "BatchRequestUnknown",
    "BatchStatus",
    "BatchTicket",
    "parse_poll",
    "parse_ticket",
]

#: Items a submit may carry and still stay under the 10 MB payload limit is the caller's split.
MAX_BATCH_BYTES = 10 * 1024 * 1024


BATCH_UNKNOWN = (
    "Cloudflare no longer knows this batch (its results may have expired). "
    "Run the unfinished cases again."
)


class BatchStatus(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"


class BatchRequestUnknown(BadRequest):
    """The server knows no batch by this request_id (expired, or another account's)."""


@dataclass(frozen=True, slots=True)
class BatchTicket:
    """What a submit gave back: poll with ``request_id`` at the same model's URL."""

    request_id: str
    model: str


@dataclass(frozen=True, slots=True)
class BatchItem:
    """One item's answer: its ``result`` (the synchronous call's), or why it failed."""

    index: int
    external_reference: str | None
    result: Mapping[str, Any] | None
    error_code: int | None = None
    error_message: str | None = None

    @property
    def ok(self) -> bool:
        return self.result is not None


@dataclass(frozen=True, slots=True)
class BatchPoll:
    """A poll's answer: the status, and when done every item by index plus the batch's usage."""

    status: BatchStatus
    items: dict[int, BatchItem] = field(default_factory=dict)
    usage: Mapping[str, Any] = field(default_factory=dict)
    neurons: float | None = None


def parse_ticket(body: Mapping[str, Any], *, model: str) -> BatchTicket:
    """The request_id of a submit's reply; ValueError when there is none."""
    result = body.get("result")
    source = result if isinstance(result, Mapping) else body
    request_id = source.get("request_id")
    if not isinstance(request_id, str) or not request_id:
        raise ValueError("The batch was not queued: the reply carried no request_id.")
    return BatchTicket(request_id=request_id, model=model)


def parse_poll(body: Mapping[str, Any], *, neurons: float | None = None) -> BatchPoll:
    """Pending (enveloped or bare) or done: ``responses`` present means done (§11.2)."""
    result = body.get("result")
    source = result if isinstance(result, Mapping) else body
    responses = source.get("responses")
    if not isinstance(responses, list):
        status = source.get("status")
        pending = BatchStatus.QUEUED if status == "queued" else BatchStatus.RUNNING
        return BatchPoll(status=pending)
    items = {}
    for entry in responses:
        item = _item(entry)
        if item is not None:
            items[item.index] = item
    usage = source.get("usage")
    return BatchPoll(
        status=BatchStatus.DONE,
        items=items,
        usage=usage if isinstance(usage, Mapping) else {},
        neurons=neurons,
    )


def _item(entry: object) -> BatchItem | None:
    if not isinstance(entry, Mapping):
        return None
    index = entry.get("id")
    if isinstance(index, bool) or not isinstance(index, int):
        return None
    reference = entry.get("external_reference")
    reference = reference if isinstance(reference, str) else None
    result = entry.get("result")
    if entry.get("success") is False or not isinstance(result, Mapping):
        code, message = _first_error(entry)
        return BatchItem(index, reference, None, code, message)
    inner = result.get("result")
    # text generation nests result.result in the docs' example, embeddings once: unwrap both
    if isinstance(inner, Mapping) and len(result) == 1:
        result = inner
    return BatchItem(index, reference, result)


def _first_error(entry: Mapping[str, Any]) -> tuple[int | None, str]:
    errors = entry.get("errors")
    if not isinstance(errors, list) or not errors:
        result = entry.get("result")
        errors = result.get("errors") if isinstance(result, Mapping) else None
    first = errors[0] if isinstance(errors, list) and errors else {}
    if not isinstance(first, Mapping):
        first = {}
    code = first.get("code")
    message = first.get("message")
    return (
        code if isinstance(code, int) and not isinstance(code, bool) else None,
        message if isinstance(message, str) else "The item failed without saying why.",
    )
