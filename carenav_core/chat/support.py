"""Cite or omit: does a sentence state a fact, and is it supported by what it cites?

A sentence states a fact when, outside its citations, it has at least FACT_WORDS content words or gives a
verdict ("No.", "The answer is yes.", "It is not required."), and is not a heading (ends with ":") or a
question. A factual sentence must cite a row, a computed figure or a
source, and share at least SUPPORT_SHARE of its content words with what it cites (words compared by
their first five letters, so "valued" meets "valuation"). Thresholds measured on a labelled set of
faithful and unsupported sentences: see tests/chat/test_support.py and `carenav eval chat`.
"""
from __future__ import annotations

import re

FACT_WORDS = 4          # fewer content words than this: a transition ("Here is what the rows show.")
SUPPORT_SHARE = 0.5     # share of content words that must appear in the cited evidence
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]{2,}")
_LABEL = re.compile(r"\[[^\[\]\n]*\]")
_STOP = frozenset("""the and for are was were has had have with that this from into onto its it's their there these
those they them then than which what when where who whom whose will would should could can may might must also
such only each other more most less least very much many some any all both either neither not nor but yet
about above after again against before below between during over under until upon within without here
our out own same too just now how why does did doing done being been is be an of to in on at by as or so
per via one two three""".split())


def _stem(word: str) -> str:
    return word.lower()[:5]


_SPECIFIC = re.compile(r"\b(?:\d{4}[0-9A-Z]|(?:19|20)\d{2})\b")     # a CPT code or a year: what a claim is about


def content_words(text: str) -> list[str]:
    """Stemmed content words outside bracketed citations; CPT codes and years count ("The payment for 99213
    changed from 2020 to 2021." makes a claim about them).

    >>> content_words("G0556 pays $15.20 in 2025 for 99490 [PFS CY2025 RVU25D].")
    ['g0556', 'pays', '2025', '99490']
    """
    bare = _LABEL.sub(" ", text)
    found = [(m.start(), _stem(m.group(0))) for m in _TOKEN.finditer(bare) if m.group(0).lower() not in _STOP]
    found += [(m.start(), m.group(0).lower()) for m in _SPECIFIC.finditer(bare)]
    return [w for _, w in sorted(found)]


# A verdict is a fact however short: "No.", "The answer is no.", "It is not required."
_VERDICT = re.compile(r"^\W*(?:yes|no)\b|\banswer is:?\s*\w|\b(?:is|are|be)\s+(?:not\s+)?(?:required|allowed|"
                      r"permitted|billable|payable|covered|eligible)\b", re.IGNORECASE)


def states_fact(sentence: str) -> bool:
    """Is this a factual sentence (not a transition, heading or question)?"""
    bare = _LABEL.sub(" ", sentence).strip().strip("*_ ")
    if not bare or bare.endswith((":", "?")):
        return False
    return len(content_words(bare)) >= FACT_WORDS or _VERDICT.search(bare) is not None


def support(sentence: str, cited_text: str) -> float:
    """Share of the sentence's content words found in the cited evidence's words."""
    words = content_words(sentence)
    if not words:
        return 1.0
    known = set(content_words(cited_text))
    return sum(w in known for w in words) / len(words)
