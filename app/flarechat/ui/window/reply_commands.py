"""Keyboard commands on the open conversation's latest reply: regenerate, copy, switch branch.

The window's menu actions call these; each asks the controller for the shown path (plain
``MessageData``) and acts through the controller's own methods, so nothing new is needed there.
"""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication

from flarechat.ui.control.chat import ChatController
from flarechat.ui.transcript.message_view import MessageData

__all__ = ["copy_last_reply", "last_reply", "regenerate_last", "switch_last_branch"]

ASSISTANT = "assistant"


def last_reply(chat: ChatController) -> MessageData | None:
    """The latest assistant message on the shown path of the open conversation."""
    if chat.current_id is None:
        return None
    shown = chat.path_view(chat.current_id)
    return next((m for m in reversed(shown) if m.role == ASSISTANT), None)


def regenerate_last(chat: ChatController) -> bool:
    """Ask for a new version of the latest reply (not while one is being written)."""
    reply = last_reply(chat)
    if reply is None or chat.is_busy():
        return False
    return chat.regenerate(reply.id) is not None


def copy_last_reply(chat: ChatController) -> bool:
    """Put the latest reply's Markdown on the clipboard."""
    reply = last_reply(chat)
    if reply is None or not reply.content:
        return False
    clipboard = QGuiApplication.clipboard()
    clipboard.setText(reply.content)
    return True


def switch_last_branch(chat: ChatController, step: int) -> bool:
    """Show the previous (-1) or next (+1) version of the latest message that has several."""
    if chat.current_id is None:
        return False
    shown = chat.path_view(chat.current_id)
    target = next((m for m in reversed(shown) if m.sibling_count > 1), None)
    if target is None:
        return False
    chat.switch_branch(target.id, step)
    return True
