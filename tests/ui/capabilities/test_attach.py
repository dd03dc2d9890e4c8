"""The composer's images: attach button by model vision, paste and drop, removable
thumbnails, and sending with images but no text."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot
from ui_capability_helpers import attachment, png

from flarechat.core.capabilities import MAX_IMAGES
from flarechat.ui.capabilities.attach import ATTACH_TIP, AttachmentBox
from flarechat.ui.chat.composer import ComposerWidget


def image_mime() -> QMimeData:
    from PySide6.QtGui import QImage

    mime = QMimeData()
    mime.setImageData(QImage.fromData(png()))
    return mime


def test_the_attach_button_explains_why_a_model_without_vision_cannot_take_images(
    qtbot: QtBot,
) -> None:
    box = AttachmentBox()
    qtbot.addWidget(box)
    box.set_vision(False, model="@cf/meta/llama-3.1-8b-instruct-fast")
    assert box.button.isEnabled()  # a click says why (and offers Switch model…)
    assert box.button.toolTip().startswith("llama-3.1-8b-instruct-fast cannot see images.")
    assert "Vision" in box.button.toolTip()
    assert box.take(image_mime())  # the paste is taken, not inserted as text…
    assert box.count() == 0  # …but nothing is attached,
    assert "cannot see images" in box.problem.text()  # and the box says why
    box.set_vision(True, model="@cf/meta/llama-4-scout-17b-16e-instruct")
    assert box.button.isEnabled()
    assert box.button.toolTip() == ATTACH_TIP


def test_thumbnails_are_removable_and_the_count_is_capped(qtbot: QtBot) -> None:
    box = AttachmentBox()
    qtbot.addWidget(box)
    box.set_vision(True, model="m")
    box.add([attachment(f"p{n}.png") for n in range(MAX_IMAGES + 1)])
    assert box.count() == MAX_IMAGES
    assert f"at most {MAX_IMAGES} images" in box.problem.text()
    removes = box.thumbnails.remove_buttons
    assert len(removes) == MAX_IMAGES
    assert removes[1].accessibleName() == "Remove p1.png"
    qtbot.mouseClick(removes[1], Qt.MouseButton.LeftButton)
    assert [a.name for a in box.images()] == ["p0.png", "p2.png", "p3.png", "p4.png"]
    assert box.problem.isHidden()


def test_paste_attaches_and_send_works_with_images_and_no_text(qtbot: QtBot) -> None:
    composer = ComposerWidget()
    qtbot.addWidget(composer)
    composer.show()
    composer.attachments.set_vision(True, model="vision")
    assert not composer.send_button.isEnabled()
    composer.editor.insertFromMimeData(image_mime())  # what Ctrl+V and the menu's Paste do
    assert composer.attachments.count() == 1
    assert composer.text() == ""
    assert composer.attachments.isVisibleTo(composer)
    assert composer.send_button.isEnabled()
    with qtbot.waitSignal(composer.send_requested) as sent:
        qtbot.keyClick(composer.editor, Qt.Key.Key_Return)
    assert sent.args == [""]


def test_an_empty_box_takes_no_room(qtbot: QtBot) -> None:
    composer = ComposerWidget()
    qtbot.addWidget(composer)
    composer.show()
    assert not composer.attachments.isVisibleTo(composer)
    assert composer.attachments.problem.isHidden()


def test_pasted_text_still_goes_into_the_box(qtbot: QtBot) -> None:
    composer = ComposerWidget()
    qtbot.addWidget(composer)
    mime = QMimeData()
    mime.setText("plain words")
    composer.editor.insertFromMimeData(mime)
    assert composer.text() == "plain words"
    assert composer.attachments.count() == 0


def test_dropping_an_image_file_on_the_text_box_attaches_it(qtbot: QtBot, tmp_path: Path) -> None:
    composer = ComposerWidget()
    qtbot.addWidget(composer)
    composer.resize(600, 120)
    composer.show()
    qtbot.waitExposed(composer)
    file = tmp_path / "chart.png"
    file.write_bytes(png(120, 80))
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(file))])
    viewport = composer.editor.viewport()
    where = viewport.rect().center()
    enter = QDragEnterEvent(
        where,
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(viewport, enter)
    assert enter.isAccepted()
    drop = QDropEvent(
        QPointF(QPoint(where)), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )  # fmt: skip
    QApplication.sendEvent(viewport, drop)
    assert [a.name for a in composer.attachments.images()] == ["chart.png"]
    assert composer.text() == ""  # the file's URL was not typed into the box


def test_the_attach_button_opens_a_file_dialog_without_blocking(
    qtbot: QtBot, tmp_path: Path
) -> None:
    box = AttachmentBox()
    qtbot.addWidget(box)
    box.set_vision(None, model="unknown")
    assert box.button.isEnabled()  # not known: the server decides
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)
    dialog = box.file_dialog
    assert dialog is not None
    assert dialog.isVisible()
    file = tmp_path / "a.png"
    file.write_bytes(png())
    dialog.filesSelected.emit([str(file)])
    assert box.count() == 1
    dialog.close()
