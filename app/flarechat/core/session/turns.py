"""Adding turns to a conversation's tree: a user (or tool) message, the assistant message that
answers it — started at once — and a compare round, one reply per column."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from flarechat.core.conversation import (
    ROLE_ASSISTANT,
    ROLE_TOOL,
    ROLE_USER,
    STATUS_STREAMING,
    Attachment,
    ConversationTree,
    Message,
    new_id,
)
from flarechat.core.session.continuing import CONTINUE_PROMPT, extends_in_place
from flarechat.core.session.events import (
    MessageAdded,
    MessageChanged,
    PathChanged,
    SessionListener,
    SiblingsChanged,
    TurnStarted,
)
from flarechat.core.session.launching import ReplyLauncher
from flarechat.core.session.requests import ColumnSpec, RequestMaker

if TYPE_CHECKING:
    from flarechat.api.models import ModelInfo

__all__ = ["CONTINUE_PROMPT", "FINISH_LENGTH", "Turns", "can_continue", "continue_hint"]

FINISH_LENGTH = "length"
#: Where a limit set for one chat is changed, and where the default for every chat is.
CHAT_SETTINGS = "this chat's Conversation settings"
APP_SETTINGS = "Settings"
_PARAM_MAX_TOKENS = "max_tokens"


def can_continue(tree: ConversationTree, message: Message, *, is_last: bool | None = None) -> bool:
    """Whether a reply cut at max_tokens can be continued: it must end the visible path."""
    if message.role != ROLE_ASSISTANT or message.finish_reason != FINISH_LENGTH:
        return False
    if is_last is None:
        last = tree.last()
        is_last = last is not None and last.id == message.id
    return is_last


def continue_hint(tree: ConversationTree, message: Message, info: ModelInfo | None) -> str:
    """What the max-tokens note under ``message`` says: the limit it stopped at, where that
    limit was set (this chat's settings, or Settings for every chat) and, plainly, what
    Continue sends (``core.session.continuing``): the reply so far for the model to extend,
    or, to a reasoning model (``info``), words asking it to go on. "" for any other."""
    if message.role != ROLE_ASSISTANT or message.finish_reason != FINISH_LENGTH:
        return ""
    params = (message.request or {}).get("params")
    limit = params.get(_PARAM_MAX_TOKENS) if isinstance(params, dict) else None
    where = CHAT_SETTINGS if _PARAM_MAX_TOKENS in tree.conversation.params else APP_SETTINGS
    size = f"{limit:,}-token " if isinstance(limit, int) and not isinstance(limit, bool) else ""
    if extends_in_place(message, info):
        sends = "sends the reply so far back for the model to extend"
    else:
        why = " (a reasoning model starts afresh from a reply sent back)" if info else ""
        sends = (
            f"asks \N{LEFT DOUBLE QUOTATION MARK}{CONTINUE_PROMPT}\N{RIGHT DOUBLE QUOTATION MARK}"
            f" after it{why} and adds the answer to this reply"
        )
    return (
        f"Stopped at the {size}limit set in {where}: raise it there and regenerate, "
        f"or Continue, which {sends}."
    )


class Turns:
    """Adds messages to one conversation's tree and says so; each reply it adds is started
    by ``launcher``, with its compare column (if any) given to ``requests``."""

    def __init__(
        self,
        tree: ConversationTree,
        *,
        launcher: ReplyLauncher,
        requests: RequestMaker,
        emit: SessionListener,
        clock: Callable[[], float],
        model: Callable[[], str],
    ) -> None:
        self._tree = tree
        self._id = tree.conversation.id
        self._launcher = launcher
        self._requests = requests
        self._emit = emit
        self._clock = clock
        self._model = model  # the conversation's model now

    def add_user(
        self,
        text: str,
        *,
        parent_id: str | None,
        replaces: str | None,
        images: Sequence[Attachment] = (),
        role: str = ROLE_USER,
        tool_call_id: str | None = None,
    ) -> Message:
        """A user (or ``role``) message under ``parent_id``; ``replaces``: the message it
        is a new branch of (an edit), shown in its place."""
        previous = self._tree.last()
        user = Message(new_id(), self._id, parent_id, role, text)
        user.attachments, user.tool_call_id = list(images), tool_call_id
        self._tree.add(user)
        if replaces is not None:
            self._emit(PathChanged(self._id, replaces, (user,)))
            return user
        if previous is not None and previous.role == ROLE_ASSISTANT:
            self._emit(MessageChanged(self._id, previous))  # its Continue offer goes
        self._emit(MessageAdded(self._id, user))
        return user

    def begin_reply(
        self, parent: Message, *, store_first: list[Message], column: ColumnSpec | None = None
    ) -> str:
        """Start the reply to ``parent`` (``store_first``: rows to commit before sending);
        returns its message id."""
        sent_at = self._clock()
        assistant = Message(
            id=new_id(),
            conversation_id=self._id,
            parent_id=parent.id,
            role=ROLE_ASSISTANT,
            content="",
            status=STATUS_STREAMING,
            model=column.model if column is not None else self._model(),
        )
        if column is not None:
            self._requests.use_column(assistant.id, column)
        self._tree.add(assistant)
        self._launcher.begin(assistant, store_first=store_first, sent_at=sent_at)
        self._emit(TurnStarted(self._id, assistant.id))
        index, count = self._tree.sibling_position(assistant.id)
        if count > 1:
            self._emit(SiblingsChanged(self._id, assistant.id, index - 1, count))
        return assistant.id

    def answer_tools(self, reply_id: str, answers: Sequence[tuple[str, str]]) -> str:
        """One ``tool`` message per (call id, result), in order under the reply that made
        the calls, then the model's next reply (its id)."""
        added: list[Message] = []
        parent_id = reply_id
        for call_id, result in answers:
            message = self.add_user(
                result, parent_id=parent_id, replaces=None, role=ROLE_TOOL, tool_call_id=call_id
            )
            added.append(message)
            parent_id = message.id
        return self.begin_reply(added[-1], store_first=added)

    def compare(
        self,
        texts: Sequence[str],
        columns: Sequence[ColumnSpec],
        *,
        after: Sequence[str | None] | None,
    ) -> list[str]:
        """One reply per column to ``texts`` (one a column); see ``ChatSession.send_compare``."""
        last = self._tree.last()
        if after is None and not any(c.prompt is not None for c in columns):
            user = self.add_user(texts[0], parent_id=last.id if last else None, replaces=None)
            users = [user] * len(columns)
        else:
            # Follow-ups continue each column's branch; columns with their own prompt (a
            # template run over rows) each get their own user message, as sibling branches.
            parents = after if after is not None else [last.id if last else None] * len(columns)
            users = [
                self.add_user(t, parent_id=p, replaces=None)
                for t, p in zip(texts, parents, strict=True)
            ]
        replies: list[str] = []
        for index, (user, column) in enumerate(zip(users, columns, strict=True)):
            first = user is not users[index - 1] if index else True
            replies.append(
                self.begin_reply(user, store_first=[user] if first else [], column=column)
            )
        return replies
