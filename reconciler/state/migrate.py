"""Copying a site's records between backends (``state push`` / ``state pull``).

The usual move is from a runner's ``.reconciler/`` directory to a shared PostgreSQL database,
once, when a team starts applying from CI. The copy takes both sites' locks, so no apply runs
on either side meanwhile, and refuses to overwrite records newer than the ones it copies
(a newer save, or a higher version number) unless forced: that is the one way this command
could lose an apply's records.

Records of the previous directory layout (one ``state.json`` per host) have no history: they
are copied as version 1.
"""

from __future__ import annotations

from typing import Any

from reconciler.errors import RefusedForSafety, StateError
from reconciler.state.backend import Holder, SiteRecords, VersionInfo
from reconciler.state.documents import parse_stamp, utc_stamp


def _versions_of(source: SiteRecords) -> list[tuple[VersionInfo, dict[str, Any]]]:
    """Every version of ``source`` with its records, oldest first."""
    versions = []
    for info in source.history():
        snapshot = source.load_version(info.version)
        if snapshot.data is not None:
            versions.append((info, snapshot.data))
    if versions:
        return versions
    legacy = source.load()  # the previous layout: records without history
    if legacy.data is None:
        raise StateError(
            f"There are no records of {source.site} in {source.location} to copy.",
            hint="Check the source location and the site URL.",
        )
    info = VersionInfo(1, utc_stamp(), "site-reconciler", "copied from the previous layout")
    return [(info, legacy.data)]


def _newer(target: VersionInfo, source: VersionInfo) -> bool:
    return (
        parse_stamp(target.saved_at) > parse_stamp(source.saved_at)
        or target.version > source.version
    )


def copy_site(source: SiteRecords, target: SiteRecords, *, holder: Holder, force: bool) -> str:
    """Copy every version and the plan key of a site from ``source`` to ``target``.

    Returns one line saying what was copied. ``RefusedForSafety`` when ``target`` holds newer
    records than ``source`` and ``force`` is not given.
    """
    if source.site != target.site:
        raise StateError(
            f"Cannot copy the records of {source.site} into those of {target.site}.",
            hint="Copy records between two locations of the same site.",
        )
    if (source.kind, source.location) == (target.kind, target.location):
        raise StateError(
            f"The source and the target are the same place: {source.location}.",
            hint="Name two different state locations.",
        )
    with source.lock(holder), target.lock(holder) as target_lease:
        versions = _versions_of(source)
        newest = versions[-1][0]
        existing = target.history()
        if existing and _newer(existing[-1], newest) and not force:
            theirs = existing[-1]
            raise RefusedForSafety(
                f"{target.location} holds newer records of {target.site} (version "
                f"{theirs.version}, saved {theirs.saved_at} by {theirs.saved_by}) than "
                f"{source.location} (version {newest.version}, saved {newest.saved_at}): "
                "copying would lose them.",
                hint="Copy the other way, or give --force if those records are to be discarded.",
            )
        target.import_site(versions, source.plan_key(), lease=target_lease)
    return (
        f"Copied {len(versions)} version{'s' if len(versions) != 1 else ''} of the records of "
        f"{source.site} (newest: version {newest.version}, saved {newest.saved_at}) and its "
        f"plan key from {source.location} to {target.location}."
    )
