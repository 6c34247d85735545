"""Where the records live, from the text a user writes (``--state``, ``site.state``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.errors import ConfigError
from reconciler.state.backend import StateLocation
from reconciler.state.directory import DirectoryRecords
from reconciler.state.locate import open_records, parse_location

BASE = Path("/srv/site")

LOCATIONS = {
    "postgresql://ci@db.internal:5432/records": StateLocation(
        "postgresql",
        "postgresql://ci@db.internal:5432/records",
        "postgresql://ci@db.internal:5432/records?schema=reconciler",
        schema="reconciler",
    ),
    "postgres://ci:hunter2-pw@db/records?sslmode=verify-full&schema=team_a": StateLocation(
        "postgresql",
        "postgres://ci:hunter2-pw@db/records?sslmode=verify-full",
        "postgres://ci@db/records?sslmode=verify-full&schema=team_a",
        schema="team_a",
    ),
    "postgresql:///records?host=/run/postgresql&password=hunter2-pw": StateLocation(
        "postgresql",
        "postgresql:///records?host=%2Frun%2Fpostgresql&password=hunter2-pw",
        "postgresql:///records?host=%2Frun%2Fpostgresql&schema=reconciler",
        schema="reconciler",
    ),
    ".reconciler": StateLocation("directory", "/srv/site/.reconciler", "/srv/site/.reconciler"),
    "../shared/state": StateLocation("directory", "/srv/shared/state", "/srv/shared/state"),
    "/mnt/state": StateLocation("directory", "/mnt/state", "/mnt/state"),
    "file:///mnt/state%20dir": StateLocation("directory", "/mnt/state dir", "/mnt/state dir"),
    "file://localhost/mnt/state": StateLocation("directory", "/mnt/state", "/mnt/state"),
    "  /mnt/state  ": StateLocation("directory", "/mnt/state", "/mnt/state"),
}


@pytest.mark.parametrize("text", LOCATIONS, ids=list(LOCATIONS))
def test_a_location_is_parsed_and_its_display_holds_no_password(text: str) -> None:
    location = parse_location(text, base_dir=BASE)
    assert location == LOCATIONS[text]
    assert "hunter2" not in location.display


REFUSED = {
    "": "is empty",
    "s3://bucket/state": "unknown scheme 's3'",
    "https://state.example/records": "unknown scheme 'https'",
    "file://server/share": "not a local file URL",
    "postgresql://db/records?schema=team-a": "'team-a' in the state location is not a plain",
    "postgresql://db/records?schema=1team": "not a plain identifier",
    "postgresql://[::1": "is not a valid URL",  # an unclosed IPv6 bracket
    "postgres://[::1/records": "is not a valid URL",
    "file://[::1": "is not a valid URL",
}


@pytest.mark.parametrize("text", REFUSED, ids=list(REFUSED))
def test_anything_else_is_refused_with_a_hint(text: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_location(text, base_dir=BASE)
    assert REFUSED[text] in refused.value.message
    assert refused.value.hint


def test_a_password_in_an_unknown_scheme_is_not_repeated() -> None:
    with pytest.raises(ConfigError) as refused:
        parse_location("mysql://root:hunter2-pw@db/records", base_dir=BASE)
    assert "hunter2" not in str(refused.value)


UNENCODED = [
    "postgresql://ci:hunter2/pw@db/records",  # a / the URL parser reads as the path
    "postgresql://ci:hunter2@pw@db/records",  # an @ inside the password
    "postgresql://ci:hunter2?pw#x@db/records",
    "postgres://ci@db/records?password=hunter2-pw",
]


@pytest.mark.parametrize("text", UNENCODED[:3])
def test_an_unencoded_password_is_refused_without_being_repeated(text: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_location(text, base_dir=BASE)
    assert "not percent-encoded" in refused.value.message
    assert "hunter2" not in str(refused.value)


def test_a_password_parameter_never_reaches_the_display() -> None:
    assert "hunter2" not in parse_location(UNENCODED[3], base_dir=BASE).display


def test_a_malformed_url_is_refused_without_repeating_its_password() -> None:
    with pytest.raises(ConfigError) as refused:
        parse_location("postgresql://ci:hunter2-pw@[::1/records", base_dir=BASE)
    assert "hunter2" not in str(refused.value)


def test_open_records_picks_the_backend_and_the_lease(tmp_path: Path) -> None:
    records = open_records(
        parse_location("state", base_dir=tmp_path), "https://a.example", lease_seconds=5
    )
    assert isinstance(records, DirectoryRecords)
    assert (records.kind, records.location, records.lease_seconds) == (
        "directory", str(tmp_path / "state"), 5,
    )  # fmt: skip
    with pytest.raises(ConfigError, match="too short"):
        open_records(parse_location("state", base_dir=tmp_path), "https://a.example",
                     lease_seconds=0)  # fmt: skip
