"""Errors raised by the site API client.

Every failure of a call is translated at one boundary (``reconciler.api.boundary``) into one
of these, most specific first, and keeps "the server said no" apart from "no answer came
back"::

    SiteError                      any failure of a call to the site
    ├── SiteRefusal                the site answered with an error body (or a telling status)
    │   ├── AuthenticationError    bad key, bad signature, clock skew
    │   ├── PermissionDenied       the key's user is not an administrator
    │   ├── NotFound               an unknown user, workspace or group ID (or method)
    │   ├── InvalidRequest         the site rejected a parameter
    │   ├── RateLimited            too many requests (``retry_after`` seconds)
    │   └── ServerError            5xx, or a body saying the server failed
    ├── TransportError             no complete answer: DNS, refused connection, deadline, reset
    │   └── OutcomeUnknown         ... to a write, or an unreadable answer to a write:
    │                              it may have been applied
    ├── ProtocolError              an answer that is neither success nor error, too large,
    │                              or a list that does not end
    └── Contradicted               a write's answer that the site's own listing contradicts

Errors are detected by the body's shape, never by HTTP status alone: some sites answer an
error with 200. The status only refines which refusal it is. Whether an error is worth another
try is not a property of its class but of the call: ``reconciler.api.retry`` decides.

Every text in these errors that came from the site has been scrubbed of signatures and
credentials (``reconciler.api.scrub``) before the error was made.
"""

from __future__ import annotations

from reconciler.errors import ReconcilerError

PROTOCOL_HINT = (
    "The site answered something that is not the documented API: check that the site URL "
    "points at the site itself."
)


class SiteError(ReconcilerError):
    """A call to the site failed."""

    def __init__(
        self,
        message: str,
        *,
        method: str,
        hint: str | None = None,
        status: int | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.method = method
        self.status = status
        self.title = title


class SiteRefusal(SiteError):
    """The site answered with the documented error shape."""


class AuthenticationError(SiteRefusal):
    """The site did not accept the API key, the signature or the timestamp."""


class PermissionDenied(SiteRefusal):
    """The API key belongs to a user who may not call this method."""


class NotFound(SiteRefusal):
    """The call named a user, workspace or group the site does not have."""


class InvalidRequest(SiteRefusal):
    """The site rejected the parameters of the call."""


class RateLimited(SiteRefusal):
    """The site asks the caller to slow down."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.retry_after = retry_after


class ServerError(SiteRefusal):
    """The site failed (5xx, or an error body saying so)."""


class TransportError(SiteError):
    """No complete answer arrived: the site is unreachable, too slow or dropped the connection."""


class OutcomeUnknown(TransportError):
    """A write got no readable answer: the site may or may not have applied it.

    Never retried by the client; the engine reads the site to find out before it tries again.
    ``late`` is True when the answer did not come within the deadline: the site may still be
    carrying the write out, so a read that does not show it yet proves nothing.
    """

    def __init__(self, message: str, *, late: bool = False, **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.late = late


class ProtocolError(SiteError):
    """The response was neither the documented success shape nor the error shape."""


class Contradicted(SiteError):
    """The site answered a write one way and lists the opposite (a deletion "succeeded" for a
    user it still lists): the listing is the truth, and the write did not happen."""


def protocol_error(method: str, what: str) -> ProtocolError:
    """The error for an answer of ``method`` that is not the API's (``what`` says how)."""
    return ProtocolError(f"{method}: the site answered {what}.", method=method, hint=PROTOCOL_HINT)
