"""Every list of user references, read once: what the rules find in it, and its ``UserRef``s.

A workspace's ``users`` and a group's or team's ``members`` name site users by username,
e-mail address or ID; a manifest of 1,000 workspaces holds some 17,000 of them. The rules
check each one (a reference that could never name a user as written, a user ID that YAML
read as another number, a user listed twice) and the desired site holds each with the
place it was written. Both need the same path and place of every reference, so one reading
serves both: the rules take its findings (``rules.py``), the normalisation its references
(``normalise.py``), where each used to walk all of them on its own. A list with nothing to
report, nearly every one, is made into references in one go (``_CleanTexts``); any other is
walked item by item (``_read_list``), where the findings are made. So is a list with a
time-limited entry (``{user: bob, expires: 2026-12-31}``): its reference is ``user``, and
the day its access ends (``UserRef.expires``) is checked to be one of the calendar.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from reconciler.clock import BadDay, parse_day
from reconciler.findings import Finding
from reconciler.identity import username_key
from reconciler.manifest.compose import Position
from reconciler.manifest.merge import Entry, MergedManifest
from reconciler.manifest.names import reference_problem
from reconciler.manifest.paths import child
from reconciler.manifest.values import ListPlaces
from reconciler.model import Source, UserRef, user_ref_at, user_refs_at

ListKey = tuple[int, str]
"""A list of references: the identity of its document and its path there."""


@dataclass(frozen=True, slots=True)
class UserReferences:
    """The references of every list, by list, and the rules' findings about them."""

    lists: dict[ListKey, tuple[UserRef, ...]]
    findings: list[Finding]

    def of(self, entry: Entry, key: str) -> tuple[UserRef, ...]:
        """The references in ``entry``'s list at ``key``: those without a schema error, in
        the order written (none when there is no such list)."""
        return self.lists.get((id(entry.document), child(entry.path, key)), ())


def user_lists(manifest: MergedManifest) -> Iterator[tuple[Entry, str, str]]:
    """Every list of user references: (entry, key, what the list belongs to)."""
    for entry in manifest.workspaces:
        yield entry, "users", "workspace"
    for entry in manifest.groups:
        yield entry, "members", "group"
    for entry in manifest.teams:
        yield entry, "members", "team"


def read_references(manifest: MergedManifest) -> UserReferences:
    """Each list's references with their places, and every finding about them, in order."""
    references = UserReferences({}, [])
    lists = [
        (entry, key, owner, child(entry.path, key)) for entry, key, owner in user_lists(manifest)
    ]
    wholes = [_whole(entry, key, list_path) for entry, key, _, list_path in lists]
    clean = _CleanTexts([whole[0] for whole in wholes if whole is not None])
    checked: dict[str, tuple[str | None, str]] = {}  # 17,000 references may name 5,000 users
    for (entry, key, owner, list_path), whole in zip(lists, wholes, strict=True):
        refs = None if whole is None else clean.refs(entry.document.file, list_path, *whole)
        if refs is None:
            refs = _read_list(entry, key, list_path, owner, checked, references.findings)
        references.lists[(id(entry.document), list_path)] = refs
    return references


class _CleanTexts:
    """Whether a whole list (``_whole``) holds nothing to report, asked of all its items at
    once: every reference a text the rules accept, none listed twice. Such a list, nearly
    every one, is made into references without the item-by-item walk of ``_read_list``."""

    def __init__(self, values: list[list[Any]]) -> None:
        every: set[Any] = set()
        for items in values:
            every.update(items)  # whole lists hold texts and numbers only (the schema's)
        self.odd: set[Any] = set()
        """Numbers, texts that are no valid reference, and texts one of which another text
        names too ("Alice", "alice"): with none of them, a list names a user twice only by
        writing the same text twice."""
        named: dict[str, str] = {}
        for value in every:
            if type(value) is not str or reference_problem(value) is not None:
                self.odd.add(value)
                continue
            other = named.setdefault(username_key(value), value)
            if other != value:
                self.odd.update((value, other))

    def refs(
        self, file: str, list_path: str, values: list[Any], places: ListPlaces
    ) -> tuple[UserRef, ...] | None:
        """The list's references, or None when it needs the walk (something to report)."""
        if self.odd and not self.odd.isdisjoint(values):
            return None
        if len(set(values)) != len(values):
            return None  # a user listed twice
        paths = [f"{list_path}[{index}]" for index in range(len(values))]
        return user_refs_at(file, values, paths, places)


