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
