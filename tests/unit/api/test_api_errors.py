"""Error classification: every body shape and code to the tree, Retry-After, network failures."""

from __future__ import annotations

import json
import ssl
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import Recorder, chat, collect, mock_conn, reply

from conftest import ClientFactory
from flarechat.api import _messages as msg
from flarechat.api._errors_map import classify, clean_server_message, parse_retry_after
from flarechat.api.errors import (
    AuthenticationFailed,
    BadRequest,
    CapacityExceeded,
    ConnectionFailed,
    DailyAllocationExhausted,
    GatewayAuthenticationFailed,
    GatewayError,
    ModelUnavailable,
    RateLimited,
    RequestTimedOut,
    RequestTooLarge,
    ServerError,
    TermsNotAccepted,
    TLSFailed,
    UpstreamTimeout,
    WorkersAIError,
    next_utc_midnight,
)

UUID = "bd40edba-1b4f-4c43-a6b1-0c5e3f3a9a11"


def v4_inference(code: int, message: str) -> str:
    return json.dumps(
        {
            "errors": [{"message": message, "code": code}],
            "success": False,
            "result": {},
            "messages": [],
        }
    )


def v4_edge(code: int, message: str) -> str:
    return json.dumps(
        {
            "result": None,
            "success": False,
            "errors": [{"code": code, "message": message}],
            "messages": [],
        }
    )


def gateway(code: int, message: str, http: int) -> str:
    return json.dumps(
        {
            "success": False,
            "result": [],
            "messages": [],
            "error": [{"code": code, "message": message}],
            "name": "AiGatewayError",
            "httpCode": http,
            "internalCode": code,
        }
    )


def aierror(code: int, http: int, message: str) -> str:
    return json.dumps(
        {
            "name": "AiError",
            "internalCode": code,
            "httpCode": http,
            "message": message,
            "description": message.removeprefix("AiError: "),
        }
    )


CASES: list[tuple[int, str, type[WorkersAIError], int | None]] = [
    (
        429,
        v4_inference(
            3040, f"AiError: AiError: Capacity temporarily exceeded, please try again. ({UUID})"
        ),
        CapacityExceeded,
        3040,
    ),
    (
        429,
        json.dumps({"errors": [{"message": "Capacity temporarily exceeded", "code": 3040}]}),
        CapacityExceeded,
        3040,
    ),
    (
        429,
        v4_inference(
            4006, "AiError: AiError: you have used up your daily free allocation of 10,000 neurons"
        ),
        DailyAllocationExhausted,
        4006,
    ),
    (
        429,
        v4_inference(3036, "You have used up your daily free allocation"),
        DailyAllocationExhausted,
        3036,
    ),
    (429, v4_inference(3021, "Too many requests"), RateLimited, 3021),
    (429, gateway(2003, "Rate limited", 429), RateLimited, 2003),
    (429, "", RateLimited, None),
    (401, v4_edge(10000, "Authentication error"), AuthenticationFailed, 10000),
    (403, v4_edge(10000, "Authentication error"), AuthenticationFailed, 10000),
    (401, v4_edge(1000, "Invalid API Token"), AuthenticationFailed, 1000),
    (401, gateway(2009, "Unauthorized", 401), GatewayAuthenticationFailed, 2009),
    (400, v4_inference(5007, "AiError: No such model @cf/x/y or task"), ModelUnavailable, 5007),
    (404, v4_inference(3042, "AiError: The model name is invalid"), ModelUnavailable, 3042),
    (
        400,
        v4_inference(5028, "AiError: 5028: This model was deprecated on 2026-05-30."),
        ModelUnavailable,
        5028,
    ),
    (403, v4_inference(5035, "AiError: requires Workers Paid"), ModelUnavailable, 5035),
    (
        403,
        v4_inference(5016, "User has not agreed to Llama3.2 model terms"),
        TermsNotAccepted,
        5016,
    ),
    (
        403,
        v4_inference(5018, "The account is not allowed to access this model"),
        ModelUnavailable,
        5018,
    ),
    (413, v4_inference(3006, "Request is too large"), RequestTooLarge, 3006),
    (
        413,
        aierror(
            5021,
            413,
            "AiError: Ai: The estimated number of input and maximum output tokens (42481) "
            "exceeded this model context window limit (32000). (87064f8a)",
        ),
        RequestTooLarge,
        5021,
    ),
    (413, "", RequestTooLarge, None),
    (408, v4_inference(3007, "Request timeout"), UpstreamTimeout, 3007),
    (408, v4_inference(3008, "Request was aborted"), UpstreamTimeout, 3008),
    (408, v4_inference(3046, "AiError: Request timeout"), UpstreamTimeout, 3046),
    (504, "", UpstreamTimeout, None),
    (
        400,
        gateway(2001, "Please configure AI Gateway in the Cloudflare dashboard", 400),
        GatewayError,
        2001,
    ),
    (
        402,
        json.dumps(
            {
                "errors": [
                    {
                        "message": "Insufficient balance; add money to your gateway or use BYOK",
                        "code": 2021,
                    }
                ]
            }
        ),
        GatewayError,
        2021,
    ),
    (429, gateway(2041, "Spend limit exceeded: rule 'weekly'", 429), GatewayError, 2041),
    (400, gateway(2019, "Chat completion bad format", 400), GatewayError, 2019),
    (500, v4_inference(3001, "Internal error"), ServerError, 3001),
    (503, "", ServerError, None),
    (
        400,
        v4_inference(5006, f"AiError: Bad input: Error: oneOf at '/' not met ({UUID})"),
        BadRequest,
        5006,
    ),
    (
        404,
        v4_edge(
            7003,
            "Could not route to /client/v4/accounts/x/ai/run, "
            "perhaps your object identifier is invalid?",
        ),
        BadRequest,
        7003,
    ),
    (400, v4_edge(7000, "No route for that URI"), BadRequest, 7000),
    (
        400,
        json.dumps(
            {
                "error": {
                    "code": "invalid_prompt",
                    "message": f"AiError: AiError: Bad prompt ({UUID})",
                }
            }
        ),
        BadRequest,
        None,
    ),
    (405, v4_edge(7001, "GET not supported for requested URI."), BadRequest, 7001),
]


