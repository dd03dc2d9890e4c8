"""Token redaction: the one function every log line, exception detail and export goes through."""

from __future__ import annotations

import base64
import functools
import json
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

from flarechat.api.config import Connection, Secret

__all__ = [
    "LIBRARY_LOGGERS",
    "REDACTED",
    "RedactingLogFilter",
    "StreamRedactor",
    "connection_secrets",
    "install_log_redaction",
    "redact",
    "redact_value",
    "secret_variants",
]

REDACTED = "[REDACTED]"

# "Bearer xxx" in any case, also inside JSON strings, echoed headers and URL-encoded text; the
# credential runs up to whitespace, a quote, a separator (, ; &) or a closing bracket. The
# lookahead leaves an already redacted "Bearer [REDACTED]" alone, so redacting twice is a no-op.
_BEARER = re.compile(r"(?i)\b(bearer)(?:\s+|%20|\+)(?!\[REDACTED\])[^\s\"',;&<>)\]}]+")
# Cloudflare's newer token formats carry a recognisable prefix: user (cfut_) and account (cfat_).
_CF_TOKEN = re.compile(r"\bcf[au]t_[A-Za-z0-9_\-]+")
_PERCENT_HEX = re.compile(r"%[0-9A-F]{2}")
_MARKER = re.compile(re.escape(REDACTED))
#: Characters of either base64 alphabet: a found core is widened to the whole encoded run.
_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_")
#: base64 packs 3 bytes into 4 characters: a secret inside a longer blob starts at one of 3.
_ALIGNMENTS = 3
#: Shorter secrets are redacted in their exact encodings only: the core of a short one (a
#: few characters) would match ordinary words.
_MIN_CORE_BYTES = 8
#: Memoised variant sets: each log line would otherwise re-encode every secret.
_CACHE_SIZE = 64

#: Loggers the api's HTTP stack writes to. httpcore's debug lines (``-v``) include every
#: response header verbatim, and logger filters do not apply to child loggers, so each is named.
LIBRARY_LOGGERS = (
    "flarechat.api",
    "httpx",
    "httpcore",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "httpcore.socks",
    "hpack.hpack",
    "hpack.table",
)

_Span = tuple[int, int, str]


def redact(text: str, secrets: Iterable[str | Secret | None] = ()) -> str:
    """Return ``text`` with every secret (in any of its :func:`secret_variants`, or base64
    encoded inside a longer blob at any alignment) and anything shaped like a bearer or
    Cloudflare token replaced by ``[REDACTED]``.

    A secret found base64-encoded takes its whole encoded run with it (a hostile server's
    base64 of ``Bearer <token>`` or of a JSON blob holding it), so no partial character of it
    survives next to the marker. Overlapping matches are merged and replaced once, and
    ``redact(redact(t, s), s) == redact(t, s)``.
    """
    plain = _plain_tuple(secrets)
    if len(text) < _shortest_form(plain):  # a call's name or id: no secret's form fits in it
        spans = _pattern_spans(text) if _may_match_a_pattern(text) else []
    else:
        spans = [
            *_secret_spans(text, _variants_of(plain)),
            *_core_spans(text, _cores_of(plain)),
            *_pattern_spans(text),
        ]
    return _replace(text, spans) if spans else text


def secret_variants(secrets: Iterable[str | Secret | None]) -> tuple[str, ...]:
    """Every exact form a secret may take in text, longest first: raw; base64, standard and
    URL-safe, with and without padding; percent-encoded by ``quote`` and ``quote_plus`` and
    byte by byte (upper- and lower-case hex); hex; JSON-escaped. Memoised: built once per set
    of secrets. (:func:`redact` also finds a secret base64-encoded inside a longer blob.)"""
    return _variants_of(_plain_tuple(secrets))


def redact_value(value: Any, secrets: Iterable[str | Secret | None] = ()) -> Any:
    """A copy of a parsed JSON value with every string in it (keys too) :func:`redact`-ed:
    what a server sent, before anything prints, stores or caches it. (Its depth is bounded:
    it was read with ``safejson``.)"""
    plain = _plain_tuple(secrets)
    return _redact_value(value, plain)


