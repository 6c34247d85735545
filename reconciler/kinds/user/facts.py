"""The facts of a user a plan depends on (its fingerprint), and how one changed, in words: the
username the site gives each user ID the plan's actions name."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reconciler.core.actions import WriteAction
from reconciler.core.records import Records
from reconciler.model import LiveSite


def keys(actions: Iterable[WriteAction]) -> set[str]:
    """The users the actions name that have IDs, by ID (as text: a JSON key)."""
    return {
        str(user) for action in actions for user in action.named_users() if isinstance(user, int)
    }


def facts(live: LiveSite, records: Records, user_ids: Iterable[str]) -> dict[str, Any]:
    names = {user.id: user.username for user in live.users}
    return {str(uid): names.get(uid) for uid in sorted({int(uid) for uid in user_ids})}


def changed(uid: str, was: Any, now: Any) -> str:
    if now is None:
        return f'user {uid} ("{was}") no longer exists on the site'
    if was is None:
        return f'user {uid} now exists on the site, as "{now}"'
    return f'user {uid} was renamed from "{was}" to "{now}"'
