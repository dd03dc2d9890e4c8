"""Response payloads per model profile: legacy and OpenAI shapes, streamed (frames) and not."""

from __future__ import annotations

import math
import random
import re
import time
from dataclasses import dataclass
from typing import Any, Literal

from flarechat.emulator import catalogue, replies, tools, vision
from flarechat.emulator.catalogue import CatalogueModel, Profile
from flarechat.emulator.features import Features
from flarechat.emulator.tools import ToolCall
from flarechat.emulator.wire import (
    DONE,
    completion_id,
    dumps,
    legacy_padding,
    openai_padding,
    sse,
)

__all__ = [
    "Completion",
    "Frame",
    "embedding_result",
    "legacy_frames",
    "legacy_result",
    "openai_frames",
    "openai_result",
    "plan_completion",
]

#: vLLM reports the stop token it matched; any stable id will do.
_MATCHED_STOP = 106
_WORDS = re.compile(r"\w+")
_NEURON_DIGITS = 6


@dataclass(frozen=True, slots=True)
class Frame:
    """One SSE event; ``token`` frames are paced and counted by the stream faults."""

    data: bytes
    kind: Literal["open", "token", "tail"]


@dataclass(frozen=True, slots=True)
class Completion:
    """Everything a reply consists of, decided before the first byte is sent."""

    model: CatalogueModel
    reasoning: tuple[str, ...]  # chunks for the delta reasoning field (OpenAI shape)
    text: tuple[str, ...]  # visible chunks (THINK models: the <think> block is inline here)
    finish_reason: str  # "stop" or "length"
    prompt_tokens: int
    cached_tokens: int
    id: str
    created: int
    tool_calls: tuple[ToolCall, ...] = ()
    #: JSON mode: ``json_value`` is the answer (``text`` holds its JSON, for streams)
    structured: bool = False
    json_value: Any = None

    @property
    def completion_tokens(self) -> int:
        calls = sum(len(replies.tokenize(c.arguments_json)) for c in self.tool_calls)
        return len(self.reasoning) + len(self.text) + calls

    @property
    def neurons(self) -> float:
        value = catalogue.neurons(
            self.model, prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens
        )
        return round(value, _NEURON_DIGITS)

    @property
    def reasoning_field(self) -> str:
        return self.model.reasoning_field or "reasoning_content"


def _preface(features: Features) -> str:
    lines = []
    if features.images:
        lines.append(vision.describe(list(features.images)))
    if features.adapter is not None:
        lines.append(f"(Answering with the LoRA adapter `{features.adapter.name}`.)")
    return "\n\n".join(lines)


def _reply(
    model: CatalogueModel, body: dict[str, Any], features: Features, seed: int
) -> replies.Reply:
    """What the model thinks and says, before the shape and the token budget apply.

    Asked to go on with a reply (an assistant prefill, or "Continue…" after it), the model says
    the rest of the answer that reply began: a reply cut at max_tokens and continued reads as
    the one a larger limit would have given.
    """
    question = replies.last_user_text(body)
    going_on = replies.continuation(body)
    said = ""
    if going_on is not None:
        question, said = going_on
    effort = features.effort
    think = "" if effort is None else replies.thought(question, effort)
    if features.fixed_answer is not None:
        return replies.Reply("", features.fixed_answer)
    if features.tool_call is not None:
        return replies.Reply(think, "")
    if features.json_mode:
        return replies.Reply(think, dumps(features.json_value).decode())
    if features.tool_result is not None:
        return replies.Reply(think, f"The tool said: {features.tool_result}")
    reply = replies.compose(
        model.name,
        question,
        seed=seed,
        reasoning=effort is not None,
        effort=effort or "medium",
        preface=_preface(features),
    )
    return replies.Reply(reply.reasoning, replies.rest_of(reply.answer, said))


def plan_completion(
    model: CatalogueModel,
    body: dict[str, Any],
    *,
    features: Features,
    max_tokens: int,
    seed: int,
    cached: int,
) -> Completion:
    """Compose the reply and cut it at ``max_tokens`` (reasoning counts too, as on Workers AI).

    Tool calls and JSON answers are never cut (a cut would leave invalid JSON).
    """
    reply = _reply(model, body, features, seed)
    exact = features.tool_call is not None or features.json_mode
    reasoning: list[str] = []
    if model.profile is Profile.THINK and not exact and reply.reasoning:
        text = replies.split_think(reply.reasoning, reply.answer, seed=seed)
    elif model.profile is Profile.THINK:
        text = replies.tokenize(reply.answer)
    else:
        reasoning = replies.tokenize(reply.reasoning)
        text = replies.tokenize(reply.answer)
    total = len(reasoning) + len(text)
    budget = total if exact else max_tokens
    kept_reasoning = reasoning[:budget]
    kept_text = text[: max(0, budget - len(kept_reasoning))]
    finish = "length" if total > budget else "stop"
    return Completion(
        model=model,
        reasoning=tuple(kept_reasoning),
        text=tuple(kept_text),
        finish_reason="tool_calls" if features.tool_call else finish,
        prompt_tokens=replies.prompt_tokens(body),
        cached_tokens=cached,
        id=completion_id(),
        created=int(time.time()),
        tool_calls=(features.tool_call,) if features.tool_call else (),
        structured=features.json_mode,
        json_value=features.json_value,
    )


