"""What an apply leaves in the records besides its writes' own results.

* which manifest file declares each recorded object (so a plan can tell a vanished file from
  objects removed on purpose);
* for change-scoped plans: the digest of each declared object the site now matches, the user
  references resolved, and, after a full read, when it was.

An object whose writes did not all complete, that still needs a replacement, or that differs
in a way the API cannot change, gets no digest: the next scoped plan looks at it again.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from reconciler.core.records import (
    Event,
    Reconciled,
    Records,
    SourceRecorded,
    UserReferenceRenamed,
    reduce,
)
from reconciler.engine.apply.executor import ApplyReport
from reconciler.engine.planning.plan import Plan
from reconciler.engine.read.observe import Observation
from reconciler.engine.read.scope import Key, digest_of, key
from reconciler.identity import username_key
from reconciler.model import DesiredSite


def unfinished(report: ApplyReport | None) -> set[tuple[str, str]]:
    """``(kind, name)`` of every object an action that did not complete was to change."""
    if report is None:
        return set()
    return {obj for o in report.outcomes if o.status != "done" for obj in o.action.touches()}


def declared_events(
    desired: DesiredSite, records: Records, report: ApplyReport | None = None
) -> list[Event]:
    """Record which file declares each recorded object whose writes all completed."""
    left = unfinished(report)
    events: list[Event] = []
    for ws in desired.workspaces:
        record = records.workspaces.get(ws.name)
        stale = record is not None and record.source != ws.source.file
        if stale and ("workspace", ws.name) not in left:
            events.append(SourceRecorded("workspace", ws.name, ws.source.file))
    for group in desired.groups:
        found = records.groups.get(group.name)
        stale = found is not None and found.source != group.source.file
        if stale and ("group", group.name) not in left:
            events.append(SourceRecorded("group", group.name, group.source.file))
    events += user_reference_renames(desired, records)
    users = reduce(records, events).users
    for user in desired.users:
        known = users.get(user.username)
        stale = known is not None and known.source != user.source.file
        if stale and ("user", user.username) not in left:
            events.append(SourceRecorded("user", user.username, user.source.file))
    return events


def user_reference_renames(desired: DesiredSite, records: Records) -> list[Event]:
    """Recorded usernames the manifest now writes in another case: renamed, not retired."""
    declared = {user.username for user in desired.users}
    by_fold = {username_key(name): name for name in records.users if name not in declared}
    return [
        UserReferenceRenamed(by_fold[username_key(user.username)], user.username)
        for user in desired.users
        if user.username not in records.users and username_key(user.username) in by_fold
    ]


def _in_sync(seen: Observation, plan: Plan, left: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The compared objects the site matches once the plan's completed actions are done."""
    pending = {(c.kind, c.name) for c in plan.changes if c.action in _NOT_SETTLED} | left
    found: set[tuple[str, str]] = {
        (kind, diff.name)
        for kind, diffs in seen.comparison.diffs.items()
        for diff in diffs
        if diff.status in ("present", "missing")  # one that differs has a "differs" change
    }
    return found - pending


_NOT_SETTLED = ("needs-replacement", "renamed", "differs")


def declared_keys(desired: DesiredSite) -> set[str]:
    """The digest key of every object ``desired`` declares: which recorded digests still
    belong to an object (``declared_digests`` without the digests, a thousand-user
    manifest's worth of hashing that only its keys were wanted for)."""
    return {
        *(key("workspace", ws.name) for ws in desired.workspaces),
        *(key("group", group.name) for group in desired.groups),
        *(key("user", user.username) for user in desired.users),
    }


def reconciled_event(
    seen: Observation,
    plan: Plan,
    records: Records,
    full: DesiredSite,
    report: ApplyReport | None,
    made: Mapping[Key, str] | None = None,
) -> Reconciled:
    """Digests, references and the full-read time this apply leaves for scoped plans.
    ``made``: the digests of ``seen.desired``'s objects, made while the writes travelled
    (``scope.digests_meanwhile``)."""
    settled = _in_sync(seen, plan, unfinished(report))
    compared = seen.desired
    digests = {
        key(kind, obj_name): (made or {}).get(key(kind, obj_name)) or digest_of(obj)
        for kind, objects in (
            ("workspace", {ws.name: ws for ws in compared.workspaces}),
            ("group", {g.name: g for g in compared.groups}),
            ("user", {u.username: u for u in compared.users}),
        )
        for obj_name, obj in objects.items()
        if (kind, obj_name) in settled
    }
    declared = declared_keys(full)
    dropped = tuple(k for k in records.digests if k not in declared)
    references = {
        ref: (user_id, seen.directory.label(user_id))
        for ref, user_id in seen.resolution.ids.items()
    }
    for ref, username in seen.resolution.new.items():
        created = records.users.get(username)
        if created is not None:
            references[ref] = (created.id, username)
    full_read = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) if seen.scope is None else None
    return Reconciled(digests, dropped, references, full_read)
