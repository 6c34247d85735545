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
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from reconciler import clock, environment
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
    click.option("--site", metavar="URL", help="The site's address [default: site.url]."),
    click.option("--sandbox", is_flag=True, help="Use the embedded sandbox site."),
)
SANDBOX_SEED = (
    click.option(
        "--sandbox-seed",
        metavar="FILE",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="Seed of a new sandbox [default: the example seed shipped inside the tool].",
    ),
)


class VariableOption(click.Option):
    """An option that also reads a ``RECONCILER_`` variable. The help, one line an option,
    does not list the variables (docs/commands.md does); a bad value from one still names it."""

    def get_error_hint(self, ctx: click.Context | None) -> str:
        names = [self.envvar] if isinstance(self.envvar, str) else list(self.envvar or ())
        given = [name for name in names if os.environ.get(name)]
        hint = super().get_error_hint(ctx)
        return hint + (f" (env var: '{given[0]}')" if given else "")


# Each value also comes from its RECONCILER_ variable, then reconciler.toml (module doc); the
# help stays one line an option, and docs/commands.md names the variables.
CONNECTION = (
    click.option(
        "--credentials",
        metavar="FILE",
        type=click.Path(dir_okay=False, path_type=Path),
        cls=VariableOption,
        envvar=environment.names(CREDENTIALS_FILE),
        help="File with api_key and api_secret (mode 600).",
    ),
    click.option(
        "--api-format",
        type=click.Choice(["json", "xml"]),
        default="json",
        cls=VariableOption,
        envvar=API_FORMAT.name,
        help="Answer format to ask for [default: json].",
    ),
    click.option(
        "--concurrency",
        metavar="N",
        type=click.IntRange(1, 64),
        default=8,
        cls=VariableOption,
        envvar=CONCURRENCY.name,
        help="Calls in flight [default: 8].",
    ),
    click.option(
        "--rate-limit",
        type=click.FloatRange(min=0.1),
        default=None,
        metavar="N",
        cls=VariableOption,
        envvar=RATE_LIMIT.name,
        help="Calls a second [default: no limit].",
    ),
    click.option(
        "--timeout",
        type=click.FloatRange(min=1.0, max=MAX_TIMEOUT),
        default=None,
        metavar="SECONDS",
        cls=VariableOption,
        envvar=TIMEOUT.name,
        help=f"Seconds per call [default: 60, at most {MAX_TIMEOUT:g}].",
    ),
    click.option(
        "--ca-file",
        metavar="FILE",
        type=click.Path(dir_okay=False, path_type=Path),
        cls=VariableOption,
        envvar=environment.names(CA_FILE),
        help="Authorities to trust for https (PEM).",
    ),
)
RECORDS = (
    click.option(
        "--state",
        metavar="LOCATION",
        help="Records: postgresql:// URL or directory.",
    ),
    click.option(
        "--state-dir",
        metavar="DIR",
        type=click.Path(file_okay=False, path_type=Path),
        help="Keep the records in this directory.",
    ),
)
LOCK = (
    click.option(
        "--lock-timeout",
        type=click.FloatRange(min=0.0),
        default=0.0,
        metavar="SECONDS",
        cls=VariableOption,
        envvar=LOCK_TIMEOUT.name,
        help="Wait for a held lock, then exit 4 [default: 0].",
    ),
    click.option(
        "--lock-lease",
        type=click.FloatRange(min=1.0, max=600.0),
        default=DEFAULT_LEASE_SECONDS,
        metavar="SECONDS",
        cls=VariableOption,
        envvar=LOCK_LEASE.name,
        help=f"Lock lease [default: {DEFAULT_LEASE_SECONDS:g}].",
    ),
)
OUTPUT = (
    click.option(
        "--log-format",
        type=click.Choice(["auto", "console", "json"]),
        default="auto",
        help="Log format on stderr (with -v).",
    ),
    click.option("-v", "--verbose", count=True, help="-v logs each API call, -vv debug."),
    click.option("--no-color", is_flag=True, help="Plain text even on a terminal."),
)
PLAIN_OUTPUT = (OUTPUT[2],)
CONFIG_OPTION = click.option(
    "--config",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    cls=VariableOption,
    envvar=CONFIG.name,
    help=f"Settings file [default: {CONFIG_NAME}].",
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
    help="Re-create this workspace: DESTROYS ITS FILES.",
)

assume_no_groups_option = click.option(
    "--assume-no-groups",
    is_flag=True,
    help="Create groups on a site not listing them.",
)

changed_option = click.option(
    "--changed",
    is_flag=True,
    help="Plan only what changed since the last apply.",
)

show_unmanaged_option = click.option(
    "--show-unmanaged",
    is_flag=True,
    help="List objects the manifest never managed.",
)


def target_options(command: F) -> F:
    """``--target NAME`` and ``--exclude NAME``: plan only some objects (engine/read/targets.py)."""
    command = click.option(
        "--exclude",
        "excludes",
        multiple=True,
        metavar="NAME",
        help="Leave out what NAME matches (repeatable).",
    )(command)
    return click.option(
        "--target",
        "targets",
        multiple=True,
        metavar="NAME",
        help="Plan only what NAME matches (repeatable).",
    )(command)


class DayType(click.ParamType[date]):
    """A day written ``YYYY-MM-DD`` (``reconciler.clock``)."""

    name = "date"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, date):
            return value
        try:
            return clock.parse_day(str(value))
        except clock.BadDay as exc:
            self.fail(str(exc), param, ctx)


at_option = click.option(
    "--at",
    type=DayType(),
    metavar="DATE",
    help="Judge expires: dates as on DATE (YYYY-MM-DD) [default: today, UTC].",
)


comment_dir_option = click.option(
    "--comment-dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Also write pull-request comments to DIR.",
)
