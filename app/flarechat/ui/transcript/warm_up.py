"""Markdown and code highlighting made ready on a background thread: importing markdown-it and
building a lexer's regexes cost the first reply 0.5-0.8 s of the GUI thread (the imports
themselves wait until they are needed, issue #12). Then what the app holds for good is frozen
out of the garbage collector's full passes."""

from __future__ import annotations

import threading

from flarechat.ui.shared.settling import start_up_settled

__all__ = ["WARM_LANGUAGES", "warm_up", "warm_up_in_background"]

#: Lexers built ahead: the languages models write most (Python's alone takes ~0.2 s).
WARM_LANGUAGES = ("python", "javascript", "bash", "json")
#: Parsed once so markdown-it's rules (tables, lists, fences, inline code) are all loaded.
_SAMPLE = "# A\n\n*b* `c`\n\n| d |\n|---|\n| e |\n\n- f\n\n```python\ng\n```\n"
_lock = threading.Lock()
_thread: threading.Thread | None = None


def warm_up() -> None:
    """Import and build what the first render needs. Touches no Qt: safe on any thread."""
    from markdown_it import MarkdownIt
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name

    MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"]).parse(_SAMPLE)
    HtmlFormatter(noclasses=True, nowrap=True)
    for language in WARM_LANGUAGES:
        get_lexer_by_name(language)  # compiles the class's token regexes, kept for every instance
    # Start-up's objects, the modules and these tables live as long as the app: a full
    # collection walking them all paused a streaming reply for ~80 ms. (No gc.collect() first:
    # on this thread it would hold the GIL, and the window, for as long.)
    start_up_settled("Markdown warm-up")


def warm_up_in_background() -> threading.Thread:
    """Start :func:`warm_up` on a daemon thread, once per process; that thread."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=warm_up, name="markdown-warm-up", daemon=True)
            _thread.start()
        return _thread
