"""What can go wrong inside the sandbox, as the emulated site and as a program.

``ApiError`` is an answer of the emulated site, not a failure of the sandbox: it becomes the
documented error body. ``DropConnection`` derives from ``BaseException`` on purpose, so that no
``except Exception`` in Starlette's or httpx's layers turns it into a 500 response: it must
reach the outermost layer, which drops the connection (or, in-process, ``SandboxTransport``,
which raises the transport error a client would see).
"""

from __future__ import annotations

ADMIN_REQUIRED = "You must be an administrator to call this method"
"""The documented message of every administrator-only method refusing another caller."""

GENERIC_FAILURE = "Please try again or contact customer support."
"""The documented message whose condition is left open; used for injected server failures."""


PUBLISHED_AUTH_FAILURE = "Authentication parameters missing or invalid."
"""The FileGenius page's message for every authentication failure."""
_PUBLISHED_MESSAGES = frozenset(
    {
        ADMIN_REQUIRED,
        GENERIC_FAILURE,
        "Please try a different location or speak to an administrator",
        "Please contact your site administrator.",
    }
)


def published_error(status: int, title: str, message: str, method_title: str) -> tuple[str, str]:
    """``(title, message)`` as a site saying only what the public pages print would say it.

    Authentication failures and malformed requests (how a call is signed and sent) become the
    published "Authentication parameters missing or invalid."; any other message the sandbox
    worded itself becomes the published generic "Please try again or contact customer
    support." under the method's title. The published messages stay as they are.
    """
    if message in _PUBLISHED_MESSAGES:
        return title, message
    if title == "Authentication Failed" or (title == "Invalid Request" and status == 400):
        return "Authentication Failed", PUBLISHED_AUTH_FAILURE
    if title != method_title and not message.endswith(GENERIC_FAILURE):
        title = method_title  # e.g. "Rate Limit Exceeded", a sandbox title
    return title, GENERIC_FAILURE


class ApiError(Exception):
    """An error answer of the site API: HTTP status, title and message.

    ``title`` may be left out by a method handler: the dispatcher fills in the method's
    documented (or chosen) error title, so each title is written once, in the method table.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        title: str | None = None,
        headers: dict[str, str] | None = None,
        unknown_id: bool = False,
    ) -> None:
        super().__init__(message)
        self.unknown_id = unknown_id  # the status is a sandbox guess: see unknown_ids_as_400
        self.status = status
        self.message = message
        self.title = title
        self.headers = headers or {}


class DropConnection(BaseException):
    """Close the connection without sending a single response byte (an emulated network fault)."""


class SeedError(ValueError):
    """A seed file or seed mapping is unreadable or breaks a rule; the message says where."""
