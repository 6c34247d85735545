"""The golden access report (``tests/golden/access-site.yaml``): the site, the records and an
earlier signed-off report, assembled as ``reconciler access`` assembles them. Shared by the
golden-file tests of its renderings and the tests of ``--since``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import yaml

from reconciler.access.job import assemble
from reconciler.access.model import AccessReport, ReportScope, SignOff
from reconciler.access.read import OwnSettings, SiteRead
from reconciler.access.since import compare
from tests.support.golden import GOLDEN
from tests.support.models import desired_site, live_site, site_state

SITE = "https://acme.example.net"


def _previous(report: AccessReport, data: dict[str, Any]) -> AccessReport:
    """The earlier report: the golden one as it stood then, signed off."""
    dropped = {tuple(pair) for pair in data["dropped"]}
    entries = [e for e in report.entries if (e.person, e.workspace) not in dropped]
    for person, workspace in data["added"]:
        like = next(e for e in report.entries if e.workspace == workspace)
        entries.append(replace(like, person=person, user_id=0, email=f"{person}@acme.example"))
    changed = {tuple(key.split(" ", 1)): fields for key, fields in data["changed"].items()}
    entries = [replace(e, **changed.get((e.person, e.workspace), {})) for e in entries]
    return replace(
        report,
        read_at=data["read_at"],
        sign_off=SignOff(**data["sign_off"]),
        entries=tuple(entries),
    )


def golden_report() -> AccessReport:
    """The report of ``tests/golden/access-site.yaml``, compared with the earlier one there."""
    data = yaml.safe_load((GOLDEN / "access-site.yaml").read_text(encoding="utf-8"))
    live = live_site(data["live"])
    own = {
        int(user_id): OwnSettings(frozenset(o["permissions"]), frozenset(o["notifications"]))
        for user_id, o in data["own"].items()
    }
    read = SiteRead(live.users, live.workspaces, own, None, tuple(u.email for u in live.users))
    desired = replace(desired_site(data["desired"]), files=("site.yaml",))
    report = assemble(
        SITE, "2026-11-21T09:00:00Z", ReportScope.whole(), read, site_state(data["state"]), desired
    )
    report = replace(report, tool_version="test")
    earlier = _previous(report, data["previous"])
    return replace(report, since=compare(earlier, report, "2026-q3.json"))
