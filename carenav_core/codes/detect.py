"""Detect HCPCS/CPT codes and code families named in free text. Pure: no database, no model."""
from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

from carenav_core.codes.families import Family, load_families
from carenav_core.codes.procedures import READING_VERB, code_system, named_procedures, spellings

# HCPCS Level II (letter + 4 digits), CPT (5 digits), CPT Category II/III (4 digits + F/T), vaccine
# administration (4 digits + A, e.g. 0073A), PLA and MAAA codes (4 digits + U/M).
# a code, not a piece of a number ("19,090", "33.40091"); codes joined by commas alone ("99213,99214") are codes
# (a plural or possessive "s" is the code's: "30 99213s", "40 99214's")
_CODE = re.compile(r"(?<![\w.$])(?:(?<!,)|(?<=\b[0-9A-Za-z]{5},))([A-Va-v]\d{4}|\d{4}[AaFfMmTtUu]|\d{5})"
                   r"(?:(?:'|\u2019)?s(?!\w))?(?!\w)(?!\.\d)(?!,\d(?!\d{3}[0-9A-Za-z]?\b))")
# Spans that hold numbers but never codes: FR citations ("89 FR 97710"), dollar amounts,
# numbers with thousands separators or decimals, and HCPCS-looking pieces of URLs.
_NOT_CODES = re.compile(
    r"\d+[\s-]*F\.?\s?R\.?[\s-]*\d[\d,]*"     # 89 FR 97710, 89 F.R. 97,710, 89-FR-97710
    r"|\b\d{4}-\d{5}\b"                      # FR document numbers (2024-25382)
    r"|\$\s*\d[\d,]*(?:\.\d+)?"             # $17,100.00, $ 32
    r"|(?<!\d)\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)"   # 19,090 (not "99213,99214": two codes)
    r"|\d+\.\d+"                            # 33.4009
    r"|https?://\S+"
    r"|\b(?:ZIP|zip\s*code|postal\s*code)s?\s*#?:?\s*\d{5}(?:-\d{4})?\b"     # "zip code 10001" is a place
    # A five-digit number followed by a counted noun in the plural is a count, not a CPT code ("20250 beneficiaries",
    # "15000 more patients"); in the singular it names the code ("a 99204 new patient visit", "the 99214 patient
    # coinsurance", "99213 physician fee"), and so after a count ("30 99214 patients"). "claims", "services" and
    # "visits" are left out: "99490 claims" names the code.
    r"|(?<!\d\s)(?<!\d)\b\d{5}(?=\s+(?:more\s+|additional\s+|new\s+|fewer\s+|other\s+)?(?:" + "|".join((
        "beneficiaries", "practices", "patients", "people", "persons", "physicians", "practitioners",
        "clinicians", "providers", "enrollees", "members", "residents", "hospitals", "ACOs",
        "organizations", "comments", "commenters", "respondents", "dollars", "lives", "households",
        "individuals", "participants", "suppliers", "clinics", "counties", "facilities", "users")) + r")\b)",
    re.IGNORECASE)


# "G0556-G0558", "G0556 \u2013 G0558", "G0556 through G0558": a range names the codes between its ends. Filled in
# only for short ranges (at most RANGE_MAX codes) of one shape (same letter, same length) and only with codes the
# family registry knows: "10000-69999" names a class of codes, "20001-20005" may be zip codes, and a number in
# between that no family lists (99488, deleted in 2009) was not asked about. Matched on the question itself, one
# line: a dollar amount or citation between two codes, or a bulleted list, is no range. "to" compares ("99490 to
# 99495").
_BETWEEN = re.compile(r"[ \t]*(?:-|\u2013|\u2014|\bthrough\b|\bthru\b)[ \t]*", re.IGNORECASE)
RANGE_MAX = 10
FAMILY_RANGE_MAX = 100
# "20600 to 20611" is a range too, unless the question compares ("compare 99490 to 99495", "99213 relative to 99214")
_TO = re.compile(r"[ \t]+to[ \t]+", re.IGNORECASE)
_COMPARES = re.compile(r"\bcompar\w*|\bversus\b|\bvs\.?(?!\w)|\brelative\b|\bagainst\b|\bdifferen\w*|\bratio\b|"
                       r"\bswitch\w*|\bchang\w*|\bmov(?:e|ed|ing)\b|\bconvert\w*|\bcrosswalk\w*|\bmore\b|\bless\b|"
                       r"\bhigher\b|\blower\b|\bupgrad\w*|\bdowngrad\w*|\bup-?cod\w*|\bequal\w*|\bsame as\b",
                       re.IGNORECASE)


