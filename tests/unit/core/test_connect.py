"""core.connect: real settings.resolve output made into Connection, GatewayOptions, ChatRequest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flarechat.api.config import (
    DEFAULT_API_BASE,
    DEFAULT_GATEWAY_BASE,
    ChatMessage,
    Endpoint,
    GatewayOptions,
    Route,
    SamplingParams,
)
from flarechat.core.connect import (
    ConfigurationError,
    build_request,
    connection_from,
    gateway_options_from,
    load_profile,
)
from flarechat.core.conversation import Message
from flarechat.settings.resolve import resolve
from flarechat.settings.schema import Settings
from flarechat.settings.secrets import API_TOKEN, KeyringSecretStore, MemorySecretStore
from flarechat.settings.secrets import GATEWAY_TOKEN as GATEWAY_TOKEN_NAME
from flarechat.settings.store import SettingsStore

ACCOUNT = "0123456789abcdef0123456789abcdef"
TOKEN = "connect-test-token-0123456789abcdef"
GATEWAY_TOKEN = "gateway-test-token-0123456789abcdef"


def test_direct_connection_from_saved_settings() -> None:
    settings = Settings(account_id=ACCOUNT, request_timeout=45.0)
    conn = connection_from(resolve(settings, api_token=TOKEN, gateway_token=None, env={}))
    assert conn.account_id == ACCOUNT
    assert conn.token.reveal() == TOKEN
    assert TOKEN not in repr(conn)
    assert (conn.api_base, conn.gateway_base) == (DEFAULT_API_BASE, DEFAULT_GATEWAY_BASE)
    assert (conn.route, conn.endpoint) == (Route.DIRECT, Endpoint.NATIVE)
    assert conn.read_timeout == 45.0
    assert not conn.gateway_token


def test_environment_overrides_reach_the_connection() -> None:
    env = {
        "CLOUDFLARE_ACCOUNT_ID": ACCOUNT,
        "CLOUDFLARE_API_TOKEN": TOKEN,
        "CLOUDFLARE_AI_GATEWAY_ID": "my-gw",
        "FLARECHAT_API_BASE": "http://127.0.0.1:9/client/v4/",
        "FLARECHAT_GATEWAY_BASE": "http://127.0.0.1:9/gateway/v1",
    }
    settings = Settings(endpoint="openai")
    resolved = resolve(settings, api_token=None, gateway_token=GATEWAY_TOKEN, env=env)
    conn = connection_from(resolved)
    assert conn.route is Route.GATEWAY_REST  # an env gateway id on the direct route
    assert conn.endpoint is Endpoint.OPENAI
    assert conn.gateway_id == "my-gw"
    assert conn.api_base == "http://127.0.0.1:9/client/v4"
    assert conn.gateway_base == "http://127.0.0.1:9/gateway/v1"
    assert conn.gateway_token.reveal() == GATEWAY_TOKEN


def test_gateway_url_route_is_kept() -> None:
    settings = Settings(account_id=ACCOUNT, route="gateway-url", gateway_id="authgw")
    conn = connection_from(resolve(settings, api_token=TOKEN, gateway_token=None, env={}))
    assert conn.route is Route.GATEWAY_URL
    assert conn.gateway_id == "authgw"


def test_incomplete_settings_raise_with_the_problems() -> None:
    resolved = resolve(Settings(), api_token=None, gateway_token=None, env={})
    with pytest.raises(ConfigurationError) as raised:
        connection_from(resolved)
    assert raised.value.problems == resolved.problems
    assert raised.value.incomplete
    assert any("CLOUDFLARE_ACCOUNT_ID" in problem for problem in raised.value.problems)
    assert any("CLOUDFLARE_API_TOKEN" in problem for problem in raised.value.problems)


def test_gateway_options_from_settings() -> None:
    settings = Settings(account_id=ACCOUNT, skip_cache=True, cache_ttl=3600)
    options = gateway_options_from(resolve(settings, api_token=TOKEN, gateway_token=None, env={}))
    assert options == GatewayOptions(skip_cache=True, cache_ttl=3600)


def test_invalid_cache_ttl_falls_back_to_the_gateway_default() -> None:
    settings = Settings(account_id=ACCOUNT, cache_ttl=5)
    options = gateway_options_from(resolve(settings, api_token=TOKEN, gateway_token=None, env={}))
    assert options.cache_ttl is None


def test_build_request_puts_the_system_prompt_first() -> None:
    params = SamplingParams(max_tokens=300, temperature=0.2)
    gateway = GatewayOptions(skip_cache=True)
    request = build_request(
        model="@cf/qwen/qwq-32b",
        history=[ChatMessage("user", "hi"), ChatMessage("assistant", "hello", reasoning="greet")],
        system_prompt="Be brief.",
        params=params,
        reject_if_busy=True,
        gateway=gateway,
        session_id="conv-1",
    )
    assert request.model == "@cf/qwen/qwq-32b"
    assert request.messages == (
        ChatMessage("system", "Be brief."),
        ChatMessage("user", "hi"),
        ChatMessage("assistant", "hello", reasoning="greet"),
    )
    assert request.params is params
    assert request.reject_if_busy
    assert request.gateway is gateway
    assert request.session_id == "conv-1"
    assert request.stream


def test_build_request_defaults_and_blank_system_prompt() -> None:
    request = build_request(model="m", history=[ChatMessage("user", "q")], system_prompt="  \n")
    assert request.messages == (ChatMessage("user", "q"),)
    assert request.params == SamplingParams()
    assert request.gateway == GatewayOptions()
    assert not request.reject_if_busy
    assert request.session_id is None


def test_build_request_from_stored_messages() -> None:
    """The store's Message works as history; empty failed replies and user reasoning are dropped."""

    def message(role: str, content: str, reasoning: str = "") -> Message:
        return Message(
            id=role + content,
            conversation_id="c",
            parent_id=None,
            role=role,
            content=content,
            reasoning=reasoning,
        )

    history = [
        message("user", "first"),
        message("assistant", "", reasoning="thought, then failed"),
        message("user", "again", reasoning="never sent"),
        message("assistant", "answer", reasoning="why"),
        message("assistant", "plain"),
    ]
    request = build_request(model="m", history=history)
    assert request.messages == (
        ChatMessage("user", "first"),
        ChatMessage("user", "again"),
        ChatMessage("assistant", "answer", reasoning="why"),
        ChatMessage("assistant", "plain"),
    )


