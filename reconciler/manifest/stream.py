"""Build a plain document's values straight from libyaml's events, without the node tree.

A manifest is almost always plain YAML: mappings, lists and scalars without tags, anchors or
aliases. For such a document the nodes that ``compose`` makes are built into values and then
thrown away; building the values while the events arrive skips making, walking and freeing
some 25,000 nodes for 1,000 workspaces. The values, the places of keys and items, and the
findings are those that ``ValueBuilder`` makes from the nodes (``tests/test_manifest_stream.py``
holds them equal): the same builder records them, in the same order (a list's plain texts
only in ``lists``), and ``compose``'s limits are checked at the same events with the same
errors.

Whatever only the node tree builds -- an anchor, an alias, a tag, a ``<<`` merge, a key that
is a list or a mapping, a password key, a root that is not a mapping -- stops this early
(``Fallback``), and the document is composed and built as before; so does a key that ends in
``]``, whose path could be a list item's (the node tree records both in ``positions``). A
syntax error or a refused shape is raised here as it would be there: the same events come
first in both.
"""

from __future__ import annotations

import functools
from typing import Any

from yaml.events import (
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

from reconciler.manifest import compose
from reconciler.manifest.compose import (
    STR_TAG,
    Position,
    Scalar,
    ScalarTags,
    end_document,
    position_of,
    too_deep,
    too_many_values,
)
from reconciler.manifest.credentials import is_password_key
from reconciler.manifest.values import TAG, ValueBuilder

_MERGE_TAG = TAG + "merge"


class Fallback(Exception):
    """The document needs the node tree: it is built by ``compose`` and ``ValueBuilder``."""


def build_plain(text: str, file: str) -> tuple[dict[str, Any], ValueBuilder] | None:
    """The values of ``text`` and the builder that recorded their places, or None when the
    document is not plain (see the module's docstring).

    Raises ``yaml.YAMLError`` and ``ComposeError`` as ``compose`` would for the same text.
    """
    loader = compose.Loader(text)
    try:
        loader.get_event()  # StreamStartEvent
        if loader.check_event(StreamEndEvent):
            return None  # no document: the node path says so
        loader.get_event()  # DocumentStartEvent
        builder = ValueBuilder(file)
        values = _Stream(loader, builder).root()
        end_document(loader)
        return values, builder
    except Fallback:
        return None
    finally:
        loader.dispose()


class _Stream:
    """One plain document's events into values, recorded by ``builder`` as it would."""

    def __init__(self, loader: Any, builder: ValueBuilder) -> None:
        self.loader = loader
        self.builder = builder
        self.tags = ScalarTags(loader)

    def root(self) -> dict[str, Any]:
        """The root mapping's values.

        The loop runs once per event, so the innermost collection's state is kept in locals
        (``path``; a mapping's ``key`` whose value comes next, ``key_path`` and the keys
        ``seen`` so far, and its ``put``; a list's items' ``places``, its ``add`` and
        ``place``), and the states around it on ``stack``.
        A list's plain texts, most of the document, are kept in ``places`` only: no path is
        made for them (``Document.position`` finds them there)."""
        get_event, builder = self.loader.get_event, self.builder
        positions, lists, scalar = builder.positions, builder.lists, builder.scalar
        resolved, resolve = self.tags.cache, self.tags.resolve
        starts, any_start = compose._RESOLVER_STARTS, compose._ANY_START_RESOLVES
        limit, max_depth = compose.max_values(), compose.MAX_DEPTH
        event: Any = get_event()
        values = 1
        if values > limit:
            raise too_many_values(event)
        if type(event) is not MappingStartEvent or event.tag or event.anchor is not None:
            raise Fallback
        stack: list[tuple[Any, ...]] = []
        container: Any = {}
        mapping, path, key, key_path = True, "", None, ""
        seen: dict[str, Position] = {}
        places = _NO_PLACES
        put: Any = container.__setitem__  # the innermost mapping's __setitem__
        add: Any = None  # the innermost list's append, and its places'
        place: Any = None
        while True:
            event = get_event()
            values += 1
            if values > limit:
                raise too_many_values(event)
            kind = type(event)
            if kind is ScalarEvent:
                if event.tag is not None or event.anchor is not None:
                    raise Fallback
                value: str = event.value
                if not event.implicit[0] or (value[:1] not in starts and not any_start):
                    tag = STR_TAG  # quoted, or no resolver pattern starts so
                else:
                    tag = resolved.get(value) or resolve(event)
                mark = event.start_mark
                position = (mark.line + 1, mark.column + 1)
                if not mapping:
                    place(position)
                    if tag == STR_TAG:
                        add(value)
                    else:
                        add(scalar(Scalar(tag, value, position), f"{path}[{len(places) - 1}]"))
                elif key is None:
                    if tag == _MERGE_TAG or value[-1:] == "]" or _password_key(value):
                        raise Fallback  # a merge; a path that could be an item's; a password
                    key, key_path = value, f"{path}.{value}" if path else value
                    first = seen.get(key)
                    if first is not None:
                        builder.given_twice(key, position, first, key_path)
                    seen[key] = position
                    positions[key_path] = position
                else:
                    if tag != STR_TAG:
                        value = scalar(Scalar(tag, value, position), key_path)
                    put(key, value)
                    key = None
                continue
            if kind is MappingStartEvent or kind is SequenceStartEvent:
                if event.tag or event.anchor is not None:
                    raise Fallback
                if len(stack) + 1 >= max_depth:
                    raise too_deep(event)
                if not mapping:
                    item_path = f"{path}[{len(places)}]"
                    position = position_of(event.start_mark)
                    positions[item_path] = position
                    places.append(position)
                elif key is None:
                    raise Fallback  # a key that is a list or a mapping
                else:
                    item_path = key_path
                stack.append((container, mapping, path, key, key_path, seen, places))
                mapping, path = kind is MappingStartEvent, item_path
                if mapping:
                    container, key, seen = {}, None, {}
                    put = container.__setitem__
                else:
                    container, places = [], []
                    add, place = container.append, places.append
                continue
            if kind is not MappingEndEvent and kind is not SequenceEndEvent:
                raise Fallback  # an alias
            done = container
            if not mapping:
                lists[path] = places
            if not stack:
                return done  # type: ignore[no-any-return]
            container, mapping, path, key, key_path, seen, places = stack.pop()
            if mapping:
                put = container.__setitem__
                put(key, done)
                key = None
            else:
                add, place = container.append, places.append
                add(done)


_NO_PLACES: list[Position] = []  # the root mapping's stand-in for a list's, never added to


@functools.lru_cache(maxsize=1024)
def _password_key(key: str) -> bool:
    """``is_password_key``, asked once per key text: a manifest repeats a few keys."""
    return is_password_key(key)
