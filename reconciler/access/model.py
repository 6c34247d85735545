"""The typed access report and the access changes of a plan: plain frozen data, no I/O.

An ``Access`` is one person's access to one workspace: how they reach it (a member, an
administrator -- administrators reach every workspace), with what effective permissions and
notifications (the workspace's override when it has one, else the person's own), the
workspace's settings that decide access (``ACCESS_SETTINGS``), whether the account is active and
whether the manifest declares that access. Every fact the site did not report is ``None``
and said so, never guessed.

The JSON report is this model written by the project's codec (``docs/access.md``); an
earlier report is read back the same way, strictly, for ``--since``. ``AccessChange`` is what
a plan gives or takes (``changes.py``); it lives here so ``engine/planning/plan.py`` can carry it
without importing the code that computes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Literal

from reconciler import codec
from reconciler.kinds.workspace import RecordedSettings
from reconciler.model import LiveWorkspace

ACCESS_SETTINGS = ("root_access",)
"""The workspace settings besides its overrides that decide a person's access, each a column
of the report (as recorded: the site does not report them). The renderers and the comparison
with an earlier report name them through this; a setting that does not decide access is not
part of the report."""

ACCESS_FORMAT = "site-reconciler-access"
ACCESS_FORMAT_VERSION = 1
"""Raised when a key of the report changes meaning; new keys may be added within a version."""

Origin = Literal["workspace", "user", "administrator", "unknown", "not a member"]
"""Where a permission or notification set comes from: the workspace's override, the person's
own settings, administrator status (every permission), not known (the site would not tell),
or nowhere (notifications reach a workspace's members only)."""

Declared = Literal["declared", "not declared", "unmanaged user", "expired"]
"""Whether the manifest declares an access; "unmanaged user": the manifest never names them;
"expired": it did, until its ``expires:`` date, which has passed (``Access.expires``)."""

FindingKind = Literal[
    "deactivated", "administrator", "expired", "undeclared", "unmanaged_user", "unusual_domain"
]


@dataclass(frozen=True, slots=True)
class Person:
    """Someone who can reach at least one workspace of the report."""

    id: int
    username: str
    email: str
    name: str
    administrator: bool | None  # None: the site did not say
    active: bool | None  # None: the site did not say
    in_manifest: bool | None = None  # the manifest names them; None: no manifest given


@dataclass(frozen=True, slots=True)
class WorkspaceFacts:
    """A workspace of the report and the settings that decide its members' access."""

    id: int
    name: str
    root_access: bool | None  # recorded by the tool; the site does not report it
    permissions: frozenset[str] | None  # the permission override; None: none (own permissions)
    notifications: frozenset[str] | None  # the notification override; None: none
    observed: bool  # workspace_info answered: its members and overrides were read
    owners: tuple[str, ...] = ()  # who answers for it (the manifest's ownership:); () if none

    @classmethod
    def of(cls, ws: LiveWorkspace, recorded: RecordedSettings | None) -> WorkspaceFacts:
        """The workspace as read, with what the records know of what the site never shows."""
        root = recorded.root_access.value if recorded and recorded.root_access else None
        notifications: frozenset[str] | None = ws.notifications or None
        if notifications is None and recorded is not None and recorded.notifications is not None:
            notifications = recorded.notifications.value  # on with none set, or off: recorded
        return cls(ws.id, ws.name, root, ws.permissions or None, notifications, ws.details_observed)

    def access_settings(self) -> dict[str, bool | None]:
        """Its ``ACCESS_SETTINGS`` by name: each access to it repeats them."""
        return {name: getattr(self, name) for name in ACCESS_SETTINGS}


@dataclass(frozen=True, slots=True)
class Access:
    """One person's access to one workspace. Denormalised (e-mail, active, the workspace's
    settings that decide access) so that one entry is one spreadsheet row and two reports
    compare entry by entry."""

    workspace: str
    workspace_id: int
    person: str
    user_id: int
    email: str
    active: bool | None
    member: bool
    administrator: bool
    permissions: frozenset[str] | None  # None: not read (see ``permissions_from``)
    permissions_from: Origin
    notifications: frozenset[str] | None
    notifications_from: Origin
    root_access: bool | None
    manifest: Declared | None = None  # None: no manifest given
    # The day the manifest's grant of it ends (time-boxed), or ended ("expired"); None: a
    # standing grant, or none (written only when set: reports keep their shape)
    expires: date | None = None

    def access_settings(self) -> dict[str, bool | None]:
        """The workspace's ``ACCESS_SETTINGS`` by name, as this access repeats them."""
        return {name: getattr(self, name) for name in ACCESS_SETTINGS}

    @property
    def via(self) -> str:
        """How the person reaches the workspace, in words."""
        return _VIA[self.member, self.administrator]


_VIA = {
    (member, administrator): " + ".join(
        way for way, holds in (("member", member), ("administrator", administrator)) if holds
    )
    for member in (False, True)
    for administrator in (False, True)
}
"""``Access.via`` by ``(member, administrator)``, worked out once: every report row says it."""


@dataclass(frozen=True, slots=True)
class AccessFinding:
    """Something an access review must look at, about one person."""

    kind: FindingKind
    person: str
    user_id: int
    detail: str
    workspaces: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SignOff:
    """Left empty by the tool: the reviewer fills it in the JSON report they sign off. Every
    key is required on reading (no defaults), so a sign-off damaged into another shape is an
    error rather than an empty one."""

    reviewer: str | None
    date: str | None
    notes: str | None


@dataclass(frozen=True, slots=True)
class ReportScope:
    """What the report covers: ``--user`` and ``--workspace`` as given (empty: everything)."""

    users: tuple[str, ...]
    workspaces: tuple[str, ...]

    @classmethod
    def whole(cls) -> ReportScope:
        return cls((), ())

    @property
    def whole_site(self) -> bool:
        return not (self.users or self.workspaces)


@dataclass(frozen=True, slots=True)
class AccessShift:
    """An access held at both reviews -- the same account at the same workspace, by ID --
    whose terms or names changed (``--since``)."""

    workspace: str
    person: str
    field: str  # "username", "email", "workspace" (renamed), "via", "permissions", ...
    before: str
    after: str
    workspace_id: int | None = None  # None: in a report written before shifts carried IDs
    user_id: int | None = None


@dataclass(frozen=True, slots=True)
class Since:
    """What changed since an earlier report: the dates of both and who signed the first off."""

    previous_read_at: str
    read_at: str
    previous_sign_off: SignOff
    gained: tuple[Access, ...] = ()
    lost: tuple[Access, ...] = ()
    changed: tuple[AccessShift, ...] = ()


@dataclass(frozen=True, slots=True)
class AccessReport:
    """Effective access on one site at one moment (``docs/access.md`` describes the JSON)."""

    format: str
    format_version: int
    site: str
    read_at: str
    tool_version: str
    scope: ReportScope
    manifest: tuple[str, ...] | None  # the manifest files compared with; None: none given
    usual_domains: tuple[str, ...]
    findings: tuple[AccessFinding, ...]
    workspaces: tuple[WorkspaceFacts, ...]
    people: tuple[Person, ...]
    entries: tuple[Access, ...]
    notes: tuple[str, ...] = ()
    sign_off: SignOff = field(default_factory=lambda: SignOff(None, None, None))
    since: Since | None = None


# --- plans --------------------------------------------------------------------------------

Effect = Literal["gains", "loses", "changes"]
Cause = Literal[
    "member added",
    "member removed",
    "workspace created",
    "workspace deleted",
    "workspace replaced",
    "override changed",
    "user deleted",
    "administrator created",
    "expired",
]
"""Why an access changes. No API method changes an existing user, so a plan makes someone an
administrator only by creating them so, and ends it only by deleting the user. ``expired``:
the manifest's entry for it (or the account's) reached its ``expires:`` date
(``AccessChange.expires``)."""


@dataclass(frozen=True, slots=True)
class AccessChange:
    """One person's access that a plan gives or takes, and the action that does it.

    ``what`` is ``access`` itself, or one setting of it: a permission or notification flag,
    a workspace setting that decides access (``ACCESS_SETTINGS``), or ``permissions`` or
    ``notifications`` as a whole when one side is the person's own settings, which a plan
    does not read (``detail`` then says before -> after).
    ``workspace`` None means every workspace: an administrator created or deleted.
    ``workspace_id`` and ``user_id`` are the identities an access report keys the same access
    by (``since.py``), where they exist before the apply: None for a workspace this plan
    creates (a replacement's new one included) and a user it creates. ``site_name`` is the
    workspace's name on the site where the manifest spells it otherwise (a rename the API
    could not make, outer spaces the site keeps).
    """

    person: str
    workspace: str | None
    effect: Effect
    what: str
    via: Literal["member", "administrator"]
    cause: Cause
    detail: str | None = None
    workspace_id: int | None = None
    user_id: int | None = None
    site_name: str | None = None
    expires: date | None = None  # the day the entry expired (cause ``expired``)


codec.rename(AccessChange, omit_defaults=True)
codec.rename(WorkspaceFacts, omit_defaults=True)  # ``owners`` only where the manifest has them
codec.written_without_defaults(Access, "expires")