# --- load_profile: settings file + keychain + environment ----------------------------------------


class RecordingStore(MemorySecretStore):
    """A memory keychain that remembers which names were asked for."""

    def __init__(self, initial: dict[str, str]) -> None:
        super().__init__(initial)
        self.asked: list[str] = []

    def get(self, name: str) -> str | None:
        self.asked.append(name)
        return super().get(name)


def saved_settings(tmp_path: Path, **values: object) -> SettingsStore:
    store = SettingsStore(tmp_path / "settings.json")
    store.save(Settings(**values))  # type: ignore[arg-type]
    return store


@pytest.mark.asyncio
async def test_load_profile_reads_settings_and_keychain(tmp_path: Path) -> None:
    keychain = RecordingStore({API_TOKEN: TOKEN, GATEWAY_TOKEN_NAME: GATEWAY_TOKEN})
    store = saved_settings(
        tmp_path, account_id=ACCOUNT, route="gateway-url", gateway_id="authgw", reject_if_busy=True
    )
    profile = await load_profile(settings_store=store, secret_store=keychain, env={})
    assert profile.conn.token.reveal() == TOKEN
    assert profile.conn.gateway_token.reveal() == GATEWAY_TOKEN
    assert profile.conn.route is Route.GATEWAY_URL
    assert profile.reject_if_busy
    assert profile.settings.gateway_id == "authgw"
    assert profile.warnings == ()
    assert keychain.asked == [API_TOKEN, GATEWAY_TOKEN_NAME]


