"""The model picker's list: item model, type-to-filter proxy, row delegate and badge pills."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QRectF,
    QSize,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem, QWidget

from flarechat.api.models import ModelInfo
from flarechat.ui.shared.item_rows import bold, draw_bare_row

__all__ = [
    "MODEL_ROLE",
    "Badge",
    "ModelFilterProxy",
    "ModelItemDelegate",
    "ModelListModel",
    "badges_for",
    "badges_width",
    "format_context",
    "format_price",
    "looks_like_model_id",
    "paint_badges",
]

MODEL_ROLE = Qt.ItemDataRole.UserRole + 1
#: A hand-typed id must look like one: "@cf/vendor/model", "@hf/org/model"…
_MODEL_ID_RE = re.compile(r"^@[A-Za-z0-9_-]+(/[A-Za-z0-9._:+-]+)+$")

_KILO = 1_000
_MEGA = 1_000_000
_PRICE_EPSILON = 1e-9
_DARK_LIGHTNESS = 128  # QPalette.Window lightness below this means a dark theme

ROW_PADDING_H = 10
ROW_PADDING_V = 7
LINE_GAP = 2
CHECK_GUTTER = 18
COLUMN_GAP = 12
BADGE_PAD_H = 6
BADGE_PAD_V = 1
BADGE_GAP = 4
BADGE_FONT_SCALE = 0.82
DETAIL_FONT_SCALE = 0.9
MUTED_ALPHA = 150
BADGE_BG_ALPHA_LIGHT = 36
BADGE_BG_ALPHA_DARK = 70
BADGE_TEXT_DARKER = 135
BADGE_TEXT_LIGHTER = 160


@dataclass(frozen=True, slots=True)
class Badge:
    """A small rounded label on a model: its text and the hue it is drawn in."""

    text: str
    hue: str


BETA = Badge("Beta", "#c2410c")
PAID = Badge("Paid plan", "#7c3aed")
REASONING = Badge("Reasoning", "#2563eb")
FUNCTIONS = Badge("Functions", "#047857")
LORA = Badge("LoRA", "#be185d")
VISION = Badge("Vision", "#0e7490")


def badges_for(model: ModelInfo) -> list[Badge]:
    """The badges a model earns, in a fixed order."""
    flags = (
        (model.beta, BETA),
        (model.paid_only, PAID),
        (model.reasoning, REASONING),
        (model.function_calling, FUNCTIONS),
        (model.lora, LORA),
        (model.vision, VISION),
    )
    return [badge for flag, badge in flags if flag]


def model_strengths(model: ModelInfo) -> str:
    """One line on what a model is good at: its description's first sentence and its skills."""
    first = model.description.split(". ")[0].strip().rstrip(".")
    skills = [
        text
        for flag, text in (
            (model.reasoning, "thinks step by step"),
            (model.function_calling, "can call tools"),
            (model.vision, "reads images"),
            (bool(model.context_window), f"{format_context(model.context_window)} window"),
        )
        if flag
    ]
    return " · ".join(part for part in (first, ", ".join(skills)) if part)


def format_context(tokens: int | None) -> str:
    """``128000`` -> ``"128K ctx"``; empty when unknown."""
    if not tokens:
        return ""
    if tokens >= _MEGA:
        return f"{tokens / _MEGA:.3g}M ctx"
    if tokens >= _KILO:
        return f"{round(tokens / _KILO)}K ctx"
    return f"{tokens} ctx"


def _dollars(price: float) -> str:
    text = f"{price:.2f}"
    if math.fabs(float(text) - price) > _PRICE_EPSILON:  # keep sub-cent prices exact
        text = f"{price:.4f}".rstrip("0")
    return f"${text}"


def format_price(model: ModelInfo) -> str:
    """``"$0.29 in / $2.25 out per M"`` (per million tokens); empty when unknown."""
    price_in, price_out = model.price_input_per_m, model.price_output_per_m
    if price_in is not None and price_out is not None:
        return f"{_dollars(price_in)} in / {_dollars(price_out)} out per M"
    if price_in is not None:
        return f"{_dollars(price_in)} in per M"
    if price_out is not None:
        return f"{_dollars(price_out)} out per M"
    return ""


def looks_like_model_id(text: str) -> bool:
    return bool(_MODEL_ID_RE.match(text))


