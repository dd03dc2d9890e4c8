"""Deterministic, readable replies: Markdown with a heading, list, code block and table."""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Reply",
    "compose",
    "continuation",
    "last_user_text",
    "prompt_tokens",
    "rest_of",
    "split_think",
    "thought",
    "tokenize",
]

#: One streamed "token": optional leading whitespace and up to this many visible characters.
_MAX_TOKEN_CHARS = 10
_TOKEN = re.compile(rf"\s*\S{{1,{_MAX_TOKEN_CHARS}}}|\s+")
_WORD = re.compile(r"\S+")
#: Text counted per findall call (the GIL is free between calls).
_COUNT_SLICE_CHARS = 32_000
_ECHO_CHARS = 80
#: A question containing the word "long" gets this many extra numbered steps (beyond 256 tokens).
_LONG_STEPS = 30
_LONG = re.compile(r"\blong\b", re.IGNORECASE)
#: A user turn asking the model to go on with the reply before it ("Continue exactly where you
#: stopped."): a model told so picks up where that reply ends.
_GO_ON = re.compile(r"^\s*(please\s+)?(continue|go on|keep going)\b", re.IGNORECASE)
#: Chat templates add a few tokens per message plus a fixed preamble.
_TOKENS_PER_MESSAGE = 4
_TEMPLATE_TOKENS = 8

_TOPICS = (
    ("Streaming replies", "tokens arrive as server-sent events"),
    ("Capacity and queues", "each model serves a few requests at a time"),
    ("Gateway caching", "identical requests can be answered from the cache"),
    ("Token budgets", "max_tokens caps how long a reply may grow"),
)
_POINTS = (
    "Keep one HTTP client for the whole session.",
    "Send an explicit `max_tokens` with every request.",
    "Retry capacity errors only before the first token.",
    "Show the partial reply if the stream is interrupted.",
    "Never write the API token into a log line.",
    "Prefer the queue over failing fast when you can wait.",
)
_SNIPPETS = (
    ("def greet(name: str) -> str:", '    return f"Hello, {name}!"'),
    ("def backoff(attempt: int) -> float:", "    return min(30.0, 2.0 ** attempt)"),
    ("def tokens(text: str) -> list[str]:", "    return text.split()"),
)
_ROWS = (
    ("Legacy", "`response`", "yes"),
    ("OpenAI", "`choices[0].delta`", "yes"),
    ("Think", "`<think>` inline", "yes"),
    ("No-stream", "`choices[0].message`", "no"),
)


@dataclass(frozen=True, slots=True)
class Reply:
    """What the model "thinks" (may be empty) and what it answers."""

    reasoning: str
    answer: str


def _rng(*parts: object) -> random.Random:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


#: Extra thinking at high effort (low effort keeps only the first sentence).
_HIGH_EFFORT = (
    " First I will restate the question in my own words, then check every part of the answer "
    "against it: the heading, the list, the code and the table. Finally I will make sure "
    "nothing contradicts what was said earlier in the conversation."
)


def thought(question: str, effort: str, *, plan: str = "give a short, direct answer") -> str:
    """Reasoning text whose length follows the effort: low, medium or high."""
    echo = " ".join(question.split())[:_ECHO_CHARS] or "(an empty message)"
    first = f'The user wrote "{echo}".'
    if effort == "low":
        return first
    text = f"{first} I should {plan}."
    return text + _HIGH_EFFORT if effort == "high" else text


def compose(
    model: str,
    question: str,
    *,
    seed: int,
    reasoning: bool,
    effort: str = "medium",
    preface: str = "",
) -> Reply:
    """The reply for (model, last user message, seed): same inputs, same text, every time.

    ``preface`` (e.g. what images arrived) opens the answer; ``effort`` sizes the reasoning.
    """
    rng = _rng(model, question, seed)
    title, gist = rng.choice(_TOPICS)
    echo = " ".join(question.split())[:_ECHO_CHARS] or "(an empty message)"
    points = rng.sample(_POINTS, 3)
    head, body = rng.choice(_SNIPPETS)
    rows = rng.sample(_ROWS, 3)
    answer = "\n".join(
        [
            *([preface, ""] if preface else []),
            f"## {title}",
            "",
            f'You asked: "{_sentence(echo)}" This is the Flarechat emulator answering as '
            f"`{model}`; in short, {gist}.",
            "",
            *[f"- {point}" for point in points],
            "",
            "```python",
            head,
            body,
            "```",
            "",
            "| Shape | Text lives in | Streams |",
            "|---|---|---|",
            *[f"| {a} | {b} | {c} |" for a, b, c in rows],
            *_details(rng, question),
            "",
            "That is all there is to it.",
        ]
    )
    plan = f"answer about {title.lower()} with a heading, a short list, a code example and a table"
    return Reply(thought(question, effort, plan=plan) if reasoning else "", answer)


