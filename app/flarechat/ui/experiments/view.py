"""The results grid's view with its filter bar, and a cell's detail dialog."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from flarechat.core.experiments.runner import CellResult, RunResult
from flarechat.ui.experiments.grid import RESULT_ROLE, ResultsFilter, ResultsModel, tooltip_text


def detail_text(result: CellResult) -> str:
    """The whole reply, then each assertion's verdict and reason."""
    lines = [f"{result.cell.variant.name} / case {result.cell.case_index + 1}", ""]
    if result.error:
        lines += [f"Error: {result.error}", ""]
    if result.observation is not None:
        lines += [result.observation.text, "", tooltip_text(result), ""]
    for verdict in result.verdicts:
        mark = "PASS" if verdict.passed else "FAIL"
        lines.append(f"{mark} {verdict.type} ({verdict.score:.2f}): {verdict.reason}")
    return "\n".join(lines)


class CellDialog(QDialog):
    """A cell opened: its reply in full and every assertion's verdict."""

    def __init__(self, result: CellResult, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Cell result")
        self.text = QPlainTextEdit(detail_text(result))
        self.text.setReadOnly(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
        self.resize(560, 420)


class ResultsView(QWidget):
    """The grid of a run, a "Failed only" box and a case filter above it."""

    def __init__(self, run: RunResult, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ResultsModel(run)
        self.filter = ResultsFilter()
        self.filter.setSourceModel(self.model)
        self.failed_only = QCheckBox("Failed only")
        self.failed_only.toggled.connect(self.filter.set_failed_only)
        self.query = QLineEdit()
        self.query.setPlaceholderText("Filter cases…")
        self.query.textChanged.connect(self.filter.set_query)
        self.table = QTableView()
        self.table.setModel(self.filter)
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.verticalHeader().setSectionResizeMode(
            self.table.verticalHeader().ResizeMode.Fixed
        )
        self.table.horizontalHeader().setDefaultSectionSize(260)
        self.table.setWordWrap(False)
        self.table.doubleClicked.connect(self.open_cell)
        self.dialog: CellDialog | None = None
        bar = QHBoxLayout()
        bar.addWidget(self.failed_only)
        bar.addWidget(self.query, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.table)

    def open_cell(self, index: QModelIndex) -> CellDialog | None:
        result = index.data(RESULT_ROLE)
        if not isinstance(result, CellResult):
            return None
        self.dialog = CellDialog(result, self)
        self.dialog.show()
        return self.dialog
