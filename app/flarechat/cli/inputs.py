"""What ``ask`` reads from the user: the prompt, the system prompt and the model, made sendable.

Text that cannot be sent as UTF-8 (bytes of another encoding in argv or stdin, lone surrogates
in a saved setting) is repaired with U+FFFD and reported, never a traceback: the rest of the
prompt is usually what the user meant, and the warning says exactly what changed.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable

from flarechat.api._routes import _check_model  # no public model-id check yet
from flarechat.core.connect import ConfigurationError
from flarechat.settings.schema import Settings

__all__ = [
    "MODELS_HINT",
    "clean_text",
    "model_flag",
    "model_problem",
    "read_prompt",
    "saved_model",
]

MODELS_HINT = "`flarechat models` lists the models."
_SURROGATE = re.compile("[\ud800-\udfff]")

Warn = Callable[[str], None]


def clean_text(text: str, *, label: str, warn: Warn) -> str:
    """``text`` with undecodable bytes and lone surrogates replaced by U+FFFD (and a warning)."""
    try:
        # argv and stdin carry undecodable bytes as surrogate escapes: decode them as bytes.
        fixed = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # surrogates that are not escapes (e.g. "\ud800" in JSON)
        fixed = _SURROGATE.sub("\N{REPLACEMENT CHARACTER}", text)
    if fixed != text:
        warn(
            f"{label} held bytes that are not valid UTF-8; "
            "they were replaced with \N{REPLACEMENT CHARACTER}."
        )
    return fixed


def read_prompt(prompt: str, *, warn: Warn) -> str:
    """The prompt argument, or stdin's text for ``-``; ConfigurationError when there is none."""
    text = _read_stdin(warn) if prompt == "-" else clean_text(prompt, label="The prompt", warn=warn)
    if not text.strip():
        raise ConfigurationError(["The prompt is empty."])
    return text


def _read_stdin(warn: Warn) -> str:
    stdin = sys.stdin
    if stdin is None or stdin.closed:
        raise ConfigurationError(
            ["The prompt is '-' but stdin is closed; pass the prompt as an argument or pipe it in."]
        )
    buffer = getattr(stdin, "buffer", None)
    if buffer is None:  # a text-only stream (an embedding program or a test)
        return clean_text(stdin.read(), label="The prompt from stdin", warn=warn)
    raw: bytes = buffer.read()
    text = raw.decode("utf-8", "replace")
    if text.encode("utf-8") != raw:
        warn(
            "The prompt from stdin held bytes that are not valid UTF-8; "
            "they were replaced with \N{REPLACEMENT CHARACTER}."
        )
    return text


def model_problem(model: str) -> str | None:
    """Why ``model`` cannot be a Workers AI model id, or None."""
    try:
        _check_model(model)
    except ValueError as error:
        return str(error)
    return None


def saved_model(settings: Settings, *, warn: Warn) -> str:
    """The saved model, or the default one (with a warning) when the saved id is unusable.

    A broken saved model must not break every later ``ask``.
    """
    model = settings.last_model
    if model_problem(model) is None:
        return model
    fallback = Settings().last_model
    warn(
        f"The saved model {model!r} is not a valid model id; using {fallback} instead. "
        f"Choose another with --model or in the settings window; {MODELS_HINT}"
    )
    return fallback


def model_flag(text: str) -> str:
    """``--model``: a Workers AI model id, or a usage error before anything is sent."""
    model = text.strip()
    if (problem := model_problem(model)) is not None:
        raise argparse.ArgumentTypeError(f"{problem} {MODELS_HINT}")
    return model
