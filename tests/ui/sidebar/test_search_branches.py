"""Search hits and find matches on a branch that is not shown (an earlier version of an edited
message, a regenerated reply's older sibling) open that branch, saved as the 1/2 switcher saves
it, without interrupting a streaming reply (real SQLite, emulator, the whole window)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel
from shell_helpers import ChatEnv, Recorder
from window_helpers import settled_at, until, window

from flarechat.core.conversation import ROLE_USER, ConversationTree
from flarechat.emulator import EmulatorServer
from flarechat.ui.transcript.transcript import TranscriptView
from flarechat.ui.window.main_window import MainWindow

pytestmark = pytest.mark.asyncio

FIRST_QUESTION = "Tell me about pelicans"
EDITED_QUESTION = "Tell me about herons"
#: Replies stream this slowly while the test opens a hit (tokens per second)...
SLOW_TPS = 8
#: ...and this fast once it has (so the test does not wait for the slow pace).
FAST_TPS = 2000
_WORDS = re.compile(r"[a-z]{6,}")


def word_only_in(text: str, *, not_in: Iterable[str]) -> str:
    """A word of ``text`` that no other text contains, even as a prefix (the search matches
    the last term as a prefix)."""
    others = {w for other in not_in for w in _WORDS.findall(other.lower())}
    words: list[str] = _WORDS.findall(text.lower())
    unique = [w for w in words if not any(o.startswith(w) for o in others)]
    assert unique, "the replies share every word; pick other questions"
    return unique[0]


def shown_ids(transcript: TranscriptView) -> list[str]:
    return [data.id for data in transcript.messages()]


async def switcher_text(transcript: TranscriptView, message_id: str) -> str:
    """The "n/m" of a message's version switcher, scrolled to as a user would when its page
    is not built yet (pages are built around what is on screen, a few widgets a turn)."""

    def label() -> QLabel | None:
        view = transcript.view_for(message_id)
        found = view.findChild(QLabel, "siblingLabel") if view is not None else None
        return found if isinstance(found, QLabel) and found.isVisible() else None

    if label() is None:  # its page may not be built yet (pages fill in around what is shown)
        transcript.scroll_to(message_id)
    await until(lambda: label() is not None, f"the version switcher of {message_id}")
    shown = label()
    assert shown is not None
    return shown.text()


async def exchange(env: ChatEnv, text: str) -> tuple[str, str]:
    """Send ``text`` in the current conversation; (user message id, reply id) once done."""
    reply = env.chat.send(text)
    assert reply is not None
    await env.finished(reply)
    tree = env.chat.current_tree()
    assert tree is not None
    user = tree.get(reply).parent_id
    assert user is not None
    return user, reply


def edit(env: ChatEnv, user_id: str, text: str) -> str:
    """Edit-and-resend a user message (a new branch); the new reply's id."""
    env.chat.start_edit(user_id)
    reply = env.chat.send(text)
    assert reply is not None
    return reply


async def open_search_hit(main: MainWindow, seen: Recorder, word: str, message_id: str) -> None:
    """Type ``word`` in the sidebar's search and click the hit for ``message_id``."""
    mark = seen.mark()
    main.sidebar.search_field.setText(word)
    (hits,) = await seen.wait("search_results", after=mark)
    rows = [i for i, hit in enumerate(hits) if hit.message_id == message_id]
    assert rows, f"no search hit for {message_id}"
    main.sidebar.results.itemClicked.emit(main.sidebar.results.item(rows[0]))
    await seen.wait("focus_requested", lambda m: m == message_id, after=mark)


