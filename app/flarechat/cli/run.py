"""Running ``flarechat ask`` and ``flarechat models``: stream to stdout, report on stderr."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from flarechat.api import errors as api_errors
from flarechat.api.client import WorkersAIClient
from flarechat.api.config import (
    ChatMessage,
    ChatRequest,
    Connection,
    ResponseFormat,
    SamplingParams,
    Secret,
)
from flarechat.api.errors import TermsNotAccepted, WorkersAIError
from flarechat.api.events import ReasoningDelta, TextDelta
from flarechat.api.retry import RetryPolicy
from flarechat.cli import model_facts, specs
from flarechat.cli.args import (
    EXIT_BROKEN_PIPE,
    EXIT_CTRL_C,
    EXIT_OK,
    EXIT_USAGE,
    apply_flags,
    build_parser,
    demo_profile,
    exit_code_for,
    reasoning_effort,
)
from flarechat.cli.attachments import read_images
from flarechat.cli.inputs import MODELS_HINT, clean_text, read_prompt, saved_model
from flarechat.cli.models_table import models_table
from flarechat.cli.reply import (
    ReplyStreamer,
    all_reasoning_note,
    pretty_json,
    tool_call_line,
    tool_calls_record,
)
from flarechat.cli.terminal import TerminalStream, printable
from flarechat.core.connect import (
    KEYCHAIN_UNREAD,
    ConfigurationError,
    Profile,
    build_request,
    load_profile,
)
from flarechat.core.request_code import render, request_spec
from flarechat.core.session import records
from flarechat.core.turn import (
    RetryDecider,
    RetryScheduled,
    TurnEvent,
    TurnState,
    fail,
    fold,
    run_turn,
)
from flarechat.paths import profile_problem
from flarechat.settings import secrets
from flarechat.settings.store import SettingsStore

__all__ = ["DEMO_NOTICE", "main"]

DEMO_NOTICE = "Demo mode: replies are simulated by the local emulator."
_DIM, _RESET = "\x1b[2m", "\x1b[0m"
_NO_ACCOUNT = (
    "No Cloudflare credentials are set up. Set CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN, "
    "or save them in the settings window (run `flarechat`), or try the emulator with `--demo`."
)
#: The same, when a token saved in the settings window could not be read back anyway.
_NO_ACCOUNT_NO_KEYCHAIN = (
    "No Cloudflare credentials are set up. Set CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN, "
    "or try the emulator with `--demo`. ({why} A token saved in the settings window is kept "
    "there, so here only the environment can give it.)"
)
#: The window's advice for an unknown model; on the command line there is no list to choose from.
_UI_MODEL_HINT = "Choose a model from the list."


def _retry_notice(event: RetryScheduled, *, model: str) -> str:
    if isinstance(event.error, api_errors.CapacityExceeded):
        what = f"Workers AI is at capacity for {model}"
    else:
        what = event.error.message.rstrip(".")
    upcoming = event.attempt + 1
    delay = f"{event.delay:.1f} s"  # one precision for every notice
    return f"{what}; retrying in {delay} (attempt {upcoming} of {event.max_attempts})…"


def _error_text(
    error: WorkersAIError, *, model: str | None = None, attempts: int = 1, suggestion: str = ""
) -> str:
    """The final failure for stderr: what happened, what to do, and the ids support asks for.

    ``suggestion``: the closest model ids, after the server did not know the model.
    """
    lines = [f"flarechat: {error}"]
    if isinstance(error, api_errors.ModelUnavailable):
        lines = [f"flarechat: {str(error).replace(_UI_MODEL_HINT, MODELS_HINT)}"]
        lines += [suggestion] if suggestion else []
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


def _terms_text(error: TermsNotAccepted, *, model: str, terms_url: str | None, agreed: bool) -> str:
    """5016: which model's licence, where to read it, and the flag that accepts it."""
    licence = f" Read it at {terms_url}." if terms_url else ""
    if agreed:
        then = "It could not be accepted for this account; try again later."
    else:
        then = "Re-run with --agree-terms to accept it for this account."
    lines = [f"flarechat: {model}'s licence has not been accepted ({error}).{licence} {then}"]
    if error.request_id:
        lines.append(f"Request id: {error.request_id}")
    return "\n".join(lines) + "\n"


