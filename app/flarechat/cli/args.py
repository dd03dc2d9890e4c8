"""The command line's surface: exit codes, the parser, and flags laid over the configuration."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from flarechat import __version__
from flarechat.api import errors as api_errors
from flarechat.api.config import (
    EFFORT_OFF,
    REASONING_EFFORTS,
    Connection,
    GatewayOptions,
    Route,
)
from flarechat.api.errors import WorkersAIError
from flarechat.cli.attachments import IMAGE_TYPES, MAX_IMAGE_BYTES, MAX_IMAGES
from flarechat.cli.inputs import model_flag
from flarechat.cli.specs import TOOL_CHOICE_MODES
from flarechat.core.connect import ConfigurationError, Profile
from flarechat.core.request_code import CodeKind
from flarechat.settings import gateway_options as gw
from flarechat.settings import validate
from flarechat.settings.schema import BACKOFFS
from flarechat.settings.store import SettingsStore

__all__ = [
    "EXIT_CODES",
    "EXIT_FAILED",
    "apply_flags",
    "build_parser",
    "demo_profile",
    "exit_code_for",
    "reasoning_effort",
]

#: ``--reasoning-effort none``: the word users type for the api's EFFORT_OFF.
EFFORT_NONE = "none"
CLI_EFFORTS = (*REASONING_EFFORTS, EFFORT_NONE)
RESPONSE_FORMATS = ("json_object", "json_schema")

EXIT_OK = 0
#: ``flarechat eval``: an assertion failed, or a cell could not run
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_AUTH = 3
EXIT_CAPACITY = 4
EXIT_DAILY_LIMIT = 5
EXIT_RATE_LIMITED = 6
EXIT_MODEL = 7
EXIT_TOO_LARGE = 8
EXIT_NETWORK = 9
EXIT_INTERRUPTED = 10
EXIT_API = 11
EXIT_CTRL_C = 130
#: What a shell reports for a process killed by SIGPIPE (128 + 13): stdout was closed early.
EXIT_BROKEN_PIPE = 141

EXIT_CODES: Mapping[int, str] = {
    EXIT_OK: "the reply finished",
    EXIT_USAGE: "usage or configuration error (e.g. no account ID or API token)",
    EXIT_AUTH: "authentication failed (API token or gateway token)",
    EXIT_CAPACITY: "Workers AI was at capacity for the model, after the automatic retries",
    EXIT_DAILY_LIMIT: "the daily free allocation is used up (resets 00:00 UTC)",
    EXIT_RATE_LIMITED: "rate limited",
    EXIT_MODEL: "the model is unknown, deprecated or not available to this account",
    EXIT_TOO_LARGE: "the request is too large for the model",
    EXIT_NETWORK: "network, TLS or timeout failure",
    EXIT_INTERRUPTED: "the reply was cut off mid-stream (the partial text is on stdout)",
    EXIT_API: "any other API error",
    EXIT_CTRL_C: "interrupted with Ctrl+C",
    EXIT_BROKEN_PIPE: "stdout was closed before the reply ended (e.g. piped into head)",
}

#: Error class -> exit code; the first match wins, so subclasses come before their bases.
_ERROR_EXITS: tuple[tuple[type[WorkersAIError], int], ...] = (
    (api_errors.AuthenticationFailed, EXIT_AUTH),
    (api_errors.CapacityExceeded, EXIT_CAPACITY),
    (api_errors.DailyAllocationExhausted, EXIT_DAILY_LIMIT),
    (api_errors.RateLimited, EXIT_RATE_LIMITED),
    (api_errors.ModelUnavailable, EXIT_MODEL),
    (api_errors.RequestTooLarge, EXIT_TOO_LARGE),
    (api_errors.ConnectionFailed, EXIT_NETWORK),
    (api_errors.RequestTimedOut, EXIT_NETWORK),
    (api_errors.UpstreamTimeout, EXIT_NETWORK),
    (api_errors.StreamInterrupted, EXIT_INTERRUPTED),
)

_HELP_WIDTH = 79
_CONFIG_HELP = (
    "configuration: saved settings and the system keychain, overridden by "
    "CLOUDFLARE_ACCOUNT_ID, CLOUDFLARE_API_TOKEN, CLOUDFLARE_AI_GATEWAY_ID, FLARECHAT_API_BASE "
    "and FLARECHAT_GATEWAY_BASE; FLARECHAT_HOME moves the profile directory."
)


def exit_code_for(error: WorkersAIError) -> int:
    """The documented exit code for a failure class."""
    return next((code for kind, code in _ERROR_EXITS if isinstance(error, kind)), EXIT_API)


# --- argument parsing -------------------------------------------------------------------------


def _checked(check: Callable[[str], str | None], convert: Callable[[str], Any]) -> Any:
    """An argparse ``type`` that reports the settings validator's plain-English message."""

    def parse(text: str) -> Any:
        if (problem := check(text)) is not None:
            raise argparse.ArgumentTypeError(problem)
        return convert(text)

    return parse


