"""Rankings over a whole year's fee schedule: "Which code has the highest work RVU in 2026?", "What are the top 10
highest-paying codes?". No code is named, so code decides which codes answer: the year's RVU file (the newest release
of that CY in DuckDB), active codes (status A) on their base rows, ordered by the measure asked. The ranked codes are
then valued and answered like codes the question named, and the answer says they came from a ranking of the file."""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Sequence

import duckdb

from carenav_core.chat.events import WarningEvent, WarningKind
from carenav_core.chat.plan import COUNT_WORDS, QuestionPlan, Setting
from carenav_core.codes.detect import Detection
from carenav_core.errors import NotBuiltError
from carenav_core.pfs.rows import STATUS_MEANINGS, ValuationRow

log = logging.getLogger(__name__)

_NOUN = r"(?:codes?|services?|procedures?|HCPCS(?: codes?)?|CPT(?: codes?)?|surger(?:y|ies))"
_MOST = r"(?:highest|most|largest|biggest|greatest|top|best[- ]paid|most expensive)"
_LEAST = r"(?:lowest|least|smallest|cheapest|least expensive)"
# "which code has the highest work RVU", "what procedures pay the most", "the top 10 codes by payment",
# "the highest-paying codes in 2026", "the 5 lowest-valued services"
_ASKS = re.compile(
    rf"\b(?:which|what)\s+(?:\w+\s+){{0,2}}?{_NOUN}\b.{{0,80}}?\b(?P<dir1>{_MOST}|{_LEAST})\b"
    rf"|\btop\s+(?P<n1>\d{{1,2}}|{'|'.join(COUNT_WORDS)})?\s*(?:\w+[- ]?){{0,3}}?{_NOUN}\b"
    rf"|\b(?:the\s+)?(?P<n2>\d{{1,2}}|{'|'.join(COUNT_WORDS)})?\s*(?P<dir2>highest|best|lowest|most|least)[- ]"
    rf"(?:paying|paid|valued|expensive|priced)\s+{_NOUN}\b",
    re.IGNORECASE)
MOST_SHOWN, ONE_SHOWN = 25, 5          # a count asked is capped; "which code" shows the first and four after it


@dataclass(frozen=True, kw_only=True)
class ScheduleRanking:
    cy: int
    measure: str             # "work RVU", "non-facility payment", ...
    top: bool
    codes: tuple[str, ...]   # in rank order
    fields: tuple[str, ...]  # per code, the ValuationRow field that ranked it ("payment_nonfac", "work_rvu", ...)
    of: int                  # how many active codes the ranking ran over

    def detection(self) -> Detection:
        """The ranked codes as a detection (not written out in the question: answered like a family's members)."""
        return Detection(codes=tuple(sorted(self.codes)), families=(), explicit=())

    def note(self) -> WarningEvent:
        first = "highest" if self.top else "lowest"
        return WarningEvent(kind=WarningKind.READ_AS, message=(
            f"No code was named: the codes shown are the {len(self.codes)} with the {first} {self.measure} of the "
            f"{self.of:,} active (status A) codes in the CY{self.cy} RVU file (base rows, no modifiers), ranked by code "
            f"from the file; {'the first is ' + self.codes[0] if self.codes else 'none'}."))


    def sentence(self, rows: Sequence[ValuationRow]) -> str:
        """'Of the active codes in the CY2026 RVU file, ranked by work RVU, highest first: 39503 106.19, 43116
        90.67, ... [PFS CY2026 RVU26C].' — each value read from the code's row shown in the table ('' when a row is
        missing: the table is then the answer)."""
        said, labels = [], []
        for code, field in zip(self.codes, self.fields):
            row = next((r for r in rows if r.hcpcs == code and r.cy == self.cy and not r.mod and not r.locality
                        and not r.proposed), None)
            value = getattr(row, field, None) if row is not None else None
            if value is None:
                return ""
            where = {"payment_nonfac": " (non-facility)", "payment_fac": " (facility)",
                     "pe_nonfac_rvu": " (non-facility)", "pe_fac_rvu": " (facility)",
                     "total_nonfac": " (non-facility)", "total_fac": " (facility)"}.get(field, "") \
                if "whichever" in self.measure else ""
            said.append(f"{code} {'$' + format(value, ',') if field.startswith('payment') else value}{where}")
            labels.append(row.label)
        measure = self.measure.split(" (")[0]
        return (f"Of the active codes in the CY{self.cy} RVU file, ranked by {measure}, "
                f"{'highest' if self.top else 'lowest'} first: {', '.join(said)} {' '.join(dict.fromkeys(labels))}.")


