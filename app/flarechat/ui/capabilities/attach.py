"""The composer's images: the attach button, pasted and dropped images, the removable
thumbnails and what to say when an image cannot be attached (or the model cannot see)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QMimeData, QSize, Qt, Signal
from PySide6.QtWidgets import QLabel, QToolButton, QVBoxLayout, QWidget

from flarechat.core.capabilities import IMAGE_TYPES, MAX_IMAGES
from flarechat.core.conversation import Attachment
from flarechat.ui.capabilities import images
from flarechat.ui.capabilities.thumbnails import RemovableThumbnails
from flarechat.ui.shared.icons import icon
from flarechat.ui.shared.theme import current_palette, named

if TYPE_CHECKING:  # the file dialog's class and enums are made when first opened (start-up)
    from PySide6.QtWidgets import QFileDialog

__all__ = ["ATTACH_TIP", "AttachmentBox", "no_vision_text"]

ATTACH_TIP = f"Attach images ({IMAGE_TYPES}; up to {MAX_IMAGES}). You can also paste or drop them."
UNKNOWN_VISION_TIP = (
    "Attach images. The catalogue is not loaded, so whether this model can see images is not "
    "known; Workers AI will say if it cannot."
)
FILE_FILTER = "Images (*.png *.jpg *.jpeg *.webp *.gif);;All files (*)"
ATTACH_ICON_PX = 18


def no_vision_text(model: str) -> str:
    """Why images cannot be attached for ``model``."""
    short = model.rsplit("/", 1)[-1] or "This model"
    return (
        f"{short} cannot see images. Choose a model marked Vision in the model picker to "
        "attach them."
    )


class AttachmentBox(QWidget):
    """The images attached to the message being written, and the attach button.

    The box (thumbnails and a problem line) sits above the text; ``button`` goes beside it.
    ``take(mime)`` is what the text box calls for a paste or a drop carrying images.

    Signals:
        changed(): images were added or removed (the Send button may change).
        refused(str): the attach button was clicked on a model that cannot see images (the
            model): the pane says why and offers Switch model….
    """

    changed = Signal()
    refused = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attachmentBox")
        self._images: list[Attachment] = []
        self._vision: bool | None = None
        self._model = ""
        self.file_dialog: QFileDialog | None = None
        self.button = named(QToolButton(parent), "attachButton")
        self.button.setIcon(icon("attach", role="muted"))
        self.button.setIconSize(QSize(ATTACH_ICON_PX, ATTACH_ICON_PX))
        self.button.setAutoRaise(True)
        self.button.setAccessibleName("Attach images")
        self.button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.button.clicked.connect(self._on_button_clicked)
        self.thumbnails = RemovableThumbnails(self.remove, self)
        self.problem = named(QLabel(self), "attachProblem")
        self.problem.setWordWrap(True)
        self.problem.setAccessibleName("Image problem")
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(4)
        column.addWidget(self.thumbnails)
        column.addWidget(self.problem)
        self.set_vision(None, model="")
        self.show_problem(None)  # empty: the box takes no room until an image or a problem
        self._refresh()

    # -- state -----------------------------------------------------------------------------

    def images(self) -> tuple[Attachment, ...]:
        return tuple(self._images)

    def count(self) -> int:
        return len(self._images)

    @property
    def vision(self) -> bool | None:
        """Whether the model can see images (None: the catalogue does not say)."""
        return self._vision

    def set_vision(self, vision: bool | None, *, model: str) -> None:
        """The conversation's model changed: attaching is offered only when it can see."""
        self._vision, self._model = vision, model
        # Enabled even without vision: a disabled button shows no tooltip and takes no click,
        # so it could not say why (issue 23, item 5); its icon is muted, as always.
        if vision is False:
            self.button.setToolTip(no_vision_text(model))
        else:
            self.button.setToolTip(ATTACH_TIP if vision else UNKNOWN_VISION_TIP)

    # -- adding and removing ---------------------------------------------------------------

    def add(self, attachments: Sequence[Attachment], problems: Sequence[str] = ()) -> None:
        fits, full = images.room_for(self._images, len(attachments))
        self._images.extend(attachments[:fits])
        shown = [*problems, *([full] if full else [])]
        self.show_problem(" ".join(shown) if shown else None)
        self._refresh()
        self.changed.emit()

    def add_files(self, paths: Sequence[str]) -> None:
        taken: list[Attachment] = []
        problems: list[str] = []
        for path in paths:
            try:
                taken.append(images.load_file(path))
            except images.ImageProblem as problem:
                problems.append(str(problem))
        self.add(taken, problems)

    def remove(self, index: int) -> None:
        if 0 <= index < len(self._images):
            del self._images[index]
            self.show_problem(None)
            self._refresh()
            self.changed.emit()

    def clear(self) -> None:
        """The message was sent: start empty."""
        self._images.clear()
        self.show_problem(None)
        self._refresh()
        self.changed.emit()

    def show_problem(self, text: str | None) -> None:
        self.problem.setText(text or "")
        self.problem.setStyleSheet(f"color: {current_palette().danger}")
        self.problem.setVisible(bool(text))
        self.setVisible(bool(self._images) or bool(text))

    # -- the button, paste and drop --------------------------------------------------------

    def _on_button_clicked(self) -> None:
        if self._vision is False:
            self.refused.emit(self._model)
        else:
            self.choose_files()

    def choose_files(self) -> QFileDialog:
        """Pick image files (a non-blocking dialog: ``open()``, then ``filesSelected``)."""
        from PySide6.QtWidgets import QFileDialog

        dialog = QFileDialog(self.window(), "Attach images", "", FILE_FILTER)
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.filesSelected.connect(self.add_files)
        self.file_dialog = dialog
        dialog.open()
        return dialog

    def can_take(self, mime: QMimeData) -> bool:
        return images.has_images(mime)

    def take(self, mime: QMimeData) -> bool:
        """A paste or drop: its images are attached (True); text is left to the text box."""
        if not images.has_images(mime):
            return False
        if self._vision is False:
            self.show_problem(no_vision_text(self._model))
            return True
        self.add(*images.from_mime(mime))
        return True

    def _refresh(self) -> None:
        self.thumbnails.set_images(self._images)
        self.thumbnails.setVisible(bool(self._images))
        self.setVisible(bool(self._images) or not self.problem.isHidden())
