"""AI Gateway: both URL forms, REST + cf-aig-gateway-id, auth, compat, and the response cache."""

from __future__ import annotations

import re

import httpx
import pytest
from emulator_helpers import ACCOUNT, GEMMA, LLAMA, ask, chat_url, gateway_url, run_url, sse_json

from flarechat.emulator.server import EmulatorServer

ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")


def _post(
    http: httpx.Client, url: str, *, body: dict[str, object], **headers: str
) -> httpx.Response:
    return http.post(url, json=body, headers=headers)


@pytest.mark.parametrize(
    "tail", [f"workers-ai/{LLAMA}", f"workers-ai/run/{LLAMA}"], ids=["plain", "run"]
)
def test_native_gateway_route_in_both_forms(
    emulator: EmulatorServer, http: httpx.Client, tail: str
) -> None:
    reply = _post(http, gateway_url(emulator, tail), body=ask("hi"))
    assert reply.status_code == 200
    assert reply.json()["result"]["response"].startswith("## ")
    assert reply.headers["cf-aig-cache-status"] == "MISS"
    assert ULID.fullmatch(reply.headers["cf-aig-log-id"])
    assert reply.headers["cf-aig-request-id"] == reply.headers["cf-aig-log-id"]
    assert reply.headers["cf-aig-step"] == "0"
    assert float(reply.headers["cf-ai-neurons"]) > 0


def test_openai_routes_through_the_gateway(emulator: EmulatorServer, http: httpx.Client) -> None:
    chat = _post(
        http,
        gateway_url(emulator, "workers-ai/v1/chat/completions"),
        body=ask("hi", model=GEMMA, stream=True),
    )
    assert sse_json(chat.content)[0]["model"] == GEMMA
    compat = _post(
        http,
        gateway_url(emulator, "compat/chat/completions"),
        body=ask("hi", model=f"workers-ai/{GEMMA}"),
    )
    assert compat.json()["object"] == "chat.completion"
    assert compat.json()["model"] == GEMMA


@pytest.mark.parametrize(
    ("model", "code", "message"),
    [(GEMMA, 2019, "Chat completion bad format"), (f"openai/{GEMMA}", 2008, "Invalid provider")],
)
def test_compat_model_needs_the_workers_ai_prefix(
    emulator: EmulatorServer, http: httpx.Client, model: str, code: int, message: str
) -> None:
    reply = _post(
        http, gateway_url(emulator, "compat/chat/completions"), body=ask("hi", model=model)
    )
    assert reply.status_code == 400
    assert reply.json()["error"] == [{"code": code, "message": message}]


