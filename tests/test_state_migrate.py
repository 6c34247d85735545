"""Copying a site's records between backends: everything arrives, nothing newer is lost."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.engine.records import ledger
from reconciler.errors import RefusedForSafety, StateError
from reconciler.state.backend import Holder, LockHeld, RecordStore, SaveInfo, Snapshot
from reconciler.state.locate import open_records, parse_location
from reconciler.state.migrate import copy_site

SITE = "https://acme.example.net"
HOLDER = Holder("state push", 1, "alice", "state push", None)


@pytest.fixture
def places(tmp_path: Path, postgres_url: str) -> Iterator[tuple[RecordStore, RecordStore]]:
    """The directory of a runner and a shared PostgreSQL schema, for the same site."""
    runner = open_records(parse_location(str(tmp_path / "state"), base_dir=tmp_path), SITE)
    shared = open_records(parse_location(postgres_url, base_dir=tmp_path), SITE)
    yield runner, shared
    shared.close()


def save_versions(records: RecordStore, *summaries: str) -> None:
    with records.lock(Holder.current("apply")) as lease:
        start = records.load().version
        for n, summary in enumerate(summaries, start=start):
            records.save({"site": SITE, "n": n}, expected_version=n, lease=lease,
                         info=SaveInfo("bob@ci", summary, f"plan{n}"))  # fmt: skip


@pytest.mark.parametrize("direction", ["push", "pull"])
def test_every_version_and_the_plan_key_are_copied(
    places: tuple[RecordStore, RecordStore], direction: str
) -> None:
    source, target = places if direction == "push" else places[::-1]
    save_versions(source, "created Finance", "added erin", "removed judy")
    summary = copy_site(source, target, holder=HOLDER, force=False)
    assert target.history() == source.history()[:-1]  # the source's last: "migrated to"
    assert target.load() == Snapshot(3, {"site": SITE, "n": 2})
    assert target.load_version(1) == source.load_version(1)
    assert target.plan_key() == source.plan_key()
    assert summary == (
        f"Copied 3 versions of the records of {SITE} (newest: version 3, saved "
        f"{target.history()[-1].saved_at}) and its plan key from {source.location} to "
        f"{target.location}. {source.location} is marked as moved: commands that still use "
        "it say so."
    )
    moved = source.load()
    assert moved.version == 4 and moved.data is not None
    assert moved.data["moved_to"]["location"] == target.location
    assert source.history()[-1].summary == f"records migrated to {target.location}"
    with target.lock(Holder.current("apply")) as lease:  # and the copy goes on from there
        target.save({"site": SITE}, expected_version=3, info=SaveInfo("x", "y"), lease=lease)


def test_newer_records_in_the_target_are_not_overwritten_unless_forced(
    places: tuple[RecordStore, RecordStore],
) -> None:
    runner, shared = places
    save_versions(runner, "old apply on a laptop")
    save_versions(shared, "CI apply", "CI apply again")
    with pytest.raises(RefusedForSafety) as refused:
        copy_site(runner, shared, holder=HOLDER, force=False)
    assert "holds newer records" in refused.value.message and "bob@ci" in refused.value.message
    assert shared.load().version == 2
    summary = copy_site(runner, shared, holder=HOLDER, force=True)
    assert shared.load().data == runner.load_version(1).data
    assert [h.summary for h in shared.history()] == ["old apply on a laptop"]
    assert f"Discarded the 2 version(s) {shared.location} held before:" in summary
    assert "version 2, saved" in summary and "CI apply again" in summary


def test_records_left_behind_by_a_migration_say_where_they_went(
    places: tuple[RecordStore, RecordStore], capsys: pytest.CaptureFixture[str]
) -> None:
    runner, shared = places
    with runner.lock(Holder.current("apply")) as lease:
        records_data = {"format": 1, "site": SITE}
        runner.save(records_data, expected_version=0, lease=lease, info=SaveInfo("bob", "apply"))
    copy_site(runner, shared, holder=HOLDER, force=False)
    records = ledger.read(runner).records
    assert records.moved_to is not None
    notice = capsys.readouterr().err
    assert f"were migrated to {shared.location}" in notice and "--state" in notice
    assert ledger.read(shared).records.moved_to is None and not capsys.readouterr().err


def test_records_of_the_previous_layout_are_copied_as_version_one(
    tmp_path: Path, places: tuple[RecordStore, RecordStore]
) -> None:
    runner, shared = places
    legacy = tmp_path / "state" / "sites" / "acme.example.net"
    legacy.mkdir(parents=True)
    (legacy / "state.json").write_text(json.dumps({"site": SITE, "serial": 4}))
    copy_site(runner, shared, holder=HOLDER, force=False)
    assert shared.load() == Snapshot(1, {"site": SITE, "serial": 4})
    assert shared.history()[0].summary == "copied from the previous layout"


def test_nothing_to_copy_a_held_lock_or_the_same_place_are_refused(
    tmp_path: Path, places: tuple[RecordStore, RecordStore]
) -> None:
    runner, shared = places
    with pytest.raises(StateError, match="There are no records"):
        copy_site(runner, shared, holder=HOLDER, force=False)
    save_versions(runner, "x")
    with shared.lock(Holder.current("apply in CI")), pytest.raises(LockHeld):
        copy_site(runner, shared, holder=HOLDER, force=False)
    with pytest.raises(StateError, match="same place"):
        copy_site(runner, open_records(parse_location("state", base_dir=tmp_path), SITE),
                  holder=HOLDER, force=False)  # fmt: skip
    assert shared.load() == Snapshot(0, None)
