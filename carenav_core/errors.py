"""One small exception hierarchy; every message says what failed, where, and what was expected."""
from __future__ import annotations


class CareNavError(Exception):
    """Base of every error CareNav raises on purpose."""


class DataError(CareNavError):
    """A source file is malformed. Names the file, line and column where known."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 column: str | None = None) -> None:
        where = ", ".join(p for p in (
            f"file {path}" if path else "",
            f"line {line}" if line is not None else "",
            f"column {column!r}" if column else "") if p)
        super().__init__(f"{where}: {message}" if where else message)
        self.path, self.line, self.column = path, line, column

    def __reduce__(self):
        # Raised in a parsing worker process, it must arrive whole (message and where) in the parent.
        return _restore_data_error, (str(self), self.path, self.line, self.column)


def _restore_data_error(text: str, path: str | None, line: int | None, column: str | None) -> DataError:
    error = DataError.__new__(DataError)
    CareNavError.__init__(error, text)
    error.path, error.line, error.column = path, line, column
    return error


class ConfigError(CareNavError):
    """A project data file (TOML registry) is invalid."""


class NotBuiltError(CareNavError):
    """The database has not been built yet; run `carenav build`."""


class StoreError(CareNavError):
    """The retrieval store is unreachable or inconsistent."""


class EmbedderMismatchError(StoreError):
    """The index was built with another embedder or dimension; rebuild with --force."""


class ModelError(CareNavError):
    """The language model failed. `retryable` says whether trying again may help."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable
