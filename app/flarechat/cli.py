"""``flarechat ask`` and ``flarechat models``: the command-line face of the same core (no Qt).

Reply text streams to stdout; everything else (reasoning, retry notices, the usage summary,
errors) goes to stderr, so ``flarechat ask ... > reply.md`` captures only the model's answer.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
import textwrap
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, replace
from typing import Any

from flarechat import __version__
from flarechat.api import errors as api_errors
from flarechat.api.client import WorkersAIClient
from flarechat.api.config import (
    ChatMessage,
    Connection,
    GatewayOptions,
    Route,
    SamplingParams,
    Secret,
)
from flarechat.api.errors import WorkersAIError
from flarechat.api.events import ReasoningDelta, TextDelta
from flarechat.api.models import ModelInfo
from flarechat.api.retry import RetryPolicy
from flarechat.core.connect import ConfigurationError, Profile, build_request, load_profile
from flarechat.core.turn import (
    RetryDecider,
    RetryScheduled,
    TurnEvent,
    TurnState,
    fail,
    fold,
    run_turn,
    turn_record,
    turn_summary,
)
from flarechat.settings import gateway_options as gw
from flarechat.settings import secrets, validate
from flarechat.settings.schema import BACKOFFS
from flarechat.settings.store import SettingsStore

__all__ = ["EXIT_CODES", "build_parser", "exit_code_for", "main"]

EXIT_OK = 0
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

DEMO_NOTICE = "Demo mode: replies are simulated by the local emulator."
#: Pace of the demo emulator's replies (tokens per second): lively but readable.
DEMO_TOKENS_PER_SECOND = 60.0
_DIM, _RESET = "\x1b[2m", "\x1b[0m"
_HELP_WIDTH = 79
_NO_ACCOUNT = (
    "Flarechat cannot reach Cloudflare with these settings. Set CLOUDFLARE_ACCOUNT_ID and "
    "CLOUDFLARE_API_TOKEN, or save them in the settings window (run `flarechat`), "
    "or try `--demo`."
)
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
        ("--model", str, "M", "model id, e.g. @cf/meta/llama-3.1-8b-instruct-fast"),
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
    _add_gateway_arguments(ask)


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


def build_parser() -> argparse.ArgumentParser:
    codes = "\n".join(f"  {code:>3}  {meaning}" for code, meaning in EXIT_CODES.items())
    shared: dict[str, Any] = {
        "epilog": f"exit codes:\n{codes}\n\n{textwrap.fill(_CONFIG_HELP, _HELP_WIDTH)}",
        "formatter_class": argparse.RawDescriptionHelpFormatter,
    }
    parser = argparse.ArgumentParser(prog="flarechat", **shared)
    parser.add_argument("--version", action="version", version=f"flarechat {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    ask_help = "Stream one reply from a Workers AI model to stdout."
    ask = commands.add_parser("ask", help=ask_help, description=ask_help, **shared)
    _add_ask_arguments(ask)
    models_help = "List the account's text-generation models."
    models = commands.add_parser("models", help=models_help, description=models_help, **shared)
    for sub in (ask, models):
        sub.add_argument("--json", action="store_true", help="print one JSON object at the end")
        sub.add_argument("-v", "--verbose", action="store_true", help="log requests to stderr")
        sub.add_argument("--demo", action="store_true", help="use the built-in emulator")
    return parser


# --- configuration ----------------------------------------------------------------------------


def _demo_profile(conn: Connection) -> Profile:
    """The emulator's account on the direct route; only model defaults come from settings."""
    store = SettingsStore()
    settings = store.load()
    return Profile(settings, conn, GatewayOptions(), settings.reject_if_busy, tuple(store.problems))


def _apply_flags(profile: Profile, args: argparse.Namespace) -> tuple[Connection, GatewayOptions]:
    """Command-line flags win over settings and the environment."""
    conn, gateway = profile.conn, profile.gateway
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


def _read_prompt(prompt: str) -> str:
    text = sys.stdin.read() if prompt == "-" else prompt
    if not text.strip():
        raise ConfigurationError(["The prompt is empty."])
    return text


# --- output -----------------------------------------------------------------------------------


