"""The toolbar's model picker: a compact button and a searchable popup over the catalogue."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPaintEvent, QPolygonF
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QSizePolicy, QWidget

from flarechat.api.models import ModelInfo
from flarechat.ui.models.listing import (
    Badge,
    ModelListModel,
    badges_for,
    badges_width,
    model_strengths,
    paint_badges,
)
from flarechat.ui.shared.accessible import name_internal_buttons
from flarechat.ui.shared.wrappers import viewport_of

if TYPE_CHECKING:  # made when first opened (start-up: its list view's class and enums)
    from flarechat.ui.models.popup import ModelPickerPopup

__all__ = ["ModelPicker", "format_age"]

POPUP_WIDTH = 540
POPUP_HEIGHT = 460
AGE_REFRESH_MS = 30_000
NO_ACCOUNT_STATUS = "Add your account in Settings (or try demo mode) to load the models"
BUTTON_PAD_H = 10
BUTTON_GAP = 8
BUTTON_MIN_HEIGHT = 30
ARROW_SIZE = 10
#: Fusion's arrow indicator: its largest size and its alpha over the text colour.
ARROW_MAX_W, ARROW_MAX_H, ARROW_ALPHA = 14, 8, 160
#: Extra px so fractional glyph advances never make a name that fits elide.
TEXT_SLACK = 2
NAME_MAX_CHARS = 44  # long enough for every current catalogue id; longer ones elide
_MINUTE = 60
_HOUR = 3_600
_DAY = 86_400


def format_age(seconds: float) -> str:
    """``"just now"``, ``"5 min ago"``, ``"3 h ago"``, ``"2 days ago"``."""
    if seconds < _MINUTE:
        return "just now"
    if seconds < _HOUR:
        return f"{int(seconds // _MINUTE)} min ago"
    if seconds < _DAY:
        return f"{int(seconds // _HOUR)} h ago"
    days = int(seconds // _DAY)
    return f"{days} day ago" if days == 1 else f"{days} days ago"


def _paint_down_arrow(painter: QPainter, rect: QRect, text_colour: QColor) -> None:
    """A filled down-pointing triangle centred in ``rect``, as Fusion's arrow indicator: at
    most ARROW_MAX_W px wide and ARROW_MAX_H px tall in that ratio, in the text's colour
    at ARROW_ALPHA."""
    size = min(ARROW_MAX_H, ARROW_MAX_W, rect.width(), rect.height())
    box = QRectF(0, 0, size, ARROW_MAX_H * size // ARROW_MAX_W)
    box.moveTo(
        rect.x() + (rect.width() - box.width()) / 2.0,
        rect.y() + (rect.height() - box.height()) / 2.0,
    )
    colour = QColor(text_colour)
    colour.setAlpha(ARROW_ALPHA)
    painter.save()
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(colour)
    painter.drawPolygon(
        QPolygonF([box.topLeft(), box.topRight(), QPointF(box.center().x(), box.bottom())])
    )
    painter.restore()


class _PickerButton(QPushButton):
    """A push button painting the model's short name, its badges and a drop-down arrow."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._name = ""
        self._badges: list[Badge] = []
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)

    def set_model(self, name: str, badges: list[Badge]) -> None:
        self._name = name
        self._badges = badges
        self.updateGeometry()
        self.update()

    def display_name(self) -> str:
        return self._name

    def badge_texts(self) -> list[str]:
        return [badge.text for badge in self._badges]

    def _bold(self) -> QFont:
        font = QFont(self.font())
        font.setBold(True)
        return font

    def sizeHint(self) -> QSize:
        metrics = QFontMetrics(self._bold())
        name_w = min(
            metrics.horizontalAdvance(self._name), metrics.averageCharWidth() * NAME_MAX_CHARS
        )
        badge_w = badges_width(self._badges, self.font()) + BUTTON_GAP if self._badges else 0
        width = 2 * BUTTON_PAD_H + name_w + TEXT_SLACK + badge_w + BUTTON_GAP + ARROW_SIZE
        height = max(super().sizeHint().height(), BUTTON_MIN_HEIGHT)
        return QSize(width, height)

    def minimumSizeHint(self) -> QSize:
        return QSize(2 * BUTTON_PAD_H + 6 * ARROW_SIZE, self.sizeHint().height())

    def _inner(self) -> QRect:
        """The button's inside, padded left and right: the label and the arrow go in it."""
        return self.rect().adjusted(BUTTON_PAD_H, 0, -BUTTON_PAD_H, 0)

    def arrow_rect(self) -> QRect:
        """Where the drop-down arrow goes: at the right of the padded inside."""
        inner = self._inner()
        top = inner.center().y() - ARROW_SIZE // 2
        return QRect(inner.right() - ARROW_SIZE, top, ARROW_SIZE, ARROW_SIZE)

    def paintEvent(self, event: QPaintEvent) -> None:
        # The button's own paint (it has no text: the name is painted below), then an arrow
        # as Fusion draws one: QStyle and its options are not touched from Python, whose
        # first use makes QStyle's eleven enum classes (~8 ms before the first paint, #12).
        super().paintEvent(event)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        _paint_down_arrow(painter, self.arrow_rect(), self.palette().color(self.foregroundRole()))
        self.paint_label(painter)

    def paint_label(self, painter: QPainter) -> None:
        """The model's name, bold, and its badges where they fit, left of the arrow."""
        inner = self._inner()
        room = inner.width() - ARROW_SIZE - BUTTON_GAP
        badge_w = badges_width(self._badges, self.font()) + BUTTON_GAP if self._badges else 0
        bold = self._bold()
        metrics = QFontMetrics(bold)
        name_min = min(metrics.horizontalAdvance(self._name), metrics.averageCharWidth() * 8)
        show_badges = bool(self._badges) and room - badge_w >= name_min
        name_room = room - badge_w if show_badges else room
        name = metrics.elidedText(self._name, Qt.TextElideMode.ElideRight, name_room)
        painter.setFont(bold)
        painter.setPen(self.palette().color(self.foregroundRole()))
        name_rect = QRect(inner.left(), inner.top(), name_room, inner.height())
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        painter.drawText(name_rect, int(align), name)
        if show_badges:
            painter.setFont(self.font())
            left = inner.left() + metrics.horizontalAdvance(name) + BUTTON_GAP
            paint_badges(
                painter,
                left=left,
                center_y=inner.center().y() + 1,
                badges=self._badges,
                palette=self.palette(),
            )