def asks_schedule_ranking(text: str) -> re.Match[str] | None:
    """The question asks to rank the whole fee schedule (no code or family named).

    >>> bool(asks_schedule_ranking("Which code has the highest work RVU in 2026?"))
    True
    >>> bool(asks_schedule_ranking("What are the top 10 highest-paying codes?"))
    True
    >>> bool(asks_schedule_ranking("What does 99213 pay?")), bool(asks_schedule_ranking("Which codes are telehealth?"))
    (False, False)
    """
    return _ASKS.search(text)


_MEASURES = {"work_rvu": ("work RVU", "work_rvu"), "pe_rvu": ("practice expense RVU", None),
             "mp_rvu": ("malpractice RVU", "mp_rvu"), "total_rvu": ("total RVUs", None)}


def _expression(plan: QuestionPlan, top: bool) -> tuple[str, str, str]:
    """(what is ranked, SQL expression over current_rvu, SQL expression naming the row field it is read from): a
    payment is ranked by its total RVUs (one CF per year); a setting whose PE the file marks NA is not paid there."""
    name, column = _MEASURES.get(plan.measure, ("payment", None))
    if column:
        return name, column, f"'{column}'"
    nonfac, fac = ("pe_nonfac_rvu", "pe_fac_rvu") if plan.measure == "pe_rvu" else ("total_nonfac", "total_fac")
    named = ("payment_nonfac", "payment_fac") if plan.measure == "payment" else (nonfac, fac)
    parts = (f"CASE WHEN nonfac_na = '' THEN {nonfac} END", f"CASE WHEN fac_na = '' THEN {fac} END")
    if plan.setting is Setting.NON_FACILITY:
        return f"non-facility {name}", parts[0], f"'{named[0]}'"
    if plan.setting is Setting.FACILITY:
        return f"facility {name}", parts[1], f"'{named[1]}'"
    pick, word = ("greatest", "higher") if top else ("least", "lower")
    compare = ">=" if top else "<="
    which = (f"CASE WHEN {parts[1]} IS NULL OR ({parts[0]} IS NOT NULL AND {parts[0]} {compare} {parts[1]}) "
             f"THEN '{named[0]}' ELSE '{named[1]}' END")
    return f"{name} (non-facility or facility, whichever is {word})", f"{pick}({parts[0]}, {parts[1]})", which


def rank_schedule(fee_db: duckdb.DuckDBPyConnection | None, text: str, plan: QuestionPlan
                  ) -> ScheduleRanking | None:
    """The codes a whole-schedule ranking question asks for, or None (not such a question, or no database)."""
    m = asks_schedule_ranking(text)
    if m is None or fee_db is None:
        return None
    count = m.group("n1") or m.group("n2")
    top = not re.match(_LEAST, (m.group("dir1") or m.group("dir2") or "top"), re.IGNORECASE)
    if count:
        shown = min(int(COUNT_WORDS.get(count.lower(), count)), MOST_SHOWN)
    else:
        plural = re.search(rf"\b{_NOUN}\b", m.group(0), re.IGNORECASE)
        shown = 10 if plural and plural.group(0).lower().endswith(("s", "ies")) else ONE_SHOWN
    what, expression, which = _expression(plan, top)
    try:
        newest = fee_db.execute("SELECT max(cy) FROM current_rvu").fetchone()[0]
        cy = max((y for y in plan.years if y <= newest), default=newest) if plan.years else newest
        of = fee_db.execute("SELECT count(*) FROM current_rvu WHERE cy = ? AND mod = '' AND status = 'A'",
                            [cy]).fetchone()[0]
        found = fee_db.execute(
            f"SELECT hcpcs, field FROM (SELECT hcpcs, {expression} AS v, {which} AS field FROM current_rvu "
            f"WHERE cy = ? AND mod = '' AND status = 'A') WHERE v IS NOT NULL AND v > 0 "
            f"ORDER BY v {'DESC' if top else 'ASC'}, hcpcs LIMIT ?", [cy, shown]).fetchall()
    except (NotBuiltError, duckdb.Error) as exc:
        log.warning("no whole-schedule ranking: %s", exc)
        return None
    return ScheduleRanking(cy=cy, measure=what, top=top, codes=tuple(c for c, _ in found),
                           fields=tuple(f for _, f in found), of=of)


# "What does status R mean?", "what is status code I", "give an example of a status B code"
_STATUS = re.compile(r"\bstatus(?:\s+(?:indicator|code))?\s+(?:of\s+)?[\"'“]?(?P<s>(?-i:[A-Z]))\b(?![-/])", re.IGNORECASE)
EXAMPLES = 5


