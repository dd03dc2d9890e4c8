"""Experiments: a 200-cell live run committed cell by cell, against a plain loop of the same
requests.

The emulator runs in a process of its own (``emulator_process.py``), unpaced. The runner plans
200 cells (200 cases x 1 variant, three text assertions), streams them through the model gate
(two at a time), hashes each request, commits each finished cell to a fresh SQLite file and
grades it. The baseline sends the very same ``ChatRequest``s with the same client, two at a
time, and reads each stream to its end, storing nothing. The ratio is what running an
experiment costs over just sending its requests; the target is 1.5x.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections import deque
from pathlib import Path

from common import Result
from emulator_process import EmulatorProcess
from flarechat.api.client import WorkersAIClient
from flarechat.api.config import ChatRequest, Connection, Secret
from flarechat.api.retry import RetryPolicy
from flarechat.core.experiments.runner import ExperimentRunner, RunOptions
from flarechat.core.experiments.spec import AssertionSpec, Case, Experiment, Variant
from flarechat.core.session.gate import ModelGate
from flarechat.core.store import ExperimentStore
from flarechat.emulator import DEMO_ACCOUNT_ID, DEMO_TOKEN

__all__ = ["run"]

CELLS = 200
QUICK_CELLS = 60
REPEATS, QUICK_REPEATS = 3, 1
PER_MODEL = 2
TARGET_RATIO = 1.5
MODEL = "@cf/meta/llama-3.1-8b-instruct-fast"


def _experiment(cells: int) -> Experiment:
    return Experiment(
        name="bench",
        variants=(
            Variant(
                "bench",
                MODEL,
                "Case {{n}}: what is the capital of {{country}}?",
                params={"max_tokens": 64},
            ),
        ),
        cases=tuple(Case({"n": str(i), "country": f"Land {i}"}) for i in range(cells)),
        asserts=(
            AssertionSpec("icontains", "{{country}}"),
            AssertionSpec("not-contains", "Atlantis"),
            AssertionSpec("length", minimum=10),
        ),
    )


async def _plain(client: WorkersAIClient, conn: Connection, requests: list[ChatRequest]) -> float:
    queue = deque(requests)

    async def worker() -> None:
        while queue:
            request = queue.popleft()
            async for _event in client.stream_reply(conn, request):
                pass

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(PER_MODEL)))
    return time.perf_counter() - start


async def _measure(cells: int, repeats: int, conn: Connection) -> tuple[float, float]:
    spec = _experiment(cells)
    runs, plains = [], []
    async with WorkersAIClient() as client:
        for _ in range(repeats):
            with tempfile.TemporaryDirectory() as folder:
                store = ExperimentStore(Path(folder) / "bench.sqlite3")
                runner = ExperimentRunner(
                    spec,
                    client=client,
                    conn=conn,
                    store=store,
                    policy=RetryPolicy(),
                    gate=ModelGate(per_model=PER_MODEL),
                )
                requests = [c.request for c in runner.plan()]
                plains.append(await _plain(client, conn, requests))
                start = time.perf_counter()
                result = await runner.run(RunOptions())
                runs.append(time.perf_counter() - start)
                store.close()
                if result.status != "done":
                    raise RuntimeError(f"the bench run ended {result.status}")
    return statistics.median(runs), statistics.median(plains)


def run(quick: bool) -> list[Result]:
    cells = QUICK_CELLS if quick else CELLS
    repeats = QUICK_REPEATS if quick else REPEATS
    with EmulatorProcess(tokens_per_second=1_000_000, slots=64) as emu:
        conn = Connection(
            account_id=DEMO_ACCOUNT_ID,
            token=Secret(DEMO_TOKEN),
            api_base=emu.api_base,
            gateway_base=emu.gateway_base,
        )
        runner_s, plain_s = asyncio.run(_measure(cells, repeats, conn))
    note = (
        f"{cells} cells, {PER_MODEL} at a time, each committed to SQLite and graded; "
        f"{cells / runner_s:,.0f} cells/s; baseline: the same requests, nothing stored"
    )
    name = f"experiments.run_{cells}_cells"
    return [Result(name, runner_s * 1000, plain_s * 1000, TARGET_RATIO, "ms", note=note)]
