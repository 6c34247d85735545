"""``access --since`` against the sandbox on loopback: identities, not names (issue 42).

Each case is what a careless or hostile user did to a real site between two reviews, made
through the site API as any other API user would make it, then compared by the real command:
a person moved between two workspaces of one name, an account deleted and made again under its
username, a person who lost everything seen through ``--user``, and the earlier files that are
refused -- another site's report before any call, a file too deep or too large as one error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest

from reconciler.access.since import MAX_PREVIOUS_BYTES, MAX_PREVIOUS_DEPTH
from reconciler.api.answers import NewUser, WorkspaceSettings
from reconciler.errors import EXIT_ERROR, EXIT_OK
from tests.support.loopback import SANDBOX_PROFILES, LoopbackSite

ADMIN, ALICE, DAVE = 1, 1001, 1004


def keep_report(site: LoopbackSite, name: str = "q3.json", *scope: str) -> dict[str, Any]:
    """The review of today, kept as a reviewer keeps it."""
    result = site.run("access", *scope, "--format", "json", "-o", name)
    assert result.returncode == EXIT_OK, result.stderr
    data: dict[str, Any] = json.loads((site.workdir / name).read_text(encoding="utf-8"))
    return data


def since(site: LoopbackSite, *scope: str, previous: str = "q3.json") -> dict[str, Any]:
    """The ``since`` section of a report compared with ``previous``."""
    result = site.run("access", *scope, "--since", previous, "--format", "json")
    assert result.returncode == EXIT_OK, result.stderr
    found: dict[str, Any] = json.loads(result.stdout)["since"]
    return found


def since_text(site: LoopbackSite, *scope: str) -> str:
    result = site.run("access", *scope, "--since", "q3.json")
    assert result.returncode == EXIT_OK, result.stderr
    return result.stdout


def pairs(entries: Iterable[dict[str, Any]]) -> list[tuple[int, int]]:
    """(user ID, workspace ID) of each access: how a plan's changes will be matched with them."""
    return sorted((e["user_id"], e["workspace_id"]) for e in entries)


def new_workspace(site: LoopbackSite, name: str, *members: int) -> int:
    ids = site.api(lambda c: c.workspace_add([name], WorkspaceSettings(user_ids=members)))
    return ids[0]


def test_a_move_between_two_workspaces_of_one_name_is_lost_there_and_gained_here(
    site: LoopbackSite,
) -> None:
    site.faults(allow_duplicate_workspace_names=True)
    there = new_workspace(site, "Shared", ALICE)
    here = new_workspace(site, "Shared")
    keep_report(site)
    site.api(lambda c: c.remove_from_workspace(ALICE, [there]))
    site.api(lambda c: c.add_to_workspace(ALICE, [here]))

    found = since(site)
    assert pairs(found["lost"]) == [(ALICE, there)]
    assert pairs(found["gained"]) == [(ALICE, here)]
    text = since_text(site)
    assert f'alice lost "Shared" (ID {there}, member)' in text
    assert f'alice gained "Shared" (ID {here}, member)' in text


def test_an_account_made_again_under_its_username_is_lost_by_the_old_and_gained_by_the_new(
    site: LoopbackSite,
) -> None:
    ops = new_workspace(site, "Ops", DAVE)
    keep_report(site)
    site.api(lambda c: c.user_delete(DAVE))
    again = site.api(lambda c: c.user_add(NewUser("dave", "dave@elsewhere.example", "Dave", "D")))
    site.api(lambda c: c.add_to_workspace(again, [ops]))

    for scope in ((), ("--user", "dave"), ("--workspace", "Ops")):
        found = since(site, *scope)
        assert [(e["user_id"], e["person"], e["email"]) for e in found["lost"]] == [
            (DAVE, "dave", "dave@acme.example")
        ], scope
        assert [(e["user_id"], e["person"], e["email"]) for e in found["gained"]] == [
            (again, "dave", "dave@elsewhere.example")
        ], scope
        assert found["changed"] == [], scope
    text = since_text(site)
    assert f'dave (ID {DAVE}, dave@acme.example) lost "Ops" (member)' in text
    assert f'dave (ID {again}, dave@elsewhere.example) gained "Ops" (member)' in text


def test_a_person_who_lost_everything_is_seen_through_their_own_user(site: LoopbackSite) -> None:
    ops = new_workspace(site, "Ops", ALICE)
    keep_report(site)
    site.api(lambda c: c.remove_from_workspace(ALICE, [ops]))

    found = since(site, "--user", "alice")
    assert pairs(found["lost"]) == [(ALICE, ops)]
    assert found["gained"] == [] and found["changed"] == []


