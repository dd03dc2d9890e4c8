"""Request building: URLs per route x endpoint, headers, body placement, option validation."""

from __future__ import annotations

import json
from typing import Any

import pytest
from api_helpers import ACCOUNT, GATEWAY_TOKEN, MOCK_API, MOCK_GATEWAY, TOKEN, chat, mock_conn

from flarechat import __version__
from flarechat.api._routes import build_chat_request, validate_gateway_options
from flarechat.api.client import DEFAULT_USER_AGENT
from flarechat.api.config import (
    ChatMessage,
    ChatRequest,
    Endpoint,
    GatewayOptions,
    Route,
    SamplingParams,
    Secret,
)

UA = DEFAULT_USER_AGENT
MODEL = "@cf/meta/llama-3.1-8b-instruct-fast"


@pytest.mark.parametrize(
    ("route", "endpoint", "url"),
    [
        (Route.DIRECT, Endpoint.NATIVE, f"{MOCK_API}/accounts/{ACCOUNT}/ai/run/{MODEL}"),
        (Route.DIRECT, Endpoint.OPENAI, f"{MOCK_API}/accounts/{ACCOUNT}/ai/v1/chat/completions"),
        (Route.GATEWAY_REST, Endpoint.NATIVE, f"{MOCK_API}/accounts/{ACCOUNT}/ai/run/{MODEL}"),
        (
            Route.GATEWAY_REST,
            Endpoint.OPENAI,
            f"{MOCK_API}/accounts/{ACCOUNT}/ai/v1/chat/completions",
        ),
        (Route.GATEWAY_URL, Endpoint.NATIVE, f"{MOCK_GATEWAY}/{ACCOUNT}/my-gw/workers-ai/{MODEL}"),
        (
            Route.GATEWAY_URL,
            Endpoint.OPENAI,
            f"{MOCK_GATEWAY}/{ACCOUNT}/my-gw/workers-ai/v1/chat/completions",
        ),
    ],
)
def test_url_per_route_and_endpoint(route: Route, endpoint: Endpoint, url: str) -> None:
    conn = mock_conn(route=route, endpoint=endpoint, gateway_id="my-gw")
    prepared = build_chat_request(conn, chat(model=MODEL), user_agent=UA)
    assert prepared.url == url
    assert "%2F" not in prepared.url
    assert "%40" not in prepared.url


def test_user_agent_names_flarechat_and_version() -> None:
    assert f"Flarechat/{__version__} (+python-httpx)" == UA


def test_direct_headers() -> None:
    prepared = build_chat_request(mock_conn(), chat(session_id="ses_1"), user_agent=UA)
    assert prepared.headers == {
        "Authorization": f"Bearer {TOKEN}",
        "User-Agent": UA,
        "Accept": "text/event-stream",
        "x-session-affinity": "ses_1",
    }


def test_gateway_options_are_ignored_on_the_direct_route() -> None:
    request = chat(gateway=GatewayOptions(skip_cache=True, cache_ttl=120))
    prepared = build_chat_request(mock_conn(), request, user_agent=UA)
    assert not any(name.startswith("cf-aig") for name in prepared.headers)


def test_gateway_rest_sends_the_gateway_id_header_but_not_gateway_auth() -> None:
    conn = mock_conn(
        route=Route.GATEWAY_REST, gateway_id="my-gw", gateway_token=Secret(GATEWAY_TOKEN)
    )
    prepared = build_chat_request(conn, chat(), user_agent=UA)
    assert prepared.headers["cf-aig-gateway-id"] == "my-gw"
    assert "cf-aig-authorization" not in prepared.headers


def test_gateway_url_sends_gateway_auth_only_when_set() -> None:
    with_token = mock_conn(
        route=Route.GATEWAY_URL, gateway_id="gw", gateway_token=Secret(GATEWAY_TOKEN)
    )
    without = mock_conn(route=Route.GATEWAY_URL, gateway_id="gw")
    headers = build_chat_request(with_token, chat(), user_agent=UA).headers
    assert headers["cf-aig-authorization"] == f"Bearer {GATEWAY_TOKEN}"
    assert headers["Authorization"] == f"Bearer {TOKEN}"
    assert "cf-aig-authorization" not in build_chat_request(without, chat(), user_agent=UA).headers
    assert "cf-aig-gateway-id" not in headers


