"""The real window against Workers AI faults (the emulator) and servers that are not the API
(the suite's hostile server): each says what happened, stays responsive, loses nothing and
leaks no token."""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from drive import Run, assert_plain, faulty_window
from shell_helpers import MODEL, TOKEN, fast_policy

from flarechat.emulator import EmulatorServer
from flarechat.emulator.state import EmulatorState
from support.hostile import HostileServer, answer, garbage, portal, redirect

pytestmark = pytest.mark.asyncio

OTHER_MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
PROMPT = "What does this fault look like?"
#: A Retry-After past the policy's cap: the reply fails at once and says when to retry.
RETRY_AFTER = 30.0


@dataclass(frozen=True)
class ApiFault:
    """One scripted failure and what the window must then say."""

    script: Callable[[EmulatorState], None]
    kind: str
    title: str
    words: str  # in the banner's text


def _fail(code: int, status: int, **kw: Any) -> Callable[[EmulatorState], None]:
    return lambda state: state.fail_next(4, code=code, status=status, **kw)


API_FAULTS = {
    "daily-allocation": ApiFault(
        _fail(3036, 429), "daily_limit", "Daily free allocation used up", "00:00 UTC"
    ),
    "rate-limit-retry-after": ApiFault(
        _fail(3021, 429, retry_after=RETRY_AFTER), "rate_limit", "Rate limited", "rate-limiting"
    ),
    "unauthorized": ApiFault(
        _fail(10000, 401), "auth", "Authentication failed", "rejected the API token"
    ),
    "gateway-not-found": ApiFault(
        _fail(2001, 400), "gateway", "AI Gateway error", "AI Gateway does not exist"
    ),
    "gateway-unauthorized": ApiFault(
        _fail(2009, 401), "gateway_auth", "Authentication failed", "gateway token"
    ),
    "gateway-rate-limited": ApiFault(
        _fail(2003, 429), "rate_limit", "Rate limited", "Gateway's rate limit was reached"
    ),
    "model-deprecated-5028": ApiFault(
        _fail(5028, 400), "model", "Model unavailable", "retired by Cloudflare"
    ),
    "paid-plan-only-5035": ApiFault(
        _fail(5035, 403), "model", "Model unavailable", "Workers Paid plan"
    ),
    "terms-not-accepted-5016": ApiFault(
        _fail(5016, 403), "terms", "", "licence terms have not been accepted"
    ),
    "context-exceeded-5021": ApiFault(
        _fail(5021, 400), "too_large", "too long for this model", "context window"
    ),
}


def _check_kept(run: Run, rows: list[tuple[str, str, str]], *, prompt: str = PROMPT) -> None:
    """The user's message is in the database and on screen."""
    assert ("user", prompt, "done") in rows
    assert ("user", prompt, "done") in run.shown()


@pytest.mark.parametrize("name", list(API_FAULTS))
async def test_api_failures_are_explained_in_the_window(
    name: str,
    emulator: EmulatorServer,
    isolated_profile: Path,
    logged: pytest.LogCaptureFixture,
) -> None:
    fault = API_FAULTS[name]
    policy = fast_policy(retry_after_cap=1.0)
    async with faulty_window(emulator, isolated_profile, logged, policy=policy) as run:
        fault.script(emulator.state)
        outcome = await run.ask(PROMPT)
        assert outcome.kind == fault.kind, outcome
        title, text = run.banner()
        assert fault.title in title
        assert fault.words in text
        assert "will retry" not in text
        assert_plain(title, text)
        rows = await run.settle()
        _check_kept(run, rows)
        assert rows[-1][0] == "assistant"
        assert rows[-1][2] == "failed"


