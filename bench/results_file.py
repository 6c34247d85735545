"""``bench/RESULTS.md`` in sections, so a benchmark run on its own replaces only its own.

``run_all.py`` writes the file's head and its own tables; a benchmark too long for it (the
growth sizes of issue 47) is a separate command whose section sits between two marker
comments and survives the next ``run_all.py``, and the next run of that command replaces it.
"""

from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- section {name}: begin -->", f"<!-- section {name}: end -->"


def sections(text: str) -> dict[str, str]:
    """Every marked section of ``text``, markers included, by name (in order)."""
    found = re.finditer(
        r"<!-- section (?P<name>[\w-]+): begin -->.*?<!-- section (?P=name): end -->", text, re.S
    )
    return {match["name"]: match[0] for match in found}


def marked(name: str, body: str) -> str:
    begin, end = _markers(name)
    return f"{begin}\n{body.strip()}\n{end}"


def write_section(name: str, body: str, path: Path = RESULTS) -> None:
    """Replace the section ``name`` of the results file, or add it at the end."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    section = marked(name, body)
    old = sections(text).get(name)
    text = text.replace(old, section) if old else text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text, encoding="utf-8")


def kept_sections(names: tuple[str, ...], path: Path = RESULTS) -> list[str]:
    """The marked sections other than ``names`` now in the file: what a rewrite keeps."""
    if not path.exists():
        return []
    found = sections(path.read_text(encoding="utf-8"))
    return [text for name, text in found.items() if name not in names]
