"""The compare window: 2 to 4 columns side by side, one prompt box sending to all of them, the
blind vote bar, export, and the way back to the chat with the winner.

It opens no larger than the main window (nor the screen's free area), keeps its columns the same
width, and asks before New compare clears a run whose replies or vote would otherwise be lost."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QGuiApplication,
    QKeySequence,
    QResizeEvent,
    QScreen,
    QShortcut,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from flarechat.api.models import ModelInfo
from flarechat.core.lab import templates
from flarechat.core.lab.compare import LABELS, MAX_COLUMNS, MIN_COLUMNS, ColumnMetrics
from flarechat.core.lab.votes import Verdict, VoteBook
from flarechat.ui.control.chat import ChatController
from flarechat.ui.lab.compare_column import CompareColumn
from flarechat.ui.lab.compare_controller import CompareController
from flarechat.ui.lab.leaderboard_dialog import LeaderboardDialog

__all__ = ["CompareWindow", "default_models", "open_compare", "opening_geometry"]

#: The size the window would like; it opens no larger than the main window or the screen.
WINDOW_SIZE = (1240, 800)
PROMPT_HEIGHT = 72
DEFAULT_COLUMNS = 2
EXPORT_FILTERS = {"csv": "CSV files (*.csv)", "json": "JSON files (*.json)"}
TIE_LABEL = "Tie"
NEW_COMPARE_QUESTION = "Clear this compare and start a new one?"
DISCARD_LABEL = "Clear and start over"
LOST_COLUMNS = "The side-by-side replies were not exported."
LOST_VOTE = "Your blind vote was not cast, so the models stay unnamed here."
KEPT_IN_HISTORY = " Each column's replies stay in the chat history as a branch of its conversation."


def opening_geometry(wanted: QSize, *, over: QRect | None, screen: QScreen | None) -> QRect:
    """Where the window opens: ``wanted`` bounded by the main window's size (``over``, its
    frame) and the screen's available area, centred over the main window, inside that area."""
    size = QSize(wanted)
    area = screen.availableGeometry() if screen is not None else None
    if over is not None:
        size = size.boundedTo(over.size())
    if area is not None:
        size = size.boundedTo(area.size())
    rect = QRect(0, 0, size.width(), size.height())
    centre = over.center() if over is not None else area.center() if area is not None else None
    if centre is not None:
        rect.moveCenter(centre)
    if area is not None:
        rect.moveLeft(max(area.left(), min(rect.left(), area.right() + 1 - rect.width())))
        rect.moveTop(max(area.top(), min(rect.top(), area.bottom() + 1 - rect.height())))
    return rect


def default_models(current: str, models: Sequence[ModelInfo], count: int) -> list[str]:
    """The models new columns start with: the chat's model, then others from the catalogue."""
    chosen = [current]
    for info in models:
        if len(chosen) >= count:
            break
        if info.name not in chosen and info.task == "Text Generation":
            chosen.append(info.name)
    while len(chosen) < count:
        chosen.append(current)
    return chosen