async def test_a_rate_limit_with_retry_after_counts_down_to_when_it_may_be_sent(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    policy = fast_policy(retry_after_cap=1.0)
    async with faulty_window(emulator, isolated_profile, logged, policy=policy) as run:
        emulator.state.fail_next(1, code=3021, status=429, retry_after=RETRY_AFTER)
        outcome = await run.ask(PROMPT)
        assert outcome.extra.get("retry_after") == RETRY_AFTER
        banner = run.main.pane.notice_banner
        assert banner.countdown_running
        assert 0 < banner.seconds_left() <= RETRY_AFTER
        generations = [r for r in emulator.state.requests if "/ai/run/" in r.path]
        assert len(generations) == 1  # past the cap: not retried behind the user's back


async def test_a_capacity_burst_on_one_model_while_another_works(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    async with faulty_window(emulator, isolated_profile, logged) as run:
        emulator.state.fail_next(20, code=3040, status=429, model=MODEL)
        busy = await run.ask(PROMPT)
        assert busy.kind == "capacity"
        title, text = run.banner()
        assert "at capacity" in title
        assert "Gave up after 4 attempts" in text
        assert_plain(title, text)
        await run.env.chat.drain()  # the failed turn is wound up: its reply can be switched
        run.mark = run.env.recorder.mark()
        run.env.chat.set_model(OTHER_MODEL)  # Switch model: the held-up reply goes again
        started = await run.env.recorder.wait("turn_started", after=run.mark)
        works = await run.outcome(str(started[1]))
        assert works.kind is None
        assert works.data.status == "done"
        assert works.data.content
        assert not run.main.pane.retry_banner.isVisible()
        rows = await run.settle()
        _check_kept(run, rows)
        assert ("assistant", works.data.content, "done") in rows
        models = {
            r.path.rsplit("/run/", 1)[-1] for r in emulator.state.requests if "/run/" in r.path
        }
        assert models == {MODEL, OTHER_MODEL}


async def test_a_token_revoked_mid_session(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    async with faulty_window(emulator, isolated_profile, logged) as run:
        first = await run.ask("Hello while the token is good")
        assert first.data is not None
        emulator.state.fail_next(10, code=10000, status=401)
        revoked = await run.ask(PROMPT)
        assert revoked.kind == "auth"
        title, text = run.banner()
        assert title == "Authentication failed"
        assert_plain(title, text)
        rows = await run.settle()
        _check_kept(run, rows)
        assert ("assistant", first.data.content, "done") in rows  # the earlier reply stays


async def test_a_slow_first_byte_keeps_the_window_responsive(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    async with faulty_window(emulator, isolated_profile, logged) as run:
        emulator.state.delay_first_byte(1.0)
        outcome = await run.ask(PROMPT)
        assert outcome.data is not None
        assert outcome.data.status == "done"
        rows = await run.settle()
        assert ("assistant", outcome.data.content, "done") in rows


async def test_a_stream_dropped_after_k_tokens_keeps_the_partial_reply(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    async with faulty_window(emulator, isolated_profile, logged) as run:
        emulator.state.drop_after_tokens(3)
        outcome = await run.ask(PROMPT)
        assert outcome.kind == "interrupted"
        title, text = run.banner()
        assert title == "The reply was interrupted"
        assert "partial reply is kept" in text
        rows = await run.settle()
        _check_kept(run, rows)
        role, content, status = rows[-1]
        assert (role, status) == ("assistant", "interrupted")
        assert content
        assert ("assistant", content, "interrupted") in run.shown()


async def test_an_error_event_mid_stream_keeps_the_partial_reply(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    async with faulty_window(emulator, isolated_profile, logged) as run:
        emulator.state.error_event_after(2)
        outcome = await run.ask(PROMPT)
        assert outcome.kind is not None
        assert_plain(*run.banner())
        rows = await run.settle()
        _check_kept(run, rows)
        assert rows[-1][1]  # the text before the error event


async def test_malformed_sse_lines_are_skipped_and_the_reply_completes(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    async with faulty_window(emulator, isolated_profile, logged) as run:
        emulator.state.malformed_chunks(3)
        outcome = await run.ask(PROMPT)
        assert outcome.data is not None
        assert outcome.data.status == "done"
        rows = await run.settle()
        assert ("assistant", outcome.data.content, "done") in rows


# -- no API at all ----------------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again: nothing listens there now


NETWORK_FAULTS = {
    "connection-refused": (
        lambda: f"http://127.0.0.1:{_closed_port()}/client/v4",
        "network",
        "Could not reach Cloudflare",
    ),
    "dns-failure": (
        lambda: "https://flarechat-fault.invalid/client/v4",
        "network",
        "Could not reach Cloudflare",
    ),
}


@pytest.mark.parametrize("name", list(NETWORK_FAULTS))
async def test_unreachable_servers_are_explained(
    name: str,
    emulator: EmulatorServer,
    isolated_profile: Path,
    logged: pytest.LogCaptureFixture,
) -> None:
    base, kind, words = NETWORK_FAULTS[name]
    async with faulty_window(emulator, isolated_profile, logged, api_base=base()) as run:
        outcome = await run.ask(PROMPT)
        assert outcome.kind == kind
        title, text = run.banner()
        assert words in text
        assert_plain(title, text)
        _check_kept(run, await run.settle())


async def test_tls_to_a_plain_http_port_says_the_server_did_not_speak_tls(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    https = emulator.api_base.replace("http://", "https://")
    async with faulty_window(emulator, isolated_profile, logged, api_base=https) as run:
        outcome = await run.ask(PROMPT)
        assert outcome.kind == "tls"
        title, text = run.banner()
        assert title == "Secure connection failed"
        assert "did not speak TLS" in text
        assert_plain(title, text)
        _check_kept(run, await run.settle())


WRONG_SERVERS = {
    "redirect-elsewhere": (
        redirect(f"https://portal.example/login?token={TOKEN}"),
        "redirected the request (HTTP 302) to https://portal.example/login",
    ),
    "captive-portal-page": (portal(), "captive portal or proxy may be intercepting"),
    "not-http": (garbage(), "did not answer in HTTP"),
}


@pytest.mark.parametrize("name", list(WRONG_SERVERS))
async def test_something_other_than_the_api_answering_is_named_and_not_retried(
    name: str,
    emulator: EmulatorServer,
    isolated_profile: Path,
    logged: pytest.LogCaptureFixture,
) -> None:
    data, words = WRONG_SERVERS[name]
    with HostileServer(answer(data)) as server:
        options: dict[str, Any] = {"api_base": server.api_base}
        async with faulty_window(emulator, isolated_profile, logged, **options) as run:
            outcome = await run.ask(PROMPT)
            assert outcome.kind == "wrong_server"
            title, text = run.banner()
            assert title == "Something else answered, not Workers AI"
            assert words in text
            assert "Cloudflare had a problem" not in text
            assert_plain(title, text)
            _check_kept(run, await run.settle())
        chats = [head for head in server.requests if head.startswith(b"POST ")]
        assert len(chats) == 1  # the chat request, once: never retried
