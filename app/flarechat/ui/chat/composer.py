"""The composer: a growing text box that sends on Enter, a Send button that turns into Stop,
a card for a long pasted text, and the Reject-if-busy switch with the "queued" state under it."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QMimeData, QObject, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFontMetricsF,
    QIcon,
    QInputMethodEvent,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from flarechat.ui.capabilities.attach import AttachmentBox
from flarechat.ui.shared.icons import icon
from flarechat.ui.shared.theme import current_palette, fill_rounded, mute, named, scaled_font
from flarechat.ui.transcript.warm_up import warm_up_in_background

__all__ = ["LONG_TEXT_CHARS", "MAX_LINES", "MIN_LINES", "ComposerWidget", "PastedText"]

MIN_LINES = 1
MAX_LINES = 8
SEND_BUTTON_PX = 32
SEND_ICON_PX = 18
PLACEHOLDER = "Message {model} — Enter to send, Shift+Enter for a new line"
#: Used when the full placeholder would not fit the box (a narrow window).
SHORT_PLACEHOLDER = "Message {model}"
REJECT_IF_BUSY = "Reject if busy"
REJECT_IF_BUSY_TIP = (
    "On: when Workers AI is at capacity, fail fast and retry (a banner shows).\n"
    "Off: wait in Cloudflare's queue instead."
)
QUEUED_TEXT = "Waiting in Cloudflare's queue \N{MIDDLE DOT} {seconds} s"
#: A reply sent, not known to be queued (a slow first byte, a reply that does not stream).
WAITING_TEXT = "Waiting for the first token \N{MIDDLE DOT} {seconds} s"
QUEUED_TICK_MS = 1000
#: The footer's small print is this much smaller than the message text.
FOOTER_FONT_FACTOR = 0.9
_SEND_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)
#: QPlainTextEdit scrolls by a line unless its viewport has this extra pixel.
_LINE_SLACK_PX = 1
#: Events after which the line height may differ (zoom, another font or style).
_METRIC_EVENTS = (QEvent.Type.FontChange, QEvent.Type.StyleChange)
#: A pasted (or restored) text longer than this is held on a card above the box, not typed
#: into it: Qt lays a paragraph out whole, and a 1 MB one froze the window for 2 s.
LONG_TEXT_CHARS = 16_000
#: Characters of a held text shown on its card.
PREVIEW_CHARS = 120
#: Between the held text and what is typed in the box, in the message sent.
HELD_TEXT_SEPARATOR = "\n\n"
REMOVE_ICON_PX = 14


class _ComposerEdit(QPlainTextEdit):
    """The text box; turns key presses into intents for its ComposerWidget."""

    submit = Signal()
    escape = Signal()
    long_text_pasted = Signal(str)
    up_in_empty = Signal()
    metrics_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composerEdit")
        self.setTabChangesFocus(True)
        self._composing = False
        self.image_sink: AttachmentBox | None = None  # takes pasted and dropped images

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        sink = self.image_sink
        return (sink is not None and sink.can_take(source)) or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        if self.image_sink is not None and self.image_sink.take(source):
            return
        if source.hasText() and len(text := source.text()) > LONG_TEXT_CHARS:
            self.long_text_pasted.emit(text)
            return
        super().insertFromMimeData(source)

    def line_height(self) -> int:
        """Pixels per line as the text layout places them: QTextLine rounds each line's
        height up, so QFontMetrics.lineSpacing() (rounded to nearest) can be a pixel short
        per line, and the box would then scroll by one line with a scroll bar showing."""
        return math.ceil(QFontMetricsF(self.document().defaultFont()).height())

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)  # updates the document's font first
        if event.type() in _METRIC_EVENTS:
            self.metrics_changed.emit()

    def inputMethodEvent(self, event: QInputMethodEvent) -> None:
        # While an input method composes (CJK, dead keys…), Enter belongs to the IME.
        self._composing = bool(event.preeditString())
        super().inputMethodEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, mods = event.key(), event.modifiers()
        if key in _SEND_KEYS and self._composing:
            event.accept()  # the input method owns Enter until it commits
            return
        if key in _SEND_KEYS:
            if mods & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
            else:
                self.submit.emit()
            event.accept()
            return
        if key == Qt.Key.Key_Escape and not self._composing:
            self.escape.emit()
            event.accept()
            return
        if key == Qt.Key.Key_Up and not mods and not self.toPlainText():
            self.up_in_empty.emit()
            event.accept()
            return
        super().keyPressEvent(event)


class PastedText(QFrame):
    """A long text held for the message being written: its size, its first words and a
    remove button. The text itself never enters a text box, so a 1 MB paste costs nothing.

    Signals:
        changed(): the held text was set, added to or removed.
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pastedText")
        self._text = ""
        self.summary = mute(named(QLabel(self), "pastedTextSummary"))
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.remove_button = named(QToolButton(self), "removePastedText")
        self.remove_button.setIcon(icon("close", role="muted"))
        self.remove_button.setIconSize(QSize(REMOVE_ICON_PX, REMOVE_ICON_PX))
        self.remove_button.setAutoRaise(True)
        self.remove_button.setAccessibleName("Remove the pasted text")
        self.remove_button.setToolTip("Remove the pasted text")
        self.remove_button.clicked.connect(lambda: self.set_text(""))
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 4, 2, 4)
        row.addWidget(self.summary, 1)
        row.addWidget(self.remove_button, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    def text(self) -> str:
        return self._text

    def set_text(self, text: str) -> None:
        self._text = text
        self.setVisible(bool(text))
        if text:
            self.summary.setText(_summary(text))
            self.setAccessibleName(f"Pasted text, {len(text):,} characters")
        self.changed.emit()

    def add(self, text: str) -> None:
        """Another long paste: held after the first, on its own line."""
        self.set_text(f"{self._text}\n{text}" if self._text else text)

    def paintEvent(self, event: QPaintEvent) -> None:
        palette = current_palette()
        painter = QPainter(self)
        fill_rounded(painter, QRectF(self.rect()), fill=palette.alt_base, border=palette.border)
        painter.end()


def _summary(text: str) -> str:
    """ "Pasted text · 1,048,576 characters · 3 lines" over the text's first words."""
    lines = text.count("\n") + 1
    size = f"Pasted text \N{MIDDLE DOT} {len(text):,} characters \N{MIDDLE DOT} {lines:,} "
    head = " ".join(text[: PREVIEW_CHARS * 2].split())
    preview = head[:PREVIEW_CHARS] + ("…" if len(head) > PREVIEW_CHARS else "")
    return size + ("line" if lines == 1 else "lines") + "\n" + preview


class _RoundButton(QToolButton):
    """The accent-coloured round Send/Stop button."""

    def paintEvent(self, event: QPaintEvent) -> None:
        palette = current_palette()
        if not self.isEnabled():
            fill = palette.border
        elif self.underMouse() or self.isDown():
            fill = palette.accent_hover
        else:
            fill = palette.accent
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(fill))
        painter.drawEllipse(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5))
        size = self.iconSize()
        mode = QIcon.Mode.Normal if self.isEnabled() else QIcon.Mode.Disabled
        pixmap = self.icon().pixmap(size, self.devicePixelRatioF(), mode)
        painter.drawPixmap(
            (self.width() - size.width()) // 2, (self.height() - size.height()) // 2, pixmap
        )
        if self.hasFocus():
            painter.setPen(QPen(QColor(palette.text), 1, Qt.PenStyle.DotLine))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawEllipse(QRectF(self.rect()).adjusted(1.5, 1.5, -1.5, -1.5))
        painter.end()


