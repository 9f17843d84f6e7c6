"""Project data files of `[[table]]` entries, each validated by a pydantic model: a bad file or entry is a ConfigError
that names the file, the entry's number and the field."""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from carenav_core.errors import ConfigError

Model = TypeVar("Model", bound=BaseModel)


def read_tables(path: Path, table: str, model: type[Model]) -> list[Model]:
    """Every `[[table]]` entry of the TOML file at `path`, validated as `model`, in file order."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))[table]
    except (OSError, tomllib.TOMLDecodeError, KeyError) as exc:
        raise ConfigError(f"{path}: expected [[{table}]] tables: {exc}") from exc
    entries = []
    for number, entry in enumerate(raw, start=1):
        try:
            entries.append(model.model_validate(entry))
        except ValidationError as exc:
            raise ConfigError(f"{path}: {table} {number}: {exc}") from exc
    return entries


def keyed_tables(text: str, source: str, table: str, model: type[Model]) -> list[tuple[str, Model]]:
    """Every `[table.KEY]` entry of TOML `text` (read from `source`), validated as `model`, as (KEY, entry) in file
    order; a file with other top-level keys, or a bad entry, is a ConfigError naming the source, entry and field."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: {exc}") from exc
    unknown = set(raw) - {table}
    if unknown:
        raise ConfigError(f"{source}: unknown top-level keys {sorted(unknown)}; expected only [{table}.*]")
    entries = []
    for key, entry in raw.get(table, {}).items():
        try:
            entries.append((key, model.model_validate(entry)))
        except ValidationError as exc:
            raise ConfigError(f"{source}: {table} {key}: {exc}") from exc
    return entries
