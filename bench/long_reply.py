"""The streaming bench's long reply: Markdown split into exactly N emulator tokens (Qt-free)."""

from __future__ import annotations

from typing import Any

from flarechat.emulator import replies

__all__ = ["BENCH_PROMPT", "REPLY_TOKENS", "install_long_reply", "long_answer"]

REPLY_TOKENS = 20_000
BENCH_PROMPT = "bench: stream the long reply"
SECTION = """## Part {n}

Streaming replies arrive as **server-sent events**, a few tokens each; the window buffers
them and paints the tail at most every frame. Keep `max_tokens` high for long answers.

- settled blocks render once
- only the open tail re-renders
- code is highlighted when its fence closes

| Step | Cost | Note |
|:--|--:|:--|
| parse | {n} ms | tail only |
| paint | {n} ms | one pass |

```python
async def part_{n}(client, request):
    async for event in client.stream_chat(request):
        yield event  # part {n}
```

"""


def long_answer(tokens: int = REPLY_TOKENS) -> str:
    """Markdown that the emulator's tokenizer splits into exactly ``tokens`` chunks."""
    parts: list[str] = []
    count, n = 0, 0
    while count < tokens:
        n += 1
        section = SECTION.format(n=n)
        parts.append(section)
        count += len(replies.tokenize(section))
    return "".join(replies.tokenize("".join(parts))[:tokens])


def install_long_reply(answer: str) -> None:
    """In this process, the emulator answers BENCH_PROMPT with ``answer``."""
    original = replies.compose

    def compose(model: str, question: str, **kwargs: Any) -> replies.Reply:
        if question.strip() == BENCH_PROMPT:
            return replies.Reply("", answer)
        return original(model, question, **kwargs)

    replies.compose = compose
