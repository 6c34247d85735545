"""The real server over loopback, and the ``sandbox serve`` command line.

These tests start ``python -m reconciler sandbox serve`` as a child process (via
``running_sandbox``), so they cover what a user runs: uvicorn, a real TCP connection that is
really dropped, SQLite on disk across a restart.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from reconciler.cli import main
from reconciler.sandbox.server import running_sandbox
from reconciler.sandbox.settings import SandboxSettings
from tests.support.sandbox_site import ADMIN, EXAMPLE_SEED, FORM
from tests.support.signing import signed_get_url, signed_post


def _post(base_url: str, method: str, params: dict) -> httpx.Response:
    url, body = signed_post(
        base_url, method, params, api_key=ADMIN.api_key, api_secret=ADMIN.api_secret
    )
    return httpx.post(url, content=body, headers=FORM)


def _raw_post(base_url: str, method: str, params: dict) -> bytes:
    """Send a signed POST on a bare socket and return every byte the server sends back."""
    url, body = signed_post(
        base_url, method, params, api_key=ADMIN.api_key, api_secret=ADMIN.api_secret
    )
    parts = urlsplit(url)
    request = (
        f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {len(body)}\r\n\r\n{body}"
    ).encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as conn:
        conn.sendall(request)
        received = b""
        while chunk := conn.recv(4096):
            received += chunk
    return received


@pytest.mark.e2e
def test_a_dropped_write_is_committed_and_the_connection_closes_without_a_byte(
    tmp_path: Path,
) -> None:
    log = tmp_path / "server.log"
    settings = SandboxSettings(drop_after_commit_rate=1.0)
    with running_sandbox(EXAMPLE_SEED, settings, log_path=log) as base_url:
        with pytest.raises(httpx.TransportError):
            _post(base_url, "workspace_add", {"name": "Ghost"})
        assert _raw_post(base_url, "user_group_add", {"name": "phantoms"}) == b""
        read = httpx.get(
            signed_get_url(
                base_url, "workspace_list", {}, api_key=ADMIN.api_key, api_secret=ADMIN.api_secret
            )
        )
        state = httpx.get(f"{base_url}/_sandbox/state").json()
    assert read.status_code == 200  # reads are never dropped
    assert [ws["name"] for ws in state["workspaces"]] == ["Legacy Scans", "Ghost"]
    assert [group["name"] for group in state["groups"]] == ["old-contractors", "phantoms"]
    output = log.read_text()
    assert "Traceback" not in output and "ERROR" not in output and "Exception" not in output
    assert "Sandbox site at http://127.0.0.1:" in output


@pytest.mark.e2e
def test_state_persists_across_a_restart_and_the_seed_is_not_reapplied(tmp_path: Path) -> None:
    db = tmp_path / "site.sqlite"
    with running_sandbox(EXAMPLE_SEED, db_path=db) as base_url:
        assert _post(base_url, "workspace_add", {"name": "Kept"}).status_code == 200
        assert _post(base_url, "workspace_delete", {"workspace_id": 1}).status_code == 200
    other_seed = {"users": [{"username": "someone", "email": "someone@x.example"}]}
    with running_sandbox(other_seed, db_path=db) as base_url:
        state = httpx.get(f"{base_url}/_sandbox/state").json()
        answer = _post(base_url, "workspace_add", {"name": "Later"}).json()
    assert [ws["name"] for ws in state["workspaces"]] == ["Kept"]
    assert len(state["users"]) == 22
    assert answer == {"workspaceAdd": {"workspaceId": 3}}  # IDs are not reused after a restart


@pytest.mark.e2e
def test_the_access_log_masks_keys_signatures_and_passwords(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    password = "Correct-Horse-Battery-Staple-9"
    user = {"first_name": "N", "last_name": "N", "email": "n@x.example", "user_name": "nn"}
    with running_sandbox(EXAMPLE_SEED, log_path=log, access_log=True) as base_url:
        added = _post(base_url, "user_add", {**user, "password": password})
        url, body = signed_post(
            base_url, "user_add", {}, api_key=ADMIN.api_key, api_secret=ADMIN.api_secret
        )
        misplaced = httpx.post(f"{url}?{body}&password={password}")  # refused, but logged
        read = httpx.get(
            signed_get_url(
                base_url, "workspace_list", {}, api_key=ADMIN.api_key, api_secret=ADMIN.api_secret
            )
        )
    assert (added.status_code, misplaced.status_code, read.status_code) == (200, 400, 200)
    output = log.read_text()
    signature = read.request.url.params["signature"]
    for secret in (password, ADMIN.api_key, ADMIN.api_secret, signature):
        assert secret not in output
    assert '"POST /api/user_add HTTP/1.1" 200' in output
    assert "/api/workspace_list?api_key=***&timestamp=" in output
    assert "&signature=***" in output and "&password=***" in output


@pytest.mark.e2e
def test_every_switch_reaches_the_server_through_the_command_line() -> None:
    settings = SandboxSettings(
        errors_as_200=True, timestamp_window=42, open_workspace_list=True,
        allow_duplicate_workspace_names=True, partial_multi_add=True,
        omit_groups_in_location_access=True, rate_limit=500, latency_ms=1, fail_rate=0.01,
        drop_after_commit_rate=0.02, refuse_workspace_info=True, legacy_workspace_list=True,
        published_error_titles=True, published_messages=True, php_json=True, strict_signing=True,
        legacy_location_method=True, unknown_ids_as_400=True,
        keep_name_spaces=True, name_length_in_bytes=True, strict_memberships=True,
        refuse_user_delete_of_members=True,
        exact_workspace_paths=True, password_min_length=12, password_classes=4,
        random_seed=9,
    )  # fmt: skip
    assert all(
        value != default
        for value, default in zip(
            settings.to_dict().values(), SandboxSettings().to_dict().values(), strict=True
        )
    )
    with running_sandbox(EXAMPLE_SEED, settings) as base_url:
        served = httpx.get(f"{base_url}/_sandbox/settings").json()
    assert served == settings.to_dict()


# ---- the command line's errors: one message, exit code 1, no traceback ----------------------


def _run_cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["reconciler", "sandbox", "serve", *args])
    with pytest.raises(SystemExit) as caught:
        main()
    captured = capsys.readouterr()
    return int(caught.value.code or 0), captured.err


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--fail-rate", "2"], "Invalid value for '--fail-rate'"),
        (["--rate-limit", "-1"], "Invalid value for '--rate-limit'"),
        (["--port", "70000"], "Invalid value for '--port'"),
        (["--latency-ms", "fast"], "Invalid value for '--latency-ms'"),
        (["--fail-rat", "0.1"], "No such option '--fail-rat'"),
        (["--seed", "/nonexistent/seed.yaml"], "Error: /nonexistent/seed.yaml: no such seed file"),
    ],
)
def test_bad_arguments_end_with_one_message(monkeypatch, capsys, args, fragment) -> None:
    code, err = _run_cli(monkeypatch, capsys, *args)
    assert code == 1
    assert fragment in err and "Traceback" not in err


def test_an_invalid_seed_names_the_file_and_the_place(monkeypatch, capsys, tmp_path: Path) -> None:
    seed = tmp_path / "seed.yaml"
    seed.write_text("users:\n  - {username: a}\n")
    code, err = _run_cli(monkeypatch, capsys, "--seed", str(seed))
    assert code == 1
    assert err.strip() == f"Error: {seed}: users[0].email: required"


def test_a_busy_port_is_reported(monkeypatch, capsys) -> None:
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        code, err = _run_cli(monkeypatch, capsys, "--port", str(port), "--seed", str(EXAMPLE_SEED))
    assert code == 1
    assert f"Error: cannot serve on 127.0.0.1:{port}: Address already in use" in err


def test_an_unusable_database_is_reported(monkeypatch, capsys, tmp_path: Path) -> None:
    not_a_db = tmp_path / "notes.txt"
    not_a_db.write_text("this is not a database\n" * 100)
    code, err = _run_cli(monkeypatch, capsys, "--db", str(not_a_db))
    assert code == 1
    assert f"Error: cannot use the database {not_a_db}:" in err and "Traceback" not in err