def _joins(text: str, start: int, end: int) -> bool:
    """The text between two codes makes them the ends of a range ("-", "through", "thru"; "to" when nothing compares)."""
    return bool(_BETWEEN.fullmatch(text, start, end)) or \
        (bool(_TO.fullmatch(text, start, end)) and not _COMPARES.search(text))


def range_candidates(text: str) -> dict[str, str]:
    """Each code strictly inside a short range the text writes ("98000-98007"), with the range's first code, whether or
    not a family lists it; the caller keeps those the fee schedule knows (detect() fills only registered members).

    >>> sorted(range_candidates("What do 98000-98003 pay?").items())
    [('98001', '98000'), ('98002', '98000')]
    """
    cleaned = _NOT_CODES.sub(lambda m: " " * len(m.group(0)), text)
    found = list(_CODE.finditer(cleaned))
    inside = {}
    for first, last in zip(found, found[1:]):
        if _joins(text, first.end(), last.start()):
            start, end = first.group(1).upper(), last.group(1).upper()
            inside.update((c, start) for c in _range(start, end, FAMILY_RANGE_MAX) if c not in (start, end))
    return inside


def _range(first: str, last: str, limit: int = RANGE_MAX) -> list[str]:
    """The codes strictly between `first` and `last` when they bound a short range (under `limit`) of one shape."""
    def shape(code: str) -> tuple[str, int, str] | None:
        m = re.fullmatch(r"([A-V]?)(\d{4,5})([A-Z]?)", code)
        return (m.group(1), int(m.group(2)), m.group(3)) if m else None
    a, b = shape(first), shape(last)
    if not a or not b or (a[0], a[2], len(first)) != (b[0], b[2], len(last)) or not 0 < b[1] - a[1] < limit:
        return []
    width = len(first) - len(a[0]) - len(a[2])
    return [f"{a[0]}{n:0{width}d}{a[2]}" for n in range(a[1] + 1, b[1])]


@dataclass(frozen=True, kw_only=True)
class Detection:
    """What a text names: `codes` (explicit codes plus members of named families, sorted, unique),
    `families` (family keys), `explicit` (codes written out in the text, and those a written range names),
    `filled` (each code a range names between its ends, with the range's first code; the text may also
    write it elsewhere)."""
    codes: tuple[str, ...]
    families: tuple[str, ...]
    explicit: tuple[str, ...]
    filled: tuple[tuple[str, str], ...] = ()


@lru_cache(maxsize=4)
def _family_index(families: tuple[Family, ...]) -> tuple[re.Pattern[str], dict[str, tuple[str, ...]], dict[str, str]]:
    """The pattern of every family name (longest first, so "chronic care management" is read before "care
    management"), each name's families (a shared name such as "care management" has several), each code's family."""
    by_synonym: dict[str, tuple[str, ...]] = {}
    for family in families:
        for synonym in family.synonyms:
            by_synonym[_normal(synonym)] = (family.key,)
    synonyms = set(by_synonym)
    for family in families:
        for shared in family.shared_names:
            if _normal(shared) in synonyms:
                raise ValueError(f"family {family.key}: shared name {shared!r} is also a family's synonym")
            by_synonym[_normal(shared)] = (*by_synonym.get(_normal(shared), ()), family.key)
    alternatives = sorted(by_synonym, key=len, reverse=True)
    acronyms = {_normal(s) for family in families for s in family.synonyms if s.isupper() and s.endswith("S")}
    # an acronym ending in S keeps its S upper case: "CTS" (caregiver training services) is not "CTs" (CT scans)
    parts = [re.escape(s[:-1]) + "(?-i:S)" if s in acronyms else
             r"[\s\-]+".join(re.escape(w) for w in re.split(r"[\s\-]+", s)) for s in alternatives]
    # a plural or possessive is the family too ("40 AWVs a week", "CCM's time rules")
    pattern = re.compile(r"(?<![\w])(" + "|".join(parts) + r")(?:'?s|’s)?(?![\w])", re.IGNORECASE)
    by_code = {code: family.key for family in families for code in family.codes}
    return pattern, by_synonym, by_code


def _normal(text: str) -> str:
    return " ".join(re.split(r"[\s\-]+", text.lower()))


