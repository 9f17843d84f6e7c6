"""The national Physician Fee Schedule conversion factors of data/pfs_rules.toml as rows: one per rule, variant
and period, each compared with the previous calendar year's final conversion factor (computed here)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING

import duckdb

from carenav_core.params import TAG_MEANINGS
from carenav_core.pfs.rules import RuleBook, load_rules

if TYPE_CHECKING:
    from carenav_core.pfs.locality import Locality

_VARIANTS = {"QP": "qualifying APM participants (QP)",
             "non-QP": "clinicians who are not qualifying APM participants (non-QP)"}


@dataclass(frozen=True, kw_only=True)
class FactorRow:
    """One national conversion factor of one rule (a final rule's CY, or a proposed rule), one variant and period."""
    cy: int
    proposed: bool
    rule_id: str
    fr_citation: str
    fr_url: str
    variant: str                   # "" (the single CF), "QP" or "non-QP"
    amount: Decimal
    effective: date
    until: date
    note: str
    tag: str                       # O official, S secondary, U unverified (params.TAG_MEANINGS)
    reference: str                 # where the amount was read
    several: bool = False          # the rule has more than one period of one variant (CY2024)
    prior: Decimal | None = None   # the previous CY's final CF this one is compared with
    prior_label: str = ""
    in_focus: bool = False

    @property
    def name(self) -> str:
        """'CY2026 non-QP', 'CY2027 proposed', 'CY2024 Mar 9-Dec 31'."""
        parts = [f"CY{self.cy}"] + ["proposed"] * self.proposed + [self.variant] * bool(self.variant)
        if self.several and not self.variant:
            parts.append(f"{self.effective:%b %-d}-{self.until:%b %-d}")
        return " ".join(parts)

    @property
    def label(self) -> str:
        return f"[CF {self.name}]"

    @property
    def change(self) -> Decimal | None:
        return None if self.prior is None else self.amount - self.prior

    @property
    def percent(self) -> Decimal | None:
        if self.prior is None:
            return None
        return ((self.amount - self.prior) / self.prior * 100).quantize(Decimal("0.01"))

    @property
    def confirmed(self) -> str:
        """How the amount was confirmed, in a word: 'official', 'secondary', 'unverified', 'derived'."""
        return TAG_MEANINGS.get(self.tag, self.tag).split(":")[0]

    @property
    def rule(self) -> str:
        return f"CY {self.cy} {'proposed' if self.proposed else 'final'} rule ({self.rule_id}, {self.fr_citation})"

    @property
    def who(self) -> str:
        """Whom the amount applies to, in words ('' for the single CF)."""
        return _VARIANTS.get(self.variant, self.variant)

    def numbers(self) -> tuple[Decimal, ...]:
        """What a sentence citing the row may state: its own amount and year (the change from the year before has
        its own label, `change_label`, so the previous amount is never accepted as this row's)."""
        return (self.amount, Decimal(self.cy))

    def words(self) -> str:
        """What the row says, in words a sentence citing it may use (the guard's support test)."""
        return (f"CY{self.cy} {self.cy} national Medicare physician fee schedule PFS conversion factor CF "
                f"{'proposed rule proposes' if self.proposed else 'final rule sets'} {self.rule_id} {self.variant} "
                f"{self.who} {self.note} {self.effective:%B %-d %Y} {self.until:%B %-d %Y} confirmed "
                f"{TAG_MEANINGS.get(self.tag, '')}"
                + (" not read from a CMS file or rule text, check before relying on it: secondary source unverified"
                   if self.tag != "O" else ""))

    def text(self) -> str:
        """The row as an excerpt: every number a sentence citing it may state."""
        who = f" for {self.who}" if self.variant else ""
        note = f" ({self.note})" if self.note else ""
        verb, effect = ("proposes", "to be in effect") if self.proposed else ("sets", "in effect")
        return (f"The {self.rule} {verb} a national PFS conversion factor of ${self.amount}{who}, {effect} "
                f"{self.effective:%B %-d, %Y} to {self.until:%B %-d, %Y}{note}. How the amount was confirmed: "
                f"{TAG_MEANINGS.get(self.tag, self.tag)}.")

    @property
    def change_label(self) -> str:
        return f"[CF {self.name} change]"

    def change_numbers(self) -> tuple[Decimal, ...]:
        """The change from the previous CY's final CF: both amounts, the difference and the percent."""
        if self.prior is None or self.change is None or self.percent is None:
            return ()
        return (self.prior, self.amount, self.change, abs(self.change), self.percent, abs(self.percent),
                Decimal(self.cy), Decimal(self.cy - 1))

    def change_words(self) -> str:
        return (f"CY{self.cy} {self.cy} {self.name} {self.variant} {self.who} national PFS conversion factor CF change "
                f"changed from previous year {self.prior_label} up down rose fell unchanged increase decrease percent")

    def change_text(self) -> str:
        return (f"The {self.name.replace('CY', 'CY ', 1)} conversion factor of ${self.amount} is {self.change:+.4f} "
                f"({self.percent:+.2f}%) from the {self.prior_label} conversion factor of ${self.prior}.")


def factor_rows(book: RuleBook | None = None) -> tuple[FactorRow, ...]:
    """Every conversion factor on file, final rules by CY then proposed rules, each compared with the previous
    CY's final CF of the same variant (else its single CF; of a split year, the last period)."""
    book = book or load_rules()

    def last_final(cy: int, variant: str):
        rule = book.final.get(cy)
        if rule is None:
            return None
        same = [c for c in rule.cfs if c.variant == variant] or [c for c in rule.cfs if not c.variant] \
            or list(rule.cfs[:1])
        entry = max(same, key=lambda c: c.effective)
        name = f"CY {cy}" + (f" {entry.variant}" if entry.variant else "") + \
            (f" ({entry.effective:%B %-d}-{entry.until:%B %-d})" if sum(not c.variant for c in rule.cfs) > 1 else "")
        return entry.amount, name

    rows = []
    for rule in [*sorted(book.final.values(), key=lambda r: r.cy), *sorted(book.proposed.values(),
                                                                         key=lambda r: (r.cy, r.published))]:
        for entry in rule.cfs:
            before = last_final(rule.cy - 1, entry.variant)
            rows.append(FactorRow(cy=rule.cy, proposed=rule.proposed, rule_id=rule.rule_id,
                                  fr_citation=rule.fr_citation, fr_url=rule.fr_url, variant=entry.variant,
                                  amount=entry.amount, effective=entry.effective, until=entry.until,
                                  note=entry.note, tag=entry.tag, reference=entry.href,
                                  several=sum(c.variant == entry.variant for c in rule.cfs) > 1,
                                  prior=before[0] if before else None, prior_label=before[1] if before else ""))
    return tuple(rows)


RVU_FILES_URL = "https://www.cms.gov/medicare/payment/fee-schedules/physician/pfs-relative-value-files"


@dataclass(frozen=True, kw_only=True)
class LocalityFact:
    """A payment locality of one CY's GPCI file (pfs.locality.Locality) and whether the question names it."""
    place: Locality
    asked: bool = False   # a place the question names

    @property
    def cy(self) -> int:
        return self.place.cy

    @property
    def key(self) -> str:
        """"01112:05" (MAC:locality)."""
        return self.place.key

    @property
    def state(self) -> str:
        return self.place.state

    @property
    def name(self) -> str:
        return self.place.name


@dataclass(frozen=True, kw_only=True)
class AnesthesiaRow(LocalityFact):
    """One payment locality's anesthesia conversion factor (CMS ANES file) for one CY."""
    file_cy: int          # the CY of the ANES file it was read from (CY2026 has none loaded: the CY2025 file)
    amount: Decimal
    national: Decimal | None = None     # the national anesthesia CF that file's header states, if it states one
    period: str = ""      # a year whose ANES amounts changed mid-year: the days these apply to ("Jan 1-Mar 8")
    other_period: str = ""   # and the days of the year's other amounts, which are not these

    @property
    def label(self) -> str:
        return f"[ANES CY{self.file_cy}{' ' + self.period if self.period else ''}]"


def national_anesthesia_cf(con, cy: int) -> Decimal | None:
    """The national anesthesia CF the CY's ANES file states in its header (the CMS CY2025 file: "National Anes CF of
    20.3178"), newest release first; None when the file states none or the build predates the table."""
    try:
        row = con.execute("SELECT anes_cf FROM anes_national WHERE cy = ? ORDER BY release_id DESC LIMIT 1",
                          [cy]).fetchone()
    except duckdb.Error:
        return None
    return Decimal(row[0]).normalize() if row else None


_ANES_RELEASES = """SELECT DISTINCT a.release_id, r.effective FROM anes a JOIN releases r USING (release_id)
WHERE a.cy = ? ORDER BY r.effective"""
_ANES_OF = "SELECT mac, locality, anes_cf FROM anes WHERE release_id = ?"


def _periods(con, cy: int) -> list[tuple[str, date, date, dict[str, Decimal]]]:
    """The CY's ANES releases whose amounts differ from the one before: (release, first day, last day, MAC:LOC ->
    CF), in date order (CY2024: RVU24A from January 1 and RVU24AR's from March 9)."""
    periods = []
    for release, effective in con.execute(_ANES_RELEASES, [cy]).fetchall():
        amounts = {f"{m.strip()}:{loc.strip()}": Decimal(v).quantize(Decimal("0.01")) for m, loc, v in
                   con.execute(_ANES_OF, [release]).fetchall()}
        if not periods or amounts != periods[-1][3]:
            periods.append((release, effective, date(cy, 12, 31), amounts))
    return [(r, first, (periods[i + 1][1] - timedelta(days=1)) if i + 1 < len(periods) else last, a)
            for i, (r, first, last, a) in enumerate(periods)]


def _days(first: date, last: date) -> str:
    return f"{first:%b} {first.day}-{last:%b} {last.day}"


def anesthesia_rows(con, cy: int, on: date | None = None) -> tuple[AnesthesiaRow, ...]:
    """Every locality of CY `cy` (its GPCI file) with its anesthesia CF, cheapest first; () when none is loaded. A
    year whose ANES amounts changed mid-year (CY2024 on March 9) gives the amounts in force `on` that day (default:
    the year's last), labelled with their days."""
    from carenav_core.pfs.locality import directory
    book = directory(con)
    found = [(place, book.anes.get((cy, place.key))) for place in book.localities(cy)]
    files = {anes[1] for _, anes in found if anes is not None}
    national = national_anesthesia_cf(con, max(files)) if files else None
    try:
        periods = _periods(con, cy) if cy in files else []
    except duckdb.Error:
        periods = []
    if len(periods) > 1:
        chosen = next((p for p in periods if on is not None and p[1] <= on <= p[2]), periods[-1])
        others = [p for p in periods if p is not chosen]
        found = [(place, (chosen[3][place.key], cy)) if place.key in chosen[3] else (place, None)
                 for place, _ in found]
        return tuple(sorted((AnesthesiaRow(place=place, file_cy=anes[1], amount=anes[0], national=national,
                                           period=_days(chosen[1], chosen[2]),
                                           other_period=", ".join(_days(p[1], p[2]) for p in others))
                             for place, anes in found if anes is not None),
                            key=lambda r: (r.amount, r.state, r.key)))
    return tuple(sorted((AnesthesiaRow(place=place, file_cy=anes[1], amount=anes[0], national=national)
                         for place, anes in found if anes is not None),
                        key=lambda r: (r.amount, r.state, r.key)))


@dataclass(frozen=True, kw_only=True)
class GpciRow(LocalityFact):
    """One payment locality's geographic practice cost indices (CMS GPCI file, Addendum E) for one CY; `earlier`: the
    same locality in an earlier year asked ("How did Seattle's GPCIs change from 2025 to 2026?")."""
    earlier: Locality | None = None

    @property
    def earlier_label(self) -> str:
        return f"[{self.earlier.tag}]" if self.earlier is not None else ""

    def changes(self) -> tuple[Decimal, Decimal, Decimal]:
        """Work, PE and MP GPCI less the earlier year's (zeros without one)."""
        if self.earlier is None:
            return Decimal(0), Decimal(0), Decimal(0)
        return (self.work - self.earlier.gpci_work, self.pe - self.earlier.gpci_pe, self.mp - self.earlier.gpci_mp)

    @property
    def label(self) -> str:
        """'[GPCI2026 WA 02]', the locality part of a locality row's label (Locality.tag)."""
        return f"[{self.place.tag}]"

    @property
    def work(self) -> Decimal:
        return self.place.gpci_work

    @property
    def pe(self) -> Decimal:
        return self.place.gpci_pe

    @property
    def mp(self) -> Decimal:
        return self.place.gpci_mp


def gpci_rows(con, cy: int, since: int | None = None, keys: set[str] | frozenset[str] = frozenset()
              ) -> tuple[GpciRow, ...]:
    """Every locality of CY `cy`'s GPCI file, by state and locality; () when the CY has none. With `since` (an earlier
    CY), each locality of `keys` carries its CY `since` indices, when that year's file lists it under the same key."""
    from carenav_core.pfs.locality import directory
    book = directory(con)
    before = {place.key: place for place in book.localities(since)} if since is not None and since != cy else {}
    return tuple(GpciRow(place=place, earlier=before.get(place.key) if place.key in keys else None)
                 for place in book.localities(cy))
