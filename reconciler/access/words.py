"""How access reports write a value: one vocabulary for text, Markdown, CSV, HTML and
``--since`` (booleans as ``true``/``false``, as ``core.changes.value_text`` writes them)."""

from __future__ import annotations

import functools

from reconciler.access.model import Access, AccessChange


def counted(number: int, one: str, many: str) -> str:
    """``1 access``, ``3 accesses``; ``1 person``, ``2 people``."""
    return f"{number} {one if number == 1 else many}"


def known_text(value: bool | None) -> str:
    """``true``/``false`` as every report writes them; ``unknown`` where the site did not say."""
    if value is None:
        return "unknown"
    return "true" if value else "false"


@functools.lru_cache(maxsize=4096)
def flags_text(flags: frozenset[str] | None, origin: str) -> str:
    """A permission or notification set with where it comes from, in one vocabulary
    (remembered: a large site's report writes the same few sets thousands of times)."""
    if origin == "administrator":
        return "all (administrator)"
    if origin == "not a member":
        return "-"
    if origin == "unknown":
        return "unknown (the site did not report it)"
    where = "workspace override" if origin == "workspace" else "own"
    if flags is None:
        return f"{where} (not read)"
    return f"{', '.join(sorted(flags)) or 'none'} ({where})"


def terms(entry: Access) -> dict[str, str]:
    """The compared terms of an access, in the reports' words."""
    return {
        "via": entry.via,
        "permissions": flags_text(entry.permissions, entry.permissions_from),
        "notifications": flags_text(entry.notifications, entry.notifications_from),
        "active": known_text(entry.active),
        **{name: known_text(value) for name, value in entry.access_settings().items()},
    }


def manifest_text(entry: Access) -> str:
    """Whether the manifest declares an access, with its end: ``declared`` (a standing
    grant), ``declared until 2026-12-31`` (time-boxed), ``expired 2026-12-31``; ``-``: no
    manifest given."""
    if entry.manifest is None:
        return "-"
    if entry.expires is None:
        return entry.manifest
    if entry.manifest == "expired":
        return f"expired {entry.expires.isoformat()}"
    return f"{entry.manifest} until {entry.expires.isoformat()}"


def place(change: AccessChange) -> str:
    """The workspace of a plan's access change as reports name it: its name, its ID where it
    exists before the apply (two workspaces may share a name; a replacement's old and new do),
    and the site's spelling where the manifest's differs."""
    if change.workspace is None:
        return "every workspace"
    if change.workspace_id is None:
        return f'"{change.workspace}"'
    spelled = f', on the site "{change.site_name}"' if change.site_name is not None else ""
    return f'"{change.workspace}" (id {change.workspace_id}{spelled})'


DRIFT_REASONS = {
    "workspace created": "the workspace is missing on the site",
    "workspace deleted": "the workspace left the manifest",
    "workspace replaced": "the workspace's settings differ",
    "override changed": "the workspace's settings differ",
    "user deleted": "the user left the manifest",
    "administrator created": "the user is missing on the site",
}
"""Why, in drift's words; an expiry says its date (``cause_text``)."""


def cause_text(change: AccessChange) -> str:
    """Why a plan changes an access, as every report says it: ``expired 2026-12-31``."""
    if change.cause == "expired" and change.expires is not None:
        return f"expired {change.expires.isoformat()}"
    return change.cause


def _drift_reason(change: AccessChange) -> str:
    if change.cause == "expired" and change.expires is not None:
        return f"its entry in the manifest expired on {change.expires.isoformat()}"
    return DRIFT_REASONS[change.cause]


def drift_sentence(change: AccessChange) -> str:
    """What a plan's access change says read the other way round, as drift: the site now
    against the manifest ("carol can reach "Finance" on the site; the manifest does not say
    so")."""
    plain = change.cause in ("member added", "member removed")
    why = "" if plain else f" ({_drift_reason(change)})"
    who, where = change.person, place(change)
    if change.what == "access":
        role = " as an administrator" if change.via == "administrator" else ""
        if change.effect == "loses":
            return f"{who} can reach {where}{role} on the site; the manifest does not say so{why}"
        return f"{who} cannot reach {where}{role} on the site; the manifest says they can{why}"
    if change.effect == "changes":
        return f"{who}'s {change.what} in {where} differ from the manifest's: {change.detail}"
    held = "lacks" if change.effect == "gains" else "has"
    return f"{who} {held} {change.what} in {where} on the site; the manifest says otherwise"
