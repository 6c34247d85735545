"""Where the site URL and the credentials come from, and what is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reconciler.api.config import (
    ClientConfig,
    Secret,
    check_site_url,
    load_client_config,
    mask_key,
)
from reconciler.errors import ConfigError

ENV = {"SITE_API_KEY": "sandbox-admin-key", "SITE_API_SECRET": "sandbox-admin-secret"}


def _credentials(tmp_path: Path, text: str, mode: int = 0o600) -> str:
    path = tmp_path / "credentials.yaml"
    path.write_text(text)
    os.chmod(path, mode)
    return str(path)


@pytest.mark.parametrize(
    ("site", "env_url", "manifest", "expected"),
    [
        ("https://a.example", "https://b.example", "https://c.example", "https://a.example"),
        (None, "https://b.example", "https://c.example", "https://b.example"),
        (None, None, "https://c.example", "https://c.example"),
    ],
)
def test_site_url_precedence(
    site: str | None, env_url: str | None, manifest: str | None, expected: str
) -> None:
    env = {**ENV, **({"SITE_URL": env_url} if env_url else {})}
    assert load_client_config(site, manifest, None, env).site_url == expected


def test_credentials_from_the_environment() -> None:
    config = load_client_config("https://acme.example.net/", None, None, ENV)
    assert config.site_url == "https://acme.example.net"
    assert config.api_key == "sandbox-admin-key"
    assert config.api_secret.reveal() == "sandbox-admin-secret"


def test_credentials_file_with_mode_600(tmp_path: Path) -> None:
    path = _credentials(
        tmp_path, "api_key: k-from-file\napi_secret: s-from-file\nsite_url: https://f.example\n"
    )
    config = load_client_config(None, None, path, {})
    assert (config.site_url, config.api_key) == ("https://f.example", "k-from-file")
    assert config.api_secret.reveal() == "s-from-file"


def test_credentials_file_from_the_environment_and_env_vars_take_precedence(
    tmp_path: Path,
) -> None:
    path = _credentials(tmp_path, "api_key: k-from-file\napi_secret: s-from-file\n")
    env = {"SITE_CREDENTIALS_FILE": path, "SITE_API_KEY": "k-from-env"}
    config = load_client_config("https://a.example", None, None, env)
    assert config.api_key == "k-from-env"
    assert config.api_secret.reveal() == "s-from-file"


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_a_credentials_file_others_can_read_is_refused(tmp_path: Path, mode: int) -> None:
    path = _credentials(tmp_path, "api_key: k\napi_secret: s\n", mode)
    with pytest.raises(ConfigError) as caught:
        load_client_config("https://a.example", None, path, {})
    assert caught.value.hint == f"Run: chmod 600 {path}"


def test_a_stricter_mode_is_accepted(tmp_path: Path) -> None:
    path = _credentials(tmp_path, "api_key: k\napi_secret: s\n", 0o400)
    assert load_client_config("https://a.example", None, path, {}).api_key == "k"


@pytest.mark.parametrize(
    "text", ["api_key: [1, 2]\napi_secret: s\n", "- a\n- b\n", "api_key: k\napi_secret: 1234\n"]
)
def test_a_malformed_credentials_file_is_refused(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError, match="mapping of text"):
        load_client_config("https://a.example", None, _credentials(tmp_path, text), {})


def test_invalid_yaml_does_not_echo_the_file(tmp_path: Path) -> None:
    path = _credentials(tmp_path, "api_key: k\napi_secret: 'top-secret-value\n  : [\n")
    with pytest.raises(ConfigError) as caught:
        load_client_config("https://a.example", None, path, {})
    assert "top-secret-value" not in str(caught.value)


def test_a_missing_credentials_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Cannot read the credentials file"):
        load_client_config("https://a.example", None, str(tmp_path / "nope.yaml"), {})


@pytest.mark.parametrize(
    ("env", "site", "named"),
    [
        ({}, None, ["site URL", "API key", "API secret"]),
        ({"SITE_API_KEY": "k"}, "https://a.example", ["API secret"]),
        ({"SITE_API_SECRET": "s", "SITE_URL": "https://a.example"}, None, ["API key"]),
        ({"SITE_API_KEY": "", "SITE_API_SECRET": "s"}, "https://a.example", ["API key"]),
    ],
)
def test_missing_pieces_are_named(env: dict[str, str], site: str | None, named: list[str]) -> None:
    with pytest.raises(ConfigError) as caught:
        load_client_config(site, None, None, env)
    for piece in named:
        assert piece in caught.value.message
    assert caught.value.hint is not None and "RECONCILER_API_KEY" in caught.value.hint


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080",
        "http://127.5.6.7",
        "http://localhost:9000/",
        "http://[::1]:8080",
        "https://acme.example.net",
    ],
)
def test_loopback_may_use_plain_http(url: str) -> None:
    assert check_site_url(url) == url.rstrip("/")


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://acme.example.net", "Refusing plain http://"),
        ("http://10.0.0.1", "Refusing plain http://"),
        ("http://localhost.evil.example", "Refusing plain http://"),
        ("ftp://acme.example.net", "not an http(s) URL"),
        ("acme.example.net", "not an http(s) URL"),
        ("https://user:pw@acme.example.net", "credentials"),
        ("https://acme.example.net/?x=1", "query"),
    ],
)
def test_unsafe_or_malformed_urls_are_refused(url: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)")):
        check_site_url(url)


def test_a_pasted_api_address_is_trimmed_to_the_site() -> None:
    assert check_site_url("https://acme.example.net/api/") == "https://acme.example.net"


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("HTTPS://Acme.Example.NET/", "https://acme.example.net"),
        ("https://acme.example.net:443", "https://acme.example.net"),
        ("https://acme.example.net:8443/", "https://acme.example.net:8443"),
        ("http://LOCALHOST:80/", "http://localhost"),
        ("http://127.0.0.1:8800", "http://127.0.0.1:8800"),
        ("http://[::1]:80/x/", "http://[::1]/x"),
        ("https://acme.example.net/Files/A/", "https://acme.example.net/Files/A"),
        ("  https://acme.example.net:/  ", "https://acme.example.net"),
    ],
)
def test_one_site_has_one_normal_form(url: str, normal: str) -> None:
    assert check_site_url(url) == normal
    assert check_site_url(normal) == normal


def test_sites_on_different_paths_stay_different_sites() -> None:
    assert check_site_url("https://h.example/a") != check_site_url("https://h.example/b")


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("https://h.example:99999", "invalid port"),
        ("https://h.example:abc", "invalid port"),
        ("https://h.example:0", "invalid port"),
        ("http://[::1", "malformed"),
        ("https://[::1/x", "malformed"),
    ],
)
def test_malformed_site_urls_get_one_clear_message(url: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words) as caught:
        ClientConfig(url, "k", Secret("s"))
    assert caught.value.hint is not None and "--site" in caught.value.hint


@pytest.mark.parametrize(
    ("site", "env_url", "manifest", "note"),
    [
        (None, "https://b.example", "https://a.example", "Using SITE_URL https://b.example "
         "(the manifest's site.url is https://a.example)"),
        ("https://b.example", None, "https://a.example", "Using --site https://b.example "
         "(the manifest's site.url is https://a.example)"),
        (None, "https://B.example:443/", "https://b.example", None),  # the same site
        (None, "https://b.example", None, None),
        (None, None, "https://a.example", None),
        (None, "https://b.example", "https://a.example:99999", "Using SITE_URL "
         "https://b.example instead of the manifest's site.url"),
    ],
)  # fmt: skip
def test_a_site_url_overriding_a_different_manifest_site_is_noted(
    site: str | None, env_url: str | None, manifest: str | None, note: str | None
) -> None:
    env = {**ENV, **({"SITE_URL": env_url} if env_url else {})}
    assert load_client_config(site, manifest, None, env).site_note == note


def test_overrides_apply_and_none_means_default() -> None:
    config = load_client_config(
        "https://a.example", None, None, ENV, concurrency=3, rate_limit=None, response_format="xml"
    )
    assert (config.concurrency, config.rate_limit, config.response_format) == (3, None, "xml")


@pytest.mark.parametrize(
    "overrides",
    [
        {"concurrency": 0},
        {"rate_limit": 0},
        {"timeout": -1},
        {"read_attempts": 0},
        {"response_format": "yaml"},
    ],
)
def test_invalid_overrides_are_config_errors(overrides: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        load_client_config("https://a.example", None, None, ENV, **overrides)


def test_the_secret_never_shows_in_repr_or_str() -> None:
    config = ClientConfig("https://a.example", "sandbox-admin-key", Secret("sandbox-admin-secret"))
    for text in (repr(config), str(config), f"{config.api_secret}", repr(config.api_secret)):
        assert "sandbox-admin-secret" not in text
    assert config.api_secret == Secret("sandbox-admin-secret")
    assert config.api_secret != Secret("other")


@pytest.mark.parametrize(
    ("key", "masked"),
    [
        ("sandbox-admin-key", "sand…-key"),
        ("12345678abcd", "1234…abcd"),
        ("abcdefgh", "****efgh"),
        ("abc", "****"),
    ],
)
def test_mask_key(key: str, masked: str) -> None:
    assert mask_key(key) == masked
