"""Plain-words definitions of Physician Fee Schedule terms ("What is an RVU?", "What does limiting charge mean?"):
data/glossary.toml, each with the regulation or manual section that defines it. A question that asks only what a term
means gets the definition as a citable source (made by code), stated first; a question about a term's value ("the
CY 2026 conversion factor", "the GPCI for Seattle") is not a definition question and gets none."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from carenav_core.chat.events import Source
from carenav_core.settings import PROJECT_ROOT
from carenav_core.tomlfile import read_tables

GLOSSARY_FILE = PROJECT_ROOT / "data" / "glossary.toml"
GLOSSARY_KIND = "term definition"


class _Term(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    key: str = Field(pattern=r"^[a-z_]+$")
    name: str = Field(min_length=2)
    names: list[str] = Field(min_length=1)
    definition: str = Field(min_length=20)
    reference_title: str = Field(min_length=5)
    href: str = Field(pattern=r"^https://")


@dataclass(frozen=True)
class Term:
    key: str
    name: str
    asks: re.Pattern[str]        # the whole question asks what the term means
    definition: str
    reference_title: str
    href: str

    def source(self) -> Source:
        return Source(label=f"[Definition: {self.name}]", title=f"{self.name} ({self.reference_title})",
                      kind=GLOSSARY_KIND, published="", text=self.definition, url=self.href)


def _asks(names: list[str]) -> re.Pattern[str]:
    """The question as a whole asks what the term means: 'What is an RVU?', 'what are GPCIs', 'define the conversion
    factor', 'What does limiting charge mean?', 'explain RVUs', 'meaning of global period'."""
    term = r"(?:an?\s+|the\s+)?(?:" + "|".join(names) + r")"
    return re.compile(rf"^\s*(?:(?:what(?:'s|\s+is|\s+are)|define|explain(?:\s+what)?(?:\s+(?:is|are))?|"
                      rf"(?:the\s+)?(?:meaning|definition)\s+of)\s+{term}(?:\s+(?:is|are|means?))?|what\s+(?:does|do)\s+{term}\s+mean)"
                      rf"\s*(?:in\s+(?:the\s+)?(?:Medicare\s+)?(?:physician\s+fee\s+schedule|PFS|Medicare))?\s*[?.!]*\s*$",
                      re.IGNORECASE)


@lru_cache(maxsize=2)
def load_glossary(path: Path = GLOSSARY_FILE) -> tuple[Term, ...]:
    """The glossary; ConfigError names the file, the entry and the field."""
    return tuple(Term(key=t.key, name=t.name, asks=_asks(t.names), definition=t.definition,
                      reference_title=t.reference_title, href=t.href) for t in read_tables(path, "term", _Term))


def term_source(key: str) -> Source:
    """One term's definition by its key ("pe_rvu"), as a citable source; KeyError for a key the glossary lacks."""
    for term in load_glossary():
        if term.key == key:
            return term.source()
    raise KeyError(key)


def glossary_sources(text: str) -> tuple[Source, ...]:
    """The definition of the term a question asks the meaning of, as a citable source; () for any other question.

    >>> [s.label for s in glossary_sources("What is an RVU?")]
    ['[Definition: Relative value units (RVUs)]']
    >>> glossary_sources("What is the CY 2026 conversion factor?"), glossary_sources("What is the GPCI for Seattle?")
    ((), ())
    """
    return tuple(t.source() for t in load_glossary() if t.asks.search(text))
