"""The one "current model" of a conversation (design.md): which model the next message goes
to, worked out in one place, and a small observable every view of it reads.

A conversation's own model (picked, or set by a preset) comes first; a conversation with
none of its own (made by compare, whose columns each had theirs) uses the model of the last
reply on its shown path, which is the column it continued with; else the default (the last
model used). Nothing here knows Qt: ``ui.control`` turns a change into its signal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from flarechat.core.conversation import ROLE_ASSISTANT, Conversation, Message

__all__ = ["CurrentModel", "model_in_use"]


def model_in_use(conversation: Conversation, path: Sequence[Message], *, default: str) -> str:
    """The model a conversation's next message goes to (see the module's docstring)."""
    if conversation.model:
        return conversation.model
    for message in reversed(path):
        if message.role == ROLE_ASSISTANT and message.model:
            return message.model
    return default


class CurrentModel:
    """The current model as last worked out, and who is told when it changes.

    ``update`` is called whenever the model may have changed (a pick, a switch of chat, a
    preset); listeners hear of it once per real change, never twice for the same model.
    """

    def __init__(self, model: str = "") -> None:
        self._model = model
        self._listeners: list[Callable[[str], object]] = []

    @property
    def value(self) -> str:
        return self._model

    def subscribe(self, listener: Callable[[str], object]) -> None:
        self._listeners.append(listener)

    def update(self, model: str, *, force: bool = False) -> bool:
        """Take ``model``; True (and every listener told) when it differs, or ``force``."""
        if model == self._model and not force:
            return False
        self._model = model
        for listener in list(self._listeners):
            listener(model)
        return True