def detect(text: str, families: tuple[Family, ...] | None = None) -> Detection:
    """Codes and families named in `text`.

    >>> detect("How is G0556 valued vs 99490?").explicit
    ('99490', 'G0556')
    >>> detect("See 89 FR 97710; it pays $17,100.").codes
    ()
    >>> detect("How are G0556-G0558 valued?").explicit
    ('G0556', 'G0557', 'G0558')
    """
    families = load_families() if families is None else families
    pattern, by_synonym, by_code = _family_index(families)
    cleaned = _NOT_CODES.sub(lambda m: " " * len(m.group(0)), text)
    found = list(_CODE.finditer(cleaned))
    explicit = {m.group(1).upper() for m in found}
    filled = {}
    for first, last in zip(found, found[1:]):
        if _joins(text, first.end(), last.start()):
            start = first.group(1).upper()
            end = last.group(1).upper()
            # both ends in one family ("99202-99215", the office visits): the family's codes between them, however
            # far apart the numbers (only registered members are ever filled in)
            limit = FAMILY_RANGE_MAX if by_code.get(start) and by_code.get(start) == by_code.get(end) else RANGE_MAX
            filled.update((c, start) for c in _range(start, end, limit) if c in by_code and c not in (start, end))
    explicit |= set(filled)
    named = {key for m in pattern.finditer(text) for key in by_synonym[_normal(m.group(1))]}
    named |= {by_code[c] for c in explicit if c in by_code}
    members = {c for f in families if f.key in named for c in f.codes}
    return Detection(codes=tuple(sorted(explicit | members)), families=tuple(sorted(named)),
                     explicit=tuple(sorted(explicit)), filled=tuple(sorted(filled.items())))


# A HCPCS Level II code of the letters analysts write most (G, J, Q) written with a separator: "G-2211", "G 2211",
# "J-9035" ("Part B 2024" and "Table B-2024" are no codes, nor "Appendix G-2024" or "Q 2026": four digits that read
# as a year are left alone). Not after a word character, and not before one.
# a code written against its system's name ("cpt99213", "HCPCSG0556")
_GLUED_CODE = re.compile(r"\b(CPT|HCPCS)((?:[A-Va-v]\d{4}|\d{4}[AaFfMmTtUu]|\d{5}))(?!\w)", re.IGNORECASE)
_SPLIT_CODE = re.compile(r"(?<![\w.$,-])([GJQgjq])[- ](?!20[0-3]\d)(\d{4})(?![\w]|[.,]\d)")
# A family name misspelt by a letter or two ("chronic care managment", "principle care management"): the question's
# words, as many as the synonym has, each this similar to the synonym's word and with the same first letter
# ("compare" is not "complex", "traditional" is not "transitional"); only synonyms this long (short ones such as "CCM"
# are too close to other words), and never over words that already name a family.
SPELLING_SIMILARITY = 0.88
SPELLING_MIN_LENGTH = 12


def _near(written: str, meant: str) -> bool:
    words, target = written.lower().split(), meant.split()
    return len(words) == len(target) and words != target and all(
        w[0] == t[0] and SequenceMatcher(None, w, t).ratio() >= SPELLING_SIMILARITY for w, t in zip(words, target))


@lru_cache(maxsize=4)
def _long_synonyms(families: tuple[Family, ...]) -> tuple[str, ...]:
    """The family synonyms long enough to read a misspelling as, normalised, longest first."""
    return tuple(sorted({_normal(syn) for f in families for syn in f.synonyms if len(syn) >= SPELLING_MIN_LENGTH},
                        key=len, reverse=True))


def family_spans(text: str, families: tuple[Family, ...] | None = None) -> list[tuple[int, int]]:
    """Where `text` names a code family ("chronic care management", "APCM"), as (start, end) spans."""
    pattern, _, _ = _family_index(load_families() if families is None else families)
    return [(m.start(), m.end()) for m in pattern.finditer(text)]


