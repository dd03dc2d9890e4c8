"""The GUI's composition root: QApplication, the asyncio loop inside Qt, wiring, ordered shutdown.

Three Qt traps shape this module (environment.md): the loop is ``FlareEventLoop`` (qasync plus
asyncgen hooks) run by ``asyncio.Runner(loop_factory=...)``; Qt must not quit the loop while
``_run`` still has awaits, so ``quitOnLastWindowClosed`` is off and the window's close sets an
``asyncio.Event`` that ``_run`` awaits before shutting down in order: replies cancelled (their
partial text saved as "stopped"), jobs cancelled, the HTTP client closed, the store closed.

The first paint waits for the settings file and the window only: the database is opened and
checked on its thread once the window has painted (what asks for it before waits), the chat
engine (``core.session``) is built on the loop turn after the paint (``ChatController.start``;
what the user does before then waits for it), the keychain is read right after it
(``Session.load_tokens``), the HTTP client is built on first use on a worker thread
(``LazyClient``), and the settings dialog, Markdown and highlighting are imported when first
needed (tests/ui/window/test_first_paint_imports.py keeps it so).
"""

from __future__ import annotations

import asyncio
import importlib
import linecache
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QSocketNotifier, QTimer
from PySide6.QtWidgets import QApplication, QWidget

from flarechat.api.retry import RetryPolicy
from flarechat.core.store import AsyncChatStore, StoreError, default_path
from flarechat.paths import profile_problem
from flarechat.settings.secrets import KeyringSecretStore
from flarechat.settings.store import SettingsStore
from flarechat.ui.control.preferences import DemoBackend, Preferences
from flarechat.ui.lazy_client import LazyClient
from flarechat.ui.shared import theme
from flarechat.ui.shared.icons import APP_ICON, icon
from flarechat.ui.shared.loop import FlareEventLoop
from flarechat.ui.shared.settling import start_up_settled
from flarechat.ui.shared.wrappers import load_widget_types

if TYPE_CHECKING:
    from flarechat.api.client import WorkersAIClient

#: The window and its controllers: imported by ``_run`` while the settings are read.
WINDOW_MODULES = (
    "flarechat.core.catalogue",
    "flarechat.ui.control.chat",
    "flarechat.ui.control.workspace",
    "flarechat.ui.window.main_window",
)

__all__ = ["BENCH_PAINT_ENV", "DemoBackend", "FirstPaint", "GuiOptions", "run_gui"]

log = logging.getLogger(__name__)

APP_ID = "flarechat"
APP_DISPLAY_NAME = "Flarechat"
SIGNAL_BUFFER = 64
#: Imported one per loop turn after the first paint. Empty: the network stack comes with the
#: HTTP client on a worker thread (LazyClient), Markdown and highlighting with the first message
#: that needs them; what an idle window does not use is not loaded (idle memory).
PRELOADED_MODULES: tuple[str, ...] = ()
#: Benchmark hook (bench/start.py): when set, the first paint of the main window appends
#: ``time.monotonic()`` to this file. Nothing happens when it is unset.
BENCH_PAINT_ENV = "FLARECHAT_BENCH_PAINT_FILE"
#: The title of the banner listing what start-up repaired or could not do (keychain, files).
STARTUP_NOTICE_TITLE = "Flarechat found something to check at start-up"
#: The exit code when the profile can't be used (the command line's for a configuration error).
EXIT_PROFILE_UNUSABLE = 2
#: The keychain is read (and the database opened) after the first paint, or this long after
#: show at the latest (a window shown minimized or off-screen may not paint).
TOKENS_AT_THE_LATEST_MS = 1_000


@dataclass(frozen=True, slots=True)
class GuiOptions:
    """How to start the window. ``start_demo`` is given by flarechat.main (it owns the emulator).

    ``autosend`` is a TEST-ONLY hook (env FLARECHAT_TEST_AUTOSEND): the window sends this text
    once, in a new conversation, right after start (the durability test kills it mid-reply).
    """

    demo_at_start: bool = False
    start_demo: Callable[[], DemoBackend] | None = None
    autosend: str | None = None
    scheme: theme.Scheme | None = None
    #: how automatic retries are paced (tests and screenshots slow it down or speed it up)
    retry_policy_factory: Callable[[], RetryPolicy] = RetryPolicy
    #: the profile can't be used (``paths.profile_problem``, found before the window): it is
    #: said in a box, and the app exits
    profile_problem: str | None = None


