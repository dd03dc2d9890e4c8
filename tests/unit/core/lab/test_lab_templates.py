"""Template variables are found as typed, filled once, and a list of values (lines or CSV)
becomes one filled prompt per row."""

from __future__ import annotations

import pytest

from flarechat.core.lab.templates import (
    RowsError,
    Template,
    fill,
    fill_rows,
    missing,
    variables,
)


def test_variables_in_order_of_first_appearance_without_repeats() -> None:
    text = "Translate {{text}} into {{ language }}; keep {{text}} short. {{not a var}} {x}"
    assert variables(text) == ["text", "language"]


def test_no_variables_in_plain_text_or_half_typed_braces() -> None:
    assert variables("Hello {{name") == []
    assert variables("{{}} and {{ 1abc }}") == []


def test_fill_replaces_known_and_leaves_unknown_as_typed() -> None:
    assert fill("Hi {{name}}, from {{ city }}", {"name": "Ada"}) == "Hi Ada, from {{ city }}"


def test_a_value_holding_braces_is_not_filled_again() -> None:
    assert fill("{{a}} {{b}}", {"a": "{{b}}", "b": "B"}) == "{{b}} B"


def test_missing_names_blank_values() -> None:
    assert missing("{{a}} {{b}} {{c}}", {"a": "x", "b": "  "}) == ["b", "c"]


def test_one_variable_takes_each_non_blank_line_whole() -> None:
    rows = fill_rows("Capital of {{country}}?", "France\n\n  Paris, Texas  \nJapan\n")
    assert [r.text for r in rows] == [
        "Capital of France?",
        "Capital of Paris, Texas?",
        "Capital of Japan?",
    ]
    assert [r.row for r in rows] == [1, 3, 4]  # the lines they came from, blanks skipped


def test_csv_with_quotes_commas_and_line_breaks_inside_quotes() -> None:
    text = 'English,French\n"Hello, world","Bonjour, le monde"\n\n"two\nlines",""" quoted """\n'
    template = Template("t1", "Translate", "{{English}} -> {{French}}")
    rows = fill_rows(template, text)
    assert [r.values for r in rows] == [
        {"English": "Hello, world", "French": "Bonjour, le monde"},
        {"English": "two\nlines", "French": '" quoted "'},
    ]
    assert rows[1].row == 4


def test_a_header_row_may_name_the_columns_in_any_order() -> None:
    rows = fill_rows("{{a}}+{{b}}", "b,a\n2,1\n")
    assert [r.text for r in rows] == ["1+2"]


def test_without_a_header_cells_follow_the_variables_order() -> None:
    rows = fill_rows("{{a}}+{{b}}", "1,2\n3, 4\n")
    assert [r.text for r in rows] == ["1+2", "3+4"]


def test_a_row_with_the_wrong_number_of_cells_names_its_line() -> None:
    with pytest.raises(RowsError, match="Row 2 has 3 value"):
        fill_rows("{{a}}+{{b}}", "1,2\n1,2,3\n")


def test_a_template_without_variables_cannot_take_rows() -> None:
    with pytest.raises(RowsError, match="no"):
        fill_rows("Just text", "x\ny")


def test_no_rows_gives_no_prompts() -> None:
    assert fill_rows("{{a}}", "\n \n") == []
