"""Something other than the API answers: each says what happened, in the user's terms, and
what cannot succeed by waiting is not retried (a hostile loopback server plays the part)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest
from api_helpers import TOKEN, chat, drain, emu_conn, mock_conn, short_chat

from conftest import ClientFactory, ServerFactory
from flarechat.api.config import Connection
from flarechat.api.errors import (
    ErrorKind,
    NotHTTP,
    NotTLS,
    RateLimited,
    Redirected,
    RequestTimedOut,
    WebPage,
    WorkersAIError,
)
from flarechat.api.retry import RetryPolicy
from flarechat.core.turn import run_turn
from flarechat.settings.schema import Settings
from flarechat.settings.store import SettingsStore
from support.hostile import (
    PORTAL_PAGE,
    HostileServer,
    answer,
    garbage,
    http_head,
    mute,
    portal,
    redirect,
    sse_data,
)

if TYPE_CHECKING:
    from flarechat.emulator.server import EmulatorServer

#: Bound on a whole exchange: a hang fails the test instead of stalling the suite.
PATIENCE = 10.0
#: A connect timeout short enough to fire quickly; the server never completes the handshake.
CONNECT = 0.3
#: Retries that would be immediate, so a retried request shows up as a second connection.
EAGER = RetryPolicy(max_attempts=4, base_delay=0.0, max_delay=0.0)
#: Words that promise an automatic retry: a final error must never say them.
PROMISES = ("will retry", "will try again", "automatically", "retrying")


async def _final_error(conn: Connection) -> tuple[WorkersAIError, int]:
    """Run a whole turn with eager retries: the final error and how many attempts it took."""
    from flarechat.api.client import WorkersAIClient

    attempts = 1
    async with WorkersAIClient() as client:
        try:
            async for event in run_turn(client, conn, chat(), policy=EAGER):
                attempts += type(event).__name__ == "RetryScheduled"
        except WorkersAIError as error:
            return error, attempts
    raise AssertionError("the turn succeeded against a server that is not the API")


# -- TLS ------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_https_to_a_plain_http_port_says_the_server_did_not_speak_tls(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    https = emulator.api_base.replace("http://", "https://")
    port = https.split(":")[2].split("/")[0]
    _, error = await drain(make_client(), emu_conn(emulator, api_base=https), short_chat())
    assert isinstance(error, NotTLS), error
    assert error.kind == ErrorKind.TLS
    assert not error.retryable
    assert "did not speak TLS" in error.message
    assert f"127.0.0.1:{port}" in error.message
    assert "http://" in error.message
    assert "port" in error.message
    assert "certificate" not in error.message.lower()


@pytest.mark.asyncio
async def test_a_port_that_never_answers_tls_is_a_connect_timeout_worded_as_such(
    make_client: ClientFactory, hostile: ServerFactory
) -> None:
    server = await hostile(mute)  # the ClientHello arrives; no answer ever goes back
    https = server.api_base.replace("http://", "https://")
    conn = mock_conn(api_base=https, connect_timeout=CONNECT)
    _, error = await asyncio.wait_for(drain(make_client(), conn, chat()), PATIENCE)
    assert type(error) is RequestTimedOut, error
    assert error.message.startswith(f"Could not connect to 127.0.0.1:{server.port} within 0.3 s")
    assert "secure (TLS) handshake never completed" in error.message
    assert "faster model" not in error.message
    assert "Cloudflare did not respond" not in error.message


# -- redirects ------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_redirect_to_another_host_is_named_not_followed_and_not_retried(
    hostile: ServerFactory,
) -> None:
    location = f"https://login.portal.example:8443/welcome?next=x&token={TOKEN}#frag"
    server = await hostile(answer(redirect(location)))
    error, attempts = await asyncio.wait_for(
        _final_error(mock_conn(api_base=server.api_base)), PATIENCE
    )
    assert isinstance(error, Redirected), error
    assert (attempts, server.connections) == (1, 1)
    assert error.location == "https://login.portal.example:8443/welcome"
    assert "redirected the request (HTTP 302) to https://login.portal.example:8443/welcome " in (
        error.message
    )
    assert "API base URL" in error.message
    assert "probably wrong" in error.message
    assert "Cloudflare had a problem" not in error.message
    for text in (error.message, str(error), error.detail or ""):
        assert TOKEN not in text
        assert "next=" not in text
    assert not any(word in error.message for word in PROMISES)


@pytest.mark.asyncio
async def test_a_relative_redirect_names_the_full_target(
    make_client: ClientFactory, hostile: ServerFactory
) -> None:
    server = await hostile(answer(redirect("/moved/here?x=1", status=301)))
    _, error = await drain(make_client(), mock_conn(api_base=server.api_base), chat())
    assert isinstance(error, Redirected), error
    assert error.location == f"http://127.0.0.1:{server.port}/moved/here"


# -- web pages and non-HTTP replies -----------------------------------------------------------


@pytest.mark.asyncio
async def test_a_200_web_page_is_a_captive_portal_and_not_retried(hostile: ServerFactory) -> None:
    server = await hostile(answer(portal()))
    error, attempts = await asyncio.wait_for(
        _final_error(mock_conn(api_base=server.api_base)), PATIENCE
    )
    assert isinstance(error, WebPage), error
    assert (attempts, server.connections) == (1, 1)
    assert error.kind == ErrorKind.WRONG_SERVER
    assert "got a web page (“Guest WiFi - Sign in”) instead of the API" in error.message
    assert "captive portal or proxy may be intercepting" in error.message
    assert "Cloudflare had a problem" not in error.message


@pytest.mark.asyncio
async def test_a_web_page_instead_of_the_model_list_is_a_captive_portal(
    make_client: ClientFactory, hostile: ServerFactory
) -> None:
    head = http_head(200, {"content-type": "text/html; charset=utf-8", "connection": "close"})
    server = await hostile(answer(head + PORTAL_PAGE))
    with pytest.raises(WebPage) as caught:
        await make_client().list_models(mock_conn(api_base=server.api_base))
    assert "captive portal" in caught.value.message


@pytest.mark.asyncio
async def test_network_authentication_required_is_a_captive_portal(
    make_client: ClientFactory, hostile: ServerFactory
) -> None:
    head = http_head(511, {"content-type": "text/html", "content-length": str(len(PORTAL_PAGE))})
    server = await hostile(answer(head + PORTAL_PAGE))
    _, error = await drain(make_client(), mock_conn(api_base=server.api_base), chat())
    assert isinstance(error, WebPage), error
    assert error.status == 511


@pytest.mark.asyncio
async def test_a_reply_that_is_not_http_says_so_and_is_not_retried(hostile: ServerFactory) -> None:
    server = await hostile(answer(garbage()))
    error, attempts = await asyncio.wait_for(
        _final_error(mock_conn(api_base=server.api_base)), PATIENCE
    )
    assert isinstance(error, NotHTTP), error
    assert (attempts, server.connections) == (1, 1)
    assert error.message.startswith(f"The server at 127.0.0.1:{server.port} did not answer in HTTP")
    assert "Could not reach Cloudflare" not in error.message


@pytest.mark.asyncio
async def test_a_bare_429_is_rate_limiting_without_promising_a_retry(
    make_client: ClientFactory, hostile: ServerFactory
) -> None:
    server = await hostile(answer(http_head(429, {"content-length": "0"})))
    _, error = await drain(make_client(), mock_conn(api_base=server.api_base), chat())
    assert type(error) is RateLimited, error
    assert (error.status, error.code, error.retry_after) == (429, None, None)
    assert "rate-limiting" in error.message
    assert not any(word in error.message.lower() for word in PROMISES)


# -- a timeout mid-stream, through the CLI ------------------------------------------------------

#: The settings' smallest read timeout (validate.REQUEST_TIMEOUT_MIN): the stall after "Hel".
READ_TIMEOUT = 5.0


@pytest.fixture
def stalling_server() -> Iterator[HostileServer]:
    """A hostile server on its own loop thread (cli.main runs its own loop): it streams one
    chunk of text, then goes silent for longer than the read timeout."""

    async def script(
        server: HostileServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await server.read_request(reader)
        head = http_head(200, {"content-type": "text/event-stream", "connection": "close"})
        await server.send(writer, head + sse_data("Hel"))
        await asyncio.sleep(READ_TIMEOUT * 4)

    with HostileServer(script) as server:
        yield server


def test_a_timeout_mid_stream_exits_10_interrupted_not_9_network(
    stalling_server: HostileServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "0" * 32)
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", TOKEN)
    monkeypatch.setenv("FLARECHAT_API_BASE", stalling_server.api_base)
    SettingsStore().save(replace(Settings(), request_timeout=READ_TIMEOUT))
    from flarechat import cli  # the command line, in-process (it runs its own loop)

    code = cli.main(["ask", "hi"], retry_policy=EAGER)
    out, err = capsys.readouterr()
    assert code == cli.EXIT_INTERRUPTED == 10, err
    assert out.startswith("Hel")
    assert "cut off" in err
    assert "Traceback" not in err
    assert stalling_server.connections == 1
