"""Procedures and services named in words ("a total knee replacement", "a flu shot"), read from data/procedures.toml.

A question that names a procedure rather than its code is read as the procedure's codes, and the answer says so
("Read “total knee replacement” as CPT 27447 (CMS: Total knee arthroplasty)"), so an analyst who meant another code
sees which one was priced. Pure: no database, no model; the codes and descriptors are checked against the loaded CMS
releases by tests/codes/test_procedures.py.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from carenav_core.codes.families import checked_codes
from carenav_core.errors import ConfigError
from carenav_core.settings import PROJECT_ROOT
from carenav_core.tomlfile import keyed_tables

PROCEDURES_FILE = PROJECT_ROOT / "data" / "procedures.toml"


class _ProcedureEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="Display name of the procedure.")
    synonyms: list[str] = Field(min_length=1, description="Words matched in questions.")
    codes: list[str] = Field(min_length=1, description="The HCPCS/CPT codes the words are read as.")
    descriptors: list[str] = Field(min_length=1, description="Each code's CMS short descriptor, in the same order.")

    @model_validator(mode="after")
    def _checked(self) -> "_ProcedureEntry":
        checked_codes(self.codes)
        if len(self.descriptors) != len(self.codes):
            raise ValueError(f"{len(self.codes)} codes but {len(self.descriptors)} descriptors")
        return self


@dataclass(frozen=True, kw_only=True)
class Procedure:
    key: str
    name: str
    synonyms: tuple[str, ...]
    codes: tuple[str, ...]
    descriptors: tuple[str, ...]

    def read_as(self, first_only: bool = False) -> str:
        """How the answer says the words were read: "CPT 27447 (CMS: Total knee arthroplasty)"; `first_only`: the
        first code alone, priced for an amount computed with other services or a count, and the others named."""
        said = [f"{code_system(c)} {c} (CMS: {d})" for c, d in zip(self.codes, self.descriptors)]
        if not first_only or len(said) == 1:
            return ", ".join(said)
        return (f"{said[0]} for the amounts computed (the words may also mean {', '.join(said[1:])}: ask with the "
                "code to price another)")


def code_system(code: str) -> str:
    """"CPT" for a numeric code, "HCPCS" for a Level II code (a letter and four digits)."""
    return "HCPCS" if code[:1].isalpha() else "CPT"


def parse_procedures(text: str, source: str = "procedures.toml") -> tuple[Procedure, ...]:
    """Parse and validate a procedure registry; raises ConfigError naming the entry and field (a synonym is one
    procedure's only)."""
    procedures, owner = [], {}
    for key, parsed in keyed_tables(text, source, "procedure", _ProcedureEntry):
        for synonym in parsed.synonyms:
            if (other := owner.setdefault(_normal(synonym), key)) != key:
                raise ConfigError(f"{source}: procedure {key}: synonym {synonym!r} is already procedure {other}'s")
        procedures.append(Procedure(key=key, name=parsed.name, synonyms=tuple(parsed.synonyms),
                                    codes=tuple(parsed.codes), descriptors=tuple(parsed.descriptors)))
    return tuple(procedures)


@lru_cache(maxsize=4)
def load_procedures(path: Path = PROCEDURES_FILE) -> tuple[Procedure, ...]:
    """The registry shipped in data/procedures.toml."""
    return parse_procedures(path.read_text(encoding="utf-8"), source=str(path))


# "with a biopsy", "of the head": an article after a linking word is no part of the procedure's name
_LINK_ARTICLE = re.compile(r"\b(with|and|of|plus|for)[\s\-]+(?:an?|the)[\s\-]+", re.IGNORECASE)
_LINKS = {"with", "and", "of", "plus", "for"}


def _normal(text: str) -> str:
    """Lower case, words joined by one space, no article after a linking word ("cystoscopy with a biopsy" is
    "cystoscopy with biopsy").

    >>> _normal("CT of the Head"), _normal("cystoscopy with a  biopsy")
    ('ct of head', 'cystoscopy with biopsy')
    """
    return " ".join(re.split(r"[\s\-]+", _LINK_ARTICLE.sub(r"\1 ", text.lower())))


def _part(synonym: str) -> str:
    """A synonym as a pattern: words joined by spaces or hyphens, an article allowed (not needed) after a linking word
    ("cystoscopy with a biopsy", "CT of head"); a last word in "y" also as its plural in "ies" ("cataract surgeries",
    "colonoscopies")."""
    words = [re.escape(w) for w in re.split(r"[\s\-]+", _normal(synonym))]
    if re.fullmatch(r"[a-z]+[^aeiou]y", words[-1]):
        words[-1] = words[-1][:-1] + "(?:y|ies)"
    out = words[0]
    for before, word in zip(words, words[1:]):
        out += (r"[\s\-]+(?:(?:an?|the)[\s\-]+)?" if before in _LINKS else r"[\s\-]+") + word
    return out


def _singular(normal: str) -> str:
    return re.sub(r"ies$", "y", normal)


@lru_cache(maxsize=4)
def _index(procedures: tuple[Procedure, ...]) -> tuple[re.Pattern[str], dict[str, Procedure]]:
    by_synonym = {_normal(s): p for p in procedures for s in p.synonyms}
    # longest first: "screening colonoscopy" before "colonoscopy", "partial knee replacement" before "knee replacement"
    parts = [_part(s) for s in sorted(by_synonym, key=len, reverse=True)]
    # a plural or possessive is the procedure too ("two knee replacements", "the EGD's value"); never inside a word,
    # nor a procedure already followed by its code ("a total knee replacement (27447)")
    pattern = re.compile(r"(?<![\w&])(" + "|".join(parts) + r")(?:'?s|’s)?(?![\w&])", re.IGNORECASE)
    return pattern, by_synonym


def named_procedures(text: str, taken: list[tuple[int, int]] = (),
                     procedures: tuple[Procedure, ...] | None = None) -> list[tuple[int, int, Procedure]]:
    """Each procedure the text names in words, as (start, end, procedure), leftmost first; spans overlapping `taken`
    (words that already name a code family) are left alone.

    >>> [(p.key, p.codes) for _, _, p in named_procedures("Pay for a total knee replacement vs a screening colonoscopy?")]
    [('TKA', ('27447',)), ('SCREEN_COLONOSCOPY', ('G0121', 'G0105'))]
    >>> [p.key for _, _, p in named_procedures("two cataract surgeries and three colonoscopies")]
    ['CATARACT', 'COLONOSCOPY']
    """
    procedures = load_procedures() if procedures is None else procedures
    pattern, by_synonym = _index(procedures)
    found = []
    # "reading an EKG", "interpreting the ECG": the procedure's interpretation entry when the registry has one
    for m in _READ_OBJECT.finditer(text):
        words = list(re.finditer(r"[A-Za-z]+", m.group(1)))
        for size in range(len(words), 0, -1):
            said = _normal(" ".join(w.group(0) for w in words[:size]))
            meant = by_synonym.get(said + " interpretation") or \
                by_synonym.get(re.sub(r"(?<=[a-z])s$", "", said) + " interpretation")     # "reading EKGs"
            if meant is not None:
                found.append((m.start(1), m.start(1) + words[size - 1].end(), meant))
                taken = [*taken, found[-1][:2]]
                break
    for m in pattern.finditer(text):
        start, end = m.span(1)
        if any(start < b and a < end for a, b in taken) or _SESSION_OF.search(text, 0, start):
            continue        # "at the same colonoscopy session": the words name the session, not another service
        normal = _normal(m.group(1))
        if (then := _NOT_BEFORE.get(normal)) is not None and then.match(text, m.end()):
            continue        # "an echo chamber" is no echocardiogram
        procedure = by_synonym.get(normal) or by_synonym[_singular(normal)]
        # "a screening and a diagnostic mammogram", "knee vs hip replacement": the first shares the second's noun
        if (shared := _SHARED.search(text, 0, start)) is not None and len(normal.split()) > 1:
            elided = by_synonym.get(f"{shared.group(1).lower()} {' '.join(normal.split()[1:])}")
            if elided is not None and elided is not procedure and not any(
                    shared.start(1) < b and a < shared.end(1) for a, b in taken):
                found.append((shared.start(1), shared.end(1), elided))
        found.append((start, m.end(), procedure))
    # "knee or shoulder arthroscopy": the first shares the noun of a second the registry does not name
    for m in _ELIDED.finditer(text):
        first, rest = m.group(1), m.group(3)
        words = rest.split()
        for size in range(len(words), 0, -1):
            elided = by_synonym.get(_normal(f"{first} {' '.join(words[:size])}"))
            if elided is not None:
                break
        if elided is None or any(m.start(1) < b and a < m.end(1) for a, b in taken) or \
                any(a <= m.start(1) < b for a, b, _ in found):
            continue
        found.append((m.start(1), m.end(1), elided))
    return sorted(found, key=lambda f: f[0])


# the words that ask for a test's reading ("reading an EKG", "interpreting the MRI"): shared with detect and the planner
READING_VERB = r"(?:reading|interpreting|interpretation\s+of|to\s+(?:read|interpret))"
# what may stand between the verb and what is read: "an EKG", "the ECGs", "2 EKGs", "EKGs"
READ_DETERMINER = r"(?:(?:an?|the|their|this|these|those|all|each|\d+|two|three|four|five|six|ten)\s+)"
_READ_OBJECT = re.compile(r"\b" + READING_VERB + r"\s+" + READ_DETERMINER + r"?"
                          r"([A-Za-z]+(?:\s+[A-Za-z]+)?)", re.IGNORECASE)
# "X and|or|vs Y noun [noun]": X may share the noun of a Y the registry does not name ("knee or shoulder arthroscopy")
_ELIDED = re.compile(r"\b([A-Za-z]+)\s+(?:and|or|vs\.?|versus|&|,)\s+(?:an?\s+|the\s+)?([A-Za-z]+)\s+"
                     r"([A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*)?)", re.IGNORECASE)

# the head nouns of procedures named in words ("shoulder arthroscopy", "a hysterectomy", "hernia repair")
_PROCEDURE_NOUN = re.compile(
    r"\b(?:(?!(?:a|an|the|and|or|of|for|vs|versus|what|does|do|is|pay|pays|payment|medicare|much|how|per|with|same|"
    r"one|two|three|\d+)\b)([A-Za-z][A-Za-z-]+)\s+)?"
    r"((?:[A-Za-z]+(?:ectomy|otomy|ostomy|plasty|scopy|pexy|rrhaphy|lysis|centesis)(?:ies|s)?)|(?:replacements?|repairs?|"
    r"arthroscop(?:y|ies)|transplants?|fusions?|reconstructions?|resections?|amputations?|implants?))\b", re.IGNORECASE)


_BEFORE_SHARED = re.compile(
    r"\b(?!(?:a|an|the|and|or|of|for|what|does|do|is|pay|pays|payment|medicare|much|how|both|either|between|compare|"
    r"than|with|same|one|two)\b)([A-Za-z]+)\s+(?:and|or|vs\.?|versus|&)\s+(?:an?\s+|the\s+)?$", re.IGNORECASE)


def unread_procedures(text: str, read: list[tuple[int, int]]) -> tuple[str, ...]:
    """Procedures the text names in words that no span of `read` (procedures and families recognised) covers, as
    written: "shoulder arthroscopy" of "knee or shoulder arthroscopy payment", "hysterectomy".

    >>> unread_procedures("What does a hysterectomy or a shoulder replacement pay?", [])
    ('hysterectomy', 'shoulder replacement')
    >>> unread_procedures("shoulder or knee arthroscopy", [(12, 28)])
    ('shoulder arthroscopy',)
    """
    _, by_synonym = _index(load_procedures())
    out = []
    for a, b in sorted(read):          # "shoulder or knee arthroscopy": "shoulder" shares the noun of the one read
        m = _BEFORE_SHARED.search(text, 0, a)
        head = _PROCEDURE_NOUN.search(text, a, b)
        if m is not None and head is not None and head.end() == b and \
                not any(x < m.end(1) and m.start(1) < y for x, y in read):
            out.append(f"{m.group(1)} {head.group(2)}")
    for m in _PROCEDURE_NOUN.finditer(text):
        start = m.start(1) if m.group(1) else m.start(2)
        if any(start < b and a < m.end() for a, b in read) or any(a < m.end(2) and m.start(2) < b for a, b in read):
            continue
        phrase = text[start:m.end()]
        if any(_singular(_normal(p)) in by_synonym or _normal(p) in by_synonym for p in (phrase, m.group(2))):
            continue        # "during the same colonoscopy": a procedure the registry names (here the session)
        if _SESSION_OF.search(text, 0, start):
            continue        # "during the same sigmoidoscopy, 45331 and 45338": the session the codes are done in
        out.append(phrase)
    return tuple(dict.fromkeys(out))


# a short synonym that is another thing before these words ("echo" of "an echo chamber")
_NOT_BEFORE = {"echo": re.compile(r"\s+chambers?\b", re.IGNORECASE)}
# words naming the session or occasion another service is in, right before a procedure's name
_SESSION_OF = re.compile(r"\b(?:same|(?:during|within)\s+(?:a|an|the|that|this|one|a\s+single)|"
                         r"(?:in|at)\s+(?:the\s+same|one|a\s+single))\s+$", re.IGNORECASE)
# "X and (a) Y <noun>": X may be the first word of another procedure that shares Y's noun
_SHARED = re.compile(r"\b([A-Za-z]+)\s+(?:and|or|vs\.?|versus|&|,)\s+(?:an?\s+|the\s+)?$", re.IGNORECASE)


def spellings(procedures: tuple[Procedure, ...] | None = None) -> tuple[str, ...]:
    """The synonyms long enough to read a misspelling as ("colonscopy" as "colonoscopy"), normalised, longest first."""
    return _spellings(load_procedures() if procedures is None else procedures)


@lru_cache(maxsize=4)
def _spellings(procedures: tuple[Procedure, ...]) -> tuple[str, ...]:
    return tuple(sorted({_normal(s) for p in procedures for s in p.synonyms if len(s) >= MISSPELT_MIN_LENGTH},
                        key=len, reverse=True))


MISSPELT_MIN_LENGTH = 8         # "colonscopy", "mamogram"; shorter names ("EKG", "PCI") are too close to other words
