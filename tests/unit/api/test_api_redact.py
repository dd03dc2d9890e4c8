"""Token redaction: never in str/repr/detail of an exception, nor in any log record."""

from __future__ import annotations

import json
import logging
import traceback

import httpx
import pytest
from api_helpers import GATEWAY_TOKEN, TOKEN, Recorder, chat, collect, mock_conn, reply, sse

from conftest import ClientFactory
from flarechat.api import redact
from flarechat.api._errors_map import DETAIL_LIMIT, classify
from flarechat.api._redact import REDACTED
from flarechat.api.config import Route, Secret
from flarechat.api.errors import BadRequest, ConnectionFailed, WorkersAIError


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
