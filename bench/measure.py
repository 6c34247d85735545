"""Running the real ``reconciler`` command against a loopback sandbox, and measuring it.

The tool runs as a child process, exactly as a pipeline runs it, so its numbers include the
interpreter's start-up, the imports and the manifest load. ``os.wait4`` gives that one
child's CPU time and peak RSS (``RUSAGE_CHILDREN`` would mix in every earlier child). The
API calls are counted by the sandbox (``/_sandbox/calls``), not by the tool, and the
sandbox's own CPU time is read from ``/proc`` so a report can show whether the server, not
the tool, was the limit.
"""

from __future__ import annotations

import compileall
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from reconciler.kinds.registry import ACTION_TYPES
from reconciler.sandbox.server import running_sandbox
from reconciler.sandbox.settings import SandboxSettings

ADMIN_KEY, ADMIN_SECRET = "sandbox-admin-key", "sandbox-admin-secret"
COMMAND_TIMEOUT_S = 300
REPO = Path(__file__).resolve().parents[1]
OUT_DIR = REPO / "bench" / "out"
_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@functools.cache
def compile_bytecode() -> None:
    """Compile the package's modules, as ``pip install`` does when it installs the tool.

    An editable install writes the bytecode on first use, unless ``PYTHONDONTWRITEBYTECODE``
    is set (as in some sandboxes and CI images): then every measured run would compile some
    100 modules again, about 0.13 s that an installed tool never spends.
    """
    compileall.compile_dir(REPO / "reconciler", quiet=1)


def reconciler_command() -> list[str]:
    """The installed console script beside this interpreter (the real CLI)."""
    script = Path(sys.executable).with_name("reconciler")
    return [str(script)] if script.exists() else [shutil.which("reconciler") or "reconciler"]


@dataclass(frozen=True, slots=True)
class CommandRun:
    """One measured run of the command, with the API calls the sandbox counted during it."""

    args: tuple[str, ...]
    exit_code: int
    wall_s: float
    cpu_s: float  # user + system time of the tool's process
    peak_rss_mb: float
    stdout: str
    stderr: str
    calls: dict[str, int]
    sandbox_cpu_s: float | None
    machine_busy_s: float | None  # CPU seconds used by every process on the machine
    started_at: float = 0.0  # epoch seconds just before the exec, on the log events' clock
    latency_waited_ms: float | None = None  # what the added latency really held a call, mean

    @property
    def other_cpu_s(self) -> float | None:
        """CPU that neither the tool nor the sandbox used: other work sharing the machine."""
        if self.machine_busy_s is None or self.sandbox_cpu_s is None:
            return None
        return max(0.0, self.machine_busy_s - self.cpu_s - self.sandbox_cpu_s)

    @property
    def reads(self) -> int:
        return sum(n for method, n in self.calls.items() if method not in ACTION_TYPES)

    @property
    def writes(self) -> int:
        return sum(n for method, n in self.calls.items() if method in ACTION_TYPES)

    @property
    def plan_timings(self) -> dict[str, Any] | None:
        """The engine's ``plan_timings`` log event (the command runs with JSON logs at -v);
        ``plan`` logs it, ``apply`` does not."""
        for line in self.stderr.splitlines():
            if line.startswith("{") and '"plan_timings"' in line:
                event: dict[str, Any] = json.loads(line)
                return event
        return None

    def expect_exit(self, *codes: int) -> CommandRun:
        """Fail loudly when the command did not end as the scenario requires."""
        if self.exit_code not in codes:
            tail = "\n".join((self.stdout + self.stderr).splitlines()[-15:])
            raise MeasurementError(
                f"`reconciler {' '.join(self.args)}` exited {self.exit_code}, "
                f"expected {' or '.join(map(str, codes))}:\n{tail}"
            )
        return self


class MeasurementError(RuntimeError):
    """A benchmark's precondition failed: its numbers would not mean what they claim."""


