"""A call's failure on the wire, whichever transport saw it: no answer came back to read.

Why the client's own type: the network transport is aiohttp's (``api.transport``) and the
embedded sandbox or a test mounts an httpx one (``api.mounted``); each translates its
library's failures into this one error, so the caller and the boundary depend on neither
library -- and a plan does not import httpx, some 25 ms of its start-up, to catch errors
aiohttp never raises (issue 47).
"""

from __future__ import annotations


class WireError(Exception):
    """The request failed before an answer could be read.

    ``kind`` is the failure's name as messages show it, httpx's names for both transports
    (``ConnectError``, ``ReadTimeout``, ``RemoteProtocolError``...); ``sent`` is False only
    when the request surely never left -- a failure to connect -- the one case in which the
    boundary may call a write "not sent" and retry it. The text never holds a URL (queries
    carry signatures).
    """

    def __init__(self, kind: str, detail: str, *, sent: bool) -> None:
        super().__init__(detail)
        self.kind = kind
        self.sent = sent


NOT_SENT_KINDS = frozenset({"ConnectError", "ConnectTimeout", "PoolTimeout", "UnsupportedProtocol"})
"""The failures that prove a request never left (httpx's names)."""


def wire_error(kind: str, detail: str) -> WireError:
    """The failure called ``kind``, sent unless its kind proves otherwise."""
    return WireError(kind, detail, sent=kind not in NOT_SENT_KINDS)
