"""``reconciler.toml``: how the tool runs for one manifest, written once instead of on every
command line.

It sits beside the manifest (the directory given, or the first manifest file's directory; the
working directory for commands without one) or is named by ``--config``/``RECONCILER_CONFIG``.
It holds only how the tool runs -- never the site's secrets, which belong in the environment or
a private credentials file, nor the site itself, which the manifest declares::

    concurrency = 4
    rate_limit = 5.0          # API calls a second
    timeout = 30              # seconds one call may take
    state = "postgresql://reconciler@db.internal/ops?schema=site_acme"
    api_format = "json"
    lock_timeout = 300
    lock_lease = 30
    ca_file = "company-ca.pem"  # relative to this file

Precedence, for each setting: the command's flag > its ``RECONCILER_`` environment variable >
this file > the built-in default. ``cli.options`` applies the file to the options that were
neither given nor set in the environment; this module only reads and checks it.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconciler.errors import ConfigError

CONFIG_NAME = "reconciler.toml"

SETTINGS = {
    "concurrency": "concurrency",
    "rate_limit": "rate_limit",
    "timeout": "timeout",
    "state": "state",
    "api_format": "api_format",
    "lock_timeout": "lock_timeout",
    "lock_lease": "lock_lease",
    "ca_file": "ca_file",
}
"""Each key of the file and the option (``SiteOptions`` field) it sets."""

_SECRETS = ("api_key", "api_secret", "secret", "password", "plan_key", "token")
_SITE = ("site", "site_url", "url")


@dataclass(frozen=True, slots=True)
class ConfigFile:
    """The settings of one file, by option name, as written (converted by the options)."""

    path: Path
    values: dict[str, Any]


def config_home(paths: tuple[str, ...]) -> Path:
    """Where the file is looked for: beside the manifest (a saved plan file is not one)."""
    manifests = [Path(p) for p in paths if Path(p).suffix.lower() != ".json"]
    if not manifests:
        return Path.cwd()
    first = manifests[0]
    return first if first.is_dir() else first.parent


def find_config(explicit: str | None, home: Path) -> ConfigFile | None:
    """The file named by ``--config`` (which must exist), else ``reconciler.toml`` in ``home``."""
    if explicit:
        return read_config(Path(explicit))
    candidate = home / CONFIG_NAME
    return read_config(candidate) if candidate.is_file() else None


def read_config(path: Path) -> ConfigFile:
    """The file's settings, checked for unknown keys and secrets (values are checked by the
    option each one sets, as a flag's would be)."""
    import tomllib  # only where a settings file exists: every command's start-up is shorter

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"Cannot read the settings file {path}: {exc.strerror}.") from None
    except UnicodeDecodeError:
        raise ConfigError(f"The settings file {path} is not UTF-8 text.") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"The settings file {path} is not valid TOML: {exc}.",
            hint='Write one setting a line, e.g. concurrency = 4 or state = "postgresql://…".',
        ) from None
    for key in data:
        if key.lower() in _SECRETS or key.lower().endswith(("_secret", "_password", "_key")):
            raise ConfigError(
                f"The settings file {path} holds {key!r}: secrets never go in reconciler.toml.",
                hint="Set RECONCILER_API_KEY and RECONCILER_API_SECRET in the environment, or "
                "use a --credentials file with mode 600.",
            )
        if key.lower() in _SITE:
            raise ConfigError(
                f"The settings file {path} names the site ({key!r}): the manifest declares it.",
                hint="Write it as site.url in the manifest, or give --site/RECONCILER_SITE_URL.",
            )
        if key not in SETTINGS:
            close = difflib.get_close_matches(key.lower().replace("-", "_"), SETTINGS, n=1)
            guess = f" Did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"Unknown setting {key!r} in {path}.{guess}",
                hint="Known settings: " + ", ".join(SETTINGS) + ".",
            )
    values = {SETTINGS[key]: value for key, value in data.items()}
    for name in ("state", "ca_file"):  # a path in the file is relative to the file
        value = values.get(name)
        if isinstance(value, str) and value and "://" not in value:
            values[name] = str((path.parent / value).resolve())
    return ConfigFile(path, values)
