"""The output guard: model prose reaches the user one checked sentence at a time.

A sentence is released only when
  1. every bracketed citation in it is a valuation-row label or a retrieved source's label;
  2. every number it states (money, RVUs, conversion factors, percentages; not years, codes,
     dates, list markers, FR/CFR citations or label contents) is a number of a row or an
     excerpt that the sentence itself cites (compared as Decimal: "$17.10" == 17.1);
  3. a sentence stating an RVU, conversion factor or payment cites a row label (or a computed figure's);
  4. cite or omit: a sentence that states a fact cites a row, figure or source, and shares enough of its
     words with what it cites (chat/support.py); only "no valuation for <unpriced codes>" may go uncited;
  5. a sentence that presents as CMS's position ("CMS finalized / stated / believes ...", without saying they
     are comments) what the excerpts it cites give as commenters' words (chat/speakers.py) is withheld.
Anything else is withheld and replaced by a visible note saying what was removed and why.
The guard reads no instructions from the text it checks: retrieved text is only evidence.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Iterable, Iterator

from carenav_core.chat.events import Source
from carenav_core.chat.evidence import CITATION, Evidence, build_evidence, label_key
from carenav_core.chat.quantities import LIST_MARKER, VALUE_WORDS, masked, quantities
from carenav_core.chat.sentences import sentence_end
from carenav_core.chat.speakers import split_voices
from carenav_core.chat.support import SUPPORT_SHARE, states_fact, support
from carenav_core.pfs.rows import ValuationRow

log = logging.getLogger(__name__)


def cited_keys(sentence: str) -> tuple[str, ...]:
    """label_keys of every bracketed citation; "[A; B]" counts as two."""
    keys = []
    for m in CITATION.finditer(sentence):
        parts = [m.group(1)] + (re.split(r"\s*;\s*", m.group(1)) if ";" in m.group(1) else [])
        keys.extend(label_key(p) for p in parts if p.strip())
    return tuple(keys)


def _citation_reasons(sentence: str, evidence: Evidence) -> tuple[list[str], set[str]]:
    reasons, known = [], set()
    for m in CITATION.finditer(sentence):
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
    dollars: set[Decimal] = set()        # a dollar amount: a row's number, or one an excerpt itself writes in dollars
    for key in cited:
        allowed |= evidence.row_numbers.get(key, frozenset()) | evidence.source_numbers.get(key, frozenset())
        dollars |= evidence.row_numbers.get(key, frozenset()) | evidence.source_money.get(key, frozenset())
    stated = quantities(sentence, evidence.descriptors)
    reasons += [f"states {q.written}, which is not in the evidence it cites" for q in stated
                if q.value not in (dollars if q.money else allowed)]
    claims_value = any(q.money for q in stated) or (
        any(not q.percent for q in stated) and VALUE_WORDS.search(masked(sentence, evidence.descriptors)) is not None)
    if claims_value and not cited & evidence.row_numbers.keys() and not quotes_verbatim(sentence, cited, evidence):
        reasons.append("states an RVU, conversion factor or payment without citing a valuation row label")
    if not reasons and states_fact(sentence):
        reasons += _support_reasons(sentence, cited, evidence)
    if not reasons and _as_cms(sentence, cited, evidence):
        reasons.append("presents commenters' views (CMS's summary of the comments) as CMS's own position")
    return tuple(reasons)


# CMS as the one who decides or holds a view: "CMS finalized", "CMS stated", "the agency believes".
_CMS_CLAIM = re.compile(r"\b(?:CMS|the agency|Medicare)(?:\s+\w+ly)?\s+(?:finaliz\w*|decided|decides|adopted|adopts|"
                        r"stated|states|said|says|agreed|agrees|believes?|believed|concluded|"
                        r"determined|explained|requires?|required|established|is finalizing|has finalized|"
                        r"recommends?|recommended)\b", re.IGNORECASE)
_COMMENT_WORDS = re.compile(r"\b(?:comments?|commenters?|commented|stakeholders?|interested part(?:y|ies))\b",
                            re.IGNORECASE)


def _as_cms(sentence: str, cited: set[str], evidence: Evidence) -> bool:
    """Does the sentence give commenters' words as CMS's (rule 5)? It credits CMS with a position, does not say
    it is a comment, and matches the commenters' sentences of what it cites better than CMS's own."""
    if _CMS_CLAIM.search(sentence) is None or _COMMENT_WORDS.search(sentence) is not None:
        return False
    voices = [split_voices(evidence.speaking[k]) for k in cited if k in evidence.speaking]
    theirs, cms = " ".join(v[0] for v in voices), " ".join(v[1] for v in voices)
    return bool(theirs) and support(sentence, theirs) > support(sentence, cms)


_QUOTE = re.compile(r"“([^“”]+)”")
_TOKEN = re.compile(r"[A-Za-z]+|\d+(?:\.\d+)?")


def _tokens(text: str) -> str:
    """Words and numbers, lower case, one space apart; small integers (footnote marks, list numbers) dropped."""
    return " ".join(t.lower() for t in _TOKEN.findall(text) if not (t.isdigit() and len(t) <= 3))


def quotes_verbatim(sentence: str, cited: set[str], evidence: Evidence) -> bool:
    """A quotation of the rule text, not a claim: every “…” span (at least six words) appears word for word
    in a source the sentence cites, it states no money, and nothing outside the quotation marks states a
    quantity. Rule 3 does not apply to it (the rule's own RVUs and ratios, checked by rule 2, in the rule's
    own words); a dollar amount still needs a valuation row, even quoted."""
    spans = _QUOTE.findall(sentence)
    if not spans or quantities(_QUOTE.sub(" ", sentence), evidence.descriptors) or \
            any(q.money for q in quantities(sentence, evidence.descriptors)):
        return False
    cited_text = " ".join(_tokens(evidence.texts.get(k, "")) for k in cited if k not in evidence.row_numbers)
    return all(len(_tokens(span).split()) >= 6 and f" {_tokens(span)} " in f" {cited_text} " for span in spans)


_CODE = re.compile(r"\b(?:[A-Z]\d{4}|\d{4}[A-Z0-9])\b")


def _support_reasons(sentence: str, cited: set[str], evidence: Evidence) -> list[str]:
    if not cited:
        named = set(_CODE.findall(sentence))
        if named and named <= evidence.unpriced and re.search(r"\b(?:no|not)\b", sentence, re.IGNORECASE):
            return []                       # "no valuation is available for G9999": the table says so
        return ["states a fact without citing a row, computed figure or source"]
    if support(sentence, " ".join(evidence.texts.get(k, "") for k in cited)) < SUPPORT_SHARE:
        return ["is not supported by the evidence it cites"]
    return []


def withheld_note(reasons: tuple[str, ...]) -> str:
    """The visible note that replaces a withheld sentence."""
    return f"(removed: {'; '.join(reasons)}.)"


@dataclass(frozen=True, kw_only=True)
class GuardedSentence:
    """What the guard lets through: the sentence itself, or (released=False) a note replacing it."""
    text: str                       # shown to the user
    released: bool
    original: str                   # the sentence the model wrote
    reasons: tuple[str, ...] = ()


class OutputGuard:
    """Feed streamed chunks; get back checked sentences. Call `flush()` once the stream ends."""

    def __init__(self, evidence: Evidence, fixed: frozenset[str] = frozenset()) -> None:
        self.evidence = evidence
        self.fixed = fixed              # the product's own sentences (the no-model notice), released as written
        self.withheld = 0               # sentences withheld so far
        self.repeated = 0               # sentences dropped as repeats of one already shown
        self._buffer = ""
        self._cited: dict[str, None] = {}
        self._shown: list[frozenset[str]] = []      # content words of each released sentence
        self._noted: set[tuple[str, ...]] = set()   # reason sets already shown in a note

    @classmethod
    def for_answer(cls, rows: Iterable[ValuationRow], sources: Iterable[Source], figures: Iterable = (),
                   unpriced: Iterable[str] = (), fixed: frozenset[str] = frozenset()) -> "OutputGuard":
        """A guard whose evidence is these valuation rows, computed figures and retrieved sources;
        `fixed` sentences (only ever the deterministic writer's own notices) pass as written."""
        return cls(build_evidence(rows, sources, figures, unpriced), fixed)

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
            cut_off = final and not self._buffer and _unfinished(sentence)
            judged = self._judge(sentence, cut_off)
            if judged is not None:
                yield judged

    def _judge(self, sentence: str, cut_off: bool = False) -> GuardedSentence | None:
        """The sentence, released or replaced by a note; None for a repeat of one already shown."""
        if sentence.strip() in self.fixed:
            return GuardedSentence(text=sentence, released=True, original=sentence)
        reasons = (INCOMPLETE,) if cut_off else check_sentence(sentence, self.evidence)
        if not reasons:
            words = _fingerprint(sentence)
            if len(words) > 2 and any(_near(words, seen) for seen in self._shown):
                self.repeated += 1
                log.info("output guard dropped a repeated sentence %r", sentence.strip())
                return None
            self._shown.append(words)
            self._cited.update((k, None) for k in cited_keys(sentence) if k in self.evidence.labels)
            return GuardedSentence(text=sentence, released=True, original=sentence)
        self.withheld += 1
        log.info("output guard withheld %r: %s", sentence.strip(), "; ".join(reasons))
        marker = LIST_MARKER.match(sentence).group(0)      # keep "- " or "2. " so lists stay lists
        trailing = sentence[len(sentence.rstrip()):]
        new = tuple(r for r in dict.fromkeys(reasons) if (r,) not in self._noted)
        self._noted.update((r,) for r in reasons)
        text = marker + withheld_note(new) + trailing if new else ""     # each reason is noted once per answer
        return GuardedSentence(text=text, released=False, original=sentence, reasons=reasons)


INCOMPLETE = "was cut off before it ended (the model stopped mid-sentence)"
_ENDS = (".", "!", "?", ":", ";", ")", "]", "”", '"', "'", "*", "_")


def _unfinished(sentence: str) -> bool:
    """A final fragment with no sentence end ("G0556 is paid per", "The"), as a model cut off by its token cap
    writes."""
    text = sentence.strip()
    return bool(re.search(r"[A-Za-z0-9]", text)) and not text.endswith(_ENDS)


def _fingerprint(sentence: str) -> frozenset[str]:
    """Every word, code and number of a sentence (lower case), for spotting repeats."""
    return frozenset(re.findall(r"[a-z0-9]+(?:[.,][0-9]+)*", sentence.lower()))


# Words that change what a sentence states: "non-facility" vs "facility", "proposed" vs "final", "not".
_QUALIFIERS = frozenset("non facility nonfacility office proposed final not no never more less fewer higher lower "
                        "increase decrease work total".split())


def _near(words: frozenset[str], other: frozenset[str]) -> bool:
    """The same sentence again, or nearly: the same figures, codes and labels (every token with a digit)
    and 9 in 10 words shared. Two sentences stating different figures are never repeats."""
    if {w for w in words if any(c.isdigit() for c in w)} != {w for w in other if any(c.isdigit() for c in w)} \
            or (words ^ other) & _QUALIFIERS:
        return False
    return len(words & other) / max(len(words | other), 1) >= 0.9


def guard_text(text: str, evidence: Evidence, fixed: frozenset[str] = frozenset()) -> list[GuardedSentence]:
    """Check a finished text in one go (same result as streaming it)."""
    guard = OutputGuard(evidence, fixed)
    return guard.feed(text) + guard.flush()
