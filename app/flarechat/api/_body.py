"""The JSON body of a chat request, in the form each endpoint and model family takes.

Forms (cloudflare-api.md §2, §5):

* OpenAI family (``/ai/v1/chat/completions``, gateway ``workers-ai/v1/…``, compat): images as
  ``image_url`` content parts, tools wrapped ``{type: "function", function}``, the
  ``response_format`` wrapper ``{name, schema, strict}``, tool history with ``tool_call_id`` and
  string arguments.
* Native ``/ai/run/{model}``: chosen from the model's schema (``ModelSchema``) when known. A
  legacy schema gets flat tools, the bare ``json_schema: <schema>``, the ``image`` field (when
  it has one) and tool history as strings; an OpenAI-style schema gets the OpenAI forms. With
  no schema: images as content parts (every current vision model takes them), tools wrapped
  (the legacy schema accepts both forms, newer ones only this one), the bare ``json_schema``
  (native JSON mode as documented; newer models accept it too).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from flarechat.api.config import (
    EFFORT_OFF,
    REASONING_EFFORTS,
    ChatMessage,
    ChatRequest,
    Endpoint,
    ImagePart,
    ResponseFormat,
    SamplingParams,
)
from flarechat.api.schema import ModelSchema

__all__ = ["chat_body", "effective_endpoint", "sends_stream"]

_SAMPLING_FIELDS = (
    "temperature",
    "top_p",
    "top_k",
    "seed",
    "repetition_penalty",
    "frequency_penalty",
    "presence_penalty",
)
#: The compat endpoint names Workers AI models with this provider prefix.
COMPAT_PREFIX = "workers-ai/"


@dataclass(frozen=True, slots=True)
class _Forms:
    """Which wire form each capability takes for one request."""

    openai: bool  # tool history, assistant tool_calls, wrapped tools
    image_field: bool  # the legacy top-level ``image`` (else content parts)
    image_bytes: bool  # ``image`` as a byte array (else base64 text)
    wrapped_tools: bool
    wrapped_schema: bool
    tool_choice: bool


def effective_endpoint(endpoint: Endpoint, request: ChatRequest) -> Endpoint:
    """LoRA is an input of the native schema only: a LoRA request always goes to /ai/run."""
    return Endpoint.NATIVE if request.lora else endpoint


def sends_stream(endpoint: Endpoint, request: ChatRequest) -> bool:
    """Whether the request is sent streaming: native JSON mode does not stream (§2)."""
    native = effective_endpoint(endpoint, request) is Endpoint.NATIVE
    return request.stream and not (native and request.response_format is not None)


def chat_body(request: ChatRequest, *, endpoint: Endpoint, compat: bool = False) -> dict[str, Any]:
    """The JSON body: messages, stream, max_tokens always, everything else only when set."""
    endpoint = effective_endpoint(endpoint, request)
    forms = _forms(endpoint, request.model_schema)
    _check_images(request, forms)
    body: dict[str, Any] = {}
    if endpoint is Endpoint.OPENAI:
        body["model"] = COMPAT_PREFIX + request.model if compat else request.model
    body["messages"] = [_message(m, forms) for m in request.messages]
    body.update(_image_field(request, forms))
    stream = sends_stream(endpoint, request)
    body["stream"] = stream
    if stream and endpoint is Endpoint.OPENAI:
        # OpenAI-compatible servers report usage on a stream only when asked to.
        body["stream_options"] = {"include_usage": True}
    body.update(_sampling(request.params))
    body.update(_capabilities(request, forms))
    if request.reject_if_busy:
        # Top level of the body, never inside model inputs (cloudflare-api.md §2).
        body["options"] = {"rejectIfBusy": True}
    return body


def _forms(endpoint: Endpoint, schema: ModelSchema | None) -> _Forms:
    openai_route = endpoint is Endpoint.OPENAI
    if openai_route or schema is None or not schema.known:
        return _Forms(
            openai=True,
            image_field=False,
            image_bytes=False,
            wrapped_tools=True,
            wrapped_schema=openai_route,
            tool_choice=True,
        )
    image_field = schema.takes_image_field and not schema.takes_image_parts
    return _Forms(
        openai=not schema.legacy,
        image_field=image_field,
        image_bytes=schema.image_field_bytes,
        # A legacy schema gets the flat form it documents; otherwise the OpenAI form.
        wrapped_tools=schema.openai_tools and not (schema.legacy and schema.flat_tools),
        wrapped_schema=schema.openai_response_format,
        tool_choice=schema.supports_tool_choice,
    )


def _check_images(request: ChatRequest, forms: _Forms) -> None:
    schema = request.model_schema
    if not any(m.images for m in request.messages) or forms.image_field or schema is None:
        return
    if schema.known and not (schema.takes_content_parts or schema.takes_image_field):
        raise ValueError(f"{request.model} does not accept images; choose a vision model.")


def _message(message: ChatMessage, forms: _Forms) -> dict[str, Any]:
    # Workers AI rejects null content in its schema check; send "" instead.
    content: Any = message.content or ""
    if message.images and not forms.image_field:
        content = _content_parts(message.content, message.images)
    elif message.tool_calls and not forms.openai and not content:
        # Legacy schemas take string content only: the calls are written as their JSON.
        content = json.dumps([c.legacy() for c in message.tool_calls], ensure_ascii=False)
    out: dict[str, Any] = {"role": message.role, "content": content}
    if message.role == "assistant" and message.reasoning:
        out["reasoning"] = message.reasoning
    if message.tool_calls and forms.openai:
        out["tool_calls"] = [c.openai() for c in message.tool_calls]
    if message.tool_call_id:
        out["tool_call_id"] = message.tool_call_id
    if message.name and message.role == "tool":
        out["name"] = message.name
    return out


def _content_parts(text: str, images: tuple[ImagePart, ...]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    parts.extend({"type": "image_url", "image_url": {"url": i.data_url()}} for i in images)
    return parts


def _image_field(request: ChatRequest, forms: _Forms) -> dict[str, Any]:
    """The legacy ``image`` input: one image per request, from the messages that carry one."""
    if not forms.image_field:
        return {}
    images = [image for m in request.messages for image in m.images]
    if not images:
        return {}
    if len(images) > 1:
        raise ValueError(f"{request.model} takes one image per request, not {len(images)}.")
    image = images[0]
    return {"image": list(image.data) if forms.image_bytes else image.base64}


def _capabilities(request: ChatRequest, forms: _Forms) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if request.response_format is not None:
        out["response_format"] = _response_format(request.response_format, forms)
    if request.tools:
        out["tools"] = [t.wrapped() if forms.wrapped_tools else t.flat() for t in request.tools]
    if request.tool_choice is not None and forms.tool_choice:
        out["tool_choice"] = request.tool_choice.to_json()
    if request.reasoning_effort is not None:
        out["reasoning_effort"] = _effort(request)
    if request.enable_thinking is not None:
        out["chat_template_kwargs"] = {"enable_thinking": request.enable_thinking}
    if request.lora is not None:
        if not request.lora.strip():
            raise ValueError("The LoRA adapter name is blank.")
        out["lora"] = request.lora.strip()
    return out


def _response_format(fmt: ResponseFormat, forms: _Forms) -> dict[str, Any]:
    if fmt.kind == "json_object" or fmt.schema is None:
        return {"type": "json_object"}
    schema = dict(fmt.schema)
    if not forms.wrapped_schema:
        return {"type": "json_schema", "json_schema": schema}
    wrapper = {"name": fmt.name, "schema": schema, "strict": fmt.strict}
    return {"type": "json_schema", "json_schema": wrapper}


def _effort(request: ChatRequest) -> str | None:
    """The effort to send (``None`` = the explicit off), checked against what the model takes."""
    effort = request.reasoning_effort
    if effort not in (*REASONING_EFFORTS, EFFORT_OFF):
        allowed = ", ".join((*REASONING_EFFORTS, EFFORT_OFF))
        raise ValueError(f"Reasoning effort must be one of {allowed}, not {effort!r}.")
    value = None if effort == EFFORT_OFF else effort
    info = request.model_info.reasoning_effort if request.model_info else None
    if info is not None and effort not in info.choices:
        raise ValueError(f"{request.model} takes reasoning effort {', '.join(info.choices)}.")
    schema = request.model_schema
    if schema is not None and schema.reasoning_efforts and value not in schema.reasoning_efforts:
        raise ValueError(f"{request.model} does not take reasoning effort {effort!r}.")
    return value


def _sampling(params: SamplingParams) -> dict[str, int | float]:
    if isinstance(params.max_tokens, bool) or params.max_tokens < 1:
        raise ValueError(f"Max tokens must be at least 1, not {params.max_tokens!r}.")
    values: dict[str, int | float] = {"max_tokens": params.max_tokens}
    for name in _SAMPLING_FIELDS:
        value = getattr(params, name)
        if value is not None:
            values[name] = value
    return values
