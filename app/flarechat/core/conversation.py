"""Conversations and their messages as plain data, and the branch tree of one conversation."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Self

__all__ = [
    "DEFAULT_TITLE",
    "RECORD_FIELDS",
    "ROLE_ASSISTANT",
    "ROLE_SYSTEM",
    "ROLE_TOOL",
    "ROLE_USER",
    "STATUS_DONE",
    "STATUS_FAILED",
    "STATUS_INTERRUPTED",
    "STATUS_STOPPED",
    "STATUS_STREAMING",
    "TITLE_MAX_LEN",
    "Attachment",
    "Conversation",
    "ConversationTree",
    "Message",
    "RecordReader",
    "auto_title",
    "new_id",
]

DEFAULT_TITLE = "New chat"
TITLE_MAX_LEN = 48
#: Cutting back to a word boundary may drop at most this share of the allowed length.
_MIN_WORD_CUT_SHARE = 0.5
_ELLIPSIS = "\N{HORIZONTAL ELLIPSIS}"
#: Trailing characters dropped before the ellipsis (spaces, punctuation, dashes).
_TITLE_TRAILING = " .,;:-\N{EN DASH}\N{EM DASH}"
_WHITESPACE = re.compile(r"\s+")
_created_at = attrgetter("created_at")

ROLE_USER = "user"
ROLE_ASSISTANT = "assistant"
ROLE_SYSTEM = "system"
#: The result of one tool call, sent back to the model (``Message.tool_call_id`` says which).
ROLE_TOOL = "tool"

STATUS_DONE = "done"
STATUS_STREAMING = "streaming"
STATUS_STOPPED = "stopped"
STATUS_FAILED = "failed"
#: A crash or kill left the reply half-written; its saved text is kept.
STATUS_INTERRUPTED = "interrupted"


#: The bits RFC 9562 fixes in a random UUID: the version nibble and the variant's two bits,
#: and what they are set to (version 4, variant 0b10), as in ``uuid.UUID(version=4)``.
_UUID_FIXED_BITS = (0xF000 << 64) | (0xC000 << 48)
_UUID4_BITS = (0x4000 << 64) | (0x8000 << 48)


def new_id() -> str:
    """A fresh id for a conversation or message: a random (version 4) UUID's 32 hex digits.

    Made here as ``uuid.uuid4().hex`` makes it: importing ``uuid`` (with ``platform``) costs
    ~3 ms before the first paint, which makes the first draft's id (issue #12).
    """
    value = int.from_bytes(os.urandom(16), "big")
    value = (value & ~_UUID_FIXED_BITS) | _UUID4_BITS
    return f"{value:032x}"


@dataclass(frozen=True, slots=True)
class Attachment:
    """An image sent with a user message: its bytes as sent (after any scaling) and its size."""

    mime_type: str  # "image/png", "image/jpeg"…
    data: bytes = field(repr=False)
    width: int
    height: int
    name: str = ""  # the file name it came from, for people ("" when pasted)


#: A message's records (JSON objects in the store), in the order ``stored_records`` takes them.
RECORD_FIELDS = ("request", "usage", "meta", "timings", "error")
_RECORD_INDEX = {name: index for index, name in enumerate(RECORD_FIELDS)}
#: Reads one record's stored text (the store's lenient JSON reader).
RecordReader = Callable[[str], "dict[str, Any] | None"]


#: A message's list fields, which a stored message without any leaves unset until first read.
_LIST_FIELDS = frozenset({"attachments", "tool_calls"})


class _StoredRecords:
    """A message read from the store keeps its records' text until one is first read: opening
    a long conversation decoded thousands that only a few shown messages need at once.

    A record not read yet is a slot never set; Python then asks ``__getattr__``, which reads
    it and sets the slot (so equality, copies, ``replace`` and ``asdict`` all see the value).
    The same goes for an empty list of images or tool calls: the store makes its messages
    without ``__init__`` (see ``unset``) and sets neither list when there is nothing in it.
    """

    __slots__ = ("_stored",)

    @classmethod
    def unset(cls) -> Self:
        """A message with no field set, for the store to fill in (a long chat's thousands of
        messages: ``__init__``'s eighteen arguments, two empty lists to drop and a record
        slot to empty again for each cost ~5x setting the few it has; issue #12). The store
        sets every other field, and the records too or ``stored_records`` for them."""
        return object.__new__(cls)

    def stored_records(self, read: RecordReader, texts: tuple[str | None, ...]) -> None:
        """Leave the records unset, to be read from ``texts`` (RECORD_FIELDS' order)."""
        self._stored = (read, *texts)

    if not TYPE_CHECKING:  # for type checkers a Message has no unknown attributes

        def __getattr__(self, name: str) -> Any:
            if name in _LIST_FIELDS:
                made: list[Any] = []
                setattr(self, name, made)
                return made
            index = _RECORD_INDEX.get(name)
            if index is None or name == "_stored":
                raise AttributeError(name)
            stored = self._stored  # only a stored message has records unset
            text = stored[index + 1]
            value = None if text is None else stored[0](text)
            setattr(self, name, value)  # two threads reading it at once set equal values
            return value


@dataclass(slots=True)
class Message(_StoredRecords):
    """One message; ``parent_id`` links it into its conversation's branch tree."""

    id: str
    conversation_id: str
    parent_id: str | None  # None = first message of the conversation
    role: str  # ROLE_*
    content: str
    reasoning: str = ""
    status: str = STATUS_DONE  # STATUS_*
    created_at: float = field(default_factory=time.time)
    model: str | None = None
    finish_reason: str | None = None
    #: exact request record (model, route, endpoint, params, system prompt, gateway options);
    #: never a token — the store scrubs credential-like keys before saving
    request: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None  # prompt/completion/total/cached tokens, neurons
    meta: dict[str, Any] | None = None  # request_id, log_id, cache_status
    timings: dict[str, Any] | None = None  # ttft, duration (seconds)
    error: dict[str, Any] | None = None  # {"kind", "message"}: a state, never model text
    #: images on a user message, in the order they were attached
    attachments: list[Attachment] = field(default_factory=list)
    #: the calls an assistant reply made: ``{"id", "name", "arguments": <JSON text>}`` each
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    #: on a ``tool`` message: the id of the call this is the result of
    tool_call_id: str | None = None


@dataclass(slots=True)
class Conversation:
    """A conversation's own fields and per-conversation settings."""

    id: str
    title: str = DEFAULT_TITLE
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    pinned: bool = False
    model: str | None = None
    system_prompt: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    deleted_at: float | None = None  # soft-deleted (undo possible) when set


class _Selection(dict[str | None, str]):
    """A tree's chosen child per parent: a dict that counts the writes made to it, so a walked
    path knows it is still current without comparing the whole selection each time it is
    read (~0.3 ms for a 5,000-message chat, several times an open; issue #12)."""

    __slots__ = ("writes",)

    def __init__(self, choices: Mapping[str | None, str] = MappingProxyType({})) -> None:
        super().__init__(choices)
        self.writes = 0

    def __setitem__(self, key: str | None, value: str) -> None:
        super().__setitem__(key, value)
        self.writes += 1

    def __delitem__(self, key: str | None) -> None:
        super().__delitem__(key)
        self.writes += 1

    def __ior__(self, other: Any) -> Self:  # type: ignore[misc,override]
        self.writes += 1
        return super().__ior__(other)

    def update(self, *args: Any, **kwargs: str) -> None:
        super().update(*args, **kwargs)
        self.writes += 1

    def setdefault(self, key: str | None, default: str) -> str:
        self.writes += 1
        return super().setdefault(key, default)

    def pop(self, key: str | None, *default: Any) -> Any:
        self.writes += 1
        return super().pop(key, *default)

    def popitem(self) -> tuple[str | None, str]:
        self.writes += 1
        return super().popitem()

    def clear(self) -> None:
        super().clear()
        self.writes += 1


#: A walked path: its messages, their ids, and each id's position on it.
_Walked = tuple[tuple["Message", ...], tuple[str, ...], dict[str, int]]


class ConversationTree:
    """The messages of one conversation as a tree, with a chosen child per parent.

    ``selected`` maps a parent id (``None`` for the roots) to the id of its chosen child; a parent
    with no valid choice shows its newest child. Siblings are kept in creation order.
    """

    def __init__(
        self,
        conversation: Conversation,
        messages: Iterable[Message] = (),
        selected: Mapping[str | None, str] | None = None,
    ) -> None:
        self.conversation = conversation
        self._selected = _Selection()
        self._by_id: dict[str, Message] = {}
        #: Each parent's oldest child (``None``: the first root). A long chat is a line: one
        #: child each, and no list to make (and for the collector to walk) for every message.
        self._first: dict[str | None, Message] = {}
        #: Every child, in creation order, of the parents with more than one.
        self._more: dict[str | None, list[Message]] = {}
        #: The last path walked, with what it was walked from (see path()): the tree's shape,
        #: its selection and that selection's writes, and the path with its ids and positions.
        self._walked: tuple[int, _Selection, int, _Walked] | None = None
        self._shape = 0  # bumped by every message added
        pending = list(messages)
        newest: dict[str | None, str] = {}  # filled as a plain dict: thousands of writes
        #: Whether each message came after its parent in the order given (the store's order
        #: is such: then no message can have lost its parent or be part of a loop).
        self.parents_first = self._insert_all(pending, newest)
        self._selected = _Selection(newest)
        if not self.parents_first:
            orphans = [
                m.id
                for m in sorted(pending, key=_created_at)
                if m.parent_id and m.parent_id not in self._by_id
            ]
            if orphans:
                raise ValueError(f"messages with unknown parents: {', '.join(orphans)}")
        for parent_id, child_id in (selected or {}).items():
            child = self._by_id.get(child_id)
            if child is not None and child.parent_id == parent_id:
                self.selected[parent_id] = child_id

    def _insert_all(self, messages: list[Message], selected: dict[str | None, str]) -> bool:
        """_insert() for each of ``messages``, inlined: a long conversation has thousands of
        them, and opening it waits for this. Each parent's newest child goes in ``selected``.
        Whether every message came after its parent."""
        conversation_id, by_id = self.conversation.id, self._by_id
        first, more = self._first, self._more
        parents_first = True
        for message in messages:
            if message.conversation_id != conversation_id:
                raise ValueError(f"message {message.id} belongs to another conversation")
            message_id, parent_id = message.id, message.parent_id
            if message_id in by_id:
                raise ValueError(f"duplicate message id {message_id}")
            if parent_id is not None and parent_id not in by_id:
                parents_first = False
            by_id[message_id] = message
            oldest = first.get(parent_id)
            if oldest is None:
                first[parent_id] = message
                selected[parent_id] = message_id
                continue
            siblings = more.get(parent_id)
            if siblings is None:
                siblings = more[parent_id] = [oldest]
            siblings.append(message)
            if siblings[-2].created_at > message.created_at:
                siblings.sort(key=_created_at)  # stable: equal times keep the given order
                first[parent_id] = siblings[0]
            selected[parent_id] = siblings[-1].id
        self._shape += len(messages)
        return parents_first

    def _insert(self, message: Message) -> None:
        if message.conversation_id != self.conversation.id:
            raise ValueError(f"message {message.id} belongs to another conversation")
        if message.id in self._by_id:
            raise ValueError(f"duplicate message id {message.id}")
        self._by_id[message.id] = message
        self._shape += 1
        parent_id = message.parent_id
        oldest = self._first.get(parent_id)
        if oldest is None:
            self._first[parent_id] = message
        else:
            siblings = self._more.setdefault(parent_id, [oldest])
            siblings.append(message)
            if siblings[-2].created_at > message.created_at:
                siblings.sort(key=_created_at)  # stable: equal times keep insertion order
                self._first[parent_id] = siblings[0]
        self.selected[parent_id] = message.id

    def _children(self, parent_id: str | None) -> Sequence[Message]:
        """The children of a message (``None``: the roots), in creation order; not a copy."""
        siblings = self._more.get(parent_id)
        if siblings is not None:
            return siblings
        oldest = self._first.get(parent_id)
        return () if oldest is None else (oldest,)

    @property
    def selected(self) -> dict[str | None, str]:
        """Each parent's chosen child (see the class); writes to it are seen by path()."""
        return self._selected

    @selected.setter
    def selected(self, choices: Mapping[str | None, str]) -> None:
        self._selected = _Selection(choices)

    def add(self, message: Message) -> None:
        """Add a message; it becomes the selected child of its parent (so it is on the path)."""
        if message.parent_id is not None and message.parent_id not in self._by_id:
            raise ValueError(f"unknown parent {message.parent_id}")
        self._insert(message)
        self._select_ancestors(message)

    def get(self, message_id: str) -> Message:
        """The message with this id (KeyError if it is not in the tree)."""
        return self._by_id[message_id]

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._by_id

    def __len__(self) -> int:
        return len(self._by_id)

    def __iter__(self) -> Iterator[Message]:
        """Every message of every branch, parents before children, siblings in creation order."""
        stack = list(reversed(self._children(None)))
        while stack:
            message = stack.pop()
            yield message
            stack.extend(reversed(self._children(message.id)))

    def children(self, parent_id: str | None) -> list[Message]:
        """The children of a message (``None``: the roots), in creation order."""
        return list(self._children(parent_id))

    def siblings(self, message_id: str) -> list[Message]:
        """The message and its alternatives (same parent), in creation order (the 1/2 switcher)."""
        return self.children(self.get(message_id).parent_id)

    def sibling_position(self, message_id: str) -> tuple[int, int]:
        """(1-based index among its siblings, number of siblings)."""
        siblings = self.siblings(message_id)
        index = next(i for i, m in enumerate(siblings) if m.id == message_id)
        return index + 1, len(siblings)

    def chosen_child(self, parent_id: str | None) -> Message | None:
        """The selected child of a parent, else its newest child, else None."""
        children = self._children(parent_id)
        if not children:
            return None
        chosen = self._by_id.get(self.selected.get(parent_id, ""))
        if chosen is not None and chosen.parent_id == parent_id:
            return chosen
        return children[-1]

    def path(self) -> list[Message]:
        """The visible path from the root, following the selected child at each step.

        Walked once per state of the tree: opening a conversation reads it several times (the
        transcript, the meters, the lab), and a long one takes milliseconds to walk. The
        state is the messages added and the selection (its writes are counted, so a write to
        ``selected`` from outside is seen too).
        """
        return list(self._path_index()[0])

    def on_path(self, message_id: str) -> bool:
        """Is the message on the visible path? (Asked when opening at a search hit: the
        path's positions, made once per state, instead of a walk up from the message.)"""
        return message_id in self._path_index()[2]

    def path_ids(self) -> tuple[str, ...]:
        """The ids of path()'s messages, in order (made once per state of the tree)."""
        return self._path_index()[1]

    def path_positions(self) -> Mapping[str, int]:
        """A message id's position on path(), for every message on it (made once per state
        of the tree, and shared: copy it to change it)."""
        return self._path_index()[2]

    def _path_index(self) -> _Walked:
        walked, selected = self._walked, self._selected
        if (
            walked is not None
            and walked[0] == self._shape
            and walked[1] is selected
            and walked[2] == selected.writes
        ):
            return walked[3]
        path, positions = self._walk()
        index = (tuple(path), tuple(positions), positions)
        self._walked = (self._shape, selected, selected.writes, index)
        return index

    def _walk(self) -> tuple[list[Message], dict[str, int]]:
        """chosen_child() from the roots down, inlined: thousands of steps in a long chat. The
        path, and each of its ids' position on it (in the path's order)."""
        by_id, first, more, selected = self._by_id, self._first, self._more, self.selected
        path: list[Message] = []
        positions: dict[str, int] = {}
        parent_id: str | None = None
        while (current := first.get(parent_id)) is not None:
            siblings = more.get(parent_id)
            if siblings is not None:  # an only child is the chosen one whatever is selected
                current = by_id.get(selected.get(parent_id, ""))
                if current is None or current.parent_id != parent_id:
                    current = siblings[-1]
            if current.id in positions:
                break
            positions[current.id] = len(path)
            path.append(current)
            parent_id = current.id
        return path, positions

    def path_to(self, message_id: str) -> list[Message]:
        """The chain of messages from the root down to (and including) this message."""
        chain: list[Message] = []
        seen: set[str] = set()
        current: Message | None = self.get(message_id)
        while current is not None and current.id not in seen:
            seen.add(current.id)
            chain.append(current)
            current = self._by_id.get(current.parent_id) if current.parent_id else None
        chain.reverse()
        return chain

    def select(self, message_id: str) -> None:
        """Show this message: choose it among its siblings (and its ancestors among theirs).

        The path then continues below it with each descendant's selected (or newest) child.
        """
        self._select_ancestors(self.get(message_id))

    def _select_ancestors(self, message: Message) -> None:
        for item in self.path_to(message.id):
            self.selected[item.parent_id] = item.id

    def explicit_selection(self) -> dict[str | None, str]:
        """The choices that differ from the default (newest child): all that needs saving."""
        choices: dict[str | None, str] = {}
        for parent, child in self.selected.items():
            children = self._children(parent)
            if children and children[-1].id != child:
                choices[parent] = child
        return choices

    def last(self) -> Message | None:
        """The last message on the visible path (None for an empty conversation)."""
        path = self.path()
        return path[-1] if path else None


def auto_title(first_user_text: str, max_len: int = TITLE_MAX_LEN) -> str:
    """A one-line title from the first user message, cut at a word boundary with "…"."""
    text = _WHITESPACE.sub(" ", first_user_text).strip()
    if not text:
        return DEFAULT_TITLE
    if len(text) <= max_len:
        return text
    cut = text[: max_len - len(_ELLIPSIS)]
    boundary = cut.rfind(" ")
    if boundary >= max_len * _MIN_WORD_CUT_SHARE:
        cut = cut[:boundary]
    return cut.rstrip(_TITLE_TRAILING) + _ELLIPSIS
