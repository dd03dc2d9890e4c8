"""The conversation view: coalesced streaming into open replies over a paged message list."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from PySide6.QtCore import QRect, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QScrollArea, QToolButton, QVBoxLayout, QWidget

from flarechat.ui.transcript.message_list import (
    JUMP_SHORTCUT,
    MAX_LIVE_MESSAGES,
    PAGE_SIZE,
    PAGE_STEP,
    MessageList,
)
from flarechat.ui.transcript.message_view import OPEN_STATUSES, MessageData, MessageView
from flarechat.ui.transcript.paint_pacer import PaintPacer
from flarechat.ui.transcript.warm_up import warm_up_in_background

__all__ = [
    "FLUSH_INTERVAL_MS",
    "MAX_LIVE_MESSAGES",
    "PAGE_SIZE",
    "PAGE_STEP",
    "TranscriptView",
]

#: Streaming deltas are buffered and painted at most this often (~30 Hz).
FLUSH_INTERVAL_MS = 33
#: A find match lower than this above the viewport's bottom is scrolled up into view, px.
MATCH_MARGIN_PX = 48


@dataclass(slots=True)
class _Stream:
    """The open reply's text so far plus deltas not yet painted."""

    content: str = ""
    reasoning: str = ""
    text_chunks: list[str] = field(default_factory=list)
    reasoning_chunks: list[str] = field(default_factory=list)

    def drain(self) -> None:
        if self.text_chunks:
            self.content += "".join(self.text_chunks)
            self.text_chunks.clear()
        if self.reasoning_chunks:
            self.reasoning += "".join(self.reasoning_chunks)
            self.reasoning_chunks.clear()


