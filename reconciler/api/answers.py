"""Tell a site's success from its refusal, by the body's shape, and classify refusals.

``{"error": {title, message}}`` is a refusal whatever the HTTP status (some sites answer
errors with 200); the operation's key is a success; anything else is a ``ProtocolError`` --
unless the status is 429 or 5xx, where a proxy or load balancer answered with its own page
and the status is the only fact there is. A refusal's class comes from the status when it is
informative and from the site's words when it is not, and its hint says what to do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reconciler.api.errors import (
    AuthenticationError,
    InvalidRequest,
    NotFound,
    PermissionDenied,
    ProtocolError,
    RateLimited,
    ServerError,
    SiteRefusal,
)
from reconciler.api.xmlcodec import PROTOCOL_HINT, load_document


@dataclass(frozen=True, slots=True)
class Answer:
    """What the client received, reduced to what decoding needs."""

    method: str
    status: int
    content: bytes
    retry_after: float | None = None


def success_payload(answer: Answer, keys: tuple[str, ...]) -> Any:
    """The value under the operation's key, or the classified error the body or status says."""
    try:
        document = load_document(answer.content, method=answer.method)
    except ProtocolError:
        if _status_is_telling(answer.status):
            raise status_refusal(answer) from None
        raise
    error = error_fields(document)
    if error is not None:
        raise refusal(answer, *error)
    for key in keys:
        if key in document:
            return document[key]
    if _status_is_telling(answer.status):
        raise status_refusal(answer)
    found = ", ".join(sorted(map(str, document))[:5]) or "nothing"
    raise protocol_error(answer.method, f"neither {keys[0]!r} nor an error (found {found})")


def _status_is_telling(status: int) -> bool:
    return status == 429 or status >= 500


def error_fields(document: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(title, message)`` when the document has the error shape, else ``None``."""
    if "error" not in document:
        return None
    error = document["error"]
    if isinstance(error, Mapping):
        return clean_text(error.get("title")), clean_text(error.get("message"))
    return clean_text(error), ""


def clean_text(value: object) -> str:
    """A title or message without stray quotes and whitespace (``'User Group Add Failed``)."""
    if value is None:
        return ""
    return str(value).strip().strip("'\"`").strip()


# --- classifying refusals -----------------------------------------------------------------

_STATUS_CLASSES: dict[int, type[SiteRefusal]] = {
    400: InvalidRequest,
    401: AuthenticationError,
    403: PermissionDenied,
    404: NotFound,
    422: InvalidRequest,
    429: RateLimited,
}

_TEXT_CLASSES: tuple[tuple[type[SiteRefusal], tuple[str, ...]], ...] = (
    (RateLimited, ("rate limit", "too many")),
    (ServerError, ("internal server error", "service unavailable", "try again")),
    (AuthenticationError, ("signature", "api key", "api_key", "timestamp", "authenticat")),
    (PermissionDenied, ("must be an administrator", "access privileges", "not allow")),
    (NotFound, ("does not exist", "not found", "unknown", "there is no", "no such")),
    (InvalidRequest, ("invalid",)),
)
"""Checked in order, on the title first and then the message, when the status says nothing
(200 or an unusual code): "Invalid Request: signature must be last" is an invalid request."""

_CLOCK_WORDS = ("timestamp", "clock", "expired", "stale")

HINTS: dict[type[SiteRefusal], str] = {
    AuthenticationError: "Check SITE_API_KEY and SITE_API_SECRET (or the credentials file): "
    "the key must exist on this site and the secret must be the one issued with it.",
    PermissionDenied: "Use the API key of a site administrator.",
    NotFound: "The object may have been changed on the site since it was read: "
    "run plan again to see the site as it is now.",
    InvalidRequest: "The site did not accept a value that was sent; check the manifest value "
    "it names (this may also be a bug in the reconciler, please report it).",
    RateLimited: "Lower --rate-limit or --concurrency, or try again later.",
    ServerError: "The site failed; try again later. If it persists, contact the site's support.",
}
CLOCK_HINT = (
    "Check this machine's clock (e.g. enable NTP): the site refuses timestamps more than a few "
    "minutes off."
)


def classify(status: int, title: str, message: str) -> type[SiteRefusal]:
    """The refusal class: by status when it is informative, else by the words of the body."""
    if status in _STATUS_CLASSES:
        return _STATUS_CLASSES[status]
    if status >= 500:
        return ServerError
    for text in (title.lower(), message.lower()):
        for cls, needles in _TEXT_CLASSES:
            if any(needle in text for needle in needles):
                return cls
    return InvalidRequest


def refusal(answer: Answer, title: str, message: str) -> SiteRefusal:
    """The error for an error body, quoting the site's words and saying what to do."""
    cls = classify(answer.status, title, message)
    said = ": ".join(part for part in (title, message) if part) or "no reason given"
    text = f"{answer.method}: the site refused the call (HTTP {answer.status}): {said}"
    return _build(cls, answer, text, _hint(cls, f"{title} {message}"), title or None)


def status_refusal(answer: Answer) -> SiteRefusal:
    """The error for a 429 or 5xx whose body is not the API's (a proxy or balancer answered)."""
    cls = classify(answer.status, "", "")
    text = f"{answer.method}: the site answered HTTP {answer.status} without an API error body"
    return _build(cls, answer, text, HINTS[cls], None)


def _hint(cls: type[SiteRefusal], words: str) -> str:
    if cls is AuthenticationError and any(word in words.lower() for word in _CLOCK_WORDS):
        return CLOCK_HINT
    if cls is PermissionDenied and "location" in words.lower():
        return "Use the API key of a site administrator, or of a user with access to that location."
    return HINTS[cls]


def _build(
    cls: type[SiteRefusal], answer: Answer, text: str, hint: str, title: str | None
) -> SiteRefusal:
    error = cls(text, method=answer.method, hint=hint, status=answer.status, title=title)
    if isinstance(error, RateLimited):
        error.retry_after = answer.retry_after
    return error


def protocol_error(method: str, what: str) -> ProtocolError:
    """The error for an answer that is neither the success shape nor the error shape."""
    return ProtocolError(f"{method}: the site answered {what}.", method=method, hint=PROTOCOL_HINT)
