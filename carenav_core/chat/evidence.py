"""What prose may state: the numbers of each valuation row and retrieved excerpt, indexed by the
label that cites them. Built once per answer; read by the output guard and the deterministic writer."""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Iterable

from carenav_core.chat.events import Source
from carenav_core.pfs.rows import ValuationRow

CITATION = re.compile(r"\[([^\[\]\n]*)\]")
_ANY_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


def label_key(label: str) -> str:
    """How labels are compared: brackets, spaces and case do not matter.

    >>> label_key("[89 FR 97860 ¶ 4]") == label_key("89 fr 97860 ¶4")
    True
    """
    return re.sub(r"\s+", "", label.strip().strip("[]")).casefold()


def decimal_of(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace(",", "").replace("$", "").strip())
    except InvalidOperation:
        return None


def numbers_in(text: str) -> frozenset[Decimal]:
    """Every number written in `text` (how excerpts are read).

    >>> sorted(numbers_in("a CF of $32.3465, down 2.83 percent; 19,090 codes"))
    [Decimal('2.83'), Decimal('32.3465'), Decimal('19090')]
    """
    return frozenset(d for d in (decimal_of(m.group(0)) for m in _ANY_NUMBER.finditer(text)) if d is not None)


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """What prose may state: numbers per row label and per source label, and row descriptors."""
    row_numbers: dict[str, frozenset[Decimal]]       # label_key -> numbers of every row with that label
    source_numbers: dict[str, frozenset[Decimal]]    # label_key -> numbers in the excerpt
    descriptors: tuple[str, ...]                     # CMS short descriptors (may hold "lvl 1", "20 min")
    labels: dict[str, str]                           # label_key -> label as the evidence writes it


def build_evidence(rows: Iterable[ValuationRow], sources: Iterable[Source]) -> Evidence:
    """Index rows and sources by label for the sentence checks."""
    row_numbers: dict[str, set[Decimal]] = {}
    labels: dict[str, str] = {}
    descriptors = set()
    for row in rows:
        row_numbers.setdefault(label_key(row.label), set()).update(row.numbers())
        labels.setdefault(label_key(row.label), row.label)
        if re.search(r"[A-Za-z]", row.description):     # only real words are masked, never a bare number
            descriptors.add(row.description)
    source_numbers = {}
    for source in sources:
        source_numbers[label_key(source.label)] = numbers_in(source.text)
        labels.setdefault(label_key(source.label), source.label)
    return Evidence(row_numbers={k: frozenset(v) for k, v in row_numbers.items()}, source_numbers=source_numbers,
                    descriptors=tuple(sorted(descriptors, key=len, reverse=True)), labels=labels)


def cited_and_also_retrieved(sources: Iterable[Source], cited_labels: Iterable[str]
                             ) -> tuple[tuple[Source, ...], tuple[Source, ...]]:
    """Split sources into those cited (in citation order) and the rest (in retrieval order)."""
    by_key = {label_key(s.label): s for s in sources}
    order = [label_key(label) for label in cited_labels if label_key(label) in by_key]
    cited = tuple(by_key[k] for k in dict.fromkeys(order))
    return cited, tuple(s for k, s in by_key.items() if k not in set(order))
