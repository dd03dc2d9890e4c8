"""How a session's messages become view data: a MessageData per message, made when first
read, with a running reply's live text and what the catalogue says of its model."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from flarechat.api.models import ModelInfo
from flarechat.core.conversation import Message
from flarechat.core.session import ChatSession
from flarechat.ui.control import presenting
from flarechat.ui.control.view_data import MessageData, PathView

__all__ = ["MessageViews"]


class MessageViews:
    """Makes view data of one session's messages; ``model_info`` looks a model up."""

    def __init__(self, model_info: Callable[[str], ModelInfo | None]) -> None:
        self._model_info = model_info

    def path(self, session: ChatSession | None, *, focus: str | None = None) -> PathView:
        """The shown path's messages (empty without a session), to be opened at ``focus``."""
        if session is None:
            return PathView.empty()
        tree = session.tree
        # The ids and positions the tree made (on the store's thread, when it was read).
        return self._view(
            session,
            tree.path(),
            tree.path_ids(),
            focus=focus,
            positions=tree.path_positions(),
        )

    def of(
        self, session: ChatSession, shown: Sequence[Message], *, focus: str | None = None
    ) -> PathView:
        """``shown``'s messages; each MessageData is made when first read (a long
        conversation opens with data for the pages shown only)."""
        messages = list(shown)
        return self._view(session, messages, [m.id for m in messages], focus=focus)

    def _view(
        self,
        session: ChatSession,
        messages: Sequence[Message],
        ids: Sequence[str],
        *,
        focus: str | None,
        positions: Mapping[str, int] | None = None,
    ) -> PathView:
        last = len(messages) - 1
        return PathView(
            ids,
            lambda i: self.one(session, messages[i], is_last=i == last),
            focus=focus,
            positions=positions,
        )

    def one(
        self, session: ChatSession, message: Message, *, is_last: bool | None = None
    ) -> MessageData:
        info = self._model_info(message.model) if message.model else None
        data = presenting.message_data(session.tree, message, is_last=is_last, info=info)
        live = session.live_text(message.id)
        return data if live is None else replace(data, content=live[0], reasoning=live[1])
