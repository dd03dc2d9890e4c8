"""Checks shared by the window and ``flarechat ask`` for what a model can be given: image
files (recognised by their first bytes), JSON Schemas (for a JSON reply or tool parameters),
JSON text with the line and column of its first error, and tool definitions. Pure: no Qt."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flarechat import safejson

__all__ = [
    "IMAGE_TYPES",
    "MAX_IMAGES",
    "MAX_IMAGE_BYTES",
    "TOOL_CHOICE_MODES",
    "TOOL_NAME",
    "JsonTextProblem",
    "image_kind",
    "json_text_problem",
    "schema_problem",
    "tool_problem",
]

#: 20 MB per image file: the largest image OpenAI-compatible chat APIs accept, and well under
#: the 25 MB a whole request may be to be cached by AI Gateway (cloudflare-api.md §6.5).
#: Base64 makes the request a third larger again, so anything bigger would only fail on the
#: wire. (The window scales images down further before sending; see ui.capabilities.images.)
MAX_IMAGE_BYTES = 20 * 1024 * 1024
#: Images per message: more than any vision model here reads, few enough to stay under the
#: request limits above.
MAX_IMAGES = 5
IMAGE_TYPES = "PNG, JPEG, WEBP or GIF"
TOOL_CHOICE_MODES = ("auto", "none", "required")
#: The function names OpenAI-compatible APIs accept (Workers AI passes them on to the model).
TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_OBJECT = "object"
_WEBP_HEADER = 12
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_kind(data: bytes) -> str | None:
    """The MIME type the file's first bytes announce (PNG, JPEG, WEBP, GIF), or None."""
    if len(data) >= _WEBP_HEADER and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((mime for magic, mime in _SIGNATURES if data.startswith(magic)), None)


@dataclass(frozen=True, slots=True)
class JsonTextProblem:
    """Why a text is not JSON: ``line`` and ``column`` are 1-based, as editors count."""

    message: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"Line {self.line}, column {self.column}: {self.message}"


def json_text_problem(text: str) -> tuple[Any, JsonTextProblem | None]:
    """``text`` parsed, or why it does not parse (with where)."""
    try:
        return safejson.loads(text), None
    except safejson.JSONTooDeep as error:
        return None, JsonTextProblem("nested too deeply to read", error.lineno, error.colno)
    except json.JSONDecodeError as error:
        return None, JsonTextProblem(error.msg, error.lineno, error.colno)


def schema_problem(schema: object) -> str | None:
    """Why ``schema`` is not a usable JSON Schema for a JSON reply or tool parameters, or None.

    The root must describe an object (JSON mode replies with an object, and tool arguments
    are one); ``$schema``, when given, must name a draft jsonschema knows.
    """
    if not isinstance(schema, Mapping):
        return "a JSON Schema is a JSON object ({…})"
    kind = schema.get("type")
    if kind is not None and kind != _OBJECT:
        return f'the top-level "type" must be "object", not {json.dumps(kind)}'
    properties = schema.get("properties")
    if kind is None and properties is None:
        return 'it has neither "type": "object" nor "properties"'
    if properties is not None and not isinstance(properties, Mapping):
        return '"properties" must be an object mapping names to schemas'
    # Imported when a schema is checked: a plain ``ask`` and the window start without it.
    from jsonschema.exceptions import SchemaError
    from jsonschema.protocols import Validator
    from jsonschema.validators import Draft202012Validator, validator_for

    # Without $schema: the latest draft. With one jsonschema does not know: None here, rather
    # than its DeprecationWarning and a guess.
    validator: type[Validator] | None = Draft202012Validator
    if "$schema" in schema:
        validator = validator_for(schema, default=None)  # type: ignore[arg-type]
    if validator is None:
        return f"$schema {json.dumps(schema.get('$schema'))} is not a JSON Schema draft"
    try:
        validator.check_schema(dict(schema))
    except SchemaError as error:
        where = "/".join(str(p) for p in error.path) or "the top level"
        return f"at {where}: {error.message}"
    return None


def tool_problem(*, name: object, description: object, parameters: object) -> str | None:
    """Why a tool definition would be refused (bad name, description or parameters), or None."""
    if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
        return f"the name must be 1 to 64 letters, digits, _ or -, not {json.dumps(name)}"
    if not isinstance(description, str):
        return "the description must be text"
    if (problem := schema_problem(parameters)) is not None:
        return f"parameters are not a usable schema: {problem}"
    return None