def describe(model: ModelInfo) -> str:
    """One line for screen readers and tooltips."""
    parts = [model.short_name, model.name, format_context(model.context_window)]
    parts += [b.text for b in badges_for(model)]
    parts.append(format_price(model))
    return ", ".join(p for p in parts if p)


class ModelListModel(QAbstractListModel):
    """The catalogue as a flat list; MODEL_ROLE gives the ModelInfo."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._models: list[ModelInfo] = []

    def set_models(self, models: list[ModelInfo]) -> None:
        self.beginResetModel()
        self._models = list(models)
        self.endResetModel()

    def models(self) -> list[ModelInfo]:
        return list(self._models)

    def find(self, name: str) -> ModelInfo | None:
        return next((m for m in self._models if m.name == name), None)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._models)

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self._models):
            return None
        model = self._models[index.row()]
        if role == MODEL_ROLE:
            return model
        if role == Qt.ItemDataRole.DisplayRole:
            return model.short_name
        if role == Qt.ItemDataRole.ToolTipRole:
            return model.description or model.name
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return describe(model)
        return None


class ModelFilterProxy(QSortFilterProxyModel):
    """Keeps the rows whose name, description or badges contain every typed word."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._terms: list[str] = []

    def set_query(self, text: str) -> None:
        self.beginFilterChange()
        self._terms = text.casefold().split()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(
        self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex
    ) -> bool:
        if not self._terms:
            return True
        model = self.sourceModel().index(source_row, 0, source_parent).data(MODEL_ROLE)
        if not isinstance(model, ModelInfo):
            return False
        words = [model.name, model.description, *(b.text for b in badges_for(model))]
        haystack = " ".join(words).casefold()
        return all(term in haystack for term in self._terms)


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < _DARK_LIGHTNESS


def badge_font(base: QFont) -> QFont:
    font = QFont(base)
    font.setPointSizeF(base.pointSizeF() * BADGE_FONT_SCALE)
    font.setWeight(QFont.Weight.DemiBold)
    return font


def badges_width(badges: list[Badge], base: QFont) -> int:
    metrics = QFontMetrics(badge_font(base))
    widths = [metrics.horizontalAdvance(b.text) + 2 * BADGE_PAD_H for b in badges]
    return sum(widths) + BADGE_GAP * max(len(widths) - 1, 0)


def paint_badges(
    painter: QPainter,
    *,
    left: int,
    center_y: int,
    badges: list[Badge],
    palette: QPalette,
    on_highlight: bool = False,
) -> int:
    """Draw the pills left to right, vertically centred on ``center_y``; returns the right edge.

    ``on_highlight``: the row is selected, so the pills get an opaque base-coloured fill to
    stay legible on the accent colour.
    """
    painter.save()
    font = badge_font(painter.font())
    painter.setFont(font)
    metrics = QFontMetrics(font)
    height = metrics.height() + 2 * BADGE_PAD_V
    dark = is_dark(palette)
    x = left
    for badge in badges:
        width = metrics.horizontalAdvance(badge.text) + 2 * BADGE_PAD_H
        rect = QRectF(x, center_y - height / 2, width, height)
        hue = QColor(badge.hue)
        fill = QColor(hue)
        fill.setAlpha(BADGE_BG_ALPHA_DARK if dark else BADGE_BG_ALPHA_LIGHT)
        if on_highlight:
            fill = palette.color(QPalette.ColorRole.Base)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(fill)
        painter.drawRoundedRect(rect, height / 2, height / 2)
        painter.setPen(hue.lighter(BADGE_TEXT_LIGHTER) if dark else hue.darker(BADGE_TEXT_DARKER))
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, badge.text)
        x += width + BADGE_GAP
    painter.restore()
    return x - BADGE_GAP if badges else left