@pytest.mark.parametrize(("status", "body", "cls", "code"), CASES)
def test_classification_by_code_then_status(
    status: int, body: str, cls: type[WorkersAIError], code: int | None
) -> None:
    error = classify(status=status, body=body)
    assert type(error) is cls
    assert (error.status, error.code) == (status, code)
    assert error.message
    assert "AiError" not in error.message
    assert UUID not in error.message
    assert error.message.endswith((".", ")", "”"))
    if body:
        assert error.detail == body


def test_capacity_message_names_the_fix() -> None:
    error = classify(status=429, body=CASES[0][1])
    assert error.message == (
        "Workers AI is at capacity for this model right now. Try again in a moment, "
        "wait in the queue, or switch model."
    )
    assert str(error) == f"{error.message} (HTTP 429, code 3040)"
    assert error.retryable
    assert error.kind == "capacity"


def test_server_text_is_quoted_clean_for_bad_requests() -> None:
    error = classify(status=400, body=CASES[-5][1])
    assert error.message.endswith("Cloudflare said: “Bad input: Error: oneOf at '/' not met”")
    assert error.request_id == UUID


def test_context_window_error_quotes_the_token_counts() -> None:
    error = classify(status=413, body=CASES[18][1])
    assert "(42481) exceeded this model context window limit (32000)" in error.message
    assert error.request_id == "87064f8a"


def test_request_id_header_wins() -> None:
    error = classify(status=429, body=CASES[0][1], headers={"cf-ai-req-id": "from-header"})
    assert error.request_id == "from-header"


def test_model_name_is_named_when_known() -> None:
    error = classify(status=400, body=v4_inference(5007, "No such model"), model="@cf/a/b")
    assert "(model: @cf/a/b)" in error.message


def test_daily_allocation_resets_at_next_utc_midnight() -> None:
    error = classify(status=429, body=CASES[2][1])
    assert isinstance(error, DailyAllocationExhausted)
    assert error.resets_at == next_utc_midnight()
    assert error.resets_at.tzinfo is not None
    assert error.resets_at.hour == 0
    assert "00:00 UTC" in error.message
    assert not error.retryable


def test_next_utc_midnight_from_a_fixed_time() -> None:
    now = datetime(2026, 3, 1, 23, 59, tzinfo=UTC)
    assert next_utc_midnight(now) == datetime(2026, 3, 2, tzinfo=UTC)


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (502, ServerError),
        (403, BadRequest),
        (401, BadRequest),
        (404, BadRequest),
        (429, RateLimited),
    ],
)
def test_html_pages_give_short_clean_messages(status: int, cls: type[WorkersAIError]) -> None:
    page = (
        "<!DOCTYPE html><html><head><title>Access &amp; Denied | Corp Proxy</title>"
        "<style>body{font:12px}</style></head><body><h1>Blocked</h1>"
        + "x" * 5000
        + "</body></html>"
    )
    error = classify(status=status, body=page)
    assert type(error) is cls
    assert "<" not in error.message
    assert "{" not in error.message
    assert "“Access & Denied | Corp Proxy”" in error.message
    assert len(error.message) < 400
    assert error.detail is not None
    assert len(error.detail) <= 2000


def test_forbidden_page_blames_the_network_not_the_token() -> None:
    error = classify(status=403, body="<html><title>Forbidden</title></html>")
    assert "proxy" in error.message
    assert "token" not in error.message


