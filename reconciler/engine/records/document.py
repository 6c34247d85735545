"""The records as the state backend stores them: one JSON document, written and read by the
model's one codec (``reconciler.codec``).

Apart from ``core/records.py`` because of the writes of unknown outcome the records keep:
they are the write actions themselves, and reading one back takes the registry of write kinds
(``kinds/*/actions.py``), whose actions fold into the records and so import them. A stored write
this version cannot read (a newer version's write kind) does not make the records unreadable:
it is kept as it was stored (``UnreadableWrite``), written back unchanged, and reported when
pending writes are settled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from reconciler import codec
from reconciler.core.actions import MalformedAction
from reconciler.core.records import MAX_APPLIED_PLANS, PendingWrite, Records, UnreadableWrite
from reconciler.engine.records.formats import upgraded
from reconciler.errors import StateError
from reconciler.kinds.registry import action_from_data

RECORDS_FORMAT = 3
"""Format 3 is the model as the codec writes it; formats 1 and 2 are read and upgraded
(``engine/records/formats.py``)."""


def to_data(records: Records) -> dict[str, Any]:
    """The records as the state backend stores them (one JSON document)."""
    kept = replace(records, applied_plans=records.applied_plans[-MAX_APPLIED_PLANS:])
    data: dict[str, Any] = {"format": RECORDS_FORMAT, **codec.to_data(kept)}
    # absent unless set: older readers agree
    for optional in ("moved_to", "last_drift", "pending_until"):
        if data[optional] is None:
            del data[optional]
    if not data["plan_runs"]:
        del data["plan_runs"]
    return data


def from_data(data: object, *, site: str, where: str) -> Records:
    """Records as stored; a document that is damaged in any way is a ``StateError``."""
    if data is None:
        return Records(site)
    try:
        return _records_from(data, site)
    except (ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
        raise StateError(
            f"The records of {site} in {where} are damaged: {_reason(exc)}.",
            hint="Restore an earlier version (`reconciler state history`, then "
            "`reconciler state show --version N`), or move the records away and run "
            "`reconciler adopt` to record the site's objects again.",
        ) from None


def _reason(exc: BaseException) -> str:
    text = str(exc).strip("'\"") or type(exc).__name__
    return text[:200]


def _records_from(data: object, site: str) -> Records:
    if not isinstance(data, Mapping):
        raise TypeError("the document is not a mapping")
    version = data.get("format")
    if version in (1, 2):
        data = upgraded(data, version)
    elif version != RECORDS_FORMAT:
        raise ValueError(f"unknown records format {version!r:.40}")
    stored_site = data.get("site")
    if stored_site != site:
        raise ValueError(f"they are the records of {stored_site!r:.200}, not of this site")
    return codec.from_data({k: v for k, v in data.items() if k != "format"}, Records)


def _pending_write_from(data: Any) -> PendingWrite:
    """A stored pending write: the action it describes, else the entry as stored and why it
    cannot be read. An entry that is no object at all is damage, not another version's."""
    if not isinstance(data, Mapping) or not all(isinstance(key, str) for key in data):
        raise TypeError(f"a pending write must be an object, not {data!r:.40}")
    try:
        return action_from_data(data)
    except MalformedAction as exc:
        return UnreadableWrite(dict(data), str(exc))


codec.hook(PendingWrite, lambda write: write.to_data(), _pending_write_from)
