"""The plain-English text of every error: what happened and what to do about it."""

from __future__ import annotations

from flarechat.api.errors import (
    APIStatusError,
    AuthenticationFailed,
    BadRequest,
    CapacityExceeded,
    DailyAllocationExhausted,
    GatewayAuthenticationFailed,
    GatewayError,
    ModelUnavailable,
    RateLimited,
    RequestTooLarge,
    ServerError,
    UpstreamTimeout,
    WorkersAIError,
)

__all__ = [
    "CONNECTION_FAILED",
    "INTERRUPTED",
    "PROXY_FAILED",
    "STREAMING_DISABLED",
    "TLS_FAILED",
    "UNREADABLE_REPLY",
    "connect_timed_out",
    "cut_off",
    "for_error",
    "huge_head",
    "not_http",
    "not_the_api",
    "not_tls",
    "redirected",
    "timed_out",
    "web_page",
    "with_page_note",
]

_BY_CLASS: dict[type[WorkersAIError], str] = {
    CapacityExceeded: (
        "Workers AI is at capacity for this model right now. Try again in a moment, "
        "wait in the queue, or switch model."
    ),
    DailyAllocationExhausted: (
        "You have used today's free Workers AI allocation. It resets at 00:00 UTC; "
        "upgrade to the Workers Paid plan to keep going now."
    ),
    RateLimited: ("Cloudflare is rate-limiting these requests. Wait a moment, then try again."),
    AuthenticationFailed: (
        "Cloudflare rejected the API token. Check in Settings that it is correct, not expired, "
        "and has the Workers AI Read and Edit permissions for this account."
    ),
    GatewayAuthenticationFailed: (
        "The AI Gateway requires authentication and the gateway token was missing or wrong. "
        "Set the gateway token in Settings, or turn authentication off on the gateway."
    ),
    ModelUnavailable: "This model is not available to your account. Choose another model.",
    RequestTooLarge: (
        "The request is too large for this model. Shorten the conversation or start a new one, "
        "lower Max tokens, or choose a model with a larger context window."
    ),
    UpstreamTimeout: ("Workers AI took too long to answer. Try again, or choose a faster model."),
    GatewayError: "AI Gateway refused the request. Check the gateway's settings in the dashboard.",
    ServerError: (
        "Cloudflare had a problem answering. Try again in a moment; if it keeps happening, "
        "try again later."
    ),
    BadRequest: "Cloudflare rejected the request. Check the model and its parameters.",
}

_BY_CODE: dict[int, str] = {
    2001: (
        "This AI Gateway does not exist. Create it in the Cloudflare dashboard, "
        "or correct the gateway ID in Settings."
    ),
    2003: (
        "The AI Gateway's rate limit was reached. Wait a moment, or raise the limit in "
        "the gateway's settings."
    ),
    2021: (
        "The AI Gateway has no credit left. Add credit to the gateway, or use your own "
        "provider key (BYOK)."
    ),
    2041: (
        "An AI Gateway spend limit was reached. Raise the limit in the gateway's settings, "
        "or wait for its window to pass."
    ),
    3023: "Cloudflare has suspended Workers AI for this account. Contact Cloudflare support.",
    3042: "Workers AI does not recognise this model name. Choose a model from the list.",
    5007: "Workers AI does not know this model. Choose a model from the list.",
    5016: (
        "This model's licence terms have not been accepted for this account yet. Accept them "
        "(Flarechat sends the model the single word 'agree' once), or choose another model."
    ),
    5005: (
        "This model does not take a LoRA adapter. Remove the adapter, or choose the base "
        "model's LoRA variant (its name ends in -lora)."
    ),
    3039: (
        "The fine-tune is missing files Workers AI needs (model.safetensors and config.json). "
        "Upload them again, or choose another adapter."
    ),
    5018: "Your account is not allowed to use this model. Choose another model.",
    3041: "Your account is not allowed to use this model. Choose another model.",
    5028: "This model has been retired by Cloudflare. Choose another model.",
    5035: ("This model needs the Workers Paid plan. Upgrade the account, or choose another model."),
    5021: (
        "The conversation plus Max tokens does not fit this model's context window. Lower Max "
        "tokens, shorten the conversation or start a new one, or choose a larger model."
    ),
    7000: "Cloudflare could not route the request. Check the API base URL in Settings.",
    7003: "Cloudflare could not find that account. Check the account ID in Settings.",
    1000: (
        "Cloudflare says the API token is invalid. Paste it again in Settings, or create a new "
        "one with the Workers AI permissions."
    ),
}

_QUOTE_SERVER = (BadRequest, GatewayError, ServerError)
#: 5021 quotes the server: its text names the token counts that did not fit.
_CONTEXT_WINDOW_CODE = 5021

