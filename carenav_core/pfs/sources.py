"""Where each CMS release comes from: data/sources.toml, read from a mirror folder or downloaded."""
from __future__ import annotations

import hashlib
import logging
import tomllib
import urllib.request
import zipfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from carenav_core.errors import ConfigError, DataError
from carenav_core.settings import PROJECT_ROOT, Settings

SOURCES_FILE = PROJECT_ROOT / "data" / "sources.toml"
log = logging.getLogger(__name__)


class RvuRelease(BaseModel):
    """One CMS RVU release (quarterly zip) of the national PFS relative value file."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(pattern=r"^rvu\d{2}[a-d]r?$", description="CMS release id, e.g. rvu25d.")
    cy: int
    quarter: str
    effective: date
    url: str = Field(pattern=r"^https://")
    pprrvu: str = Field(description="Name of the PPRRVU sub-file inside the release.")


class ProposedAddendum(BaseModel):
    """Proposed-rule RVUs (Addendum B) for one NPRM."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    rule_id: str = Field(pattern=r"^CMS-\d{4}-P$")
    cy: int
    url: str = Field(pattern=r"^https://")
    file: str
    optional: bool = False


@dataclass(frozen=True, kw_only=True)
class SourceCatalog:
    releases: tuple[RvuRelease, ...]
    proposed: tuple[ProposedAddendum, ...]
    extra: dict          # other sections (e.g. fr_document) owned by other modules


@dataclass(frozen=True, kw_only=True)
class FetchedFile:
    """Bytes of one source file, where they came from and their sha256."""
    raw: bytes
    origin: str
    sha256: str


def load_catalog(path: Path = SOURCES_FILE) -> SourceCatalog:
    """Parse data/sources.toml; unknown keys inside an entry are errors."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    try:
        releases = tuple(RvuRelease.model_validate(r) for r in raw.pop("rvu_release", []))
        proposed = tuple(ProposedAddendum.model_validate(r) for r in raw.pop("proposed_addendum", []))
    except ValidationError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    ids = [r.id for r in releases]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{path}: duplicate release id in {ids}")
    return SourceCatalog(releases=releases, proposed=proposed, extra=raw)


def _from_zip(archive: Path, wanted: str, prefix: str) -> tuple[bytes, str]:
    """The member of a release zip named `wanted`, else the first CSV whose name starts with prefix."""
    try:
        with zipfile.ZipFile(archive) as zf:
            names = zf.namelist()
            exact = [n for n in names if Path(n).name.lower() == wanted.lower()]
            loose = [n for n in names if Path(n).name.upper().startswith(prefix) and n.lower().endswith((".csv", ".txt"))]
            member = (exact or loose or [None])[0]
            if member is None:
                raise DataError(f"zip has no {prefix} CSV file (members: {', '.join(names[:8])})", path=str(archive))
            return zf.read(member), f"{archive}!{member}"
    except zipfile.BadZipFile as exc:
        raise DataError(f"not a readable zip: {exc}", path=str(archive)) from exc


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}", path=str(path)) from exc


def locate(folder: Path, release_id: str, wanted: str, prefix: str) -> tuple[bytes, str] | None:
    """A release from a mirror: `folder/<id>/<file>` (or any PREFIX* file there), or `folder/<id>.zip`."""
    directory, archive = folder / release_id, folder / f"{release_id}.zip"
    if directory.is_dir():
        exact = directory / wanted
        candidates = [exact] if exact.exists() else sorted(p for p in directory.iterdir()
                                                           if p.name.upper().startswith(prefix))
        if not candidates:
            raise DataError(f"release folder has no {prefix} file", path=str(directory))
        return _read(candidates[0]), str(candidates[0])
    if archive.exists():
        return _from_zip(archive, wanted, prefix)
    return None


def download(url: str, cache: Path) -> Path:
    """Download `url` into the cache once (kept by file name)."""
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / url.rstrip("/").replace("/", "_").replace(":", "")[-120:]
    if not target.exists():
        log.info("downloading %s", url)
        partial = target.with_suffix(".part")
        try:
            with urllib.request.urlopen(url, timeout=120) as reply, partial.open("wb") as out:
                out.write(reply.read())
        except OSError as exc:
            raise DataError(f"download failed: {exc}", path=url) from exc
        partial.replace(target)
    return target


def fetch_release(release: RvuRelease, settings: Settings) -> FetchedFile:
    """The PPRRVU bytes of one release, from the mirror when set, else downloaded."""
    if settings.mirror is not None:
        found = locate(Path(settings.mirror) / "cms", release.id, release.pprrvu, "PPRRVU")
        if found is None:
            raise DataError(f"release {release.id} not in the mirror (expected folder {release.id}/ "
                            f"or {release.id}.zip)", path=str(Path(settings.mirror) / "cms"))
        raw, origin = found
    else:
        raw, origin = _from_zip(download(release.url, settings.cache_folder), release.pprrvu, "PPRRVU")
    return FetchedFile(raw=raw, origin=origin, sha256=hashlib.sha256(raw).hexdigest())


def fetch_addendum(addendum: ProposedAddendum, settings: Settings) -> FetchedFile | None:
    """Addendum B bytes from the mirror (folder cms/<rule id lower>/), or None when absent and optional."""
    found = None
    if settings.mirror is not None:
        found = locate(Path(settings.mirror) / "cms", addendum.rule_id.lower(), addendum.file, "ADDENDUM")
    if found is None:
        if addendum.optional:
            return None
        raise DataError(f"Addendum B for {addendum.rule_id} not found", path=addendum.url)
    raw, origin = found
    return FetchedFile(raw=raw, origin=origin, sha256=hashlib.sha256(raw).hexdigest())