def _add_ask_arguments(ask: argparse.ArgumentParser) -> None:
    ask.add_argument("prompt", metavar="PROMPT", help='the message ("-" reads it from stdin)')
    valued: tuple[tuple[str, Callable[[str], Any], str, str], ...] = (
        (
            "--model",
            model_flag,
            "M",
            "model id, e.g. @cf/meta/llama-3.1-8b-instruct-fast (`flarechat models` lists them)",
        ),
        ("--system", str, "S", "system prompt (default: the saved one)"),
        ("--max-tokens", _checked(validate.validate_max_tokens, int), "N", "reply length limit"),
        ("--temperature", _checked(validate.validate_temperature, float), "T", "sampling, 0 to 5"),
        (
            "--gateway",
            _checked(validate.validate_gateway_id, str.strip),
            "G",
            "use this AI Gateway",
        ),
        ("--cache-ttl", _checked(validate.validate_cache_ttl, int), "SEC", "cache lifetime"),
        (
            "--idle-timeout",
            _checked(validate.validate_idle_timeout, float),
            "SECONDS",
            "give up on a started reply when no data comes for this long (default: the saved "
            "setting, 60); the text so far is kept and the exit code is 10",
        ),
        (
            "--deadline",
            _checked(validate.validate_overall_timeout, float),
            "SECONDS",
            "give up on the whole request after this long, however steadily it streams "
            "(default: the saved setting, 600); a cut-off reply exits 10",
        ),
    )
    for flag, parse, metavar, help_text in valued:
        ask.add_argument(flag, type=parse, metavar=metavar, help=help_text)
    ask.add_argument(
        "--reject-if-busy",
        action=argparse.BooleanOptionalAction,
        help="when the model is at capacity: fail fast and retry, or wait in its queue",
    )
    ask.add_argument("--skip-cache", action="store_true", help="bypass the AI Gateway cache")
    ask.add_argument("--show-reasoning", action="store_true", help="print reasoning to stderr")
    ask.add_argument(
        "--print-request",
        choices=[kind.value for kind in CodeKind],
        metavar="{" + ",".join(kind.value for kind in CodeKind) + "}",
        help="print the request as code (curl, Python with httpx, the openai SDK, a Workers "
        "binding call) instead of sending it; the token stays an environment variable",
    )
    _add_capability_arguments(ask)
    _add_gateway_arguments(ask)


def _add_capability_arguments(ask: argparse.ArgumentParser) -> None:
    group = ask.add_argument_group(
        "model capabilities",
        "Checked against the model's catalogue entry and input schema before anything is sent "
        "(a plain ask looks nothing up).",
    )
    group.add_argument(
        "--image",
        action="append",
        metavar="PATH",
        help=f"attach an image ({IMAGE_TYPES}, at most {MAX_IMAGE_BYTES // 2**20} MB, sent as "
        f"it is); repeat for up to {MAX_IMAGES}; the model must have vision",
    )
    group.add_argument(
        "--response-format",
        choices=RESPONSE_FORMATS,
        help="json_object: reply with a JSON object (printed formatted; a reply that does not "
        "parse gets a warning); json_schema: follow --json-schema",
    )
    group.add_argument(
        "--json-schema",
        metavar="FILE",
        help="reply with JSON matching this JSON Schema file (its root an object); the reply "
        "is checked against it",
    )
    group.add_argument(
        "--tools",
        metavar="FILE",
        help="offer these functions: a JSON list of {name, description, parameters}; calls "
        "print on stderr as 'tool call: name({...})', or in --json as tool_calls",
    )
    group.add_argument(
        "--tool-choice",
        metavar="{" + ",".join(TOOL_CHOICE_MODES) + ",NAME}",
        help="whether the model must call a tool: auto (default), none, required, or one "
        "tool's name",
    )
    group.add_argument(
        "--reasoning-effort",
        choices=CLI_EFFORTS,
        help="how hard a reasoning model thinks; none turns reasoning off where the model "
        "allows it",
    )
    group.add_argument(
        "--lora",
        metavar="NAME",
        help="a LoRA adapter (fine-tune name or id) for a model that takes one",
    )
    group.add_argument(
        "--agree-terms",
        action="store_true",
        help="if the model answers that its licence was not accepted (5016), accept it for "
        "this account and ask again once",
    )


