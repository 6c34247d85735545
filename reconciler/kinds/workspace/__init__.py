"""The workspace kind: its one spec, and everything that reads or compares its settings.

``WorkspaceSpec`` holds a workspace's settings as the manifest declares them. The desired
workspace (``model.DesiredWorkspace``), ``workspace_add`` (``WorkspaceAdd``, the API's
``WorkspaceSettings``) and the records (``RecordedSettings``: each setting known or unknown)
all hold it or its fields. What the site reports of them, how they are compared, adopted,
exported and fingerprinted for rename detection is written here once. Every setting needs a
replacement to change: the API has no method that changes a workspace in place.

A new setting is a field of ``WorkspaceSpec`` and of ``RecordedSettings`` (and of
``model.DesiredWorkspace``, whose fields stay flat for the saved plans' snapshot), a line in
``from_manifest``, its parameter in ``api/methods.py``, the schema and the sandbox.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from reconciler.kinds.change import (
    FieldChange,
    Known,
    Origin,
    field_names,
    fold,
    spread,
    values,
)
from reconciler.spec import with_implied_flags

Overrides = frozenset[str] | None
"""Flags switched on by a workspace override; ``None`` means the override is off."""

KIND = "workspace"


def name_key(name: str) -> str:
    """The identity of a workspace name: how names of workspaces are compared wherever they
    are (``reconciler.identity`` holds the tables that use it)."""
    return fold(name)


@dataclass(frozen=True, slots=True)
class WorkspaceSpec:
    """A workspace's settings, shared by every workspace one ``workspace_add`` creates."""

    root_access: bool = True
    permissions: Overrides = None
    notifications: Overrides = None


MEMBERS = "users"
"""The field that says who belongs to a workspace: a plan's change of it lists who joins and
who leaves (``core/changes.py``)."""

MEMBERS_AT = 1
"""Where a workspace's users are written among its settings (plans and the API list them
after the first setting)."""

OVERRIDES = ("permissions", "notifications")
"""The settings that are overrides (a set of flags, or off): the site reports their flags."""

REQUIRES_REPLACEMENT = frozenset(field_names(WorkspaceSpec))
"""The settings a workspace is replaced (deleted and created again) to change: all of them."""


@dataclass(frozen=True, slots=True)
class RecordedSettings:
    """A workspace's settings as the tool knows them: each ``Known``, or ``None`` (unknown)
    where the tool neither created the workspace nor could read the setting."""

    root_access: Known[bool] | None = None
    permissions: Known[Overrides] | None = None
    notifications: Known[Overrides] | None = None

    @classmethod
    def of(cls, spec: WorkspaceSpec) -> RecordedSettings:
        """Every setting known: the tool created the workspace so."""
        return cls(**{name: Known(value) for name, value in values(spec).items()})

    def known(self, name: str) -> Known[Any] | None:
        known: Known[Any] | None = getattr(self, name)
        return known


SETTINGS = field_names(WorkspaceSpec)
if field_names(RecordedSettings) != SETTINGS:  # each setting is declared and recorded alike
    raise TypeError("RecordedSettings must have the fields of WorkspaceSpec, in its order")
PLAIN = tuple(name for name in SETTINGS if name not in OVERRIDES)
"""The settings that are not overrides: the site never reports them, only records know them."""
COMPARED = (*OVERRIDES, *PLAIN)
"""The order settings are compared and reported in: the overrides the site shows first."""
SETTINGS_OF_FORMAT_2 = ("root_access", "permissions", "notifications")
"""The settings records of formats 1 and 2 held (``engine/records/formats.py`` reads them):
fixed, as those formats are; a setting added since was never in them."""


@spread(RecordedSettings, "settings")
@dataclass(frozen=True, slots=True)
class RecordedWorkspace:
    """A workspace the tool created, adopted or changed the members of.

    ``managed`` objects (created or adopted) may be pruned once they leave the manifest.
    ``source`` is the manifest file that declared it when it was last applied or adopted, so
    a plan can tell "this file is gone" from "these workspaces were removed". Its settings
    are stored as fields of their own (``spread``), as every records format had them.
    """

    id: int
    managed: bool = False
    origin: Origin | None = None
    settings: RecordedSettings = field(default_factory=RecordedSettings)
    members: frozenset[int] = frozenset()
    source: str | None = None


class LiveView(Protocol):
    """What a read of the site shows of a workspace (``model.LiveWorkspace``)."""

    @property
    def details_observed(self) -> bool: ...
    @property
    def permissions(self) -> Overrides: ...
    @property
    def notifications(self) -> Overrides: ...


def from_manifest(settings: Mapping[str, Any]) -> WorkspaceSpec:
    """The spec of a workspace entry (defaults merged in) that passed every check."""
    permissions = _flags_on(settings.get("permissions"))
    return WorkspaceSpec(
        root_access=settings.get("root_access", True),
        permissions=None if permissions is None else with_implied_flags(permissions),
        notifications=_flags_on(settings.get("notifications")),
    )


def _flags_on(block: Mapping[str, bool] | None) -> Overrides:
    """The flags an override block turns on; None when there is no override."""
    if block is None:
        return None
    return frozenset(flag for flag, on in block.items() if on)


def data(spec: WorkspaceSpec, members: tuple[str, Any] | None = None) -> dict[str, Any]:
    """The spec as JSON-able data in its documented order, with the members at their place."""
    found: list[tuple[str, Any]] = [
        (name, sorted(value) if isinstance(value, frozenset) else value)
        for name, value in values(spec).items()
    ]
    if members is not None:
        found.insert(MEMBERS_AT, members)
    return dict(found)


