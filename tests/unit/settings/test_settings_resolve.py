"""resolve(): saved settings + keychain tokens, environment overrides, problems, masked repr."""

from __future__ import annotations

import pytest

from flarechat.api import config as api_config
from flarechat.settings import resolve as resolve_module
from flarechat.settings.resolve import Resolved, resolve
from flarechat.settings.schema import ENDPOINTS, ROUTES, Settings

ACCOUNT = "0123456789abcdef0123456789abcdef"
ENV_ACCOUNT = "fedcba9876543210fedcba9876543210"
TOKEN = "keychainTOKEN_0123456789abcdefghij"
ENV_TOKEN = "environmentTOKEN_0123456789abcdefgh"
GATEWAY_TOKEN = "gatewayTOKEN_0123456789abcdefghijk"


def _complete() -> Settings:
    return Settings(account_id=ACCOUNT)


def test_saved_settings_and_keychain_token_make_a_complete_result() -> None:
    settings = Settings(
        account_id=ACCOUNT,
        endpoint="openai",
        reject_if_busy=True,
        skip_cache=True,
        cache_ttl=600,
        request_timeout=30.0,
    )
    resolved = resolve(settings, api_token=TOKEN, gateway_token=None, env={})
    assert resolved.is_complete
    assert resolved.problems == []
    assert resolved.warnings == []
    assert resolved.overridden == frozenset()
    assert (resolved.account_id, resolved.api_token, resolved.gateway_token) == (ACCOUNT, TOKEN, "")
    assert resolved.api_base == "https://api.cloudflare.com/client/v4"
    assert resolved.gateway_base == "https://gateway.ai.cloudflare.com/v1"
    assert (resolved.route, resolved.endpoint, resolved.uses_gateway) == ("direct", "openai", False)
    assert (resolved.reject_if_busy, resolved.skip_cache) == (True, True)
    assert (resolved.cache_ttl, resolved.request_timeout) == (600, 30.0)


def test_missing_account_and_token_are_problems_that_name_the_fix() -> None:
    resolved = resolve(Settings(), api_token=None, gateway_token=None, env={})
    assert not resolved.is_complete
    assert len(resolved.problems) == 2
    account_problem, token_problem = resolved.problems
    assert "account ID" in account_problem
    assert "CLOUDFLARE_ACCOUNT_ID" in account_problem
    assert "API token" in token_problem
    assert "CLOUDFLARE_API_TOKEN" in token_problem


def test_invalid_saved_values_are_problems() -> None:
    resolved = resolve(
        Settings(account_id="not-an-account"), api_token="short", gateway_token=None, env={}
    )
    assert not resolved.is_complete
    assert any("32 characters" in p for p in resolved.problems)
    assert any("too short" in p for p in resolved.problems)
    assert not any("CLOUDFLARE_" in p for p in resolved.problems)  # not from the environment


def test_environment_overrides_win_and_are_listed() -> None:
    env = {
        "CLOUDFLARE_ACCOUNT_ID": ENV_ACCOUNT,
        "CLOUDFLARE_API_TOKEN": f"{ENV_TOKEN}\n",
        "CLOUDFLARE_AI_GATEWAY_ID": "env-gw",
        "FLARECHAT_API_BASE": "http://127.0.0.1:8787/client/v4/",
        "FLARECHAT_GATEWAY_BASE": "http://127.0.0.1:8787/gateway/v1",
    }
    saved = Settings(account_id=ACCOUNT, gateway_id="saved-gw", api_base="https://a.example")
    resolved = resolve(saved, api_token=TOKEN, gateway_token=GATEWAY_TOKEN, env=env)
    assert resolved.is_complete
    assert resolved.overridden == {
        "account_id",
        "api_token",
        "gateway_id",
        "route",
        "api_base",
        "gateway_base",
    }
    assert (resolved.account_id, resolved.api_token) == (ENV_ACCOUNT, ENV_TOKEN)
    assert resolved.gateway_id == "env-gw"
    assert resolved.api_base == "http://127.0.0.1:8787/client/v4"
    assert resolved.gateway_base == "http://127.0.0.1:8787/gateway/v1"
    assert resolved.gateway_token == GATEWAY_TOKEN


def test_gateway_id_from_env_switches_direct_route_to_gateway_rest() -> None:
    env = {"CLOUDFLARE_AI_GATEWAY_ID": "env-gw"}
    resolved = resolve(_complete(), api_token=TOKEN, gateway_token=None, env=env)
    assert (resolved.route, resolved.uses_gateway) == ("gateway-rest", True)
    assert "route" in resolved.overridden


@pytest.mark.parametrize("route", ["gateway-rest", "gateway-url"])
def test_gateway_id_from_env_keeps_a_chosen_gateway_route(route: str) -> None:
    settings = Settings(account_id=ACCOUNT, route=route, gateway_id="saved-gw")
    env = {"CLOUDFLARE_AI_GATEWAY_ID": "env-gw"}
    resolved = resolve(settings, api_token=TOKEN, gateway_token=None, env=env)
    assert (resolved.route, resolved.gateway_id) == (route, "env-gw")
    assert resolved.overridden == {"gateway_id"}


def test_empty_or_blank_variables_do_not_override() -> None:
    env = {name: " " for name in resolve_module.OVERRIDE_ENV.values()}
    env["CLOUDFLARE_API_TOKEN"] = ""
    resolved = resolve(_complete(), api_token=TOKEN, gateway_token=None, env=env)
    assert resolved.overridden == frozenset()
    assert (resolved.account_id, resolved.api_token, resolved.route) == (ACCOUNT, TOKEN, "direct")


