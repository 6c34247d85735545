"""The GitOps pipeline on fresh runners: nothing shared but the records and ``plan.json``.

Each runner is a fresh directory with its own copy of the repository (the manifest), as a CI
job on a new machine has; the real ``reconciler`` command runs in it against one sandbox
server over loopback. The records live in PostgreSQL (a real server the test session starts)
or in a directory on a "shared disk"; both must behave the same, lock included.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.api.config import check_site_url
from reconciler.core.records import Records
from reconciler.engine.records import document as records_document
from reconciler.errors import EXIT_CHANGES, EXIT_LOCKED, EXIT_OK, EXIT_REFUSED
from reconciler.sandbox.settings import SandboxSettings
from reconciler.state.backend import Holder, SaveInfo
from reconciler.state.locate import open_records, parse_location
from tests.support.cli_runner import CliOutcome, run_reconciler
from tests.support.loopback import LoopbackSite, loopback_site, reconciler_command
from tests.support.postgres import PostgresServer, libpq_environment, running_postgres
from tests.support.tcp_proxy import TcpProxy

MANIFEST: dict[str, Any] = {
    "version": 1,
    "workspaces": [
        {"name": "Finance", "users": ["alice", "bob"], "root_access": False},
        {"name": "Scratch", "users": ["carol"]},
        {"name": "Legal", "users": ["dave", "erin"]},
    ],
    "groups": [
        {"name": "finance-team", "members": ["alice", "bob"]},
        {"name": "race-group", "members": ["carol"]},
    ],
    "policy": {"prune": True},
}


@dataclass
class Runner:
    """A fresh CI runner: its own clone of the repository, the shared records location."""

    directory: Path
    site: LoopbackSite
    state: str
    outputs: list[str] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        env = dict(self.site.env)
        env["RECONCILER_STATE"] = self.state
        return env

    def run(self, *args: str) -> CliOutcome:
        result = run_reconciler(*args, cwd=self.directory, env=self.env)
        self.outputs += [result.stdout, result.stderr]
        self.site.transcript += [result.stdout, result.stderr]
        assert "Traceback" not in result.stderr, result.stderr
        return result

    def start(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*reconciler_command(), *args],
            cwd=self.directory,
            env=env or self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


@dataclass
class Pipeline:
    """The repository (a manifest that pull requests change), the site and the records."""

    root: Path
    site: LoopbackSite
    state: str
    manifest: dict[str, Any]
    runners: int = 0

    def runner(self, plan_from: Runner | None = None) -> Runner:
        """A fresh runner with a clone of the repository as it is now (and a plan artefact)."""
        self.runners += 1
        directory = self.root / f"runner-{self.runners}"
        (directory / "site").mkdir(parents=True)
        text = yaml.safe_dump(self.manifest, sort_keys=False)
        (directory / "site" / "site.yaml").write_text(text, encoding="utf-8")
        if plan_from is not None:
            shutil.copy(plan_from.directory / "plan.json", directory / "plan.json")
        return Runner(directory, self.site, self.state)

    def count(self, kind: str) -> Counter[str]:
        return Counter(item["name"] for item in self.site.state()[kind])


def wait_for_writes(site: LoopbackSite, writes: int, timeout: float = 60) -> None:
    """Until the site has received ``writes`` creations (the applier holds the lock by then)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        calls = site.control("calls")["methods"]
        if calls.get("user_group_add", 0) + calls.get("workspace_add", 0) >= writes:
            return
        time.sleep(0.02)
    raise AssertionError(f"the site did not receive {writes} creation(s) in {timeout} s")


def shared_directory(tmp_path: Path) -> str:
    shared = tmp_path / "shared-disk" / "records"
    shared.parent.mkdir()
    return str(shared)


@pytest.fixture(params=["postgresql", "directory"])
def records_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return shared_directory(tmp_path)


