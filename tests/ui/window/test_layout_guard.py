"""Nothing clipped, nothing on top of something else: every dialog, settings page and banner,
in both themes, at three window sizes (and with the keychain warning and every validation
error showing). Issue 11's guard rail."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from layout_check import layout_problems
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from flarechat.settings.schema import Settings
from flarechat.settings.secrets import MemorySecretStore
from flarechat.ui.chat.banners import NoticeBanner, RetryBanner
from flarechat.ui.chat.chat_pane import ChatPane
from flarechat.ui.chat.composer import ComposerWidget
from flarechat.ui.chat.panels import DemoStrip, EmptyChatPanel, FindBar, WelcomePanel
from flarechat.ui.settings.conversation_dialog import ConversationDialog
from flarechat.ui.settings.dialog import KEYCHAIN_WARNING, SettingsDialog
from flarechat.ui.settings.fields import TokenState
from flarechat.ui.shared.theme import apply_theme
from flarechat.ui.sidebar.sidebar import Sidebar

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
