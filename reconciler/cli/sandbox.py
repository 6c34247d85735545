"""``reconciler sandbox serve``: run the sandbox site, an emulator of the site API, locally.

The profile switches are generated from ``reconciler.sandbox.settings.SWITCHES``, so every
switch has the same name and meaning here, in a seed's ``settings:`` and on the control surface.
"""

from __future__ import annotations

import shutil
import sqlite3
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from reconciler.cli import cli, epilog
from reconciler.cli.options import PLAIN_OUTPUT, RECORDS, SiteOptions, command_options
from reconciler.errors import ConfigError
from reconciler.sandbox.errors import SeedError
from reconciler.sandbox.settings import (
    KINDS,
    PROFILES,
    SWITCHES,
    SettingsError,
    profile_settings,
)
from reconciler.sandbox.tls import make_certificates

_TYPE_OF_KIND: dict[str, click.ParamType[Any]] = {
    "count": click.IntRange(min=0),
    "seed": click.IntRange(min=0),
    "share": click.FloatRange(0.0, 1.0),
    "classes": click.IntRange(0, 4),
}
"""The command-line type of each kind of setting (``settings.KINDS``)."""

reset_options = command_options(RECORDS, PLAIN_OUTPUT)


def _switch_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Every switch, as an option left out of the option list: the help names them all in one
    paragraph (``SWITCH_LIST``) and docs/commands.md says what each does."""
    for switch in reversed(SWITCHES):
        if switch.metavar is None:
            option = click.option(
                switch.flag, switch.field, is_flag=True, default=None, help=switch.help,
                hidden=True,
            )  # fmt: skip
        else:
            kind = _TYPE_OF_KIND[KINDS[switch.field]]
            option = click.option(
                switch.flag, switch.field, type=kind, metavar=switch.metavar, default=None,
                help=switch.help, hidden=True,
            )  # fmt: skip
        command = option(command)
    return command


SWITCH_LIST = "\n".join(
    textwrap.wrap(
        ", ".join(
            switch.flag + (f" {switch.metavar}" if switch.metavar else "") for switch in SWITCHES
        ),
        width=76,
        break_on_hyphens=False,
        break_long_words=False,
    )
)
SERVE_HELP = f"""Serve the sandbox site until interrupted (Ctrl-C).

