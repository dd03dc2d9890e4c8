"""The window's status bar: a metrics line that drops its last figures when the window is narrow,
and optional parts (usage, route, the gauge's words) that give way before anything is clipped."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from flarechat.core import figures

__all__ = ["FittingStatusBar", "MetricsLabel"]

ELLIPSIS = "\N{HORIZONTAL ELLIPSIS}"
#: QStatusBar's own room: its layout's margins and the spacing between widgets (Qt uses 2 + 6
#: per widget; a little more keeps a pixel of rounding from clipping the last one).
BAR_MARGIN_PX = 8
WIDGET_SPACING_PX = 8


class MetricsLabel(QLabel):
    """Shows as many of the line's " · " parts as fit, whole, from the left (the model first);
    the full line is always in the tooltip. Its minimum is an ellipsis, so it never forces the
    window wider."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""

    def full_text(self) -> str:
        return self._full

    def show_line(self, text: str) -> None:
        """The line to show (QLabel.setText would show it unfitted)."""
        self._full = text
        self.setToolTip(text)
        self.updateGeometry()
        self._fit()

    def essential_width(self) -> int:
        """The room for the model's name, whole: optional parts go before it is elided."""
        first = self._full.split(figures.SEPARATOR, 1)[0]
        return self._size_for(first + figures.SEPARATOR + ELLIPSIS if first else "").width()

    def sizeHint(self) -> QSize:
        return self._size_for(self._full)

    def minimumSizeHint(self) -> QSize:
        return self._size_for(ELLIPSIS if self._full else "")

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _size_for(self, text: str) -> QSize:
        margins = self.contentsMargins()
        width = self.fontMetrics().horizontalAdvance(text) + margins.left() + margins.right()
        height = self.fontMetrics().height() + margins.top() + margins.bottom()
        return QSize(width, height)

    def _fit(self) -> None:
        super().setText(self.shown_for(self.contentsRect().width()))

    def shown_for(self, width: int) -> str:
        """The longest run of whole parts that fits ``width`` (then "…"), else the first part
        elided: figures drop before the model's name does."""
        metrics = self.fontMetrics()
        if metrics.horizontalAdvance(self._full) <= width:
            return self._full
        parts = self._full.split(figures.SEPARATOR)
        for count in range(len(parts) - 1, 0, -1):
            text = figures.SEPARATOR.join(parts[:count]) + figures.SEPARATOR + ELLIPSIS
            if metrics.horizontalAdvance(text) <= width:
                return text
        return metrics.elidedText(parts[0], Qt.TextElideMode.ElideRight, max(width, 0))


class FittingStatusBar(QStatusBar):
    """A status bar that hides optional widgets, least important first, when the window is too
    narrow for them and the model's whole name, and shows them again when there is room; what
    is hidden is added to the metrics line's tooltip."""

    def __init__(self, metrics: MetricsLabel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.metrics = metrics
        self._optional: list[QWidget] = []
        self._dropped: set[int] = set()

    def set_drop_order(self, widgets: Sequence[QWidget]) -> None:
        """``widgets``: the optional parts, the first to go first."""
        self._optional = list(widgets)
        self.fit()

    def dropped(self) -> list[QWidget]:
        return [w for w in self._optional if id(w) in self._dropped]

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.fit()  # a part's text changed: it may no longer fit (or fit again)
        return super().event(event)

    def fit(self) -> None:
        """Drop optional parts, in order, until the rest fits at their preferred widths."""
        room = self.width() - BAR_MARGIN_PX - self._grip_width()
        needed = sum(self._need(w) for w in self._parts())
        needed += self.metrics.essential_width() + WIDGET_SPACING_PX
        needed += sum(self._need(w) for w in self.dropped())  # as if all were shown
        dropped: set[int] = set()
        for widget in self._optional:
            if needed <= room:
                break
            if id(widget) in self._dropped or widget.isVisibleTo(self):
                dropped.add(id(widget))
                needed -= self._need(widget)
        self._apply(dropped)

    def _apply(self, dropped: set[int]) -> None:
        if dropped == self._dropped:
            return
        changed = dropped ^ self._dropped
        self._dropped = dropped
        for widget in self._optional:
            if id(widget) in changed:  # only what we hid or now show again
                widget.setVisible(id(widget) not in dropped)
        hidden = [t for w in self.dropped() if (t := _text_of(w))]
        self.metrics.setToolTip("\n".join([self.metrics.full_text(), *hidden]).strip())

    def _parts(self) -> list[QWidget]:
        return [
            w
            for w in self.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly)
            if w.isVisibleTo(self) and w is not self.metrics and not w.isWindow()
            and type(w).__name__ != "QSizeGrip"
        ]  # fmt: skip

    def _grip_width(self) -> int:
        return self.sizeHint().height() if self.isSizeGripEnabled() else 0

    @staticmethod
    def _need(widget: QWidget) -> int:
        return max(widget.sizeHint().width(), widget.minimumWidth()) + WIDGET_SPACING_PX


def _text_of(widget: QWidget) -> str:
    if isinstance(widget, QLabel):
        return widget.text()
    labels = widget.findChildren(QLabel)
    return " ".join(label.text() for label in labels if label.text()) or widget.toolTip()
