"""Compose a YAML node tree from libyaml's event stream, refusing hostile shapes early.

Why not ``yaml.compose``: libyaml's C composer recurses on the C stack, so a file of a million
``[`` crashes the interpreter with a segfault — no exception to catch. The event parser is
iterative, and composing the nodes here costs about the same, so the limits are ours:

* nesting deeper than ``MAX_DEPTH`` stops at the first level too many;
* aliases may add at most ``MAX_ALIAS_EXPANSION`` values to the document. Each node knows the
  size and height it expands to, so a "billion laughs" document is refused at the alias that
  crosses the budget, long before anything is expanded;
* a file may hold at most ``MAX_VALUES`` values, counted as they arrive;
* an alias to a collection that contains it (a recursive alias) is refused.

Only the standard safe resolver tags scalars; nothing is ever constructed from a tag.

The nodes are this module's own rather than PyYAML's: a 1,000-workspace manifest has some
20,000 scalars, and a node that holds only what ``source`` reads (the resolved tag, the
value or the children, the line and column where it starts) halves the cost of composing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import yaml
from yaml.events import (
    AliasEvent,
    CollectionStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode

MAX_DEPTH = 64
"""Levels of nested lists and mappings; a manifest needs five."""

MAX_ALIAS_EXPANSION = 100_000
"""Values that aliases may add to a document in all (a realistic manifest adds hundreds)."""

MAX_VALUES = 250_000
"""Values in one file, aliases expanded. 1,000 workspaces of 20 users are about 25,000; the
cap keeps a flat 20 MiB list (7 million values) from taking minutes and gigabytes."""

Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's parser when PyYAML was built with it (about ten times faster), else PyYAML's."""

OFFSETS_IN_BYTES = Loader is not yaml.SafeLoader
"""libyaml reports a reader error's position in bytes, PyYAML's reader in characters."""

STR_TAG = "tag:yaml.org,2002:str"
MAP_TAG = "tag:yaml.org,2002:map"
SEQ_TAG = "tag:yaml.org,2002:seq"

_RESOLVER_STARTS = frozenset(Loader.yaml_implicit_resolvers) - {None}
"""The resolver files its patterns (int, bool, null, ...) by the first character of the plain
scalars they may match; a plain scalar starting with any other character is a string, which
spares the resolver most names and usernames."""

_ANY_START_RESOLVES = None in Loader.yaml_implicit_resolvers
"""A pattern filed under None applies whatever the first character (the safe resolver has none)."""


Position = tuple[int, int]
"""Where a node starts: 1-based line and column. Kept rather than the parser's mark, which
the garbage collector would go on scanning, as it would every node holding one: a tuple of
two numbers (and a scalar holding only text and one) leaves its watch at its first pass."""


def position_of(mark: Any) -> Position:
    """The position of a mark (libyaml's marks duck-type PyYAML's; both count from 0)."""
    return mark.line + 1, mark.column + 1


class Scalar(NamedTuple):
    """A scalar: its resolved tag, its text as written, and where it starts."""

    tag: str
    value: str
    position: Position


_new_scalar = tuple.__new__
"""``_new_scalar(Scalar, (tag, value, position))``: a ``Scalar`` without the NamedTuple's
constructor, a Python function, at some 20,000 scalars a manifest."""


class Collection:
    """A sequence or a mapping; a mapping's ``items`` alternate key and value (see ``pairs``).

    ``size`` (values it expands to, itself included) and ``height`` (levels of nesting) grow
    while it is open (its scalars are counted into ``size`` when it closes); an alias of it
    adds them to the document.
    """

    __slots__ = ("anchor", "height", "items", "mapping", "position", "size", "tag")

    def __init__(self, mapping: bool, tag: str, position: Position, anchor: str | None) -> None:
        self.mapping = mapping
        self.tag = tag
        self.position = position
        self.anchor = anchor
        self.items: list[Node] = []
        self.size = 1
        self.height = 1

    def pairs(self) -> Iterator[tuple[Node, Node]]:
        """A mapping's (key, value) nodes, in the order written."""
        items = iter(self.items)
        return zip(items, items, strict=True)


Node = Scalar | Collection


