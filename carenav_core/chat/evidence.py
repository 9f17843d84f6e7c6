"""What prose may state: the numbers of each valuation row and retrieved excerpt, indexed by the
label that cites them. Built once per answer; read by the output guard and the deterministic writer."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
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


_DOLLARS = re.compile(r"\$\s?(\d+(?:,\d{3})*(?:\.\d+)?)")


def dollars_in(text: str) -> frozenset[Decimal]:
    """The amounts `text` writes as dollars ("$32.3465", "$ 1,200"): only these may be stated as dollars from it.

    >>> sorted(dollars_in("a CF of $32.3465; 150 percent; $1,200"))
    [Decimal('32.3465'), Decimal('1200')]
    """
    return frozenset(d for d in (decimal_of(m.group(1)) for m in _DOLLARS.finditer(text)) if d is not None)


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
    texts: dict[str, str]                            # label_key -> words the cited item says (support test)
    unpriced: frozenset[str] = frozenset()           # codes no loaded release prices (may be named uncited)
    speaking: dict[str, Source] = field(default_factory=dict)   # label_key -> rule text whose speakers are known
    source_money: dict[str, frozenset[Decimal]] = field(default_factory=dict)   # label_key -> amounts it writes with "$"


def row_words(row: ValuationRow) -> str:
    """What a valuation row says, in words a sentence citing it may use (for the support test)."""
    stage = "proposed rule" if row.proposed else "final fee schedule"
    return (f"{row.hcpcs} {row.mod} {row.description} CY{row.cy} {row.cy} {stage} {row.vintage} status "
            f"{row.status} {row.status_meaning} work RVU RVUs relative value units practice expense malpractice "
            f"total non-facility facility office conversion factor {row.cf_label} national payment pays paid "
            f"Medicare physician fee schedule {row.rule_id} {row.locality} locality GPCI geographic adjusted")


def build_evidence(rows: Iterable[ValuationRow], sources: Iterable[Source], figures: Iterable = (),
                   unpriced: Iterable[str] = ()) -> Evidence:
    """Index rows, computed figures (chat/figures.py) and sources by label for the sentence checks.
    A figure's label is treated like a row's: it may carry payment figures."""
    row_numbers: dict[str, set[Decimal]] = {}
    labels: dict[str, str] = {}
    texts: dict[str, list[str]] = {}
    descriptors = set()
    for row in rows:
        row_numbers.setdefault(label_key(row.label), set()).update(row.numbers())
        labels.setdefault(label_key(row.label), row.label)
        texts.setdefault(label_key(row.label), []).append(row_words(row))
        for name in (row.description, row.locality):    # "Office o/p est hi 40 min", "NY 01 MANHATTAN"
            if re.search(r"[A-Za-z]", name):            # only real words are masked, never a bare number
                descriptors.add(name)
    for figure in figures:
        row_numbers.setdefault(label_key(figure.label), set()).update(figure.numbers())
        labels.setdefault(label_key(figure.label), figure.label)
        texts.setdefault(label_key(figure.label), []).append(figure.words())
    source_numbers, speaking, source_money = {}, {}, {}
    for source in sources:
        source_numbers[label_key(source.label)] = numbers_in(source.text)
        source_money[label_key(source.label)] = dollars_in(source.text)
        if source.role:                                 # rule text: who says what (chat/speakers.py)
            speaking[label_key(source.label)] = source
        labels.setdefault(label_key(source.label), source.label)
        texts.setdefault(label_key(source.label), []).append(f"{source.kind} {source.title} published {source.text}")
    return Evidence(row_numbers={k: frozenset(v) for k, v in row_numbers.items()}, source_numbers=source_numbers,
                    descriptors=tuple(sorted(descriptors, key=len, reverse=True)), labels=labels,
                    texts={k: " ".join(v) for k, v in texts.items()}, unpriced=frozenset(unpriced),
                    speaking=speaking, source_money=source_money)


def cited_and_also_retrieved(sources: Iterable[Source], cited_labels: Iterable[str]
                             ) -> tuple[tuple[Source, ...], tuple[Source, ...]]:
    """Split sources into those cited (in citation order) and the rest (in retrieval order)."""
    by_key = {label_key(s.label): s for s in sources}
    order = [label_key(label) for label in cited_labels if label_key(label) in by_key]
    cited = tuple(by_key[k] for k in dict.fromkeys(order))
    return cited, tuple(s for k, s in by_key.items() if k not in set(order))
