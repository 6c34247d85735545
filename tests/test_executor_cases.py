"""Table-driven tests of the write side: what each action records, and what a read settles.

``fold-*`` cases: records before, an action the site reported as done and its result, and the
records after. ``settle-*`` cases: a write of unknown outcome left by a crash, a fresh read of
the site, and the records after settling. Adding a case is adding a file in
``tests/cases/executor/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.core.actions import Done, Result
from reconciler.core.records import Records, reduce
from reconciler.engine.apply.pending import settle
from reconciler.engine.records import document as records_document
from reconciler.kinds.registry import action_from_data
from tests.support.models import live_site

CASES = Path(__file__).parent / "cases" / "executor"
SITE = "https://acme.example.net"


def records_of(case: dict[str, Any], *, pending: tuple[dict[str, Any], ...] = ()) -> Records:
    given = case.get("records", {})
    return records_document.from_data(
        {"format": 2, "site": SITE, **given, "pending": list(pending)}, site=SITE, where="case"
    )


def action_data(item: dict[str, Any]) -> dict[str, Any]:
    return {"method": item["method"], "params": item["params"]}


def assert_records(records: Records, expect: dict[str, Any]) -> None:
    data = records_document.to_data(records)
    for table in ("workspaces", "groups"):
        if table not in expect:
            continue
        assert set(data[table]) == set(expect[table]), table
        for name, wanted in expect[table].items():
            actual = data[table][name]
            assert {key: actual[key] for key in wanted} == wanted, name


def cases(prefix: str) -> list[Path]:
    return sorted(CASES.glob(f"{prefix}-*.yaml"))


@pytest.mark.parametrize("path", cases("fold"), ids=lambda p: p.stem)
def test_fold_case(path: Path) -> None:
    case = yaml.safe_load(path.read_text())
    action = action_from_data(action_data(case["action"]))
    before = records_of(case)
    after = reduce(before, [Done(action, Result.from_data(case.get("result")))])
    assert_records(after, case["expect"])
    assert (
        reduce(after, [Done(action, Result.from_data(case.get("result")))]) == after
    )  # idempotent


@pytest.mark.parametrize("path", cases("settle"), ids=lambda p: p.stem)
def test_settle_case(path: Path) -> None:
    case = yaml.safe_load(path.read_text())
    before = records_of(case, pending=(action_data(case["pending"]),))
    after, learnt = settle(before, live_site(case.get("live", {})))
    expect = case["expect"]
    assert len(after.pending) == expect.get("pending", 0)
    if "learnt" in expect:
        assert len(learnt) == expect["learnt"], learnt
    assert_records(after, expect)


def test_case_files_exist() -> None:
    assert len(cases("fold")) >= 6 and len(cases("settle")) >= 4
