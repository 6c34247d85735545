"""Output formats by name: one registry per kind of report (plan, drift, validate, state diff).

A command's ``--format`` choices, its help text and the renderer it calls all come from the
report's ``Formats``: adding a format is adding one ``Format`` to it, and the option, the help
and the dispatch follow. Renderers are pure functions of the report and a ``View``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class View:
    """How the reader sees a report: a terminal's colour, and how much it lists."""

    color: bool = False
    show_unmanaged: bool = False


@dataclass(frozen=True, slots=True)
class Format(Generic[T]):
    name: str
    audience: str  # "people", "programs", "a pull-request comment": for the help text
    render: Callable[[T, View], str]


class Formats(Generic[T]):
    """The formats one kind of report can be written in; the first is the default."""

    def __init__(self, *formats: Format[T]) -> None:
        self._by_name = {f.name: f for f in formats}

    @property
    def names(self) -> list[str]:
        return list(self._by_name)

    @property
    def default(self) -> str:
        return self.names[0]

    def help(self) -> str:
        """``text for people, json for programs, markdown for a pull-request comment.``"""
        return ", ".join(f"{f.name} for {f.audience}" for f in self._by_name.values()) + "."

    def render(self, report: T, name: str, view: View = View()) -> str:
        """``report`` in the format called ``name`` (one of ``names``: the CLI checked it)."""
        try:
            chosen = self._by_name[name]
        except KeyError:
            raise ValueError(f"no {name!r} format; known: {', '.join(self.names)}") from None
        return chosen.render(report, view)
