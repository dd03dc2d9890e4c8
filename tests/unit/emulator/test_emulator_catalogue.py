"""/ai/models/search and /schema, and token verification on both paths."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from emulator_helpers import ACCOUNT, BGE, GPT_OSS, KIMI, LLAMA, QWQ, run_url

from flarechat.emulator.server import EmulatorServer


def _search(emulator: EmulatorServer, http: httpx.Client, **params: Any) -> dict[str, Any]:
    url = f"{emulator.api_base}/accounts/{ACCOUNT}/ai/models/search"
    reply = http.get(url, params=params)
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def _properties(item: dict[str, Any]) -> dict[str, Any]:
    return {p["property_id"]: p["value"] for p in item["properties"]}


def test_text_generation_catalogue(emulator: EmulatorServer, http: httpx.Client) -> None:
    body = _search(emulator, http, task="Text Generation", per_page=100)
    assert list(body) == ["result", "success", "errors", "messages", "result_info"]
    names = [m["name"] for m in body["result"]]
    assert len(names) >= 6
    assert {LLAMA, QWQ, GPT_OSS, KIMI} <= set(names)
    assert BGE not in names
    assert all(m["task"]["name"] == "Text Generation" for m in body["result"])
    first = body["result"][0]
    assert list(first) == [
        "id",
        "source",
        "name",
        "description",
        "task",
        "created_at",
        "tags",
        "properties",
    ]
    assert body["result_info"] == {
        "page": 1,
        "per_page": 100,
        "count": len(names),
        "total_count": len(names),
    }


def test_properties_are_realistic_and_not_always_strings(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    items = {m["name"]: m for m in _search(emulator, http, per_page=100)["result"]}
    kimi = _properties(items[KIMI])
    assert kimi["require_workers_paid"] == "true"
    assert {p["unit"] for p in kimi["price"]} == {
        "per M input tokens",
        "per M output tokens",
        "per M cached input tokens",
    }
    gpt = _properties(items[GPT_OSS])
    assert gpt["reasoning_effort"]["default_effort"] == "medium"
    assert isinstance(_properties(items[QWQ])["context_window"], int)
    assert _properties(items[QWQ])["lora"] == "true"
    assert any("terms" in _properties(m) for m in items.values())
    assert any(_properties(m).get("beta") == "true" for m in items.values())
    assert any(_properties(m).get("function_calling") == "true" for m in items.values())


def test_other_task_is_filtered_by_task(emulator: EmulatorServer, http: httpx.Client) -> None:
    body = _search(emulator, http, task="Text Embeddings")
    names = [m["name"] for m in body["result"]]
    assert BGE in names
    assert "@cf/baai/bge-small-en-v1.5" in names
    assert all(m["task"]["name"] == "Text Embeddings" for m in body["result"])


def test_paging_walks_the_whole_catalogue(emulator: EmulatorServer, http: httpx.Client) -> None:
    everything = _search(emulator, http, task="Text Generation", per_page=100)["result"]
    seen: list[str] = []
    page = 1
    while True:
        body = _search(emulator, http, task="Text Generation", page=page, per_page=3)
        info = body["result_info"]
        assert info["page"] == page
        assert info["per_page"] == 3
        assert info["total_count"] == len(everything)
        assert info["count"] == len(body["result"])
        if not body["result"]:
            break
        seen += [m["name"] for m in body["result"]]
        page += 1
    assert seen == [m["name"] for m in everything]


def test_search_author_and_experimental_filters(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    assert [m["name"] for m in _search(emulator, http, search="qwq")["result"]] == [QWQ]
    meta = [m["name"] for m in _search(emulator, http, author="meta")["result"]]
    assert meta
    assert all(name.startswith("@cf/meta/") for name in meta)
    stable = _search(emulator, http, hide_experimental="true", per_page=100)["result"]
    assert all(_properties(m).get("beta") != "true" for m in stable)
    assert len(stable) < _search(emulator, http, per_page=100)["result_info"]["total_count"]


def test_schema_endpoint(emulator: EmulatorServer, http: httpx.Client) -> None:
    url = f"{emulator.api_base}/accounts/{ACCOUNT}/ai/models/schema"
    body = http.get(url, params={"model": LLAMA}).json()
    assert body["success"] is True
    assert {"input", "output"} <= set(body["result"])
    missing = http.get(url, params={"model": "@cf/no/such"})
    assert missing.status_code == 400
    assert missing.json()["errors"][0]["code"] == 5007


def _verify(url: str, token: str) -> httpx.Response:
    return httpx.get(url, headers={"Authorization": f"Bearer {token}"})


def test_user_token_verifies_at_the_user_path(emulator: EmulatorServer) -> None:
    reply = _verify(emulator.api_base + "/user/tokens/verify", "cfut_user")
    assert reply.status_code == 200
    body = reply.json()
    assert body["result"]["status"] == "active"
    assert len(body["result"]["id"]) == 32
    assert body["messages"] == [
        {"code": 10000, "message": "This API Token is valid and active", "type": None}
    ]
    assert "cfut_user" not in reply.text


@pytest.mark.parametrize("token", ["cfat_account", "wai_scoped", "invalid-token"])
def test_other_tokens_are_invalid_at_the_user_path(emulator: EmulatorServer, token: str) -> None:
    reply = _verify(emulator.api_base + "/user/tokens/verify", token)
    assert reply.status_code == 401
    assert reply.content == (
        b'{"success":false,"errors":[{"code":1000,"message":"Invalid API Token"}],'
        b'"messages":[],"result":null}'
    )


def test_account_token_verifies_only_at_the_account_path(emulator: EmulatorServer) -> None:
    url = f"{emulator.api_base}/accounts/{ACCOUNT}/tokens/verify"
    assert _verify(url, "cfat_account").json()["result"]["status"] == "active"
    assert _verify(url, "cfut_user").status_code == 401
    assert _verify(url, "wai_scoped").status_code == 401
    bad = _verify(f"{emulator.api_base}/accounts/nope/tokens/verify", "cfat_account")
    assert bad.status_code == 404


def test_workers_ai_token_works_on_the_cheap_call(emulator: EmulatorServer) -> None:
    url = f"{emulator.api_base}/accounts/{ACCOUNT}/ai/models/search"
    reply = httpx.get(url, params={"per_page": 1}, headers={"Authorization": "Bearer wai_x"})
    assert reply.status_code == 200
    assert reply.json()["result_info"]["count"] == 1
    refused = httpx.get(url, headers={"Authorization": "Bearer invalid-x"})
    assert refused.status_code == 401
    assert refused.json()["errors"][0]["code"] == 10000
    assert (
        httpx.post(
            run_url(emulator, LLAMA),
            headers={"Authorization": "Bearer wai_x"},
            json={"prompt": "hi"},
        ).status_code
        == 200
    )


def test_expired_and_disabled_tokens_report_their_status(emulator: EmulatorServer) -> None:
    url = emulator.api_base + "/user/tokens/verify"
    expired = _verify(url, "expired_token").json()["result"]
    assert expired["status"] == "expired"
    assert expired["expires_on"].endswith("Z")
    assert _verify(url, "disabled_token").json()["result"]["status"] == "disabled"


def test_verify_without_credentials(emulator: EmulatorServer) -> None:
    reply = httpx.get(emulator.api_base + "/user/tokens/verify")
    assert reply.status_code == 400
    assert reply.json()["errors"][0]["code"] == 9106
