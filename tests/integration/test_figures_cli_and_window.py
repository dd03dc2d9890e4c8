"""One scripted stream, fed to `flarechat ask` and to the window: both print the same figures.

The client and the clock are scripted together (each event arrives at a set time), so both
paths fold the same events at the same times; the CLI's summary line must then be the model
followed by exactly the window's metadata line.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from flarechat.api.client import WorkersAIClient
from flarechat.api.config import ChatRequest, Connection
from flarechat.api.events import Finished, ResponseMeta, StreamEvent, TextDelta, UsageReport
from flarechat.cli import run as cli_run
from flarechat.core.store import AsyncChatStore
from flarechat.settings.schema import Settings
from flarechat.settings.secrets import MemorySecretStore
from flarechat.settings.store import SettingsStore

MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
ACCOUNT = "0123456789abcdef0123456789abcdef"
TOKEN = "figures-test-token-0123456789"

Script = Sequence[tuple[float, StreamEvent]]

#: Queued 0.8 s, first token at 1.2 s, done at 3.0 s: 30 tokens over 1.8 s of generation.
STREAMED: Script = (
    (1.25, ResponseMeta(status_code=200, neurons=1.5, cache_status="MISS")),
    (1.5, TextDelta("Hello")),
    (2.0, TextDelta(" there, friend")),
    (3.0, UsageReport(prompt_tokens=12, completion_tokens=30)),
    (3.0, Finished("stop")),
)
#: One JSON body after 4 s: no TTFT, 40 tokens over the whole request.
NOT_STREAMED: Script = (
    (4.0, ResponseMeta(status_code=200, neurons=2.0, streamed=False)),
    (4.0, TextDelta("All at once.")),
    (4.0, UsageReport(prompt_tokens=10, completion_tokens=40)),
    (4.0, Finished("stop")),
)


@dataclass
class ScriptedClock:
    now: float = 0.0

    def __call__(self) -> float:
        return self.now


class ScriptedClient:
    """Plays one script per request; each event sets the clock to its time first."""

    def __init__(self, script: Script, clock: ScriptedClock) -> None:
        self.script = script
        self.clock = clock

    async def stream_reply(
        self, conn: Connection, request: ChatRequest
    ) -> AsyncGenerator[StreamEvent, None]:
        for at, event in self.script:
            self.clock.now = at
            await asyncio.sleep(0)
            yield event

    stream_chat = stream_reply

    async def aclose(self) -> None:
        return None


def _cli_summary(
    script: Script, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> str:
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", ACCOUNT)
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", TOKEN)
    clock = ScriptedClock()
    client = cast(WorkersAIClient, ScriptedClient(script, clock))
    runtime = cli_run.Runtime(client=lambda: client, clock=clock)
    assert cli_run.main(["ask", "--model", MODEL, "Hello"], runtime=runtime) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith(MODEL)]
    assert len(lines) == 1, lines
    return lines[0]


def _resolve(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)


async def _window_line(script: Script, tmp_path: Path) -> str:
    from flarechat.ui.control.chat import ChatController
    from flarechat.ui.control.preferences import Preferences

    clock = ScriptedClock()
    store = await AsyncChatStore.open(tmp_path / "chat.sqlite3")
    prefs = Preferences(
        store=SettingsStore(tmp_path / "settings.json"),
        secrets=MemorySecretStore(),
        settings=Settings(account_id=ACCOUNT, last_model=MODEL),
        env={},
    )
    prefs.api_token = TOKEN
    chat = ChatController(
        client=ScriptedClient(script, clock), store=store, prefs=prefs, clock=clock
    )
    finished: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    chat.turn_finished.connect(lambda _id, data: _resolve(finished, data))
    try:
        chat.new_conversation()
        assert chat.send("Hello") is not None
        data = await asyncio.wait_for(finished, 10)
        await chat.drain()
    finally:
        await chat.shutdown()
        await store.close()
    assert data.status == "done"
    return str(data.meta_line)


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (
            STREAMED,
            "TTFT 1.50 s · 20 tok/s · 12→30 tokens · 1.50 neurons · cache MISS",
        ),
        (NOT_STREAMED, "took 4.00 s · 10 tok/s · 10→40 tokens · 2.00 neurons"),
    ],
    ids=["streamed", "not-streamed"],
)
def test_the_cli_and_the_window_print_the_same_figures(
    script: Script,
    expected: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    qapp: Any,
) -> None:
    from flarechat.ui.shared.loop import FlareEventLoop

    summary = _cli_summary(script, monkeypatch, capsys)
    with asyncio.Runner(loop_factory=lambda: FlareEventLoop(qapp)) as runner:
        line = runner.run(_window_line(script, tmp_path))
    assert line == expected.replace("→", "\N{RIGHTWARDS ARROW}")
    assert summary == f"{MODEL} · {line}"
