"""View as code: a sent reply's request rebuilt from its stored record is the request that
was sent; every form holds no token (plain, base64, URL-encoded) and the curl and Python
forms, run with the token in the environment, get a reply from the emulator."""

from __future__ import annotations

import base64
import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

from flarechat.api.config import Connection, GatewayOptions, Route, SamplingParams, Secret
from flarechat.core.connect import build_request
from flarechat.core.conversation import (
    ROLE_ASSISTANT,
    ROLE_USER,
    Conversation,
    ConversationTree,
    Message,
)
from flarechat.core.lab.request_view import (
    ACCOUNT_PLACEHOLDER,
    NoRequestRecord,
    request_code_for,
    request_of,
)
from flarechat.core.request_code import CodeKind
from flarechat.core.session.records import request_record
from flarechat.emulator import DEMO_ACCOUNT_ID
from flarechat.emulator.server import EmulatorServer

LLAMA = "@cf/meta/llama-3.1-8b-instruct-fast"
TOKEN = "view-code-secret-9c1e5a7b3d"
GATEWAY_TOKEN = "view-code-gateway-secret-2f8a"
PATIENCE = 60.0
AWKWARD = 'It\'s "quoted"\nsecond line: café $HOME `date` !'


def _leaks(text: str) -> list[str]:
    forms = []
    for secret in (TOKEN, GATEWAY_TOKEN):
        encoded = base64.b64encode(secret.encode()).decode()
        forms += [secret, encoded, encoded.rstrip("="), quote(secret, safe="")]
    return [form for form in forms if form in text]


def _conn(server: EmulatorServer, **changes: object) -> Connection:
    conn = Connection(
        account_id=DEMO_ACCOUNT_ID,
        token=Secret(TOKEN),
        api_base=server.api_base,
        gateway_base=server.gateway_base,
    )
    return dataclasses.replace(conn, **changes)  # type: ignore[arg-type]


def _sent_tree(conn: Connection, **request_options: object) -> tuple[ConversationTree, str]:
    """A conversation whose second reply was sent over ``conn``, recorded as the session does."""
    conv = Conversation("c1", model=LLAMA, system_prompt="Be brief.")
    history = [
        Message("u1", "c1", None, ROLE_USER, "First question", created_at=1.0),
        Message("a1", "c1", "u1", ROLE_ASSISTANT, "First answer", created_at=2.0),
        Message("u2", "c1", "a1", ROLE_USER, AWKWARD, created_at=3.0),
    ]
    request = build_request(
        model=LLAMA,
        history=history,
        system_prompt=conv.system_prompt,
        params=SamplingParams(max_tokens=64, temperature=0.3),
        session_id=conv.id,
        **request_options,  # type: ignore[arg-type]
    )
    reply = Message("a2", "c1", "u2", ROLE_ASSISTANT, "Second answer", created_at=4.0, model=LLAMA)
    reply.request = request_record(conn, request)
    return ConversationTree(conv, [*history, reply]), reply.id


def _generation_bodies(server: EmulatorServer) -> list[object]:
    paths = ("/ai/run/", "/ai/v1/", "/workers-ai/")
    return [r.json for r in server.state.requests if any(p in r.path for p in paths)]


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CLOUDFLARE_API_TOKEN": TOKEN, "CF_AIG_TOKEN": GATEWAY_TOKEN}
    return subprocess.run(
        argv, capture_output=True, text=True, env=env, timeout=PATIENCE, check=False
    )


def test_the_rebuilt_request_is_the_one_recorded(emulator: EmulatorServer) -> None:
    conn = _conn(emulator)
    tree, reply = _sent_tree(conn, reject_if_busy=True)
    rebuilt = request_of(tree, reply)
    assert request_record(conn, rebuilt) == tree.get(reply).request
    assert [m.role for m in rebuilt.messages] == ["system", "user", "assistant", "user"]


def test_an_unreadable_stored_option_says_so_instead_of_showing_another_request(
    emulator: EmulatorServer,
) -> None:
    conn = _conn(emulator)
    tree, reply = _sent_tree(conn)
    record = tree.get(reply).request
    assert record is not None
    tree.get(reply).request = {**record, "tools": [{"description": "no name"}]}
    with pytest.raises(NoRequestRecord, match=r"stored request cannot be read: .*name"):
        request_code_for(tree, reply, conn=conn)


def test_a_reply_whose_earlier_messages_changed_shows_no_request_rather_than_another(
    emulator: EmulatorServer,
) -> None:
    tree, reply = _sent_tree(_conn(emulator))
    tree.get("a1").content = ""  # now left out of a request, as a failed reply is
    with pytest.raises(NoRequestRecord, match="changed after it was sent"):
        request_code_for(tree, reply, conn=None)


@pytest.mark.parametrize(
    "route",
    [
        {},
        {"route": Route.GATEWAY_URL, "gateway_id": "my-gw", "gateway_token": Secret(GATEWAY_TOKEN)},
    ],
)
def test_printed_curl_runs_against_the_emulator(
    emulator: EmulatorServer, route: dict[str, object]
) -> None:
    conn = _conn(emulator, **route)
    gateway = GatewayOptions(cache_ttl=600) if route else GatewayOptions()
    tree, reply = _sent_tree(conn, gateway=gateway)
    code = request_code_for(tree, reply, conn=conn)
    assert code.problems == {}
    assert _leaks("".join(code.forms.values())) == []
    emulator.state.reset()
    proc = _run(["bash", "-c", code.forms[CodeKind.CURL]])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("data: [DONE]")
    [body] = _generation_bodies(emulator)
    assert body["messages"][-1] == {"role": "user", "content": AWKWARD}  # type: ignore[index]
    headers = emulator.state.requests[-1].headers
    assert headers["authorization"] == f"Bearer {TOKEN}"
    if route:
        assert headers["cf-aig-cache-ttl"] == "600"


def test_printed_python_runs_and_prints_the_reply(emulator: EmulatorServer, tmp_path: Path) -> None:
    conn = _conn(emulator)
    tree, reply = _sent_tree(conn)
    script = tmp_path / "ask.py"
    script.write_text(
        request_code_for(tree, reply, conn=conn).forms[CodeKind.PYTHON], encoding="utf-8"
    )
    emulator.state.reset()
    proc = _run([sys.executable, str(script)])
    assert proc.returncode == 0, proc.stderr
    assert "You asked" in proc.stdout
    assert len(_generation_bodies(emulator)) == 1


def test_without_an_account_the_code_names_a_placeholder() -> None:
    conn = Connection(account_id=DEMO_ACCOUNT_ID, token=Secret(TOKEN))
    tree, reply = _sent_tree(conn)
    code = request_code_for(tree, reply, conn=None)
    assert ACCOUNT_PLACEHOLDER in code.forms[CodeKind.CURL]
    assert "$CLOUDFLARE_API_TOKEN" in code.forms[CodeKind.CURL]


def test_a_user_message_or_unsent_reply_has_no_code() -> None:
    tree, _ = _sent_tree(Connection(account_id=DEMO_ACCOUNT_ID, token=Secret(TOKEN)))
    with pytest.raises(NoRequestRecord, match="Only a reply"):
        request_code_for(tree, "u1", conn=None)
    with pytest.raises(NoRequestRecord, match="never sent"):
        request_code_for(tree, "a1", conn=None)
    with pytest.raises(NoRequestRecord, match="not in this conversation"):
        request_code_for(tree, "nope", conn=None)
