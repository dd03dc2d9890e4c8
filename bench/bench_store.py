"""Benchmark: open a 5,000-message conversation (load_tree + path) against a plain SELECT.

Prints times and ratios against baselines measured in the same run on the same file; no
thresholds (machines differ). Run: /work/venv/bin/python bench/bench_store.py [--messages N]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from flarechat.core.conversation import (
    ROLE_ASSISTANT,
    ROLE_USER,
    Conversation,
    ConversationTree,
    Message,
    new_id,
)
from flarechat.core.store import DB_FILENAME, ChatStore

DEFAULT_MESSAGES = 5000
REPEATS = 7
#: Every this many messages a reply is regenerated, so the tree has real branches.
BRANCH_EVERY = 50
SEARCH_TERM = "lorem"
BODY = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 8


def build_tree(count: int) -> ConversationTree:
    conv = Conversation(id=new_id(), title="Benchmark")
    tree = ConversationTree(conv)
    parent: str | None = None
    for index in range(count):
        role = ROLE_USER if index % 2 == 0 else ROLE_ASSISTANT
        msg = Message(
            new_id(),
            conv.id,
            parent,
            role,
            f"{index} {BODY}",
            created_at=index,
            usage={"total_tokens": index},
            request={"model": "@cf/bench"},
        )
        tree.add(msg)
        if index % BRANCH_EVERY == BRANCH_EVERY - 1 and parent is not None:
            tree.add(Message(new_id(), conv.id, parent, role, f"alt {index}", created_at=index))
        parent = msg.id
    return tree


def median_seconds(func: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def plain_select(path: Path, conversation_id: str) -> Callable[[], object]:
    conn = sqlite3.connect(path)

    def run() -> object:
        return conn.execute(
            "SELECT * FROM messages WHERE conversation_id = ? ORDER BY seq", (conversation_id,)
        ).fetchall()

    return run


def report(name: str, *, seconds: float, baseline: float) -> None:
    print(f"{name:<34} {seconds * 1000:9.2f} ms   x{seconds / baseline:6.2f} of baseline")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=DEFAULT_MESSAGES)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / DB_FILENAME
        tree = build_tree(args.messages)
        conv_id = tree.conversation.id
        with ChatStore(path) as store:
            start = time.perf_counter()
            store.insert_trees([tree])
            print(
                f"stored {len(tree)} messages in one transaction: "
                f"{(time.perf_counter() - start) * 1000:.0f} ms"
            )
            baseline = median_seconds(plain_select(path, conv_id))
            print(f"{'baseline: plain SELECT of the rows':<34} {baseline * 1000:9.2f} ms")
            loaded = store.load_tree(conv_id)
            last = loaded.last()
            assert last is not None
            cases: list[tuple[str, Callable[[], object]]] = [
                ("load_tree", lambda: store.load_tree(conv_id)),
                ("path() on the loaded tree", loaded.path),
                ("load_tree + path()", lambda: store.load_tree(conv_id).path()),
                (f"search({SEARCH_TERM!r}, limit=50)", lambda: store.search(SEARCH_TERM)),
                (
                    "save_partial (one streaming batch)",
                    lambda: store.save_partial(last.id, BODY * 4, ""),
                ),
            ]
            for name, func in cases:
                report(name, seconds=median_seconds(func), baseline=baseline)


if __name__ == "__main__":
    main()
