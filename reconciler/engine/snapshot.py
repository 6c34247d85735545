"""The manifest as a saved plan carries it, so that apply can derive the plan again.

A saved plan is a proposal, not an order: at apply time the plan is made again from this
snapshot against the live site and the records, and only actions that the fresh plan contains
with the same parameters are carried out. The snapshot is the normalised ``DesiredSite``
(defaults merged, teams expanded), with each object's place in the manifest so that messages
still point at the file and line. It is written by the model's one codec (``reconciler.codec``):
a field added to the model is in the snapshot without a change here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconciler import codec
from reconciler.model import DesiredSite, Policy

SNAPSHOT_VERSION = 2
"""Version 2 writes every model field by name (version 1 wrote sources as lists)."""


def desired_to_data(desired: DesiredSite) -> dict[str, Any]:
    return {"version": SNAPSHOT_VERSION, **codec.to_data(desired)}


def desired_from_data(data: Mapping[str, Any]) -> DesiredSite:
    """The snapshot's ``DesiredSite``; raises ``ValueError`` for data that is not one."""
    version = data.get("version")
    if version != SNAPSHOT_VERSION:
        raise ValueError(
            f"the manifest snapshot is version {version!r:.20}, this reconciler reads version "
            f"{SNAPSHOT_VERSION} (the plan was made by another version of reconciler: plan again)"
        )
    return codec.from_data({k: v for k, v in data.items() if k != "version"}, DesiredSite)


def policy_to_data(policy: Policy) -> dict[str, Any]:
    return codec.to_data(policy)  # type: ignore[no-any-return]


def policy_from_data(policy: Mapping[str, Any]) -> Policy:
    """Raises ``ValueError`` for data that is not a policy."""
    return codec.from_data(policy, Policy)
