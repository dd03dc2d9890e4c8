"""Demo mode's Simulate menu, as plain data: each thing the built-in emulator can be told to
do wrong (through its control endpoint, POST /__emulator__/control) so a new user sees every
banner in a few seconds, and what the window says once it is set up.

Qt-free, like the rest of ``ui.control``; the menu (``ui.window.simulate_menu``) shows these
and ``WorkspaceController.simulate`` sends them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CAPACITY_COUNTS",
    "HELP_TEXT",
    "HELP_TITLE",
    "SIMULATIONS",
    "SLOW_FIRST_BYTE_S",
    "Simulation",
    "capacity",
    "simulation",
]

#: "Busy for the next N requests": the counts the menu offers. Flarechat retries a 3040 on
#: its own (4 attempts in all), so 1 and 3 end in a reply and 5 in the failure banner.
CAPACITY_COUNTS = (1, 3, 5)
#: The slow first byte: long enough to read the composer's wait label counting up.
SLOW_FIRST_BYTE_S = 5.0
CAPACITY_CODE, CAPACITY_STATUS = 3040, 429
DAILY_CODE, DAILY_STATUS = 4006, 429
TERMS_CODE, TERMS_STATUS = 5016, 403
#: The emulator's control actions used here (emulator/state.py CONTROL_ACTIONS).
FAIL_NEXT, DELAY_FIRST_BYTE, RESET = "fail_next", "delay_first_byte", "reset"
#: Kept short: the status bar shares its width with the meters.
SEND_HINT = "send a message."


@dataclass(frozen=True, slots=True)
class Simulation:
    """One Simulate menu entry: its id, menu text, the control call and what the window
    says once the emulator has taken it."""

    key: str
    label: str
    action: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    done: str = ""


def capacity(count: int) -> Simulation:
    """Workers AI at capacity (3040) for the next ``count`` requests: the retry banner."""
    requests = "request" if count == 1 else f"{count} requests"
    return Simulation(
        key=f"capacity-{count}",
        label=f"The next {requests}",
        action=FAIL_NEXT,
        arguments={"n": count, "code": CAPACITY_CODE, "status": CAPACITY_STATUS},
        done=f"Busy for the next {requests}: {SEND_HINT}",
    )


SIMULATIONS: tuple[Simulation, ...] = (
    *(capacity(count) for count in CAPACITY_COUNTS),
    Simulation(
        key="slow-first-byte",
        label=f"A &slow first byte ({SLOW_FIRST_BYTE_S:.0f} s)",
        action=DELAY_FIRST_BYTE,
        arguments={"seconds": SLOW_FIRST_BYTE_S},
        done=f"A slow first byte next: {SEND_HINT}",
    ),
    Simulation(
        key="daily-allocation",
        label="The &daily allocation used up",
        action=FAIL_NEXT,
        arguments={"n": 1, "code": DAILY_CODE, "status": DAILY_STATUS},
        done=f"Daily allocation used up next: {SEND_HINT}",
    ),
    Simulation(
        key="licence",
        label="A &licence to accept",
        action=FAIL_NEXT,
        arguments={"n": 1, "code": TERMS_CODE, "status": TERMS_STATUS},
        done=f"A licence to accept next: {SEND_HINT}",
    ),
    Simulation(
        key="reset",
        label="&Clear simulations",
        action=RESET,
        done="Simulations cleared: the emulator answers normally.",
    ),
)
_BY_KEY = {s.key: s for s in SIMULATIONS}

HELP_TITLE = "Trying Flarechat in demo mode"
HELP_TEXT = (
    "Demo mode (Try demo mode, or start with 'flarechat --demo') answers from Flarechat's "
    "built-in emulator: nothing leaves this computer and nothing is billed. Its Simulate menu "
    "makes the next requests go wrong the ways Workers AI can: a model at capacity for the "
    "next few requests (the retry banner and its countdown), a slow first byte, the daily "
    "free allocation used up, a licence to accept. Choose one, then send a message."
)


def simulation(key: str) -> Simulation:
    """The entry with this key (KeyError for an unknown one)."""
    return _BY_KEY[key]