def _retry_notice(event: RetryScheduled, *, model: str) -> str:
    if isinstance(event.error, api_errors.CapacityExceeded):
        what = f"Workers AI is at capacity for {model}"
    else:
        what = event.error.message.rstrip(".")
    upcoming = event.attempt + 1
    return f"{what}; retrying in {event.delay:.3g} s (attempt {upcoming} of {event.max_attempts})…"


def _error_text(error: WorkersAIError, *, model: str | None = None, attempts: int = 1) -> str:
    """The final failure for stderr: what happened, what to do, and the ids support asks for."""
    lines = [f"flarechat: {error}"]
    if isinstance(error, api_errors.CapacityExceeded) and model is not None:
        tried = f" (gave up after {attempts} attempts)" if attempts > 1 else ""
        lines = [
            f"flarechat: Workers AI is at capacity for {model}{tried}. Try again shortly, wait "
            "in the model's queue with --no-reject-if-busy, or choose another model with --model."
            + str(error).removeprefix(error.message)
        ]
    if isinstance(error, api_errors.DailyAllocationExhausted):
        utc, local = error.resets_at, error.resets_at.astimezone()
        lines.append(
            f"The allocation resets at {utc:%Y-%m-%d %H:%M} UTC "
            f"({local:%Y-%m-%d %H:%M %Z} local time)."
        )
    if error.request_id:
        lines.append(f"Request id: {error.request_id}")
    return "\n".join(lines) + "\n"


class _Console:
    """Writes a streaming turn: text to stdout as it arrives, the rest to stderr."""

    def __init__(self, *, show_reasoning: bool, quiet: bool) -> None:
        self.out, self.err = sys.stdout, sys.stderr
        self.show_reasoning, self.quiet = show_reasoning, quiet
        self._out_open = self._err_open = False  # a line was started and not yet ended
        self._dim = self.err.isatty() and "NO_COLOR" not in os.environ

    def show(self, event: TurnEvent, *, model: str) -> None:
        if isinstance(event, RetryScheduled):
            self.end_lines()
            self.err.write(_retry_notice(event, model=model) + "\n")
        elif self.quiet:
            return
        elif isinstance(event, TextDelta) and event.text:
            self._end_err()
            self.out.write(event.text)
            self.out.flush()
            self._out_open = not event.text.endswith("\n")
        elif isinstance(event, ReasoningDelta) and event.text and self.show_reasoning:
            self.err.write(f"{_DIM}{event.text}{_RESET}" if self._dim else event.text)
            self.err.flush()
            self._err_open = not event.text.endswith("\n")

    def _end_err(self) -> None:
        if self._err_open:
            self.err.write("\n")
            self._err_open = False

    def end_lines(self) -> None:
        """End a half-written line on either stream, so what follows starts cleanly."""
        self._end_err()
        if self._out_open:
            self.out.write("\n")
            self.out.flush()
            self._out_open = False


# --- commands ---------------------------------------------------------------------------------


async def _turn(
    profile: Profile, args: argparse.Namespace, console: _Console, policy: RetryDecider
) -> TurnState:
    settings = profile.settings
    conn, gateway = _apply_flags(profile, args)
    temperature = settings.default_temperature if args.temperature is None else args.temperature
    busy = profile.reject_if_busy if args.reject_if_busy is None else args.reject_if_busy
    request = build_request(
        model=args.model or settings.last_model,
        history=[ChatMessage(role="user", content=_read_prompt(args.prompt))],
        system_prompt=settings.default_system_prompt if args.system is None else args.system,
        params=SamplingParams(
            max_tokens=args.max_tokens or settings.default_max_tokens, temperature=temperature
        ),
        reject_if_busy=busy,
        gateway=gateway,
    )
    state = TurnState(started_at=time.monotonic())
    async with contextlib.aclosing(WorkersAIClient()) as client:
        turn = run_turn(client, conn, request, policy=policy)
        try:
            async with contextlib.aclosing(turn):
                async for event in turn:
                    state = fold(state, event, now=time.monotonic())
                    console.show(event, model=request.model)
        except WorkersAIError as error:
            state = fail(state, error, now=time.monotonic())
    return state


