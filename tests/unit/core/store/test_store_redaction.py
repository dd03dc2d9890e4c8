"""No record the store writes holds the API token: plain, base64 or URL-encoded."""

from __future__ import annotations

import base64
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from flarechat.core.conversation import ROLE_ASSISTANT, ROLE_USER, Conversation, Message, new_id
from flarechat.core.store import DB_FILENAME, AsyncChatStore, ChatStore

TOKEN = "Zx9-hostile_token/value+with=odd~chars42"
GATEWAY_TOKEN = "gw-token-0123456789abcdefghijklmnopqrst"


def forms(secret: str) -> list[str]:
    raw = secret.encode()
    found = [secret, quote(secret, safe=""), quote_plus(secret)]
    for encoded in (base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()):
        found += [encoded, encoded.rstrip("=")]
    return found


def leaky_records(secret: str) -> dict[str, object]:
    """Where a token could slip into a record: echoed URLs, headers, error text, odd values."""
    return {
        "url": f"https://example.invalid/v1?token={quote(secret, safe='')}&x=1",
        "note": f"basic {base64.b64encode(secret.encode()).decode()} urlsafe "
        f"{base64.urlsafe_b64encode(secret.encode()).decode().rstrip('=')}",
        "echo": f"server said: {secret}",
        "list": [quote_plus(secret), {"nested": secret}],
        secret: "a key that is the token",
        "object": object(),  # stored as its text via default=str
    }


def stored_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file())


def assert_no_token(folder: Path) -> None:
    data = stored_bytes(folder)
    for secret in (TOKEN, GATEWAY_TOKEN):
        for form in forms(secret):
            assert form.encode() not in data, form


def write_everything(store: ChatStore) -> None:
    conv = store.create_conversation(
        Conversation(id=new_id(), title="t", params={"header": f"x {TOKEN}"})
    )
    store.update_conversation(conv.id, params={"again": quote(GATEWAY_TOKEN, safe="")})
    question = Message(new_id(), conv.id, None, ROLE_USER, "hello", meta=leaky_records(TOKEN))
    store.add_message(question)
    reply = Message(new_id(), conv.id, question.id, ROLE_ASSISTANT, "", status="streaming")
    store.add_message(reply)
    reply.request = leaky_records(GATEWAY_TOKEN)
    reply.error = {"message": f"401 for token {TOKEN}", "detail": leaky_records(TOKEN)}
    reply.timings = {"trace": base64.b64encode(GATEWAY_TOKEN.encode()).decode()}
    reply.status = "failed"
    store.finalise_message(reply)
    other = Conversation(id=new_id(), title="pending")
    late = Message(new_id(), other.id, None, ROLE_USER, "late", usage=leaky_records(TOKEN))
    store.save_pending(other, [late])


def test_known_tokens_never_reach_the_file_in_any_encoding(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    with ChatStore(folder / DB_FILENAME) as store:
        store.remember_secrets([TOKEN, GATEWAY_TOKEN, None])
        write_everything(store)
        tree = store.load_tree(store.list_conversations()[-1].id)
        assert all("[REDACTED]" in str(m.meta or m.error) for m in tree if m.meta or m.error)
    assert_no_token(folder)


def test_bearer_headers_are_scrubbed_even_before_tokens_are_known(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    with ChatStore(folder / DB_FILENAME) as store:
        conv = store.create_conversation()
        message = Message(
            new_id(),
            conv.id,
            None,
            ROLE_USER,
            "hi",
            request={"sent": f"Authorization: Bearer {TOKEN}", "cf": "cfut_" + "a" * 40},
        )
        store.add_message(message)
    data = stored_bytes(folder)
    assert TOKEN.encode() not in data
    assert b"cfut_" not in data


@pytest.mark.asyncio
async def test_async_store_remembers_secrets(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    store = await AsyncChatStore.open(folder / DB_FILENAME)
    try:
        await store.remember_secrets([TOKEN])
        conv = await store.create_conversation()
        await store.add_message(
            Message(
                new_id(),
                conv.id,
                None,
                ROLE_USER,
                "x",
                meta={"b64": base64.b64encode(TOKEN.encode()).decode()},
            )
        )
    finally:
        await store.close()
    assert all(form.encode() not in stored_bytes(folder) for form in forms(TOKEN))
