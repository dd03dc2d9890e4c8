"""View data: the plain values controllers hand to widgets (no Qt, no api objects), so
controller modules never import a widget module."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, overload

from flarechat.api.config import Secret
from flarechat.core.conversation import Attachment
from flarechat.settings.schema import Settings

if TYPE_CHECKING:  # core.session is the chat engine's, built after the first paint (issue #12)
    from flarechat.core.session.structured import JsonVerdict

__all__ = ["MessageData", "PathView", "ToolCallData", "VerifyInput"]


@dataclass(frozen=True, slots=True)
class ToolCallData:
    """One tool call of a reply: ``arguments`` as the model sent them (JSON text), and the
    canned result defined with the tool (None when it has none)."""

    id: str
    name: str
    arguments: str
    canned: str | None = None


@dataclass(frozen=True, slots=True)
class MessageData:
    """Plain values the transcript shows for one message (no Qt, no api objects).

    ``role``: "user" | "assistant" | "system". ``status``: "waiting" | "streaming" | "done" |
    "stopped" | "interrupted" | "failed". ``meta_line`` is already formatted ("TTFT 0.42 s ·
    38 tok/s · …"); the log id is added as a copy link (or linked in place if the line has it).
    ``sibling_index`` is 0-based: index 0 of count 2 shows "< 1/2 >". A ``tool`` message is
    the result the user gave for one call (``content``).
    """

    id: str
    role: str
    content: str = ""
    reasoning: str = ""
    status: str = "done"
    model: str = ""
    finish_reason: str | None = None
    meta_line: str = ""
    log_id: str | None = None
    error_text: str | None = None
    can_continue: bool = True
    #: the max-tokens note (``core.session.continue_hint``); "" unless the reply hit it
    continue_hint: str = ""
    sibling_index: int = 0
    sibling_count: int = 1
    #: images on a user message
    attachments: tuple[Attachment, ...] = ()
    #: the calls a reply made, and whether they wait for results (the reply is the last)
    tool_calls: tuple[ToolCallData, ...] = ()
    awaiting_tool_results: bool = False
    #: a reply asked for as JSON: its verdict, and "json_object" or "json_schema"
    json_verdict: JsonVerdict | None = None
    json_kind: str = ""
    #: how the reply came, when that is worth saying (e.g. streaming was turned off)
    note: str = ""


@dataclass(frozen=True, slots=True)
class VerifyInput:
    """What the dialog hands the verify callable: the values as typed, the token wrapped."""

    account_id: str
    api_token: Secret
    api_base: str = ""  # "" = the default Cloudflare API base
    request_timeout: float = Settings().request_timeout


class PathView(Sequence[MessageData]):
    """The messages of a conversation's shown path, each MessageData made only when first
    asked for (then kept): opening a long conversation makes data for the pages shown only.

    ``made_count`` counts the MessageData made (tests bound it). ``focus``: the message to
    open the conversation at (a search hit), instead of its newest page.
    """

    def __init__(
        self,
        ids: Sequence[str],
        make: Callable[[int], MessageData],
        *,
        focus: str | None = None,
        positions: Mapping[str, int] | None = None,
    ) -> None:
        self._ids = list(ids)
        self._make = make
        self.focus = focus
        self._made: dict[int, MessageData] = {}
        #: every id's position: the one given (never changed here), else made when first asked
        self._positions: Mapping[str, int] | None = positions
        self.made_count = 0

    @classmethod
    def empty(cls) -> PathView:
        return cls([], _no_message)

    def __len__(self) -> int:
        return len(self._ids)

    def ids(self) -> list[str]:
        """Every message id, in path order."""
        return list(self._ids)

    def id_at(self, position: int) -> str:
        return self._ids[position]

    def data_at(self, position: int) -> MessageData:
        position = range(len(self._ids))[position]  # negative positions; IndexError
        data = self._made.get(position)
        if data is None:
            data = self._made[position] = self._make(position)
            self.made_count += 1
        return data

    def position_of(self, message_id: str) -> int | None:
        if self._positions is None:
            self._positions = self.positions()
        return self._positions.get(message_id)

    def positions(self) -> dict[str, int]:
        """Every id's position, in a new dict (the caller may change it)."""
        if self._positions is not None:
            return dict(self._positions)
        return {mid: position for position, mid in enumerate(self._ids)}

    @overload
    def __getitem__(self, index: int) -> MessageData: ...

    @overload
    def __getitem__(self, index: slice) -> PathView: ...

    def __getitem__(self, index: int | slice) -> MessageData | PathView:
        if isinstance(index, int):
            return self.data_at(index)
        positions = range(len(self._ids))[index]
        return PathView([self._ids[p] for p in positions], lambda i: self.data_at(positions[i]))

    def __iter__(self) -> Iterator[MessageData]:
        return (self.data_at(position) for position in range(len(self._ids)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or len(other) != len(self):
            return NotImplemented if not isinstance(other, Sequence) else False
        return all(mine == theirs for mine, theirs in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PathView({len(self._ids)} messages, {self.made_count} made)"


def _no_message(position: int) -> MessageData:
    raise IndexError(position)
