"""Fixtures for the emulator tests: a fast-paced emulator and a plain httpx client."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from emulator_helpers import AUTH, PATIENCE

from flarechat.emulator.server import EmulatorServer

#: Pace for tests that don't look at pacing: replies of ~150 chunks arrive in milliseconds.
FAST_TOKENS_PER_SECOND = 50_000.0


@pytest.fixture
def emulator(emulator: EmulatorServer) -> EmulatorServer:
    """The shared (reset) emulator, streaming fast; tests about pace set their own."""
    emulator.state.tokens_per_second = FAST_TOKENS_PER_SECOND
    return emulator


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(headers=AUTH, timeout=PATIENCE) as client:
        yield client
