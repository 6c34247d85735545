"""Adopting declared users that exist on the site: recorded as managed, so that a later
``policy.prune_users`` may delete one once it leaves the manifest."""

from __future__ import annotations

from collections.abc import Iterable

from reconciler.core.kind import Adoption
from reconciler.core.records import RecordedUser, Records, UserAdopted
from reconciler.kinds.user.diff import UserDiff


def adopt(diffs: Iterable[UserDiff], records: Records) -> Adoption:
    found = Adoption()
    for user in diffs:
        if user.status == "missing":
            found += Adoption(absent=(f'user "{user.username}"',))
        if user.status != "present" or user.live is None or user.desired is None:
            continue
        known = records.users.get(user.username)
        if known is not None and known.managed and known.id == user.live.id:
            continue
        adopted = RecordedUser(user.live.id, True, "adopted", user.desired.source.file)
        found += Adoption(
            adopted=(f'user "{user.username}" (id {user.live.id})',),
            events=(UserAdopted(user.username, adopted),),
        )
    return found
