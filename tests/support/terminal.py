"""The real ``reconciler`` command in a pseudo-terminal, and the screen a person would see.

``Terminal`` starts the console script with a pty as its controlling terminal (so Ctrl-C typed
into it is a real SIGINT, and ``isatty`` is true), feeds everything it writes through
``Screen``, and lets a test type keys and read the screen back. ``Screen`` is a small VT100:
it knows what rich's live display and click's prompt write (text, carriage return, newline,
cursor up/down, erase line) and refuses any other control sequence rather than guess, so a
test never passes on a screen it misread.
"""

from __future__ import annotations

import codecs
import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from tests.support.loopback import TRANSCRIPTS, reconciler_command

CSI = re.compile(r"\x1b\[([?0-9;]*)([A-Za-z])")
UNFINISHED = re.compile(r"\x1b(\[[?0-9;]*)?")
IGNORED_PRIVATE = {"?25", "?2004"}  # cursor shown/hidden; bracketed paste
# Makes the pty the controlling terminal of the new session before running the command.
CONTROLLING_TTY = (
    "import os, signal, sys; os.close(os.open(os.ttyname(0), os.O_RDWR)); "
    "signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)
"""Make the pty the command's controlling terminal and start it as a shell in that terminal
starts a foreground command: Ctrl-C's SIGINT at its default. A test run launched in the
background of a non-interactive shell (``nohup ... &``) inherits SIGINT *ignored*, and an
ignored signal stays ignored across exec: the command then never saw a typed Ctrl-C."""


class Screen:
    """A character grid with scrollback; ``text`` is what a person could scroll back through."""

    def __init__(self, rows: int, cols: int) -> None:
        self.rows, self.cols = rows, cols
        self.grid = [[" "] * cols for _ in range(rows)]
        self.history: list[str] = []
        self.row = self.col = 0
        self._unfinished = ""

    def feed(self, text: str) -> None:
        text, self._unfinished = self._unfinished + text, ""
        at = 0
        while at < len(text):
            char = text[at]
            if char == "\x1b":
                at = self._escape(text, at)
                continue
            if char < " ":
                self._control(char)
            else:
                self._put(char)
            at += 1

    def lines(self) -> list[str]:
        """The visible lines, right-trimmed."""
        return [("".join(row)).rstrip() for row in self.grid]

    @property
    def text(self) -> str:
        """Scrollback and screen, trailing blank lines dropped."""
        return "\n".join([*self.history, *self.lines()]).rstrip("\n")

    def _escape(self, text: str, at: int) -> int:
        match = CSI.match(text, at)
        if match is None and UNFINISHED.fullmatch(text, at):
            self._unfinished = text[at:]  # the rest of the sequence comes with the next read
            return len(text)
        if match is None:
            raise AssertionError(f"unknown escape sequence {text[at : at + 8]!r}")
        params, final = match.groups()
        if params.startswith("?"):
            if params not in IGNORED_PRIVATE or final not in "hl":
                raise AssertionError(f"unknown private sequence {match.group()!r}")
            return match.end()
        numbers = [int(p) if p else 0 for p in params.split(";")] if params else []
        count = max(numbers[0], 1) if numbers else 1
        if final == "m":
            pass  # colours and styles: the screen keeps characters only
        elif final == "A":
            self.row = max(self.row - count, 0)
        elif final == "B":
            self.row = min(self.row + count, self.rows - 1)
        elif final == "C":
            self.col = min(self.col + count, self.cols - 1)
        elif final == "D":
            self.col = max(self.col - count, 0)
        elif final == "G":
            self.col = min(count - 1, self.cols - 1)
        elif final == "K":
            self._erase_line(numbers[0] if numbers else 0)
        else:
            raise AssertionError(f"unknown control sequence {match.group()!r}")
        return match.end()

    def _erase_line(self, mode: int) -> None:
        line = self.grid[self.row]
        start, end = {0: (self.col, self.cols), 1: (0, self.col + 1), 2: (0, self.cols)}[mode]
        line[start:end] = [" "] * (end - start)

    def _control(self, char: str) -> None:
        if char == "\r":
            self.col = 0
        elif char == "\n":
            self._newline()
        elif char == "\b":
            self.col = max(self.col - 1, 0)
        elif char == "\t":
            self.col = min((self.col // 8 + 1) * 8, self.cols - 1)
        elif char != "\x07":
            raise AssertionError(f"unknown control character {char!r}")

    def _put(self, char: str) -> None:
        if self.col >= self.cols:  # deferred wrap, as xterm does
            self.col = 0
            self._newline()
        self.grid[self.row][self.col] = char
        self.col += 1

    def _newline(self) -> None:
        if self.row == self.rows - 1:
            self.history.append("".join(self.grid.pop(0)).rstrip())
            self.grid.append([" "] * self.cols)
        else:
            self.row += 1


class Terminal:
    """``reconciler ARGS`` (or ``program ARGS``: a shell, say) running in a pseudo-terminal of
    ``rows`` x ``cols``."""

    def __init__(
        self,
        *args: str,
        cwd: Path,
        env: dict[str, str] | None = None,
        rows: int = 40,
        cols: int = 120,
        program: list[str] | None = None,
    ) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        environment = dict(os.environ if env is None else env)
        for name in ("COLUMNS", "LINES", "NO_COLOR", "RECONCILER_DEBUG"):
            environment.pop(name, None)
        environment["TERM"] = "xterm-256color"
        self.process = subprocess.Popen(
            [sys.executable, "-c", CONTROLLING_TTY, *(program or reconciler_command()), *args],
            cwd=cwd,
            env=environment,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            close_fds=True,
        )
        os.close(slave)
        self.master = master
        self.screen = Screen(rows, cols)
        self.raw = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._closed = False
        TRANSCRIPTS.append([])  # the secret scan reads what the terminal showed
        self._transcript = TRANSCRIPTS[-1]

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def expect(self, pattern: str, timeout: float = 60) -> re.Match[str]:
        """Wait until the screen (with scrollback) matches the regular expression."""
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.screen.text)
            if found:
                return found
            if self._closed or time.monotonic() > deadline:
                raise AssertionError(f"{pattern!r} never appeared; the screen:\n{self.screen.text}")
            self._read(min(0.2, max(deadline - time.monotonic(), 0.01)))

    def watch(self, seconds: float) -> None:
        """Keep reading what the command draws for ``seconds``, as a person keeps looking."""
        deadline = time.monotonic() + seconds
        while not self._closed and time.monotonic() < deadline:
            self._read(min(0.05, max(deadline - time.monotonic(), 0.01)))

    def wait(self, timeout: float = 120) -> int:
        """Read until the command ends; its exit code."""
        deadline = time.monotonic() + timeout
        while not self._closed:
            if time.monotonic() > deadline:
                self.process.kill()
                raise AssertionError(f"the command did not end; the screen:\n{self.screen.text}")
            self._read(0.2)
        code = self.process.wait(timeout=max(deadline - time.monotonic(), 1))
        assert "Traceback" not in self.screen.text, self.screen.text
        return code

    def _read(self, timeout: float) -> None:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: the command ended and closed the terminal
            data = b""
        if not data:
            self._closed = True
            os.close(self.master)
            return
        text = self._decoder.decode(data)
        self.raw += text
        self._transcript.append(text)
        self.screen.feed(text)
