"""What ``ask`` learns about the model before sending a request that uses its capabilities.

A plain ask looks nothing up (it stays one request). Images, tools, JSON output, LoRA and
reasoning effort need the catalogue entry (vision? LoRA? which efforts?) and, for the first
three, the model's input schema, which picks the wire form (content parts or ``image``, flat
or wrapped tools…). A lookup that fails is a warning, never the end of the ask: the request is
then sent in the api's documented default form and the server has the last word.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from flarechat.api.client import WorkersAIClient
from flarechat.api.config import ChatRequest, Connection
from flarechat.api.errors import WorkersAIError
from flarechat.api.models import ModelInfo
from flarechat.api.schema import ModelSchema
from flarechat.cli.inputs import MODELS_HINT
from flarechat.core.catalogue import CatalogueCache
from flarechat.core.connect import ConfigurationError

__all__ = [
    "ModelFacts",
    "capability_problems",
    "closest_models",
    "did_you_mean",
    "full_model_id",
    "look_up",
    "model_named",
    "needs_facts",
    "needs_schema",
    "suggestion_for",
]

#: Full model ids start so (``@cf/meta/…``, ``@hf/…``); the window shows them without it.
_ID_MARK = "@"
_SUGGESTIONS = 3

Warn = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class ModelFacts:
    info: ModelInfo | None = None
    schema: ModelSchema | None = None


def needs_schema(request: ChatRequest) -> bool:
    """Images, tools and JSON output have several wire forms: the schema chooses one."""
    images = any(m.images for m in request.messages)
    return images or bool(request.tools) or request.response_format is not None


def needs_facts(request: ChatRequest) -> bool:
    """Whether the request uses anything the catalogue must be asked about first."""
    asks_more = request.lora is not None or request.reasoning_effort is not None
    return asks_more or needs_schema(request)


def _cached_info(model: str) -> ModelInfo | None:
    """The entry in the window's on-disk catalogue (read only; the window keeps it fresh)."""
    cached = CatalogueCache().load()
    return next((m for m in cached.models if m.name == model), None) if cached else None


async def catalogue_entry(
    client: WorkersAIClient, conn: Connection, model: str, *, warn: Warn, use_cache: bool = True
) -> ModelInfo | None:
    """The model's catalogue entry: the cached one (``use_cache``), else the live list."""
    if use_cache and (info := _cached_info(model)) is not None:
        return info
    try:
        models = await client.list_models(conn)
    except WorkersAIError as error:
        warn(f"the model catalogue could not be read ({error.message}); sending unchecked.")
        return None
    return next((m for m in models if m.name == model), None)


def _short(model: str) -> str:
    return model.rsplit("/", 1)[-1]


def model_named(name: str, models: Sequence[str]) -> str:
    """The model id ``name`` means: itself, or the one id whose last part it is (the short
    name the window shows); ConfigurationError naming the closest ids otherwise."""
    if name in models:
        return name
    matches = [m for m in models if _short(m).lower() == name.strip().lower()]
    if len(matches) == 1:
        return matches[0]
    if matches:
        return _no_such_model(name, sorted(matches), what="is the short name of several models")
    return _no_such_model(name, closest_models(name, models), what="is not a model of this account")


def closest_models(name: str, models: Sequence[str]) -> list[str]:
    """Up to three ids of ``models`` closest to ``name``, by short name first, then whole."""
    by_short: dict[str, str] = {}
    for model in models:
        by_short.setdefault(_short(model).lower(), model)
    close = difflib.get_close_matches(
        _short(name).lower(), list(by_short), n=_SUGGESTIONS, cutoff=0.5
    )
    close_ids = difflib.get_close_matches(name, list(models), n=_SUGGESTIONS, cutoff=0.5)
    return list(dict.fromkeys([*(by_short[c] for c in close), *close_ids]))[:_SUGGESTIONS]


def did_you_mean(suggested: Sequence[str]) -> str:
    """ "Did you mean X?" / "Did you mean one of X, Y?" ("" for no suggestion)."""
    if not suggested:
        return ""
    choice = "one of " if len(suggested) > 1 else ""
    return f"Did you mean {choice}{', '.join(suggested)}?"


