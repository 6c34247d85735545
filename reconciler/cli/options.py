"""Options shared by the commands that talk to a site, and the object they fill in."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class SiteOptions:
    site: str | None
    sandbox: bool
    sandbox_seed: Path | None
    state_dir: Path | None
    credentials: Path | None
    api_format: str
    concurrency: int
    rate_limit: float | None
    log_format: str
    verbose: int
    color: bool


def site_options(command: F) -> F:
    """Add the options every site command shares; the command receives ``site_opts``."""

    @click.option(
        "--site",
        metavar="URL",
        help="Site address (overrides SITE_URL and the manifest's site.url).",
    )
    @click.option(
        "--sandbox",
        is_flag=True,
        help="Run against the embedded sandbox site (state under the state directory) "
        "instead of a real site. No credentials needed.",
    )
    @click.option(
        "--sandbox-seed",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="Seed file for a new embedded sandbox (default: the example seed, "
        "examples/sandbox-seed.yaml).",
    )
    @click.option(
        "--state-dir",
        type=click.Path(file_okay=False, path_type=Path),
        help="Where the tool keeps its records (default: .reconciler/ beside the manifest).",
    )
    @click.option(
        "--credentials",
        type=click.Path(dir_okay=False, path_type=Path),
        envvar="SITE_CREDENTIALS_FILE",
        help="YAML file with api_key and api_secret (mode 600). Default: the SITE_API_KEY and "
        "SITE_API_SECRET environment variables.",
    )
    @click.option(
        "--api-format",
        type=click.Choice(["json", "xml"]),
        default="json",
        show_default=True,
        help="Response format to ask the site for (xml for sites or proxies that pass only XML).",
    )
    @click.option(
        "--concurrency",
        type=click.IntRange(1, 64),
        default=8,
        show_default=True,
        help="Most API calls in flight at once.",
    )
    @click.option(
        "--rate-limit",
        type=click.FloatRange(min=0.1),
        default=None,
        metavar="N",
        help="Most API calls a second (default: no limit).",
    )
    @click.option(
        "--log-format",
        type=click.Choice(["auto", "console", "json"]),
        default="auto",
        show_default=True,
        help="Log format on stderr: console on a terminal, json for log collectors.",
    )
    @click.option("-v", "--verbose", count=True, help="-v logs every API call, -vv debug.")
    @click.option("--no-color", is_flag=True, help="Plain text output even on a terminal.")
    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        no_color = kwargs.pop("no_color")
        kwargs["site_opts"] = SiteOptions(
            site=kwargs.pop("site"),
            sandbox=kwargs.pop("sandbox"),
            sandbox_seed=kwargs.pop("sandbox_seed"),
            state_dir=kwargs.pop("state_dir"),
            credentials=kwargs.pop("credentials"),
            api_format=kwargs.pop("api_format"),
            concurrency=kwargs.pop("concurrency"),
            rate_limit=kwargs.pop("rate_limit"),
            log_format=kwargs.pop("log_format"),
            verbose=kwargs.pop("verbose"),
            color=not no_color and sys.stdout.isatty() and "NO_COLOR" not in os.environ,
        )
        return command(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


output_format = click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="text for people, json for programs, markdown for a pull-request comment.",
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
