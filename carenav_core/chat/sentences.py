"""Sentence boundaries in streamed prose: where one sentence ends, so the guard can check it whole."""
from __future__ import annotations

import re

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
