"""What the models can do, as the window asks it: the catalogue (vision, licences, LoRA…),
schemas fetched by sends, the account's fine-tunes, image refusals, tool results and the
licence agreement — forwarded to the session on screen."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from flarechat.api.config import Connection
from flarechat.api.models import FineTune, ModelInfo
from flarechat.api.schema import ModelSchema
from flarechat.core.conversation import Attachment
from flarechat.core.session import SessionBook
from flarechat.ui.control.preferences import Preferences

__all__ = ["FineTuneLister", "ModelCapabilities"]


@runtime_checkable
class FineTuneLister(Protocol):
    """The part of ``WorkersAIClient`` that lists the account's LoRA adapters."""

    async def list_finetunes(self, conn: Connection) -> list[FineTune]: ...


class ModelCapabilities:
    """The catalogue the sessions and the window share, and the capability intents on the
    conversation on screen. ``refused(model, why)`` says a message was not sent;
    ``catalogue_changed()`` that what is known of the models changed."""

    def __init__(
        self,
        book: SessionBook,
        *,
        client: object,
        prefs: Preferences,
        current_model: Callable[[], str],
        refused: Callable[[str, str], None],
        catalogue_changed: Callable[[], None],
    ) -> None:
        self._book = book
        self._client = client
        self._prefs = prefs
        self._current_model = current_model
        self._refused = refused
        self._catalogue_changed = catalogue_changed
        self._models: dict[str, ModelInfo] = {}

    def set_models(self, models: Sequence[ModelInfo]) -> None:
        """The catalogue: sessions refuse images to models without vision, and the window
        offers what each model can do."""
        self._models = {m.name: m for m in models}
        self._book.catalogue = self._models.get
        self._catalogue_changed()

    def known(self, model: str) -> ModelInfo | None:
        """The catalogue entry of exactly ``model``, None if not known."""
        return self._models.get(model)

    def model_info(self, model: str | None = None) -> ModelInfo | None:
        """The catalogue entry of ``model`` (default: the current one), None if not known."""
        return self._models.get(model or self._current_model())

    def model_schema(self, model: str | None = None) -> ModelSchema | None:
        """``model``'s input schema if a send already fetched it (None: not known yet)."""
        return self._book.schemas.cached(model or self._current_model())

    async def list_finetunes(self) -> list[FineTune]:
        """The account's LoRA adapters; WorkersAIError or ConfigurationError when unreadable
        (run it as a kept task: it is a network request)."""
        if not isinstance(self._client, FineTuneLister):
            return []
        return await self._client.list_finetunes(self._prefs.connection())

    def send_refusal(self, images: Sequence[Attachment]) -> str | None:
        """Why ``images`` could not be sent to the current model (asked before sending)."""
        session = self._book.current
        if not images or session is None:
            return None
        refusal = session.refusal(images)
        return refusal.message if refusal is not None else None

    def send_tool_results(self, reply_id: str, results: dict[str, str]) -> str | None:
        """The results the user gave for a reply's tool calls go back; the reply goes on."""
        if (session := self._book.current) is None:
            return None
        try:
            return session.send_tool_results(reply_id, results)
        except ValueError as error:
            self._refused(self._current_model(), str(error))
            return None

    def agree_terms(self, message_id: str | None = None) -> bool:
        """Agree and continue (the licence banner): accept the licence, resend the reply."""
        session = self._book.current
        return session is not None and session.agree_terms(message_id)
