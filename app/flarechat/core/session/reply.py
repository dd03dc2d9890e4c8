"""One running reply: its request, its turn state, its retry wait and why it was cancelled."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from flarechat.api.config import ChatRequest, Connection
from flarechat.api.errors import DailyAllocationExhausted, TermsNotAccepted, WorkersAIError
from flarechat.core.conversation import Message
from flarechat.core.session import records
from flarechat.core.session.continuing import Continued
from flarechat.core.turn import TurnState

__all__ = ["CuttableSleep", "Outcome", "Reply", "failure_extra"]


class Outcome(StrEnum):
    """Why a reply's task was cancelled; decides how it is finalised."""

    STOP = "stop"  # the user (or quitting) stopped it: kept as "stopped"
    REQUEUE = "requeue"  # sent again at once (Wait in queue, Switch model…): nothing to keep
    CANCEL_RETRY = "cancel-retry"  # Cancel on the retry banner: kept as "failed"


class CuttableSleep:
    """The wait between attempts: ``delay`` seconds unless ``cut()`` (Retry now) ends it."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    async def __call__(self, delay: float) -> None:
        self._event.clear()
        # ``asyncio.timeout``, not ``wait_for``: on Python 3.11 the latter drops a cancel that
        # lands in the turn Retry now is pressed, and the reply would try again.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(delay):
                await self._event.wait()

    def cut(self) -> None:
        self._event.set()


@dataclass(eq=False)
class Reply:
    """One assistant message being produced (or waiting to retry)."""

    message: Message
    conn: Connection
    request: ChatRequest
    state: TurnState
    sleep: CuttableSleep = field(default_factory=CuttableSleep)
    outcome: Outcome | None = None
    banner_shown: bool = False
    retry_deadline: float | None = None
    #: lengths of text and reasoning at the last save (the timer saves only when they grew)
    saved: tuple[int, int] = (0, 0)
    #: the licence was accepted for this reply already (a second 5016 is not answered again)
    agreed: bool = False
    #: sent by Wait in queue (Reject if busy off after a 3040): it waits in the queue on purpose
    waits_in_queue: bool = False
    #: a Continue: the reply as it was before this request, which its text is appended to
    base: Continued | None = None

    @property
    def queued(self) -> bool:
        """Whether the protocol says this reply waited in Workers AI's queue: it was sent by
        Wait in queue, or a capacity refusal (3040) was waited out before it was answered.
        Otherwise a slow first byte is only that (a busy model, a reply that does not stream)."""
        return self.waits_in_queue or records.waited_out_capacity(self.state)

    @property
    def model(self) -> str:
        return self.request.model

    @property
    def waiting_to_retry(self) -> bool:
        return self.state.status == "waiting" and self.state.last_retry is not None

    def take_text(self) -> bool:
        """Copy the text so far onto the message; False when nothing new came since."""
        lengths = (len(self.state.text_rope), len(self.state.reasoning_rope))
        if lengths == self.saved:
            return False
        self.saved = lengths
        self.message.content, self.message.reasoning = self.text()
        return True

    def text(self) -> tuple[str, str]:
        """The reply's text and reasoning so far: after what it had before, for a Continue."""
        state, base = self.state, self.base
        if base is None:
            return state.text, state.reasoning
        return base.text_with(state.text), base.reasoning_with(state.reasoning)


def failure_extra(error: WorkersAIError, *, model: str, attempts: int) -> dict[str, Any]:
    """Plain values about a failure for its banner (never the token)."""
    extra: dict[str, Any] = {"model": model, "attempts": attempts}
    for name in ("status", "code", "retry_after", "request_id"):
        if (value := getattr(error, name, None)) is not None:
            extra[name] = value
    if isinstance(error, DailyAllocationExhausted):
        extra["resets_at"] = error.resets_at.isoformat()
    if isinstance(error, TermsNotAccepted):
        # The banner names the model and links its licence; "Agree and continue" acts on it.
        extra["model"] = error.model or model
        extra["terms_url"] = error.terms_url
    return extra
