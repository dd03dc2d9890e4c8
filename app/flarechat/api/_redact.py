"""Token redaction: the one function every log line and exception detail goes through."""

from __future__ import annotations

import re
from collections.abc import Iterable

from flarechat.api.config import Connection, Secret

__all__ = ["REDACTED", "connection_secrets", "redact"]

REDACTED = "[REDACTED]"

# "Bearer xxx" in any case, also inside JSON strings, echoed headers and URL-encoded text; the
# credential runs up to whitespace, a quote, a separator (, ; &) or a closing bracket.
_BEARER = re.compile(r"(?i)\b(bearer)(\s+|%20|\+)[^\s\"',;&<>)\]}]+")
# Cloudflare's newer token formats carry a recognisable prefix: user (cfut_) and account (cfat_).
_CF_TOKEN = re.compile(r"\bcf[au]t_[A-Za-z0-9_\-]+")


def redact(text: str, secrets: Iterable[str | Secret | None] = ()) -> str:
    """Return ``text`` with every given secret and anything shaped like a bearer token removed.

    Longer secrets are replaced first so one secret that contains another is removed whole.
    """
    values = {_plain(secret) for secret in secrets}
    for value in sorted((v for v in values if v), key=len, reverse=True):
        text = text.replace(value, REDACTED)
    text = _BEARER.sub(lambda match: f"{match.group(1)} {REDACTED}", text)
    return _CF_TOKEN.sub(REDACTED, text)


def connection_secrets(conn: Connection) -> tuple[str, ...]:
    """The credentials a connection carries, as plain strings, for :func:`redact`."""
    return tuple(s.reveal() for s in (conn.token, conn.gateway_token) if s)


def _plain(secret: str | Secret | None) -> str:
    if secret is None:
        return ""
    return secret.reveal() if isinstance(secret, Secret) else secret
