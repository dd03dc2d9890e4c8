"""Stored conversations for tests: a chain of alternating user and assistant messages, written
to a real ChatStore file in one transaction."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from flarechat.core.conversation import (
    ROLE_ASSISTANT,
    ROLE_USER,
    Conversation,
    ConversationTree,
    Message,
    new_id,
)
from flarechat.core.store import ChatStore

__all__ = ["chain", "save", "stored_chain"]


def _fresh_id(_index: int) -> str:
    return new_id()


def chain(
    conversation: Conversation,
    texts: Sequence[str],
    *,
    start: float = 0.0,
    message_id: Callable[[int], str] = _fresh_id,
) -> list[Message]:
    """One message per text, each the reply to the one before (a user's first, then replies and
    questions in turn), created a second apart from ``start``; ``message_id(index)`` names them."""
    messages: list[Message] = []
    for index, text in enumerate(texts):
        messages.append(
            Message(
                id=message_id(index),
                conversation_id=conversation.id,
                parent_id=messages[-1].id if messages else None,
                role=ROLE_USER if index % 2 == 0 else ROLE_ASSISTANT,
                content=text,
                created_at=start + index,
            )
        )
    return messages


def save(path: Path, trees: Sequence[ConversationTree]) -> None:
    """Write whole conversations to the store at ``path`` (created if new)."""
    with ChatStore(path) as store:
        store.insert_trees(trees)


def stored_chain(
    path: Path,
    texts: Sequence[str],
    *,
    title: str,
    start: float = 0.0,
    message_id: Callable[[int], str] = _fresh_id,
) -> tuple[str, list[str]]:
    """A conversation of one message per text (see ``chain``) stored at ``path``: its id and
    its message ids, oldest first."""
    conversation = Conversation(id=new_id(), title=title)
    messages = chain(conversation, texts, start=start, message_id=message_id)
    save(path, [ConversationTree(conversation, messages)])
    return conversation.id, [message.id for message in messages]
