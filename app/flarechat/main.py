"""The composition root's front door: parse the command line and dispatch to the CLI or the GUI.

``flarechat`` with no arguments opens the window; ``ask``/``models``/``eval`` are the
command-line twins (``flarechat.cli``); ``--version``, ``--self-check`` and ``--demo`` are
handled here. This is the only module besides ``cli`` that starts the in-process emulator
(import-linter contract).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import TYPE_CHECKING

from flarechat import __version__

if TYPE_CHECKING:
    from flarechat.ui.app import DemoBackend

__all__ = ["CLI_COMMANDS", "TEST_AUTOSEND_ENV", "main"]

#: Subcommands handled by ``flarechat.cli.main``.
CLI_COMMANDS = frozenset({"ask", "models", "eval"})
#: Test-only hook: the window sends this text once at start (used by the durability test).
TEST_AUTOSEND_ENV = "FLARECHAT_TEST_AUTOSEND"
#: httpx's own command line; ``import httpx`` loads it (with click, rich and pygments, ~100 ms
#: at start-up) unless it is unavailable, as in the bundle, which excludes rich.
HTTPX_CLI_MODULE = "httpx._main"
#: The Qt-free parts of the window, imported before PySide6 is (issue #12). PySide6's
#: ``__feature__`` import hook reads the source of every module named by an import statement
#: run after PySide6 was first imported (``inspect.getsource``, looking for "PySide6") unless
#: it was filed first: ours and the standard library's are (_file_with_feature_hook); the
#: third-party modules these bring (platformdirs, ...) are imported before the hook exists.
#: Not ``core.session``: the chat engine is built after the first paint (ChatController.start);
#: nor the lab's items and file (``core.lab.library``, ``storage``...): LabController.start.
QT_FREE_WINDOW_MODULES = (
    "asyncio",
    "html",
    "flarechat.api.retry",
    "flarechat.api.tokens",
    "flarechat.core.capabilities",
    "flarechat.core.catalogue",
    "flarechat.core.connect",
    "flarechat.core.current_model",
    "flarechat.core.lab.kinds",
    "flarechat.core.lab.variables",
    "flarechat.core.meters",
    "flarechat.core.store",
    "flarechat.core.tasks",
    "flarechat.logsetup",
    "flarechat.settings.secrets",
    "flarechat.settings.store",
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flarechat",
        description="A desktop chat client for Cloudflare Workers AI and AI Gateway.",
        epilog=(
            "Commands: 'flarechat ask PROMPT' streams one reply to stdout; "
            "'flarechat models' lists the text-generation models (see 'flarechat ask --help'); "
            "'flarechat eval FILE' runs an experiment and grades every reply. "
            "--self-check exits 0 when every check passes and 1 when any says FAIL."
        ),
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument(
        "--self-check",
        action="store_true",
        help="check imports, resources, the keyring backend and the Qt platform plugin",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help=(
            "open the window against the built-in emulator (replies are simulated); its "
            "Simulate menu makes the next requests meet a busy model, a slow first byte, the "
            "daily allocation used up or a licence to accept, to see each banner"
        ),
    )
    return parser


def _start_demo() -> DemoBackend:
    """Start the in-process emulator and describe it for the GUI (blocking; call off the GUI)."""
    from flarechat.emulator import DEMO_ACCOUNT_ID, DEMO_CONFIG, DEMO_TOKEN, EmulatorServer
    from flarechat.ui.app import DemoBackend

    server = EmulatorServer(config=DEMO_CONFIG)
    server.start()
    return DemoBackend(
        api_base=server.api_base,
        gateway_base=server.gateway_base,
        account_id=DEMO_ACCOUNT_ID,
        token=DEMO_TOKEN,
        stop=server.stop,
        control=server.control,  # the Simulate menu: POST /__emulator__/control with its token
    )


def _import_before_qt() -> None:
    """Import the window's Qt-free modules while PySide6's import hook is not yet installed;
    asyncio first, without its TLS support (given back when the HTTP client is built)."""
    from flarechat.ui.shared.deferred_tls import import_asyncio

    import_asyncio()
    for name in QT_FREE_WINDOW_MODULES:
        importlib.import_module(name)


def _file_with_feature_hook() -> None:
    """Spare our modules and the standard library PySide6's import-hook source reads
    (flarechat.ui.shared.feature_hook): ~140 files read before the first paint, 30-40 ms."""
    import flarechat
    from flarechat.ui.shared.feature_hook import file_package, file_standard_library

    file_package(flarechat)
    file_standard_library()


def _run_gui(*, demo: bool) -> int:
    from flarechat.ui.shared.settling import hold_collections

    hold_collections()  # until the first paint (or the keychain read) has settled start-up
    _import_before_qt()
    _file_with_feature_hook()
    from flarechat.logsetup import configure_file_logging
    from flarechat.paths import profile_problem
    from flarechat.ui.app import GuiOptions, run_gui

    try:
        configure_file_logging()
    except OSError as error:  # FLARECHAT_HOME is a file, read-only, on a full disk…
        unusable: str | None = profile_problem(error)
    else:
        unusable = None
    options = GuiOptions(
        demo_at_start=demo,
        start_demo=_start_demo,
        autosend=os.environ.get(TEST_AUTOSEND_ENV) or None,
        profile_problem=unusable,
    )
    return run_gui(options)


def _ensure_std_streams() -> None:
    """Give a windowed build (pythonw, the Windows GUI exe) somewhere to write.

    There ``sys.stdout``/``sys.stderr`` are ``None`` and any print would raise; the console
    twin ``flarechat-cli`` is the one to use for output on Windows.
    """
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            # Lives for the whole process, like the stream it stands in for.
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115


def _skip_httpx_cli() -> None:
    """Make ``import httpx`` skip its unused command line, as the bundle does (start-up time).

    A ``None`` in ``sys.modules`` makes that one import fail, and httpx falls back to a stub.
    """
    if "httpx" not in sys.modules and HTTPX_CLI_MODULE not in sys.modules:
        sys.modules[HTTPX_CLI_MODULE] = None  # type: ignore[assignment]


def main(argv: list[str] | None = None) -> int:
    """Run Flarechat with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    _ensure_std_streams()
    _skip_httpx_cli()
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in CLI_COMMANDS:
        from flarechat import cli

        return cli.main(args_list)
    if not args_list:
        # The window, as the parser would have said: building it costs ~6 ms of start-up
        # (gettext's catalogue lookups, the help formatter) that no flag needs (issue #12).
        return _run_gui(demo=False)
    args = _parser().parse_args(args_list)
    if args.version:
        sys.stdout.write(f"flarechat {__version__}\n")
        return 0
    if args.self_check:
        from flarechat.ui import self_check

        return self_check.run()
    return _run_gui(demo=bool(args.demo))
