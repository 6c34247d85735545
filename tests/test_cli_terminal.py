"""``apply`` at a desk: the real console script in a pseudo-terminal, read back as a screen.

The site is the embedded sandbox with some latency, 25 workspaces that each need one user,
so both the read and the apply are long enough to draw a progress bar. The last test checks,
on the engine, the promise the Ctrl-C report makes.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from pathlib import Path

import pytest
import yaml

from reconciler.core.planning import PlanOptions
from reconciler.core.records import Records
from reconciler.engine import workflow
from reconciler.engine.planning.plan import Plan
from reconciler.engine.workflow import AutoApprove, LoadedManifest
from reconciler.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_REFUSED
from reconciler.kinds.workspace.actions import WorkspaceAdd
from tests.support.cli_runner import run_reconciler
from tests.support.engine_site import EngineSite, engine_site
from tests.support.models import desired_site
from tests.support.sandbox_site import example_seed
from tests.support.terminal import Terminal

TEAMS = 25
PROMPT_SECONDS = 3.0  # how long the test sits at the prompt before pressing Enter
STYLE = re.compile(r"\x1b\[[0-9;]*m")
BAR_FRAME = re.compile(r"(Reading the site|Applying changes)[^\d\r\n]*(\d+)/(\d+)")


def write_site(directory: Path, latency_ms: int) -> Path:
    """A seed whose 25 workspaces have no users, and a manifest giving each one user."""
    users = [
        {"id": 1, "username": "admin", "email": "admin@x.example", "first_name": "Site",
         "last_name": "Admin", "admin": True, "api_key": "sandbox-admin-key",
         "api_secret": "sandbox-admin-secret"},
    ]  # fmt: skip
    users += [
        {"id": 100 + n, "username": f"user{n:02}", "email": f"user{n:02}@x.example",
         "first_name": "User", "last_name": f"{n:02}"}
        for n in range(1, TEAMS + 1)
    ]  # fmt: skip
    seed = {
        "settings": {"latency_ms": latency_ms},
        "users": users,
        "workspaces": [{"name": f"Team {n:02}", "users": []} for n in range(1, TEAMS + 1)],
    }
    (directory / "seed.yaml").write_text(yaml.safe_dump(seed), encoding="utf-8")
    workspaces = [{"name": f"Team {n:02}", "users": [f"user{n:02}"]} for n in range(1, TEAMS + 1)]
    manifest = directory / "site.yaml"
    manifest.write_text(yaml.safe_dump({"version": 1, "workspaces": workspaces}), "utf-8")
    return manifest


SANDBOX = ("--sandbox", "--sandbox-seed", "seed.yaml", "--concurrency", "2")


def last_frames(raw: str) -> dict[str, tuple[int, int]]:
    """The last frame each progress bar drew: description -> (done, total)."""
    frames: dict[str, tuple[int, int]] = {}
    for found in BAR_FRAME.finditer(STYLE.sub("", raw)):
        frames[found.group(1)] = (int(found.group(2)), int(found.group(3)))
    return frames


@pytest.mark.e2e
def test_the_prompt_follows_a_cleared_bar_and_keeps_what_is_typed(tmp_path: Path) -> None:
    write_site(tmp_path, latency_ms=40)
    terminal = Terminal("apply", "site.yaml", *SANDBOX, cwd=tmp_path)
    terminal.expect(r"Only 'yes' will be accepted:$")
    terminal.type("ye")
    terminal.watch(0.6)  # a bar left live would redraw several times over the line meanwhile
    terminal.type("s")
    terminal.watch(PROMPT_SECONDS)
    assert terminal.screen.lines()[terminal.screen.row].endswith("accepted: yes")
    assert "Reading the site" not in terminal.screen.text  # cleared before the plan
    terminal.type("\r")
    assert terminal.wait() == EXIT_OK

    lines = terminal.screen.text.splitlines()
    assert lines[0] == "Site: https://sandbox.invalid"  # the plan starts on its own line
    prompt = next(line for line in lines if line.startswith("Apply these changes"))
    assert prompt == (
        "Apply these changes to https://sandbox.invalid? Only 'yes' will be accepted: yes"
    )
    summary = next(line for line in lines if line.startswith("Apply complete:"))
    assert summary.startswith(f"Apply complete: {TEAMS} done")
    # The time reported is the work's, not the seconds a person spent reading the plan.
    reported = re.search(r"Time: ([\d.]+) s", terminal.screen.text.replace("\n", ""))
    assert reported, terminal.screen.text
    seconds = float(reported.group(1))
    assert seconds < PROMPT_SECONDS
    assert "Applying changes" not in terminal.screen.text
    # Both bars were drawn, named after their work, and each ended at its total.
    frames = last_frames(terminal.raw)
    done, total = frames["Reading the site"]
    assert done == total >= 20
    assert frames["Applying changes"] == (TEAMS, TEAMS)
    # The question is styled on purpose: the site's address in bold, the "?" outside it,
    # nothing underlined or coloured as code.
    question = terminal.raw[terminal.raw.index("Apply these changes") :]
    question = question[: question.index("accepted:")]
    assert "https://sandbox.invalid\x1b[0m?" in question
    assert "\x1b[4m" not in question and "\x1b[4;" not in question


@pytest.mark.e2e
@pytest.mark.slow
def test_ctrl_c_during_apply_says_what_was_done_and_how_to_finish(tmp_path: Path) -> None:
    write_site(tmp_path, latency_ms=150)
    # one write at a time, pressed early: 18 writes (2.7 s) to go, which a loaded machine cannot
    # finish before the key lands
    terminal = Terminal(
        "apply", "site.yaml", *SANDBOX, "--concurrency", "1", "--auto-approve", cwd=tmp_path
    )
    terminal.expect(r"Applying changes[^\d\n]*[3-7]/25", timeout=60)
    terminal.type("\x03")  # Ctrl-C, as a person presses it: SIGINT from the terminal
    assert terminal.wait() == EXIT_INTERRUPTED

    text = terminal.screen.text
    assert "Applying changes" not in text  # the bar is cleared before the report
    found = re.search(r"Interrupted during apply: (\d+) of 25 changes made, (\d+) not made\.", text)
    assert found, text
    made, not_made = int(found.group(1)), int(found.group(2))
    assert made >= 3 and made + not_made == TEAMS
    assert "\nMade:\n  " in text and "\nNot made:\n  " in text
    assert "Error" not in text  # stopping is a person's choice, not a failure
    resume = re.search(r"To finish, run:\n  (.+)$", text, re.MULTILINE)
    assert resume, text
    command = shlex.split(resume.group(1))
    assert command[:2] == ["reconciler", "apply"] and "--sandbox" in command

    # The command runs as printed, finishes the job, and nothing is left to do.
    finish = run_reconciler(*command[1:], cwd=tmp_path)
    assert finish.returncode == EXIT_OK, finish.stderr
    done = re.search(r"Apply complete: (\d+) done", finish.stdout)
    assert done and int(done.group(1)) <= not_made
    again = run_reconciler("plan", "site.yaml", *SANDBOX, cwd=tmp_path)
    assert "No changes. The site matches the manifest." in again.stdout, again.stdout


@pytest.mark.e2e
@pytest.mark.parametrize("keys", ["\x03", "\x04"], ids=["ctrl-c", "end-of-input"])
def test_a_question_left_unanswered_changes_nothing(tmp_path: Path, keys: str) -> None:
    write_site(tmp_path, latency_ms=0)
    terminal = Terminal("apply", "site.yaml", *SANDBOX, cwd=tmp_path)
    terminal.expect(r"Only 'yes' will be accepted:$")
    terminal.type(keys)
    assert terminal.wait() == EXIT_REFUSED
    assert "Not applied: the question was not answered. Nothing was changed." in (
        terminal.screen.text
    )
    assert "Aborted" not in terminal.screen.text


class SlowOnceApproved(AutoApprove):
    """Approves, then slows the site down so that the first write is still under way when
    the apply is interrupted."""

    def __init__(self, site: EngineSite) -> None:
        self.site = site

    def approve(self, plan: Plan) -> None:
        self.site.set_faults(latency_ms=60_000)


def test_a_write_under_way_at_ctrl_c_is_kept_pending_for_the_next_apply(tmp_path: Path) -> None:
    """What "writes that were under way are checked on the site" rests on: the executor
    records an interrupted write as pending, and the records are saved, before Ctrl-C ends
    the apply."""

    async def interrupted() -> Records:
        async with engine_site(example_seed(), tmp_path) as site:
            desired = desired_site({"workspaces": [{"name": "Ops", "users": ["alice"]}]})
            apply = asyncio.create_task(
                workflow.apply_manifest(
                    LoadedManifest(desired), site.site, PlanOptions(), SlowOnceApproved(site)
                )
            )
            while not site.app.sandbox.calls["workspace_add"]:
                await asyncio.sleep(0.01)
            apply.cancel()  # what asyncio.run does with the task on Ctrl-C
            with pytest.raises(asyncio.CancelledError):
                await apply
            return site.records()

    records = asyncio.run(interrupted())
    assert [type(write) for write in records.pending] == [WorkspaceAdd]
