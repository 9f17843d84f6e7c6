"""Federal Register documents -> paragraphs with their heading path and printed page.

Reads the full-text XML that federalregister.gov serves (HD, P, FP, PRTPAGE, FTNT, GPOTABLE,
EXTRACT, ...) leniently: excerpts may start and end in the middle of an element, so the parser
is a tag tokenizer with a text buffer, not an XML tree. Also reads tag-stripped plain text with a
section manifest (heading paths + character offsets), as kept by ianthomas/rule-tracker.
"""
from __future__ import annotations

import html
import json
import re
import tomllib
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from carenav_core.errors import ConfigError, DataError

_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)((?:\s[^<>]*?)?)(/?)>|<!--.*?-->|<\?.*?\?>", re.S)
_PAGE_ATTR = re.compile(r'\bP="(\d+)"')
# Paragraph-like elements of FR full-text XML (GPO "Federal Register XML" tag set).
_BLOCKS = {"P", "FP", "AMDPAR", "SECTNO", "SUBJECT", "PSPACE", "NOTE"}
# Elements whose text never belongs in a paragraph: image references, footnote anchors, filing lines.
_SKIPPED = {"GPH", "GID", "FTREF", "BILCOD", "FRDOC", "PRTPAGE", "STARS"}
# Enumeration styles of FR preamble headings, outermost first: "II.", "G.", "2.", "e.", "(1)", "(a)", "(i)".
_LEVELS = (
    (1, re.compile(r"^(?:I{1,3}|IV|VI{0,3}|IX|XI{0,3})\.\s")),
    (2, re.compile(r"^[A-Z]\.\s")),
    (3, re.compile(r"^\d{1,2}\.\s")),
    (4, re.compile(r"^[a-z]{1,2}\.\s")),
    (6, re.compile(r"^\((?:i|ii|iii|iv|v|vi|vii|viii|ix|x)\)\s")),
    (5, re.compile(r"^\(\d{1,2}\)\s")),
    (6, re.compile(r"^\([a-z]\)\s")),
)


@dataclass(frozen=True, kw_only=True)
class Paragraph:
    """One paragraph of rule text. `page` is the printed FR page where it starts (None when the
    source has no page markers); `kind` is "text", "table" or "footnote"; `offset` is its order."""
    heading: tuple[str, ...]
    page: int | None
    page_end: int | None
    text: str
    kind: str = "text"
    offset: int = 0


def clean_text(parts: list[str]) -> str:
    """Join inline pieces of pretty-printed XML into one line of prose.

    >>> clean_text(["HCPCS code G0402 (", "Initial Preventive Exam", ") was ", "included", " ."])
    'HCPCS code G0402 (Initial Preventive Exam) was included.'
    """
    text = re.sub(r"\s+", " ", " ".join(parts)).strip()
    text = re.sub(r"\s+([.,;:)\]’”])", r"\1", text)
    return re.sub(r"([(\[“‘])\s+", r"\1", text)


def heading_level(title: str, source: str = "") -> int:
    """Nesting level of an FR heading from its enumeration; falls back to the HD SOURCE level.

    >>> heading_level("G. Enhanced Care Management"), heading_level("(2) Initiating Visit")
    (2, 5)
    >>> heading_level("I. Background", "HD1"), heading_level("I. Background", "HD2")
    (1, 2)
    """
    if re.match(r"^[IVX]\.\s", title) and source and source != "HD1":
        return 2  # a single-letter "I." or "V." under HD2 is a capital-letter item, not roman
    for level, pattern in _LEVELS:
        if pattern.match(title):
            return level
    digits = re.sub(r"\D", "", source)
    return int(digits) if digits else 1


@dataclass(kw_only=True)
class _Headings:
    """Current heading path, replaced from the level of each new heading down."""
    levels: list[tuple[int, str]] = field(default_factory=list)

    def push(self, title: str, source: str = "") -> None:
        level = 0 if source == "HED" else heading_level(title, source)
        self.levels = [(lv, t) for lv, t in self.levels if lv < level] + [(level, title)]

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(t for _, t in self.levels)


@dataclass(kw_only=True)
class _Table:
    """A GPOTABLE being read: title, column heads and finished rows."""
    title: list[str] = field(default_factory=list)
    heads: list[str] = field(default_factory=list)
    rows: list[str] = field(default_factory=list)
    cells: list[str] = field(default_factory=list)

    def render(self) -> tuple[str, str]:
        caption = clean_text(self.title) or "Table"
        if self.heads:
            caption += "\nColumns: " + " | ".join(self.heads)
        return caption, "\n".join(self.rows)


