"""The blind-vote leaderboard: Bradley-Terry ratings (fitted by MM iterations) with a 95 %
margin from the Fisher information, win rates and vote counts per model. Pure arithmetic.

A vote between n columns becomes pairwise games (``Game``): the winner beats each other
column; a tie or "all bad" is half a win for each side of every pair. Bradley-Terry gives each
model a strength p with P(i beats j) = p_i / (p_i + p_j); ratings are shown on the Elo scale
(400 points = 10:1 odds) and centred so the field's mean is BASE_RATING. A weak prior — one
virtual tie per model against a reference of strength 1 — keeps a model that only ever won
(or lost) at a finite rating.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

__all__ = [
    "BASE_RATING",
    "ELO_SCALE",
    "Game",
    "Standing",
    "fit_strengths",
    "log_strength_errors",
    "rank",
    "standings_csv",
    "standings_json",
]

BASE_RATING = 1000.0
#: Elo points per unit of ln(strength): 400 points are odds of 10 to 1.
ELO_SCALE = 400.0 / math.log(10.0)
#: Virtual games each model plays (as ties) against the BASE_RATING reference.
PRIOR_GAMES = 1.0
#: A 95 % interval is this many standard errors either side.
Z_95 = 1.959964
MAX_ITERATIONS = 10_000
TOLERANCE = 1e-10
TIE = 0.5
RATING_DECIMALS = 1
RATE_DECIMALS = 4
_REFERENCE = 1.0  # the reference player's strength (rating BASE_RATING)


@dataclass(frozen=True, slots=True)
class Game:
    """One pairwise result: ``score_a`` is 1 when ``a`` won, 0.5 a tie, 0 when ``b`` won."""

    a: str
    b: str
    score_a: float


@dataclass(frozen=True, slots=True)
class Standing:
    """One model's row: ``rating`` ± ``margin`` (95 %), from ``games`` pairwise results in
    ``votes`` votes; ``win_rate`` counts ties as half a win."""

    rank: int
    model: str
    rating: float
    margin: float
    win_rate: float
    votes: int
    games: int
    wins: int
    ties: int
    losses: int


def _tally(games: Iterable[Game]) -> tuple[list[str], dict[tuple[int, int], list[float]]]:
    """Models in name order and, per ordered index pair (i < j), [games, score of i]."""
    games = [g for g in games if g.a != g.b]
    models = sorted({g.a for g in games} | {g.b for g in games})
    index = {m: i for i, m in enumerate(models)}
    pairs: dict[tuple[int, int], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for game in games:
        i, j, score = index[game.a], index[game.b], game.score_a
        if i > j:
            i, j, score = j, i, 1.0 - score
        pairs[(i, j)][0] += 1.0
        pairs[(i, j)][1] += score
    return models, dict(pairs)


def _mm_step(p: list[float], pairs: Mapping[tuple[int, int], list[float]]) -> list[float]:
    """One minorise-maximise update (Hunter 2004): p_i = W_i / Σ_j n_ij / (p_i + p_j)."""
    wins = [PRIOR_GAMES * TIE] * len(p)
    denominators = [PRIOR_GAMES / (x + _REFERENCE) for x in p]
    for (i, j), (n, score_i) in pairs.items():
        wins[i] += score_i
        wins[j] += n - score_i
        share = n / (p[i] + p[j])
        denominators[i] += share
        denominators[j] += share
    return [w / d for w, d in zip(wins, denominators, strict=True)]


def fit_strengths(games: Iterable[Game]) -> dict[str, float]:
    """Each model's Bradley-Terry strength (the reference is 1.0), by MM iterations."""
    models, pairs = _tally(games)
    p = [1.0] * len(models)
    for _ in range(MAX_ITERATIONS):
        updated = _mm_step(p, pairs)
        change = max((abs(math.log(a / b)) for a, b in zip(updated, p, strict=True)), default=0)
        p = updated
        if change < TOLERANCE:
            break
    return dict(zip(models, p, strict=True))


