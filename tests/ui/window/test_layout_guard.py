"""Nothing clipped, nothing on top of something else: the main window in each of its states,
every dialog, settings page, popup and banner, in both themes, at three window sizes (in demo
mode and with the keychain warning, and with every validation error showing). Issue 11's guard
rail; the last test proves the checker sees a real clip."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from layout_check import layout_problems
from PySide6.QtCore import QRect, QSize
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot
from window_helpers import until, window

from flarechat.emulator import EmulatorServer
from flarechat.settings.schema import Settings
from flarechat.settings.secrets import MemorySecretStore
from flarechat.ui.app import STARTUP_NOTICE_TITLE
from flarechat.ui.chat.banners import NoticeBanner, RetryBanner
from flarechat.ui.chat.chat_pane import ChatPane
from flarechat.ui.chat.composer import ComposerWidget
from flarechat.ui.chat.panels import DemoStrip, EmptyChatPanel, FindBar, WelcomePanel
from flarechat.ui.control.preferences import KEYCHAIN_PROBLEM
from flarechat.ui.settings.conversation_dialog import ConversationDialog
from flarechat.ui.settings.dialog import KEYCHAIN_WARNING, SettingsDialog
from flarechat.ui.settings.fields import TokenState
from flarechat.ui.shared.theme import apply_theme
from flarechat.ui.sidebar.sidebar import Sidebar
from flarechat.ui.window.main_window import MainWindow
from flarechat.ui.window.status_bar import FittingStatusBar, MetricsLabel
from flarechat.ui.window.window_dialogs import show_about

SIZES = ((800, 500), (1280, 800), (1920, 1080))
SCHEMES = ("light", "dark")
#: A dialog on a small screen gets at most the screen, less room for the window frame.
FRAME_PX = 40
#: The narrowest the sidebar gets beside the chat column.
SIDEBAR_PX = 200
FULL_HEIGHT = ("welcome", "empty chat", "empty sidebar", "chat pane", "conversation settings")
BAD = Settings(
    account_id="not-an-account",
    route="gateway-rest",
    gateway_id="bad gateway id!",
    cache_ttl=10,
    api_base="http://example.com",
    gateway_base="ftp://nope",
    gateway_cache_key="x" * 300,
)
GOOD = Settings(
    account_id="9a7f3c1e5b2d4f6a8c0e1b3d5f7a9c2e", route="gateway-rest", gateway_id="team"
)


@pytest.fixture(params=SCHEMES)
def scheme(request: pytest.FixtureRequest, qapp: QApplication) -> Iterator[str]:
    apply_theme(qapp, request.param)
    yield request.param
    apply_theme(qapp, "light")


def _shown(qtbot: QtBot, widget: QWidget, size: tuple[int, int]) -> QWidget:
    qtbot.addWidget(widget)
    widget.resize(*size)
    widget.show()
    QApplication.processEvents()
    widget.resize(*size)  # after show: a dialog's first show picks its own size
    QApplication.processEvents()
    return widget


def _assert_fits(root: QWidget, what: str) -> None:
    problems = layout_problems(root)
    assert problems == [], f"{what}: " + "; ".join(problems)


def _settings(settings: Settings, *, keychain_down: bool) -> SettingsDialog:
    dialog = SettingsDialog(
        settings, secrets=MemorySecretStore(), overridden=frozenset(), verify=None, env={}
    )
    dialog.form.api_token.set_state(TokenState.NONE)
    dialog.form.gateway_token.set_state(TokenState.NONE)
    if keychain_down:
        dialog._keychain_down = True  # what a failed keychain probe leaves behind
        dialog._keychain_text = KEYCHAIN_WARNING.format(reason="no D-Bus session bus")
        dialog.form.set_token_notes(keychain="the system keychain", session_only=True)
    dialog.form.gateway_options.metadata.setText("a=1, b")
    dialog._revalidate()
    return dialog


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize(("settings", "keychain_down"), [(GOOD, False), (BAD, True)])
def test_every_settings_page_fits(
    qtbot: QtBot, scheme: str, size: tuple[int, int], settings: Settings, keychain_down: bool
) -> None:
    dialog = _settings(settings, keychain_down=keychain_down)
    width, height = size
    _shown(qtbot, dialog, (min(width, dialog.width() or width), height - FRAME_PX))
    if keychain_down:
        assert dialog.form.keychain_warning.isVisible()
    if settings is BAD:
        assert len(dialog.errors()) >= 6
    for index in range(dialog.form.tabs.count()):
        dialog.form.tabs.setCurrentIndex(index)
        QApplication.processEvents()
        _assert_fits(dialog, f"settings tab {dialog.form.tabs.tabText(index)} ({scheme}, {size})")


def _banners() -> Iterator[tuple[str, Callable[[], QWidget]]]:
    def retry() -> QWidget:
        banner = RetryBanner()
        banner.show_capacity(
            model="llama-3.3-70b-instruct-fp8-fast", attempt=2, max_attempts=4, seconds=12
        )
        return banner

    def exhausted() -> QWidget:
        banner = RetryBanner()
        banner.show_exhausted(model="llama-3.3-70b-instruct-fp8-fast", attempts=4)
        return banner

    def notice() -> QWidget:
        banner = NoticeBanner()
        banner.show(
            "error",
            "Cloudflare refused the API token",
            "The token was rejected (code 10000). Check it in Settings.",
            [("open_settings", "Open settings…"), ("retry", "Retry")],
        )
        banner.show_countdown(30, label="You can retry in")
        return banner

    def composer() -> QWidget:
        widget = ComposerWidget()
        widget.set_model("@cf/meta/llama-3.3-70b-instruct-fp8-fast")
        widget.show_queued(12)
        return widget

    def find_bar() -> QWidget:
        bar = FindBar()
        bar.open_bar()
        bar.count.setText("12 of 140")
        return bar

    def empty_chat() -> QWidget:
        panel = EmptyChatPanel()
        panel.set_model("@cf/meta/llama-3.3-70b-instruct-fp8-fast", "A fast Llama · 24K ctx window")
        return panel

    def sidebar() -> QWidget:
        widget = Sidebar()
        widget.set_conversations([])
        return widget

    yield from {
        "retry banner": retry,
        "retry banner, given up": exhausted,
        "notice banner": notice,
        "composer": composer,
        "find bar": find_bar,
        "welcome": WelcomePanel,
        "demo strip": lambda: _visible(DemoStrip()),
        "empty chat": empty_chat,
        "empty sidebar": sidebar,
        "chat pane": ChatPane,
        "conversation settings": lambda: ConversationDialog(
            system_prompt="Be brief.", params={}, default_max_tokens=2048
        ),
    }.items()


def _visible(widget: QWidget) -> QWidget:
    widget.setVisible(True)
    return widget


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize(("name", "make"), list(_banners()), ids=lambda v: str(v))
def test_every_panel_and_banner_fits(
    qtbot: QtBot, scheme: str, size: tuple[int, int], name: str, make: Callable[[], QWidget]
) -> None:
    widget = make()
    width, height = size
    column = width - SIDEBAR_PX  # panels and banners live in the chat column
    if name not in FULL_HEIGHT:  # a strip gets the height its layout asks for at that width
        height = max(widget.sizeHint().height(), widget.heightForWidth(column))
    _shown(qtbot, widget, (column, height))
    _assert_fits(widget, f"{name} ({scheme}, {size})")


# -- the main window and what opens from it -----------------------------------------------

ACCOUNTS = ("demo", "keychain warning")
#: Replies of a few hundred tokens arrive at once: the guard is about layout, not streaming.
FAST_TOKENS_PER_SECOND = 2000.0
#: A resize settles in a few turns of the loop (layouts run on posted events, and a wrapped
#: label's height-for-width needs a second pass): turns go on until no widget has moved for
#: STILL_TURNS turns, at most MAX_SETTLE_TURNS (a layout that never settles is then checked as
#: it stands). Never QApplication.processEvents() here: re-entering Qt from a qasync callback
#: loses its timers.
STILL_TURNS = 3
MAX_SETTLE_TURNS = 200
SETTLE_S = 0.005
TEMPLATE = "Tell {{who}} about {{topic}} in the {{style}} of {{author}}, {{length}} long"
RICH_REPLY = "Show me Python code and a table."


async def _settle(root: QWidget) -> None:
    """Loop turns until ``root``'s widgets keep their geometry: on a busy machine a fixed few
    turns could end between a wrapped label's two layout passes."""
    still, last = 0, _geometries(root)
    for _ in range(MAX_SETTLE_TURNS):
        await asyncio.sleep(SETTLE_S)
        now = _geometries(root)
        still = still + 1 if now == last else 0
        if still >= STILL_TURNS:
            return
        last = now