@pytest.fixture
def pipeline(
    request: pytest.FixtureRequest, tmp_path: Path, records_location: str
) -> Iterator[Pipeline]:
    """A test that kills runners (``e2e``) gets a site in its own process, as a real one is."""
    (tmp_path / "server").mkdir()
    killing = request.node.get_closest_marker("e2e") is not None
    with loopback_site(tmp_path / "server", own_process=killing) as site:
        yield Pipeline(tmp_path, site, records_location, yaml.safe_load(yaml.safe_dump(MANIFEST)))


def test_plan_on_a_pull_request_apply_on_merge_and_drift_at_night(pipeline: Pipeline) -> None:
    pr = pipeline.runner()
    planned = pr.run("plan", "site/", "-o", "plan.json", "--detailed-exitcode")
    assert planned.returncode == EXIT_CHANGES, planned.stderr
    merged = pipeline.runner(plan_from=pr).run("apply", "plan.json", "--auto-approve")
    assert merged.returncode == EXIT_OK, merged.stderr + merged.stdout

    # every later pull request on a fresh runner sees the records: no phantom changes
    quiet = pipeline.runner().run("plan", "site/", "--detailed-exitcode")
    assert quiet.returncode == EXIT_OK, quiet.stdout
    assert "No changes." in quiet.stdout and "no records" not in quiet.stdout
    assert pipeline.runner().run("drift", "site/").returncode == EXIT_OK

    # the merged plan applied again, from yet another runner: refused
    again = pipeline.runner(plan_from=pr).run("apply", "plan.json", "--auto-approve")
    assert again.returncode == EXIT_REFUSED and "already been applied" in again.stderr

    # a pull request that removes a group member and a workspace: both happen on merge
    pipeline.manifest["groups"][0]["members"] = ["alice"]
    pipeline.manifest["workspaces"] = pipeline.manifest["workspaces"][:2]
    pr = pipeline.runner()
    planned = pr.run("plan", "site/", "-o", "plan.json")
    assert 'workspace "Legal"' in planned.stdout and "will be DELETED" in planned.stdout
    assert "- members: bob" in planned.stdout
    merged = pipeline.runner(plan_from=pr).run("apply", "plan.json", "--auto-approve")
    assert merged.returncode == EXIT_OK, merged.stderr + merged.stdout
    assert "Legal" not in pipeline.count("workspaces")
    groups = {g["name"]: g for g in pipeline.site.state()["groups"]}
    assert groups["finance-team"]["members"] == [1001]

    # nightly drift on a fresh runner is true: a member added by hand is reported, nothing else
    finance = pipeline.site.workspaces()["Finance"]["id"]
    pipeline.site.api(lambda client: client.add_to_workspace(1011, [finance]))
    drift = pipeline.runner().run("drift", "site/", "--format", "json")
    assert drift.returncode == EXIT_CHANGES
    report = yaml.safe_load(drift.stdout)
    assert [item["name"] for item in report["changed"]] == ["Finance"]
    assert "mallory" in report["changed"][0]["detail"]
    assert not report["missing"] and "None" not in drift.stdout


@pytest.mark.e2e
def test_two_runners_applying_at_once_create_everything_once(pipeline: Pipeline) -> None:
    pipeline.site.faults(latency_ms=40)
    first, second = pipeline.runner(), pipeline.runner()
    started = [
        runner.start("apply", "site/", "--auto-approve", "--lock-timeout", "120")
        for runner in (first, second)
    ]
    results = [process.communicate(timeout=180) for process in started]
    assert [process.returncode for process in started] == [EXIT_OK, EXIT_OK], results
    assert pipeline.count("workspaces") == Counter(
        {"Legacy Scans": 1, "Finance": 1, "Scratch": 1, "Legal": 1}
    )
    assert pipeline.count("groups") == Counter(
        {"old-contractors": 1, "finance-team": 1, "race-group": 1}
    )
    waited = [out + err for out, err in results if "No changes." in out]
    assert len(waited) == 1, results  # the second waited for the lock and found nothing to do


