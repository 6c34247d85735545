"""The API methods the client calls, as data: verb, answer key, parameters, retry safety.

Kept apart from the client so each method's facts are written once and read by one ``_call``
path: which key its success answer sits under (``user_group_delete`` answers
``userGroupDeleted``, not the camel case of its name), whether it writes, and so whether a
failure may be tried again.

Why writes are special: a read can be repeated at will, but ``workspace_add`` repeated after a
lost answer creates a second workspace. A write is therefore tried again only when the site
provably did not act -- a 429, or a connection that was never established -- and a 502/504
from a gateway (which may have forwarded the request) is reported as ``OutcomeUnknown``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from reconciler.api import records, spec
from reconciler.api.decode import camel_case
from reconciler.api.errors import (
    OutcomeUnknown,
    RateLimited,
    ServerError,
    SiteError,
    TransportError,
)

GATEWAY_STATUSES = (502, 504)
"""A proxy's "no (timely) answer from upstream": the upstream may have acted on a write."""

UNKNOWN_OUTCOME_HINT = (
    "The change may have been applied. Do not simply retry: run plan (which reads the site) "
    "to see whether it was, then apply again if it is still needed."
)
WRITE_FAILED_HINT = (
    "The site reported a failure and most likely made no change; run plan to check before "
    "applying again. If it persists, contact the site's support."
)


@dataclass(frozen=True, slots=True)
class ApiMethod:
    """An API method: its name, verb and the key(s) its success answer is filed under."""

    name: str
    verb: Literal["GET", "POST"]
    keys: tuple[str, ...]

    @property
    def is_write(self) -> bool:
        return self.verb == "POST"

    def may_retry(self, error: SiteError) -> bool:
        """Reads: whatever is transient. Writes: only what proves the site did not act."""
        if not self.is_write:
            return error.retryable
        never_sent = type(error) is TransportError  # OutcomeUnknown is a subclass: excluded
        return never_sent or isinstance(error, RateLimited)

    def reinterpret(self, error: SiteError) -> SiteError:
        """A refusal of this call, re-read for what it says about a write having happened."""
        if not self.is_write or isinstance(error, RateLimited):
            return error
        if error.status in GATEWAY_STATUSES:
            unknown = OutcomeUnknown(
                f"{self.name}: a gateway answered HTTP {error.status} instead of the site; "
                "the site may or may not have applied the change.",
                method=self.name,
                hint=UNKNOWN_OUTCOME_HINT,
                status=error.status,
            )
            unknown.__cause__ = error
            return unknown
        if isinstance(error, ServerError):
            error.hint = WRITE_FAILED_HINT
        return error


def _get(name: str, *keys: str) -> ApiMethod:
    return ApiMethod(name, "GET", keys or (camel_case(name),))


def _post(name: str, *keys: str) -> ApiMethod:
    return ApiMethod(name, "POST", keys or (camel_case(name),))


USER_INFO = _get("user_info")
USER_LIST = _get("user_list")
USERS_LOCATION_ACCESS = _get("users_location_access")
USER_PERMISSIONS_LOCATION = _get("user_permissions_location")
WORKSPACE_LIST = _get("workspace_list")
WORKSPACE_INFO = _get("workspace_info")
WORKSPACE_ADD = _post("workspace_add")
WORKSPACE_DELETE = _post("workspace_delete")
USER_GROUP_ADD = _post("user_group_add")
USER_GROUP_DELETE = _post("user_group_delete", "userGroupDeleted", "userGroupDelete")
ADD_TO_USER_GROUP = _post("add_to_user_group")
REMOVE_FROM_USER_GROUP = _post("remove_from_user_group")
ADD_TO_WORKSPACE = _post("add_to_workspace")
REMOVE_FROM_WORKSPACE = _post("remove_from_workspace")


def workspace_add_params(
    names: Sequence[str], settings: records.WorkspaceSettings
) -> dict[str, str]:
    """The documented ``workspace_add`` parameters for ``names`` sharing ``settings``.

    A comma inside a name would silently create two workspaces, so it is refused here even
    though the manifest validation refuses it first.
    """
    if not names or any(spec.NAME_LIST_SEPARATOR in name or not name for name in names):
        raise ValueError("workspace_add needs names, none empty and none containing a comma")
    params = {
        "name": spec.NAME_LIST_SEPARATOR.join(names),
        "root_access": bit(settings.root_access),
    }
    if settings.user_ids:
        params["workspace_users"] = id_list(settings.user_ids)
    params |= _override(
        spec.OVERRIDE_PERMISSIONS_PARAM, spec.PERMISSION_FLAGS, settings.permissions
    )
    params |= _override(
        spec.OVERRIDE_NOTIFICATIONS_PARAM, spec.NOTIFICATION_FLAGS, settings.notifications
    )
    return params


def _override(
    switch: str, flags: tuple[spec.Flag, ...], on: frozenset[str] | None
) -> dict[str, str]:
    """The switch, and each flag's 0/1 only when the override is on (else they have no effect)."""
    if on is None:
        return {switch: "0"}
    unknown = on - {flag.key for flag in flags}
    if unknown:
        raise ValueError(f"unknown flags for {switch}: {', '.join(sorted(unknown))}")
    return {switch: "1", **{flag.param: bit(flag.key in on) for flag in flags}}


def bit(value: bool) -> str:
    return "1" if value else "0"


def id_list(ids: Sequence[int]) -> str:
    """IDs as the API takes them: comma-separated."""
    return spec.NAME_LIST_SEPARATOR.join(str(number) for number in ids)
