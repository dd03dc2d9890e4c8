"""One compare column: its model and parameters (before the run), its replies streaming in, its
own retry banner and notices, its metrics, and "Continue with this one"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSpinBox,
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
from flarechat.ui.transcript.markdown_view import MarkdownView
from flarechat.ui.transcript.message_parts import ReasoningSection
from flarechat.ui.transcript.transcript import FLUSH_INTERVAL_MS

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
#: Said in a blind run's footer in place of the figures that would name the model.
FIGURES_AFTER_VOTE = "cost and speed after your vote"
ROUND_SPACING_PX = 10
#: The view keeps following a growing reply while scrolled to within this of the bottom.
FOLLOW_SLACK_PX = 4


class _RoundView(QWidget):
    """One round in a column, drawn by the chat's own parts: the prompt quoted, the model's
    reasoning in a Thinking section, the reply as Markdown (the transcript's MarkdownView:
    settled blocks rendered once, the open tail re-rendered) while it streams and after."""

    def __init__(self, prompt: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.prompt = MarkdownView(self)
        self.prompt.set_markdown("> " + prompt.replace("\n", "\n> "))
        self.reasoning = ReasoningSection(self)
        self.reasoning.hide()
        self.reply = MarkdownView(self)
        self.text_chunks: list[str] = []
        self.reasoning_chunks: list[str] = []
        self._text: list[str] = []  # what arrived, joined once per flush
        self._thought: list[str] = []
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(6)
        for part in (self.prompt, self.reasoning, self.reply):
            column.addWidget(part)

    def restart(self) -> None:
        for parts in (self.text_chunks, self.reasoning_chunks, self._text, self._thought):
            parts.clear()
        self.reply.set_markdown("")
        self.reasoning.set_text("", live=False)
        self.reasoning.hide()

    def flush(self) -> None:
        """Paint what arrived since the last flush."""
        if self.text_chunks:
            self._text += self.text_chunks
            self.text_chunks.clear()
            self.reply.stream_markdown("".join(self._text))
        if self.reasoning_chunks:
            self._thought += self.reasoning_chunks
            self.reasoning_chunks.clear()
        # live while only reasoning has come, as the chat's: the answer ends the thinking
        self._show_reasoning("".join(self._thought), live=not self._text)

    def finish(self, content: str, reasoning: str) -> None:
        self.text_chunks.clear()
        self.reasoning_chunks.clear()
        self.reply.set_markdown(content)
        self._show_reasoning(reasoning or "".join(self._thought), live=False)

    def _show_reasoning(self, text: str, *, live: bool) -> None:
        """As the chat shows it: open while the model thinks, folded once the answer comes."""
        section = self.reasoning
        section.setVisible(bool(text))
        if not text:
            return
        section.set_text(text, live=live)
        if not section.user_toggled:
            section.set_expanded(live and not self._text)

    def code_blocks(self) -> list[str]:
        return self.prompt.code_blocks() + self.reply.code_blocks()

    def plain_text(self) -> str:
        return f"{self.prompt.plain_text()}\n{self.reply.plain_text()}"


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
        self._rounds: list[_RoundView] = []
        self._metrics: ColumnMetrics | None = None
        self._at_bottom = True  # the view follows the reply until the user scrolls up
        self._flush_timer = QTimer(self)
        self._flush_timer.setObjectName("compareColumnFlush")
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(FLUSH_INTERVAL_MS)
        self._flush_timer.timeout.connect(self._flush)
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
        self.body = QScrollArea(self)
        self.body.setWidgetResizable(True)
        self.body.setFrameShape(QFrame.Shape.NoFrame)
        self.body.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.body.setAccessibleName("Replies")
        self._content = QWidget(self.body)
        self._content.setObjectName("compareReplies")
        self._stack = QVBoxLayout(self._content)
        self._stack.setContentsMargins(0, 0, 4, 0)
        self._stack.setSpacing(ROUND_SPACING_PX)
        self._stack.addStretch(1)
        self.body.setWidget(self._content)
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
        bar = self.body.verticalScrollBar()
        bar.rangeChanged.connect(self._on_range_changed)
        bar.valueChanged.connect(self._on_scrolled)

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
        """A new round: its prompt quoted, then the reply (and any reasoning) as it streams."""
        view = _RoundView(prompt, self._content)
        self._stack.insertWidget(self._stack.count() - 1, view)  # above the closing stretch
        self._rounds.append(view)
        self._at_bottom = True
        self.restart_reply()

    def restart_reply(self) -> None:
        """The column's reply starts (again): its text so far is cleared."""
        self._flush_timer.stop()
        if self._rounds:
            self._rounds[-1].restart()
        self.status.setText(PHASE_TEXT["sent"])
        self.metrics.clear()
        self._metrics = None
        self.notice.hide()
        self.continue_button.setEnabled(False)
        self.status.setVisible(True)

    def append_text(self, text: str) -> None:
        """Reply text arrived: painted as the chat paints a reply, by the next flush."""
        if self._rounds and text:
            self._rounds[-1].text_chunks.append(text)
            self._schedule_flush()
        self.status.setText(PHASE_TEXT["streaming"])

    def append_reasoning(self, text: str) -> None:
        """Reasoning arrived: shown in the chat's Thinking section, by the next flush."""
        if self._rounds and text:
            self._rounds[-1].reasoning_chunks.append(text)
            self._schedule_flush()
        self.status.setText(PHASE_TEXT["streaming"])

    def _schedule_flush(self) -> None:
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def _flush(self) -> None:
        if self._rounds:
            self._rounds[-1].flush()

    def set_phase(self, phase: str) -> None:
        self.status.setText(PHASE_TEXT.get(phase, ""))

    def finish(
        self, status: str, content: str, metrics: ColumnMetrics, *, reasoning: str = "",
        hide_figures: bool = False,
    ) -> None:  # fmt: skip
        """The reply is over: its final text rendered whole, its figures shown (cost and speed
        held back while ``hide_figures``: a blind run before the vote)."""
        self._flush_timer.stop()
        if self._rounds:
            self._rounds[-1].finish(content, reasoning)
        self.retry_banner.hide()
        self.status.setText(_STATUS_TEXT.get(status, ""))
        self.status.setVisible(status != "done")
        self._metrics = metrics
        self.show_figures(hidden=hide_figures)

    def show_figures(self, *, hidden: bool) -> None:
        """The reply's figures; ``hidden``: only those that do not give the model away."""
        if self._metrics is None:
            return
        lines = self._metrics.lines(blind=hidden)
        if hidden:
            lines.append(FIGURES_AFTER_VOTE)
        self.metrics.setText(figures.SEPARATOR.join(lines))

    def round_views(self) -> list[_RoundView]:
        return list(self._rounds)

    def code_blocks(self) -> list[str]:
        """The code of each code block shown, in order (what its Copy link copies)."""
        return [code for view in self._rounds for code in view.code_blocks()]

    def reply_text(self) -> str:
        """What the column shows (tests, accessibility)."""
        return "\n".join(view.plain_text() for view in self._rounds)

    def _on_range_changed(self, _low: int, high: int) -> None:
        if self._at_bottom:
            self.body.verticalScrollBar().setValue(high)  # follow the reply as it grows

    def _on_scrolled(self, value: int) -> None:
        self._at_bottom = value >= self.body.verticalScrollBar().maximum() - FOLLOW_SLACK_PX

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
