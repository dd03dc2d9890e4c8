"""One scan for a secret anywhere: files under a folder and captured outputs, in plain,
base64 (standard and URL-safe, padded or not, at any alignment) and URL-encoded form."""

from __future__ import annotations

import base64
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote, quote_plus

__all__ = ["assert_no_secret", "secret_forms"]

_ALIGNMENTS = 3  # base64 packs 3 bytes into 4 characters: a secret can start at any of 3


def _base64_cores(secret: bytes) -> set[bytes]:
    """The characters of every base64 encoding of ``secret`` that do not depend on what
    surrounds it (a token inside a longer encoded header or blob still shows up)."""
    cores: set[bytes] = set()
    for offset in range(_ALIGNMENTS):
        encoded = base64.b64encode(b"\0" * offset + secret + b"\0\0")
        first = -(-offset * 8 // 6)  # first 6-bit group wholly inside the secret
        last = (offset + len(secret)) * 8 // 6  # one past the last such group
        core = encoded[first:last]
        cores.add(core)
        cores.add(core.translate(bytes.maketrans(b"+/", b"-_")))
    return cores


def secret_forms(secret: str) -> set[bytes]:
    """Every byte string whose presence means ``secret`` leaked."""
    raw = secret.encode()
    forms = {raw, quote(secret, safe="").encode(), quote_plus(secret).encode()}
    forms |= _base64_cores(raw)
    forms |= {base64.b64encode(raw), base64.urlsafe_b64encode(raw).rstrip(b"=")}
    return {form for form in forms if form}


def _files(paths: Iterable[Path]) -> Iterable[Path]:
    for path in paths:
        if path.is_file():
            yield path
        elif path.is_dir():
            yield from (p for p in sorted(path.rglob("*")) if p.is_file())


def assert_no_secret(secret: str, *, paths: Iterable[Path] = (), texts: Iterable[str] = ()) -> None:
    """Fail naming the place and the form if ``secret`` is in any file or text."""
    forms = secret_forms(secret)
    places = [(str(p), p.read_bytes()) for p in _files(paths)]
    places += [(f"output #{i}", t.encode("utf-8", "surrogatepass")) for i, t in enumerate(texts)]
    for where, data in places:
        for form in forms:
            assert form not in data, f"the secret leaked into {where} as {form!r}"