def spelled_out(text: str, families: tuple[Family, ...] | None = None) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The text with codes written with a separator joined ("G-2211" -> "G2211") and family names misspelt by a
    letter or two replaced by the family's synonym, and the (written, read as) pairs replaced.

    >>> spelled_out("What does G-2211 pay?")
    ('What does G2211 pay?', (('G-2211', 'G2211'),))
    >>> spelled_out("Compare chronic care managment and principle care management")[0]
    'Compare chronic care management and principal care management'
    >>> spelled_out("how much is cpt99213 for 2026")
    ('how much is cpt 99213 for 2026', (('cpt99213', 'CPT 99213'),))
    >>> spelled_out("What does Part B 2024 cover? See Appendix G-2024.")
    ('What does Part B 2024 cover? See Appendix G-2024.', ())
    """
    families = load_families() if families is None else families
    read: list[tuple[str, str]] = []

    def join(m: re.Match) -> str:
        code = f"{m.group(1).upper()}{m.group(2)}"
        read.append((m.group(0), code))
        return code
    text = _SPLIT_CODE.sub(join, text)

    def unglue(m: re.Match) -> str:         # "cpt99213" -> "cpt 99213"
        read.append((m.group(0), f"{m.group(1).upper()} {m.group(2).upper()}"))
        return f"{m.group(1)} {m.group(2).upper()}"
    text = _GLUED_CODE.sub(unglue, text)
    pattern, _, _ = _family_index(families)
    # a shared name ("care management") does not keep a misspelt longer name over it ("principle care management")
    shared = {_normal(name) for f in families for name in f.shared_names}
    named = [(m.start(), m.end()) for m in pattern.finditer(text) if _normal(m.group(1)) not in shared]
    text, respelt = _respelt(text, _long_synonyms(families), named, _near)
    read += respelt
    taken = [(m.start(), m.end()) for m in pattern.finditer(text)]
    # procedure names misspelt by a letter or two ("colonscopy", "cataract surgury", "mamogram"): the words as a whole
    # at least PROCEDURE_SIMILARITY similar; never over words that already name a procedure or a family
    # ("cholecystostomy" is not "cholecystectomy": 0.87)
    text, respelt = _respelt(text, spellings(), taken + [(a, b) for a, b, _ in named_procedures(text, taken)],
                             _near_procedure)
    read += respelt
    return _procedures_read(text, [(m.start(), m.end()) for m in pattern.finditer(text)], read)


def _respelt(text: str, names: tuple[str, ...], taken: list[tuple[int, int]], near) -> tuple[str, list[tuple[str, str]]]:
    """`text` with each run of words `near(words, name)` reads as one of `names` (normalised, tried longest first)
    replaced by the name, never over `taken` spans or an earlier replacement, and the (written, read as) pairs. Only
    runs whose words have the name's first letters are compared (both readings require them)."""
    words = list(re.finditer(r"[A-Za-z][A-Za-z'-]*", text))
    initials = "".join(w.group(0)[0].lower() for w in words)
    fixes: list[tuple[int, int, str]] = []
    for name in names:
        parts = name.split()
        head = "".join(p[0] for p in parts)
        for i in range(len(words) - len(parts) + 1):
            if initials[i:i + len(parts)] != head:
                continue
            start, end = words[i].start(), words[i + len(parts) - 1].end()
            if any(start < b and a < end for a, b in taken + [(a, b) for a, b, _ in fixes]) or \
                    not near(text[start:end], name):
                continue
            fixes.append((start, end, name))
    read = [(text[start:end], name) for start, end, name in sorted(fixes)]
    for start, end, name in sorted(fixes, reverse=True):       # from the end: earlier offsets stay valid
        text = text[:start] + name + text[end:]
    return text, read


def _near_procedure(written: str, name: str) -> bool:
    """A misspelt procedure name: the words as a whole at least PROCEDURE_SIMILARITY similar to the name, not the name
    itself, and not a person's or a device's word ("echocardiographer", "spirometer") beside a procedure's."""
    written = written.lower()
    if written == name or (_AGENT.search(written) and not _AGENT.search(name)):
        return False
    matcher = SequenceMatcher(None, written, name)
    return matcher.real_quick_ratio() >= PROCEDURE_SIMILARITY and matcher.ratio() >= PROCEDURE_SIMILARITY


# An amount computed with other services or a count ("colonoscopy and EGD on the same day", "75 colonoscopies a
# month", "cataract surgery on both eyes") prices one code: a procedure whose words cover several is read as its first
_COMBINED = re.compile(r"\bsame\s+(?:day|date|session|visit|encounter|sitting)\b|\btogether\b|\bboth\b|\bbilateral\w*|"
                       r"\btotal\b|\bcombined\b|\bplus\b|\+|\bunits?\b|\bsession\b|\beach\b|\bper\b|\ba\s+(?:day|week|"
                       r"month|year)\b", re.IGNORECASE)
_COUNT_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_COUNTED = re.compile(r"(?<![\w.$,])(\d{1,3}(?:,\d{3})+|\d{1,6}|" + "|".join(_COUNT_WORDS) + r")\s+(?:more\s+|additional\s+)?$",
                      re.IGNORECASE)
