"""Answers cut off mid-body, for the hostile server: the headers arrive whole, then the body
ends early in each of the ways HTTP allows (see ``CUT_OFF_WAYS``)."""

from __future__ import annotations

import json

from support.hostile import http_head

__all__ = ["CUT_OFF_WAYS", "catalogue_body", "cut_off"]

_JSON = "application/json"

#: How the body ends early:
#: "short-body": a Content-Length for the whole body, half of it sent, then the hang-up;
#: "chunked": one chunk of half the body, then the hang-up before the last (empty) chunk;
#: "json-cut": the Content-Length matches, but the JSON stops in the middle;
#: "close-delimited": no length at all (the body ends at the hang-up) and the JSON half sent.
CUT_OFF_WAYS = ("short-body", "chunked", "json-cut", "close-delimited")


def catalogue_body(count: int = 20) -> bytes:
    """A whole /ai/models/search envelope of ``count`` text-generation models."""
    models = [
        {"name": f"@cf/test/model-{index}", "task": {"name": "Text Generation"}}
        for index in range(count)
    ]
    return json.dumps({"success": True, "result": models}).encode()


def cut_off(body: bytes, way: str) -> bytes:
    """Status line, headers and the first half of ``body``, framed as ``way`` says."""
    half = body[: len(body) // 2]
    if way == "short-body":
        return http_head(200, {"content-type": _JSON, "content-length": str(len(body))}) + half
    if way == "chunked":
        head = http_head(200, {"content-type": _JSON, "transfer-encoding": "chunked"})
        return head + f"{len(half):x}\r\n".encode() + half + b"\r\n"
    if way == "json-cut":
        return http_head(200, {"content-type": _JSON, "content-length": str(len(half))}) + half
    if way == "close-delimited":
        return http_head(200, {"content-type": _JSON, "connection": "close"}) + half
    raise ValueError(f"no such way to cut a body off: {way!r}")
