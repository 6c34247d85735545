"""The secret, the signing key and every signature sent never appear in any output.

A succeeding and a failing run are made with logging at debug, in console and in JSON form;
everything they print (stdout, stderr, structlog, the stdlib loggers of httpx) and every
exception's ``str``, ``repr`` and full chained traceback is searched for the secret, its
SHA-1 (the HMAC key) and each signature captured from the wire.
"""

from __future__ import annotations

import hashlib
import io
import logging
import traceback
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest
import structlog

from reconciler.api.answers import WorkspaceSettings
from reconciler.api.errors import SiteError
from reconciler.logs import LogFormat, configure_logging
from reconciler.sandbox.app import create_app
from reconciler.sandbox.settings import SandboxSettings
from reconciler.sandbox.transport import SandboxTransport
from tests.support.client_site import (
    ADMIN_SECRET,
    IN_PROCESS_URL,
    Site,
    exercise_every_method,
    seed_with_users,
)

pytestmark = pytest.mark.anyio
WRONG_SECRET = "wrong-secret-never-shown"


class WireTap(httpx.AsyncBaseTransport):
    """Passes requests on and keeps every signature that went out."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.signatures: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        for raw in (request.url.query, request.content):
            self.signatures += [v for k, v in parse_qsl(raw.decode()) if k == "signature"]
        return await self.inner.handle_async_request(request)


@pytest.fixture
def stdlib_output() -> Iterator[io.StringIO]:
    """Everything the stdlib loggers (httpx, httpcore, ...) emit, at any level."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield stream
    root.removeHandler(handler)
    root.setLevel(previous)
    structlog.reset_defaults()


class TappedSite(Site):
    """A sandbox in-process whose every request passes the wire tap."""

    def __init__(self, settings: SandboxSettings | None = None) -> None:
        app = create_app(settings, seed=seed_with_users())
        super().__init__(IN_PROCESS_URL, app)
        self.tap = WireTap(SandboxTransport(app))

    def transport(self) -> httpx.AsyncBaseTransport:
        return self.tap


async def _failing_runs(site: TappedSite) -> list[SiteError]:
    """Runs that end in each kind of failure; their errors are returned for inspection."""
    errors: list[SiteError] = []

    async def expect_failure(secret: str, *calls: Any, **options: Any) -> None:
        async with site.client(secret=secret, **options) as client:
            for method, *args in calls:
                try:
                    await getattr(client, method)(*args)
                except SiteError as error:
                    errors.append(error)
                    structlog.get_logger("test").error("call failed", exc_info=error)

    await expect_failure(WRONG_SECRET, ("user_info", 1001), ("workspace_delete", 1))
    await site.set(drop_after_commit_rate=1.0)
    await expect_failure(ADMIN_SECRET, ("workspace_add", ["Dropped"], WorkspaceSettings()))
    await site.set(drop_after_commit_rate=0.0, fail_rate=1.0)
    await expect_failure(ADMIN_SECRET, ("user_info", 1001), read_attempts=2)
    await site.set(fail_rate=0.0)
    await expect_failure(ADMIN_SECRET, ("user_info", 424242), ("users_location_access", "x"))
    unreachable = WireTap(httpx.MockTransport(_refuse_connection))
    await expect_failure(ADMIN_SECRET, ("user_permissions_location", "/"), transport=unreachable)
    site.tap.signatures += unreachable.signatures
    return errors


def _refuse_connection(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("All connection attempts failed", request=request)


@pytest.mark.parametrize("log_format", ["console", "json"])
async def test_no_secret_or_signature_in_any_output(
    log_format: LogFormat, capsys: pytest.CaptureFixture[str], stdlib_output: io.StringIO
) -> None:
    logs = io.StringIO()
    configure_logging(log_format, verbosity=2, stream=logs)
    site, xml_site = TappedSite(SandboxSettings(random_seed=1)), TappedSite()
    await exercise_every_method(site, "json")
    await exercise_every_method(xml_site, "xml")
    errors = await _failing_runs(site)
    signatures = site.tap.signatures + xml_site.tap.signatures
    assert len(errors) == 7 and len(signatures) > 30

    outputs = capsys.readouterr()
    texts = [logs.getvalue(), stdlib_output.getvalue(), outputs.out, outputs.err]
    for error in errors:
        texts += [str(error), repr(error), "".join(traceback.format_exception(error))]
    everything = "\n".join(texts)
    masked_key_shown = "sand…-key" in everything or "sand\\u2026-key" in everything
    assert "api_call" in everything and masked_key_shown  # the logs were captured
    forbidden = [
        ADMIN_SECRET,
        WRONG_SECRET,
        hashlib.sha1(ADMIN_SECRET.encode()).hexdigest(),
        hashlib.sha1(WRONG_SECRET.encode()).hexdigest(),
        "sandbox-admin-key",  # the key itself is only ever shown masked
        *signatures,
    ]
    leaked = [secret for secret in forbidden if secret in everything]
    assert leaked == []