class TranscriptView(QWidget):
    """The conversation. Holds all MessageData, but widgets only for a window of them.

    Signals (message ids are str):
        regenerate_requested(str), edit_requested(str), continue_requested(str),
        view_code_requested(str): a reply's "View as code" action,
        branch_requested(str, int): +1/-1 to the next/previous sibling,
        log_id_copied(str): a gateway log id was copied to the clipboard,
        tool_results_submitted(str, dict): reply id, ``{call id: result}`` (tool call cards).

    ``render_count`` counts re-renders of open messages; ``flush_count`` buffer flushes.
    """

    regenerate_requested = Signal(str)
    edit_requested = Signal(str)
    continue_requested = Signal(str)
    view_code_requested = Signal(str)
    branch_requested = Signal(str, int)
    log_id_copied = Signal(str)
    tool_results_submitted = Signal(str, dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Conversation")
        self.render_count = 0
        self.flush_count = 0
        self._streams: dict[str, _Stream] = {}
        self._notes: dict[str, str | None] = {}
        self._dirty: dict[str, None] = {}
        self._marked: set[str] = set()  # the live messages with find marks
        self._find: tuple[str, frozenset[str]] = ("", frozenset())  # query, its messages
        self._current: str | None = None  # the message of the current (strong) match
        # Messages appended this loop turn, not yet in the list: their widgets are made at
        # the turn's end (or when first asked about), so messages of a conversation replaced
        # in the same turn (four chats opened and sent to at once) never get widgets.
        self._pending: dict[str, MessageData] = {}
        self._pending_scroll = False
        self._settle_timer = QTimer(self, singleShot=True, interval=0)
        self._settle_timer.timeout.connect(self._settle)
        self._pinned: str | None = None  # the latest reply: its actions always shown
        self._pin_timer = QTimer(self, singleShot=True, interval=0)
        self._pin_timer.timeout.connect(self._pin_latest_reply)
        self._list = MessageList(self._make_view, self)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self._list)
        self._flush_timer = QTimer(self)
        self._flush_timer.setObjectName("transcriptFlushTimer")
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(FLUSH_INTERVAL_MS)
        self._flush_timer.timeout.connect(self._flush)
        self._pacer: PaintPacer | None = None  # made with the first reply streamed
        latest = QShortcut(QKeySequence(JUMP_SHORTCUT), self)
        latest.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        latest.activated.connect(self.scroll_to_latest)

    # -- queries ---------------------------------------------------------------------------------

    @property
    def jump_button(self) -> QToolButton:
        self._settle()
        return self._list.jump_button

    @property
    def scroll_area(self) -> QScrollArea:
        self._settle()
        return self._list.scroll_area

    @property
    def live_count(self) -> int:
        """Message widgets currently alive."""
        self._settle()
        return self._list.live_count

    def message_count(self) -> int:
        self._settle()
        return self._list.count()

    def messages(self) -> list[MessageData]:
        """Every message's current data, oldest first (open replies include painted text)."""
        self._settle()
        return self._list.messages()

    def view_for(self, message_id: str) -> MessageView | None:
        """The live widget of a message, or None when it is paged out or unknown."""
        self._settle()
        return self._list.view_for(message_id)

    def is_at_bottom(self) -> bool:
        self._settle()
        return self._list.is_at_bottom()

    def is_loading(self) -> bool:
        """True while a page of message widgets is still being filled in."""
        self._settle()
        return self._list.is_loading()

    def is_pacing_paints(self) -> bool:
        """True while a reply streams: the window repaints once a frame (PaintPacer)."""
        return self._pacer is not None and self._pacer.is_pacing()

    def scroll_to_latest(self) -> None:
        """Show the newest message and follow the reply again (the jump button's action)."""
        self._settle()
        self._list.scroll_to_latest()

    def set_find_matches(self, query: str, message_ids: Sequence[str]) -> None:
        """The find bar's results: every occurrence of ``query`` in these messages is marked
        (in each live one now, and in any that gets a widget later), none of them stronger
        until ``scroll_to`` names the current match."""
        self.clear_matches()
        self._find = (query.strip(), frozenset(message_ids) if query.strip() else frozenset())
        for message_id in self._find[1]:
            view = self._list.view_for(message_id)
            if view is not None:
                self._mark(view, current=None)

    def scroll_to(self, message_id: str, *, query: str = "", occurrence: int = 0) -> bool:
        """Open the conversation at a message, however far back (a search hit, a find match).

        The page around it is loaded (the window of live widgets jumps there, staying within
        MAX_LIVE_MESSAGES) and it is scrolled near the top. With a ``query``, every occurrence
        in it is marked, occurrence number ``occurrence`` stronger and scrolled into view; the
        previous current match turns weak (a find match) or goes (a search hit). False when
        the message is not in this conversation's visible path.
        """
        self._settle()
        view = self._list.scroll_to(message_id)
        if view is None:
            return False
        query = query.strip()
        if query != self._find[0] or message_id not in self._find[1]:
            self.clear_matches()  # not one of the find bar's matches: only it is marked
            self._find = (query, frozenset({message_id}) if query else frozenset())
        elif self._current not in (None, message_id):  # the earlier current match turns weak
            earlier = self._list.view_for(self._current)
            if earlier is not None:
                self._mark(earlier, current=None)
        if query:
            self._current = message_id
            spot = self._mark(view, current=occurrence)
            if spot is not None:
                self._reveal_spot(view, spot)
        return True

    def _mark(self, view: MessageView, *, current: int | None) -> QRect | None:
        self._marked.add(view.data.id)
        return view.mark_matches(self._find[0], current=current)

    def _reveal_spot(self, view: MessageView, spot: QRect) -> None:
        """Scroll a match deep in a long message up into the viewport."""
        viewport = self.scroll_area.viewport()
        if view.mapTo(viewport, spot.bottomLeft()).y() <= viewport.height() - MATCH_MARGIN_PX:
            return
        center = view.mapToParent(spot.center())  # in the scrolled content
        self.scroll_area.ensureVisible(center.x(), center.y(), 0, viewport.height() // 3)

    def clear_matches(self) -> None:
        """Remove the find marks (the find bar closed, or its query changed)."""
        self._settle()
        for message_id in self._marked:
            view = self._list.view_for(message_id)
            if view is not None:
                view.clear_matches()
        self._marked.clear()
        self._find = ("", frozenset())
        self._current = None

    def _pin_latest_reply(self) -> None:
        """The newest message, when it is a reply, keeps its actions shown (as chat apps
        show them under the answer just read); the others show theirs on hover and focus."""
        self._settle()
        count = self._list.count()
        latest = self._list.item(count - 1) if count else None
        pinned = latest.id if latest is not None and latest.role == "assistant" else None
        earlier = self._list.view_for(self._pinned) if self._pinned not in (None, pinned) else None
        if earlier is not None:
            earlier.set_actions_pinned(False)
        self._pinned = pinned
        view = self._list.view_for(pinned) if pinned is not None else None
        if view is not None:
            view.set_actions_pinned(True)

    def marked(self, message_id: str) -> list[tuple[int, int]]:
        """The find marks shown in a message ([] if none, or it has no widget)."""
        self._settle()
        view = self._list.view_for(message_id)
        return view.match_ranges() if view is not None else []

    def current_mark(self, message_id: str) -> tuple[int, int] | None:
        """The mark shown stronger in a message (the current find match), or None."""
        self._settle()
        view = self._list.view_for(message_id)
        return view.current_match_range() if view is not None else None

    # -- messages --------------------------------------------------------------------------------

    def clear(self) -> None:
        self._flush_timer.stop()
        if self._pacer is not None:
            self._pacer.stop()
        self._settle_timer.stop()
        self._pending.clear()
        self._pending_scroll = False
        self._streams.clear()
        self._notes.clear()
        self._dirty.clear()
        self._list.clear()

    def set_history(self, messages: Sequence[MessageData]) -> None:
        """Show a whole conversation: the newest messages at once, the rest of the last page
        a few at a time, earlier pages when the user scrolls up."""
        self.clear()
        self._list.set_items(messages)

    def add_message(self, view: MessageData) -> None:
        """Append a finished or historical message (the user's own message scrolls to it)."""
        self._append(view)
        if view.role == "user":
            self._pending_scroll = True  # once it is in the list

    def begin_reply(self, message_id: str, *, model: str) -> None:
        """Append an open assistant message in the "waiting" state."""
        # A reply can start without a keystroke (regenerate, retry, compare): Markdown gets
        # ready, and the app's lasting objects leave the collector's full passes, before
        # its first token, not while it streams.
        warm_up_in_background()
        self._streams[message_id] = _Stream()
        self._append(MessageData(id=message_id, role="assistant", status="waiting", model=model))

    def reopen_reply(self, message_id: str) -> None:
        """Open a reply already shown again (Continue): its text streams on from where it
        stopped, in the same message (its Continue offer goes while it is open)."""
        self._settle()
        position = self._list.position(message_id)
        if position is None:
            return
        data = self._list.item(position)
        self._streams[message_id] = _Stream(content=data.content, reasoning=data.reasoning)
        self._notes.pop(message_id, None)
        self._store(replace(data, status="streaming", error_text=None))

    def append_text(self, message_id: str, text: str) -> None:
        """Buffer answer text for an open reply; painted by the next flush."""
        stream = self._streams.get(message_id)
        if stream is not None and text:
            stream.text_chunks.append(text)
            self._mark_dirty(message_id)

    def append_reasoning(self, message_id: str, text: str) -> None:
        """Buffer reasoning text for an open reply; painted by the next flush."""
        stream = self._streams.get(message_id)
        if stream is not None and text:
            stream.reasoning_chunks.append(text)
            self._mark_dirty(message_id)

    def finish_reply(self, message_id: str, view: MessageData) -> None:
        """Close a reply with its final data: full render, code highlighted, metadata line."""
        self._settle()
        self._close_stream(message_id)
        self._notes.pop(message_id, None)
        self._store(view)
        self._end_pacing()

    def set_status(self, message_id: str, status: str, note: str | None = None) -> None:
        """End a reply early ("stopped"/"interrupted"/"failed"), keeping its partial text."""
        self._settle()
        stream = self._close_stream(message_id)
        position = self._list.position(message_id)
        if position is not None:
            data = self._list.item(position)
            if stream is not None:
                data = replace(data, content=stream.content, reasoning=stream.reasoning)
            self._notes[message_id] = note
            self._store(replace(data, status=status))
        self._end_pacing()

    def update_message(self, view: MessageData) -> None:
        """Replace a message's data (an open reply keeps streaming from ``view.content``)."""
        self._settle()
        stream = self._streams.get(view.id)
        if stream is not None and view.status in OPEN_STATUSES:
            stream.content, stream.reasoning = view.content, view.reasoning
            stream.text_chunks.clear()
            stream.reasoning_chunks.clear()
        elif stream is not None:
            self._close_stream(view.id)
        self._store(view)
        self._end_pacing()

    def set_siblings(self, message_id: str, index: int, count: int) -> None:
        """Show < index+1/count > on a message (``index`` is 0-based)."""
        self._settle()
        position = self._list.position(message_id)
        if position is None:
            return
        data = replace(self._list.item(position), sibling_index=index, sibling_count=count)
        view = self._list.replace(data)
        if view is not None:
            view.set_siblings(index, count)

    def remove_from(self, message_id: str) -> None:
        """Drop this message and everything after it (edit / regenerate)."""
        self._settle()
        position = self._list.position(message_id)
        if position is None:
            return
        for message_id in self._list.ids()[position:]:
            self._close_stream(message_id)
            self._notes.pop(message_id, None)
        self._list.truncate(position)
        self._end_pacing()

    # -- streaming -------------------------------------------------------------------------------

    def flush(self) -> None:
        """Paint buffered deltas now (benchmarks, tests); normally the 33 ms timer does it."""
        self._flush_timer.stop()
        if self._dirty:
            self._flush()

    def _mark_dirty(self, message_id: str) -> None:
        self._dirty[message_id] = None
        self._paced().start()
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def _flush(self) -> None:
        """Paint every open reply that received deltas: one tail re-render each."""
        self._settle()
        self.flush_count += 1
        dirty, self._dirty = self._dirty, {}
        shown = False
        for message_id in dirty:
            stream = self._streams.get(message_id)
            position = self._list.position(message_id)
            if stream is None or position is None:
                continue
            stream.drain()
            data = self._list.item(position)
            status = "streaming" if stream.content or stream.reasoning else data.status
            view = self._list.replace(
                replace(data, content=stream.content, reasoning=stream.reasoning, status=status)
            )
            if view is not None:
                view.stream(stream.content, stream.reasoning)
                self.render_count += 1
                shown = True
        if shown:
            self._list.relayout()

    def _close_stream(self, message_id: str) -> _Stream | None:
        self._dirty.pop(message_id, None)
        stream = self._streams.pop(message_id, None)
        if stream is not None:
            stream.drain()
        return stream

    def _end_pacing(self) -> None:
        """No reply streams any more: frames stay paced until the replies' Markdown has
        caught up with what they received (PaintPacer.finish), then paint at once."""
        if not self._streams and self._pacer is not None:
            self._pacer.finish(self._rendering)

    def _rendering(self) -> bool:
        """Whether a live reply is still rendering text it received (its final Markdown
        catching up on following loop turns)."""
        return any(view.is_rendering() for view in self._list.live_views())

    def _paced(self) -> PaintPacer:
        """The transcript's paint pacer: while replies stream, one paint per flush interval."""
        if self._pacer is None:
            self._pacer = PaintPacer(self, interval_ms=FLUSH_INTERVAL_MS)
        return self._pacer

    # -- message widgets -------------------------------------------------------------------------

    def _store(self, data: MessageData) -> None:
        self._settle()
        view = self._list.replace(data)
        if view is not None:
            view.set_data(data, note=self._notes.get(data.id))

    def _append(self, data: MessageData) -> None:
        if data.id not in self._pending and self._list.position(data.id) is not None:
            self._store(data)
            return
        self._pending[data.id] = data
        self._settle_timer.start()

    def _settle(self) -> None:
        """Put the messages appended this turn into the list (their widgets are made)."""
        if not self._pending and not self._pending_scroll:
            return
        self._settle_timer.stop()
        pending, self._pending = self._pending, {}
        for data in pending.values():
            self._list.append(data)
        if self._pending_scroll:
            self._pending_scroll = False
            self._list.scroll_to_latest()
        if self._pin_timer.isActive():  # new widgets: already the turn's end, or asked for
            self._pin_timer.stop()
            self._pin_latest_reply()

    def _make_view(self, data: MessageData, parent: QWidget) -> MessageView:
        view = MessageView(data, note=self._notes.get(data.id), parent=parent)
        if data.role != "user":
            # A reply grows at its bottom and paints no background of its own (a user's
            # bubble does): Qt then repaints only the strip it grew by, not all of it.
            view.setAttribute(Qt.WidgetAttribute.WA_StaticContents)
        self._pin_timer.start()  # a new message may be the latest reply, or follow it
        view.regenerate_requested.connect(self.regenerate_requested)
        view.edit_requested.connect(self.edit_requested)
        view.continue_requested.connect(self.continue_requested)
        view.view_code_requested.connect(self.view_code_requested)
        view.tool_results_submitted.connect(self.tool_results_submitted)
        view.branch_requested.connect(self.branch_requested)
        view.log_id_copied.connect(self.log_id_copied)
        if data.id in self._find[1]:  # a find match that comes into the window of live widgets
            self._mark(view, current=None)
        return view
