"""Policy indicators of the PFS (global days, PC/TC, multiple procedure, bilateral, assistant, co- and
team surgery, endoscopic base, physician supervision, imaging family) with plain-words meanings and
their manual references (data/indicators.toml), and the `pfs_indicators` table of the build: the
indicator columns of each CY's latest PPRRVU release (the columns pfs/parse.py does not keep)."""
from __future__ import annotations

import io
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from carenav_core.errors import ConfigError, DataError, NotBuiltError
from carenav_core.pfs.parse import _header, decode
from carenav_core.pfs.sources import SourceCatalog, fetch_release
from carenav_core.settings import PROJECT_ROOT, Settings

INDICATORS_FILE = PROJECT_ROOT / "data" / "indicators.toml"
TABLE = """CREATE TABLE pfs_indicators (release_id VARCHAR, cy INTEGER, hcpcs VARCHAR, mod VARCHAR,
    {columns}, source_file VARCHAR, sha256 VARCHAR)"""
EXTRA_COLUMNS = {"pre_op": "PRE OP", "intra_op": "INTRA OP", "post_op": "POST OP"}   # global split shares


class _Reference(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=5)
    href: str = Field(pattern=r"^https://")


class _Indicator(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str = Field(min_length=3, description="Plain name of the indicator.")
    column: str = Field(description="PPRRVU header text of the column.")
    section: str = Field(pattern=r"^(\d+(\.\d+)*)?$", description="Claims Processing Manual ch.12 section.")
    confirmed: Literal["recalled", "none"]
    reference_title: str = ""
    reference_href: str = Field("", pattern=r"^(https://.*)?$")
    width: int = Field(0, ge=0, le=3, description="Zero-pad numeric values to this width (the arkrvu copies "
                                                   "print 90 for 090 and 1 for 01).")
    meanings: dict[str, str] = Field(min_length=1)

    @model_validator(mode="after")
    def _cited(self):
        if not self.section and not (self.reference_title and self.reference_href):
            raise ValueError("an indicator without a chapter 12 section needs reference_title and reference_href")
        return self


class _Book(BaseModel):
    model_config = ConfigDict(extra="forbid")
    manual: _Reference
    layout: _Reference
    indicator: dict[str, _Indicator] = Field(min_length=1)


@dataclass(frozen=True, kw_only=True)
class IndicatorMeaning:
    """One indicator of one code: its value, what it means and where the rule is written."""
    key: str             # "mult_proc"
    label: str           # "Multiple procedure"
    value: str           # "2"
    meaning: str
    citation: str        # "Claims Processing Manual ch.12 §40.6" or the other reference's title
    href: str


@dataclass(frozen=True, kw_only=True)
class IndicatorBook:
    manual: _Reference
    layout: _Reference
    indicators: dict[str, _Indicator]

    def citation(self, key: str) -> tuple[str, str]:
        """(citation text, address) of an indicator's rule."""
        entry = self.indicators[key]
        if entry.section:
            return f"Medicare Claims Processing Manual ch.12 §{entry.section}", self.manual.href
        return entry.reference_title, entry.reference_href

    def explain(self, key: str, value: str | None) -> IndicatorMeaning:
        """The meaning of one value ("*" entries cover any other non-blank value, e.g. a base code)."""
        entry, shown = self.indicators[key], (value or "").strip()
        if entry.width and shown.isdigit():
            shown = shown.zfill(entry.width)
        meaning = entry.meanings.get(shown) or (entry.meanings.get("*") if shown else None) \
            or f"Value {shown!r} is not in the RVU file record layout as CareNav records it."
        citation, href = self.citation(key)
        return IndicatorMeaning(key=key, label=entry.label, value=shown, meaning=meaning, citation=citation, href=href)

    def explain_all(self, values: dict[str, str | None]) -> tuple[IndicatorMeaning, ...]:
        return tuple(self.explain(key, values.get(key)) for key in self.indicators)


def parse_indicators(text: str, source: str = "indicators.toml") -> IndicatorBook:
    """Validate the indicator registry (tomllib rejects duplicate keys; pydantic unknown ones)."""
    try:
        book = _Book.model_validate(tomllib.loads(text))
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        raise ConfigError(f"{source}: {exc}") from exc
    return IndicatorBook(manual=book.manual, layout=book.layout, indicators=book.indicator)


@lru_cache(maxsize=4)
def load_indicators(path: Path = INDICATORS_FILE) -> IndicatorBook:
    return parse_indicators(path.read_text(encoding="utf-8"), source=str(path))


def _columns(book: IndicatorBook) -> dict[str, str]:
    """canonical name -> PPRRVU header text, for the indicators and the global split shares."""
    return {key: entry.column for key, entry in book.indicators.items()} | EXTRA_COLUMNS


def parse_indicator_columns(raw: bytes, path: str, book: IndicatorBook) -> pa.Table:
    """hcpcs, mod and the indicator columns of one PPRRVU file, as text (pyarrow's CSV reader; the
    header is located as pfs/parse.py does; trailing junk lines such as a lone Ctrl-Z are skipped)."""
    index, names = _header(decode(raw[:50_000], path)[:60], path)
    wanted = {"hcpcs": "HCPCS", "mod": "MOD"} | _columns(book)
    positions = {}
    for key, caption in wanted.items():
        if caption not in names:
            raise DataError(f"no column {caption!r} for indicator {key}", path=path, line=index + 1, column=caption)
        positions[key] = names.index(caption)
    options = pacsv.ReadOptions(skip_rows=index + 1, column_names=[f"c{i}" for i in range(len(names))],
                                encoding="latin-1")
    table = pacsv.read_csv(io.BytesIO(raw), read_options=options,
                           parse_options=pacsv.ParseOptions(invalid_row_handler=lambda row: "skip"),
                           convert_options=pacsv.ConvertOptions(
                               column_types={f"c{i}": pa.string() for i in range(len(names))},
                               include_columns=[f"c{positions[k]}" for k in wanted], strings_can_be_null=False))
    return pa.table({key: pc.utf8_trim_whitespace(table.column(f"c{positions[key]}")) for key in wanted})


def load_indicator_table(con, catalog: SourceCatalog, settings: Settings, shown) -> None:
    """Create `pfs_indicators` in the build's database from each CY's latest release (the release
    valuation uses); `shown(origin)` records where the file came from."""
    book = load_indicators()
    columns = ", ".join(f"{key} VARCHAR" for key in _columns(book))
    con.execute(TABLE.format(columns=columns))
    latest = {}
    for release in catalog.releases:
        if release.cy not in latest or release.effective > latest[release.cy].effective:
            latest[release.cy] = release
    for release in latest.values():
        fetched = fetch_release(release, settings)
        table = parse_indicator_columns(fetched.raw, fetched.origin, book)
        table = table.filter(pc.not_equal(table.column("hcpcs"), ""))
        n = table.num_rows
        table = table.append_column("release_id", pa.array([release.id] * n)).append_column(
            "cy", pa.array([release.cy] * n, pa.int32())).append_column(
            "source_file", pa.array([shown(fetched.origin)] * n)).append_column(
            "sha256", pa.array([fetched.sha256] * n))
        con.register("incoming", table)
        try:
            con.execute("INSERT INTO pfs_indicators BY NAME SELECT * FROM incoming")
        finally:
            con.unregister("incoming")


def indicator_values(con: duckdb.DuckDBPyConnection, keys: list[tuple[int, str, str]]) -> dict[tuple[int, str, str], dict]:
    """(CY, code, modifier) -> the indicator columns of that row (missing keys are absent)."""
    if not keys:
        return {}
    wanted = pa.table({"cy": [k[0] for k in keys], "hcpcs": [k[1] for k in keys], "mod": [k[2] for k in keys]})
    cursor = con.cursor()
    try:
        cursor.execute("USE fee")
    except duckdb.Error:
        pass                                        # a plain connection to the file
    cursor.register("wanted", wanted)
    try:
        result = cursor.execute("SELECT i.* FROM pfs_indicators i JOIN wanted w USING (cy, hcpcs, mod)")
    except duckdb.CatalogException as exc:
        cursor.close()
        raise NotBuiltError("this fee-schedule database has no policy indicators (built before they were "
                            "loaded); rebuild it with `carenav build`") from exc
    names = [d[0] for d in result.description]
    rows = [dict(zip(names, r)) for r in result.fetchall()]
    cursor.close()
    return {(r["cy"], r["hcpcs"], r["mod"]): r for r in rows}