def reasoning_effort(flag: str | None) -> str | None:
    """``--reasoning-effort`` as the api takes it: ``none`` is the api's explicit off."""
    return EFFORT_OFF if flag == EFFORT_NONE else flag


def _metadata_entry(text: str) -> tuple[str, str]:
    key, _, value = (part.strip() for part in text.partition("="))
    problem = gw.validate_metadata_entry(key, value) if "=" in text else "Write it as KEY=VALUE."
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return key, value


def _add_gateway_arguments(ask: argparse.ArgumentParser) -> None:
    group = ask.add_argument_group(
        "AI Gateway options", "Sent only on a gateway route; they override the saved settings."
    )
    attempts = f"{gw.GATEWAY_MAX_ATTEMPTS_MIN} to {gw.GATEWAY_MAX_ATTEMPTS_MAX}"
    delay = f"at most {gw.GATEWAY_RETRY_DELAY_MAX_MS} ms"
    valued: tuple[tuple[str, Callable[[str], str | None], Any, str, str], ...] = (
        ("--cache-key", gw.validate_cache_key, str.strip, "K", "custom cache key"),
        ("--gateway-timeout", gw.validate_request_timeout_ms, int, "MS", "ms to first byte"),
        ("--gateway-max-attempts", gw.validate_max_attempts, int, "N", f"attempts, {attempts}"),
        ("--gateway-retry-delay", gw.validate_retry_delay_ms, int, "MS", f"retry delay, {delay}"),
    )
    for flag, check, convert, metavar, help_text in valued:
        group.add_argument(flag, type=_checked(check, convert), metavar=metavar, help=help_text)
    group.add_argument(
        "--metadata",
        type=_metadata_entry,
        action="append",
        metavar="KEY=VALUE",
        help=f"log this entry with the request; repeat for up to {gw.METADATA_MAX_ENTRIES} "
        "(replaces the saved metadata)",
    )
    group.add_argument(
        "--collect-log",
        action=argparse.BooleanOptionalAction,
        help="have the gateway log this request, or not (default: the gateway's setting)",
    )
    group.add_argument("--gateway-backoff", choices=BACKOFFS, help="how gateway retries space out")


#: The exit codes ``models`` can end with (it streams no reply and names no model).
_MODELS_EXITS: Mapping[int, str] = {
    EXIT_OK: "the list was printed",
    **{
        code: EXIT_CODES[code]
        for code in (EXIT_USAGE, EXIT_AUTH, EXIT_RATE_LIMITED, EXIT_NETWORK, EXIT_API)
    },
    EXIT_CTRL_C: EXIT_CODES[EXIT_CTRL_C],
    EXIT_BROKEN_PIPE: "stdout was closed before the list was printed (e.g. piped into head)",
}


def _help_texts(exits: Mapping[int, str]) -> dict[str, Any]:
    """A parser's epilog (its own exit codes, then where configuration comes from)."""
    codes = "\n".join(f"  {code:>3}  {meaning}" for code, meaning in exits.items())
    return {
        "epilog": f"exit codes:\n{codes}\n\n{textwrap.fill(_CONFIG_HELP, _HELP_WIDTH)}",
        "formatter_class": argparse.RawDescriptionHelpFormatter,
    }


