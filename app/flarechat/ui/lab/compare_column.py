"""One compare column: its model and parameters (before the run), its replies streaming in, its
own retry banner and notices, its metrics, and "Continue with this one"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QEvent, Qt, QUrl, Signal
from PySide6.QtGui import (
    QCursor,
    QFont,
    QGuiApplication,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QTextBrowser,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from flarechat.api.errors import ErrorKind
from flarechat.api.models import ModelInfo
from flarechat.core import figures
from flarechat.core.lab.compare import ColumnMetrics, ColumnSetup
from flarechat.ui.chat.banners import NoticeBanner, RetryBanner
from flarechat.ui.control import presenting
from flarechat.ui.models.picker import ModelPicker
from flarechat.ui.shared.theme import current_palette
from flarechat.ui.transcript.markdown import open_link, render
from flarechat.ui.transcript.markdown_view import (
    COPIED_FEEDBACK_MS,
    COPY_CODE_HREF,
    blocks_html,
    copy_code_index,
)

__all__ = ["PHASE_TEXT", "CompareColumn"]

PARAM_TEMPERATURE = "temperature"
PARAM_MAX_TOKENS = "max_tokens"
TEMPERATURE_MAX = 2.0
TEMPERATURE_STEP = 0.1
MAX_TOKENS_LIMIT = 32_768
MAX_TOKENS_STEP = 256
#: What a running reply's status line says in each phase (retry_wait: the banner says it).
PHASE_TEXT = {
    "held": "Waiting for a free slot (Flarechat runs 2 requests per model at once)…",
    "sent": "Sent \N{EM DASH} waiting for the first token…",
    "queued": "Waiting in Workers AI's queue…",
    "retry_wait": "Waiting to retry…",
    "streaming": "Streaming…",
}
_STATUS_TEXT = {"stopped": "Stopped", "failed": "Failed", "interrupted": "Interrupted"}


class CompareColumn(QFrame):
    """A column of the compare view.

    Signals:
        retry_now_requested(), wait_in_queue_requested(), switch_model_requested(),
        cancel_retry_requested(): this column's retry banner.
        retry_requested(): Retry on this column's failure notice.
        continue_requested(): "Continue with this one".
        view_code_requested(): "View as code" for this column's latest request.
        model_chosen(str): a model was picked in this column's picker.
    """

    retry_now_requested = Signal()
    wait_in_queue_requested = Signal()
    switch_model_requested = Signal()
    cancel_retry_requested = Signal()
    retry_requested = Signal()
    continue_requested = Signal()
    view_code_requested = Signal()
    model_chosen = Signal(str)

    def __init__(
        self,
        *,
        models: Sequence[ModelInfo],
        model: str,
        presets: Sequence[Any] = (),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("compareColumn")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._presets = list(presets)
        self._rounds: list[tuple[str, str | None]] = []  # (prompt, finished reply markdown)
        self._live: list[str] = []
        self._codes: list[str] = []  # what each code block's Copy link copies
        self._palette = current_palette()
        self._build(models, model)

    # -- layout ----------------------------------------------------------------------------

    def _build(self, models: Sequence[ModelInfo], model: str) -> None:
        self.title = QLabel("")
        bold = QFont(self.title.font())
        bold.setBold(True)
        self.title.setFont(bold)
        self.title.setAccessibleName("Column title")
        self.picker = ModelPicker(self)
        self.picker.set_models(list(models), fetched_at=None, offline=False)
        self.picker.set_current(model)
        self.picker.model_selected.connect(self.model_chosen)
        self.setup_row = QWidget(self)
        self._build_setup_row()
        self.retry_banner = RetryBanner(self)
        self.notice = NoticeBanner(self)
        self.body = QTextBrowser(self)
        self.body.setOpenLinks(False)  # Copy links are ours; web links go through open_link
        self.body.anchorClicked.connect(self._on_anchor)
        self.body.setAccessibleName("Replies")
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.status.setAccessibleName("Column status")
        self.metrics = QLabel("")
        self.metrics.setWordWrap(True)
        self.metrics.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.metrics.setAccessibleName("Column metrics")
        self.continue_button = QPushButton("Continue with this one")
        self.continue_button.setAccessibleName("Continue with this one")
        self.continue_button.setToolTip("Keep this reply's branch and go back to the chat")
        self.continue_button.setEnabled(False)
        self.code_button = QPushButton("View as code")
        self.code_button.setAccessibleName("View as code")
        self.code_button.setToolTip("This column's request as curl, Python, OpenAI SDK or Workers")
        self.code_button.setEnabled(False)
        self._lay_out()
        self._wire()

    def _build_setup_row(self) -> None:
        self.preset_box = QComboBox(self.setup_row)
        self.preset_box.setAccessibleName("Preset")
        self.preset_box.addItem("No preset", None)
        for preset in self._presets:
            self.preset_box.addItem(str(preset.name), preset)
        self.preset_box.setVisible(bool(self._presets))
        self.temperature = QDoubleSpinBox(self.setup_row)
        self.temperature.setRange(-TEMPERATURE_STEP, TEMPERATURE_MAX)
        self.temperature.setSingleStep(TEMPERATURE_STEP)
        self.temperature.setDecimals(1)
        self.temperature.setSpecialValueText("default")
        self.temperature.setValue(-TEMPERATURE_STEP)
        self.temperature.setPrefix("")
        self.temperature.setAccessibleName("Temperature")
        self.temperature.setToolTip("Temperature (default: the conversation's)")
        self.max_tokens = QSpinBox(self.setup_row)
        self.max_tokens.setRange(0, MAX_TOKENS_LIMIT)
        self.max_tokens.setSingleStep(MAX_TOKENS_STEP)
        self.max_tokens.setSpecialValueText("default")
        self.max_tokens.setAccessibleName("Max tokens")
        self.max_tokens.setToolTip("Max tokens (default: the conversation's)")
        lines = QVBoxLayout(self.setup_row)  # two lines: three columns fit an 800 px window
        lines.setContentsMargins(0, 0, 0, 0)
        lines.addWidget(self.preset_box)
        row = QHBoxLayout()
        lines.addLayout(row)
        row.addWidget(QLabel("Temp"))
        row.addWidget(self.temperature)
        row.addWidget(QLabel("Max tokens"))
        row.addWidget(self.max_tokens)
        row.addStretch(1)

    def _lay_out(self) -> None:
        head = QHBoxLayout()
        head.addWidget(self.title)
        head.addWidget(self.picker)
        head.addStretch(1)
        box = QVBoxLayout(self)
        box.setContentsMargins(8, 8, 8, 8)
        box.setSpacing(6)
        box.addLayout(head)
        box.addWidget(self.setup_row)
        box.addWidget(self.retry_banner)
        box.addWidget(self.notice)
        box.addWidget(self.body, 1)
        box.addWidget(self.status)
        box.addWidget(self.metrics)
        buttons = QHBoxLayout()
        buttons.addWidget(self.continue_button, 1)
        buttons.addWidget(self.code_button)
        box.addLayout(buttons)

    def _wire(self) -> None:
        self.retry_banner.retry_now_requested.connect(self.retry_now_requested)
        self.retry_banner.wait_in_queue_requested.connect(self.wait_in_queue_requested)
        self.retry_banner.switch_model_requested.connect(self.switch_model_requested)
        self.retry_banner.cancel_requested.connect(self.cancel_retry_requested)
        self.notice.action_triggered.connect(self._on_notice_action)
        self.continue_button.clicked.connect(self.continue_requested)
        self.code_button.clicked.connect(self.view_code_requested)
        self.preset_box.currentIndexChanged.connect(self._on_preset)

    # -- setup -------------------------------------------------------------------------------

    def setup(self) -> ColumnSetup:
        """What this column will send: model, the parameters set here, the preset's prompt."""
        preset = self.preset_box.currentData()
        params: dict[str, Any] = dict(preset.params) if preset is not None else {}
        if self.temperature.value() >= 0:
            params[PARAM_TEMPERATURE] = round(self.temperature.value(), 1)
        if self.max_tokens.value() > 0:
            params[PARAM_MAX_TOKENS] = self.max_tokens.value()
        system = (preset.system_prompt or None) if preset is not None else None
        name = str(preset.name) if preset is not None else None
        return ColumnSetup(self.picker.current_model(), params, system, name)

    def apply_setup(self, setup: ColumnSetup) -> None:
        """Show a setup (the blind shuffle moves setups between columns)."""
        self.picker.set_current(setup.model)
        index = self.preset_box.findText(setup.preset) if setup.preset else 0
        self.preset_box.setCurrentIndex(max(0, index))
        temperature = setup.params.get(PARAM_TEMPERATURE)
        if not isinstance(temperature, int | float):
            temperature = -TEMPERATURE_STEP
        self.temperature.setValue(float(temperature))
        max_tokens = setup.params.get(PARAM_MAX_TOKENS)
        self.max_tokens.setValue(max_tokens if isinstance(max_tokens, int) else 0)

    def _on_preset(self, _index: int) -> None:
        preset = self.preset_box.currentData()
        if preset is not None:
            self.picker.set_current(str(preset.model))

    def set_running(self, running: bool, *, title: str) -> None:
        """During a run the setup is fixed and the title names the column (and its model
        unless blind); the picker stays only for Switch model…"""
        self.title.setText(title)
        self.setup_row.setVisible(not running)
        self.picker.setVisible(not running)

    @property
    def rounds_shown(self) -> int:
        return len(self._rounds)

    # -- replies ---------------------------------------------------------------------------

    def begin_round(self, prompt: str) -> None:
        self._rounds.append((prompt, None))
        self.restart_reply()

    def restart_reply(self) -> None:
        """The column's reply starts (again): its text so far is cleared."""
        self._live = []
        self.status.setText(PHASE_TEXT["sent"])
        self.metrics.clear()
        self.notice.hide()
        self.continue_button.setEnabled(False)
        self._render()

    def append_text(self, text: str) -> None:
        self._live.append(text)
        cursor = self.body.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text)
        self.status.setText(PHASE_TEXT["streaming"])

    def set_phase(self, phase: str) -> None:
        self.status.setText(PHASE_TEXT.get(phase, ""))

    def finish(self, status: str, content: str, metrics: ColumnMetrics) -> None:
        if self._rounds:
            prompt, _ = self._rounds[-1]
            self._rounds[-1] = (prompt, content)
        self._live = []
        self.retry_banner.hide()
        self.status.setText(_STATUS_TEXT.get(status, ""))
        self.status.setVisible(status != "done")
        self.metrics.setText(figures.SEPARATOR.join(metrics.lines()))
        self._render()

    def _render(self) -> None:
        """The rounds as the chat shows a reply (markdown.render: styled tables, highlighted
        code with a Copy link), each prompt quoted above its reply; streamed text so far in a
        plain paragraph of its own."""
        self._palette = current_palette()
        self._codes = []
        parts = []
        for prompt, reply in self._rounds:
            parts.append(self._markdown_html("> " + prompt.replace("\n", "\n> ")))
            if reply is not None:
                parts.append(self._markdown_html(reply))
        self.body.setHtml("\n".join(parts))
        if self._rounds and self._rounds[-1][1] is None:
            # streamed text goes in a plain paragraph of its own, not into the quoted prompt
            cursor = self.body.textCursor()
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
            cursor.insertText("".join(self._live))
        self.body.verticalScrollBar().setValue(self.body.verticalScrollBar().maximum())
        self.status.setVisible(bool(self.status.text()))

    def _markdown_html(self, markdown: str) -> str:
        fragment, codes = blocks_html(
            render(markdown, palette=self._palette),
            palette=self._palette,
            first_code=len(self._codes),
        )
        self._codes += codes
        return fragment

    def code_blocks(self) -> list[str]:
        """The code of each code block shown, in order (what its Copy link copies)."""
        return list(self._codes)

    def _on_anchor(self, url: QUrl) -> None:
        href = url.toString()
        if href.startswith(COPY_CODE_HREF):
            if (index := copy_code_index(href, len(self._codes))) is not None:
                QGuiApplication.clipboard().setText(self._codes[index])
                QToolTip.showText(
                    QCursor.pos(), "Copied", self.body, self.body.rect(), COPIED_FEEDBACK_MS
                )
            return
        open_link(href)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        themed = event.type() in (QEvent.Type.PaletteChange, QEvent.Type.StyleChange)
        if themed and current_palette() != self._palette:
            self._render()  # the replies' HTML carries the theme's colours

    def reply_text(self) -> str:
        """What the column shows (tests, accessibility)."""
        return self.body.toPlainText()

    # -- banners ---------------------------------------------------------------------------

    def show_retry(
        self, *, name: str, attempt: int, max_attempts: int, seconds: float, kind: str
    ) -> None:
        if kind == ErrorKind.CAPACITY:
            self.notice.hide()
            self.retry_banner.show_capacity(
                model=name, attempt=attempt, max_attempts=max_attempts, seconds=seconds
            )
        else:
            spec = presenting.retry_notice(kind)
            self.notice.show(spec.kind, spec.title, spec.text, spec.actions)
            self.notice.show_countdown(seconds)
        self.status.setText(PHASE_TEXT["retry_wait"])

    def clear_retry(self) -> None:
        self.retry_banner.hide()
        self.notice.hide()

    def show_failure(self, *, name: str, kind: str, message: str, extra: dict[str, Any]) -> None:
        self.clear_retry()
        if kind == ErrorKind.CAPACITY:
            self.retry_banner.show_exhausted(model=name, attempts=int(extra.get("attempts", 1)))
            return
        spec = presenting.notice_for_failure(kind, message, extra=extra)
        self.notice.show(spec.kind, spec.title, spec.text, spec.actions)

    def _on_notice_action(self, action: str) -> None:
        handlers = {
            "retry": self.retry_requested.emit,
            "retry_now": self.retry_now_requested.emit,
            "cancel_retry": self.cancel_retry_requested.emit,
            "switch_model": self.switch_model_requested.emit,
        }
        if (handler := handlers.get(action)) is not None:
            handler()
