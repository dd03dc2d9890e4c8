"""The status bar's metrics line: the model, the last reply's figures and the neurons spent
today (read from the store at start-up and after each reply)."""

from __future__ import annotations

from collections.abc import Callable

from flarechat.core.session import SessionBook
from flarechat.core.tasks import TaskKeeper
from flarechat.core.turn import TurnState
from flarechat.ui.control import presenting

__all__ = ["StatusLine"]


class StatusLine:
    """Keeps what the metrics line shows and says each new line to ``show_line``."""

    def __init__(
        self,
        book: SessionBook,
        *,
        jobs: TaskKeeper,
        current_model: Callable[[], str],
        show_line: Callable[[str], None],
    ) -> None:
        self._book = book
        self._jobs = jobs
        self._current_model = current_model
        self._show_line = show_line
        self._shown: tuple[str, TurnState | None] | None = None

    def show(self, model: str, state: TurnState | None) -> None:
        """The line for ``model`` and a reply's figures (None: no reply yet)."""
        self._shown = (model, state)
        today = self._book.neurons_today()
        self._show_line(presenting.metrics_line(model=model, state=state, neurons_today=today))

    def count(self, state: TurnState | None) -> None:
        """A finished reply's neurons count at once (``finished`` then reads the store)."""
        self._book.count_neurons(state)

    def finished(self, model: str, state: TurnState | None, *, on_screen: bool) -> None:
        """A reply finished: its figures are shown (when on screen), today's neurons re-read."""
        if on_screen:
            self.show(model, state)
        self.refresh_neurons()  # the saved reply is in the database now: count from there

    def refresh_neurons(self) -> None:
        """Re-read "neurons today" from the store (start-up, after each reply)."""
        self._jobs.spawn(self._load_neurons(), name="neurons-today")

    async def _load_neurons(self) -> None:
        if await self._book.load_neurons() is not None:
            model, state = self._shown or (self._current_model(), None)
            self.show(model, state)
