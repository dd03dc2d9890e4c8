"""The model catalogue on the wire: /ai/models/search items parsed into ModelInfo, and paging."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from flarechat import safejson
from flarechat.api.models import FineTune, ModelInfo, ReasoningEffortInfo

__all__ = [
    "MAX_PAGES",
    "PER_PAGE",
    "is_last_page",
    "parse_finetune",
    "parse_model",
    "parse_reasoning_effort",
]

PER_PAGE = 50
#: A server that ignores paging must not keep us looping forever.
MAX_PAGES = 40
_TRUE_WORDS = frozenset({"true", "yes", "1", "on"})
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_BOOL_PROPERTIES = {
    "beta": "beta",
    "require_workers_paid": "paid_only",
    "reasoning": "reasoning",
    "function_calling": "function_calling",
    "lora": "lora",
    "vision": "vision",
    "async_queue": "batch",
}


def parse_model(item: object) -> ModelInfo | None:
    """One catalogue item; ``None`` when it has no usable name."""
    if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
        return None
    props = _properties(item.get("properties"))
    fields: dict[str, Any] = {
        attr: _bool(props.get(prop)) for prop, attr in _BOOL_PROPERTIES.items()
    }
    if "reasoning_effort" in props:  # an effort control implies a reasoning model
        fields["reasoning"] = True
        fields["reasoning_effort"] = parse_reasoning_effort(props["reasoning_effort"])
    fields["context_window"] = _int(props.get("context_window")) or _int(
        props.get("max_total_tokens")
    )
    terms = props.get("terms")
    fields["terms_url"] = terms.strip() if isinstance(terms, str) and terms.strip() else None
    fields.update(_prices(props.get("price")))
    task = item.get("task")
    task_name = task.get("name") if isinstance(task, Mapping) else task
    description = item.get("description")
    return ModelInfo(
        name=item["name"],
        description=description if isinstance(description, str) else "",
        task=task_name if isinstance(task_name, str) else "",
        **fields,
    )


def parse_reasoning_effort(value: object) -> ReasoningEffortInfo | None:
    """The ``reasoning_effort`` property object (a JSON string of it is tolerated too)."""
    if isinstance(value, str):
        try:
            value = safejson.loads(value)
        except ValueError:
            return None
    if not isinstance(value, Mapping):
        return None
    efforts = value.get("supported_efforts")
    supported = tuple(e for e in efforts if isinstance(e, str)) if isinstance(efforts, list) else ()
    default = value.get("default_effort")
    enabled = value.get("default_enabled")
    return ReasoningEffortInfo(
        supported_efforts=supported,
        default_effort=default if isinstance(default, str) else None,
        mandatory=_bool(value.get("mandatory")),
        default_enabled=True if enabled is None else _bool(enabled),
    )


def parse_finetune(item: object) -> FineTune | None:
    """One ``/ai/finetunes`` item; ``None`` without an id or a name."""
    if not isinstance(item, Mapping):
        return None
    text = {k: _str(item.get(k)) for k in ("id", "name", "model", "description")}
    if not (text["id"] or text["name"]):
        return None
    return FineTune(
        id=text["id"] or text["name"] or "",
        name=text["name"] or "",
        model=text["model"],
        description=text["description"] or "",
        created_at=_str(item.get("created_at")),
        modified_at=_str(item.get("modified_at")),
    )


def is_last_page(body: Mapping[str, Any], *, page: int, per_page: int, received: int) -> bool:
    """Whether paging is done, from the page size or any ``result_info`` variant."""
    if received < per_page:
        return True
    info = body.get("result_info")
    if not isinstance(info, Mapping):
        return False
    total_pages = _int(info.get("total_pages"))
    total_count = _int(info.get("total_count"))
    count = _int(info.get("count"))
    return (
        (total_pages is not None and page >= total_pages)
        or (total_count is not None and page * per_page >= total_count)
        or (count is not None and count < per_page)
    )


def _properties(value: object) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    props: dict[str, Any] = {}
    if isinstance(value, list):
        for entry in value:
            if isinstance(entry, Mapping) and isinstance(entry.get("property_id"), str):
                props[entry["property_id"]] = entry.get("value")
    return props


def _prices(value: object) -> dict[str, float | None]:
    if isinstance(value, str):
        try:
            value = safejson.loads(value)
        except ValueError:
            return {}
    prices: dict[str, float | None] = {}
    if not isinstance(value, list):
        return prices
    for entry in value:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("unit"), str):
            continue
        unit = entry["unit"].lower()
        amount = _float(entry.get("price"))
        if "cached" in unit:
            prices["price_cached_per_m"] = amount
        elif "input" in unit:
            prices["price_input_per_m"] = amount
        elif "output" in unit:
            prices["price_output_per_m"] = amount
    return prices


def _str(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    if isinstance(value, str):
        return value.strip().lower() in _TRUE_WORDS
    return isinstance(value, Mapping) and bool(value)


def _float(value: object) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        match = _NUMBER.search(value.replace(",", ""))
        return float(match.group()) if match else None
    return None


def _int(value: object) -> int | None:
    number = _float(value)
    return int(number) if number is not None and math.isfinite(number) else None
