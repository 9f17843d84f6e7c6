"""The output guard: model prose reaches the user one checked sentence at a time.

A sentence is released only when
  1. every bracketed citation in it is a valuation-row label or a retrieved source's label;
  2. every number it states (money, RVUs, conversion factors, percentages; not years, codes,
     dates, list markers, FR/CFR citations or label contents) is a number of a row or an
     excerpt that the sentence itself cites (compared as Decimal: "$17.10" == 17.1);
  3. a sentence stating an RVU, conversion factor or payment cites a row label.
Anything else is withheld and replaced by a visible note saying what was removed and why.
The guard reads no instructions from the text it checks: retrieved text is only evidence.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Iterable, Iterator

from carenav_core.chat.events import Source
from carenav_core.pfs.rows import ValuationRow

log = logging.getLogger(__name__)

# --- evidence ---------------------------------------------------------------------------------

_CITATION = re.compile(r"\[([^\[\]\n]*)\]")
_ANY_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


def label_key(label: str) -> str:
    """How labels are compared: brackets, spaces and case do not matter.

    >>> label_key("[89 FR 97860 ¶ 4]") == label_key("89 fr 97860 ¶4")
    True
    """
    return re.sub(r"\s+", "", label.strip().strip("[]")).casefold()


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace(",", "").replace("$", "").strip())
    except InvalidOperation:
        return None


def numbers_in(text: str) -> frozenset[Decimal]:
    """Every number written in `text` (how excerpts are read).

    >>> sorted(numbers_in("a CF of $32.3465, down 2.83 percent; 19,090 codes"))
    [Decimal('2.83'), Decimal('32.3465'), Decimal('19090')]
    """
    return frozenset(d for d in (_decimal(m.group(0)) for m in _ANY_NUMBER.finditer(text)) if d is not None)


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


# --- numbers a sentence states ------------------------------------------------------------------

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
_LIST_MARKER = re.compile(r"^\s*(?:#{1,6}\s+|>\s*)?(?:[-*•+]\s+|\(?\d{1,2}[.)]\s+|\(?[a-zA-Z][.)]\s+)?")
_QUANTITY = re.compile(r"(?<![\w.$])(?P<dollar>\$\s?)?(?P<num>\d+(?:,\d{3})*(?:\.\d+)?)(?![.,]?\d)"
                       r"(?P<suffix>%|[A-Za-z]+)?(?P<pct>\s*(?:percent|per\s+cent)\b)?")
_ORDINAL = {"st", "nd", "rd", "th"}
_VALUE_WORDS = re.compile(r"\bRVUs?\b|relative value|conversion factor|\bCFs?\b|payment|\bpa(?:ys?|id)\b"
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


def _masked(sentence: str, descriptors: tuple[str, ...]) -> str:
    blank = lambda m: " " * len(m.group(0))  # noqa: E731 - keeps offsets
    text = _LIST_MARKER.sub(blank, sentence, count=1)
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
    masked = _masked(sentence, descriptors)
    for m in _QUANTITY.finditer(masked):
        if _is_reference_number(m) or _is_plain_count(m, masked):
            continue
        percent = m.group("suffix") == "%" or bool(m.group("pct"))
        found.append(Quantity(written=m.group(0).strip() if percent else (m.group("dollar") or "") + m.group("num"),
                              value=_decimal(m.group("num")), money=bool(m.group("dollar")), percent=percent))
    return tuple(found)


# --- one sentence -------------------------------------------------------------------------------

def cited_keys(sentence: str) -> tuple[str, ...]:
    """label_keys of every bracketed citation; "[A; B]" counts as two."""
    keys = []
    for m in _CITATION.finditer(sentence):
        parts = [m.group(1)] + (re.split(r"\s*;\s*", m.group(1)) if ";" in m.group(1) else [])
        keys.extend(label_key(p) for p in parts if p.strip())
    return tuple(keys)


def _citation_reasons(sentence: str, evidence: Evidence) -> tuple[list[str], set[str]]:
    reasons, known = [], set()
    for m in _CITATION.finditer(sentence):
        whole = label_key(m.group(1))
        parts = [whole] if whole in evidence.labels else [label_key(p) for p in m.group(1).split(";")]
        unknown = [p for p in parts if p not in evidence.labels]
        if unknown:
            reasons.append(f'cites "{m.group(1).strip()}", which is not a retrieved source or valuation row')
        known.update(p for p in parts if p in evidence.labels)
    return reasons, known


def check_sentence(sentence: str, evidence: Evidence) -> tuple[str, ...]:
    """Why `sentence` must be withheld (empty tuple: it may be released)."""
    reasons, cited = _citation_reasons(sentence, evidence)
    allowed: set[Decimal] = set()
    for key in cited:
        allowed |= evidence.row_numbers.get(key, frozenset()) | evidence.source_numbers.get(key, frozenset())
    stated = quantities(sentence, evidence.descriptors)
    reasons += [f"states {q.written}, which is not in the evidence it cites" for q in stated if q.value not in allowed]
    claims_value = any(q.money for q in stated) or (
        any(not q.percent for q in stated) and _VALUE_WORDS.search(_masked(sentence, evidence.descriptors)) is not None)
    if claims_value and not cited & evidence.row_numbers.keys():
        reasons.append("states an RVU, conversion factor or payment without citing a valuation row label")
    return tuple(reasons)


def withheld_note(reasons: tuple[str, ...]) -> str:
    """The visible note that replaces a withheld sentence."""
    return f"(removed: {'; '.join(reasons)}.)"


# --- sentence boundaries ------------------------------------------------------------------------

_ABBREVIATIONS = frozenset({
    "e.g", "i.e", "u.s", "u.s.c", "vs", "etc", "dr", "mr", "mrs", "ms", "st", "fig", "approx", "sec", "secs",
    "pub", "l", "inc", "co", "corp", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
    "nov", "dec", "al", "cf", "ref", "p", "pp", "vol", "ch", "para", "par", "reg", "regs", "stat", "cong"})
_CANDIDATE = re.compile(r"[\n.!?\[\]]")
_CLOSERS = set(".!?\"')”’*_")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")


def _is_abbreviation(before: str, following: str) -> bool:
    """Is the period that ends `before` an abbreviation's (given the next visible character)?"""
    if re.fullmatch(r"\s*(?:[-*•+]\s*)?(?:\(?\d{1,2}|[a-zA-Z])", before):   # list marker "1." / "a."
        return True
    m = _WORD_BEFORE.search(before)
    if not m:
        return False
    word = m.group(1).lower()
    if word == "no" or word == "nos":
        return following.isdigit()
    if word == "etc":
        return not following.isupper()
    return word in _ABBREVIATIONS


