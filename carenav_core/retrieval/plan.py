"""What a question tells the ranker besides its words: the codes it names, the families those codes
belong to (their names, and definitions when data/families.toml gives one, expand the query), and the
rule it asks about ("the CY 2024 proposed rule", "the 2025 correction")."""
from __future__ import annotations

import re
from dataclasses import dataclass

from carenav_core.codes.detect import detect
from carenav_core.codes.families import Family, load_families

# "CY 2024", or a year right before/after a rule word: "2025 correction", "final rule for 2023".
_RULE_YEAR = re.compile(r"\bCY\s?(20\d\d)\b|\b(20\d\d)\s+(?:PFS\s+)?(?:proposed|final|correction|rule)"
                        r"|\b(?:rule|correction)\s+(?:for|of)\s+(?:CY\s?)?(20\d\d)\b", re.IGNORECASE)
_KIND = (("proposed rule", re.compile(r"\bpropos(?:ed|al)\s+rule\b|\bproposed\b", re.IGNORECASE)),
         ("correction", re.compile(r"\bcorrect(?:ion|ing)s?\b", re.IGNORECASE)),
         ("final rule", re.compile(r"\bfinal(?:ized)?\s+rule\b", re.IGNORECASE)))


@dataclass(frozen=True, kw_only=True)
class QueryPlan:
    """`codes`: written out in the question; `families`: keys named or implied by those codes;
    `expansion`: words added to the query (family names and definitions); `rule_year`/`rule_kind`:
    the rule the question asks about, when it names one."""
    codes: tuple[str, ...]
    families: tuple[str, ...]
    expansion: str
    rule_year: int | None
    rule_kind: str | None


def rule_of(question: str) -> tuple[int | None, str | None]:
    """(calendar year, kind) of the rule a question names.

    >>> rule_of("What did the CY 2024 proposed rule say?"), rule_of("2025 correction notice")
    ((2024, 'proposed rule'), (2025, 'correction'))
    >>> rule_of("How is G0556 valued?")
    (None, None)
    """
    match = _RULE_YEAR.search(question)
    year = int(next(g for g in match.groups() if g)) if match else None
    kind = next((name for name, pattern in _KIND if pattern.search(question)), None)
    return year, kind if year is not None or kind == "correction" else None


def _family_words(family: Family) -> str:
    definition = getattr(family, "definition", None) or ""
    return f"{family.name} {definition}".strip()


def plan(question: str, families: tuple[Family, ...] | None = None) -> QueryPlan:
    """The plan of one question.

    >>> p = plan("Compare 99490 and 99439")
    >>> p.codes, p.families, p.expansion
    (('99439', '99490'), ('CCM',), 'Chronic care management')
    """
    families = load_families() if families is None else families
    detection = detect(question, families)
    by_code = {code: f.key for f in families for code in f.codes}
    keys = tuple(dict.fromkeys(list(detection.families) + [by_code[c] for c in detection.explicit if c in by_code]))
    named = [f for f in families if f.key in keys]
    year, kind = rule_of(question)
    return QueryPlan(codes=detection.explicit, families=keys, expansion=" ".join(_family_words(f) for f in named),
                     rule_year=year, rule_kind=kind)