class _Console:
    """Writes a streaming turn: text to stdout as it arrives, the rest to stderr.

    ``hold_text``: the text is kept back (a JSON reply is printed formatted once complete).
    """

    def __init__(self, *, show_reasoning: bool, quiet: bool, hold_text: bool = False) -> None:
        self.out, self.err = TerminalStream(sys.stdout), TerminalStream(sys.stderr)
        self.show_reasoning, self.quiet, self.hold_text = show_reasoning, quiet, hold_text
        self._out_open = self._err_open = False  # a line was started and not yet ended
        self._dim = self.err.isatty() and "NO_COLOR" not in os.environ

    def show(self, event: TurnEvent, *, model: str) -> None:
        if isinstance(event, RetryScheduled):
            self.end_lines()
            self.err.write(_retry_notice(event, model=model) + "\n")
        elif self.quiet:
            return
        elif isinstance(event, TextDelta) and event.text and not self.hold_text:
            self._end_err()
            self.out.write(event.text)
            self.out.flush()
            self._out_open = not event.text.endswith("\n")
        elif isinstance(event, ReasoningDelta) and event.text and self.show_reasoning:
            self.reasoning(event.text)

    def reasoning(self, text: str) -> None:
        """Reasoning on stderr (dim on a terminal)."""
        if self._dim:
            self.err.write_styled(_DIM, text, _RESET)
        else:
            self.err.write(text)
        self.err.flush()
        self._err_open = not text.endswith("\n")

    def note(self, text: str) -> None:
        """A line on stderr that is not an error (tool calls, notes)."""
        self.end_lines()
        self.err.write(text + "\n")

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


def _warn(text: str) -> None:
    sys.stderr.write(printable(f"flarechat: warning: {text}\n"))


def _api_check(conn: Connection, request: ChatRequest) -> None:
    """The api's own checks of the request, before anything is sent."""
    try:
        request_spec(conn, request)
    except ValueError as error:
        raise ConfigurationError([str(error)]) from None


def _capabilities(request: ChatRequest, args: argparse.Namespace) -> ChatRequest:
    """The capability flags laid over the request; ConfigurationError for any misuse."""
    tools = specs.load_tools(args.tools) if args.tools is not None else ()
    images = read_images(args.image)
    user = request.messages[-1]
    messages = (*request.messages[:-1], replace(user, images=images)) if images else None
    return replace(
        request,
        messages=messages or request.messages,
        response_format=specs.response_format(args.response_format, args.json_schema),
        tools=tools,
        tool_choice=specs.tool_choice(args.tool_choice, tools),
        reasoning_effort=reasoning_effort(args.reasoning_effort),
        lora=args.lora,
    )


def _ask_request(profile: Profile, args: argparse.Namespace) -> tuple[Connection, ChatRequest]:
    """The connection and request ``ask`` sends; ConfigurationError for anything unsendable."""
    settings = profile.settings
    conn, gateway = apply_flags(profile, args)
    temperature = settings.default_temperature if args.temperature is None else args.temperature
    busy = profile.reject_if_busy if args.reject_if_busy is None else args.reject_if_busy
    system = settings.default_system_prompt if args.system is None else args.system
    request = build_request(
        model=args.model or saved_model(settings, warn=_warn),
        history=[ChatMessage(role="user", content=read_prompt(args.prompt, warn=_warn))],
        system_prompt=clean_text(system, label="The system prompt", warn=_warn),
        params=SamplingParams(
            max_tokens=args.max_tokens or settings.default_max_tokens, temperature=temperature
        ),
        reject_if_busy=busy,
        gateway=gateway,
    )
    request = _capabilities(request, args)
    _api_check(conn, request)
    return conn, request


