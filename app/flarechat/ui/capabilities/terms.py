"""The licence banner (5016): which model asks for agreement, a link to its licence (opened
in the system browser only when clicked), and "Agree and continue"."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from PySide6.QtGui import QDesktopServices

from flarechat.ui.control.presenting import ACTION_AGREE, ACTION_SWITCH_MODEL, INFO, NoticeSpec

if TYPE_CHECKING:  # QUrl's class and its enums are made on the first click (start-up)
    from PySide6.QtCore import QUrl

__all__ = ["ACTION_OPEN_LICENCE", "open_licence", "terms_notice"]

ACTION_OPEN_LICENCE = ("open_licence", "Read the licence\N{NORTH EAST ARROW}")
#: Only web links are opened: a licence URL comes from the server, never a file or a scheme
#: that starts a program.
_WEB_SCHEMES = frozenset({"https", "http"})


def _short(model: str) -> str:
    return model.rsplit("/", 1)[-1] or "This model"


def licence_url(extra: dict[str, Any]) -> str | None:
    """The licence link of a 5016 failure, when it is a web address."""
    url = extra.get("terms_url")
    if not isinstance(url, str) or urlsplit(url).scheme not in _WEB_SCHEMES:
        return None
    return url


def terms_notice(message: str, *, extra: dict[str, Any]) -> NoticeSpec:
    """The banner for a reply held because the model's licence was not accepted."""
    model = str(extra.get("model") or "")
    short = _short(model)
    url = licence_url(extra)
    where = f" Its licence: {url}" if url else " Its licence is on the model's page."
    text = (
        f"{model or short} is published under a licence that this account has not accepted "
        f'yet.{where} "Agree and continue" accepts it for this account and sends your '
        "message again."
    )
    if message and message not in text:
        text = f"{text}\n{message}"
    actions = [ACTION_AGREE, *([ACTION_OPEN_LICENCE] if url else []), ACTION_SWITCH_MODEL]
    return NoticeSpec(INFO, f"Accept the licence of {short} to use it", text, actions)


def open_licence(
    url: str | None, *, opener: Callable[[QUrl], object] = QDesktopServices.openUrl
) -> bool:
    """Open the licence in the system browser (only ever from a click); False if no web URL."""
    if url is None or urlsplit(url).scheme not in _WEB_SCHEMES:
        return False
    from PySide6.QtCore import QUrl

    opener(QUrl(url))
    return True
