"""What the layout guard looks for: text that does not fit its widget, and widgets on top of
each other. Pure inspection of a shown widget tree (offscreen is fine)."""

from __future__ import annotations

from PySide6.QtGui import Qt  # QtGui's Qt also has mightBeRichText
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QWidget,
)

#: A pixel of rounding between Qt's hints and the geometry it hands out is not a clip.
SLACK_PX = 1
CHECKED = (QLabel, QAbstractButton, QLineEdit, QComboBox, QAbstractSpinBox)


def _checked_widgets(root: QWidget) -> list[QWidget]:
    found: list[QWidget] = []
    for widget in root.findChildren(QWidget):
        if not isinstance(widget, CHECKED) or not widget.isVisibleTo(root):
            continue
        if widget.objectName().startswith("qt_") or _inside_item_view(widget, root):
            continue  # Qt's own parts; item views size their cells themselves
        if isinstance(widget.parent(), QAbstractSpinBox | QComboBox | QLineEdit):
            continue  # a field's own inner parts (its line edit, its clear button)
        found.append(widget)
    return found


def _inside_item_view(widget: QWidget, root: QWidget) -> bool:
    parent = widget.parentWidget()
    while parent is not None and parent is not root:
        if isinstance(parent, QAbstractItemView):
            return True
        parent = parent.parentWidget()
    return False


def _name(widget: QWidget) -> str:
    text = widget.text() if isinstance(widget, QLabel | QAbstractButton | QLineEdit) else ""
    return f"{type(widget).__name__}({widget.accessibleName() or text[:40]!r})"


def clipped(widget: QWidget) -> str | None:
    """Why ``widget`` is too small for its text, or None."""
    size = widget.size()
    if isinstance(widget, QLabel):
        if not widget.text():
            return None
        if widget.wordWrap():
            needed = widget.heightForWidth(size.width())
            if needed > size.height() + SLACK_PX:
                return f"{_name(widget)} is {size.height()} px high, its text needs {needed}"
            return None
        if (shown := _plain_text_clipped(widget)) is not None:
            return shown
        hint = widget.minimumSizeHint()
    elif isinstance(widget, QAbstractButton):
        hint = widget.sizeHint()
    else:
        hint = widget.minimumSizeHint()
        hint.setHeight(widget.sizeHint().height())
    if hint.width() > size.width() + SLACK_PX or hint.height() > size.height() + SLACK_PX:
        got, needs = f"{size.width()}x{size.height()}", f"{hint.width()}x{hint.height()}"
        return f"{_name(widget)} is {got}, needs {needs}"
    return None


def _plain_text_clipped(label: QLabel) -> str | None:
    """A one-line plain-text label whose shown text is wider than its room, whatever its size
    hints claim (a label that shrinks its hints must also shrink its text)."""
    if label.textFormat() == Qt.TextFormat.RichText or Qt.mightBeRichText(label.text()):
        return None
    width = max(label.fontMetrics().horizontalAdvance(line) for line in label.text().split("\n"))
    room = label.contentsRect().width() - 2 * label.margin() - label.indent() * (label.indent() > 0)
    if width > room + SLACK_PX:
        return f"{_name(label)} shows text {width} px wide in {room} px"
    return None


def overlapping(widgets: list[QWidget]) -> list[str]:
    """Pairs of siblings (same parent) whose rectangles intersect."""
    problems = []
    by_parent: dict[int, list[QWidget]] = {}
    for widget in widgets:
        by_parent.setdefault(id(widget.parentWidget()), []).append(widget)
    for siblings in by_parent.values():
        for index, first in enumerate(siblings):
            for second in siblings[index + 1 :]:
                shared = first.geometry().intersected(second.geometry())
                if shared.width() > SLACK_PX and shared.height() > SLACK_PX:
                    problems.append(f"{_name(first)} overlaps {_name(second)}")
    return problems


def layout_problems(root: QWidget) -> list[str]:
    """Every clipped or overlapping label, button and field under ``root``."""
    widgets = _checked_widgets(root)
    problems = [problem for widget in widgets if (problem := clipped(widget))]
    return problems + overlapping(widgets)
