"""Request as code: every form, every route, correct quoting and never a credential."""

from __future__ import annotations

import ast
import base64
import json
import shlex
from urllib.parse import quote

import pytest

from flarechat.api.config import (
    ChatMessage,
    ChatRequest,
    Connection,
    GatewayOptions,
    Route,
    Secret,
)
from flarechat.core.request_code import CodeKind, RequestSpec, render, request_spec

TOKEN = "unit-request-code-secret-31f9a"
GATEWAY_TOKEN = "unit-gateway-secret-b7c2"
MODEL = "@cf/meta/llama-3.1-8b-instruct-fast"
AWKWARD = 'It\'s "quoted"\nline two: café ✓ $HOME `date` \\n'

CONNECTIONS = {
    "direct": Connection(account_id="acct", token=Secret(TOKEN)),
    "gateway-rest": Connection(
        account_id="acct", token=Secret(TOKEN), route=Route.GATEWAY_REST, gateway_id="gw"
    ),
    "gateway-url": Connection(
        account_id="acct",
        token=Secret(TOKEN),
        route=Route.GATEWAY_URL,
        gateway_id="gw",
        gateway_token=Secret(GATEWAY_TOKEN),
    ),
}


def _request(*, stream: bool = True) -> ChatRequest:
    return ChatRequest(
        model=MODEL,
        messages=(ChatMessage("system", "Be brief."), ChatMessage("user", AWKWARD)),
        reject_if_busy=True,
        stream=stream,
        gateway=GatewayOptions(cache_ttl=600, metadata={"team": "it's"}, max_attempts=3),
    )


def _spec(route: str, *, stream: bool = True) -> RequestSpec:
    return request_spec(CONNECTIONS[route], _request(stream=stream))


@pytest.mark.parametrize("kind", list(CodeKind))
@pytest.mark.parametrize("route", list(CONNECTIONS))
def test_no_form_contains_a_token(kind: CodeKind, route: str) -> None:
    code = render(kind, _spec(route)) + repr(_spec(route))
    for secret in (TOKEN, GATEWAY_TOKEN):
        for form in (secret, base64.b64encode(secret.encode()).decode(), quote(secret)):
            assert form not in code


def _curl_arguments(code: str) -> list[str]:
    return shlex.split(code.replace("\\\n", " "))


@pytest.mark.parametrize("route", list(CONNECTIONS))
def test_curl_quotes_the_body_and_headers_exactly(route: str) -> None:
    spec = _spec(route)
    args = _curl_arguments(render(CodeKind.CURL, spec))
    assert json.loads(args[args.index("--data-raw") + 1]) == spec.body
    headers = [args[i + 1] for i, arg in enumerate(args) if arg == "--header"]
    assert "Authorization: Bearer $CLOUDFLARE_API_TOKEN" in headers  # expanded by the shell
    assert ("cf-aig-authorization: Bearer $CF_AIG_TOKEN" in headers) == (route == "gateway-url")
    assert all(f"{k}: {v}" in headers for k, v in spec.headers.items())
    assert spec.url in args


def test_a_large_curl_body_goes_through_stdin() -> None:
    request = ChatRequest(model=MODEL, messages=(ChatMessage("user", "x" * 200_000),))
    code = render(CodeKind.CURL, request_spec(CONNECTIONS["direct"], request))
    command, _, rest = code.partition("\n{")
    assert "--data-binary @- <<'FLARECHAT_REQUEST_BODY'" in command
    body, _, end = rest.rpartition("\nFLARECHAT_REQUEST_BODY")
    assert json.loads("{" + body)["messages"][0]["content"] == "x" * 200_000
    assert end == "\n"


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("route", list(CONNECTIONS))
def test_python_compiles_and_carries_the_exact_body(route: str, stream: bool) -> None:
    spec = _spec(route, stream=stream)
    tree = ast.parse(render(CodeKind.PYTHON, spec))
    values = {
        node.targets[0].id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
    }
    assert ast.literal_eval(values["URL"]) == spec.url
    assert ast.literal_eval(values["BODY"]) == spec.body
    assert "os.environ['CLOUDFLARE_API_TOKEN']" in ast.unparse(values["HEADERS"])


@pytest.mark.parametrize("route", list(CONNECTIONS))
def test_openai_uses_the_compatible_base_url(route: str) -> None:
    spec = _spec(route)
    tree = ast.parse(render(CodeKind.OPENAI, spec))
    calls = {
        ast.unparse(n.func): {kw.arg: kw.value for kw in n.keywords}
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
    }
    base = ast.literal_eval(calls["OpenAI"]["base_url"])
    expected = {
        "direct": "https://api.cloudflare.com/client/v4/accounts/acct/ai/v1",
        "gateway-rest": "https://api.cloudflare.com/client/v4/accounts/acct/ai/v1",
        "gateway-url": "https://gateway.ai.cloudflare.com/v1/acct/gw/workers-ai/v1",
    }
    assert base == expected[route]
    assert ast.literal_eval(calls["client.chat.completions.create"]["model"]) == MODEL


def test_binding_moves_reject_if_busy_and_gateway_options_to_the_third_argument() -> None:
    code = render(CodeKind.BINDING, _spec("gateway-rest"))
    options = json.loads(code[code.index(", inputs, ") + len(", inputs, ") : code.index(");")])
    assert options == {
        "gateway": {
            "id": "gw",
            "cacheTtl": 600,
            "metadata": {"team": "it's"},
            "retries": {"maxAttempts": 3},
        },
        "rejectIfBusy": True,
    }
    inputs = json.loads(code[code.index("const inputs = ") + 15 : code.index(";\n")])
    assert "options" not in inputs
    assert inputs["messages"][1]["content"] == AWKWARD


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="fortran"):
        render("fortran", _spec("direct"))
