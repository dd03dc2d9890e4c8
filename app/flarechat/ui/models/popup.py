"""The model picker's drop-down: search field, status and Refresh, the list, a "Use …" footer."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QHideEvent, QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from flarechat.api.models import ModelInfo
from flarechat.ui.models.listing import (
    MODEL_ROLE,
    ModelFilterProxy,
    ModelItemDelegate,
    ModelListModel,
    looks_like_model_id,
)
from flarechat.ui.shared.icons import icon

__all__ = ["ModelPickerPopup"]

POPUP_MARGIN = 8
_NAVIGATION_KEYS = frozenset(
    {Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown}
)
_ENTER_KEYS = frozenset({Qt.Key.Key_Return, Qt.Key.Key_Enter})


class ModelPickerPopup(QFrame):
    """The drop-down: search field, status + Refresh, the model list and a "Use …" footer.

    Signals:
        chosen(str): a model id was picked (from the list or typed by hand).
        refresh_requested(): the user pressed Refresh.
        closed(): the popup was hidden.
    """

    chosen = Signal(str)
    refresh_requested = Signal()
    closed = Signal()

    def __init__(self, model: ModelListModel, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Popup)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Model list")
        self._source = model
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Search models by name or description…")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Search models")
        self.search.installEventFilter(self)
        self.status = QLabel(self)
        self.status.setAccessibleName("Model list status")
        self.status.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.status.setWordWrap(True)  # a failed fetch says why, in a sentence or two
        self.refresh_button = QToolButton(self)
        self.refresh_button.setText("Refresh")
        self.refresh_button.setIcon(icon("refresh"))
        self.refresh_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.refresh_button.setAccessibleName("Refresh model list")
        self.refresh_button.setToolTip("Fetch the current model catalogue from Cloudflare")
        self.proxy = ModelFilterProxy(self)
        self.proxy.setSourceModel(model)
        self.delegate = ModelItemDelegate(self)
        self.view = self._make_view()
        self.hint = QLabel(self)
        self.hint.setWordWrap(True)
        self.hint.setAccessibleName("No matching models")
        self.footer = QPushButton(self)
        self.footer.setAccessibleName("Use the typed model id")
        self.footer.setToolTip("New models work before the catalogue lists them")
        self._layout()
        self._connect()
        self._update_footer()

    def _make_view(self) -> QListView:
        view = QListView(self)
        view.setModel(self.proxy)
        view.setItemDelegate(self.delegate)
        view.setUniformItemSizes(True)
        view.setMouseTracking(True)
        view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        view.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # typing stays in the search field
        view.setAccessibleName("Models")
        return view

    def _layout(self) -> None:
        top = QHBoxLayout()
        top.addWidget(self.status, 1)
        top.addWidget(self.refresh_button)
        box = QVBoxLayout(self)
        box.setContentsMargins(POPUP_MARGIN, POPUP_MARGIN, POPUP_MARGIN, POPUP_MARGIN)
        box.addWidget(self.search)
        box.addLayout(top)
        box.addWidget(self.view, 1)
        box.addWidget(self.hint)
        box.addWidget(self.footer)

    def _connect(self) -> None:
        self.search.textChanged.connect(self._on_search_text_changed)
        self.refresh_button.clicked.connect(self.refresh_requested)
        self.view.clicked.connect(self._on_view_activated)
        self.view.activated.connect(self._on_view_activated)
        self.footer.clicked.connect(self._on_footer_clicked)
        self.proxy.modelReset.connect(self._update_footer)
        self.proxy.rowsInserted.connect(self._update_footer)
        self.proxy.rowsRemoved.connect(self._update_footer)

    # -- state ----------------------------------------------------------------------------
    def set_status(self, text: str, *, loading: bool) -> None:
        self.status.setText(text)
        self.refresh_button.setEnabled(not loading)

    def reset(self, current_id: str) -> None:
        """Clear the search and put the selection on the current model."""
        self.search.clear()
        self.delegate.current_id = current_id
        self._select_name(current_id)
        self.search.setFocus(Qt.FocusReason.PopupFocusReason)

    def highlighted_name(self) -> str | None:
        info = self.view.currentIndex().data(MODEL_ROLE)
        return info.name if isinstance(info, ModelInfo) else None

    def keep_highlight(self, name: str | None) -> None:
        """After the list changed under an open popup: keep the query and the highlighted row."""
        self._update_footer()
        if name is None and self.footer.isVisible():
            self.view.setCurrentIndex(QModelIndex())
        else:
            self._select_name(name or self.delegate.current_id)

    def typed_id(self) -> str:
        return self.search.text().strip()

    def _select_name(self, name: str) -> None:
        for row in range(self.proxy.rowCount()):
            index = self.proxy.index(row, 0)
            info = index.data(MODEL_ROLE)
            if isinstance(info, ModelInfo) and info.name == name:
                self.view.setCurrentIndex(index)
                self.view.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
                return
        self.view.setCurrentIndex(self.proxy.index(0, 0))

    def _update_footer(self) -> None:
        typed = self.typed_id()
        offer = looks_like_model_id(typed) and self._source.find(typed) is None
        self.footer.setText(f"Use “{typed}”")
        self.footer.setVisible(offer)
        empty = self.proxy.rowCount() == 0 and not offer
        self.hint.setText(
            f"No models match “{typed}”. Type a full id such as @cf/vendor/model to use "
            "a model that is not listed yet."
            if typed
            else "No models yet — press Refresh, or type a full model id."
        )
        self.hint.setVisible(empty)

    # -- slots ----------------------------------------------------------------------------
    def _on_search_text_changed(self, text: str) -> None:
        self.proxy.set_query(text)
        self._update_footer()
        if self.footer.isVisible():
            self.view.setCurrentIndex(QModelIndex())  # Enter takes the typed id
        else:
            self._select_name(self.typed_id())

    def _on_view_activated(self, index: QModelIndex | QPersistentModelIndex) -> None:
        info = index.data(MODEL_ROLE)
        if isinstance(info, ModelInfo):
            self._choose(info.name)

    def _on_footer_clicked(self) -> None:
        self._choose(self.typed_id())

    def _choose(self, model_id: str) -> None:
        if not self.isVisible() or not model_id:
            return  # a click also arrives as "activated": pick once
        self.hide()
        self.chosen.emit(model_id)

    def _accept_current(self) -> None:
        index = self.view.currentIndex()
        if index.isValid():
            self._on_view_activated(index)
        elif self.footer.isVisible():
            self._choose(self.typed_id())

    def _move(self, key: Qt.Key) -> None:
        rows = self.proxy.rowCount()
        if rows == 0:
            return
        row = self.view.currentIndex().row()
        page = max(self.view.viewport().height() // max(self.view.sizeHintForRow(0), 1), 1)
        step = {Qt.Key.Key_Up: -1, Qt.Key.Key_Down: 1, Qt.Key.Key_PageUp: -page}.get(key, page)
        target = 0 if row < 0 else min(max(row + step, 0), rows - 1)
        self.view.setCurrentIndex(self.proxy.index(target, 0))

    # -- events ---------------------------------------------------------------------------
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.search and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            return self._handle_key(Qt.Key(event.key()))
        return super().eventFilter(watched, event)

    def _handle_key(self, key: Qt.Key) -> bool:
        if key in _NAVIGATION_KEYS:
            self._move(key)
        elif key in _ENTER_KEYS:
            self._accept_current()
        elif key == Qt.Key.Key_Escape:
            self.hide()
        else:
            return False
        return True

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if not self._handle_key(Qt.Key(event.key())):
            super().keyPressEvent(event)

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self.closed.emit()