async def _checked(
    client: WorkersAIClient, conn: Connection, request: ChatRequest, *, demo: bool
) -> ChatRequest:
    """With what the catalogue and schema say about the model, when the request needs it."""
    if not model_facts.needs_facts(request):
        return request  # a plain ask: one request, as fast as ever
    facts = await model_facts.look_up(client, conn, request, warn=_warn, use_cache=not demo)
    request = model_facts.check(request, facts, warn=_warn)
    _api_check(conn, request)
    return request


@dataclass(frozen=True, slots=True)
class _Asking:
    """One ask's moving parts: the client, the streamer over it, where to and how to print."""

    client: WorkersAIClient
    streamer: ReplyStreamer
    conn: Connection
    console: _Console
    policy: RetryDecider
    clock: Callable[[], float] = time.monotonic

    async def turn(self, request: ChatRequest) -> TurnState:
        # The clock starts when the ask is sent, as in the window (core.session).
        state = TurnState(started_at=self.clock())
        turn = run_turn(self.streamer, self.conn, request, policy=self.policy)
        try:
            async with contextlib.aclosing(turn):
                async for event in turn:
                    state = fold(state, event, now=self.clock())
                    self.console.show(event, model=request.model)
        except WorkersAIError as error:
            state = fail(state, error, now=self.clock())
        return state

    async def terms_url(self, error: TermsNotAccepted, model: str) -> str | None:
        """The licence a 5016 is about: from the error, else from the catalogue."""
        if error.terms_url:
            return error.terms_url
        info = await model_facts.catalogue_entry(self.client, self.conn, model, warn=_ignore)
        return info.terms_url if info is not None else None


def _ignore(_text: str) -> None:
    """A lookup made only to word an error better has nothing to warn about."""


async def _agree_and_ask_again(
    asking: _Asking, request: ChatRequest, state: TurnState, *, terms_url: str | None
) -> TurnState:
    """``--agree-terms`` after a 5016: accept the model's licence, then ask once more."""
    licence = f" ({terms_url})" if terms_url else ""
    asking.console.note(
        f"flarechat: accepting the licence of {request.model}{licence} for this account."
    )
    try:
        agreed = await asking.client.agree_to_terms(asking.conn, request.model)
    except WorkersAIError as failure:
        return fail(state, failure, now=asking.clock())
    return await asking.turn(request) if agreed else state


def _show_all_reasoning(console: _Console, streamer: ReplyStreamer, state: TurnState) -> None:
    """A reply that was all reasoning (a ``<think>`` never closed, or nothing after it) has no
    answer for stdout: its reasoning goes to stderr, labelled, unless --show-reasoning already
    put it there, and a note says why stdout is empty."""
    if state.error is not None or state.text.strip() or not state.reasoning:
        return
    if streamer.tool_calls:
        return
    if not console.show_reasoning:
        console.note(f"flarechat: the reply's reasoning ({len(state.reasoning):,} characters):")
        console.reasoning(state.reasoning)
    console.note(f"flarechat: note: {all_reasoning_note(unclosed=streamer.reasoning_unclosed)}")


def _show_extras(
    console: _Console, streamer: ReplyStreamer, state: TurnState, fmt: ResponseFormat | None
) -> None:
    """Without --json: the note and tool calls on stderr, a held JSON reply on stdout."""
    if streamer.note:
        console.note(f"flarechat: note: {streamer.note}")
    for call in streamer.tool_calls:
        console.note(tool_call_line(call))
    _show_all_reasoning(console, streamer, state)
    if not console.hold_text or not state.text:
        return
    if fmt is None or state.error is not None:
        parsed, problem = None, None
    else:
        parsed, problem = specs.reply_json_problem(state.text, fmt)
    text = pretty_json(parsed) if parsed is not None and problem is None else state.text
    console.out.write(text if text.endswith("\n") else text + "\n")
    console.out.flush()
    if problem is not None:
        _warn(problem + ".")


