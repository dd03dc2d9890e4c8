"""Export a compare run — prompts, columns (model, parameters, system prompt), replies, metrics
and the blind vote — as JSON and as CSV (one row per reply). Never a token: request records
hold none, and only records and texts are written."""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from flarechat.api.models import ModelInfo
from flarechat.core.conversation import Message
from flarechat.core.lab.compare import LABELS, CompareRun, metrics_of
from flarechat.core.lab.votes import Verdict, Vote

__all__ = ["COMPARE_FORMAT", "CSV_FIELDS", "compare_csv", "compare_json", "compare_record"]

COMPARE_FORMAT = "flarechat.compare"
COMPARE_VERSION = 1
CSV_FIELDS = (
    "round",
    "prompt",
    "column",
    "model",
    "preset",
    "params",
    "system_prompt",
    "status",
    "finish_reason",
    "queue_wait",
    "ttft",
    "tokens_per_second",
    "prompt_tokens",
    "completion_tokens",
    "neurons",
    "cost_usd",
    "cache_status",
    "reply",
    "vote",
)


def _vote_words(vote: Vote | None) -> str:
    if vote is None:
        return ""
    if vote.verdict is Verdict.BEST and vote.winner is not None:
        return f"{LABELS[vote.winner]} best"
    return "all bad" if vote.verdict is Verdict.ALL_BAD else "tie"


def _reply(message: Message | None, info: ModelInfo | None) -> dict[str, Any]:
    if message is None:
        return {"status": "missing"}
    metrics = asdict(metrics_of(message, info))
    return {
        "message_id": message.id,
        "model": message.model,
        "text": message.content,
        "reasoning": message.reasoning,
        "error": message.error,
        "request": message.request,
        "timings": message.timings,
        "usage": message.usage,
        "meta": message.meta,
        "metrics": metrics,
    }


def compare_record(
    run: CompareRun,
    messages: Mapping[str, Message],
    *,
    catalogue: Mapping[str, ModelInfo] | None = None,
    vote: Vote | None = None,
) -> dict[str, Any]:
    """The whole run as JSON-ready plain values; ``messages``: the replies by id."""
    catalogue = catalogue or {}
    rounds = []
    for round_ in run.rounds:
        replies = []
        for label, reply_id in zip(run.labels, round_.replies, strict=True):
            message = messages.get(reply_id)
            model = message.model if message is not None and message.model else ""
            replies.append({"column": label, **_reply(message, catalogue.get(model))})
        rounds.append({"prompt": round_.prompt, "replies": replies})
    return {
        "format": COMPARE_FORMAT,
        "version": COMPARE_VERSION,
        "exported_at": time.time(),
        "conversation_id": run.conversation_id,
        "blind": run.blind,
        "columns": [
            {
                "column": label,
                "model": column.model,
                "preset": column.preset,
                "params": dict(column.params),
                "system_prompt": column.system_prompt,
            }
            for label, column in zip(run.labels, run.columns, strict=True)
        ],
        "rounds": rounds,
        "vote": _vote_record(vote),
    }


def _vote_record(vote: Vote | None) -> dict[str, Any] | None:
    if vote is None:
        return None
    winner = LABELS[vote.winner] if vote.winner is not None else None
    words = _vote_words(vote)
    return {"id": vote.id, "verdict": str(vote.verdict), "winner": winner, "words": words}


def compare_json(record: Mapping[str, Any]) -> str:
    return json.dumps(record, indent=2, ensure_ascii=False) + "\n"


def _csv_row(
    number: int, prompt: str, column: Mapping[str, Any], reply: Mapping[str, Any], vote: str
) -> list[object]:
    metrics = reply.get("metrics") or {}
    values: dict[str, object] = {
        "round": number,
        "prompt": prompt,
        "column": column["column"],
        "model": reply.get("model") or column["model"],
        "preset": column.get("preset") or "",
        "params": json.dumps(column["params"], sort_keys=True),
        "system_prompt": column.get("system_prompt") or "",
        "status": metrics.get("status", reply.get("status", "")),
        "reply": reply.get("text", ""),
        "vote": vote,
    }
    for name in CSV_FIELDS:
        if name not in values:
            value = metrics.get(name)
            values[name] = "" if value is None else value
    return [values[name] for name in CSV_FIELDS]


def compare_csv(record: Mapping[str, Any]) -> str:
    """One row per reply (a round by a column), with the run's vote on every row."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    vote = (record.get("vote") or {}).get("words", "")
    columns = record["columns"]
    for number, round_ in enumerate(record["rounds"], start=1):
        for column, reply in zip(columns, round_["replies"], strict=True):
            writer.writerow(_csv_row(number, round_["prompt"], column, reply, vote))
    return out.getvalue()