def test_compat_model_errors_are_bare_aierror_objects(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    reply = _post(
        http,
        gateway_url(emulator, "compat/chat/completions"),
        body=ask("hi", model="workers-ai/@cf/nobody/nothing"),
    )
    body = reply.json()
    assert reply.status_code == 400
    assert list(body) == ["name", "internalCode", "httpCode", "message", "description"]
    assert (body["name"], body["internalCode"]) == ("AiError", 5007)


def test_missing_gateway_is_2001(emulator: EmulatorServer, http: httpx.Client) -> None:
    reply = _post(
        http, gateway_url(emulator, f"workers-ai/{LLAMA}", gateway="missing"), body=ask("x")
    )
    assert reply.status_code == 400
    assert reply.content == (
        b'{"success":false,"result":[],"messages":[],"error":[{"code":2001,"message":'
        b'"Please configure AI Gateway in the Cloudflare dashboard"}],"name":"AiGatewayError",'
        b'"httpCode":400,"internalCode":2001}'
    )
    rest = _post(http, run_url(emulator, LLAMA), body=ask("x"), **{"cf-aig-gateway-id": "missing"})
    assert rest.status_code == 400
    assert rest.json()["errors"][0]["code"] == 2001  # the v4 envelope on api.cloudflare.com


@pytest.mark.parametrize("gateway_auth", [None, "Bearer invalid-gw", "Bearer"])
def test_authenticated_gateway_refuses_without_a_good_gateway_token(
    emulator: EmulatorServer, http: httpx.Client, gateway_auth: str | None
) -> None:
    headers = {} if gateway_auth is None else {"cf-aig-authorization": gateway_auth}
    url = gateway_url(emulator, f"workers-ai/{LLAMA}", gateway="authgw")
    reply = http.post(url, json=ask("x"), headers=headers)
    assert reply.status_code == 401
    body = reply.json()
    assert body["error"] == [{"code": 2009, "message": "Unauthorized"}]
    assert body["internalCode"] == 2009


def test_authenticated_gateway_accepts_a_gateway_token(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    url = gateway_url(emulator, f"workers-ai/{LLAMA}", gateway="authgw")
    reply = _post(http, url, body=ask("x"), **{"cf-aig-authorization": "Bearer gw-token"})
    assert reply.status_code == 200
    no_provider = httpx.post(url, json=ask("x"), headers={"cf-aig-authorization": "Bearer gw"})
    assert no_provider.status_code == 401
    assert no_provider.json()["errors"][0]["code"] == 10000  # Workers AI's own credential


def test_direct_calls_carry_no_gateway_headers(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    reply = _post(http, run_url(emulator, LLAMA), body=ask("hi"))
    assert not [name for name in reply.headers if name.startswith("cf-aig-")]


def test_identical_repeat_is_a_hit(emulator: EmulatorServer, http: httpx.Client) -> None:
    url = gateway_url(emulator, f"workers-ai/{LLAMA}")
    first = _post(http, url, body=ask("cache me", stream=True))
    second = _post(http, url, body=ask("cache me", stream=True))
    assert first.headers["cf-aig-cache-status"] == "MISS"
    assert second.headers["cf-aig-cache-status"] == "HIT"
    assert second.content == first.content
    assert second.headers["cf-ai-req-id"] == first.headers["cf-ai-req-id"]
    assert second.headers["cf-aig-log-id"] != first.headers["cf-aig-log-id"]
    assert second.headers["content-type"] == "text/event-stream"
    hits = [e for e in emulator.state.capacity_log if e.action == "acquired"]
    assert len(hits) == 1  # the HIT never reached a model


def test_cache_key_covers_body_route_and_credentials(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    url = gateway_url(emulator, f"workers-ai/{LLAMA}")
    _post(http, url, body=ask("a"))
    assert _post(http, url, body=ask("b")).headers["cf-aig-cache-status"] == "MISS"
    other_token = httpx.post(url, json=ask("a"), headers={"Authorization": "Bearer other"})
    assert other_token.headers["cf-aig-cache-status"] == "MISS"
    run_form = _post(http, gateway_url(emulator, f"workers-ai/run/{LLAMA}"), body=ask("a"))
    assert run_form.headers["cf-aig-cache-status"] == "HIT"  # same route kind, model and body
    chat = _post(
        http, gateway_url(emulator, "workers-ai/v1/chat/completions"), body=ask("a", model=LLAMA)
    )
    assert chat.headers["cf-aig-cache-status"] == "MISS"


def test_skip_cache_bypasses_and_stores_nothing(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    url = gateway_url(emulator, f"workers-ai/{LLAMA}")
    skipped = _post(http, url, body=ask("s"), **{"cf-aig-skip-cache": "true"})
    assert skipped.headers["cf-aig-cache-status"] == "BYPASS"
    assert _post(http, url, body=ask("s")).headers["cf-aig-cache-status"] == "MISS"
    assert _post(http, url, body=ask("s")).headers["cf-aig-cache-status"] == "HIT"
    again = _post(http, url, body=ask("s"), **{"cf-aig-skip-cache": "true"})
    assert again.headers["cf-aig-cache-status"] == "BYPASS"


def test_ttl_defaults_to_300_seconds(emulator: EmulatorServer, http: httpx.Client) -> None:
    url = gateway_url(emulator, f"workers-ai/{LLAMA}")
    _post(http, url, body=ask("t"))
    emulator.state.advance_time(299)
    assert _post(http, url, body=ask("t")).headers["cf-aig-cache-status"] == "HIT"
    emulator.state.advance_time(2)
    assert _post(http, url, body=ask("t")).headers["cf-aig-cache-status"] == "MISS"


def test_ttl_header_sets_the_lifetime(emulator: EmulatorServer, http: httpx.Client) -> None:
    url = gateway_url(emulator, f"workers-ai/{LLAMA}")
    _post(http, url, body=ask("t"), **{"cf-aig-cache-ttl": "3600"})
    emulator.state.advance_time(3599)
    assert _post(http, url, body=ask("t")).headers["cf-aig-cache-status"] == "HIT"
    emulator.state.advance_time(2)
    assert _post(http, url, body=ask("t")).headers["cf-aig-cache-status"] == "MISS"


def test_custom_cache_key_overrides_the_body(emulator: EmulatorServer, http: httpx.Client) -> None:
    url = gateway_url(emulator, f"workers-ai/{LLAMA}")
    first = _post(http, url, body=ask("one"), **{"cf-aig-cache-key": "k1"})
    second = _post(http, url, body=ask("two"), **{"cf-aig-cache-key": "k1"})
    assert second.headers["cf-aig-cache-status"] == "HIT"
    assert second.content == first.content


def test_rest_with_gateway_header_goes_through_the_gateway(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    headers = {"cf-aig-gateway-id": "my-gw"}
    first = _post(http, chat_url(emulator), body=ask("r", model=LLAMA), **headers)
    second = _post(http, chat_url(emulator), body=ask("r", model=LLAMA), **headers)
    assert (first.headers["cf-aig-cache-status"], second.headers["cf-aig-cache-status"]) == (
        "MISS",
        "HIT",
    )
    assert emulator.state.requests[-1].headers["cf-aig-gateway-id"] == "my-gw"


def test_errors_are_never_cached(emulator: EmulatorServer, http: httpx.Client) -> None:
    url = gateway_url(emulator, f"workers-ai/{LLAMA}")
    emulator.state.fail_next(1, code=3040, status=429, body_style="v4-inference")
    assert _post(http, url, body=ask("e")).status_code == 429
    assert _post(http, url, body=ask("e")).headers["cf-aig-cache-status"] == "MISS"


def test_bad_account_on_the_gateway_host(emulator: EmulatorServer, http: httpx.Client) -> None:
    url = f"{emulator.gateway_base}/not-hex/default/workers-ai/{LLAMA}"
    reply = http.post(url, json=ask("x"))
    assert reply.status_code == 404
    assert reply.json()["errors"][0]["code"] == 7003
    assert ACCOUNT not in reply.text
