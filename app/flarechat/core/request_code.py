"""A chat request as code to paste: curl, Python (httpx), the openai SDK, a Workers binding call.

``request_spec(conn, request)`` builds the request with the api's own URL, header and body
builders (``flarechat.api._routes.build_chat_request``), so what is printed is what ``ask`` and
the window send. ``render(kind, spec)`` writes it as code. The token never enters a spec: the
request is built with placeholder credentials, whose headers are dropped and written back as
environment references (``$CLOUDFLARE_API_TOKEN``, ``os.environ[...]``; a binding needs none).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from flarechat.api._routes import PreparedRequest, build_chat_request
from flarechat.api.config import ChatRequest, Connection, Endpoint, GatewayOptions, Route, Secret
from flarechat.settings.resolve import ENV_API_TOKEN

__all__ = [
    "ENV_API_TOKEN",
    "ENV_GATEWAY_TOKEN",
    "CodeKind",
    "RequestSpec",
    "render",
    "request_spec",
]

#: The variable the printed code reads an authenticated gateway's token from.
ENV_GATEWAY_TOKEN = "CF_AIG_TOKEN"

#: Stand-ins the request is built with; their headers are dropped, so they are never printed.
_API_MARK = "flarechat-api-token-placeholder"
_GATEWAY_MARK = "flarechat-gateway-token-placeholder"
_SECRET_HEADERS = frozenset({"authorization", "cf-aig-authorization"})
#: Headers the printed code leaves to its HTTP library (or that only identify Flarechat).
_LIBRARY_HEADERS = frozenset({"content-type", "accept"})
_USER_AGENT = "flarechat"
_OPENAI_SUFFIX = "/chat/completions"
#: Linux caps one argument at 128 KiB (MAX_ARG_STRLEN): larger bodies go through stdin.
_ARG_LIMIT = 100_000
_HEREDOC = "FLARECHAT_REQUEST_BODY"
_INDENT = "    "
_TIMEOUT_S = 120
#: Keyword arguments ``client.chat.completions.create`` takes; the rest go in ``extra_body``.
_OPENAI_KWARGS = frozenset(
    {
        "model",
        "messages",
        "max_tokens",
        "temperature",
        "top_p",
        "seed",
        "frequency_penalty",
        "presence_penalty",
        "stream",
        "stream_options",
        "response_format",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "reasoning_effort",
    }
)


class CodeKind(StrEnum):
    """The forms a request can be printed in."""

    CURL = "curl"
    PYTHON = "python"
    OPENAI = "openai"
    BINDING = "binding"


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """One chat request, free of credentials: what to send where, in each endpoint's form.

    ``headers`` hold no Authorization headers: ``render`` writes them as environment references.
    """

    model: str
    route: Route
    url: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]
    #: the authenticated gateway's token is sent (cf-aig-authorization, gateway URL route)
    gateway_token: bool = False
    gateway_id: str = ""
    gateway: GatewayOptions = field(default_factory=GatewayOptions)
    #: the native (/ai/run) body, which a binding call takes as its inputs
    native_body: Mapping[str, Any] = field(default_factory=dict)
    #: the OpenAI-compatible endpoint's base URL, headers and body; None when the request
    #: cannot go there (a LoRA adapter is a native-only input)
    openai_base_url: str | None = None
    openai_headers: Mapping[str, str] = field(default_factory=dict)
    openai_body: Mapping[str, Any] = field(default_factory=dict)

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))


def request_spec(conn: Connection, request: ChatRequest) -> RequestSpec:
    """The request ``conn`` + ``request`` make; raises ValueError as sending it would."""
    safe = replace(
        conn,
        token=Secret(_API_MARK),
        gateway_token=Secret(_GATEWAY_MARK if conn.gateway_token else ""),
    )
    sent = build_chat_request(safe, request, user_agent=_USER_AGENT)
    native = _built(replace(safe, endpoint=Endpoint.NATIVE), request)
    compat = _built(replace(safe, endpoint=Endpoint.OPENAI), request)
    openai = compat is not None and compat.url.endswith(_OPENAI_SUFFIX)
    return RequestSpec(
        model=request.model,
        route=conn.route,
        url=sent.url,
        headers=_public_headers(sent.headers),
        body=sent.body,
        gateway_token=any(k.lower() == "cf-aig-authorization" for k in sent.headers),
        gateway_id=conn.gateway_id.strip() if conn.route is not Route.DIRECT else "",
        gateway=request.gateway,
        native_body=native.body if native is not None else {},
        openai_base_url=compat.url.removesuffix(_OPENAI_SUFFIX) if compat and openai else None,
        openai_headers=_public_headers(compat.headers, drop=_LIBRARY_HEADERS) if compat else {},
        openai_body=compat.body if compat is not None else {},
    )


def _built(conn: Connection, request: ChatRequest) -> PreparedRequest | None:
    """The request on another endpoint, or None when it cannot be sent there."""
    try:
        return build_chat_request(conn, request, user_agent=_USER_AGENT)
    except ValueError:
        return None


def _public_headers(
    headers: Mapping[str, str], *, drop: frozenset[str] = frozenset()
) -> dict[str, str]:
    dropped = _SECRET_HEADERS | {"user-agent"} | drop
    public = {k: v for k, v in headers.items() if k.lower() not in dropped}
    if any(mark in v for v in public.values() for mark in (_API_MARK, _GATEWAY_MARK)):
        raise RuntimeError("A credential reached a printable header.")
    return public


def render(kind: CodeKind | str, spec: RequestSpec) -> str:
    """``spec`` as code of ``kind``; raises ValueError when that form cannot express it."""
    renderers: dict[CodeKind, Callable[[RequestSpec], str]] = {
        CodeKind.CURL: _curl,
        CodeKind.PYTHON: _python,
        CodeKind.OPENAI: _openai,
        CodeKind.BINDING: _binding,
    }
    return renderers[CodeKind(kind)](spec)


# --- curl -------------------------------------------------------------------------------------


def _curl(spec: RequestSpec) -> str:
    body = json.dumps(spec.body, ensure_ascii=False, indent=2)
    lines = ["curl --silent --show-error" + (" --no-buffer" if spec.stream else "")]
    lines.append(f"--request POST {shlex.quote(spec.url)}")
    lines.append(f'--header "Authorization: Bearer ${ENV_API_TOKEN}"')
    if spec.gateway_token:
        lines.append(f'--header "cf-aig-authorization: Bearer ${ENV_GATEWAY_TOKEN}"')
    headers = {"Content-Type": "application/json", **spec.headers}
    lines += [f"--header {shlex.quote(f'{k}: {v}')}" for k, v in headers.items()]
    if len(body.encode()) <= _ARG_LIMIT:
        lines.append(f"--data-raw {shlex.quote(body)}")
        return " \\\n  ".join(lines) + "\n"
    lines.append("--data-binary @- <<'" + _HEREDOC + "'")
    return " \\\n  ".join(lines) + f"\n{body}\n{_HEREDOC}\n"


# --- Python -----------------------------------------------------------------------------------


def _py(value: Any, depth: int = 0) -> str:
    """A Python literal for JSON data (json.dumps strings are valid Python string literals)."""
    pad, inner = _INDENT * depth, _INDENT * (depth + 1)
    if isinstance(value, Mapping) and value:
        items = [f"{inner}{_py(str(k))}: {_py(v, depth + 1)}," for k, v in value.items()]
        return "{\n" + "\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list | tuple) and value:
        items = [f"{inner}{_py(v, depth + 1)}," for v in value]
        return "[\n" + "\n".join(items) + f"\n{pad}]"
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, list | tuple):
        return "[]"
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)


def _env(name: str) -> str:
    # Single quotes inside: an f-string may not reuse its own quote before Python 3.12.
    return f"f\"Bearer {{os.environ['{name}']}}\""


def _py_headers(headers: Mapping[str, str], *, auth: tuple[tuple[str, str], ...]) -> str:
    lines = [f"{_INDENT}{_py(name)}: {_env(env)}," for name, env in auth]
    lines += [f"{_INDENT}{_py(k)}: {_py(v)}," for k, v in headers.items()]
    return "{\n" + "\n".join(lines) + "\n}"


def _auth(spec: RequestSpec) -> tuple[tuple[str, str], ...]:
    api = (("Authorization", ENV_API_TOKEN),)
    return (*api, ("cf-aig-authorization", ENV_GATEWAY_TOKEN)) if spec.gateway_token else api


_PY_STREAM = f'''

def text_of(event: dict) -> str:
    """The text in one stream event: a native chunk or an OpenAI chunk."""
    if isinstance(event.get("response"), str):
        return event["response"]
    choices = event.get("choices") or [{{}}]
    return (choices[0].get("delta") or {{}}).get("content") or ""


with httpx.stream("POST", URL, headers=HEADERS, json=BODY, timeout={_TIMEOUT_S}) as response:
    if response.is_error:
        sys.exit(f"HTTP {{response.status_code}}: {{response.read().decode()}}")
    for line in response.iter_lines():
        data = line.removeprefix("data:").strip()
        if line.startswith("data:") and data != "[DONE]":
            print(text_of(json.loads(data)), end="", flush=True)
print()
'''

_PY_ONCE = f"""
response = httpx.post(URL, headers=HEADERS, json=BODY, timeout={_TIMEOUT_S})
if response.is_error:
    sys.exit(f"HTTP {{response.status_code}}: {{response.text}}")