def _redact_value(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, Mapping):
        return {
            redact(str(key), secrets): _redact_value(item, secrets) for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_redact_value(item, secrets) for item in value]
    return value


class StreamRedactor:
    """:func:`redact` for text that arrives in pieces (a streamed reply): a secret split
    across two pieces is still found.

    :meth:`feed` returns the text so far, redacted, less a tail that could be the start of a
    secret's form (held until the next piece shows whether it is); :meth:`flush` returns that
    tail at the end. Text that ends like no secret is never held.
    """

    def __init__(self, secrets: Iterable[str | Secret | None]) -> None:
        self._secrets = _plain_tuple(secrets)
        forms = (*_variants_of(self._secrets), *_cores_of(self._secrets))
        self._prefixes = frozenset(form[:k] for form in forms for k in range(1, len(form)))
        self._firsts = frozenset(form[0] for form in forms)
        self._longest = max(map(len, forms), default=0)
        self._pending = ""

    def feed(self, text: str) -> str:
        text = self._pending + text
        cut = self._cut(text)
        self._pending = text[cut:]
        return redact(text[:cut], self._secrets) if cut else ""

    def flush(self) -> str:
        pending, self._pending = self._pending, ""
        return redact(pending, self._secrets) if pending else ""

    def _cut(self, text: str) -> int:
        """Where the held tail starts: the first position whose rest is a form's proper start
        or a token-shaped match that may go on, moved back before any match it would split."""
        cut = len(text)
        for start in range(max(0, len(text) - self._longest + 1), len(text)):
            if text[start] in self._firsts and text[start:] in self._prefixes:
                cut = start
                break
        spans = [
            *_secret_spans(text, _variants_of(self._secrets)),
            *_core_spans(text, _cores_of(self._secrets)),
            *_pattern_spans(text),
        ]
        cut = min([cut, *(start for start, end, _ in spans if end == len(text) and start < cut)])
        moved = True
        while moved:  # a cut inside a match would show the part before it unredacted
            moved = False
            for start, end, _ in spans:
                if start < cut < end:
                    cut, moved = start, True
        return cut


def connection_secrets(conn: Connection) -> tuple[str, ...]:
    """The credentials a connection carries, as plain strings, for :func:`redact`."""
    return tuple(s.reveal() for s in (conn.token, conn.gateway_token) if s)


class RedactingLogFilter(logging.Filter):
    """Redacts each record of the loggers it is attached to, with every secret it was told."""

    def __init__(self) -> None:
        super().__init__()
        self._secrets: frozenset[str] = frozenset()

    def remember(self, secrets: Iterable[str]) -> None:
        """Also redact ``secrets`` from now on (a frozenset swap: safe across threads)."""
        fresh = frozenset(s for s in secrets if s)
        if not fresh <= self._secrets:
            self._secrets = self._secrets | fresh

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message, self._secrets)
        if cleaned != message or record.args:
            record.msg, record.args = cleaned, None
        return True


_LOG_FILTER = RedactingLogFilter()


def install_log_redaction(secrets: Iterable[str] = ()) -> RedactingLogFilter:
    """Attach the redacting filter to :data:`LIBRARY_LOGGERS` (once) and remember ``secrets``."""
    for name in LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        if _LOG_FILTER not in logger.filters:
            logger.addFilter(_LOG_FILTER)
    _LOG_FILTER.remember(secrets)
    return _LOG_FILTER


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _variants_of(secrets: tuple[str, ...]) -> tuple[str, ...]:
    found: set[str] = set()
    for secret in secrets:
        found.update(_forms(secret))
    return tuple(sorted(found - {""}, key=lambda v: (-len(v), v)))


