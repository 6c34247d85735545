"""The drift webhook is bounded (issue 32, item 2): one total deadline for connecting, the
headers and the body, and a cap on the body read.

Real receivers on loopback (``tests/support/hostile_server.py``): one that sends its headers
and then drips its body, one that answers with a body far larger than memory should hold.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.errors import EXIT_ERROR
from reconciler.notify import NotifyError, send
from tests.support.hostile_server import Reply, Request, hostile_server
from tests.support.loopback import EXAMPLE_SITE, loopback_site

SECRETS = ("hook-pass", "T0SECRETPATH", "QUERYSECRET")
NO_END = 10**12  # the Content-Length announced by a body that never ends


def _drip(request: Request) -> Reply:
    """Headers at once, then a byte every 0.2 s, for ever."""
    return Reply(200, (b"o" for _ in iter(int, 1)), pause=0.2, length=NO_END)


def _secret_url(base: str) -> str:
    return base.replace("http://", "http://hook-user:hook-pass@") + (
        "/services/T0SECRETPATH?token=QUERYSECRET"
    )


def test_a_receiver_that_drips_its_body_is_cut_off_at_the_total_deadline() -> None:
    async def run() -> tuple[NotifyError, float]:
        with hostile_server(_drip) as server:
            started = time.monotonic()
            with pytest.raises(NotifyError) as caught:
                # a bound on the test itself: the old per-phase timeouts never fire here
                await asyncio.wait_for(send(_secret_url(server.url), {"text": "x"}, timeout=1), 20)
            return caught.value, time.monotonic() - started

    error, seconds = asyncio.run(run())
    assert seconds < 10, seconds  # 1 s asked: bounded, whatever the drip
    assert "no answer within 1 s" in error.message
    assert not any(secret in error.message for secret in SECRETS)


def test_a_huge_answer_is_not_read_beyond_the_cap() -> None:
    """Only the status matters: the body is read up to a few KiB, then the
    connection is dropped; the receiver never gets to send more than its socket buffers."""
    sent = 0

    def chunks() -> Iterator[bytes]:
        nonlocal sent
        for _ in range(4096):  # 256 MiB if it were all read
            sent += 2**16
            yield b"x" * 2**16

    def huge(request: Request) -> Reply:
        return Reply(200, chunks(), length=2**28)

    async def run() -> None:
        with hostile_server(huge) as server:
            await asyncio.wait_for(send(server.url, {"text": "x"}, timeout=5), 20)

    asyncio.run(run())  # a 2xx status: delivered
    assert sent < 2**25, sent  # at most the socket buffers' worth, never the whole body


def test_an_error_status_with_a_huge_body_is_still_one_error() -> None:
    def huge(request: Request) -> Reply:
        return Reply(502, (b"x" * 2**16 for _ in range(4096)), length=2**28)

    async def run() -> NotifyError:
        with hostile_server(huge) as server, pytest.raises(NotifyError) as caught:
            await asyncio.wait_for(send(server.url, {"text": "x"}, timeout=5), 20)
        return caught.value

    assert "it answered HTTP 502" in asyncio.run(run()).message


@pytest.mark.slow
def test_drift_notify_to_a_dripping_webhook_ends_with_exit_1_in_about_10_s(
    tmp_path: Path,
) -> None:
    """docs/pipelines.md's promise, with the real command: exit 1 after 10 s, the report printed
    first, one message naming only the webhook's scheme, host and port."""
    shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    with loopback_site(tmp_path) as site, hostile_server(_drip) as hook:
        started = time.monotonic()
        result = site.run("drift", "site.yaml", "--notify", _secret_url(hook.url))
        seconds = time.monotonic() - started
    assert result.returncode == EXIT_ERROR, result.stderr
    assert seconds < 30, seconds  # 10 s for the webhook, plus the read of the site
    assert "Drift:" in result.stdout  # the report came first
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [
        f"Error: The drift notification to {hook.url} (the rest of its URL hidden) failed: "
        "no answer within 10 s."
    ]
    assert not any(secret in result.stdout + result.stderr for secret in SECRETS)
