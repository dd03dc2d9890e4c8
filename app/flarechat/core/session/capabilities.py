"""What a session needs to know about a model before sending to it: whether it takes images
(else the send is refused, typed), and its input schema, fetched once per model per book."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from flarechat.api.config import Connection, Endpoint
from flarechat.api.errors import WorkersAIError
from flarechat.api.models import ModelInfo
from flarechat.api.schema import ModelSchema
from flarechat.core.connect import Capabilities
from flarechat.core.conversation import Attachment, Message

__all__ = [
    "AgreementStore",
    "Catalogue",
    "Refusal",
    "RefusalKind",
    "SchemaBook",
    "SchemaSource",
    "SendRefused",
    "TermsAgreer",
    "needs_schema",
    "refusal_for",
]

log = logging.getLogger(__name__)

#: What the app knows of a model from its catalogue (None: not known, nothing is refused).
Catalogue = Callable[[str], ModelInfo | None]


class RefusalKind(StrEnum):
    """Why a send was refused before anything went out."""

    #: images for a model whose catalogue entry says it has no vision
    NO_VISION = "no_vision"


@dataclass(frozen=True, slots=True)
class Refusal:
    """A send that was not made, and why: the UI offers to switch ``model`` for one that can."""

    kind: RefusalKind
    model: str
    message: str


class SendRefused(Exception):
    """Raised by ``ChatSession.send`` when the message cannot go to the model as it is.

    Nothing was added or sent; ``refusal`` says why (the composer keeps the text and images).
    """

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


def refusal_for(
    model: str, images: Sequence[Attachment], catalogue: Catalogue | None
) -> Refusal | None:
    """Why ``images`` cannot go to ``model`` (per its catalogue entry), or None when they can
    or the model is not in the catalogue (then the server decides)."""
    info = catalogue(model) if images and catalogue is not None else None
    if info is None or info.vision:
        return None
    text = f"{info.short_name} cannot see images. Choose a vision model to send them."
    return Refusal(RefusalKind.NO_VISION, model, text)


@runtime_checkable
class SchemaSource(Protocol):
    """The part of ``WorkersAIClient`` that reads a model's input schema."""

    async def get_model_schema(self, conn: Connection, model: str) -> ModelSchema: ...


@runtime_checkable
class TermsAgreer(Protocol):
    """The part of ``WorkersAIClient`` that accepts a model's licence."""

    async def agree_to_terms(self, conn: Connection, model: str) -> bool: ...


def needs_schema(conn: Connection, capabilities: Capabilities, history: Sequence[Message]) -> bool:
    """Whether the model's schema picks the wire forms of this request: only the native route
    has per-model forms (images, tools, JSON schema), and only when one of them is used."""
    native = conn.endpoint is Endpoint.NATIVE or capabilities.lora is not None
    if not native:
        return False
    uses = capabilities.tools or capabilities.response_format is not None
    return bool(uses) or any(m.attachments or m.tool_calls or m.tool_call_id for m in history)


class SchemaBook:
    """Model schemas fetched lazily and kept for the book's lifetime (they change with a
    release, not within a session). A failed fetch is not kept: the next send asks again."""

    def __init__(self) -> None:
        self._known: dict[str, ModelSchema] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def cached(self, model: str) -> ModelSchema | None:
        return self._known.get(model)

    async def get(self, client: object, conn: Connection, model: str) -> ModelSchema | None:
        """``model``'s schema, or None when ``client`` cannot fetch it or the fetch failed
        (the request then goes in the api's documented default forms)."""
        if not isinstance(client, SchemaSource):
            return None
        async with self._locks.setdefault(model, asyncio.Lock()):
            if (known := self._known.get(model)) is not None:
                return known
            try:
                schema = await client.get_model_schema(conn, model)
            except WorkersAIError as error:
                log.info("no schema for %s (default wire forms): %s", model, error)
                return None
            self._known[model] = schema
            return schema


@runtime_checkable
class AgreementStore(Protocol):
    """The part of ``core.store.AsyncChatStore`` that remembers accepted licences."""

    async def record_agreement(self, account_id: str, model: str) -> None: ...
    async def has_agreed(self, account_id: str, model: str) -> bool: ...
