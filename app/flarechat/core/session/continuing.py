"""Continue after max_tokens: the same reply, extended. What the request sends, what the reply
keeps from before it, and its usage added up over the requests that made it.

Which request Continue sends depends on the model (cloudflare-api.md §2: ``messages`` takes
``assistant`` turns in any place):

* a model that is not a reasoning model (the catalogue's ``reasoning`` property false: the
  llama, mistral and granite families) is sent the conversation up to and including the reply
  so far, as the last message — an assistant prefill, which the model extends;
* a reasoning model (gpt-oss, kimi, glm, gemma-4, qwq, deepseek-r1…), a reply that has
  reasoning or no text yet, and a model the catalogue does not describe, are sent the same
  messages plus a user turn in plain words (``CONTINUE_PROMPT``): their chat templates close
  the assistant turn and think afresh, so a bare prefill would start a new answer. That turn
  is part of the request only: it is never stored nor shown, and the note under the reply
  says it is sent.

Either way the continuation's text is appended to the same message, its usage is the sum of
the requests' (``combined``), and its request record is the last request's, marked with what
it extended (``CONTINUES_KEY``) so that View as code gives back exactly that request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flarechat.api.config import ChatMessage
from flarechat.core import ledger
from flarechat.core.conversation import ROLE_ASSISTANT, ROLE_USER, Message

if TYPE_CHECKING:
    from flarechat.api.models import ModelInfo

__all__ = [
    "CONTINUES_KEY",
    "CONTINUE_PROMPT",
    "EARLIER_KEY",
    "Continued",
    "combined",
    "continued_history",
    "extended_history",
    "extends_in_place",
    "request_note",
]

#: What a reasoning model is asked, after its reply, to go on with it (sent, never stored).
CONTINUE_PROMPT = "Continue exactly where you stopped."
#: The request record's key for what a continuation extended: ``{"text_chars",
#: "reasoning_chars", "prompt"?, "requests"}``.
CONTINUES_KEY = "continues"
#: The request record's key for the records of the requests before it, oldest first.
EARLIER_KEY = "earlier"
_REASONING_GLUE = "\n\n"


@dataclass(frozen=True, slots=True)
class Continued:
    """A reply as it was when Continue was pressed: what a continuation adds to."""

    text: str
    reasoning: str
    usage: Mapping[str, Any] | None
    meta: Mapping[str, Any] | None
    finish_reason: str | None
    #: the record of the request that made it so far, and how many requests that took
    request: Mapping[str, Any] | None
    requests: int

    @classmethod
    def of(cls, message: Message) -> Continued:
        record = message.request or None
        count = 1  # a reply with text came from a request, recorded or not
        if record and isinstance(done := record.get(CONTINUES_KEY), Mapping):
            count = max(_int(done.get("requests"), 2), 2)
        return cls(
            text=message.content,
            reasoning=message.reasoning,
            usage=message.usage,
            meta=message.meta,
            finish_reason=message.finish_reason,
            request=record,
            requests=count,
        )

    def text_with(self, more: str) -> str:
        return self.text + more

    def reasoning_with(self, more: str) -> str:
        """The reasoning before, then the continuation's own (a second thought, kept apart)."""
        if self.reasoning and more:
            return self.reasoning + _REASONING_GLUE + more
        return self.reasoning or more

    def record(self, record: Mapping[str, Any], *, prompt: str | None) -> dict[str, Any]:
        """The continuation's request ``record`` marked with what it extended."""
        earlier: list[Any] = []
        if self.request:
            before = dict(self.request)
            kept = before.pop(EARLIER_KEY, None)
            earlier = [*(kept if isinstance(kept, list) else []), before]
        continues: dict[str, Any] = {
            "text_chars": len(self.text),
            "reasoning_chars": len(self.reasoning),
            "requests": self.requests + 1,
        }
        if prompt is not None:
            continues["prompt"] = prompt
        return {**record, CONTINUES_KEY: continues, EARLIER_KEY: earlier}


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def extends_in_place(message: Message, info: ModelInfo | None) -> bool:
    """Whether Continue sends ``message`` as an assistant prefill for the model to extend
    (a model known not to reason, a reply with text and no reasoning); else it asks in words."""
    return (
        info is not None
        and not info.reasoning
        and bool(message.content)
        and not (message.reasoning)
    )


def _prefill(text: str, reasoning: str) -> list[ChatMessage]:
    if not text and not reasoning:
        return []
    return [ChatMessage(role=ROLE_ASSISTANT, content=text, reasoning=reasoning or None)]