class ComposeError(Exception):
    """Well-formed YAML that a manifest refuses: too deep, too many aliases, two documents."""

    def __init__(self, message: str, mark: Any, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.mark: Any = mark  # libyaml's marks duck-type PyYAML's
        self.hint = hint


def max_values() -> int:
    """``MAX_VALUES``, read when a file's reading starts (so a test may lower it)."""
    return MAX_VALUES


def too_many_values(event: Any) -> ComposeError:
    """The error for the event that takes a file past ``MAX_VALUES``."""
    return ComposeError(
        f"the file holds more than {MAX_VALUES:,} values",
        event.start_mark,
        "split the manifest into several files in a directory",
    )


def too_deep(event: Any) -> ComposeError:
    """The error for a collection that opens at ``MAX_DEPTH`` levels."""
    return ComposeError(
        f"the document is nested more than {MAX_DEPTH} levels deep",
        event.start_mark,
        "a manifest needs only a few levels; check the indentation and brackets",
    )


def end_document(loader: Any) -> None:
    """Take the end of the document; refuse a second document after it."""
    loader.get_event()  # DocumentEndEvent
    if not loader.check_event(StreamEndEvent):
        raise ComposeError(
            "the file holds more than one YAML document",
            loader.peek_event().start_mark,
            "remove the `---` line: a manifest file is one document (use a directory of "
            "files to split a manifest)",
        )


class ScalarTags:
    """Resolves the tag of scalars written without one, as the safe loader would."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.cache: dict[str, str] = {}  # plain scalars' tags: manifests repeat names and flags

    def resolve(self, event: Any) -> str:
        """The tag of a scalar written without one (or with the non-specific ``!``); a plain
        scalar's is kept in ``cache``, which the composer reads first."""
        if not event.implicit[0]:  # quoted, or tagged `!`: a string
            return STR_TAG
        value: str = event.value
        if value and value[0] not in _RESOLVER_STARTS and not _ANY_START_RESOLVES:
            resolved = STR_TAG
        else:
            resolved = self.loader.resolve(ScalarNode, value, event.implicit)
        self.cache[value] = resolved
        return resolved


class _Composer:
    """Turns the events of one document into nodes; aliases share the anchored node."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.anchors: dict[str, Node] = {}
        self.expansion = 0  # values added by aliases so far
        self.tags = ScalarTags(loader)

    def document(self) -> Node | None:
        loader = self.loader
        loader.get_event()  # StreamStartEvent
        if loader.check_event(StreamEndEvent):
            return None
        loader.get_event()  # DocumentStartEvent
        root = self._tree()
        end_document(loader)
        return root

    def _tree(self) -> Node:
        """The nodes of one document, without recursion: ``open_`` holds the collections
        whose end has not come yet, innermost last.

        This loop runs once per event (some 27,000 for 1,000 workspaces) and was the load's
        largest cost, so it keeps to locals: the count of values, the innermost collection
        and its ``append``, the tag cache. A scalar adds nothing to its parent's ``size`` nor
        ``height`` (its size is counted when the parent closes)."""
        get_event, resolved, resolve = self.loader.get_event, self.tags.cache, self.tags.resolve
        starts, any_start = _RESOLVER_STARTS, _ANY_START_RESOLVES
        anchors, limit, values = self.anchors, MAX_VALUES, 0  # values: aliases expanded
        open_: list[Collection] = []
        parent: Collection | None = None
        append: Any = None
        while True:
            event: Any = get_event()
            values += 1
            if values > limit:
                raise too_many_values(event)
            node: Node
            kind = type(event)
            if kind is ScalarEvent:  # most events: tested first, and exactly
                tag, value = event.tag, event.value
                if tag is None or tag == "!":
                    if not event.implicit[0] or (value[:1] not in starts and not any_start):
                        tag = STR_TAG  # quoted, tagged `!`, or no pattern starts so
                    else:
                        tag = resolved.get(value) or resolve(event)
                mark = event.start_mark
                node = _new_scalar(Scalar, (tag, value, (mark.line + 1, mark.column + 1)))
                if event.anchor is not None:
                    anchors[event.anchor] = node
                if parent is None:
                    return node
                append(node)
                continue
            if isinstance(event, CollectionStartEvent):
                parent = self._open(event, len(open_))
                open_.append(parent)
                append = parent.items.append
                continue
            if isinstance(event, (SequenceEndEvent, MappingEndEvent)):
                node = open_.pop()
                node.size += len(node.items)
                if node.anchor is not None:
                    anchors[node.anchor] = node
                size, height = node.size, node.height
            else:
                assert isinstance(event, AliasEvent)  # the parser sends no other event here
                node, size, height = self._alias(event, len(open_))
                values += size - 1
            if not open_:
                return node
            parent = open_[-1]
            append = parent.items.append
            append(node)
            parent.size += size - 1
            if height >= parent.height:
                parent.height = height + 1

    def _open(self, event: Any, depth: int) -> Collection:
        if depth >= MAX_DEPTH:
            raise too_deep(event)
        mapping = isinstance(event, MappingStartEvent)
        tag = event.tag
        if tag in (None, "!"):
            tag = MAP_TAG if mapping else SEQ_TAG
        return Collection(mapping, tag, position_of(event.start_mark), event.anchor)

    def _alias(self, event: Any, depth: int) -> tuple[Node, int, int]:
        name = event.anchor
        if name not in self.anchors:
            raise ComposeError(
                f"the alias *{name} refers to no anchor &{name} above it (or to a collection "
                "that contains the alias)",
                event.start_mark,
                f"define `&{name}` before using `*{name}`; an alias cannot refer to its own parent",
            )
        node = self.anchors[name]
        size, height = (node.size, node.height) if isinstance(node, Collection) else (1, 0)
        self.expansion += size
        if self.expansion > MAX_ALIAS_EXPANSION:
            raise ComposeError(
                f"aliases expand the document to more than {MAX_ALIAS_EXPANSION:,} extra values",
                event.start_mark,
                "write the values out, or use fewer nested aliases",
            )
        if depth + height > MAX_DEPTH:
            raise ComposeError(
                f"the alias *{name} nests the document more than {MAX_DEPTH} levels deep",
                event.start_mark,
                "a manifest needs only a few levels; use the alias at a shallower place",
            )
        return node, size, height


def compose(text: str) -> Node | None:
    """The node tree of ``text``, or None when it holds no document (empty or comments only).

    Raises ``yaml.YAMLError`` for a syntax error and ``ComposeError`` for a refused shape.
    """
    loader = Loader(text)
    try:
        return _Composer(loader).document()
    finally:
        loader.dispose()
