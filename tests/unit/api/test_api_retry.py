"""RetryPolicy: the retry table, Retry-After, backoff with jitter and cap (no sleeping)."""

from __future__ import annotations

import pytest

from flarechat.api import retry
from flarechat.api._transport import stalled
from flarechat.api.errors import (
    APIStatusError,
    AuthenticationFailed,
    BadRequest,
    BodyCutOff,
    CapacityExceeded,
    ConnectionFailed,
    DailyAllocationExhausted,
    DeadlinePassed,
    ErrorKind,
    FineTuneIncomplete,
    GatewayAuthenticationFailed,
    GatewayError,
    LoraUnsupported,
    ModelUnavailable,
    RateLimited,
    RequestTimedOut,
    RequestTooLarge,
    ServerError,
    StreamInterrupted,
    TermsNotAccepted,
    TLSFailed,
    UpstreamTimeout,
    WorkersAIError,
)
from flarechat.api.retry import RetryPolicy

RETRIED = [
    CapacityExceeded,
    RateLimited,
    UpstreamTimeout,
    ServerError,
    ConnectionFailed,
    BodyCutOff,
    RequestTimedOut,
    StreamInterrupted,
]
NEVER = [
    DailyAllocationExhausted,
    AuthenticationFailed,
    GatewayAuthenticationFailed,
    ModelUnavailable,
    RequestTooLarge,
    BadRequest,
    GatewayError,
    TLSFailed,
    TermsNotAccepted,
    LoraUnsupported,
    FineTuneIncomplete,
    DeadlinePassed,
]


def fixed(value: float) -> RetryPolicy:
    return RetryPolicy(random=lambda: value)


@pytest.mark.parametrize("cls", RETRIED)
def test_transient_errors_are_retried_before_the_first_token(cls: type[WorkersAIError]) -> None:
    assert fixed(0.0).next_delay(cls("x"), attempt=1, received_tokens=False) == 0.5


@pytest.mark.parametrize("cls", RETRIED)
def test_nothing_is_retried_after_the_first_token(cls: type[WorkersAIError]) -> None:
    assert fixed(0.0).next_delay(cls("x"), attempt=1, received_tokens=True) is None


@pytest.mark.parametrize("cls", NEVER)
def test_never_retried_classes(cls: type[WorkersAIError]) -> None:
    error = cls("x", retry_after=1.0)
    assert fixed(0.0).next_delay(error, attempt=1, received_tokens=False) is None


def _all_error_classes() -> set[type[WorkersAIError]]:
    """Every class of the tree in api/errors.py (not the subclasses tests make)."""
    found: set[type[WorkersAIError]] = set()
    pending = [WorkersAIError]
    while pending:
        cls = pending.pop()
        if cls.__module__ == WorkersAIError.__module__:
            found.add(cls)
        pending.extend(cls.__subclasses__())
    return found


def test_only_the_retried_classes_say_they_are_retryable() -> None:
    # The policy has no list of its own: a new retryable class must be added to RETRIED.
    assert {cls for cls in _all_error_classes() if cls.retryable} == set(RETRIED)
    assert not set(RETRIED) & set(NEVER)


def test_the_policy_reads_the_class_flag_only() -> None:
    class Healing(BadRequest):
        retryable = True

    assert fixed(0.0).next_delay(Healing("x"), attempt=1, received_tokens=False) == 0.5


def test_the_policy_keeps_no_table_of_its_own() -> None:
    assert not hasattr(retry, "NEVER_RETRIED")
    assert not hasattr(RetryPolicy, "NEVER_RETRIED")


#: The label each class carried as a bare string before ErrorKind; saved turns hold these.
KINDS: dict[type[WorkersAIError], str] = {
    WorkersAIError: "error",
    APIStatusError: "api",
    CapacityExceeded: "capacity",
    DailyAllocationExhausted: "daily_limit",
    RateLimited: "rate_limit",
    AuthenticationFailed: "auth",
    GatewayAuthenticationFailed: "gateway_auth",
    ModelUnavailable: "model",
    RequestTooLarge: "too_large",
    UpstreamTimeout: "timeout",
    GatewayError: "gateway",
    ServerError: "server",
    BadRequest: "bad_request",
    ConnectionFailed: "network",
    BodyCutOff: "network",
    TLSFailed: "tls",
    RequestTimedOut: "timeout",
    StreamInterrupted: "interrupted",
    DeadlinePassed: "interrupted",
    TermsNotAccepted: "terms",
    LoraUnsupported: "lora",
    FineTuneIncomplete: "lora",
}


