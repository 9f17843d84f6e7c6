"""Which numbers a sentence states as quantities (money, RVUs, CFs, percentages) — not years, codes,
dates, list markers, FR/CFR citations, label contents or descriptor words."""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from carenav_core.chat.evidence import decimal_of

_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
          r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
# Spans whose digits are references or dates, not quantities.
_NOT_QUANTITIES = re.compile(
    r"\[[^\[\]\n]*\]"                                       # citation labels
    r"|\d+\s*F\.?\s?R\.?\s*\d[\d,]*"                        # 89 FR 97710
    r"|\d+\s*C\.?F\.?R\.?\s*(?:(?:part|§+)\s*)?\d[\d.]*(?:\([a-z0-9]+\))*"  # 42 CFR 414.22(b)
    r"|§+\s*\d[\d.]*(?:\([a-z0-9]+\))*"                    # § 414.22
    r"|\bNos?\.\s*\d+"                                      # No. 5
    r"|\b(?:section|sec\.)\s+\d+[A-Za-z]?(?:\([a-zA-Z0-9]+\))*"  # section 1848(t)(1) of the Act
    r"|\d+\s*U\.\s?S\.\s?C\.\s*\d+[\w-]*(?:\([a-zA-Z0-9]+\))*"  # 42 U.S.C. 1395w-4(b)
    r"|\b(?:Pub(?:lic|\.)?\s*L(?:aw|\.)?)\s*(?:No\.\s*)?\d+-\d+"   # Pub. L. 118-42
    r"|\b(?:[A-V]\d{4}|\d{4}[A-Z0-9])-[A-Z0-9]{2}\b"           # G0556-26 (code with modifier)
    r"|\bmod(?:ifier)?s?\s+[A-Z0-9]{2}(?:\s*(?:,|and|or)\s*[A-Z0-9]{2})*\b"   # modifier 26, modifiers 26 and TC
    r"|\b\d{4}-\d{2}-\d{2}\b"                               # 2024-12-09
    rf"|\b{_MONTH}\s+\d{{1,2}}\b(?:,\s*\d{{4}})?",              # December 9, 2024
    re.IGNORECASE)
LIST_MARKER = re.compile(r"^\s*(?:#{1,6}\s+|>\s*)?(?:[-*•+]\s+|\(?\d{1,2}[.)]\s+|\(?[a-zA-Z][.)]\s+)?")
_QUANTITY = re.compile(r"(?<![\w.$])(?P<dollar>\$\s?)?(?P<num>\d+(?:,\d{3})*(?:\.\d+)?)(?![.,]?\d)"
                       r"(?P<suffix>%|[A-Za-z]+)?(?P<pct>\s*(?:percent|per\s+cent)\b)?")
_ORDINAL = {"st", "nd", "rd", "th"}
VALUE_WORDS = re.compile(r"\bRVUs?\b|relative value|conversion factor|\bCFs?\b|payment|\bpa(?:ys?|id)\b"
                          r"|reimburs", re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class Quantity:
    """One number a sentence states, as written and as a Decimal."""
    written: str
    value: Decimal
    money: bool
    percent: bool


def _is_reference_number(match: re.Match[str]) -> bool:
    """Years (2025), CPT codes (99490), 4-digit+letter codes (1234F, 0073A) and ordinals (2nd)."""
    num, suffix = match.group("num"), (match.group("suffix") or "")
    if match.group("dollar") or "." in num or "," in num:
        return False
    if suffix.lower() in _ORDINAL:
        return True
    if len(num) == 4 and suffix.upper() in {"A", "F", "M", "T", "U"}:     # 0073A, 1036F, 0001M, 0591T, 0001U
        return True
    return (len(num) == 4 and 1900 <= int(num) <= 2099 and suffix != "%") or (len(num) == 5 and suffix != "%")


def masked(sentence: str, descriptors: tuple[str, ...]) -> str:
    blank = lambda m: " " * len(m.group(0))  # noqa: E731 - keeps offsets
    text = LIST_MARKER.sub(blank, sentence, count=1)
    for descriptor in descriptors:
        if descriptor in text:
            whole = rf"(?<![\w.$,]){re.escape(descriptor)}(?![\w]|[.,]\d)"
            text = re.sub(whole, blank, text)
    return _NOT_QUANTITIES.sub(blank, text)


_NAMING_WORD = re.compile(r"(?:level|tier|step|part|phase|table|section|item|option|modifier|version|no\.?|"
                         r"number|#|type|category|group|page|paragraph|¶)\s*$", re.IGNORECASE)


def _is_plain_count(match: re.Match[str], text: str) -> bool:
    """A bare integer that names something ("level 1", "step 3", "Table 28"), not a figure."""
    if match.group("dollar") or match.group("suffix") == "%" or match.group("pct"):
        return False
    if "." in match.group("num") or "," in match.group("num"):
        return False
    return _NAMING_WORD.search(text[:match.start()]) is not None


def quantities(sentence: str, descriptors: tuple[str, ...] = ()) -> tuple[Quantity, ...]:
    """The numbers a sentence states that the guard checks.

    >>> [q.written for q in quantities("1. In CY2025 G0556 (99490's sibling) pays $15.20, 0.25 RVUs, up 3%.")]
    ['$15.20', '0.25', '3%']
    >>> [q.written for q in quantities("APCM level 1 pays $15.20 and 2 RVUs; it lasts 12 months.")]
    ['$15.20', '2', '12']
    """
    found = []
    text = masked(sentence, descriptors)
    for m in _QUANTITY.finditer(text):
        if _is_reference_number(m) or _is_plain_count(m, text):
            continue
        percent = m.group("suffix") == "%" or bool(m.group("pct"))
        found.append(Quantity(written=m.group(0).strip() if percent else (m.group("dollar") or "") + m.group("num"),
                              value=decimal_of(m.group("num")), money=bool(m.group("dollar")), percent=percent))
    return tuple(found)
