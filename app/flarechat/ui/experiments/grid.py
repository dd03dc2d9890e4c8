"""A run's results as a table: rows are cases, columns are variants, the last row sums up.

The model holds the finished cells only (it fills as a live run reports them); the summary
row is ``reports.summarise`` over those cells, never a second computation here. A proxy
filters to failed cases or to cases whose text holds a query. Cells are plain data for a
``QTableView`` (no per-cell widgets), so a grid of thousands of cells scrolls freely.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)

from flarechat.core.experiments import reports
from flarechat.core.experiments.runner import CellResult, RunResult

_Index = QModelIndex | QPersistentModelIndex
#: the role under which a case cell gives its ``CellResult`` (None in the summary row)
RESULT_ROLE = Qt.ItemDataRole.UserRole + 1
#: the role under which a row gives whether any of its cells failed
FAILED_ROLE = Qt.ItemDataRole.UserRole + 2


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def verdict_text(result: CellResult) -> str:
    """What a cell shows: PASS/FAIL (or why there is no verdict), its score, its first line."""
    if result.passed is None:
        return result.error or result.status.replace("_", " ")
    mark = "PASS" if result.passed else "FAIL"
    score = f" {result.score:.2f}" if result.score is not None else ""
    line = _first_line(result.observation.text) if result.observation else ""
    return f"{mark}{score}  {line}"


def _figure(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def tooltip_text(result: CellResult) -> str:
    seen = result.observation
    if seen is None:
        return result.error or result.status
    tokens = f"{seen.prompt_tokens or 0} in / {seen.completion_tokens or 0} out"
    return (
        f"TTFT {_figure(seen.ttft_ms, '.0f')} ms, total {_figure(seen.total_ms, '.0f')} ms\n"
        f"tokens {tokens}\n"
        f"neurons {_figure(seen.neurons, '.1f')}, "
        f"cost {'-' if seen.usd is None else f'${seen.usd:.5f}'}"
    )


def summary_text(summary: reports.VariantSummary) -> str:
    rate = summary.pass_rate
    shown = "-" if rate is None else f"{rate:.0%}"
    return (
        f"{shown} ({summary.low:.0%}-{summary.high:.0%}) of {summary.graded}, "
        f"mean {_figure(summary.mean_score, '.2f')}, ${summary.usd:.4f}, "
        f"p50 {_figure(summary.p50_ms, '.0f')} / p95 {_figure(summary.p95_ms, '.0f')} ms"
    )


class ResultsModel(QAbstractTableModel):
    """Cases x variants of one run, plus a summary row per variant at the bottom."""

    def __init__(self, run: RunResult) -> None:
        super().__init__()
        self._run = replace(run, results=[])
        self._variants = [v.name for v in run.experiment.variants]
        self._rows = [
            (i, r) for i in range(len(run.experiment.cases)) for r in range(run.experiment.repeat)
        ]
        self._row_of = {key: n for n, key in enumerate(self._rows)}
        self._cells: dict[tuple[int, int, str], CellResult] = {}
        self._summaries: dict[str, reports.VariantSummary] = {}
        self.add_all(run.results)

    @property
    def summary_row(self) -> int:
        return len(self._rows)

    def add_all(self, results: list[CellResult]) -> None:
        """Take many finished cells at once (one reset, one summary)."""
        self.beginResetModel()
        for result in results:
            self._put(result)
        self._summarise()
        self.endResetModel()

    def add(self, result: CellResult) -> None:
        """Take one finished cell: its cell and the summary row change."""
        self._put(result)
        self._summarise()
        cell = result.cell
        row = self._row_of.get((cell.case_index, cell.repeat))
        column = self._variants.index(cell.variant.name)
        if row is not None:
            at = self.index(row, column)
            self.dataChanged.emit(at, at)
        left, right = (
            self.index(self.summary_row, 0),
            self.index(self.summary_row, len(self._variants) - 1),
        )
        self.dataChanged.emit(left, right)

    def _put(self, result: CellResult) -> None:
        cell = result.cell
        self._cells[(cell.case_index, cell.repeat, cell.variant.name)] = result

    def _summarise(self) -> None:
        self._run.results = list(self._cells.values())
        self._summaries = {s.variant: s for s in reports.summarise(self._run)}

    def result_at(self, row: int, column: int) -> CellResult | None:
        if not 0 <= row < len(self._rows) or not 0 <= column < len(self._variants):
            return None
        case, repeat = self._rows[row]
        return self._cells.get((case, repeat, self._variants[column]))

    def case_text(self, row: int) -> str:
        if row >= len(self._rows):
            return "Summary"
        case, repeat = self._rows[row]
        values = self._run.experiment.cases[case].vars
        label = ", ".join(f"{k}={v}" for k, v in values.items()) or f"case {case + 1}"
        return f"{label} #{repeat + 1}" if self._run.experiment.repeat > 1 else label

    # -- Qt ------------------------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._rows) + 1

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._variants)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return self._variants[section] if section < len(self._variants) else None
        return self.case_text(section)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        if row == self.summary_row:
            summary = self._summaries.get(self._variants[column])
            if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                return summary_text(summary) if summary else "-"
            return None
        result = self.result_at(row, column)
        if role == RESULT_ROLE:
            return result
        if role == FAILED_ROLE:
            return any(
                r is not None and r.passed is False
                for r in (self.result_at(row, c) for c in range(len(self._variants)))
            )
        if result is None:
            return "…" if role == Qt.ItemDataRole.DisplayRole else None
        if role == Qt.ItemDataRole.DisplayRole:
            return verdict_text(result)
        if role == Qt.ItemDataRole.ToolTipRole:
            return tooltip_text(result)
        return None


class ResultsFilter(QSortFilterProxyModel):
    """Failed cases only, and/or cases whose text holds a query; the summary row always shows."""

    def __init__(self) -> None:
        super().__init__()
        self._failed_only = False
        self._query = ""

    def set_failed_only(self, on: bool) -> None:
        self.beginFilterChange()
        self._failed_only = on
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def set_query(self, text: str) -> None:
        self.beginFilterChange()
        self._query = text.strip().casefold()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: _Index) -> bool:
        model = self.sourceModel()
        if not isinstance(model, ResultsModel) or source_row == model.summary_row:
            return True
        if self._failed_only and not model.index(source_row, 0).data(FAILED_ROLE):
            return False
        return not self._query or self._query in model.case_text(source_row).casefold()
