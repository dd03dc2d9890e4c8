"""The leaderboard's arithmetic: Bradley-Terry by MM with ties as half wins, and its margins."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

from flarechat.core.lab.leaderboard import (
    BASE_RATING,
    ELO_SCALE,
    Game,
    fit_strengths,
    rank,
    standings_csv,
    standings_json,
)


def _games(a: str, b: str, *, wins: int, losses: int, ties: int = 0) -> list[Game]:
    return [Game(a, b, 1.0)] * wins + [Game(a, b, 0.0)] * losses + [Game(a, b, 0.5)] * ties


def test_symmetric_wins_give_equal_ratings_at_the_base() -> None:
    games = _games("x", "y", wins=7, losses=7)
    standings = {s.model: s for s in rank(games)}
    assert standings["x"].rating == standings["y"].rating == BASE_RATING
    assert standings["x"].win_rate == standings["y"].win_rate == 0.5


def test_a_cycle_of_equal_wins_rates_everyone_equally() -> None:
    games = [*_games("a", "b", wins=3, losses=0), *_games("b", "c", wins=3, losses=0)]
    games += _games("c", "a", wins=3, losses=0)
    ratings = {s.rating for s in rank(games)}
    assert ratings == {BASE_RATING}


def test_a_dominant_model_ranks_first_and_the_order_follows_the_results() -> None:
    games = [
        *_games("strong", "middle", wins=8, losses=2),
        *_games("strong", "weak", wins=9, losses=1),
        *_games("middle", "weak", wins=7, losses=3),
    ]
    standings = rank(games)
    assert [s.model for s in standings] == ["strong", "middle", "weak"]
    assert [s.rank for s in standings] == [1, 2, 3]
    assert standings[0].wins == 17
    assert standings[0].losses == 3
    assert standings[0].win_rate == pytest.approx(17 / 20)


def test_ties_count_as_half_a_win() -> None:
    with_ties = rank(_games("a", "b", wins=1, losses=0, ties=2))
    as_wins = rank(_games("a", "b", wins=2, losses=1))
    assert [(s.model, s.rating) for s in with_ties] == [(s.model, s.rating) for s in as_wins]
    leader = with_ties[0]
    assert (leader.wins, leader.ties, leader.losses) == (1, 2, 0)
    assert leader.win_rate == pytest.approx(2 / 3, abs=1e-4)


def test_the_fit_is_the_bradley_terry_maximum_with_its_prior() -> None:
    """Two models, a beat b 3 times of 4: the MM fixed point solves the likelihood equations
    W_i = sum over games of p_i / (p_i + p_j), counting the prior's virtual tie at 1.0."""
    p = fit_strengths(_games("a", "b", wins=3, losses=1))
    for me, other, wins in (("a", "b", 3.5), ("b", "a", 1.5)):
        expected = 4 * p[me] / (p[me] + p[other]) + p[me] / (p[me] + 1.0)
        assert wins == pytest.approx(expected, rel=1e-8)


def test_a_model_that_only_wins_keeps_a_finite_rating() -> None:
    standings = rank(_games("a", "b", wins=30, losses=0))
    assert all(math.isfinite(s.rating) and math.isfinite(s.margin) for s in standings)
    assert standings[0].model == "a"
    assert standings[0].rating > BASE_RATING > standings[1].rating


def test_uncertainty_shrinks_with_more_votes() -> None:
    few = {s.model: s for s in rank(_games("a", "b", wins=6, losses=4))}
    many = {s.model: s for s in rank(_games("a", "b", wins=60, losses=40))}
    more = {s.model: s for s in rank(_games("a", "b", wins=600, losses=400))}
    for model in ("a", "b"):
        assert few[model].margin > many[model].margin > more[model].margin > 0
    # ~1/sqrt(n): ten times the votes is about a third of the margin
    assert many["a"].margin / more["a"].margin == pytest.approx(math.sqrt(10), rel=0.1)
    # and the rating converges on the 60 % odds: ln(1.5) apart on the Elo scale
    assert more["a"].rating - more["b"].rating == pytest.approx(ELO_SCALE * math.log(1.5), rel=0.02)


def test_games_between_one_model_and_itself_are_ignored_and_votes_are_passed_through() -> None:
    standings = rank([Game("a", "a", 1.0), *_games("a", "b", wins=1, losses=1)], votes={"a": 5})
    by_model = {s.model: s for s in standings}
    assert by_model["a"].games == 2
    assert by_model["a"].votes == 5
    assert by_model["b"].votes == 2  # no count given: its games


def test_no_games_no_rows() -> None:
    assert rank([]) == []


def test_csv_and_json_hold_every_row() -> None:
    standings = rank(_games("a", "b", wins=2, losses=1))
    rows = list(csv.DictReader(io.StringIO(standings_csv(standings))))
    assert [r["model"] for r in rows] == ["a", "b"]
    assert float(rows[0]["rating"]) == standings[0].rating
    document = json.loads(standings_json(standings))
    assert document["format"] == "flarechat.leaderboard"
    assert [r["model"] for r in document["standings"]] == ["a", "b"]
    assert document["standings"][0]["margin"] == standings[0].margin
