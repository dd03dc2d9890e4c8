"""View as code: a reply's exact request as curl, Python (httpx), the openai SDK and a Workers
binding call, one tab each, with Copy. The token is never shown: the code reads it from the
environment."""

from __future__ import annotations

from PySide6.QtGui import QFont, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from flarechat.core.lab.request_view import RequestCode
from flarechat.core.request_code import ENV_API_TOKEN, CodeKind
from flarechat.ui.shared.theme import monospace_family, mute

__all__ = ["TAB_LABELS", "RequestCodeDialog", "open_request_code"]

TAB_LABELS = {
    CodeKind.CURL: "curl",
    CodeKind.PYTHON: "Python (httpx)",
    CodeKind.OPENAI: "openai SDK",
    CodeKind.BINDING: "Workers binding",
}
TOKEN_NOTE = (
    f"The token is read from ${ENV_API_TOKEN} (a Worker's binding needs none); it is never "
    "shown here."
)
NOTE = f"The exact request of this reply. {TOKEN_NOTE}"
DIALOG_SIZE = (760, 520)


class RequestCodeDialog(QDialog):
    """Tabs of code for one reply; Copy puts the shown tab's code on the clipboard."""

    def __init__(self, code: RequestCode, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.code = code
        self.setWindowTitle(f"Request as code \N{EM DASH} {code.model}")
        self.setAccessibleName("Request as code")
        self.resize(*DIALOG_SIZE)
        self.tabs = QTabWidget(self)
        font = QFont(monospace_family())
        for kind, label in TAB_LABELS.items():
            self.tabs.addTab(self._page(kind, font), label)
        # A continued reply was made by several requests: the note says which one is shown.
        note = mute(QLabel(f"{code.note} {TOKEN_NOTE}" if code.note else NOTE, self))
        note.setObjectName("requestCodeNote")
        note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.copy_button = QPushButton("Copy", self)
        self.copy_button.setAccessibleName("Copy code")
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.copy_button.clicked.connect(self.copy_current)
        self.tabs.currentChanged.connect(lambda *_: self._update_copy())
        column = QVBoxLayout(self)
        column.addWidget(note)
        column.addWidget(self.tabs, 1)
        column.addWidget(buttons)
        self._update_copy()

    def _page(self, kind: CodeKind, font: QFont) -> QWidget:
        text = self.code.forms.get(kind)
        if text is None:
            label = QLabel(self.code.problems.get(kind, "Not available."), self)
            label.setWordWrap(True)
            return label
        view = QPlainTextEdit(text, self)
        view.setReadOnly(True)
        view.setFont(font)
        view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        view.setAccessibleName(f"{TAB_LABELS[kind]} code")
        return view

    def current_kind(self) -> CodeKind:
        return list(TAB_LABELS)[self.tabs.currentIndex()]

    def _update_copy(self) -> None:
        self.copy_button.setEnabled(self.current_kind() in self.code.forms)

    def copy_current(self) -> None:
        text = self.code.forms.get(self.current_kind())
        if text is not None:
            QGuiApplication.clipboard().setText(text)
            self.copy_button.setText("Copied")


def open_request_code(parent: QWidget, code: RequestCode) -> RequestCodeDialog:
    """Show the dialog window-modal with ``open()`` (never ``exec()``: see style.md)."""
    dialog = RequestCodeDialog(code, parent)
    dialog.open()
    return dialog
