"""Prompt templates with ``{{variables}}``: finding the variables, filling them, and turning a
list of values (one row per line, or CSV) into one filled prompt per row."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass, field

from flarechat.core.lab.variables import fill, missing, variables

__all__ = [
    "FilledPrompt",
    "RowsError",
    "Template",
    "fill",
    "fill_rows",
    "missing",
    "variables",
]

#: Cells of one CSV record are joined back with this when the template has one variable,
#: so "Paris, France" stays one value unless the user quoted cells on purpose.
_CELL_JOIN = ","


@dataclass(frozen=True, slots=True)
class Template:
    """A saved template; ``values`` are the last values filled in, remembered per template;
    ``auto_name`` as a SavedPrompt's."""

    id: str
    name: str
    text: str
    values: Mapping[str, str] = field(default_factory=dict)
    auto_name: bool = False


@dataclass(frozen=True, slots=True)
class FilledPrompt:
    """One row's prompt: the filled ``text``, the ``values`` used, and the 1-based ``row``."""

    text: str
    values: Mapping[str, str]
    row: int


class RowsError(ValueError):
    """The rows cannot fill the template; the message names the row and what is wrong."""


def _records(text: str) -> list[tuple[int, list[str]]]:
    """CSV records with the line each starts on; blank records are skipped."""
    reader = csv.reader(io.StringIO(text))
    records: list[tuple[int, list[str]]] = []
    start = 1
    try:
        for cells in reader:
            if any(cell.strip() for cell in cells):
                records.append((start, cells))
            start = reader.line_num + 1
    except csv.Error as error:
        raise RowsError(f"Row {start}: {error}.") from error
    return records


def _header(cells: list[str], names: list[str]) -> list[str] | None:
    """The column order when the first record names exactly the template's variables."""
    stripped = [cell.strip() for cell in cells]
    return stripped if sorted(stripped) == sorted(names) and len(names) > 1 else None


def _row_values(cells: list[str], columns: list[str], line: int) -> dict[str, str]:
    if len(columns) == 1:
        return {columns[0]: _CELL_JOIN.join(cells).strip()}
    if len(cells) != len(columns):
        raise RowsError(
            f"Row {line} has {len(cells)} value(s); the template needs {len(columns)} "
            f"({', '.join(columns)})."
        )
    return {name: cell.strip() for name, cell in zip(columns, cells, strict=True)}


def fill_rows(template: Template | str, text: str) -> list[FilledPrompt]:
    """One filled prompt per row of ``text``: the compare view runs one column per row.

    Rows are CSV records (quotes, commas and line breaks inside quotes as in a spreadsheet
    export); blank lines are skipped. With one variable a whole line is its value. With more,
    the cells go to the variables in order of appearance, or by a header row naming them all.
    Raises ``RowsError`` when a row has the wrong number of cells or the template has no
    variables.
    """
    body = template.text if isinstance(template, Template) else template
    names = variables(body)
    if not names:
        raise RowsError("The template has no {{variables}} to fill.")
    records = _records(text)
    columns = names
    if records and (header := _header(records[0][1], names)) is not None:
        columns, records = header, records[1:]
    filled = []
    for line, cells in records:
        values = _row_values(cells, columns, line)
        filled.append(FilledPrompt(fill(body, values), values, line))
    return filled
