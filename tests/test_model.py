"""The model's quick makers of user references build exactly what the constructors build."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from reconciler.model import Source, UserRef, user_ref_at, user_refs_at


def test_the_quick_maker_sets_every_field_of_a_reference_and_its_source() -> None:
    # a field added to either class must be added to the maker (and to its callers) too
    names = [field.name for field in dataclasses.fields(UserRef)]
    names += [field.name for field in dataclasses.fields(Source)]
    assert names == ["text", "source", "file", "line", "column", "path"]
    assert list(inspect.signature(user_ref_at).parameters) == ["text", *names[2:]]


@pytest.mark.parametrize(
    ("text", "file", "line", "column", "path"),
    [
        ("alice", "site.yaml", 4, 7, "workspaces[0].users[0]"),
        ("1042", "teams/payments.yaml", 120, 5, "teams[3].members[11]"),
    ],
)
def test_the_quick_maker_equals_the_constructors(
    text: str, file: str, line: int, column: int, path: str
) -> None:
    made = user_ref_at(text, file, line, column, path)
    built = UserRef(text, Source(file, line, column, path))
    assert (type(made), type(made.source)) == (UserRef, Source)
    assert made == built
    assert hash(made) == hash(built)
    assert repr(made) == repr(built)
    assert (made.source.line, made.source.column, made.kind) == (line, column, built.kind)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.source.line = 1  # type: ignore[misc]


def test_the_quick_maker_of_a_list_equals_the_constructors() -> None:
    texts, paths = ["alice", "bob"], ["teams[0].members[0]", "teams[0].members[1]"]
    made = user_refs_at("site.yaml", texts, paths, [(7, 5), (8, 5)])
    assert made == (
        UserRef("alice", Source("site.yaml", 7, 5, "teams[0].members[0]")),
        UserRef("bob", Source("site.yaml", 8, 5, "teams[0].members[1]")),
    )
    assert user_refs_at("site.yaml", [], [], []) == ()
    with pytest.raises(ValueError, match="zip"):
        user_refs_at("site.yaml", texts, paths[:1], [(7, 5), (8, 5)])
