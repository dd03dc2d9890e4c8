"""What a reply sends: the exact request built from the conversation (or a compare column's
own settings), the model's schema fetched first when its wire forms depend on it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from flarechat.api.config import (
    ChatMessage,
    ChatRequest,
    Connection,
    GatewayOptions,
    SamplingParams,
)
from flarechat.api.errors import ErrorKind
from flarechat.core.connect import ConfigurationError, build_request, capabilities_from
from flarechat.core.conversation import ConversationTree, Message
from flarechat.core.session import records
from flarechat.core.session.capabilities import Catalogue, SchemaBook, needs_schema
from flarechat.core.session.continuing import (
    CONTINUE_PROMPT,
    Continued,
    extended_history,
    extends_in_place,
)
from flarechat.core.session.reply import Reply
from flarechat.core.turn import ChatStreamer, TurnState

if TYPE_CHECKING:
    from flarechat.api.models import ModelInfo

__all__ = ["ColumnSpec", "NotSent", "RequestMaker", "TurnSettings"]


@dataclass(frozen=True, slots=True)
class ColumnSpec:
    """What one compare column sends: its model and, when set, its own sampling parameters
    and system prompt (else the conversation's)."""

    model: str
    params: Mapping[str, Any] | None = None
    system_prompt: str | None = None
    #: this column's own prompt (a template filled with one row), else the shared one
    prompt: str | None = None


class TurnSettings(Protocol):
    """Where a session gets what a request needs (the window's Preferences, a CLI profile)."""

    def connection(self) -> Connection: ...
    def sampling(self, params: Mapping[str, object]) -> SamplingParams: ...
    def reject_if_busy(self) -> bool: ...
    def gateway_options(self) -> GatewayOptions: ...
    def default_model(self) -> str: ...


class NotSent(Exception):
    """The request could not be built (settings, a bad option or image): nothing was sent."""

    def __init__(self, text: str, kind: ErrorKind) -> None:
        super().__init__(text)
        self.text = text
        self.kind = kind


class RequestMaker:
    """Builds each reply's request from one conversation's settings, or from the compare
    column a reply belongs to (kept per reply id, so a retry sends what its column sends)."""

    def __init__(
        self,
        tree: ConversationTree,
        *,
        client: ChatStreamer,
        settings: TurnSettings,
        catalogue: Catalogue | None,
        schemas: SchemaBook,
    ) -> None:
        self._tree = tree
        self._client = client
        self._settings = settings
        self._catalogue = catalogue
        self._schemas = schemas
        self._columns: dict[str, ColumnSpec] = {}  # compare replies: their column's settings

    def use_column(self, message_id: str, column: ColumnSpec) -> None:
        self._columns[message_id] = column

    def retarget(self, message_id: str, model: str) -> None:
        """A compare reply switched model: its column sends with ``model`` from now on."""
        if (column := self._columns.get(message_id)) is not None:
            self._columns[message_id] = replace(column, model=model)

    async def make(
        self,
        message: Message,
        *,
        reject_if_busy: bool | None,
        sent_at: float,
        base: Continued | None = None,
    ) -> Reply:
        """The reply for ``message``, its request recorded on it; :class:`NotSent` when a
        configuration problem or an unusable option stops it before anything goes out.

        ``base``: a Continue of ``message`` (as it was then), which the request extends
        (``core.session.continuing``)."""
        try:
            conn = self._settings.connection()
        except ConfigurationError as error:
            raise NotSent(" ".join(error.problems), ErrorKind.CONFIG) from error
        model = message.model or self._settings.default_model()
        prompt = None
        if base is not None and not extends_in_place(message, self._info(model)):
            prompt = CONTINUE_PROMPT
        try:
            request = await self._build(
                message, conn, reject_if_busy=reject_if_busy, base=base, prompt=prompt
            )
        except ValueError as error:  # ConfigurationError included: a bad option or image
            problems = getattr(error, "problems", None) or [str(error)]
            raise NotSent(" ".join(problems), ErrorKind.BAD_REQUEST) from error
        record = records.request_record(conn, request)
        message.request = record if base is None else base.record(record, prompt=prompt)
        reply = Reply(message, conn, request, TurnState(started_at=sent_at), base=base)
        reply.waits_in_queue = reject_if_busy is False  # Wait in queue's resend
        return reply

    def _info(self, model: str) -> ModelInfo | None:
        return self._catalogue(model) if self._catalogue is not None else None

    async def _build(
        self,
        message: Message,
        conn: Connection,
        *,
        reject_if_busy: bool | None,
        base: Continued | None,
        prompt: str | None,
    ) -> ChatRequest:
        settings, conversation = self._settings, self._tree.conversation
        column = self._columns.get(message.id)
        params = column.params if column is not None and column.params is not None else None
        system = column.system_prompt if column is not None else None
        model = message.model or settings.default_model()
        path = self._tree.path_to(message.parent_id) if message.parent_id else []
        history: list[Message | ChatMessage] = list(path)
        if base is not None:  # the reply so far, then (to a reasoning model) the words
            history = extended_history(path, base.text, base.reasoning, prompt)
        capabilities = capabilities_from(conversation.params)
        schema = None
        if needs_schema(conn, capabilities, path):
            schema = await self._schemas.get(self._client, conn, model)
        return build_request(
            model=model,
            history=history,
            system_prompt=conversation.system_prompt if system is None else system,
            params=settings.sampling(conversation.params if params is None else params),
            reject_if_busy=settings.reject_if_busy() if reject_if_busy is None else reject_if_busy,
            gateway=settings.gateway_options(),
            session_id=conversation.id,
            capabilities=capabilities,
            model_info=self._info(model),
            model_schema=schema,
        )
