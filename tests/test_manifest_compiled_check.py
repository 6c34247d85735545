"""The schema's generated check, kept compiled in the user's cache between runs: the same
verdicts whether it was compiled now or read back, and a broken or unwritable cache costs
only time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fastjsonschema
import pytest

from reconciler.manifest.compiled_check import cache_dir, generated_check
from reconciler.manifest.schema import _inlined_schema

VALID: dict[str, Any] = {"version": 1, "workspaces": [{"name": "Finance", "users": ["alice"]}]}
INVALID: dict[str, Any] = {"version": 1, "workspaces": [{"name": "Finance", "users": "alice"}]}


def verdict(check: Any, document: dict[str, Any]) -> bool:
    try:
        check(document)
    except fastjsonschema.JsonSchemaException:
        return False
    return True


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_the_check_read_back_gives_the_verdicts_of_the_one_compiled_now() -> None:
    compiled = generated_check(_inlined_schema())
    (kept,) = cache_dir().iterdir()
    assert kept.stat().st_mode & 0o077 == 0 and cache_dir().stat().st_mode & 0o077 == 0
    read_back = generated_check(_inlined_schema())
    for document in (VALID, INVALID):
        assert verdict(compiled, document) == verdict(read_back, document)
    assert verdict(read_back, VALID) and not verdict(read_back, INVALID)


def test_a_corrupt_cache_file_is_compiled_again() -> None:
    generated_check(_inlined_schema())
    (kept,) = cache_dir().iterdir()
    kept.write_bytes(b"validate\n\x00garbage")
    check = generated_check(_inlined_schema())
    assert verdict(check, VALID) and not verdict(check, INVALID)


def test_a_cache_that_cannot_be_written_only_costs_time(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory would be")
    check = generated_check(_inlined_schema())
    assert verdict(check, VALID) and not verdict(check, INVALID)


def test_another_schema_gets_another_file() -> None:
    generated_check(_inlined_schema())
    generated_check({"type": "object", "required": ["version"]})
    assert len(list(cache_dir().iterdir())) == 2
