"""The window's dialogs, each opened with ``open()`` (never ``exec()`` under the asyncio loop):
settings, conversation options, export/import file choosers, About."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from flarechat import __version__
from flarechat.core.export import file_stem
from flarechat.ui.control.chat import ChatController
from flarechat.ui.control.preferences import Preferences
from flarechat.ui.control.workspace import FORMATS, WorkspaceController

if TYPE_CHECKING:  # the dialogs are imported when first opened (~190 ms, not at start-up)
    from flarechat.ui.settings.conversation_dialog import ConversationDialog
    from flarechat.ui.settings.dialog import SettingsDialog

__all__ = [
    "ask_export",
    "ask_export_all",
    "ask_import",
    "open_conversation_options",
    "open_settings",
    "show_about",
]

EXPORT_FILTERS = {"markdown": "Markdown (*.md)", "json": "JSON (*.json)"}
ABOUT_ICON_PX = 64
ABOUT_TEXT = "A desktop chat client for Cloudflare Workers AI and AI Gateway."
ABOUT_KEYCHAIN = "Your API token stays in the system keychain."
ABOUT_NO_KEYCHAIN = (
    "No system keychain was found, so your API token is kept in memory for this session "
    "only and never written to disk."
)


def open_settings(parent: QWidget, workspace: WorkspaceController) -> SettingsDialog:
    from flarechat.ui.settings.dialog import SettingsDialog

    prefs = workspace.prefs
    dialog = SettingsDialog(
        prefs.settings,
        secrets=prefs.secrets,
        overridden=prefs.resolved().overridden,
        verify=workspace.verify,
        parent=parent,
        session_secrets=prefs.session,
        demo=prefs.demo is not None,
    )
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.tokens_changed.connect(workspace.set_tokens)
    dialog.settings_accepted.connect(workspace.apply_settings)
    dialog.open()
    return dialog


def open_conversation_options(
    parent: QWidget, chat: ChatController, *, prefs: Preferences
) -> ConversationDialog | None:
    from flarechat.ui.settings.conversation_dialog import ConversationDialog

    tree = chat.current_tree()
    if tree is None:
        return None
    dialog = ConversationDialog(
        system_prompt=tree.conversation.system_prompt,
        params=tree.conversation.params,
        default_max_tokens=prefs.settings.default_max_tokens,
        parent=parent,
        model=chat.current_model(),
        model_info=chat.capabilities.model_info(),
        model_schema=chat.capabilities.model_schema(),
        native_endpoint=prefs.settings.endpoint != "openai",
        load_finetunes=chat.capabilities.list_finetunes,
    )
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.options_accepted.connect(chat.set_options)
    dialog.open()
    return dialog


def _file_dialog(
    parent: QWidget, *, caption: str, name: str, save: bool, filter_: str
) -> QFileDialog:
    dialog = QFileDialog(parent, caption, str(Path.home() / name), filter_)
    dialog.setAcceptMode(
        QFileDialog.AcceptMode.AcceptSave if save else QFileDialog.AcceptMode.AcceptOpen
    )
    dialog.setFileMode(QFileDialog.FileMode.AnyFile if save else QFileDialog.FileMode.ExistingFile)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    return dialog


def ask_export(
    parent: QWidget, workspace: WorkspaceController, *, conversation_id: str, fmt: str
) -> QFileDialog:
    name = file_stem(workspace.title_of(conversation_id) or "conversation") + FORMATS[fmt]
    dialog = _file_dialog(
        parent, caption="Export conversation", name=name, save=True, filter_=EXPORT_FILTERS[fmt]
    )
    dialog.setDefaultSuffix(FORMATS[fmt].lstrip("."))
    dialog.fileSelected.connect(
        lambda path: workspace.export_conversation(conversation_id, path=Path(path), fmt=fmt)
    )
    dialog.open()
    return dialog


def ask_export_all(parent: QWidget, workspace: WorkspaceController) -> QFileDialog:
    dialog = _file_dialog(
        parent,
        caption="Export all conversations",
        name="flarechat-export.json",
        save=True,
        filter_=EXPORT_FILTERS["json"],
    )
    dialog.setDefaultSuffix("json")
    dialog.fileSelected.connect(lambda path: workspace.export_all(Path(path)))
    dialog.open()
    return dialog


def ask_import(parent: QWidget, workspace: WorkspaceController) -> QFileDialog:
    dialog = _file_dialog(
        parent, caption="Import conversations", name="", save=False, filter_=EXPORT_FILTERS["json"]
    )
    dialog.fileSelected.connect(lambda path: workspace.import_all(Path(path)))
    dialog.open()
    return dialog


def show_about(parent: QWidget, *, keychain: bool = True) -> QMessageBox:
    """``keychain``: whether a system keychain holds the token (the text must not claim it)."""
    box = QMessageBox(parent)
    box.setWindowTitle("About Flarechat")
    box.setIconPixmap(parent.windowIcon().pixmap(ABOUT_ICON_PX, ABOUT_ICON_PX))
    box.setText(f"<b>Flarechat {__version__}</b>")
    box.setInformativeText(f"{ABOUT_TEXT} {ABOUT_KEYCHAIN if keychain else ABOUT_NO_KEYCHAIN}")
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box