def _read_list(
    entry: Entry,
    key: str,
    list_path: str,
    owner: str,
    checked: dict[str, tuple[str | None, str]],
    findings: list[Finding],
) -> tuple[UserRef, ...]:
    """One list's references; its findings are added to ``findings``. ``checked`` holds each
    text's problem (None when it has none) and identity, as both are asked once per text."""
    document = entry.document
    file, odd_numbers = document.file, document.odd_numbers
    first_index: dict[str, int] = {}
    refs: list[UserRef] = []
    for index, item, path, position in _places(entry, key, list_path):
        ref, ref_path = (item["user"], f"{path}.user") if type(item) is dict else (item, path)
        text = ref if isinstance(ref, str) else str(ref)
        if position is not None:
            user_ref = user_ref_at(text, file, position[0], position[1], path)
        else:
            user_ref = UserRef(text, document.source(path))
        if type(item) is dict:
            user_ref = _timed(user_ref, item, path, document.source, findings)
        refs.append(user_ref)
        if odd_numbers:
            odd = odd_numbers.get(ref_path)
            if odd is not None:
                findings.append(
                    Finding.error(
                        f"the user ID {odd} is read by YAML as the number {ref}",
                        user_ref.source,
                        f"write the ID as plain digits, or in quotes: '{odd}'",
                    )
                )
        known = checked.get(text)
        if known is None:
            known = checked[text] = (reference_problem(text), username_key(text))
        problem, identity = known
        if problem is not None and isinstance(ref, str):
            findings.append(
                Finding.error(
                    f"the user reference {ref!r} {problem}",
                    user_ref.source,
                    "write the username, e-mail address or ID exactly, with nothing around it",
                )
            )
            continue
        first = first_index.setdefault(identity, index)
        if first != index:
            findings.append(
                Finding.warning(
                    f"{ref!r} is listed twice in this {owner} (first as {key}[{first}])",
                    user_ref.source,
                    "remove one of them",
                )
            )
    return tuple(refs)


def _timed(
    ref: UserRef,
    item: dict[str, Any],
    path: str,
    source: Callable[[str], Source],
    findings: list[Finding],
) -> UserRef:
    """``ref`` with the day its access ends (a time-limited entry); a day no calendar has is
    an error at ``expires`` (the schema checked its shape)."""
    try:
        return replace(ref, expires=parse_day(item["expires"]))
    except BadDay as exc:
        findings.append(
            Finding.error(
                f"the expiry date {exc}",
                source(f"{path}.expires"),
                "write the day the access ends as YYYY-MM-DD, e.g. 2026-12-31",
            )
        )
        return ref


def _whole(entry: Entry, key: str, list_path: str) -> tuple[list[Any], ListPlaces] | None:
    """The list at ``key`` and where its items were written, when all of it can be read at
    once: no schema error at or under it, no time-limited entry, and the builder's record of
    it (``Document.lists``) is of these values. A document with a number YAML read otherwise
    (``odd_numbers``) is read item by item, where that is reported."""
    values = entry.value.get(key)
    document = entry.document
    if not isinstance(values, list) or document.odd_numbers or not document.usable(list_path):
        return None
    if any(type(value) is dict for value in values):
        return None
    places = document.lists.get(list_path)
    if places is None or len(places) != len(values):
        return None
    return values, places


def _places(
    entry: Entry, key: str, list_path: str
) -> Iterator[tuple[int, Any, str, Position | None]]:
    """The usable items of the list at ``key`` (``Entry.items``), each with its path and
    where it was written (``Document.position``; ``Document.source`` then walks up for an
    item that nobody wrote)."""
    document = entry.document
    for index, value in entry.items(key):
        path = f"{list_path}[{index}]"
        yield index, value, path, document.position(path)
