"""One test per bad manifest in ``tests/cases/manifest``: adding a case is adding a file.

A case is a ``bad-*.yaml`` file (invalid) or ``warn-*.yaml`` file (valid, with warnings), or a
``bad-*`` directory of files validated together. Expectations are comments in the files::

    # expect: error line 9 at workspaces[0].name: is 41 characters long

meaning: a finding of that severity, in this file, on that line, at that path (``-`` for none),
whose message contains the text after the colon. The findings must be exactly the expected
ones, so a case also proves that one mistake does not cascade into several findings.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reconciler.findings import Finding
from reconciler.manifest import load_manifest

CASES = Path(__file__).parent / "cases" / "manifest"
_EXPECT = re.compile(r"^# expect: (error|warning) line (\d+) at (\S+): (.+)$")


def _cases() -> list[Path]:
    return sorted(CASES.glob("bad-*")) + sorted(CASES.glob("warn-*"))


def _expectations(case: Path) -> list[tuple[str, str, int, str, str]]:
    """(severity, file, line, path, text) of every ``# expect:`` line of the case."""
    files = sorted(case.rglob("*.y*ml")) if case.is_dir() else [case]
    found = []
    for file in files:
        name = str(file.relative_to(CASES))
        for line in file.read_text("utf-8").splitlines():
            match = _EXPECT.match(line)
            if match:
                severity, number, path, text = match.groups()
                found.append((severity, name, int(number), "" if path == "-" else path, text))
    return found


def _matches(finding: Finding, expected: tuple[str, str, int, str, str]) -> bool:
    severity, file, line, path, text = expected
    source = finding.source
    return (
        finding.severity == severity
        and source.file == file
        and source.line == line
        and source.path == path
        and text.lower() in finding.message.lower()
    )


@pytest.mark.parametrize("case", _cases(), ids=lambda case: case.name)
def test_case(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CASES)  # findings then name files as the expectations do
    expected = _expectations(case)
    assert expected, f"{case.name} has no `# expect:` line"

    result = load_manifest([case.name])

    unmatched = [e for e in expected if not any(_matches(f, e) for f in result.findings)]
    unexpected = [f.render() for f in result.findings if not any(_matches(f, e) for e in expected)]
    assert not unmatched and not unexpected, (
        f"expected but not found: {unmatched}\nfound but not expected: {unexpected}"
    )
    assert result.ok == case.name.startswith("warn-")
