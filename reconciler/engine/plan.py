"""The plan: a small value object that every renderer, the plan file and ``apply`` read.

A plan is its ``data`` dict (documented in ``docs/plan-format.md``): the ordered actions (one
API call each), the changes they make object by object, what is left alone and why, what
apply would refuse, and the live facts the actions depend on. The checksum over that dict
identifies the plan: a saved plan is applied at most once, and a plan file that was edited
by hand is refused.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from reconciler.errors import ReconcilerError

PLAN_FORMAT = "site-reconciler-plan"
PLAN_FORMAT_VERSION = 1

PHASES: tuple[str, ...] = (
    "create_groups",  # user_group_add, with the members
    "add_to_groups",  # add_to_user_group, one call per user
    "replace_workspaces",  # workspace_delete of workspaces named with --replace
    "create_workspaces",  # workspace_add, identical settings share one call
    "workspace_members",  # add_to_workspace / remove_from_workspace, one call per user
    "remove_from_groups",  # remove_from_user_group, one call per user
    "delete",  # workspace_delete / user_group_delete (prune), last
)

WRITE_METHODS = frozenset(
    {
        "user_group_add",
        "add_to_user_group",
        "workspace_add",
        "workspace_delete",
        "add_to_workspace",
        "remove_from_workspace",
        "remove_from_user_group",
        "user_group_delete",
    }
)


@dataclass(frozen=True, slots=True)
class Action:
    """One API call of the plan."""

    id: str
    phase: str
    method: str
    params: dict[str, Any]
    summary: str
    depends_on: tuple[str, ...] = ()

    def to_data(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "phase": self.phase,
            "method": self.method,
            "params": self.params,
            "summary": self.summary,
            "depends_on": list(self.depends_on),
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Action:
        return cls(
            id=str(data["id"]),
            phase=str(data["phase"]),
            method=str(data["method"]),
            params=dict(data["params"]),
            summary=str(data.get("summary", "")),
            depends_on=tuple(str(d) for d in data.get("depends_on", [])),
        )


def checksum_of(data: dict[str, Any]) -> str:
    body = {key: value for key, value in data.items() if key != "checksum"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Plan:
    """A plan as data. Build it with ``planner.build_plan``; read it with the properties."""

    data: dict[str, Any]

    @property
    def site(self) -> str:
        return str(self.data["site"])

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(Action.from_data(item) for item in self.data["actions"])

    @property
    def checksum(self) -> str:
        return checksum_of(self.data)

    @property
    def has_changes(self) -> bool:
        return bool(self.data["actions"])

    @property
    def refusals(self) -> list[str]:
        """Why apply would refuse this plan (empty when it would not)."""
        safety = self.data["safety"]
        return [] if safety.get("forced") else [str(r) for r in safety["problems"]]

    def to_json(self) -> str:
        return json.dumps({**self.data, "checksum": self.checksum}, indent=1, sort_keys=False)

    @classmethod
    def from_json(cls, text: str, *, origin: str) -> Plan:
        """A saved plan; refused when it is not a plan file or was changed after it was saved."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ReconcilerError(
                f"{origin} is not a plan file: it is not valid JSON ({exc}).",
                hint="Save a plan with `reconciler plan MANIFEST -o PLAN.json`.",
            ) from exc
        if not isinstance(data, dict) or data.get("format") != PLAN_FORMAT:
            raise ReconcilerError(
                f"{origin} is not a site-reconciler plan file.",
                hint="Save a plan with `reconciler plan MANIFEST -o PLAN.json`.",
            )
        if data.get("format_version") != PLAN_FORMAT_VERSION:
            raise ReconcilerError(
                f"{origin} was saved in plan format version {data.get('format_version')}; "
                f"this reconciler reads version {PLAN_FORMAT_VERSION}.",
                hint="Make the plan again with this version of the tool.",
            )
        if data.get("checksum") != checksum_of(data):
            raise ReconcilerError(
                f"{origin} was changed after it was saved (its checksum does not match).",
                hint="Never edit a plan file; make a new plan instead.",
            )
        return cls({key: value for key, value in data.items() if key != "checksum"})
