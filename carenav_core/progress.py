"""Progress for long work: a bar on a terminal, plain lines when piped, nothing when silent."""
from __future__ import annotations

import sys
import time
from typing import Protocol


class Progress(Protocol):
    def __call__(self, done: int, total: int, message: str) -> None: ...


def silent(done: int, total: int, message: str) -> None:
    """A Progress that reports nothing (library default)."""


class TerminalProgress:
    """Redraws one bar on a TTY; prints one line per step otherwise."""

    def __init__(self, stream=None, every: float = 2.0) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.started = time.perf_counter()
        self.every, self.last_line, self.last_topic = every, float("-inf"), None

    def __call__(self, done: int, total: int, message: str) -> None:
        elapsed = time.perf_counter() - self.started
        if self.tty:
            width = 30
            filled = int(width * done / total) if total else width
            bar = "#" * filled + "-" * (width - filled)
            end = "\n" if done >= total else ""
            self.stream.write(f"\r[{bar}] {done}/{total} {message[:60]:<60} {elapsed:5.1f}s{end}")
        else:   # piped: a plain line when the step changes, at the end, and at most every `every` seconds
            topic = message.split(":")[0]
            if topic != self.last_topic or done >= total or elapsed - self.last_line >= self.every:
                self.stream.write(f"{done}/{total} {message} ({elapsed:.1f}s)\n")
                self.last_line, self.last_topic = elapsed, topic
        self.stream.flush()
