"""Model licence terms (5016): per-account agreements and the documented 'agree' request."""

from __future__ import annotations

import threading
from typing import Any

from flarechat.emulator.wire import ErrorSpec

__all__ = ["AGREED_REPLY", "Agreements", "is_agreement", "terms_error"]

#: §7.1 (errors table) and the wording the brief quotes for live responses; see variants.
_MESSAGES = {
    "documented": "User has not agreed to Llama3.2 model terms",
    "live": "Prior to using this model, you must submit the prompt 'agree'. By submitting "
    "'agree', you accept the model's licence and acceptable use policy.",
}
AGREED_REPLY = "Thank you for agreeing to the terms of this model. You may now use it."
_AGREE = "agree"


def terms_error(variant: str) -> ErrorSpec:
    return ErrorSpec(403, 5016, _MESSAGES[variant])


def is_agreement(body: dict[str, Any]) -> bool:
    """``{"prompt": "agree"}`` (documented); a lone user message "agree" counts too."""
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        return prompt.strip().lower() == _AGREE
    messages = body.get("messages")
    if isinstance(messages, list) and len(messages) == 1 and isinstance(messages[0], dict):
        content = messages[0].get("content")
        return isinstance(content, str) and content.strip().lower() == _AGREE
    return False


class Agreements:
    """Which (account, model) pairs have agreed to the model's terms (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._agreed: set[tuple[str, str]] = set()

    def agree(self, account: str, model: str) -> None:
        with self._lock:
            self._agreed.add((account, model))

    def agreed(self, account: str, model: str) -> bool:
        with self._lock:
            return (account, model) in self._agreed

    def reset(self, account: str | None = None) -> None:
        with self._lock:
            self._agreed = {pair for pair in self._agreed if account not in (None, pair[0])}
