"""Blind compare votes: what the user judged, turned into pairwise games for the leaderboard,
and kept in ``votes.json`` in the profile's data folder.

Why a JSON file and not a table in the chat database: votes are few (one per blind run), are
always read whole to fit the ratings, and are written once per vote; a file of their own needs
no migration of the chat store's schema, is replaced atomically (``paths.atomic_write_text``:
a crash leaves the old or the new file), and its format is the export format, so exporting
and importing votes are the same code.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from flarechat.core.conversation import new_id
from flarechat.core.lab.leaderboard import TIE, Game
from flarechat.paths import data_dir
from flarechat.versioned_file import VersionedJsonFile, parse_json

__all__ = [
    "VOTES_FILE",
    "VOTES_FORMAT",
    "Verdict",
    "Vote",
    "VoteBook",
    "VotesFormatError",
    "appearances",
    "games_of",
    "parse_votes",
    "votes_json",
]

log = logging.getLogger(__name__)

VOTES_FILE = "votes.json"
VOTES_FORMAT = "flarechat.votes"
VOTES_VERSION = 1


class Verdict(StrEnum):
    """What the user said about a blind run."""

    BEST = "best"  # one column was best (for two columns: "A is better")
    TIE = "tie"
    ALL_BAD = "all_bad"  # counted as a tie between every pair, and shown as such


class VotesFormatError(ValueError):
    """A votes file or import is not a Flarechat votes document; the message says why."""


@dataclass(frozen=True, slots=True)
class Vote:
    """One judged blind run: ``models`` in the order shown (A, B, …); ``winner`` indexes
    them for BEST, else None. ``conversation_id``/``message_ids`` point back at the replies."""

    models: tuple[str, ...]
    verdict: Verdict
    winner: int | None = None
    id: str = field(default_factory=new_id)
    at: float = field(default_factory=time.time)
    conversation_id: str | None = None
    message_ids: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.models) < 2:
            raise ValueError("A vote needs at least two columns.")
        best = self.verdict is Verdict.BEST
        if best != (self.winner is not None) or (
            self.winner is not None and not 0 <= self.winner < len(self.models)
        ):
            raise ValueError("A 'best' vote names one shown column; other verdicts none.")


def games_of(vote: Vote) -> list[Game]:
    """The pairwise games a vote stands for (columns of the same model tell nothing)."""
    models, games = vote.models, []
    for i in range(len(models)):
        for j in range(i + 1, len(models)):
            if models[i] == models[j]:
                continue
            if vote.winner is None:
                score = TIE
            elif vote.winner in (i, j):
                score = 1.0 if vote.winner == i else 0.0
            else:
                continue  # two losers: the vote does not order them
            games.append(Game(models[i], models[j], score))
    return games


def appearances(votes: Iterable[Vote]) -> dict[str, int]:
    """How many votes each model took part in."""
    return dict(Counter(m for vote in votes for m in set(vote.models)))


def _vote_json(vote: Vote) -> dict[str, Any]:
    return {
        "id": vote.id,
        "at": vote.at,
        "models": list(vote.models),
        "verdict": str(vote.verdict),
        "winner": vote.winner,
        "conversation_id": vote.conversation_id,
        "message_ids": list(vote.message_ids),
    }


def _vote_from(item: object) -> Vote:
    if not isinstance(item, dict):
        raise VotesFormatError("A vote is not an object.")
    models, winner = item.get("models"), item.get("winner")
    conversation_id, message_ids = item.get("conversation_id"), item.get("message_ids") or []
    try:
        if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
            raise ValueError("its models are not a list of names")
        if winner is not None and (not isinstance(winner, int) or isinstance(winner, bool)):
            raise ValueError("its winner is not a column number")
        if conversation_id is not None and not isinstance(conversation_id, str):
            raise ValueError("its conversation id is not text")
        if not isinstance(message_ids, list) or not all(isinstance(m, str) for m in message_ids):
            raise ValueError("its message ids are not a list of ids")
        at, vote_id = item.get("at"), item.get("id")
        return Vote(
            models=tuple(models),
            verdict=Verdict(str(item.get("verdict"))),
            winner=winner,
            id=vote_id if isinstance(vote_id, str) and vote_id else new_id(),
            at=float(at)
            if isinstance(at, int | float) and not isinstance(at, bool)
            else time.time(),
            conversation_id=conversation_id or None,
            message_ids=tuple(message_ids),
        )
    except (ValueError, OverflowError) as error:
        raise VotesFormatError(f"A vote cannot be read: {error}.") from error


def votes_json(votes: Sequence[Vote]) -> str:
    """The votes document (the file's content, and the export)."""
    return json.dumps(_document(votes), indent=2, ensure_ascii=False) + "\n"


def _document(votes: Sequence[Vote]) -> dict[str, Any]:
    return {
        "format": VOTES_FORMAT,
        "version": VOTES_VERSION,
        "votes": [_vote_json(v) for v in votes],
    }


def parse_votes(text: str) -> list[Vote]:
    """Votes from a votes document; VotesFormatError when it is not one."""
    try:
        document = parse_json(text)
    except (ValueError, RecursionError) as error:
        raise VotesFormatError("This file is not JSON (or is nested too deeply).") from error
    return votes_of(document)


def votes_of(document: object) -> list[Vote]:
    """Votes from a parsed votes document; VotesFormatError when it is not one."""
    if not isinstance(document, dict) or document.get("format") != VOTES_FORMAT:
        raise VotesFormatError("This file is not a Flarechat votes export.")
    items = document.get("votes")
    if not isinstance(items, list):
        raise VotesFormatError("The file has no list of votes.")
    return [_vote_from(item) for item in items]


class VoteBook:
    """The votes file, with the settings file's guards (``versioned_file``): a damaged one is
    moved aside, a newer one is read but never written, and nothing is written before it was
    read. ``problems`` says what the last read found, for the window to show. Plain blocking
    calls: the window runs them with ``asyncio.to_thread``."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else data_dir() / VOTES_FILE
        self._file = VersionedJsonFile(
            self.path, label="The votes file", version_key="version", version=VOTES_VERSION
        )
        self.problems: list[str] = []

    def load(self) -> list[Vote]:
        """Every vote; a missing file is none, an unreadable one is set aside (kept, renamed)."""
        document = self._file.read()
        self.problems = self._file.problems
        if document is None:
            return []
        try:
            return votes_of(document)
        except VotesFormatError as error:
            if self._file.read_only_reason is None:  # ours, damaged: kept aside
                self._file.set_aside(f"cannot be read ({error})")
            else:
                self.problems.append(f"The votes file cannot be read by this version: {error}")
            log.warning("votes file not used: %s", error)
            return []

    def add(self, vote: Vote) -> list[Vote]:
        """Store one more vote; returns them all. FileNotWritable (an OSError saying why)
        when the file is kept as it is."""
        votes = [*self.load(), vote]
        self._write(votes)
        return votes

    def merge(self, imported: Iterable[Vote]) -> int:
        """Add imported votes not already here (by id); how many were added."""
        votes = self.load()
        known = {v.id for v in votes}
        new: list[Vote] = []
        for vote in imported:
            if vote.id not in known:
                known.add(vote.id)
                new.append(vote)
        if new:
            self._write([*votes, *new])
        return len(new)

    def _write(self, votes: Sequence[Vote]) -> None:
        self._file.write(_document(votes))
