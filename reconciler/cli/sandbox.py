"""``reconciler sandbox serve``: run the sandbox site, an emulator of the site API, locally.

The profile switches are generated from ``reconciler.sandbox.settings.SWITCHES``, so every
switch has the same name and meaning here, in a seed's ``settings:`` and on the control surface.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from reconciler.cli import cli, epilog
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


def _switch_options(command: Callable[..., Any]) -> Callable[..., Any]:
    for switch in reversed(SWITCHES):
        if switch.metavar is None:
            option = click.option(
                switch.flag, switch.field, is_flag=True, default=None, help=switch.help
            )
        else:
            kind = _TYPE_OF_KIND[KINDS[switch.field]]
            option = click.option(
                switch.flag, switch.field, type=kind, metavar=switch.metavar, default=None,
                help=switch.help,
            )  # fmt: skip
        command = option(command)
    return command


@cli.group(
    epilog="\b\nExamples:\n  reconciler sandbox serve --db site.sqlite --port 8800\n"
    "  reconciler sandbox serve --latency-ms 20 --port 0 --ready-file url\n"
)
def sandbox() -> None:
    """A local emulator of the site API, for tests, demos and pipelines (no real site needed).

    The sandbox serves every users/workspaces/groups method under /api/<method> (JSON) and
    /api/<method>.xml, signed exactly as the site's API, with its state in SQLite. Its control
    surface under /_sandbox/ (calls, state, settings, health) needs no key: bind it to loopback.
    """


@sandbox.command(
    epilog=epilog(
        [(0, "stopped with Ctrl-C"), (1, "the seed is unusable, or the address cannot be bound")],
        [
            "reconciler sandbox serve --db site.sqlite --port 8800",
            "reconciler sandbox serve --latency-ms 20 --fail-rate 0.1 --port 0 --ready-file url",
        ],
    )
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8800, show_default=True,
    help="Port to listen on; 0 picks a free one (see --ready-file).",
)  # fmt: skip
@click.option(
    "--db", "db_path", type=click.Path(dir_okay=False), default=None,
    help="SQLite file that keeps the site's state across restarts [default: in memory].",
)  # fmt: skip
@click.option(
    "--seed", "seed_path", type=click.Path(dir_okay=False), default=None,
    help="YAML seed (users:, workspaces:, groups:, settings:), applied only to a new database "
    "[default: the example seed shipped inside the tool: the users of examples/site.yaml, "
    "sandbox-admin-key / sandbox-admin-secret].",
)  # fmt: skip
@click.option(
    "--ready-file", type=click.Path(dir_okay=False), default=None,
    help="Write the base URL to this file once the server accepts connections.",
)  # fmt: skip
@click.option("--access-log", is_flag=True, help="Log every request (off by default: it costs).")
@click.option(
    "--tls", is_flag=True,
    help="Serve HTTPS (as the real site does) with a certificate signed by a new authority of "
    "the sandbox's own; give its ca.pem to the tool with --ca-file.",
)  # fmt: skip
@click.option(
    "--tls-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Where --tls writes ca.pem and server.pem [default: sandbox-tls/ in the current "
    "directory].",
)  # fmt: skip
@click.option(
    "--profile", type=click.Choice(sorted(PROFILES)), default="default", show_default=True,
    help="A named set of switches: 'published' answers only as the public pages show (errors "
    "with HTTP 200 and their generic messages, stray-quote titles, PHP's JSON, signing over "
    "the site's own encoding). Switches given as well are added to it.",
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
    """Serve the sandbox site until interrupted (Ctrl-C).

    By default the sandbox is strict wherever the API documentation states a rule. Each
    switch below emulates one behaviour the documentation leaves open, so a client can be
    tested against every plausible site; switches given here override the seed's settings:.
    They can also be changed while running: POST /_sandbox/settings with a JSON body.
    """
    from reconciler.cli.target import default_seed
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
