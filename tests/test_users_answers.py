"""A ``user_add`` answer is asked about before it is believed, end to end.

The real ``reconciler`` command talks to the sandbox through a real HTTP relay that passes
every call on and then answers ``user_add`` with an ID of its choosing: one nobody has, or one
a user deleted earlier had. The static checks (range, someone's before the write, recorded
under another name) cannot see these; the site, asked who the ID is, can.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.errors import EXIT_OK
from tests.support.hostile_server import Reply, Request, hostile_server
from tests.support.loopback import EXAMPLE_SEED, EXAMPLE_SITE, LoopbackSite, serving_in_thread

DAVE = {"username": "dave", "email": "dave@acme.example", "first_name": "Dave"}
DAVE_ID = 1004


Edit = Callable[[Request, httpx.Response], Reply | None]


def _as_sent(request: Request, answer: httpx.Response) -> Reply | None:
    return None


@dataclass
class Site:
    """The sandbox behind a real HTTP relay: ``edit`` sees each request and the sandbox's
    answer, and may act on the site or answer otherwise (``None``: the answer as it came)."""

    loopback: LoopbackSite
    db: Path
    sandbox_url: str
    edit: Edit = _as_sent

    def respond(self, request: Request) -> Reply:
        skip = {"content-length", "connection", "accept-encoding", "transfer-encoding"}
        headers = {k: v for k, v in request.headers.items() if k.lower() not in skip}
        answer = httpx.request(
            request.verb, self.sandbox_url + request.target, content=request.body, headers=headers
        )
        replaced = self.edit(request, answer)
        if replaced is not None:
            return replaced
        kind = answer.headers.get("content-type", "application/json")
        return Reply(answer.status_code, [answer.content], {"Content-Type": kind})

    def rename_user(self, user_id: int, username: str) -> None:
        """A rename made in the web app: the site's own data, not the API."""
        with sqlite3.connect(self.db) as conn:
            conn.execute("UPDATE users SET username = ? WHERE id = ?", (username, user_id))
        conn.close()

    def users(self) -> dict[int, str]:
        return {u["id"]: u["username"] for u in self.loopback.state()["users"]}

    def run(self, *args: str) -> Any:
        return self.loopback.run(*args)

    def write(self, users: list[dict[str, Any]], **policy: Any) -> None:
        manifest = {"version": 1, "users": users, "policy": {"prune": False, **policy}}
        self.loopback.write_manifest("people.yaml", manifest)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    db = tmp_path / "sandbox.db"
    log = tmp_path / "sandbox-server.log"
    with serving_in_thread(EXAMPLE_SEED, None, log_path=log, db_path=db) as url:
        placeholder = LoopbackSite(url, tmp_path)
        relay = Site(placeholder, db, url)
        with hostile_server(lambda request: relay.respond(request)) as server:
            relay.loopback = LoopbackSite(server.url, tmp_path)
            relay.loopback.control = placeholder.control  # type: ignore[method-assign]
            yield relay


NINA = {"username": "nina", "email": "nina@acme.example", "first_name": "Nina", "last_name": "N"}


def onboarding(*users: dict[str, Any], **policy: Any) -> dict[str, Any]:
    names = [user["username"] for user in users]
    return {
        "version": 1,
        "users": list(users),
        "groups": [{"name": "onboarding", "members": names}],
        "workspaces": [{"name": "Onboarding", "users": names}],
        "policy": {"prune": False, **policy},
    }


def answering_user_add_with(user_id: int) -> Edit:
    def lie(request: Request, answer: httpx.Response) -> Reply | None:
        if request.method != "user_add":
            return None
        body = json.dumps({"userAdd": {"userId": user_id}}).encode()
        return Reply(200, [body], {"Content-Type": "application/json"})

    return lie


def records_of(site: Site) -> dict[str, Any]:
    shown = site.run("state", "show")
    assert shown.returncode == EXIT_OK, shown.stderr
    return dict(json.loads(shown.stdout))