def _legacy_usage(c: Completion) -> dict[str, int]:
    return {
        "prompt_tokens": c.prompt_tokens,
        "completion_tokens": c.completion_tokens,
        "total_tokens": c.prompt_tokens + c.completion_tokens,
    }


def _openai_usage(prompt: int, completion: int, *, cached: int, neurons: float) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
        "neurons": neurons,
    }


def _cumulative_usage(c: Completion) -> dict[str, Any]:
    return _openai_usage(
        c.prompt_tokens, c.completion_tokens, cached=c.cached_tokens, neurons=c.neurons
    )


def _legacy_response(c: Completion, *, null_for_tools: bool) -> Any:
    if c.tool_calls:
        return None if null_for_tools else ""
    return c.json_value if c.structured else "".join(c.text)


def legacy_result(c: Completion, *, null_for_tools: bool = False) -> dict[str, Any]:
    """§3a: ``response`` (a JSON object in JSON mode), legacy ``tool_calls``, ``usage``."""
    result: dict[str, Any] = {
        "response": _legacy_response(c, null_for_tools=null_for_tools),
        "tool_calls": [tools.legacy_call(call) for call in c.tool_calls],
        "usage": _legacy_usage(c),
    }
    if c.finish_reason == "length":
        # Emulator choice: the legacy shape has no finish reason, so a cut reply says so here.
        result["finish_reason"] = "length"
    return result


def _legacy_event(rng: random.Random, *, response: str = "", calls: list[Any]) -> bytes:
    return sse({"response": response, "tool_calls": calls, "p": legacy_padding(rng)})


def _legacy_tool_frames(c: Completion, rng: random.Random, *, final: bool) -> list[Frame]:
    """§4: OpenAI-style deltas, a null finaliser and a finish event; or one final event."""
    if final:
        calls = [tools.legacy_call(call) for call in c.tool_calls]
        return [Frame(_legacy_event(rng, calls=calls), "token")]
    frames = []
    for index, call in enumerate(c.tool_calls):
        head = {"id": call.id, "type": "function", "index": index, "function": {"name": call.name}}
        frames.append(Frame(_legacy_event(rng, calls=[head]), "token"))
        for fragment in tools.argument_fragments(call):
            piece = {"index": index, "function": {"arguments": fragment}}
            frames.append(Frame(_legacy_event(rng, calls=[piece]), "token"))
        closing = {"id": None, "type": None, "index": index, "function": {"name": None}}
        frames.append(Frame(_legacy_event(rng, calls=[closing]), "tail"))
    frames.append(Frame(sse({"finish_reason": "tool_calls"}), "tail"))
    return frames


def legacy_frames(c: Completion, rng: random.Random, *, final_tools: bool = False) -> list[Frame]:
    """§4a: an empty first event, one event per chunk with ``p``, trailing cumulative usage."""
    frames = [Frame(_legacy_event(rng, calls=[]), "open")]
    for chunk in c.text:
        frames.append(Frame(_legacy_event(rng, response=chunk, calls=[]), "token"))
    if c.tool_calls:
        frames += _legacy_tool_frames(c, rng, final=final_tools)
    tail: dict[str, Any] = {"response": "", "usage": _legacy_usage(c)}
    if c.finish_reason == "length":
        # Emulator choice (as in legacy_result): the trailing event carries the cut.
        tail["finish_reason"] = "length"
    frames += [Frame(sse(tail), "tail"), Frame(DONE, "tail")]
    return frames


def openai_result(c: Completion) -> dict[str, Any]:
    """A chat.completion object, keys ordered as in the gemma-4 capture (§3b)."""
    message: dict[str, Any] = {"content": "".join(c.text) if c.text else None}
    if c.model.reasoning and c.model.profile is not Profile.THINK:
        message[c.reasoning_field] = "".join(c.reasoning) or None
    message["role"] = "assistant"
    if c.tool_calls:
        message["tool_calls"] = [tools.openai_call(call) for call in c.tool_calls]
    choice = {"finish_reason": c.finish_reason, "index": 0, "logprobs": None, "message": message}
    return {
        "choices": [choice],
        "created": c.created,
        "id": c.id,
        "model": c.model.name,
        "object": "chat.completion",
        "usage": _cumulative_usage(c),
    }


