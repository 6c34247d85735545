"""What every method handler receives and what the dispatcher needs to know about it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from reconciler.sandbox.errors import ADMIN_REQUIRED, ApiError
from reconciler.sandbox.rows import UserRow
from reconciler.sandbox.settings import SandboxSettings
from reconciler.sandbox.store import Store


@dataclass(frozen=True, slots=True)
class Call:
    """One authenticated call: who calls, with which parameters, against which state."""

    store: Store
    settings: SandboxSettings
    caller: UserRow
    params: Mapping[str, str]
    now: int


Handler = Callable[[Call], Any]


@dataclass(frozen=True, slots=True)
class Method:
    """One API method: its verbs, success key, error title and who may call it.

    ``title`` is the error title of every refusal of the method (documented where the
    reference gives one, chosen consistently where it does not); handlers raise ``ApiError``
    without a title and the dispatcher adds this one. ``verbs`` has more than one entry only
    where a published page names several ("POST DELETE").
    """

    name: str
    verbs: tuple[str, ...]
    key: str
    title: str
    handler: Handler
    admin_only: bool = True

    @property
    def writes(self) -> bool:
        """Every method not called with GET changes state; only those can be dropped."""
        return "GET" not in self.verbs


def require_admin(call: Call) -> None:
    """The documented refusal of an administrator-only method (403)."""
    if not call.caller.admin:
        raise ApiError(403, ADMIN_REQUIRED)
