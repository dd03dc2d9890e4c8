"""The generation path behind every model route: validate, fault, cache, queue, then answer."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from starlette.responses import Response

from flarechat.emulator import catalogue, checks, replies, shapes, terms
from flarechat.emulator.cache import CachedResponse, cache_key, parse_ttl
from flarechat.emulator.catalogue import CatalogueModel, Profile
from flarechat.emulator.config import DEFAULT_MAX_TOKENS
from flarechat.emulator.delivery import Delivery, GenerationResponse
from flarechat.emulator.features import Features, Request, read_features
from flarechat.emulator.shapes import Completion, Frame
from flarechat.emulator.state import CAPACITY_MESSAGE, EmulatorState, StreamFaults
from flarechat.emulator.wire import (
    JSON_TYPE,
    SSE_TYPE,
    BodyStyle,
    ErrorSpec,
    cf_ray,
    dumps,
    error_response,
    success,
    ulid,
)

__all__ = ["Call", "ItemOutcome", "Kind", "generate", "item_outcome"]

_SEED_MODULUS = 2**63
#: Response headers that describe one exchange and must not be replayed from the cache.
_PER_EXCHANGE = frozenset({"cf-ray", "cf-aig-log-id", "cf-aig-request-id", "cf-aig-cache-status"})


class Kind(StrEnum):
    """Which request/response family a model route belongs to."""

    RUN = "run"  # /ai/run/{model}, gateway workers-ai/{model}
    CHAT = "chat"  # /ai/v1/chat/completions, gateway workers-ai/v1/chat/completions
    COMPAT = "compat"  # gateway compat/chat/completions (model "workers-ai/@cf/...")


@dataclass(frozen=True, slots=True)
class Call:
    """A generation request that passed routing and authentication."""

    kind: Kind
    model: str
    body: dict[str, Any]
    raw_body: bytes
    headers: Mapping[str, str]
    request_id: str
    account: str
    token: str
    gateway: str | None = None  # set when the call goes through AI Gateway (either way)

    @property
    def inference_style(self) -> BodyStyle:
        # On compat, Workers AI failures surface as the bare AiError object (§6.5).
        return "aierror" if self.kind is Kind.COMPAT else "v4-inference"

    @property
    def openai_shape(self) -> bool:
        return self.kind is not Kind.RUN


@dataclass(frozen=True, slots=True)
class _CachePlan:
    key: str | None = None
    status: str | None = None  # None when not through a gateway
    ttl: int = 0


@dataclass(frozen=True, slots=True)
class ItemOutcome:
    """One batch item answered at once: its ``result`` (or the error), tokens and neurons."""

    result: dict[str, Any] | None
    problem: ErrorSpec | None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    neurons: float = 0.0


def item_outcome(state: EmulatorState, call: Call) -> ItemOutcome:
    """What a synchronous non-streamed call would answer, as one batch item (§11.2)."""
    model, problem = checks.check_call(
        call.model, call.body, chat=False, token=call.token, size=len(call.raw_body)
    )
    features = None
    if model is not None:
        features, problem = _features(state, call, model)
    if model is None or features is None:
        return ItemOutcome(None, problem or ErrorSpec(500, 1000, "Internal server error"))
    if model.profile is Profile.EMBEDDING:
        texts = _texts(call.body)
        tokens = sum(len(replies.tokenize(t)) for t in texts)
        result = shapes.embedding_result(model, texts, seed=_seed(state, call.body))
        billed = catalogue.neurons(model, prompt_tokens=tokens, completion_tokens=0)
        return ItemOutcome(result, None, tokens, 0, billed)
    body = call.body
    completion = shapes.plan_completion(
        model,
        body,
        features=features,
        max_tokens=int(body.get("max_tokens") or DEFAULT_MAX_TOKENS),
        seed=_seed(state, body),
        cached=0,
    )
    if model.profile in (Profile.OPENAI, Profile.NOSTREAM):
        result = shapes.openai_result(completion)
    else:
        result = shapes.legacy_result(completion)
    c = completion
    return ItemOutcome(result, None, c.prompt_tokens, c.completion_tokens, c.neurons)


def _texts(body: Mapping[str, Any]) -> list[str]:
    text = body.get("text")
    return [text] if isinstance(text, str) else [str(t) for t in text or []]


async def generate(state: EmulatorState, call: Call) -> Response:
    plan = _cache_plan(call)
    headers = _exchange_headers(call, plan.status)
    model, problem = checks.check_call(
        call.model,
        call.body,
        chat=call.openai_shape,
        token=call.token,
        size=len(call.raw_body),
    )
    features = None
    if model is not None:
        features, problem = _features(state, call, model)
    if model is None or features is None:
        spec = problem or ErrorSpec(500, 1000, "Internal server error")
        styled = spec.with_style(call.inference_style)
        return error_response(styled, req_id=call.request_id, headers=headers)
    if plan.key is not None:
        hit = state.cache.get(plan.key, now=state.now())
        if hit is not None:
            return _replay(hit, call)
    failure = state.take_failure(model.name)
    if failure is not None:
        return error_response(failure, req_id=call.request_id, headers=headers)
    if model.profile is Profile.EMBEDDING:
        return _embed(state, call, model=model, headers=headers)
    return _answer(state, call, model=model, features=features, headers=headers, plan=plan)


def _features(
    state: EmulatorState, call: Call, model: CatalogueModel
) -> tuple[Features | None, ErrorSpec | None]:
    """Licence terms first (5016 until agreed), then what the body asks of the model."""
    if model.profile is Profile.EMBEDDING:
        return Features(), None
    if model.agreement and not state.agreements.agreed(call.account, model.name):
        if not terms.is_agreement(call.body):
            return None, terms.terms_error(state.variant.get("terms_message"))
        state.agreements.agree(call.account, model.name)
        return Features(fixed_answer=terms.AGREED_REPLY), None
    request = Request(model, call.body, call.account, not call.openai_shape, state.variant)
    return read_features(request)


def _cache_plan(call: Call) -> _CachePlan:
    if call.gateway is None:
        return _CachePlan()
    skip = call.headers.get("cf-aig-skip-cache", call.headers.get("cf-skip-cache", ""))
    if skip.lower() == "true":
        return _CachePlan(status="BYPASS")
    ttl = parse_ttl(call.headers.get("cf-aig-cache-ttl", call.headers.get("cf-cache-ttl")))
    custom = call.headers.get("cf-aig-cache-key")
    space = f"{call.account}/{call.gateway}"
    if custom:
        key = cache_key(kind=f"{space}/custom", model="", body=custom.encode(), auth="")
    else:
        auth = call.token + "\x1f" + call.headers.get("cf-aig-authorization", "")
        key = cache_key(
            kind=f"{space}/{call.kind}", model=call.model, body=call.raw_body, auth=auth
        )
    return _CachePlan(key=key, status="MISS", ttl=ttl)


def _exchange_headers(call: Call, cache_status: str | None) -> dict[str, str]:
    headers = {"cf-ray": cf_ray(), "cf-ai-req-id": call.request_id}
    if cache_status is not None:
        log_id = ulid()
        headers |= {
            "cf-aig-cache-status": cache_status,
            "cf-aig-log-id": log_id,
            "cf-aig-request-id": log_id,  # equals the log id for single-step requests
            "cf-aig-step": "0",
        }
    return headers


def _replay(hit: CachedResponse, call: Call) -> Response:
    headers = dict(hit.headers) | _exchange_headers(call, "HIT")
    headers["cf-ai-req-id"] = dict(hit.headers).get("cf-ai-req-id", call.request_id)
    headers["content-type"] = hit.media_type
    return Response(b"".join(hit.chunks), headers=headers)


def _seed(state: EmulatorState, body: Mapping[str, Any]) -> int:
    text = f"{state.config.seed}\x1f{body.get('seed')}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") % _SEED_MODULUS


def _embed(
    state: EmulatorState, call: Call, *, model: CatalogueModel, headers: dict[str, str]
) -> Response:
    texts = _texts(call.body)
    pooling = call.body.get("pooling")
    chosen = pooling if isinstance(pooling, str) else None
    result = shapes.embedding_result(model, texts, seed=_seed(state, call.body), pooling=chosen)
    tokens = sum(len(replies.tokenize(t)) for t in texts)
    billed = catalogue.neurons(model, prompt_tokens=tokens, completion_tokens=0)
    headers["cf-ai-neurons"] = f"{billed:.2f}"
    return Response(dumps(success(result)), headers=headers, media_type=JSON_TYPE)


def _streamed(state: EmulatorState, call: Call, model: CatalogueModel, features: Features) -> bool:
    """stream:true streams, except gpt-oss on /ai/run (§4c) and native JSON mode (§2)."""
    if call.body.get("stream") is not True:
        return False
    if call.kind is not Kind.RUN:
        return True
    if features.json_mode and state.variant.get("json_stream") != "stream":
        return False  # "JSON Mode does not support streaming": the answer comes as plain JSON
    return model.profile is not Profile.NOSTREAM


def _compose(
    state: EmulatorState, call: Call, *, model: CatalogueModel, features: Features
) -> tuple[Completion, bool, list[Frame]]:
    """The reply, whether it is streamed as SSE, and its frames."""
    body = call.body
    prompt = replies.prompt_tokens(body)
    completion = shapes.plan_completion(
        model,
        body,
        features=features,
        max_tokens=int(body.get("max_tokens") or DEFAULT_MAX_TOKENS),
        seed=_seed(state, body),
        cached=state.cached_prefix(call.headers.get("x-session-affinity"), prompt),
    )
    streamed = _streamed(state, call, model, features)
    return completion, streamed, _frames(state, call, completion=completion, streamed=streamed)


def _answer(
    state: EmulatorState,
    call: Call,
    *,
    model: CatalogueModel,
    features: Features,
    headers: dict[str, str],
    plan: _CachePlan,
) -> Response:
    completion, streamed, frames = _compose(state, call, model=model, features=features)
    acquired = state.capacity.try_acquire(model.name, call.request_id)
    if not acquired and _rejects_if_busy(call.body):
        state.capacity.reject(model.name, call.request_id)
        busy = ErrorSpec(429, 3040, CAPACITY_MESSAGE, call.inference_style)
        return error_response(busy, req_id=call.request_id, headers=headers)
    try:
        media_type = SSE_TYPE if streamed else JSON_TYPE
        headers |= {"cf-ai-neurons": f"{completion.neurons:.2f}", "content-type": media_type}
        if not streamed:
            headers["content-length"] = str(sum(len(frame.data) for frame in frames))
        delivery = Delivery(
            model=model.name,
            request_id=call.request_id,
            frames=frames,
            streamed=streamed,
            tokens=completion.completion_tokens,
            delay=state.take_delay(model.name),
            faults=state.take_stream_faults(model.name) if streamed else StreamFaults(),
            queued=not acquired,
            on_complete=_storer(state, plan, headers=headers, media_type=media_type),
        )
        return GenerationResponse(delivery, state=state, headers=headers, media_type=media_type)
    except BaseException:
        if acquired:  # never leak a slot, whatever went wrong before the response exists
            state.capacity.release(model.name, call.request_id)
        raise


def _frames(
    state: EmulatorState, call: Call, *, completion: Completion, streamed: bool
) -> list[Frame]:
    c = completion
    rng = random.Random()
    if streamed:
        if call.openai_shape or c.model.profile in (Profile.OPENAI, Profile.NOSTREAM):
            return shapes.openai_frames(c, rng)
        final = state.variant.get("legacy_tool_stream") == "final"
        return shapes.legacy_frames(c, rng, final_tools=final)
    if (
        call.kind is Kind.RUN
        and call.body.get("stream") is True
        and c.model.profile is Profile.NOSTREAM
        and state.nonstream_empty_result
    ):
        return [Frame(dumps(success({})), "tail")]
    if call.openai_shape:
        return [Frame(dumps(shapes.openai_result(c)), "tail")]
    if c.model.profile in (Profile.OPENAI, Profile.NOSTREAM):
        return [Frame(dumps(success(shapes.openai_result(c))), "tail")]
    null = state.variant.get("legacy_tool_response") == "null"
    return [Frame(dumps(success(shapes.legacy_result(c, null_for_tools=null))), "tail")]


def _storer(
    state: EmulatorState, plan: _CachePlan, *, headers: dict[str, str], media_type: str
) -> Callable[[tuple[bytes, ...]], None] | None:
    if plan.key is None:
        return None
    key, ttl = plan.key, plan.ttl
    kept = tuple((k, v) for k, v in headers.items() if k not in _PER_EXCHANGE)
    # The TTL runs from when the request arrived, not from when the last byte left: the
    # client may already have its whole reply (and a test may have moved the clock) by then.
    arrived = state.now()

    def store(chunks: tuple[bytes, ...]) -> None:
        state.cache.put(key, CachedResponse(media_type, chunks, kept), ttl=ttl, now=arrived)

    return store


def _rejects_if_busy(body: Mapping[str, Any]) -> bool:
    options = body.get("options")
    return isinstance(options, dict) and options.get("rejectIfBusy") is True