async def test_a_search_hit_in_an_earlier_version_opens_that_branch(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, seen):
        user1, reply1 = await exchange(env, FIRST_QUESTION)
        reply2 = edit(env, user1, EDITED_QUESTION)
        await env.finished(reply2)
        await env.chat.drain()
        tree = env.chat.current_tree()
        assert tree is not None
        conversation_id, user2 = tree.conversation.id, tree.get(reply2).parent_id
        transcript = main.pane.transcript
        assert shown_ids(transcript) == [user2, reply2]  # branch 2 is on screen
        word = word_only_in(
            tree.get(reply1).content,
            not_in=[tree.conversation.title, *(m.content for m in tree if m.id != reply1)],
        )
        main.sidebar.search_field.setText(word)
        (hits,) = await seen.wait("search_results")
        assert [(h.conversation_id, h.message_id) for h in hits] == [(conversation_id, reply1)]
        main.sidebar.results.itemClicked.emit(main.sidebar.results.item(0))
        await seen.wait("focus_requested")
        assert shown_ids(transcript) == [user1, reply1]  # branch 1, with its 1/2 switcher
        await settled_at(transcript, reply1)  # the hit is on screen and marked …
        assert await switcher_text(transcript, user1) == "1/2"  # … under its version switcher
        await env.chat.drain()
        stored = await env.store.load_tree(conversation_id)
        assert [m.id for m in stored.path()] == [user1, reply1]  # saved as the switcher saves


async def test_find_matches_on_every_branch_and_shows_each_one_s_branch(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, seen):
        user, reply1 = await exchange(env, FIRST_QUESTION)
        reply2 = env.chat.regenerate(reply1)
        assert reply2 is not None
        await env.finished(reply2)
        await env.chat.drain()
        tree = env.chat.current_tree()
        assert tree is not None
        transcript, bar = main.pane.transcript, main.pane.find_bar
        assert shown_ids(transcript) == [user, reply2]
        word = word_only_in(
            tree.get(reply1).content, not_in=[tree.conversation.title, tree.get(user).content]
        )
        assert word in tree.get(reply2).content.lower()  # the emulator answers alike
        bar.open_bar()
        bar.field.setText(word)
        _query, matches = await seen.wait("find_results")
        assert matches == [reply1, reply2]  # both versions, in the order they were written
        assert bar.count.text() == "2 of 2"
        bar.previous.click()  # the older version: its branch comes on screen
        assert shown_ids(transcript) == [user, reply1]
        assert await switcher_text(transcript, reply1) == "1/2"
        await settled_at(transcript, reply1)
        bar.next.click()
        assert shown_ids(transcript) == [user, reply2]
        assert await switcher_text(transcript, reply2) == "2/2"
        await env.chat.drain()
        stored = await env.store.load_tree(tree.conversation.id)
        assert stored.path()[-1].id == reply2


def _words_of(tree: ConversationTree, reply: str) -> str:
    users = [m.content for m in tree if m.role == ROLE_USER]
    return word_only_in(tree.get(reply).content, not_in=[tree.conversation.title, *users])


@pytest.mark.parametrize("elsewhere", [False, True], ids=["same-conversation", "from-another"])
async def test_opening_a_hit_never_interrupts_a_streaming_reply(
    emulator: EmulatorServer, tmp_path: Path, elsewhere: bool
) -> None:
    async with window(emulator, tmp_path) as (env, main, seen):
        user1, reply1 = await exchange(env, FIRST_QUESTION)
        conversation_id = env.chat.current_id
        emulator.state.tokens_per_second = SLOW_TPS
        reply2 = edit(env, user1, EDITED_QUESTION)
        await env.recorder.wait("turn_text_appended", lambda m, _t: m == reply2)
        tree = env.chat.current_tree()
        assert tree is not None
        word = _words_of(tree, reply1)
        if elsewhere:
            env.chat.new_conversation()  # another conversation is on screen meanwhile
        await open_search_hit(main, seen, word, reply1)
        transcript = main.pane.transcript
        assert env.chat.current_id == conversation_id
        assert shown_ids(transcript) == [user1, reply1]  # the view switched...
        assert env.chat.is_running(reply2)  # ...and the reply keeps streaming
        assert await switcher_text(transcript, user1) == "1/2"
        emulator.state.tokens_per_second = FAST_TPS
        data = await env.finished(reply2)
        assert data.status == "done"
        assert shown_ids(transcript) == [user1, reply1]  # its end did not pull the view back
        await env.chat.drain()
        stored = await env.store.load_tree(str(conversation_id))
        assert (stored.get(reply2).status, stored.get(reply2).content) == ("done", data.content)
        assert data.content
        assert [m.id for m in stored.path()] == [user1, reply1]
        env.chat.switch_branch(user1, +1)  # the finished reply is there on its branch
        user2 = stored.get(reply2).parent_id
        assert shown_ids(transcript) == [user2, reply2]
        assert transcript.messages()[-1].content == data.content
