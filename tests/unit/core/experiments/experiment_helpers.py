"""Experiments against the emulator: a connection, a real store file, a runner, and counts of
the requests the emulator saw."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flarechat.api.client import WorkersAIClient
from flarechat.api.config import Connection, Secret
from flarechat.api.models import ModelInfo
from flarechat.api.retry import RetryPolicy
from flarechat.core.experiments.runner import ExperimentRunner, RunEvent
from flarechat.core.experiments.spec import (
    AssertionSpec,
    Case,
    Experiment,
    Variant,
)
from flarechat.core.session.gate import ModelGate
from flarechat.core.store import ExperimentStore
from flarechat.emulator import DEMO_ACCOUNT_ID, DEMO_TOKEN

if TYPE_CHECKING:
    from flarechat.emulator.server import EmulatorServer

#: Retries at once: the tests count attempts, they do not wait for them.
FAST = RetryPolicy(base_delay=0.01, max_delay=0.02)
LLAMA_8B = "@cf/meta/llama-3.1-8b-instruct-fast"  # no Batch API
LLAMA_70B = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"  # takes the Batch API
COUNTRIES = ("France", "Japan", "Peru", "Chad", "Fiji")


def emulator_conn(emulator: EmulatorServer) -> Connection:
    return Connection(
        account_id=DEMO_ACCOUNT_ID,
        token=Secret(DEMO_TOKEN),
        api_base=emulator.api_base,
        gateway_base=emulator.gateway_base,
    )


def experiment(
    *,
    models: Sequence[str] = (LLAMA_8B, LLAMA_70B),
    cases: int = 3,
    judge: bool = True,
    similar: bool = True,
    repeat: int = 1,
) -> Experiment:
    """Capitals: the emulator's reply quotes the question, so ``{{country}}`` is in it and
    "Atlantis" is not; the judge's rubric words are chosen to pass on some cases only."""
    asserts = [
        AssertionSpec("icontains", "{{country}}", weight=2),
        AssertionSpec("not-contains", "Atlantis"),
        AssertionSpec("length", minimum=10),
        AssertionSpec("latency", maximum=60_000),
    ]
    if judge:
        asserts.append(AssertionSpec("llm-rubric", "asked capital {{country}}", threshold=0.6))
    if similar:
        asserts.append(AssertionSpec("similar", "{{expected}}", threshold=0.0))
    return Experiment(
        name="capitals",
        variants=tuple(
            Variant(
                name=model.rsplit("/", 1)[-1],
                model=model,
                prompt="What is the capital of {{country}}?",
                params={"max_tokens": 24, "temperature": 0},
            )
            for model in models
        ),
        cases=tuple(
            Case({"country": c}, expected=f"The capital of {c}", origin=f"cases.csv:{i + 2}")
            for i, c in enumerate(COUNTRIES[:cases])
        ),
        asserts=tuple(asserts),
        threshold=0.75,
        repeat=repeat,
        source="capitals.yaml",
    )


async def catalogue(client: WorkersAIClient, conn: Connection) -> dict[str, ModelInfo]:
    return {m.name: m for m in await client.list_models(conn)}


def runner(
    spec: Experiment,
    *,
    client: WorkersAIClient,
    conn: Connection,
    store: ExperimentStore,
    models: dict[str, ModelInfo],
    on_event: Callable[[RunEvent], None] | None = None,
) -> ExperimentRunner:
    return ExperimentRunner(
        spec,
        client=client,
        conn=conn,
        store=store,
        policy=FAST,
        models=models,
        gate=ModelGate(per_model=1),
        on_event=on_event,
    )


def open_store(folder: Path) -> ExperimentStore:
    return ExperimentStore(folder / "flarechat.sqlite3")


def run_bodies(emulator: EmulatorServer) -> list[dict[str, Any]]:
    """The bodies of every /ai/run request (chat, judge, batch, embeddings), in order."""
    bodies = []
    for request in emulator.state.requests:
        if "/ai/run/" in request.path:
            body = json.loads(request.body or b"{}")
            bodies.append({"path": request.path, **body})
    return bodies


def chat_prompts(emulator: EmulatorServer) -> list[str]:
    """The last user message of every synchronous chat request (judge prompts included)."""
    prompts = []
    for body in run_bodies(emulator):
        messages = body.get("messages")
        if isinstance(messages, list) and messages:
            prompts.append(str(messages[-1].get("content")))
    return prompts