@pytest.mark.e2e
@pytest.mark.slow
def test_a_lock_held_elsewhere_is_refused_naming_the_holder(pipeline: Pipeline) -> None:
    pipeline.site.faults(latency_ms=1000)
    holder = pipeline.runner()
    process = holder.start("apply", "site/", "--auto-approve", "--concurrency", "1")
    try:
        wait_for_writes(pipeline.site, 1)  # the holder has the lock and writes
        pipeline.site.faults(latency_ms=600_000)  # its next write hangs until it is killed
        # both at once, while the holder still holds the lock
        waiting = pipeline.runner().start("apply", "site/", "--auto-approve", "--lock-timeout", "1")
        refusing = pipeline.runner().start("apply", "site/", "--auto-approve")
        (_, refused), (_, waited) = refusing.communicate(60), waiting.communicate(60)
        assert process.poll() is None, "the holder finished too soon for this test"
        assert refusing.returncode == EXIT_LOCKED  # busy, not failed: CI may retry
        assert "locked by apply site by" in refused and str(process.pid) in refused
        assert waiting.returncode == EXIT_LOCKED
        assert waited.count("Waiting for the lock") == 1, waited  # said once
        assert "held by apply site by" in waited and str(process.pid) in waited
    finally:
        process.kill()  # the holder has shown what it had to
        process.communicate(timeout=30)


@pytest.mark.e2e
def test_an_apply_killed_on_one_runner_is_completed_by_the_next(pipeline: Pipeline) -> None:
    pipeline.site.faults(latency_ms=150)
    killed = pipeline.runner()
    # --timeout 2: the next apply waits at most that long for a write the kill left in doubt
    process = killed.start(
        "apply", "site/", "--auto-approve", "--concurrency", "1", "--lock-lease", "3",
        "--timeout", "2",
    )  # fmt: skip
    wait_for_writes(pipeline.site, 2)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)
    pipeline.site.faults(latency_ms=0)
    # a directory lock is free at once; a database lease lapses 3 s after its last renewal
    finished = pipeline.runner().run("apply", "site/", "--auto-approve", "--lock-timeout", "30")
    assert finished.returncode == EXIT_OK, finished.stderr + finished.stdout
    assert "took the lock over" in finished.stderr
    assert all(n == 1 for n in pipeline.count("workspaces").values())
    assert all(n == 1 for n in pipeline.count("groups").values())
    assert pipeline.runner().run("plan", "site/", "--detailed-exitcode").returncode == EXIT_OK


@pytest.mark.e2e
def test_a_holder_cut_off_loses_the_lock_and_its_late_writes_are_refused(
    tmp_path: Path, postgres_server: PostgresServer, postgres_url: str
) -> None:
    """Runner A's connection to the records database is cut mid-apply: within its lease
    (2 s) runner B takes the lock and finishes; when A's network comes back, A can no longer
    write records, and it stops with a clear error."""
    (tmp_path / "server").mkdir()
    settings = SandboxSettings(latency_ms=400)
    with (
        loopback_site(tmp_path / "server", settings=settings, own_process=True) as site,
        TcpProxy(postgres_server.host, postgres_server.port) as proxy,
    ):
        pipeline = Pipeline(tmp_path, site, postgres_url, yaml.safe_load(yaml.safe_dump(MANIFEST)))
        cut_off = pipeline.runner()
        via_proxy = postgres_url.replace(f":{postgres_server.port}/", f":{proxy.port}/")
        env = {**cut_off.env, "RECONCILER_STATE": via_proxy}
        process = cut_off.start(
            "apply", "site/", "--auto-approve", "--concurrency", "1", "--lock-lease", "2", env=env
        )
        wait_for_writes(site, 1)
        proxy.cut()
        site.faults(latency_ms=0)
        # B waits for A's lease to lapse (2 s after A's last renewal), then takes the lock over
        finished = pipeline.runner().run(
            "apply", "site/", "--auto-approve", "--lock-lease", "2", "--lock-timeout", "30"
        )
        assert finished.returncode == EXIT_OK, finished.stderr + finished.stdout
        assert "took the lock over" in finished.stderr
        proxy.heal()
        _, stderr = process.communicate(timeout=120)
        assert process.returncode != EXIT_OK
        assert "lock" in stderr.lower(), stderr
        assert all(n == 1 for n in pipeline.count("workspaces").values())
        assert all(n == 1 for n in pipeline.count("groups").values())
        again = pipeline.runner().run("plan", "site/", "--detailed-exitcode")
        assert again.returncode == EXIT_OK, again.stdout