def _geometries(root: QWidget) -> list[QRect]:
    return [w.geometry() for w in (root, *root.findChildren(QWidget)) if w.isVisible()]


async def _fits_at_every_size(root: QWidget, what: str, *, dialog: bool = False) -> list[str]:
    """Problems of ``root`` at each screen size: a window takes the screen's size (and must
    accept it), a dialog keeps its own size unless the screen is smaller."""
    problems: list[str] = []
    own = root.size()
    for width, height in SIZES:
        asked = (min(own.width(), width), min(own.height(), height - FRAME_PX)) if dialog else (
            width, height)  # fmt: skip
        root.resize(*asked)
        await _settle(root)
        where = f"{what} at {width}x{height}"
        if (root.width(), root.height()) != asked:
            problems.append(f"{where}: cannot be {asked[0]}x{asked[1]}, its minimum is "
                            f"{root.width()}x{root.height()}")  # fmt: skip
        problems += [f"{where}: {problem}" for problem in layout_problems(root)]
    return problems


@asynccontextmanager
async def _window_as(
    account: str, emulator: EmulatorServer, tmp_path: Path
) -> AsyncIterator[MainWindow]:
    """The window in demo mode (no account), or on an account whose keychain is missing."""
    emulator.state.set_tokens_per_second(FAST_TOKENS_PER_SECOND)
    demo = account == "demo"
    options = {"token": None, "account_id": ""} if demo else {}
    async with window(emulator, tmp_path, **options) as (env, main, _seen):
        if demo:
            env.workspace.enable_demo()
            await until(main.pane.demo_strip.isVisible, "the demo strip")
        else:
            problem = KEYCHAIN_PROBLEM.format(reason="no D-Bus session bus")
            main.show_startup_problems(STARTUP_NOTICE_TITLE, problem)
        yield main


