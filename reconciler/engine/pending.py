"""Settle writes of unknown outcome against a fresh read of the site.

A write is *pending* when the tool sent it and never learnt whether it happened (the
connection dropped, or the process was killed). Most pending writes settle themselves: the
next read observes workspaces and their members directly. Two need care, because they create
something whose ID only the answer carried and whose records matter for pruning:

* ``workspace_add``: a workspace of that name now on the site, and unrecorded, is ours.
* ``user_group_add``: a group of that name among the discovered groups is ours; on a site
  that does not list groups the outcome cannot be known, and the group is marked uncertain
  so that it is never created twice.

Also forgets records of objects that are gone from the site.
"""

from __future__ import annotations

from dataclasses import replace

from reconciler.engine.plan import Action
from reconciler.engine.state import RecordedGroup, RecordedWorkspace, SiteState
from reconciler.model import LiveSite


def settle(state: SiteState, live: LiveSite) -> list[str]:
    """Resolve ``state.pending`` against ``live``; returns sentences saying what was learnt."""
    learnt: list[str] = []
    live_ws = {ws.name: ws for ws in live.workspaces}
    live_groups: dict[str, list[int]] = {}
    for group in live.groups:
        live_groups.setdefault(group.name, []).append(group.id)
    for data in state.pending:
        action = Action.from_data(data)
        if action.method == "workspace_add":
            for name in action.params["names"]:
                ws = live_ws.get(name)
                if ws is not None and name not in state.workspaces:
                    state.workspaces[name] = _created_workspace(action, ws.id)
                    learnt.append(f'workspace "{name}" was created by an interrupted apply')
        elif action.method == "user_group_add":
            learnt.extend(_settle_group(state, action, live_groups, live.groups_listed))
    state.pending.clear()
    _forget_vanished(state, live, learnt)
    return learnt


def _created_workspace(action: Action, workspace_id: int) -> RecordedWorkspace:
    params = action.params
    return RecordedWorkspace(
        id=workspace_id,
        managed=True,
        origin="created",
        root_access=bool(params["root_access"]),
        permissions=None if params["permissions"] is None else frozenset(params["permissions"]),
        notifications=None
        if params["notifications"] is None
        else frozenset(params["notifications"]),
        settings_known=True,
        members=frozenset(params["user_ids"]),
    )


def _settle_group(
    state: SiteState, action: Action, live_groups: dict[str, list[int]], listed: bool
) -> list[str]:
    name = action.params["name"]
    record = state.groups.get(name)
    if record is not None and record.id is not None:
        return []
    found = live_groups.get(name, [])
    members = frozenset(action.params["member_ids"])
    if len(found) == 1:
        state.groups[name] = RecordedGroup(found[0], True, "created", members)
        return [f'user group "{name}" was created by an interrupted apply']
    if not listed:
        state.groups[name] = RecordedGroup(None, True, "created", members, uncertain=True)
        return [f'user group "{name}" may have been created by an interrupted apply']
    if record is not None and record.uncertain:
        del state.groups[name]  # the site lists groups now, and this one is not there
    return []


def _forget_vanished(state: SiteState, live: LiveSite, learnt: list[str]) -> None:
    ids = {ws.id for ws in live.workspaces}
    for name, record in list(state.workspaces.items()):
        if record.id not in ids:
            del state.workspaces[name]
            learnt.append(f'recorded workspace "{name}" (ID {record.id}) is gone from the site')
    if live.groups_listed:
        group_ids = {group.id for group in live.groups}
        for name, group in list(state.groups.items()):
            if group.id is not None and group.id not in group_ids:
                del state.groups[name]
                learnt.append(f'recorded user group "{name}" (ID {group.id}) is gone from the site')
    for name, group in list(state.groups.items()):
        if group.uncertain and group.id is not None:
            state.groups[name] = replace(group, uncertain=False)
