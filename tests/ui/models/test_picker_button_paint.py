"""The model picker's button paints its bevel and arrow as Fusion's own QStyle calls would,
without touching QStyle from Python (whose first use costs start-up, issue #12)."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QImage, QPaintEvent
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionButton, QStylePainter
from pytestqt.qtbot import QtBot

from flarechat.ui.models.listing import BETA, FUNCTIONS, REASONING, Badge
from flarechat.ui.models.picker import _PickerButton
from flarechat.ui.shared.theme import Scheme, apply_theme


class _StyleArrowButton(_PickerButton):
    """The button with its bevel and arrow drawn through QStyle, as Fusion draws them."""

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QStylePainter(self)
        option = QStyleOptionButton()
        self.initStyleOption(option)
        option.text = ""
        painter.drawControl(QStyle.ControlElement.CE_PushButton, option)
        painter.setRenderHint(QStylePainter.RenderHint.Antialiasing)
        arrow = QStyleOptionButton()
        arrow.initFrom(self)
        arrow.rect = self.arrow_rect()
        painter.drawPrimitive(QStyle.PrimitiveElement.PE_IndicatorArrowDown, arrow)
        self.paint_label(painter)


def _grab(qtbot: QtBot, button: _PickerButton, *, badges: list[Badge], state: str) -> QImage:
    qtbot.addWidget(button)
    button.set_model("llama-3.3-70b-instruct-fp8-fast", badges)
    button.resize(420, button.sizeHint().height())
    button.setDown(state == "down")
    button.setEnabled(state != "disabled")
    button.show()
    qtbot.waitExposed(button)
    return button.grab().toImage()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("state", ["up", "down", "disabled"])
def test_the_button_paints_as_fusion_does(qtbot: QtBot, scheme: Scheme, state: str) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    apply_theme(app, scheme)
    try:
        badges = [REASONING, FUNCTIONS] if state == "up" else [BETA]
        ours = _grab(qtbot, _PickerButton(), badges=badges, state=state)
        fusions = _grab(qtbot, _StyleArrowButton(), badges=badges, state=state)
        assert ours == fusions
    finally:
        apply_theme(app, "light")