CONNECTION_FAILED = (
    "Could not reach Cloudflare. Check your internet connection, and the proxy "
    "(HTTPS_PROXY) if you use one."
)
PROXY_FAILED = (
    "Could not connect through the configured proxy. Check HTTP_PROXY / HTTPS_PROXY, "
    "or unset them to connect directly."
)
TLS_FAILED = (
    "The secure connection to Cloudflare failed its certificate check. If a corporate proxy "
    "inspects traffic, install its CA certificate in the system trust store."
)
INTERRUPTED = "The reply was cut off before it finished. Retry to get the full answer."
STREAMING_DISABLED = (
    "JSON output does not stream on this endpoint: the reply arrives all at once when it is done."
)
UNREADABLE_REPLY = (
    "Workers AI sent a reply Flarechat could not read. Try again, or choose another model."
)


def for_error(
    cls: type[APIStatusError],
    *,
    code: int | None,
    server_text: str,
    model: str | None,
) -> str:
    """The message for one classified error, quoting the server where it helps."""
    specific = _BY_CODE.get(code, "") if code is not None else ""
    text = specific or _BY_CLASS.get(cls) or _BY_CLASS[BadRequest]
    if model and cls is ModelUnavailable:
        text = f"{text} (model: {model})"
    generic = not specific and issubclass(cls, _QUOTE_SERVER)
    if server_text and (generic or code == _CONTEXT_WINDOW_CODE):
        text = f"{text} Cloudflare said: “{server_text}”"
    return text


def with_page_note(message: str, *, status: int, title: str | None) -> str:
    """Add what a non-JSON error body said (Cloudflare's own 5xx pages, a proxy's…)."""
    page = f": “{title}”" if title else ""
    return f"{message} The server answered HTTP {status}{page}."


def not_the_api(*, status: int, title: str | None) -> str:
    """A 4xx web page where the API should have answered: a proxy, firewall or portal."""
    page = f": “{title}”" if title else ""
    return (
        f"Something other than the Cloudflare API answered (HTTP {status}{page}). A proxy, "
        "firewall or captive portal may be in the way; check your network and proxy settings."
    )


def timed_out(phase: str, seconds: float | None) -> str:
    """Our own timeout fired while ``phase`` (connecting, waiting for the reply…)."""
    limit = f" within {seconds:g} s" if seconds else ""
    return (
        f"Cloudflare did not respond{limit} while {phase}. Try again, raise the timeout in "
        "Settings, or choose a faster model."
    )


def connect_timed_out(where: str, *, seconds: float | None, secure: bool) -> str:
    """Our connect timeout fired: the TCP connection (or, for https, its TLS handshake) to
    ``where`` (host:port) never completed. Nothing was sent, so no model is to blame."""
    limit = f" within {seconds:g} s" if seconds else ""
    what = "the connection or its secure (TLS) handshake" if secure else "the connection"
    return (
        f"Could not connect to {where}{limit}: {what} never completed. Check the API base URL "
        "in Settings, your network and any proxy, or raise the connect timeout."
    )


def cut_off(subject: str) -> str:
    """The answer began but ended early (``subject``: "the model list", …): the server spoke
    HTTP, and trying again usually gets all of it."""
    return (
        f"{subject[:1].upper()}{subject[1:]} was cut off mid-way: the connection ended before "
        "all of it had arrived. Try again."
    )


def not_tls(where: str) -> str:
    """An https:// address whose server answered in plain HTTP."""
    return (
        f"The server at {where} did not speak TLS (secure HTTPS): the https:// address points "
        "at a port that answers plain HTTP. Check the scheme (http:// or https://) and the port "
        "of the API base URL in Settings."
    )


def not_http(where: str) -> str:
    """The reply was not HTTP at all (another protocol on that port, or garbage)."""
    return (
        f"The server at {where} did not answer in HTTP, so it is not the Workers AI API. "
        "Check the host and port of the API base URL in Settings."
    )


def huge_head(where: str) -> str:
    """HTTP, but a response head longer than any API's (h11 reads at most 64 KB of it)."""
    return (
        f"The server at {where} answered with response headers too large to read (over "
        "64 KB), which the Workers AI API never sends. Check the API base URL in Settings, "
        "or a proxy in between."
    )


def redirected(*, status: int, target: str) -> str:
    """A 3xx: Flarechat never follows redirects (the token must not travel elsewhere)."""
    return (
        f"The server redirected the request (HTTP {status}) to {target} instead of answering. "
        "The API base URL in Settings is probably wrong; Flarechat does not follow redirects."
    )


def web_page(*, title: str | None) -> str:
    """A web page where the API's JSON or event stream should have been."""
    page = f" (“{title}”)" if title else ""
    return (
        f"Flarechat got a web page{page} instead of the API: a captive portal or proxy may be "
        "intercepting. Sign in to the network in a browser, or check your proxy settings."
    )