def test_default_environment_is_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", ENV_ACCOUNT)
    resolved = resolve(_complete(), api_token=TOKEN, gateway_token=None)
    assert resolved.account_id == ENV_ACCOUNT
    assert resolved.overridden == {"account_id"}


def test_bad_values_from_env_name_the_variable() -> None:
    env = {"CLOUDFLARE_ACCOUNT_ID": "123", "CLOUDFLARE_API_TOKEN": "has space in it 0123456789"}
    resolved = resolve(Settings(), api_token=None, gateway_token=None, env=env)
    assert not resolved.is_complete
    assert any(p.startswith("CLOUDFLARE_ACCOUNT_ID: ") for p in resolved.problems)
    assert any(p.startswith("CLOUDFLARE_API_TOKEN: ") for p in resolved.problems)
    assert not any("has space in it" in p for p in resolved.problems)


@pytest.mark.parametrize("route", ["gateway-rest", "gateway-url"])
def test_gateway_route_needs_a_gateway_id(route: str) -> None:
    settings = Settings(account_id=ACCOUNT, route=route)
    resolved = resolve(settings, api_token=TOKEN, gateway_token=None, env={})
    assert not resolved.is_complete
    assert resolved.problems == [
        "Enter the AI Gateway ID (the gateway's name in the dashboard), or choose Direct."
    ]


def test_bad_gateway_token_blocks_only_gateway_routes() -> None:
    direct = resolve(_complete(), api_token=TOKEN, gateway_token="bad token", env={})
    assert direct.is_complete
    settings = Settings(account_id=ACCOUNT, route="gateway-url", gateway_id="gw")
    via_gateway = resolve(settings, api_token=TOKEN, gateway_token="bad token", env={})
    assert not via_gateway.is_complete
    assert any("gateway token" in p for p in via_gateway.problems)


def test_unknown_route_and_endpoint_are_problems() -> None:
    settings = Settings(account_id=ACCOUNT, route="carrier-pigeon", endpoint="grpc")
    resolved = resolve(settings, api_token=TOKEN, gateway_token=None, env={})
    assert len(resolved.problems) == 2
    assert "'carrier-pigeon'" in resolved.problems[0]
    assert "'grpc'" in resolved.problems[1]


def test_insecure_api_base_is_a_problem() -> None:
    env = {"FLARECHAT_API_BASE": "http://proxy.example.com/v4"}
    resolved = resolve(_complete(), api_token=TOKEN, gateway_token=None, env=env)
    assert not resolved.is_complete
    assert resolved.problems[0].startswith("FLARECHAT_API_BASE: Use https://")


def test_bad_gateway_base_matters_only_on_the_gateway_url_route() -> None:
    settings = Settings(account_id=ACCOUNT, gateway_base="ftp://gw.example.com")
    direct = resolve(settings, api_token=TOKEN, gateway_token=None, env={})
    assert direct.is_complete
    assert direct.gateway_base == "https://gateway.ai.cloudflare.com/v1"
    assert "Unused on this route" in direct.warnings[0]
    settings.route, settings.gateway_id = "gateway-url", "gw"
    resolved = resolve(settings, api_token=TOKEN, gateway_token=None, env={})
    assert not resolved.is_complete
    assert "https://" in resolved.problems[0]


def test_out_of_range_numbers_are_warnings_with_defaults() -> None:
    settings = Settings(account_id=ACCOUNT, cache_ttl=5, request_timeout=9999.0)
    resolved = resolve(settings, api_token=TOKEN, gateway_token=None, env={})
    assert resolved.is_complete
    assert (resolved.cache_ttl, resolved.request_timeout) == (None, Settings().request_timeout)
    assert len(resolved.warnings) == 2
    assert "default cache TTL" in resolved.warnings[0]
    assert "120 seconds is used instead" in resolved.warnings[1]


def _resolved_with_tokens() -> Resolved:
    env = {"CLOUDFLARE_API_TOKEN": ENV_TOKEN}
    return resolve(_complete(), api_token=TOKEN, gateway_token=GATEWAY_TOKEN, env=env)


def test_repr_and_str_mask_tokens() -> None:
    resolved = _resolved_with_tokens()
    for text in (repr(resolved), str(resolved), f"{resolved}", repr([resolved])):
        assert ENV_TOKEN not in text
        assert GATEWAY_TOKEN not in text
        assert "api_token='********'" in text
        assert "gateway_token='********'" in text
        assert ACCOUNT in text  # the rest stays readable for debugging


def test_repr_shows_missing_tokens_as_empty() -> None:
    resolved = resolve(_complete(), api_token=None, gateway_token=None, env={})
    assert "api_token=''" in repr(resolved)
    assert "gateway_token=''" in repr(resolved)


def test_defaults_and_choices_match_the_api_layer() -> None:
    assert resolve_module.DEFAULT_API_BASE == api_config.DEFAULT_API_BASE
    assert resolve_module.DEFAULT_GATEWAY_BASE == api_config.DEFAULT_GATEWAY_BASE
    assert tuple(route.value for route in api_config.Route) == ROUTES
    assert tuple(endpoint.value for endpoint in api_config.Endpoint) == ENDPOINTS