def _application() -> tuple[QApplication, bool]:
    """The application (made here, with Fusion chosen on its command line, unless one
    exists), and whether it was made here."""
    existing = QApplication.instance()
    if isinstance(existing, QApplication):
        app, made = existing, False
    else:
        app, made = QApplication([*sys.argv[:1], *theme.STYLE_ARGUMENTS]), True
    app.setApplicationName(APP_ID)
    app.setOrganizationName(APP_ID)
    app.setApplicationDisplayName(APP_DISPLAY_NAME)
    app.setDesktopFileName(APP_ID)
    app.setQuitOnLastWindowClosed(False)  # _run decides when the loop ends
    return app, made


def _preload(names: tuple[str, ...] = PRELOADED_MODULES) -> None:
    """Import ``names`` one per event-loop turn, so no single step stalls the window."""
    if not names:
        return
    try:
        importlib.import_module(names[0])
    except ImportError:  # an optional speed-up only
        log.debug("preload of %s skipped", names[0])
    QTimer.singleShot(0, lambda: _preload(names[1:]))


class FirstPaint(QObject):
    """Calls ``then`` once, right after the first paint pass of ``window`` has finished."""

    def __init__(self, window: QWidget, then: Callable[[], None]) -> None:
        super().__init__(window)
        self._then = then
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            QTimer.singleShot(0, self._then)  # after the children's paints of the same pass
        return super().eventFilter(watched, event)


def _forget_module_sources() -> None:
    """Drop the source text PySide6 read of every module imported since it was (idle memory).

    PySide6's ``__feature__`` import hook calls ``inspect.getsource`` on each newly imported
    module it has not filed to look for "PySide6", which leaves the file's lines in
    ``linecache``. Ours and the standard library's are filed up front (ui/shared/feature_hook.py),
    so this is what is left: third-party modules (qasync; the keychain's libraries), kept
    for nothing (tracebacks read them again when needed). Cleared after each burst of imports,
    the memory serves the objects that follow.
    """
    linecache.clearcache()


def _after_first_paint() -> None:
    """What waits for the window to be up: the bench's timestamp, then the deferred imports."""
    paint_file = os.environ.get(BENCH_PAINT_ENV)
    if paint_file:
        with open(paint_file, "a", encoding="utf-8") as out:
            out.write(f"{time.monotonic()}\n")
    _preload()
    start_up_settled("first paint")


def run_gui(options: GuiOptions) -> int:
    """Open the window and run until it is closed; returns the exit code."""
    app, made = _application()
    app.setWindowIcon(icon(APP_ICON, role="accent"))
    theme.apply_theme(app, options.scheme, styled=made)
    with asyncio.Runner(loop_factory=lambda: FlareEventLoop(app)) as runner:
        return runner.run(_run(options))


