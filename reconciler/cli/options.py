"""Options the commands share, in groups, so that each command takes only those that act.

``command_options(SITE, CONNECTION, RECORDS, OUTPUT)`` adds the options of those groups to a
command, which receives them packed in one ``SiteOptions`` (``site_opts``). ``state show`` has
no use for ``--concurrency``; ``plan`` has no lock to wait for.

Each value is settled here, once: the flag, else its ``RECONCILER_`` environment variable
(click reads both), else ``reconciler.toml`` (``--config``, or beside the manifest; see
``cli.config_file``), else the default. An old ``SITE_*`` variable is still read and named in
one line on stderr.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from reconciler import environment
from reconciler.cli.config_file import CONFIG_NAME, ConfigFile, config_home, find_config
from reconciler.environment import (
    API_FORMAT,
    CA_FILE,
    CONCURRENCY,
    CONFIG,
    CREDENTIALS_FILE,
    LOCK_LEASE,
    LOCK_TIMEOUT,
    RATE_LIMIT,
    STATE,
    TIMEOUT,
)
from reconciler.errors import ConfigError
from reconciler.render.formats import Formats
from reconciler.state.backend import DEFAULT_LEASE_SECONDS

F = TypeVar("F", bound=Callable[..., Any])

MAX_TIMEOUT = 300.0
"""The most ``--timeout`` (``RECONCILER_TIMEOUT``, ``timeout =``) may be: a call that can hang a
job for longer is a mistake, and ``reconciler.toml`` is a file a pull request can edit."""


@dataclass(frozen=True, slots=True)
class SiteOptions:
    """Everything the shared options say; a field whose option a command lacks keeps its default."""

    site: str | None = None
    sandbox: bool = False
    sandbox_seed: Path | None = None
    credentials: Path | None = None
    api_format: str = "json"
    concurrency: int = 8
    rate_limit: float | None = None
    timeout: float | None = None
    ca_file: Path | None = None
    state: str | None = None
    state_dir: Path | None = None
    lock_timeout: float = 0.0
    lock_lease: float = DEFAULT_LEASE_SECONDS
    log_format: str = "auto"
    verbose: int = 0
    no_color: bool = False

    def lists_unmanaged(self, show_unmanaged: bool) -> bool:
        """Whether the text view lists unmanaged objects: asked with --show-unmanaged or -v."""
        return show_unmanaged or self.verbose > 0

    @property
    def color(self) -> bool:
        """Colour only on a terminal, and never when asked not to (``--no-color``, NO_COLOR)."""
        return not self.no_color and sys.stdout.isatty() and "NO_COLOR" not in os.environ


SITE = (
    click.option(
        "--site",
        metavar="URL",
        help="Site address (overrides RECONCILER_SITE_URL and the manifest's site.url).",
    ),
    click.option(
        "--sandbox",
        is_flag=True,
        help="Use the embedded sandbox site instead of a real one (no server, no credentials; "
        "its database lives in .reconciler/sandbox/ beside the manifest).",
    ),
)
SANDBOX_SEED = (
    click.option(
        "--sandbox-seed",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="Seed file for a new embedded sandbox (default: the example seed shipped inside "
        "the tool, which holds the users of examples/site.yaml).",
    ),
)
CONNECTION = (
    click.option(
        "--credentials",
        type=click.Path(dir_okay=False, path_type=Path),
        envvar=environment.names(CREDENTIALS_FILE),
        show_envvar=True,
        help="YAML file with api_key and api_secret (mode 600). Default: the RECONCILER_API_KEY "
        "and RECONCILER_API_SECRET environment variables.",
    ),
    click.option(
        "--api-format",
        type=click.Choice(["json", "xml"]),
        default="json",
        show_default=True,
        envvar=API_FORMAT.name,
        show_envvar=True,
        help="Response format to ask the site for (xml for sites or proxies that pass only XML).",
    ),
    click.option(
        "--concurrency",
        type=click.IntRange(1, 64),
        default=8,
        show_default=True,
        envvar=CONCURRENCY.name,
        show_envvar=True,
        help="Most API calls in flight at once.",
    ),
    click.option(
        "--rate-limit",
        type=click.FloatRange(min=0.1),
        default=None,
        metavar="N",
        envvar=RATE_LIMIT.name,
        show_envvar=True,
        help="Most API calls a second (default: no limit).",
    ),
    click.option(
        "--timeout",
        type=click.FloatRange(min=1.0, max=MAX_TIMEOUT),
        default=None,
        metavar="SECONDS",
        envvar=TIMEOUT.name,
        show_envvar=True,
        help=f"Most time one API call may take, its whole answer included (default: 60, at "
        f"most {MAX_TIMEOUT:g}).",
    ),
    click.option(
        "--ca-file",
        type=click.Path(dir_okay=False, path_type=Path),
        envvar=environment.names(CA_FILE),
        show_envvar=True,
        help="PEM file of certificate authorities to trust for an https site instead of the "
        "system's (e.g. the ca.pem of 'reconciler sandbox serve --tls').",
    ),
)
RECORDS = (
    click.option(
        "--state",
        metavar="LOCATION",
        help="Where the tool's records live: a postgresql:// URL (password from PGPASSWORD, "
        ".pgpass or a service file; add ?schema=NAME to share a database) or a directory. "
        "Default: RECONCILER_STATE, else state in reconciler.toml, else site.state in the "
        "manifest, else .reconciler/ beside the manifest. Give every runner of a pipeline the "
        "same one.",
    ),
    click.option(
        "--state-dir",
        type=click.Path(file_okay=False, path_type=Path),
        help="Keep the records in this directory (the directory form of --state).",
    ),
)
LOCK = (
    click.option(
        "--lock-timeout",
        type=click.FloatRange(min=0.0),
        default=0.0,
        show_default=True,
        metavar="SECONDS",
        envvar=LOCK_TIMEOUT.name,
        show_envvar=True,
        help="How long to wait for another runner's lock on this site's records before "
        "refusing with exit code 4 (0: refuse at once, naming the holder). A runner that "
        "waits says whom it waits for.",
    ),
    click.option(
        "--lock-lease",
        type=click.FloatRange(min=1.0, max=600.0),
        default=DEFAULT_LEASE_SECONDS,
        show_default=True,
        metavar="SECONDS",
        envvar=LOCK_LEASE.name,
        show_envvar=True,
        help="How soon the lock is free again if this runner dies or loses its connection.",
    ),
)
OUTPUT = (
    click.option(
        "--log-format",
        type=click.Choice(["auto", "console", "json"]),
        default="auto",
        show_default=True,
        help="Log format on stderr (with -v): console on a terminal, json for log collectors.",
    ),
    click.option("-v", "--verbose", count=True, help="-v logs every API call, -vv debug."),
    click.option("--no-color", is_flag=True, help="Plain text output even on a terminal."),
)
PLAIN_OUTPUT = (OUTPUT[2],)
CONFIG_OPTION = click.option(
    "--config",
    type=click.Path(dir_okay=False),
    envvar=CONFIG.name,
    show_envvar=True,
    help=f"Settings file (TOML: concurrency, rate_limit, timeout, state, api_format, "
    f"lock_timeout, lock_lease, ca_file). Default: {CONFIG_NAME} beside the manifest, if "
    "there is one. A flag wins over its RECONCILER_ variable, which wins over the file.",
)

_FIELDS = {f.name for f in fields(SiteOptions)}


def command_options(*groups: tuple[Callable[[F], F], ...]) -> Callable[[F], F]:
    """Add the options of ``groups`` to a command; it receives them as ``site_opts``."""

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            given = {name: kwargs.pop(name) for name in list(kwargs) if name in _FIELDS}
            if given.get("state") and given.get("state_dir"):
                raise click.UsageError("Give either --state or --state-dir, not both.")
            note = environment.deprecation_note(os.environ)
            if note:
                click.echo(note, err=True)
            paths = kwargs.get("paths") or kwargs.get("source") or ()
            found = find_config(kwargs.pop("config"), config_home(tuple(map(str, paths))))
            if found is not None:
                given.update(_from_file(click.get_current_context(), found, given))
            kwargs["site_opts"] = SiteOptions(**given)
            return command(*args, **kwargs)

        decorated: Any = CONFIG_OPTION(wrapper)
        for group in reversed(groups):
            for option in reversed(group):
                decorated = option(decorated)
        return decorated  # type: ignore[no-any-return]

    return decorate


_UNSET = (None, ParameterSource.DEFAULT)


def checked_settings(found: ConfigFile) -> dict[str, Any]:
    """Every value of a settings file, converted and checked by the option it sets (the same
    range, the same choices as on the command line); ``ConfigError`` naming the file."""

    def holder() -> None:
        """Only carries the options, for their types."""

    for option in (*CONNECTION, *RECORDS, *LOCK):
        option(holder)
    params = {p.name: p for p in getattr(holder, "__click_params__", [])}
    ctx = click.Context(click.Command("settings"))
    checked: dict[str, Any] = {}
    for name, value in found.values.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ConfigError(f"{found.path}: {name} = {value!r} is not a single value.")
        if name == "state" and not isinstance(value, str):
            raise ConfigError(f"{found.path}: state must be a quoted location, not {value!r}.")
        try:
            checked[name] = params[name].type_cast_value(ctx, value)
        except click.BadParameter as exc:
            raise ConfigError(f"{found.path}: {name} = {value!r}: {exc.message}") from None
    return checked


def _from_file(ctx: click.Context, found: ConfigFile, given: dict[str, Any]) -> dict[str, Any]:
    """The file's values for the options this command has that neither a flag nor an
    environment variable set."""
    settled: dict[str, Any] = {}
    for name, value in checked_settings(found).items():
        if name not in given or ctx.get_parameter_source(name) not in _UNSET:
            continue
        if name == "state" and (given.get("state_dir") or os.environ.get(STATE.name)):
            continue  # --state-dir and RECONCILER_STATE name the records too, and win
        settled[name] = value
    return settled


site_options = command_options(SITE, SANDBOX_SEED, CONNECTION, RECORDS, OUTPUT)
"""Every command that reads the site: plan, drift, export."""

locking_site_options = command_options(SITE, SANDBOX_SEED, CONNECTION, RECORDS, LOCK, OUTPUT)
"""Every command that reads the site and changes the records: apply, adopt."""

records_options = command_options(SITE, RECORDS, PLAIN_OUTPUT)
"""Commands that only read the records: state show, state history."""

locking_records_options = command_options(SITE, RECORDS, LOCK, PLAIN_OUTPUT)
"""Commands that change the records without the site: state forget, state migrate."""


def format_option(formats: Formats[Any], **extra: Any) -> Callable[[F], F]:
    """``--format NAME``: the choices, the default and the help come from the report's
    ``Formats`` registry (``reconciler.render.formats``)."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(formats.names),
        default=formats.default,
        show_default=True,
        help=formats.help(),
        **extra,
    )