@pytest.mark.parametrize("kind", list(ErrorKind))
def test_each_kind_compares_and_formats_as_its_string(kind: ErrorKind) -> None:
    assert kind == kind.value
    assert f"{kind}" == str(kind) == kind.value
    assert ErrorKind(kind.value) is kind


def test_every_class_kind_is_an_error_kind() -> None:
    assert all(isinstance(cls.kind, ErrorKind) for cls in _all_error_classes())


def test_each_class_keeps_its_old_kind_string() -> None:
    for cls, old in KINDS.items():
        assert isinstance(cls.kind, ErrorKind), cls
        assert cls.kind == old, cls


def test_the_base_error_is_not_retried() -> None:
    assert fixed(0.0).next_delay(WorkersAIError("x"), attempt=1, received_tokens=False) is None


@pytest.mark.parametrize(
    ("attempt", "low", "high"),
    [(1, 0.5, 1.0), (2, 1.0, 2.0), (3, 2.0, 4.0), (5, 8.0, 16.0), (6, 15.0, 30.0), (9, 15.0, 30.0)],
)
def test_exponential_backoff_with_equal_jitter_and_cap(
    attempt: int, low: float, high: float
) -> None:
    policy_low = RetryPolicy(max_attempts=20, random=lambda: 0.0)
    policy_high = RetryPolicy(max_attempts=20, random=lambda: 1.0)
    error = CapacityExceeded("busy")
    assert policy_low.next_delay(error, attempt=attempt, received_tokens=False) == low
    assert policy_high.next_delay(error, attempt=attempt, received_tokens=False) == high


def test_jitter_comes_from_the_injected_random() -> None:
    draws = iter([0.25, 0.75])
    policy = RetryPolicy(base_delay=2.0, random=lambda: next(draws))
    error = ServerError("x")
    assert policy.next_delay(error, attempt=1, received_tokens=False) == 1.0 + 0.25
    assert policy.next_delay(error, attempt=1, received_tokens=False) == 1.0 + 0.75


def test_attempt_budget() -> None:
    policy = fixed(0.0)
    error = CapacityExceeded("busy")
    delays = [policy.next_delay(error, attempt=n, received_tokens=False) for n in range(1, 6)]
    assert delays == [0.5, 1.0, 2.0, None, None]
    assert RetryPolicy(max_attempts=1).next_delay(error, attempt=1, received_tokens=False) is None


@pytest.mark.parametrize(
    ("retry_after", "expected"), [(0.0, 0.0), (7.5, 7.5), (60.0, 60.0), (61.0, None)]
)
def test_retry_after_is_honoured_up_to_the_cap(retry_after: float, expected: float | None) -> None:
    error = RateLimited("slow down", retry_after=retry_after)
    assert fixed(0.9).next_delay(error, attempt=1, received_tokens=False) == expected


def test_retry_after_cap_is_configurable() -> None:
    error = CapacityExceeded("busy", retry_after=10.0)
    policy = RetryPolicy(retry_after_cap=5.0)
    assert policy.next_delay(error, attempt=1, received_tokens=False) is None


def test_invalid_policies_are_refused() -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ValueError, match="negative"):
        RetryPolicy(base_delay=-1.0)


def test_defaults_match_the_contract() -> None:
    policy = RetryPolicy()
    assert (policy.max_attempts, policy.base_delay, policy.max_delay, policy.retry_after_cap) == (
        4,
        1.0,
        30.0,
        60.0,
    )


def test_an_idle_stall_after_the_request_was_accepted_is_retried_once() -> None:
    # Issue 25 item 16: each attempt waits a whole idle period; four took about four minutes.
    error = stalled(idle=True, received=False, seconds=60.0)
    policy = RetryPolicy(base_delay=0.0, max_delay=0.0)
    assert policy.next_delay(error, attempt=1, received_tokens=False) == 0.0
    assert policy.next_delay(error, attempt=2, received_tokens=False) is None
    other = RequestTimedOut("timed out")  # a plain timeout keeps the policy's own budget
    assert policy.next_delay(other, attempt=3, received_tokens=False) == 0.0