def test_every_gateway_option_becomes_a_header() -> None:
    options = GatewayOptions(
        skip_cache=True,
        cache_ttl=3600,
        cache_key="k1",
        metadata={"user": "ana", "n": 3, "ok": True, "f": 1.5},
        collect_log=False,
        request_timeout_ms=9000,
        max_attempts=3,
        retry_delay_ms=500,
        backoff="exponential",
    )
    conn = mock_conn(route=Route.GATEWAY_URL, gateway_id="gw")
    headers = build_chat_request(conn, chat(gateway=options), user_agent=UA).headers
    aig = {k: v for k, v in headers.items() if k.startswith("cf-aig")}
    assert aig == {
        "cf-aig-skip-cache": "true",
        "cf-aig-cache-ttl": "3600",
        "cf-aig-cache-key": "k1",
        "cf-aig-metadata": '{"user":"ana","n":3,"ok":true,"f":1.5}',
        "cf-aig-collect-log": "false",
        "cf-aig-request-timeout": "9000",
        "cf-aig-max-attempts": "3",
        "cf-aig-retry-delay": "500",
        "cf-aig-backoff": "exponential",
    }


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        (GatewayOptions(cache_ttl=59), "between 60 s and 2,592,000 s"),
        (GatewayOptions(cache_ttl=2_592_001), "Cache TTL"),
        (GatewayOptions(metadata={str(i): i for i in range(6)}), "at most 5"),
        (GatewayOptions(metadata={"bad": {"nested": 1}}), "string, number or boolean"),  # type: ignore[dict-item]
        (GatewayOptions(metadata={"bad": None}), "string, number or boolean"),  # type: ignore[dict-item]
        (GatewayOptions(max_attempts=0), "max attempts"),
        (GatewayOptions(max_attempts=6), "max attempts"),
        (GatewayOptions(retry_delay_ms=5001), "retry delay"),
        (GatewayOptions(backoff="random"), "constant, exponential, linear"),
        (GatewayOptions(request_timeout_ms=0), "request timeout"),
        (GatewayOptions(cache_key="line\nbreak"), "cannot be sent in a header"),
    ],
)
def test_invalid_gateway_options_are_refused_before_sending(
    options: GatewayOptions, fragment: str
) -> None:
    conn = mock_conn(route=Route.GATEWAY_URL, gateway_id="gw")
    with pytest.raises(ValueError, match=fragment):
        build_chat_request(conn, chat(gateway=options), user_agent=UA)


def test_boundary_gateway_options_are_accepted() -> None:
    for options in (
        GatewayOptions(cache_ttl=60, max_attempts=1, retry_delay_ms=5000),
        GatewayOptions(cache_ttl=2_592_000, max_attempts=5, retry_delay_ms=0, backoff="linear"),
        GatewayOptions(metadata={str(i): i for i in range(5)}),
    ):
        validate_gateway_options(options)


def _body(endpoint: Endpoint = Endpoint.NATIVE, **request: Any) -> dict[str, Any]:
    conn = mock_conn(endpoint=endpoint)
    body = build_chat_request(conn, chat(**request), user_agent=UA).body
    json.dumps(body)  # always serialisable
    return body


def test_native_body_minimal_always_has_max_tokens() -> None:
    assert _body() == {
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "max_tokens": SamplingParams().max_tokens,
    }


def test_openai_body_names_the_model() -> None:
    body = _body(Endpoint.OPENAI, stream=False)
    assert body["model"] == MODEL
    assert "stream_options" not in body


def test_sampling_params_sent_only_when_set() -> None:
    params = SamplingParams(
        max_tokens=700,
        temperature=0.2,
        top_p=0.9,
        top_k=40,
        seed=7,
        repetition_penalty=1.1,
        frequency_penalty=0.5,
        presence_penalty=-0.5,
    )
    body = _body(params=params)
    assert {k: body[k] for k in body if k not in {"messages", "stream"}} == {
        "max_tokens": 700,
        "temperature": 0.2,
        "top_p": 0.9,
        "top_k": 40,
        "seed": 7,
        "repetition_penalty": 1.1,
        "frequency_penalty": 0.5,
        "presence_penalty": -0.5,
    }
    assert "temperature" not in _body(params=SamplingParams(top_k=3))


@pytest.mark.parametrize("endpoint", list(Endpoint))
def test_reject_if_busy_is_top_level_options(endpoint: Endpoint) -> None:
    body = _body(endpoint, reject_if_busy=True)
    assert body["options"] == {"rejectIfBusy": True}
    assert "options" not in _body(endpoint)


def test_assistant_reasoning_is_its_own_field_and_content_never_null() -> None:
    messages = (
        ChatMessage("system", "Be brief."),
        ChatMessage("user", "2+2?"),
        ChatMessage("assistant", "4", reasoning="Add them."),
        ChatMessage("user", None),  # type: ignore[arg-type]
    )
    request = ChatRequest(model=MODEL, messages=messages)
    body = build_chat_request(mock_conn(), request, user_agent=UA).body
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "4", "reasoning": "Add them."},
        {"role": "user", "content": ""},
    ]


@pytest.mark.parametrize(
    ("conn_overrides", "request_overrides", "fragment"),
    [
        ({}, {"model": "@cf/meta/llama 3"}, "not a valid Workers AI model id"),
        ({}, {"model": "@cf/../admin"}, "not a valid Workers AI model id"),
        ({}, {"model": "@cf/x?y=1"}, "not a valid Workers AI model id"),
        ({"account_id": " "}, {}, "account ID is not set"),
        ({"route": Route.GATEWAY_URL}, {}, "needs a gateway ID"),
        ({"route": Route.GATEWAY_REST}, {}, "needs a gateway ID"),
        ({"token": Secret("")}, {}, "No Cloudflare API token"),
        ({}, {"params": SamplingParams(max_tokens=0)}, "Max tokens"),
    ],
)
def test_invalid_requests_fail_before_sending(
    conn_overrides: dict[str, Any], request_overrides: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(ValueError, match=fragment):
        build_chat_request(mock_conn(**conn_overrides), chat(**request_overrides), user_agent=UA)


def test_no_messages_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one message"):
        build_chat_request(mock_conn(), ChatRequest(model=MODEL, messages=()), user_agent=UA)
