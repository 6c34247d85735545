"""The installed command (``reconciler.__main__.run``, also ``python -m reconciler``): the same
exit codes and the same complete output as ``cli.main``, every exit handler run, and the
compiled methods of its classes kept for the next start-up."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reconciler.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_OK
from tests.support.loopback import LoopbackSite

REPO = Path(__file__).resolve().parents[1]
QUICKSTART = REPO / "examples" / "quickstart" / "site.yaml"

pytestmark = pytest.mark.e2e


def command(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("RECONCILER_", "SITE_"))
    }
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    return subprocess.run(
        [sys.executable, "-m", "reconciler", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_the_command_exits_with_mains_code_and_its_whole_output(tmp_path: Path) -> None:
    shutil.copy(QUICKSTART, tmp_path / "site.yaml")
    planned = command(tmp_path, "plan", "site.yaml", "--sandbox", "--detailed-exitcode")
    assert planned.returncode == EXIT_CHANGES, planned.stderr
    assert planned.stdout.rstrip().endswith(
        "3 API calls (user_group_add 1, workspace_add 2)."
    )  # the last line: everything written before the process ended
    valid = command(tmp_path, "validate", "site.yaml")
    assert valid.returncode == EXIT_OK, valid.stderr
    (tmp_path / "broken.yaml").write_text("version: 1\nworkspaces: nope\n", encoding="utf-8")
    broken = command(tmp_path, "validate", "broken.yaml")
    assert broken.returncode == EXIT_ERROR
    assert "broken.yaml" in broken.stdout + broken.stderr and "Traceback" not in broken.stderr


def test_the_compiled_class_methods_are_kept_for_the_next_start(tmp_path: Path) -> None:
    assert command(tmp_path, "--version").returncode == EXIT_OK
    (kept,) = (tmp_path / "cache" / "site-reconciler").glob("class-code-*.bin")
    assert kept.stat().st_mode & 0o077 == 0
    written = kept.stat().st_mtime_ns
    assert command(tmp_path, "--version").returncode == EXIT_OK
    assert kept.stat().st_mtime_ns == written  # nothing new to learn: read, not written again


def imported_modules(stderr: str) -> set[str]:
    """The modules a ``python -X importtime`` process imported, from its report."""
    return {
        line.rsplit("|", 1)[1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def test_a_plan_over_the_network_imports_neither_httpx_nor_tomllib(site: LoopbackSite) -> None:
    """The network's transport is aiohttp's: httpx (the embedded sandbox's and the tests'
    transport, the webhook's client, https's authorities) is some 25 ms of a plan's start-up
    it never uses; tomllib is read only where a settings file exists (issue 47)."""
    planned = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "reconciler", "plan", "site.yaml"],
        cwd=site.workdir,
        env=site.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert planned.returncode == EXIT_OK, planned.stderr[-2000:]
    modules = imported_modules(planned.stderr)
    assert "aiohttp" in modules and "reconciler.api.transport" in modules  # the network's
    assert not {m for m in modules if m.split(".")[0] in {"httpx", "httpcore", "tomllib"}}


def test_a_long_output_through_a_pipe_arrives_whole(tmp_path: Path) -> None:
    """The process ends without tearing its heap down (``__main__._leave_as_is``), after
    stdout is flushed: a document of some 20 KB written to a pipe arrives to its last byte."""
    schema = command(tmp_path, "schema")
    assert schema.returncode == EXIT_OK, schema.stderr
    assert json.loads(schema.stdout)["$schema"]


PROBE = """
import atexit, sys
from pathlib import Path
here = Path(sys.argv[1])
if sys.argv[2] == "handler first":
    atexit.register(lambda: (here / "handler ran").write_text("yes"))
class Probe:
    def __del__(self):  # runs only when Python takes its heap apart at exit
        (here / "heap torn down").write_text("yes")
sys.modules["probe"] = Probe()
sys.argv = ["reconciler", "validate", "missing.yaml"]
from reconciler.__main__ import run
run()
"""


@pytest.mark.parametrize("before", ["handler first", "nothing first"])
def test_the_process_ends_with_mains_code_and_every_exit_handler_run(
    tmp_path: Path, before: str
) -> None:
    """The heap is not taken apart at exit -- unless an exit handler came before the
    command's (a coverage hook, say): then Python ends the process as ever, that handler
    included. Either way the exit code is ``main``'s."""
    ended = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path), before],
        cwd=tmp_path,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ended.returncode == EXIT_ERROR, ended.stderr
    assert "missing.yaml: invalid" in ended.stdout and "Traceback" not in ended.stderr
    torn_down = (tmp_path / "heap torn down").exists()
    if before == "handler first":
        assert (tmp_path / "handler ran").read_text() == "yes"
        assert torn_down
    else:
        assert not torn_down