def _details(rng: random.Random, question: str) -> list[str]:
    """Extra steps for questions that ask for something long (to show truncation)."""
    if not _LONG.search(question):
        return []
    steps = [
        f"{n}. {rng.choice(_POINTS)} Remember that {rng.choice(_TOPICS)[1]}."
        for n in range(1, _LONG_STEPS + 1)
    ]
    return ["", "### Step by step", "", *steps]


def tokenize(text: str) -> list[str]:
    """Split into stream chunks ("a word or so"); joining them gives ``text`` back exactly."""
    return _TOKEN.findall(text)


def split_think(reasoning: str, answer: str, *, seed: int) -> list[str]:
    """Chunks of ``<think>reasoning</think>answer`` with the closing tag split mid-tag."""
    close = "</think>"
    cut = _rng("think", seed, reasoning).randint(1, len(close) - 1)
    return [
        "<think>",
        *tokenize("\n" + reasoning),
        "\n" + close[:cut],
        close[cut:] + "\n\n",
        *tokenize(answer),
    ]


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict)]
        return " ".join(str(p) for p in parts)
    return ""


def last_user_text(body: dict[str, Any]) -> str:
    """The question: the last user message, or the prompt."""
    messages = body.get("messages")
    if isinstance(messages, list):
        for message in reversed(messages):
            if isinstance(message, dict) and message.get("role") == "user":
                return _content_text(message.get("content"))
    prompt = body.get("prompt")
    return prompt if isinstance(prompt, str) else ""


def continuation(body: dict[str, Any]) -> tuple[str, str] | None:
    """(the question, what the reply to it already says) when the request asks the model to go
    on with a reply: its messages end with that reply (an assistant prefill, which the model
    extends), or with a user turn asking to continue right after it. None otherwise."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    turns = [m for m in messages if isinstance(m, dict)]
    if len(turns) >= 2 and turns[-1].get("role") == "user":
        if not _GO_ON.match(_content_text(turns[-1].get("content"))):
            return None
        turns = turns[:-1]
    if not turns or turns[-1].get("role") != "assistant":
        return None
    said = _content_text(turns[-1].get("content"))
    return (last_user_text({"messages": turns[:-1]}), said) if said else None


def rest_of(answer: str, said: str) -> str:
    """What is left of ``answer`` after ``said`` (the part already given); the whole answer
    when ``said`` is not how it begins (a prefill the model did not write)."""
    return answer[len(said) :] if answer.startswith(said) else answer


def prompt_tokens(body: dict[str, Any]) -> int:
    """A stable estimate: words of every message plus the chat template's overhead."""
    messages = body.get("messages")
    if isinstance(messages, list):
        texts = [_content_text(m.get("content")) for m in messages if isinstance(m, dict)]
        overhead = _TOKENS_PER_MESSAGE * len(texts)
    else:
        texts = [last_user_text(body)]
        overhead = _TOKENS_PER_MESSAGE
    return _TEMPLATE_TOKENS + overhead + sum(_word_count(t) for t in texts)


def _word_count(text: str) -> int:
    """Words of ``text``, counted a slice at a time (cut at a space, so no word is split): one
    findall over a 1 MB prompt holds the GIL ~200 ms, and the emulator shares its process with
    the window in --demo and in tests."""
    count = start = 0
    while start < len(text):
        end = text.find(" ", start + _COUNT_SLICE_CHARS)
        end = len(text) if end < 0 else end
        count += len(_WORD.findall(text, start, end))
        start = end
    return count


def _sentence(text: str) -> str:
    """``text`` ending with exactly one full stop, question or exclamation mark."""
    return text if text.endswith((".", "?", "!")) else f"{text}."
