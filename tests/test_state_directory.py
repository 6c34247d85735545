"""The directory backend's own promises: its layout, the previous layout, damaged files and
disks that refuse to write. What both backends promise is in ``test_state_backends.py``."""

from __future__ import annotations

import json
import os
import pwd
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reconciler.errors import RefusedForSafety, StateError
from reconciler.state.backend import Holder, SaveInfo, Snapshot, VersionInfo
from reconciler.state.directory import DirectoryRecords, site_directory_name
from tests.support.loopback import REPO

SITE = "https://acme.example.net:8443/team"
INFO = SaveInfo("alice@runner-1", "applied")


def records_of(site: str = SITE, **more: object) -> dict[str, object]:
    return {"format": 1, "site": site, **more}


def saved(root: Path, *documents: dict[str, object], clear: bool = False) -> DirectoryRecords:
    records = DirectoryRecords(root, SITE)
    with records.lock(Holder.current("apply")) as lease:
        for version, data in enumerate(documents):
            records.save(data, expected_version=version, info=INFO, lease=lease,
                         clear_journal=clear)  # fmt: skip
    return records


def test_each_site_has_a_private_directory_of_private_files(tmp_path: Path) -> None:
    records = saved(tmp_path / "state", records_of(n=1), records_of(n=2))
    records.plan_key()
    assert site_directory_name(SITE) == "acme.example.net_8443_team-" + records.directory.name[-8:]
    assert site_directory_name(SITE) != site_directory_name("https://acme.example.net:8443/x")
    assert sorted(p.name for p in records.versions_dir.iterdir()) == [
        "0000000001.json",
        "0000000002.json",
    ]
    for path in [tmp_path / "state", *(tmp_path / "state").rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), path
        assert not path.name.startswith(".tmp-") and not path.name.startswith(".lock-"), path


def write_legacy(root: Path, site: str, journal: list[str] | None = None) -> Path:
    """Records as the previous release wrote them: ``sites/<host:port>/state.json``."""
    legacy = root / "sites" / "acme.example.net_8443"
    legacy.mkdir(parents=True)
    (legacy / "state.json").write_text(json.dumps(records_of(site, serial=7)))
    if journal is not None:
        (legacy / "journal.jsonl").write_text("".join(line + "\n" for line in journal))
    return legacy


def test_records_of_the_previous_layout_are_read_then_retired(tmp_path: Path) -> None:
    legacy = write_legacy(tmp_path, SITE, journal=['{"event": "done", "n": 1}', '{"event": "in'])
    records = DirectoryRecords(tmp_path, SITE)
    assert records.load() == Snapshot(0, records_of(serial=7))
    assert records.journal_entries() == [{"event": "done", "n": 1}]  # the torn line skipped
    with records.lock(Holder.current("apply")) as lease:
        records.save(records_of(serial=8), expected_version=0, info=INFO, lease=lease)
        assert not (legacy / "state.json").exists()
        assert (legacy / "state.json.migrated").exists()
        assert records.load() == Snapshot(1, records_of(serial=8))
        assert records.journal_entries() == [{"event": "done", "n": 1}]  # not folded in yet
        records.save(records_of(), expected_version=1, info=INFO, lease=lease,
                     clear_journal=True)  # fmt: skip
    assert records.journal_entries() == []
    assert (legacy / "journal.jsonl.migrated").exists()


def test_records_of_the_previous_layout_for_another_site_are_refused(tmp_path: Path) -> None:
    other = "https://acme.example.net:8443/other-team"  # same host: the old layout shared it
    write_legacy(tmp_path, other, journal=['{"event": "done"}'])
    records = DirectoryRecords(tmp_path, SITE)
    with pytest.raises(StateError) as refused:
        records.load()
    assert f"belong to '{other}', not to '{SITE}'" in str(refused.value)
    assert refused.value.hint and "move that file away" in refused.value.hint
    assert records.journal_entries() == []  # its journal is the other site's too


DAMAGED = {
    "null": b"null",
    "a list": b"[]",
    "not JSON": b"{'site': 1}",
    "a number too large": b'{"site": "%s", "n": 1e999}' % SITE.encode(),
    "NaN": b'{"site": "%s", "n": NaN}' % SITE.encode(),
    "too deep": b"[" * 100_000 + b"]" * 100_000,
    "empty": b"",
}


@pytest.mark.parametrize("content", DAMAGED.values(), ids=DAMAGED.keys())
def test_a_damaged_version_is_a_clear_error(tmp_path: Path, content: bytes) -> None:
    records = saved(tmp_path, records_of())
    path = records.versions_dir / "0000000001.json"
    meta = path.read_bytes().split(b"\n")[0]
    path.write_bytes(meta + b"\n" + content + b"\n")
    with pytest.raises(StateError) as damaged:
        records.load()
    assert f"The records at {path} are damaged" in damaged.value.message
    assert damaged.value.hint


