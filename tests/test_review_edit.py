"""Items taken out of a YAML list in place (``review/yaml_edit.py``): the item, its comma or
its line go, nothing else; what cannot be done so is refused, and then nothing changes."""

from __future__ import annotations

import pytest

from reconciler.review.yaml_edit import EditRefused, remove_items

CASES = [
    # (text, path, indexes, expected)
    ("a: [x, y, z]\n", "a", {1}, "a: [x, z]\n"),
    ("a: [x, y, z]\n", "a", {2}, "a: [x, y]\n"),
    ("a: [x, y, z]\n", "a", {0, 2}, "a: [y]\n"),
    ("a: [x]  # only\n", "a", {0}, "a: []  # only\n"),
    ("a: [x,\n    y,\n    z]\n", "a", {1}, "a: [x,\n    z]\n"),
    ("a: [x, y,\n    z]\n", "a", {1}, "a: [x,\n    z]\n"),
    ("a:\n  - x  # one\n  - y  # two\n", "a", {0}, "a:\n  - y  # two\n"),
    ("a:\n- x\n- y\n", "a", {1}, "a:\n- x\n"),
    ("a:  # the list\n  - x   # gone\nb: 1\n", "a", {0}, "a: []  # the list\nb: 1\n"),
    ("a:\r\n  - x\r\n  - 'y'\r\n", "a", {1}, "a:\r\n  - x\r\n"),
    (
        'w:\n  - name: A\n    users: ["1042", bob]\n',
        "w[0].users",
        {0},
        "w:\n  - name: A\n    users: [bob]\n",
    ),
    ("a: [x, &k y]\nb: [z]\n", "a", {1}, "a: [x]\nb: [z]\n"),  # an anchor no alias uses
    ("k: &k y\na: [x, *k]\n", "a", {1}, "k: &k y\na: [x]\n"),  # an alias: this use of it goes
    # an item that is itself a mapping or a list (a time-limited entry, a users: entry)
    ("a: [x, {y: 1}]\n", "a", {0}, "a: [{y: 1}]\n"),
    ("a: [x, {user: b, expires: 2026-12-31}, z]\n", "a", {1}, "a: [x, z]\n"),
    ("a:\n  - x\n  - - z\n", "a", {0}, "a:\n  - - z\n"),
    (
        "a:\n  - x\n  - {user: b, expires: 2026-12-31}  # why\n  - z\n",
        "a",
        {1},
        "a:\n  - x\n  - z\n",
    ),
    (
        "users:\n  - username: q  # the contractor\n    email: q@x\n    expires: 2026-12-31\n"
        "  # the staff\n  - username: r\n    email: r@x\n",
        "users",
        {0},
        "users:\n  # the staff\n  - username: r\n    email: r@x\n",
    ),
    ("a:\n  - u: 1\n    e: [1,\n      2]\nb: 1\n", "a", {0}, "a: []\nb: 1\n"),
]


@pytest.mark.parametrize(("text", "path", "indexes", "expected"), CASES)
def test_only_the_items_go(text: str, path: str, indexes: set[int], expected: str) -> None:
    assert remove_items(text, path, indexes) == expected


REFUSED = [
    ("a: &team [x, y]\nb: *team\n", "a", 0, "shared through the YAML anchor &team"),
    ("a: &team [x, y]\nb: *team\n", "b", 0, "an alias (*team) of a list written elsewhere"),
    (
        "base: &ws {users: [x]}\nw: {<<: *ws}\n",
        "base.users",
        0,
        "shared through the YAML anchor &ws",
    ),
    ("w: {<<: {users: [x]}}\n", "w.users", 0, "w.users is not written"),
    ("a: [&k x, y]\nb: *k\n", "a", 0, "carries the anchor &k, used elsewhere"),
    ("a: [x, # why\n  y]\n", "a", 1, "a comment sits between the last two items"),
    ("a: [x, {u: &b bob}]\nb: *b\n", "a", 1, "would change more than that list"),
    ("a: [x, y] # ok\n", "a.b", 0, "a.b is not written"),
]


@pytest.mark.parametrize(("text", "path", "index", "why"), REFUSED)
def test_what_cannot_be_edited_in_place_is_refused(
    text: str, path: str, index: int, why: str
) -> None:
    with pytest.raises(EditRefused) as refused:
        remove_items(text, path, {index})
    assert why in str(refused.value)
