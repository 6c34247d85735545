"""When two names mean the same person or workspace: the access code's names for the one rule.

The rule itself is ``reconciler.identity``, as the site compares names (case and width aside):
usernames and workspace names alike. Reports, ``--since`` and the manifest's declarations all
key by it.
"""

from __future__ import annotations

from reconciler.identity import username_key as person_key
from reconciler.identity import workspace_key

__all__ = ["email_domain", "person_key", "workspace_key"]


def email_domain(email: str) -> str | None:
    """The domain of an e-mail address, in lower case; None when it has none."""
    local, at, domain = email.rpartition("@")
    return domain.casefold() if at and local and domain else None
