"""asyncio without its TLS support until the HTTP client is built (start-up, issue #12).

``import asyncio`` imports ``ssl``, and with it OpenSSL's two libraries: ~12-27 ms of the
window's start, for TLS that nothing before the first paint uses (the settings file, the
database and the window need none; every request goes through ``LazyClient``, built after the
paint on a worker thread). :func:`import_asyncio` imports asyncio with ``ssl`` hidden, so its
three modules that keep a reference to it (``base_events``, ``selector_events``, ``sslproto``)
take the "no ssl module" branch they have for Pythons built without it; :func:`give_tls`,
called before the client is built, imports ``ssl`` and hands it to them, with the one
module-level value ``sslproto`` derives from it. CPython 3.11 to 3.13 have exactly these.

Until then asyncio's TLS calls fail as on a Python without ssl ("ssl module not available"),
which is why the client builder calls :func:`give_tls` first. Anything else in the process
that imports ``ssl`` gets the real module at any time: it is hidden only while asyncio's own
import runs.
"""

from __future__ import annotations

import importlib
import sys
import threading

__all__ = ["ASYNCIO_TLS_MODULES", "give_tls", "import_asyncio", "tls_ready"]

#: asyncio's modules that bind ``ssl`` at import (``ssl = None`` when it cannot be imported).
ASYNCIO_TLS_MODULES = ("asyncio.base_events", "asyncio.selector_events", "asyncio.sslproto")

_lock = threading.Lock()


def import_asyncio() -> None:
    """Import asyncio without importing ``ssl`` (a no-op when either is imported already)."""
    if "asyncio" in sys.modules or "ssl" in sys.modules:
        return
    sys.modules["ssl"] = None  # type: ignore[assignment]  # this import fails, as designed
    try:
        importlib.import_module("asyncio")
    finally:
        del sys.modules["ssl"]


def tls_ready() -> bool:
    """Whether asyncio's TLS modules hold the ``ssl`` module."""
    modules = [sys.modules.get(name) for name in ASYNCIO_TLS_MODULES]
    return all(module is None or getattr(module, "ssl", None) is not None for module in modules)


def give_tls() -> None:
    """Import ``ssl`` and give it to asyncio's TLS modules (idempotent, any thread)."""
    with _lock:
        if tls_ready():
            return
        import ssl

        for name in ASYNCIO_TLS_MODULES:
            module = importlib.import_module(name)
            if getattr(module, "ssl", None) is None:
                module.ssl = ssl  # type: ignore[attr-defined]
        sslproto = importlib.import_module("asyncio.sslproto")
        if not hasattr(sslproto, "SSLAgainErrors"):
            sslproto.SSLAgainErrors = (ssl.SSLWantReadError, ssl.SSLSyscallError)  # type: ignore[attr-defined]