def _after_citations(text: str, k: int, final: bool) -> int | None:
    """End of "[label]" (or several) that follow a sentence's period; None if still streaming."""
    end = k
    while end < len(text) and text[end] == "[":
        close = text.find("]", end)
        if close == -1:
            return len(text) if final else None
        end = close + 1
        nxt = end + len(text[end:]) - len(text[end:].lstrip(" \t"))
        if nxt < len(text) and text[nxt] == "[":
            end = nxt
    if end < len(text) and text[end] in ".;":
        end += 1
    return end


def sentence_end(text: str, final: bool = False) -> int | None:
    """Index just past the first complete sentence in `text` (trailing spaces included), or None
    when more text is needed to decide. Newlines end sentences; periods inside brackets, decimals,
    abbreviations ("e.g.", "U.S.", "No. 5") and list markers do not; a citation written after the
    period ("... $15.20. [PFS CY2025 RVU25D]") stays with its sentence."""
    depth = 0
    for m in _CANDIDATE.finditer(text):
        char = m.group(0)
        if char in "[]":
            depth = depth + 1 if char == "[" else max(depth - 1, 0)
            continue
        if char == "\n":
            return m.end()
        if depth:
            continue
        end = _terminal_end(text, m.start(), final)
        if end is None or end > 0:
            return end
    return len(text) if final and text else None


def _terminal_end(text: str, at: int, final: bool) -> int | None:
    """For terminal punctuation at `at`: sentence end, 0 if not a boundary, None if undecided."""
    j = at + 1
    while j < len(text) and text[j] in _CLOSERS:
        j += 1
    if j == len(text):
        return len(text) if final else None
    if not text[j].isspace():
        return 0
    k = j
    while k < len(text) and text[k] in " \t":
        k += 1
    if k == len(text):
        return len(text) if final else None
    if text[k] == "\n":
        return k + 1
    if text[at] == "." and _is_abbreviation(text[:at], text[k]):
        return 0
    if text[k] == "[":
        end = _after_citations(text, k, final)
        return None if end is None else _with_spaces(text, end, final)
    return k


