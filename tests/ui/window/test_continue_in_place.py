"""Continue after max_tokens in the window: the same reply bubble grows while the continuation
streams, no user turn or second reply appears, and the stored reply is that one message."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtWidgets import QAbstractButton, QLabel, QWidget
from window_helpers import until, window

from flarechat.core.request_code import CodeKind
from flarechat.emulator import EmulatorServer
from flarechat.ui.transcript.message_parts import ContinueRow

pytestmark = pytest.mark.asyncio


async def test_continue_grows_the_same_reply_bubble(
    emulator: EmulatorServer,
    tmp_path: Path,
    find_button: Callable[[QWidget, str], QAbstractButton],
) -> None:
    async with window(emulator, tmp_path, default_max_tokens=6) as (env, main, _seen):
        env.chat.set_models(await env.client.list_models(env.prefs.connection()))
        reply_id = env.chat.send("Write a long answer")
        assert reply_id is not None
        first = await env.finished(reply_id)
        assert first.finish_reason == "length"
        transcript = main.pane.transcript
        await until(lambda: transcript.view_for(reply_id) is not None, "the reply's widget")
        view = transcript.view_for(reply_id)
        assert view is not None
        row = view.findChild(ContinueRow, "continueRow")
        assert row is not None
        await until(row.isVisible, "the Continue offer")
        assert "for the model to extend" in row.hint.text()
        assert transcript.message_count() == 2

        start = len(env.recorder.events)
        row.button.click()
        await env.recorder.wait("turn_continued", lambda _c, m: m == reply_id, after=start)
        # While it streams, the bubble already shown grows from its own text.
        await env.recorder.wait("turn_text_appended", lambda m, _t: m == reply_id, after=start)
        transcript.flush()
        growing = transcript.view_for(reply_id)
        assert growing is view
        assert view.data.status in ("streaming", "done")
        assert view.data.content.startswith(first.content)
        assert len(view.data.content) > len(first.content)
        assert not row.isVisible()  # no Continue while it is open

        args = await env.recorder.wait("turn_finished", lambda m, _d: m == reply_id, after=start)
        done = args[1]
        await until(lambda: view.data.status == "done", "the reply to close")
        assert done.content.startswith(first.content)
        assert view.data.content == done.content
        # One user message and one reply, on screen and in the database.
        assert [m.role for m in transcript.messages()] == ["user", "assistant"]
        assert not [a for a in env.recorder.args("message_added") if a[1].role == "user"][1:]
        await env.chat.drain()
        tree = await env.store.load_tree(str(env.chat.current_id))
        assert [(m.role, m.content) for m in tree.path()][1] == ("assistant", done.content)
        # Cut again: Continue is offered again.
        await until(row.isVisible, "the Continue offer again")
        main.grab().save("/tmp/shots/continue-in-place-light.png")

        # View as code shows the request Continue sent, and says it is the last of two.
        find_button(view, "View as code").click()
        dialog = main.lab_hooks.code_dialog
        assert dialog is not None
        note = dialog.findChild(QLabel, "requestCodeNote")
        assert note is not None
        assert "made by 2 requests; this is the last, Continue's" in note.text()
        curl = dialog.code.forms[CodeKind.CURL]
        body = json.loads(curl.split("--data-raw '", 1)[1].rsplit("'", 1)[0])
        assert body["messages"][-1] == {"role": "assistant", "content": first.content}
        dialog.grab().save("/tmp/shots/continue-view-as-code-light.png")
        dialog.close()
