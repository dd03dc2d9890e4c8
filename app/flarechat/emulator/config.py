"""Emulator configuration and the demo credentials it accepts."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_SLOTS",
    "DEFAULT_TOKENS_PER_SECOND",
    "DEMO_ACCOUNT_ID",
    "DEMO_CONFIG",
    "DEMO_TOKEN",
    "DEMO_TOKENS_PER_SECOND",
    "EmulatorConfig",
    "check_loopback",
]

#: Any 32-hex account id works; this one is what demo mode and the docs use.
DEMO_ACCOUNT_ID = "0123456789abcdef0123456789abcdef"
#: Any non-empty token works (except ones starting "invalid"); this one is the documented default.
DEMO_TOKEN = "flarechat-demo-token-local"  # long enough to pass the token validator

#: Concurrent generation slots per model unless set_slots() says otherwise.
DEFAULT_SLOTS = 2
#: Streaming pace: fast enough for tests.
DEFAULT_TOKENS_PER_SECOND = 400.0
#: Demo mode's pace (window and CLI): lively but readable, a reply visibly streams in.
DEMO_TOKENS_PER_SECOND = 60.0
#: Workers AI's own default when a request omits max_tokens (cloudflare-api.md §2).
DEFAULT_MAX_TOKENS = 256


@dataclass(frozen=True, slots=True)
class EmulatorConfig:
    """Start-up knobs; everything else is a runtime control on :class:`EmulatorState`."""

    slots: int = DEFAULT_SLOTS
    tokens_per_second: float = DEFAULT_TOKENS_PER_SECOND
    #: mixed into every reply's seed, so two emulators can be told apart deterministically
    seed: int = 0

    def __post_init__(self) -> None:
        if self.slots < 1:
            raise ValueError(f"slots must be at least 1, not {self.slots}")
        if not self.tokens_per_second > 0:
            raise ValueError(f"tokens_per_second must be positive, not {self.tokens_per_second}")


#: What `--demo` runs, from the window and from `flarechat ask` alike.
DEMO_CONFIG = EmulatorConfig(tokens_per_second=DEMO_TOKENS_PER_SECOND)


def check_loopback(host: str) -> None:
    """Raise ValueError unless ``host`` is a loopback address: the emulator is never exposed."""
    if host == "localhost":
        return
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        raise ValueError(
            f"the emulator binds loopback only; {host!r} is not an IP address"
        ) from None
    if not address.is_loopback:
        raise ValueError(f"the emulator binds loopback only; {host!r} is not a loopback address")