print(json.dumps(response.json(), indent=2, ensure_ascii=False))
"""


def _python(spec: RequestSpec) -> str:
    head = [
        f'"""Ask {spec.model} on Workers AI (the request `flarechat ask` sends)."""',
        "",
        "import json",
        "import os",
        "import sys",
        "",
        "import httpx",
        "",
        f"URL = {_py(spec.url)}",
        f"HEADERS = {_py_headers(spec.headers, auth=_auth(spec))}",
        f"BODY = {_py(spec.body)}",
    ]
    return "\n".join(head) + "\n" + (_PY_STREAM if spec.stream else _PY_ONCE)


# --- openai SDK -------------------------------------------------------------------------------


def _openai(spec: RequestSpec) -> str:
    if spec.openai_base_url is None:
        raise ValueError(
            "This request cannot use the OpenAI-compatible endpoint (a LoRA adapter is a "
            "native-only input); print it as curl, python or binding instead."
        )
    body = dict(spec.openai_body)
    kwargs = {k: v for k, v in body.items() if k in _OPENAI_KWARGS}
    extra = {k: v for k, v in body.items() if k not in _OPENAI_KWARGS}
    if extra:
        kwargs["extra_body"] = extra
    auth = (("cf-aig-authorization", ENV_GATEWAY_TOKEN),) if spec.gateway_token else ()
    client = [
        f"{_INDENT}api_key=os.environ[{_py(ENV_API_TOKEN)}],",
        f"{_INDENT}base_url={_py(spec.openai_base_url)},",
    ]
    if auth or spec.openai_headers:
        headers = _py_headers(spec.openai_headers, auth=auth).replace("\n", "\n" + _INDENT)
        client.append(f"{_INDENT}default_headers={headers},")
    call = [f"{_INDENT}{k}={_py(v, 1)}," for k, v in kwargs.items()]
    lines = [
        f'"""Ask {spec.model} through Workers AI\'s OpenAI-compatible endpoint."""',
        "",
        "import os",
        "",
        "from openai import OpenAI",
        "",
        "client = OpenAI(",
        *client,
        ")",
        f"{'stream' if spec.stream else 'completion'} = client.chat.completions.create(",
        *call,
        ")",
    ]
    if spec.stream:
        lines += [
            "for chunk in stream:",
            f"{_INDENT}if chunk.choices and chunk.choices[0].delta.content:",
            f'{_INDENT * 2}print(chunk.choices[0].delta.content, end="", flush=True)',
            "print()",
        ]
    else:
        lines.append("print(completion.choices[0].message.content)")
    return "\n".join(lines) + "\n"


