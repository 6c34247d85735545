"""Passwords in text the tool shows: find them and mask them, in one place.

A state location (``postgresql://ci:s3cret@db/reconciler``), a manifest value or a connection
string can carry a password, and every message, follow-up command, plan file and log line
that repeats such a text would leak it. Everything the tool prints about a location goes
through here. Masking errs on the side of hiding: a password is anything between the first
``:`` of a URL's user part and its *last* ``@``, so an unencoded ``@``, ``/``, ``?`` or ``#``
inside it (``postgresql://ci:p/a@ss@db``) is masked whole, never cut in two.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

MASK = "***"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_PASSWORD_PARAMETER = re.compile(r"(\w*pass(?:word)?\s*=\s*)[^&\s]+", re.IGNORECASE)
_PASSWORD_PARAMETER_WHOLE = re.compile(r"[&?]?\w*pass(?:word)?\s*=\s*[^&\s]*", re.IGNORECASE)


def _userinfo_password(text: str) -> tuple[int, int] | None:
    """Start and end of the password in ``scheme://user:password@host…``, or None."""
    scheme = _SCHEME.search(text)
    if scheme is None:
        return None
    start = scheme.end()
    at = text.rfind("@", start)
    if at < 0:
        return None
    colon = text.find(":", start, at)
    if colon < 0 or any(mark in text[start:colon] for mark in "/?#"):
        return None  # no password, or the ':' belongs to a host:port or the path
    return colon + 1, at


def unencoded_password(text: str) -> bool:
    """True when the password of ``scheme://user:password@host`` holds a character a URL
    parser splits on (``/ ? # @``): libpq and urllib would read another host, path or user."""
    span = _userinfo_password(text)
    return span is not None and any(mark in text[span[0] : span[1]] for mark in "/?#@")


def holds_password(text: str) -> bool:
    """True when ``text`` carries a password: ``scheme://user:secret@host`` or a
    ``password=`` parameter (a URL's query or a ``key=value`` connection string)."""
    if _PASSWORD_PARAMETER.search(text) or _userinfo_password(text) is not None:
        return True
    try:
        query = parse_qsl(urlsplit(text).query)
    except ValueError:
        return False
    return any("pass" in key.lower() for key, _ in query)


def masked(text: str) -> str:
    """``text`` with every password it holds replaced by ``***``, safe to quote in a message."""
    span = _userinfo_password(text)
    if span is not None:
        text = text[: span[0]] + MASK + text[span[1] :]
    return _PASSWORD_PARAMETER.sub(rf"\g<1>{MASK}", text)


def without_password(text: str) -> str:
    """``text`` with its passwords left out: a location a follow-up command can repeat
    (libpq then reads the password from ``PGPASSWORD``, ``~/.pgpass`` or a service file)."""
    span = _userinfo_password(text)
    if span is not None:
        text = text[: span[0] - 1] + text[span[1] :]
    stripped = _PASSWORD_PARAMETER_WHOLE.sub("", text)
    if "?" not in stripped and "&" in stripped:  # the first parameter went: keep a '?'
        stripped = stripped.replace("&", "?", 1)
    return stripped
