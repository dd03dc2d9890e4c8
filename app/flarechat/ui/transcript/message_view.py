"""One message in the transcript: its data (MessageData) and its widget (MessageView)."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, TypeVar, cast

from PySide6.QtCore import QEvent, QObject, QRect, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QEnterEvent, QGuiApplication, QPainter, QPaintEvent, QTextCursor
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from flarechat.ui.capabilities.json_reply import JsonReplyView
from flarechat.ui.capabilities.thumbnails import MessageImages
from flarechat.ui.capabilities.tool_cards import ToolCallsPanel
from flarechat.ui.control.view_data import MessageData
from flarechat.ui.shared.icons import APP_ICON, icon
from flarechat.ui.shared.theme import current_palette, fill_rounded, named
from flarechat.ui.transcript.message_parts import (
    CONTINUE_HINT,
    ContinueRow,
    ReasoningSection,
    SiblingSwitcher,
    action_button,
    mark_bold,
    refresh_fonts,
    wrapped_label,
)
from flarechat.ui.transcript.plain_body import PlainBody

if TYPE_CHECKING:  # imported where a reply body is first made: the first frame shows none
    from flarechat.ui.transcript.markdown_view import MarkdownView

__all__ = [
    "ALL_REASONING_NOTE",
    "FINAL_STATUSES",
    "OPEN_STATUSES",
    "MessageData",
    "MessageView",
    "ReasoningSection",
    "load_body_module",
    "status_marker",
]

#: A reply that is still coming: "waiting" (no token yet) or "streaming".
OPEN_STATUSES = frozenset({"waiting", "streaming"})
#: Ends that keep partial text and get a muted marker (never styled as model text).
FINAL_STATUSES = frozenset({"stopped", "interrupted", "failed"})
#: The finish reason that means "cut off by max_tokens".
FINISH_LENGTH = "length"
#: Typing indicator frame interval while waiting for the first token.
TYPING_INTERVAL_MS = 400
TYPING_FRAMES = ("•", "• •", "• • •")
#: Characters of the gateway log id shown before the ellipsis.
LOG_ID_SHOWN_CHARS = 10
AVATAR_PX = 18
#: A long body still rendering in steps is marked once it is done: checked this often.
MARK_RETRY_MS = 30
_LOG_LINK = "flarechat:copy-log-id"
#: Under a finished reply that was all reasoning.
ALL_REASONING_NOTE = "No answer came: the reply was all reasoning."
#: Parts below the header, in layout order; each is created the first time it is needed.
_PART_ORDER = (
    *("reasoning", "typing", "images", "body", "plain", "json", "tools"),
    *("marker", "error", "continue", "meta"),
)
W = TypeVar("W", bound=QWidget)


def load_body_module() -> None:
    """Import the reply body's module (Markdown glue, QTextDocument's enums: ~10-30 ms) once
    the window is up, so neither the first paint nor the first reply pays for it."""
    from flarechat.ui.transcript import markdown_view  # noqa: F401


def _all_reasoning(data: MessageData) -> bool:
    """A finished reply with reasoning and nothing else (a ``<think>`` never closed…)."""
    finished = data.status not in OPEN_STATUSES
    answered = data.content.strip() or data.tool_calls or data.error_text
    return data.role == "assistant" and finished and bool(data.reasoning) and not answered


def status_marker(status: str, note: str | None = None) -> str:
    """The muted marker under a message that ended early ("" for other statuses)."""
    base = {"stopped": "— stopped", "interrupted": "⚠ interrupted", "failed": "⚠ failed"}
    marker = base.get(status, "")
    return f"{marker} · {note}" if marker and note else marker


class MessageView(QFrame):
    """One message: header (role, actions, < n/m >), Thinking, body, markers, metadata.

    Parts that most messages never need (reasoning, markers, Continue…) are created on first
    use, so a page of history stays cheap. ``render_count`` counts (re-)renders.

    The header's actions (copy, edit, regenerate, view as code) show while the pointer is over
    the message or something in it has keyboard focus, and always when pinned (the latest reply).
    Concealed, they keep their place, focus and accessible names (only their painting is held
    back), so Tab still reaches them, which shows them, and the text never moves.

    Find marks: ``mark_matches(query, current=k)`` highlights every occurrence of a query in
    the shown text (occurrence k stronger) until ``clear_matches()``.

    Signals (all carry the message id):
        regenerate_requested(str), edit_requested(str), continue_requested(str),
        view_code_requested(str): show the request that produced this reply as code,
        branch_requested(str, int): -1 for the previous sibling, +1 for the next,
        log_id_copied(str): the gateway log id just put on the clipboard,
        tool_results_submitted(str, dict): the results typed for the reply's tool calls.
    """

    regenerate_requested = Signal(str)
    edit_requested = Signal(str)
    continue_requested = Signal(str)
    view_code_requested = Signal(str)
    branch_requested = Signal(str, int)
    log_id_copied = Signal(str)
    tool_results_submitted = Signal(str, dict)

    def __init__(
        self, data: MessageData, *, note: str | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("messageView")
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self._data = data
        self._note: str | None = None
        self._parts: dict[str, QWidget] = {}
        self._header_buttons: dict[str, QWidget] = {}
        self.render_count = 0
        self._typing_frame = 0
        self._typing_timer: QTimer | None = None
        self._actions: list[QToolButton] = []
        self._hovered = self._focused = self._pinned = False
        self._query = ""
        self._current_match: int | None = None  # the find bar's current occurrence in it
        self._marks_timer: QTimer | None = None
        self._label_marks: tuple[str, str] | None = None  # a user label's (marked, plain) text
        self._start_at_column_width(parent)
        self._build_header()
        self.set_data(data, note=note)
        app = QApplication.instance()
        if isinstance(app, QApplication):  # focus anywhere in the message shows the actions
            app.focusChanged.connect(self._on_focus_changed)

    def _start_at_column_width(self, parent: QWidget | None) -> None:
        """Start as wide as the parent's layout (a message column) will make this view, so
        each body part is laid out once, at its real width: a part made at Qt's default
        width (640 px) was laid out whole there first, then again when placed."""
        column = parent.layout() if parent is not None else None
        if parent is not None and column is not None:
            margins = column.contentsMargins()
            self.resize(max(0, parent.width() - margins.left() - margins.right()), self.height())

    def _build_header(self) -> None:
        self._avatar = QLabel()
        self._role = mark_bold(named(QLabel(), "roleLabel"))
        refresh_fonts(self._role, self.font())
        copy = action_button("copy", name="Copy message", tip="Copy the message")
        self._copy = self._action(copy)
        self._copy.clicked.connect(self.copy_to_clipboard)
        self._header = QHBoxLayout()
        self._header.setSpacing(4)
        self._header.addWidget(self._avatar)
        self._header.addWidget(self._role)
        self._header.addStretch(1)
        self._header.addWidget(self._copy)
        self._column = QVBoxLayout(self)
        self._column.setContentsMargins(14, 8, 14, 10)
        self._column.setSpacing(6)
        self._column.addLayout(self._header)

    # -- lazily created parts --------------------------------------------------------------------

    def _part(self, name: str, factory: Callable[[], W]) -> W:
        widget = self._parts.get(name)
        if widget is None:
            widget = factory()
            refresh_fonts(widget, self.font())
            margins = self._column.contentsMargins()  # the width the column will give it
            inner = max(0, self.width() - margins.left() - margins.right())
            widget.resize(inner, widget.height())
            earlier = _PART_ORDER[: _PART_ORDER.index(name)]
            self._column.insertWidget(1 + sum(n in self._parts for n in earlier), widget)
            self._parts[name] = widget
        return cast(W, widget)

    def _hide_part(self, name: str) -> None:
        widget = self._parts.get(name)
        if widget is not None:
            widget.hide()

    def _header_button(self, key: str, factory: Callable[[], QWidget]) -> QWidget:
        """Header extras (edit, regenerate, < n/m >) go left of Copy, in creation order."""
        widget = self._header_buttons.get(key)
        if widget is None:
            widget = factory()
            refresh_fonts(widget, self.font())
            self._header.insertWidget(self._header.indexOf(self._copy), widget)
            QWidget.setTabOrder(widget, self._copy)  # Tab walks them left to right
            self._header_buttons[key] = widget
        return widget

    def _make_body(self) -> MarkdownView:
        # Markdown's widget module loads with the first reply body (or load_body_module).
        from flarechat.ui.transcript.markdown_view import MarkdownView

        return MarkdownView()

    def _make_plain(self) -> PlainBody:
        return PlainBody()  # a long text is shown collapsed, laid out in steps when expanded

    def _make_meta(self) -> QLabel:
        label = wrapped_label("metaLabel", muted=True, small=True)
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        label.linkActivated.connect(self._on_meta_link)
        return label

    def _make_continue(self) -> ContinueRow:
        return ContinueRow(lambda: self.continue_requested.emit(self._data.id))

    def _make_siblings(self) -> SiblingSwitcher:
        return SiblingSwitcher(lambda step: self.branch_requested.emit(self._data.id, step))

    # -- public API ------------------------------------------------------------------------------

    @property
    def data(self) -> MessageData:
        return self._data

    @property
    def body(self) -> MarkdownView:
        """The rendered Markdown body (assistant messages)."""
        return self._part("body", self._make_body)

    @property
    def reasoning(self) -> ReasoningSection:
        return self._part("reasoning", ReasoningSection)

    def is_rendering(self) -> bool:
        """True while the body still renders text it was given, on following loop turns."""
        return "body" in self._parts and self.body.is_rendering()

    def set_data(self, data: MessageData, *, note: str | None = None) -> None:
        """Show ``data`` completely (final render; code highlighted)."""
        self._data, self._note = data, note
        self._update_header()
        if data.role == "user":
            self._part("plain", self._make_plain).setText(data.content)
            self._hide_part("body")
        elif data.content or "body" in self._parts:
            self.body.set_markdown(data.content)
        self._update_reasoning(live=False)
        self._update_chrome()
        self._update_capabilities()
        if self._query:
            self._apply_marks()
        self._update_reveal()
        self.render_count += 1

    def stream(self, content: str, reasoning: str) -> None:
        """Streaming update: only the open tail of the body is re-rendered."""
        status = "streaming" if content or reasoning else self._data.status
        self._data = replace(self._data, content=content, reasoning=reasoning, status=status)
        if content:
            self.body.stream_markdown(content)
            # Now, not via Qt's queued layout requests: the column is laid out right after
            # the flush (MessageList.relayout), with this message's new height.
            self.body.updateGeometry()
            self.updateGeometry()
        self._update_reasoning(live=not content)
        self._update_chrome()
        self.render_count += 1

    def set_status(self, status: str, note: str | None = None) -> None:
        self.set_data(replace(self._data, status=status), note=note)

    def set_siblings(self, index: int, count: int) -> None:
        self._data = replace(self._data, sibling_index=index, sibling_count=count)
        self._update_header()

    def copy_to_clipboard(self) -> None:
        QGuiApplication.clipboard().setText(self._data.content)

    # -- actions shown on hover and focus --------------------------------------------------------

    def actions_revealed(self) -> bool:
        """Are the header's actions drawn (hovered, focused, or pinned and finished)?"""
        finished = self._data.status not in OPEN_STATUSES
        return self._hovered or self._focused or (self._pinned and finished)

    def set_actions_pinned(self, pinned: bool) -> None:
        """Keep the actions shown without hover or focus (the latest reply, once finished)."""
        if pinned != self._pinned:
            self._pinned = pinned
            self._update_reveal()

    def _action(self, button: QToolButton) -> QToolButton:
        """An action that is drawn only while revealed (see the class docstring)."""
        button.installEventFilter(self)
        self._actions.append(button)
        return button

    def _on_focus_changed(self, _old: QWidget | None, now: QWidget | None) -> None:
        focused = now is not None and self.isAncestorOf(now)
        if focused != self._focused:
            self._focused = focused
            self._update_reveal()

    def _update_reveal(self) -> None:
        for button in self._actions:
            button.update()

    def enterEvent(self, event: QEnterEvent) -> None:
        super().enterEvent(event)
        self._hovered = True
        self._update_reveal()

    def leaveEvent(self, event: QEvent) -> None:
        super().leaveEvent(event)
        self._hovered = False
        self._update_reveal()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and watched in self._actions:
            return not self.actions_revealed()  # True: the concealed button paints nothing
        return super().eventFilter(watched, event)

    # -- find marks ------------------------------------------------------------------------------

    def mark_matches(self, query: str, *, current: int | None = 0) -> QRect | None:
        """Highlight every occurrence of ``query`` in the shown text (case-insensitive; in code
        blocks and tables too), occurrence ``current`` (an index; None: none) stronger. Where
        that one is, in this widget's coordinates (None: no such occurrence, or the body is
        still rendering; it is marked when done)."""
        self._query = query.strip()
        self._current_match = current
        return self._apply_marks()

    def clear_matches(self) -> None:
        self._query = ""
        self._current_match = None
        self._apply_marks()

    def current_match_range(self) -> tuple[int, int] | None:
        """The marked range shown stronger (the find bar's current match), or None."""
        ranges = self.match_ranges()
        index = self._current_match
        return ranges[index] if index is not None and 0 <= index < len(ranges) else None

    def match_ranges(self) -> list[tuple[int, int]]:
        """The marked [start, end) ranges: in the plain text of what is shown (the body's
        ``plain_text()``; a user message's text, or the start of it while folded)."""
        if self._data.role == "user":
            return self._user_marked_ranges()
        from flarechat.ui.transcript.match_marks import marked_ranges  # (see _mark_pages)

        ranges: list[tuple[int, int]] = []
        offset = 0
        for page in self._pages():
            ranges.extend((offset + a, offset + b) for a, b in marked_ranges(page))
            offset += page.document().characterCount()  # its text and the "\n" after it
        return ranges

    def _pages(self) -> list[QTextBrowser]:
        return self.body.findChildren(QTextBrowser) if "body" in self._parts else []

    def _apply_marks(self) -> QRect | None:
        if self._data.role == "user":
            return self._mark_user_text()
        if "body" not in self._parts:
            return None
        if self._query and self.body.is_rendering():
            self._retry_marks()
            return None
        return self._mark_pages(self._pages())

    def _mark_pages(self, pages: list[QTextBrowser]) -> QRect | None:
        """Mark ``pages`` (the current occurrence strong, counted across them); where that
        one is, or None."""
        # Imported when a query is first marked, as are the others of the module: the first
        # frame marks nothing, and its Qt text-format classes' enums cost start-up (#12).
        from flarechat.ui.transcript.match_marks import mark_page

        palette = current_palette()
        spot: QRect | None = None
        wanted = self._current_match
        before = 0  # occurrences on the pages before this one
        for page in pages:
            current = None if wanted is None else wanted - before
            cursors = mark_page(page, self._query, palette=palette, current=current)
            if current is not None and 0 <= current < len(cursors):
                cursor = cursors[current]
                rect = page.cursorRect(cursor).united(page.cursorRect(_start_of(cursor)))
                spot = QRect(page.viewport().mapTo(self, rect.topLeft()), rect.size())
            before += len(cursors)
        return spot

    def _mark_user_text(self) -> QRect | None:
        """A user's text: an expanded document's extra selections, else the label's text as
        rich text with marked spans (a label has no extra selections)."""
        page = self._user_page()
        if page is not None:
            return self._mark_pages([page])
        label = self._user_label()
        if label is None:
            return None
        from flarechat.ui.transcript.match_marks import find_ranges, marked_html

        shown = self._label_source(label)
        ranges = find_ranges(shown, self._query) if self._query else []
        if ranges:
            label.setTextFormat(Qt.TextFormat.RichText)
            current = self._current_match
            label.setText(marked_html(shown, ranges, palette=current_palette(), current=current))
            self._label_marks = (label.text(), shown)
            return label.geometry() if current is not None else None
        if label.textFormat() != Qt.TextFormat.PlainText:
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setText(shown)
        self._label_marks = None
        return None

    def _user_label(self) -> QLabel | None:
        part = self._parts.get("plain")
        if isinstance(part, QLabel):
            return part
        return part.findChild(QLabel, "userText") if part is not None else None

    def _user_page(self) -> QTextBrowser | None:
        """The document a long user text is expanded into, when it is shown."""
        part = self._parts.get("plain")
        page = part.findChild(QTextBrowser) if part is not None else None
        return page if page is not None and not page.isHidden() else None

    def _label_source(self, label: QLabel) -> str:
        """The plain text a user message's label shows (the text before marks were added,
        unless the label was given a new text since)."""
        marks = self._label_marks
        return marks[1] if marks is not None and marks[0] == label.text() else label.text()

    def _user_marked_ranges(self) -> list[tuple[int, int]]:
        from flarechat.ui.transcript.match_marks import find_ranges, marked_ranges

        page = self._user_page()
        if page is not None:
            return marked_ranges(page)
        label = self._user_label()
        if label is None or self._label_marks is None or not self._query:
            return []
        return find_ranges(self._label_source(label), self._query)

    def _retry_marks(self) -> None:
        if self._marks_timer is None:
            self._marks_timer = QTimer(self)
            self._marks_timer.setObjectName("findMarksTimer")
            self._marks_timer.setSingleShot(True)
            self._marks_timer.setInterval(MARK_RETRY_MS)
            self._marks_timer.timeout.connect(self._apply_marks)
        self._marks_timer.start()

    # -- updates ---------------------------------------------------------------------------------

    def _update_header(self) -> None:
        data = self._data
        is_user = data.role == "user"
        who = "Tool result" if data.role == "tool" else _short_model(data.model) or "Assistant"
        self._role.setText("You" if is_user else who)
        self._role.setToolTip(data.model)
        self._avatar.setVisible(not is_user)
        if not is_user and self._avatar.pixmap().isNull():
            self._avatar.setPixmap(icon(APP_ICON).pixmap(QSize(AVATAR_PX, AVATAR_PX)))
        if data.sibling_count > 1 or "siblings" in self._header_buttons:
            self._update_siblings()
        if is_user or "edit" in self._header_buttons:
            self._header_button("edit", self._make_edit).setVisible(is_user)
        if data.role == "assistant" or "regen" in self._header_buttons:
            regen = self._header_button("regen", self._make_regen)
            regen.setVisible(data.role == "assistant" and data.status not in OPEN_STATUSES)
            code = self._header_button("code", self._make_code)
            code.setVisible(data.role == "assistant" and data.status not in OPEN_STATUSES)

    def _make_edit(self) -> QToolButton:
        button = self._action(action_button("edit", name="Edit and resend", tip="Edit and resend"))
        button.clicked.connect(lambda: self.edit_requested.emit(self._data.id))
        return button

    def _make_regen(self) -> QToolButton:
        button = self._action(
            action_button("regenerate", name="Regenerate", tip="Regenerate this reply")
        )
        button.clicked.connect(lambda: self.regenerate_requested.emit(self._data.id))
        return button

    def _make_code(self) -> QToolButton:
        button = self._action(
            action_button("code", name="View as code", tip="The exact request as code")
        )
        button.clicked.connect(lambda: self.view_code_requested.emit(self._data.id))
        return button

    def _update_siblings(self) -> None:
        data = self._data
        switcher = cast(SiblingSwitcher, self._header_button("siblings", self._make_siblings))
        switcher.setVisible(data.sibling_count > 1)
        switcher.set_position(data.sibling_index, data.sibling_count)

    def _update_reasoning(self, *, live: bool) -> None:
        data = self._data
        if not data.reasoning:
            self._hide_part("reasoning")
            return
        section = self.reasoning
        section.show()
        section.set_text(data.reasoning, live=live and data.status in OPEN_STATUSES)
        if not section.user_toggled:  # open while it is all there is (live or not)
            section.set_expanded(not data.content)

    def _update_chrome(self) -> None:
        data = self._data
        is_open = data.status in OPEN_STATUSES
        if data.role != "user":
            self._set_visible_part("body", visible=bool(data.content), factory=self._make_body)
        self._set_typing(data.status == "waiting" and not data.content and not data.reasoning)
        marker = status_marker(data.status, self._note)
        if not marker and _all_reasoning(data):
            marker = ALL_REASONING_NOTE
        make_marker = partial(wrapped_label, "statusMarker", muted=True)
        if self._set_visible_part("marker", visible=bool(marker), factory=make_marker):
            cast(QLabel, self._parts["marker"]).setText(marker)
        self._update_error(visible=bool(data.error_text) and not is_open)
        show_continue = data.role == "assistant" and data.finish_reason == FINISH_LENGTH
        visible = show_continue and not is_open
        if self._set_visible_part("continue", visible=visible, factory=self._make_continue):
            row = cast(ContinueRow, self._parts["continue"])
            row.button.setVisible(data.can_continue)
            row.hint.setText(data.continue_hint or CONTINUE_HINT)
        self._update_meta()

    def _update_capabilities(self) -> None:
        """Images, a JSON verdict and tool calls: parts made only for messages that have them."""
        data = self._data
        if self._set_visible_part("images", visible=bool(data.attachments), factory=MessageImages):
            cast(MessageImages, self._parts["images"]).set_images(data.attachments)
        verdict = data.json_verdict if data.status not in OPEN_STATUSES else None
        if self._set_visible_part("json", visible=verdict is not None, factory=JsonReplyView):
            assert verdict is not None
            json_view = cast(JsonReplyView, self._parts["json"])
            json_view.set_verdict(verdict, kind=data.json_kind, note=data.note)
            self._hide_part("body")
        if self._set_visible_part("tools", visible=bool(data.tool_calls), factory=self._make_tools):
            panel = cast(ToolCallsPanel, self._parts["tools"])
            panel.set_calls(data.id, data.tool_calls, answerable=data.awaiting_tool_results)

    def _make_tools(self) -> ToolCallsPanel:
        panel = ToolCallsPanel()
        panel.results_submitted.connect(self.tool_results_submitted)
        return panel

    def _set_visible_part(
        self, name: str, *, visible: bool, factory: Callable[[], QWidget]
    ) -> bool:
        if not visible:
            self._hide_part(name)
            return False
        self._part(name, factory).show()
        return True

    def _update_error(self, *, visible: bool) -> None:
        make_error = partial(wrapped_label, "errorText")
        if self._set_visible_part("error", visible=visible, factory=make_error):
            color = current_palette().danger
            text = html.escape(self._data.error_text or "")
            cast(QLabel, self._parts["error"]).setText(f'<span style="color:{color}">{text}</span>')

    def _update_meta(self) -> None:
        data = self._data
        text = html.escape(data.meta_line)
        if data.log_id:
            shown = html.escape(_short_log_id(data.log_id))
            link = f'<a href="{_LOG_LINK}">{shown}</a>'
            escaped_id = html.escape(data.log_id)
            if escaped_id in text:
                text = text.replace(escaped_id, link, 1)
            else:
                text = f"{text} · log {link}" if text else f"log {link}"
        visible = bool(text) and data.status not in OPEN_STATUSES
        if self._set_visible_part("meta", visible=visible, factory=self._make_meta):
            meta = cast(QLabel, self._parts["meta"])
            meta.setText(text)
            meta.setToolTip("Click the log id to copy it" if data.log_id else "")

    def _on_meta_link(self, href: str) -> None:
        if href == _LOG_LINK and self._data.log_id:
            QGuiApplication.clipboard().setText(self._data.log_id)
            self.log_id_copied.emit(self._data.log_id)

    def _set_typing(self, on: bool) -> None:
        make_typing = partial(wrapped_label, "typingIndicator", muted=True)
        if not self._set_visible_part("typing", visible=on, factory=make_typing):
            if self._typing_timer is not None:
                self._typing_timer.stop()
            return
        if self._typing_timer is None:
            self._typing_timer = QTimer(self)
            self._typing_timer.setInterval(TYPING_INTERVAL_MS)
            self._typing_timer.timeout.connect(self._next_typing_frame)
            self._parts["typing"].setAccessibleName("Waiting for the reply")
        if not self._typing_timer.isActive():
            self._typing_frame = len(TYPING_FRAMES) - 1
            self._next_typing_frame()
            self._typing_timer.start()

    def _next_typing_frame(self) -> None:
        self._typing_frame = (self._typing_frame + 1) % len(TYPING_FRAMES)
        cast(QLabel, self._parts["typing"]).setText(TYPING_FRAMES[self._typing_frame])

    # -- painting --------------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        if self._data.role == "user":
            palette = current_palette()
            painter = QPainter(self)
            rect = QRectF(self.rect())
            fill_rounded(painter, rect, fill=palette.user_bubble, border=palette.user_border)
            painter.end()
        super().paintEvent(event)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            refresh_fonts(self, self.font())
        elif event.type() == QEvent.Type.PaletteChange:
            if "error" in self._parts:
                self._update_error(visible=not self._parts["error"].isHidden())
            if self._query:
                self._retry_marks()  # after the body re-renders in the new colours


def _short_model(model: str) -> str:
    """The last path part of a model id: "@cf/meta/llama-3" -> "llama-3"."""
    return model.rsplit("/", 1)[-1]


def _start_of(cursor: QTextCursor) -> QTextCursor:
    """A cursor at the start of ``cursor``'s selection (cursorRect is where it ends)."""
    start = QTextCursor(cursor)
    start.setPosition(cursor.selectionStart())
    return start


def _short_log_id(log_id: str) -> str:
    return log_id if len(log_id) <= LOG_ID_SHOWN_CHARS else log_id[:LOG_ID_SHOWN_CHARS] + "…"
