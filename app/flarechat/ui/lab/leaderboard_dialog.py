"""The leaderboard dialog: blind votes ranked per model (rating ± 95 %, win rate, votes), with
export as CSV or JSON and export/import of the votes themselves."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from flarechat.core.lab.leaderboard import Standing, rank, standings_csv, standings_json
from flarechat.core.lab.votes import (
    Vote,
    VoteBook,
    VotesFormatError,
    appearances,
    games_of,
    parse_votes,
    votes_json,
)
from flarechat.core.tasks import TaskKeeper
from flarechat.paths import MAX_IMPORT_BYTES, read_regular_file

__all__ = ["COLUMNS", "LeaderboardDialog", "standings_of"]

COLUMNS = ("#", "Model", "Rating", "± 95 %", "Win rate", "Votes", "Won", "Tied", "Lost")
DIALOG_SIZE = (760, 420)
EMPTY_TEXT = "No votes yet. Compare in blind mode and vote to build the leaderboard."
EXPLAIN = (
    "Ratings are Bradley\N{EN DASH}Terry on the Elo scale (400 points = 10:1 odds), centred on "
    "1000; ties and \N{LEFT DOUBLE QUOTATION MARK}all bad\N{RIGHT DOUBLE QUOTATION MARK} count "
    "as half a win. Only your own blind votes on this computer are counted."
)
_FILTERS = {"csv": "CSV files (*.csv)", "json": "JSON files (*.json)"}


def standings_of(votes: list[Vote]) -> list[Standing]:
    return rank([g for v in votes for g in games_of(v)], votes=appearances(votes))


def _cells(row: Standing) -> list[str]:
    return [
        str(row.rank),
        row.model,
        f"{row.rating:.0f}",
        f"\N{PLUS-MINUS SIGN}{row.margin:.0f}",
        f"{row.win_rate:.0%}",
        str(row.votes),
        str(row.wins),
        str(row.ties),
        str(row.losses),
    ]


class LeaderboardDialog(QDialog):
    """Shows the votes file as a ranked table; everything touching the file runs off the GUI
    thread."""

    def __init__(self, book: VoteBook, *, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Leaderboard")
        self.setAccessibleName("Leaderboard")
        self.book = book
        self.votes: list[Vote] = []
        self.standings: list[Standing] = []
        self._jobs = TaskKeeper("leaderboard")
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.setAccessibleName("Standings")
        self.note = QLabel(EXPLAIN, self)
        self.note.setWordWrap(True)
        self.status = QLabel("", self)
        self.status.setAccessibleName("Leaderboard status")
        self._build_buttons()
        self.resize(*DIALOG_SIZE)

    def _build_buttons(self) -> None:
        row = QHBoxLayout()
        actions = [
            ("Export CSV\N{HORIZONTAL ELLIPSIS}", partial(self.ask_export, "csv")),
            ("Export JSON\N{HORIZONTAL ELLIPSIS}", partial(self.ask_export, "json")),
            ("Export votes\N{HORIZONTAL ELLIPSIS}", partial(self.ask_export, "votes")),
            ("Import votes\N{HORIZONTAL ELLIPSIS}", self.ask_import),
        ]
        for label, slot in actions:
            button = QPushButton(label, self)
            button.setAccessibleName(label.rstrip("\N{HORIZONTAL ELLIPSIS}"))
            button.clicked.connect(slot)
            row.addWidget(button)
        row.addStretch(1)
        close = QPushButton("Close", self)
        close.clicked.connect(self.close)
        row.addWidget(close)
        box = QVBoxLayout(self)
        box.addWidget(self.table, 1)
        box.addWidget(self.note)
        box.addWidget(self.status)
        box.addLayout(row)

    # -- data ------------------------------------------------------------------------------

    def reload(self) -> None:
        self._jobs.spawn(self._load(), name="load-votes")

    async def _load(self) -> None:
        try:
            votes = await asyncio.to_thread(self.book.load)
        except OSError as error:
            self.status.setText(f"The votes could not be read: {error.strerror or error}.")
            return
        self.show_votes(votes)
        if self.book.problems:  # the file was set aside or is a newer version's
            self.status.setText(" ".join([*self.book.problems, self.status.text()]))

    def show_votes(self, votes: list[Vote]) -> None:
        self.votes = votes
        self.standings = standings_of(votes)
        self.table.setRowCount(len(self.standings))
        for r, row in enumerate(self.standings):
            for c, text in enumerate(_cells(row)):
                item = QTableWidgetItem(text)
                if c != 1:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        count = len(votes)
        self.status.setText(f"{count} vote{'s' if count != 1 else ''}" if votes else EMPTY_TEXT)

    # -- export and import -----------------------------------------------------------------

    def export_text(self, fmt: str) -> str:
        if fmt == "votes":
            return votes_json(self.votes)
        return standings_csv(self.standings) if fmt == "csv" else standings_json(self.standings)

    def ask_export(self, fmt: str) -> QFileDialog:
        suffix = "csv" if fmt == "csv" else "json"
        name = "flarechat-votes.json" if fmt == "votes" else f"leaderboard.{suffix}"
        dialog = QFileDialog(self, "Export votes" if fmt == "votes" else "Export leaderboard")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilter(_FILTERS[suffix])
        dialog.setDefaultSuffix(suffix)
        dialog.selectFile(name)
        dialog.fileSelected.connect(lambda path: self.export(Path(path), fmt))
        dialog.open()
        return dialog

    def export(self, path: Path, fmt: str) -> None:
        self._jobs.spawn(self._write(path, self.export_text(fmt)), name="export-leaderboard")

    async def _write(self, path: Path, text: str) -> None:
        try:
            await asyncio.to_thread(path.write_text, text, encoding="utf-8")
        except OSError as error:
            self.status.setText(f"Could not write {path.name}: {error.strerror or error}.")
            return
        self.status.setText(f"Saved {path.name}.")

    def ask_import(self) -> QFileDialog:
        dialog = QFileDialog(self, "Import votes")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.setNameFilter(_FILTERS["json"])
        dialog.fileSelected.connect(lambda path: self.import_votes(Path(path)))
        dialog.open()
        return dialog

    def import_votes(self, path: Path) -> None:
        self._jobs.spawn(self._import(path), name="import-votes")

    async def _import(self, path: Path) -> None:
        try:
            raw = await asyncio.to_thread(read_regular_file, path, limit=MAX_IMPORT_BYTES)
            added = await asyncio.to_thread(self.book.merge, parse_votes(raw.decode("utf-8")))
        except (OSError, UnicodeDecodeError, VotesFormatError) as error:
            self.status.setText(f"Could not import {path.name}: {error}")
            return
        await self._load()
        self.status.setText(f"Imported {added} new vote{'s' if added != 1 else ''}.")

    async def drain(self) -> None:
        await self._jobs.drain()
