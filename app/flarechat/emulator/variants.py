"""Switchable wire variants where the reference is UNCERTAIN; the first value is the default."""

from __future__ import annotations

import threading

__all__ = ["VARIANTS", "Variants"]

#: name -> allowed values (default first). Each is a control: set_variant(name=…, value=…).
VARIANTS: dict[str, tuple[str, ...]] = {
    # 5016 text: the documented errors table, or the live "submit the prompt 'agree'" wording
    "terms_message": ("documented", "live"),
    # JSON mode + stream:true on /ai/run: answer plain JSON, refuse (5006), or stream anyway
    "json_stream": ("plain", "error", "stream"),
    # legacy-profile streamed tool calls: OpenAI-style deltas (§4), or one final tool_calls event
    "legacy_tool_stream": ("delta", "final"),
    # legacy non-streamed tool-call result: "response": "" or "response": null
    "legacy_tool_response": ("empty", "null"),
    # `lora` in a /v1/chat/completions body: honoured, or refused as bad input (5006)
    "chat_lora": ("accept", "reject"),
    # batch results: text generation nests result.result and embeddings once (as the docs'
    # examples do), or every item once, or every item twice (§11.2)
    "batch_nesting": ("documented", "single", "double"),
    # a still-pending poll: inside the v4 envelope's result, or bare {"status", "request_id"}
    "batch_pending": ("enveloped", "bare"),
    # a poll for an unknown request_id: 400 / 5006 bad input, or 404 / 7003
    "batch_unknown_id": ("400", "404"),
    # a poll to another model's URL than the submit's: resolved by request_id, or refused
    "batch_poll_model": ("any", "same"),
}


class Variants:
    """The current choice for every variant (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values = {name: values[0] for name, values in VARIANTS.items()}

    def get(self, name: str) -> str:
        with self._lock:
            return self._values[name]

    def set(self, name: str, value: str) -> None:
        if name not in VARIANTS:
            raise ValueError(f"unknown variant {name!r}; use one of {sorted(VARIANTS)}")
        if value not in VARIANTS[name]:
            raise ValueError(f"variant {name!r} takes one of {list(VARIANTS[name])}, not {value!r}")
        with self._lock:
            self._values[name] = value

    def snapshot(self) -> dict[str, str]:
        with self._lock:
            return dict(self._values)

    def reset(self) -> None:
        with self._lock:
            self._values = {name: values[0] for name, values in VARIANTS.items()}