@pytest.mark.asyncio
async def test_an_environment_token_is_not_looked_up(tmp_path: Path) -> None:
    keychain = RecordingStore({API_TOKEN: "keychain-token-should-lose-0123456789"})
    env = {"CLOUDFLARE_ACCOUNT_ID": ACCOUNT, "CLOUDFLARE_API_TOKEN": TOKEN}
    store = SettingsStore(tmp_path / "settings.json")
    profile = await load_profile(settings_store=store, secret_store=keychain, env=env)
    assert profile.conn.token.reveal() == TOKEN
    assert API_TOKEN not in keychain.asked


@pytest.mark.asyncio
async def test_unavailable_keychain_is_fine_with_an_environment_token(tmp_path: Path) -> None:
    # tests/conftest.py forces keyring's "fail" backend: every keychain call is refused
    env = {"CLOUDFLARE_ACCOUNT_ID": ACCOUNT, "CLOUDFLARE_API_TOKEN": TOKEN}
    profile = await load_profile(
        settings_store=SettingsStore(tmp_path / "settings.json"),
        secret_store=KeyringSecretStore(),
        env=env,
    )
    assert profile.conn.token.reveal() == TOKEN
    assert not profile.conn.gateway_token


@pytest.mark.asyncio
async def test_unavailable_keychain_without_a_token_explains_itself(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as raised:
        await load_profile(
            settings_store=saved_settings(tmp_path, account_id=ACCOUNT),
            secret_store=KeyringSecretStore(),
            env={},
        )
    assert raised.value.incomplete
    text = " ".join(raised.value.problems)
    assert "CLOUDFLARE_API_TOKEN" in text
    assert "keychain could not be read" in text


@pytest.mark.asyncio
async def test_repairs_are_reported_as_warnings(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"schema_version": 1, "account_id": ACCOUNT, "cache_ttl": 5}))
    profile = await load_profile(
        settings_store=SettingsStore(path),
        secret_store=MemorySecretStore({API_TOKEN: TOKEN}),
        env={},
    )
    assert profile.gateway.cache_ttl is None
    assert any("cache TTL" in warning for warning in profile.warnings)


@pytest.mark.asyncio
async def test_a_corrupt_settings_file_is_mentioned_when_setup_is_missing(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{not json")
    with pytest.raises(ConfigurationError) as raised:
        await load_profile(
            settings_store=SettingsStore(path), secret_store=MemorySecretStore(), env={}
        )
    # Nothing is set up (the caller says so once), and the file that was set aside is named.
    assert raised.value.unset
    assert any("settings" in problem.lower() for problem in raised.value.problems)


@pytest.mark.asyncio
async def test_a_too_short_stored_gateway_token_is_its_own_problem_not_missing_credentials(
    tmp_path: Path,
) -> None:
    store = saved_settings(tmp_path, route="gateway-url", gateway_id="authgw")
    keychain = MemorySecretStore({GATEWAY_TOKEN_NAME: "short"})
    env = {"CLOUDFLARE_ACCOUNT_ID": ACCOUNT, "CLOUDFLARE_API_TOKEN": TOKEN}
    with pytest.raises(ConfigurationError) as raised:
        await load_profile(settings_store=store, secret_store=keychain, env=env)
    assert not raised.value.incomplete
    assert not raised.value.unset
    [problem] = raised.value.problems
    assert "gateway token" in problem


@pytest.mark.asyncio
async def test_nothing_set_up_is_one_unset_error_not_a_problem_per_field(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as raised:
        await load_profile(
            settings_store=saved_settings(tmp_path), secret_store=MemorySecretStore(), env={}
        )
    assert raised.value.unset
    assert raised.value.incomplete
    assert raised.value.problems == ["The connection settings are incomplete."]