async def _reply(main: MainWindow, text: str) -> None:
    main.chat.send(text)
    assert main.chat.is_busy()
    await until(lambda: not main.chat.is_busy(), "the reply")
    tree = main.chat.current_tree()
    assert tree is not None
    assert tree.path()[-1].content, "no reply on screen"


@pytest.mark.asyncio
@pytest.mark.parametrize("account", ACCOUNTS)
async def test_the_main_window_fits_in_every_state(
    emulator: EmulatorServer, tmp_path: Path, scheme: str, account: str
) -> None:
    """Empty state, a chat with a rich reply, the find bar, the template form, the retry
    banner in place and Undo after a delete, with the sidebar, toolbar, composer bar and a
    full status bar."""
    problems: list[str] = []
    async with _window_as(account, emulator, tmp_path) as main:
        problems += await _fits_at_every_size(main, f"empty chat ({scheme}, {account})")
        await _reply(main, RICH_REPLY)
        problems += await _fits_at_every_size(main, f"chat ({scheme}, {account})")
        main.pane.find_bar.open_bar()
        problems += await _fits_at_every_size(main, f"find bar ({scheme}, {account})")
        main.pane.composer.set_text(TEMPLATE)
        main.lab_hooks.bar.update_draft()
        assert main.lab_hooks.bar.form.isVisible()
        problems += await _fits_at_every_size(main, f"template form ({scheme}, {account})")
        main.pane.composer.set_text("")
        main.lab_hooks.bar.update_draft()
        main.pane.retry_banner.show_capacity(
            model="llama-3.3-70b-instruct-fp8-fast", attempt=2, max_attempts=4, seconds=12
        )
        problems += await _fits_at_every_size(main, f"retry banner ({scheme}, {account})")
        main.pane.retry_banner.hide()
        deleted = main.chat.current_id
        assert deleted is not None
        main.workspace.delete(deleted)
        await until(main.undo_button.isVisible, "Undo in the status bar")
        problems += await _fits_at_every_size(main, f"Undo delete ({scheme}, {account})")
    assert problems == [], "\n".join(problems)


