"""Profiles the benchmarks open: many conversations written straight through the store API."""

from __future__ import annotations

import os
from pathlib import Path

from bench_open import build_tree
from flarechat.core.conversation import ConversationTree

__all__ = ["HOME_ENV", "make_profile"]

HOME_ENV = "FLARECHAT_HOME"
#: Trees are written in batches so a 50,000-message profile never sits in memory twice.
BATCH = 20


def make_profile(home: Path, *, conversations: int, messages: int, last_messages: int) -> None:
    """``conversations`` conversations of ``messages`` each, the newest one ``last_messages``.

    Written through ChatStore into ``home``'s database (the path FLARECHAT_HOME gives).
    """
    from flarechat.core.store import ChatStore, default_path

    previous = os.environ.get(HOME_ENV)
    os.environ[HOME_ENV] = str(home)
    try:
        path = default_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        with ChatStore(path) as store:
            batch: list[ConversationTree] = []
            for index in range(conversations):
                newest = index == conversations - 1
                count = last_messages if newest else messages
                batch.append(build_tree(count, title=f"Conversation {index + 1}"))
                if len(batch) == BATCH or newest:
                    store.insert_trees(batch)
                    batch = []
    finally:
        if previous is None:
            os.environ.pop(HOME_ENV, None)
        else:
            os.environ[HOME_ENV] = previous