@dataclass(frozen=True, kw_only=True)
class StatusExamples:
    """A status code asked about with no code named: what the RVU file's record layout says it means, and the first
    codes that carry it in the newest (or asked) year's file, valued as examples."""
    cy: int
    status: str
    codes: tuple[str, ...]
    of: int                  # how many base rows of that year carry the status

    def detection(self) -> Detection:
        return Detection(codes=tuple(sorted(self.codes)), families=(), explicit=())

    def note(self) -> WarningEvent:
        return WarningEvent(kind=WarningKind.READ_AS, message=(
            f"No code was named: the codes shown are examples, the first {len(self.codes)} (by code) of the "
            f"{self.of:,} base rows with status {self.status} in the CY{self.cy} RVU file."))

    def sentence(self, rows: Sequence[ValuationRow]) -> str:
        """'In the CY2026 RVU file, status R means restricted coverage; codes with it include 11055, ... [label].'"""
        shown = [r for r in rows if r.hcpcs in self.codes and r.cy == self.cy and not r.mod and not r.proposed
                 and not r.locality and r.status == self.status]
        if not shown:
            return ""
        meaning = STATUS_MEANINGS[self.status]
        meaning = meaning[:1].lower() + meaning[1:]
        labels = " ".join(dict.fromkeys(r.label for r in shown))
        return (f"In the CY{self.cy} RVU file, status {self.status} means {meaning} (the RVU file record layout); "
                f"codes with it include {', '.join(r.hcpcs for r in shown)} {labels}.")


def status_examples(fee_db: duckdb.DuckDBPyConnection | None, text: str, plan: QuestionPlan) -> StatusExamples | None:
    """The status a question asks about with no code named, with example codes of the year; None otherwise.

    >>> _STATUS.search("What does status indicator R mean?").group("s")
    'R'
    >>> _STATUS.search("What is the status of a deleted code?") is None
    True
    """
    m = _STATUS.search(text)
    status = m.group("s").upper() if m else ""
    if status not in STATUS_MEANINGS or fee_db is None:
        return None
    try:
        newest = fee_db.execute("SELECT max(cy) FROM current_rvu").fetchone()[0]
        cy = max((y for y in plan.years if y <= newest), default=newest) if plan.years else newest
        of = fee_db.execute("SELECT count(*) FROM current_rvu WHERE cy = ? AND mod = '' AND status = ?",
                            [cy, status]).fetchone()[0]
        found = fee_db.execute("SELECT hcpcs FROM current_rvu WHERE cy = ? AND mod = '' AND status = ? ORDER BY hcpcs "
                               "LIMIT ?", [cy, status, EXAMPLES]).fetchall()
    except (NotBuiltError, duckdb.Error) as exc:
        log.warning("no status examples: %s", exc)
        return None
    return StatusExamples(cy=cy, status=status, codes=tuple(c for (c,) in found), of=of)


# "How many codes were cut in 2026?", "What share of codes had lower payment in 2026 than in 2025?", "how many
# services went up": a count over the whole fee schedule, no code named
_MOVED = (r"cut|decreas\w*|go(?:ne)? down|went down|fell|fall|dropp?\w*|lower|less|reduc\w*|los[te]|increas\w*|"
          r"go(?:ne)? up|went up|rose|rise|risen|higher|more|gain\w*|rais\w*")
