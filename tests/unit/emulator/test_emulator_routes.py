"""Routing, authentication and model checks, byte for byte as Cloudflare answers them."""

from __future__ import annotations

import json
import re

import httpx
import pytest
from emulator_helpers import (
    ACCOUNT,
    BGE,
    DEEPSEEK,
    KIMI,
    LLAMA,
    LLAMA_70B,
    ask,
    chat_url,
    run_url,
)

from flarechat.emulator.server import EmulatorServer

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _edge_body(code: int, message: str) -> bytes:
    return json.dumps(
        {
            "result": None,
            "success": False,
            "errors": [{"code": code, "message": message}],
            "messages": [],
        },
        separators=(",", ":"),
    ).encode()


def test_unknown_route_is_404_7003(emulator: EmulatorServer, http: httpx.Client) -> None:
    reply = http.post(f"{emulator.api_base}/accounts/{ACCOUNT}/ai/nothing-here", json={})
    assert reply.status_code == 404
    path = f"/client/v4/accounts/{ACCOUNT}/ai/nothing-here"
    message = f"Could not route to {path}, perhaps your object identifier is invalid?"
    assert reply.content == _edge_body(7003, message)
    assert "cf-ray" in reply.headers
    assert "cf-ai-req-id" not in reply.headers


def test_wrong_method_is_405_7001(emulator: EmulatorServer, http: httpx.Client) -> None:
    reply = http.get(f"{emulator.api_base}/accounts/{ACCOUNT}/ai/v1/models")
    assert reply.status_code == 404  # there is no /ai/v1/models at all
    reply = http.get(chat_url(emulator))
    assert reply.status_code == 405
    assert reply.content == _edge_body(7001, "GET not supported for requested URI.")


def test_percent_encoded_slash_in_model_is_7000(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    encoded = LLAMA.replace("/", "%2F")
    reply = http.post(run_url(emulator, encoded), json=ask("hi"))
    assert reply.status_code == 400
    assert reply.content == _edge_body(7000, "No route for that URI")
    assert emulator.state.requests[-1].path.endswith(
        "/ai/run/@cf%2Fmeta%2Fllama-3.1-8b-instruct-fast"
    )


def test_model_path_is_recorded_raw(emulator: EmulatorServer, http: httpx.Client) -> None:
    http.post(run_url(emulator, LLAMA) + "?queueRequest=false", json=ask("hi"))
    recorded = emulator.state.requests[-1]
    assert recorded.method == "POST"
    assert recorded.path == f"/client/v4/accounts/{ACCOUNT}/ai/run/{LLAMA}"
    assert recorded.query == "queueRequest=false"
    assert recorded.headers["authorization"] == "Bearer test-token"
    assert recorded.json == ask("hi")


@pytest.mark.parametrize("account", ["not-an-account", "0123456789ABCDEF0123456789ABCDEF", "abc"])
def test_bad_account_id_is_404_7003(
    emulator: EmulatorServer, http: httpx.Client, account: str
) -> None:
    reply = http.post(chat_url(emulator, account=account), json=ask("hi", model=LLAMA))
    assert reply.status_code == 404
    path = f"/client/v4/accounts/{account}/ai/v1/chat/completions"
    assert reply.json()["errors"][0] == {
        "code": 7003,
        "message": f"Could not route to {path}, perhaps your object identifier is invalid?",
    }


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer"},
        {"Authorization": "Bearer invalid-xyz"},
        {"Authorization": "Basic dXNlcjpwYXNz"},
    ],
)
def test_missing_or_invalid_token_is_401_10000(
    emulator: EmulatorServer, headers: dict[str, str]
) -> None:
    reply = httpx.post(run_url(emulator, LLAMA), headers=headers, json=ask("hi"))
    assert reply.status_code == 401
    assert reply.content == _edge_body(10000, "Authentication error")
    assert "cf-ai-req-id" not in reply.headers  # never reached a model (§0.8)


