"""The bundle's pygments lexers: the common languages are highlighted, any other is shown plain.

The bundle carries the lexer modules of ``bundle_rules.HIGHLIGHTED_LANGUAGES`` (and what they
import) and a lexer table cut down to them. Here the bundle is re-enacted in-process: the cut
table replaces pygments' own and importing any other lexer module fails, as it would in the
bundle; the transcript's real ``highlight`` must then fall back to plain text, not raise.
"""

from __future__ import annotations

import ast
import functools
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType

import pygments.lexers
import pytest
from pygments.lexers._mapping import LEXERS

from support.packaging import PACKAGING, load_script

LEXER_PACKAGE = "pygments.lexers."
#: A row of pygments' LEXERS table: module, name, aliases, file patterns, MIME types.
LexerEntry = tuple[str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]
#: Enough to cover what chat replies fence: the issue asks for ~40 common languages.
MIN_LANGUAGES = 40


rules = load_script("bundle_rules", PACKAGING / "bundle_rules.py")


def _imports_of(module: str) -> set[str]:
    """The ``pygments.lexers.*`` modules ``module``'s source imports (what PyInstaller follows)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None
    assert spec.origin is not None
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    return {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and node.module is not None
        and node.module.startswith(LEXER_PACKAGE)
    }


@functools.cache
def bundled_lexer_modules() -> frozenset[str]:
    """The lexer modules the bundle carries: the hook's list and everything it imports."""
    todo = [*rules.pygments_lexer_modules(LEXERS), "pygments.lexers.special"]
    seen: set[str] = set()
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(_imports_of(module))
    return frozenset(seen)


class _OnlyBundledLexers(importlib.abc.MetaPathFinder):
    """Importing a lexer module the bundle does not carry fails, as in the bundle."""

    def __init__(self, bundled: frozenset[str]) -> None:
        self.bundled = bundled

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.startswith(LEXER_PACKAGE) and fullname not in self.bundled:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


@pytest.fixture
def markdown() -> Iterator[ModuleType]:
    """The transcript's Markdown module with its lexer caches empty before and after."""
    from flarechat.ui.transcript import markdown as module

    module._lexer.cache_clear()
    module._highlight_cached.cache_clear()
    yield module
    module._lexer.cache_clear()
    module._highlight_cached.cache_clear()


def _as_in_bundle(monkeypatch: pytest.MonkeyPatch, *, table: dict[str, LexerEntry]) -> None:
    bundled = bundled_lexer_modules()
    # pygments.lexers swaps its module object for a lazy one at import: its functions read
    # the original module's globals, where the bundle's cut ``_mapping`` table lands.
    lookup_globals = pygments.lexers.get_lexer_by_name.__globals__
    monkeypatch.setitem(lookup_globals, "LEXERS", table)
    monkeypatch.setitem(lookup_globals, "_lexer_cache", {})
    for name in [name for name in sys.modules if name.startswith(LEXER_PACKAGE)]:
        if name not in bundled:
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_OnlyBundledLexers(bundled), *sys.meta_path])


def _cut_table() -> dict[str, LexerEntry]:
    namespace: dict[str, dict[str, LexerEntry]] = {}
    exec(rules.pygments_lexer_mapping(LEXERS, bundled_lexer_modules()), namespace)
    return namespace["LEXERS"]


def test_the_common_languages_each_have_a_bundled_lexer() -> None:
    assert len(rules.HIGHLIGHTED_LANGUAGES) >= MIN_LANGUAGES
    table = _cut_table()
    aliases = {alias for entry in table.values() for alias in entry[2]}
    assert set(rules.HIGHLIGHTED_LANGUAGES) <= aliases
    assert {entry[0] for entry in table.values()} <= bundled_lexer_modules()
    assert len(bundled_lexer_modules()) < len({entry[0] for entry in LEXERS.values()}) / 2


def test_a_language_not_in_the_bundle_is_shown_plain(
    qapp: object, markdown: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    cobol = "       IDENTIFICATION DIVISION.\n       PROGRAM-ID. HELLO."
    assert "pygments.lexers.business" not in bundled_lexer_modules()  # COBOL is not carried
    _as_in_bundle(monkeypatch, table=_cut_table())
    assert markdown.highlight(cobol, "cobol") == markdown.highlight(cobol, "text")
    assert "<span" not in markdown.highlight(cobol, "cobol")
    for language, code in (("python", "def f():\n    return 1"), ("rust", "fn main() {}")):
        assert "<span" in markdown.highlight(code, language), language


def test_without_the_cut_table_the_bundle_would_fail_on_a_dropped_language(
    qapp: object, markdown: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Why the spec swaps the table in: pygments' own names modules the bundle lacks.
    _as_in_bundle(monkeypatch, table=dict(LEXERS))
    with pytest.raises(ModuleNotFoundError):
        markdown.highlight("IDENTIFICATION DIVISION.", "cobol")
