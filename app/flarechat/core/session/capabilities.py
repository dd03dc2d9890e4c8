"""What a session needs to know about a model, and the flows that depend on it: images refused
to a model without vision (typed), its input schema (fetched once per model per book), tool
results answered, JSON replies checked, and its licence agreed to (5016)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from flarechat.api.config import Connection, Endpoint
from flarechat.api.errors import ErrorKind, TermsNotAccepted, WorkersAIError
from flarechat.api.models import ModelInfo
from flarechat.api.schema import ModelSchema
from flarechat.core.connect import PARAM_RESPONSE_FORMAT, Capabilities, ConfigurationError
from flarechat.core.conversation import ROLE_ASSISTANT, Attachment, ConversationTree, Message
from flarechat.core.session.events import Notice, NoticeKind, SessionListener, TurnFailed
from flarechat.core.session.reply import Reply, failure_extra
from flarechat.core.session.structured import JsonVerdict, json_check
from flarechat.core.store import StoreError

if TYPE_CHECKING:
    from flarechat.core.session.requests import TurnSettings

__all__ = [
    "AgreementStore",
    "Catalogue",
    "Licences",
    "Refusal",
    "RefusalKind",
    "SchemaBook",
    "SchemaSource",
    "SendRefused",
    "TermsAgreer",
    "json_verdict",
    "needs_schema",
    "refusal_for",
    "tool_call_ids",
]

log = logging.getLogger(__name__)

AGREED_AGAIN = "You agreed to this model's licence before; it was accepted again."
AGREED = "The model's licence was accepted; the message is sent again."
NOT_AGREED = "The licence was not accepted; the model still asks for agreement."

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


def tool_call_ids(
    tree: ConversationTree, reply_id: str, results: Mapping[str, str]
) -> list[str] | None:
    """The call ids a reply's tool results answer, in the calls' order; None when the reply
    is not an assistant's with tool calls ending the path; ValueError when a call has no
    result or a result names no call."""
    if reply_id not in tree:
        return None
    reply, last = tree.get(reply_id), tree.last()
    if reply.role != ROLE_ASSISTANT or not reply.tool_calls or last is None:
        return None
    if last.id != reply_id:
        return None
    ids = [str(call.get("id")) for call in reply.tool_calls]
    if missing := [i for i in ids if i not in results]:
        raise ValueError(f"No result for tool call {', '.join(missing)}.")
    if unknown := sorted(set(results) - set(ids)):
        raise ValueError(f"The reply made no tool call {', '.join(unknown)}.")
    return ids


def json_verdict(tree: ConversationTree, message_id: str) -> JsonVerdict | None:
    """Whether a reply asked for as JSON parses and follows the schema it was asked for
    (read from its request record); None for a reply that was not asked for JSON."""
    if message_id not in tree:
        return None
    message = tree.get(message_id)
    asked = (message.request or {}).get(PARAM_RESPONSE_FORMAT)
    if message.role != ROLE_ASSISTANT or not isinstance(asked, Mapping):
        return None
    schema = asked.get("schema")
    return json_check(message.content, schema if isinstance(schema, Mapping) else None)


class Licences:
    """A model's licence (5016): accepted when the user agrees, remembered per account, and
    accepted again without asking for a model the user agreed to before."""

    def __init__(
        self,
        conversation_id: str,
        *,
        client: object,
        store: object,
        settings: TurnSettings,
        catalogue: Catalogue | None,
        emit: SessionListener,
    ) -> None:
        self._id = conversation_id
        self._client = client
        self._store = store
        self._settings = settings
        self._catalogue = catalogue
        self._emit = emit

    def can_agree(self, message: Message) -> bool:
        """Whether ``message`` failed for licence terms and the client can accept them."""
        terms = (message.error or {}).get("kind") == ErrorKind.TERMS
        return terms and isinstance(self._client, TermsAgreer)

    async def renew(self, reply: Reply, error: WorkersAIError) -> bool:
        """A 5016 for a model whose licence the user accepted before (for this account): the
        agreement is sent again (the caller re-runs the reply once). False otherwise."""
        store, client = self._store, self._client
        if not isinstance(error, TermsNotAccepted) or reply.agreed:
            return False
        if not isinstance(store, AgreementStore) or not isinstance(client, TermsAgreer):
            return False
        model = error.model or reply.model
        try:
            if not await store.has_agreed(reply.conn.account_id, model):
                return False
            if not await client.agree_to_terms(reply.conn, model):
                return False
        except (StoreError, WorkersAIError) as failure:
            log.info("could not renew the licence agreement for %s: %s", model, failure)
            return False
        self._emit(Notice(self._id, reply.message.id, NoticeKind.TERMS_AGREED, AGREED_AGAIN))
        return True

    async def agree(self, message: Message, model: str) -> bool:
        """Accept ``model``'s licence for the reply ``message`` and remember it; True when
        accepted (the caller sends the reply again), else the failure is reported."""
        if not isinstance(client := self._client, TermsAgreer):
            return False
        try:
            conn = self._settings.connection()
            accepted = await client.agree_to_terms(conn, model)
        except ConfigurationError as error:
            self._emit(TurnFailed(self._id, message.id, ErrorKind.CONFIG, str(error), {}))
            return False
        except WorkersAIError as error:
            extra = failure_extra(error, model=model, attempts=1)
            self._emit(TurnFailed(self._id, message.id, error.kind, error.message, extra))
            return False
        if not accepted:
            extra = {"model": model, "terms_url": self._terms_url(model)}
            self._emit(TurnFailed(self._id, message.id, ErrorKind.TERMS, NOT_AGREED, extra))
            return False
        await self._remember(conn, model)
        self._emit(Notice(self._id, message.id, NoticeKind.TERMS_AGREED, AGREED))
        return True

    async def _remember(self, conn: Connection, model: str) -> None:
        if isinstance(self._store, AgreementStore):
            try:
                await self._store.record_agreement(conn.account_id, model)
            except StoreError as error:  # accepted all the same; only the memory of it is lost
                log.warning("could not remember the licence agreement for %s: %s", model, error)

    def _terms_url(self, model: str) -> str | None:
        info = self._catalogue(model) if self._catalogue is not None else None
        return info.terms_url if info is not None else None