def test_a_saved_plan_from_another_runners_own_records_is_refused(
    pipeline: Pipeline, tmp_path: Path
) -> None:
    pr = pipeline.runner()
    pr.state = str(tmp_path / "pr-runner-private-records")  # a job that forgot --state
    assert pr.run("plan", "site/", "-o", "plan.json").returncode == EXIT_OK
    merge = pipeline.runner(plan_from=pr)
    refused = merge.run("apply", "plan.json", "--auto-approve")
    assert refused.returncode == EXIT_REFUSED
    assert "made against other records" in refused.stderr and "--state" in refused.stderr
    assert set(pipeline.count("workspaces")) == {"Legacy Scans"}


def test_two_sites_on_one_host_keep_separate_records(tmp_path: Path, records_location: str) -> None:
    """``https://h/a`` and ``https://h/b`` are two sites: the records of one are never used
    for the other, whatever the backend (the key is the whole normalised URL)."""
    location = parse_location(records_location, base_dir=tmp_path)
    holder = Holder.current("test")
    with open_records(location, "https://h.example/a") as site_a, site_a.lock(holder) as lease:
        data = records_document.to_data(Records("https://h.example/a", applied_plans=("p",)))
        site_a.save(data, expected_version=0, info=SaveInfo("test", "a"), lease=lease)
    with open_records(location, "https://h.example/b") as site_b:
        assert site_b.load().data is None
    with open_records(location, check_site_url("HTTPS://H.example:443/a/")) as again:
        assert again.load().version == 1


