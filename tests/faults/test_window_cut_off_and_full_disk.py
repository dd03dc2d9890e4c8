"""Issue 25 item 18 in the real window: a model list cut off mid-body says so (the server did
answer in HTTP), in the model picker's status."""

from __future__ import annotations

from pathlib import Path

import pytest
from drive import assert_plain, faulty_window
from window_helpers import next_emit

from flarechat.emulator import EmulatorServer
from support.cut_off import CUT_OFF_WAYS, catalogue_body, cut_off
from support.hostile import HostileServer, answer

pytestmark = pytest.mark.asyncio


@pytest.mark.parametrize("way", CUT_OFF_WAYS)
async def test_item18_a_model_list_cut_off_mid_body_says_so_in_the_picker(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture, way: str
) -> None:
    with HostileServer(answer(cut_off(catalogue_body(), way))) as server:
        base = server.api_base
        async with faulty_window(emulator, isolated_profile, logged, api_base=base) as run:
            loaded = next_emit(run.env.workspace.models_loaded)
            run.env.workspace.refresh_models()
            _models, _fetched_at, offline = await loaded
            await run.env.chat.drain()
            assert offline
            status = run.main.picker.status_text()
            assert "The model list was cut off mid-way" in status
            assert "Try again" in status
            assert "did not answer in HTTP" not in status
            assert "Offline" not in status  # the server was there: it stopped mid-way
            assert_plain(status)
