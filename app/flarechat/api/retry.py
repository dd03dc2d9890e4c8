"""The retry decision, in one place: whether to try again, and after how long."""

from __future__ import annotations

import random as _random
from collections.abc import Callable
from dataclasses import dataclass, field

from flarechat.api.errors import WorkersAIError

__all__ = [
    "DEFAULT_BASE_DELAY",
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_MAX_DELAY",
    "DEFAULT_RETRY_AFTER_CAP",
    "RetryPolicy",
]

DEFAULT_MAX_ATTEMPTS = 4
DEFAULT_BASE_DELAY = 1.0  # seconds before the second attempt (before jitter)
DEFAULT_MAX_DELAY = 30.0  # cap of the exponential backoff
DEFAULT_RETRY_AFTER_CAP = 60.0  # a longer Retry-After means "give up now", not "wait"
_BACKOFF_FACTOR = 2.0
_MAX_EXPONENT = 60  # far past any cap; keeps 2 ** n a finite float
#: Equal jitter: half the backoff is fixed, half is random, so no retry fires at once.
_JITTER_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Decides retries: only before the first token, only for transient failures.

    What is retried is each error class's own ``retryable`` attribute (api/errors.py): today
    CapacityExceeded, RateLimited, UpstreamTimeout, ServerError, ConnectionFailed (not
    TLSFailed: certificates don't heal), RequestTimedOut, StreamInterrupted. A
    ``Retry-After`` up to ``retry_after_cap`` seconds is waited exactly; a longer one gives up.
    An error may carry its own ``max_retries`` (an idle stall after the request was accepted is
    retried once), counted against the attempt number.
    Otherwise the delay is ``base_delay * 2 ** (attempt - 1)``, capped at ``max_delay``, with
    equal jitter drawn from the injected ``random`` (a ``() -> float`` in ``[0, 1)``).
    """

    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    base_delay: float = DEFAULT_BASE_DELAY
    max_delay: float = DEFAULT_MAX_DELAY
    retry_after_cap: float = DEFAULT_RETRY_AFTER_CAP
    random: Callable[[], float] = field(default=_random.random, repr=False)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1.")
        if min(self.base_delay, self.max_delay, self.retry_after_cap) < 0:
            raise ValueError("Retry delays must not be negative.")

    def next_delay(
        self, error: WorkersAIError, *, attempt: int, received_tokens: bool
    ) -> float | None:
        """Seconds to wait before the next attempt, or ``None`` to give up.

        ``attempt`` is the 1-based number of the attempt that just failed.
        """
        if received_tokens or attempt >= self.max_attempts:
            return None
        if not error.retryable:
            return None
        if error.max_retries is not None and attempt > error.max_retries:
            return None
        if error.retry_after is not None:
            return error.retry_after if error.retry_after <= self.retry_after_cap else None
        return self.backoff(attempt)

    def backoff(self, attempt: int) -> float:
        """The jittered exponential delay after failed attempt number ``attempt``."""
        exponent = min(max(attempt - 1, 0), _MAX_EXPONENT)
        ceiling = min(self.base_delay * _BACKOFF_FACTOR**exponent, self.max_delay)
        fixed = ceiling * (1 - _JITTER_SHARE)
        return fixed + ceiling * _JITTER_SHARE * self.random()