def _forms(secret: str) -> set[str]:
    raw = secret.encode("utf-8", "surrogatepass")
    forms = {secret, raw.hex(), raw.hex().upper()}
    for encoded in (base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()):
        forms.update({encoded, encoded.rstrip("=")})
    every_byte = "".join(f"%{byte:02X}" for byte in raw)
    for escaped in (quote(secret, safe=""), quote(secret), quote_plus(secret, safe=""), every_byte):
        forms.update({escaped, _PERCENT_HEX.sub(lambda m: m.group(0).lower(), escaped)})
    for escaped in (json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]):
        forms.update({escaped, escaped.replace("/", "\\/")})
    every_char = "".join(f"\\u{ord(char):04x}" for char in secret)
    forms.update({every_char, every_char.upper().replace("\\U", "\\u")})
    return forms


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _shortest_form(secrets: tuple[str, ...]) -> int:
    """The length of the shortest text any of ``secrets`` can be found in (a form or a core);
    shorter texts need only the token-shaped patterns (redacting 10,000 tool calls' names and
    ids was most of the time a reply of them took)."""
    forms = (*_variants_of(secrets), *_cores_of(secrets))
    return min(map(len, forms), default=0)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _cores_of(secrets: tuple[str, ...]) -> tuple[str, ...]:
    """The characters of every base64 encoding (both alphabets) of each secret that do not
    depend on what surrounds it: a secret inside a longer encoded blob at any alignment."""
    cores: set[str] = set()
    for secret in secrets:
        raw = secret.encode("utf-8", "surrogatepass")
        if len(raw) < _MIN_CORE_BYTES:
            continue
        for offset in range(_ALIGNMENTS):
            encoded = base64.b64encode(b"\0" * offset + raw + b"\0\0").decode()
            first = -(-offset * 8 // 6)  # the first 6-bit group wholly inside the secret
            last = (offset + len(raw)) * 8 // 6  # one past the last such group
            core = encoded[first:last]
            cores.update({core, core.translate(_URLSAFE)})
    return tuple(sorted(cores, key=lambda c: (-len(c), c)))


_URLSAFE = str.maketrans("+/", "-_")


def _core_spans(text: str, cores: tuple[str, ...]) -> list[_Span]:
    spans = []
    for core in cores:
        start = text.find(core)
        while start != -1:
            begin, end = start, start + len(core)
            while begin and text[begin - 1] in _BASE64_CHARS:
                begin -= 1
            while end < len(text) and text[end] in _BASE64_CHARS:
                end += 1
            while end < len(text) and text[end] == "=":
                end += 1
            spans.append((begin, end, REDACTED))
            start = text.find(core, end)
    return spans


def _secret_spans(text: str, variants: tuple[str, ...]) -> list[_Span]:
    spans = []
    for variant in variants:
        start = text.find(variant)
        while start != -1:
            spans.append((start, start + len(variant), REDACTED))
            start = text.find(variant, start + 1)
    # Found only inside an earlier marker ("ACT" in "[REDACTED]"): not a secret in this text.
    markers = [(m.start(), m.end()) for m in _MARKER.finditer(text)]
    return [s for s in spans if not any(a <= s[0] and s[1] <= b for a, b in markers)]


def _may_match_a_pattern(text: str) -> bool:
    """False when neither token-shaped pattern can match (no ``t_``, no "bearer")."""
    return "t_" in text or "bearer" in text.lower()


def _pattern_spans(text: str) -> list[_Span]:
    spans = [(m.end(1), m.end(), f" {REDACTED}") for m in _BEARER.finditer(text)]
    spans += [(m.start(), m.end(), REDACTED) for m in _CF_TOKEN.finditer(text)]
    return spans


def _replace(text: str, spans: list[_Span]) -> str:
    """Replace the union of ``spans``; a merged run takes the replacement of its first span."""
    out: list[str] = []
    position, run_start, run_end, run_with = 0, -1, -1, ""
    for start, end, replacement in sorted(spans, key=lambda s: (s[0], -s[1])):
        if start <= run_end:
            run_end = max(run_end, end)
            continue
        if run_end >= 0:
            out += [text[position:run_start], run_with]
            position = run_end
        run_start, run_end, run_with = start, end, replacement
    out += [text[position:run_start], run_with, text[run_end:]]
    return "".join(out)


def _plain_tuple(secrets: Iterable[str | Secret | None]) -> tuple[str, ...]:
    return tuple(sorted({_plain(secret) for secret in secrets} - {""}))


def _plain(secret: str | Secret | None) -> str:
    if secret is None:
        return ""
    return secret.reveal() if isinstance(secret, Secret) else secret
