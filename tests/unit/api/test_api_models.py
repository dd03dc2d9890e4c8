"""Model listing (paging, property parsing) and token verification on canned responses."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from api_helpers import ACCOUNT, MOCK_API, Recorder, mock_conn, reply

from conftest import ClientFactory
from flarechat.api._catalogue import parse_model
from flarechat.api.errors import (
    AuthenticationFailed,
    BadRequest,
    ConnectionFailed,
    WebPage,
)
from flarechat.api.models import ModelInfo

TEXT_TASK = {"id": "c329a1f9-323d-4e91-b2aa-582dd4188d34", "name": "Text Generation"}

KIMI = {
    "id": "8a5d00bd-de28-4a28-b37a-ce46d01ebaeb",
    "source": 1,
    "name": "@cf/moonshotai/kimi-k2.6",
    "description": "Kimi K2.6 is a frontier-scale open-source model.",
    "task": TEXT_TASK,
    "created_at": "2026-04-20 01:40:35.001",
    "tags": [],
    "properties": [
        {"property_id": "require_workers_paid", "value": "true"},
        {"property_id": "context_window", "value": "262144"},
        {"property_id": "function_calling", "value": "true"},
        {"property_id": "reasoning", "value": "true"},
        {"property_id": "vision", "value": "true"},
        {
            "property_id": "price",
            "value": [
                {"unit": "per M input tokens", "price": 0.95, "currency": "USD"},
                {"unit": "per M output tokens", "price": 4, "currency": "USD"},
                {"unit": "per M cached input tokens", "price": 0.16, "currency": "USD"},
            ],
        },
    ],
}


def test_parse_a_realistic_item() -> None:
    assert parse_model(KIMI) == ModelInfo(
        name="@cf/moonshotai/kimi-k2.6",
        description="Kimi K2.6 is a frontier-scale open-source model.",
        task="Text Generation",
        context_window=262144,
        paid_only=True,
        reasoning=True,
        function_calling=True,
        vision=True,
        price_input_per_m=0.95,
        price_output_per_m=4.0,
        price_cached_per_m=0.16,
    )


@pytest.mark.parametrize(
    ("properties", "expected"),
    [
        ([{"property_id": "beta", "value": True}], {"beta": True}),
        ([{"property_id": "beta", "value": "false"}], {"beta": False}),
        ([{"property_id": "lora", "value": 1}], {"lora": True}),
        ([{"property_id": "context_window", "value": 128000}], {"context_window": 128000}),
        ([{"property_id": "context_window", "value": "32,000"}], {"context_window": 32000}),
        ([{"property_id": "context_window", "value": "lots"}], {"context_window": None}),
        ([{"property_id": "max_total_tokens", "value": "8192"}], {"context_window": 8192}),
        (
            [
                {
                    "property_id": "reasoning_effort",
                    "value": {"supported_efforts": ["low", "high"], "mandatory": True},
                }
            ],
            {"reasoning": True},
        ),
        (
            [{"property_id": "terms", "value": "https://example.com/terms"}],
            {"terms_url": "https://example.com/terms"},
        ),
        (
            [
                {
                    "property_id": "price",
                    "value": '[{"unit":"per M input tokens","price":"$0.27","currency":"USD"}]',
                }
            ],
            {"price_input_per_m": 0.27},
        ),
        ([{"property_id": "async_queue", "value": "true"}], {"batch": True}),
        ([{"property_id": "async_queue", "value": False}], {"batch": False}),
        ([{"property_id": "price", "value": {"odd": "shape"}}], {}),
        ([{"property_id": 7, "value": "x"}, "junk", None], {}),
    ],
)
def test_property_values_of_any_type(properties: list[Any], expected: dict[str, Any]) -> None:
    item = {"name": "@cf/a/b", "task": TEXT_TASK, "properties": properties}
    model = parse_model(item)
    assert model is not None
    for field, value in expected.items():
        assert getattr(model, field) == value


@pytest.mark.parametrize("item", [None, [], {}, {"name": 42}, {"id": "x"}])
def test_items_without_a_name_are_skipped(item: object) -> None:
    assert parse_model(item) is None


def _item(i: int, task: dict[str, str] = TEXT_TASK) -> dict[str, Any]:
    return {"name": f"@cf/vendor/model-{i:03d}", "task": task, "properties": []}


def _page(items: list[dict[str, Any]], **info: Any) -> httpx.Response:
    body: dict[str, Any] = {"result": items, "success": True, "errors": [], "messages": []}
    if info:
        body["result_info"] = info
    return reply(body)


@pytest.mark.asyncio
async def test_pages_until_a_short_page(make_client: ClientFactory) -> None:
    recorder = Recorder(
        _page([_item(i) for i in range(50)], page=1, per_page=50, count=50, total_count=120),
        _page([_item(i) for i in range(50, 100)], page=2, per_page=50, count=50, total_count=120),
        _page([_item(i) for i in range(100, 120)], page=3, per_page=50, count=20, total_count=120),
    )
    models = await make_client(recorder).list_models(mock_conn())
    assert [m.name for m in models] == [f"@cf/vendor/model-{i:03d}" for i in range(120)]
    assert [r.url.params["page"] for r in recorder.requests] == ["1", "2", "3"]
    first = recorder.requests[0]
    assert (
        first.url.raw_path
        == (
            f"/client/v4/accounts/{ACCOUNT}/ai/models/search"
            "?task=Text%20Generation&page=1&per_page=50"
        ).encode()
    )
    assert first.url.host == "api.test"
    assert first.method == "GET"


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "info",
    [
        {"page": 1, "total_pages": 1},
        {"page": 1, "per_page": 50, "total_count": 50},
        {"page": 1, "per_page": 50, "count": 50, "total_count": "50"},
    ],
)
async def test_result_info_variants_end_paging(
    make_client: ClientFactory, info: dict[str, Any]
) -> None:
    recorder = Recorder(_page([_item(i) for i in range(50)], **info), _page([_item(99)]))
    models = await make_client(recorder).list_models(mock_conn())
    assert len(models) == 50
    assert len(recorder.requests) == 1


@pytest.mark.asyncio
async def test_a_server_that_ignores_paging_does_not_loop(make_client: ClientFactory) -> None:
    recorder = Recorder(_page([_item(i) for i in range(50)]))  # same full page forever
    models = await make_client(recorder).list_models(mock_conn())
    assert len(models) == 50
    assert len(recorder.requests) == 2


@pytest.mark.asyncio
async def test_other_tasks_are_filtered_even_if_the_server_does_not(
    make_client: ClientFactory,
) -> None:
    embeddings = {"id": "x", "name": "Text Embeddings"}
    recorder = Recorder(_page([_item(1), _item(2, embeddings), _item(3)]))
    models = await make_client(recorder).list_models(mock_conn())
    assert [m.name for m in models] == ["@cf/vendor/model-001", "@cf/vendor/model-003"]


@pytest.mark.asyncio
async def test_models_errors_are_classified(make_client: ClientFactory) -> None:
    body = {
        "result": None,
        "success": False,
        "errors": [{"code": 10000, "message": "Authentication error"}],
    }
    with pytest.raises(AuthenticationFailed):
        await make_client(Recorder(reply(body, status=401))).list_models(mock_conn())
    with pytest.raises(WebPage):  # a 200 web page: a captive portal, not a server error
        await make_client(
            Recorder(reply("<html>oops</html>", content_type="text/html"))
        ).list_models(mock_conn())


@pytest.mark.asyncio
async def test_models_need_an_account_id(make_client: ClientFactory) -> None:
    with pytest.raises(ValueError, match="account ID"):
        await make_client(Recorder(_page([]))).list_models(mock_conn(account_id=""))


# -- verify ---------------------------------------------------------------------------------

VALID = {
    "result": {"id": "f" * 32, "status": "active", "expires_on": "2030-01-01T00:00:00Z"},
    "success": True,
    "errors": [],
    "messages": [{"code": 10000, "message": "This API Token is valid and active", "type": None}],
}
INVALID = {
    "success": False,
    "errors": [{"code": 1000, "message": "Invalid API Token"}],
    "messages": [],
    "result": None,
}
AUTH_ERROR = {
    "result": None,
    "success": False,
    "errors": [{"code": 10000, "message": "Authentication error"}],
    "messages": [],
}


def _router(routes: dict[str, httpx.Response]) -> Recorder:
    def handler(request: httpx.Request) -> httpx.Response:
        for suffix, response in routes.items():
            if request.url.path.endswith(suffix):
                return response
        return reply({"errors": [{"code": 7003, "message": "Could not route"}]}, status=404)

    return Recorder(handler)


@pytest.mark.asyncio
async def test_verify_user_token(make_client: ClientFactory) -> None:
    recorder = _router({"/user/tokens/verify": reply(VALID)})
    check = await make_client(recorder).verify_token(mock_conn())
    assert (check.kind, check.status, check.token_id, check.expires_on) == (
        "user",
        "active",
        "f" * 32,
        "2030-01-01T00:00:00Z",
    )
    assert check.message == "This API Token is valid and active"
    assert check.active
    assert [r.url.path for r in recorder.requests] == ["/client/v4/user/tokens/verify"]


@pytest.mark.asyncio
async def test_verify_account_token_after_user_path_says_invalid(
    make_client: ClientFactory,
) -> None:
    recorder = _router(
        {
            "/user/tokens/verify": reply(INVALID, status=401),
            f"/accounts/{ACCOUNT}/tokens/verify": reply(VALID),
        }
    )
    check = await make_client(recorder).verify_token(mock_conn())
    assert check.kind == "account"
    assert len(recorder.requests) == 2


@pytest.mark.asyncio
async def test_verify_falls_back_to_a_cheap_authorised_call(make_client: ClientFactory) -> None:
    recorder = _router(
        {
            "/user/tokens/verify": reply(INVALID, status=401),
            "/tokens/verify": reply(INVALID, status=401),
            "/ai/models/search": _page([_item(1)]),
        }
    )
    check = await make_client(recorder).verify_token(mock_conn())
    assert (check.kind, check.status, check.token_id) == ("workers-ai", "active", None)
    last = recorder.requests[-1]
    assert last.url.params["per_page"] == "1"
    assert str(last.url).startswith(f"{MOCK_API}/accounts/{ACCOUNT}/ai/models/search")


@pytest.mark.asyncio
async def test_verify_raises_authentication_failed_when_nothing_works(
    make_client: ClientFactory,
) -> None:
    recorder = _router(
        {
            "/user/tokens/verify": reply(INVALID, status=401),
            "/tokens/verify": reply(INVALID, status=401),
            "/ai/models/search": reply(AUTH_ERROR, status=401),
        }
    )
    with pytest.raises(AuthenticationFailed):
        await make_client(recorder).verify_token(mock_conn())
    assert len(recorder.requests) == 3


@pytest.mark.asyncio
async def test_verify_with_an_unknown_account_says_so(make_client: ClientFactory) -> None:
    recorder = _router({"/user/tokens/verify": reply(INVALID, status=401)})
    with pytest.raises(BadRequest, match="account ID"):
        await make_client(recorder).verify_token(mock_conn())


@pytest.mark.asyncio
async def test_verify_reports_an_expired_token_as_is(make_client: ClientFactory) -> None:
    expired = {**VALID, "result": {"id": "a" * 32, "status": "expired"}, "messages": []}
    check = await make_client(_router({"/user/tokens/verify": reply(expired)})).verify_token(
        mock_conn()
    )
    assert (check.kind, check.status, check.active) == ("user", "expired", False)


@pytest.mark.asyncio
async def test_verify_network_failure_is_not_an_auth_failure(make_client: ClientFactory) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused")

    with pytest.raises(ConnectionFailed):
        await make_client(handler).verify_token(mock_conn())