def _json_record(state: TurnState, streamer: ReplyStreamer, request: ChatRequest) -> dict[str, Any]:
    """``--json``: the turn's record, its tool calls and, for JSON output, the check."""
    record = {
        "model": request.model,
        **records.reply_record(state),
        "tool_calls": tool_calls_record(streamer.tool_calls),
    }
    if streamer.note:
        record["note"] = streamer.note
    record["reasoning_unclosed"] = streamer.reasoning_unclosed
    fmt = request.response_format
    if fmt is not None:
        checked = state.text and state.error is None
        record["json_problem"] = specs.reply_json_problem(state.text, fmt)[1] if checked else None
    return record


@dataclass(frozen=True, slots=True)
class Runtime:
    """What an ask runs on: the client it opens and the clock its timings read (tests pass
    a scripted client and clock to compare the CLI's figures with the window's)."""

    client: Callable[[], WorkersAIClient] = WorkersAIClient
    clock: Callable[[], float] = time.monotonic


async def _ask(
    args: argparse.Namespace,
    console: _Console,
    profile: Profile,
    policy: RetryDecider,
    runtime: Runtime,
) -> int:
    conn, request = _ask_request(profile, args)
    console.hold_text = request.response_format is not None
    async with contextlib.aclosing(runtime.client()) as client:
        model = await model_facts.full_model_id(
            client, conn, request.model, warn=_warn, use_cache=not args.demo
        )
        request = await _checked(client, conn, replace(request, model=model), demo=args.demo)
        if args.print_request:
            try:
                console.out.write(render(args.print_request, request_spec(conn, request)))
            except ValueError as error:
                raise ConfigurationError([str(error)]) from None
            return EXIT_OK
        asking = _Asking(client, ReplyStreamer(client), conn, console, policy, runtime.clock)
        state = await asking.turn(request)
        terms_url = None
        if isinstance(state.error, TermsNotAccepted) and not state.received_tokens:
            terms_url = await asking.terms_url(state.error, request.model)
            if args.agree_terms:
                state = await _agree_and_ask_again(asking, request, state, terms_url=terms_url)
        suggestion = ""
        if isinstance(state.error, api_errors.ModelUnavailable) and not state.received_tokens:
            suggestion = await model_facts.suggestion_for(client, conn, request.model)
    console.end_lines()
    if args.json:
        console.out.write(
            json.dumps(_json_record(state, asking.streamer, request), ensure_ascii=False) + "\n"
        )
    else:
        _show_extras(console, asking.streamer, state, request.response_format)
    return _finish(
        console,
        state,
        model=request.model,
        terms_url=terms_url,
        agreed=args.agree_terms,
        suggestion=suggestion,
    )


def _finish(
    console: _Console,
    state: TurnState,
    *,
    model: str,
    terms_url: str | None,
    agreed: bool,
    suggestion: str = "",
) -> int:
    """The closing lines on stderr (the error, or the summary) and the exit code."""
    if state.error is not None:
        text = _error_text(state.error, model=model, attempts=state.attempt, suggestion=suggestion)
        if isinstance(state.error, TermsNotAccepted):
            text = _terms_text(state.error, model=model, terms_url=terms_url, agreed=agreed)
        console.err.write(text)
        return exit_code_for(state.error)
    console.err.write(records.summary_line(state, model=model) + "\n")
    if state.finish_reason == "length":
        console.err.write("flarechat: the reply reached the token limit; raise --max-tokens.\n")
    return EXIT_OK


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
        console.out.write(models_table(models))
    return EXIT_OK


