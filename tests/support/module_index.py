"""The module index of docs/architecture.md, made from the modules' own docstrings: every
module of the package, by room (its folder), with the first sentence of its docstring."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support.loopback import REPO

PACKAGE = REPO / "reconciler"
BEGIN = "<!-- module index: made from the docstrings by tests/support/module_index.py -->"
END = "<!-- end of the module index -->"


def first_sentence(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    paragraph = " ".join(doc.split("\n\n")[0].split())
    found = re.match(r"(.+?[.!?:])(?=\s[A-Z`(*\"]|$)", paragraph)
    sentence = found.group(1) if found else paragraph
    return sentence.replace("|", "\\|")


def module_index() -> str:
    """The index, between its markers."""
    rooms: dict[str, list[Path]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__init__.py" and not first_sentence(path):
            continue
        rooms.setdefault(path.parent.relative_to(REPO).as_posix(), []).append(path)
    parts = [BEGIN]
    for room, paths in rooms.items():
        parts += ["", f"### `{room}/`", "", "| module | job |", "|---|---|"]
        parts += [f"| `{p.relative_to(REPO).as_posix()}` | {first_sentence(p)} |" for p in paths]
    return "\n".join([*parts, "", END])