class ModelItemDelegate(QStyledItemDelegate):
    """Two lines per model: bold short name + badges + context; muted full id + price."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.current_id = ""

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        title = bold(option.font)
        first = max(QFontMetrics(title).height(), QFontMetrics(badge_font(title)).height() + 2)
        second = QFontMetrics(_detail_font(option.font)).height()
        width = QFontMetrics(title).horizontalAdvance("m" * 40)
        return QSize(width, 2 * ROW_PADDING_V + first + LINE_GAP + second)

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        model = index.data(MODEL_ROLE)
        if not isinstance(model, ModelInfo):
            super().paint(painter, option, index)
            return
        opt = draw_bare_row(self, painter, option, index, panel_only=False)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        _RowPainter(painter, opt, model=model, current=model.name == self.current_id).paint()
        painter.restore()


def _detail_font(base: QFont) -> QFont:
    font = QFont(base)
    font.setPointSizeF(base.pointSizeF() * DETAIL_FONT_SCALE)
    return font


class _RowPainter:
    """Lays out and paints one row (kept apart so each step stays short)."""

    def __init__(
        self, painter: QPainter, opt: QStyleOptionViewItem, *, model: ModelInfo, current: bool
    ) -> None:
        self.p = painter
        self.model = model
        self.current = current
        self.palette: QPalette = opt.palette
        self.base_font: QFont = opt.font
        rect: QRect = opt.rect
        self.rect = rect.adjusted(ROW_PADDING_H, ROW_PADDING_V, -ROW_PADDING_H, -ROW_PADDING_V)
        # Here, not at import: the picker's button is on the first frame, its list is not,
        # and QStyle's first use makes its eleven enum classes (~8 ms, issue #12).
        from PySide6.QtWidgets import QStyle

        self.selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if self.selected else QPalette.ColorRole.Text
        self.text = self.palette.color(role)
        self.muted = QColor(self.text)
        self.muted.setAlpha(MUTED_ALPHA)

    def paint(self) -> None:
        title = bold(self.base_font)
        top_h = max(QFontMetrics(title).height(), QFontMetrics(badge_font(title)).height() + 2)
        top = QRect(self.rect.left(), self.rect.top(), self.rect.width(), top_h)
        detail = _detail_font(self.base_font)
        bottom_h = QFontMetrics(detail).height()
        bottom = QRect(top.left(), top.bottom() + 1 + LINE_GAP, top.width(), bottom_h)
        if self.current:
            self._draw(title, self.text, rect=top, text="✓", align=_LEFT)
        top.setLeft(top.left() + CHECK_GUTTER)
        bottom.setLeft(bottom.left() + CHECK_GUTTER)
        self._paint_top(top, title)
        self._paint_bottom(bottom, detail)

    def _draw(
        self, font: QFont, color: QColor, *, rect: QRect, text: str, align: Qt.AlignmentFlag
    ) -> int:
        """Draw one elided line in ``rect``; returns the width used."""
        metrics = QFontMetrics(font)
        shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, rect.width())
        self.p.setFont(font)
        self.p.setPen(color)
        self.p.drawText(rect, int(align | Qt.AlignmentFlag.AlignVCenter), shown)
        return metrics.horizontalAdvance(shown)

    def _paint_top(self, rect: QRect, title: QFont) -> None:
        ctx = format_context(self.model.context_window)
        detail = _detail_font(self.base_font)
        ctx_w = QFontMetrics(detail).horizontalAdvance(ctx) + COLUMN_GAP if ctx else 0
        if ctx:
            self._draw(detail, self.muted, rect=rect, text=ctx, align=_RIGHT)
        badges = badges_for(self.model)
        room = rect.width() - ctx_w
        badge_w = badges_width(badges, title) + COLUMN_GAP if badges else 0
        name_rect = QRect(rect.left(), rect.top(), max(room - badge_w, room // 2), rect.height())
        used = self._draw(title, self.text, rect=name_rect, text=self.model.short_name, align=_LEFT)
        if badges and used + COLUMN_GAP + badge_w - COLUMN_GAP <= room:
            self.p.setFont(title)
            paint_badges(
                self.p,
                left=rect.left() + used + COLUMN_GAP,
                center_y=rect.center().y() + 1,
                badges=badges,
                palette=self.palette,
                on_highlight=self.selected,
            )

    def _paint_bottom(self, rect: QRect, detail: QFont) -> None:
        price = format_price(self.model)
        price_w = QFontMetrics(detail).horizontalAdvance(price) + COLUMN_GAP if price else 0
        if price:
            self._draw(detail, self.muted, rect=rect, text=price, align=_RIGHT)
        id_rect = QRect(rect.left(), rect.top(), rect.width() - price_w, rect.height())
        self._draw(detail, self.muted, rect=id_rect, text=self.model.name, align=_LEFT)


_LEFT = Qt.AlignmentFlag.AlignLeft
_RIGHT = Qt.AlignmentFlag.AlignRight
