"""What a request asks beyond plain text: images, JSON mode, tools, LoRA and reasoning effort."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from flarechat.emulator import jsonmode, judge, reasoning, replies, tools, vision
from flarechat.emulator.catalogue import CatalogueModel
from flarechat.emulator.lora import Finetune, check_lora
from flarechat.emulator.tools import ToolCall
from flarechat.emulator.variants import Variants
from flarechat.emulator.vision import Image
from flarechat.emulator.wire import ErrorSpec

__all__ = ["JSON_MODE_CODE", "Features", "read_features"]

#: The code of "JSON Mode couldn't be met" is undocumented (§12.9): emulator choice 400 / 8001.
JSON_MODE_CODE = 8001
_NO_STREAM = "Bad input: Error: JSON Mode does not support streaming"


@dataclass(frozen=True, slots=True)
class Features:
    """Everything about a request that changes the reply, decided before it is composed."""

    images: tuple[Image, ...] = ()
    json_mode: bool = False
    json_value: Any = None
    tool_call: ToolCall | None = None
    tool_result: str | None = None
    adapter: Finetune | None = None
    effort: str | None = None  # None: no reasoning text at all
    fixed_answer: str | None = None  # e.g. the reply to the licence agreement


@dataclass(frozen=True, slots=True)
class Request:
    """The parts of a call that feature checks look at."""

    model: CatalogueModel
    body: dict[str, Any]
    account: str
    native: bool  # /ai/run (or gateway workers-ai/{model}) rather than chat completions
    variants: Variants


def _images(req: Request) -> tuple[list[Image], ErrorSpec | None]:
    if not req.model.supports("vision"):
        return [], None
    images, problem = vision.image_parts(req.body)
    if problem is None and req.native and req.model.native_image and "image" in req.body:
        image, problem = vision.native_image(req.body["image"])
        images += [image] if image is not None else []
    return images, problem


def _json(req: Request) -> tuple[bool, Any, ErrorSpec | None]:
    if not req.model.json_mode:
        return False, None, None  # no response_format in its schema: the field is ignored
    wanted, problem = jsonmode.requested(req.body)
    if wanted is None:
        return False, None, problem
    if req.native and req.body.get("stream") is True and req.variants.get("json_stream") == "error":
        return False, None, ErrorSpec(400, 5006, _NO_STREAM)
    try:
        return True, jsonmode.instance(wanted.schema), None
    except jsonmode.Unsatisfiable:
        return False, None, ErrorSpec(400, JSON_MODE_CODE, jsonmode.JSON_MODE_FAILED)


def _tool_call(req: Request) -> tuple[ToolCall | None, ErrorSpec | None]:
    if not req.model.supports("function_calling"):
        return None, None  # not in its schema: tools are ignored
    available, problem = tools.read_tools(req.body)
    if problem is not None:
        return None, problem
    question = replies.last_user_text(req.body)
    chosen, problem = tools.choose(req.body, available, question=question)
    return (tools.make_call(chosen) if chosen else None), problem


def read_features(req: Request) -> tuple[Features | None, ErrorSpec | None]:
    """The features of a valid request, or the error Workers AI answers instead."""
    images, problem = _images(req)
    if problem is not None:
        return None, problem
    allowed = req.native or req.variants.get("chat_lora") == "accept"
    adapter, problem = check_lora(req.model, req.body, account=req.account, allowed=allowed)
    if problem is not None:
        return None, problem
    effort, problem = reasoning.effort(req.model, req.body)
    if problem is not None:
        return None, problem
    json_mode, json_value, problem = _json(req)
    if problem is not None:
        return None, problem
    call, problem = _tool_call(req)
    if problem is not None:
        return None, problem
    graded = None if call is not None else judge.grade(replies.last_user_text(req.body))
    return Features(
        images=tuple(images),
        json_mode=json_mode and call is None,
        # a grade asked for in JSON mode is the grade itself, not an instance of the schema
        json_value=json_value if graded is None else json.loads(graded),
        tool_call=call,
        tool_result=tools.tool_result(req.body),
        adapter=adapter,
        effort=effort,
        fixed_answer=graded,
    ), None
