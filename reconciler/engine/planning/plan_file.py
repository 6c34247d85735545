"""Saved plans: sealed with the site's plan key, so that only a plan the tool made is applied.

A plain checksum proves nothing: anyone can edit a plan file and recompute it. A plan file is
therefore sealed with an HMAC over its canonical content, keyed by a per-site secret that lives
with the records (in the state backend; never in a plan or a repository). Only someone with
access to the records can make a plan that ``apply`` accepts; a plan made against *other*
records (a runner with its own empty state directory) carries another key's ID and is refused
with a message that says so.

Reading is in two steps: ``read_plan_file`` parses the file far enough to say which site and
which records it was made for (so the right backend can be opened); ``unseal`` checks the seal
with that backend's key and returns the typed plan. Both refuse with exit 3.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconciler import bounded_json
from reconciler.core.actions import MalformedAction
from reconciler.engine.planning.plan import PLAN_FORMAT, PLAN_FORMAT_VERSION, Plan, canonical
from reconciler.errors import ReconcilerError, RefusedForSafety

SAVE_HINT = "Make the plan again with `reconciler plan MANIFEST -o PLAN.json`, and do not edit it."


def key_id(key: bytes) -> str:
    """A name for a plan key that reveals nothing of it: which records made a plan."""
    return hmac.new(key, b"site-reconciler plan key id", hashlib.sha256).hexdigest()[:16]


def _mac(key: bytes, data: dict[str, Any]) -> str:
    return hmac.new(key, canonical(data), hashlib.sha256).hexdigest()


def seal(plan: Plan, key: bytes) -> str:
    """The plan file's text: the plan's data, its checksum and the seal over both."""
    body = {**plan.data, "checksum": plan.checksum}
    body["seal"] = {"key_id": key_id(key), "mac": _mac(key, body)}
    return json.dumps(body, indent=1, ensure_ascii=False) + "\n"


@dataclass(frozen=True, slots=True)
class PlanFile:
    """A plan file read but not yet trusted: enough to find its site and records."""

    origin: str
    body: dict[str, Any]

    @property
    def site(self) -> str:
        return str(self.body.get("site", ""))

    @property
    def state(self) -> str | None:
        state = self.body.get("state")
        return state if isinstance(state, str) else None

    @property
    def manifest_files(self) -> tuple[str, ...]:
        manifest = self.body.get("manifest")
        files = manifest.get("files") if isinstance(manifest, dict) else None
        return tuple(str(f) for f in files) if isinstance(files, list) else ()


MAX_PLAN_BYTES = 256 * 2**20
"""The largest plan file read. A plan of the 50,000-user, 10,000-workspace site, its manifest
snapshot and fingerprints included, is some tens of MiB; past this, a file is not a plan."""

MAX_PLAN_DEPTH = 32
"""The deepest nesting of a plan file: it nests 7 levels at most (a manifest snapshot's
workspace's flags). JSON nested some thousands deep would exhaust the stack while read."""


def read_plan_path(path: Path) -> PlanFile:
    """The plan file at ``path``, read within ``MAX_PLAN_BYTES``; refused as ``read_plan_file``
    refuses, exit 3."""
    try:
        text = bounded_json.read_text(path, MAX_PLAN_BYTES, "a plan file")
    except bounded_json.OutOfBounds as exc:
        raise RefusedForSafety(str(exc), hint=SAVE_HINT) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReconcilerError(f"Cannot read the plan file {path}: {exc}.") from None
    return read_plan_file(text, str(path))


def read_plan_file(text: str, origin: str) -> PlanFile:
    """Parse a plan file; refuse what is not one (exit 3: applying it could surprise)."""
    try:
        body = bounded_json.loads(text, MAX_PLAN_DEPTH, origin, "a plan file")
    except bounded_json.OutOfBounds as exc:
        raise RefusedForSafety(str(exc), hint=SAVE_HINT) from None
    except ValueError as exc:
        raise RefusedForSafety(
            f"{origin} is not a plan file: it is not valid JSON ({exc}).", hint=SAVE_HINT
        ) from None
    if not isinstance(body, dict) or body.get("format") != PLAN_FORMAT:
        raise RefusedForSafety(f"{origin} is not a site-reconciler plan file.", hint=SAVE_HINT)
    if body.get("format_version") != PLAN_FORMAT_VERSION:
        raise RefusedForSafety(
            f"{origin} was saved in plan format version {body.get('format_version')!r:.20}; "
            f"this reconciler applies version {PLAN_FORMAT_VERSION}.",
            hint="Make the plan again with this version of the tool.",
        )
    return PlanFile(origin, body)


def unseal(plan_file: PlanFile, key: bytes, records_location: str) -> Plan:
    """The typed plan, once its seal proves it was made with these records and not edited."""
    body = dict(plan_file.body)
    stamp = body.pop("seal", None)
    origin = plan_file.origin
    if not isinstance(stamp, dict) or not isinstance(stamp.get("mac"), str):
        raise RefusedForSafety(
            f"{origin} carries no seal, so it cannot be trusted.", hint=SAVE_HINT
        )
    if stamp.get("key_id") != key_id(key):
        raise RefusedForSafety(
            f"{origin} was made against other records than {records_location}, or with "
            "another plan key: its seal is from another key, so this runner cannot trust it.",
            hint="Point the tool at the records the plan was made with: --state URL (or "
            "RECONCILER_STATE), and give plan and apply the same RECONCILER_PLAN_KEY; or make "
            "the plan again here.",
        )
    if not hmac.compare_digest(stamp["mac"], _mac(key, body)):
        raise RefusedForSafety(
            f"{origin} was changed after it was saved: its seal does not match.", hint=SAVE_HINT
        )
    checksum = body.pop("checksum", None)
    try:
        plan = Plan.from_data(body)
    except (KeyError, TypeError, ValueError, MalformedAction) as exc:
        raise RefusedForSafety(f"{origin} is damaged ({exc}).", hint=SAVE_HINT) from None
    if checksum != plan.checksum:
        raise RefusedForSafety(f"{origin} does not hold what its checksum says.", hint=SAVE_HINT)
    return plan
