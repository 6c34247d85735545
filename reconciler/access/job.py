"""``reconciler access``: the job end to end -- read, judge, compare -- for the CLI to render.

Reads the records (the workspace settings the tool knows; never written), reads the
site as the report's scope needs (``read.py``), works out effective access (``effective.py``)
and the findings (``findings.py``), and compares with an earlier report (``since.py``).
Nothing is written anywhere: the CLI renders and writes the report.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import date

from reconciler import __version__, clock
from reconciler.access.effective import DeclaredAccess, effective_access
from reconciler.access.findings import access_findings, usual_domains
from reconciler.access.model import (
    ACCESS_FORMAT,
    ACCESS_FORMAT_VERSION,
    Access,
    AccessReport,
    ReportScope,
    WorkspaceFacts,
)
from reconciler.access.read import SiteRead, read_site
from reconciler.access.since import Covered, check_comparable, compare, earlier_scope
from reconciler.access.words import counted
from reconciler.core.records import Records
from reconciler.engine.read.live import LiveReader
from reconciler.engine.read.observe import OpenSite
from reconciler.engine.records import ledger
from reconciler.model import DesiredSite
from reconciler.ownership.owners import owners_of_workspace


async def access_report(
    site: OpenSite,
    scope: ReportScope,
    desired: DesiredSite | None = None,
    previous: tuple[AccessReport, str] | None = None,
    at: date | None = None,
) -> AccessReport:
    """Effective access on the site now, judged against ``desired`` when given -- as it
    wants the site on ``at`` (``--at``; else today, by the clock): its expiries --, compared
    with ``previous`` (an earlier report and where it was read from) when given: refused
    before the first call when it is another site's or another scope's."""
    earlier = None
    if previous is not None:
        check_comparable(previous[0], site.store.site, scope, previous[1])  # before any call
        earlier = earlier_scope(previous[0], scope)
    reader = LiveReader(site.client, site.progress)
    if scope.whole_site:
        reader.head_start()  # the site's lists travel while the records are read
    try:
        records = (await ledger.read_meanwhile(site.store)).records
        read = await read_site(site.client, scope, site.progress, earlier, reader)
    finally:
        await reader.drop_head_start()
    read_at = read_time()
    day = at or clock.today()
    report = assemble(site.store.site, read_at, scope, read, records, desired, day)
    if previous is not None:
        before, origin = previous
        report = replace(report, since=compare(before, report, origin, _covered(read, scope)))
    return report


def read_time() -> str:
    """When a report's read ended, as reports write it (UTC, to the second)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _covered(read: SiteRead, scope: ReportScope) -> Covered:
    """What the scope means on the site now, by ID: the people ``--user`` resolved to (with
    access or none left) and the workspaces ``--workspace`` chose."""
    return Covered(
        read.people if scope.users else None,
        frozenset(ws.id for ws in read.workspaces) if scope.workspaces else None,
    )


def assemble(
    site: str,
    read_at: str,
    scope: ReportScope,
    read: SiteRead,
    records: Records,
    desired: DesiredSite | None,
    day: date | None = None,
) -> AccessReport:
    """The report of one read: a pure function (the golden files are made with it). The
    manifest's expiries are judged on ``day``, else on the day of the read (UTC)."""
    judged = day or date.fromisoformat(read_at[:10])
    declared = DeclaredAccess.of(desired, read.users, judged) if desired is not None else None
    found = effective_access(read, records, declared)
    usual = usual_domains(read.emails)
    return AccessReport(
        format=ACCESS_FORMAT,
        format_version=ACCESS_FORMAT_VERSION,
        site=site,
        read_at=read_at,
        tool_version=__version__,
        scope=scope,
        manifest=desired.files if desired is not None else None,
        usual_domains=usual,
        findings=access_findings(found.people, found.entries, usual),
        workspaces=_with_owners(found.workspaces, desired),
        people=found.people,
        entries=found.entries,
        notes=(*read.notes, *_own_not_read(found.entries)),
    )


def _with_owners(
    workspaces: tuple[WorkspaceFacts, ...], desired: DesiredSite | None
) -> tuple[WorkspaceFacts, ...]:
    """Each workspace with who answers for it, where the manifest declares ``ownership:``."""
    if desired is None or desired.ownership is None:
        return workspaces
    return tuple(replace(ws, owners=owners_of_workspace(desired, ws.name)) for ws in workspaces)


def _own_not_read(entries: tuple[Access, ...]) -> list[str]:
    unread = sum(1 for e in entries if e.permissions_from == "user" and e.permissions is None)
    if not unread:
        return []
    return [
        f"The person's own permissions apply to {counted(unread, 'access', 'accesses')} (the "
        "workspace has no permission override). A whole-site report does not read them: that "
        "is one user_info call a person, more than a plan reads. --user or --workspace reads "
        "them."
    ]