class CompareWindow(QWidget):
    """A window of its own (the chat stays as it is behind it) driving a CompareController.

    Signals:
        view_code_requested(str, object): a column's reply id and its ConversationTree.
    """

    view_code_requested = Signal(str, object)

    def __init__(
        self,
        controller: CompareController,
        *,
        models: Sequence[ModelInfo],
        current_model: str,
        presets: Sequence[Any] = (),
        votes: VoteBook | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("compareWindow")
        self.setWindowTitle("Compare models \N{EM DASH} Flarechat")
        self.setAccessibleName("Compare models")
        self.controller = controller
        self._models = list(models)
        self._current_model = current_model
        self._presets = list(presets)
        self._votes = votes
        self.columns: list[CompareColumn] = []
        self._switching: int | None = None
        #: the run ended with "Continue with this one": the next opening starts afresh
        self.run_continued = False
        self.leaderboard: LeaderboardDialog | None = None
        #: the question New compare asks before a run is cleared (None: not asked)
        self.discard_box: QMessageBox | None = None
        self._exported_rounds = 0  # rounds the last export held
        self._dragged = False  # the user moved a splitter handle: their widths, kept
        self._build()
        self._wire()
        self.set_column_count(DEFAULT_COLUMNS)
        self.fit_to(parent)

    def fit_to(self, main: QWidget | None) -> None:
        """Open no larger than ``main`` (the main window) and inside the screen's free area,
        frame included (its width taken from the main window's, as the same desktop draws it)."""
        top = main.window() if main is not None else None
        screen = top.screen() if top is not None else QGuiApplication.primaryScreen()
        over = top.frameGeometry() if top is not None else None
        frame = QSize(0, 0)
        if top is not None:
            frame = top.frameGeometry().size() - top.geometry().size()
        rect = opening_geometry(QSize(*WINDOW_SIZE), over=over, screen=screen)
        self.resize(rect.size() - frame)
        self.move(rect.topLeft())  # move() places the frame, resize() sizes what is inside

    # -- layout ----------------------------------------------------------------------------

    def _build(self) -> None:
        self.count_box = QSpinBox(self)
        self.count_box.setRange(MIN_COLUMNS, MAX_COLUMNS)
        self.count_box.setValue(DEFAULT_COLUMNS)
        self.count_box.setAccessibleName("Columns")
        self.blind_box = QCheckBox("Blind (hide the models until you vote)", self)
        self.new_button = QPushButton("New compare", self)
        self.leaderboard_button = QPushButton("Leaderboard\N{HORIZONTAL ELLIPSIS}", self)
        self.leaderboard_button.setAccessibleName("Leaderboard")
        self.export_csv = QPushButton("Export CSV\N{HORIZONTAL ELLIPSIS}", self)
        self.export_csv.setAccessibleName("Export CSV")
        self.export_json = QPushButton("Export JSON\N{HORIZONTAL ELLIPSIS}", self)
        self.export_json.setAccessibleName("Export JSON")
        top = QHBoxLayout()
        top.addWidget(QLabel("Columns"))
        top.addWidget(self.count_box)
        top.addWidget(self.blind_box)
        top.addStretch(1)
        for button in (self.new_button, self.leaderboard_button, self.export_csv):
            top.addWidget(button)
        top.addWidget(self.export_json)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.splitterMoved.connect(self._on_splitter_moved)
        self.vote_bar = QWidget(self)
        self.vote_row = QHBoxLayout(self.vote_bar)
        self.vote_row.setContentsMargins(0, 0, 0, 0)
        self.vote_bar.hide()
        self.note = QLabel("", self)
        self.note.setWordWrap(True)
        self.note.setAccessibleName("Compare status")
        self.prompt = QPlainTextEdit(self)
        self.prompt.setPlaceholderText("A prompt for every column (Ctrl+Enter sends)")
        self.prompt.setAccessibleName("Prompt")
        self.prompt.setFixedHeight(PROMPT_HEIGHT)
        self.send_button = QPushButton("Send to all", self)
        self.send_button.setAccessibleName("Send to all")
        self.send_button.setDefault(True)
        self.rows = QPlainTextEdit(self)
        self.rows.setPlaceholderText(
            "The prompt has {{variables}}: one row of values per column (a line each, or CSV)"
        )
        self.rows.setAccessibleName("Template rows")
        self.rows.setFixedHeight(PROMPT_HEIGHT)
        self.rows.hide()
        bottom = QHBoxLayout()
        bottom.addWidget(self.prompt, 1)
        bottom.addWidget(self.rows, 1)
        bottom.addWidget(self.send_button, 0, Qt.AlignmentFlag.AlignBottom)
        box = QVBoxLayout(self)
        box.addLayout(top)
        box.addWidget(self.splitter, 1)
        box.addWidget(self.vote_bar)
        box.addWidget(self.note)
        box.addLayout(bottom)

    def _wire(self) -> None:
        c = self.controller
        self.count_box.valueChanged.connect(self.set_column_count)
        self.new_button.clicked.connect(self.new_compare)
        self.leaderboard_button.clicked.connect(self.open_leaderboard)
        self.export_csv.clicked.connect(partial(self.ask_export, "csv"))
        self.export_json.clicked.connect(partial(self.ask_export, "json"))
        self.send_button.clicked.connect(self.send)
        self.prompt.textChanged.connect(self._show_rows_box)
        QShortcut(QKeySequence("Ctrl+Return"), self.prompt, self.send)
        c.column_started.connect(self._on_started)
        c.column_text.connect(lambda col, text: self.columns[col].append_text(text))
        c.column_phase.connect(lambda col, phase: self.columns[col].set_phase(phase))
        c.column_retry.connect(self._on_retry)
        c.column_retry_cleared.connect(lambda col: self.columns[col].clear_retry())
        c.column_finished.connect(self._on_finished)
        c.column_failed.connect(self._on_failed)
        c.busy_changed.connect(self._update_state)
        c.revealed.connect(self._on_revealed)
        c.continued.connect(self._on_continued)
        c.problem.connect(self.note.setText)
        c.exported.connect(self._on_exported)
        c.column_reasoning.connect(lambda col, text: self.columns[col].append_reasoning(text))

    # -- columns ---------------------------------------------------------------------------

    def set_column_count(self, count: int) -> None:
        """Before a run: add or remove columns (each keeps its setup)."""
        if self.controller.run is not None and self.controller.run.rounds:
            return
        defaults = default_models(self._current_model, self._models, count)
        while len(self.columns) < count:
            self._add_column(defaults[len(self.columns)])
        while len(self.columns) > count:
            column = self.columns.pop()
            column.hide()
            column.deleteLater()
        for index, column in enumerate(self.columns):
            column.set_running(False, title=LABELS[index])
        self._dragged = False
        self.equalize_columns()

    def _on_splitter_moved(self, *_: object) -> None:
        self._dragged = True

    def equalize_columns(self) -> None:
        """Give every column the same width (and the same share of any later resize)."""
        count = len(self.columns)
        if not count:
            return
        for index in range(count):
            self.splitter.setStretchFactor(index, 1)
        width = max(self.splitter.width(), count)
        share, extra = divmod(width - self.splitter.handleWidth() * (count - 1), count)
        self.splitter.setSizes([share + (1 if i < extra else 0) for i in range(count)])

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.equalize_columns()  # the splitter has its real width now

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if not self._dragged:
            self.equalize_columns()

    def _add_column(self, model: str) -> None:
        index = len(self.columns)
        column = CompareColumn(models=self._models, model=model, presets=self._presets)
        column.retry_now_requested.connect(partial(self.controller.retry_now, index))
        column.wait_in_queue_requested.connect(partial(self.controller.wait_in_queue, index))
        column.cancel_retry_requested.connect(partial(self.controller.cancel_retry, index))
        column.retry_requested.connect(partial(self.controller.retry, index))
        column.continue_requested.connect(partial(self.controller.continue_with, index))
        column.switch_model_requested.connect(partial(self._switch_model, index))
        column.view_code_requested.connect(partial(self._view_code, index))
        column.model_chosen.connect(partial(self._on_model_chosen, index))
        self.columns.append(column)
        self.splitter.addWidget(column)

    def _view_code(self, index: int) -> None:
        message, session = self.controller.message(index), self.controller.session
        if message is not None and session is not None:
            self.view_code_requested.emit(message.id, session.tree)

    def _switch_model(self, index: int) -> None:
        self._switching = index
        self.columns[index].picker.open_popup()

    def _on_model_chosen(self, index: int, model: str) -> None:
        if self._switching == index:
            self._switching = None
            self.controller.switch_model(index, model)
            self._retitle()

    # -- sending ---------------------------------------------------------------------------

    def _first_round(self) -> bool:
        run = self.controller.run
        return run is None or not run.rounds

    def _show_rows_box(self) -> None:
        """A template's rows are asked for on the first round only: one column per row."""
        wanted = self._first_round() and bool(templates.variables(self.prompt.toPlainText()))
        self.rows.setVisible(wanted)

    def _row_prompts(self, text: str) -> list[str] | None:
        """The template filled with each row (the column count follows), or None with a note."""
        try:
            filled = templates.fill_rows(text, self.rows.toPlainText())
        except templates.RowsError as error:
            self.note.setText(str(error))
            return None
        if not MIN_COLUMNS <= len(filled) <= MAX_COLUMNS:
            self.note.setText(f"Give {MIN_COLUMNS} to {MAX_COLUMNS} rows: one per column.")
            return None
        self.count_box.setValue(len(filled))
        return [row.text for row in filled]

    def send(self) -> None:
        text = self.prompt.toPlainText()
        if not text.strip() or self.controller.busy:
            return
        prompts = None
        if self._first_round():
            if self.rows.isVisible() and (prompts := self._row_prompts(text)) is None:
                return
            self.controller.setup(
                [c.setup() for c in self.columns], blind=self.blind_box.isChecked()
            )
            self._show_setups()
        if self.controller.send(text, prompts=prompts):
            self.rows.hide()
            self.prompt.clear()
            self.note.clear()
        self._update_state()

    def _show_setups(self) -> None:
        run = self.controller.run
        if run is None:
            return
        for column, setup in zip(self.columns, run.columns, strict=True):
            column.apply_setup(setup)
        self._retitle()

    def _retitle(self) -> None:
        run = self.controller.run
        for index, column in enumerate(self.columns):
            if run is None:
                column.set_running(False, title=LABELS[index])
            elif not run.revealed:
                column.set_running(True, title=run.shown_name(index))
            else:
                column.set_running(
                    True, title=f"{LABELS[index]} \N{MIDDLE DOT} {run.shown_name(index)}"
                )

    def new_compare(self) -> QMessageBox | None:
        """Start over with a fresh setup. A run whose replies were not exported nor continued
        in the chat, or whose blind vote was not cast, is cleared only once the user says so
        (the question, opened non-modally, is returned); otherwise at once."""
        if self.controller.busy:
            return None
        loss = self._what_would_be_lost()
        if loss is None:
            self._start_over()
            return None
        box = QMessageBox(
            QMessageBox.Icon.Question, "New compare", NEW_COMPARE_QUESTION, parent=self
        )
        box.setInformativeText(loss)
        box.setStandardButtons(QMessageBox.StandardButton.Cancel)
        discard = box.addButton(DISCARD_LABEL, QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        discard.clicked.connect(self._start_over)
        self.discard_box = box
        box.open()
        return box

    def _what_would_be_lost(self) -> str | None:
        """What clearing the run loses, in words; None when nothing would be."""
        run = self.controller.run
        if run is None or not run.rounds or self.run_continued:
            return None
        lost = []
        if self._exported_rounds < len(run.rounds):
            lost.append(LOST_COLUMNS)
        if self.controller.can_vote():
            lost.append(LOST_VOTE)
        return " ".join(lost) + KEPT_IN_HISTORY if lost else None

    def _start_over(self) -> None:
        if self.controller.busy:
            return
        self.controller.reset()
        self.run_continued = False
        self._exported_rounds = 0
        for column in self.columns:
            column.hide()
            column.deleteLater()
        self.columns = []
        self.note.clear()
        self.set_column_count(self.count_box.value())
        self._update_state()

    def _on_exported(self, path: str) -> None:
        run = self.controller.run
        self._exported_rounds = len(run.rounds) if run is not None else 0
        self.note.setText(f"Saved {Path(path).name}.")

    # -- controller signals ----------------------------------------------------------------

    def _on_started(self, column: int, _reply_id: str) -> None:
        run = self.controller.run
        starts_round = run is not None and len(run.rounds) > self._round_shown(column)
        if starts_round and run is not None:
            self.columns[column].begin_round(run.rounds[-1].prompt)
        else:
            self.columns[column].restart_reply()
        self._update_state()

    def _round_shown(self, column: int) -> int:
        return self.columns[column].rounds_shown

    def _name(self, column: int, model: str) -> str:
        run = self.controller.run
        if run is not None and not run.revealed:
            return f"model {LABELS[column]}"
        return model.rsplit("/", 1)[-1]

    def _on_retry(
        self, column: int, attempt: int, most: int, seconds: float, model: str, kind: str
    ) -> None:
        self.columns[column].show_retry(
            name=self._name(column, model),
            attempt=attempt,
            max_attempts=most,
            seconds=seconds,
            kind=kind,
        )

    def _on_failed(self, column: int, kind: str, message: str, extra: dict[str, Any]) -> None:
        model = str(extra.get("model", ""))
        self.columns[column].show_failure(
            name=self._name(column, model), kind=kind, message=message, extra=extra
        )

    def _on_finished(self, column: int, status: str, metrics: ColumnMetrics) -> None:
        message, run = self.controller.message(column), self.controller.run
        self.columns[column].finish(
            status,
            message.content if message else "",
            metrics,
            reasoning=message.reasoning if message else "",
            hide_figures=run is not None and not run.revealed,
        )
        self._update_state()

    def _on_continued(self, _conversation_id: str) -> None:
        self.run_continued = True
        self.close()

    def _on_revealed(self, _models: list[str]) -> None:
        self._retitle()
        for column in self.columns:
            column.show_figures(hidden=False)  # the vote is cast: cost and speed may show
        vote = self.controller.vote
        if vote is not None:
            self.note.setText(f"Your vote: {_vote_words(vote.verdict, vote.winner)}. Saved.")
        self._update_state()

    def _update_state(self, *_: object) -> None:
        c, run = self.controller, self.controller.run
        started = run is not None and bool(run.rounds)
        self.send_button.setEnabled(not c.busy)
        self.count_box.setEnabled(not started)
        self.blind_box.setEnabled(not started)
        self.new_button.setEnabled(started and not c.busy)
        for widget in (self.export_csv, self.export_json):
            widget.setEnabled(started)
        done = c.round_done() and not c.busy
        may_continue = done and run is not None and run.revealed
        for index, column in enumerate(self.columns):
            message = c.message(index) if started else None
            ok = message is not None and message.status == "done"
            column.continue_button.setEnabled(may_continue and ok)
            shown = run is not None and run.revealed  # the request names the model
            column.code_button.setEnabled(shown and message is not None and bool(message.request))
        self._update_vote_bar()

    # -- the blind vote --------------------------------------------------------------------

    def _update_vote_bar(self) -> None:
        run = self.controller.run
        show = self.controller.can_vote() and not self.controller.busy
        if show and run is not None and not self.vote_row.count():
            self._build_vote_buttons(len(run.columns))
        self.vote_bar.setVisible(show)

    def _build_vote_buttons(self, count: int) -> None:
        question = "Which is better?" if count == 2 else "Which is best?"
        self.vote_row.addWidget(QLabel(question))
        choices: list[tuple[str, Verdict, int | None]] = [
            (f"{LABELS[i]} is {'better' if count == 2 else 'best'}", Verdict.BEST, i)
            for i in range(count)
        ]
        choices += [(TIE_LABEL, Verdict.TIE, None)]
        choices += [("Both bad" if count == 2 else "All bad", Verdict.ALL_BAD, None)]
        for label, verdict, winner in choices:
            button = QPushButton(label)
            button.setAccessibleName(label)
            button.clicked.connect(partial(self._vote, verdict, winner))
            self.vote_row.addWidget(button)
        self.vote_row.addStretch(1)

    def _vote(self, verdict: Verdict, winner: int | None) -> None:
        self.controller.cast_vote(verdict, winner)

    # -- export and the leaderboard ------------------------------------------------------------

    def ask_export(self, fmt: str) -> QFileDialog:
        dialog = QFileDialog(self, f"Export compare as {fmt.upper()}")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilter(EXPORT_FILTERS[fmt])
        dialog.setDefaultSuffix(fmt)
        dialog.selectFile(f"compare.{fmt}")
        dialog.fileSelected.connect(lambda path: self.controller.export(Path(path), fmt))
        dialog.open()
        return dialog

    def open_leaderboard(self) -> LeaderboardDialog:
        if self.leaderboard is None:
            self.leaderboard = LeaderboardDialog(self._votes or VoteBook(), parent=self)
        self.leaderboard.reload()
        self.leaderboard.show()
        self.leaderboard.raise_()
        return self.leaderboard


def _vote_words(verdict: Verdict, winner: int | None) -> str:
    if verdict is Verdict.BEST and winner is not None:
        return f"{LABELS[winner]} is best"
    return "all bad" if verdict is Verdict.ALL_BAD else "a tie"


def open_compare(
    parent: QWidget,
    chat: ChatController,
    *,
    models: Sequence[ModelInfo],
    presets: Sequence[Any] = (),
    existing: CompareWindow | None = None,
    view_code: Callable[..., None] | None = None,
) -> CompareWindow:
    """Show the compare window (View > Compare models…): the open one if there is one — a run that
    continued in the chat gives way to a fresh setup — else a new one over ``chat``."""
    if existing is not None:
        if existing.run_continued and not existing.controller.busy:
            existing.new_compare()
        existing.show()
        existing.raise_()
        existing.activateWindow()
        return existing
    votes = VoteBook()
    controller = CompareController(chat, votes=votes, catalogue={m.name: m for m in models})
    window = CompareWindow(
        controller,
        models=models,
        current_model=chat.current_model(),
        presets=presets,
        votes=votes,
        parent=parent,
    )
    controller.setParent(window)
    if view_code is not None:  # View as code opens over the compare window's columns
        window.view_code_requested.connect(lambda mid, tree: view_code(mid, tree=tree))
    window.show()
    return window
