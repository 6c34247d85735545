"""The user kind's plan steps: a declared user missing from the site is created, a managed
user who left ``users:`` is deleted only under ``policy.prune_users``, and a user who differs
is reported (no API method changes an existing user)."""

from __future__ import annotations

from collections.abc import Iterable

from reconciler.core.changes import Change, created
from reconciler.engine.plan import Kept
from reconciler.engine.safety import protecting_user
from reconciler.engine.steps import Steps, differing, gone_note
from reconciler.kinds import user as kind
from reconciler.kinds.user.actions import DELETES_ACCOUNT, UserAdd, UserDelete
from reconciler.kinds.user.diff import UserDiff
from reconciler.model import DesiredUser, LiveUser


def plan_users(steps: Steps, diffs: Iterable[UserDiff]) -> None:
    """What each user's difference becomes."""
    for diff in diffs:
        if diff.status == "missing" and diff.desired is not None:
            _create(steps, diff.desired, diff.gone_id)
        elif diff.status == "present" and diff.differences:
            steps.changes.append(
                Change(
                    "user",
                    diff.username,
                    "differs",
                    id=diff.live.id if diff.live else None,
                    fields=differing(diff.differences),
                    hint="no API method changes an existing user: change it in the web "
                    "app, or change the manifest to match",
                )
            )
        elif diff.status == "extra" and diff.live is not None:
            _retire(steps, diff.username, diff.live)
        elif diff.status == "vanished":
            steps.vanished("user", diff.username, diff.gone_id)
        elif diff.status == "renamed" and diff.live is not None:
            steps.renamed("user", diff.username, diff.live.id, diff.live.username)


def _create(steps: Steps, user: DesiredUser, gone_id: int | None) -> None:
    steps.add(UserAdd.declared(user))
    fields = created(kind.shown(user.settings))
    steps.changes.append(
        Change("user", user.username, "create", fields=fields, note=gone_note(gone_id))
    )


def _retire(steps: Steps, username: str, live: LiveUser) -> None:
    """A managed user who left ``users:``: deleted only with ``policy.prune_users``."""
    policy = steps.policy
    if not policy.prune_users:
        reason = "left the manifest; kept because policy.prune_users is false"
    elif pattern := protecting_user(policy.protect_users, username, live):
        reason = f'left the manifest; kept because it matches policy.protect_users "{pattern}"'
    else:
        steps.add(UserDelete(user_id=live.id, username=username))
        steps.changes.append(
            Change("user", username, "delete", id=live.id, warning=DELETES_ACCOUNT)
        )
        return
    steps.kept.append(Kept("user", username, reason))
