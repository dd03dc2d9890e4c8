"""Request validation for model calls: model lookup, input schema, plan, context window."""

from __future__ import annotations

from typing import Any

from flarechat.emulator import replies
from flarechat.emulator.catalogue import DEPRECATED, CatalogueModel, Profile, find
from flarechat.emulator.config import DEFAULT_MAX_TOKENS
from flarechat.emulator.wire import ErrorSpec

__all__ = ["MAX_BODY_BYTES", "PAID_TOKEN_PREFIX", "check_call"]

#: Bodies above this are refused with 413 / 3006 before they reach a model.
MAX_BODY_BYTES = 10 * 1024 * 1024
#: Tokens starting with this behave as a Workers Paid account (paid-only models answer).
PAID_TOKEN_PREFIX = "paid_"
_BAD_INPUT = "Bad input: Error: "
_CONTEXT_PREFIX = "AiError: Ai: "
_DEPRECATED_PREFIX = "AiError: "


def _bad(detail: str) -> ErrorSpec:
    return ErrorSpec(400, 5006, _BAD_INPUT + detail)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _lookup(name: str) -> tuple[CatalogueModel | None, ErrorSpec | None]:
    if name in DEPRECATED:
        text = "5028: This model was deprecated on 2026-05-30. Please use an alternative model"
        return None, ErrorSpec(400, 5028, text, prefix=_DEPRECATED_PREFIX)
    model = find(name)
    if model is None:
        return None, ErrorSpec(400, 5007, f"No such model {name} or task")
    return model, None


def _has_image(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(part, dict) and part.get("type") == "image_url" for part in content
    )


def _messages_problem(
    messages: Any, *, strings_only: bool, vision: bool = False
) -> ErrorSpec | None:
    if not isinstance(messages, list) or not messages:
        return _bad(f"Type mismatch of '/messages', '{_json_type(messages)}' not in 'array'")
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            return _bad(f"required properties at '/messages/{index}' are 'role', 'content'")
        content = message.get("content")
        allowed = (str,) if strings_only else (str, list)
        if not isinstance(content, allowed) or (_has_image(content) and not vision):
            # a non-vision model's schema has no image parts: Cloudflare reports the array
            kind = _json_type(content)
            return _bad(f"Type mismatch of '/messages/{index}/content', '{kind}' not in 'string'")
    return None


def _input_problem(model: CatalogueModel, body: dict[str, Any], *, chat: bool) -> ErrorSpec | None:
    if model.profile is Profile.EMBEDDING:
        text = body.get("text")
        if chat or not (isinstance(text, str) or (isinstance(text, list) and text)):
            return _bad("required properties at '/' are 'text'")
        return None
    if chat or "messages" in body:
        problem = _messages_problem(
            body.get("messages"),
            strings_only=not model.content_arrays,
            vision=model.supports("vision"),
        )
        if problem is not None:
            return problem
    elif not isinstance(body.get("prompt"), str) or not body["prompt"]:
        return _bad(
            "oneOf at '/' not met, 0 matches: required properties at '/' are 'prompt', "
            "required properties at '/' are 'messages'"
        )
    return _params_problem(body)


def _params_problem(body: dict[str, Any]) -> ErrorSpec | None:
    max_tokens = body.get("max_tokens", DEFAULT_MAX_TOKENS)
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        return _bad(f"Type mismatch of '/max_tokens', '{_json_type(max_tokens)}' not in 'integer'")
    if "stream" in body and not isinstance(body["stream"], bool):
        return _bad(f"Type mismatch of '/stream', '{_json_type(body['stream'])}' not in 'boolean'")
    return None


def _context_problem(model: CatalogueModel, body: dict[str, Any]) -> ErrorSpec | None:
    wanted = replies.prompt_tokens(body) + int(body.get("max_tokens", DEFAULT_MAX_TOKENS))
    if model.profile is Profile.EMBEDDING or wanted <= model.context_window:
        return None
    text = (
        f"The estimated number of input and maximum output tokens ({wanted}) exceeded this "
        f"model context window limit ({model.context_window})."
    )
    return ErrorSpec(413, 5021, text, prefix=_CONTEXT_PREFIX)


def check_call(
    name: str, body: dict[str, Any], *, chat: bool, token: str, size: int
) -> tuple[CatalogueModel | None, ErrorSpec | None]:
    """The model for a call, or the error Workers AI would answer with (style set by caller)."""
    if size > MAX_BODY_BYTES:
        return None, ErrorSpec(413, 3006, "Request is too large")
    model, problem = _lookup(name)
    if model is None:
        return None, problem
    if model.paid_only and not token.startswith(PAID_TOKEN_PREFIX):
        return None, ErrorSpec(403, 5035, f"{name} requires the Workers Paid plan")
    problem = _input_problem(model, body, chat=chat) or _context_problem(model, body)
    return (None, problem) if problem else (model, None)