def test_a_deleted_account_or_workspace_is_found_in_the_earlier_report(site: LoopbackSite) -> None:
    ops = new_workspace(site, "Ops", DAVE, ALICE)
    keep_report(site)
    site.api(lambda c: c.user_delete(DAVE))

    for reference in ("dave", "dave@acme.example", str(DAVE)):
        assert pairs(since(site, "--user", reference)["lost"]) == [(DAVE, ops)], reference

    site.api(lambda c: c.workspace_delete(ops))
    everyone = [(ADMIN, ops), (ALICE, ops), (DAVE, ops)]  # the administrator reached it too
    assert pairs(since(site, "--workspace", "Ops")["lost"]) == everyone
    nobody = site.run("access", "--user", "nobody", "--since", "q3.json")
    assert nobody.returncode == EXIT_ERROR
    assert 'Error: --user "nobody" names no user on the site' in nobody.stderr


@pytest.mark.parametrize("sandbox_profile", SANDBOX_PROFILES)
def test_a_deleted_account_is_not_asked_for_by_its_id(site: LoopbackSite) -> None:
    """A site may answer ``user_info`` of an unknown ID with a failure that does not say so
    (the published profile: "Please try again or contact customer support"): the read asks
    only for the accounts the site still lists."""
    ops = new_workspace(site, "Ops", DAVE)
    keep_report(site)
    site.api(lambda c: c.user_delete(DAVE))
    site.control("calls/reset", {})
    assert pairs(since(site, "--user", "dave")["lost"]) == [(DAVE, ops)]
    assert "user_info" not in site.control("calls")["methods"]


def test_a_renamed_account_is_the_same_account_with_a_new_name(site: LoopbackSite) -> None:
    ops = new_workspace(site, "Ops", DAVE)
    keep_report(site)
    site.control(f"users/{DAVE}", {"username": "dave2"})

    for scope in ((), ("--user", "dave"), ("--user", "dave2")):
        found = since(site, *scope)
        assert (found["gained"], found["lost"]) == ([], []), scope
        # (a --user report also reads the own permissions a whole-site one does not)
        assert [
            (s["user_id"], s["workspace_id"], s["before"], s["after"])
            for s in found["changed"]
            if s["field"] == "username"
        ] == [(DAVE, ops, "dave", "dave2")], scope
    text = since_text(site)
    assert 'dave2 in "Ops": username dave -> dave2' in text


def test_another_site_s_report_is_refused_before_any_call(site: LoopbackSite) -> None:
    data = keep_report(site)
    data["site"] = "https://other.example"
    (site.workdir / "other.json").write_text(json.dumps(data), encoding="utf-8")
    site.control("calls/reset", {})

    result = site.run("access", "--since", "other.json")
    assert result.returncode == EXIT_ERROR
    assert result.stderr.startswith("Error: other.json is a report of https://other.example, ")
    assert site.control("calls")["total"] == 0


def test_the_same_site_written_otherwise_is_the_same_site(site: LoopbackSite) -> None:
    data = keep_report(site)
    data["site"] = site.url.upper().replace("HTTPS", "https") + "/"
    assert data["site"] != site.url
    (site.workdir / "spelt.json").write_text(json.dumps(data), encoding="utf-8")
    found = since(site, previous="spelt.json")
    assert (found["gained"], found["lost"], found["changed"]) == ([], [], [])


def test_a_deeply_nested_or_oversized_file_is_one_error_before_any_call(
    site: LoopbackSite,
) -> None:
    deep = 100_000
    (site.workdir / "deep.json").write_text("[" * deep + "]" * deep, encoding="utf-8")
    with (site.workdir / "huge.json").open("wb") as huge:
        huge.truncate(MAX_PREVIOUS_BYTES + 1)  # sparse: nothing is written
    site.control("calls/reset", {})

    for name, says in (
        ("deep.json", f"deep.json is nested more than {MAX_PREVIOUS_DEPTH} levels deep"),
        ("huge.json", f"huge.json is larger than {MAX_PREVIOUS_BYTES // 2**20} MiB"),
    ):
        result = site.run("access", "--since", name)
        assert result.returncode == EXIT_ERROR, name
        assert result.stderr.startswith(f"Error: {says}"), result.stderr
        assert "Internal error" not in result.stderr
    assert site.control("calls")["total"] == 0
