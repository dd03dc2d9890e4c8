"""The app's live configuration: saved settings + keychain tokens + environment (+ demo mode).

Qt-free: the controller asks it for the Connection to use and tells it what changed; file and
keychain I/O happen in its ``async`` methods, off the GUI thread.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from flarechat.api.config import Connection, Endpoint, GatewayOptions, Route, SamplingParams, Secret
from flarechat.core.connect import ConfigurationError, connection_from, gateway_options_from
from flarechat.logsetup import register_secret
from flarechat.settings import secrets as secret_api
from flarechat.settings.resolve import ENV_API_TOKEN, Resolved, resolve
from flarechat.settings.schema import Settings
from flarechat.settings.secrets import (
    API_TOKEN,
    GATEWAY_TOKEN,
    MemorySecretStore,
    SecretStore,
    SecretStoreUnavailable,
)
from flarechat.settings.store import SettingsStore
from flarechat.settings.validate import SAMPLING_LIMITS, validate_sampling

__all__ = ["DEMO_GATEWAY_ID", "DemoBackend", "Preferences"]

log = logging.getLogger(__name__)

#: Demo mode goes through the emulated AI Gateway so cache status and log ids show up too.
DEMO_GATEWAY_ID = "demo"
PARAM_MAX_TOKENS = "max_tokens"
PARAM_TEMPERATURE = "temperature"
KEYCHAIN_PROBLEM = (
    "No system keychain is available ({reason}). Tokens will be kept for this session only."
)
LOCKED_PROBLEM = (
    "The system keychain is locked or refused access ({reason}). Tokens will be kept for this "
    "session only."
)
#: How the secrets module's reason starts for keyring's KeyringLocked.
KEYRING_LOCKED = "KeyringLocked"


@dataclass(frozen=True, slots=True)
class DemoBackend:
    """An in-process emulator started by ``flarechat.main`` (the ui may not import it)."""

    api_base: str
    gateway_base: str
    account_id: str
    token: str
    stop: Callable[[], None]
    #: one call to the emulator's control endpoint (POST /__emulator__/control, blocking):
    #: ``control(action, **arguments)``, for the Simulate menu; None when it has none
    control: Callable[..., object] | None = None


class Preferences:
    """Holds ``Settings`` and tokens, and derives the Connection (or why there is none).

    ``secrets`` is the keychain. When it is unavailable, ``keychain_problem`` says why and the
    settings dialog keeps tokens in ``session`` (memory, this session only; never plaintext).

    The app loads in two steps, ``load_settings`` before the window's first paint and
    ``load_tokens`` (the keychain, ~170 ms of imports and D-Bus) right after it; in between,
    ``tokens_pending`` is true and ``configured`` assumes a saved account has its token, so a
    returning user's first paint is the chat, not the welcome panel.
    """

    def __init__(
        self,
        *,
        store: SettingsStore,
        secrets: SecretStore,
        settings: Settings | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.store = store
        self.secrets = secrets
        self.settings = settings if settings is not None else Settings()
        self.env: Mapping[str, str] = env if env is not None else os.environ
        self.api_token: str | None = None
        self.gateway_token: str | None = None
        self.keychain_problem: str | None = None
        #: where tokens go when there is no keychain: memory, for this session only
        self.session = MemorySecretStore()
        self.demo: DemoBackend | None = None
        #: settings are loaded, the keychain not yet (see the class doc)
        self.tokens_pending = False
        self._save_lock = asyncio.Lock()  # saves land in the order they were asked for

    async def load(self) -> list[str]:
        """Read settings (thread) and tokens (keychain, with timeout); returns problems to show."""
        problems = await self.load_settings()
        return problems + await self.load_tokens()

    async def load_settings(self) -> list[str]:
        """Read the settings file (thread); tokens are pending until ``load_tokens``."""
        self.settings = await asyncio.to_thread(self.store.load)
        self.tokens_pending = True
        return list(self.store.problems)

    async def load_tokens(self) -> list[str]:
        """Read the tokens (keychain, off the loop, with timeout); returns problems to show."""
        try:
            self.api_token = await secret_api.aget(self.secrets, API_TOKEN)
            self.gateway_token = await secret_api.aget(self.secrets, GATEWAY_TOKEN)
        except SecretStoreUnavailable as exc:
            self._use_session_store(exc)
        finally:
            self.tokens_pending = False
        # With the token in the environment nothing needs the keychain: no warning about it.
        if self.keychain_problem is not None and not self.env.get(ENV_API_TOKEN):
            return [self.keychain_problem]
        return []

    def _use_session_store(self, exc: SecretStoreUnavailable) -> None:
        log.info("keychain unavailable, tokens are session-only: %s", exc.reason)
        locked = exc.reason.startswith(KEYRING_LOCKED)  # there is a keychain; it said no
        self.keychain_problem = (LOCKED_PROBLEM if locked else KEYCHAIN_PROBLEM).format(
            reason=exc.reason or exc.message
        )

    async def save(self) -> None:
        """Write the settings file (atomic, off the GUI thread)."""
        snapshot = replace(self.settings, ui_state=dict(self.settings.ui_state))
        async with self._save_lock:
            await asyncio.to_thread(self.store.save, snapshot)

    def apply(self, settings: Settings) -> None:
        self.settings = settings

    def set_tokens(self, tokens: Mapping[str, str | None]) -> None:
        """The settings dialog stored new tokens; keep the in-memory copies in step."""
        if API_TOKEN in tokens:
            self.api_token = tokens[API_TOKEN] or None
        if GATEWAY_TOKEN in tokens:
            self.gateway_token = tokens[GATEWAY_TOKEN] or None

    def use_demo(self, demo: DemoBackend | None) -> None:
        self.demo = demo

    @property
    def account_ready(self) -> bool:
        """Whether the user's own account (not the demo) can send requests."""
        return self.resolved().is_complete

    def resolved(self) -> Resolved:
        resolved = resolve(
            self.settings, api_token=self.api_token, gateway_token=self.gateway_token, env=self.env
        )
        # Every token the app uses passes here (keychain, dialog, environment): keep it out
        # of the log file.
        register_secret(resolved.api_token)
        register_secret(resolved.gateway_token)
        return resolved

    @property
    def configured(self) -> bool:
        """Whether requests can be sent (an account is set up, or demo mode is on); while the
        tokens are pending, whether an account is saved (its token is most likely stored)."""
        if self.demo is not None:
            return True
        resolved = self.resolved()
        return resolved.is_complete or (self.tokens_pending and bool(resolved.account_id))

    def problems(self) -> list[str]:
        return [] if self.demo is not None else list(self.resolved().problems)

    def connection(self) -> Connection:
        """The Connection to use; ConfigurationError (with problems) when there is none."""
        if self.demo is not None:
            conn = Connection(
                account_id=self.demo.account_id,
                token=Secret(self.demo.token),
                api_base=self.demo.api_base,
                gateway_base=self.demo.gateway_base,
                route=Route.GATEWAY_URL,
                endpoint=Endpoint(self.settings.endpoint),
                gateway_id=DEMO_GATEWAY_ID,
                simulated=True,
            )
        else:
            conn = connection_from(self.resolved())
        # The idle timeout and the deadline hold in demo mode too: they are the user's patience.
        return replace(
            conn,
            idle_timeout=self.settings.idle_timeout,
            overall_timeout=self.settings.overall_timeout,
        )

    def gateway_options(self) -> GatewayOptions:
        if self.demo is not None:
            return GatewayOptions(skip_cache=self.settings.skip_cache)
        return gateway_options_from(self.resolved())

    def reject_if_busy(self) -> bool:
        return self.settings.reject_if_busy

    def default_model(self) -> str:
        """The model of new conversations: the last one used."""
        return self.settings.last_model

    def default_system_prompt(self) -> str:
        return self.settings.default_system_prompt

    def sampling(self, params: Mapping[str, object]) -> SamplingParams:
        """Per-conversation parameters over the defaults from Settings."""
        max_tokens = params.get(PARAM_MAX_TOKENS)
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            max_tokens = self.settings.default_max_tokens
        temperature = params.get(PARAM_TEMPERATURE, self.settings.default_temperature)
        if not isinstance(temperature, int | float) or isinstance(temperature, bool):
            temperature = None
        optional = {name: _sampling_value(name, params.get(name)) for name in SAMPLING_LIMITS}
        return SamplingParams(max_tokens=max_tokens, temperature=temperature, **optional)

    def route_label(self) -> str:
        """Where requests go, for the status bar: "Direct" or "Gateway <id>"."""
        try:
            conn = self.connection()
        except ConfigurationError:
            return "Not configured"
        if conn.route is Route.DIRECT:
            return "Direct"
        return f"Gateway {conn.gateway_id}"


def _sampling_value(name: str, value: object) -> Any:
    """A stored optional parameter, or None (not sent) when it is missing or out of range."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if SAMPLING_LIMITS[name].integer and not isinstance(value, int):
        return None
    return value if validate_sampling(name, value) is None else None
