"""The ASGI app: Workers AI, AI Gateway, catalogue, token-verify and control routes."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from flarechat import safejson
from flarechat.emulator import accounts, batch, guard, lora
from flarechat.emulator.generation import Call, Kind, generate
from flarechat.emulator.state import EmulatorState, RecordedRequest
from flarechat.emulator.wire import ErrorSpec, cf_ray, error_response, json_response, request_uuid

__all__ = ["CONTROL_PATH", "create_app"]

CONTROL_PATH = "/__emulator__/control"
_API = "/client/v4"
_GATEWAY = "/gateway/v1"
_COMPAT_PROVIDER = "workers-ai/"
_ENCODED_SLASH = re.compile(r"%2f", re.IGNORECASE)


def _raw_path(request: Request) -> str:
    raw = request.scope.get("raw_path")
    return raw.decode("latin-1") if isinstance(raw, bytes) else request.url.path


def _parse_json(body: bytes) -> Any:
    try:
        return safejson.loads(body) if body else None
    except ValueError:  # includes UnicodeDecodeError
        return None


class _Recorder:
    """Pure ASGI middleware: log every request (not control calls) with its body, replayed."""

    def __init__(self, app: ASGIApp, state: EmulatorState) -> None:
        self._app, self._state = app, state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] == CONTROL_PATH:
            await self._app(scope, receive, send)
            return
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        self._state.record(_recorded(scope, body))
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self._app(scope, replay, send)


def _recorded(scope: Scope, body: bytes) -> RecordedRequest:
    raw = scope.get("raw_path") or scope["path"].encode()
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    return RecordedRequest(
        method=scope["method"],
        path=raw.decode("latin-1"),
        query=scope.get("query_string", b"").decode("latin-1"),
        headers=headers,
        json=_parse_json(body),
        body=body,
    )


async def _model_call(
    request: Request, *, kind: Kind, model: str, gateway: str | None, queued: bool = False
) -> Response:
    """Shared tail of every model route once the URL is known: account, auth, body."""
    account = request.path_params["acct"]
    if not accounts.valid_account(account):
        return accounts.no_route(request.url.path)
    token = accounts.bearer(request.headers.get("authorization"))
    if not accounts.usable(token):
        return accounts.edge_error(401, 10000, message="Authentication error")
    raw_body = await request.body()
    body = _parse_json(raw_body)
    req_id = request_uuid()
    if not isinstance(body, dict):
        bad = ErrorSpec(400, 5006, "Bad input: Error: could not parse the request body as JSON")
        headers = {"cf-ray": cf_ray(), "cf-ai-req-id": req_id}
        return error_response(bad.with_style("v4-inference"), req_id=req_id, headers=headers)
    call = Call(
        kind=kind,
        model=model,
        body=body,
        raw_body=raw_body,
        headers=request.headers,
        request_id=req_id,
        account=account,
        token=token or "",
        gateway=gateway,
    )
    if kind is Kind.RUN and (queued or batch.is_poll(body)):
        headers = {"cf-ray": cf_ray(), "cf-ai-req-id": req_id}
        return batch.handle(request.app.state.emulator, call, headers=headers)
    return await generate(request.app.state.emulator, call)


def _queued(request: Request) -> bool:
    """``?queueRequest=true`` (the binding option, as the official REST shim sends it)."""
    return request.query_params.get("queueRequest", "").lower() == "true"


def _rest_gateway(request: Request) -> tuple[str | None, Response | None]:
    """REST + cf-aig-gateway-id counts as through the gateway; errors in the v4 envelope."""
    gateway = request.headers.get("cf-aig-gateway-id")
    if gateway is not None and not accounts.gateway_exists(gateway):
        return None, accounts.edge_error(400, 2001, message=accounts.GATEWAY_MISSING)
    return gateway, None


async def run_rest(request: Request) -> Response:
    raw = _raw_path(request)
    segment = raw.split("/ai/run/", 1)[1] if "/ai/run/" in raw else ""
    if _ENCODED_SLASH.search(segment) or not segment:
        return accounts.edge_error(400, 7000, message="No route for that URI")
    gateway, problem = _rest_gateway(request)
    if problem is not None:
        return problem
    model = unquote(segment)
    return await _model_call(
        request, kind=Kind.RUN, model=model, gateway=gateway, queued=_queued(request)
    )


async def chat_rest(request: Request) -> Response:
    gateway, problem = _rest_gateway(request)
    if problem is not None:
        return problem
    return await _chat(request, kind=Kind.CHAT, gateway=gateway)


async def _chat(request: Request, *, kind: Kind, gateway: str | None) -> Response:
    body = _parse_json(await request.body())
    model = body.get("model") if isinstance(body, dict) else None
    name = model if isinstance(model, str) else ""
    if kind is Kind.COMPAT:
        provider, _, name = name.partition("/")
        if not name or provider.startswith("@"):  # a bare "@cf/..." id names no provider
            return accounts.gateway_error(400, 2019, message="Chat completion bad format")
        if provider + "/" != _COMPAT_PROVIDER:
            return accounts.gateway_error(400, 2008, message="Invalid provider")
    return await _model_call(request, kind=kind, model=name, gateway=gateway)


def _gateway_problem(request: Request) -> Response | None:
    """Gateway-host checks, before the provider sees anything (§6.1, §6.6)."""
    gateway = request.path_params["gw"]
    if not accounts.gateway_exists(gateway):
        return accounts.gateway_error(400, 2001, message=accounts.GATEWAY_MISSING)
    if gateway in accounts.AUTHENTICATED_GATEWAYS:
        token = accounts.bearer(request.headers.get("cf-aig-authorization"))
        if not accounts.usable(token):
            return accounts.gateway_error(401, 2009, message="Unauthorized")
    return None


async def workers_ai_gateway(request: Request) -> Response:
    problem = _gateway_problem(request)
    if problem is not None:
        return problem
    gateway = request.path_params["gw"]
    raw = _raw_path(request)
    rest = raw.split("/workers-ai/", 1)[1]
    if rest == "v1/chat/completions":
        return await _chat(request, kind=Kind.CHAT, gateway=gateway)
    rest = rest.removeprefix("run/")
    if _ENCODED_SLASH.search(rest) or not rest:
        return accounts.edge_error(400, 7000, message="No route for that URI")
    model = unquote(rest)
    return await _model_call(
        request, kind=Kind.RUN, model=model, gateway=gateway, queued=_queued(request)
    )


async def compat_gateway(request: Request) -> Response:
    problem = _gateway_problem(request)
    if problem is not None:
        return problem
    return await _chat(request, kind=Kind.COMPAT, gateway=request.path_params["gw"])


async def control(request: Request) -> Response:
    """POST {"action": "<EmulatorState method>", ...kwargs}: script a running emulator.

    Only from this machine (loopback Host with our port), as JSON, with the control token.
    """
    state: EmulatorState = request.app.state.emulator
    refused = guard.refusal(request, token=state.control_token)
    if refused is not None:
        return refused
    payload = _parse_json(await request.body())
    if not isinstance(payload, dict) or not isinstance(payload.get("action"), str):
        return json_response({"ok": False, "error": 'expected {"action": ...}'}, status=400)
    arguments = {k: v for k, v in payload.items() if k != "action"}
    try:
        result = state.control(payload["action"], arguments)
    except (TypeError, ValueError) as exc:
        return json_response({"ok": False, "error": str(exc)}, status=400)
    return json_response({"ok": True, "result": result})


async def _not_found(request: Request, exc: Exception) -> Response:
    return accounts.no_route(request.url.path)


async def _not_allowed(request: Request, exc: Exception) -> Response:
    return accounts.edge_error(
        405, 7001, message=f"{request.method} not supported for requested URI."
    )


def create_app(state: EmulatorState) -> ASGIApp:
    acct = _API + "/accounts/{acct}"
    gateway = _GATEWAY + "/{acct}/{gw}"
    routes = [
        Route(acct + "/ai/run/{model:path}", run_rest, methods=["POST"]),
        Route(acct + "/ai/v1/chat/completions", chat_rest, methods=["POST"]),
        Route(acct + "/ai/models/search", accounts.models_search, methods=["GET"]),
        Route(acct + "/ai/models/schema", accounts.models_schema, methods=["GET"]),
        Route(acct + "/ai/finetunes", lora.finetunes, methods=["GET"]),
        Route(acct + "/tokens/verify", accounts.verify_account, methods=["GET"]),
        Route(_API + "/user/tokens/verify", accounts.verify_user, methods=["GET"]),
        Route(gateway + "/workers-ai/{rest:path}", workers_ai_gateway, methods=["POST"]),
        Route(gateway + "/compat/chat/completions", compat_gateway, methods=["POST"]),
        Route(CONTROL_PATH, control, methods=["POST"]),
    ]
    handlers = {404: _not_found, 405: _not_allowed}
    app = Starlette(routes=routes, exception_handlers=handlers)
    app.state.emulator = state
    return _Recorder(app, state)