def _with_spaces(text: str, end: int, final: bool) -> int | None:
    k = end
    while k < len(text) and text[k] in " \t":
        k += 1
    if k < len(text) and text[k] == "\n":
        return k + 1
    return k if (k < len(text) or final) else None


def split_sentences(text: str) -> list[str]:
    """All sentences of a finished text; joined they give back `text`.

    >>> split_sentences("E.g. G0556 pays $15.20. [PFS CY2025 RVU25D] Next, U.S. rules.")
    ['E.g. G0556 pays $15.20. [PFS CY2025 RVU25D] ', 'Next, U.S. rules.']
    """
    sentences = []
    while text:
        end = sentence_end(text, final=True) or len(text)
        sentences.append(text[:end])
        text = text[end:]
    return sentences


# --- the streaming guard ------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class GuardedSentence:
    """What the guard lets through: the sentence itself, or (released=False) a note replacing it."""
    text: str                       # shown to the user
    released: bool
    original: str                   # the sentence the model wrote
    reasons: tuple[str, ...] = ()


class OutputGuard:
    """Feed streamed chunks; get back checked sentences. Call `flush()` once the stream ends."""

    def __init__(self, evidence: Evidence) -> None:
        self.evidence = evidence
        self.withheld = 0               # sentences withheld so far
        self._buffer = ""
        self._cited: dict[str, None] = {}

    @classmethod
    def for_answer(cls, rows: Iterable[ValuationRow], sources: Iterable[Source]) -> "OutputGuard":
        """A guard whose evidence is these valuation rows and retrieved sources."""
        return cls(build_evidence(rows, sources))

    def feed(self, chunk: str) -> list[GuardedSentence]:
        """Add streamed text; return every sentence that is now complete, checked."""
        self._buffer += chunk
        return list(self._drain(final=False))

    def flush(self) -> list[GuardedSentence]:
        """The stream ended: check whatever is left."""
        return list(self._drain(final=True))

    @property
    def cited_labels(self) -> tuple[str, ...]:
        """Labels (as the evidence writes them) cited by released sentences, in first-cited order."""
        return tuple(self.evidence.labels[k] for k in self._cited)

    def _drain(self, *, final: bool) -> Iterator[GuardedSentence]:
        while self._buffer:
            end = sentence_end(self._buffer, final=final)
            if end is None:
                return
            sentence, self._buffer = self._buffer[:end], self._buffer[end:]
            yield self._judge(sentence)

    def _judge(self, sentence: str) -> GuardedSentence:
        reasons = check_sentence(sentence, self.evidence)
        if not reasons:
            self._cited.update((k, None) for k in cited_keys(sentence) if k in self.evidence.labels)
            return GuardedSentence(text=sentence, released=True, original=sentence)
        self.withheld += 1
        log.info("output guard withheld %r: %s", sentence.strip(), "; ".join(reasons))
        marker = _LIST_MARKER.match(sentence).group(0)      # keep "- " or "2. " so lists stay lists
        trailing = sentence[len(sentence.rstrip()):]
        return GuardedSentence(text=marker + withheld_note(reasons) + trailing, released=False,
                               original=sentence, reasons=reasons)


def guard_text(text: str, evidence: Evidence) -> list[GuardedSentence]:
    """Check a finished text in one go (same result as streaming it)."""
    guard = OutputGuard(evidence)
    return guard.feed(text) + guard.flush()


def cited_and_also_retrieved(sources: Iterable[Source], cited_labels: Iterable[str]
                             ) -> tuple[tuple[Source, ...], tuple[Source, ...]]:
    """Split sources into those cited (in citation order) and the rest (in retrieval order)."""
    by_key = {label_key(s.label): s for s in sources}
    order = [label_key(label) for label in cited_labels if label_key(label) in by_key]
    cited = tuple(by_key[k] for k in dict.fromkeys(order))
    return cited, tuple(s for k, s in by_key.items() if k not in set(order))