async def suggestion_for(client: WorkersAIClient, conn: Connection, model: str) -> str:
    """After the server did not know ``model``: the closest ids of the live catalogue, as a
    sentence; "" when the catalogue has it (deprecated, not on this plan) or cannot be read."""
    try:
        models = [m.name for m in await client.list_models(conn)]
    except WorkersAIError:
        return ""
    return "" if model in models else did_you_mean(closest_models(model, models))


def _no_such_model(name: str, suggested: Sequence[str], *, what: str) -> str:
    hint = f"{did_you_mean(suggested)} {MODELS_HINT}".lstrip()
    raise ConfigurationError([f"--model: {name!r} {what}. {hint}"])


async def full_model_id(
    client: WorkersAIClient, conn: Connection, name: str, *, warn: Warn, use_cache: bool = True
) -> str:
    """A full id as it is; a short name (no ``@``) looked up in the catalogue (the window's
    cached one first) and made the one id it names; ConfigurationError with the closest ids
    when it names none. An unreadable catalogue leaves ``name`` for the server to judge."""
    if name.startswith(_ID_MARK):
        return name  # a plain ask stays one request
    cached = CatalogueCache().load() if use_cache else None
    if cached is not None and cached.models:
        try:
            return model_named(name, [m.name for m in cached.models])
        except ConfigurationError:
            pass  # the cache may be older than the account's list: ask the live one
    try:
        models = await client.list_models(conn)
    except WorkersAIError as error:
        warn(f"the model catalogue could not be read ({error.message}); sending {name!r} as is.")
        return name
    return model_named(name, [m.name for m in models])


async def look_up(
    client: WorkersAIClient,
    conn: Connection,
    request: ChatRequest,
    *,
    warn: Warn,
    use_cache: bool = True,
) -> ModelFacts:
    """The catalogue entry and (when the request needs it) the input schema of its model.

    ``use_cache`` False (``--demo``) skips the window's cache: it describes the real account.
    """
    info = await catalogue_entry(client, conn, request.model, warn=warn, use_cache=use_cache)
    schema = None
    if needs_schema(request):
        try:
            schema = await client.get_model_schema(conn, request.model)
        except WorkersAIError as error:
            warn(f"the model's input schema could not be read ({error.message}).")
    return ModelFacts(info=info, schema=schema)


def capability_problems(request: ChatRequest, facts: ModelFacts, *, warn: Warn) -> list[str]:
    """What the catalogue says this model cannot do, of what the request asks (usage errors);
    doubts the model may still resolve are warnings."""
    info, model = facts.info, request.model
    if info is None:
        if facts.schema is None or not facts.schema.known:
            warn(f"{model} is not in the account's catalogue; its capabilities are unchecked.")
        return []
    problems: list[str] = []
    if any(m.images for m in request.messages) and not info.vision:
        problems.append(
            f"--image: {model} cannot read images (its catalogue entry has no vision); choose "
            f"a vision model with --model. {MODELS_HINT}"
        )
    if request.lora is not None and not info.lora:
        problems.append(
            f"--lora: {model} takes no LoRA adapter; use it with a model marked lora. {MODELS_HINT}"
        )
    if request.reasoning_effort is not None and not info.reasoning:
        problems.append(f"--reasoning-effort: {model} is not a reasoning model. {MODELS_HINT}")
    elif request.reasoning_effort is not None and info.reasoning_effort is None:
        warn(f"{model} lists no reasoning-effort control; it may ignore --reasoning-effort.")
    if request.tools and not info.function_calling:
        warn(f"{model} is not marked for function calling; it may ignore --tools.")
    schema = facts.schema
    no_json = schema is not None and schema.known and not schema.supports_response_format
    if request.response_format is not None and no_json:
        warn(f"{model}'s input schema has no response_format; the reply may not be JSON.")
    return problems


def with_facts(request: ChatRequest, facts: ModelFacts) -> ChatRequest:
    """The request carrying what was learnt, so the api picks the model's wire forms."""
    return replace(request, model_info=facts.info, model_schema=facts.schema)


def check(request: ChatRequest, facts: ModelFacts, *, warn: Warn) -> ChatRequest:
    """``with_facts``, or ConfigurationError listing what the model cannot do."""
    if problems := capability_problems(request, facts, warn=warn):
        raise ConfigurationError(problems)
    return with_facts(request, facts)