def _chunk(
    c: Completion, rng: random.Random, *, choices: list[dict[str, Any]], usage: dict[str, Any]
) -> bytes:
    return sse(
        {
            "choices": choices,
            "created": c.created,
            "id": c.id,
            "model": c.model.name,
            "object": "chat.completion.chunk",
            "p": openai_padding(rng),
            "usage": usage,
        }
    )


def _choice(delta: dict[str, Any], finish: str | None = None) -> list[dict[str, Any]]:
    stop = _MATCHED_STOP if finish == "stop" else None
    return [
        {
            "delta": delta,
            "finish_reason": finish,
            "index": 0,
            "logprobs": None,
            "matched_stop": stop,
        }
    ]


def openai_frames(c: Completion, rng: random.Random) -> list[Frame]:
    """§4b: role chunk, reasoning then content chunks with incremental usage, the finish chunk,
    a ``choices: []`` usage chunk, the trailing cumulative ``{"response":"","usage":…}``, [DONE].
    """
    field = c.reasoning_field
    per_token = round(catalogue.neurons(c.model, prompt_tokens=0, completion_tokens=1), 9)
    prompt_neurons = round(
        catalogue.neurons(c.model, prompt_tokens=c.prompt_tokens, completion_tokens=0), 9
    )
    one = _openai_usage(0, 1, cached=0, neurons=per_token)
    zero = _openai_usage(0, 0, cached=0, neurons=0)
    first = _openai_usage(c.prompt_tokens, 0, cached=c.cached_tokens, neurons=prompt_neurons)

    def token(delta: dict[str, Any]) -> Frame:
        return Frame(_chunk(c, rng, choices=_choice(delta), usage=one), "token")

    opening = _choice({"content": "", field: None, "role": "assistant"})
    finish = _choice({field: None}, c.finish_reason)
    return [
        Frame(_chunk(c, rng, choices=opening, usage=first), "open"),
        *(token({"content": None, field: chunk}) for chunk in c.reasoning),
        *(token({"content": chunk, field: None}) for chunk in c.text),
        *(token(delta) for delta in _tool_deltas(c)),
        Frame(_chunk(c, rng, choices=finish, usage=zero), "tail"),
        Frame(_chunk(c, rng, choices=[], usage=zero), "tail"),
        Frame(sse({"response": "", "usage": _cumulative_usage(c)}), "tail"),
        Frame(DONE, "tail"),
    ]


def _tool_deltas(c: Completion) -> list[dict[str, Any]]:
    """OpenAI ``delta.tool_calls``: id, type and name first, then argument fragments."""
    deltas: list[dict[str, Any]] = []
    for index, call in enumerate(c.tool_calls):
        fragments = tools.argument_fragments(call)
        function = {"name": call.name, "arguments": fragments[0]}
        head = {"index": index, "id": call.id, "type": "function", "function": function}
        deltas.append({"content": None, "tool_calls": [head]})
        for fragment in fragments[1:]:
            piece = {"index": index, "function": {"arguments": fragment}}
            deltas.append({"content": None, "tool_calls": [piece]})
    return deltas


def embedding_result(
    model: CatalogueModel, texts: list[str], *, seed: int, pooling: str | None = None
) -> dict[str, Any]:
    """Deterministic unit vectors, one per text: a sum of one random vector per word.

    Texts that share words point the same way, so cosine similarity means something in tests
    (the same text: 1.0; no word in common: near 0). bge-small/base/large answer with
    ``pooling`` ("mean" unless asked); bge-m3 answers {shape, data} with "cls".
    """
    size = catalogue.embedding_dimensions(model)
    data = [_text_vector(text, size=size, seed=seed) for text in texts]
    chosen = pooling or ("cls" if model.prop("output_dimensions") is None else "mean")
    return {"shape": [len(texts), size], "data": data, "pooling": chosen}


def _text_vector(text: str, *, size: int, seed: int) -> list[float]:
    words = _WORDS.findall(text.lower()) or [text]
    total = [0.0] * size
    for word in words:
        rng = random.Random(f"{seed}\x1f{word}")
        for index in range(size):
            total[index] += rng.gauss(0.0, 1.0)
    norm = math.sqrt(sum(x * x for x in total)) or 1.0
    return [round(x / norm, 6) for x in total]