# a written code with a count: "2 units of 77080", "3 x 99439", "99439 x3", "10 99213s"
_CODE_COUNTED = re.compile(r"\b(?:\d{1,3}|" + "|".join(_COUNT_WORDS) + r")\s+(?:units?|times|x|×|\*)\s+(?:of\s+)?"
                           r"(?:CPT\s+|HCPCS\s+|code\s+)?[A-Z0-9]\d{3}[A-Z0-9]\b|\b[A-Z0-9]\d{3}[A-Z0-9]\s*(?:x|×|\*)\s*\d"
                           r"|\b\d{1,3}\s+[A-Z0-9]\d{3}[A-Z0-9]'?s\b", re.IGNORECASE)
_UNITS_OF = re.compile(r"\b(?:\d{1,2}|" + "|".join(_COUNT_WORDS) + r")\s+units?\s+of\s+$", re.IGNORECASE)


def _procedures_read(text: str, taken: list[tuple[int, int]], read: list[tuple[str, str]]
                     ) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A procedure named in words ("a total knee replacement") is read as its codes, written after the words so that
    everything downstream sees a question naming them (not where the question already writes all of them): "total
    knee replacement (CPT 27447)"; counted, as that many of its code ("20 knee MRIs" -> "20 73721s (knee MRIs)",
    "2 units of therapeutic exercise" -> "2 units of 97110 (therapeutic exercise)"). Words covering several codes are
    read as the first alone when an amount is computed with other services or a count (`_COMBINED`)."""
    written = {m.group(1).upper() for m in _CODE.finditer(_NOT_CODES.sub(lambda m: " " * len(m.group(0)), text))}
    found = []
    for start, end, procedure in named_procedures(text, taken):
        if not set(procedure.codes) <= written:     # once each ("EKGs and ECGs")
            found.append((start, end, procedure))
            written |= set(procedure.codes)
    combined = bool(_COMBINED.search(text)) or len(found) + len(written - {c for *_, p in found for c in p.codes}) > 1
    # two procedures or more each counted ("5 mammograms and 2 DEXA scans"): each count is its code's units
    # and a counted procedure beside a counted code ("2 units of 77080 and 3 chest x-rays") is that code's units too
    counts = [_COUNTED.search(text[:start]) for start, _, _ in found]
    # and so does one count among several services ("3 chest x-rays and a brain MRI": 3 of the x-ray, one MRI)
    services = len(found) + len(written - {c for *_, p in found for c in p.codes})
    per_code = sum(1 for c in counts if c is not None) + len(_CODE_COUNTED.findall(text)) > 1 or \
        (services > 1 and any(c is not None for c in counts))
    said = []
    for start, end, procedure in reversed(found):   # from the end: earlier offsets stay valid
        words = text[start:end]
        counted, units = _COUNTED.search(text[:start]), _UNITS_OF.search(text[:start])
        first = len(procedure.codes) > 1 and (combined or counted is not None or units is not None)
        codes = procedure.codes[:1] if first else procedure.codes
        system = code_system(codes[0])
        if units is not None:
            text = f"{text[:start]}{codes[0]} ({words}){text[end:]}"
        elif counted is not None:
            n = counted.group(1)
            n = str(_COUNT_WORDS.get(n.lower(), n))
            text = f"{text[:counted.start()]}{codes[0]} x {n} ({words}){text[end:]}" if per_code and len(n) <= 2 \
                else f"{text[:counted.start()]}{n} {codes[0]}s ({words}){text[end:]}"
        elif (reading := _READING_OF.search(text[:start])) is not None and "interpretation" in procedure.name.lower():
            # "for reading an EKG" -> "for an EKG interpretation (CPT 93010)": the reading is the procedure itself
            text = f"{text[:reading.start()]}{reading.group(1) or 'the'} {words} interpretation " \
                   f"({system} {', '.join(codes)}){text[end:]}"
        else:
            text = f"{text[:end]} ({system} {', '.join(codes)}){text[end:]}"
        # "knee" of "knee vs hip replacement" is said with the procedure it was read as
        said.append((words, procedure.read_as(first_only=first) if len(words.split()) > 1 or any(
            words.lower().startswith(s.lower()) for s in procedure.synonyms)
            else f"{procedure.name[0].lower() + procedure.name[1:]}, {procedure.read_as(first_only=first)}"))
    return text, (*read, *reversed(said))          # in the order the question names them


_READING_OF = re.compile(r"\b" + READING_VERB + r"\s+(?:(an?|the|their|this|these|those|all|each|\d+|two|three|four|"
                         r"five|six|ten)\s+)?$", re.IGNORECASE)
PROCEDURE_SIMILARITY = 0.9
_AGENT = re.compile(r"(?:er|ers|ist|ists|or|ors)$")
