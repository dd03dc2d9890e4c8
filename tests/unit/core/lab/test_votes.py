"""Blind votes: their pairwise games, the votes file (atomic, set aside when unreadable),
export and import, and the leaderboard they build."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from flarechat.core.lab.leaderboard import Game, rank
from flarechat.core.lab.votes import (
    VOTES_FILE,
    Verdict,
    Vote,
    VoteBook,
    VotesFormatError,
    appearances,
    games_of,
    parse_votes,
    votes_json,
)
from flarechat.paths import data_dir


def test_a_best_vote_beats_every_other_column_and_leaves_the_losers_unordered() -> None:
    vote = Vote(("a", "b", "c"), Verdict.BEST, winner=1)
    assert games_of(vote) == [Game("a", "b", 0.0), Game("b", "c", 1.0)]


def test_two_columns_a_better_or_b_better() -> None:
    assert games_of(Vote(("a", "b"), Verdict.BEST, winner=0)) == [Game("a", "b", 1.0)]
    assert games_of(Vote(("a", "b"), Verdict.BEST, winner=1)) == [Game("a", "b", 0.0)]


@pytest.mark.parametrize("verdict", [Verdict.TIE, Verdict.ALL_BAD])
def test_tie_and_all_bad_are_half_a_win_for_every_pair(verdict: Verdict) -> None:
    games = games_of(Vote(("a", "b", "c", "d"), verdict))
    assert len(games) == 6
    assert {g.score_a for g in games} == {0.5}


def test_columns_of_the_same_model_are_no_game() -> None:
    assert games_of(Vote(("a", "a"), Verdict.BEST, winner=0)) == []
    assert games_of(Vote(("a", "a", "b"), Verdict.BEST, winner=2)) == [
        Game("a", "b", 0.0),
        Game("a", "b", 0.0),
    ]


def test_a_vote_must_be_consistent() -> None:
    with pytest.raises(ValueError, match="two columns"):
        Vote(("a",), Verdict.TIE)
    with pytest.raises(ValueError, match="best"):
        Vote(("a", "b"), Verdict.BEST)
    with pytest.raises(ValueError, match="best"):
        Vote(("a", "b"), Verdict.TIE, winner=0)
    with pytest.raises(ValueError, match="best"):
        Vote(("a", "b"), Verdict.BEST, winner=2)


def test_votes_build_the_leaderboard() -> None:
    votes = [Vote(("good", "bad"), Verdict.BEST, winner=0) for _ in range(4)]
    votes += [Vote(("bad", "good"), Verdict.TIE), Vote(("bad", "good", "ok"), Verdict.ALL_BAD)]
    standings = rank([g for v in votes for g in games_of(v)], votes=appearances(votes))
    assert standings[0].model == "good"
    by_model = {s.model: s for s in standings}
    assert by_model["good"].votes == 6
    assert by_model["ok"].votes == 1
    assert (by_model["good"].wins, by_model["good"].ties) == (4, 3)  # all bad: two pairs


def test_the_votes_file_lives_in_the_profile_and_round_trips(isolated_profile: Path) -> None:
    book = VoteBook()
    assert book.path == data_dir() / VOTES_FILE
    assert str(book.path).startswith(str(isolated_profile))
    assert book.load() == []
    first = Vote(("a", "b"), Verdict.BEST, winner=1, conversation_id="c1", message_ids=("m", "n"))
    book.add(first)
    second = Vote(("a", "b", "c"), Verdict.ALL_BAD)
    assert book.add(second) == [first, second]
    assert VoteBook().load() == [first, second]
    if os.name == "posix":
        assert book.path.stat().st_mode & 0o777 == 0o600
    assert not [p for p in book.path.parent.iterdir() if p.name.endswith(".tmp")]


def test_an_unreadable_votes_file_is_set_aside_not_lost(tmp_path: Path) -> None:
    path = tmp_path / VOTES_FILE
    path.write_text("{not json", encoding="utf-8")
    book = VoteBook(path)
    assert book.load() == []
    kept = [p for p in tmp_path.iterdir() if p.name.startswith(f"{VOTES_FILE}.corrupt")]
    assert len(kept) == 1
    assert kept[0].read_text(encoding="utf-8") == "{not json"


def test_export_then_import_adds_only_new_votes(tmp_path: Path) -> None:
    mine = VoteBook(tmp_path / "mine.json")
    theirs = VoteBook(tmp_path / "theirs.json")
    shared = Vote(("a", "b"), Verdict.TIE)
    mine.add(shared)
    theirs.add(shared)
    theirs.add(Vote(("a", "c"), Verdict.BEST, winner=0))
    exported = votes_json(theirs.load())
    assert json.loads(exported)["format"] == "flarechat.votes"
    assert mine.merge(parse_votes(exported)) == 1
    assert mine.merge(parse_votes(exported)) == 0
    assert [v.id for v in mine.load()] == [v.id for v in theirs.load()]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[]", "not a Flarechat votes export"),
        ("nope", "not JSON"),
        ('{"format": "flarechat.votes", "votes": 3}', "no list"),
        ('{"format": "flarechat.votes", "votes": [{"models": "ab"}]}', "cannot be read"),
        (
            '{"format": "flarechat.votes", "votes": [{"models": ["a","b"], "verdict": "meh"}]}',
            "cannot be read",
        ),
    ],
)
def test_a_bad_import_says_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(VotesFormatError, match=problem):
        parse_votes(text)
