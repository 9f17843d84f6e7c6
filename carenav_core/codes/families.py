"""The code-family registry, read from data/families.toml and validated."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from carenav_core.settings import PROJECT_ROOT
from carenav_core.tomlfile import keyed_tables

FAMILIES_FILE = PROJECT_ROOT / "data" / "families.toml"
CODE_PATTERN = re.compile(r"^(?:[A-Z]\d{4}|\d{4}[A-Z0-9])$")


class _FamilyEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="Display name of the family.")
    synonyms: list[str] = Field(min_length=1, description="Names matched in questions.")
    codes: list[str] = Field(min_length=1, description="Member HCPCS/CPT codes.")
    reference: str = Field(pattern=r"^https://", description="Address of the text defining the family.")
    definition: str = Field("", description="One sentence saying what the codes are, from the reference.")
    payment_unit: str = Field("per service", description="What one payment covers, e.g. 'per calendar month'.")
    levels: list[str] = Field([], description="Member codes by level as the reference numbers them (level 1 first).")
    alternatives: bool = Field(False, description="Its base (non-add-on) codes are alternatives: a patient is billed "
                                                  "one of them for a service or period, never their sum.")
    ranked_apart: list[str] = Field([], description="Member codes of another kind than the family's name (G2211 among "
                                                    "the office visits), left out when the family's codes are ranked.")
    code_units: dict[str, str] = Field({}, description="What one payment of a member covers where members differ "
                                                        "(RPM: 99453 'once per episode of care', 99454 'per 30 days').")
    shared_names: list[str] = Field([], description="Names several families answer to together (\"care management\" "
                                                    "is CCM, PCM, APCM, TCM and BHI): each names every family listing it, "
                                                    "where no longer family name is written.")

    @model_validator(mode="after")
    def _levels_are_members(self) -> "_FamilyEntry":
        stray = [c for c in (*self.levels, *self.ranked_apart, *self.code_units) if c not in self.codes]
        if stray:
            raise ValueError(f"levels, ranked_apart or code_units name codes that are not members: {stray}")
        return self

    @field_validator("codes")
    @classmethod
    def _codes_are_codes(cls, codes: list[str]) -> list[str]:
        return checked_codes(codes)


def checked_codes(codes: list[str]) -> list[str]:
    """`codes` when each is a HCPCS/CPT code, once; ValueError naming the others (a registry's pydantic validators)."""
    bad = [c for c in codes if not CODE_PATTERN.match(c)]
    if bad:
        raise ValueError(f"not HCPCS/CPT codes: {bad}")
    if len(set(codes)) != len(codes):
        raise ValueError("duplicate code")
    return codes


@dataclass(frozen=True, kw_only=True)
class Family:
    key: str
    name: str
    synonyms: tuple[str, ...]
    codes: tuple[str, ...]
    reference: str
    definition: str = ""
    payment_unit: str = "per service"
    levels: tuple[str, ...] = ()     # "APCM level 2" is levels[1]
    alternatives: bool = False       # its base codes are billed one at a time (levels, complexities), never summed
    ranked_apart: tuple[str, ...] = ()   # members of another kind, left out of the family's rankings (G2211)
    shared_names: tuple[str, ...] = ()   # "care management": names this family with the others that list it
    code_units: tuple[tuple[str, str], ...] = ()    # a member's own payment unit where members differ (RPM, RTM)


def parse_families(text: str, source: str = "families.toml") -> tuple[Family, ...]:
    """Parse and validate a family registry; raises ConfigError naming the family and field."""
    return tuple(Family(key=key, name=parsed.name, synonyms=tuple(parsed.synonyms), codes=tuple(parsed.codes),
                        reference=parsed.reference, definition=parsed.definition, payment_unit=parsed.payment_unit,
                        levels=tuple(parsed.levels), alternatives=parsed.alternatives,
                        ranked_apart=tuple(parsed.ranked_apart), shared_names=tuple(parsed.shared_names),
                        code_units=tuple(parsed.code_units.items()))
                 for key, parsed in keyed_tables(text, source, "family", _FamilyEntry))


@lru_cache(maxsize=4)
def load_families(path: Path = FAMILIES_FILE) -> tuple[Family, ...]:
    """The registry shipped in data/families.toml."""
    return parse_families(path.read_text(encoding="utf-8"), source=str(path))


# payment units billed once a period: a patient billed every period of a span is billed once each
PERIODIC_UNITS = frozenset({"per calendar month", "per 30 days"})
ONCE_PER_EPISODE = "once per episode of care"


def payment_unit(hcpcs: str) -> str:
    """What one payment of `hcpcs` covers: its own unit in its family (RPM's 99453 "once per episode of care"), its
    family's unit ("per calendar month"), else "per service"."""
    for f in load_families():
        if hcpcs in f.codes:
            return dict(f.code_units).get(hcpcs, f.payment_unit)
    return "per service"
