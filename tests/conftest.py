"""Fixtures every test gets: no proxies, no real credentials, no network beyond loopback."""

from __future__ import annotations

import pytest

_ENVIRONMENT_LEAKS = (
    "SITE_URL",
    "SITE_API_KEY",
    "SITE_API_SECRET",
    "SITE_CREDENTIALS_FILE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep a developer's or CI's site settings and proxies out of every test."""
    for name in _ENVIRONMENT_LEAKS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "*")
