"""The model's one codec: every field of every stored type is written and read back.

The strategies are derived from the type hints (``hypothesis.strategies.from_type``), like the
codec itself: a field added to the model is generated, written, read and compared here without
a change to this file, and a field the codec lost would show as a difference.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler import codec
from reconciler.core.memberships import MembershipChange, Place
from reconciler.core.records import Known, Records
from reconciler.engine.planning.manifest_snapshot import (
    desired_from_data,
    desired_to_data,
    desired_to_data_meanwhile,
)
from reconciler.engine.read.scope import (
    NOT_DECLARED,
    declared_digests,
    digest_of,
    digests_meanwhile,
)
from reconciler.engine.records import document as records_document
from reconciler.errors import StateError
from reconciler.kinds.registry import ACTION_TYPES, action_from_data
from reconciler.kinds.workspace import WorkspaceSpec
from reconciler.kinds.workspace.actions import WorkspaceAdd
from reconciler.model import (
    DesiredGroup,
    DesiredSite,
    DesiredUser,
    DesiredWorkspace,
    Policy,
    Source,
    UserRef,
)

SITE = "https://acme.example.net"


def json_text(data: Any) -> str:
    return json.dumps(data, sort_keys=True)


def through_json(data: Any) -> Any:
    """What a file or a database gives back: the codec's output must survive JSON."""
    return json.loads(json.dumps(data))


def every_field(cls: type[Any], **given: Any) -> st.SearchStrategy[Any]:
    """``cls`` with every field drawn (``builds`` alone leaves defaulted fields alone)."""
    inferred = {f.name: ... for f in dataclasses.fields(cls) if f.name not in given}
    return st.builds(cls, **given, **inferred)


