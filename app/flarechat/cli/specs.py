"""``ask --json-schema`` and ``--tools``: JSON files checked and turned into request parts,
and the JSON-mode reply checked against the schema it was asked to follow.

Schemas are checked with ``jsonschema`` (imported only when one is used, so a plain ``ask``
starts as fast as before): a typo such as ``"type": "strin"`` is caught before sending.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flarechat import safejson
from flarechat.api.config import ResponseFormat
from flarechat.api.tools import ToolChoice, ToolSpec
from flarechat.core.capabilities import TOOL_CHOICE_MODES, TOOL_NAME, schema_problem
from flarechat.core.connect import ConfigurationError
from flarechat.paths import FileTooLarge, NotRegularFile, read_regular_file

__all__ = [
    "TOOL_CHOICE_MODES",
    "TOOL_NAME",
    "load_json_schema",
    "load_tools",
    "reply_json_problem",
    "response_format",
    "tool_choice",
]

#: Biggest schema or tools file read: these are hand-written specs, not data.
MAX_SPEC_BYTES = 1024 * 1024
_OBJECT = "object"


def _read_json(path: str, *, flag: str) -> Any:
    file = Path(path).expanduser()
    try:
        text = read_regular_file(file, limit=MAX_SPEC_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise ConfigurationError([f"{flag} {path}: no such file."]) from None
    except IsADirectoryError:
        raise ConfigurationError([f"{flag} {path}: this is a folder, not a JSON file."]) from None
    except NotRegularFile:
        raise ConfigurationError(
            [f"{flag} {path}: this is not a regular file (a pipe, device or socket)."]
        ) from None
    except FileTooLarge:
        limit = MAX_SPEC_BYTES // 1024
        raise ConfigurationError([f"{flag} {path}: the file is over {limit} KB."]) from None
    except UnicodeDecodeError:
        raise ConfigurationError([f"{flag} {path}: the file is not UTF-8 text."]) from None
    except OSError as error:
        raise ConfigurationError([f"{flag} {path}: cannot be read ({error.strerror})."]) from None
    try:
        return safejson.loads(text)
    except ValueError as error:
        raise ConfigurationError([f"{flag} {path}: not valid JSON ({error})."]) from None


def load_json_schema(path: str) -> dict[str, Any]:
    """``--json-schema FILE``: the schema, or ConfigurationError saying what is wrong."""
    schema = _read_json(path, flag="--json-schema")
    if (problem := schema_problem(schema)) is not None:
        raise ConfigurationError([f"--json-schema {path}: not a usable JSON Schema: {problem}."])
    return dict(schema)


def response_format(kind: str | None, schema_path: str | None) -> ResponseFormat | None:
    """``--response-format`` and ``--json-schema`` as one ResponseFormat (None: plain text)."""
    if schema_path is not None:
        if kind == "json_object":
            raise ConfigurationError(
                [
                    "--response-format json_object asks for any JSON object; drop it to use "
                    "--json-schema, or drop --json-schema."
                ]
            )
        return ResponseFormat.json_schema(load_json_schema(schema_path))
    if kind == "json_schema":
        raise ConfigurationError(["--response-format json_schema needs --json-schema FILE."])
    return ResponseFormat.json_object() if kind == "json_object" else None


def _tool(entry: object, *, where: str) -> ToolSpec:
    # The OpenAI wrapper {type: "function", function: {...}} is accepted as well as the flat form.
    if isinstance(entry, Mapping) and entry.get("type") == "function":
        entry = entry.get("function")
    if not isinstance(entry, Mapping):
        raise ConfigurationError([f"{where}: each tool is an object with a name."])
    name, description = entry.get("name"), entry.get("description", "")
    if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
        raise ConfigurationError(
            [f"{where}: the name must be 1 to 64 letters, digits, _ or -, not {json.dumps(name)}."]
        )
    if not isinstance(description, str):
        raise ConfigurationError([f"{where} ({name}): the description must be text."])
    parameters = entry.get("parameters", {"type": _OBJECT, "properties": {}})
    if (problem := schema_problem(parameters)) is not None:
        problem = f"parameters are not a usable schema: {problem}"
        raise ConfigurationError([f"{where} ({name}): {problem}."])
    return ToolSpec(name=name, description=description, parameters=dict(parameters))


def load_tools(path: str) -> tuple[ToolSpec, ...]:
    """``--tools FILE``: a JSON list of ``{name, description, parameters}``."""
    raw = _read_json(path, flag="--tools")
    if not isinstance(raw, list) or not raw:
        raise ConfigurationError([f"--tools {path}: expected a JSON list of tools ([{{…}}, …])."])
    tools = tuple(_tool(entry, where=f"--tools {path}: tool {n}") for n, entry in enumerate(raw, 1))
    names = [tool.name for tool in tools]
    if duplicates := sorted({name for name in names if names.count(name) > 1}):
        raise ConfigurationError([f"--tools {path}: {', '.join(duplicates)} defined twice."])
    return tools


def tool_choice(text: str | None, tools: tuple[ToolSpec, ...]) -> ToolChoice | None:
    """``--tool-choice``: a mode, or the name of one of the tools."""
    if text is None:
        return None
    if not tools:
        raise ConfigurationError(["--tool-choice needs --tools FILE."])
    if text in TOOL_CHOICE_MODES:
        return ToolChoice(mode=text)  # type: ignore[arg-type]  # checked just above
    if text not in {tool.name for tool in tools}:
        known = ", ".join(tool.name for tool in tools)
        raise ConfigurationError(
            [f"--tool-choice {text}: no such tool (defined: {known}; or auto, none, required)."]
        )
    return ToolChoice.named(text)


def reply_json_problem(text: str, fmt: ResponseFormat) -> tuple[Any, str | None]:
    """The reply parsed, and why it is not what ``fmt`` asked for (None when it is)."""
    try:
        value = safejson.loads(text)
    except ValueError as error:
        return None, f"the reply is not valid JSON ({error})"
    if fmt.schema is None:
        ok = isinstance(value, dict)
        return value, None if ok else "the reply is JSON but not an object"
    from jsonschema.validators import validator_for

    schema = dict(fmt.schema)
    mismatch = next(iter(validator_for(schema)(schema).iter_errors(value)), None)
    if mismatch is None:
        return value, None
    where = "/".join(str(p) for p in mismatch.absolute_path) or "the top level"
    return value, f"the reply does not match the schema at {where}: {mismatch.message}"
