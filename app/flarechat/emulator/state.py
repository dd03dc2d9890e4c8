"""Runtime controls of a running emulator: faults, pace, capacity, cache and the request log."""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from http import HTTPStatus
from typing import Any, Generic, TypeVar

from flarechat.emulator.batchbook import BatchBook
from flarechat.emulator.cache import GatewayCache
from flarechat.emulator.capacity import Capacity, CapacityEvent
from flarechat.emulator.config import EmulatorConfig
from flarechat.emulator.guard import new_token
from flarechat.emulator.terms import Agreements
from flarechat.emulator.variants import Variants
from flarechat.emulator.wire import BODY_STYLES, BodyStyle, ErrorSpec

_T = TypeVar("_T")

__all__ = ["CONTROL_ACTIONS", "EmulatorState", "RecordedRequest", "StreamFaults"]

CAPACITY_MESSAGE = "Capacity temporarily exceeded, please try again."
_DAILY = "used up your daily free allocation of 10,000 neurons"
_UPGRADE = "Workers Paid plan if you would like to continue usage."
#: What Cloudflare says for each code when fail_next() is given no message (§7).
DEFAULT_MESSAGES: dict[int, str] = {
    1000: "Invalid API Token",
    2001: "Please configure AI Gateway in the Cloudflare dashboard",
    2003: "Rate limited",
    2009: "Unauthorized",
    2021: "Insufficient balance; add money to your gateway or use BYOK",
    2041: "Spend limit exceeded: rule 'weekly' (cost limit 5 per 604800s, sliding) for gateway",
    3006: "Request is too large",
    3007: "Request timeout",
    3008: "Request was aborted",
    3021: "Too many requests",
    3036: f"You have {_DAILY}. Please upgrade to Cloudflare's {_UPGRADE}",
    3040: CAPACITY_MESSAGE,
    3042: "The model name is invalid",
    3046: "Request timeout",
    4006: f"you have {_DAILY}, please upgrade to Cloudflare's {_UPGRADE}",
    5006: "Bad input: Error: oneOf at '/' not met, 0 matches",
    5007: "No such model or task",
    5016: "User has not agreed to Llama3.2 model terms",
    5018: "The account is not allowed to access this model",
    5021: "The estimated number of input and maximum output tokens exceeded this model context "
    "window limit.",
    5028: "This model was deprecated on 2026-05-30. Please use an alternative model",
    5035: "This model requires the Workers Paid plan",
    7000: "No route for that URI",
    10000: "Authentication error",
}
_FALLBACK_MESSAGE = "Internal server error"
#: Statuses fail_next() may script: every HTTP error status Python knows (4xx and 5xx).
ERROR_STATUSES = frozenset(s.value for s in HTTPStatus if 400 <= s.value <= 599)
#: The request log keeps the newest this many (a long demo session must not grow without bound).
MAX_RECORDED_REQUESTS = 10_000