# --- Workers binding --------------------------------------------------------------------------


def _binding_gateway(spec: RequestSpec) -> dict[str, Any]:
    options = spec.gateway
    retries = {
        "maxAttempts": options.max_attempts,
        "retryDelayMs": options.retry_delay_ms,
        "backoff": options.backoff,
    }
    gateway: dict[str, Any] = {
        "id": spec.gateway_id,
        "skipCache": options.skip_cache or None,
        "cacheTtl": options.cache_ttl,
        "cacheKey": options.cache_key,
        "metadata": dict(options.metadata) or None,
        "collectLog": options.collect_log,
        "requestTimeoutMs": options.request_timeout_ms,
        "retries": {k: v for k, v in retries.items() if v is not None} or None,
    }
    return {k: v for k, v in gateway.items() if v is not None}


def _js(value: Any, depth: int) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2).replace("\n", "\n" + "  " * depth)


def _binding(spec: RequestSpec) -> str:
    inputs = {k: v for k, v in spec.native_body.items() if k != "options"}
    options: dict[str, Any] = {}
    if spec.gateway_id:
        options["gateway"] = _binding_gateway(spec)
    if spec.native_body.get("options", {}).get("rejectIfBusy"):
        options["rejectIfBusy"] = True
    if session := spec.headers.get("x-session-affinity"):
        options["extraHeaders"] = {"x-session-affinity": session}
    run_args = [json.dumps(spec.model), "inputs"] + ([_js(options, 2)] if options else [])
    if inputs.get("stream"):
        reply = (
            '    return new Response(reply, { headers: { "content-type": "text/event-stream" } });'
        )
    else:
        reply = "    return Response.json(reply);"
    lines = [
        '// A Worker with the Workers AI binding: "ai": { "binding": "AI" } in wrangler.jsonc.',
        "// No token in code: the binding (env.AI) authenticates as the Worker's account.",
        "export default {",
        "  async fetch(request, env) {",
        f"    const inputs = {_js(inputs, 2)};",
        f"    const reply = await env.AI.run({', '.join(run_args)});",
        reply,
        "  },",
        "};",
    ]
    return "\n".join(lines) + "\n"
