"""Carry out a plan's actions through the client, journaled and crash-safe.

Phases run in the plan's order; the actions of one phase are independent and run
concurrently (the client's limit bounds them). Each write is journaled before it is sent and
after it answers. A failed action does not stop the actions that do not depend on it; those
that do are skipped, and deletions are skipped if anything before them failed, so a half
done apply never destroys what it was about to re-create.

A write that gets no answer (``OutcomeUnknown``) is never simply sent again: ``resolve``
reads the site first, and only a write that certainly did not happen is retried.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from reconciler.api.client import SiteClient
from reconciler.api.errors import NotFound, OutcomeUnknown, SiteError
from reconciler.api.records import WorkspaceSettings
from reconciler.engine.journal import Journal
from reconciler.engine.plan import PHASES, Action, Plan
from reconciler.engine.recording import record_result
from reconciler.engine.resolve import resolve_unknown
from reconciler.engine.state import RecordedGroup, SiteState

Status = Literal["done", "failed", "skipped", "unknown"]
DELETE_PHASE = PHASES[-1]  # runs only when everything before it completed


@dataclass(frozen=True, slots=True)
class Outcome:
    action: Action
    status: Status
    detail: str = ""


@dataclass
class ApplyReport:
    outcomes: list[Outcome] = field(default_factory=list)
    calls: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def count(self, status: Status) -> int:
        return sum(1 for outcome in self.outcomes if outcome.status == status)

    @property
    def complete(self) -> bool:
        return all(outcome.status == "done" for outcome in self.outcomes)


async def call_action(client: SiteClient, action: Action) -> dict[str, Any]:
    """Send one action to the site; returns what recording needs of the answer."""
    p = action.params
    match action.method:
        case "user_group_add":
            created = await client.user_group_add(p["name"], p["member_ids"])
            return {"id": created.id}
        case "workspace_add":
            settings = WorkspaceSettings(
                root_access=p["root_access"],
                user_ids=tuple(p["user_ids"]),
                permissions=None if p["permissions"] is None else frozenset(p["permissions"]),
                notifications=None if p["notifications"] is None else frozenset(p["notifications"]),
            )
            return {"ids": await client.workspace_add(p["names"], settings)}
        case "add_to_user_group":
            await client.add_to_user_group(p["user_id"], p["group_ids"])
        case "remove_from_user_group":
            await client.remove_from_user_group(p["user_id"], p["group_ids"])
        case "add_to_workspace":
            await client.add_to_workspace(p["user_id"], p["workspace_ids"])
        case "remove_from_workspace":
            await client.remove_from_workspace(p["user_id"], p["workspace_ids"])
        case "workspace_delete":
            await client.workspace_delete(p["workspace_id"])
        case "user_group_delete":
            await client.user_group_delete(p["group_id"])
        case _:
            raise ValueError(f"unknown action method {action.method}")
    return {}


class Executor:
    """Runs the actions of one plan against one site, updating ``state`` as it goes."""

    def __init__(
        self,
        client: SiteClient,
        state: SiteState,
        journal: Journal,
        on_progress: Callable[[Outcome], None] = lambda outcome: None,
    ) -> None:
        self.client = client
        self.state = state
        self.journal = journal
        self.on_progress = on_progress
        self.status: dict[str, Status] = {}

    async def run(self, plan: Plan) -> ApplyReport:
        started = time.monotonic()
        before = self.client.stats.as_dict()["calls"]
        report = ApplyReport()
        actions = plan.actions
        for phase in PHASES:
            batch = [action for action in actions if action.phase == phase]
            hold = phase == DELETE_PHASE and not all(o.status == "done" for o in report.outcomes)
            report.outcomes += await asyncio.gather(*(self._run(a, hold) for a in batch))
        after = self.client.stats.as_dict()["calls"]
        report.calls = {m: n - before.get(m, 0) for m, n in after.items() if n - before.get(m, 0)}
        report.seconds = time.monotonic() - started
        return report

    async def _run(self, action: Action, hold: bool) -> Outcome:
        """Run ``action`` unless ``hold`` (deletions after a failure) or a dependency failed."""
        blocked = [dep for dep in action.depends_on if self.status.get(dep) != "done"]
        if hold:
            outcome = Outcome(action, "skipped", "deletions wait until every other change is done")
        elif blocked:
            outcome = Outcome(action, "skipped", f"{blocked[0]} did not complete")
        else:
            outcome = await self._perform(action)
        self.status[action.id] = outcome.status
        self.on_progress(outcome)
        return outcome

    async def _perform(self, action: Action, attempt: int = 1) -> Outcome:
        self.journal.write("intent", action)
        try:
            result = await call_action(self.client, action)
        except OutcomeUnknown:
            return await self._after_unknown(action, attempt)
        except NotFound as exc:
            if action.method in ("workspace_delete", "user_group_delete"):
                return self._done(action, {}, "already gone from the site")
            return self._failed(action, exc)
        except SiteError as exc:
            return self._failed(action, exc)
        return self._done(action, result)

    async def _after_unknown(self, action: Action, attempt: int) -> Outcome:
        """Look at the site before trying again: never create anything twice."""
        try:
            settlement = await resolve_unknown(self.client, action)
        except SiteError as exc:
            return self._unknown(action, f"no answer, and the check that followed failed: {exc}")
        if settlement.applied is not None:
            self._done(settlement.applied, settlement.result)
        if settlement.cannot_tell:
            return self._unknown(action, settlement.reason)
        if settlement.remaining is None:
            return Outcome(action, "done", "no answer came, but the site shows it was applied")
        if attempt >= 2:
            return self._unknown(settlement.remaining, "no answer, twice")
        return await self._perform(settlement.remaining, attempt + 1)

    def _done(self, action: Action, result: dict[str, Any], detail: str = "") -> Outcome:
        self.journal.write("done", action, result=result)
        record_result(self.state, action, result)
        return Outcome(action, "done", detail)

    def _failed(self, action: Action, exc: SiteError) -> Outcome:
        self.journal.write("failed", action, error=exc.message)
        return Outcome(action, "failed", str(exc))

    def _unknown(self, action: Action, reason: str) -> Outcome:
        self.journal.write("unknown", action, reason=reason)
        self.state.pending.append(action.to_data())
        if action.method == "user_group_add":
            name = action.params["name"]
            self.state.groups.setdefault(
                name,
                RecordedGroup(None, True, "created", frozenset(action.params["member_ids"]), True),
            )
        return Outcome(action, "unknown", reason)