class ModelPicker(QWidget):
    """The toolbar control choosing the model: cached catalogue first, live list when it lands.

    Signals:
        model_selected(str): the user picked a model id (listed or typed by hand).
        refresh_requested(): the user asked for a fresh catalogue.
    """

    model_selected = Signal(str)
    refresh_requested = Signal()

    def __init__(
        self, parent: QWidget | None = None, *, clock: Callable[[], float] = time.time
    ) -> None:
        super().__init__(parent)
        self._clock = clock
        self._current = ""
        self._fetched_at: float | None = None
        self._offline = False
        #: why the last live fetch failed (a sentence); "" once one succeeds
        self._problem = ""
        self._loading = False
        self._account_missing = False
        self._model = ModelListModel(self)
        self.button = _PickerButton(self)
        self.button.setAccessibleName("Model")
        self._popup: ModelPickerPopup | None = None
        self._status_shown = ""
        self._age_timer = QTimer(self)
        self._age_timer.setObjectName("model-picker-age")
        self._age_timer.setInterval(AGE_REFRESH_MS)
        box = QHBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.button)
        self.button.clicked.connect(self.open_popup)
        self._age_timer.timeout.connect(self._update_status)
        self._update_button()
        self._update_status()

    @property
    def popup(self) -> ModelPickerPopup:
        """The drop-down, made when first needed: the first paint shows only the button."""
        if self._popup is None:
            from flarechat.ui.models.popup import ModelPickerPopup

            popup = ModelPickerPopup(self._model, self)
            popup.chosen.connect(self._on_popup_chosen)
            popup.refresh_requested.connect(self.refresh_requested)
            popup.closed.connect(self._age_timer.stop)
            popup.delegate.current_id = self._current
            popup.set_status(self._status_shown, loading=self._loading)
            name_internal_buttons(popup)  # as the window's own were when it was built
            self._popup = popup
        return self._popup

    # -- public API -----------------------------------------------------------------------
    def set_models(
        self, models: list[ModelInfo], *, fetched_at: float | None, offline: bool
    ) -> None:
        """Show a catalogue: ``offline`` means it came from the cache after a failed fetch."""
        ordered = sorted(models, key=lambda m: (m.short_name.casefold(), m.name))
        highlighted = self._popup.highlighted_name() if self._popup is not None else None
        self._model.set_models(ordered)
        self._fetched_at = fetched_at
        self._offline = offline
        if not offline:
            self._problem = ""
        self._update_button()
        self._update_status()
        if self._popup is not None and self._popup.isVisible():  # landed while choosing
            self._popup.keep_highlight(highlighted)

    def set_current(self, model_id: str) -> None:
        self._current = model_id
        if self._popup is not None:
            self._popup.delegate.current_id = model_id
            viewport_of(self._popup.view).update()  # (start-up time: ui/shared/wrappers.py)
        self._update_button()

    def set_problem(self, text: str) -> None:
        """Why the live catalogue could not be fetched: the status says it (not "Offline",
        which a server that answered, or refused the token, is not) until a fetch succeeds."""
        self._problem = text
        self._update_status()

    def set_account_missing(self, missing: bool) -> None:
        """No account (and no demo): Refresh cannot fetch, and the status says why."""
        self._account_missing = missing
        self._update_status()

    def strengths(self, model_id: str) -> str:
        """What the model is good at, from the catalogue (empty when it is not listed)."""
        info = self._model.find(model_id)
        return model_strengths(info) if info is not None else ""

    def set_loading(self, loading: bool) -> None:
        self._loading = loading
        self._update_status()

    def current_model(self) -> str:
        return self._current

    def models(self) -> list[ModelInfo]:
        return self._model.models()

    def status_text(self) -> str:
        return self._status_shown

    def open_popup(self) -> None:
        self._update_status()
        self.popup.resize(max(POPUP_WIDTH, self.button.width()), POPUP_HEIGHT)
        self.popup.move(self._popup_position())
        self.popup.show()
        self.popup.reset(self._current)
        self._age_timer.start()

    # -- internals ------------------------------------------------------------------------
    def _popup_position(self) -> QPoint:
        below = self.button.mapToGlobal(QPoint(0, self.button.height()))
        area = self.screen().availableGeometry()
        x = min(max(below.x(), area.left()), area.right() - self.popup.width())
        y = below.y()
        if y + self.popup.height() > area.bottom():
            y = max(self.button.mapToGlobal(QPoint(0, 0)).y() - self.popup.height(), area.top())
        return QPoint(x, y)

    def _update_button(self) -> None:
        info = self._model.find(self._current)
        short = self._current.rsplit("/", 1)[-1] if self._current else "Choose a model"
        self.button.set_model(short, badges_for(info) if info else [])
        tip = self._current or "No model chosen"
        if info is not None and info.description:
            tip = f"{self._current}\n{info.description}"
        self.button.setToolTip(tip)
        self.button.setAccessibleDescription(f"Current model: {self._current or 'none'}")

    def _status(self) -> str:
        if self._loading:
            return "Updating the model list…"
        if self._account_missing:
            return NO_ACCOUNT_STATUS
        age = None if self._fetched_at is None else format_age(self._clock() - self._fetched_at)
        if self._offline and self._problem:
            if not self._model.rowCount():
                return f"Not updated: {self._problem}"
            cached = f"the list updated {age}" if age else "the cached list"
            return f"Not updated: {self._problem} Showing {cached}."
        if self._offline:
            if not self._model.rowCount():
                return "Offline — no cached list"
            return "Offline — showing cached list" + (f" (updated {age})" if age else "")
        if age is not None:
            return f"Updated {age}"
        return "Model list not loaded yet"

    def _update_status(self) -> None:
        self._status_shown = self._status()
        if self._popup is not None:
            self._popup.set_status(self._status_shown, loading=self._loading)

    def _on_popup_chosen(self, model_id: str) -> None:
        self.set_current(model_id)
        self.model_selected.emit(model_id)
