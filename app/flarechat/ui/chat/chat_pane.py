"""The centre of the window: demo strip, find bar, transcript, banners and composer, bound to
the ChatController's signals. Layout and routing only: it shows the controller's current
conversation and remembers nothing but which message the banners are about.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QStackedWidget, QVBoxLayout, QWidget

from flarechat.api.errors import ErrorKind
from flarechat.ui.capabilities.pane_hooks import CapabilityHooks
from flarechat.ui.chat.banners import NoticeBanner, RetryBanner
from flarechat.ui.chat.composer import ComposerWidget
from flarechat.ui.chat.option_chips import OptionChips
from flarechat.ui.chat.panels import DemoStrip, EmptyChatPanel, FindBar
from flarechat.ui.control import presenting
from flarechat.ui.control.chat import ChatController
from flarechat.ui.control.view_data import MessageData, PathView
from flarechat.ui.transcript.transcript import TranscriptView

__all__ = ["ChatPane"]

EDITING_TITLE = "Editing an earlier message"
EDITING_TEXT = "Sending makes a new branch; the original stays available with \u2039 \u203a."
CANCEL_EDIT = ("cancel_edit", "Cancel edit")
STORE_PROBLEM_TITLE = "Can't save to the chat database"
BANNER_MARGIN_PX = 12
#: A reply waiting this long in the model's queue is said to be queued (a fast answer never is).
QUEUE_SHOWN_AFTER_MS = 1000
#: The composer and banners line up with the transcript's text column (its MAX_COLUMN_PX).
COLUMN_MAX_PX = 860
SECTION_GAP_PX = 8


def short_model(model: str) -> str:
    return model.rsplit("/", 1)[-1]


class ChatPane(QWidget):
    """Transcript + composer + banners of the open conversation.

    Signals:
        settings_requested(): a banner's "Open settings" (or the demo strip) was clicked.
        switch_model_requested(): "Switch model…" was clicked.
        demo_requested(): "Try demo mode" was clicked.
        example_chosen(str): an example prompt on a new chat's empty page was clicked.
    """

    settings_requested = Signal()
    switch_model_requested = Signal()
    demo_requested = Signal()
    example_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatPane")
        self._phase: tuple[str, str] | None = None  # the shown reply's latest phase
        self.demo_strip = DemoStrip(self)
        self.find_bar = FindBar(self)
        self.transcript = TranscriptView(self)
        self.empty_chat = EmptyChatPanel(self)
        self.body = QStackedWidget(self)
        self.body.addWidget(self.transcript)
        self.body.addWidget(self.empty_chat)
        self.retry_banner = RetryBanner(self)
        self.notice_banner = NoticeBanner(self)
        self.edit_strip = NoticeBanner(self)
        self.composer = ComposerWidget(self)
        self.option_chips = OptionChips(self)  # what the conversation asks beyond plain chat
        self.retry_banner.setAccessibleName("Capacity notice")
        self.edit_strip.setAccessibleName("Editing notice")
        self._banner_message: str | None = None  # the reply the banners are about
        self._store_problem: str | None = None  # the database's failure, until dismissed
        self._chat: ChatController | None = None
        self.capabilities = CapabilityHooks(
            self.composer.attachments, show_notice=self._show_notice, parent=self
        )
        column = QVBoxLayout(self)
        column.setSpacing(SECTION_GAP_PX)
        column.addWidget(self.demo_strip)
        column.addWidget(self.find_bar)
        column.addWidget(self.body, 1)
        column.addLayout(self._bottom_column())
        column.setContentsMargins(BANNER_MARGIN_PX, 0, BANNER_MARGIN_PX, BANNER_MARGIN_PX)
        self.demo_strip.settings_requested.connect(self.settings_requested)
        self.notice_banner.dismissed.connect(self._on_notice_dismissed)
        self.empty_chat.example_chosen.connect(self.example_chosen)
        self.retry_banner.wait_in_queue_requested.connect(self.composer.show_queued)

    def _bottom_column(self) -> QHBoxLayout:
        """Banners and composer in a column as wide as the transcript's text, centred."""
        inner = QWidget(self)
        inner.setObjectName("composerColumn")
        inner.setMaximumWidth(COLUMN_MAX_PX)
        stack = QVBoxLayout(inner)
        stack.setContentsMargins(0, 0, 0, 0)
        stack.setSpacing(SECTION_GAP_PX)
        widgets = (
            self.retry_banner, self.notice_banner, self.edit_strip, self.option_chips,
            self.composer,
        )  # fmt: skip
        for widget in widgets:
            stack.addWidget(widget)
        row = QHBoxLayout()
        row.addStretch(0)
        row.addWidget(inner, 1)
        row.addStretch(0)
        return row

    @property
    def chat(self) -> ChatController:
        assert self._chat is not None, "bind() first"
        return self._chat

    def bind(self, chat: ChatController) -> None:
        """Connect the widgets' intents to the controller and its signals to the widgets."""
        self._chat = chat
        self._bind_intents(chat)
        chat.conversation_opened.connect(self.on_conversation_opened)
        chat.message_added.connect(self.on_message_added)
        chat.message_updated.connect(self.on_message_updated)
        chat.path_changed.connect(self.on_path_changed)
        chat.turn_started.connect(self.on_turn_started)
        chat.turn_continued.connect(self.on_turn_continued)
        chat.siblings_changed.connect(self.on_siblings_changed)
        chat.turn_text_appended.connect(self.on_text_appended)
        chat.turn_reasoning_appended.connect(self.on_reasoning_appended)
        chat.turn_finished.connect(self.on_turn_finished)
        chat.turn_failed.connect(self.on_turn_failed)
        chat.retry_scheduled.connect(self.on_retry_scheduled)
        chat.retry_cleared.connect(self.on_retry_cleared)
        chat.turn_phase_changed.connect(self.on_turn_phase_changed)
        chat.busy_changed.connect(self.composer.set_busy)
        chat.model_changed.connect(self.composer.set_model)
        chat.options_changed.connect(self.show_options)
        chat.conversation_opened.connect(self.show_options)
        chat.composer_text_requested.connect(self.composer.set_text)
        chat.editing_changed.connect(self.on_editing_changed)
        chat.store_problem.connect(self.on_store_problem)
        # images, tool results and the licence banner ask the model capabilities, which come
        # with the chat engine (built after the window's first paint)
        results = self.transcript.tool_results_submitted
        chat.when_started(functools.partial(self.capabilities.bind, chat, tool_results=results))

    def _bind_intents(self, chat: ChatController) -> None:
        self.composer.send_requested.connect(self._on_send_requested)
        self.composer.stop_requested.connect(self.on_escape)
        self.composer.edit_last_requested.connect(chat.edit_last)
        self.transcript.regenerate_requested.connect(chat.regenerate)
        self.transcript.edit_requested.connect(chat.start_edit)
        self.transcript.continue_requested.connect(chat.continue_reply)
        self.transcript.branch_requested.connect(chat.switch_branch)
        self.retry_banner.retry_now_requested.connect(chat.retry_now)
        self.retry_banner.wait_in_queue_requested.connect(chat.wait_in_queue)
        self.retry_banner.switch_model_requested.connect(self.switch_model_requested)
        self.retry_banner.cancel_requested.connect(chat.cancel_retry)
        self.notice_banner.action_triggered.connect(self.on_notice_action)
        self.edit_strip.action_triggered.connect(lambda _action: chat.cancel_edit())
        self.option_chips.turn_off_requested.connect(self.turn_off_option)
        self.find_bar.matches_found.connect(self.transcript.set_find_matches)
        self.find_bar.match_selected.connect(self.show_message)
        self.find_bar.query_edited.connect(self.transcript.clear_matches)
        self.find_bar.closed.connect(self.transcript.clear_matches)

    #: Set by the window: what the composer's text becomes when sent (a template filled in),
    #: or None to keep it in the box (a template value is still missing).
    send_filter: Callable[[str], str | None] | None = None

    def _on_send_requested(self, text: str) -> None:
        """The composer's text goes; sent before the chat engine is built (the window paints
        first), it goes once it is, as typed (the composer has already cleared it)."""
        if not self.chat.started:
            self.chat.when_started(functools.partial(self._on_send_requested, text))
            return
        sent = self.send_filter(text) if self.send_filter is not None else text
        if sent is None:
            self.composer.set_text(text)
        elif not self.capabilities.send(sent):
            self.composer.set_text(text)  # refused before sending: nothing is lost

    def add_composer_accessory(self, widget: QWidget) -> None:
        """Put ``widget`` just above the composer (the lab's presets, prompts and meter)."""
        parent = self.composer.parentWidget()
        layout = parent.layout() if parent is not None else None
        if isinstance(layout, QVBoxLayout):
            layout.insertWidget(layout.indexOf(self.composer), widget)

    # -- the conversation ------------------------------------------------------------------

    def on_conversation_opened(self, _conversation_id: str, messages: PathView) -> None:
        if self.chat.replacing_look:
            return  # the same empty draft is on show: its banners and the focus stay
        self.clear_banners()
        running_at = (messages.position_of(m) for m in self.chat.running_turns())
        running = min((p for p in running_at if p is not None), default=None)  # no data made
        settled = messages if running is None else messages[:running]
        self.transcript.set_history(settled)
        self._append(messages[len(settled) :])
        self._show_body(has_messages=bool(messages))
        self.composer.clear_queued()
        if (retry := self.chat.pending_retry()) is not None:
            self.on_retry_scheduled(*retry)
        self.composer.setFocus()

    def _append(self, messages: Sequence[MessageData]) -> None:
        """Show messages after the last one on screen; a streaming one continues live."""
        for data in messages:
            if not self.chat.is_running(data.id):
                self.transcript.add_message(data)
                continue
            self.transcript.begin_reply(data.id, model=data.model)
            self.transcript.append_text(data.id, data.content)
            self.transcript.append_reasoning(data.id, data.reasoning)
            if data.sibling_count > 1:
                self.transcript.set_siblings(data.id, data.sibling_index, data.sibling_count)

    def _current(self, conversation_id: str) -> bool:
        return conversation_id == self.chat.current_id

    def _show_body(self, *, has_messages: bool) -> None:
        """A new chat shows examples; the transcript comes back with the first message."""
        self.body.setCurrentWidget(self.transcript if has_messages else self.empty_chat)

    def show_options(self, *_: object) -> None:
        """The chips of the options on in the conversation on screen."""
        tree = self.chat.current_tree()
        if tree is None:  # the look before the engine: a new chat, nothing on yet
            self.option_chips.show_options([])
            return
        from flarechat.core.active_options import active_options  # after the first paint

        conversation = tree.conversation
        self.option_chips.show_options(
            active_options(conversation.system_prompt, conversation.params)
        )

    def turn_off_option(self, key: str) -> None:
        """A chip was clicked: its option is off for this conversation (the rest is kept)."""
        tree = self.chat.current_tree()
        if tree is None:
            return
        from flarechat.core.active_options import without

        conversation = tree.conversation
        self.chat.set_options(*without(key, conversation.system_prompt, conversation.params))
        self.composer.setFocus()

    def set_example_model(self, model: str, strengths: str = "") -> None:
        self.empty_chat.set_model(model, strengths)

    def transcript_to_end(self) -> None:
        """Jump to the latest message (what Ctrl+End does in the transcript)."""
        self.transcript.scroll_area.verticalScrollBar().setValue(
            self.transcript.scroll_area.verticalScrollBar().maximum()
        )

    def on_message_added(self, conversation_id: str, data: MessageData) -> None:
        if self._current(conversation_id):
            self._show_body(has_messages=True)
            self.transcript.add_message(data)

    def on_message_updated(self, data: MessageData) -> None:
        if self.chat.is_shown(data.id):
            self.transcript.update_message(data)

    def on_path_changed(self, conversation_id: str, first: str, shown: list[MessageData]) -> None:
        if self._current(conversation_id):
            self.transcript.remove_from(first)
            self._append(shown)

    def show_message(self, message_id: str, query: str = "", occurrence: int = 0) -> None:
        """Open the transcript at a message (a search hit or a find match), loading its page
        if it is far back in the history, with ``query`` marked where it occurs in it (its
        occurrence number ``occurrence`` the current one). A message on a branch that is not
        shown brings its branch on screen first (ChatController.reveal)."""
        self.chat.reveal(message_id)
        self.transcript.scroll_to(message_id, query=query, occurrence=occurrence)

    # -- replies ---------------------------------------------------------------------------

    def on_turn_started(self, conversation_id: str, message_id: str) -> None:
        if not self._current(conversation_id):
            return
        self.clear_banners()
        self._show_body(has_messages=True)
        self.transcript.begin_reply(message_id, model=self.chat.current_model())

    def on_turn_continued(self, conversation_id: str, message_id: str) -> None:
        """Continue: the reply shown streams on from its text, in its own bubble."""
        if not self._current(conversation_id):
            return
        self.clear_banners()
        self.transcript.reopen_reply(message_id)

    def on_siblings_changed(self, message_id: str, index: int, count: int) -> None:
        if self.chat.is_shown(message_id):
            self.transcript.set_siblings(message_id, index, count)

    def on_turn_phase_changed(self, message_id: str, phase: str) -> None:
        """A reply sent waits for its answer: once that lasts QUEUE_SHOWN_AFTER_MS, the
        composer counts the wait up, calling it a queue only when the session says it is one
        (Wait in queue, a 3040 waited out), else waiting for the first token."""
        if not self.chat.is_shown(message_id):
            return
        from flarechat.core.session import Phase  # loaded with the chat engine (issue #12)

        self._phase = (message_id, phase)
        if phase in (Phase.QUEUED, Phase.SENT):
            QTimer.singleShot(
                QUEUE_SHOWN_AFTER_MS, functools.partial(self._still_waiting, message_id, phase)
            )
        else:
            self.composer.clear_queued()

    def _still_waiting(self, message_id: str, phase: str) -> None:
        from flarechat.core.session import Phase

        if self._phase == (message_id, phase) and self.chat.is_running(message_id):
            queued = phase == Phase.QUEUED
            self.composer.show_queued(QUEUE_SHOWN_AFTER_MS / 1000, queued=queued)

    def on_text_appended(self, message_id: str, text: str) -> None:
        # (the queue status went with the reply's "streaming" phase, not once per token)
        if self.chat.is_shown(message_id):
            self.transcript.append_text(message_id, text)

    def on_reasoning_appended(self, message_id: str, text: str) -> None:
        if self.chat.is_shown(message_id):
            self.transcript.append_reasoning(message_id, text)

    def on_turn_finished(self, message_id: str, data: MessageData) -> None:
        if self.chat.is_shown(message_id):
            self.composer.clear_queued()
            self.transcript.finish_reply(message_id, data)

    def on_turn_failed(
        self, message_id: str, kind: str, message: str, extra: dict[str, Any]
    ) -> None:
        if not self.chat.is_shown(message_id):
            return
        self.clear_banners()
        self.composer.clear_queued()
        self._banner_message = message_id
        if kind == ErrorKind.CAPACITY:
            model = short_model(str(extra.get("model", "")))
            attempts = int(extra.get("attempts", 1))
            self.retry_banner.show_exhausted(model=model, attempts=attempts)
            return
        spec = self.capabilities.failure_notice(kind, message, extra)
        self._show_notice(spec or presenting.notice_for_failure(kind, message, extra=extra))

    def _show_notice(self, spec: presenting.NoticeSpec) -> None:
        self.notice_banner.show(spec.kind, spec.title, spec.text, spec.actions)
        if spec.countdown:
            self.notice_banner.show_countdown(spec.countdown, label="You can retry in")

    def on_retry_scheduled(
        self,
        message_id: str,
        attempt: int,
        max_attempts: int,
        seconds: float,
        model: str,
        kind: str,
    ) -> None:
        if not self.chat.is_shown(message_id):
            return
        self._banner_message = message_id
        if kind == ErrorKind.CAPACITY:
            self.notice_banner.hide()
            self.retry_banner.show_capacity(
                model=short_model(model),
                attempt=attempt,
                max_attempts=max_attempts,
                seconds=seconds,
            )
            return
        self.retry_banner.hide()
        self._show_notice(presenting.retry_notice(kind))
        self.notice_banner.show_countdown(seconds)

    def on_retry_cleared(self, message_id: str) -> None:
        if message_id == self._banner_message:
            self.clear_banners()

    def clear_banners(self) -> None:
        """Hide the banners about a reply; the database problem stays until dismissed."""
        self._banner_message = None
        self.retry_banner.hide()
        self.notice_banner.hide()
        self._show_store_problem()

    def on_notice_action(self, action: str) -> None:
        chat, target = self.chat, self._banner_message
        handlers = {
            "retry": lambda: chat.retry_failed(target),
            "retry_now": chat.retry_now,
            "cancel_retry": chat.cancel_retry,
            "open_settings": self.settings_requested.emit,
            "switch_model": self.switch_model_requested.emit,
            "demo": self.demo_requested.emit,
        }
        if self.capabilities.on_action(action, target):
            return
        handler = handlers.get(action)
        if action in ("retry", "demo", "open_settings", "switch_model"):
            self.clear_banners()
        if handler is not None:
            handler()

    def on_escape(self) -> None:
        """Esc (or Stop): stop the reply; with none running, cancel a pending edit."""
        if self.chat.is_busy():
            self.chat.stop()
        else:
            self.chat.cancel_edit()

    def on_editing_changed(self, editing: bool) -> None:
        if editing:
            self.edit_strip.show("info", EDITING_TITLE, EDITING_TEXT, [CANCEL_EDIT])
        else:
            self.edit_strip.hide()

    def on_store_problem(self, text: str) -> None:
        """The database failed (said once per problem): the banner stays up, across replies,
        until the user dismisses it, since nothing new is saved meanwhile."""
        self._store_problem = text
        self._show_store_problem()

    def _show_store_problem(self) -> None:
        if self._store_problem is not None:
            self.notice_banner.show("error", STORE_PROBLEM_TITLE, self._store_problem, [])

    def _on_notice_dismissed(self) -> None:
        if self.notice_banner.title == STORE_PROBLEM_TITLE:
            self._store_problem = None

    def show_notice(self, kind: str, title: str, text: str, actions: list[tuple[str, str]]) -> None:
        self.notice_banner.show(kind, title, text, actions)

    def drop_notice(self, text: str | None) -> None:
        """Hide the notice if it says ``text`` (e.g. a keychain problem that demo mode moots)."""
        if text and text in self.notice_banner.text and self.notice_banner.isVisibleTo(self):
            self.notice_banner.hide()
