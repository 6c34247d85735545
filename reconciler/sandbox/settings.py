"""The sandbox's profile switches: one frozen value, validated once, shared by every layer.

The site API leaves many behaviours open (status codes, the timestamp window, who may list
workspaces, ...). The sandbox picks a default for each and offers the alternatives as switches,
so the reconciler can be tested against every plausible site. A switch exists in three places
that must never drift apart -- a ``sandbox serve`` flag, a key under ``settings:`` in a seed, a
runtime setting of the control surface -- so all three are generated from ``SWITCHES`` here.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class SettingsError(ValueError):
    """A setting has an unknown name or a value of the wrong type or range."""


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """How the emulated site behaves where the published documentation is silent."""

    errors_as_200: bool = False
    timestamp_window: int = 300
    open_workspace_list: bool = False
    allow_duplicate_workspace_names: bool = False
    partial_multi_add: bool = False
    omit_groups_in_location_access: bool = False
    rate_limit: int = 0
    latency_ms: int = 0
    fail_rate: float = 0.0
    drop_after_commit_rate: float = 0.0
    refuse_workspace_info: bool = False
    legacy_workspace_list: bool = False
    published_error_titles: bool = False
    published_messages: bool = False
    php_json: bool = False
    strict_signing: bool = False
    legacy_location_method: bool = False
    unknown_ids_as_400: bool = False
    keep_name_spaces: bool = False
    name_length_in_bytes: bool = False
    strict_memberships: bool = False
    refuse_user_delete_of_members: bool = False
    exact_workspace_paths: bool = False
    password_min_length: int = 8
    password_classes: int = 3
    random_seed: int | None = None

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            # frozen: normalise in place the one way a constructor may differ (1 vs 1.0)
            object.__setattr__(self, field.name, _coerce(field.name, getattr(self, field.name)))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> SandboxSettings:
        """Settings from a seed's ``settings:`` or a control-surface body; unknown keys fail."""
        return cls().updated(data)

    def updated(self, changes: Mapping[str, Any]) -> SandboxSettings:
        """A copy with ``changes`` applied (a partial update), validated like a new value."""
        if not isinstance(changes, Mapping):
            raise SettingsError("settings must be a mapping of setting names to values")
        unknown = sorted(set(changes) - set(FIELD_NAMES))
        if unknown:
            raise SettingsError(
                f"unknown setting {', '.join(map(repr, unknown))}; "
                f"known settings: {', '.join(FIELD_NAMES)}"
            )
        return dataclasses.replace(self, **changes)

    def overridden_by(self, explicit: SandboxSettings | None) -> SandboxSettings:
        """These settings with every field of ``explicit`` that is not at its default.

        Used to let a command line or a caller override a seed's ``settings:``: a field left at
        its default says nothing, so it does not undo what the seed asked for.
        """
        if explicit is None:
            return self
        changes = {
            name: getattr(explicit, name)
            for name in FIELD_NAMES
            if getattr(explicit, name) != DEFAULTS[name]
        }
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The settings as plain JSON-ready data (control surface, logs)."""
        return {name: getattr(self, name) for name in FIELD_NAMES}


@dataclass(frozen=True, slots=True)
class Switch:
    """One setting as a ``sandbox serve`` option, with the help text that explains it."""

    field: str
    flag: str
    help: str
    metavar: str | None = None  # None: a boolean on/off flag


SWITCHES: tuple[Switch, ...] = (
    Switch(
        "errors_as_200",
        "--errors-as-200",
        "Answer every error (its body unchanged) with HTTP 200, as some sites do; "
        "clients must detect errors by the body, not the status.",
    ),
    Switch(
        "timestamp_window",
        "--timestamp-window",
        "Accept a request timestamp this many seconds off the sandbox clock [default: 300].",
        "SECONDS",
    ),
    Switch(
        "open_workspace_list",
        "--open-workspace-list",
        "Let non-administrators call workspace_list (they see the workspaces they are in) "
        "instead of refusing them with 'Workspace Listing Failed'.",
    ),
    Switch(
        "allow_duplicate_workspace_names",
        "--allow-duplicate-workspace-names",
        "Let workspace_add create a workspace whose name or path already exists, instead of "
        "refusing it.",
    ),
    Switch(
        "partial_multi_add",
        "--partial-multi-add",
        "workspace_add with several names, some invalid: create the valid ones, then return "
        "the error (default: create nothing).",
    ),
    Switch(
        "omit_groups_in_location_access",
        "--omit-groups-in-location-access",
        "users_location_access at '/' lists users only, no user groups (uType 0).",
    ),
    Switch(
        "rate_limit",
        "--rate-limit",
        "Accept at most N /api requests a second; more get 429 with a Retry-After header "
        "[default: 0 = no limit].",
        "N",
    ),
    Switch(
        "latency_ms",
        "--latency-ms",
        "Add this much delay to every /api call (calls still overlap) [default: 0].",
        "MS",
    ),
    Switch(
        "fail_rate",
        "--fail-rate",
        "Fail this share (0-1) of /api calls with 500 or 503 before they have any effect.",
        "P",
    ),
    Switch(
        "drop_after_commit_rate",
        "--drop-after-commit-rate",
        "For this share (0-1) of write calls, commit the change and then drop the connection "
        "without a response: the client sees a network error although the change happened.",
        "P",
    ),
    Switch(
        "refuse_workspace_info",
        "--refuse-workspace-info",
        "Refuse workspace_info with 403 'Workspace Info Failed', as a site that does not offer "
        "it would.",
    ),
    Switch(
        "legacy_workspace_list",
        "--legacy-workspace-list",
        "Answer workspace_list in the older shape: a bare list, no totalWorkspaces.",
    ),
    Switch(
        "published_error_titles",
        "--published-error-titles",
        "Write error titles as the published samples print them, with a stray leading quote "
        "('Workspace Delete Failed; workspace_list: \"Workspace Listing Failed in JSON).",
    ),
    Switch(
        "published_messages",
        "--published-messages",
        "Answer every error with the messages the public pages print (e.g. 'Please try again "
        "or contact customer support.', 'Authentication parameters missing or invalid.') "
        "instead of the sandbox's own explanations.",
    ),
    Switch(
        "php_json",
        "--php-json",
        "Write JSON as PHP's json_encode does by default: '/' as '\\/', non-ASCII as \\uXXXX.",
    ),
    Switch(
        "strict_signing",
        "--strict-signing",
        "Check a GET's signature over the site's own encoding of its parameters (RFC 3986, "
        "%20 for a space, upper-case hex) instead of the bytes received.",
    ),
    Switch(
        "legacy_location_method",
        "--legacy-location-method",
        "Serve users_location_access under its older (FileGenius) name user_location_access; "
        "the current name is then an unknown method (404 'Unknown Method').",
    ),
    Switch(
        "unknown_ids_as_400",
        "--unknown-ids-as-400",
        "Answer an unknown user, workspace or group ID with 400 instead of 404.",
    ),
    Switch(
        "keep_name_spaces",
        "--keep-name-spaces",
        "Keep the spaces around a workspace or group name instead of trimming them.",
    ),
    Switch(
        "name_length_in_bytes",
        "--name-length-in-bytes",
        "Count the 40 of a workspace name in UTF-8 bytes instead of characters.",
    ),
    Switch(
        "strict_memberships",
        "--strict-memberships",
        "Refuse (400) adding a member again or removing a non-member, instead of succeeding "
        "with no change.",
    ),
    Switch(
        "refuse_user_delete_of_members",
        "--refuse-user-delete-of-members",
        "Refuse user_delete while the user still belongs to a workspace or group, instead of "
        "removing them from each.",
    ),
    Switch(
        "exact_workspace_paths",
        "--exact-workspace-paths",
        "A path below a workspace's path is an unknown location (no access), instead of "
        "the workspace itself.",
    ),
    Switch(
        "password_min_length",
        "--password-min-length",
        "user_add refuses a given password shorter than this many characters "
        "[default: 8; 0 = no length rule].",
        "N",
    ),
    Switch(
        "password_classes",
        "--password-classes",
        "user_add refuses a given password that uses fewer of the four character classes "
        "(lower case, upper case, digits, others) [default: 3; 0 = no class rule].",
        "N",
    ),
    Switch(
        "random_seed",
        "--random-seed",
        "Seed the random choices of --fail-rate and --drop-after-commit-rate, so a run of "
        "faults can be repeated.",
        "N",
    ),
)

PROFILES: dict[str, dict[str, Any]] = {
    "default": {},
    "published": {
        "errors_as_200": True,
        "published_error_titles": True,
        "published_messages": True,
        "php_json": True,
        "strict_signing": True,
    },
}
"""Named sets of settings. ``published`` turns on everything the public pages show (errors
with HTTP 200, their generic messages and stray-quote titles, PHP's JSON, signing over the
brand's own encoding) and nothing they do not."""


def profile_settings(name: str) -> SandboxSettings:
    """The settings of the profile ``name`` (``SettingsError`` naming the known ones)."""
    if name not in PROFILES:
        raise SettingsError(f"unknown profile {name!r}; known profiles: {', '.join(PROFILES)}")
    return SandboxSettings.from_mapping(PROFILES[name])


FIELD_NAMES: tuple[str, ...] = tuple(field.name for field in dataclasses.fields(SandboxSettings))


def _check(name: str, value: Any) -> None:
    """Raise ``SettingsError`` unless ``value`` is valid for the setting ``name``."""
    kind = KINDS[name]
    if kind == "bool":
        if not isinstance(value, bool):
            raise SettingsError(f"{name} must be true or false; got {value!r}")
    elif kind in ("count", "seed"):
        if value is None and kind == "seed":
            return
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise SettingsError(f"{name} must be a whole number of at least 0; got {value!r}")
    elif kind == "classes":
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 4:
            raise SettingsError(f"{name} must be a whole number from 0 to 4; got {value!r}")
    elif kind == "share":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or not 0.0 <= value <= 1.0:
            raise SettingsError(f"{name} must be a number from 0 to 1; got {value!r}")


def _coerce(name: str, value: Any) -> Any:
    """Check ``value`` and normalise a share to ``float`` (JSON may carry ``0`` or ``1``)."""
    _check(name, value)
    return float(value) if KINDS[name] == "share" else value


KINDS: dict[str, str] = {
    "errors_as_200": "bool",
    "timestamp_window": "count",
    "open_workspace_list": "bool",
    "allow_duplicate_workspace_names": "bool",
    "partial_multi_add": "bool",
    "omit_groups_in_location_access": "bool",
    "rate_limit": "count",
    "latency_ms": "count",
    "fail_rate": "share",
    "drop_after_commit_rate": "share",
    "refuse_workspace_info": "bool",
    "legacy_workspace_list": "bool",
    "published_error_titles": "bool",
    "published_messages": "bool",
    "php_json": "bool",
    "strict_signing": "bool",
    "legacy_location_method": "bool",
    "unknown_ids_as_400": "bool",
    "keep_name_spaces": "bool",
    "name_length_in_bytes": "bool",
    "strict_memberships": "bool",
    "refuse_user_delete_of_members": "bool",
    "exact_workspace_paths": "bool",
    "password_min_length": "count",
    "password_classes": "classes",
    "random_seed": "seed",
}
DEFAULTS: dict[str, Any] = SandboxSettings().to_dict()
"""Each setting's default: a field at its default does not override a seed's setting."""