replace_option = click.option(
    "--replace",
    multiple=True,
    metavar="NAME",
    help="Allow this workspace to be deleted and re-created so its root_access or overrides "
    "can change. DESTROYS ALL ITS FILES. Repeat for several.",
)

assume_no_groups_option = click.option(
    "--assume-no-groups",
    is_flag=True,
    help="This is the first apply to a site that does not list user groups: none of the "
    "declared groups exists yet, so create them. Without it, apply refuses to create groups "
    "it cannot check (exit 3), as they may exist already.",
)

changed_option = click.option(
    "--changed",
    is_flag=True,
    help="Plan only what changed since the last apply: the objects whose manifest entry "
    "changed, was added or removed, or waits on an unfinished write (one workspace_list "
    "finds deletions and renames anywhere). For pull requests on big sites; falls back to a "
    "full plan, and says so, when the records cannot tell. Nightly drift stays a full read.",
)

show_unmanaged_option = click.option(
    "--show-unmanaged",
    is_flag=True,
    help="List every object on the site that the manifest never managed (by default the "
    "text view counts them in one line; -v lists them too).",
)


def target_options(command: F) -> F:
    """``--target NAME`` and ``--exclude NAME``: plan only some objects (engine/targets.py)."""
    command = click.option(
        "--exclude",
        "excludes",
        multiple=True,
        metavar="NAME",
        help="Leave out the workspaces, groups and users NAME matches (globs; KIND:NAME for "
        "one kind). Repeat for several; applies after --target.",
    )(command)
    return click.option(
        "--target",
        "targets",
        multiple=True,
        metavar="NAME",
        help="Plan only the workspaces, groups and users NAME matches: a name, a glob "
        "(Finance*) or KIND:NAME (workspace:, group:, user:). Repeat for several. Nothing "
        "outside the target is read, changed or deleted (prune included); the plan lists "
        "what it left out.",
    )(command)


comment_dir_option = click.option(
    "--comment-dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Also write the plan as pull-request comments: DIR/comment-1.md, comment-2.md, … "
    "(each under 65,535 characters, the summary in the first; stale ones removed). Each "
    "begins with a marker naming the site and records, so a job updates its comments.",
)
