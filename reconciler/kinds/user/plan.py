"""The user kind's plan: a declared user missing from the site is created, a user who differs
is reported (no API method changes an existing user), and a managed user who left ``users:``
is deleted only under ``policy.prune_users`` (``retire``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date

from reconciler.core.changes import Change, created
from reconciler.core.guards import protecting_user
from reconciler.core.planning import (
    NOTHING_PLANNED,
    Kept,
    PlanInputs,
    Planned,
    gone_note,
    joined,
    renamed,
    vanished,
)
from reconciler.kinds import user as kind
from reconciler.kinds.user.actions import DELETES_ACCOUNT, UserAdd, UserDelete
from reconciler.kinds.user.diff import UserDiff
from reconciler.model import LiveUser, Policy

DIFFERS_HINT = (
    "no API method changes an existing user: change it in the web app, or change the manifest "
    "to match"
)


def plan(diffs: Iterable[UserDiff], inputs: PlanInputs) -> Planned:
    """What each declared user's difference becomes (nothing with ``--expired-only``: an
    expired account is retired, ``retire``)."""
    return NOTHING_PLANNED if inputs.options.expired_only else joined(_planned(diffs))


def _planned(diffs: Iterable[UserDiff]) -> Iterator[Planned]:
    for diff in diffs:
        if diff.status == "missing" and diff.desired is not None:
            user = diff.desired
            fields = created(kind.shown(user.settings))
            note = gone_note(diff.gone_id)
            change = Change("user", user.username, "create", fields=fields, note=note)
            yield Planned(actions=(UserAdd.declared(user),), changes=(change,))
        elif diff.status == "present" and diff.differences:
            yield Planned(
                changes=(
                    Change(
                        "user",
                        diff.username,
                        "differs",
                        id=diff.live.id if diff.live else None,
                        fields=diff.differences,
                        hint=DIFFERS_HINT,
                    ),
                )
            )
        elif diff.status == "renamed" and diff.live is not None:
            yield renamed("user", diff.username, diff.live.id, diff.live.username)


def retire(diffs: Iterable[UserDiff], inputs: PlanInputs) -> Planned:
    """Managed users who left ``users:``: deleted only with ``policy.prune_users``; the
    records of those gone from the site too are forgotten."""
    parts: list[Planned] = []
    for diff in diffs:
        if diff.status == "extra" and diff.live is not None:
            expired = inputs.expiries.account(diff.live.id)
            if expired is None and inputs.options.expired_only:
                continue
            parts.append(_retired(diff.username, diff.live, inputs.policy, expired))
        elif diff.status == "vanished" and not inputs.options.expired_only:
            parts.append(vanished("user", diff.username, diff.gone_id, inputs.live))
    return joined(parts)


def _retired(username: str, live: LiveUser, policy: Policy, expired: date | None) -> Planned:
    """A managed user who left ``users:``, or whose ``expires:`` came (``expired``): deleted
    only where the policy allows; its access to the manifest's workspaces and groups ends
    either way, its references having expired with it (``core/expiry.py``)."""
    left = f"expired on {expired.isoformat()}" if expired else "left the manifest"
    if not policy.prune_users:
        reason = f"{left}; kept because policy.prune_users is false"
    elif pattern := protecting_user(policy.protect_users, username, live):
        reason = f'{left}; kept because it matches policy.protect_users "{pattern}"'
    else:
        note = f"expired {expired.isoformat()}" if expired else None
        delete = Change("user", username, "delete", id=live.id, note=note, warning=DELETES_ACCOUNT)
        return Planned(actions=(UserDelete(user_id=live.id, username=username),), changes=(delete,))
    return Planned(kept=(Kept("user", username, reason),))