def _inverse(matrix: list[list[float]]) -> list[list[float]]:
    """Gauss-Jordan inverse of a small symmetric positive-definite matrix."""
    size = len(matrix)
    rows = [[*row, *(1.0 if c == r else 0.0 for c in range(size))] for r, row in enumerate(matrix)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(rows[r][col]))
        rows[col], rows[pivot] = rows[pivot], rows[col]
        lead = rows[col][col]
        rows[col] = [x / lead for x in rows[col]]
        for r in range(size):
            if r != col and (factor := rows[r][col]):
                rows[r] = [x - factor * y for x, y in zip(rows[r], rows[col], strict=True)]
    return [row[size:] for row in rows]


def log_strength_errors(strengths: Mapping[str, float], games: Iterable[Game]) -> dict[str, float]:
    """Standard errors of each model's ln(strength) relative to the mean of all of them.

    From the inverse of the Fisher information (the prior's virtual games included, so it is
    always invertible), projected on the centred contrast: how far a model stands from the
    field is what the votes measure; the field's level is only the prior's convention.
    """
    models, pairs = _tally(games)
    p = [strengths[m] for m in models]
    info = [[0.0] * len(models) for _ in models]
    for i, x in enumerate(p):
        info[i][i] += PRIOR_GAMES * x * _REFERENCE / (x + _REFERENCE) ** 2
    for (i, j), (n, _score) in pairs.items():
        c = n * p[i] * p[j] / (p[i] + p[j]) ** 2
        info[i][i] += c
        info[j][j] += c
        info[i][j] -= c
        info[j][i] -= c
    covariance = _inverse(info) if models else []
    size = len(models)
    errors = {}
    for i, model in enumerate(models):
        v = [(1.0 if k == i else 0.0) - 1.0 / size for k in range(size)]
        variance = sum(v[a] * covariance[a][b] * v[b] for a in range(size) for b in range(size))
        errors[model] = math.sqrt(max(0.0, variance))
    return errors


def _records(games: Sequence[Game]) -> dict[str, list[int]]:
    """Per model: [wins, ties, losses] over its pairwise games."""
    records: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for game in games:
        if game.a == game.b:
            continue
        for model, score in ((game.a, game.score_a), (game.b, 1.0 - game.score_a)):
            records[model][0 if score > TIE else 1 if score == TIE else 2] += 1
    return records


def rank(games: Iterable[Game], *, votes: Mapping[str, int] | None = None) -> list[Standing]:
    """The leaderboard, best first (rating, then name); ``votes``: votes each model was in."""
    games = list(games)
    strengths = fit_strengths(games)
    errors = log_strength_errors(strengths, games)
    records = _records(games)
    centre = sum(math.log(x) for x in strengths.values()) / max(1, len(strengths))
    rows = []
    for model, strength in strengths.items():
        wins, ties, losses = records[model]
        played = wins + ties + losses
        rows.append(
            (
                round(BASE_RATING + ELO_SCALE * (math.log(strength) - centre), RATING_DECIMALS),
                model,
                round(Z_95 * ELO_SCALE * errors[model], RATING_DECIMALS),
                round((wins + TIE * ties) / played, RATE_DECIMALS) if played else 0.0,
                (votes or {}).get(model, played),
                (wins, ties, losses),
            )
        )
    rows.sort(key=lambda row: (-row[0], row[1]))
    return [
        Standing(n, model, rating, margin, rate, count, sum(wtl), *wtl)
        for n, (rating, model, margin, rate, count, wtl) in enumerate(rows, start=1)
    ]


def standings_csv(rows: Sequence[Standing]) -> str:
    """The leaderboard as CSV, one model a row, with a header."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    fields = list(Standing.__dataclass_fields__)
    writer.writerow(fields)
    for row in rows:
        writer.writerow([getattr(row, name) for name in fields])
    return out.getvalue()


def standings_json(rows: Sequence[Standing]) -> str:
    """The leaderboard as JSON, with how the ratings were computed."""
    document = {
        "format": "flarechat.leaderboard",
        "method": "Bradley-Terry (MM), ties as half wins, 95% margin from Fisher information",
        "base_rating": BASE_RATING,
        "standings": [asdict(row) for row in rows],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