@pytest.mark.parametrize("content", DAMAGED.values(), ids=DAMAGED.keys())
def test_a_damaged_file_of_the_previous_layout_is_a_clear_error(
    tmp_path: Path, content: bytes
) -> None:
    legacy = write_legacy(tmp_path, SITE)
    (legacy / "state.json").write_bytes(content)
    with pytest.raises(StateError, match="damaged"):
        DirectoryRecords(tmp_path, SITE).load()


@pytest.mark.parametrize(
    "content", [b"", b"{}", b'{"token": "1", "expires_at": 0}', b"[]", b"null"]
)
def test_a_damaged_lock_file_is_a_clear_error(tmp_path: Path, content: bytes) -> None:
    records = DirectoryRecords(tmp_path, SITE)
    records.lock(Holder.current("apply")).release()
    (records.directory / "lease.json").write_bytes(content)
    with pytest.raises(StateError, match=r"lease\.json"):
        records.lock(Holder.current("apply"))


def test_a_damaged_journal_line_is_a_clear_error(tmp_path: Path) -> None:
    records = saved(tmp_path)
    records.journal_path.write_text('{"event": "intent"}\n[1, 2]\n{"event": "done"}\n')
    with pytest.raises(StateError, match=r"journal\.jsonl line 2"):
        records.journal_entries()


def test_an_entry_torn_by_a_crash_is_dropped_and_the_next_one_kept(tmp_path: Path) -> None:
    records = saved(tmp_path)
    records.journal_path.write_text('{"event": "intent", "n": 1}\n{"event": "do')
    assert records.journal_entries() == [{"event": "intent", "n": 1}]
    with records.lock(Holder.current("apply")) as lease:
        records.journal_append(lease, {"event": "intent", "n": 2})
    assert records.journal_entries() == [{"event": "intent", "n": 1}, {"event": "intent", "n": 2}]


def test_a_journal_set_aside_by_a_save_that_never_finished_still_counts(tmp_path: Path) -> None:
    records = saved(tmp_path, records_of())
    # a save of version 1 died after publishing it, before removing the journal it folded in
    (records.directory / "journal.folded-1-0c.jsonl").write_text('{"event": "done", "n": 0}\n')
    # a save of version 2 died after setting the journal aside, before publishing
    (records.directory / "journal.folded-2-0d.jsonl").write_text('{"event": "done", "n": 1}\n')
    records.journal_path.write_text('{"event": "done", "n": 2}\n')
    assert [e["n"] for e in records.journal_entries()] == [1, 2]
    with records.lock(Holder.current("apply")) as lease:
        records.save(records_of(), expected_version=1, info=INFO, lease=lease,
                     clear_journal=True)  # fmt: skip
    assert records.journal_entries() == []
    assert list(records.directory.glob("journal*")) == []


def test_an_import_cut_short_is_finished_by_the_next_reader(tmp_path: Path) -> None:
    records = saved(tmp_path, records_of(n=1))
    copy = DirectoryRecords(tmp_path / "copy", SITE)
    with copy.lock(Holder.current("pull")) as lease:
        copy.import_site(
            [(VersionInfo(3, "2026-01-01T00:00:00.000000Z", "bob", "x"), records_of(n=3))],
            os.urandom(32),
            lease=lease,
        )
    # the import died between moving the old versions away and moving the new ones in
    records.versions_dir.rename(records.directory / "versions.replaced")
    (copy.directory / "versions").rename(records.directory / "versions.importing")
    assert records.load() == Snapshot(3, records_of(n=3))
    assert [h.version for h in records.history()] == [3]
    assert sorted(p.name for p in records.directory.glob("versions*")) == ["versions"]


def run_on_small_disk(tmp_path: Path, script: str) -> subprocess.CompletedProcess[str]:
    """``script`` in a private mount namespace where ``DISK`` is a 256 KiB tmpfs (needs root,
    which is how CI runs here); the mount vanishes with the process."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system needs root (CI runs as root)")
    disk = tmp_path / "disk"
    disk.mkdir()
    code = textwrap.dedent(script).replace("DISK", repr(str(disk)))
    shell = f'mount -t tmpfs -o size=256k,mode=700 tmpfs "{disk}" && exec "$0" -c "$1"'
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", shell, sys.executable,
         code],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


PRELUDE = """
    import subprocess
    from pathlib import Path
    from reconciler.errors import StateError
    from reconciler.state.backend import Holder, SaveInfo
    from reconciler.state.directory import DirectoryRecords
    site, info = "https://acme.example.net", SaveInfo("alice", "x")
    records = DirectoryRecords(Path(DISK), site)
    lease = records.lock(Holder.current("apply"))
    records.save({"site": site, "n": 1}, expected_version=0, info=info, lease=lease)
