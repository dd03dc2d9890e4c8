"""The async Batch API (§11), embeddings by word (§12) and the deterministic judge."""

from __future__ import annotations

import json
import math
from typing import Any

import httpx
import pytest
from emulator_helpers import BGE, LLAMA, LLAMA_70B, ask, run_url

from flarechat.emulator.server import EmulatorServer

BGE_SMALL = "@cf/baai/bge-small-en-v1.5"


def _queue(emulator: EmulatorServer, model: str) -> str:
    return run_url(emulator, model) + "?queueRequest=true"


def _submit(
    emulator: EmulatorServer,
    http: httpx.Client,
    items: list[dict[str, Any]],
    model: str = LLAMA_70B,
) -> str:
    reply = http.post(_queue(emulator, model), json={"requests": items})
    assert reply.status_code == 200, reply.text
    result = reply.json()["result"]
    assert result["status"] == "queued"
    assert result["model"] == model
    request_id: str = result["request_id"]
    return request_id


def _poll(emulator: EmulatorServer, http: httpx.Client, request_id: str) -> httpx.Response:
    return http.post(_queue(emulator, LLAMA_70B), json={"request_id": request_id})


def test_batch_moves_queued_running_done(emulator: EmulatorServer, http: httpx.Client) -> None:
    emulator.state.set_batch_pace(queued=1, running=2)
    items = [{"prompt": f"case {n}", "external_reference": f"c{n}"} for n in range(3)]
    request_id = _submit(emulator, http, items)
    statuses = [_poll(emulator, http, request_id).json()["result"].get("status") for _ in range(3)]
    assert statuses == ["queued", "running", "running"]
    done = _poll(emulator, http, request_id)
    result = done.json()["result"]
    assert "status" not in result
    by_id = {entry["id"]: entry for entry in result["responses"]}
    assert [entry["id"] for entry in result["responses"]] == [2, 1, 0]  # map by id, not order
    assert {by_id[n]["external_reference"] for n in range(3)} == {"c0", "c1", "c2"}
    assert all(entry["success"] for entry in by_id.values())
    # text generation nests result.result as the docs' example does
    assert 'You asked: "case 1."' in by_id[1]["result"]["result"]["response"]
    assert result["usage"]["total_tokens"] > 0
    assert float(done.headers["cf-ai-neurons"]) > 0
    again = _poll(emulator, http, request_id).json()["result"]
    assert again["responses"] == result["responses"]  # results are kept, not re-run


def test_batch_answers_match_synchronous_ones(emulator: EmulatorServer, http: httpx.Client) -> None:
    request_id = _submit(emulator, http, [{"prompt": "same words", "seed": 7}])
    _poll(emulator, http, request_id)
    entry = _poll(emulator, http, request_id).json()["result"]["responses"][0]
    sync = http.post(run_url(emulator, LLAMA_70B), json={"prompt": "same words", "seed": 7})
    assert entry["result"]["result"]["response"] == sync.json()["result"]["response"]
    assert entry["external_reference"] is None