@pytest.mark.asyncio
async def test_the_windows_dialogs_and_popups_fit(
    emulator: EmulatorServer, tmp_path: Path, scheme: str
) -> None:
    """The model picker, About (without a keychain), presets, View as code, compare and the
    leaderboard, each as it opens from the window."""
    problems: list[str] = []
    async with _window_as("keychain warning", emulator, tmp_path) as main:
        await _reply(main, RICH_REPLY)
        main.picker.open_popup()
        problems += await _fits_at_every_size(main.picker.popup, f"model picker ({scheme})",
                                              dialog=True)  # fmt: skip
        main.picker.popup.hide()
        about = show_about(main, keychain=False)
        problems += await _fits_at_every_size(about, f"About ({scheme})", dialog=True)
        about.close()
        main.lab_hooks.lab.save_preset("Terse reviewer")
        await main.lab_hooks.lab.drain()
        presets = main.lab_hooks.bar.open_presets()
        problems += await _fits_at_every_size(presets, f"presets ({scheme})", dialog=True)
        presets.close()
        main.lab_hooks.view_last_code()
        code = main.lab_hooks.code_dialog
        assert code is not None
        problems += await _fits_at_every_size(code, f"View as code ({scheme})", dialog=True)
        code.close()
        main.open_compare()
        compare = main.compare_window
        assert compare is not None
        problems += await _fits_at_every_size(compare, f"compare ({scheme})")
        board = compare.open_leaderboard()
        problems += await _fits_at_every_size(board, f"leaderboard ({scheme})", dialog=True)
        board.close()
        compare.close()
    assert problems == [], "\n".join(problems)


# -- the checker itself ----------------------------------------------------------------------


def test_the_checker_reports_a_clipped_label_and_an_overlap(qtbot: QtBot) -> None:
    """A label squeezed below its text, and two siblings on top of each other, are reported
    (so a green guard means something)."""
    root = QWidget()
    squeezed = QLabel("A label far too long for the few pixels it is given", root)
    squeezed.setGeometry(0, 0, 60, 20)
    first, second = QLabel("First", root), QLabel("Second", root)
    first.setGeometry(0, 40, 80, 24)
    second.setGeometry(20, 50, 80, 24)
    _shown(qtbot, root, (300, 120))
    problems = layout_problems(root)
    assert any("A label far too long" in p for p in problems), problems
    assert any("overlaps" in p for p in problems), problems


def test_the_checker_sees_text_wider_than_a_label_that_hides_its_hint(qtbot: QtBot) -> None:
    """A label whose size hints claim less than its text needs is still caught by its text."""

    class Shy(QLabel):
        def minimumSizeHint(self) -> QSize:
            return QSize(1, 1)

    root = QWidget()
    column = QVBoxLayout(root)
    shy = Shy("Text that never fits in thirty pixels", root)
    shy.setFixedWidth(30)
    column.addWidget(shy)
    _shown(qtbot, root, (200, 60))
    assert any("shows text" in p for p in layout_problems(root))


def test_a_narrow_status_bar_drops_parts_and_keeps_them_in_the_tooltip(qtbot: QtBot) -> None:
    """Figures go first, whole; then the optional widgets; all of it stays in the tooltip."""
    host = QMainWindow()
    metrics = MetricsLabel()
    bar = FittingStatusBar(metrics, host)
    host.setStatusBar(bar)
    usage, route = QLabel("This chat: 4.13 neurons · ≈ $0.000045 (estimate)"), QLabel("Direct")
    bar.addWidget(metrics, 1)
    bar.addPermanentWidget(route)
    bar.addPermanentWidget(usage)
    bar.set_drop_order([usage, route])
    line = "llama-3.1-8b-instruct-fast · TTFT 49 ms · 1849 tok/s · 12.40 neurons today"
    metrics.show_line(line)
    _shown(qtbot, host, (1280, 120))
    assert metrics.text() == line
    assert bar.dropped() == []
    host.resize(300, 120)
    QApplication.processEvents()
    assert bar.dropped() == [usage]
    assert metrics.text().startswith("llama-3.1-8b-instruct-fast")  # the name stays whole
    assert metrics.text().endswith("\N{HORIZONTAL ELLIPSIS}")
    assert usage.text() in metrics.toolTip()
    assert line in metrics.toolTip()
    assert layout_problems(host) == []
    host.resize(1280, 120)
    QApplication.processEvents()
    assert bar.dropped() == []
    assert usage.isVisible()
