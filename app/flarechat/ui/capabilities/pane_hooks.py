"""What the chat pane does for model capabilities, kept out of its layout code: images go with
the message (or are refused before sending, with Switch model…), tool results go back, the
attach button follows the model's vision, and the licence banner's actions."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QDesktopServices

from flarechat.ui.capabilities.attach import AttachmentBox, no_vision_text
from flarechat.ui.capabilities.terms import (
    ACTION_OPEN_LICENCE,
    licence_url,
    open_licence,
    terms_notice,
)
from flarechat.ui.control.chat import ChatController
from flarechat.ui.control.presenting import ACTION_AGREE, ACTION_SWITCH_MODEL, WARNING, NoticeSpec

if TYPE_CHECKING:  # QUrl's class and its enums are made when a licence is first opened
    from PySide6.QtCore import QUrl

__all__ = ["NO_VISION_TITLE", "CapabilityHooks"]

NO_VISION_TITLE = "This model can't see images"
KEPT = "Your message and its images are kept in the box."
TOOL_RESULTS_TITLE = "The tool results were not sent"
TERMS_KIND = "terms"


class CapabilityHooks(QObject):
    """Binds the composer's images, the tool call cards and the licence banner to the chat
    controller; ``show_notice`` puts a banner up (the pane's notice banner)."""

    def __init__(
        self,
        attachments: AttachmentBox,
        *,
        show_notice: Callable[[NoticeSpec], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._attachments = attachments
        self._show_notice = show_notice
        attachments.refused.connect(self.on_attach_refused)
        self._chat: ChatController | None = None
        self._licence: str | None = None
        #: opens the licence link (tests replace it: nothing opens a browser by itself)
        self.opener: Callable[[QUrl], object] = QDesktopServices.openUrl

    def bind(self, chat: ChatController, *, tool_results: Any) -> None:
        """``tool_results``: the transcript's ``tool_results_submitted`` signal."""
        self._chat = chat
        chat.model_changed.connect(self.update_vision)
        chat.catalogue_changed.connect(self._on_catalogue_changed)
        chat.send_refused.connect(self.on_send_refused)
        tool_results.connect(self.on_tool_results)
        self.update_vision()

    def update_vision(self, model: str = "") -> None:
        """The attach button follows the catalogue entry of ``model`` (model_changed gives it
        before the session has switched; default: the current model)."""
        if self._chat is None:
            return
        model = model or self._chat.current_model()
        info = self._chat.capabilities.model_info(model)
        self._attachments.set_vision(info.vision if info is not None else None, model=model)

    def _on_catalogue_changed(self) -> None:
        self.update_vision()

    def send(self, text: str) -> bool:
        """Send ``text`` with the attached images; False (all kept) when they were refused."""
        chat = self._chat
        assert chat is not None, "bind() first"
        images = self._attachments.images()
        if (refusal := chat.capabilities.send_refusal(images)) is not None:
            self.on_send_refused(chat.current_model(), refusal)
            return False
        chat.send(text, images=images)
        if images:
            self._attachments.clear()
        return True

    def on_send_refused(self, _model: str, message: str) -> None:
        title = NO_VISION_TITLE if self._attachments.count() else TOOL_RESULTS_TITLE
        actions = [ACTION_SWITCH_MODEL] if self._attachments.count() else []
        text = f"{message} {KEPT}" if self._attachments.count() else message
        self._show_notice(NoticeSpec(WARNING, title, text, actions))

    def on_attach_refused(self, model: str) -> None:
        """The paperclip on a model without vision: why, and Switch model…."""
        text = f"{no_vision_text(model)} Your message is kept in the box."
        self._show_notice(NoticeSpec(WARNING, NO_VISION_TITLE, text, [ACTION_SWITCH_MODEL]))

    def on_tool_results(self, reply_id: str, results: dict[str, str]) -> None:
        if self._chat is not None:
            self._chat.capabilities.send_tool_results(reply_id, results)

    def failure_notice(self, kind: str, message: str, extra: dict[str, Any]) -> NoticeSpec | None:
        """The licence banner for a 5016 failure (None for other kinds)."""
        if kind != TERMS_KIND:
            return None
        self._licence = licence_url(extra)
        return terms_notice(message, extra=extra)

    def on_action(self, action: str, target: str | None) -> bool:
        """A banner button this module owns (True when it was one)."""
        if action == ACTION_AGREE[0] and self._chat is not None:
            self._chat.capabilities.agree_terms(target)
            return True
        if action == ACTION_OPEN_LICENCE[0]:
            open_licence(self._licence, opener=self.opener)
            return True
        return False