async def _profile(demo: Connection | None) -> Profile:
    """The demo or saved profile; ConfigurationError when the profile folder is unusable."""
    try:
        if demo is not None:
            return demo_profile(demo)
        return await load_profile(
            settings_store=SettingsStore(),
            secret_store=secrets.KeyringSecretStore(),
            env=os.environ,
        )
    except OSError as error:  # FLARECHAT_HOME is a file, read-only, on a missing drive…
        raise ConfigurationError([profile_problem(error)]) from None


async def _command(
    args: argparse.Namespace,
    *,
    demo: Connection | None,
    policy: RetryDecider,
    runtime: Runtime,
) -> int:
    console = _Console(show_reasoning=getattr(args, "show_reasoning", False), quiet=args.json)
    try:
        profile = await _profile(demo)
        console.err.writelines(f"flarechat: warning: {text}\n" for text in profile.warnings)
        if args.command == "models":
            return await _models(args, console, profile)
        if args.command == "eval":
            from flarechat.cli.evaluate import run_eval

            return await run_eval(
                args, profile=profile, policy=policy, out=console.out, err=console.err
            )
        return await _ask(args, console, profile, policy, runtime)
    except ConfigurationError as error:
        console.end_lines()
        console.err.writelines(f"flarechat: {problem}\n" for problem in _problems(error))
        return EXIT_USAGE


def _problems(error: ConfigurationError) -> list[str]:
    """What to print for a configuration error: "no credentials" once when none are set,
    worded for a keychain that could not be read, then what else is wrong."""
    if not error.unset:
        return error.problems
    unread = [p for p in error.problems if p.startswith(KEYCHAIN_UNREAD)]
    rest = [p for p in error.problems if p not in unread]
    first = _NO_ACCOUNT_NO_KEYCHAIN.format(why=unread[0]) if unread else _NO_ACCOUNT
    return [first, *rest]


def _run(args: argparse.Namespace, policy: RetryDecider, runtime: Runtime) -> int:
    if not args.demo:
        return asyncio.run(_command(args, demo=None, policy=policy, runtime=runtime))
    from flarechat.emulator import DEMO_ACCOUNT_ID, DEMO_CONFIG, DEMO_TOKEN, EmulatorServer

    with EmulatorServer(config=DEMO_CONFIG) as server:
        sys.stderr.write(DEMO_NOTICE + "\n")
        demo = Connection(
            account_id=DEMO_ACCOUNT_ID,
            token=Secret(DEMO_TOKEN),
            api_base=server.api_base,
            gateway_base=server.gateway_base,
        )
        return asyncio.run(_command(args, demo=demo, policy=policy, runtime=runtime))


def _silence_stdout() -> None:
    """The reader of stdout went away (``| head``): point stdout at devnull, so the flush at
    exit cannot fail again (the recipe in Python's ``signal`` docs, "Note on SIGPIPE")."""
    with contextlib.suppress(OSError, ValueError):  # no real file descriptor (embedded)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _configure_logging(*, verbose: bool) -> None:
    """Quiet by default: failures are reported once, by the CLI, not also by the api's log.

    A no-op when logging is already set up (for example by pytest).
    """
    level = logging.DEBUG if verbose else logging.ERROR
    logging.basicConfig(level=level, stream=sys.stderr, format="flarechat: %(name)s: %(message)s")


def main(
    argv: list[str], *, retry_policy: RetryDecider | None = None, runtime: Runtime | None = None
) -> int:
    """Run ``flarechat ask|models ...`` (argv includes the subcommand); returns the exit code.

    ``retry_policy`` lets tests use short delays; the default is ``api.retry.RetryPolicy()``.
    ``runtime`` lets tests script the client and the clock.
    """
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit_:  # --help, --version and usage errors
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    _configure_logging(verbose=args.verbose)
    try:
        return _run(args, retry_policy or RetryPolicy(), runtime or Runtime())
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        sys.stdout.write("\n")
        sys.stderr.write("flarechat: interrupted.\n")
        return EXIT_CTRL_C