class _XmlReader:
    """State of one pass over FR XML: page, headings, the open paragraph, the open table."""

    def __init__(self) -> None:
        self.out: list[Paragraph] = []
        self.headings = _Headings()
        self.page: int | None = None
        self.buffer: list[str] = []
        self.start_page: int | None = None
        self.skip: list[str] = []          # stack of skipped elements we are inside
        self.heading_source: str | None = None
        self.footnote: str | None = None  # footnote number while inside FTNT
        self.table: _Table | None = None
        self.capture: str | None = None    # TTITLE / CHED / ENT while reading a table

    def text(self, raw: str) -> None:
        if self.skip or not raw.strip():
            return
        if not self.buffer and self.heading_source is None and self.capture is None:
            self.start_page = self.page
        self.buffer.append(html.unescape(raw))

    def flush(self) -> None:
        text = clean_text(self.buffer)
        self.buffer = []
        if not text:
            return
        if self.table is not None:
            return  # table text is kept cell by cell in close_in_table
        kind = "footnote" if self.footnote is not None else "text"
        if self.footnote:
            text = f"Footnote {self.footnote}: {text}"
        self.out.append(Paragraph(heading=self.headings.path, page=self.start_page, page_end=self.page,
                                  text=text, kind=kind, offset=len(self.out)))

    def open(self, name: str, attrs: str, empty: bool) -> None:
        if name == "PRTPAGE":
            match = _PAGE_ATTR.search(attrs)
            self.page = int(match.group(1)) if match else self.page
        elif name in _SKIPPED or (name == "SU" and self.footnote is None):
            if not empty:
                self.skip.append(name)
        elif name == "SU":
            self.skip.append("SU-NUMBER")
        elif name == "HD":
            self.flush()
            source = re.search(r'SOURCE="([^"]+)"', attrs)
            self.heading_source = source.group(1) if source else ""
        elif name == "FTNT":
            self.flush()
            self.footnote = ""
        elif name == "GPOTABLE":
            self.flush()
            self.table, self.start_page = _Table(), self.page
        elif name in ("TTITLE", "CHED", "ENT") and self.table is not None:
            self.capture = name
        elif name in _BLOCKS and self.table is None:
            self.flush()

    def close(self, name: str) -> None:
        if self.skip and self.skip[-1] in (name, "SU-NUMBER" if name == "SU" else None):
            self.skip.pop()
        elif name == "HD" and self.heading_source is not None:
            title = clean_text(self.buffer)
            self.buffer = []
            if title:
                self.headings.push(title, self.heading_source)
            self.heading_source = None
        elif name == "FTNT":
            self.flush()
            self.footnote = None
        elif self.table is not None:
            self.close_in_table(name)
        elif name in _BLOCKS:
            self.flush()

    def close_in_table(self, name: str) -> None:
        table = self.table
        if name == self.capture:
            text = clean_text(self.buffer)
            self.buffer = []
            {"TTITLE": table.title, "CHED": table.heads, "ENT": table.cells}[name].append(text)
            self.capture = None
        elif name == "ROW":
            if any(table.cells):
                table.rows.append(" | ".join(c for c in table.cells))
            table.cells = []
        elif name == "GPOTABLE":
            caption, rows = table.render()
            self.table = None
            self.out.append(Paragraph(heading=self.headings.path + (caption.split("\n")[0],),
                                      page=self.start_page, page_end=self.page,
                                      text=f"{caption}\n{rows}".strip(), kind="table",
                                      offset=len(self.out)))

    def su_text(self, raw: str) -> bool:
        """Footnote numbers (SU inside FTNT) label the footnote instead of joining its text."""
        if self.skip and self.skip[-1] == "SU-NUMBER":
            self.footnote = raw.strip()
            return True
        return False


def parse_fr_xml(xml: str, *, first_page: int | None = None) -> tuple[Paragraph, ...]:
    """Paragraphs of FR full-text XML, whole or an excerpt cut mid-element.

    Text before the first PRTPAGE marker is on the page before it (or `first_page` when given).
    """
    reader = _XmlReader()
    xml = _trim_cut_tags(xml)
    position = 0
    for match in _TAG.finditer(xml):
        raw = xml[position:match.start()]
        if not reader.su_text(raw):
            reader.text(raw)
        position = match.end()
        if match.group(2) is None:
            continue  # comment or processing instruction
        closing, name, attrs, empty = match.group(1), match.group(2).upper(), match.group(3), match.group(4)
        if closing:
            reader.close(name)
        else:
            reader.open(name, attrs, bool(empty))
    reader.text(xml[position:])
    reader.flush()
    return _fill_first_page(tuple(reader.out), first_page)


def _trim_cut_tags(xml: str) -> str:
    """An excerpt may start inside a tag ('SOURCE="HD2">A. Care</HD>') or end inside one ('<HD SOU'):
    drop those pieces of markup (and the text of the element whose opening tag was cut)."""
    first = xml.find("<")
    if first > 0 and ">" in xml[:first]:
        xml = xml[first:]
    last_open, last_close = xml.rfind("<"), xml.rfind(">")
    return xml[:last_open] if last_open > last_close else xml


def _fill_first_page(paragraphs: tuple[Paragraph, ...], first_page: int | None) -> tuple[Paragraph, ...]:
    """Give paragraphs before the first PRTPAGE marker the page that precedes that marker."""
    marked = [p.page for p in paragraphs if p.page is not None]
    before = first_page if first_page is not None else (min(marked) - 1 if marked else None)
    return tuple(p if p.page is not None else
                 Paragraph(heading=p.heading, page=before, page_end=p.page_end or before,
                           text=p.text, kind=p.kind, offset=p.offset)
                 for p in paragraphs)


