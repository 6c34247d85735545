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
from reconciler.state.backend import Holder, Lease, RecordStore, SaveInfo, VersionInfo
from reconciler.state.documents import parse_stamp, utc_stamp


def _versions_of(source: RecordStore) -> list[tuple[VersionInfo, dict[str, Any]]]:
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


def copy_site(source: RecordStore, target: RecordStore, *, holder: Holder, force: bool) -> str:
    """Copy every version and the plan key of a site from ``source`` to ``target`` (the key
    only where no reader of the records could read it there).

    Returns what was copied, in a line (and why the key was not, in another).
    ``RefusedForSafety`` when ``target`` holds newer records than ``source`` and ``force`` is
    not given.
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
    with source.lock(holder) as source_lease, target.lock(holder) as target_lease:
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
        key = source.plan_key()
        assert key is not None  # created on first use
        key_left = target.import_site(versions, key, lease=target_lease)
        _mark_moved(source, versions[-1], target.location, holder, source_lease)
    copied = (
        f"Copied {len(versions)} version{'s' if len(versions) != 1 else ''} of the records of "
        f"{source.site} (newest: version {newest.version}, saved {newest.saved_at})"
        f"{'' if key_left else ' and its plan key'} from {source.location} to "
        f"{target.location}. {source.location} is marked as moved: commands that still use it "
        "say so."
    )
    if key_left:
        copied += f"\nThe plan key was not copied. {key_left}"
    return copied + _discarded(existing, target.location)


def _mark_moved(
    source: RecordStore,
    newest: tuple[VersionInfo, dict[str, Any]],
    location: str,
    holder: Holder,
    lease: Lease,
) -> None:
    """A last version at the source saying where the records went: a runner still pointed at
    it is told, instead of silently planning against records nobody updates any more."""
    _, data = newest
    moved = {**data, "moved_to": {"location": location, "at": utc_stamp()}}
    summary = f"records migrated to {location}"
    source.save(
        moved,
        expected_version=source.load().version,
        info=SaveInfo(holder.describe(), summary),
        lease=lease,
    )


def _discarded(existing: list[VersionInfo], location: str, shown: int = 10) -> str:
    """The versions at the destination that the copy replaced, said one by one (--force)."""
    if not existing:
        return ""
    lines = [
        f"  version {v.version}, saved {v.saved_at} by {v.saved_by}: {v.summary}"
        for v in existing[-shown:]
    ]
    more = len(existing) - len(lines)
    head = f"\nDiscarded the {len(existing)} version(s) {location} held before:"
    tail = [f"  … and {more} older version(s)"] if more else []
    return "\n".join([head, *lines, *tail])
