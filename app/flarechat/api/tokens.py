"""Token verification results: which kind of Cloudflare token this is and whether it works."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["TokenCheck", "TokenKind", "token_check_from", "workers_ai_check"]

TokenKind = Literal["user", "account", "workers-ai"]

_DEFAULT_MESSAGES: dict[TokenKind, str] = {
    "user": "This user API token is valid.",
    "account": "This account API token is valid.",
    "workers-ai": (
        "The token works for Workers AI, though Cloudflare's verify endpoints could not "
        "confirm it (it may lack the token-read permission)."
    ),
}


@dataclass(frozen=True, slots=True)
class TokenCheck:
    """What verify_token found out; never holds the token itself."""

    kind: TokenKind
    status: str  # "active" | "disabled" | "expired" (Cloudflare's words)
    token_id: str | None
    expires_on: str | None
    message: str

    @property
    def active(self) -> bool:
        return self.status == "active"


def token_check_from(kind: TokenKind, body: Mapping[str, Any]) -> TokenCheck | None:
    """Parse a /tokens/verify envelope; ``None`` unless it is a success with a status."""
    result = body.get("result")
    if body.get("success") is False or not isinstance(result, Mapping):
        return None
    status = result.get("status")
    if not isinstance(status, str):
        return None
    return TokenCheck(
        kind=kind,
        status=status,
        token_id=_str(result.get("id")),
        expires_on=_str(result.get("expires_on")),
        message=_first_message(body) or _DEFAULT_MESSAGES[kind],
    )


def workers_ai_check() -> TokenCheck:
    """The fallback verdict: the token made an authorised Workers AI call."""
    return TokenCheck(
        kind="workers-ai",
        status="active",
        token_id=None,
        expires_on=None,
        message=_DEFAULT_MESSAGES["workers-ai"],
    )


def _first_message(body: Mapping[str, Any]) -> str | None:
    messages = body.get("messages")
    if isinstance(messages, list) and messages and isinstance(messages[0], Mapping):
        return _str(messages[0].get("message"))
    return None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