_TEXT_HEADING = re.compile(r"^(?:[IVX]+\.|[A-Z]\.|\d{1,2}\.|[a-z]{1,2}\.|\(\d{1,2}\)|\([a-z]{1,4}\))\s+\S")


def looks_like_heading(line: str) -> bool:
    """A plain-text line that is an enumerated heading: short, numbered, no closing period.

    >>> looks_like_heading("(2) Beneficiary Notifications"), looks_like_heading("1. We proposed this.")
    (True, False)
    """
    return (bool(_TEXT_HEADING.match(line)) and len(line.split()) <= 30
            and not line.rstrip().endswith((".", ":", ";", ",")))


def parse_fr_text(text: str, manifest_json: str, *, source: str = "sections.json") -> tuple[Paragraph, ...]:
    """Paragraphs of tag-stripped FR text (blank-line separated) with heading paths from the
    section manifest (`sections: [{heading_path, start, end}]`) and enumerated heading lines."""
    sections = _read_manifest(manifest_json, source)
    headings, out, current = _Headings(), [], None
    for match in re.finditer(r"[^\n]+(?:\n(?!\s*\n)[^\n]+)*", text):
        line = " ".join(match.group(0).split())
        section = _section_at(sections, match.start())
        if section is not current:
            current, headings = section, _Headings()
            for title in (section or {}).get("heading_path", []):
                headings.push(title)
        if not line or line in headings.path:
            continue
        if looks_like_heading(line):
            headings.push(line)
            continue
        out.append(Paragraph(heading=headings.path, page=None, page_end=None, text=line, offset=len(out)))
    return tuple(out)


class _Section(BaseModel):
    """One entry of a section manifest: character offsets into the text file and its heading path."""
    model_config = ConfigDict(extra="ignore")
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    heading_path: list[str] = []


def _read_manifest(manifest_json: str, source: str) -> list[dict]:
    try:
        raw = json.loads(manifest_json)["sections"]
        sections = [_Section.model_validate(entry).model_dump() for entry in raw]
    except (ValueError, KeyError, TypeError, ValidationError) as exc:
        raise DataError(f"section manifest is not {{sections: [{{start, end, heading_path}}]}}: {exc}",
                        path=source) from exc
    return sorted(sections, key=lambda s: s["start"])


def _section_at(sections: list[dict], offset: int) -> dict | None:
    """The innermost (latest-starting) manifest section containing `offset`."""
    found = None
    for section in sections:
        if int(section["start"]) > offset:
            break
        if offset < int(section["end"]):
            found = section
    return found


class FrDocument(BaseModel):
    """One `[[fr_document]]` table of data/sources.toml."""
    model_config = ConfigDict(extra="forbid")
    document_number: str = Field(pattern=r"^\d{4}-\d{5}$", description="FR document number, e.g. 2024-25382.")
    part: str | None = Field(None, description="Which excerpt, when one document has several mirror files.")
    rule_id: str = Field(description="CMS rule id, e.g. CMS-1807-F.")
    kind: Literal["final rule", "proposed rule", "correction"] = Field(description="Kind of FR document.")
    title: str = Field(description="Document title as printed.")
    published: date = Field(description="Publication date in the Federal Register.")
    volume: int = Field(gt=0, description="FR volume (year - 1935 for these rules).")
    first_page: int = Field(gt=0, description="First printed page of the document.")
    url: str = Field(pattern=r"^https://www\.federalregister\.gov/", description="Official full-text XML address.")
    mirror_file: str = Field(description="Path of the local copy relative to the mirror root "
                             "(never a .json metadata file).")
    format: Literal["xml", "text"] = Field(description="xml = FR full-text XML; text = tag-stripped text.")
    sections: str | None = Field(None, description="Section manifest (JSON) of a text file, relative to the mirror.")

    @field_validator("mirror_file")
    @classmethod
    def _not_metadata(cls, value: str) -> str:
        if value.lower().endswith(".json"):
            raise ValueError(f"{value} is FR API metadata, not rule text; it is never indexed")
        return value

    @property
    def doc_id(self) -> str:
        """Key of this source in the store (a document may have several excerpts)."""
        return f"{self.document_number}:{self.part}" if self.part else self.document_number


def load_fr_documents(sources_toml: Path) -> tuple[FrDocument, ...]:
    """The `[[fr_document]]` entries of a sources.toml; ConfigError names the entry and field."""
    try:
        raw = tomllib.loads(sources_toml.read_text(encoding="utf-8")).get("fr_document", [])
        documents = tuple(FrDocument.model_validate(entry) for entry in raw)
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        raise ConfigError(f"{sources_toml}: [[fr_document]]: {exc}") from exc
    keys = [d.doc_id for d in documents]
    if len(set(keys)) != len(keys):
        raise ConfigError(f"{sources_toml}: duplicate [[fr_document]] document_number/part: {keys}")
    return documents
