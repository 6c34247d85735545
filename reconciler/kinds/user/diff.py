"""Compare the declared site users with the site's and the records: part of
``engine.planning.diff.compare``.

A declared user is ``missing`` or ``present`` (with the fields the site shows otherwise,
``kinds.user.differences``: drift no API method can change); a managed user is ``extra``
once it left the manifest, ``vanished`` once gone from the site, or ``renamed`` when the
site calls its recorded ID something else -- then it is reported, never deleted under its old
name nor created a second time. Usernames compare as the site compares them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from reconciler.core.records import RecordedUser, Records
from reconciler.core.users import Resolution
from reconciler.identity import NameSet, NameTable, same_name, username_key
from reconciler.kinds import user as kinds_user
from reconciler.kinds.change import FieldChange
from reconciler.model import DesiredSite, DesiredUser, LiveSite, LiveUser


@dataclass(frozen=True, slots=True)
class UserDiff:
    """One site user, declared (``missing``/``present``) or managed (``extra``/``vanished``),
    or ``renamed``: the site now calls the managed ID something else (``live`` says what), and
    such a user is reported, never deleted under its old name nor created a second time.

    ``differences`` are what the site shows otherwise than the manifest says (e-mail, names,
    administrator): drift no API method can change, reported and never "fixed".
    """

    username: str
    status: Literal["missing", "present", "extra", "vanished", "renamed"]
    desired: DesiredUser | None
    live: LiveUser | None
    record: RecordedUser | None
    differences: tuple[FieldChange, ...] = ()
    gone_id: int | None = None
    unobservable: tuple[str, ...] = ()  # the site reports every fact compared of a user

    @property
    def name(self) -> str:
        return self.username


def compare_users(
    desired: DesiredSite,
    live: LiveSite,
    records: Records,
    resolution: Resolution,
    conflicts: list[str],
) -> list[UserDiff]:
    """Each declared and each managed user (``resolution`` and ``conflicts`` are what every
    kind's comparison is given: a user names no other user, and no declaration of one is
    beyond the tool's reach)."""
    by_name = {username_key(user.username): user for user in live.users if user.username}
    by_id = {user.id: user for user in live.users}
    diffs: list[UserDiff] = []
    recorded = NameTable("user", records.users)
    for want in desired.users:
        record = recorded.get(want.username)
        found = by_name.get(username_key(want.username))
        ours = by_id.get(record.id) if record is not None and record.managed else None
        if found is None and ours is not None and ours.username in NameSet("user", want.previously):
            differences = kinds_user.differences(
                want.settings, ours
            )  # the site keeps the old username
            diffs.append(UserDiff(want.username, "present", want, ours, record, differences))
        elif found is None and ours is not None:
            diffs.append(UserDiff(want.username, "renamed", want, ours, record))
        elif found is None:
            gone = record.id if record is not None and record.id not in by_id else None
            diffs.append(UserDiff(want.username, "missing", want, None, record, gone_id=gone))
        else:
            differences = kinds_user.differences(want.settings, found)
            diffs.append(UserDiff(want.username, "present", want, found, record, differences))
    declared = NameSet("user", (user.username for user in desired.users))
    for name, record in sorted(records.users.items()):
        if not record.managed or name in declared:
            continue  # still declared (perhaps written in another case: the same user)
        found = by_id.get(record.id)
        status: Literal["extra", "vanished", "renamed"] = "extra" if found else "vanished"
        if found is not None and not same_name("user", found.username, name):
            status = "renamed"
        gone = record.id if found is None else None
        diffs.append(UserDiff(name, status, None, found, record, gone_id=gone))
    return diffs
