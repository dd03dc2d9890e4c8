"""WorkersAIClient: the one long-lived HTTP client that talks to Workers AI and AI Gateway."""

from __future__ import annotations

import asyncio
import codecs
import dataclasses
import logging
import ssl
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Mapping, Sequence
from contextlib import aclosing, asynccontextmanager
from types import TracebackType
from typing import Any, Self, TypeVar
from urllib.parse import quote

import httpx
import truststore
from httpx_sse import ServerSentEvent

# Private module, pinned to 0.4.3 <= v < 0.5 in pyproject: the decoders aiter_sse itself runs.
from httpx_sse._decoders import SSEDecoder, SSELineDecoder

from flarechat import __version__, safejson
from flarechat.api import _messages as msg
from flarechat.api._catalogue import (
    MAX_PAGES,
    PER_PAGE,
    is_last_page,
    parse_finetune,
    parse_model,
)
from flarechat.api._decode import ReplyDecoder, decode_complete, has_content, merge_deltas
from flarechat.api._errors_map import DETAIL_LIMIT, classify, classify_payload, web_page
from flarechat.api._redact import (
    connection_secrets,
    install_log_redaction,
    redact,
    redact_value,
)
from flarechat.api._routes import (
    PreparedRequest,
    api_headers,
    build_agree_request,
    build_chat_request,
    chat_url,
)
from flarechat.api._transport import BurstReader, StallWatch, from_transport_error, stalled
from flarechat.api.batch import (
    BATCH_UNKNOWN,
    BatchPoll,
    BatchRequestUnknown,
    BatchTicket,
    parse_poll,
    parse_ticket,
)
from flarechat.api.config import ChatRequest, Connection, Endpoint, Route
from flarechat.api.errors import (
    BadRequest,
    BodyCutOff,
    ServerError,
    TermsNotAccepted,
    WorkersAIError,
)
from flarechat.api.events import (
    ChatEvent,
    Finished,
    ResponseMeta,
    StreamEvent,
    StreamingDisabled,
    ToolCallDelta,
    UsageReport,
)
from flarechat.api.models import FineTune, ModelInfo
from flarechat.api.schema import ModelSchema, parse_model_schema
from flarechat.api.tokens import TokenCheck, TokenKind, token_check_from, workers_ai_check

__all__ = [
    "DEFAULT_USER_AGENT",
    "ERROR_BODY_LIMIT",
    "POOL_TIMEOUT",
    "TEXT_GENERATION",
    "WRITE_TIMEOUT",
    "WorkersAIClient",
    "tls_context",
]

logger = logging.getLogger("flarechat.api")

DEFAULT_USER_AGENT = f"Flarechat/{__version__} (+python-httpx)"
WRITE_TIMEOUT = 30.0  # seconds to send a request body
POOL_TIMEOUT = 10.0  # seconds to wait for a free pooled connection
TEXT_GENERATION = "Text Generation"
#: What list_models fetches, as its messages name it ("The model list was cut off mid-way").
MODEL_LIST = "the model list"
#: Bytes of an error body read at most: enough for any JSON envelope or a proxy page's title;
#: a hostile or broken server's 50 MB page is never read (or decoded) whole.
ERROR_BODY_LIMIT = 64 * 1024
#: After a reply's last event: how long and how much more of its body is read (see _drain).
DRAIN_TIMEOUT = 1.0
DRAIN_LIMIT_BYTES = 64 * 1024
_EVENT_STREAM = "text/event-stream"
_SSE_ENCODING = "utf-8"  # what the SSE spec prescribes
_HTML = "text/html"
#: The body a capped copy no longer has in the original's framing or encoding.
#: The most events of one read handed on before the event loop gets a turn (the window's
#: GUI thread runs on that loop; a read may hold 10,000 tool calls).
_EVENTS_PER_TURN = 200
_BODY_FRAMING = frozenset({"content-encoding", "content-length", "transfer-encoding"})
_T = TypeVar("_T")


