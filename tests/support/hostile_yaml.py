"""Hostile YAML shared by the manifest tests that load it and those that run it through the
command."""

from __future__ import annotations


def billion_laughs() -> str:
    """Nine levels of nine aliases each: a few hundred bytes that expand to 9**9 values."""
    lines = ["version: 1", 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    previous = "a"
    for name in "bcdefghi":
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
        previous = name
    return "\n".join(lines) + "\n"
