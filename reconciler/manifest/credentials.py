"""Passwords have no place in a manifest: find them, and never repeat them in a message.

A manifest is committed, reviewed and copied into CI logs, so a password written in it is
leaked by the time anyone reads the finding. The tool never needs one: the site e-mails a
new user their login, and PostgreSQL finds its password in ``PGPASSWORD``, ``.pgpass`` or a
service file. This spots a key that holds a password; ``reconciler.passwords`` finds and
masks a password inside any text.
"""

from __future__ import annotations

import re

_PASSWORD_KEY = re.compile(r"(?:\w*[_-])?(?:password|passwd|passphrase|pwd|pass)", re.IGNORECASE)


def is_password_key(key: str) -> bool:
    """``password``, ``Password``, ``initial_password``, ``passwd``, ``pwd`` and the like."""
    return _PASSWORD_KEY.fullmatch(key) is not None