# --- comparison ---------------------------------------------------------------------------

_UNKNOWN = object()


def compare(
    want: WorkspaceSpec, live: LiveView, record: RecordedSettings | None
) -> tuple[tuple[FieldChange, ...], tuple[FieldChange, ...], tuple[str, ...]]:
    """The settings that differ and need a replacement, those that differ and do not (a
    setting the site could change in place: compared and reported, never dropped), and
    those that cannot be known.

    An override is compared as observed where the site shows it, else as recorded; a setting
    the site never reports is compared as recorded. Neither: it is unobservable, not guessed.
    """
    differ: list[FieldChange] = []
    unobservable: list[str] = []
    for name in COMPARED:
        wanted = getattr(want, name)
        observed = _observed(name, want, live, record)
        recorded = record.known(name) if record is not None else None
        if observed is not _UNKNOWN:
            if observed != wanted:
                differ.append(FieldChange.differing(name, observed, wanted, "observed"))
        elif recorded is not None:
            if recorded.value != wanted:
                differ.append(FieldChange.differing(name, recorded.value, wanted, "recorded"))
        else:
            what = f"{name} override" if name in OVERRIDES else name
            unobservable.append(f"{what}: the site does not report it")
    replacement = tuple(d for d in differ if d.field in REQUIRES_REPLACEMENT)
    in_place = tuple(d for d in differ if d.field not in REQUIRES_REPLACEMENT)
    return replacement, in_place, tuple(unobservable)


def _observed(
    name: str, want: WorkspaceSpec, live: LiveView, record: RecordedSettings | None
) -> object:
    if name == "permissions":
        return _observed_permissions(live)
    if name == "notifications":
        return _observed_notifications(live, want, record)
    return _UNKNOWN  # the site does not report it


def _observed_permissions(live: LiveView) -> object:
    """The permission override as observed: ``None`` (off), a set of flags, or unknown.

    An override that is on has at least one flag on (an API rule), so no flags means off.
    """
    if not live.details_observed:
        return _UNKNOWN
    return live.permissions or None


def _observed_notifications(
    live: LiveView, want: WorkspaceSpec, record: RecordedSettings | None
) -> object:
    """The notification override as observed.

    Flags reported as on prove the override is on. None reported on cannot tell "override
    off" from "override on with both notifications off": when the manifest wants flags on,
    the site observably differs; otherwise the records decide where they know the setting,
    and a workspace the tool knows nothing of is taken to have no override.
    """
    if not live.details_observed:
        return _UNKNOWN
    if live.notifications:
        return live.notifications
    if want.notifications:
        return None
    known = record is not None and record.notifications is not None
    if want.notifications is None and not known:
        return None
    return _UNKNOWN


# --- adoption, export and rename detection ------------------------------------------------


def adopted(live: LiveView) -> RecordedSettings:
    """What adopting a workspace may record of its settings: only what the site showed.

    A setting the site does not report, and an override it cannot show as on, stay unknown:
    a guess recorded as a fact would later be "corrected" by a replacement that destroys
    every file.
    """
    if not live.details_observed:
        return RecordedSettings()
    # flags shown as on prove the override is on; none shown proves nothing
    notifications: Known[Overrides] | None = (
        Known(live.notifications) if live.notifications else None
    )
    return RecordedSettings(
        permissions=Known(live.permissions or None), notifications=notifications
    )


def exported(
    live: LiveView, record: RecordedSettings | None
) -> tuple[dict[str, tuple[Any, str | None]], dict[str, tuple[Overrides, str | None]] | None]:
    """The settings of a workspace as an exported manifest writes them, each with a note
    where it is not a fact the site reported: the settings written before the users, and the
    overrides (None: the site's overrides could not be read at all)."""
    plain: dict[str, tuple[Any, str | None]] = {}
    for name in PLAIN:
        known = record.known(name) if record is not None else None
        if known is not None:
            plain[name] = (known.value, "recorded by site-reconciler")
        else:
            plain[name] = (getattr(WorkspaceSpec(), name), _NOT_REPORTED)
    if not live.details_observed:
        return plain, None
    recorded = record.notifications if record is not None else None
    notifications: tuple[Overrides, str | None]
    if live.notifications:
        notifications = (live.notifications, None)
    elif recorded is not None and recorded.value is not None:
        notifications = (recorded.value, "recorded: override on, both off")
    else:
        notifications = (None, "none reported on; an override with both off cannot be seen")
    return plain, {"permissions": (live.permissions or None, None), "notifications": notifications}


_NOT_REPORTED = "not reported by the site: check it in the web app"


def fingerprint(
    live_users: frozenset[int] | None,
    live: LiveView,
    record: RecordedSettings,
    members: frozenset[int],
) -> tuple[Any, RecordedSettings] | None:
    """What a deleted workspace holds besides its files -- its users and settings, as the site
    shows them or else as the records know them -- to tell a rename (the same content created
    under another name). None: not enough is known to compare."""
    if live.details_observed:
        shown: dict[str, Any] = {
            name: Known(getattr(live, name) or None) if name in OVERRIDES else record.known(name)
            for name in SETTINGS
        }
        return live_users, RecordedSettings(**shown)
    if any(record.known(name) is None for name in OVERRIDES):
        return None
    return members, record


def same_content(
    content: tuple[Any, RecordedSettings], users: frozenset[Any], want: WorkspaceSpec
) -> bool:
    """Whether a deleted workspace's fingerprint matches a new one's users and settings; a
    setting the tool does not know matches anything."""
    held_users, settings = content
    return held_users == users and all(
        (known := settings.known(name)) is None or known.value == getattr(want, name)
        for name in SETTINGS
    )
