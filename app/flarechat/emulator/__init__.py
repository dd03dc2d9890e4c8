"""A local Workers AI + AI Gateway server for tests and demo mode (loopback only)."""

from __future__ import annotations

from flarechat.emulator.config import DEMO_ACCOUNT_ID, DEMO_CONFIG, DEMO_TOKEN, EmulatorConfig
from flarechat.emulator.server import EmulatorServer
from flarechat.emulator.state import EmulatorState, RecordedRequest

__all__ = [
    "DEMO_ACCOUNT_ID",
    "DEMO_CONFIG",
    "DEMO_TOKEN",
    "EmulatorConfig",
    "EmulatorServer",
    "EmulatorState",
    "RecordedRequest",
]