def test_two_loopback_sites_keep_separate_records(tmp_path: Path) -> None:
    """Two sites applied from one runner with one records location: each plans its own."""
    shared = shared_directory(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with loopback_site(tmp_path / "a") as site_a, loopback_site(tmp_path / "b") as site_b:
        pipeline = Pipeline(tmp_path, site_a, shared, yaml.safe_load(yaml.safe_dump(MANIFEST)))
        runner = pipeline.runner()
        assert runner.run("apply", "site/", "--auto-approve").returncode == EXIT_OK
        other = Runner(runner.directory, site_b, shared)
        plan = other.run("plan", "site/", "--detailed-exitcode")
        assert plan.returncode == EXIT_CHANGES  # site B has nothing yet: its own records
        assert "Plan: 5 to create" in plan.stdout
        assert other.run("apply", "site/", "--auto-approve").returncode == EXIT_OK
    sites = sorted(p.name for p in (Path(shared) / "sites").iterdir())
    assert len(sites) == 2, sites


def test_no_follow_up_line_or_message_repeats_the_state_password(
    tmp_path: Path, postgres_server: PostgresServer, postgres_url: str
) -> None:
    """``plan -o`` prints the command that applies the plan: with the records location, and
    without the password the location was given with (libpq finds it in PGPASSWORD)."""
    password = postgres_server.app_password
    with_password = postgres_url.replace(
        "postgresql://reconciler_app@", f"postgresql://reconciler_app:{password}@"
    )
    (tmp_path / "server").mkdir()
    with loopback_site(tmp_path / "server") as site:
        pipeline = Pipeline(tmp_path, site, postgres_url, yaml.safe_load(yaml.safe_dump(MANIFEST)))
        runner = pipeline.runner()
        planned = runner.run("plan", "site", "-o", "plan.json", "--state", with_password)
        assert planned.returncode == EXIT_OK, planned.stderr
        assert postgres_url.split("?")[0] in planned.stdout + planned.stderr  # the location
        assert "reconciler apply plan.json site --state" in planned.stdout + planned.stderr
        stored = (runner.directory / "plan.json").read_text()
    assert all(password not in text for text in [*runner.outputs, stored])


@pytest.mark.e2e
def test_a_saved_plan_cut_short_says_how_far_it_got_and_how_to_finish(
    pipeline: Pipeline,
) -> None:
    pr = pipeline.runner()
    assert pr.run("plan", "site/", "-o", "plan.json").returncode == EXIT_OK
    pipeline.site.faults(latency_ms=150)
    merge = pipeline.runner(plan_from=pr)
    process = merge.start(
        "apply", "plan.json", "site/", "--auto-approve", "--concurrency", "1", "--lock-lease", "3",
        "--timeout", "2",  # the next apply waits at most that long for a write left in doubt
    )  # fmt: skip
    wait_for_writes(pipeline.site, 2)
    os.kill(process.pid, signal.SIGKILL)  # the runner dies part-way
    process.communicate(timeout=30)
    pipeline.site.faults(latency_ms=0)
    again = pipeline.runner(plan_from=pr).run(
        "apply", "plan.json", "site/", "--auto-approve", "--lock-timeout", "30"
    )
    assert again.returncode == EXIT_REFUSED
    assert "did not finish" in again.stderr and "actions ran" in again.stderr
    assert "already been applied" not in again.stderr
    assert "reconciler plan site/site.yaml -o plan.json" in again.stderr


@pytest.mark.e2e
@pytest.mark.slow
def test_a_database_restart_mid_apply_loses_no_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The records' database restarts while an apply is writing to the site: the intents and
    the writes under way survive; the next apply settles them and creates nothing twice."""
    manifest = {
        "version": 1,
        "users": [
            {"username": n, "email": f"{n}@acme.example", "first_name": n, "last_name": "X"}
            for n in ("nina", "omar", "pia")
        ],
        "groups": [{"name": f"team-{i}", "members": ["nina", "alice"]} for i in range(4)],
    }
    with running_postgres() as server:
        libpq_environment(monkeypatch, server.app_password)
        monkeypatch.setenv("RECONCILER_STATE", server.url(schema="restarted"))
        (tmp_path / "server").mkdir()
        with loopback_site(tmp_path / "server", own_process=True) as site:
            site.write_manifest("team.yaml", manifest)
            site.faults(latency_ms=250)
            process = site.start(
                "apply", "team.yaml", "--auto-approve", "--concurrency", "1", "--lock-lease", "2"
            )
            wait_for_writes(site, 2)  # users created, groups being created
            server.stop()  # cut at once, as in a crash; back as soon as it can start
            server.start()
            _, stderr = site.collect(process)
            assert "Traceback" not in stderr and "never awaited" not in stderr, stderr
            site.faults(latency_ms=0)
            finished = site.run("apply", "team.yaml", "--auto-approve", "--lock-timeout", "30")
            assert finished.returncode == EXIT_OK, finished.stdout + finished.stderr
            groups = Counter(g["name"] for g in site.state()["groups"])
            users = Counter(u["username"] for u in site.state()["users"])
            assert [groups[f"team-{i}"] for i in range(4)] == [1] * 4, groups
            assert all(users[n] == 1 for n in ("nina", "omar", "pia")), users
            shown = json.loads(site.run("state", "show", "team.yaml").stdout)
            assert all(shown["users"][n]["managed"] for n in ("nina", "omar", "pia")), shown
