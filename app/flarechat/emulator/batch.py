"""The async Batch API (§11): ``?queueRequest=true`` submits, ``{"request_id"}`` polls.

A submitted batch answers ``queued``; each poll moves it on by the pace the tests set
(``set_batch_pace``: so many polls queued, then so many running), then the results come:
``responses[]`` listed in reverse order (the docs' order is not guaranteed: clients map by
``id``), ``external_reference`` echoed or ``null``, one ``usage`` total, failed items with
``success: false``. Where the reference is UNCERTAIN the choice is a variant (variants.py).
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from flarechat.emulator import catalogue
from flarechat.emulator.batchbook import Batch
from flarechat.emulator.catalogue import Profile
from flarechat.emulator.checks import MAX_BODY_BYTES
from flarechat.emulator.generation import Call, ItemOutcome, Kind, item_outcome
from flarechat.emulator.state import EmulatorState
from flarechat.emulator.wire import ErrorSpec, cf_ray, error_response, json_response, success

__all__ = ["handle", "is_poll"]

_NOT_BATCH = (
    "Bad input: Error: oneOf at '/' not met, 0 matches: required properties at '/' are "
    "'prompt', required properties at '/' are 'messages'"
)
_NOT_FOUND = "Bad input: no queued request with that request_id"
_OTHER_MODEL = "Bad input: that request_id was queued for another model"


def is_poll(body: dict[str, Any]) -> bool:
    """A poll carries a request_id and nothing to run (with or without ``?queueRequest``)."""
    return isinstance(body.get("request_id"), str) and "requests" not in body


def handle(state: EmulatorState, call: Call, *, headers: dict[str, str]) -> Response:
    """Submit or poll; errors in the inference envelope, as the run route gives them."""
    failure = state.take_failure(call.model)
    if failure is not None:
        return error_response(failure, req_id=call.request_id, headers=headers)
    if is_poll(call.body):
        return _poll(state, call, headers=headers)
    return _submit(state, call, headers=headers)


def _fail(spec: ErrorSpec, call: Call, headers: dict[str, str]) -> Response:
    return error_response(spec.with_style("v4-inference"), req_id=call.request_id, headers=headers)


def _submit(state: EmulatorState, call: Call, *, headers: dict[str, str]) -> Response:
    if len(call.raw_body) > MAX_BODY_BYTES:
        return _fail(ErrorSpec(413, 3006, "Request is too large"), call, headers)
    model = catalogue.find(call.model)
    if model is None:
        return _fail(ErrorSpec(400, 5007, f"No such model {call.model} or task"), call, headers)
    if not model.supports("async_queue"):
        return _fail(ErrorSpec(400, 5006, _NOT_BATCH), call, headers)
    items = call.body.get("requests")
    if not isinstance(items, list) or not items or not all(isinstance(i, dict) for i in items):
        kind = "array of objects" if isinstance(items, list) else type(items).__name__
        problem = ErrorSpec(400, 5006, f"Bad input: Error: '/requests' must be a non-empty {kind}")
        return _fail(problem, call, headers)
    state.batches.add(call.request_id, Batch(call.model, items, call.account, call.token))
    result = {"status": "queued", "request_id": call.request_id, "model": call.model}
    return json_response(success(result), headers=headers)


def _poll(state: EmulatorState, call: Call, *, headers: dict[str, str]) -> Response:
    request_id = call.body["request_id"]
    batch, status = state.batches.advance(request_id)
    if batch is None:
        if state.variant.get("batch_unknown_id") == "404":
            return error_response(
                ErrorSpec(404, 7003, "Could not route to the request"),
                req_id=call.request_id,
                headers=headers,
            )
        return _fail(ErrorSpec(400, 5006, _NOT_FOUND), call, headers)
    if batch.model != call.model and state.variant.get("batch_poll_model") == "same":
        return _fail(ErrorSpec(400, 5006, _OTHER_MODEL), call, headers)
    if status != "done":
        pending = {"status": status, "request_id": request_id, "model": batch.model}
        if state.variant.get("batch_pending") == "bare":
            return json_response(pending, headers=headers)
        return json_response(success(pending), headers=headers)
    if batch.responses is None:
        _answer(state, batch)
    result = {"responses": batch.responses, "usage": batch.usage}
    headers = headers | {"cf-ai-neurons": f"{batch.neurons:.2f}"}
    return json_response(success(result), headers=headers)


def _answer(state: EmulatorState, batch: Batch) -> None:
    """Run every item once (the first poll that finds the batch done), newest id first."""
    model = catalogue.find(batch.model)
    embedding = model is not None and model.profile is Profile.EMBEDDING
    double = state.variant.get("batch_nesting") == "double" or (
        state.variant.get("batch_nesting") == "documented" and not embedding
    )
    responses: list[dict[str, Any]] = []
    prompt = completion = 0
    neurons = 0.0
    for index, item in reversed(list(enumerate(batch.items))):
        reference = item.get("external_reference")
        body = {k: v for k, v in item.items() if k != "external_reference"}
        outcome = _outcome(state, batch, body, reference)
        prompt += outcome.prompt_tokens
        completion += outcome.completion_tokens
        neurons += outcome.neurons
        responses.append(_entry(index, reference, outcome, double=double))
    batch.responses = responses
    batch.usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    batch.neurons = neurons


def _outcome(
    state: EmulatorState, batch: Batch, body: dict[str, Any], reference: object
) -> ItemOutcome:
    scripted = state.batches.failure_for(reference)
    if scripted is not None:
        return ItemOutcome(None, scripted)
    call = Call(
        kind=Kind.RUN,
        model=batch.model,
        body=body,
        raw_body=b"",
        headers={},
        request_id=cf_ray(),
        account=batch.account,
        token=batch.token,
    )
    return item_outcome(state, call)


def _entry(index: int, reference: object, outcome: ItemOutcome, *, double: bool) -> dict[str, Any]:
    ref = reference if isinstance(reference, str) else None
    if outcome.problem is not None:
        error = {"code": outcome.problem.code, "message": outcome.problem.message}
        return {
            "id": index,
            "result": None,
            "success": False,
            "errors": [error],
            "external_reference": ref,
        }
    result = {"result": outcome.result} if double else outcome.result
    return {"id": index, "result": result, "success": True, "external_reference": ref}