class QuietGate:
    """Before each measured run, waits until nothing else keeps the machine busy.

    Timing on a shared machine is only as good as the machine is idle. The waiting of a whole
    benchmark is bounded by ``budget_s``: a machine that never calms down is still measured,
    and the *other CPU* of each row says how shared it was.
    """

    QUIET_CORES = 0.3  # other work below this share of the machine counts as idle

    def __init__(self, budget_s: float) -> None:
        self.budget_s = budget_s
        self.waited_s = 0.0

    def wait(self) -> float | None:
        """Cores busy when the wait ended (None where ``/proc/stat`` is missing)."""
        load = busy_cores(0.3)
        while load is not None and load > self.QUIET_CORES and self.waited_s < self.budget_s:
            started = time.monotonic()
            load = busy_cores(2.0)
            self.waited_s += time.monotonic() - started
        return load


NO_WAIT = QuietGate(0)


class SandboxSite:
    """A running sandbox on loopback, a work directory, and the command pointed at both."""

    def __init__(
        self, url: str, workdir: Path, sandbox_pid: int | None, gate: QuietGate = NO_WAIT
    ) -> None:
        self.url = url
        self.workdir = workdir
        self.gate = gate
        self._sandbox_pid = sandbox_pid
        self._http = httpx.Client(trust_env=False, timeout=30)

    @property
    def env(self) -> dict[str, str]:
        env = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith("SITE_") and name.lower() not in _PROXY_VARIABLES
        }
        env.update(
            RECONCILER_SITE_URL=self.url,
            RECONCILER_API_KEY=ADMIN_KEY,
            RECONCILER_API_SECRET=ADMIN_SECRET,
        )
        return env

    def control(self, path: str, payload: Mapping[str, Any] | None = None) -> Any:
        url = f"{self.url}/_sandbox/{path}"
        response = (
            self._http.post(url, json=payload) if payload is not None else self._http.get(url)
        )
        response.raise_for_status()
        return response.json()

    def calls_and_latency(self) -> tuple[dict[str, int], float | None]:
        """The calls by method and the mean time the sandbox's added latency really held one
        (``/_sandbox/calls``: its sleeps end when its event loop gets to them)."""
        counted = self.control("calls")
        waited = counted.get("latency", {}).get("mean_ms")  # None: a sandbox before it said
        return counted["methods"], waited

    def reset_calls(self) -> None:
        self.control("calls/reset", {})

    def sandbox_cpu_s(self) -> float | None:
        return None if self._sandbox_pid is None else process_cpu_s(self._sandbox_pid)

    def run(self, *args: str, timeout: float = COMMAND_TIMEOUT_S) -> CommandRun:
        """Run ``reconciler ARGS`` in the work directory and measure it (calls reset first)."""
        return self.measure([*reconciler_command(), *args], args, timeout)

    def measure(
        self, command: list[str], args: tuple[str, ...], timeout: float = COMMAND_TIMEOUT_S
    ) -> CommandRun:
        """Run ``command`` (any program: the tool, or a script it is compared with) against
        the site, measured the same way (calls reset first)."""
        self.gate.wait()
        self.reset_calls()
        sandbox_cpu, busy = self.sandbox_cpu_s(), machine_busy_s()
        started_at = time.time()
        exit_code, wall, usage, stdout, stderr, peak_kib = run_measured(
            command, self.workdir, self.env, timeout
        )
        sandbox_after, busy_after = self.sandbox_cpu_s(), machine_busy_s()
        calls, waited = self.calls_and_latency()
        return CommandRun(
            args=args,
            exit_code=exit_code,
            wall_s=wall,
            cpu_s=usage.ru_utime + usage.ru_stime,
            peak_rss_mb=peak_kib / 1024,
            stdout=stdout,
            stderr=stderr,
            calls=calls,
            sandbox_cpu_s=None
            if sandbox_cpu is None or sandbox_after is None
            else sandbox_after - sandbox_cpu,
            machine_busy_s=None if busy is None or busy_after is None else busy_after - busy,
            started_at=started_at,
            latency_waited_ms=waited,
        )

    def close(self) -> None:
        self._http.close()