@dataclasses.dataclass(slots=True)
class _Call:
    """Per-call context: what to redact, the timeouts, and whether headers arrived yet."""

    conn: Connection
    model: str | None = None
    #: response headers arrived (a transport error after this interrupted a reply)
    started: bool = False
    #: the streamed request came back as an empty JSON reply (gpt-oss on /ai/run)
    empty_reply: bool = False
    secrets: tuple[str, ...] = ()
    timeout: httpx.Timeout = dataclasses.field(default_factory=lambda: httpx.Timeout(None))
    #: reply content was handed on (a stall after this cut a reply off)
    received: bool = False
    #: loop time by which the whole call must be over (Connection.overall_timeout)
    deadline: float = float("inf")
    #: what a GET fetches ("the model list"), named when its answer is cut off mid-way
    subject: str | None = None

    @classmethod
    def of(cls, conn: Connection, model: str | None = None, *, subject: str | None = None) -> _Call:
        timeout = httpx.Timeout(
            connect=conn.connect_timeout,
            read=conn.read_timeout,
            write=WRITE_TIMEOUT,
            pool=POOL_TIMEOUT,
        )
        secrets = connection_secrets(conn)
        # httpx/httpcore log headers verbatim at DEBUG (-v): their records are redacted too.
        install_log_redaction(secrets)
        deadline = asyncio.get_running_loop().time() + conn.overall_timeout
        return cls(
            conn=conn,
            model=model,
            secrets=secrets,
            timeout=timeout,
            deadline=deadline,
            subject=subject,
        )

    async def within(self, step: Awaitable[_T]) -> _T:
        """Await one step of the call, but not past the overall deadline.

        Each step gets its own timeout scope: one spanning a ``yield`` would cancel whatever
        the consumer awaits between events instead of the request.
        """
        try:
            async with asyncio.timeout_at(self.deadline):
                return await step
        except TimeoutError:
            raise self.overdue() from None

    def overdue(self) -> WorkersAIError:
        seconds = self.conn.overall_timeout
        return stalled(idle=False, received=self.received, seconds=seconds)


