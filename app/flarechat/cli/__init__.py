"""``flarechat ask`` and ``flarechat models``: the command-line face of the same core (no Qt).

Reply text streams to stdout; everything else (reasoning, retry notices, the usage summary,
errors) goes to stderr, so ``flarechat ask ... > reply.md`` captures only the model's answer.
"""

from flarechat.cli.args import (
    EXIT_API,
    EXIT_AUTH,
    EXIT_BROKEN_PIPE,
    EXIT_CAPACITY,
    EXIT_CODES,
    EXIT_CTRL_C,
    EXIT_DAILY_LIMIT,
    EXIT_INTERRUPTED,
    EXIT_MODEL,
    EXIT_NETWORK,
    EXIT_OK,
    EXIT_RATE_LIMITED,
    EXIT_TOO_LARGE,
    EXIT_USAGE,
    build_parser,
    exit_code_for,
)
from flarechat.cli.run import DEMO_NOTICE, main

__all__ = [
    "DEMO_NOTICE",
    "EXIT_API",
    "EXIT_AUTH",
    "EXIT_BROKEN_PIPE",
    "EXIT_CAPACITY",
    "EXIT_CODES",
    "EXIT_CTRL_C",
    "EXIT_DAILY_LIMIT",
    "EXIT_INTERRUPTED",
    "EXIT_MODEL",
    "EXIT_NETWORK",
    "EXIT_OK",
    "EXIT_RATE_LIMITED",
    "EXIT_TOO_LARGE",
    "EXIT_USAGE",
    "build_parser",
    "exit_code_for",
    "main",
]
