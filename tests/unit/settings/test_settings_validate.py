"""Field validators: accepted values give None, rejected ones a message that names the fix."""

from __future__ import annotations

import pytest

from flarechat.settings import validate

ACCOUNT = "0123456789abcdef0123456789ABCDEF"
TOKEN = "Zx9_abcdefGHIJKLmnopqrSTUVwxyz0123456789"  # 40 chars, the classic token length


@pytest.mark.parametrize("value", [ACCOUNT, f"  {ACCOUNT.lower()}\n", "f" * 32])
def test_account_id_accepted(value: str) -> None:
    assert validate.validate_account_id(value) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", "Enter your Cloudflare account ID"),
        ("   ", "Enter your Cloudflare account ID"),
        (ACCOUNT[:-1], "this one has 31"),
        (ACCOUNT + "0", "this one has 33"),
        ("g" * 32, "only the characters 0-9 and a-f"),
        ("0123456789abcdef 123456789abcdef", "only the characters"),
    ],
)
def test_account_id_rejected_with_where_to_find_it(value: str, expected: str) -> None:
    message = validate.validate_account_id(value)
    assert message is not None
    assert expected in message
    assert 'Workers AI → "Use REST API"' in message


@pytest.mark.parametrize("value", [TOKEN, f"{TOKEN}\n", "cfut_" + "a1B2" * 12, "x" * 20])
def test_api_token_accepted(value: str) -> None:
    assert validate.validate_api_token(value) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", "Enter your API token"),
        (f"Bearer {TOKEN}", 'without "Bearer "'),
        (f"{TOKEN[:20]}\n{TOKEN[20:]}", "space or line break"),
        ("x" * 19, "too short (19 characters)"),
        ("x" * 513, "too long (513 characters)"),
        (TOKEN[:-1] + "é", "characters a token never has"),
    ],
)
def test_api_token_rejected_without_echoing_it(value: str, expected: str) -> None:
    message = validate.validate_api_token(value)
    assert message is not None
    assert expected in message
    assert TOKEN[5:25] not in message


def test_gateway_token_messages_name_the_gateway() -> None:
    assert validate.validate_gateway_token(TOKEN) is None
    message = validate.validate_gateway_token("short")
    assert message is not None
    assert "gateway token" in message


@pytest.mark.parametrize("value", ["default", "my-gateway_2", "a", "x" * 64, " team-gw "])
def test_gateway_id_accepted(value: str) -> None:
    assert validate.validate_gateway_id(value) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", "Enter the AI Gateway ID"),
        ("x" * 65, "at most 64 characters; this one has 65"),
        ("My-Gateway", "lowercase letters, digits, - and _"),
        ("my gateway", "lowercase letters"),
        ("gw/other", "lowercase letters"),
    ],
)
def test_gateway_id_rejected(value: str, expected: str) -> None:
    message = validate.validate_gateway_id(value)
    assert message is not None
    assert expected in message


@pytest.mark.parametrize("value", [None, "", 60, 3600, "86400", 2_592_000])
def test_cache_ttl_accepted(value: int | str | None) -> None:
    assert validate.validate_cache_ttl(value) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (59, "from 60 to 2,592,000 seconds; 59 is out of range"),
        (2_592_001, "2,592,001 is out of range"),
        ("1.5", "whole number"),
        ("soon", "whole number"),
        (True, "whole number"),
    ],
)
def test_cache_ttl_rejected(value: int | str, expected: str) -> None:
    message = validate.validate_cache_ttl(value)
    assert message is not None
    assert message.startswith("The cache TTL")
    assert expected in message


@pytest.mark.parametrize("value", [1, 2048, "131072", " 256 "])
def test_max_tokens_accepted(value: int | str) -> None:
    assert validate.validate_max_tokens(value) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0, "0 is out of range"), (131_073, "131,073 is out of range"), ("", "whole number")],
)
def test_max_tokens_rejected(value: int | str, expected: str) -> None:
    message = validate.validate_max_tokens(value)
    assert message is not None
    assert "from 1 to 131,072" in message
    assert expected in message


@pytest.mark.parametrize("value", [None, "", 0, 0.0, 0.7, "1.25", 5, 5.0])
def test_temperature_accepted(value: float | str | None) -> None:
    assert validate.validate_temperature(value) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (-0.1, "-0.1 is out of range"),
        (5.01, "5.01 is out of range"),
        ("hot", "must be a number"),
        ("nan", "must be a number"),
        (float("inf"), "must be a number"),
    ],
)
def test_temperature_rejected(value: float | str, expected: str) -> None:
    message = validate.validate_temperature(value)
    assert message is not None
    assert "from 0 to 5" in message
    assert expected in message


@pytest.mark.parametrize("value", [5, 120.0, "600", 37.5])
def test_request_timeout_accepted(value: float | str) -> None:
    assert validate.validate_request_timeout(value) is None


@pytest.mark.parametrize(("value", "expected"), [(4.9, "out of range"), (601, "out of range")])
def test_request_timeout_rejected(value: float, expected: str) -> None:
    message = validate.validate_request_timeout(value)
    assert message is not None
    assert "from 5 to 600 seconds" in message
    assert expected in message


@pytest.mark.parametrize(
    "value",
    [
        "",
        "https://api.cloudflare.com/client/v4",
        "https://gateway.example.com:8443/v1/",
        "http://127.0.0.1:8787/client/v4",
        "http://localhost:8787",
        "http://[::1]:9000/v1",
        "http://127.4.5.6/x",
    ],
)
def test_base_url_accepted(value: str) -> None:
    assert validate.validate_base_url(value) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("http://api.example.com/client/v4", "plain http:// would send the API token"),
        ("http://10.0.0.5:8787", "Use https://"),
        ("ftp://example.com", "must start with https://"),
        ("api.cloudflare.com/client/v4", "must start with https://"),
        ("https://", "must start with https://"),
        ("https://user:pw@example.com", "user name or password"),
        ("https://example.com/v1?x=1", "query"),
        ("https://example.com/v1#top", "fragment"),
        ("https://exa mple.com", "spaces"),
        ("https://example.com:99999", "not a valid URL"),
    ],
)
def test_base_url_rejected(value: str, expected: str) -> None:
    message = validate.validate_base_url(value)
    assert message is not None
    assert expected in message


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("LOCALHOST", True),
        ("127.0.0.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost.example.com", False),
        ("192.168.1.2", False),
        ("example.com", False),
    ],
)
def test_is_loopback_host(host: str, loopback: bool) -> None:
    assert validate.is_loopback_host(host) is loopback
