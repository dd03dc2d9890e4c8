"""The scrolling message column: a bounded window of live widgets, paging, auto-scroll, jump.

Every message id is kept; MessageData is read (from a lazy PathView) and widgets are made
only for a window of them, paged in as the user scrolls, with what is on screen anchored in
place and a "Jump to latest" button.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from PySide6.QtCore import QEvent, QObject, QRect, QSize, Qt, QTimer
from PySide6.QtGui import QPalette, QResizeEvent
from PySide6.QtWidgets import QFrame, QScrollArea, QVBoxLayout, QWidget

from flarechat.ui.control.view_data import PathView
from flarechat.ui.shared.theme import current_palette, named, scroll_bar_sheet
from flarechat.ui.shared.wrappers import viewport_of
from flarechat.ui.transcript.message_overlays import PillButton, jump_button
from flarechat.ui.transcript.message_view import MessageData, MessageView

__all__ = [
    "JUMP_SHORTCUT",
    "MAX_LIVE_MESSAGES",
    "PAGE_SIZE",
    "PAGE_STEP",
    "SCROLL_STEP",
    "MessageList",
    "ViewFactory",
]

#: Messages created per history page (initial view and each page loaded on scroll) at most;
#: a page also ends once its widgets are PAGE_SCREENS viewports tall: every widget made
#: before the first paint delays it.
PAGE_SIZE = 16
PAGE_SCREENS = 1.25
#: Above a message scrolled to, only this much is made at once (enough to scroll up into;
#: more pages load as the user does).
JUMP_ABOVE_SCREENS = 0.5
#: A page fills in over several event-loop turns (input and painting stay live): each turn
#: creates at most PAGE_STEP message widgets and stops early after FILL_BUDGET_S of work.
PAGE_STEP = 4
FILL_BUDGET_S = 0.012
#: Scrolling pages in one widget per loop turn: a reply's widget takes 5-15 ms to make here,
#: so two in a turn plus the paint that follows overran a 33 ms frame (the wheel stalled).
SCROLL_STEP = 1
#: Opening a conversation (or jumping far back) fills the viewport in the call that asks for
#: it, within this budget: every loop turn before it is covered paints the window once more
#: (a conversation's newest message alone, then the page), ~10-20 ms of the GUI thread each.
COVER_BUDGET_S = 0.030
#: Message widgets alive at most; pages beyond this are dropped at the far end.
MAX_LIVE_MESSAGES = 64
#: Load the next page when the viewport is this close to the loaded top/bottom, px.
NEAR_EDGE_PX = 240
#: "At the bottom" tolerance for auto-scroll, px.
BOTTOM_SLACK_PX = 4
#: A message scrolled to (search hit, find match) shows this far below the viewport's top.
FOCUS_TOP_PX = 24
#: Readable line length: the message column never gets wider than this, px.
MAX_COLUMN_PX = 860
SIDE_MARGIN_PX = 16
MESSAGE_SPACING_PX = 14
#: No message widget is shorter than this (header, one line, margins, spacing), px: a
#: history of more than a viewport's worth of them surely needs the scroll bar.
MIN_MESSAGE_PX = 60
#: Scrolls to the newest message, like the "Jump to latest" button.
JUMP_SHORTCUT = "Ctrl+End"

#: Makes the widget for one message, parented to the given column widget.
ViewFactory = Callable[[MessageData, QWidget], MessageView]


class MessageList(QWidget):
    """All messages of a conversation, with widgets for items[first:last] only.

    Widgets are made by the ``make_view`` factory; this class places, pages and scrolls them.
    """

    def __init__(self, make_view: ViewFactory, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._make_view_for = make_view
        self._ids: list[str] = []
        self._items: list[MessageData | None] = []  # None: not read from the source yet
        self._source: Callable[[int], MessageData] = _no_source
        #: Positions by id, made when first looked up (a long history opens without it).
        self._index: dict[str, int] | None = None
        #: makes ``_index`` while the ids are the ones a PathView gave (its copy of the
        #: positions the tree made on the store's thread, not a walk of 5,000 ids here)
        self._known_positions: Callable[[], dict[str, int]] | None = None
        #: Heights of the widgets made above / below the window by the page filling in.
        self._filled_above = self._filled_below = 0
        self._above_screens = PAGE_SCREENS
        #: While opening (a conversation, a far message): the px above / below the window's
        #: widgets that cover the viewport; None when no open is under way.
        self._cover: tuple[int, int] | None = None
        self._views: dict[str, MessageView] = {}
        #: While the user scrolls up: the widget for items[position] made on one loop turn,
        #: placed above the window on the next (position, its data, the widget).
        self._made: tuple[int, MessageData, MessageView] | None = None
        self._first = self._last = 0
        self._fill_first = self._fill_last = 0
        self._stick = True
        self._adjusting = False
        self._seen_value = 0  # the scroll bar's value when last seen: which way the user went
        #: The message scrolled to and its place below the viewport's top, held there while
        #: pages fill in around it, until the user scrolls.
        self._focus: tuple[MessageView, int] | None = None
        self._build()
        self._fill_timer = QTimer(self)
        self._fill_timer.setObjectName("transcriptPageFillTimer")
        self._fill_timer.setSingleShot(True)
        self._fill_timer.setInterval(0)
        self._fill_timer.timeout.connect(self._fill_step)

    def _build(self) -> None:
        self._scroll = QScrollArea(self)
        self._scroll.setObjectName("transcriptScroll")
        # We size the content ourselves (_sync_layout): QScrollArea's widgetResizable asks a
        # height-for-width widget for its height at up to ~15 widths per update (searching
        # for room for its scrollbar), re-laying out every message each time.
        self._scroll.setWidgetResizable(False)
        self._scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        viewport_of(self._scroll).setBackgroundRole(QPalette.ColorRole.Base)  # (start-up time)
        self._content = named(QWidget(), "transcriptContent")
        self._content.setBackgroundRole(QPalette.ColorRole.Base)
        # Opaque (it fills its own background) and static (a resize keeps what it showed): Qt
        # then scrolls it by copying what stays on screen and repaints only the strip exposed,
        # not the whole viewport, on each update of a streaming reply it follows.
        self._content.setAutoFillBackground(True)
        self._content.setAttribute(Qt.WidgetAttribute.WA_StaticContents)
        self._column = QVBoxLayout(self._content)
        self._column.setSpacing(MESSAGE_SPACING_PX)
        self._column.addStretch(1)
        self._scroll.setWidget(self._content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self._scroll)
        self._bar = self._scroll.verticalScrollBar()
        self._restyle_bar()
        self._bar.valueChanged.connect(self._on_scrolled)
        self._bar.rangeChanged.connect(self._on_range_changed)
        self._jump = jump_button(self, shortcut=JUMP_SHORTCUT)
        self._jump.clicked.connect(self.scroll_to_latest)
        self._scroll.viewport().installEventFilter(self)
        self._content.installEventFilter(self)

    # -- queries ---------------------------------------------------------------------------------

    @property
    def jump_button(self) -> PillButton:
        return self._jump

    @property
    def scroll_area(self) -> QScrollArea:
        return self._scroll

    @property
    def live_count(self) -> int:
        """Message widgets currently alive."""
        return len(self._views)

    def count(self) -> int:
        return len(self._ids)

    def ids(self) -> list[str]:
        return list(self._ids)

    def messages(self) -> list[MessageData]:
        """Every message's data (reads all of a lazy history: tests, small conversations)."""
        return [self.item(position) for position in range(len(self._ids))]

    def position(self, message_id: str) -> int | None:
        if self._index is None:
            known, self._known_positions = self._known_positions, None
            if known is not None:
                self._index = known()
            else:
                self._index = {mid: at for at, mid in enumerate(self._ids)}
        return self._index.get(message_id)

    def item(self, position: int) -> MessageData:
        data = self._items[position]
        if data is None:
            data = self._items[position] = self._source(position)
        return data

    def view_for(self, message_id: str) -> MessageView | None:
        return self._views.get(message_id)

    def live_views(self) -> list[MessageView]:
        """The message widgets alive now, in no particular order."""
        return list(self._views.values())

    def is_at_bottom(self) -> bool:
        return self._stick

    def is_loading(self) -> bool:
        """True while a page of message widgets is still being filled in."""
        return self._filling()

    # -- changes ---------------------------------------------------------------------------------

    def clear(self) -> None:
        self._fill_timer.stop()
        self._take_made(None)
        for message_id in list(self._views):
            self._drop_view(message_id)
        self._ids, self._items = [], []
        self._reindex()
        self._source = _no_source
        self._first = self._last = 0
        self._fill_first = self._fill_last = 0
        self._stick = True
        self._focus = None
        self._cover = None
        self._jump.hide()

    def set_items(self, messages: Sequence[MessageData]) -> None:
        """Show a whole conversation: the newest messages at once, the rest of the last page
        a few at a time, earlier pages when the user scrolls up. A PathView's data is read
        only for the messages that get a widget."""
        self.clear()
        focus = None
        if isinstance(messages, PathView):
            self._ids, self._source = messages.ids(), messages.data_at
            self._items = [None] * len(self._ids)
            self._known_positions = messages.positions  # the tree's (made on the store thread)
            focus = messages.focus
        else:
            self._items = list(messages)
            self._ids = [data.id for data in messages]
        self._reserve_bar()
        if focus is None or self.scroll_to(focus) is None:
            self._show_last_page()  # else opened at the focus: the newest page is never made

    def _reserve_bar(self) -> None:
        """Show the scroll bar from the start when the history surely overflows: appearing
        once the first page is made, it narrowed the column and every body was laid out
        again (a jump far back laid each page out twice)."""
        overflows = len(self._ids) * MIN_MESSAGE_PX > self._scroll.viewport().height()
        policy = (
            Qt.ScrollBarPolicy.ScrollBarAlwaysOn
            if overflows
            else Qt.ScrollBarPolicy.ScrollBarAsNeeded
        )
        if self._scroll.verticalScrollBarPolicy() != policy:
            self._scroll.setVerticalScrollBarPolicy(policy)
            self._sync_layout()  # the content at the viewport's new width, before widgets

    def replace(self, data: MessageData) -> MessageView | None:
        """Store new data for a known message; its live widget (if any) to update."""
        position = self.position(data.id)
        if position is None:
            return None
        self._items[position] = data
        return self._views.get(data.id)

    def truncate(self, position: int) -> None:
        """Drop items[position:] and their widgets."""
        for message_id in self._ids[max(position, self._first) : self._last]:
            self._drop_view(message_id)
        del self._items[position:]
        del self._ids[position:]
        self._reindex()
        self._last = min(self._last, position)
        self._first = min(self._first, self._last)
        self._fill_first = min(self._fill_first, self._first)
        self._fill_last = min(self._fill_last, self._last)
        if self._first == self._last and self._items:
            self._show_last_page()

    # -- the window of live widgets --------------------------------------------------------------

    def append(self, data: MessageData) -> None:
        """Add a message at the end (a widget too when the newest messages are shown)."""
        at_end = self._last == len(self._items)
        if self._fill_last == len(self._items):
            self._fill_last += 1  # a page still filling in keeps covering the end
        self._items.append(data)
        self._ids.append(data.id)
        if self._index is not None:
            self._index[data.id] = len(self._items) - 1
        self._known_positions = None  # they no longer cover every id
        if not at_end:
            self._update_jump()
            return
        with self._anchored():
            self._column.insertWidget(self._last - self._first, self._make_view(data))
            self._last += 1
            while self._last - self._first > MAX_LIVE_MESSAGES:
                self._drop_view(self._ids[self._first])
                self._first += 1
                # only a drop cuts short a page still filling in above (not the append)
                self._fill_first = max(self._fill_first, self._first)

    def _show_last_page(self) -> None:
        for message_id in list(self._views):
            self._drop_view(message_id)
        self._first = self._last = len(self._items)
        self._stick = True
        self._focus = None
        cover = (self._scroll.viewport().height(), 0)
        self._request_fill(first=max(0, self._last - PAGE_SIZE), last=self._last, cover=cover)

    def _jump_window(self, position: int) -> None:
        """Make items[position] the only live widget, to be filled in to a page around it
        (a message far from the live window: the widgets in between are never made)."""
        self._fill_timer.stop()
        for message_id in list(self._views):
            self._drop_view(message_id)
        self._first, self._last = position, position + 1
        view = self._make_view(self.item(position))
        self._column.insertWidget(0, view)
        first = max(0, position - PAGE_SIZE // 2)
        self._fill_first, self._fill_last = first, min(len(self._items), first + PAGE_SIZE)
        self._filled_above = self._filled_below = 0
        self._above_screens = JUMP_ABOVE_SCREENS
        below = self._scroll.viewport().height() - FOCUS_TOP_PX - view.height()
        self._cover = (FOCUS_TOP_PX, max(0, below))

    def _request_fill(self, *, first: int, last: int, cover: tuple[int, int] | None = None) -> None:
        """Grow the live window to items[first:last], PAGE_STEP widgets per loop turn
        (``cover``: an open's px to fill above / below before it counts as loaded: its first
        page is made in this call, painted once). Without ``cover`` (the user scrolled near
        an edge) the first widget comes on the next turn, not in the wheel event's own: that
        turn already scrolls, lays out and paints."""
        self._fill_first, self._fill_last = first, last
        self._filled_above = self._filled_below = 0
        self._above_screens = PAGE_SCREENS
        self._cover = cover
        if cover is None:
            self._schedule_fill()
            return
        self._fill_step()
        self._cover_now()

    def _filling(self) -> bool:
        return self._first > self._fill_first or self._last < self._fill_last

    def _covered(self) -> bool:
        """Does an open's page cover the viewport yet (no open under way: no)? Then it is
        complete: what lies beyond pages in as the user scrolls (a margin made at once was
        built, and mostly thrown away, on every switch)."""
        if self._cover is None:
            return False
        top_done = self._covers(above=True) or self._first == self._fill_first
        return top_done and (self._covers(above=False) or self._last == self._fill_last)

    def _covers(self, *, above: bool) -> bool:
        """Do an open's widgets above (below) the window's start cover the viewport there?"""
        if self._cover is None:
            return False
        return (
            self._filled_above >= self._cover[0] if above else self._filled_below >= self._cover[1]
        )

    def _schedule_fill(self) -> None:
        if self._filling():
            self._fill_timer.start()

    def _fill_step(self, *, deadline: float | None = None) -> None:
        """One loop turn of page filling: up to PAGE_STEP widgets (SCROLL_STEP once the
        viewport is covered and the user scrolls) or FILL_BUDGET_S of work (an open's:
        until ``deadline``)."""
        if deadline is None:
            deadline = time.perf_counter() + FILL_BUDGET_S
        # A message scrolled to: what follows it first, until the viewport below it is covered.
        below_first = self._focus is not None and not self._covers(above=False)
        with self._anchored():
            if self._last < self._fill_last and (below_first or self._first == self._fill_first):
                self._append_views(deadline)
            elif self._first > self._fill_first:
                self._prepend_views(deadline)
        screen = self._scroll.viewport().height()
        if self._filled_above >= self._above_screens * screen:  # the rest when scrolled to
            self._fill_first = self._first
        if self._filled_below >= PAGE_SCREENS * screen:
            self._fill_last = self._last
        if self._covered():
            self._fill_first, self._fill_last = self._first, self._last
            self._cover = None
        self._schedule_fill()

    def _step_size(self) -> int:
        """Widgets one loop turn may make: a few while an open covers the viewport, one
        while pages come in as the user scrolls (each turn then stays well within a frame)."""
        return PAGE_STEP if self._cover is not None else SCROLL_STEP

    def _prepend_views(self, deadline: float) -> None:
        stop = max(self._fill_first, self._first - self._step_size())
        while self._first > stop:
            view = self._take_made(self._first - 1)
            if view is None and self._cover is None:
                # Scrolling up: this turn makes the widget (its body rendered, ~10 ms for a long
                # reply), the next places it (layout, the anchor, the paint): no turn holds both.
                data = self.item(self._first - 1)
                self._made = (self._first - 1, data, self._build_view(data))
                return
            self._first -= 1
            data = self.item(self._first)
            view = view if view is not None else self._build_view(data)
            self._place_view(data, view)
            self._column.insertWidget(0, view)
            self._filled_above += view.height() + MESSAGE_SPACING_PX
            if time.perf_counter() > deadline or self._covers(above=True):
                break
        if self._last - self._first > MAX_LIVE_MESSAGES:  # drop the far end, for good
            while self._last - self._first > MAX_LIVE_MESSAGES:
                self._last -= 1
                self._drop_view(self._ids[self._last])
            self._fill_last = min(self._fill_last, self._last)

    def _append_views(self, deadline: float) -> None:
        stop = min(self._fill_last, self._last + self._step_size())
        while self._last < stop:
            view = self._make_view(self.item(self._last))
            self._column.insertWidget(self._last - self._first, view)
            self._filled_below += view.height() + MESSAGE_SPACING_PX
            self._last += 1
            if time.perf_counter() > deadline or self._covers(above=False):
                break
        if self._last - self._first > MAX_LIVE_MESSAGES:  # drop the far end, for good
            while self._last - self._first > MAX_LIVE_MESSAGES:
                self._drop_view(self._ids[self._first])
                self._first += 1
            self._fill_first = max(self._fill_first, self._first)

    def _make_view(self, data: MessageData) -> MessageView:
        view = self._build_view(data)
        self._place_view(data, view)
        return view

    def _build_view(self, data: MessageData) -> MessageView:
        """A message's widget, laid out once at the column's real width (not Qt's default
        100 px), not shown yet."""
        view = self._make_view_for(data, self._content)
        margins = self._column.contentsMargins()
        width = self._scroll.viewport().width() - margins.left() - margins.right()
        view.resize(width, view.heightForWidth(width))
        return view

    def _place_view(self, data: MessageData, view: MessageView) -> None:
        # Shown now, not queued: the layout must count it before an anchor is restored.
        view.show()
        self._views[data.id] = view

    def _take_made(self, position: int | None) -> MessageView | None:
        """The widget made on an earlier turn, if it is still items[position]'s (the list
        may have changed since: then, or with ``position`` None, it is dropped)."""
        made, self._made = self._made, None
        if made is None:
            return None
        at, data, view = made
        if at == position and at < len(self._items) and self._items[at] is data:
            return view
        view.deleteLater()
        return None

    def _drop_view(self, message_id: str) -> None:
        view = self._views.pop(message_id, None)
        if self._focus is not None and self._focus[0] is view:
            self._focus = None
        if view is not None:
            self._column.removeWidget(view)
            view.hide()
            view.deleteLater()  # not now: we may be inside one of its own signals

    def _reindex(self) -> None:
        self._index = None  # made again when next looked up
        self._known_positions = None

    # -- scrolling -------------------------------------------------------------------------------

    def scroll_to(self, message_id: str) -> MessageView | None:
        """Show a message anywhere in the history: near the viewport's top, its page filling
        in around it (the live window jumps there when it is far away). Its widget, or None
        for an unknown id."""
        position = self.position(message_id)
        if position is None:
            return None
        jumped = not self._first <= position < self._last
        if jumped:
            self._jump_window(position)
        view = self._views[message_id]
        self._stick = False
        self._focus = (view, FOCUS_TOP_PX)
        with self._anchored():
            pass  # places it
        if jumped:
            self._cover_now()
        self._schedule_fill()
        return view

    def _cover_now(self) -> None:
        """Fill an open's (a jump's) viewport now, within COVER_BUDGET_S, not a loop turn
        later: the window would first paint the newest message (the hit) alone, then the
        page again."""
        deadline = time.perf_counter() + COVER_BUDGET_S
        while self._cover is not None and self._filling() and time.perf_counter() < deadline:
            self._fill_step(deadline=deadline)
        if not self._filling():
            self._fill_timer.stop()  # a step's turn asked for before the page was done

    def scroll_to_latest(self) -> None:
        """Show the newest message and follow the reply again (the jump button's action)."""
        self._focus = None
        if self._last < len(self._items):
            self._show_last_page()
        self._stick = True
        self._sync_layout()
        self._set_value(self._bar.maximum())
        self._update_jump()

    @contextmanager
    def _anchored(self) -> Iterator[None]:
        """Keep what the user is looking at in place while widgets come and go above it."""
        anchor = self._focus or (None if self._stick else self._anchor())
        self._adjusting = True
        try:
            yield
            self._sync_layout()
            if self._stick:
                self._set_value(self._bar.maximum())
            elif anchor is not None and anchor[0] in self._views.values():
                self._set_value(anchor[0].y() - anchor[1])
        finally:
            self._adjusting = False
        self._update_jump()

    def _anchor(self) -> tuple[MessageView, int] | None:
        top = self._bar.value()
        for message_id in self._ids[self._first : self._last]:
            view = self._views.get(message_id)
            if view is not None and view.geometry().bottom() >= top:
                return view, view.y() - top
        return None

    def relayout(self) -> None:
        """Lay the column out now, top down, after messages grew (a streaming flush): Qt's
        queued layout requests would lay each message out at its old height first, squeezing
        and then restoring every part of it."""
        with self._anchored():
            pass

    def _sync_layout(self) -> None:
        """Size the content to the viewport's width and its layout's height, now (not at the
        next loop turn), so an anchor is restored before anything is painted off place."""
        self._column.activate()
        width = self._scroll.viewport().width()
        height = max(self._content.heightForWidth(width), self._scroll.viewport().height())
        if self._content.size() != QSize(width, height):
            self._content.setGeometry(self._placed(width, height))

    def _placed(self, width: int, height: int) -> QRect:
        """Where the content goes at its new size: following the latest reply, at the new
        bottom in the same geometry change, so Qt copies what stays on screen before the
        messages grow into the strip it exposes (growing first, they would mark the old
        bottom dirty and the whole viewport would be repainted); else where it is."""
        top = self._content.y()
        if self._stick:
            top = min(0, self._scroll.viewport().height() - height)
        return QRect(0, top, width, height)

    def _set_value(self, value: int) -> None:
        adjusting, self._adjusting = self._adjusting, True
        try:
            self._bar.setValue(value)
        finally:
            self._adjusting = adjusting

    def _on_scrolled(self, value: int) -> None:
        down, self._seen_value = value > self._seen_value, value
        if self._adjusting:
            return
        self._focus = None  # the user moved on
        at_end = self._last == len(self._items)
        self._stick = at_end and value >= self._bar.maximum() - BOTTOM_SLACK_PX
        near_top = value <= NEAR_EDGE_PX and self._first > 0
        near_bottom = value >= self._bar.maximum() - NEAR_EDGE_PX and not at_end
        if self._filling():
            pass  # the page being filled in keeps the view anchored
        elif near_bottom and (down or not near_top):  # a page near both edges: where it goes
            last = min(len(self._items), self._last + PAGE_SIZE)
            self._request_fill(first=self._first, last=last)
        elif near_top:
            self._request_fill(first=max(0, self._first - PAGE_SIZE), last=self._last)
        self._update_jump()

    def _on_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._stick:
            self._set_value(maximum)
        self._update_jump()

    def _update_jump(self) -> None:
        latest_in_view = (
            self._last == len(self._items)
            and self._bar.value() >= self._bar.maximum() - BOTTOM_SLACK_PX
        )
        show = not self._stick and not latest_in_view and bool(self._items)
        if show != self._jump.isVisibleTo(self):
            self._jump.setVisible(show)
        if show:
            self._place_jump()

    def _place_jump(self) -> None:
        self._jump.place_in_corner(self._scroll.viewport())

    def _restyle_bar(self) -> None:
        """A flat scroll bar on the messages' background: it repaints with every frame of a
        streaming reply (its range grows), and Fusion's costs ~2 ms a paint (theme)."""
        palette = current_palette()
        self._bar.setStyleSheet(scroll_bar_sheet(palette, groove=palette.base))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._restyle_bar()  # the theme changed

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._scroll.viewport() and event.type() == QEvent.Type.Resize:
            self._sync_layout()
            self._place_jump()
        elif watched is self._content and event.type() == QEvent.Type.LayoutRequest:
            # QScrollArea misses height changes of height-for-width content (word-wrapped
            # labels: the layout never sets a minimum height), so tell it ourselves.
            self._sync_layout()
            if self._focus is not None:
                self._set_value(self._focus[0].y() - self._focus[1])
        return super().eventFilter(watched, event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        side = max(SIDE_MARGIN_PX, (event.size().width() - MAX_COLUMN_PX) // 2)
        self._column.setContentsMargins(side, SIDE_MARGIN_PX, side, SIDE_MARGIN_PX)


def _no_source(position: int) -> MessageData:
    raise IndexError(position)
