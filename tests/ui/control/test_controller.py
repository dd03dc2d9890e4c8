"""ChatController against the emulator over loopback: streaming, stop, branches, retry flows."""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from shell_helpers import MODEL, TOKEN, ChatEnv, chat_env, slow_policy

from flarechat.core.conversation import ROLE_ASSISTANT, ROLE_USER
from flarechat.core.session import CONTINUE_PROMPT
from flarechat.emulator import EmulatorServer

pytestmark = pytest.mark.asyncio

#: The emulator refuses tokens starting "invalid" (401, code 10000).
BAD_TOKEN = "invalid" + "x" * 33


def _rejected(emulator: EmulatorServer) -> list[bool]:
    """For each generation request so far: did it ask to be rejected when busy?"""
    flags = []
    for request in emulator.state.requests:
        if "/ai/run/" in request.path and isinstance(request.json, dict):
            options = request.json.get("options") or {}
            flags.append(bool(options.get("rejectIfBusy")))
    return flags


async def _send(env: ChatEnv, text: str = "Hello there") -> str:
    if env.chat.current_id is None:
        env.chat.new_conversation()
    reply = env.chat.send(text)
    assert reply is not None
    return reply


async def test_send_streams_the_reply_and_stores_everything(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with chat_env(emulator, tmp_path) as env:
        reply_id = await _send(env, "Show me a table")
        data = await env.finished(reply_id)
        streamed = "".join(t for m, t in env.recorder.args("turn_text_appended") if m == reply_id)
        assert data.status == "done"
        assert data.content == streamed
        assert "|" in streamed
        assert data.meta_line.startswith("TTFT")
        conversation_id = env.chat.current_id
        assert conversation_id is not None
        tree = await env.store.load_tree(conversation_id)
        user, assistant = tree.path()
        assert (user.role, user.content) == (ROLE_USER, "Show me a table")
        assert (assistant.role, assistant.status, assistant.content) == (
            ROLE_ASSISTANT,
            "done",
            streamed,
        )
        assert assistant.request is not None
        assert assistant.request["model"] == MODEL
        assert assistant.request["session_id"] == conversation_id
        assert assistant.usage
        assert assistant.timings
        assert "ttft" in assistant.timings
        assert tree.conversation.title == "Show me a table"
        sent = emulator.state.requests[-1]
        assert sent.headers.get("x-session-affinity") == conversation_id
        assert TOKEN not in json.dumps(assistant.request)


async def test_the_user_message_is_committed_before_the_request(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with chat_env(emulator, tmp_path) as env:
        emulator.state.delay_first_byte(2.0)
        reply_id = await _send(env, "Saved first?")
        await env.recorder.wait("conversation_stored")
        conversation_id = env.chat.current_id
        assert conversation_id is not None
        tree = await env.store.load_tree(conversation_id)
        assert [m.content for m in tree.path() if m.role == ROLE_USER] == ["Saved first?"]
        assert not env.recorder.args("turn_text_appended")  # nothing has come back yet
        await env.finished(reply_id)


async def test_stop_keeps_the_partial_reply(emulator: EmulatorServer, tmp_path: Path) -> None:
    emulator.state.tokens_per_second = 15
    async with chat_env(emulator, tmp_path) as env:
        reply_id = await _send(env)
        await env.recorder.wait("turn_text_appended", lambda m, _t: m == reply_id)
        env.chat.stop()
        data = await env.finished(reply_id)
        assert data.status == "stopped"
        assert data.content
        tree = await env.store.load_tree(str(env.chat.current_id))
        stored = tree.get(reply_id)
        assert (stored.status, stored.content) == ("stopped", data.content)
        assert not env.chat.running_turns()


async def test_regenerate_adds_a_sibling_and_branches_switch(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with chat_env(emulator, tmp_path) as env:
        first = await _send(env, "Tell me about caching")
        await env.finished(first)
        second = env.chat.regenerate(first)
        assert second is not None
        assert second != first
        await env.finished(second)
        assert (second, 1, 2) in env.recorder.args("siblings_changed")
        env.chat.switch_branch(second, -1)
        _conversation, removed, shown = env.recorder.args("path_changed")[-1]
        assert removed == second
        assert [d.id for d in shown] == [first]
        assert (shown[0].sibling_index, shown[0].sibling_count) == (0, 2)
        await env.chat.drain()
        tree = await env.store.load_tree(str(env.chat.current_id))
        assert [m.id for m in tree.siblings(first)] == [first, second]
        assert tree.path()[-1].id == first  # the chosen branch is stored


async def test_edit_and_resend_keeps_the_original(emulator: EmulatorServer, tmp_path: Path) -> None:
    async with chat_env(emulator, tmp_path) as env:
        first_reply = await _send(env, "Original question")
        await env.finished(first_reply)
        tree = env.chat.current_tree()
        assert tree is not None
        original = tree.path()[0]
        env.chat.edit_last()
        assert env.recorder.args("composer_text_requested")[-1] == ("Original question",)
        assert env.recorder.args("editing_changed")[-1] == (True,)
        new_reply = env.chat.send("Edited question")
        assert new_reply is not None
        await env.finished(new_reply)
        _conversation, removed, shown = env.recorder.args("path_changed")[-1]
        assert removed == original.id
        assert shown[0].content == "Edited question"
        stored = await env.store.load_tree(str(env.chat.current_id))
        users = stored.siblings(original.id)
        assert [m.content for m in users] == ["Original question", "Edited question"]
        assert next(m.content for m in stored.path()) == "Edited question"


async def test_continue_after_max_tokens(emulator: EmulatorServer, tmp_path: Path) -> None:
    async with chat_env(emulator, tmp_path, default_max_tokens=6) as env:
        env.chat.set_models(await env.client.list_models(env.prefs.connection()))
        first = await _send(env, "Write a long answer")
        data = await env.finished(first)
        assert data.finish_reason == "length"
        assert data.can_continue
        # The limit came from Settings (no limit of this chat's own): the note says so, and
        # says plainly what Continue sends (this model extends the reply it is sent).
        assert "Stopped at the 6-token limit set in Settings: raise it there" in data.continue_hint
        assert "Conversation settings" not in data.continue_hint
        assert "Continue, which sends the reply so far back for the model to extend." in (
            data.continue_hint
        )
        assert CONTINUE_PROMPT not in data.continue_hint
        start = len(env.recorder.events)
        assert env.chat.continue_reply(first) == first  # the same reply goes on
        await env.recorder.wait("turn_continued", lambda _c, m: m == first, after=start)
        args = await env.recorder.wait("turn_finished", lambda m, _d: m == first, after=start)
        continued = args[1]
        assert continued.status == "done"
        assert continued.content.startswith(data.content)
        assert len(continued.content) > len(data.content)
        tree = env.chat.current_tree()
        assert tree is not None
        assert [m.role for m in tree.path()] == ["user", "assistant"]
        assert not env.recorder.args("turn_started")[1:]  # no second reply was begun
        # cut again: Continue is offered again on the same reply
        assert continued.can_continue


async def test_continue_names_this_chats_settings_when_the_limit_was_set_there(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with chat_env(emulator, tmp_path, default_max_tokens=400) as env:
        env.chat.new_conversation()
        env.chat.set_options("", {"max_tokens": 7})
        data = await env.finished(await _send(env, "Write a long answer"))
        assert data.finish_reason == "length"
        hint = data.continue_hint
        assert hint.startswith("Stopped at the 7-token limit set in this chat's Conversation")


async def test_capacity_retry_succeeds_by_itself(emulator: EmulatorServer, tmp_path: Path) -> None:
    async with chat_env(emulator, tmp_path, reject_if_busy=True) as env:
        emulator.state.hold_slots(MODEL, 600)
        reply_id = await _send(env)
        retry = await env.recorder.wait("retry_scheduled")
        assert retry[0] == reply_id
        assert retry[4] == MODEL
        assert retry[5] == "capacity"
        emulator.state.advance_time(601)  # the capacity frees up while Flarechat waits
        data = await env.finished(reply_id)
        assert data.status == "done"
        assert data.content
        assert (reply_id,) in env.recorder.args("retry_cleared")
        assert _rejected(emulator)
        assert all(_rejected(emulator))


async def test_retry_now_cuts_the_countdown(emulator: EmulatorServer, tmp_path: Path) -> None:
    async with chat_env(emulator, tmp_path, reject_if_busy=True, policy=slow_policy()) as env:
        emulator.state.hold_slots(MODEL, 600)
        reply_id = await _send(env)
        retry = await env.recorder.wait("retry_scheduled")
        assert retry[3] >= 30  # a long wait: only Retry now can make this test finish in time
        assert env.chat.pending_retry() is not None
        emulator.state.advance_time(601)
        env.chat.retry_now()
        data = await env.finished(reply_id)
        assert data.status == "done"


async def test_wait_in_queue_resends_without_reject_if_busy(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with chat_env(emulator, tmp_path, reject_if_busy=True, policy=slow_policy()) as env:
        emulator.state.hold_slots(MODEL, 600)
        reply_id = await _send(env)
        await env.recorder.wait("retry_scheduled")
        env.chat.wait_in_queue()
        await env.recorder.wait("retry_cleared", lambda m: m == reply_id)
        await _until(lambda: any(e.action == "queued" for e in emulator.state.capacity_log))
        emulator.state.advance_time(601)  # the queue moves
        data = await env.finished(reply_id)
        assert data.status == "done"
        assert data.content
        assert _rejected(emulator) == [True, False]
        stored = (await env.store.load_tree(str(env.chat.current_id))).get(reply_id)
        assert stored.request is not None
        assert stored.request["reject_if_busy"] is False


async def test_cancel_marks_the_reply_failed_without_text(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with chat_env(emulator, tmp_path, reject_if_busy=True, policy=slow_policy()) as env:
        emulator.state.hold_slots(MODEL, 600)
        reply_id = await _send(env)
        await env.recorder.wait("retry_scheduled")
        env.chat.cancel_retry()
        data = await env.finished(reply_id)
        assert data.status == "failed"
        assert data.content == ""
        assert data.error_text
        assert "capacity" in data.error_text.lower()
        assert (reply_id,) in env.recorder.args("retry_cleared")
        assert not env.recorder.args("turn_failed")  # cancelled: no banner comes back
        stored = (await env.store.load_tree(str(env.chat.current_id))).get(reply_id)
        assert stored.status == "failed"
        assert stored.error is not None
        assert stored.error["kind"] == "capacity"


async def test_retry_budget_spent_then_retry_now_resends(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with chat_env(emulator, tmp_path, reject_if_busy=True) as env:
        emulator.state.hold_slots(MODEL, 600)
        reply_id = await _send(env)
        failed = await env.recorder.wait("turn_failed")
        assert failed[:2] == (reply_id, "capacity")
        assert failed[3]["attempts"] == 4
        assert len(_rejected(emulator)) == 4
        emulator.state.advance_time(601)
        env.chat.retry_now()  # after the budget: send the failed reply again, in place
        await env.recorder.wait("turn_started", lambda _c, m: m == reply_id)
        data = await env.recorder.wait(
            "turn_finished", lambda m, d: m == reply_id and d.status == "done"
        )
        assert data[1].content


async def test_daily_limit_is_not_retried(emulator: EmulatorServer, tmp_path: Path) -> None:
    async with chat_env(emulator, tmp_path) as env:
        emulator.state.fail_next(1, code=3036, status=429)
        reply_id = await _send(env)
        failed = await env.recorder.wait("turn_failed")
        assert failed[:2] == (reply_id, "daily_limit")
        assert "resets_at" in failed[3]
        assert not env.recorder.args("retry_scheduled")
        assert len(_rejected(emulator)) == 1


async def test_bad_token_gives_an_auth_failure(emulator: EmulatorServer, tmp_path: Path) -> None:
    async with chat_env(emulator, tmp_path, token=BAD_TOKEN) as env:
        reply_id = await _send(env)
        failed = await env.recorder.wait("turn_failed")
        assert failed[:2] == (reply_id, "auth")
        data = await env.finished(reply_id)
        assert data.status == "failed"
        assert data.content == ""
        assert BAD_TOKEN not in repr(env.recorder.events)


async def test_no_account_fails_with_a_config_notice(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with chat_env(emulator, tmp_path, token=None, account_id="") as env:
        reply_id = await _send(env)
        failed = await env.recorder.wait("turn_failed")
        assert failed[:2] == (reply_id, "config")
        assert "account" in failed[2].lower()
        assert not emulator.state.requests


async def test_an_interrupted_reply_keeps_its_text_and_retries_as_a_branch(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with chat_env(emulator, tmp_path) as env:
        emulator.state.drop_after_tokens(5)
        reply_id = await _send(env)
        failed = await env.recorder.wait("turn_failed")
        assert failed[:2] == (reply_id, "interrupted")
        assert failed[3]["partial"] is True
        data = await env.finished(reply_id)
        assert data.status == "interrupted"
        assert data.content
        env.chat.retry_failed(reply_id)
        fresh = await env.recorder.wait("turn_started", lambda _c, m: m != reply_id)
        await env.finished(fresh[1])
        tree = await env.store.load_tree(str(env.chat.current_id))
        kept = tree.get(reply_id)
        assert (kept.status, kept.content) == ("interrupted", data.content)
        assert [m.id for m in tree.siblings(reply_id)] == [reply_id, fresh[1]]


async def test_switching_conversations_never_interrupts_a_reply(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    emulator.state.tokens_per_second = 40
    async with chat_env(emulator, tmp_path) as env:
        first = await _send(env, "First conversation")
        first_conversation = env.chat.current_id
        await env.recorder.wait("turn_text_appended", lambda m, _t: m == first)
        env.chat.new_conversation()
        assert env.chat.is_running(first)
        assert not env.chat.is_shown(first)
        second = await _send(env, "Second conversation")
        done = [await env.finished(first), await env.finished(second)]
        assert [d.status for d in done] == ["done", "done"]
        assert await env.chat.open_conversation(str(first_conversation))
        opened = env.recorder.args("conversation_opened")[-1]
        assert next(d.content for d in opened[1]) == "First conversation"
        assert opened[1][-1].content == done[0].content


async def test_quit_while_streaming_saves_the_partial_reply(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    emulator.state.tokens_per_second = 10
    async with chat_env(emulator, tmp_path) as env:
        reply_id = await _send(env)
        await env.recorder.wait("turn_text_appended", lambda m, _t: m == reply_id)
        await env.chat.shutdown()
        assert not env.chat.running_turns()
        data = await env.finished(reply_id)
        assert data.status == "stopped"
        stored = (await env.store.load_tree(str(env.chat.current_id))).get(reply_id)
        assert stored.status == "stopped"
        assert stored.content == data.content


async def test_quit_right_after_changing_model_and_options_leaves_no_stray_coroutine(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    # The saves are cancelled before they start; a store coroutine created by the caller would
    # then never be awaited, and the RuntimeWarning fails this test (warnings are errors).
    async with chat_env(emulator, tmp_path) as env:
        reply_id = await _send(env)
        await env.finished(reply_id)
        env.chat.set_model("@cf/qwen/qwq-32b")
        env.chat.set_options("Be brief.", {"temperature": 0.2})
        await env.chat.shutdown()
    gc.collect()
    assert not env.chat.running_turns()


async def test_a_read_only_database_gives_a_banner_and_the_chat_goes_on(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with chat_env(emulator, tmp_path, read_only=True) as env:
        reply_id = await _send(env, "Can you still answer?")
        problem = await env.recorder.wait("store_problem")
        assert "read-only" in problem[0]
        data = await env.finished(reply_id)
        assert data.status == "done"
        assert data.content  # what is on screen keeps working
        assert len(env.recorder.args("store_problem")) == 1  # said once, not per batch
        assert await env.store.list_conversations() == []


async def test_conversation_options_shape_the_request_and_are_saved(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with chat_env(emulator, tmp_path) as env:
        await env.finished(await _send(env, "First"))
        env.chat.set_options("Answer like a pirate.", {"max_tokens": 77, "temperature": 0.3})
        await env.finished(await _send(env, "Second"))
        body = emulator.state.requests[-1].json
        assert isinstance(body, dict)
        assert body["messages"][0] == {"role": "system", "content": "Answer like a pirate."}
        assert (body["max_tokens"], body["temperature"]) == (77, 0.3)
        stored = await env.store.get_conversation(str(env.chat.current_id))
        assert stored.system_prompt == "Answer like a pirate."
        assert stored.params == {"max_tokens": 77, "temperature": 0.3}


async def test_per_conversation_model_is_saved(emulator: EmulatorServer, tmp_path: Path) -> None:
    other = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
    async with chat_env(emulator, tmp_path) as env:
        reply_id = await _send(env)
        await env.finished(reply_id)
        env.chat.set_model(other)
        await env.chat.drain()
        stored = await env.store.get_conversation(str(env.chat.current_id))
        assert stored.model == other
        assert env.prefs.settings.last_model == other
        saved = json.loads((tmp_path / "settings.json").read_text(encoding="utf-8"))
        assert saved["last_model"] == other
        assert TOKEN not in json.dumps(saved)


async def _until(condition: Callable[[], bool]) -> None:
    """Poll state that lives in the emulator's thread (it has no signal to await)."""
    async with asyncio.timeout(10):
        while not condition():  # noqa: ASYNC110 - another thread's state, no event to wait on
            await asyncio.sleep(0.02)