async def _ask(
    args: argparse.Namespace, console: _Console, profile: Profile, policy: RetryDecider
) -> int:
    model = args.model or profile.settings.last_model
    state = await _turn(profile, args, console, policy)
    console.end_lines()
    if args.json:
        record = {"model": model, **turn_record(state)}
        console.out.write(json.dumps(record, ensure_ascii=False) + "\n")
    if state.error is not None:
        console.err.write(_error_text(state.error, model=model, attempts=state.attempt))
        return exit_code_for(state.error)
    console.err.write(turn_summary(state, model=model) + "\n")
    if state.finish_reason == "length":
        console.err.write("flarechat: the reply reached the token limit; raise --max-tokens.\n")
    return EXIT_OK


def _model_line(info: ModelInfo) -> str:
    flags = zip(
        ("reasoning", "tools", "vision", "lora", "beta", "paid-plan"),
        (info.reasoning, info.function_calling, info.vision, info.lora, info.beta, info.paid_only),
        strict=True,
    )
    window = f"{info.context_window:,}" if info.context_window else ""
    return f"{info.name:<52} {window:>9}  {' '.join(k for k, on in flags if on)}".rstrip()


async def _models(args: argparse.Namespace, console: _Console, profile: Profile) -> int:
    async with contextlib.aclosing(WorkersAIClient()) as client:
        try:
            models = await client.list_models(profile.conn)
        except WorkersAIError as error:
            console.err.write(_error_text(error))
            return exit_code_for(error)
    if args.json:
        console.out.write(json.dumps([asdict(m) for m in models], ensure_ascii=False) + "\n")
    else:
        console.out.writelines(_model_line(info) + "\n" for info in models)
    return EXIT_OK


async def _command(
    args: argparse.Namespace, *, demo: Connection | None, policy: RetryDecider
) -> int:
    console = _Console(show_reasoning=getattr(args, "show_reasoning", False), quiet=args.json)
    try:
        if demo is not None:
            profile = _demo_profile(demo)
        else:
            profile = await load_profile(
                settings_store=SettingsStore(),
                secret_store=secrets.KeyringSecretStore(),
                env=os.environ,
            )
        console.err.writelines(f"flarechat: warning: {text}\n" for text in profile.warnings)
        if args.command == "models":
            return await _models(args, console, profile)
        return await _ask(args, console, profile, policy)
    except ConfigurationError as error:
        console.end_lines()
        problems = [_NO_ACCOUNT, *error.problems] if error.incomplete else error.problems
        console.err.writelines(f"flarechat: {problem}\n" for problem in problems)
        return EXIT_USAGE


def _run(args: argparse.Namespace, policy: RetryDecider) -> int:
    if not args.demo:
        return asyncio.run(_command(args, demo=None, policy=policy))
    from flarechat.emulator import DEMO_ACCOUNT_ID, DEMO_TOKEN
    from flarechat.emulator.server import EmulatorServer

    with EmulatorServer() as server:
        server.state.tokens_per_second = DEMO_TOKENS_PER_SECOND
        sys.stderr.write(DEMO_NOTICE + "\n")
        demo = Connection(
            account_id=DEMO_ACCOUNT_ID,
            token=Secret(DEMO_TOKEN),
            api_base=server.api_base,
            gateway_base=server.gateway_base,
        )
        return asyncio.run(_command(args, demo=demo, policy=policy))


def _configure_logging(*, verbose: bool) -> None:
    """Quiet by default: failures are reported once, by the CLI, not also by the api's log.

    A no-op when logging is already set up (for example by pytest).
    """
    level = logging.DEBUG if verbose else logging.ERROR
    logging.basicConfig(level=level, stream=sys.stderr, format="flarechat: %(name)s: %(message)s")


def main(argv: list[str], *, retry_policy: RetryDecider | None = None) -> int:
    """Run ``flarechat ask|models ...`` (argv includes the subcommand); returns the exit code.

    ``retry_policy`` lets tests use short delays; the default is ``api.retry.RetryPolicy()``.
    """
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit_:  # --help, --version and usage errors
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    _configure_logging(verbose=args.verbose)
    try:
        return _run(args, retry_policy or RetryPolicy())
    except KeyboardInterrupt:
        sys.stdout.write("\n")
        sys.stderr.write("flarechat: interrupted.\n")
        return EXIT_CTRL_C
