"""Effective access from a read of the site, the records and the manifest; and the findings.

Pure functions on the model: the site read is given as data (what ``workspace_info``,
``user_list`` and ``user_info`` answered), so each rule is one small, exact case.
"""

from __future__ import annotations

import datetime
from typing import Any

from reconciler.access.effective import DeclaredAccess, effective_access
from reconciler.access.findings import access_findings, usual_domains
from reconciler.access.model import Access
from reconciler.access.read import OwnSettings, SiteRead
from reconciler.spec import PERMISSION_KEYS
from tests.support.models import desired_site, live_site, site_state

USERS = [
    {"id": 1000, "username": "root", "admin": True},
    {"id": 1001, "username": "alice"},
    {"id": 1002, "username": "bob"},
    {"id": 1003, "username": "carol", "active": False},
    {"id": 1004, "username": "dave", "email": "dave@gmail.example"},
    *({"id": 1010 + i, "username": f"staff{i}"} for i in range(10)),  # acme.example: usual
]
TODAY = datetime.date(2026, 11, 21)  # the manifests here have no expiry
WORKSPACES = [
    {"id": 10, "name": "Finance", "users": [1001, 1003], "permissions": ["download_files"]},
    {"id": 11, "name": "Legal", "users": [1002, 1004]},
    {"id": 12, "name": "Scans", "observed": False},
]


def site_read(
    own: dict[int, OwnSettings] | None = None, people: frozenset[int] | None = None
) -> SiteRead:
    live = live_site({"users": USERS, "workspaces": WORKSPACES})
    return SiteRead(
        live.users,
        live.workspaces,
        own or {},
        people,
        tuple(u.email for u in live.users),
    )


def entries(
    read: SiteRead, state: dict[str, Any] | None = None, **manifest: Any
) -> dict[tuple[str, str], Access]:
    declared = DeclaredAccess.of(desired_site(manifest), read.users, TODAY) if manifest else None
    found = effective_access(read, site_state(state or {}), declared)
    return {(e.person, e.workspace): e for e in found.entries}


def test_members_and_administrators_reach_a_workspace_and_nobody_else() -> None:
    found = entries(site_read())
    assert sorted(found) == sorted(
        [
            ("alice", "Finance"), ("carol", "Finance"), ("root", "Finance"),
            ("bob", "Legal"), ("dave", "Legal"), ("root", "Legal"),
            ("root", "Scans"),
        ]
    )  # fmt: skip
    assert found["alice", "Finance"].via == "member"
    assert found["root", "Legal"].via == "administrator"


def test_permissions_come_from_the_override_else_the_person_s_own() -> None:
    own = {1002: OwnSettings(frozenset({"upload_files"}), frozenset({"upload_notifications"}))}
    found = entries(site_read(own))
    finance = found["alice", "Finance"]
    assert (finance.permissions, finance.permissions_from) == ({"download_files"}, "workspace")
    legal = found["bob", "Legal"]
    assert (legal.permissions, legal.permissions_from) == ({"upload_files"}, "user")
    assert (legal.notifications, legal.notifications_from) == ({"upload_notifications"}, "user")
    unread = found["dave", "Legal"]  # own permissions apply, and were not read
    assert (unread.permissions, unread.permissions_from) == (None, "user")


def test_an_administrator_has_every_permission_and_no_notifications_where_not_a_member() -> None:
    root = entries(site_read())["root", "Finance"]
    assert (root.permissions, root.permissions_from) == (PERMISSION_KEYS, "administrator")
    assert (root.notifications, root.notifications_from) == (None, "not a member")


def test_a_workspace_the_site_would_not_describe_is_unknown_not_guessed() -> None:
    scans = entries(site_read())["root", "Scans"]
    assert scans.permissions_from == "administrator"
    read = site_read()
    found = effective_access(read, site_state({}), None)
    facts = next(ws for ws in found.workspaces if ws.name == "Scans")
    assert not facts.observed and facts.permissions is None