@contextmanager
def sandbox_site(
    seed: Mapping[str, Any],
    name: str,
    latency_ms: int,
    keep: bool = False,
    gate: QuietGate = NO_WAIT,
) -> Iterator[SandboxSite]:
    """Start the real sandbox server with ``seed`` and an added latency per call.

    The work directory (manifests, the tool's state) is under ``bench/out/NAME`` when
    ``keep``, else a temporary directory removed afterwards.
    """
    compile_bytecode()
    with (
        _workdir(name, keep) as workdir,
        running_sandbox(
            seed, SandboxSettings(latency_ms=latency_ms), log_path=workdir / "sandbox.log"
        ) as url,
    ):
        site = SandboxSite(url, workdir, _sandbox_child_pid(), gate)
        try:
            yield site
        finally:
            site.close()


@contextmanager
def _workdir(name: str, keep: bool) -> Iterator[Path]:
    if keep:
        path = OUT_DIR / name
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        yield path
        return
    with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as scratch:
        yield Path(scratch)


def run_measured(
    command: list[str], cwd: Path, env: Mapping[str, str], timeout: float
) -> tuple[int, float, Any, str, str, float]:
    """Run ``command``; exit code, wall seconds, its ``struct_rusage``, stdout, stderr and its
    peak resident set in KiB (``peak_rss_kib``).

    Output goes to files, not pipes, so a chatty child never blocks on a full pipe while we
    wait for it; a watchdog kills it after ``timeout`` seconds (the loop is bounded).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        parent_peak = _own_peak_kib()
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, env=dict(env), stdout=out, stderr=err)
        watchdog = threading.Timer(timeout, _kill, (process.pid,))
        watchdog.start()
        sampler = _PeakSampler(process.pid)
        sampler.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            watchdog.cancel()
            sampler.stop()
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        return (
            process.returncode,
            wall,
            usage,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            peak_rss_kib(usage.ru_maxrss, parent_peak, sampler.peak_kib),
        )


def peak_rss_kib(reported: float, parent_peak: float | None, sampled: float) -> float:
    """The child's own peak resident set, in KiB.

    ``wait4``'s ``ru_maxrss`` counts the memory the child was started in: the child begins
    as a copy of this process (``fork``/``vfork``), and the kernel keeps that copy's high-water
    mark when the child execs. So a child that never grew past this process's peak is
    reported at this process's size (a benchmark holding a 50,000-user seed is ~200 MB).
    Above that peak the figure is the child's own; at or below it, the high-water mark read
    from ``/proc`` while the child ran (every 10 ms: its last growth may be missed) is.
    """
    if parent_peak is None or reported > parent_peak or not sampled:
        return reported
    return sampled


def _own_peak_kib() -> float | None:
    return _status_kib(Path("/proc/self/status"), "VmHWM")


def _status_kib(path: Path, field: str) -> float | None:
    try:
        for line in path.read_text().splitlines():
            if line.startswith(field + ":"):
                return float(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


class _PeakSampler(threading.Thread):
    """Reads a running child's high-water resident set (``VmHWM``) every 10 ms."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self._status = Path(f"/proc/{pid}/status")
        self._done = threading.Event()
        self.peak_kib = 0.0

    def run(self) -> None:
        while not self._done.wait(0.01):
            value = _status_kib(self._status, "VmHWM")
            if value is not None:
                self.peak_kib = max(self.peak_kib, value)

    def stop(self) -> None:
        self._done.set()
        self.join()


def _kill(pid: int) -> None:
    with suppress(ProcessLookupError):  # it ended just before the watchdog fired
        os.kill(pid, signal.SIGKILL)


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of a running process (Linux ``/proc``; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy_s() -> float | None:
    """CPU seconds all processes have used since boot, all cores (Linux ``/proc/stat``)."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except (OSError, IndexError):
        return None
    ticks = [int(value) for value in fields]
    idle = ticks[3] + ticks[4]  # idle, iowait
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def busy_cores(seconds: float) -> float | None:
    """How many cores' worth of CPU the whole machine used over the next ``seconds``."""
    before = machine_busy_s()
    time.sleep(seconds)
    after = machine_busy_s()
    return None if before is None or after is None else (after - before) / seconds


def _sandbox_child_pid() -> int | None:
    """The PID of our child ``reconciler sandbox serve`` (``running_sandbox`` does not say)."""
    tasks = Path(f"/proc/{os.getpid()}/task")
    if not tasks.is_dir():
        return None
    for task in tasks.iterdir():
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for pid in children:
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"sandbox" in argv and b"serve" in argv:
                return int(pid)
    return None
