"""Demo mode's Simulate menu in the main window (shown only in demo mode), and the Help entry
that says how to try every banner. One call from MainWindow; the entries are
``ui.control.simulations``' and the workspace sends them to the emulator."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow, QMenu, QMessageBox

from flarechat.ui.control.workspace import WorkspaceController

if TYPE_CHECKING:
    from flarechat.ui.control.simulations import Simulation

__all__ = ["SIMULATE_TITLE", "SimulateMenu"]

SIMULATE_TITLE = "&Simulate"
CAPACITY_TITLE = "Model at &capacity for the\N{HORIZONTAL ELLIPSIS}"
HELP_ENTRY = "Demo mode and the &Simulate menu\N{HORIZONTAL ELLIPSIS}"
#: What a simulation set up stays in the status bar (long enough to read and then send).
SIMULATED_MESSAGE_MS = 10_000


class _Host(Protocol):
    workspace: WorkspaceController


class SimulateMenu:
    """The Simulate menu (before Help) and Help's entry about it; holds them for tests."""

    def __init__(self, window: QMainWindow) -> None:
        host: _Host = window  # type: ignore[assignment]
        self.window = window
        self.workspace = host.workspace
        self.menu = QMenu(SIMULATE_TITLE, window)
        self.menu.setObjectName("simulateMenu")
        self.menu.setToolTipsVisible(True)
        self.menu.aboutToShow.connect(self._fill)
        bar = window.menuBar()
        help_menu = next((a for a in bar.actions() if a.text().replace("&", "") == "Help"), None)
        if help_menu is not None:
            bar.insertMenu(help_menu, self.menu)
            about = help_menu.menu()
            if isinstance(about, QMenu):
                self.help_action = about.addAction(HELP_ENTRY)
                self.help_action.triggered.connect(lambda *_: self.show_help())
        else:
            bar.addMenu(self.menu)
        self._actions: dict[str, QAction] = {}
        self.workspace.demo_changed.connect(lambda *_: self._update())
        self.workspace.simulated.connect(self._said)
        self._update()

    @property
    def available(self) -> bool:
        """Whether the menu is in the menu bar (demo mode only)."""
        return self.menu.menuAction().isVisible()

    def _update(self) -> None:
        self.menu.menuAction().setVisible(self.workspace.can_simulate)

    def _fill(self) -> None:
        """The entries, made when the menu is first opened (nothing of it at start-up)."""
        if self._actions:
            return
        from flarechat.ui.control.simulations import SIMULATIONS

        capacity = self.menu.addMenu(CAPACITY_TITLE)
        for entry in SIMULATIONS:
            if entry.key.startswith("capacity-"):
                self._add(capacity, entry)
            else:
                if entry.action == "reset":
                    self.menu.addSeparator()
                self._add(self.menu, entry)

    def _add(self, menu: QMenu, entry: Simulation) -> None:
        action = menu.addAction(entry.label)
        action.setToolTip(entry.done)
        action.triggered.connect(partial(self._chosen, entry.key))
        self._actions[entry.key] = action

    def action(self, key: str) -> QAction:
        """The entry for a simulation (the menu is filled first if it was never opened)."""
        self._fill()
        return self._actions[key]

    def _chosen(self, key: str, *_: object) -> None:
        self.workspace.simulate(key)

    def _said(self, text: str) -> None:
        self.window.statusBar().showMessage(text, SIMULATED_MESSAGE_MS)

    def show_help(self) -> QMessageBox:
        from flarechat.ui.control.simulations import HELP_TEXT, HELP_TITLE

        box = QMessageBox(QMessageBox.Icon.Information, HELP_TITLE, HELP_TEXT, parent=self.window)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        return box
