"""Paths into a manifest document, as every finding names them: ``workspaces[3].permissions``."""

from __future__ import annotations

from typing import Any


def child(path: str, key: str | int) -> str:
    """The document path of ``key`` under ``path``: ``a.b``, ``a[3]``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def parent(path: str) -> str:
    """The path one level up: ``a`` for ``a.b`` and for ``a[3]``."""
    cut = max(path.rfind("."), path.rfind("["))
    return path[:cut] if cut > 0 else ""


def format_path(parts: Any) -> str:
    """A path from its parts, as jsonschema gives them (keys and list indexes)."""
    path = ""
    for part in parts:
        path = child(path, part)
    return path
