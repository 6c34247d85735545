"""Errors raised by the site API client.

Every failure of a call is translated at the client boundary into one of these, most
specific first, and keeps "the server said no" apart from "no answer came back"::

    SiteError                      any failure of a call to the site
    ├── SiteRefusal                the site answered with an error body
    │   ├── AuthenticationError    bad key, bad signature, clock skew
    │   ├── PermissionDenied       the key's user is not an administrator
    │   ├── NotFound               an unknown user, workspace or group ID
    │   ├── InvalidRequest         the site rejected a parameter
    │   ├── RateLimited            too many requests (``retry_after`` seconds)
    │   └── ServerError            5xx, or a body saying the server failed
    ├── TransportError             no response: DNS, refused connection, timeout, reset
    │   └── OutcomeUnknown         ... during a write: it may have been applied
    └── ProtocolError              a body that is neither success nor error

Errors are detected by the body's shape, never by HTTP status alone: some sites answer an
error with 200. The status only refines which refusal it is.
"""

from __future__ import annotations

from reconciler.errors import ReconcilerError


class SiteError(ReconcilerError):
    """A call to the site failed."""

    retryable = False

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

    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.retry_after = retry_after


class ServerError(SiteRefusal):
    """The site failed (5xx); the call can be retried when it is a read."""

    retryable = True


class TransportError(SiteError):
    """No response arrived: the site is unreachable, slow or dropped the connection."""

    retryable = True


class OutcomeUnknown(TransportError):
    """A write got no response: the site may or may not have applied it.

    Never retried by the client; the engine reads the site to find out before it tries again.
    """

    retryable = False


class ProtocolError(SiteError):
    """The response was neither the documented success shape nor the error shape."""
