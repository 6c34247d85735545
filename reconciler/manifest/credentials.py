"""Passwords have no place in a manifest: find them, and never repeat them in a message.

A manifest is committed, reviewed and copied into CI logs, so a password written in it is
leaked by the time anyone reads the finding. The tool never needs one: the site e-mails a
new user their login, and PostgreSQL finds its password in ``PGPASSWORD``, ``.pgpass`` or a
service file. These helpers spot a password key or a password inside a URL, and mask one
in any text a message quotes.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

_PASSWORD_KEY = re.compile(r"(?:\w*[_-])?(?:password|passwd|passphrase|pwd|pass)", re.IGNORECASE)
_URL_PASSWORD = re.compile(r"(//[^/?#@\s:]*:)[^/?#@\s]*@")
_PASSWORD_PARAMETER = re.compile(r"(\w*pass(?:word)?\s*=\s*)[^&\s]+", re.IGNORECASE)


def is_password_key(key: str) -> bool:
    """``password``, ``Password``, ``initial_password``, ``passwd``, ``pwd`` and the like."""
    return _PASSWORD_KEY.fullmatch(key) is not None


def holds_password(text: str) -> bool:
    """True when ``text`` carries a password: ``scheme://user:secret@host`` or a
    ``password=`` parameter (a URL's query or a ``key=value`` connection string)."""
    if _PASSWORD_PARAMETER.search(text):
        return True
    try:
        parts = urlsplit(text)
        query = parse_qsl(parts.query)
    except ValueError:  # an unparsable URL: look for the user:secret@ shape alone
        return _URL_PASSWORD.search(text) is not None
    return parts.password is not None or any("pass" in key.lower() for key, _ in query)


def masked(text: str) -> str:
    """``text`` with every password it holds replaced by ``***``, safe to quote in a message."""
    return _PASSWORD_PARAMETER.sub(r"\1***", _URL_PASSWORD.sub(r"\1***@", text))
