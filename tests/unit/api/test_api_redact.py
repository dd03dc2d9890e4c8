"""Token redaction: never in str/repr/detail of an exception, nor in any log record."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import traceback
from urllib.parse import quote, quote_plus

import httpx
import pytest
from api_helpers import (
    GATEWAY_TOKEN,
    TOKEN,
    Recorder,
    chat,
    collect,
    mock_conn,
    reply,
    sse,
)

from conftest import ClientFactory, ServerFactory
from flarechat.api import redact
from flarechat.api._errors_map import DETAIL_LIMIT, classify
from flarechat.api._redact import REDACTED, StreamRedactor, redact_value, secret_variants
from flarechat.api.config import Route, Secret
from flarechat.api.errors import BadRequest, ConnectionFailed, WorkersAIError
from support.hostile import HostileServer, http_head


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"token={TOKEN}", f"token={REDACTED}"),
        ("Authorization: Bearer abc.def-123", f"Authorization: Bearer {REDACTED}"),
        ('{"authorization":"bearer XYZ987"}', f'{{"authorization":"bearer {REDACTED}"}}'),
        ("BEARER%20secret-value&x=1", f"BEARER {REDACTED}&x=1"),
        ("an account token cfat_AbC123-_x here", f"an account token {REDACTED} here"),
        ("nothing to hide", "nothing to hide"),
    ],
)
def test_redact_patterns(text: str, expected: str) -> None:
    assert redact(text, [TOKEN]) == expected


def test_redact_accepts_secrets_and_skips_empty_ones() -> None:
    assert redact("a-long-secret and a-long", [Secret("a-long-secret"), "", None]) == (
        f"{REDACTED} and a-long"
    )


def test_longer_secret_is_removed_whole() -> None:
    assert redact("xx-secret-yy", ["secret", "xx-secret-yy"]) == REDACTED


def _assert_clean(error: WorkersAIError, *tokens: str) -> None:
    for token in tokens:
        for text in (str(error), repr(error), error.message, error.detail or ""):
            assert token not in text


def _echo_headers(request: httpx.Request) -> httpx.Response:
    """A misbehaving server that echoes every request header back in its error message."""
    echoed = "; ".join(f"{k}: {v}" for k, v in request.headers.items())
    body = {
        "errors": [{"code": 5006, "message": f"AiError: Bad input: {echoed}"}],
        "success": False,
    }
    return httpx.Response(400, json=body)


def test_classify_redacts_an_echoed_authorization_header() -> None:
    body = json.dumps(
        {"errors": [{"code": 5006, "message": f"Bad header Authorization: Bearer {TOKEN}"}]}
    )
    error = classify(status=400, body=body, secrets=[TOKEN])
    _assert_clean(error, TOKEN)
    assert REDACTED in error.message
    assert error.detail
    assert REDACTED in error.detail


@pytest.mark.asyncio
async def test_errors_and_logs_never_contain_either_token(
    make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    conn = mock_conn(route=Route.GATEWAY_URL, gateway_id="gw", gateway_token=Secret(GATEWAY_TOKEN))
    client = make_client(_echo_headers)
    with (
        caplog.at_level(logging.DEBUG, logger="flarechat.api"),
        pytest.raises(BadRequest) as caught,
    ):
        await collect(client, conn, chat())
    _assert_clean(caught.value, TOKEN, GATEWAY_TOKEN)
    assert "authorization" in (caught.value.detail or "").lower(), "the echo itself is kept"
    assert caplog.records, "the failure is logged"
    for record in caplog.records:
        assert TOKEN not in record.getMessage()
        assert GATEWAY_TOKEN not in record.getMessage()


@pytest.mark.asyncio
async def test_a_token_in_a_network_error_is_redacted(make_client: ClientFactory) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"proxy said: {request.headers['authorization']}")

    with pytest.raises(ConnectionFailed) as caught:
        await collect(make_client(handler), mock_conn(), chat())
    _assert_clean(caught.value, TOKEN)
    printed = "".join(traceback.format_exception(caught.value))
    assert "ConnectError" in (caught.value.detail or "")
    assert TOKEN not in printed


def test_a_token_straddling_the_detail_limit_is_not_half_kept() -> None:
    body = "x" * (DETAIL_LIMIT - 10) + GATEWAY_TOKEN
    error = classify(status=500, body=body, secrets=[GATEWAY_TOKEN])
    assert error.detail is not None
    assert GATEWAY_TOKEN[:10] not in error.detail


@pytest.mark.asyncio
async def test_a_token_in_an_error_event_is_redacted(make_client: ClientFactory) -> None:
    body = sse({"errors": [{"code": 3040, "message": f"busy for Bearer {TOKEN}"}]})
    with pytest.raises(WorkersAIError) as caught:
        await collect(make_client(Recorder(reply(body))), mock_conn(), chat())
    _assert_clean(caught.value, TOKEN)


def test_secret_never_shows_itself() -> None:
    secret = Secret(TOKEN)
    assert TOKEN not in repr(secret)
    assert TOKEN not in str(secret)
    assert TOKEN not in repr(mock_conn())


#: A token with characters that base64, percent-encoding and regexes all treat specially.
AWKWARD = "t0k+en/with?=&.*[x](y)|^$%20~"


def _encodings(token: str) -> dict[str, str]:
    raw = token.encode()
    std, url = base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()
    return {
        "raw": token,
        "base64": std,
        "base64 unpadded": std.rstrip("="),
        "urlsafe base64": url,
        "urlsafe base64 unpadded": url.rstrip("="),
        "quote": quote(token, safe=""),
        "quote default": quote(token),
        "quote_plus": quote_plus(token),
        "quote lower hex": quote(token, safe="").lower(),
    }


@pytest.mark.parametrize("form", sorted(_encodings(AWKWARD)))
def test_every_encoding_of_a_token_is_redacted(form: str) -> None:
    encoded = _encodings(AWKWARD)[form]
    assert redact(f"x-echo: <{encoded}>", [AWKWARD]) == f"x-echo: <{REDACTED}>"


def test_regex_specials_in_a_token_match_only_themselves() -> None:
    assert redact("a.b*c and axbbc", ["a.b*c"]) == f"{REDACTED} and axbbc"


def test_tokens_that_are_substrings_of_each_other_leave_nothing_behind() -> None:
    secrets = ["abcdef", "defghi", "cde", "abcdefghi-long"]
    for text in ("abcdefghi", "xxabcdefghi-longyy", "cde abcdef defghi"):
        cleaned = redact(text, secrets)
        for piece in ("abc", "cde", "ghi"):
            assert piece not in cleaned, (text, cleaned)
    assert redact("abcdefghi", secrets) == REDACTED


@pytest.mark.parametrize(
    "text",
    [
        f"Authorization: Bearer {TOKEN}",
        f"Bearer%20{TOKEN}&next=1",
        f'{{"auth":"bearer {GATEWAY_TOKEN}"}}',
        f"{TOKEN}, {GATEWAY_TOKEN}; {TOKEN}",
        "Bearer [REDACTED] already",
    ],
)
def test_redaction_is_idempotent_and_never_stacks_brackets(text: str) -> None:
    once = redact(text, [TOKEN, GATEWAY_TOKEN])
    assert redact(once, [TOKEN, GATEWAY_TOKEN]) == once
    assert f"{REDACTED}]" not in once
    assert "[[" not in once


def test_brackets_around_a_token_are_kept_exactly() -> None:
    text = f"[{TOKEN}] ({GATEWAY_TOKEN})"
    assert redact(text, [TOKEN, GATEWAY_TOKEN]) == f"[{REDACTED}] ({REDACTED})"


def test_a_short_secret_inside_the_marker_is_left_alone() -> None:
    once = redact("ACT now", ["ACT"])
    assert once == f"{REDACTED} now"
    assert redact(once, ["ACT"]) == once


def test_secret_variants_are_built_once_longest_first() -> None:
    variants = secret_variants([AWKWARD, None, ""])
    assert secret_variants([AWKWARD]) is variants
    assert set(_encodings(AWKWARD).values()) <= set(variants)
    assert [len(v) for v in variants] == sorted((len(v) for v in variants), reverse=True)


@pytest.mark.asyncio
async def test_verbose_logs_never_show_an_echoed_token_in_response_headers(
    make_client: ClientFactory, hostile: ServerFactory, caplog: pytest.LogCaptureFixture
) -> None:
    token = AWKWARD
    echoed = {f"x-echo-{i}": v for i, v in enumerate(_encodings(token).values())}

    async def echo_in_headers(
        server: HostileServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await server.read_request(reader)
        body = sse({"response": "ok"})
        head = {"content-type": "text/event-stream", "content-length": str(len(body)), **echoed}
        await server.send(writer, http_head(200, head) + body)

    server = await hostile(echo_in_headers)
    conn = mock_conn(api_base=server.api_base, token=Secret(token))
    with caplog.at_level(logging.DEBUG):  # what `flarechat ask -v` turns on
        await collect(make_client(), conn, chat())
    assert any(r.name.startswith("httpcore") for r in caplog.records), "httpcore logged headers"
    assert "x-echo-0" in caplog.text
    for form, value in _encodings(token).items():
        assert value not in caplog.text, form


@pytest.mark.parametrize("cut", range(1, len(TOKEN)))
def test_a_token_split_across_stream_pieces_is_redacted(cut: int) -> None:
    stream = StreamRedactor([TOKEN])
    pieces = ["say ", TOKEN[:cut], TOKEN[cut:], " now"]
    shown = "".join(stream.feed(piece) for piece in pieces) + stream.flush()
    assert shown == f"say {REDACTED} now"


def test_stream_redaction_holds_nothing_back_from_text_that_ends_like_no_token() -> None:
    stream = StreamRedactor([TOKEN])
    assert stream.feed("Hello, world. ") == "Hello, world. "
    assert stream.flush() == ""


def test_redact_value_redacts_every_string_of_a_parsed_body() -> None:
    body = {"result": [{"name": f"m-{TOKEN}", TOKEN: [1, f"Bearer {TOKEN}"]}], "n": 3}
    assert redact_value(body, [TOKEN]) == {
        "result": [{"name": f"m-{REDACTED}", REDACTED: [1, f"Bearer {REDACTED}"]}],
        "n": 3,
    }
