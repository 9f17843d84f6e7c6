"""PFS rule metadata (final and proposed rules, conversion factors) loaded from data/pfs_rules.toml."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from carenav_core.errors import ConfigError
from carenav_core.params import DatedValue, Reference, Tag, check_periods, read_toml, validate
from carenav_core.pfs.rows import ConversionFactor
from carenav_core.settings import PROJECT_ROOT

RULES_FILE = PROJECT_ROOT / "data" / "pfs_rules.toml"


class _CfEntry(DatedValue):
    """One conversion factor: a dated value of the shared schema (params.py) with a variant."""

    amount: Decimal = Field(gt=0, description="National conversion factor in dollars per RVU.")
    variant: str = Field("", description='"" for the single CF, or "QP" / "non-QP".')

    @model_validator(mode="after")
    def _bounded(self) -> "_CfEntry":
        if self.until is None or self.pending:
            raise ValueError("a conversion factor needs `until` (the last day of its period) and no `pending`")
        return self

    @property
    def href(self) -> str:
        return self.reference[0].href


class _RuleEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rule_id: str | None = Field(None, pattern=r"^CMS-\d{4}-[FP]\d?$")
    cy: int | None = None
    document_number: str = Field(pattern=r"^\d{4}-\d{5}$")
    fr_citation: str = Field(pattern=r"^\d+ FR \d+$")
    published: date
    tag: Tag = Field(description="O official, D derived, S secondary, U unverified (params.TAG_MEANINGS).")
    reference: list[Reference] = Field(min_length=1)
    cf: list[_CfEntry] = Field(min_length=1)


@dataclass(frozen=True, kw_only=True)
class Rule:
    """A final or proposed PFS rule and its conversion factors."""
    rule_id: str
    cy: int
    proposed: bool
    document_number: str
    fr_citation: str
    published: date
    references: tuple[Reference, ...]
    tag: str
    cfs: tuple[_CfEntry, ...]

    @property
    def reference(self) -> str:
        """Address of the rule's first source."""
        return self.references[0].href

    @property
    def fr_url(self) -> str:
        volume, _, page = self.fr_citation.split()
        return f"https://www.federalregister.gov/citation/{volume}-FR-{page}"

    def cf_for(self, effective: date | None) -> tuple[ConversionFactor, tuple[ConversionFactor, ...]]:
        """The CF in force on `effective` (first listed variant wins, e.g. non-QP), and the others."""
        def as_cf(entry: _CfEntry) -> ConversionFactor:
            return ConversionFactor(value=entry.amount, label=_cf_label(self.cy, entry, len(self.cfs) > 1),
                                    reference=entry.href, effective=entry.effective, until=entry.until)
        in_force = [c for c in self.cfs if effective is None or c.effective <= effective <= c.until]
        chosen = (in_force or list(self.cfs))[0]
        return as_cf(chosen), tuple(as_cf(c) for c in self.cfs if c is not chosen)


def _cf_label(cy: int, entry: _CfEntry, several: bool) -> str:
    if entry.variant:
        return f"CY{cy} {entry.variant}"
    if several:
        return f"CY{cy} {entry.effective:%b %-d}-{entry.until:%b %-d}"
    return f"CY{cy}"


@dataclass(frozen=True, kw_only=True)
class RuleBook:
    final: dict[int, Rule]
    proposed: dict[str, Rule]


def parse_rules(text: str, source: str = "pfs_rules.toml") -> RuleBook:
    """Validate rule metadata with the shared loader (params.py): references, tags, no unknown or
    duplicate keys, no overlapping periods within one variant."""
    raw = read_toml(text, source, ("final", "proposed"))
    final = {int(cy): _rule(source, f"final.{cy}", entry, cy=int(cy)) for cy, entry in raw.get("final", {}).items()}
    proposed = {rid: _rule(source, f"proposed.{rid}", entry, rule_id=rid)
                for rid, entry in raw.get("proposed", {}).items()}
    return RuleBook(final=final, proposed=proposed)


def _rule(source: str, where: str, entry: dict, *, cy: int | None = None, rule_id: str | None = None) -> Rule:
    parsed = validate(_RuleEntry, entry, source, where)
    for variant in {c.variant for c in parsed.cf}:
        check_periods([c for c in parsed.cf if c.variant == variant], source, f"{where}.cf ({variant or 'single'})")
    year = cy if cy is not None else parsed.cy
    if year is None:
        raise ConfigError(f"{source}: [{where}]: a proposed rule needs `cy`")
    return Rule(rule_id=parsed.rule_id or rule_id or "", cy=year, proposed=rule_id is not None,
                document_number=parsed.document_number, fr_citation=parsed.fr_citation,
                published=parsed.published, references=tuple(parsed.reference), tag=parsed.tag,
                cfs=tuple(parsed.cf))


@lru_cache(maxsize=4)
def load_rules(path: Path = RULES_FILE) -> RuleBook:
    """The rule book shipped in data/pfs_rules.toml."""
    return parse_rules(path.read_text(encoding="utf-8"), source=str(path))