class ComposerWidget(QFrame):
    """Where the user writes. Stays editable while a reply streams.

    Signals:
        send_requested(str): Enter or Send with non-blank text (the box is then cleared).
        stop_requested(): Esc, or the Send button while busy (it shows Stop then).
        edit_last_requested(): Up in an empty box.
        reject_if_busy_toggled(bool): the user switched Reject if busy (not emitted by
            ``set_reject_if_busy``).
        draft_changed(): what would be sent changed: the typed text, the pasted-text card or
            the images (the context meter counts all three).

    Slots for the controller: ``set_reject_if_busy(bool)``, ``show_queued(waited_s)`` (the
    reply waits in Cloudflare's queue; the label counts up) and ``clear_queued()``.
    """

    send_requested = Signal(str)
    stop_requested = Signal()
    edit_last_requested = Signal()
    reject_if_busy_toggled = Signal(bool)
    draft_changed = Signal()

    def __init__(
        self, parent: QWidget | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(parent)
        self.setObjectName("composerFrame")
        self._busy = False
        self._model_name = "the model"
        self._clock = clock
        self._queued_since: float | None = None
        self._queued_text = QUEUED_TEXT
        self._warming = False
        self._edit = _ComposerEdit(self)
        self._edit.setAccessibleName("Message")
        self._edit.submit.connect(self._on_submit)
        self._edit.long_text_pasted.connect(self._on_long_paste)
        self._edit.escape.connect(self.stop_requested)
        self._edit.up_in_empty.connect(self._on_up_in_empty)
        self._edit.textChanged.connect(self._on_text_changed)
        self._edit.metrics_changed.connect(self._fit_height)
        self._edit.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._edit.setFrameShape(QFrame.Shape.NoFrame)
        self._edit.installEventFilter(self)
        self._button = named(_RoundButton(self), "sendButton")
        self._button.setFixedSize(SEND_BUTTON_PX, SEND_BUTTON_PX)
        self._button.setIconSize(QSize(SEND_ICON_PX, SEND_ICON_PX))
        self._button.setCursor(Qt.CursorShape.PointingHandCursor)
        self._button.clicked.connect(self._on_button_clicked)
        self._build_footer()
        self.attachments = AttachmentBox(self)
        self._edit.image_sink = self.attachments
        self.attachments.changed.connect(self._update_button)
        self.pasted = PastedText(self)
        self.pasted.changed.connect(self._update_button)
        for changed in (self._edit.textChanged, self.pasted.changed, self.attachments.changed):
            changed.connect(self.draft_changed)
        self._footer.insertWidget(0, self.attachments.button)
        row = QHBoxLayout()
        row.setSpacing(8)
        row.addWidget(self._edit, 1)
        row.addWidget(self._button, 0, Qt.AlignmentFlag.AlignBottom)
        column = QVBoxLayout(self)
        column.setContentsMargins(12, 8, 8, 8)
        column.setSpacing(4)
        column.addWidget(self.attachments)
        column.addWidget(self.pasted)
        column.addLayout(row)
        column.addLayout(self._footer)
        self.setFocusProxy(self._edit)
        self.set_model("")
        self._update_button()
        self._fit_height()

    def _build_footer(self) -> None:
        self.reject_toggle = QCheckBox(REJECT_IF_BUSY, self)
        self.reject_toggle.setAccessibleName(REJECT_IF_BUSY)
        self.reject_toggle.setToolTip(REJECT_IF_BUSY_TIP)
        self.reject_toggle.toggled.connect(self._on_reject_toggled)
        self.queued_label = mute(QLabel(self))
        self.queued_label.setAccessibleName("Queue status")
        self.queued_label.hide()
        for widget in (self.reject_toggle, self.queued_label):
            widget.setFont(scaled_font(widget, FOOTER_FONT_FACTOR))
        self._queued_timer = QTimer(self, interval=QUEUED_TICK_MS)
        self._queued_timer.setObjectName("composer-queued-tick")
        self._queued_timer.timeout.connect(self._show_queued_time)
        self._footer = QHBoxLayout()
        self._footer.setSpacing(8)
        self._footer.addWidget(self.reject_toggle)
        self._footer.addWidget(self.queued_label)
        self._footer.addStretch(1)

    # -- Reject if busy and the queue -------------------------------------------------------
    def set_reject_if_busy(self, on: bool) -> None:
        """Show the current setting (does not emit reject_if_busy_toggled)."""
        blocked = self.reject_toggle.blockSignals(True)
        self.reject_toggle.setChecked(on)
        self.reject_toggle.blockSignals(blocked)

    def _on_reject_toggled(self, on: bool) -> None:
        self.reject_if_busy_toggled.emit(on)

    def show_queued(self, waited: float = 0.0, *, queued: bool = True) -> None:
        """The reply waits in Cloudflare's queue (Wait in queue, a 3040 waited out), or, with
        ``queued`` False, for its first token: count the wait up."""
        self._queued_text = QUEUED_TEXT if queued else WAITING_TEXT
        self._queued_since = self._clock() - max(0.0, waited)
        self._show_queued_time()
        self.queued_label.show()
        self._queued_timer.start()

    def clear_queued(self) -> None:
        self._queued_since = None
        self._queued_timer.stop()
        self.queued_label.hide()

    def queued_seconds(self) -> int | None:
        if self._queued_since is None:
            return None
        return int(self._clock() - self._queued_since)

    def _show_queued_time(self) -> None:
        seconds = self.queued_seconds()
        if seconds is not None:
            self.queued_label.setText(self._queued_text.format(seconds=seconds))

    @property
    def editor(self) -> QPlainTextEdit:
        return self._edit

    @property
    def send_button(self) -> QToolButton:
        return self._button

    def is_busy(self) -> bool:
        return self._busy

    def text(self) -> str:
        """The message as it would be sent: a held long text, then what is typed."""
        typed, held = self._edit.toPlainText(), self.pasted.text()
        if held and typed:
            return held + HELD_TEXT_SEPARATOR + typed
        return held or typed

    def set_text(self, text: str) -> None:
        """Put ``text`` in the box (edit flows), cursor at the end, focused; a text longer
        than LONG_TEXT_CHARS is held on the pasted-text card instead."""
        long = len(text) > LONG_TEXT_CHARS
        self.pasted.set_text(text if long else "")
        self._edit.setPlainText("" if long else text)
        cursor = self._edit.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        self._edit.setTextCursor(cursor)
        self._edit.setFocus()

    def set_model(self, model: str) -> None:
        self._model_name = model.rsplit("/", 1)[-1] if model else "the model"
        self._fit_placeholder()

    def _fit_placeholder(self) -> None:
        """The full hint when it fits on one line of the box, else the short one."""
        width = self._edit.contentsRect().width()  # up to date in the box's own resize
        room = width - 2 * math.ceil(self._edit.document().documentMargin())
        full = PLACEHOLDER.format(model=self._model_name)
        fits = width <= 0 or self._edit.fontMetrics().horizontalAdvance(full) <= room
        self._edit.setPlaceholderText(
            full if fits else SHORT_PLACEHOLDER.format(model=self._model_name)
        )

    def set_busy(self, busy: bool) -> None:
        """While busy the button is Stop; the box stays editable for the next message."""
        self._busy = busy
        self._update_button()

    def _on_submit(self) -> None:
        text = self.text()
        if self._busy or not (text.strip() or self.attachments.count()):
            return
        self._edit.clear()
        self.pasted.set_text("")
        self.send_requested.emit(text)

    def _on_up_in_empty(self) -> None:
        if not self.pasted.text():  # the box only looks empty: a long text is held
            self.edit_last_requested.emit()

    def _on_long_paste(self, text: str) -> None:
        self.pasted.add(text)
        self._edit.setFocus()
        self._get_ready()

    def _on_button_clicked(self) -> None:
        if self._busy:
            self.stop_requested.emit()
        else:
            self._on_submit()

    def _on_text_changed(self) -> None:
        self._update_button()
        self._fit_height()
        self._get_ready()

    def _get_ready(self) -> None:
        """While the first message is written, Markdown and highlighting load in the
        background: the first reply would otherwise wait 0.5 s for them on the GUI thread."""
        if not self._warming and self.text():
            self._warming = True
            warm_up_in_background()

    def _update_button(self) -> None:
        if self._busy:
            self._button.setIcon(icon("stop", role="on-accent"))
            self._button.setToolTip("Stop generating (Esc)")
            self._button.setAccessibleName("Stop generating")
            self._button.setEnabled(True)
        else:
            self._button.setIcon(icon("send", role="on-accent"))
            self._button.setToolTip("Send (Enter)")
            self._button.setAccessibleName("Send message")
            has_images = bool(self.attachments.count())
            typed = self._edit.toPlainText().strip() or self.pasted.text().strip()
            self._button.setEnabled(bool(typed) or has_images)

    def _fit_height(self) -> None:
        """Grow with the text from MIN_LINES to MAX_LINES, then scroll."""
        lines = int(self._edit.document().documentLayout().documentSize().height())
        shown = max(MIN_LINES, min(MAX_LINES, lines))
        margins = self._edit.contentsMargins()
        height = (
            shown * self._edit.line_height()
            + 2 * math.ceil(self._edit.document().documentMargin())
            + _LINE_SLACK_PX
            + margins.top()
            + margins.bottom()
        )
        overflow = lines > MAX_LINES
        policy = Qt.ScrollBarPolicy
        self._edit.setVerticalScrollBarPolicy(
            policy.ScrollBarAsNeeded if overflow else policy.ScrollBarAlwaysOff
        )
        if self._edit.height() != height:
            self._edit.setFixedHeight(height)
        if not overflow:
            self._edit.verticalScrollBar().setValue(0)

    def paintEvent(self, event: QPaintEvent) -> None:
        palette = current_palette()
        border = palette.accent if self._edit.hasFocus() else palette.border
        painter = QPainter(self)
        fill_rounded(painter, QRectF(self.rect()), fill=palette.base, border=border)
        painter.end()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._edit and event.type() in (QEvent.Type.FocusIn, QEvent.Type.FocusOut):
            self.update()  # the frame's border shows focus
        if watched is self._edit and event.type() == QEvent.Type.Resize:
            self._fit_placeholder()
        return super().eventFilter(watched, event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_height()
