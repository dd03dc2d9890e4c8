"""Who may call: account ids, tokens, gateways; token verify and the catalogue routes."""

from __future__ import annotations

import hashlib
import re

from starlette.requests import Request
from starlette.responses import Response

from flarechat.emulator import catalogue
from flarechat.emulator.catalogue import SearchQuery
from flarechat.emulator.wire import ErrorSpec, cf_ray, error_response, json_response, success

__all__ = [
    "ACCOUNT_TOKEN_PREFIX",
    "AUTHENTICATED_GATEWAYS",
    "GATEWAY_MISSING",
    "MISSING_GATEWAYS",
    "WORKERS_AI_TOKEN_PREFIX",
    "bearer",
    "edge_error",
    "gateway_error",
    "gateway_exists",
    "no_route",
    "refused",
    "usable",
    "valid_account",
]

_ACCOUNT_ID = re.compile(r"[0-9a-f]{32}")
#: Tokens starting with this are refused everywhere (401 / 10000, or 1000 on verify).
INVALID_TOKEN_PREFIX = "invalid"
#: Account-owned tokens verify only at /accounts/{id}/tokens/verify (§9).
ACCOUNT_TOKEN_PREFIX = "cfat_"
#: Workers-AI-scoped tokens verify at neither path but may call /ai/* (the "cheap call" fallback).
WORKERS_AI_TOKEN_PREFIX = "wai_"
_EXPIRED_PREFIX, _DISABLED_PREFIX = "expired_", "disabled_"
_PAST_EXPIRY = "2025-01-01T00:00:00Z"
AUTHENTICATED_GATEWAYS = frozenset({"authgw"})
MISSING_GATEWAYS = frozenset({"missing"})
GATEWAY_MISSING = "Please configure AI Gateway in the Cloudflare dashboard"
_DEFAULT_PER_PAGE, _MAX_PER_PAGE = 20, 100
_TOKEN_ID_CHARS = 32


def valid_account(account: str) -> bool:
    return _ACCOUNT_ID.fullmatch(account) is not None


def bearer(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def usable(token: str | None) -> bool:
    return bool(token) and not (token or "").startswith(INVALID_TOKEN_PREFIX)


def gateway_exists(gateway: str) -> bool:
    return bool(gateway) and gateway not in MISSING_GATEWAYS


def gateway_error(status: int, code: int, *, message: str) -> Response:
    """A gateway-level error: singular ``error`` array plus flat fields (§6.6)."""
    spec = ErrorSpec(status, code, message, "gateway")
    return error_response(spec, req_id="", headers={"cf-ray": cf_ray()})


def edge_error(status: int, code: int, *, message: str) -> Response:
    """An API-edge error: v4 envelope with ``result: null``, only a cf-ray header (§0.6, §0.8)."""
    spec = ErrorSpec(status, code, message)
    return error_response(spec, req_id="", headers={"cf-ray": cf_ray()})


def no_route(path: str) -> Response:
    message = f"Could not route to {path}, perhaps your object identifier is invalid?"
    return edge_error(404, 7003, message=message)


def _invalid_token() -> Response:
    body = {
        "success": False,
        "errors": [{"code": 1000, "message": "Invalid API Token"}],
        "messages": [],
        "result": None,
    }
    return json_response(body, status=401, headers={"cf-ray": cf_ray()})


def _checked(request: Request) -> tuple[str | None, Response | None]:
    """Account and token for an account-scoped route, or the edge error to send instead."""
    account = request.path_params.get("acct")
    if account is not None and not valid_account(account):
        return None, no_route(request.url.path)
    token = bearer(request.headers.get("authorization"))
    if token is None:
        return None, edge_error(
            400, 9106, message="Missing X-Auth-Key, X-Auth-Email or Authorization headers"
        )
    return token, None


def _verified(token: str) -> Response:
    status = "active"
    result: dict[str, str] = {"id": hashlib.sha256(token.encode()).hexdigest()[:_TOKEN_ID_CHARS]}
    if token.startswith(_EXPIRED_PREFIX):
        status = "expired"
    elif token.startswith(_DISABLED_PREFIX):
        status = "disabled"
    result["status"] = status
    if status == "expired":
        result["expires_on"] = _PAST_EXPIRY
    body = success(result)
    body["messages"] = [
        {"code": 10000, "message": "This API Token is valid and active", "type": None}
    ]
    return json_response(body, headers={"cf-ray": cf_ray()})


async def verify_user(request: Request) -> Response:
    token, problem = _checked(request)
    if problem is not None or token is None:
        return problem or _invalid_token()
    refused = (INVALID_TOKEN_PREFIX, ACCOUNT_TOKEN_PREFIX, WORKERS_AI_TOKEN_PREFIX)
    return _invalid_token() if token.startswith(refused) else _verified(token)


async def verify_account(request: Request) -> Response:
    token, problem = _checked(request)
    if problem is not None or token is None:
        return problem or _invalid_token()
    return _verified(token) if token.startswith(ACCOUNT_TOKEN_PREFIX) else _invalid_token()


def _int_param(request: Request, name: str, *, default: int) -> int:
    try:
        return int(request.query_params.get(name, default))
    except ValueError:
        return default


def refused(request: Request) -> Response | None:
    """The edge error for a bad account id or token on an account-scoped GET, else None."""
    token, problem = _checked(request)
    if problem is not None or not usable(token):
        return problem or edge_error(401, 10000, message="Authentication error")
    return None


async def models_search(request: Request) -> Response:
    problem = refused(request)
    if problem is not None:
        return problem
    params = request.query_params
    query = SearchQuery(
        task=params.get("task"),
        search=params.get("search"),
        author=params.get("author"),
        hide_experimental=params.get("hide_experimental", "").lower() == "true",
        page=max(1, _int_param(request, "page", default=1)),
        per_page=min(
            _MAX_PER_PAGE, max(1, _int_param(request, "per_page", default=_DEFAULT_PER_PAGE))
        ),
    )
    result, info = catalogue.search(query)
    return json_response(success(result, result_info=info), headers={"cf-ray": cf_ray()})


async def models_schema(request: Request) -> Response:
    problem = refused(request)
    if problem is not None:
        return problem
    name = request.query_params.get("model", "")
    model = catalogue.find(name)
    if model is None:
        return edge_error(400, 5007, message=f"No such model {name} or task")
    return json_response(success(catalogue.schema(model)), headers={"cf-ray": cf_ray()})
