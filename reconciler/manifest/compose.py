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
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.error import Mark
from yaml.events import (
    AliasEvent,
    CollectionStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    SequenceEndEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

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

_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"


class ComposeError(Exception):
    """Well-formed YAML that a manifest refuses: too deep, too many aliases, two documents."""

    def __init__(self, message: str, mark: Any, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.mark: Mark | None = mark  # libyaml's marks duck-type PyYAML's
        self.hint = hint


class _Open:
    """A collection whose end event has not come yet."""

    __slots__ = ("anchor", "height", "key", "node", "size")

    def __init__(self, node: SequenceNode | MappingNode, anchor: str | None) -> None:
        self.node = node
        self.anchor = anchor
        self.key: Node | None = None  # a mapping key waiting for its value
        self.size = 1  # values this collection expands to, itself included
        self.height = 1  # levels of nesting it expands to

    def add(self, child: Node, size: int, height: int) -> None:
        self.size += size
        self.height = max(self.height, height + 1)
        if isinstance(self.node, SequenceNode):
            self.node.value.append(child)
        elif self.key is None:
            self.key = child
        else:
            self.node.value.append((self.key, child))
            self.key = None


class _Composer:
    """Turns the events of one document into nodes; aliases share the anchored node."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.anchors: dict[str, tuple[Node, int, int]] = {}  # node, size, height
        self.expansion = 0  # values added by aliases so far
        self.values = 0  # values composed so far, aliases expanded
        self.tags: dict[tuple[str, tuple[bool, bool]], str] = {}  # resolver results

    def document(self) -> Node | None:
        loader = self.loader
        loader.get_event()  # StreamStartEvent
        if loader.check_event(StreamEndEvent):
            return None
        loader.get_event()  # DocumentStartEvent
        root = self._tree()
        loader.get_event()  # DocumentEndEvent
        if not loader.check_event(StreamEndEvent):
            raise ComposeError(
                "the file holds more than one YAML document",
                loader.peek_event().start_mark,
                "remove the `---` line: a manifest file is one document (use a directory of "
                "files to split a manifest)",
            )
        return root

    def _tree(self) -> Node:
        stack: list[_Open] = []
        while True:
            event = self.loader.get_event()
            self.values += 1
            if self.values > MAX_VALUES:
                raise ComposeError(
                    f"the file holds more than {MAX_VALUES:,} values",
                    event.start_mark,
                    "split the manifest into several files in a directory",
                )
            if isinstance(event, CollectionStartEvent):
                stack.append(self._open(event, len(stack)))
                continue
            if isinstance(event, (SequenceEndEvent, MappingEndEvent)):
                node, size, height = self._close(stack.pop(), event)
            elif isinstance(event, AliasEvent):
                node, size, height = self._alias(event, len(stack))
            else:
                node, size, height = self._scalar(event)
            if not stack:
                return node
            stack[-1].add(node, size, height)

    def _open(self, event: Any, depth: int) -> _Open:
        if depth >= MAX_DEPTH:
            raise ComposeError(
                f"the document is nested more than {MAX_DEPTH} levels deep",
                event.start_mark,
                "a manifest needs only a few levels; check the indentation and brackets",
            )
        start: Any = event.start_mark  # libyaml's marks duck-type PyYAML's
        node: SequenceNode | MappingNode
        if isinstance(event, MappingStartEvent):
            tag = _MAP_TAG if event.tag in (None, "!") else event.tag
            node = MappingNode(tag, [], start, None, event.flow_style)
        else:
            tag = _SEQ_TAG if event.tag in (None, "!") else event.tag
            node = SequenceNode(tag, [], start, None, event.flow_style)
        return _Open(node, event.anchor)

    def _close(self, open_: _Open, event: Any) -> tuple[Node, int, int]:
        open_.node.end_mark = event.end_mark
        if open_.anchor is not None:
            self.anchors[open_.anchor] = (open_.node, open_.size, open_.height)
        return open_.node, open_.size, open_.height

    def _scalar(self, event: Any) -> tuple[Node, int, int]:
        tag = event.tag
        if tag in (None, "!"):
            tag = self._resolve(event.value, event.implicit)
        node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        if event.anchor is not None:
            self.anchors[event.anchor] = (node, 1, 0)
        return node, 1, 0

    def _resolve(self, value: str, implicit: tuple[bool, bool]) -> str:
        """The implicit tag of a scalar; cached, as manifests repeat names and true/false."""
        key = (value, implicit)
        tag = self.tags.get(key)
        if tag is None:
            tag = self.tags[key] = self.loader.resolve(ScalarNode, value, implicit)
        return tag

    def _alias(self, event: Any, depth: int) -> tuple[Node, int, int]:
        name = event.anchor
        if name not in self.anchors:
            raise ComposeError(
                f"the alias *{name} refers to no anchor &{name} above it (or to a collection "
                "that contains the alias)",
                event.start_mark,
                f"define `&{name}` before using `*{name}`; an alias cannot refer to its own parent",
            )
        node, size, height = self.anchors[name]
        self.expansion += size
        self.values += size - 1
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
