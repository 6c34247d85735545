"""The plain data the reconciler reasons about: the desired site and the live site.

Both sides use the same vocabulary so that ``diff`` can compare them without translation:
permission and notification overrides are ``frozenset``\\s of manifest flag keys (see
``reconciler.spec``), or ``None`` when the workspace has no override. Nothing here does
I/O; every class is frozen so a model can be shared between tasks without copying.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Literal, Protocol

from reconciler import codec
from reconciler.kinds import user as kinds_user
from reconciler.kinds.change import field_names, spread
from reconciler.kinds.user import UserSpec
from reconciler.kinds.workspace import MEMBERS_AT, WorkspaceSpec
from reconciler.kinds.workspace import Overrides as Overrides  # where the kind is written
from reconciler.ownership.model import Ownership


@dataclass(frozen=True, slots=True)
class Source:
    """Where something was written: used in every message that points at the manifest."""

    file: str
    line: int | None = None  # 1-based
    column: int | None = None  # 1-based
    path: str = ""  # path inside the document, e.g. "workspaces[3].permissions"

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where} ({self.path})" if self.path else where


@dataclass(frozen=True, slots=True)
class UserRef:
    """A reference to a site user as written in the manifest: username, e-mail or numeric ID;
    ``expires``: the day its access ends (``{user: bob, expires: 2026-12-31}``), if it does."""

    text: str
    source: Source
    expires: date | None = None

    @property
    def kind(self) -> Literal["id", "email", "username"]:
        """How the text reads: ASCII digits are an ID (``"²"`` is not), ``@`` an e-mail."""
        if self.text.isascii() and self.text.isdigit():
            return "id"
        return "email" if "@" in self.text else "username"


_new = object.__new__
_set_file, _set_line, _set_column, _set_path = (
    Source.__dict__[name].__set__ for name in ("file", "line", "column", "path")
)
_set_text, _set_source, _set_expires = (
    UserRef.__dict__[name].__set__ for name in ("text", "source", "expires")
)


def user_ref_at(text: str, file: str, line: int, column: int, path: str) -> UserRef:
    """``UserRef(text, Source(file, line, column, path))``, made in a third less time.

    Why: a manifest of 1,000 workspaces holds some 17,000 user references, and a frozen
    dataclass's ``__init__`` sets each field through ``object.__setattr__``; this sets the
    slots directly, as that ``__init__`` does in effect (``tests/test_model.py`` holds the two
    to the same fields and values). A reference made so has no expiry: a list with one is
    read item by item (``manifest/references.py``).
    """
    source = _new(Source)
    _set_file(source, file)
    _set_line(source, line)
    _set_column(source, column)
    _set_path(source, path)
    ref = _new(UserRef)
    _set_text(ref, text)
    _set_source(ref, source)
    _set_expires(ref, None)
    return ref


def user_refs_at(
    file: str, texts: Iterable[str], paths: Iterable[str], places: Iterable[tuple[int, int]]
) -> tuple[UserRef, ...]:
    """``user_ref_at`` of each text, path and (line, column), for a whole list."""
    return tuple(
        user_ref_at(text, file, line, column, path)
        for text, path, (line, column) in zip(texts, paths, places, strict=True)
    )


# --- desired side -------------------------------------------------------------------------


@spread(WorkspaceSpec, "settings", among="users", at=MEMBERS_AT)
@dataclass(frozen=True, slots=True)
class DesiredWorkspace:
    """A workspace as the manifest wants it, after defaults and teams were merged in. Its
    settings are the kind's one spec (declared once, in ``kinds/workspace``); saved plans'
    manifest snapshots and change-scoped digests write them flat, among the users, as they
    always have (``spread``), and each reads as an attribute (``ws.root_access``)."""

    name: str
    settings: WorkspaceSpec
    users: tuple[UserRef, ...]
    source: Source
    team: str | None = None  # the team that declared it, when it came from ``teams``
    previously: tuple[str, ...] = ()  # names it had in the manifest before (a rename)


@dataclass(frozen=True, slots=True)
class DesiredGroup:
    """A user group as the manifest wants it."""

    name: str
    members: tuple[UserRef, ...]
    source: Source
    team: str | None = None
    previously: tuple[str, ...] = ()  # names it had in the manifest before (a rename)


@dataclass(frozen=True, slots=True)
class DesiredUser:
    """A site user the manifest declares (``users:``): created when absent, never updated.

    The API has no method to change an existing user, so differences on an existing user are
    reported as drift, never "fixed". No password is ever part of a manifest.
    """

    username: str
    email: str
    source: Source
    first_name: str = ""
    last_name: str = ""
    organization: str | None = None
    phone: str | None = None
    phone_ext: str | None = None
    admin: bool = False
    active: bool = True
    previously: tuple[str, ...] = ()  # usernames it had in the manifest before (a rename)
    expires: date | None = None  # the day the account's access ends (``core/expiry.py``)

    @property
    def settings(self) -> UserSpec:
        """What it declares besides the username, as the kind's one spec: what is compared
        and created (flat here, as saved plans and digests have always written it)."""
        return UserSpec(**{name: getattr(self, name) for name in _USER_FIELDS})


_USER_FIELDS = field_names(UserSpec)


codec.written_without_defaults(DesiredUser, "expires")  # plans keep their bytes


DEFAULT_MAX_DELETES = 10
"""Most deletions one apply makes without ``--force``, whatever the size of the site."""


DEFAULT_EXPIRY_NOTICE_DAYS = 14
"""How many days ahead plans list the access that is about to expire (``policy``)."""


@dataclass(frozen=True, slots=True)
class ReviewPolicy:
    """How ``reconciler review check`` judges a review (``policy.review``)."""

    strict: bool = False  # a decision by someone not assigned to the row is an error


@dataclass(frozen=True, slots=True)
class Policy:
    """What the tool may destroy, and how much at once; and who reviews access
    (``reviewers``: user references, where no owner of a workspace is named)."""

    prune: bool = False
    max_delete_fraction: float = 0.25
    max_member_removal_fraction: float = 0.25
    max_deletes: int = DEFAULT_MAX_DELETES
    protect: tuple[str, ...] = ()
    prune_users: bool = False
    protect_users: tuple[str, ...] = ()
    min_admins: int = 1
    max_user_removal_fraction: float = 0.25
    reviewers: tuple[str, ...] = ()
    review: ReviewPolicy = field(default_factory=ReviewPolicy)
    expiry_notice_days: int = DEFAULT_EXPIRY_NOTICE_DAYS


codec.written_without_defaults(Policy, "expiry_notice_days")  # records, plans too


@dataclass(frozen=True, slots=True)
class DesiredSite:
    """The normalised manifest: what the planner consumes."""

    workspaces: tuple[DesiredWorkspace, ...]
    groups: tuple[DesiredGroup, ...]
    policy: Policy = field(default_factory=Policy)
    site_url: str | None = None
    files: tuple[str, ...] = ()  # the manifest files, in the order they were merged
    users: tuple[DesiredUser, ...] = ()
    state: str | None = None  # ``site.state``: where the records live (a URL or a path)
    ownership: Ownership | None = (
        None  # ``ownership:``: who owns which files (reconciler.ownership)
    )


# --- live side ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LiveUser:
    """A site user as ``user_list`` reports it."""

    id: int
    username: str
    email: str
    admin: bool | None = False  # None: the site did not say
    first_name: str | None = None
    last_name: str | None = None
    active: bool | None = None  # None: the site did not say (an unknown never counts as active)


class ReportedUser(Protocol):
    """A user as a read of the site lists one (``api.answers.UserSummary``)."""

    @property
    def id(self) -> int: ...

    @property
    def username(self) -> str: ...

    @property
    def email(self) -> str: ...


def live_user(summary: ReportedUser) -> LiveUser:
    """A listed user as the model of a site user: what the user kind says a read reports
    (``kinds.user.REPORTED``), each ``None`` where the site did not say."""
    reported = {name: getattr(summary, name) for name in kinds_user.REPORTED}
    return LiveUser(summary.id, summary.username, summary.email, **reported)


@dataclass(frozen=True, slots=True)
class LiveWorkspace:
    """A workspace on the site.

    ``users``, ``permissions`` and ``notifications`` come from ``workspace_info``; they are
    ``None`` in ``observed`` terms when the site would not tell (see ``LiveSite.unobservable``).
    """

    id: int
    name: str
    path: str
    users: frozenset[int] | None = None
    permissions: Overrides = None
    notifications: Overrides = None
    details_observed: bool = False  # True when workspace_info answered for it


@dataclass(frozen=True, slots=True)
class LiveGroup:
    """A user group discovered on the site (``users_location_access`` entries with uType 0)."""

    id: int
    name: str


@dataclass(frozen=True, slots=True)
class LiveSite:
    """What the reads observed, and what they could not."""

    users: tuple[LiveUser, ...]
    workspaces: tuple[LiveWorkspace, ...]
    groups: tuple[LiveGroup, ...]
    groups_listed: bool  # False when the site does not report groups at all
    notes: tuple[str, ...] = ()  # plain sentences on what could not be observed
    caller_id: int | None = None  # the user whose API key makes the calls, when it was read
    users_complete: bool = False  # True when ``users`` is the site's whole user list
    # The workspaces (by ID) of each user read with ``user_info``: the users a plan may delete,
    # so that it can say which workspaces they lose, those a read did not list the members of
    # included. A user missing here was not read so.
    memberships: Mapping[int, frozenset[int]] = field(default_factory=dict)