def test_unknown_model_is_5007_in_the_inference_envelope(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    reply = http.post(run_url(emulator, "@cf/nobody/nothing"), json=ask("hi"))
    assert reply.status_code == 400
    req_id = reply.headers["cf-ai-req-id"]
    assert UUID.fullmatch(req_id)
    message = f"AiError: AiError: No such model @cf/nobody/nothing or task ({req_id})"
    expected = {
        "errors": [{"message": message, "code": 5007}],
        "success": False,
        "result": {},
        "messages": [],
    }
    assert reply.content == json.dumps(expected, separators=(",", ":")).encode()


def test_deprecated_model_is_5028(emulator: EmulatorServer, http: httpx.Client) -> None:
    reply = http.post(run_url(emulator, "@cf/meta/llama-3.1-8b-instruct"), json=ask("hi"))
    error = reply.json()["errors"][0]
    assert (reply.status_code, error["code"]) == (400, 5028)
    assert error["message"].startswith("AiError: 5028: This model was deprecated on 2026-05-30.")


def test_paid_only_model_needs_a_paid_account(emulator: EmulatorServer, http: httpx.Client) -> None:
    refused = http.post(run_url(emulator, KIMI), json=ask("hi"))
    assert refused.status_code == 403
    assert refused.json()["errors"][0]["code"] == 5035
    paid = {"Authorization": "Bearer paid_token"}
    accepted = httpx.post(run_url(emulator, KIMI), headers=paid, json=ask("hi"))
    assert accepted.status_code == 200
    assert accepted.json()["result"]["object"] == "chat.completion"


def test_body_without_content_type_is_still_json(emulator: EmulatorServer) -> None:
    # The docs' own curl example sends a form content type and still works (§0.4).
    headers = {"Authorization": "Bearer t", "Content-Type": "application/x-www-form-urlencoded"}
    reply = httpx.post(run_url(emulator, LLAMA), headers=headers, content=json.dumps(ask("hi")))
    assert reply.status_code == 200
    assert reply.json()["success"] is True


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"{not json", "could not parse"),
        (json.dumps({"max_tokens": 10}).encode(), "required properties at '/' are 'prompt'"),
        (
            json.dumps(
                {"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]}
            ).encode(),
            "Type mismatch of '/messages/0/content', 'array' not in 'string'",
        ),
        (json.dumps(ask("hi", max_tokens="many")).encode(), "'/max_tokens', 'string'"),
        (json.dumps(ask("hi", stream="yes")).encode(), "'/stream', 'string'"),
    ],
)
def test_bad_input_is_400_5006(
    emulator: EmulatorServer, http: httpx.Client, body: bytes, fragment: str
) -> None:
    reply = http.post(run_url(emulator, LLAMA), content=body)
    assert reply.status_code == 400
    error = reply.json()["errors"][0]
    assert error["code"] == 5006
    assert error["message"].startswith("AiError: AiError: Bad input: Error: ")
    assert fragment in error["message"]


def test_prompt_variant_is_accepted(emulator: EmulatorServer, http: httpx.Client) -> None:
    reply = http.post(run_url(emulator, LLAMA_70B), json={"prompt": "Tell me a fact"})
    assert reply.status_code == 200
    assert "Tell me a fact" in reply.json()["result"]["response"]


def test_context_window_overflow_is_413_5021(emulator: EmulatorServer, http: httpx.Client) -> None:
    reply = http.post(run_url(emulator, LLAMA_70B), json=ask("hi", max_tokens=30_000))
    assert reply.status_code == 413
    error = reply.json()["errors"][0]
    assert error["code"] == 5021
    assert error["message"].startswith("AiError: Ai: The estimated number of input and maximum")
    assert "context window limit (24000)" in error["message"]


def test_oversized_body_is_413_3006(emulator: EmulatorServer, http: httpx.Client) -> None:
    huge = ask("x" * (10 * 1024 * 1024 + 1))
    reply = http.post(run_url(emulator, DEEPSEEK), json=huge)
    assert reply.status_code == 413
    assert reply.json()["errors"][0]["code"] == 3006


def test_embeddings_model_answers_vectors(emulator: EmulatorServer, http: httpx.Client) -> None:
    reply = http.post(run_url(emulator, BGE), json={"text": ["one", "two"]})
    assert reply.status_code == 200
    result = reply.json()["result"]
    assert result["shape"] == [2, 1024]
    assert float(reply.headers["cf-ai-neurons"]) >= 0
    assert len(result["data"][1]) == 1024
    again = http.post(run_url(emulator, BGE), json={"text": ["one", "two"]}).json()["result"]
    assert again["data"] == result["data"]
    chat = http.post(chat_url(emulator), json=ask("hi", model=BGE))
    assert chat.json()["errors"][0]["code"] == 5006