fraction = st.floats(min_value=0, max_value=1)
policies = every_field(
    Policy,
    max_delete_fraction=fraction,
    max_member_removal_fraction=fraction,
    max_user_removal_fraction=fraction,
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(every_field(DesiredSite, policy=policies))
def test_a_saved_plans_manifest_snapshot_keeps_every_field(desired: DesiredSite) -> None:
    again = desired_from_data(through_json(desired_to_data(desired)))
    assert again == desired


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(every_field(DesiredSite, policy=policies))
def test_the_snapshot_an_apply_makes_while_it_reads_is_the_snapshot(desired: DesiredSite) -> None:
    """Made a slice at a time, object by object: the same document, key order included (a
    plan file's bytes and its checksum depend on it)."""
    made = asyncio.run(desired_to_data_meanwhile(desired))
    assert json.dumps(made) == json.dumps(desired_to_data(desired))


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(every_field(DesiredSite, policy=policies))
def test_the_digests_an_apply_makes_while_it_writes_are_the_declared_ones(
    desired: DesiredSite,
) -> None:
    made = asyncio.run(digests_meanwhile(desired))
    assert made == declared_digests(desired)
    assert list(made) == list(declared_digests(desired))


# ``Known[T]`` is generic: a known value of the type it is parametrised with.
st.register_type_strategy(Known, lambda known: st.builds(Known, st.from_type(known.__args__[0])))


def action_strategy(kind: type[Any]) -> st.SearchStrategy[Any]:
    """Each write kind from its type hints; a kind's own rule (a workspace_add names at
    least one workspace, a membership change at least one target) is kept."""
    if kind is WorkspaceAdd:
        names = st.lists(st.text(min_size=1), min_size=1, max_size=3).map(tuple)
        return every_field(kind, names=names)
    if issubclass(kind, MembershipChange):
        targets = st.lists(st.from_type(Place), min_size=1, max_size=3).map(tuple)
        return every_field(kind, targets=targets)
    return every_field(kind)


records_strategy = every_field(
    Records,
    site=st.just(SITE),
    pending=st.lists(
        st.sampled_from(sorted(ACTION_TYPES)).flatmap(
            lambda method: action_strategy(ACTION_TYPES[method])
        ),
        max_size=3,
    ).map(tuple),
    pending_until=st.none() | st.floats(allow_nan=False),  # NaN is never equal to itself
    policy=st.none() | policies,
)


@settings(max_examples=60, deadline=None)
@given(records_strategy)
def test_records_keep_every_field(records: Records) -> None:
    stored = through_json(records_document.to_data(records))
    again = records_document.from_data(stored, site=SITE, where="test")
    assert again == records
    assert json_text(records_document.to_data(again)) == json_text(stored)  # depends_on too


@pytest.mark.parametrize("method", sorted(ACTION_TYPES))
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_every_write_kind_reads_back_as_it_was_written(method: str, data: st.DataObject) -> None:
    action = data.draw(action_strategy(ACTION_TYPES[method]))
    written = action.to_data()
    again = action_from_data(through_json(written))
    assert again == action and again.depends_on == action.depends_on
    assert json_text(again.to_data()) == json_text(written)


@pytest.mark.parametrize(
    ("stored", "said"),
    [
        ({"workspaces": {"Finance": {"id": "12"}}}, "workspaces['Finance'].id"),
        ({"workspaces": {"Finance": {"id": True}}}, "expected a whole number, not True"),
        ({"workspaces": {"Finance": {"id": 12.5}}}, "expected a whole number, not 12.5"),
        ({"groups": {"crew": {"id": 7, "managed": "yes"}}}, "expected true or false"),
        ({"users": {"alice": {}}}, "a required field is missing at users['alice'].id"),
        ({"workspaces": {"Finance": {"id": 12, "origin": "found"}}}, "origin"),
    ],
)
def test_damaged_records_are_refused_saying_where(stored: dict[str, Any], said: str) -> None:
    """Reading is strict: nothing stored is coerced into a different value."""
    document = {"format": 3, "site": SITE, **stored}
    with pytest.raises(StateError) as raised:
        records_document.from_data(document, site=SITE, where="the test records")
    assert said in raised.value.message


def test_the_codec_writes_sets_sorted_and_sequences_as_lists() -> None:
    """Equal values are equal documents: plan checksums and pending writes rely on it."""
    assert codec.to_data(frozenset({3, 1, 2})) == [1, 2, 3]
    assert codec.to_data((1, (2, 3))) == [1, [2, 3]]


def _each_changed(declared: Any, name: str, value: Any, hint: str) -> list[tuple[str, Any]]:
    """``declared`` with its field ``name`` changed -- a spec (a workspace's settings) field by
    field, each a setting of its own."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [
            (
                f"{name}.{inner.name}",
                dataclasses.replace(
                    declared,
                    **{
                        name: dataclasses.replace(
                            value,
                            **{
                                inner.name: other_value(getattr(value, inner.name), str(inner.type))
                            },
                        )
                    },
                ),
            )
            for inner in dataclasses.fields(value)
        ]
    return [(name, dataclasses.replace(declared, **{name: other_value(value, hint)}))]


def other_value(value: Any, hint: str) -> Any:
    """A value of the same type (``hint``, as written in the model) that a manifest would
    mean differently."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, str):
        return value + "-other"
    if value is None and "date" in hint:
        return datetime.date(2026, 12, 31)  # an expiry
    if value is None:
        return "other" if "str" in hint else frozenset({"other"})  # a text, or an override
    if isinstance(value, frozenset):
        return value | {"other"}
    if isinstance(value, tuple):
        return (*value, UserRef("someone-else", Source("other.yaml")))
    raise AssertionError(f"no other value for {value!r}")


@pytest.mark.parametrize(
    "declared",
    [
        DesiredWorkspace(
            "Finance",
            WorkspaceSpec(False, None, frozenset({"upload_files"})),
            (),
            Source("a.yaml"),
        ),
        DesiredGroup("crew", (UserRef("alice", Source("a.yaml")),), Source("a.yaml")),
        DesiredUser("nina", "nina@acme.example", Source("a.yaml")),
    ],
    ids=lambda declared: type(declared).__name__,
)
def test_every_declared_field_counts_in_a_change_scoped_plans_digest(declared: Any) -> None:
    """``plan --changed`` finds changed objects by digest: a field the digest left out would
    be a change the scoped plan never makes. Every field of the model counts (a new field
    too, since this test walks the dataclass), except which object it is and where."""
    checked = []
    for field in dataclasses.fields(declared):
        if field.name in NOT_DECLARED:
            continue
        value = getattr(declared, field.name)
        for name, changed in _each_changed(declared, field.name, value, str(field.type)):
            assert digest_of(changed) != digest_of(declared), name
            checked.append(name)
    assert checked
    moved = dataclasses.replace(declared, source=Source("elsewhere.yaml", 9))
    assert digest_of(moved) == digest_of(declared)


def test_a_holder_of_a_spec_replaced_by_one_setting_keeps_the_others() -> None:
    """``dataclasses.replace(ws, root_access=...)`` passes the spec and the one setting: the
    others stay as they were (they were reset to the spec's defaults)."""
    ws = DesiredWorkspace(
        "Finance", WorkspaceSpec(False, frozenset({"upload_files"}), None), (), Source("a.yaml")
    )
    changed = dataclasses.replace(ws, root_access=True)  # type: ignore[call-arg]
    assert changed.settings == WorkspaceSpec(True, frozenset({"upload_files"}), None)
