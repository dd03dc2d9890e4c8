"""Every ErrorKind has its banner: a failed reply of each kind shows a titled banner with the
error's own words and no promise of a retry Flarechat will not make."""

from __future__ import annotations

from pathlib import Path

import pytest
from window_helpers import window

from flarechat.api.errors import ErrorKind
from flarechat.emulator import EmulatorServer

pytestmark = pytest.mark.asyncio

EXTRA = {"model": "@cf/meta/llama-3.3-70b-instruct-fp8-fast", "attempts": 4, "retry_after": 20}


async def test_every_error_kind_shows_a_banner(emulator: EmulatorServer, tmp_path: Path) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        reply_id = env.chat.send("Hello")
        assert reply_id is not None
        await env.finished(reply_id)
        pane = main.pane
        for kind in ErrorKind:
            text = f"What went wrong for {kind.value}."
            pane.on_turn_failed(reply_id, str(kind), text, dict(EXTRA))
            shown = [b for b in (pane.retry_banner, pane.notice_banner) if b.isVisible()]
            assert len(shown) == 1, kind
            banner = shown[0]
            assert banner.title, kind
            if kind is not ErrorKind.CAPACITY:  # capacity's banner words it for the model
                assert text in banner.text, kind
            assert "will retry" not in banner.text.lower(), kind
            pane.clear_banners()
