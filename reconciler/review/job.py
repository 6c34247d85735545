"""The review commands that read the site, end to end, for the CLI to render and write.

``start_review`` reads the whole site as ``reconciler access`` does (no more calls than a
plan) and freezes the population (``population.py``). ``close_review`` reads it again after
the revocations were applied and says, for each, whether it left the site and which apply
removed it (``close.py``). Neither writes anything to the site or the records.
"""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.access.job import access_report, assemble, read_time
from reconciler.access.model import ReportScope
from reconciler.access.read import read_site
from reconciler.api.config import check_site_url
from reconciler.engine.read.observe import OpenSite
from reconciler.engine.records import ledger
from reconciler.errors import ConfigError
from reconciler.model import DesiredSite
from reconciler.ownership.owners import owners_of_workspace
from reconciler.review.close import Closing, closing
from reconciler.review.files import BadReview
from reconciler.review.model import Review
from reconciler.review.population import population
from reconciler.review.reviewers import NO_OWNERS, Owners


@dataclass(frozen=True, slots=True)
class ManifestOwners:
    """The owners the manifest's ``ownership:`` gives each workspace (``ownership/owners.py``):
    a review assigns them as the workspace's reviewers, before ``policy.reviewers``."""

    desired: DesiredSite

    def of_workspace(self, workspace: str) -> tuple[str, ...]:
        return owners_of_workspace(self.desired, workspace)


async def start_review(
    site: OpenSite, desired: DesiredSite | None, owners: Owners | None = None
) -> Review:
    """The population of a review of the site now: every access, sealed, nothing decided
    (the whole-site read of ``access_report``, whose users also resolve the reviewers). The
    reviewers are each workspace's owners (``owners``, by default the manifest's), else
    ``policy.reviewers``."""
    if owners is None:
        owners = ManifestOwners(desired) if desired is not None else NO_OWNERS
    records = ledger.read(site.store).records
    scope = ReportScope.whole()
    read = await read_site(site.client, scope, site.progress)
    report = assemble(site.store.site, read_time(), scope, read, records, desired)
    policy = desired.policy if desired is not None else None
    return population(report, policy, read.users, owners)


async def close_review(site: OpenSite, review: Review, desired: DesiredSite | None) -> Closing:
    """What became of each decision of ``review`` (a review of this site: refused before
    any call otherwise), from the site now and the records' history of applies."""
    _check_same_site(review, site.store.site)
    report = await access_report(site, ReportScope.whole(), desired)
    return closing(review, report, site.store)


def _check_same_site(review: Review, site: str) -> None:
    """Refuse a review of another site before the site is read: a wrong file costs no call."""
    try:
        theirs: str | None = check_site_url(review.header.site)
    except ConfigError:
        theirs = None
    if theirs != check_site_url(site):
        raise BadReview(
            f"{review.origin} is a review of {review.header.site!r:.200}, not of {site}.",
            hint="Close a review on the site it was started on.",
        )