"""


@pytest.mark.e2e
def test_a_read_only_file_system_is_a_clear_error_and_reads_still_work(tmp_path: Path) -> None:
    done = run_on_small_disk(
        tmp_path,
        PRELUDE
        + """
    lease.release()
    subprocess.run(["mount", "-o", "remount,ro", DISK], check=True)
    print(records.load().version, len(records.history()))
    for attempt in (lambda: records.lock(Holder.current("apply")), records.plan_key):
        try:
            attempt()
        except StateError as exc:
            print(exc)
    """,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "1 1"
    assert len(lines) == 3 and all("the file system is read-only" in line for line in lines[1:])
    assert "Give a writable state location" in lines[1]


@pytest.mark.e2e
def test_a_full_disk_is_a_clear_error_and_leaves_no_partial_version(tmp_path: Path) -> None:
    done = run_on_small_disk(
        tmp_path,
        PRELUDE
        + """
    try:
        records.save({"site": site, "big": "x" * 400_000}, expected_version=1, info=info,
                     lease=lease)
    except StateError as exc:
        print(exc)
    print(records.load().version, sorted(p.name for p in records.directory.rglob("*")))
    """,
    )
    assert done.returncode == 0, done.stderr
    refusal, listing = done.stdout.splitlines()
    assert refusal.startswith("Cannot save the records at ")
    assert "the disk is full. Free some space" in refusal
    assert listing.startswith("1 ") and ".tmp-" not in listing and "0000000002" not in listing


@pytest.mark.e2e
def test_the_directory_backend_never_loads_psycopg(tmp_path: Path) -> None:
    code = (
        "import sys; from pathlib import Path\n"
        "from reconciler.state.locate import open_records, parse_location\n"
        f"r = open_records(parse_location('state', base_dir=Path({str(tmp_path)!r})), 'https://a.b')\n"
        "r.load(); r.plan_key()\n"
        "print('psycopg' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"
    assert (tmp_path / "state" / "sites").is_dir()


def test_a_state_directory_others_can_write_or_do_not_own_is_refused(tmp_path: Path) -> None:
    """Whoever can write the state directory can plant a plan key or rewrite the records."""
    root = tmp_path / "state"
    saved(root, records_of(n=1))
    root.chmod(0o777)
    with pytest.raises(StateError) as refused:
        DirectoryRecords(root, SITE).load()
    assert "can be written by its group and everyone (mode 777)" in refused.value.message
    root.chmod(0o700)
    nobody = pwd.getpwnam("nobody")
    os.chown(root, nobody.pw_uid, nobody.pw_gid)
    with pytest.raises(StateError) as refused:
        DirectoryRecords(root, SITE).load()
    assert "belongs to nobody" in refused.value.message
    os.chown(root, os.geteuid(), os.getegid())
    assert DirectoryRecords(root, SITE).load().version == 1


def test_the_plan_key_and_journal_are_never_read_through_a_link(tmp_path: Path) -> None:
    root = tmp_path / "state"
    records = saved(root, records_of(n=1))
    planted = tmp_path / "attacker.key"
    planted.write_bytes(b"k" * 32)
    planted.chmod(0o600)
    records.key_path.symlink_to(planted)
    with pytest.raises(StateError) as refused:
        DirectoryRecords(root, SITE).plan_key()
    assert "symbolic link" in refused.value.message
    records.key_path.unlink()
    key = DirectoryRecords(root, SITE).plan_key()
    assert key is not None and key != b"k" * 32
    records.key_path.chmod(0o644)  # readable by others: anyone could seal plans
    with pytest.raises(RefusedForSafety) as refused:
        DirectoryRecords(root, SITE).plan_key(create=False)
    assert "could be read or replaced by others (mode 644): it was discarded" in str(
        refused.value
    )  # made private again, a key someone copied would go on sealing plans for them
    assert DirectoryRecords(root, SITE).plan_key(create=False) is None
    fresh = DirectoryRecords(root, SITE).plan_key()
    assert fresh is not None and fresh != key
    assert stat.S_IMODE(records.key_path.stat().st_mode) == 0o600
    records.journal_path.symlink_to(tmp_path / "elsewhere.jsonl")
    with pytest.raises(StateError), records.lock(Holder.current("apply")) as lease:
        records.journal_append(lease, {"event": "intent"})
    assert not (tmp_path / "elsewhere.jsonl").exists()


@pytest.mark.e2e
def test_a_journal_entry_the_disk_cuts_short_is_an_error_not_a_torn_intent(
    tmp_path: Path,
) -> None:
    """With room for part of an entry, the kernel writes that part and says so; the next
    write says the disk is full. The part alone is no entry: an intent apply believed durable
    would be dropped as a torn line after a crash, and its write never waited for."""
    done = run_on_small_disk(
        tmp_path,
        PRELUDE
        + """
    import os
    records.journal_append_many(lease, [{"event": "intent", "n": 1}])
    filler = Path(DISK) / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"x" * 4096):
            pass
    except OSError:
        pass
    os.close(fd)
    os.truncate(filler, max(0, filler.stat().st_size - 8192))  # room for two pages
    try:
        records.journal_append_many(lease, [{"event": "intent", "n": 2, "pad": "x" * 65536}])
    except StateError as exc:
        print(exc)
    else:
        print("appended")
    print([entry["n"] for entry in records.journal_entries()])
    """,
    )
    assert done.returncode == 0, done.stderr
    refusal, entries = done.stdout.splitlines()
    assert "the disk is full" in refusal, refusal
    assert entries == "[1]"
