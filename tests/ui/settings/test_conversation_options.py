"""Per-conversation sampling parameters: the dialog, the request they make, and reopening."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot
from shell_helpers import MODEL, ChatEnv, chat_env

from flarechat.api.config import SamplingParams
from flarechat.core.conversation import ROLE_ASSISTANT
from flarechat.emulator import EmulatorServer
from flarechat.settings.schema import Settings
from flarechat.settings.secrets import MemorySecretStore
from flarechat.settings.store import SettingsStore
from flarechat.ui.control.preferences import Preferences
from flarechat.ui.settings.conversation_dialog import MODEL_DEFAULT, ConversationDialog

OTHER_MODEL = "@cf/mistralai/mistral-small-3.1-24b-instruct"
SYSTEM = "Answer like a ship's captain."
PARAMS: dict[str, Any] = {
    "max_tokens": 300,
    "temperature": 0.4,
    "top_p": 0.9,
    "top_k": 40,
    "seed": 9_876_543_210,
    "presence_penalty": -1.5,
}
UNSET = ("repetition_penalty", "frequency_penalty")


def _dialog(qtbot: QtBot, params: dict[str, Any]) -> ConversationDialog:
    dialog = ConversationDialog(system_prompt="", params=params, default_max_tokens=2048)
    qtbot.addWidget(dialog)
    return dialog


def test_dialog_shows_stored_values_and_empty_means_model_default(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, {**PARAMS, "top_k": 500})  # a bad stored value is not shown
    assert dialog.sampling["top_p"].text() == "0.9"
    assert dialog.sampling["seed"].text() == "9876543210"
    assert dialog.sampling["top_k"].text() == ""
    assert dialog.sampling["repetition_penalty"].placeholderText() == MODEL_DEFAULT
    assert dialog.params() == {k: v for k, v in PARAMS.items() if k != "top_k"}


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("top_p", "2.5", "Top-p must be from 0 to 2"),
        ("top_k", "0", "Top-k must be from 1 to 50"),
        ("top_k", "4.5", "Top-k must be a whole number"),
        ("seed", "10000000000", "Seed must be from 1 to 9,999,999,999"),
        ("repetition_penalty", "-0.1", "Repetition penalty must be from 0 to 2"),
        ("frequency_penalty", "3", "Frequency penalty must be from -2 to 2"),
        ("presence_penalty", "lots", "Presence penalty must be a number"),
    ],
)
def test_dialog_refuses_out_of_range_values(
    qtbot: QtBot, name: str, text: str, message: str
) -> None:
    dialog = _dialog(qtbot, {})
    emitted: list[tuple[str, dict[str, Any]]] = []
    dialog.options_accepted.connect(lambda prompt, params: emitted.append((prompt, params)))
    dialog.show()
    dialog.sampling[name].setText(text)
    dialog._accept()
    assert emitted == []
    assert dialog.isVisible()
    assert dialog.error.isVisibleTo(dialog)
    assert message in dialog.error.text()
    dialog.sampling[name].clear()
    dialog._accept()
    assert emitted == [("", {})]


def test_dialog_emits_typed_values(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, {})
    emitted: list[dict[str, Any]] = []
    dialog.options_accepted.connect(lambda _prompt, params: emitted.append(params))
    for name, text in (("top_k", " 7 "), ("seed", "42"), ("frequency_penalty", "-0.25")):
        dialog.sampling[name].setText(text)
    dialog._accept()
    assert emitted == [{"top_k": 7, "seed": 42, "frequency_penalty": -0.25}]
    assert isinstance(emitted[0]["top_k"], int)


def test_preferences_sampling_keeps_only_valid_values(tmp_path: Path) -> None:
    prefs = Preferences(
        store=SettingsStore(tmp_path / "settings.json"),
        secrets=MemorySecretStore(),
        settings=Settings(default_max_tokens=999),
        env={},
    )
    stored = {"top_p": 0.5, "top_k": 12.0, "seed": True, "repetition_penalty": 5, "seed_x": 1}
    assert prefs.sampling(stored) == SamplingParams(max_tokens=999, top_p=0.5)
    assert prefs.sampling(PARAMS) == SamplingParams(**PARAMS)


def _last_generation(emulator: EmulatorServer) -> Any:
    """The last chat request (native /ai/run/ or the gateway URL's /workers-ai/ route)."""
    return [r for r in emulator.state.requests if isinstance(r.json, dict)][-1]


async def _reply(env: ChatEnv, text: str) -> str:
    reply = env.chat.send(text)
    assert reply is not None
    await env.finished(reply)
    return reply


@pytest.mark.asyncio
async def test_conversation_params_are_sent_saved_and_restored(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with chat_env(emulator, tmp_path) as env:
        conversation_id = env.chat.new_conversation()
        env.chat.set_model(OTHER_MODEL)
        env.chat.set_options(SYSTEM, dict(PARAMS))
        await _reply(env, "Ahoy?")
        sent = _last_generation(emulator)
        assert sent.path.endswith(f"/ai/run/{OTHER_MODEL}")
        assert {k: sent.json[k] for k in PARAMS} == PARAMS
        assert all(name not in sent.json for name in UNSET)
        assert sent.json["messages"][0] == {"role": "system", "content": SYSTEM}

    emulator.state.reset()
    async with chat_env(emulator, tmp_path, last_model=MODEL) as env:
        assert await env.chat.open_conversation(conversation_id)
        tree = env.chat.current_tree()
        assert tree is not None
        assert env.chat.current_model() == OTHER_MODEL
        assert (tree.conversation.system_prompt, tree.conversation.params) == (SYSTEM, PARAMS)
        await _reply(env, "And again?")
        again = _last_generation(emulator)
        assert again.path.endswith(f"/ai/run/{OTHER_MODEL}")
        assert {k: again.json[k] for k in PARAMS} == PARAMS
        assert all(name not in again.json for name in UNSET)
        assert again.json["messages"][0] == {"role": "system", "content": SYSTEM}
        assert [m["content"] for m in again.json["messages"][1:] if m["role"] == "user"] == [
            "Ahoy?",
            "And again?",
        ]


@pytest.mark.asyncio
async def test_the_assistant_message_records_the_exact_request(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    gateway: dict[str, Any] = {
        "route": "gateway-url",
        "gateway_id": "my-gw",
        "cache_ttl": 600,
        "gateway_cache_key": "faq-7",
        "gateway_metadata": {"team": "docs"},
        "gateway_collect_log": True,
        "gateway_max_attempts": 2,
        "gateway_retry_delay_ms": 100,
        "gateway_backoff": "constant",
    }
    async with chat_env(emulator, tmp_path, **gateway) as env:
        conversation_id = env.chat.new_conversation()
        env.chat.set_options(SYSTEM, {"top_k": 5, "seed": 7})
        reply_id = await _reply(env, "Record me")
        sent = _last_generation(emulator)
        assert sent.headers["cf-aig-cache-key"] == "faq-7"
        assert sent.headers["cf-aig-collect-log"] == "true"
        assert sent.headers["cf-aig-max-attempts"] == "2"
        tree = await env.store.load_tree(conversation_id)
        stored = tree.get(reply_id)
    assert stored.role == ROLE_ASSISTANT
    assert stored.request == {
        "model": MODEL,
        "route": "gateway-url",
        "endpoint": "native",
        "api_base": emulator.api_base.rstrip("/"),
        "gateway_base": emulator.gateway_base.rstrip("/"),
        "gateway_id": "my-gw",
        "params": {"max_tokens": 2048, "top_k": 5, "seed": 7},
        "system_prompt": SYSTEM,
        "message_count": 2,
        "reject_if_busy": False,
        "gateway": {
            "cache_ttl": 600,
            "cache_key": "faq-7",
            "metadata": {"team": "docs"},
            "collect_log": True,
            "max_attempts": 2,
            "retry_delay_ms": 100,
            "backoff": "constant",
        },
        "session_id": conversation_id,
        "stream": True,
    }
    assert stored.finish_reason == "stop"
    meta = stored.meta or {}
    assert meta["cache_status"] == "MISS"
    assert isinstance(meta["log_id"], str)
    assert meta["log_id"]
    neurons = meta.get("neurons", (stored.usage or {}).get("neurons"))
    assert isinstance(neurons, float | int)
    assert neurons > 0