_CHANGE_COUNT = re.compile(
    rf"\b(?:how many|number of|count of|(?:what|which)\s+(?:share|percent(?:age)?|proportion|fraction|portion|%)\s+of)"
    rf"\s+(?:the\s+)?(?:\w+\s+){{0,2}}?{_NOUN}\b.{{0,80}}?\b(?:{_MOVED})\b", re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class ChangeCounts:
    before: int
    after: int
    both: int                                 # active base codes in both years' files
    nonfac: tuple[int, int, int]              # down, up, unchanged
    fac: tuple[int, int, int]

    def note(self) -> WarningEvent:
        def part(setting: str, counts: tuple[int, int, int]) -> str:
            down, up, same = counts
            return (f"in the {setting} setting {down:,} pay less ({down / self.both:.1%}), {up:,} more "
                    f"({up / self.both:.1%}) and {same:,} the same")
        return WarningEvent(kind=WarningKind.COMPUTED, message=(
            f"No code was named: counted over the whole fee schedule. Of the {self.both:,} active (status A) codes on "
            f"base rows in both the CY{self.before} and the CY{self.after} RVU files, each year's national payment "
            f"(total RVUs × that file's conversion factor, to the cent): {part('non-facility', self.nonfac)}; "
            f"{part('facility', self.fac)}."))


def _over_two_years(fee_db: duckdb.DuckDBPyConnection, plan: QuestionPlan, what: str, query):
    """(earlier, later, query(earlier, later)) for a whole-file count over two final years: the two asked (first and
    last), one asked against the year before, or the newest loaded against the one before; None when one of them is
    not loaded or the file cannot be read (logged as `what`)."""
    try:
        years = {y for (y,) in fee_db.execute("SELECT DISTINCT cy FROM current_rvu").fetchall()}
        asked = sorted(y for y in plan.years if y in years)
        after = asked[-1] if asked else max(years)
        before = asked[0] if len(asked) > 1 else after - 1
        return None if before not in years or before >= after else (before, after, query(before, after))
    except (NotBuiltError, duckdb.Error) as exc:
        log.warning("no %s: %s", what, exc)
        return None


def change_counts(fee_db: duckdb.DuckDBPyConnection | None, text: str, plan: QuestionPlan) -> ChangeCounts | None:
    """How many codes' payments went down (or up) from one year's file to another's, when the question asks with no
    code named; None otherwise. Years: the two asked (first and last), one asked against the year before, or the
    newest final year against the one before.

    >>> bool(_CHANGE_COUNT.search("How many codes were cut in 2026 compared with 2025?"))
    True
    >>> bool(_CHANGE_COUNT.search("What share of codes had lower payment in 2026 than in 2025?"))
    True
    """
    m = _CHANGE_COUNT.search(text)
    if m is None or fee_db is None:
        return None
    found = _over_two_years(fee_db, plan, "change counts", lambda before, after: fee_db.execute(
        "WITH y AS (SELECT cy, hcpcs, round(total_nonfac * file_cf, 2) AS nf, round(total_fac * file_cf, 2) AS f "
        "FROM current_rvu WHERE mod = '' AND status = 'A' AND cy IN (?, ?)), "
        "a AS (SELECT * FROM y WHERE cy = ?), b AS (SELECT * FROM y WHERE cy = ?) "
        "SELECT count(*), count(*) FILTER (WHERE b.nf < a.nf), count(*) FILTER (WHERE b.nf > a.nf), "
        "count(*) FILTER (WHERE b.nf = a.nf), count(*) FILTER (WHERE b.f < a.f), "
        "count(*) FILTER (WHERE b.f > a.f), count(*) FILTER (WHERE b.f = a.f) FROM a JOIN b USING (hcpcs)",
        [before, after, before, after]).fetchone())
    if found is None or not found[2][0]:
        return None
    before, after, counted = found
    return ChangeCounts(before=before, after=after, both=counted[0], nonfac=tuple(counted[1:4]),
                        fac=tuple(counted[4:7]))


_NEW_CODES = re.compile(r"\b(?:which|what|how\s+many|list)\b.{0,40}\bcodes?\b.{0,40}\b(?:new|added|introduced|created)\b"
                        r"|\bnew\s+(?:HCPCS\s+|CPT\s+|billing\s+)?codes\b", re.IGNORECASE)


# "New Orleans", "New Jersey": "New" before a capitalised word is a place's name, not a question about new codes
_PLACE_NEW = re.compile(r"\bNew(?=\s+[A-Z][a-z])")


def without_place_names_new(text: str) -> str:
    """The text with the "New" of place names ("New Orleans", "New York") put out of the way of the new-code checks.

    >>> without_place_names_new("What does 99213 pay in New Orleans? New codes too")
    'What does 99213 pay in _ Orleans? New codes too'
    """
    return _PLACE_NEW.sub("_", text)


def asks_new_codes(text: str) -> bool:
    """"Which codes are new in 2026?", "How many of the codes new in 2026 have status A?" (not "in New York").

    >>> asks_new_codes("How many of the codes new in 2026 have status A?"), asks_new_codes("codes paid in New York")
    (True, False)
    """
    return _NEW_CODES.search(without_place_names_new(text)) is not None


def new_code_note(fee_db: duckdb.DuckDBPyConnection | None, text: str, plan: QuestionPlan) -> str | None:
    """"Which codes are new in 2026?" with no code or family named: the codes (no modifier) of the year's final file
    that the year before's does not hold, counted over the whole file, with the status-A ones (paid under the fee
    schedule) listed up to 25; None when not asked or the years are not loaded."""
    if fee_db is None or not asks_new_codes(text):
        return None
    result = _over_two_years(fee_db, plan, "new codes", lambda before, after: fee_db.execute(
        "SELECT hcpcs, status, description FROM current_rvu WHERE cy = ? AND mod = '' AND hcpcs NOT IN "
        "(SELECT hcpcs FROM current_rvu WHERE cy = ? AND mod = '') ORDER BY hcpcs", [after, before]).fetchall())
    if result is None:
        return None
    before, after, found = result
    paid = [(code, words) for code, status, words in found if status == "A"]
    shown = "; ".join(f"{code} ({words})" for code, words in paid[:25])
    return (f"In the CMS CY{after} RVU file, {len(found):,} codes (without a modifier) are not in the CY{before} "
            f"file: new in CY{after}; {len(paid):,} of them have status A (paid under the fee schedule)"
            + (f": {shown}" + (f" and {len(paid) - 25:,} more" if len(paid) > 25 else "") if paid else "")
            + " (computed from the loaded CMS RVU files; ask about a code to see its values).")