class Session:
    """Everything one window needs, built in order and torn down in reverse."""

    def __init__(
        self,
        *,
        prefs: Preferences,
        client: LazyClient | WorkersAIClient,
        store: AsyncChatStore,
        options: GuiOptions,
    ) -> None:
        from flarechat.core.catalogue import CatalogueCache
        from flarechat.ui.control.chat import ChatController
        from flarechat.ui.control.workspace import WorkspaceController
        from flarechat.ui.window.main_window import MainWindow

        self.prefs, self.client, self.store = prefs, client, store
        self.closed = asyncio.Event()
        #: set once the tokens are known (at once when ``prefs`` were loaded whole)
        self.tokens_loaded = asyncio.Event()
        self._problems: list[str] = []
        self._token_task: asyncio.Task[None] | None = None
        self._shutting_down = False
        self.chat = ChatController(
            client=client,
            store=store,
            prefs=prefs,
            policy_factory=options.retry_policy_factory,
            start=False,  # after the first paint: _start_chat
        )
        self.workspace = WorkspaceController(
            chat=self.chat,
            store=store,
            client=client,
            prefs=prefs,
            catalogue=CatalogueCache(),
            start_demo=options.start_demo,
        )
        self.window = MainWindow(chat=self.chat, workspace=self.workspace)
        self.window.lab_hooks.lab.set_usage_source(store)  # today's usage and cost
        FirstPaint(self.window, self._after_first_paint)
        self.window.closed.connect(self.closed.set)
        self.window.ui_state_changed.connect(self.workspace.save_ui_state)

    def show(self, problems: list[str]) -> None:
        self._problems = list(problems)
        self.window.restore(self.prefs.settings)  # window state, look, demo mode
        self.window.show()
        self.chat.new_conversation()
        self.workspace.start()
        if problems:
            self.window.show_startup_problems(STARTUP_NOTICE_TITLE, "\n".join(problems))
        if not self.prefs.tokens_pending:
            self.tokens_loaded.set()
        else:
            QTimer.singleShot(TOKENS_AT_THE_LATEST_MS, self.window, self._start_token_load)
        # A window shown minimized or off-screen may not paint: the chat is built by then.
        QTimer.singleShot(TOKENS_AT_THE_LATEST_MS, self.window, self.chat.start)
        QTimer.singleShot(TOKENS_AT_THE_LATEST_MS, self.window, self.store.release)

    def add_problems(self, problems: list[str]) -> None:
        """More start-up problems (the database's, known once it was checked): one banner."""
        if problems:
            self._problems += problems
            self.window.show_startup_problems(STARTUP_NOTICE_TITLE, "\n".join(self._problems))

    def _after_first_paint(self) -> None:
        from flarechat.ui.transcript.message_view import load_body_module  # loaded with the window

        _after_first_paint()
        self.store.release()  # opened and checked while the chat engine is built
        QTimer.singleShot(0, self.chat.start)  # the next loop turn: the chat engine
        self._start_token_load()
        QTimer.singleShot(0, load_widget_types)  # ~25 ms now rather than at the first click
        QTimer.singleShot(0, load_body_module)  # the reply body's module, kept off the first paint

    def _start_token_load(self) -> None:
        if self.prefs.tokens_pending and self._token_task is None and not self._shutting_down:
            self._token_task = asyncio.ensure_future(self.load_tokens())

    async def load_tokens(self) -> None:
        """The keychain, read after the first paint; then the account is used (demo mode is
        left if it now is ready) and any keychain problem joins the start-up banner."""
        try:
            problems = await self.prefs.load_tokens()
            self.workspace.tokens_loaded()
            self.add_problems(problems)
        finally:
            _forget_module_sources()  # the keychain's imports were start-up's last burst
            start_up_settled("keychain read")
            self.tokens_loaded.set()

    async def shutdown(self) -> None:
        """Replies (saved as stopped), jobs, the state file, the HTTP client, the store."""
        self._shutting_down = True
        if self._token_task is not None:
            self._token_task.cancel()
        self.prefs.settings.ui_state = self.window.ui_state()
        await self.chat.shutdown()
        await self.workspace.shutdown()
        try:
            await self.prefs.save()
        except OSError as error:
            log.warning("settings not saved at quit: %s", error)
        await self.client.aclose()
        await self.store.close()
        self.window.deleteLater()


class SignalBridge:
    """SIGINT/SIGTERM close the window, so Ctrl+C or ``kill`` shut down in order too.

    A Python signal handler only runs when Python code does, and an idle Qt loop may not run
    any: the C-level handler writes to a socket (set_wakeup_fd) that Qt watches instead.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, on_signal: Callable[[], object]) -> None:
        self._on_signal = on_signal
        self._reader, self._writer = socket.socketpair()
        for end in (self._reader, self._writer):
            end.setblocking(False)
        self._previous_fd = signal.set_wakeup_fd(self._writer.fileno())
        self._previous = {sig: signal.signal(sig, _ignore_in_python) for sig in self.SIGNALS}
        self._notifier = QSocketNotifier(self._reader.fileno(), QSocketNotifier.Type.Read)
        self._notifier.activated.connect(self._on_readable)

    def _on_readable(self) -> None:
        try:
            received = self._reader.recv(SIGNAL_BUFFER)
        except BlockingIOError:
            return
        if received:
            self._on_signal()

    def close(self) -> None:
        self._notifier.setEnabled(False)
        signal.set_wakeup_fd(self._previous_fd)
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._reader.close()
        self._writer.close()


def _ignore_in_python(_signum: int, _frame: object) -> None:
    """The wakeup socket carries the signal; Python's own handler has nothing left to do."""


