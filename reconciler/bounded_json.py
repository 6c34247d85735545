"""JSON a person hands the tool -- an earlier access report, a saved plan -- read within bounds.

Such a file may be anything: a log someone renamed, a file edited by hand, one made to hurt.
Read whole, a file of gigabytes would exhaust memory; parsed, JSON nested some thousands deep
exhausts the interpreter's stack (``RecursionError``, an "Internal error"). Each reader says
how large and how deep the file it expects can be; past either bound the caller gets one
``OutOfBounds`` to turn into its own clear message, before anything else is done with it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


class OutOfBounds(ValueError):
    """Larger or deeper than the file the caller expects could be; the message says so."""


def read_text(path: Path, max_bytes: int, what: str) -> str:
    """The UTF-8 text of ``path``, read no further than ``max_bytes`` (``OSError`` and
    ``UnicodeDecodeError`` pass through for the caller to word)."""
    too_large = f"{path} is larger than {_size(max_bytes)}: not {what}."
    if path.stat().st_size > max_bytes:
        raise OutOfBounds(too_large)
    with path.open("rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:  # it grew while we looked
        raise OutOfBounds(too_large)
    return data.decode("utf-8")


def loads(text: str, max_depth: int, origin: str, what: str) -> Any:
    """``text`` parsed as JSON no deeper than ``max_depth`` (a scalar is 0, ``[]`` is 1);
    ``ValueError`` (``json.JSONDecodeError``) for text that is not JSON."""
    too_deep = f"{origin} is nested more than {max_depth} levels deep: not {what}."
    try:
        data = json.loads(text)
    except RecursionError:
        raise OutOfBounds(too_deep) from None
    if nesting(data) > max_depth:
        raise OutOfBounds(too_deep)
    return data


def read_file(path: Path, max_bytes: int, what: str, fail: Callable[[str], Exception]) -> str:
    """``read_text``, every way it can fail said as the caller's one error (``fail``)."""
    try:
        return read_text(path, max_bytes, what)
    except OutOfBounds as exc:
        raise fail(str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(f"Cannot read {what} {path}: {exc}.") from None


def parse(
    text: str, max_depth: int, origin: str, what: str, fail: Callable[[str], Exception]
) -> Any:
    """``loads``, every way it can fail said as the caller's one error (``fail``)."""
    try:
        return loads(text, max_depth, origin, what)
    except OutOfBounds as exc:
        raise fail(str(exc)) from None
    except ValueError as exc:
        raise fail(f"{origin} is not JSON ({exc}).") from None


def nesting(data: Any) -> int:
    """How deep ``data`` nests (a scalar: 0), without recursion."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            value = value.values()
        elif not isinstance(value, list):
            continue  # a scalar at the top
        deepest = max(deepest, depth)
        stack.extend((item, depth + 1) for item in value if isinstance(item, dict | list))
    return deepest


def _size(count: int) -> str:
    return f"{count // 2**20} MiB" if count >= 2**20 else f"{count} bytes"