def test_empty_body_uses_the_status_alone() -> None:
    error = classify(status=503, body="")
    assert isinstance(error, ServerError)
    assert error.message == msg.for_error(ServerError, code=None, server_text="", model=None)
    assert error.detail is None


def test_plain_text_body() -> None:
    error = classify(status=502, body="upstream connect error or disconnect/reset before headers")
    assert isinstance(error, ServerError)
    assert "upstream connect error" in error.message


@pytest.mark.parametrize(
    ("raw", "clean", "request_id"),
    [
        (
            f"AiError: AiError: Input prompt contains NSFW content. ({UUID})",
            "Input prompt contains NSFW content.",
            UUID,
        ),
        (
            "3040: Capacity temporarily exceeded, please try again.",
            "Capacity temporarily exceeded, please try again.",
            None,
        ),
        ("InferenceUpstreamError: AiError: x (87064f8a)", "x", "87064f8a"),
        ("Keep (this part) intact", "Keep (this part) intact", None),
    ],
)
def test_clean_server_message(raw: str, clean: str, request_id: str | None) -> None:
    assert clean_server_message(raw) == (clean, request_id)


def test_retry_after_seconds_and_http_date() -> None:
    now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    later = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert parse_retry_after("7", now=now) == 7.0
    assert parse_retry_after(" 2.5 ", now=now) == 2.5
    assert parse_retry_after(later, now=now) == 30.0
    assert parse_retry_after(format_datetime(now - timedelta(hours=1), usegmt=True), now=now) == 0.0
    assert parse_retry_after("soon", now=now) is None
    assert parse_retry_after(None) is None


def test_retry_after_header_lands_on_the_error() -> None:
    error = classify(status=429, body=CASES[4][1], headers={"Retry-After": "12"})
    assert isinstance(error, RateLimited)
    assert error.retry_after == 12.0


@pytest.mark.asyncio
@pytest.mark.parametrize(("status", "body", "cls", "code"), CASES[:8])
async def test_client_raises_classified_errors_before_yielding(
    make_client: ClientFactory, status: int, body: str, cls: type[WorkersAIError], code: int | None
) -> None:
    client = make_client(Recorder(reply(body, status=status, content_type="application/json")))
    stream = client.stream_chat(mock_conn(), chat())
    with pytest.raises(cls):
        await anext(stream)


def _raiser(exc: Exception) -> Any:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    return handler


def _tls_error() -> httpx.ConnectError:
    try:
        raise ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] self-signed")
    except ssl.SSLError as cause:
        try:
            raise httpx.ConnectError("handshake failed") from cause
        except httpx.ConnectError as exc:
            return exc


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("exc", "cls", "text"),
    [
        (
            httpx.ConnectError("[Errno -2] Name or service not known"),
            ConnectionFailed,
            msg.CONNECTION_FAILED,
        ),
        (
            httpx.ConnectError("[Errno 111] Connection refused"),
            ConnectionFailed,
            msg.CONNECTION_FAILED,
        ),
        (_tls_error(), TLSFailed, msg.TLS_FAILED),
        (httpx.ProxyError("407 Proxy Authentication Required"), ConnectionFailed, msg.PROXY_FAILED),
        (
            httpx.ConnectTimeout("timed out"),
            RequestTimedOut,
            "Could not connect to api.test:443 within 10 s",
        ),
        (
            httpx.ReadTimeout("timed out"),
            RequestTimedOut,
            "within 120 s while waiting for the reply",
        ),
        (httpx.WriteTimeout("timed out"), RequestTimedOut, "while sending the request"),
        (httpx.PoolTimeout("timed out"), RequestTimedOut, "free connection"),
        (
            httpx.RemoteProtocolError("Server disconnected without sending a response."),
            ConnectionFailed,
            msg.CONNECTION_FAILED,
        ),
        (httpx.DecodingError("bad gzip"), ServerError, msg.UNREADABLE_REPLY),
    ],
)
async def test_network_failures_map_to_the_tree(
    make_client: ClientFactory, exc: Exception, cls: type[WorkersAIError], text: str
) -> None:
    client = make_client(_raiser(exc))
    with pytest.raises(cls) as caught:
        await collect(client, mock_conn(), chat())
    assert type(caught.value) is cls
    assert text in caught.value.message
    assert caught.value.detail
    assert type(exc).__name__ in caught.value.detail


def test_tls_failures_are_not_retryable_but_connection_failures_are() -> None:
    assert not TLSFailed("x").retryable
    assert ConnectionFailed("x").retryable


def test_no_final_message_promises_an_automatic_retry() -> None:
    # A message is shown when retries are over (or were never tried): it cannot promise one.
    import flarechat.api

    package = Path(flarechat.api.__file__).parent
    for source in package.glob("*.py"):
        text = source.read_text(encoding="utf-8").lower()
        for promise in ("will retry", "retries automatically", "retry automatically"):
            assert promise not in text, f"{source.name}: {promise!r}"
