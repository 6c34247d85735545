"""Reviewed output files (``tests/golden/``): compared exactly, regenerated only when asked.

To accept a change of wording, regenerate the files explicitly and read the diff before
committing::

    RECONCILER_REGENERATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_render_golden.py

A missing file is a failure, never written silently.
"""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).parents[1] / "golden"
REGENERATE = os.environ.get("RECONCILER_REGENERATE_GOLDEN") == "1"


def assert_golden(name: str, text: str) -> None:
    """``text`` is the reviewed file ``tests/golden/NAME`` (written instead, if regenerating)."""
    path = GOLDEN / name
    if REGENERATE:
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} is missing: regenerate (see tests/support/golden.py), review it"
    assert text == path.read_text(encoding="utf-8"), f"{name} changed: review, then regenerate"