class WorkersAIClient:
    """Streams chats, lists models and verifies tokens over one pooled ``httpx.AsyncClient``.

    TLS is verified against the operating system's trust store (truststore), so corporate CAs
    work; ``HTTP(S)_PROXY``/``NO_PROXY`` are honoured. Create one per process and ``aclose()``
    it on shutdown. ``transport`` is for tests.
    """

    def __init__(
        self,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        user_agent: str | None = None,
    ) -> None:
        self._user_agent = user_agent or DEFAULT_USER_AGENT
        self._http = httpx.AsyncClient(
            transport=transport,
            verify=tls_context(),
            trust_env=True,
            follow_redirects=False,
            timeout=httpx.Timeout(None),  # every request passes its Connection's timeouts
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def stream_chat(
        self, conn: Connection, request: ChatRequest
    ) -> AsyncGenerator[StreamEvent, None]:
        """Events of one reply: ResponseMeta first, then deltas, usage and Finished.

        Raises ValueError for an invalid request (before sending) and a WorkersAIError subclass
        for everything that goes wrong on the way. Works for ``request.stream`` False too.
        :meth:`stream_reply` yields the same plus tool-call fragments and StreamingDisabled.
        """
        async with aclosing(self.stream_reply(conn, request)) as events:
            async for event in events:
                if not isinstance(event, StreamingDisabled | ToolCallDelta):
                    yield event

    async def stream_reply(
        self, conn: Connection, request: ChatRequest
    ) -> AsyncGenerator[ChatEvent, None]:
        """Every event of one reply (:data:`ChatEvent`): :meth:`stream_chat`'s, plus
        ToolCallDelta fragments and, when JSON mode turned streaming off, StreamingDisabled
        right after ResponseMeta. A 5016 carries ``request.model_info``'s terms URL."""
        prepared = build_chat_request(conn, request, user_agent=self._user_agent)
        call = _Call.of(conn, request.model)
        try:
            async with aclosing(self._attempt(prepared, call, final=not prepared.stream)) as events:
                async for event in events:
                    yield event
                    if isinstance(event, ResponseMeta) and prepared.stream_disabled:
                        yield StreamingDisabled(msg.STREAMING_DISABLED)
            if not call.empty_reply:
                return
            # gpt-oss on /ai/run ignores stream: true and answers with an empty JSON result;
            # cloudflare/ai's provider then asks again without streaming. So do we, once.
            logger.info("Empty non-streamed reply from %s; retrying with stream off", call.model)
            again = dataclasses.replace(request, stream=False)
            prepared = build_chat_request(conn, again, user_agent=self._user_agent)
            async with aclosing(self._attempt(prepared, call, final=True)) as events:
                async for event in events:
                    yield event
        except httpx.RequestError as exc:
            # from None: httpx's own text stays out of tracebacks; a redacted copy is in .detail
            raise self._network_error(exc, call) from None
        except TermsNotAccepted as exc:
            if exc.terms_url is None and request.model_info is not None:
                exc.terms_url = request.model_info.terms_url
            raise

    async def list_models(
        self, conn: Connection, *, task: str = TEXT_GENERATION
    ) -> list[ModelInfo]:
        """The account's catalogue for ``task``, all pages, in the server's order."""
        call = _Call.of(conn, subject=MODEL_LIST)
        found: dict[str, ModelInfo] = {}
        seen: set[str] = set()
        for page in range(1, MAX_PAGES + 1):
            url = _models_url(conn, task=task, page=page, per_page=PER_PAGE)
            body = await self._get_envelope(url, call)
            items = body.get("result")
            items = items if isinstance(items, list) else []
            # Only names that are text count: a list or an object as a name is not hashable.
            names: set[str] = set()
            for item in items:
                name = item.get("name") if isinstance(item, Mapping) else None
                if isinstance(name, str):
                    names.add(name)
            fresh = bool(names - seen)
            seen.update(names)
            for model in filter(None, map(parse_model, items)):
                if _task_matches(model, task):
                    found.setdefault(model.name, model)
            done = is_last_page(body, page=page, per_page=PER_PAGE, received=len(items))
            if done or not fresh:
                break
        return list(found.values())

    async def verify_token(self, conn: Connection) -> TokenCheck:
        """Which kind of token this is: user, account, or one that only works for Workers AI.

        Tries /user/tokens/verify, then /accounts/{id}/tokens/verify, then a cheap authorised
        call (models/search, one item). Raises the last call's classified error when none
        worked: AuthenticationFailed for a bad token, BadRequest for an unknown account…
        """
        call = _Call.of(conn, subject="the token check")
        base = conn.api_base.rstrip("/")
        check, response = await self._verify_at("user", f"{base}/user/tokens/verify", call=call)
        if check is not None:
            return check
        if conn.account_id.strip():
            account = quote(conn.account_id.strip(), safe="")
            url = f"{base}/accounts/{account}/tokens/verify"
            check, response = await self._verify_at("account", url, call=call)
            if check is not None:
                return check
            response = await self._get(_models_url(conn, per_page=1), call)
            if response.is_success and _json_or_empty(response).get("success") is not False:
                return workers_ai_check()
        raise self._status_error(response, call)

    async def _verify_at(
        self, kind: TokenKind, url: str, *, call: _Call
    ) -> tuple[TokenCheck | None, httpx.Response]:
        response = await self._get(url, call)
        if not response.is_success:
            return None, response
        return token_check_from(kind, _json_or_empty(response)), response

    async def get_model_schema(self, conn: Connection, model: str) -> ModelSchema:
        """What ``GET …/ai/models/schema?model=`` says the model takes; ``known`` is False
        when the schema is missing or unreadable. Errors are classified as everywhere."""
        call = _Call.of(conn, model, subject=f"the schema of {model}")
        url = _account_url(conn, f"ai/models/schema?model={quote(model, safe='@/')}")
        return parse_model_schema(model, await self._get_envelope(url, call))

    async def list_finetunes(self, conn: Connection) -> list[FineTune]:
        """The account's fine-tunes (LoRA adapters), from ``GET …/ai/finetunes``."""
        call = _Call.of(conn, subject="the list of fine-tunes")
        body = await self._get_envelope(_account_url(conn, "ai/finetunes"), call)
        items = body.get("result")
        return list(filter(None, map(parse_finetune, items if isinstance(items, list) else [])))

    async def agree_to_terms(self, conn: Connection, model: str) -> bool:
        """Accept ``model``'s licence for the account: the documented ``{"prompt": "agree"}``
        request on the native route. True when accepted, False when the server still answers
        5016; any other failure raises, classified."""
        prepared = build_agree_request(conn, model, user_agent=self._user_agent)
        call = _Call.of(conn, model)
        try:
            async with self._send(prepared, call) as response:
                await response.aread()
                body = _json_or_empty(response)
                if body.get("success") is False:
                    raise classify_payload(body, status=response.status_code, model=model)
        except TermsNotAccepted:
            return False
        except httpx.RequestError as exc:
            raise self._network_error(exc, call) from None
        return True

    # -- batches and embeddings -------------------------------------------------------------

    async def submit_batch(
        self, conn: Connection, model: str, items: Sequence[Mapping[str, Any]]
    ) -> BatchTicket:
        """Queue ``items`` (each one model input, optionally with ``external_reference``) on
        the async Batch API; the ticket's request_id is what :meth:`poll_batch` needs."""
        body = await self._post_json(
            conn, _batch_url(conn, model), {"requests": list(items)}, model
        )
        return parse_ticket(body, model=model)

    async def poll_batch(self, conn: Connection, ticket: BatchTicket) -> BatchPoll:
        """One poll: queued, running, or done with every item. An id the server does not know
        raises :class:`BatchRequestUnknown`; other failures are classified as everywhere."""
        url = _batch_url(conn, ticket.model)
        try:
            body, neurons = await self._post_for(
                conn, url, {"request_id": ticket.request_id}, ticket.model
            )
        except BadRequest as exc:
            if exc.status not in _UNKNOWN_BATCH_STATUSES:
                raise
            raise BatchRequestUnknown(
                BATCH_UNKNOWN, status=exc.status, code=exc.code, detail=exc.detail
            ) from None
        return parse_poll(body, neurons=neurons)

    async def embed(self, conn: Connection, model: str, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text from an embedding model's native ``/ai/run`` (``{"text": [...]}``
        answers ``data``; bge-m3's contexts form answers ``response``)."""
        url = chat_url(conn, model, endpoint=Endpoint.NATIVE)
        body = await self._post_json(conn, url, {"text": list(texts)}, model)
        result = body.get("result")
        rows = None
        if isinstance(result, Mapping):
            rows = result.get("data", result.get("response"))
        vectors = [
            [float(x) for x in row if isinstance(x, int | float)]
            for row in (rows if isinstance(rows, list) else [])
            if isinstance(row, list)
        ]
        if len(vectors) != len(texts):
            raise ServerError(
                msg.UNREADABLE_REPLY, detail=f"{len(vectors)} vectors for {len(texts)} texts"
            )
        return vectors

    async def _post_json(
        self, conn: Connection, url: str, payload: Mapping[str, Any], model: str
    ) -> Mapping[str, Any]:
        body, _ = await self._post_for(conn, url, payload, model)
        return body

    async def _post_for(
        self, conn: Connection, url: str, payload: Mapping[str, Any], model: str
    ) -> tuple[Mapping[str, Any], float | None]:
        """POST ``payload`` and read the v4 envelope; errors raise, classified and redacted."""
        call = _Call.of(conn, model)
        headers = api_headers(conn, user_agent=self._user_agent)
        if conn.route is Route.GATEWAY_URL:
            headers["cf-aig-skip-cache"] = "true"  # a cached poll would freeze its status
        prepared = PreparedRequest(url=url, body=dict(payload), headers=headers, stream=False)
        try:
            async with self._send(prepared, call) as response:
                await call.within(response.aread())
                body = _expect_json(response, call)
                neurons = _float(response.headers.get("cf-ai-neurons"))
        except httpx.RequestError as exc:
            raise self._network_error(exc, call) from None
        if body.get("success") is False:
            raise classify_payload(body, status=response.status_code, secrets=call.secrets)
        return body, neurons

    # -- chat internals -------------------------------------------------------------------

    async def _attempt(
        self, prepared: PreparedRequest, call: _Call, *, final: bool
    ) -> AsyncGenerator[ChatEvent, None]:
        """One HTTP exchange. If not ``final`` and the JSON reply is empty, yield nothing and
        set ``call.empty_reply`` so the caller can ask again without streaming."""
        async with self._send(prepared, call) as response:
            if _is_event_stream(response):
                yield _meta(response, call.model)
                async with aclosing(self._events(response, call)) as stream:
                    async for event in stream:
                        yield event
                return
            events = await self._complete(response, call)
            call.empty_reply = not final and not has_content(events)
            if call.empty_reply:
                return
            yield _meta(response, call.model)
            for event in events:
                yield event

    @asynccontextmanager
    async def _send(self, prepared: PreparedRequest, call: _Call) -> AsyncIterator[httpx.Response]:
        call.started = call.empty_reply = False
        logger.debug("POST %s", redact(prepared.url, call.secrets))
        request = self._http.build_request(
            "POST", prepared.url, json=prepared.body, headers=prepared.headers, timeout=call.timeout
        )
        response = await call.within(self._http.send(request, stream=True))
        try:
            call.started = True
            _log_response(response, call)
            if not response.is_success:
                raise self._status_error(await call.within(_capped(response)), call)
            yield response
        finally:
            await response.aclose()

    async def _events(
        self, response: httpx.Response, call: _Call
    ) -> AsyncGenerator[ChatEvent, None]:
        """The reply's events, read a burst at a time (:class:`BurstReader`): a burst's SSE
        events are decoded together and their text deltas merged (:func:`merge_deltas`), so a
        fast stream costs the rest of the app one event per burst, not one per token."""
        decoder = ReplyDecoder(status=response.status_code, secrets=call.secrets, model=call.model)
        sse = _SSEReader(response.encoding)
        watch = StallWatch(
            idle=call.conn.idle_timeout, overall=call.conn.overall_timeout, deadline=call.deadline
        )
        reader = BurstReader(response.aiter_bytes())
        try:
            while not decoder.done:
                data = await watch.read(reader.take(), received=call.received)
                read = sse.feed(data) if data is not None else sse.end()
                events, error = _decode_chunk(decoder, read, watch)
                for count, event in enumerate(merge_deltas(events), 1):
                    call.received = call.received or not isinstance(event, _NOT_CONTENT)
                    yield event
                    if count % _EVENTS_PER_TURN == 0:
                        await asyncio.sleep(0)  # a read of 10,000 tool calls lets the loop run
                if error is not None:
                    raise error  # after what came before it in the same read
                if data is None:
                    break
            else:
                await _drain(reader)
        finally:
            watch.close()
            await reader.aclose()
        for event in (*decoder.flush(), *decoder.close()):
            yield event

    async def _complete(self, response: httpx.Response, call: _Call) -> list[ChatEvent]:
        if _is_html(response):  # a captive portal's page: read only what names it
            response = await call.within(_capped(response))
        else:
            await call.within(response.aread())
        payload = _expect_json(response, call)
        return decode_complete(
            payload, status=response.status_code, secrets=call.secrets, model=call.model
        )

    # -- plain GETs ---------------------------------------------------------------------------

    async def _get(self, url: str, call: _Call) -> httpx.Response:
        headers = api_headers(call.conn, user_agent=self._user_agent)
        headers["Accept"] = "application/json"
        logger.debug("GET %s", redact(url, call.secrets))
        request = self._http.build_request("GET", url, headers=headers, timeout=call.timeout)
        try:
            response = await call.within(self._http.send(request, stream=True))
        except httpx.RequestError as exc:
            raise self._network_error(exc, call) from None
        try:
            _log_response(response, call)
            if not response.is_success or _is_html(response):
                return await call.within(_capped(response))
            await call.within(response.aread())
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            # The headers came, so the server spoke HTTP: its body ended early.
            raise _cut_off(call, detail=f"{type(exc).__name__}: {exc}") from None
        except httpx.RequestError as exc:
            raise self._network_error(exc, call) from None
        finally:
            await response.aclose()
        return response

    # -- errors ---------------------------------------------------------------------------------

    async def _get_envelope(self, url: str, call: _Call) -> Mapping[str, Any]:
        """GET a v4 envelope; any error status or ``success: false`` raises, classified.

        Every string in it is redacted here: a catalogue or schema that echoes the token must
        not reach ``models --json``, the window or ``cache/models.json``."""
        response = await self._get(url, call)
        if not response.is_success:
            raise self._status_error(response, call)
        body: Mapping[str, Any] = redact_value(_expect_json(response, call), call.secrets)
        if body.get("success") is False:
            raise classify_payload(
                body, status=response.status_code, headers=response.headers, secrets=call.secrets
            )
        return body

    def _status_error(self, response: httpx.Response, call: _Call) -> WorkersAIError:
        error = classify(
            status=response.status_code,
            body=response.text,
            headers=response.headers,
            secrets=call.secrets,
            model=call.model,
            url=str(response.request.url),
        )
        logger.warning("Request failed: %s", redact(str(error), call.secrets))
        return error

    def _network_error(self, exc: httpx.RequestError, call: _Call) -> WorkersAIError:
        if isinstance(exc, httpx.TransportError):
            error = from_transport_error(
                exc,
                started=call.started,
                received=call.received,
                timeout=call.timeout,
                secrets=call.secrets,
            )
        else:  # DecodingError, TooManyRedirects: the reply itself was broken
            detail = redact(f"{type(exc).__name__}: {exc}", call.secrets)
            error = ServerError(msg.UNREADABLE_REPLY, detail=detail)
        logger.warning("Network failure: %s", redact(error.detail or str(error), call.secrets))
        return error


#: Decoded events that are not reply content (a stall after only these loses nothing).
_NOT_CONTENT = (ResponseMeta, UsageReport, Finished)


class _SSEReader:
    """httpx-sse's own line and event decoders, fed whole bursts of bytes (its ``aiter_sse``
    hands out one event per await; a burst's events are wanted together)."""

    def __init__(self, encoding: str | None = None) -> None:
        # As httpx's aiter_text: the charset the headers name, else UTF-8; bad bytes replaced.
        self._text = codecs.getincrementaldecoder(encoding or _SSE_ENCODING)(errors="replace")
        self._lines = SSELineDecoder()
        self._events = SSEDecoder()
        self._started = False

    def feed(self, data: bytes) -> list[ServerSentEvent]:
        return self._decode(self._lines.decode(self._without_bom(self._text.decode(data))))

    def end(self) -> list[ServerSentEvent]:
        """The stream ended: a last line with no newline is decoded, but (as in ``aiter_sse``
        and the SSE spec) an event with no blank line after it is never dispatched."""
        text = self._without_bom(self._text.decode(b"", final=True))
        return self._decode([*self._lines.decode(text), *self._lines.flush()])

    def _without_bom(self, text: str) -> str:
        """The SSE spec ignores one byte order mark at the start (it hid the first event)."""
        if self._started or not text:
            return text
        self._started = True
        return text.removeprefix("\ufeff")

    def _decode(self, lines: list[str]) -> list[ServerSentEvent]:
        decoded = (self._events.decode(line.rstrip("\n")) for line in lines)
        return [event for event in decoded if event is not None]


async def _drain(reader: BurstReader) -> None:
    """Read the little a body has after its last event (the chunked terminator), so the
    connection goes back to the pool to be reused. Closing a response mid-read instead made
    httpcore keep the connection ACTIVE for good: after 100 replies every request waited for
    a free connection (PoolTimeout). A server that keeps the body open is left after a moment."""

    async def rest() -> None:
        read = 0
        while (data := await reader.take()) is not None and read < DRAIN_LIMIT_BYTES:
            read += len(data)

    try:
        await asyncio.wait_for(rest(), DRAIN_TIMEOUT)
    except (TimeoutError, httpx.HTTPError, WorkersAIError, OSError):
        return  # the reply is whole; only the connection's reuse is lost


def _decode_chunk(
    decoder: ReplyDecoder, events: list[ServerSentEvent], watch: StallWatch
) -> tuple[list[ChatEvent], WorkersAIError | None]:
    """One chunk's SSE events as reply events, up to ``[DONE]`` or an error event (returned,
    to be raised after the events before it). Only events with data reset the idle clock:
    comments (``: ping``) and empty events do not."""
    payloads = [sse.data for sse in events if not sse.data.isspace() and sse.data]
    if payloads:
        watch.reset()
    return decoder.feed_all(payloads)


async def _capped(response: httpx.Response, limit: int = ERROR_BODY_LIMIT) -> httpx.Response:
    """A copy of ``response`` holding at most ``limit`` bytes of its (decoded) body."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _BODY_FRAMING]
    body = b"".join(chunks)[:limit]
    return httpx.Response(
        response.status_code, headers=headers, content=body, request=response.request
    )


def tls_context() -> ssl.SSLContext:
    """Certificates checked against the OS trust store, so corporate CAs are honoured.

    On Linux the OS trust store *is* OpenSSL's default paths, loaded once here: truststore
    would reload the whole CA bundle for every new connection (~100 ms of the GUI thread each
    time). On macOS and Windows truststore asks the platform's own verifier.
    """
    context: ssl.SSLContext
    if sys.platform.startswith("linux"):
        context = ssl.create_default_context()
    else:
        context = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


def _models_url(
    conn: Connection, *, task: str = TEXT_GENERATION, page: int = 1, per_page: int
) -> str:
    if not conn.account_id.strip():
        raise ValueError("The account ID is not set.")
    account = quote(conn.account_id.strip(), safe="")
    # quote(), not urlencode(): the task name goes out as "Text%20Generation".
    query = f"task={quote(task, safe='')}&page={page}&per_page={per_page}"
    return f"{conn.api_base.rstrip('/')}/accounts/{account}/ai/models/search?{query}"


#: The statuses a poll for an unknown request_id was seen to get (400 / 5006, 404 / 7003).
_UNKNOWN_BATCH_STATUSES = frozenset({400, 404})


def _batch_url(conn: Connection, model: str) -> str:
    """The submit URL, reused as is for polls (§11.2: the poll keeps ``?queueRequest=true``)."""
    return chat_url(conn, model, endpoint=Endpoint.NATIVE) + "?queueRequest=true"


def _account_url(conn: Connection, tail: str) -> str:
    if not conn.account_id.strip():
        raise ValueError("The account ID is not set.")
    account = quote(conn.account_id.strip(), safe="")
    return f"{conn.api_base.rstrip('/')}/accounts/{account}/{tail}"


def _is_event_stream(response: httpx.Response) -> bool:
    return _EVENT_STREAM in response.headers.get("content-type", "").lower()


def _meta(response: httpx.Response, model: str | None) -> ResponseMeta:
    headers = response.headers
    return ResponseMeta(
        status_code=response.status_code,
        request_id=headers.get("cf-ai-req-id"),
        log_id=headers.get("cf-aig-log-id"),
        cache_status=headers.get("cf-aig-cache-status"),
        neurons=_float(headers.get("cf-ai-neurons")),
        model=model,
        streamed=_is_event_stream(response),
    )


def _is_html(response: httpx.Response) -> bool:
    return _HTML in response.headers.get("content-type", "").lower()


def _expect_json(response: httpx.Response, call: _Call) -> Mapping[str, Any]:
    """The JSON object of a successful reply; a web page (a captive portal) or anything else
    unreadable raises, classified."""
    if _is_html(response) or response.content.lstrip()[:1] == b"<":
        raise web_page(response.text, status=response.status_code, secrets=call.secrets)
    try:
        payload = safejson.loads(response.content)
    except safejson.JSONInputError as error:
        if call.subject is None or not safejson.ended_early(error):
            payload = None
        else:  # a GET's JSON that stops mid-way (a Content-Length that matched a short body)
            raise _cut_off(call, detail=f"JSON {error.msg} at {error.pos}") from None
    if not isinstance(payload, Mapping):
        detail = redact(response.text, call.secrets)[:DETAIL_LIMIT]
        raise ServerError(msg.UNREADABLE_REPLY, detail=detail, status=response.status_code)
    return payload


def _cut_off(call: _Call, *, detail: str) -> BodyCutOff:
    subject = call.subject or "the answer"
    error = BodyCutOff(msg.cut_off(subject), detail=redact(detail, call.secrets))
    logger.warning("Cut off: %s (%s)", error, error.detail)
    return error


def _json_or_empty(response: httpx.Response) -> Mapping[str, Any]:
    try:
        payload = safejson.loads(response.content)
    except ValueError:
        return {}
    return payload if isinstance(payload, Mapping) else {}


def _task_matches(model: ModelInfo, task: str) -> bool:
    # The server filters by task; this also copes with one that ignores the parameter.
    return not task or not model.task or model.task.casefold() == task.casefold()


def _log_response(response: httpx.Response, call: _Call) -> None:
    logger.debug(
        "HTTP %s from %s (cf-ai-req-id %s)",
        response.status_code,
        redact(str(response.request.url), call.secrets),
        redact(response.headers.get("cf-ai-req-id", "-"), call.secrets),
    )


def _float(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None