def assert_nina_joined_as_herself(site: Site, wrong: int) -> None:
    on_site = [u for u in site.loopback.state()["users"] if u["username"] == "nina"]
    assert len(on_site) == 1  # created once
    nina = on_site[0]["id"]
    assert nina != wrong
    assert records_of(site)["users"]["nina"]["id"] == nina
    assert site.loopback.groups()["onboarding"]["members"] == [nina]
    assert site.loopback.workspaces()["Onboarding"]["members"] == [nina]
    site.edit = _as_sent
    again = site.run("plan", "people.yaml", "--detailed-exitcode")
    assert again.returncode == EXIT_OK, again.stdout


@pytest.mark.parametrize("answered", [5555, 10**9], ids=["nobody's ID", "a large ID"])
def test_a_user_add_answer_naming_an_id_nobody_has_is_not_believed(
    site: Site, answered: int
) -> None:
    site.loopback.write_manifest("people.yaml", onboarding(NINA))
    site.edit = answering_user_add_with(answered)
    applied = site.run("apply", "people.yaml", "--auto-approve")
    output = applied.stdout + applied.stderr
    assert applied.returncode == EXIT_OK, output
    assert f"user_add answered the ID {answered}, which the site does not know" in output
    assert_nina_joined_as_herself(site, answered)


@pytest.mark.slow
def test_a_user_add_answer_naming_a_deleted_users_id_is_not_believed(site: Site) -> None:
    """The ID of a user this tool deleted earlier: on no list, in no record, yet not hers."""
    pia = {"username": "pia", "email": "pia@acme.example", "first_name": "Pia", "last_name": "P"}
    site.loopback.write_manifest("people.yaml", onboarding(pia))
    assert site.run("apply", "people.yaml", "--auto-approve").returncode == EXIT_OK
    pia_id = next(u["id"] for u in site.loopback.state()["users"] if u["username"] == "pia")
    retire = onboarding(prune_users=True, min_admins=0, max_user_removal_fraction=1.0)
    site.loopback.write_manifest("people.yaml", retire)
    retired = site.run("apply", "people.yaml", "--auto-approve")
    assert retired.returncode == EXIT_OK, retired.stdout + retired.stderr
    assert pia_id not in {u["id"] for u in site.loopback.state()["users"]}

    site.loopback.write_manifest("people.yaml", onboarding(NINA))
    site.edit = answering_user_add_with(pia_id)
    applied = site.run("apply", "people.yaml", "--auto-approve")
    assert applied.returncode == EXIT_OK, applied.stdout + applied.stderr
    assert_nina_joined_as_herself(site, pia_id)


def test_a_user_delete_answer_naming_another_user_is_said(site: Site) -> None:
    """The site deleted dave but answered for carol: the records follow the site's list (dave
    gone, carol untouched) and the apply says what the answer claimed."""
    dave = {"username": "dave", "email": "dave@acme.example"}
    site.loopback.write_manifest("people.yaml", {"version": 1, "users": [dave]})
    assert site.run("adopt", "people.yaml").returncode == EXIT_OK
    retire = {"version": 1, "users": [], "policy": {"prune_users": True, "min_admins": 0}}
    site.loopback.write_manifest("people.yaml", retire)

    def for_carol(request: Request, answer: httpx.Response) -> Reply | None:
        if request.method != "user_delete":
            return None
        body = json.dumps({"userDelete": {"userId": 1003}}).encode()
        return Reply(200, [body], {"Content-Type": "application/json"})

    site.edit = for_carol
    applied = site.run("apply", "people.yaml", "--auto-approve")
    assert applied.returncode == EXIT_OK, applied.stdout + applied.stderr
    assert "user_delete answered for user #1003, not #1004" in applied.stderr
    on_site = {u["username"] for u in site.loopback.state()["users"]}
    assert "dave" not in on_site and "carol" in on_site
    assert "dave" not in records_of(site)["users"]