def test_partial_failures_are_items_with_success_false(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    emulator.state.fail_batch_items(["bad"], code=3040, status=429)
    items: list[dict[str, Any]] = [
        {"prompt": "fine", "external_reference": "ok"},
        {"prompt": "scripted", "external_reference": "bad"},
        {"max_tokens": 5, "external_reference": "no-prompt"},
    ]
    request_id = _submit(emulator, http, items)
    _poll(emulator, http, request_id)
    responses = _poll(emulator, http, request_id).json()["result"]["responses"]
    by_ref = {entry["external_reference"]: entry for entry in responses}
    assert by_ref["ok"]["success"] is True
    assert by_ref["bad"]["success"] is False
    assert by_ref["bad"]["errors"][0]["code"] == 3040
    assert by_ref["no-prompt"]["errors"][0]["code"] == 5006


@pytest.mark.parametrize(("variant", "status", "code"), [("400", 400, 5006), ("404", 404, 7003)])
def test_unknown_request_id_is_refused(
    emulator: EmulatorServer, http: httpx.Client, variant: str, status: int, code: int
) -> None:
    emulator.state.set_variant("batch_unknown_id", variant)
    reply = _poll(emulator, http, "00000000-0000-4000-8000-000000000000")
    assert reply.status_code == status
    assert reply.json()["errors"][0]["code"] == code


def test_model_without_batch_support_is_bad_input(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    reply = http.post(_queue(emulator, LLAMA), json={"requests": [{"prompt": "x"}]})
    assert reply.status_code == 400
    assert reply.json()["errors"][0]["code"] == 5006
    assert emulator.state.batch_count == 0


def test_oversize_batch_is_too_large(emulator: EmulatorServer, http: httpx.Client) -> None:
    big = [{"prompt": "x" * 1_000_000} for _ in range(11)]
    reply = http.post(_queue(emulator, LLAMA_70B), json={"requests": big})
    assert reply.status_code == 413
    assert reply.json()["errors"][0]["code"] == 3006


def test_pending_and_nesting_variants(emulator: EmulatorServer, http: httpx.Client) -> None:
    emulator.state.set_variant("batch_pending", "bare")
    emulator.state.set_variant("batch_nesting", "single")
    request_id = _submit(emulator, http, [{"prompt": "hello"}])
    pending = _poll(emulator, http, request_id).json()
    assert pending == {"status": "running", "request_id": request_id, "model": LLAMA_70B}
    entry = _poll(emulator, http, request_id).json()["result"]["responses"][0]
    assert "response" in entry["result"]


def test_poll_to_another_model_url(emulator: EmulatorServer, http: httpx.Client) -> None:
    request_id = _submit(emulator, http, [{"prompt": "hello"}])
    other = http.post(_queue(emulator, LLAMA), json={"request_id": request_id})
    assert other.status_code == 200  # resolved by request_id alone (default)
    emulator.state.set_variant("batch_poll_model", "same")
    refused = http.post(_queue(emulator, LLAMA), json={"request_id": request_id})
    assert refused.status_code == 400


def test_embedding_batch_nests_once(emulator: EmulatorServer, http: httpx.Client) -> None:
    request_id = _submit(emulator, http, [{"text": ["a cat"]}], model=BGE_SMALL)
    http.post(_queue(emulator, BGE_SMALL), json={"request_id": request_id})
    done = http.post(_queue(emulator, BGE_SMALL), json={"request_id": request_id}).json()
    result = done["result"]["responses"][0]["result"]
    assert result["shape"] == [1, 384]


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def test_embeddings_share_direction_when_texts_share_words(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    texts = ["the capital of France is Paris", "Paris is the capital of France", "bananas"]
    reply = http.post(run_url(emulator, BGE_SMALL), json={"text": texts})
    result = reply.json()["result"]
    assert result["shape"] == [3, 384]
    assert result["pooling"] == "mean"
    same, other = result["data"][0], result["data"][2]
    assert _cosine(same, result["data"][1]) > 0.99
    assert abs(_cosine(same, other)) < 0.5
    m3 = http.post(run_url(emulator, BGE), json={"text": "x"}).json()["result"]
    assert m3["shape"] == [1, 1024]
    assert m3["pooling"] == "cls"


def _grade(http: httpx.Client, emulator: EmulatorServer, rubric: str, output: str) -> Any:
    question = f"Grade it.\n<rubric>{rubric}</rubric>\n<output>{output}</output>"
    reply = http.post(run_url(emulator, LLAMA), json=ask(question))
    return json.loads(reply.json()["result"]["response"])


def test_judge_grades_are_deterministic(emulator: EmulatorServer, http: httpx.Client) -> None:
    good = _grade(http, emulator, "Paris and France", "Paris is in France.")
    assert good == {
        "score": 1.0,
        "pass": True,
        "reason": "The output covers every point of the rubric.",
    }
    half = _grade(http, emulator, "Paris and Lyon", "Paris.")
    assert half["score"] == 0.5
    assert half["pass"] is True
    assert "lyon" in half["reason"]
    bad = _grade(http, emulator, "bananas", "Paris.")
    assert bad["score"] == 0.0
    assert bad["pass"] is False
    assert _grade(http, emulator, "bananas", "Paris.") == bad