_EVAL_EXITS: Mapping[int, str] = {
    EXIT_OK: "every cell ran and every case passed",
    EXIT_FAILED: "a case failed its assertions, a cell could not run, or the budget stopped it",
    EXIT_USAGE: "a bad experiment file, option or configuration (nothing was sent)",
    **{code: EXIT_CODES[code] for code in (EXIT_AUTH, EXIT_DAILY_LIMIT, EXIT_NETWORK, EXIT_API)},
    EXIT_CTRL_C: EXIT_CODES[EXIT_CTRL_C] + " (finished cells are kept; run again to resume)",
}


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def _add_eval_arguments(evaluate: argparse.ArgumentParser) -> None:
    evaluate.add_argument("file", help="the experiment file (.yaml, .json) or promptfooconfig.yaml")
    evaluate.add_argument(
        "--batch",
        action="store_true",
        help="send cells as Batch API batches where the model takes them (others run live)",
    )
    evaluate.add_argument(
        "--budget", metavar="CAP", help="stop before crossing this: 500 (neurons) or $0.05"
    )
    evaluate.add_argument(
        "--repeat", type=_positive, metavar="N", help="run each cell N times (default: the file's)"
    )
    evaluate.add_argument(
        "--variant",
        action="append",
        metavar="NAME",
        help="run only this variant (repeatable)",
    )
    evaluate.add_argument(
        "--output",
        action="append",
        metavar="PATH",
        help="write the results: .json, .csv, .xml (JUnit) or .html (repeatable)",
    )
    evaluate.add_argument(
        "--rerun",
        action="store_true",
        help="send every cell again, even those a finished identical request answered",
    )
    evaluate.add_argument(
        "--poll-interval",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="seconds between polls of a pending batch (default 5)",
    )


def build_parser() -> argparse.ArgumentParser:
    shared = _help_texts(EXIT_CODES)
    parser = argparse.ArgumentParser(prog="flarechat", **shared)
    parser.add_argument("--version", action="version", version=f"flarechat {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    ask_help = "Stream one reply from a Workers AI model to stdout."
    ask = commands.add_parser("ask", help=ask_help, description=ask_help, **shared)
    _add_ask_arguments(ask)
    models_help = "List the account's text-generation models."
    models = commands.add_parser(
        "models", help=models_help, description=models_help, **_help_texts(_MODELS_EXITS)
    )
    eval_help = "Run an experiment file (YAML/JSON, or a promptfoo config) and grade every reply."
    evaluate = commands.add_parser(
        "eval", help=eval_help, description=eval_help, **_help_texts(_EVAL_EXITS)
    )
    _add_eval_arguments(evaluate)
    for sub in (ask, models, evaluate):
        sub.add_argument("--json", action="store_true", help="print one JSON object at the end")
        sub.add_argument("-v", "--verbose", action="store_true", help="log requests to stderr")
        sub.add_argument("--demo", action="store_true", help="use the built-in emulator")
    return parser


# --- configuration ----------------------------------------------------------------------------


def demo_profile(conn: Connection) -> Profile:
    """The emulator's account on the direct route; only model defaults come from settings."""
    store = SettingsStore()
    settings = store.load()
    return Profile(settings, conn, GatewayOptions(), settings.reject_if_busy, tuple(store.problems))


def apply_flags(profile: Profile, args: argparse.Namespace) -> tuple[Connection, GatewayOptions]:
    """Command-line flags win over settings and the environment."""
    conn, gateway = profile.conn, profile.gateway
    settings = profile.settings
    conn = replace(
        conn,
        idle_timeout=settings.idle_timeout if args.idle_timeout is None else args.idle_timeout,
        overall_timeout=settings.overall_timeout if args.deadline is None else args.deadline,
    )
    if args.gateway:
        route = Route.GATEWAY_REST if conn.route is Route.DIRECT else conn.route
        conn = replace(conn, gateway_id=args.gateway, route=route)
    if args.skip_cache:
        gateway = replace(gateway, skip_cache=True)
    if args.cache_ttl is not None:
        gateway = replace(gateway, cache_ttl=args.cache_ttl)
    return conn, _gateway_flags(gateway, args)


def _gateway_flags(gateway: GatewayOptions, args: argparse.Namespace) -> GatewayOptions:
    flags = {
        "cache_key": args.cache_key,
        "collect_log": args.collect_log,
        "request_timeout_ms": args.gateway_timeout,
        "max_attempts": args.gateway_max_attempts,
        "retry_delay_ms": args.gateway_retry_delay,
        "backoff": args.gateway_backoff,
    }
    if args.metadata:
        metadata = dict(args.metadata)
        if (problem := gw.validate_metadata(metadata)) is not None:
            raise ConfigurationError([f"--metadata: {problem}"])
        flags["metadata"] = metadata
    return replace(gateway, **{k: v for k, v in flags.items() if v is not None})
