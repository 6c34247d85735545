"""Why a saved plan is stale, in the domain's words: deepdiff finds which fingerprinted
objects changed; each becomes one sentence about that object."""

from __future__ import annotations

from typing import Any

from reconciler.engine.planning.facts import describe_changes


def workspace(ws_id: int, users: list[int], permissions: Any = None) -> list[dict[str, Any]]:
    return [{"id": ws_id, "users": users, "permissions": permissions, "notifications": None}]


def fingerprint(**changes: Any) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "workspaces": {
            "Finance": workspace(12, [1001, 1002]),
            "Legal": workspace(13, [1003]),
            "Audit": None,
        },
        "groups": {
            "crew": {"ids_on_site": [], "recorded_id": None, "recorded_members": None},
            "ops": {"ids_on_site": [7], "recorded_id": 7, "recorded_members": [1005]},
        },
        "users": {"1004": "dave", "1009": "ivan"},
    }
    for section, value in changes.items():
        facts[section] = {**facts[section], **value}
    return facts


def test_each_changed_object_is_one_sentence_and_untouched_ones_are_not_mentioned() -> None:
    before = fingerprint()
    after = fingerprint(
        workspaces={
            "Finance": workspace(12, [1002, 1043], ["upload_files"]),
            "Audit": workspace(20, []),
        },
        groups={"crew": {"ids_on_site": [8], "recorded_id": None, "recorded_members": None}},
        users={"1004": "dave.old", "1009": None},
    )
    assert describe_changes(before, after) == [
        'workspace "Audit" was created on the site since the plan was made',
        'workspace "Finance" changed on the site since the plan was made: user 1043 joined, '
        "user 1001 left; its permissions override changed",
        'user group "crew" was created on the site (by someone else) since the plan was made',
        'user 1004 was renamed from "dave" to "dave.old"',
        'user 1009 ("ivan") no longer exists on the site',
    ]
    assert describe_changes(before, fingerprint()) == []