#: Everything POST /__emulator__/control may call, by the same names as the methods.
CONTROL_ACTIONS = frozenset(
    {
        "reset",
        "fail_next",
        "drop_after_tokens",
        "error_event_after",
        "delay_first_byte",
        "malformed_chunks",
        "set_tokens_per_second",
        "set_slots",
        "hold_slots",
        "advance_time",
        "set_nonstream_empty_result",
        "requests",
        "capacity_log",
        "set_variant",
        "variants",
        "agree_terms",
        "reset_agreements",
        "set_batch_pace",
        "fail_batch_items",
        "batch_count",
    }
)


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as the emulator received it (control calls are not recorded)."""

    method: str
    path: str  # raw, exactly as sent (percent escapes kept)
    query: str  # raw query string
    headers: dict[str, str]  # lower-case names
    json: Any  # parsed body, or None when absent or not JSON
    body: bytes = b""


@dataclass(frozen=True, slots=True)
class StreamFaults:
    """What the next stream should do wrong (all off by default)."""

    drop_after: int | None = None
    drop_abrupt: bool = True
    error_after: int | None = None
    error_code: int = 3040
    error_message: str = CAPACITY_MESSAGE
    malformed: int = 0


@dataclass(slots=True)
class _Counted(Generic[_T]):
    """A fault for the next ``remaining`` requests (of ``model``, or of any model if None)."""

    remaining: int
    value: _T
    model: str | None


@dataclass(slots=True)
class _Faults:
    failures: list[_Counted[ErrorSpec]] = field(default_factory=list)
    streams: list[tuple[str | None, dict[str, Any]]] = field(default_factory=list)
    delays: list[_Counted[float]] = field(default_factory=list)


def _take(entries: list[_Counted[_T]], model: str) -> _T | None:
    """Use up one request of the first entry that applies to ``model`` (callers hold the lock)."""
    for entry in entries:
        if entry.model in (None, model):
            entry.remaining -= 1
            if entry.remaining == 0:
                entries.remove(entry)
            return entry.value
    return None


class EmulatorState:
    """Thread-safe controls; tests call these from their own thread while the server streams."""

    def __init__(self, config: EmulatorConfig | None = None) -> None:
        self.config = config or EmulatorConfig()
        self._lock = threading.Lock()
        self._time_offset = 0.0
        self._tps = self.config.tokens_per_second
        self._faults = _Faults()
        self._requests: deque[RecordedRequest] = deque(maxlen=MAX_RECORDED_REQUESTS)
        self._empty_nonstream = False
        self._sessions: dict[str, int] = {}
        self.capacity = Capacity(default_slots=self.config.slots, clock=self.now)
        self.cache = GatewayCache()
        self.agreements = Agreements()
        self.variant = Variants()
        self.batches = BatchBook()
        #: required (X-Emulator-Control) by POST /__emulator__/control; fixed for the run
        self.control_token = new_token()
        self._closing = threading.Event()

    # -- lifecycle ---------------------------------------------------------------------------

    def reset(self) -> None:
        """Back to defaults: no faults, default pace and slots, empty cache and logs."""
        with self._lock:
            self._faults = _Faults()
            self._requests.clear()
            self._time_offset = 0.0
            self._tps = self.config.tokens_per_second
            self._empty_nonstream = False
            self._sessions.clear()
        self.cache.clear()
        self.capacity.reset()
        self.agreements.reset()
        self.variant.reset()
        self.batches.reset()

    @property
    def closing(self) -> bool:
        """True once the server is stopping: replies in flight end at their next token."""
        return self._closing.is_set()

    def set_closing(self, closing: bool) -> None:
        if closing:
            self._closing.set()
        else:
            self._closing.clear()
        self.capacity.close(closing)

    def now(self) -> float:
        """The emulator clock (monotonic, plus whatever advance_time() added)."""
        with self._lock:
            return time.monotonic() + self._time_offset

    def advance_time(self, seconds: float) -> None:
        """Move the emulator clock forward: expires cache entries and holds without waiting."""
        with self._lock:
            self._time_offset += _seconds(seconds)
        self.capacity.wake_all()

    # -- faults ------------------------------------------------------------------------------

    def fail_next(
        self,
        n: int = 1,
        *,
        code: int,
        status: int,
        message: str | None = None,
        retry_after: float | None = None,
        model: str | None = None,
        body_style: str = "v4",
    ) -> None:
        """The next ``n`` generation requests (optionally for one model only) fail like this."""
        _check_error(code, status)
        if body_style not in BODY_STYLES:
            raise ValueError(f"unknown body_style {body_style!r}; use one of {sorted(BODY_STYLES)}")
        style: BodyStyle = body_style  # type: ignore[assignment]
        text = message or DEFAULT_MESSAGES.get(code, _FALLBACK_MESSAGE)
        spec = ErrorSpec(status, code, text, style, retry_after)
        with self._lock:
            self._faults.failures.append(_Counted(_positive(n), spec, model))

    def drop_after_tokens(self, k: int, *, abrupt: bool = True, model: str | None = None) -> None:
        """The next stream stops after ``k`` text chunks with no [DONE].

        ``abrupt`` closes the TCP connection mid-body; otherwise the body simply ends.
        """
        self._add_stream_fault(model, drop_after=_count(k), drop_abrupt=abrupt)

    def error_event_after(
        self,
        k: int,
        *,
        code: int = 3040,
        message: str = CAPACITY_MESSAGE,
        model: str | None = None,
    ) -> None:
        """The next stream sends ``data: {"errors":[...]}`` after ``k`` text chunks, then ends."""
        self._add_stream_fault(model, error_after=_count(k), error_code=code, error_message=message)

    def malformed_chunks(self, n: int, *, model: str | None = None) -> None:
        """The next stream carries ``n`` non-JSON data lines among the valid ones."""
        self._add_stream_fault(model, malformed=_positive(n))

    def delay_first_byte(self, seconds: float, *, n: int = 1, model: str | None = None) -> None:
        """The next ``n`` generation requests wait ``seconds`` before sending headers."""
        with self._lock:
            self._faults.delays.append(_Counted(_positive(n), _seconds(seconds), model))

    def _add_stream_fault(self, model: str | None, **fault: Any) -> None:
        with self._lock:
            self._faults.streams.append((model, fault))

    def take_failure(self, model: str) -> ErrorSpec | None:
        with self._lock:
            return _take(self._faults.failures, model)

    def take_delay(self, model: str) -> float:
        with self._lock:
            delay = _take(self._faults.delays, model)
        return 0.0 if delay is None else delay

    def take_stream_faults(self, model: str) -> StreamFaults:
        """Every pending stream fault for ``model``, merged; each applies to one stream."""
        merged: dict[str, Any] = {}
        with self._lock:
            for entry in list(self._faults.streams):
                if entry[0] in (None, model):
                    merged.update(entry[1])
                    self._faults.streams.remove(entry)
        return StreamFaults(**merged)

    # -- pace, capacity, quirks ----------------------------------------------------------------

    @property
    def tokens_per_second(self) -> float:
        with self._lock:
            return self._tps

    @tokens_per_second.setter
    def tokens_per_second(self, value: float) -> None:
        self.set_tokens_per_second(value)

    def set_tokens_per_second(self, value: float) -> None:
        if not value > 0:
            raise ValueError(f"tokens_per_second must be positive, not {value}")
        with self._lock:
            self._tps = float(value)

    def set_slots(self, model: str, n: int) -> None:
        self.capacity.set_slots(model, n)

    def hold_slots(self, model: str, seconds: float) -> None:
        """Occupy all slots of ``model`` for ``seconds``: capacity is forced busy."""
        self.capacity.hold(model, seconds)

    @property
    def capacity_log(self) -> list[CapacityEvent]:
        return self.capacity.log

    def set_nonstream_empty_result(self, enabled: bool) -> None:
        """Models that don't stream on /ai/run answer ``stream:true`` with an empty result (§4c)."""
        with self._lock:
            self._empty_nonstream = enabled

    @property
    def nonstream_empty_result(self) -> bool:
        with self._lock:
            return self._empty_nonstream

    def cached_prefix(self, session: str | None, prompt_tokens: int) -> int:
        """Prompt tokens served from the prefix cache for this x-session-affinity, then remember."""
        if not session:
            return 0
        with self._lock:
            previous = self._sessions.get(session, 0)
            self._sessions[session] = prompt_tokens
        return min(previous, prompt_tokens)

    # -- wire variants and model terms ---------------------------------------------------------

    def set_variant(self, name: str, value: str) -> None:
        """Pick one of the listed behaviours where the reference is UNCERTAIN (variants.py)."""
        self.variant.set(name, value)

    @property
    def variants(self) -> dict[str, str]:
        return self.variant.snapshot()

    def agree_terms(self, model: str, account: str) -> None:
        """As if ``account`` had sent ``{"prompt": "agree"}`` to ``model``."""
        self.agreements.agree(account, model)

    def reset_agreements(self, account: str | None = None) -> None:
        """Forget licence agreements (of one account, or all): 5016 answers again."""
        self.agreements.reset(account)

    # -- the Batch API ------------------------------------------------------------------------

    def set_batch_pace(self, queued: int = 0, running: int = 1) -> None:
        """Polls of a batch answer ``queued`` this many times, then ``running``, then results."""
        self.batches.set_pace(queued, running)

    def fail_batch_items(
        self, references: list[str], *, code: int = 3040, status: int = 429, message: str = ""
    ) -> None:
        """Batch items with these ``external_reference`` values fail (``success: false``)."""
        _check_error(code, status)
        text = message or DEFAULT_MESSAGES.get(code, _FALLBACK_MESSAGE)
        self.batches.fail_items([str(r) for r in references], ErrorSpec(status, code, text))

    @property
    def batch_count(self) -> int:
        """How many batches were queued since the last reset."""
        return self.batches.count

    # -- request log and the control endpoint ----------------------------------------------------

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def control(self, action: str, arguments: dict[str, Any]) -> Any:
        """Run one control by name (the POST /__emulator__/control endpoint); JSON-able result."""
        if action not in CONTROL_ACTIONS:
            raise ValueError(f"unknown action {action!r}; use one of {sorted(CONTROL_ACTIONS)}")
        if action == "requests":
            return [_jsonable(r) for r in self.requests]
        if action == "capacity_log":
            return [asdict(event) for event in self.capacity_log]
        if action == "variants":
            return self.variants
        if action == "batch_count":
            return self.batch_count
        getattr(self, action)(**arguments)
        return None


#: Credentials a caller sent; even behind the control token the endpoint never echoes them.
_CREDENTIAL_HEADERS = frozenset({"authorization", "cf-aig-authorization"})
_MASKED = "Bearer [REDACTED]"


def _jsonable(request: RecordedRequest) -> dict[str, Any]:
    data = asdict(request)
    data["body"] = request.body.decode("utf-8", "replace")
    data["headers"] = {
        name: _MASKED if name.lower() in _CREDENTIAL_HEADERS else value
        for name, value in request.headers.items()
    }
    return data


def _check_error(code: object, status: object) -> None:
    if isinstance(code, bool) or not isinstance(code, int):
        raise ValueError(f"code must be an integer, not {code!r}")
    if isinstance(status, bool) or status not in ERROR_STATUSES:
        raise ValueError(f"status must be an HTTP error status (400-599), not {status!r}")


def _positive(n: int) -> int:
    if n < 1:
        raise ValueError(f"expected a positive count, not {n}")
    return n


def _count(k: int) -> int:
    if k < 0:
        raise ValueError(f"expected a count >= 0, not {k}")
    return k


def _seconds(value: float) -> float:
    if value < 0:
        raise ValueError(f"expected seconds >= 0, not {value}")
    return value
