"""What an apply leaves in the records besides its writes: which recorded digests still
belong to a declared object (``bookkeeping.declared_keys``)."""

from __future__ import annotations

from pathlib import Path

from reconciler.engine.apply.bookkeeping import declared_keys
from reconciler.engine.read.scope import declared_digests
from reconciler.manifest import load_manifest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "site.yaml"


def test_the_declared_keys_are_those_of_every_declared_objects_digest() -> None:
    """The final save drops the recorded digest of every object no longer declared: it
    needs their keys only, and they are exactly the keys of the manifest's digests."""
    desired = load_manifest([str(EXAMPLE)]).desired
    keys = declared_keys(desired)
    assert keys == set(declared_digests(desired))
    assert {k.split(":", 1)[0] for k in keys} == {"workspace", "group"}  # (no users there)
