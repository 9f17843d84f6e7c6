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

    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.started = time.perf_counter()

    def __call__(self, done: int, total: int, message: str) -> None:
        elapsed = time.perf_counter() - self.started
        if self.tty:
            width = 30
            filled = int(width * done / total) if total else width
            bar = "#" * filled + "-" * (width - filled)
            end = "\n" if done >= total else ""
            self.stream.write(f"\r[{bar}] {done}/{total} {message[:60]:<60} {elapsed:5.1f}s{end}")
        else:
            self.stream.write(f"{done}/{total} {message} ({elapsed:.1f}s)\n")
        self.stream.flush()
