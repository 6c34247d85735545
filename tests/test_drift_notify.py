"""``drift --notify URL`` and ``drift --since-last`` (issue 23, item 6), end to end: the real
``reconciler`` command against the sandbox on loopback, and a real HTTP receiver on loopback
standing in for a Slack-compatible webhook.

Only what is new since the last report is sent (the records keep it); a webhook that fails is
one clear message after the full report, and its items are sent again next time; the URL's
credentials, path and query never appear in any output or file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reconciler.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_OK
from tests.support.loopback import LoopbackSite
from tests.support.webhook import Receiver, receiver

__all__ = ["receiver"]  # the fixture

SECRETS = ("hook-pass", "T0SECRETPATH", "QUERYSECRET")


def no_secret_anywhere(site: LoopbackSite) -> None:
    texts = list(site.transcript)
    texts += [p.read_text(errors="replace") for p in site.workdir.rglob("*") if p.is_file()]
    for secret in SECRETS:
        assert not any(secret in text for text in texts), secret


def test_only_what_is_new_since_the_last_report_is_sent(
    site: LoopbackSite, receiver: Receiver
) -> None:
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK

    first = site.run("drift", "site.yaml", "--notify", receiver.url, "-v")
    assert first.returncode == EXIT_OK, first.stderr
    [body] = receiver.take()  # the first report: what is there (objects made by hand)
    assert body["in_sync"] is True and body["last_report"] is None
    assert sorted(item["kind"] for item in body["new"]["unmanaged"]) == ["group", "workspace"]
    assert body["text"].startswith("*site-reconciler drift on ")

    quiet = site.run("drift", "site.yaml", "--notify", receiver.url)
    assert quiet.returncode == EXIT_OK and receiver.take() == []  # nothing new, nothing sent

    finance = site.workspaces()["Finance"]["id"]
    site.api(lambda client: client.add_to_workspace(1011, [finance]))  # mallory, by hand
    drifted = site.run("drift", "site.yaml", "--notify", receiver.url, "--format", "json")
    assert drifted.returncode == EXIT_CHANGES, drifted.stderr
    assert json.loads(drifted.stdout)["changed"]  # stdout: the full report, as always
    [body] = receiver.take()
    assert body["in_sync"] is False and body["last_report"]
    assert [item["name"] for item in body["new"]["changed"]] == ["Finance"]
    assert sum(len(items) for items in body["new"].values()) == 1
    assert 'workspace "Finance"' in body["text"] and "1 new since the last report" in body["text"]

    again = site.run("drift", "site.yaml", "--notify", receiver.url)
    assert again.returncode == EXIT_CHANGES and receiver.take() == []  # already told

    site.api(lambda client: client.remove_from_workspace(1011, [finance]))
    fixed = site.run("drift", "site.yaml", "--notify", receiver.url)
    assert fixed.returncode == EXIT_OK
    [body] = receiver.take()
    assert body["resolved"] == 1 and body["in_sync"] is True
    assert "in sync" in body["text"]
    no_secret_anywhere(site)


def test_since_last_lists_only_the_new_items(site: LoopbackSite) -> None:
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    assert site.run("drift", "site.yaml", "--since-last").returncode == EXIT_OK
    finance = site.workspaces()["Finance"]["id"]
    site.api(lambda client: client.add_to_workspace(1011, [finance]))
    new = site.run("drift", "site.yaml", "--since-last", "--no-color")
    assert new.returncode == EXIT_CHANGES, new.stderr
    assert 'workspace "Finance"' in new.stdout
    assert "Legacy Scans" not in new.stdout and "Unmanaged" not in new.stdout  # not new
    assert "1 new, 2 still there (not listed), 0 resolved" in new.stdout
    same = site.run("drift", "site.yaml", "--since-last", "--no-color")
    assert same.returncode == EXIT_CHANGES  # still drifted: the exit code says so
    assert 'workspace "Finance"' not in same.stdout
    assert "Drift: nothing new; the site still differs from the manifest." in same.stdout
    full = site.run("drift", "site.yaml", "--no-color")
    assert 'workspace "Finance"' in full.stdout  # plain drift lists everything, as before


def test_a_failing_webhook_is_one_message_and_loses_nothing(
    site: LoopbackSite, receiver: Receiver
) -> None:
    receiver.status = 500
    failed = site.run("drift", "site.yaml", "--notify", receiver.url)
    assert failed.returncode == EXIT_ERROR
    assert "Missing (declared, not on the site)" in failed.stdout  # the full report, printed
    assert "Drift: 14 missing." in failed.stdout
    errors = [line for line in failed.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [
        f"Error: The drift notification to http://127.0.0.1:{receiver.port} (the rest of its "
        "URL hidden) failed: it answered HTTP 500."
    ]
    assert "sends its new items again" in failed.stderr
    assert len(receiver.take()) == 1

    gone = receiver.url.replace(str(receiver.port), str(_closed_port()))
    unreachable = site.run("drift", "site.yaml", "--notify", gone)
    assert unreachable.returncode == EXIT_ERROR
    assert "failed: could not reach it" in unreachable.stderr

    receiver.status = 200
    retried = site.run("drift", "site.yaml", "--notify", receiver.url)
    assert retried.returncode == EXIT_CHANGES
    [body] = receiver.take()  # the same items again: the failed report was not kept
    assert len(body["new"]["missing"]) == 14 and body["last_report"] is None
    no_secret_anywhere(site)


def test_a_webhook_url_that_would_leak_is_refused_before_anything_is_read(
    site: LoopbackSite,
) -> None:
    refused = site.run("drift", "site.yaml", "--notify", "http://hooks.example.com/T0SECRETPATH")
    assert refused.returncode == EXIT_ERROR
    assert "Refusing plain http:// for the webhook at hooks.example.com" in refused.stderr
    assert refused.stdout == ""
    no_secret_anywhere(site)


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_records_keep_only_digests_of_the_last_report(
    site: LoopbackSite, receiver: Receiver
) -> None:
    site.run("drift", "site.yaml", "--notify", receiver.url)
    shown = site.run("state", "show", "site.yaml")
    last = json.loads(shown.stdout)["last_drift"]
    assert len(last["items"]) == 16 and all(len(key) == 16 for key in last["items"])
    assert "Finance" not in json.dumps(last)
    assert Path(site.workdir / ".reconciler").exists()


def _report(**items: list[Any]) -> Any:
    from reconciler.engine.drift import CATEGORIES, DriftReport

    listed = {category: tuple(items.get(category, [])) for category in CATEGORIES}
    in_sync = not any(items.get(c) for c in CATEGORIES[:4])
    return DriftReport("https://acme.example.net", "T1", in_sync=in_sync, **listed)  # type: ignore[arg-type]


def _members(kind: str, name: str, detail: str, *extra: str) -> Any:
    from reconciler.core.changes import MEMBERS, FieldChange
    from reconciler.engine.drift import DriftItem

    leaving = FieldChange(MEMBERS[kind], before=extra, after=(), basis="recorded")  # type: ignore[index]
    return DriftItem(kind, name, detail, (leaving,), "update")


def test_an_item_whose_detail_changes_is_news_again_and_a_gone_one_is_resolved() -> None:
    from reconciler.engine.drift_news import drift_news

    legal = _members("workspace", "Legal", "extra members: mallory", "mallory")
    finance = _members("workspace", "Finance", "extra members: eve", "eve")
    first = drift_news(_report(changed=[legal, finance]), None)
    assert first.count == 2 and first.since is None and first.changed
    worse = _members("workspace", "Legal", "extra members: eve, mallory", "eve", "mallory")
    second = drift_news(_report(changed=[worse]), first.seen)
    assert second.new == {"changed": [worse]}  # Legal changed again: news
    assert second.resolved == 2  # the old Legal line and Finance are gone
    third = drift_news(_report(changed=[worse]), second.seen)
    assert third.count == 0 and third.resolved == 0 and not third.changed
    from reconciler.engine.drift import DriftItem

    unobservable = DriftItem("", "", "root_access: not reported")
    assert drift_news(_report(unobservable=[unobservable]), third.seen).count == 0
