"""The compare controller: one compare run over the chat controller's session — sends to every
column, follows each column's reply through the chat controller's signals, and takes the
per-column retry actions, the blind vote, "continue with this one" and the export."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from flarechat.api.models import ModelInfo
from flarechat.core.conversation import Message
from flarechat.core.lab.compare import (
    ColumnMetrics,
    ColumnSetup,
    CompareRun,
    blind_order,
    metrics_of,
)
from flarechat.core.lab.compare_export import compare_csv, compare_json, compare_record
from flarechat.core.lab.votes import Verdict, Vote, VoteBook
from flarechat.core.session import ChatSession
from flarechat.core.tasks import TaskKeeper
from flarechat.ui.control.chat import ChatController

__all__ = ["CompareController"]

#: After a column finishes, look again this soon whether the session is idle (its task ends
#: just after the TurnFinished it reported).
IDLE_CHECK_MS = 30
_FINAL = frozenset({"done", "stopped", "failed", "interrupted"})


class CompareController(QObject):
    """Runs one compare. Columns are numbered as shown (in blind mode: the shuffled order).

    Signals:
        run_started(list): each column's shown name ("Model A"… while blind).
        column_started(int, str): column, its new reply id (a round, or a resend).
        column_text(int, str) / column_reasoning(int, str): column, text that arrived.
        column_phase(int, str): column, ``core.session.Phase`` value.
        column_retry(int, int, int, float, str, str): column, failed attempt, max attempts,
            seconds to the next, model, ErrorKind value.
        column_retry_cleared(int): the column's retry wait is over.
        column_finished(int, str, object): column, final status, its ColumnMetrics.
        column_failed(int, str, str, dict): column, ErrorKind value, message, plain extras.
        busy_changed(bool): whether a column is running (no follow-up until all are done).
        revealed(list): the model of each column, once a blind run was voted on.
        voted(object): the Vote stored.
        continued(str): the winner's branch is the conversation's path (conversation id).
        problem(str): something failed (a vote or export could not be written).
        exported(str): the path a run or a leaderboard was written to.
    """

    run_started = Signal(list)
    column_started = Signal(int, str)
    column_text = Signal(int, str)
    column_reasoning = Signal(int, str)
    column_phase = Signal(int, str)
    column_retry = Signal(int, int, int, float, str, str)
    column_retry_cleared = Signal(int)
    column_finished = Signal(int, str, object)
    column_failed = Signal(int, str, str, dict)
    busy_changed = Signal(bool)
    revealed = Signal(list)
    voted = Signal(object)
    continued = Signal(str)
    problem = Signal(str)
    exported = Signal(str)

    def __init__(
        self,
        chat: ChatController,
        *,
        votes: VoteBook | None = None,
        catalogue: Mapping[str, ModelInfo] | None = None,
        rng: random.Random | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._chat = chat
        self._votes = votes
        self.catalogue = dict(catalogue or {})
        self._rng = rng
        self.run: CompareRun | None = None
        self.vote: Vote | None = None
        self._session: ChatSession | None = None
        self._busy = False
        self._jobs = TaskKeeper("compare")
        self._connect(chat)

    def _connect(self, chat: ChatController) -> None:
        chat.turn_started.connect(self._on_turn_started)
        chat.turn_text_appended.connect(self._forward(self.column_text))
        chat.turn_reasoning_appended.connect(self._forward(self.column_reasoning))
        chat.turn_phase_changed.connect(self._forward(self.column_phase))
        chat.retry_scheduled.connect(self._on_retry_scheduled)
        chat.retry_cleared.connect(self._on_retry_cleared)
        chat.turn_finished.connect(self._on_turn_finished)
        chat.turn_failed.connect(self._on_turn_failed)
        chat.busy_changed.connect(lambda _busy: self._update_busy())

    # -- queries ---------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._busy

    @property
    def session(self) -> ChatSession | None:
        return self._session

    def message(self, column: int, *, round_index: int = -1) -> Message | None:
        """A column's reply in a round (default: the latest)."""
        if self.run is None or self._session is None or not self.run.rounds:
            return None
        reply_id = self.run.rounds[round_index].replies[column]
        return self._session.tree.get(reply_id) if reply_id in self._session.tree else None

    def metrics(self, column: int) -> ColumnMetrics | None:
        message = self.message(column)
        if message is None:
            return None
        return metrics_of(message, self.catalogue.get(message.model or ""))

    def round_done(self) -> bool:
        """Every column's latest reply has ended (a vote or a follow-up may come)."""
        if self.run is None or not self.run.rounds:
            return False
        messages = [self.message(c) for c in range(len(self.run.columns))]
        return all(m is not None and m.status in _FINAL for m in messages)

    def can_vote(self) -> bool:
        return self.run is not None and self.run.blind and self.vote is None and self.round_done()

    # -- sending -----------------------------------------------------------------------------

    def setup(self, columns: Sequence[ColumnSetup], *, blind: bool) -> None:
        """Columns for the next run (shuffled when blind); starts nothing yet."""
        if blind:
            order = blind_order(len(columns), self._rng)
            columns = [columns[i] for i in order]
        self.run = CompareRun(columns, blind=blind)
        self.vote = None
        self.run_started.emit([self.run.shown_name(c) for c in range(len(columns))])

    def reset(self) -> None:
        """Forget the run (its conversation stays in the history); the next send starts anew."""
        self.run, self.vote, self._session = None, None, None
        self._update_busy()

    def send(self, text: str, *, prompts: Sequence[str] | None = None) -> bool:
        """Send to every column: the first prompt starts a new conversation; later ones
        continue each column's own branch. ``prompts`` (first round only): each column's own
        prompt, e.g. a template filled with one row per column. False when nothing was sent."""
        run = self.run
        if run is None or not text.strip() or self._busy:
            return False
        session = self._session or self._fresh_session()
        if session is None or session.is_busy:
            return False
        specs = run.specs()
        if prompts is not None:
            if run.rounds or len(prompts) != len(specs):
                return False
            specs = [replace(spec, prompt=row) for spec, row in zip(specs, prompts, strict=True)]
        ids = session.send_compare(text, specs, after=run.last_replies())
        if ids is None:
            return False
        run.conversation_id = session.id
        run.add_round(text.strip(), ids)
        for column, reply_id in enumerate(ids):
            self.column_started.emit(column, reply_id)
        self._update_busy()
        return True

    def _fresh_session(self) -> ChatSession | None:
        """A compare starts in a conversation of its own (the current one if still empty)."""
        current = self._chat.session
        if current is None or current.tree.last() is not None or current.is_busy:
            self._chat.new_conversation()
        self._session = self._chat.session
        return self._session

    # -- per-column actions -----------------------------------------------------------------

    def _reply_id(self, column: int) -> str | None:
        if self.run is None or not self.run.rounds:
            return None
        return self.run.rounds[-1].replies[column]

    def retry_now(self, column: int) -> None:
        if self._session is not None and (mid := self._reply_id(column)) is not None:
            self._session.retry_now(mid)

    def wait_in_queue(self, column: int) -> None:
        if self._session is not None and (mid := self._reply_id(column)) is not None:
            self._session.wait_in_queue(mid)

    def cancel_retry(self, column: int) -> None:
        if self._session is not None and (mid := self._reply_id(column)) is not None:
            self._session.cancel_retry(mid)

    def stop(self, column: int) -> None:
        if self._session is not None and (mid := self._reply_id(column)) is not None:
            self._session.stop(mid)

    def switch_model(self, column: int, model: str) -> None:
        """Send a column waiting on capacity (or failed on its model) again with ``model``."""
        if self._session is None or self.run is None:
            return
        if (mid := self._reply_id(column)) is not None:
            self.run.set_model(column, model)
            self._session.switch_model(model, mid)

    def retry(self, column: int) -> None:
        """Retry a failed column: in place when it has no text, else as a new sibling."""
        session, message = self._session, self.message(column)
        if session is None or message is None or self.run is None:
            return
        if not (message.content or message.reasoning):
            session.retry_failed(message.id)
            return
        new_id = session.regenerate(message.id)
        if new_id is not None:
            self.run.replace_reply(column, new_id)
            self.column_started.emit(column, new_id)
            self._update_busy()

    def continue_with(self, column: int) -> bool:
        """Make this column's branch the conversation's path and show it in the chat view."""
        session, message = self._session, self.message(column)
        if session is None or message is None or self._busy:
            return False
        session.choose_branch(message.id)
        if message.model:  # the chat goes on with the column's model: every widget names it
            session.set_model(message.model)
        self._jobs.spawn(self._show_conversation(session.id), name="compare-continue")
        return True

    async def _show_conversation(self, conversation_id: str) -> None:
        await self._chat.open_conversation(conversation_id)
        self.continued.emit(conversation_id)

    # -- the blind vote ------------------------------------------------------------------

    def cast_vote(self, verdict: Verdict, winner: int | None = None) -> Vote | None:
        """Judge a blind run: stored in the votes file, then the models are revealed."""
        run = self.run
        if run is None or not self.can_vote():
            return None
        replies = run.rounds[-1].replies
        vote = Vote(
            models=tuple(c.model for c in run.columns),
            verdict=verdict,
            winner=winner,
            conversation_id=run.conversation_id or None,
            message_ids=tuple(replies),
        )
        self.vote = vote
        run.revealed = True
        if self._votes is not None:
            self._jobs.spawn(self._store_vote(self._votes, vote), name="store-vote")
        self.revealed.emit([c.model for c in run.columns])
        self.voted.emit(vote)
        return vote

    async def _store_vote(self, book: VoteBook, vote: Vote) -> None:
        try:
            await asyncio.to_thread(book.add, vote)
        except OSError as error:
            why = str(error) if error.strerror is None else f"{error.strerror}."
            self.problem.emit(" ".join([*book.problems, f"The vote could not be saved: {why}"]))
            return
        if book.problems:
            self.problem.emit(" ".join(book.problems))

    # -- export ----------------------------------------------------------------------------

    def record(self) -> dict[str, Any] | None:
        """The run as export data (prompts, columns, replies, metrics, vote)."""
        if self.run is None or self._session is None:
            return None
        tree = self._session.tree
        ids = {i for r in self.run.rounds for i in r.replies if i in tree}
        messages = {i: tree.get(i) for i in ids}
        return compare_record(self.run, messages, catalogue=self.catalogue, vote=self.vote)

    def export(self, path: Path, fmt: str) -> None:
        """Write the run as ``fmt`` ("csv" or "json") to ``path`` (off the GUI thread)."""
        record = self.record()
        if record is None:
            self.problem.emit("Nothing to export yet: send a prompt first.")
            return
        text = compare_csv(record) if fmt == "csv" else compare_json(record)
        self._jobs.spawn(self._write(path, text), name="compare-export")

    async def _write(self, path: Path, text: str) -> None:
        try:
            await asyncio.to_thread(path.write_text, text, encoding="utf-8")
        except OSError as error:
            self.problem.emit(f"Could not write {path.name}: {error.strerror or error}.")
            return
        self.exported.emit(str(path))

    # -- chat signals, filtered to this run's replies ---------------------------------------

    def _column(self, message_id: str) -> int | None:
        return self.run.column_of(message_id) if self.run is not None else None

    def _forward(self, signal: Any) -> Any:
        def forward(message_id: str, value: str) -> None:
            if (column := self._column(message_id)) is not None:
                signal.emit(column, value)

        return forward

    def _on_turn_started(self, _conversation_id: str, message_id: str) -> None:
        """A resend of a column (Wait in queue, Switch model…, Retry) starts its reply anew."""
        if (column := self._column(message_id)) is not None:
            self.column_started.emit(column, message_id)
            self._update_busy()

    def _on_retry_scheduled(
        self, message_id: str, attempt: int, most: int, seconds: float, model: str, kind: str
    ) -> None:
        if (column := self._column(message_id)) is not None:
            self.column_retry.emit(column, attempt, most, seconds, model, kind)

    def _on_retry_cleared(self, message_id: str) -> None:
        if (column := self._column(message_id)) is not None:
            self.column_retry_cleared.emit(column)

    def _on_turn_finished(self, message_id: str, data: Any) -> None:
        if (column := self._column(message_id)) is None:
            return
        message = self._session.tree.get(message_id) if self._session is not None else None
        if message is not None:
            info = self.catalogue.get(message.model or "")
            self.column_finished.emit(column, message.status, metrics_of(message, info))
        QTimer.singleShot(IDLE_CHECK_MS, self._update_busy)

    def _on_turn_failed(
        self, message_id: str, kind: str, message: str, extra: dict[str, Any]
    ) -> None:
        if (column := self._column(message_id)) is not None:
            self.column_failed.emit(column, kind, message, extra)

    def _update_busy(self) -> None:
        busy = self._session is not None and self._session.is_busy
        if busy and self.round_done():  # the last task is ending: look again soon
            QTimer.singleShot(IDLE_CHECK_MS, self._update_busy)
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)

    # -- lifetime --------------------------------------------------------------------------

    async def shutdown(self) -> None:
        await self._jobs.aclose()

    async def drain(self) -> None:
        await self._jobs.drain()
