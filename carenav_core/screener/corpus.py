"""Layer 2 corpus: 12 program documents with TOML frontmatter, split by heading into chunks.

Retrieval goes through a `ProgramSearch` callable so the real store (pgvector) can be plugged in;
a program whose best passage scores below the quality threshold is `retrieval_failed`.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from carenav_core.errors import ConfigError
from carenav_core.settings import PROJECT_ROOT

CORPUS_DIR = PROJECT_ROOT / "data" / "corpus"
FRONTMATTER = re.compile(r"\A\+\+\+\n(.*?)\n\+\+\+\n", re.DOTALL)
HEADING = re.compile(r"^## (.+)$", re.MULTILINE)
QUALITY_THRESHOLD = 0.45  # starting value; to be calibrated on the real embedder
TOP_K = 5


class _Frontmatter(BaseModel):
    model_config = ConfigDict(extra="forbid")
    program: str = Field(description="Program key, as in the rules registry.")
    title: str = Field(min_length=1, description="Document title.")
    gathered: date = Field(description="Date the facts were compiled.")
    sources: list[str] = Field(min_length=1, description="Addresses the document was written from.")


class _ManifestEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="Program name shown in the report.")
    file: str = Field(pattern=r"^[a-z_]+\.md$", description="Document file in data/corpus.")
    official_url: str = Field(pattern=r"^https?://", description="Official link shown in the report.")
    gathered: date = Field(description="Date the facts were compiled.")
    contact: str = Field("", description="How to reach the program when its official link is a law, not a door "
                                         "(e.g. 'Community Living Connections, 1-855-567-0252').")


@dataclass(frozen=True, kw_only=True)
class Chunk:
    """One heading section of a program document."""

    chunk_id: str
    program: str
    heading: str
    text: str
    source_urls: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Passage:
    """A retrieved chunk with its similarity score; what the model may cite."""

    chunk_id: str
    program: str
    heading: str
    text: str
    score: float
    source_url: str


ProgramSearch = Callable[[str, str, int], list[Passage]]
"""(program_key, query, k) -> passages of that program only, best first."""


@dataclass(frozen=True, kw_only=True)
class ManifestEntry:
    key: str
    name: str
    file: str
    official_url: str
    gathered: date
    contact: str = ""


def slug(heading: str) -> str:
    """Chunk-id form of a heading.

    >>> slug("Age and category")
    'age-and-category'
    """
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


def split_document(text: str, source: str = "document") -> tuple[Chunk, ...]:
    """Split a program document at its `## ` headings; text before the first heading is dropped."""
    match = FRONTMATTER.match(text)
    if not match:
        raise ConfigError(f"{source}: missing +++ TOML frontmatter")
    try:
        meta = _Frontmatter.model_validate(tomllib.loads(match.group(1)))
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        raise ConfigError(f"{source}: frontmatter: {exc}") from exc
    body = text[match.end():]
    heads = list(HEADING.finditer(body))
    chunks = [Chunk(chunk_id=f"{meta.program}#{slug(h.group(1))}", program=meta.program, heading=h.group(1).strip(),
                    text=body[h.end():heads[i + 1].start() if i + 1 < len(heads) else len(body)].strip(),
                    source_urls=tuple(meta.sources)) for i, h in enumerate(heads)]
    ids = [c.chunk_id for c in chunks]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{source}: duplicate headings give duplicate chunk ids {sorted(ids)}")
    return tuple(chunks)


def parse_manifest(text: str, source: str = "manifest.toml") -> dict[str, ManifestEntry]:
    """Parse the corpus manifest; ConfigError names the file and program."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: {exc}") from exc
    if set(raw) - {"program"}:
        raise ConfigError(f"{source}: unknown top-level keys {sorted(set(raw) - {'program'})}")
    entries = {}
    for key, entry in raw.get("program", {}).items():
        try:
            parsed = _ManifestEntry.model_validate(entry)
        except ValidationError as exc:
            raise ConfigError(f"{source}: program {key}: {exc}") from exc
        entries[key] = ManifestEntry(key=key, **parsed.model_dump())
    return entries


@lru_cache(maxsize=2)
def load_manifest(folder: Path = CORPUS_DIR) -> dict[str, ManifestEntry]:
    """data/corpus/manifest.toml."""
    return parse_manifest((folder / "manifest.toml").read_text(encoding="utf-8"), str(folder / "manifest.toml"))


@lru_cache(maxsize=2)
def load_chunks(folder: Path = CORPUS_DIR) -> tuple[Chunk, ...]:
    """Every chunk of every document listed in the manifest, in manifest order."""
    chunks: list[Chunk] = []
    for key, entry in load_manifest(folder).items():
        path = folder / entry.file
        split = split_document(path.read_text(encoding="utf-8"), str(path))
        if any(c.program != key for c in split):
            raise ConfigError(f"{path}: frontmatter program does not match manifest key {key!r}")
        chunks.extend(split)
    return tuple(chunks)
