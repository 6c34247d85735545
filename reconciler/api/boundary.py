"""The one boundary between the network and the client's callers.

Whatever one attempt of a call brings back -- an answer, or an exception raised while sending
or receiving -- passes through :class:`Boundary`, which turns it into an :class:`Attempt`: the
typed answer, or one ``SiteError`` with the facts the retry policy needs (HTTP status,
``Retry-After``, whether the request may have reached the site). In the spirit of httpx's
``map_httpcore_exceptions``, nothing foreign leaves: no httpx exception, no ``KeyError``.

How an answer is read (by the body's shape, never by the status alone -- some sites answer
errors with 200)::

    3xx with Location                       ProtocolError (redirects are not followed)
    a body too large or badly compressed    ProtocolError
    {"error": {title, message}} (or XML)    a SiteRefusal, classed by a telling status
                                            (400/401/403/404/422/429, 5xx), else by the
                                            site's words
    the method's success key                the decoder's typed answer (or its ProtocolError)
    anything else, 429 or 5xx               RateLimited / ServerError (a proxy's own page)
    anything else                           ProtocolError

How an exception is read::

    before a byte was sent (connect failed)      TransportError
    after the request left, or the deadline      TransportError for a read,
                                                 OutcomeUnknown for a write

and then, for a write, whatever says nothing about whether it happened becomes
``OutcomeUnknown`` (a gateway's 502/504, an unreadable answer), and a 5xx says the change was
most likely not made. Every text the site sent is scrubbed of signatures and credentials
(``reconciler.api.scrub``) before it is put in an error or a typed answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reconciler.api.config import ClientConfig
from reconciler.api.decode import Payload
from reconciler.api.errors import (
    PROTOCOL_HINT,
    AuthenticationError,
    InvalidRequest,
    NotFound,
    OutcomeUnknown,
    PermissionDenied,
    ProtocolError,
    RateLimited,
    ServerError,
    SiteError,
    SiteRefusal,
    TransportError,
    protocol_error,
)
from reconciler.api.methods import ApiMethod
from reconciler.api.scrub import Scrubber
from reconciler.api.wire import WireError
from reconciler.api.xmlcodec import load_document

GATEWAY_STATUSES = (502, 504)
"""A proxy's "no (timely) answer from upstream": the upstream may have acted on a write."""

UNREACHABLE_HINT = (
    "Check the site URL and the network (DNS, proxy, firewall); if the site is slow, "
    "raise --timeout or lower --concurrency."
)
UNTRUSTED_CERTIFICATE_HINT = (
    "The site's certificate is not signed by an authority this machine trusts. If the site is "
    "the one you meant (a company proxy, or 'reconciler sandbox serve --tls'), give its "
    "authority's certificate with --ca-file (or RECONCILER_CA_FILE); never turn verification off."
)
UNKNOWN_OUTCOME_HINT = (
    "The change may have been applied. Do not simply retry: run plan (which reads the site) "
    "to see whether it was, then apply again if it is still needed."
)
WRITE_FAILED_HINT = (
    "The site reported a failure and most likely made no change; run plan to check before "
    "applying again. If it persists, contact the site's support."
)


@dataclass(frozen=True, slots=True)
class Answer:
    """What the client received, reduced to what the boundary needs."""

    status: int
    content: bytes
    retry_after: float | None = None
    location: str | None = None  # the target of a redirect
    defect: str | None = None  # why the body could not be read (too large, bad compression)


REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
"""A redirect's statuses (httpx's ``is_redirect``): reported with their ``Location``, even an
empty one, never followed."""


def retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header; an HTTP date or junk is ignored (backoff
    applies)."""
    try:
        seconds = float((value or "").strip())
    except ValueError:
        return None
    return seconds if 0 <= seconds < float("inf") else None


@dataclass(frozen=True, slots=True)
class Attempt:
    """How one attempt ended: ``value``, or ``error`` and what the retry policy weighs."""

    value: Any = None
    error: SiteError | None = None
    status: int | None = None
    retry_after: float | None = None
    sent: bool = True  # False only when the request provably never left


class Boundary:
    """Maps what one client's attempts bring back to outcomes; knows its credentials only to
    scrub them out of the site's words."""

    def __init__(self, config: ClientConfig) -> None:
        self._site_url = config.site_url
        self._timeout = config.timeout
        self._scrubber = Scrubber(config.api_key, config.api_secret)

    def answer(self, method: ApiMethod[Any], params: Mapping[str, str], answer: Answer) -> Attempt:
        """The outcome of an answer: the typed answer, or the error it amounts to."""
        try:
            value = method.decoder(self._payload(method, params, answer))
        except SiteError as error:
            return self._failed(method, error, answer.status, answer.retry_after)
        return Attempt(value=value, status=answer.status)

    def exception(
        self, method: ApiMethod[Any], exc: WireError | TimeoutError, *, sent: bool
    ) -> Attempt:
        """The outcome of an attempt that raised ``exc`` (a ``wire.WireError``, or
        ``TimeoutError`` when the call's deadline passed); ``sent`` is False when the request
        never left (``WireError.sent`` says so of a failure to connect)."""
        if isinstance(exc, TimeoutError):
            what = f"no complete answer within the --timeout of {self._timeout:g} s"
        else:
            detail = self._scrubber.text(_without_queries(str(exc)))
            what = f"{exc.kind}: {detail or 'no detail'}"
            sent = sent and exc.sent
        if method.is_write and sent:
            error: SiteError = OutcomeUnknown(
                f"{method.name}: {what}, after the request was sent; "
                "the site may or may not have applied the change.",
                method=method.name,
                hint=UNKNOWN_OUTCOME_HINT,
                late=isinstance(exc, TimeoutError),
            )
        else:
            untrusted = "CERTIFICATE_VERIFY_FAILED" in what
            error = TransportError(
                f"{method.name}: no answer from {self._site_url} ({what}).",
                method=method.name,
                hint=UNTRUSTED_CERTIFICATE_HINT if untrusted else UNREACHABLE_HINT,
            )
        return Attempt(error=error, sent=sent)

    # --- answers --------------------------------------------------------------------------

    def _payload(
        self, method: ApiMethod[Any], params: Mapping[str, str], answer: Answer
    ) -> Payload:
        """The value under the method's success key, or the error the answer amounts to."""
        name = method.name
        if answer.location is not None:
            raise self._redirected(name, answer)
        if answer.defect is not None:
            raise protocol_error(name, answer.defect)
        try:
            document = load_document(answer.content, method=name)
        except ProtocolError:
            if _status_is_telling(answer.status):
                raise status_refusal(name, answer) from None
            raise
        document = self._scrubber.document(document, answer.content)
        error = error_fields(document)
        if error is not None:
            raise refusal(name, answer, *error)
        for key in method.keys:
            if key in document:
                return Payload(document[key], name, key, params)
        if _status_is_telling(answer.status):
            raise status_refusal(name, answer)
        found = ", ".join(sorted(map(str, document))[:5]) or "nothing"
        raise protocol_error(name, f"neither {method.keys[0]!r} nor an error (found {found})")

    def _redirected(self, method: str, answer: Answer) -> ProtocolError:
        target = self._scrubber.text(_without_queries(answer.location or ""))
        return ProtocolError(
            f"{method}: the site redirected the call (HTTP {answer.status}) to "
            f"{target or 'an unnamed address'}; redirects are not followed.",
            method=method,
            status=answer.status,
            hint="Give the final address as --site/RECONCILER_SITE_URL (often https:// instead "
            "of http://). " + PROTOCOL_HINT,
        )

    def _failed(
        self,
        method: ApiMethod[Any],
        error: SiteError,
        status: int,
        retry_after: float | None,
    ) -> Attempt:
        if error.status is None:  # decoders and the XML reader do not know the status
            error.status = status
        if method.is_write:
            error = _for_write(method.name, error)
        # Belt and braces: the document was scrubbed, but a message also quotes the raw body's
        # shape (keys, a value's start) and the transport's words.
        error.message = self._scrubber.text(error.message)
        error.title = None if error.title is None else self._scrubber.text(error.title)
        return Attempt(error=error, status=status, retry_after=retry_after)


def _for_write(method: str, error: SiteError) -> SiteError:
    """A failed write's error, re-read for what it says about the write having happened."""
    if isinstance(error, RateLimited):
        return error
    if error.status in GATEWAY_STATUSES:
        return OutcomeUnknown(
            f"{method}: a gateway answered HTTP {error.status} instead of the site; "
            "the site may or may not have applied the change.",
            method=method,
            hint=UNKNOWN_OUTCOME_HINT,
            status=error.status,
        )
    if isinstance(error, ProtocolError):
        return OutcomeUnknown(
            f"{error.message.rstrip('.')}; the site may or may not have applied the change.",
            method=method,
            hint=UNKNOWN_OUTCOME_HINT,
            status=error.status,
        )
    if isinstance(error, ServerError):
        error.hint = WRITE_FAILED_HINT
    return error


def _without_queries(text: str) -> str:
    """``text`` with every URL's query string cut: queries carry signatures."""
    return " ".join(word.split("?", 1)[0] for word in text.split(" "))


# --- error bodies and their classes ---------------------------------------------------------


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


_STATUS_CLASSES: dict[int, type[SiteRefusal]] = {
    400: InvalidRequest,
    401: AuthenticationError,
    403: PermissionDenied,
    404: NotFound,
    422: InvalidRequest,
    429: RateLimited,
}

_TITLE_ONLY_CLASSES: tuple[tuple[type[SiteRefusal], tuple[str, ...]], ...] = (
    (RateLimited, ("rate limit", "too many")),
)
"""Read in the title only: a message may quote the caller's own words ("too many" in a
workspace's name), and being taken for a rate limit must not hang on those."""

_TEXT_CLASSES: tuple[tuple[type[SiteRefusal], tuple[str, ...]], ...] = (
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
    AuthenticationError: "Check RECONCILER_API_KEY and RECONCILER_API_SECRET (or the credentials "
    "file): "
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
    for cls, needles in _TITLE_ONLY_CLASSES:
        if any(needle in title.lower() for needle in needles):
            return cls
    for text in (title.lower(), message.lower()):
        for cls, needles in _TEXT_CLASSES:
            if any(needle in text for needle in needles):
                return cls
    return InvalidRequest


def refusal(method: str, answer: Answer, title: str, message: str) -> SiteRefusal:
    """The error for an error body, quoting the site's words and saying what to do."""
    cls = classify(answer.status, title, message)
    said = ": ".join(part for part in (title, message) if part) or "no reason given"
    text = f"{method}: the site refused the call (HTTP {answer.status}): {said}"
    return _build(cls, method, answer, text, _hint(cls, f"{title} {message}"), title or None)


def status_refusal(method: str, answer: Answer) -> SiteRefusal:
    """The error for a 429 or 5xx whose body is not the API's (a proxy or balancer answered)."""
    cls = classify(answer.status, "", "")
    text = f"{method}: the site answered HTTP {answer.status} without an API error body"
    return _build(cls, method, answer, text, HINTS[cls], None)


def _hint(cls: type[SiteRefusal], words: str) -> str:
    if cls is AuthenticationError and any(word in words.lower() for word in _CLOCK_WORDS):
        return CLOCK_HINT
    if cls is PermissionDenied and "location" in words.lower():
        return "Use the API key of a site administrator, or of a user with access to that location."
    return HINTS[cls]


def _build(
    cls: type[SiteRefusal], method: str, answer: Answer, text: str, hint: str, title: str | None
) -> SiteRefusal:
    error = cls(text, method=method, hint=hint, status=answer.status, title=title)
    if isinstance(error, RateLimited):
        error.retry_after = answer.retry_after
    return error
