"""A message's images: thumbnails that open a larger view."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot
from ui_capability_helpers import attachment

from flarechat.ui.capabilities.thumbnails import MESSAGE_THUMB_PX, MessageImages, describe


def test_clicking_a_thumbnail_shows_the_image_larger(qtbot: QtBot) -> None:
    images = MessageImages()
    qtbot.addWidget(images)
    images.set_images([attachment("a.png", 400, 300), attachment("b.png", 50, 40)])
    buttons = images.buttons
    assert [b.iconSize().width() for b in buttons] == [MESSAGE_THUMB_PX, 50]
    assert buttons[0].toolTip().startswith("a.png · 400\N{MULTIPLICATION SIGN}300 · PNG")
    with qtbot.waitSignal(images.image_opened) as opened:
        qtbot.mouseClick(buttons[0], Qt.MouseButton.LeftButton)
    assert opened.args == [0]
    viewer = images.viewer
    assert viewer is not None
    assert viewer.isVisible()
    assert viewer.image.pixmap().size().width() == 400
    assert viewer.caption.text() == describe(attachment("a.png", 400, 300))
    viewer.close()


def test_the_same_images_are_not_rebuilt(qtbot: QtBot) -> None:
    images = MessageImages()
    qtbot.addWidget(images)
    shown = (attachment(),)
    images.set_images(shown)
    first = images.buttons[0]
    images.set_images(shown)
    assert images.buttons[0] is first
