"""List rows a delegate paints itself: the style's bare row under text laid out by hand."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex
from PySide6.QtGui import QFont, QPainter
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem

__all__ = ["bold", "draw_bare_row"]


def bold(font: QFont) -> QFont:
    """A bold copy of ``font`` (a row's title line)."""
    heavy = QFont(font)
    heavy.setBold(True)
    return heavy


def draw_bare_row(
    delegate: QStyledItemDelegate,
    painter: QPainter,
    option: QStyleOptionViewItem,
    index: QModelIndex | QPersistentModelIndex,
    *,
    panel_only: bool,
) -> QStyleOptionViewItem:
    """Draw the row as the style would with its text left out (the delegate paints the text);
    ``panel_only`` draws just the background panel (no focus frame). Returns the option used.
    """
    # Here, not at import: the class's first use makes QStyle's eleven enum classes, ~8 ms
    # that the window's first paint (no rows yet) would pay (issue #12).
    from PySide6.QtWidgets import QStyle

    styled = QStyleOptionViewItem(option)
    delegate.initStyleOption(styled, index)
    styled.text = ""
    widget = styled.widget
    # A delegate painting off a view has no widget, so no style: nothing is drawn under the text.
    style = widget.style() if widget is not None else None
    if style is not None and panel_only:
        style.drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, styled, painter, widget)
    elif style is not None:
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, styled, painter, widget)
    return styled
