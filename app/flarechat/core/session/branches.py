"""A conversation's branches: which one is shown (stepping between siblings, choosing the one
that holds a search hit), and the edit that will start a new one with the next send."""

from __future__ import annotations

from collections.abc import Callable

from flarechat.core.conversation import ROLE_USER, ConversationTree, Message
from flarechat.core.session.events import EditingChanged, PathChanged, SessionListener

__all__ = ["Branches"]


class Branches:
    """Chooses the visible path of one conversation's tree (``save_selected`` saves the
    choice with the conversation) and keeps the user message an edit replaces."""

    def __init__(
        self,
        tree: ConversationTree,
        *,
        emit: SessionListener,
        save_selected: Callable[[], None],
    ) -> None:
        self._tree = tree
        self._id = tree.conversation.id
        self._emit = emit
        self._save_selected = save_selected
        self._editing: str | None = None  # the user message the next send replaces

    # -- editing ---------------------------------------------------------------------------

    def start_edit(self, message_id: str) -> None:
        """Put a user message in the composer; the next send makes a new branch from it."""
        if message_id not in self._tree or self._tree.get(message_id).role != ROLE_USER:
            return
        self._editing = message_id
        text = self._tree.get(message_id).content
        self._emit(EditingChanged(self._id, editing=True, text=text))

    def edit_last(self) -> None:
        """Up in an empty composer: edit the last user message on the path."""
        users = [m for m in self._tree.path() if m.role == ROLE_USER]
        if users:
            self.start_edit(users[-1].id)

    def cancel_edit(self) -> None:
        if self._editing is not None:
            self._editing = None
            self._emit(EditingChanged(self._id, editing=False))

    def take_edit(self) -> str | None:
        """The user message the next send replaces, if an edit is pending; the edit ends."""
        edited, self._editing = self._editing, None
        if edited is not None:
            self._emit(EditingChanged(self._id, editing=False))
        return edited

    # -- the path shown --------------------------------------------------------------------

    def switch(self, message_id: str, step: int) -> None:
        """Show the previous (-1) or next (+1) sibling of a message, and its branch."""
        tree = self._tree
        if message_id not in tree:
            return
        siblings = [m.id for m in tree.siblings(message_id)]
        index = siblings.index(message_id) + step
        if not 0 <= index < len(siblings):
            return
        tree.select(siblings[index])
        path = tree.path()
        start = next(i for i, m in enumerate(path) if m.id == siblings[index])
        self._emit(PathChanged(self._id, message_id, tuple(path[start:])))
        self._save_selected()

    def reveal(self, message_id: str) -> bool:
        """Put a message on the visible path, choosing and saving its branch when it is on
        one not shown. False when it is not in this conversation."""
        if message_id not in self._tree:
            return False
        before = self.choose(message_id)
        if before is not None:
            after = self._tree.path()
            pairs = enumerate(zip(before, after, strict=False))
            fork = next((i for i, (a, b) in pairs if a.id != b.id), len(before))
            first = before[fork].id if fork < len(before) else after[fork].id
            self._emit(PathChanged(self._id, first, tuple(after[fork:])))
        return True

    def choose(self, message_id: str) -> list[Message] | None:
        """Choose (and save) the branch holding a message; the path shown before, or None
        when the message was on it already."""
        tree = self._tree
        if tree.on_path(message_id):
            return None
        before = tree.path()
        tree.select(message_id)
        self._save_selected()
        return before
