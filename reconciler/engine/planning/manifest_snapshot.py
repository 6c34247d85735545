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
from dataclasses import replace
from datetime import date
from typing import Any

from reconciler import aio, codec
from reconciler.model import DesiredSite, Source, UserRef

SNAPSHOT_VERSION = 2
"""Version 2 is written by the codec (version 1 was written by hand, in the same shape: both
are read)."""


def _source_from(data: Any) -> Source:
    if not isinstance(data, list) or len(data) != 4:
        raise ValueError("a place in the manifest must be [file, line, column, path]")
    file, line, column, path = data
    numbers_ok = all(n is None or type(n) is int for n in (line, column))
    if not (isinstance(file, str) and isinstance(path, str) and numbers_ok):
        raise ValueError(f"not a place in the manifest: {data!r:.80}")
    return Source(file, line, column, path)


def _reference_from(data: Any) -> UserRef:
    if not isinstance(data, list) or len(data) not in (2, 3) or not isinstance(data[0], str):
        raise ValueError("a user reference must be [text, place] or [text, place, expires]")
    expires = codec.from_data(data[2], date) if len(data) == 3 else None
    return UserRef(data[0], _source_from(data[1]), expires)


def _reference_data(ref: UserRef) -> list[Any]:
    source = ref.source
    data: list[Any] = [ref.text, [source.file, source.line, source.column, source.path]]
    if ref.expires is not None:  # only then: plans without expiries keep their bytes
        data.append(ref.expires.isoformat())
    return data


# A place in the manifest is written [file, line, column, path] and a user reference [text,
# place] (and its expiry, when it has one): there is one for every object and reference, and
# written as objects they made a 1,000-workspace plan half again as large (2.1 MiB, not 1.4)
# and twice as slow to read.
codec.hook(Source, lambda s: [s.file, s.line, s.column, s.path], _source_from)
codec.hook(UserRef, _reference_data, _reference_from)


def desired_to_data(desired: DesiredSite) -> dict[str, Any]:
    data: dict[str, Any] = codec.to_data(desired)
    if data["ownership"] is None:  # written as before it existed: the same plans, checksums
        del data["ownership"]
    return {"version": SNAPSHOT_VERSION, **data}


async def desired_to_data_meanwhile(desired: DesiredSite) -> dict[str, Any]:
    """``desired_to_data(desired)``, made a slice at a time while the site is read
    (``aio.in_slices``): an apply's checksum needs it before the first write, and on a
    200-team onboarding it took some 20 ms there. The same data, key for key, in the same
    order: each object is written by the codec as it is within the whole."""
    data = desired_to_data(replace(desired, workspaces=(), groups=(), users=()))
    for name in ("workspaces", "groups", "users"):
        data[name] = await aio.in_slices(getattr(desired, name), codec.to_data)
    return data


def desired_from_data(data: Mapping[str, Any]) -> DesiredSite:
    """The snapshot's ``DesiredSite``; raises ``ValueError`` for data that is not one."""
    version = data.get("version")
    if version not in (1, SNAPSHOT_VERSION):
        raise ValueError(
            f"the manifest snapshot is version {version!r:.20}, this reconciler reads version "
            f"{SNAPSHOT_VERSION} (the plan was made by another version of reconciler: plan again)"
        )
    return codec.from_data({k: v for k, v in data.items() if k != "version"}, DesiredSite)