Strict wherever the API documentation states a rule; each switch emulates one behaviour it
leaves open (also a seed's settings:, or POST /_sandbox/settings while running). What each
does: docs/commands.md.

\b
Switches:
{SWITCH_LIST}
"""


@cli.group(
    epilog="\b\nExamples:\n  reconciler sandbox serve --db site.sqlite --port 0 --ready-file url\n"
    "  reconciler sandbox reset examples/\n"
)
def sandbox() -> None:
    """A local emulator of the site API, for tests, demos and pipelines (no real site needed).

    Its control surface (/_sandbox/) needs no key: bind it to loopback. Details:
    docs/commands.md.
    """


@sandbox.command(
    help=SERVE_HELP,
    epilog=epilog(
        [(0, "stopped with Ctrl-C"), (1, "the seed is unusable, or the address cannot be bound")],
        [
            "reconciler sandbox serve --db site.sqlite --port 0 --ready-file url",
            "reconciler sandbox serve --latency-ms 20 --fail-rate 0.1 --port 0 --ready-file url",
        ],
    ),
)
@click.option("--host", default="127.0.0.1", help="Address to listen on [default: 127.0.0.1].")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8800, metavar="N",
    help="Port; 0 picks a free one [default: 8800].",
)  # fmt: skip
@click.option(
    "--db", "db_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
    help="SQLite file of the site [default: in memory].",
)  # fmt: skip
@click.option(
    "--seed", "seed_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
    help="Seed of a new database [default: the example's].",
)  # fmt: skip
@click.option(
    "--ready-file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
    help="Write the URL here once serving.",
)  # fmt: skip
@click.option("--access-log", is_flag=True, help="Log every request.")
@click.option("--tls", is_flag=True, help="Serve HTTPS, signed by its own authority.")
@click.option(
    "--tls-dir", type=click.Path(file_okay=False, path_type=Path), default=None, metavar="DIR",
    help="Where --tls writes ca.pem [default: sandbox-tls/].",
)  # fmt: skip
@click.option(
    "--profile", type=click.Choice(sorted(PROFILES)), default="default",
    help="A named set of switches [default: default].",
)  # fmt: skip
@_switch_options
def serve(
    host: str,
    port: int,
    db_path: str | None,
    seed_path: str | None,
    ready_file: str | None,
    access_log: bool,
    tls: bool,
    tls_dir: Path | None,
    profile: str,
    **switches: Any,
) -> None:
    from reconciler.cli.site_choice import default_seed
    from reconciler.sandbox.seed import load_seed_file
    from reconciler.sandbox.server import serve as serve_sandbox

    given = {name: value for name, value in switches.items() if value is not None}
    try:
        settings = profile_settings(profile).updated(given)
        duplicates = given.get("allow_duplicate_workspace_names")
        seed = load_seed_file(
            seed_path or str(default_seed()), allow_duplicate_workspace_names=duplicates
        )
    except (SeedError, SettingsError) as exc:
        raise ConfigError(str(exc)) from None

    certificates = None
    if tls:
        try:
            certificates = make_certificates(tls_dir or Path("sandbox-tls"), host)
        except OSError as exc:
            raise ConfigError(f"cannot write the TLS files: {exc}") from None

    def announce(url: str) -> None:
        state = db_path or "in memory"
        click.echo(
            f"Sandbox site at {url} (state: {state}); control surface: {url}/_sandbox/", err=True
        )
        if certificates is not None:
            click.echo(
                f"Trust its certificate with --ca-file {certificates.ca} (or RECONCILER_CA_FILE).",
                err=True,
            )

    try:
        serve_sandbox(
            host=host, port=port, settings=settings, seed=seed, db_path=db_path,
            ready_file=ready_file, access_log=access_log, on_ready=announce, tls=certificates,
        )  # fmt: skip
    except (SeedError, SettingsError) as exc:
        raise ConfigError(str(exc)) from None
    except sqlite3.Error as exc:
        raise ConfigError(f"cannot use the database {db_path}: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None


@sandbox.command(
    epilog=epilog(
        [(0, "the embedded sandbox was reset (or there was none)"), (1, "error")],
        ["reconciler sandbox reset examples/"],
    )
)
@click.argument("paths", nargs=-1, type=click.Path(exists=True), metavar="[MANIFEST]...")
@reset_options
def reset(paths: tuple[str, ...], site_opts: SiteOptions) -> int:
    """Start the embedded sandbox (--sandbox) afresh: its site back to the seed, its records gone.

    The sandbox and its records are found as `plan MANIFEST --sandbox` finds them (beside the
    manifest, or --state-dir). Records of other sites there are kept. Run it when no other
    command uses the sandbox.
    """
    from dataclasses import replace

    from reconciler.cli.manifest_input import load_desired
    from reconciler.cli.site_choice import SANDBOX_URL, locate
    from reconciler.state.directory import site_directory_name

    desired = load_desired(paths).desired if paths else None
    target = locate(
        replace(site_opts, sandbox=True), paths, manifest_state=desired.state if desired else None
    )
    if target.state.kind != "directory":
        raise ConfigError(
            f"The embedded sandbox's records are in {target.state.display}, not in a directory: "
            "sandbox reset only clears local ones.",
            hint="Give the directory the sandbox uses (--state-dir DIR), or use a fresh one.",
        )
    records = Path(target.state.target) / "sites" / site_directory_name(SANDBOX_URL)
    found = [path for path in (target.sandbox_dir, records) if path.exists()]
    for path in found:
        shutil.rmtree(path)
    where = target.state.display
    click.echo(
        f"Reset the embedded sandbox in {where}: its site is the seed again, its records are empty."
        if found
        else f"Nothing to reset: there is no embedded sandbox in {where}."
    )
    return 0
