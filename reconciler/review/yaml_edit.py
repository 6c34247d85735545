"""Take items out of a list in a YAML file a person wrote, and change nothing else.

Why not a round-trip library: dumping a document again re-flows it. ruamel.yaml, the usual
choice, turns ``permissions: null`` into ``permissions:``, joins a flow list written over two
lines into one and moves end-of-line comments to other columns -- in this repository's own
``examples/site.yaml``. A person who reviews the pull request must see one line go, not a file
rewritten. So the edit is made in the text: libyaml's event stream (the parser the manifest
loader uses) says where each item of each list starts and ends, and only those characters go:

* a block list (``- alice``): the item's line, its end-of-line comment with it; comment
  lines around it stay. Its last item leaves ``users: []``, never an empty value (null). An
  item that is a mapping (``- {user: bob, expires: 2026-12-31}``, or a ``users:`` entry
  written over several lines) takes its lines with it.
* a flow list (``[alice, bob]``): the item and its comma; a line it had to itself goes.

Then the edited text is parsed again and must equal the document with those items removed,
and nothing else changed -- otherwise nothing is written (``EditRefused``). A list shared
through a YAML anchor (``&team`` used as ``*team`` elsewhere), a list that is itself an alias,
and an item that carries an anchor used elsewhere are never edited: removing one person there
would change other places. The caller names them for a person to edit.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from reconciler.manifest.compose import Loader


class EditRefused(Exception):
    """The list cannot be edited in place without changing something else; says why."""


@dataclass(slots=True)
class Item:
    """One item of a list, as written: where its text starts and ends (a mapping's or a
    list's: its last value's end, or its closing bracket's)."""

    start: int
    end: int
    value: str | None  # the scalar's text; None for an alias or a collection
    anchor: str | None


@dataclass(slots=True)
class WrittenList:
    """A list as written at a path of the document (``workspaces[0].users``)."""

    flow: bool
    key_end: int | None  # just after the key that holds it, when a mapping's value
    anchors: list[str] = field(default_factory=list)  # on it and the collections around it
    items: list[Item] = field(default_factory=list)  # its items: scalars, aliases, collections
    count: int = 0  # its items as the parser counted them: as many as ``items``


@dataclass(frozen=True, slots=True)
class Layout:
    """Every list of a document by path, what is written as an alias, and which anchors are
    used by an alias somewhere."""

    lists: dict[str, WrittenList]
    aliases: dict[str, str]  # path -> the anchor the alias names
    used: frozenset[str]


def child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


@dataclass(slots=True)
class _Open:
    """A collection being read: its path, the anchors on it and around it, and where in it
    the parser is (a mapping's pending key; a list's next index)."""

    mapping: bool
    path: str
    anchors: list[str]
    index: int = 0
    key: str | None = None
    item: Item | None = None  # the list item this collection is, when it is one
    flow: bool = False  # written in brackets: it ends where its closing bracket does


@dataclass(slots=True)
class _Walk:
    """One pass over the event stream, building a ``Layout``."""

    lists: dict[str, WrittenList] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    key_ends: dict[str, int] = field(default_factory=dict)
    stack: list[_Open] = field(default_factory=list)

    def place(self) -> str | None:
        """The path of the value starting now; None under a key that is not text."""
        if not self.stack:
            return ""
        top = self.stack[-1]
        if top.mapping:
            return None if top.key is None else child(top.path, top.key)
        return f"{top.path}[{top.index}]"

    def advance(self) -> None:
        if self.stack:
            top = self.stack[-1]
            top.key, top.index = None, top.index + (not top.mapping)

    def open(self, event: yaml.CollectionStartEvent) -> None:
        path = self.place()
        top = self.stack[-1] if self.stack else None
        around = top.anchors if top else []
        anchors = [*around, *([event.anchor] if event.anchor else [])]
        if isinstance(event, yaml.SequenceStartEvent) and path is not None:
            self.lists[path] = WrittenList(bool(event.flow_style), self.key_ends.get(path), anchors)
        item = None
        if top is not None and not top.mapping and top.path in self.lists:
            start, end = _span(event)
            item = Item(start, end, None, event.anchor)
            self.lists[top.path].items.append(item)
        mapping = isinstance(event, yaml.MappingStartEvent)
        opened = _Open(mapping, "?" if path is None else path, anchors, item=item)
        opened.flow = bool(event.flow_style)
        self.stack.append(opened)

    def close(self, event: yaml.CollectionEndEvent) -> None:
        if self.stack[-1].flow:  # a block collection's end event is where the next token is
            self.reach(_span(event)[1])
        closed = self.stack.pop()
        if not closed.mapping and closed.path in self.lists:
            self.lists[closed.path].count = closed.index
        self.advance()

    def reach(self, end: int) -> None:
        """The collections being read that are list items reach at least ``end``."""
        for opened in self.stack:
            if opened.item is not None and end > opened.item.end:
                opened.item.end = end

    def leaf(self, event: yaml.ScalarEvent | yaml.AliasEvent) -> None:
        start, end = _span(event)
        self.reach(end)
        alias = event.anchor if isinstance(event, yaml.AliasEvent) else None
        if alias is not None:
            self.used.add(alias)
        top = self.stack[-1] if self.stack else None
        if top is not None and top.mapping and top.key is None:  # a key
            top.key = event.value if isinstance(event, yaml.ScalarEvent) else "?"
            self.key_ends[child(top.path, top.key)] = end
            return
        path = self.place()
        if top is not None and not top.mapping and top.path in self.lists:
            if isinstance(event, yaml.ScalarEvent):
                item = Item(start, end, event.value, event.anchor)
            else:
                item = Item(start, end, None, None)
            self.lists[top.path].items.append(item)
        if alias is not None and path is not None:
            self.aliases[path] = alias
        self.advance()


def _span(event: yaml.Event) -> tuple[int, int]:
    assert event.start_mark is not None and event.end_mark is not None  # the parser sets both
    return event.start_mark.index, event.end_mark.index


def layout(text: str) -> Layout:
    """Where every list of ``text`` is written (paths as the manifest loader names them)."""
    walk = _Walk()
    for event in yaml.parse(text, Loader=Loader):
        if isinstance(event, yaml.CollectionStartEvent):
            walk.open(event)
        elif isinstance(event, yaml.CollectionEndEvent):
            walk.close(event)
        elif isinstance(event, yaml.ScalarEvent | yaml.AliasEvent):
            walk.leaf(event)
    return Layout(walk.lists, walk.aliases, frozenset(walk.used))


def shared_by(found: Layout, path: str) -> str | None:
    """The anchor through which the list at ``path`` is written elsewhere too, if any."""
    if path in found.aliases:
        return found.aliases[path]
    written = found.lists.get(path)
    if written is None:
        return None
    return next((a for a in written.anchors if a in found.used), None)


def remove_items(text: str, path: str, indexes: set[int]) -> str:
    """``text`` without the items at ``indexes`` of the list at ``path``; ``EditRefused``
    when that cannot be done in place (module doc), and then nothing is changed."""
    before = yaml.load(text, Loader=Loader)
    edited = text
    for index in sorted(indexes, reverse=True):
        edited = _remove_one(edited, path, index)
    expected = copy.deepcopy(before)
    target = _at(expected, path)
    for index in sorted(indexes, reverse=True):
        del target[index]
    try:
        changed = yaml.load(edited, Loader=Loader) != expected
    except yaml.YAMLError:  # an anchor that went with the item, its alias left behind
        changed = True
    if changed:
        raise EditRefused(f"removing it from {path} would change more than that list")
    return edited


def _remove_one(text: str, path: str, index: int) -> str:
    found = layout(text)
    written = found.lists.get(path)
    if written is None:
        anchor = found.aliases.get(path)
        why = f"an alias (*{anchor}) of a list written elsewhere" if anchor else "not written"
        raise EditRefused(f"{path} is {why}")
    anchor = shared_by(found, path)
    if anchor is not None:
        raise EditRefused(f"{path} is shared through the YAML anchor &{anchor}")
    item = written.items[index]
    if item.anchor is not None and item.anchor in found.used:
        raise EditRefused(f"{path}[{index}] carries the anchor &{item.anchor}, used elsewhere")
    if written.flow:
        return _cut_flow(text, written.items, index)
    return _cut_block(text, written, index)


def _cut_flow(text: str, items: list[Item], index: int) -> str:
    item = items[index]
    if len(items) == 1:
        return text[: item.start] + text[item.end :]
    if index == len(items) - 1:  # the last: its comma is before it
        between = text[items[index - 1].end : item.start]
        if "#" in between:
            raise EditRefused("a comment sits between the last two items of the list")
        return text[: items[index - 1].end] + text[item.end :]
    after = re.match(r"[ \t]*,[ \t]*", text[item.end :])
    if after is None:
        raise EditRefused("the item is not followed by its comma")
    end = item.end + after.end()
    line_start = text.rfind("\n", 0, item.start) + 1
    line_end = _line_end(text, end)
    if not text[end:line_end].strip():  # the item ends its line
        if not text[line_start : item.start].strip():
            return text[:line_start] + text[line_end + 1 :]  # it had its line to itself
        start = len(text[: item.start].rstrip(" \t"))
        return text[:start] + text[line_end:]  # "ivan, judy,\n" -> "ivan,\n"
    return text[: item.start] + text[end:]


_DASH = re.compile(r"[ \t]*-[ \t]+\Z")
_REST = re.compile(r"[ \t]*(#[^\n]*)?\r?\Z")


def _cut_block(text: str, written: WrittenList, index: int) -> str:
    item = written.items[index]
    line_start = text.rfind("\n", 0, item.start) + 1
    line_end = _line_end(text, item.end)
    if not _DASH.match(text[line_start : item.start]) or not _REST.match(text[item.end : line_end]):
        raise EditRefused("the item does not have its line to itself")
    cut = text[:line_start] + text[line_end + 1 :]
    if len(written.items) > 1:
        return cut
    if written.key_end is None:
        raise EditRefused("the list's only item cannot go: the list has no key to write [] at")
    colon = re.match(r"[ \t]*:", text[written.key_end :])
    if colon is None:
        raise EditRefused("the list's key is not followed by its colon")
    at = written.key_end + colon.end()
    return cut[:at] + " []" + cut[at:]  # the key's line comes before the item's


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _at(data: Any, path: str) -> Any:
    for key, index in _STEP.findall(path):
        data = data[int(index)] if index else data[key]
    return data
