"""When two names mean the same person or workspace: the one place the access code decides.

The rules are the engine's today: usernames match without regard to case (as the diff, the
user directory and ``user_add`` settlement compare them), workspace names exactly (the site's
names are case-sensitive; ``--target`` matches them so). Reports, ``--since`` and the
manifest's declarations all key by these.
"""

from __future__ import annotations


def person_key(username: str) -> str:
    return username.casefold()


def workspace_key(name: str) -> str:
    return name


def email_domain(email: str) -> str | None:
    """The domain of an e-mail address, in lower case; None when it has none."""
    local, at, domain = email.rpartition("@")
    return domain.casefold() if at and local and domain else None
