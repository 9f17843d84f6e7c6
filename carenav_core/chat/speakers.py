"""Who speaks in a sentence of the rule text: CMS, or commenters as CMS summarised them.

A Federal Register preamble mixes voices: "Comment: Several commenters stated ... They asked that we ...",
then "Response: We agree ...". Retrieval gives each paragraph a role (carenav_core/retrieval/chunk.py); a
paragraph can still hold both voices (a comment and its response merged, CMS's "We received public comments"
lead-in before a summary, "Commenters stated ..." inside CMS's response). This module decides per sentence,
for the deterministic writer (never quote commenters as CMS, or CMS as commenters) and the output guard
(rule 5: a comment summary is not CMS's position).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterator

from carenav_core.chat.events import COMMENT_ROLE, Source
from carenav_core.chat.sentences import split_sentences

# A sentence that reports commenters: "Comment: ...", "Several commenters stated", "A couple of commenters",
# "The majority of commenters", "Furthermore, several commenters" (up to four words before "commenters").
_COMMENTER = re.compile(r"^\s*(?:\d{1,3}\s+)?(?:Response:\s*)?(?:Comment:|(?P<before>(?:[\w'’-]+,?\s+){0,4}?)(?:commenters?|stakeholders)\b)",
                        re.IGNORECASE)
# "We agree with commenters", "In response to commenters, we ...", "We thank the commenters": CMS speaking of them.
_CMS_BEFORE = re.compile(r"\b(?:we|our|us|cms|response|respond\w*|thank\w*|agree\w*|disagree\w*|appreciate\w*|"
                         r"remind\w*|clarify\w*|understand)\b", re.IGNORECASE)
_COMMENT_INSIDE = re.compile(r"\bComment:\s")
# CMS speaking: "Response: ...", "We ...", "Our ...", or CMS's first person anywhere in a sentence that does not
# report commenters ("Whereas the values we established ...", "Nevertheless, we may consider ...").
_CMS_OPENS = re.compile(r"^\s*(?:\d{1,3}\s+)?(?:Response:|(?:We|CMS|Our)\b)", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:we|our|us)\b", re.IGNORECASE)
_REPORTING = re.compile(r"\b(?:commenters?|comments?|they|their|them|requested|asked|urged|suggested|recommended|"
                        r"encouraged|stated|believed?|argued|noted|expressed|supported|opposed)\b", re.IGNORECASE)
# A sentence that carries on the commenters' point in CMS's own paragraph: "They also ...", "These commenters ...".
_FOLLOW_ON = re.compile(r"^\s*(?:(?:additionally|in addition|further(?:more)?|also|moreover|similarly),?\s+)?"
                        r"(?:they|their|these|those|such|the commenters?|this commenter|others|other commenters)\b",
                        re.IGNORECASE)


def is_commenter(sentence: str) -> bool:
    """Does the sentence report what commenters said (rather than CMS speaking about them)?

    >>> [is_commenter(s) for s in ("A couple of commenters stated that", "We agree with commenters that",
    ...                            "In response to commenters, we clarify", "Several physician commenters said")]
    [True, False, False, True]
    """
    if _COMMENT_INSIDE.search(sentence):
        return True
    m = _COMMENTER.search(sentence)
    return m is not None and not _CMS_BEFORE.search(m.group("before") or "")


def cms_speaks(sentence: str) -> bool:
    """Does CMS speak in its own voice ("Response:", "We ...", "the values we established")?"""
    return bool(_CMS_OPENS.search(sentence)) or (
        bool(_FIRST_PERSON.search(sentence)) and not _REPORTING.search(sentence))


def speakers(source: Source) -> Iterator[tuple[int, str, bool]]:
    """(position, sentence, is it the commenters') of each sentence of an excerpt. A comment summary is the
    commenters' until CMS speaks; in CMS's paragraphs a sentence reporting commenters is theirs, and so are the
    sentences that carry it on ("They also ..."), until CMS speaks or another subject comes."""
    theirs = source.role == COMMENT_ROLE
    summary = theirs
    for position, piece in enumerate(split_sentences(re.sub(r"\s+", " ", source.text).strip())):
        if is_commenter(piece):
            theirs = True
        elif cms_speaks(piece):
            theirs = False
        elif theirs and not summary and not _FOLLOW_ON.search(piece):
            theirs = False
        if re.match(r"^\s*Response:", piece):
            summary = False
        elif _COMMENT_INSIDE.search(piece):
            summary = True          # a summary of comments starts: its sentences are theirs until CMS speaks
        yield position, piece, theirs


@lru_cache(maxsize=256)
def split_voices(source: Source) -> tuple[str, str]:
    """(the commenters' sentences, CMS's sentences) of an excerpt, each joined by spaces (read by the guard's
    rule 5 only for a sentence that credits CMS with a position, so computed then, once per excerpt)."""
    theirs, cms = [], []
    for _, piece, commenters in speakers(source):
        (theirs if commenters else cms).append(piece)
    return " ".join(theirs), " ".join(cms)