def continued_history(
    path: Iterable[Message | ChatMessage], record: Mapping[str, Any], message: Message
) -> list[Message | ChatMessage]:
    """The messages a continuation of ``message`` sent, from its request ``record``: the path
    before it, the reply as it was then, and the words asked after it, if any. ``path`` alone
    for a request that continued nothing."""
    continues = record.get(CONTINUES_KEY)
    if not isinstance(continues, Mapping):
        return list(path)
    text = message.content[: _int(continues.get("text_chars"), 0)]
    reasoning = message.reasoning[: _int(continues.get("reasoning_chars"), 0)]
    prompt = continues.get("prompt")
    return extended_history(path, text, reasoning, prompt if isinstance(prompt, str) else None)


def extended_history(
    path: Iterable[Message | ChatMessage], text: str, reasoning: str, prompt: str | None
) -> list[Message | ChatMessage]:
    """``path``, then the reply so far (``text``, ``reasoning``), then ``prompt`` (if any)
    as a user turn: what a Continue sends."""
    history = [*path, *_prefill(text, reasoning)]
    if prompt is not None:
        history.append(ChatMessage(role=ROLE_USER, content=prompt))
    return history


def request_note(record: Mapping[str, Any]) -> str:
    """What View as code says of a continued reply's request ("" for any other)."""
    continues = record.get(CONTINUES_KEY)
    if not isinstance(continues, Mapping):
        return ""
    count = _int(continues.get("requests"), 2)
    how = (
        "the reply so far as the last message, for the model to extend"
        if "prompt" not in continues
        else f"the reply so far and then \N{LEFT DOUBLE QUOTATION MARK}{continues['prompt']}"
        "\N{RIGHT DOUBLE QUOTATION MARK}"
    )
    return (
        f"This reply was made by {count} requests; this is the last, Continue's, which sent "
        f"{how}. Its usage is the sum of all {count}."
    )


def _billed(usage: Mapping[str, Any] | None, meta: Mapping[str, Any] | None) -> bool | None:
    """True for a part that ran inference, False for a cache HIT, None when nothing came."""
    spent = ledger.charge(usage, meta, None)
    return None if spent is None else not spent.cached


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _sum(records: list[Mapping[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {}
    for record in records:
        for key, value in record.items():
            if _number(value):
                total[key] = total.get(key, 0) + value
    return total


Records = tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]
_IDS = ("request_id", "log_id")


def _ids(meta: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The ids of the requests ``meta`` covers, oldest first: its earlier ones, then its own."""
    meta = meta or {}
    kept = meta.get(EARLIER_KEY)
    earlier = [dict(i) for i in kept if isinstance(i, Mapping)] if isinstance(kept, list) else []
    own = {k: meta[k] for k in _IDS if isinstance(meta.get(k), str)}
    return [*earlier, own] if own else earlier


def combined(before: Records, then: Records) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """One reply's (usage, meta) from the records of the request(s) before and of the last:
    what each request was billed, added up, so the ledger charges the reply their sum.

    Token counts and neurons are summed over the requests that ran inference; a request the
    gateway answered from its cache (a HIT) adds nothing, and the reply is called a HIT only
    when every request was. The last request's ids (log, request, cache status) are the
    reply's; the earlier requests' ids are kept under ``EARLIER_KEY``."""
    parts = [before, then]
    billed = [part for part in parts if _billed(*part)]
    if not billed:
        # Nothing ran inference: the records of a HIT (the last one), else of what came.
        hit = next((p for p in reversed(parts) if _billed(*p) is False), then)
        came = hit if any(hit) else before
        return (dict(came[0]) if came[0] else None), (dict(came[1]) if came[1] else None)
    usage = _sum([u for u, _ in billed if u]) or None
    meta: dict[str, Any] = {**(before[1] or {}), **(then[1] or {})}
    if earlier := _ids(before[1]):  # the earlier requests' ids stay findable (gateway logs)
        meta[EARLIER_KEY] = earlier
    if any(_number((r or {}).get("neurons")) for part in billed for r in part):
        spent = [ledger.charge(u, m, None) for u, m in billed]
        meta["neurons"] = round(sum(s.neurons for s in spent if s is not None), 6)
    if meta.get("cache_status") == ledger.CACHE_HIT:
        meta.pop("cache_status")
        status = (before[1] or {}).get("cache_status")
        if isinstance(status, str) and status != ledger.CACHE_HIT:
            meta["cache_status"] = status
    return usage, meta