def test_root_access_and_a_silent_notification_override_come_from_the_records() -> None:
    state = {
        "workspaces": {
            "Legal": {"id": 11, "settings_known": True, "root_access": False, "notifications": []},
            "Finance": {"id": 99, "settings_known": True, "root_access": True},  # another ID
        }
    }
    found = entries(site_read(), state)
    legal = found["bob", "Legal"]
    assert legal.root_access is False
    # the override is on with both notifications off: the records know, the site cannot say
    assert (legal.notifications, legal.notifications_from) == (frozenset(), "workspace")
    assert found["alice", "Finance"].root_access is None


def test_the_manifest_declares_access_or_not_or_never_names_the_person() -> None:
    found = entries(
        site_read(),
        workspaces=[{"name": "Finance", "users": ["alice"]}, {"name": "Legal", "users": ["bob"]}],
        groups=[{"name": "auditors", "members": ["carol"]}],
        users=[{"username": "root", "admin": True}],
    )
    assert found["alice", "Finance"].manifest == "declared"
    assert found["carol", "Finance"].manifest == "not declared"  # named (a group), not here
    assert found["dave", "Legal"].manifest == "unmanaged user"
    assert found["root", "Scans"].manifest == "declared"  # an administrator the manifest makes


def test_a_report_on_some_people_holds_only_them() -> None:
    found = entries(site_read(people=frozenset({1001})))
    assert sorted(found) == [("alice", "Finance")]


def findings(**manifest: Any) -> list[tuple[str, str, str]]:
    read = site_read()
    declared = DeclaredAccess.of(desired_site(manifest), read.users, TODAY) if manifest else None
    found = effective_access(read, site_state({}), declared)
    usual = usual_domains(read.emails)
    return [
        (f.kind, f.person, f.detail) for f in access_findings(found.people, found.entries, usual)
    ]


def test_findings_come_in_order_of_kind_and_person() -> None:
    assert findings(workspaces=[{"name": "Finance", "users": ["alice", "carol"]}]) == [
        ("deactivated", "carol", "deactivated, yet still a member of Finance"),
        ("administrator", "root", "reaches every workspace (3 workspaces) as an administrator"),
        ("unmanaged_user", "bob", "never named in the manifest, yet reaches Legal"),
        ("unmanaged_user", "dave", "never named in the manifest, yet reaches Legal"),
        (
            "unmanaged_user",
            "root",
            "never named in the manifest, yet reaches Finance, Legal, Scans",
        ),
        (
            "unusual_domain",
            "dave",
            "e-mail domain gmail.example is not one of the site's usual domains (acme.example)",
        ),
    ]


def test_access_a_named_person_holds_without_the_manifest_saying_so_is_undeclared() -> None:
    found = findings(
        workspaces=[
            {"name": "Finance", "users": ["alice"]},
            {"name": "Legal", "users": ["bob", "dave"]},
        ],
        users=[{"username": "root"}],
        groups=[{"name": "auditors", "members": ["carol"]}],
    )
    undeclared = [(person, detail) for kind, person, detail in found if kind == "undeclared"]
    assert undeclared == [
        ("carol", "a member of Finance on the site; the manifest does not say so"),
        ("root", "an administrator on the site; the manifest does not say so"),
    ]


def test_without_a_manifest_nothing_is_judged_undeclared() -> None:
    kinds = {kind for kind, _, _ in findings()}
    assert kinds == {"deactivated", "administrator", "unusual_domain"}


def test_usual_domains_are_those_a_tenth_of_the_users_hold() -> None:
    emails = [f"u{i}@acme.example" for i in range(17)] + ["a@partner.example", "b@partner.example"]
    assert usual_domains([*emails, "x@gmail.example"]) == ("acme.example", "partner.example")
    assert usual_domains([f"u{i}@d{i}.example" for i in range(20)]) == ("d0.example",)
    assert usual_domains(["no-at-sign", "x@ACME.example"]) == ("acme.example",)
    assert usual_domains([]) == ()
