"""The model's quick maker of user references builds exactly what the constructors build."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from reconciler.model import Source, UserRef, user_ref_at


def test_the_quick_maker_sets_every_field_of_a_reference_and_its_source() -> None:
    # a field added to either class must be added to the maker (and to its callers) too;
    # ``expires`` it sets to None: a reference with an expiry is made by the constructor
    names = [field.name for field in dataclasses.fields(UserRef)]
    names += [field.name for field in dataclasses.fields(Source)]
    assert names == ["text", "source", "expires", "file", "line", "column", "path"]
    assert list(inspect.signature(user_ref_at).parameters) == ["text", *names[3:]]
    assert user_ref_at("alice", "site.yaml", 1, 1, "users[0]").expires is None


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
    assert made == built
    assert hash(made) == hash(built)
    assert repr(made) == repr(built)
    assert (made.source.line, made.source.column, made.kind) == (line, column, built.kind)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.source.line = 1  # type: ignore[misc]