async def _explain_store_error(error: StoreError, *, interrupted: asyncio.Event) -> None:
    """The database cannot be used: say why in a box and wait until it is closed, or until
    SIGINT/SIGTERM (``interrupted``) ends the app while it is up."""
    from PySide6.QtWidgets import QMessageBox  # here: its class and enums cost start-up time

    box = QMessageBox(QMessageBox.Icon.Critical, APP_DISPLAY_NAME, str(error))
    closed = asyncio.Event()
    box.finished.connect(lambda _result: closed.set())
    box.open()
    log.error("the chat database cannot be used: %s", error)
    await _first_of(closed, interrupted)
    box.done(QMessageBox.StandardButton.Close.value)


async def _first_of(*events: asyncio.Event) -> None:
    """Return once any of ``events`` is set."""
    waits = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


async def _store_opened(
    session: Session, store: AsyncChatStore, *, interrupted: asyncio.Event
) -> bool:
    """Wait for the database the window was built around (checked on its worker thread once
    the window painted); its problems join the start-up banner. False, with
    the window closed and the reason in a box, when it cannot be used."""
    try:
        report = await store.opened()
    except StoreError as error:
        session.window.hide()
        await _explain_store_error(error, interrupted=interrupted)
        return False
    session.add_problems(report.problems)
    return True


async def _explain_unusable_profile(problem: str) -> int:
    """The profile folder can't be used: say so on stderr (as the command line does) and in a
    box, and end when it is closed (or at SIGINT/SIGTERM). The exit code of the CLI's."""
    from PySide6.QtWidgets import QMessageBox  # here: its class and enums cost start-up time

    sys.stderr.write(f"flarechat: {problem}\n")
    sys.stderr.flush()
    interrupted = asyncio.Event()
    bridge = SignalBridge(interrupted.set)
    box = QMessageBox(QMessageBox.Icon.Critical, APP_DISPLAY_NAME, problem)
    box.setAccessibleName("Flarechat can't start")
    closed = asyncio.Event()
    box.finished.connect(lambda _result: closed.set())
    box.open()
    try:
        await _first_of(closed, interrupted)
    finally:
        bridge.close()
        box.done(QMessageBox.StandardButton.Close.value)
        box.deleteLater()
    return EXIT_PROFILE_UNUSABLE


async def _run(options: GuiOptions) -> int:
    if options.profile_problem is not None:
        return await _explain_unusable_profile(options.profile_problem)
    try:
        settings_store = SettingsStore()
        # Opened and checked on the store's thread after the first paint (Session releases
        # it): calls queue behind the check, so nothing is read or written before it passed.
        store = AsyncChatStore.opening(default_path(), held=True)
    except OSError as error:  # the data or config folder is read-only, or a file
        return await _explain_unusable_profile(profile_problem(error))
    prefs = Preferences(store=settings_store, secrets=KeyringSecretStore())
    reading = asyncio.ensure_future(prefs.load_settings())  # the tokens: after the first paint
    await asyncio.sleep(0)  # the settings' thread starts before the imports
    for name in WINDOW_MODULES:
        importlib.import_module(name)
    _forget_module_sources()  # before the window is built, so its objects reuse the memory
    problems = await reading
    session = Session(prefs=prefs, client=LazyClient(), store=store, options=options)
    _forget_module_sources()  # and those read at the Session's own imports of them
    interrupted = asyncio.Event()  # SIGINT/SIGTERM: also ends what waits before the window

    def on_signal() -> None:
        interrupted.set()
        session.window.close()

    bridge = SignalBridge(on_signal)
    session.show(problems)
    if not await _store_opened(session, store, interrupted=interrupted):
        bridge.close()
        await session.shutdown()
        return 1
    if options.demo_at_start:
        await session.workspace.use_demo()
    if options.autosend:
        await session.tokens_loaded.wait()
        session.chat.send(options.autosend)
    try:
        await session.closed.wait()
    finally:
        bridge.close()
    await session.shutdown()
    return 0
