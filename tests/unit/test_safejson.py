"""The safe JSON reader: json.loads's answers within a depth and size limit, its own error
type for everything else, and no lone surrogate in what it returns (issue 25, item 10)."""

from __future__ import annotations

import json

import pytest

from flarechat import safejson
from flarechat.safejson import JSONInputError


@pytest.mark.parametrize(
    "text",
    ['{"a": [1, 2.5, "x", null, true]}', "[]", '"plain"', "  7  ", '{"s": "\\ud83d\\ude00"}'],
)
def test_it_reads_what_json_loads_reads(text: str) -> None:
    assert safejson.loads(text) == json.loads(text)
    assert safejson.loads(text.encode()) == json.loads(text)


@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_nesting_a_hundred_thousand_deep_is_its_own_error_not_a_recursion_error(
    opener: str,
) -> None:
    closer = "]" if opener == "[" else "}"
    text = opener * 100_000 + "1" + closer * 100_000
    with pytest.raises(JSONInputError, match="nested more than 64 levels deep") as caught:
        safejson.loads(text)
    assert caught.value.pos == (64 if opener == "[" else 64 * len(opener))


def test_the_depth_limit_is_exact_and_brackets_in_strings_do_not_count() -> None:
    assert safejson.loads("[" * 64 + "]" * 64) is not None
    assert safejson.loads(json.dumps(["[[[[" * 100])) == ["[[[[" * 100]
    assert safejson.loads("[" * 3 + "]" * 3, max_depth=3) == [[[]]]
    with pytest.raises(JSONInputError):
        safejson.loads("[" * 4 + "]" * 4, max_depth=3)


def test_text_longer_than_the_limit_is_refused_before_it_is_parsed() -> None:
    with pytest.raises(JSONInputError, match="longer than 10 characters"):
        safejson.loads('"' + "x" * 20 + '"', max_chars=10)
    with pytest.raises(JSONInputError, match="longer than"):
        safejson.loads(b"[" + b"0," * 10 + b"0]", max_chars=10)


@pytest.mark.parametrize(
    ("text", "where"),
    [("{", (1, 2)), ('{"a": 1} x', (1, 10)), ("[1,\n2,]", (2, 3)), ("", (1, 1))],
)
def test_malformed_text_says_where(text: str, where: tuple[int, int]) -> None:
    with pytest.raises(JSONInputError) as caught:
        safejson.loads(text)
    assert (caught.value.lineno, caught.value.colno) == where


def test_a_number_with_too_many_digits_is_its_own_error() -> None:
    with pytest.raises(JSONInputError, match="cannot be read"):
        safejson.loads("1" * 5000)


def test_a_lone_surrogate_escape_reads_as_the_replacement_character() -> None:
    value = safejson.loads('{"a": "x\\ud800y", "b": "\\udc00", "c": "\\\\ud800", "d": "\\uDBFF"}')
    assert value == {"a": "x\ufffdy", "b": "\ufffd", "c": "\\ud800", "d": "\ufffd"}
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # encodable: raises otherwise


def test_undecodable_bytes_read_as_the_replacement_character() -> None:
    assert safejson.loads(b'"a\xffb"') == "a\ufffdb"
    assert safejson.loads(b'\xef\xbb\xbf{"bom": 1}') == {"bom": 1}


def test_its_error_is_a_json_decode_error_so_existing_handlers_catch_it() -> None:
    assert issubclass(JSONInputError, json.JSONDecodeError)
    assert issubclass(JSONInputError, ValueError)


def test_scrub_surrogates_leaves_good_text_alone() -> None:
    assert safejson.scrub_surrogates("caf\u00e9 \U0001f600") == "caf\u00e9 \U0001f600"
    assert safejson.scrub_surrogates("a\ud800b\udfff") == "a\ufffdb\ufffd"


_WHOLE = '{"success": true, "result": [{"name": "@cf/a/b", "tags": ["x", "y"]}], "n": 12.5}'


@pytest.mark.parametrize("cut", range(1, len(_WHOLE)))
def test_every_cut_off_start_of_a_document_reads_as_ended_early(cut: int) -> None:
    with pytest.raises(JSONInputError) as raised:
        safejson.loads(_WHOLE[:cut] + "\n")
    assert safejson.ended_early(raised.value), _WHOLE[:cut]


@pytest.mark.parametrize(
    "text",
    ["", "   ", "nope", '{"a": 1}}', '{"a" 1}', '["\x01"]', "[1, e", "[1 .]", "[" * 99 + "]" * 99],
)
def test_text_that_is_wrong_rather_than_short_did_not_end_early(text: str) -> None:
    with pytest.raises(JSONInputError) as raised:
        safejson.loads(text)
    assert not safejson.ended_early(raised.value)
