"""Send a drift notification to a webhook (``drift --notify URL``): one POST of JSON.

A webhook URL is a secret: Slack's and Teams' carry the key in the path, others in the query
or as ``user:password@``. So the URL is never printed, logged or kept: messages name only its
scheme, host and port (``webhook_display``), and a failure says what went wrong in the tool's
own words, never an HTTP library's message (which quotes the URL) nor the receiver's answer
(which may echo it).
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

from reconciler.api.body import read_body
from reconciler.api.config import is_loopback
from reconciler.errors import ConfigError, ReconcilerError

TIMEOUT_SECONDS = 10.0
"""The most one notification may take in all: connecting, sending, and the whole answer."""
MAX_ANSWER_BYTES = 4096
"""The most of a receiver's answer read: only its status matters (Slack answers ``ok``)."""
URL_HINT = "Give the webhook's https:// URL (plain http:// is accepted for loopback only)."


RETRY_HINT = (
    "The report above is complete, and it was not kept as the last one: the next "
    "`drift --notify` sends its new items again."
)


class NotifyError(ReconcilerError):
    """The webhook did not take the notification (exit 1); the report was printed first."""

    def __init__(self, message: str) -> None:
        super().__init__(message, hint=RETRY_HINT)


def webhook_display(url: str) -> str:
    """What a message may say of a webhook URL: scheme, host and port; the rest hidden."""
    try:
        parts = urlsplit(url.strip())
        port = f":{parts.port}" if parts.port else ""
        host = parts.hostname or "?"
    except ValueError:
        return "the webhook (its URL is malformed)"
    host = f"[{host}]" if ":" in host else host
    shown = f"{parts.scheme}://{host}{port}"
    return shown if url.strip().rstrip("/") == shown else f"{shown} (the rest of its URL hidden)"


def check_webhook(url: str) -> str:
    """``url`` if a notification may be sent to it; a ConfigError (exit 1) otherwise."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 -- raises ValueError for a bad port
    except ValueError:
        raise ConfigError("The --notify URL is malformed.", hint=URL_HINT) from None
    scheme, host = parts.scheme.lower(), parts.hostname
    if scheme not in ("http", "https") or not host:
        raise ConfigError("The --notify URL is not an http(s) URL.", hint=URL_HINT)
    if scheme == "http" and not is_loopback(host):
        raise ConfigError(
            f"Refusing plain http:// for the webhook at {host}: its URL is a secret and would "
            "travel unencrypted.",
            hint=URL_HINT,
        )
    return url.strip()


async def send(url: str, body: dict[str, Any], *, timeout: float = TIMEOUT_SECONDS) -> None:
    """POST ``body`` as JSON to ``url``; any answer but 2xx is a ``NotifyError``.

    ``timeout`` bounds the whole exchange -- connecting, the headers and the body -- not each
    phase as httpx's own timeouts do: a receiver that sends its headers and then drips its
    body would otherwise hold the job for ever. Only the status matters, so at most
    ``MAX_ANSWER_BYTES`` of the body are read (``api.body.read_body`` stops there).
    """
    import httpx  # only a notification imports it: a plan starts without it (issue 47)

    where = webhook_display(url)
    try:
        async with asyncio.timeout(timeout):
            status = await _post(url, body, timeout)
    except (TimeoutError, httpx.TimeoutException):
        raise NotifyError(
            f"The drift notification to {where} failed: no answer within {timeout:g} s."
        ) from None
    except httpx.HTTPError as exc:
        raise NotifyError(
            f"The drift notification to {where} failed: could not reach it ({type(exc).__name__})."
        ) from None
    if not 200 <= status < 300:
        raise NotifyError(f"The drift notification to {where} failed: it answered HTTP {status}.")


async def _post(url: str, body: dict[str, Any], timeout: float) -> int:
    """The answer's status, once its body has ended or passed ``MAX_ANSWER_BYTES``."""
    import httpx

    async with (
        httpx.AsyncClient(timeout=timeout, follow_redirects=False) as client,
        client.stream("POST", url, json=body) as response,
    ):
        await read_body(response, MAX_ANSWER_BYTES)  # what it says is never shown
        return response.status_code
