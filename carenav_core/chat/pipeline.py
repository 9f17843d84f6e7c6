"""One question, top to bottom: detect → value → retrieve (+ code-cited) → prompt → writer → guard.

Decisions are deterministic (codes, rows, payments, which sentences a user sees); only the prose is
generated. Events come out in order: valuation (only when codes were detected, before any token), conversion
factors and locality tables (only when the question asks about them), token*, sources, done; warning events
wherever something was degraded.

Every collaborator arrives in one `Backends` value (fee-schedule reader, store, model client) built at
the edge; nothing here reaches for a process-wide cache.
"""
from __future__ import annotations

import copy
import dataclasses
import logging
import re
import time
import unicodedata
from datetime import date
from typing import Iterator, Sequence

import duckdb

from carenav_core.backends import Backends, data_version
from carenav_core.chat.events import (ChatEvent, DoneEvent, FactorEvent, ProgressEvent, Source, SourcesEvent,
                                      TokenEvent, ValuationEvent, WarningEvent, WarningKind, provenance_for)
from carenav_core.chat.evidence import cited_and_also_retrieved
from carenav_core.chat.factors import (ANESTHESIA_NATIONAL_NOTE, ANESTHESIA_NOTE, NO_ANESTHESIA, anesthesia_summary,
                                       asked_places, asks_anesthesia, asks_anesthesia_unit, asks_conversion_factor,
                                       asks_gaf, asks_gpci, asks_locality_count, factor_sources, gpci_summary,
                                       GAF_NOTE, in_focus, other_payer, other_system)
from carenav_core.chat.factors import missing_years_note as factor_years_note
from carenav_core.chat.figures import (NO_COST_SHARING, POLYP_NOTE, SECOND_PROCEDURE, FigureKind, assistant_figures, bilateral_figures,
                                      co_surgery_figures, compute_figures, locality_extremes, multiple_figures,
                                      nonpar_figures, periop_figures, practitioner_figures, second_procedure_figures,
                                      timeless_codes, year_cf_is_proposed)
from carenav_core.chat.indicators import indicator_facts, meaning_sources
from carenav_core.chat.plan import (ASKS_DECISION, ASKS_RULE, PAY_WORDS, THERAPY_ASSISTANT_FROM, WHY, Intent,
                                    QuestionPlan, asked_indicators, asked_pos, listed, narrowed_by_descriptor,
                                    plan_question)
from carenav_core.chat.guard import GuardedSentence, OutputGuard
from carenav_core.chat.prepared import Prepared
from carenav_core.chat.glossary import glossary_sources, term_source
from carenav_core.chat.schedule_rank import (asks_new_codes, change_counts, new_code_note, rank_schedule,
                                            status_examples, without_place_names_new)
from carenav_core.chat.budget import Budget
from carenav_core.chat.prompt import fit_prompt
from carenav_core.chat.deterministic import (DEFINITION_KIND, FIXED_SENTENCES, NOT_RULE_TEXT, DeterministicWriter,
                                            data_notes)
from carenav_core.chat.writers import ModelWriter, Writer
from carenav_core.codes import Detection, detect
from carenav_core.codes.detect import family_spans, range_candidates, spelled_out
from carenav_core.codes.families import load_families
from carenav_core.codes.procedures import named_procedures, unread_procedures
from carenav_core.errors import ModelError, NotBuiltError
from carenav_core.pfs.factors import AnesthesiaRow, FactorRow, GpciRow, anesthesia_rows, factor_rows, gpci_rows
from carenav_core.pfs.locality import LocalityError, directory, locality_rows
from carenav_core.pfs.indicators import indicator_values
from carenav_core.pfs.places import find_places_in, priced_places
from carenav_core.pfs.rows import UNPAID_STATUS, ConversionFactor, ValuationRow, modifier_rows
from carenav_core.pfs.valuation import first_final_years, newest_final_cy, value
from carenav_core.retrieval.progress import index_progress, progress_note
from carenav_core.retrieval.search import Hit, SearchResult, code_cited, merge, retrieve, section_decisions

log = logging.getLogger(__name__)
MAX_QUESTION = 2000          # characters used for detection, retrieval and the prompt
RETRIEVE_K = 6
CITED_PER_CODE = 2
NO_DETECTION = Detection(codes=(), families=(), explicit=())


def clean_question(question: str) -> tuple[str, tuple[WarningEvent, ...]]:
    """Control characters out, length capped (with a warning); other scripts kept as they are."""
    text = "".join(ch if unicodedata.category(ch)[0] != "C" or ch in "\n\t" else " " for ch in question).strip()
    if len(text) <= MAX_QUESTION:
        return text, ()
    return text[:MAX_QUESTION], (WarningEvent(kind=WarningKind.TRUNCATED, message=f"The question was {len(text):,} "
                                              f"characters; only the first {MAX_QUESTION:,} were used."),)


def source_of(hit: Hit) -> Source:
    return Source(label=hit.label, title=hit.title, kind=hit.kind, published=hit.published, text=hit.text,
                  url=hit.url, codes=hit.codes, role=hit.role, heading=hit.heading)


def years_to_show(plan: QuestionPlan, settings_years: int, today: date) -> int:
    """How many recent final CYs to value: the configured number, or back to the earliest year asked."""
    earliest = plan.earliest_year
    if earliest is None and Intent.TREND in plan.intents:   # "Has it ever changed?": every year there is
        return 20
    return min(20, max(settings_years, today.year - earliest + 1)) if earliest else settings_years


def mark_focus(rows: Sequence[ValuationRow], plan: QuestionPlan) -> tuple[ValuationRow, ...]:
    """Flag rows of named codes (`named`) and, of those, rows in the years asked (`in_focus`). A named code
    with no row in the asked years keeps its newest final row (and proposed row) in focus, or its first final row
    when every asked year is before it ("99490 in 2019": CY2020, the nearest). With an asked
    modifier ("71046-26") a code's rows of that modifier are the ones in focus (its global rows when it has none);
    without one, rows without a modifier."""
    named = set(plan.focus_codes)
    asked = modifier_rows(rows, plan.modifier)
    if plan.components:         # both components asked: their rows beside the global rows
        asked += [r for r in rows if r.mod in ("26", "TC")]
    chosen = {id(r) for r in asked}
    rows = asked + [r for r in rows if id(r) not in chosen]          # the asked modifier's rows first
    newest: dict[str, int] = {}
    earliest: dict[str, int] = {}
    for row in rows:
        if not row.proposed:
            newest[row.hcpcs] = max(newest.get(row.hcpcs, 0), row.cy)
            earliest[row.hcpcs] = min(earliest.get(row.hcpcs, row.cy), row.cy)
    flags = [(r.hcpcs in named, r.hcpcs in named and id(r) in chosen and
              plan.year_in_focus(r.cy, r.proposed, newest.get(r.hcpcs, 0))) for r in rows]
    missing = {r.hcpcs for r, (is_named, _) in zip(rows, flags) if is_named} - \
        {r.hcpcs for r, (_, focus) in zip(rows, flags) if focus}
    # every asked year before the code's first year on file ("99490 in 2019"): the nearest, its first year; a family
    # member created later than the asked years while other members have them ("RPM codes in 2025": 99445 is new in
    # CY2026) is a new code, not an answer for those years: none of its rows is in focus (the note says so)
    before = {c for c in missing if plan.years and max(plan.years) < earliest.get(c, 0)}
    later = {c for c in before if c not in plan.named_codes and named - missing}
    before -= later
    return tuple(_flagged(r, is_named, (id(r) in chosen and not r.proposed and r.cy == earliest.get(r.hcpcs))
                          if r.hcpcs in before else False if r.hcpcs in later else
                          (id(r) in chosen and (r.proposed or r.cy == newest.get(r.hcpcs)))
                          if r.hcpcs in missing else focus)
                 for r, (is_named, focus) in zip(rows, flags))


# What a modifier the PFS file has no rows for does to the amount (CMS Claims Processing Manual, ch. 12): said with
# the code's own amounts when a question writes it ("99214-25")
MODIFIER_MEANINGS = {
    "25": "it marks a significant, separately identifiable E/M service on the day of another service and does not "
          "change the E/M amount",
    **dict.fromkeys(("95", "93", "GT", "FQ", "FR"), "it marks a service furnished by telehealth; which of the code's "
                    "amounts applies follows the place of service reported, not the modifier"),
    **dict.fromkeys(("59", "XE", "XS", "XP", "XU"), "it marks a distinct procedural service (so claim edits do not "
                    "bundle it) and does not change the amount"),
    "50": "bilateral: the code's bilateral surgery indicator decides what is paid (ask for the indicator)",
    "51": "multiple procedures: the code's multiple-procedure indicator decides the reduction",
    **dict.fromkeys(("80", "81", "82", "AS"), "assistant at surgery: the code's assistant-at-surgery indicator decides "
                    "whether, and how much, is paid"),
    "GC": "it marks a teaching physician's service with a resident and does not change the amount",
    **dict.fromkeys(("54", "55", "56"), "split care: the code's pre-, intra- and post-operative shares decide what is "
                    "paid"),
    **dict.fromkeys(("Q5", "Q6"), "it marks a substitute physician's service and does not change the amount"),
}


# The payment policy indicator (data/indicators.toml) that decides what a modifier does
_INDICATOR_OF = {"50": "bilat_surg", "51": "mult_proc", **dict.fromkeys(("80", "81", "82", "AS"), "asst_surg"),
                 **dict.fromkeys(("54", "55", "56"), "periop")}


def other_modifier_note(rows: Sequence[ValuationRow], plan: QuestionPlan) -> tuple[WarningEvent, ...]:
    """A modifier written that the file prices no rows for ("99214-25", "modifier 95") is said, with what it does."""
    if not plan.other_modifiers or not rows:
        return ()
    codes = listed([c for c in plan.focus_codes if any(r.hcpcs == c for r in rows)] or list(plan.focus_codes))
    notes = [f"Modifier {mod} has no rows of its own in the fee schedule file, so the amounts shown are {codes}'s "
             f"own; {MODIFIER_MEANINGS.get(mod, 'any adjustment it carries is applied on the claim, not in the file')}"
             for mod in plan.other_modifiers if _INDICATOR_OF.get(mod) not in plan.indicators]
    if not notes:           # the indicator the modifier turns on is asked, and the answer states it
        return ()
    return (WarningEvent(kind=WarningKind.MODIFIER_NOT_FOUND, message=". ".join(notes) + "."),)


_SIGNED = re.compile(r"(?:^|[\s(:])(?:-|\u2212|minus\s+|negative\s+)(\d[\d,]*(?:\.\d+)?)\s*(%|percent\b|"
                     r"[A-Za-z]+)", re.IGNORECASE)
_COUNTED = re.compile(r"visits?|patients?|services?|claims?|units?|encounters?|sessions?|times|procedures?",
                      re.IGNORECASE)


def _negative_note(text: str, plan: QuestionPlan) -> tuple[WarningEvent, ...]:
    """A count or percent written with a minus ("-20 visits a month", "cut by -5%") is said, not priced: a negative
    count bills nothing, and a cut by a negative percent could mean either way."""
    notes = []
    for m in _SIGNED.finditer(text):
        number, unit = m.group(1), m.group(2)
        if _COUNTED.fullmatch(unit):
            notes.append(f"A count of −{number} {unit} is not a number of services billed, so no volume is priced; "
                         "ask with the count billed")
        elif unit.lower() in ("%", "percent") and plan.cf_change is None and re.search(
                r"\bconversion factor|\bCF\b", text, re.IGNORECASE):
            notes.append(f"A conversion factor change of −{number}% could be read either way, so none is priced; "
                         f"ask for a cut or a raise of {number}%")
    return tuple(WarningEvent(kind=WarningKind.NOT_IN_DATA, message=n + ".") for n in dict.fromkeys(notes))


def _is_qp(label: str) -> bool:
    return label.endswith(" QP")


def at_asked_cf(rows: Sequence[ValuationRow], plan: QuestionPlan) -> tuple[tuple[ValuationRow, ...], tuple]:
    """Rows whose year has another conversion factor the question asks for, priced at it: days of service inside one
    CF's period ("January 2024": CY2024 Jan 1-Mar 8), or a qualifying APM participant's CF ("as a QP"). The year's
    main CF and its amounts move to the row's other CFs, so every figure (changes, volumes, what-ifs) computes with the
    asked CF. Days that span two CFs ("the first quarter of 2024") keep the main CF and are said, with both."""
    out, straddled = [], {}
    for row in rows:
        others = row.other_payments()
        if row.proposed or row.cf is None or not others:
            out.append(row)
            continue
        spans = [s for s in plan.periods if s[0].year == row.cy]
        asked = next((p for p in others if (plan.qp and _is_qp(p[0].label)) or
                      any(p[0].covers(*span) for span in spans)), None)
        if asked is None:
            if spans and not any(p[0].covers(*s) for p in others for s in spans):
                straddled.setdefault(row.cy, (spans[0], row, others))
            out.append(row)
            continue
        main = ConversionFactor(value=row.cf, label=row.cf_label, reference="")
        rest = tuple(p for p in others if p is not asked) + ((main, row.payment_nonfac, row.payment_fac),)
        out.append(dataclasses.replace(
            row, cf=asked[0].value, cf_label=asked[0].label, payment_nonfac=asked[1], payment_fac=asked[2],
            other_cfs=tuple(c for c in row.other_cfs if c is not asked[0]) + (main,),
            local_others=rest if row.locality else ()))
    notes = []
    for cy, ((first, last), row, others) in sorted(straddled.items()):
        if first == date(cy, 1, 1) and last == date(cy, 12, 31):
            continue                # the whole year: the year's figures as usual
        parts = "; ".join(f"at the {c.label} CF of ${c.value}" for c, _, _ in others if not _is_qp(c.label))
        notes.append(f"The days asked ({first:%b} {first.day}-{last:%b} {last.day}, {cy}) fall under two "
                     f"conversion factors: the figures use the {row.cf_label} CF of ${row.cf}, and each row also gives "
                     f"its amounts {parts}")
    return tuple(out), tuple(WarningEvent(kind=WarningKind.NOT_IN_DATA, message=n + ".") for n in notes)


def timeless_note(rows: Sequence[ValuationRow], plan: QuestionPlan) -> tuple[WarningEvent, ...]:
    """A rate per hour or minute asked of codes whose time the data do not give: said, with how to ask for it."""
    codes = timeless_codes(rows, plan)
    if not codes:
        return ()
    descriptors = {r.hcpcs: r.description.strip() for r in rows if r.hcpcs in codes}
    each = "; ".join(f"{c}: “{descriptors[c]}”" for c in codes)
    return (WarningEvent(kind=WarningKind.NOT_IN_DATA, message=(
        f"No rate per {plan.rate} is computed for {listed(list(codes))}: the fee schedule file's short descriptor "
        f"gives no single number of minutes ({each}); name the minutes in the question (\"{codes[0]} at 30 minutes, "
        f"per {plan.rate}\").")),)


def missing_modifier_note(rows: Sequence[ValuationRow], plan: QuestionPlan) -> tuple[WarningEvent, ...]:
    """An asked code with no row of the asked modifier ("93000-26": the file prices 93000 only whole) says so."""
    if plan.components:         # "the professional and technical components of 93000": the file prices it whole
        lacking = [code for code in plan.focus_codes if any(r.hcpcs == code for r in rows) and
                   not any(r.hcpcs == code and r.mod in ("26", "TC") for r in rows)]
        return (WarningEvent(kind=WarningKind.MODIFIER_NOT_FOUND, message=f"The fee schedule has no professional (26) "
                             f"or technical (TC) component rows for {listed(lacking)}: "
                             f"{'its' if len(lacking) == 1 else 'their'} global rows are shown."),) if lacking else ()
    if not plan.modifier:
        return ()
    lacking = [code for code in plan.focus_codes if any(r.hcpcs == code for r in rows) and
               not any(r.hcpcs == code and r.mod == plan.modifier for r in rows)]
    if not lacking:
        return ()
    return (WarningEvent(kind=WarningKind.MODIFIER_NOT_FOUND, message=f"The fee schedule has no modifier "
                         f"{plan.modifier} row for {listed(lacking)}: {'its' if len(lacking) == 1 else 'their'} "
                         "rows without a modifier are shown."),)


def missing_years_note(rows: Sequence[ValuationRow], plan: QuestionPlan, newest_loaded: int = 0
                       ) -> tuple[WarningEvent, ...]:
    """An asked year an asked code has no row for ("What does G0556 pay in 2019?") is said, with the years the
    data hold for it, so the newest row shown instead is not read as the asked year's; likewise a proposed rule
    asked with no proposed-rule row loaded. A code missing from the newest final release loaded (`newest_loaded`)
    when no year is asked ("What does G2012 pay now?") is said to be gone from the files since its newest year, so
    that year's values are not read as current. Codes in the same case (a family's members) share one sentence."""
    cases: dict[str, list[str]] = {}
    for code in plan.focus_codes:
        held = sorted({r.cy for r in rows if r.hcpcs == code})
        if not held:
            continue                # no row at all: the unpriced sentence says so
        finals = sorted({r.cy for r in rows if r.hcpcs == code and not r.proposed})
        gone = [y for y in range(finals[-1] + 1, newest_loaded + 1)] if finals else []
        if gone and not plan.years and plan.since is None and not plan.proposed:
            years = " or ".join(f"CY{y}" for y in gone)
            case = (f"{{codes}} {{are}} not in the {years} fee schedule file{'s' if len(gone) > 1 else ''} (deleted "
                    f"or replaced after CY{finals[-1]}): the CY{finals[-1]} values shown are {{their}} last, not "
                    "current ones")
            cases.setdefault(case, []).append(code)
            continue
        missing = [y for y in plan.years if y not in held]
        years = " or ".join(f"CY{y}" for y in missing)
        first = min((r.cy for r in rows if r.hcpcs == code and not r.proposed), default=held[0])
        instead = "" if len(missing) < len(plan.years) else \
            f", so the nearest year's values (CY{first}) are shown instead" if all(y < first for y in missing) else \
            ", so the newest values are shown instead"
        others = any(r.cy in plan.years for r in rows if r.hcpcs in plan.focus_codes and r.hcpcs != code)
        if missing and code not in plan.named_codes and others and len(missing) == len(plan.years) and \
                all(y < first for y in missing):      # a family member created after the asked years
            case = f"{{codes}} {{are}} new in the fee schedule from CY{first}, so {{they}} {{have}} no {years} values"
        elif missing and all(y > held[-1] for y in missing) and all(y <= newest_loaded for y in missing):
            # the asked years' files are loaded and do not list the code: it was deleted or replaced
            case = (f"{{codes}} {{are}} not in the {years} fee schedule file{'s' if len(missing) > 1 else ''} "
                    f"(deleted or replaced after CY{held[-1]}; the newest values are CY{held[-1]}){instead}")
        elif missing and all(y > held[-1] for y in missing):          # a year after the newest release
            case = f"No {years} fee schedule values for {{codes}} (the newest are CY{held[-1]}){instead}"
        elif missing:               # rows were fetched back to the earliest asked year: what is held is all there is
            span = f"CY{held[0]}" if len(held) == 1 else f"CY{held[0]} to CY{held[-1]}"
            case = f"No {years} fee schedule values for {{codes}} (the data hold {{them}} for {span}){instead}"
        elif plan.since is not None and held[0] > plan.since:
            case = f"{{codes}} {{have}} fee schedule values only from CY{held[0]} (asked: since CY{plan.since})"
        elif plan.proposed and not any(r.hcpcs == code and r.proposed and (not plan.years or r.cy in plan.years)
                                       for r in rows):     # "the CY 2025 proposed rule": no proposed-rule row loaded
            years = " or ".join(f"CY{y}" for y in plan.years)
            case = f"No {years + ' ' if years else ''}proposed-rule values for {{codes}} in the fee schedule data, so " \
                   f"the final values are shown"
        else:
            continue
        cases.setdefault(case, []).append(code)
    if not cases:
        return ()
    notes = [case.format(codes=listed(codes), them="it" if len(codes) == 1 else "them",
                         their="its" if len(codes) == 1 else "their",
                         have="has" if len(codes) == 1 else "have", are="is" if len(codes) == 1 else "are",
                         they="it" if len(codes) == 1 else "they")
             for case, codes in cases.items()]
    return (WarningEvent(kind=WarningKind.YEAR_NOT_FOUND, message="; ".join(notes) + "."),)


def _newest_final(backends: Backends) -> int:
    """The newest final CY the fee-schedule database holds (0 without one)."""
    if backends.fee_db is None:
        return 0
    try:
        return newest_final_cy(backends.fee_db)
    except duckdb.Error as exc:
        log.warning("newest release lookup failed: %s", exc)
        return 0


def _flagged(row: ValuationRow, named: bool, in_focus: bool) -> ValuationRow:
    """The row with its question flags (a shallow copy: dataclasses.replace re-runs __init__ over 35 fields,
    which a 50-row family table would feel)."""
    if row.named == named and row.in_focus == in_focus:
        return row
    flagged = copy.copy(row)
    object.__setattr__(flagged, "named", named)
    object.__setattr__(flagged, "in_focus", in_focus)
    return flagged


def _by_locality(backends: Backends, text: str, plan: QuestionPlan, today: date, rows_of, what: str) -> tuple:
    """One row per payment locality (`rows_of(con, cy)`: anesthesia CFs, GPCIs) of the latest asked year that has a
    GPCI file (else the newest up to today), the places the question names marked; () without a database."""
    if backends.fee_db is None:
        return ()
    try:
        years = sorted(directory(backends.fee_db).gpci)
        cy = max((y for y in plan.years if y in years),
                 default=max((y for y in years if y <= today.year), default=max(years, default=0)))
        rows = rows_of(backends.fee_db, cy)
        keys = {p.key for p in find_places_in(backends.fee_db, text, cy).localities} if rows else set()
        # "How did Seattle's GPCIs change from 2025 to 2026?": the places asked carry the earliest asked year's too
        since = min((y for y in (*plan.years, *((plan.since,) if plan.since else ())) if y in years and y < cy),
                    default=None)
        if since is not None and keys and rows_of is gpci_rows:
            rows = gpci_rows(backends.fee_db, cy, since, keys)
    except duckdb.Error as exc:
        log.warning("%s lookup failed: %s", what, exc)
        return ()
    return asked_places(rows, keys)


def _factor_evidence(backends: Backends, text: str, plan: QuestionPlan, detection: Detection, today: date
                     ) -> tuple[tuple[FactorRow, ...], tuple[AnesthesiaRow, ...], tuple[GpciRow, ...],
                                tuple[WarningEvent, ...]]:
    """The fee-schedule facts a question asks about beyond its codes' rows: the national conversion factors ("the CY
    2026 CF"), the anesthesia CFs by locality, the GPCIs by locality ("the GPCI for Seattle"); a conversion factor
    of another payment system, or one the data do not hold, is said (warnings), never replaced."""
    notes: tuple[WarningEvent, ...] = ()
    factors: tuple[FactorRow, ...] = ()
    anesthesia: tuple[AnesthesiaRow, ...] = ()
    if asks_conversion_factor(text, bool(detection.codes)) or asks_anesthesia_unit(text):
        system = other_system(text)
        if asks_anesthesia(text):
            on = plan.dates[0] if plan.dates else None         # "on February 1, 2024": the amounts in force then
            anesthesia = _by_locality(backends, text, plan, today,
                                      lambda con, cy: anesthesia_rows(con, cy, on if on and on.year == cy else None),
                                      "anesthesia")
            said = NO_ANESTHESIA if not anesthesia else ANESTHESIA_NOTE if anesthesia[0].national is None else \
                ANESTHESIA_NATIONAL_NOTE
            notes += (WarningEvent(kind=WarningKind.NOT_IN_DATA, message=said),)
        elif system:
            notes += (WarningEvent(kind=WarningKind.NOT_IN_DATA, message=f"The loaded data hold only the Physician "
                                   f"Fee Schedule's conversion factors; no {system} conversion factor is loaded, and "
                                   "the PFS one is not it, so none is stated."),)
        else:
            factors = in_focus(factor_rows(), plan, text)
            missing = factor_years_note(factors, plan)
            notes += (WarningEvent(kind=WarningKind.YEAR_NOT_FOUND, message=missing),) if missing else ()
    gpci = _by_locality(backends, text, plan, today, gpci_rows, "GPCI") \
        if asks_gpci(text) and not detection.codes else ()
    if asks_gaf(text):
        notes += (WarningEvent(kind=WarningKind.NOT_IN_DATA, message=GAF_NOTE),)
    return factors, anesthesia, gpci, notes


# A question that asks for an amount: "How much does Medicare pay for ...", "What does Medicare pay for ...".
_AMOUNT_ASKED = re.compile(r"\bhow much\b|\bwhat (?:does|do|did|will|would) (?:Medicare |CMS )?pay\b|"
                           r"\b(?:payment|reimbursement|fee) (?:amount|rate)s?\b|\bwhat is the (?:payment|fee|rate)\b|"
                           r"\b(?:cost|price|rate|allowable|reimbursement|payment)\s+(?:of|for)\s+(?:an?\s+|the\s+)?\w|"
                           r"\bwhat\s+(?:does|do|did|will|would)\b.{0,60}\bpay\b",
                           re.IGNORECASE)


_WORDS = re.compile(r"[A-Za-z]{2,}")     # a word to search for ("2026?" alone has none)
# "What did the May 2025 correction notice fix?": a correction document asked what it corrected. Its summary of
# errors says "On page 97767, we inadvertently made a typographical error ..." in none of the question's words, so
# the search adds the words such a summary is written in.
_CORRECTION_DOCUMENT = re.compile(r"\b(?:corrections?(?!\s+(?:factors?|for)\b)|correcting (?:amendment|document)s?|"
                                  r"errat(?:a|um))\b", re.IGNORECASE)
_ASKS_WHAT_CORRECTED = re.compile(r"\b(?:what|which|list|fix(?:ed|es)?|chang\w*|errors?|mistakes?|typos?)\b",
                                  re.IGNORECASE)
CORRECTION_WORDS = "inadvertently made errors on page"


def search_text(text: str) -> str:
    """What the rule text is searched with: the question, and for one asking what a correction corrected, the words
    a summary of errors is written in.

    >>> search_text("What did the May 2025 correction notice fix?").endswith(CORRECTION_WORDS)
    True
    >>> search_text("What did CMS finalize for APCM?")
    'What did CMS finalize for APCM?'
    """
    if _CORRECTION_DOCUMENT.search(text) and _ASKS_WHAT_CORRECTED.search(text):
        return f"{text} {CORRECTION_WORDS}"
    return text


# words that name nothing to look up on their own ("pay?", "what is the rate", "Medicare fee schedule payment")
_GENERIC_WORDS = frozenset("""pay pays paid payment payments rate rates price prices cost costs amount amounts
    how much what whats is are the a an does do for of in please tell me show give and or it this that""".split())
# a code written with too few or too many characters ("CPT 9921", "HCPCS G055"): five are needed
_MALFORMED_CODE = re.compile(r"\b(?:CPT|HCPCS|code)\s*#?\s*([A-Z]?\d{3,4}|\d{6,7})\b", re.IGNORECASE)


# "and in 2024?", "same for facility?", "what about Seattle?", "how about the QP rate?": a fragment leaning on an
# earlier question (short, opening with a connective)
_FOLLOW_UP = re.compile(r"^\s*(?:and what about|and how about|and|also|same|ditto|what about|how about|now|then)\b"
                        r"(?P<rest>.{0,40})$", re.IGNORECASE | re.DOTALL)
# the words such a fragment may hold besides a year or a place: nothing it could be searched for
_FOLLOW_UP_WORDS = frozenset("""in for the a an of at on to it its that this these those one ones same too also then
    year years facility facilities non-facility nonfacility nf fac office setting settings rate rates payment payments
    pay paid amount amounts qp non-qp national nationally locally there here instead thing numbers number what how
    about last next previous prior""".split())


def _follow_up(text: str) -> bool:
    """"and in 2024?", "same for facility?", "what about Seattle?": a fragment leaning on an earlier question (the chat
    answers each question on its own), not "what about telehealth supervision?" (a topic to search for)."""
    m = _FOLLOW_UP.match(text)
    if not m:
        return False
    words = re.findall(r"[A-Za-z][A-Za-z-]*", m.group("rest"))
    rest = [w for w in words if w.lower() not in _FOLLOW_UP_WORDS]
    return not rest or (len(rest) <= 2 and all(w[0].isupper() for w in rest))     # "what about San Jose?"


_SPLIT_CODE = re.compile(r"\b(?:code|CPT|HCPCS)?\s*#?\b(\d{2}|\d{3}|[A-V]\d{1,3})[-. ](\d{2,3})\b(?=\D|$)",
                         re.IGNORECASE)


# Figures a question may ask for that the loaded files do not hold: said, never guessed
NOT_LOADED = (
    (re.compile(r"\b(?:anesthesia\s+)?base\s+units?\b|\bASA\s+(?:base\s+)?units?\b", re.IGNORECASE),
     "Anesthesia base units are not in the loaded files (CMS publishes them in its anesthesia base units file, apart "
     "from the PFS RVU files), so none is stated; an anesthesia service is paid (base units + time units) × the "
     "anesthesia conversion factor of its locality."),
    (re.compile(r"\b(?:intra|pre|post)[- ]?service\s+(?:time|minutes?)\b|\b(?:physician|practitioner|service|total)\s+"
                r"time\s+(?:file|data|assumptions?|for|of)\b|\bminutes?\s+of\s+(?:intra|pre|post)[- ]?service\b|"
                r"\btime\s+file\b", re.IGNORECASE),
     "CMS's physician time file (the pre-, intra- and post-service minutes behind each code's work RVU, published with "
     "each rule) is not loaded, so no service time is stated; a time in a code's CMS descriptor (\"20 min\") is the "
     "descriptor's, shown with its row."),
    (re.compile(r"\b(?:ZIP|zip\s*code|postal\s*code)s?\s*#?:?\s*\d{5}\b", re.IGNORECASE),
     "ZIP codes are not mapped to payment localities here (the loaded county files map counties): name the city, "
     "county or state to price the code there."),
    (re.compile(r"\bbudget[- ]neutrality\b|\bBN adjust\w*|\bMedicare Economic Index\b|\bMEI\b|\bupdate factor\b|"
                r"\bwhy\b.{0,60}\b(?:conversion factors?|CFs?)\b|\b(?:conversion factors?|CFs?)\b.{0,60}\bwhy\b|"
                r"\bwhat\s+(?:drove|caused|explains)\b.{0,60}\b(?:conversion factors?|CFs?)\b", re.IGNORECASE),
     "The loaded data hold the conversion factors themselves (data/pfs_rules.toml), not their parts (the budget-"
     "neutrality adjustment, the statutory update, the Medicare Economic Index): a CF change shown is all of them "
     "together, and each part is stated only where an indexed rule's text gives it."),
    (re.compile(r"\bPart\s+B\s+drugs?\b|\baverage\s+sales\s+price\b|\bASP\s*\+|\bASP\b.{0,30}\b(?:drug|pay|paid|"
                r"payment|rate)|\bJ-?codes?\b|\b(?:drugs?|biologicals?|infused|injected)\b.{0,40}\b(?:fee schedule|PFS)\b|"
                r"\b(?:the\s+)?(?:chemotherapy|chemo|infused|injected|injectable)\s+drugs?\b|\bdrugs?\s+itself\b|"
                r"\bbiologics?\b|\bbiosimilars?\b",
                re.IGNORECASE),
     "Part B drugs and biologicals given in a practitioner's office are paid under the average sales price (ASP) "
     "system (Social Security Act section 1847A, generally 106% of ASP), not the Physician Fee Schedule, and the loaded "
     "data hold no drug amounts; the fee schedule pays the drug's administration (for example 96372 or 96413), which "
     "can be asked by code."),
    (re.compile(r"\bvaccines?\s+(?:itself|themselves)\b|\b(?:the|a)\s+(?:flu|influenza|pneumococcal|pneumonia|COVID(?:-19)?|"
                r"hepatitis\s+B)\s+vaccines?\b(?!\s+admin)|\bvaccines?\b.{0,40}\b(?:paid|pay|payment|cost|price)\b",
                re.IGNORECASE),
     "Part B vaccines (influenza, pneumococcal, hepatitis B, COVID-19) are paid outside the Physician Fee Schedule, "
     "generally at 95% of the average wholesale price, and the loaded data hold no vaccine amounts; the fee schedule "
     "file lists their administration codes (for example G0008 for influenza), whose status says how they are paid."),
    (re.compile(r"\b(?:sonographers?|technologists?|rad(?:iology)?\s+techs?|medical\s+assistants?|clinical\s+staff|"
                r"nurses?(?!\s+practitioners?))\b(?:'s)?.{0,60}\b(?:paid|pay|payment|bill(?:ed|s)?)\b|\b(?:paid|pay|"
                r"payment|bill(?:ed|s)?)\b.{0,40}\b(?:sonographers?|technologists?|medical\s+assistants?|nurses?"
                r"(?!\s+practitioners?))\b", re.IGNORECASE),
     "Medicare does not pay clinical staff (a sonographer, technologist, nurse or medical assistant) separately under "
     "the Physician Fee Schedule: their time is a practice expense input of the service the practice or facility bills "
     "(for an imaging test, of its technical component), so it is inside the PE RVUs shown, not an amount of its own."),
)


def _not_loaded_note(text: str) -> tuple[WarningEvent, ...]:
    """"How many base units does 01402 have?", "the budget neutrality adjustment in the 2023 CF", "what is the MEI":
    a figure the loaded files do not hold is said to be missing (NOT_LOADED), not guessed."""
    return tuple(WarningEvent(kind=WarningKind.NOT_IN_DATA, message=said) for asks, said in NOT_LOADED
                 if asks.search(text))


def _no_code_note(text: str, detection, factors: Sequence, anesthesia: Sequence, gpci: Sequence
                  ) -> tuple[WarningEvent, ...]:
    """An amount asked with no code or family recognised ("What does Medicare pay for a 30-minute phone call?") says
    that no fee schedule amount can be shown, and how to ask, instead of leaving only nearby rule text."""
    if not detection.codes and not factors and not (_WORDS.search(text) and _follow_up(text)) and \
            not [w for w in _WORDS.findall(text) if w.lower() not in _GENERIC_WORDS]:
        return (WarningEvent(kind=WarningKind.NOT_IN_DATA, message="The question has no words to answer: ask about a "
                             "code (for example 99213), a code family (for example chronic care management) or a rule "
                             "topic."),)
    if not detection.codes and not factors and not anesthesia and not gpci and _follow_up(text):
        return (WarningEvent(kind=WarningKind.NOT_IN_DATA, message="This reads as a follow-up to an earlier "
                             "question, but each question is answered on its own: ask again with the code or topic "
                             "(for example “What did 99213 pay in 2024?”)."),)
    split = [code for m in _SPLIT_CODE.finditer(text) for code in [(m.group(1) + m.group(2)).upper()]
             if len(code) == 5]
    if split and not detection.codes:       # "99-213": the code written in two pieces
        return (WarningEvent(kind=WarningKind.NOT_IN_DATA, message=f"No HCPCS/CPT code was recognised: did you mean "
                             f"{split[0]}? Ask again with the five characters together."),)
    malformed = [m.group(1) for m in _MALFORMED_CODE.finditer(text) if m.group(1).upper() not in detection.codes]
    if malformed and not detection.codes:
        return (WarningEvent(kind=WarningKind.NOT_IN_DATA, message=f"“{malformed[0]}” is not a HCPCS/CPT code: codes "
                             "have five characters (for example 99213 or G0556), so no fee schedule amount is shown."),)
    if detection.codes or factors or anesthesia or gpci or not _AMOUNT_ASKED.search(text):
        return ()
    return (WarningEvent(kind=WarningKind.NOT_IN_DATA, message="No HCPCS/CPT code, code family or procedure name was "
                         "recognised in the question, so no fee schedule amount is shown; ask with the code (for "
                         "example 99213), a family name (for example chronic care management) or a procedure the "
                         "registry names (for example total knee replacement)."),)


def _proposed_year(rows: Sequence[ValuationRow], plan: QuestionPlan) -> tuple[QuestionPlan, tuple[WarningEvent, ...]]:
    """"What will 99213 pay in 2027?": a year asked after the newest RVUs on file that has only a proposed conversion
    factor is estimated as the newest final RVUs at that proposed CF (a what-if, figures._what_if), and said to be an
    estimate: the proposed rule's own RVUs differ."""
    if not rows or plan.cf_year is not None or plan.cf_value is not None or plan.cf_change is not None or \
            len(plan.years) != 1:
        return plan, ()
    (year,) = plan.years
    newest = max((r.cy for r in rows if not r.proposed), default=0)
    if year <= newest or any(r.cy == year for r in rows) or not year_cf_is_proposed(year):
        return plan, ()
    from carenav_core.pfs.factors import factor_rows
    cf = next(r for r in factor_rows() if r.cy == year and r.proposed and r.variant != "QP")
    check = f", {cf.confirmed}" if cf.tag != "O" else ""
    return dataclasses.replace(plan, cf_year=year), (WarningEvent(kind=WarningKind.NOT_IN_DATA, message=(
        f"No CY{year} RVUs are on file, only the CY {year} proposed rule's conversion factor (${cf.amount}{check}): "
        f"the CY{year} figures below are an estimate, the CY{newest} RVUs at that CF; the CY {year} rule's own RVUs "
        "will differ.")),)


TELEHEALTH_BEFORE_2024 = ("in CY 2020-2023 Medicare paid telehealth at the rate of the place the visit would have "
                          "taken place in person (modifier 95)")


def _pos_note(text: str, rows: Sequence[ValuationRow]) -> tuple[WarningEvent, ...]:
    """"What does 99213 pay at POS 22?": which PFS rate that place of service is paid at (plan.asked_pos), said."""
    named = asked_pos(text)
    if named and all(r.cy < 2024 for r in rows if r.in_focus) and not re.search(r"\bPOS\b|place[\s-]+of[\s-]+service",
                                                                               text, re.IGNORECASE):
        named = ()          # telehealth before CY 2024: no place of service decided the rate; said below
    if not named and rows and all(r.cy < 2024 for r in rows if r.in_focus) and re.search(
            r"\btele-?(?:health|medicine)\b", text, re.IGNORECASE):
        return (WarningEvent(kind=WarningKind.READ_AS, message=TELEHEALTH_BEFORE_2024[0].upper() +
                             TELEHEALTH_BEFORE_2024[1:] + "; telehealth rates by place of service (POS 10 at home: "
                             "non-facility; POS 02 elsewhere: facility) apply from CY 2024 (CY 2024 final rule, "
                             "88 FR 78818)."),)
    if not named or not rows:
        return ()
    each = "; ".join(f"place of service {code} ({name}) is paid at the PFS {setting} rate" for code, name, setting in named)
    tele = ""
    if {code for code, _, _ in named} & {"02", "10"}:
        # the CY 2024 final rule: telehealth to a patient at home (POS 10) at the non-facility rate, elsewhere (POS 02)
        # at the facility rate; in CY 2020-2023 (the public health emergency) at the in-person place's rate
        tele = " Telehealth rates by place of service apply from CY 2024 (CY 2024 final rule, 88 FR 78818)" + \
            (f"; {TELEHEALTH_BEFORE_2024}" if any(r.cy < 2024 for r in rows if r.in_focus) else "") + "."
    return (WarningEvent(kind=WarningKind.READ_AS, message=each[0].upper() + each[1:] + " (Medicare Claims Processing "
                         "Manual, chapter 12, section 20.4.2)." + tele),)


# a question about a billing rule, beside any amount ("can it be billed on the same day as", "what are the
# requirements", "is consent required")
_RULE_PART = re.compile(r"\b(?:can|may|must|should|could)\b[^?]{0,60}?\b(?:bill\w*|report\w*|paid|payable|used|"
                        r"furnish\w*|submit\w*|claim\w*|count\w*)\b|\brequire\w*\b|\ballowed\b|"
                        r"\bsame (?:day|date|month|period|encounter)\b|\bsupervision\b|\bconsent\b|\brules?\b|"
                        r"\bpolic(?:y|ies)\b|\beligib\w*\b", re.IGNORECASE)


def _weak_match_note(found: SearchResult) -> tuple[WarningEvent, ...]:
    """A rule-text question (no fee-schedule rows answer it) whose best paragraph scores below the weak-match line, or
    that uses words no indexed paragraph contains ("What are the IRMAA income brackets?"): says that the excerpts are
    only the nearest the indexed rules hold, and names the words never found."""
    if not (found.weak or found.unknown):
        return ()
    never = (" The indexed rule text never mentions " + " or ".join(f"“{w}”" for w in found.unknown) + ".") \
        if found.unknown else ""
    return (WarningEvent(kind=WarningKind.WEAK_MATCH, message="No indexed Federal Register paragraph matches this "
                         "question closely: the excerpts below are the nearest the indexed rules hold, and may not "
                         "answer it." + never),)


# an amount asked in other words than "pay": "the Medicaid rate for 99213", "what a PA gets", "UnitedHealthcare's
# allowable", "what a bilateral 64483 is worth"
_AMOUNT_WORDS = re.compile(r"\b(?:get|gets|receive|amounts?|allowed amounts?|rates?|allowables?|worth|costs?|prices?|"
                           r"fee schedules?)\b", re.IGNORECASE)


def _other_payer_note(text: str, rows: Sequence[ValuationRow], factors: Sequence) -> tuple[WarningEvent, ...]:
    """A payment question about a code under another payer or payment system ("the OPPS payment for 99213", "what
    Medicare Advantage plans pay") says that the amounts shown are the Physician Fee Schedule's, not that system's."""
    payer = re.sub(r"^the\s+", "", other_payer(text), flags=re.IGNORECASE)
    if not payer or not rows or factors or not (PAY_WORDS.search(text) or _AMOUNT_WORDS.search(text) or
                                                re.search(r"\bcover(?:s|age)?\b", text, re.IGNORECASE)):
        return ()
    return (WarningEvent(kind=WarningKind.NOT_IN_DATA, message=f"The loaded data hold only the Medicare Physician "
                         f"Fee Schedule's amounts (what Medicare pays the practitioner); no {payer} payment is loaded, "
                         "and the fee schedule amounts shown are not it."),)


# "in <Name>" that is not a place: months, programs and document words
_PLACE_ASKED = re.compile(r"\b(?:in|for|at|near|around)\s+((?:[A-Z][a-z]{2,}\s?){1,3})(?=[\s,.?!;:]|$)")
_NOT_PLACES = frozenset("""doctor doctors nurse professor mrs miss mister
    january february march april june july august september october november december
    medicare medicaid part parts addendum table section office facility total general the this that our my
    final proposed rule rules physician physicians hospital hospitals clinic clinics practice chronic principal
    advanced primary transitional remote behavioral annual telehealth
    may spring summer fall autumn winter calendar year years quarter month week original traditional federal federally
    register chapter appendix column fee schedule established home hospice nursing skilled assisted urgent
    critical emergency inpatient outpatient ambulatory person level rural urban frontier nurse physical occupational
    speech place dollars summary detail short brief both each every all any other some wellness preventive""".split())
# words that make a capitalised run no place wherever they stand ("for New Patients", "in Traditional Medicare")
_NOT_PLACE_WORDS = frozenset("patient patients visit visits services codes medicare medicaid schedule".split())


def _unknown_place_names(text: str, match) -> list[str]:
    """The place-like names after "in", "at", ... that no locality file knows and no misspelling was read from."""
    known = {w.lower() for w in match.matched} | {w.lower() for w, _ in match.respelled} | \
        {w.lower() for w, _ in match.unsure}
    names = [m.group(1).strip() for m in _PLACE_ASKED.finditer(text)]
    return list(dict.fromkeys(n for n in names if n.split()[0].lower() not in _NOT_PLACES and n.lower() not in known
                              and not set(n.lower().split()) & _NOT_PLACE_WORDS))


def _unknown_place(text: str, match) -> tuple[WarningEvent, ...]:
    """A place-like name after "in" ("What does 99213 pay in Atlantis?") that no locality file knows, and that no
    misspelling was read from: said, so the national amounts shown are not read as that place's."""
    return tuple(WarningEvent(kind=WarningKind.NOT_IN_DATA, message=(
        f"“{n}” is not named in the CMS county files (several states may have it): add its state, for example "
        f"“{n}, WA”, to price it in that state's locality; the national amounts are shown.")
        if re.search(r"\b(?:County|Parish)$", n) else
        f"“{n}” is not a place the CMS locality files know: the national amounts are shown.")
        for n in _unknown_place_names(text, match))


def _intents_without_unknown_places(text: str, match, plan: QuestionPlan, today: date) -> tuple[Intent, ...]:
    """"99213 in London 2025": a bare question read as a rule-text one only because of the unknown place name (which
    then shows rule excerpts and no notice): its intents read without that name, as a named place's are."""
    if plan.intents != (Intent.POLICY,):
        return plan.intents
    bare = text
    for name in _unknown_place_names(text, match):
        bare = re.sub(rf"\b{re.escape(name)}\b", " ", bare)
    return plan_question(bare, detect(bare), today).intents if bare != text else plan.intents


def _localities(backends: Backends, text: str, plan: QuestionPlan, rows: tuple[ValuationRow, ...], today: date
                ) -> tuple[QuestionPlan, tuple[ValuationRow, ...], tuple[WarningEvent, ...]]:
    """When the question names a place ("in Seattle", "King County, WA", "MAC 02102 locality 01"): the asked
    codes priced in each matching locality become the rows in focus; national rows stay one click away. A county
    the CMS county file does not list by name is priced in its state's rest-of-state locality, and a read_as
    warning says so."""
    asked = sorted({r.cy for r in rows if r.in_focus and not r.proposed})
    try:
        match, result = priced_places(backends.fee_db, text, plan.focus_codes, cys=asked or None,
                                      modifier=plan.modifier)
        found = [] if result is None else list(result.rows)
        lacking = [c for c in plan.focus_codes if not any(r.national.hcpcs == c for r in found)]
        if result is not None and plan.modifier and lacking:    # no row of that modifier: price the code whole
            found += priced_places(backends.fee_db, text, lacking, cys=asked or None)[1].rows
        if result is not None and plan.components:    # "the PC/TC split for 71046 in Chicago": both components too
            for mod in ("26", "TC"):
                found += priced_places(backends.fee_db, text, plan.focus_codes, cys=asked or None, modifier=mod)[1].rows
    except duckdb.Error as exc:
        log.warning("locality lookup failed: %s", exc)
        return plan, rows, ()
    unsure = tuple(WarningEvent(kind=WarningKind.NOT_IN_DATA, message=f"“{written.title()}” is not a place name the "
                                "locality files know, and it is as close to " + " and ".join(n.title() for n in names)
                                + ": no place was read from it; ask again with the name spelt out.")
                   for written, names in match.unsure)
    if result is None or not found:
        unknown = _unknown_place(text, match)
        if unknown:     # "99213 in London 2025": said, and the place name read as no rule topic
            plan = dataclasses.replace(plan, intents=_intents_without_unknown_places(text, match, plan, today))
        return plan, rows, unsure + unknown
    local = tuple(as_valuation_row(r) for r in found)
    unsure += _capped_note(found)
    unsure += tuple(WarningEvent(kind=WarningKind.NOT_IN_DATA, message=f"“{name}” is not a place the CMS locality "
                                 f"and county files or the city list know, so every {state} locality is shown; name "
                                 f"its county for one locality.")
                    for name, state in match.unplaced)
    places = tuple(dict.fromkeys(r.locality for r in local))
    bases = sorted({r.hcpcs for r in rows if not r.in_focus and not r.mod} & _endoscopic_bases(backends, rows, plan)) \
        if plan.same_session else []
    if bases:       # endoscopies of one family on one day at a place: their base code's amounts there, as context
        try:
            based = priced_places(backends.fee_db, text, bases, cys=asked or None)[1]
        except duckdb.Error as exc:
            log.warning("locality lookup of endoscopic bases failed: %s", exc)
            based = None
        local += tuple(dataclasses.replace(as_valuation_row(r), in_focus=False) for r in
                       (based.rows if based is not None else ()) if
                       (r.place.cy, r.place.mac, r.place.locality) in {(f.place.cy, f.place.mac, f.place.locality)
                                                                       for f in found})
    if (plan.same_session or plan.units_one_day) and not plan.modifier and not plan.components:
        # diagnostic procedures on one day at a place: their -TC / -26 amounts there, as context (figures.
        # _component_amounts); a code without those rows has none
        keys = {(f.place.cy, f.place.mac, f.place.locality) for f in found}
        places = sorted({f.place.key for f in found})        # the places already read: no second reading of the text
        try:
            for mod in ("TC", "26"):
                priced = locality_rows(backends.fee_db, list(plan.focus_codes), cys=asked or None, places=places,
                                       modifier=mod)
                local += tuple(dataclasses.replace(as_valuation_row(r), in_focus=False, named=False)
                               for r in priced.rows if r.national.mod == mod and
                               (r.place.cy, r.place.mac, r.place.locality) in keys)
        except duckdb.Error as exc:
            log.warning("locality lookup of component rows failed: %s", exc)
    # ambiguous: a name matched several localities ("Portland", "Texas"), not two places named ("Miami vs Seattle")
    ambiguous = match.ambiguous and len(match.matched) < len(places)
    rest = {c.matched: c.place for c in match.candidates if "rest of state" in c.how and not c.how.startswith("rural")}
    rural = {c.matched: c.place for c in match.candidates if c.how.startswith("rural")}
    notes = tuple(WarningEvent(kind=WarningKind.READ_AS, message=f"“{written}” is not listed by name in the CMS "
                               f"county file for {place.state}, so it is priced in the {place.state} {place.locality} "
                               f"{place.name} locality.") for written, place in rest.items()) + tuple(
        WarningEvent(kind=WarningKind.READ_AS, message=f"“Rural {written}” is read as the state's locality outside its "
                     f"named metropolitan localities: {place.state} {place.locality} {place.name}.")
        for written, place in rural.items()) + tuple(
        WarningEvent(kind=WarningKind.READ_AS, message=f"Read “{written.title()}” as “{name.lower()}”."
                     if name in ("RURAL", "REST") else      # "rual Texas": a qualifier of the state, not a place
                     f"Read “{written.title()}” as {name.title()}: no place the "
                     f"locality files know is spelt “{written.title()}”.") for written, name in match.respelled) + unsure
    # "Spokane vs Tacoma": two names of one locality get the same amounts; said, not left as one silent row
    by_locality: dict = {}
    for c in match.candidates:
        if not re.search(r"\b(?:county|cnty|parish|borough)\b", c.matched, re.IGNORECASE):   # a city in its county
            by_locality.setdefault((c.place.state, c.place.locality, c.place.name), []).append(c.matched)
    notes += tuple(WarningEvent(kind=WarningKind.READ_AS, message=f"{' and '.join(dict.fromkeys(names))} are in one "
                                f"payment locality, {state} {locality} {name}: the same amounts apply to each.")
                   for (state, locality, name), names in by_locality.items()
                   if len(dict.fromkeys(n.lower() for n in names)) > 1 and not ambiguous)
    intents = plan.intents
    if intents == (Intent.POLICY,):
        # "G0557 in Los Angeles vs Birmingham AL": the place names are not a rule topic; read without them
        bare = text
        for phrase in match.matched + tuple(written for written, _ in match.respelled):
            # a state's postal code takes the city word before it along ("Birmingham AL"): a place, not a topic
            bare = re.sub(rf"\b[A-Z][a-z]+\s+{re.escape(phrase)}\b" if re.fullmatch(r"[A-Z]{2}", phrase)
                          else f"(?i:{re.escape(phrase)})", " ", bare)
        intents = plan_question(bare, detect(bare), today).intents
    return (dataclasses.replace(plan, places=places, ambiguous_place=ambiguous, intents=intents),
            local + tuple(dataclasses.replace(r, in_focus=False) for r in rows), notes)


def _extremes(backends: Backends, plan: QuestionPlan, rows: Sequence[ValuationRow]) -> tuple:
    """"Which locality pays the most for 99213?": the asked codes priced in every locality of each final year in focus,
    and the ends of their amounts (figures.locality_extremes); none if the locality files cannot be read."""
    years = sorted({r.cy for r in rows if r.in_focus and not r.proposed and not r.locality})[-3:]
    try:
        result = locality_rows(backends.fee_db, list(plan.focus_codes), cys=years or None,
                               modifier=plan.modifier or None)
    except (duckdb.Error, LocalityError) as exc:
        log.warning("locality pricing failed: %s", exc)
        return ()
    return tuple(locality_extremes([as_valuation_row(r) for r in result.rows], rows, plan))


def _capped_note(found) -> tuple[WarningEvent, ...]:
    """A locality amount the OPPS cap lowered ("74261 in Houston, 2025") is said to be the cap, with the GPCI-adjusted
    amount it replaced: the row's amount is not RVUs × GPCIs × CF there (SSA 1848(b)(4), the CMS OPPSCAP file)."""
    said = []
    for row in found:
        for setting, got, uncapped in (("non-facility", row.payment_nonfac, row.uncapped_nonfac),
                                       ("facility", row.payment_fac, row.uncapped_fac)):
            if got is not None and uncapped is not None and got < uncapped:
                said.append(f"{row.national.code_with_modifier}'s CY{row.national.cy} {setting} amount in {row.place.state} {row.place.locality} "
                            f"is the OPPS cap, ${got:,}, not the GPCI-adjusted ${uncapped:,}")
    if not said:
        return ()
    return (WarningEvent(kind=WarningKind.NOT_IN_DATA, message="; ".join(dict.fromkeys(said)) + " (an imaging "
                         "service's fee schedule amount is the lesser of the two: SSA 1848(b)(4), the CMS OPPSCAP file)."),)


def as_valuation_row(row) -> ValuationRow:
    """A locality row as a valuation row: the locality's amounts and label, the national row's RVUs and
    provenance (pfs/locality.py computes the amounts; nothing is recomputed here)."""
    place = row.place
    periods = {c.label: c for c in row.national.other_cfs}
    others = tuple((periods[o.cf_label], o.payment_nonfac, o.payment_fac) for o in row.other_cfs
                   if o.cf_label in periods)
    return dataclasses.replace(row.national, payment_nonfac=row.payment_nonfac, payment_fac=row.payment_fac,
                               label=row.label, locality=f"{place.state} {place.locality} {place.name}".strip(),
                               named=True, in_focus=True, local_others=others,
                               gpci=(place.gpci_work, place.gpci_pe, place.gpci_mp))


def _valuation(backends: Backends, detection: Detection, years: int, modifiers: bool = False
               ) -> tuple[list[ValuationRow], list[str], tuple[WarningEvent, ...]]:
    if backends.fee_db is None:
        return [], [], (WarningEvent(kind=WarningKind.DATABASE, message="The fee-schedule database is not available "
                                     "(run `carenav build`); no valuation rows could be shown."),)
    try:
        rows, unpriced = value(backends.fee_db, detection.codes, years=years, modifiers=modifiers)
    except duckdb.Error as exc:
        log.warning("valuation query failed: %s", exc)
        return [], [], (WarningEvent(kind=WarningKind.DATABASE, message=f"The fee-schedule database failed: {exc}"),)
    return rows, unpriced, ()


_COUNTIES_ASKED = re.compile(r"\b(?:which|what)\s+counties\b|\bcounties\s+(?:are\s+)?(?:in|of|make\s+up|within|covered)\b|"
                             r"\bmake\s+up\b.{0,40}\blocality\b", re.IGNORECASE)
_LOCALITY_ASKED = re.compile(r"\b(?:which|what)\s+(?:\w+\s+)?(?:payment\s+|Medicare\s+|PFS\s+|fee schedule\s+)?"
                             r"localit(?:y|ies)\b|\blocalit(?:y|ies)\s+(?:is|are|for|of|covers?|does)\b|"
                             r"\bin\s+which\s+localit", re.IGNORECASE)


def _locality_of(backends: Backends, text: str) -> tuple[WarningEvent, ...]:
    """"What locality is King County, Washington in?": with no code named, the payment locality each named place is
    in, from the newest CY's county file and GPCI file (a code priced there is one question away)."""
    if backends.fee_db is None or not (_LOCALITY_ASKED.search(text) or _COUNTIES_ASKED.search(text)) \
            or asks_locality_count(text):          # "How many localities does California have?": the GPCI file counts
        return ()
    try:
        book = directory(backends.fee_db)
        cy = max(book.gpci)
        match = find_places_in(backends.fee_db, text, cy)
    except (LocalityError, NotBuiltError, duckdb.Error) as exc:
        log.warning("no locality lookup: %s", exc)
        return ()
    if not match.found:
        return ()
    if _COUNTIES_ASKED.search(text):        # "Which counties make up the Seattle locality?": the county file's rows
        areas = book.county_areas(cy)
        covered = {p.key: [a.counties.title() for a in areas if (a.mac, a.locality) == (p.mac, p.locality)]
                   for p in match.localities}
        said = [f"{p.state} {p.locality} ({p.name.title()}) covers {' / '.join(dict.fromkeys(covered[p.key]))}"
                for p in match.localities if covered[p.key]]
        if said:
            return (WarningEvent(kind=WarningKind.COMPUTED, message=f"In the CMS county file serving CY{cy}"
                                 f"{' (' + book.county_note(cy) + ')' if book.county_note(cy) else ''}: "
                                 + "; ".join(said) + "."),)
    said = [f"{c.matched} is in payment locality {c.place.state} {c.place.locality} ({c.place.name.title()}; MAC "
            f"{c.place.mac}; matched as {c.how})" for c in match.candidates]
    return (WarningEvent(kind=WarningKind.COMPUTED, message=f"In the CY{cy} locality files: " + "; ".join(
        dict.fromkeys(said)) + ". Ask with a code to price it there (for example “What does 99213 pay in "
        f"{match.candidates[0].matched}?”)."),)


_OPPS_CAP = re.compile(r"\bOPPS\s*(?:payment\s+)?caps?\b|\bOPPSCAP\b|\bcapped\s+(?:at|by)\s+(?:the\s+)?OPPS\b|"
                       r"\bimaging\s+cap\b", re.IGNORECASE)


def _opps_cap_note(backends: Backends, text: str, plan: QuestionPlan) -> tuple[WarningEvent, ...]:
    """"What is the OPPS cap for 70557 in Los Angeles?": the CMS OPPSCAP file's amounts for each asked code (and its
    listed modifiers) at the places named, or their range over the localities; a code the file does not list is said
    to be uncapped. The PFS fee of an imaging service is the lesser of it and the cap (SSA 1848(b)(4))."""
    if backends.fee_db is None or not plan.focus_codes or not _OPPS_CAP.search(text):
        return ()
    try:
        book = directory(backends.fee_db)
    except (LocalityError, NotBuiltError, duckdb.Error) as exc:
        log.warning("no OPPS cap lookup: %s", exc)
        return ()
    years = sorted({cy for cy, *_ in book.caps})
    if not years:
        return (WarningEvent(kind=WarningKind.NOT_IN_DATA, message="No OPPS cap file is loaded."),)
    cy = max((y for y in years if not plan.years or y <= max(plan.years)), default=years[0])
    places = {p.key: p for p in find_places_in(backends.fee_db, text, cy).localities}
    said = []
    for code in plan.focus_codes:
        listed = {(mod, key): amounts for (year, hcpcs, mod, key), amounts in book.caps.items()
                  if year == cy and hcpcs == code}
        if not listed:
            said.append(f"{code} is not in the CY{cy} OPPSCAP file, so its fee schedule amount is not capped")
            continue
        for mod in sorted({mod for mod, _ in listed}):
            name = f"{code}-{mod}" if mod else code
            here = [(places[key], amounts) for (m, key), amounts in listed.items() if m == mod and key in places]
            if here:
                said += [f"{name}'s cap in {p.state} {p.locality} ({p.name.title()}) is ${fac:,} facility and "
                         f"${nonfac:,} non-facility" for p, (fac, nonfac, _) in here]
            else:
                caps = sorted(amounts[1] for (m, _), amounts in listed.items() if m == mod)
                said.append(f"{name}'s non-facility cap runs from ${caps[0]:,} to ${caps[-1]:,} over the "
                            f"{len(caps)} localities it lists")
    years_note = f" (the asked CY{max(plan.years)} has no OPPSCAP file loaded)" if plan.years and \
        max(plan.years) not in years else ""
    return (WarningEvent(kind=WarningKind.COMPUTED, message=f"In the CMS CY{cy} OPPSCAP file{years_note}: "
                         + "; ".join(said) + ". An imaging service's fee schedule amount in a locality is the lesser "
                         "of the GPCI-adjusted amount and this cap (SSA 1848(b)(4)); a carrier-priced code (status C) "
                         "is priced by its contractor."),)


def _endoscopic_bases(backends: Backends, rows: Sequence[ValuationRow], plan: QuestionPlan) -> set[str]:
    """The ENDO BASE codes of the asked codes that are endoscopies of a family (MULT PROC indicator 3)."""
    keys = [(r.cy, r.hcpcs, "") for r in rows if r.hcpcs in plan.focus_codes and not r.mod and not r.proposed
            and not r.locality]
    try:
        values = indicator_values(backends.fee_db, keys)
    except (NotBuiltError, duckdb.Error) as exc:
        log.warning("no endoscopic base codes: %s", exc)
        return set()
    return {v["endo_base"] for v in values.values() if v.get("mult_proc") == "3" and v.get("endo_base")}


def _billed(volume) -> set[str]:
    """The codes a volume figure bills: ("97110 + 2 × 97140",) -> {"97110", "97140"}."""
    return {part.split(" × ")[-1].strip("() ") for name in volume.codes for part in name.split(" + ")}


def _per_visit_note(multiple, figures, plan: QuestionPlan) -> tuple[tuple[WarningEvent, ...], list]:
    """"4 units of 97110 per visit, 6 visits": the volume figures pay every unit in full; each visit's units are paid
    under the day's rule (the MULTIPLE figure), so the visits bring in that amount times their number. Returns the
    note and the volume figures it replaces."""
    visits = plan.volume.services(False)[0]
    said, superseded = [], []
    for one in multiple:
        # the visits' figures at this place and setting: each code's alone, and all the day's codes together
        found = [volume for volume in figures if volume.kind is FigureKind.VOLUME and volume.place == one.place and
                 one.setting in volume.setting and _billed(volume) <= set(one.codes)]
        if found:
            whole = max(found, key=lambda volume: len(_billed(volume)))      # the visit's codes together
            said.append(f"each visit's units are paid ${one.value:,} under the day's multiple-procedure rule "
                        f"({one.setting}{', ' + one.place if one.place else ''}) {one.label}, so {visits:,} "
                        f"visits bring in ${one.value * visits:,} (${whole.value:,} with every unit paid in full)")
            superseded.extend(found)
    return ((WarningEvent(kind=WarningKind.COMPUTED, message="Per visit: " + "; ".join(said) + "."),) if said else (),
            superseded)


def _component_rows(backends: Backends, rows: list[ValuationRow], plan: QuestionPlan, years: int
                    ) -> list[ValuationRow]:
    """"74177 and 70450 on one day": imaging, cardiovascular and ophthalmology procedures on one day are reduced in
    their technical (and imaging's professional) component (MULT PROC 4, 6, 7), so the asked codes' -TC and -26 rows
    come along as context when the question did not ask a modifier (figures._component_amounts)."""
    if plan.modifier or not (plan.same_session or plan.units_one_day):
        return []
    codes = sorted({r.hcpcs for r in rows if r.in_focus and not r.mod})
    try:
        found = value(backends.fee_db, codes, years=years, modifiers=True)[0] if codes else []
    except duckdb.Error as exc:
        log.warning("component rows failed: %s", exc)
        return []
    asked = {r.cy for r in rows if r.in_focus and not r.mod}
    return [dataclasses.replace(r, in_focus=False, named=False) for r in found
            if r.mod in ("TC", "26") and r.cy in asked and not r.proposed]


def _endoscopic_base_rows(backends: Backends, rows: list[ValuationRow], plan: QuestionPlan, years: int
                          ) -> list[ValuationRow]:
    """"45380 and 45385 on one day": endoscopies of one family (MULT PROC indicator 3) are paid against their ENDO BASE
    code's value, so the base's rows come along (as context: the question did not name it) when it was not asked."""
    bases = _endoscopic_bases(backends, rows, plan) - {r.hcpcs for r in rows}
    return _valuation(backends, Detection(codes=tuple(sorted(bases)), families=(), explicit=()), years)[0] if bases else []


def definition_sources(detection: Detection) -> tuple[Source, ...]:
    """The registry's definition of each family the question names (data/families.toml), as citable sources."""
    by_key = {f.key: f for f in load_families()}
    return tuple(Source(label=f"[Definition: {by_key[k].name}]", title=by_key[k].name, kind=DEFINITION_KIND,
                        published="", text=by_key[k].definition, url=by_key[k].reference)
                 for k in detection.families if by_key[k].definition)


def _sources(backends: Backends, text: str, detection: Detection) -> SearchResult:
    if not detection.codes and (not _WORDS.search(text) or _follow_up(text)):
        # "?", "2026?": nothing to search for; "and in 2024?": a follow-up whose subject is elsewhere (_no_code_note)
        return SearchResult(hits=(), warnings=())
    retrieved = retrieve(backends.store, search_text(text), RETRIEVE_K, ("rules",))
    if ASKS_DECISION.search(text) and not retrieved.weak:
        # the decision closing the sections the best paragraphs come from (often ranked below their comments)
        retrieved = merge(retrieved, section_decisions(backends.store, retrieved))
    if not detection.codes:
        return retrieved
    shown = frozenset(h.chunk_id for h in retrieved.hits)
    return merge(retrieved, code_cited(backends.store, list(detection.codes), CITED_PER_CODE, question=text, skip=shown))


def _rows_answer(plan: QuestionPlan) -> QuestionPlan:
    """The plan with a rule-text (POLICY) intent read as a LOOKUP: the rows found for the question answer it."""
    return dataclasses.replace(plan, intents=tuple(dict.fromkeys(
        Intent.LOOKUP if i is Intent.POLICY else i for i in plan.intents)))


def _filled_from_schedule(fee_db, text: str, detection: Detection) -> Detection:
    """"98000-98007": the codes inside a short written range that the loaded fee schedule holds in any year, added as
    written out (detect() fills a range only with codes a family lists)."""
    inside = {c: start for c, start in range_candidates(text).items() if c not in detection.codes}
    if not inside:
        return detection
    try:
        known = {c for (c,) in fee_db.execute("SELECT DISTINCT hcpcs FROM current_rvu WHERE hcpcs IN "
                                              "(SELECT unnest($1))", [sorted(inside)]).fetchall()}
    except duckdb.Error as exc:
        log.warning("range not filled from the fee schedule: %s", exc)
        return detection
    if not known:
        return detection
    return dataclasses.replace(detection, codes=tuple(sorted({*detection.codes, *known})),
                               explicit=tuple(sorted({*detection.explicit, *known})),
                               filled=tuple(sorted({*detection.filled, *((c, inside[c]) for c in known)})))


_NEW_ASKED = re.compile(r"\b(?:new(?:ly)?|added|introduced|created)\b(?!\s+(?:patients?|pts?|visits?|to\s+(?:the\s+)?"
                        r"practice))", re.IGNORECASE)


def _new_codes_note(backends: Backends, text: str, codes: Sequence[str], plan: QuestionPlan,
                    rows: Sequence[ValuationRow]) -> tuple[WarningEvent, ...]:
    """"Which RTM codes are new in 2026?", "When was G2211 introduced?": which of the codes first appear in the year's
    final file (absent from every earlier loaded one), or the year each first appears, computed from the loaded
    releases, not left to the reader."""
    if backends.fee_db is None or not rows or not _NEW_ASKED.search(without_place_names_new(text)):
        return ()
    try:
        firsts, first_loaded = first_final_years(backends.fee_db, codes)
    except duckdb.Error as exc:
        log.warning("no first years: %s", exc)
        return ()
    if not firsts:
        return ()
    by_year: dict[int, list[str]] = {}
    for code, y in sorted(firsts.items()):
        by_year.setdefault(y, []).append(code)
    firsts_said = "; ".join(
        (f"{_joined(cs)} {'are' if len(cs) > 1 else 'is'} in the first loaded release (CY{y}) already" if y == first_loaded
         else f"{_joined(cs)} first appear{'' if len(cs) > 1 else 's'} in CY{y}") for y, cs in sorted(by_year.items()))
    year = max(plan.years) if plan.years else 0
    if not year:
        said = firsts_said
    elif year <= first_loaded:
        return (WarningEvent(kind=WarningKind.NOT_IN_DATA, message=f"The loaded releases start with CY{first_loaded}, "
                             f"so which codes were new in CY{year} cannot be told from them."),)
    elif new := by_year.get(year):
        others = "; ".join(part for part in firsts_said.split("; ") if f"CY{year}" not in part)
        said = (f"New in CY{year}: {_joined(new)} ({'each is' if len(new) > 1 else 'it is'} in the CY{year} final "
                f"file and in no earlier loaded one)" + (f"; {others}" if others else ""))
    else:
        said = (f"None of {_joined(sorted(firsts))} is" if len(firsts) > 1 else f"{next(iter(firsts))} is not") + \
            f" new in CY{year}: {firsts_said}"
    return (WarningEvent(kind=WarningKind.COMPUTED, message=said + " (computed from the loaded CMS RVU files)."),)


def _joined(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _unread_procedures(text: str) -> tuple[str, ...]:
    """Procedures named in words that neither the registry nor a code family's name covers (before codes are
    written in): "shoulder replacement" of "hip replacement or shoulder replacement payment"."""
    return unread_procedures(text, [(a, b) for a, b, _ in named_procedures(text)] + family_spans(text))


def prepare(question: str, backends: Backends, valuation: bool = True, today: date | None = None) -> Prepared:
    """Plan, value, compute, retrieve and build the prompt. `valuation=False` switches the code feature (and the
    conversion-factor answer) off;
    `today` (default: the date now) resolves "last year" and how far back "since 2021" reaches."""
    today = today or date.today()
    text, warnings = clean_question(question)
    unread: tuple[str, ...] = ()
    if valuation:
        unread = _unread_procedures(text)
        text, read = spelled_out(text)
        warnings += (WarningEvent(kind=WarningKind.READ_AS, message="Read " + ", ".join(
            f"“{written}” as {meant}" for written, meant in read) + "."),) if read else ()
        unread = tuple(u for u in unread if not any(w.lower() in u.lower() or u.lower() in w.lower()
                                                    for w, _ in read))
    detection = detect(text) if valuation else NO_DETECTION
    if unread and detection.codes:          # "hip replacement or shoulder replacement": the second is not priced
        warnings += (WarningEvent(kind=WarningKind.NOT_IN_DATA, message=" and ".join(f"“{u}”" for u in unread) +
                                  (" is" if len(unread) == 1 else " are") + " not a procedure the registry names, so "
                                  "no amount is shown for " + ("it" if len(unread) == 1 else "them") + ": ask with "
                                  "the code (the amounts shown are for the codes read)."),)
    if detection.codes and backends.fee_db is not None:
        detection = _filled_from_schedule(backends.fee_db, text, detection)
    plan = plan_question(text, detection, today)
    ranked = None
    if valuation and not detection.codes and \
            (ranked := rank_schedule(backends.fee_db, text, plan) or
             # "how many of the codes new in 2026 have status A": the new-code count answers it, not status examples
             (None if asks_new_codes(text) else status_examples(backends.fee_db, text, plan))) is not None and \
            ranked.codes:
        # "Which code has the highest work RVU in 2026?": the file's ranking decides the codes, answered as asked
        detection = ranked.detection()
        plan = _rows_answer(plan_question(text, detection, today))
        warnings += (ranked.note(),)
    if valuation and not detection.codes and (counted := change_counts(backends.fee_db, text, plan)) is not None:
        warnings += (counted.note(),)       # "How many codes were cut in 2026?": counted over the whole file
    if valuation and not detection.codes and (said := new_code_note(backends.fee_db, text, plan)) is not None:
        warnings += (WarningEvent(kind=WarningKind.COMPUTED, message=said),)    # "Which codes are new in 2026?"
    if valuation and not detection.codes:
        warnings += _locality_of(backends, text)
    years = years_to_show(plan, backends.settings.years, today)
    rows, unpriced, problems = _valuation(backends, detection, years, bool(plan.modifier or plan.components)) \
        if detection.codes \
        else ([], [], ())
    if (plan.same_session or "endo_base" in plan.indicators) and rows and backends.fee_db is not None:
        rows = rows + _endoscopic_base_rows(backends, rows, plan, years)     # "what does 45380's base pay" too
    if (plan.same_session or plan.units_one_day) and rows and backends.fee_db is not None:
        rows = rows + _component_rows(backends, rows, plan, years)
    if detection.codes:
        warnings += _new_codes_note(backends, text, detection.explicit or detection.codes, plan, rows)
    if plan.reasons and not plan.years and plan.since is None and rows:
        # "Why did G0556's payment drop?": the newest final year the data hold for the codes, and the one before
        newest = max((r.cy for r in rows if not r.proposed), default=today.year)
        plan = dataclasses.replace(plan, years=(newest - 1, newest))
    plan = narrowed_by_descriptor(plan, {r.hcpcs: r.description for r in rows}, text)
    rows = mark_focus(rows, plan)
    if ranked is not None and ranked.codes:     # a ranking of the file: its rows in rank order (stable otherwise)
        order = {code: i for i, code in enumerate(ranked.codes)}
        rows = type(rows)(sorted(rows, key=lambda r: order.get(r.hcpcs, len(order))))
    plan, noted = _proposed_year(rows, plan)
    warnings += noted
    warnings += missing_years_note(rows, plan, _newest_final(backends) if rows else 0) + \
        missing_modifier_note(rows, plan) + other_modifier_note(rows, plan)
    if rows and backends.fee_db is not None:
        plan, rows, noted = _localities(backends, text, plan, rows, today)
        warnings += noted
        if plan.places and not (ASKS_RULE.search(text) or WHY.search(text)):
            plan = _rows_answer(plan)       # "Compare 99214 in Manhattan, Alaska and Puerto Rico": the places' rows
    rows, noted = at_asked_cf(rows, plan)
    warnings += noted
    figures = compute_figures(rows, plan)
    if re.search(r"\boffices?\b", text, re.IGNORECASE):      # "how many office visits equal one 27447": that one first
        figures = tuple(sorted(figures, key=lambda f: not (f.kind is FigureKind.RATIO and f.how == "across settings")))
    if plan.extreme and not plan.places and rows and backends.fee_db is not None:
        figures = _extremes(backends, plan, rows) + figures
    warnings += timeless_note(rows, plan)
    if plan.sequestration and any(r.cy < 2023 for r in rows if r.in_focus):
        warnings += (WarningEvent(kind=WarningKind.NOT_IN_DATA, message=(
            "The 2% sequestration reduction is applied only to CY 2023 and later amounts: it was suspended from May 1, "
            "2020 to March 31, 2022, was 1% from April 1 to June 30, 2022, and is 2% on claims from July 1, 2022, so "
            "earlier years' Medicare shares are shown without it.")),)
    warnings += _negative_note(text, plan)
    # "Does cost sharing apply to G0009?": a preventive service the fee schedule does not pay has no amount to split,
    # but what the patient pays for it is still the answer
    unpaid = dict.fromkeys(r.hcpcs for r in rows if r.in_focus and r.hcpcs in NO_COST_SHARING and
                           r.status in UNPAID_STATUS and not r.proposed)
    if (plan.coinsurance or re.search(r"\bcost[- ]shar", text, re.IGNORECASE)) and unpaid:
        warnings += (WarningEvent(kind=WarningKind.COMPUTED, message=" ".join(
            f"{code} is {NO_COST_SHARING[code]}, a preventive service with no coinsurance and no Part B deductible "
            f"when the practitioner accepts assignment (CMS, Medicare Preventive Services); the physician fee schedule "
            f"makes no payment for it (status {next(r.status for r in rows if r.hcpcs == code)}), so no amount is "
            f"split here." for code in unpaid)),)
    if plan.coinsurance and POLYP_NOTE & set(plan.focus_codes):
        warnings += (WarningEvent(kind=WarningKind.NOT_IN_DATA, message=(
            "A screening colonoscopy or sigmoidoscopy that removes a polyp is paid as a diagnostic one: the patient "
            "then pays a coinsurance, 15% of the amount in 2023-2026, 10% in 2027-2029 and none from 2030 "
            "(Consolidated Appropriations Act, 2021, section 122).")),)
    if plan.cf_change is not None and plan.cf_change <= -100:
        warnings += (WarningEvent(kind=WarningKind.NOT_IN_DATA, message=(
            f"A conversion factor cut of {-plan.cf_change}% leaves no conversion factor (payment = RVUs × CF), so no "
            "payment is computed for it; the amounts shown are the fee schedule's.")),)
    # a supposed CF change ("if the conversion factor were cut by 3%") asks what it does, not the CF table
    factors, anesthesia, gpci, noted = _factor_evidence(backends, text, plan, detection, today) \
        if valuation and plan.cf_change is None and plan.cf_year is None and plan.cf_value is None \
        else ((), (), (), ())
    warnings += _opps_cap_note(backends, text, plan) if _OPPS_CAP.search(text) else _other_payer_note(text, rows,
                                                                                                      factors)
    warnings += noted + \
        _no_code_note(text, detection, factors, anesthesia, gpci) + _not_loaded_note(text)
    indicators = indicator_facts(backends.fee_db, rows, plan)
    # the -TC / -26 rows brought as context for a diagnostic reduction (_component_rows) are not asked about
    if (plan.same_session or plan.units_one_day) and not plan.modifier:
        context_parts = {r.code_with_modifier for r in rows if r.mod in ("TC", "26") and not r.in_focus}
        indicators = tuple(f for f in indicators if f.code not in context_parts)
    multiple = multiple_figures(rows, indicators, plan)
    if (plan.same_session or plan.units_one_day) and not multiple and "mult_proc" not in asked_indicators(text):
        # "G2211 with 99213 on the same day": no reduction applies, and the indicator was not asked: not stated
        indicators = tuple(f for f in indicators if f.meaning.key != "mult_proc")
    if plan.same_session and "endo_base" not in asked_indicators(text) and not any(
            f.meaning.key == "mult_proc" and f.meaning.value == "3" for f in indicators):
        # the endoscopic base code matters to procedures on one day only under indicator 3
        indicators = tuple(f for f in indicators if f.meaning.key != "endo_base")
    if multiple and plan.volume is not None:
        noted, superseded = _per_visit_note(multiple, figures, plan)
        warnings += noted
        figures = tuple(f for f in figures if f not in superseded)
    if multiple:
        # procedures on one day: what they are paid under the reduction leads; their plain sum is in its sentence
        if not (ASKS_RULE.search(text) or WHY.search(text)):
            plan = _rows_answer(plan)       # "31622 and 31625 at the same session": the amounts answer it
        if unreduced := sorted({r.locality for r in rows if r.locality and r.in_focus} - {f.place for f in multiple}):
            warnings += (WarningEvent(kind=WarningKind.NOT_IN_DATA, message=(
                f"The multiple-procedure reduction is not computed here for {', '.join(unreduced)} (a code or its "
                "endoscopic base has no row there); the amounts shown there are each procedure's alone, and their "
                "sum is not what the locality pays for them on one day (price the claim's lines on the Claim pricer "
                "page for the locality's reduced amounts).")),)
        reduced = {(f.setting, f.label.rsplit(", ", 1)[-1]) for f in multiple}
        figures = tuple(multiple) + tuple(f for f in figures if not (
            f.kind is FigureKind.TOTAL and (f.setting.removesuffix(" setting"), f.label.rsplit(", ", 1)[-1]) in reduced))
    if PAY_WORDS.search(text) or _AMOUNT_ASKED.search(text) or _AMOUNT_WORDS.search(text) or \
            plan.nonpar or plan.practitioner is not None:
        # "what would a bilateral 27447 pay", "what does an NP get for 99214", "the limiting charge for 99214": the
        # amount asked leads; an assistant at surgery who is an NP or PA is paid the assistant's share, not 85%
        assisting = assistant_figures(rows, indicators, plan, text)
        # "29881 billed as a second procedure with modifier 51": one procedure's amount as a later one of the day
        second = second_procedure_figures(rows, indicators, plan) if not multiple and \
            len(plan.focus_codes) == 1 and SECOND_PROCEDURE.search(text) else []
        figures = tuple(nonpar_figures(rows, plan) + second + assisting + co_surgery_figures(rows, indicators, plan) +
                        ([] if assisting else practitioner_figures(rows, plan, figures)) +
                        bilateral_figures(rows, indicators, plan)) + figures
        if plan.practitioner is not None and plan.practitioner[2] == "1834(v)" and any(
                r.in_focus and not r.proposed and r.cy < THERAPY_ASSISTANT_FROM for r in rows):
            warnings += (WarningEvent(kind=WarningKind.NOT_IN_DATA, message=(
                f"A service furnished in whole or in part by a PT or OT assistant (modifier CQ / CO) is paid at 85% "
                f"only from January 1, {THERAPY_ASSISTANT_FROM} (Social Security Act section 1834(v)); before that "
                f"it is paid the full amount shown.")),)
    # "27130 with modifier 54", "what share of 27130's payment is post-operative care": the part's amount leads
    figures = tuple(periop_figures(rows, indicators, plan, text)) + figures
    found = _sources(backends, text, detection)
    store_warnings = tuple(WarningEvent(kind=WarningKind.RETRIEVAL, message=w) for w in found.warnings)
    local, indices = anesthesia_summary(anesthesia), gpci_summary(gpci, text)
    # "Why is the facility rate lower?": what practice expense RVUs are, settings included, is the reason
    why_gap = (term_source("pe_rvu"),) if plan.setting_gap and WHY.search(text) else ()
    sources = (glossary_sources(text) + why_gap + meaning_sources(text, bool(detection.codes))
               + tuple(f.source() for f in indicators) + definition_sources(detection)
               + factor_sources(factors)
               + ((local.source(),) if local else ()) + (indices.sources() if indices else ())
               + tuple(source_of(h) for h in found.hits))
    messages, dropped, dropped_rows = fit_prompt(text, sources, rows, unpriced, figures=figures,
                                                 plan=plan if detection.codes else None,
                                                 prompt_tokens=chat_budget(backends.settings).prompt_tokens)
    indexing = () if found.warnings else _indexing_note(backends)
    weak = () if rows or factors or anesthesia or gpci or found.warnings or \
        any(w.kind is WarningKind.COMPUTED for w in warnings) else _weak_match_note(found)
    if rows and found.weak and not found.warnings and _RULE_PART.search(text) and not indicators:
        # "What does 99497 pay, and can it be billed the same day as an AWV?": the rows answer the amount, and the
        # rule part is said to have no close paragraph rather than left to excerpts that may not answer it
        weak = (WarningEvent(kind=WarningKind.WEAK_MATCH, message="The fee schedule rows answer the amounts; no "
                             "indexed Federal Register paragraph closely matches the rule part of this question, so "
                             "the excerpts below are the nearest the indexed rules hold and may not answer it."),)
    return Prepared(question=text, detection=detection, plan=plan, rows=rows, figures=figures,
                    unpriced=tuple(unpriced), sources=sources, messages=messages, dropped_excerpts=dropped,
                    dropped_rows=dropped_rows, factors=factors, anesthesia=anesthesia, gpci=gpci,
                    indicators=indicators, ranking=ranked if ranked is not None and ranked.codes else None,
                    warnings=warnings + problems + store_warnings + indexing + weak
                    + other_rules_note(text, plan, sources, data=bool(factors or anesthesia or gpci))
                    + _pos_note(text, rows))


# A question about what CMS decided or proposed (a rule's own text answers it)
_DECIDED = re.compile(r"\b(?:finaliz\w*|propos\w*|adopt\w*)\b|\bCMS\s+(?:say|said|decide\w*|change\w*|announce\w*)\b",
                      re.IGNORECASE)


# Which kind of rule document a question names, as Source.kind writes it.
_RULE_KINDS = ((re.compile(r"\b(?:proposed rule|NPRM|proposal)\b", re.IGNORECASE), "proposed rule"),
               (re.compile(r"\bfinal rule\b", re.IGNORECASE), "final rule"),
               (re.compile(r"\bcorrect(?:ion|ing)\b", re.IGNORECASE), "correction"))


def other_rules_note(text: str, plan: QuestionPlan, sources: Sequence[Source], data: bool = False
                     ) -> tuple[WarningEvent, ...]:
    """A question about a named year's rule ("the CY 2026 rule", "the CY 2025 proposed rule") whose retrieved
    excerpts all come from other rules says so, so an excerpt of the CY 2024 rule (or the final rule's account of
    a proposal) is not read as the asked rule's own text (the corpus may not hold that rule)."""
    rules = [s for s in sources if s.kind not in NOT_RULE_TEXT]
    # "Why did 99223 drop in 2023?", "Why did the conversion factor drop in 2021?": that year's rule gives the reasons
    why = bool(WHY.search(text)) and not ASKS_RULE.search(text) and bool(plan.focus_codes or asks_conversion_factor(text))
    # "What did CMS finalize about virtual direct supervision for 2026?", "What is the efficiency adjustment in 2026?":
    # a question the rule text answers (no code, no table of the data) asks about that year's rule
    decided = not plan.focus_codes and (bool(_DECIDED.search(text)) or not data)
    if not plan.years or not (ASKS_RULE.search(text) or why or decided):
        return ()
    # "Why did 99214's facility PE drop in 2026?": CMS gives its reasons for a year's values in that year's rule
    years = (max(plan.years),) if why else plan.years
    kind = "" if why else next((kind for pattern, kind in _RULE_KINDS if pattern.search(text)), "")
    if any(f"CY {year}" in s.title and (not kind or s.kind == kind) for s in rules for year in years):
        return ()
    asked = " or ".join(f"CY {year}" for year in years) + (f" {kind}" if kind else " rule")
    if why:
        return (WarningEvent(kind=WarningKind.OTHER_RULES, message=f"None of the retrieved rule text is from the "
                             f"{asked}, where CMS gives its reasons for that year's values: the figures show what "
                             "changed, not why CMS changed it."),)
    if not rules:
        return ()
    return (WarningEvent(kind=WarningKind.OTHER_RULES, message=f"None of the retrieved rule text is from the "
                         f"{asked}: the excerpts below come from other rules."),)


def _indexing_note(backends: Backends) -> tuple[WarningEvent, ...]:
    """While the rule text is being indexed (or a run stopped half-way): say how far it is, so a thin answer
    is not taken for the whole record. Nothing when the index is complete or never started."""
    progress = index_progress(backends.store)
    if progress.complete or progress.problem or progress.total == 0:
        return ()
    return (WarningEvent(kind=WarningKind.INDEXING, message=f"{progress_note(progress)}; this answer uses the "
                         "paragraphs indexed so far."),)


def chat_budget(settings) -> Budget:
    """The chat's share of the model's context: the configured context less the longest answer."""
    return Budget(num_ctx=settings.llm_num_ctx, num_predict=settings.llm_num_predict_chat)


def answer(question: str, backends: Backends, *, valuation: bool = True) -> Iterator[ChatEvent]:
    """Stream the events of one answer. Without a model client the deterministic writer writes."""
    prepared = prepare(question, backends, valuation)
    if prepared.detection.codes:
        yield ValuationEvent(codes=prepared.detection.codes, families=prepared.detection.families,
                             rows=prepared.rows, provenance=provenance_for(prepared.rows), unpriced=prepared.unpriced,
                             figures=prepared.figures, plan=prepared.plan)
    if prepared.factors or prepared.anesthesia or prepared.gpci:
        yield FactorEvent(rows=prepared.factors, anesthesia=prepared.anesthesia, gpci=prepared.gpci,
                          trend=len({r.cy for r in prepared.factors if r.in_focus and not r.proposed}) > 1)
    yield from prepared.warnings
    if backends.model is None and backends.settings.ollama_host:
        yield WarningEvent(kind=WarningKind.MODEL_DOWN, message=f"The model server at {backends.settings.ollama_host} "
                           "is not reachable; this answer was written without a language model.")
    writer = None
    if backends.model is not None:
        writer = ModelWriter(model=backends.model, options=chat_budget(backends.settings).options(),
                             first_token_s=backends.settings.llm_first_token_timeout,
                             total_s=backends.settings.llm_answer_timeout)
        if prepared.dropped_excerpts or prepared.dropped_rows:
            left = [f"{prepared.dropped_excerpts} of {len(prepared.sources)} retrieved excerpts"] * bool(
                prepared.dropped_excerpts) + [f"{prepared.dropped_rows} other rows"] * bool(prepared.dropped_rows)
            yield WarningEvent(kind=WarningKind.PROMPT_TRIMMED, message=f"{' and '.join(left)} were left out of "
                               f"the model's prompt to fit its {backends.settings.llm_num_ctx:,}-token context "
                               "(they are still shown in the table and under Sources).")
    used, withheld, labels = yield from _prose(prepared, writer)
    cited, also = cited_and_also_retrieved(prepared.sources, labels)
    yield SourcesEvent(cited=cited, also_retrieved=also)
    version = data_version(backends)
    yield DoneEvent(writer=used, withheld=withheld, build_id=version.build_id, index_version=version.index_version)


def _prose(prepared: Prepared, writer: Writer | None) -> Iterator[ChatEvent]:
    """Tokens through a fresh guard; a failing model is replaced by the deterministic writer.
    Returns (writer name, sentences withheld, labels cited by released sentences)."""
    labels: tuple[str, ...] = ()
    model_withheld = 0
    notes = data_notes(prepared)
    if writer is not None and (prepared.sources or prepared.rows):   # nothing retrieved: no model call
        if notes:   # the product's own words first: what the loaded data do not hold (a year, a modifier, a payer)
            yield TokenEvent(text=" ".join(notes) + "\n\n", withheld=False, reasons=())
        guard = OutputGuard.for_answer(prepared.rows, prepared.sources, prepared.checked, prepared.unpriced)
        try:
            withheld = yield from _guarded(writer.stream(prepared), guard)
            if guard.cited_labels:
                return writer.name, withheld, guard.cited_labels
            model_withheld = withheld
            # Nothing the model wrote cited a row, figure or source: it answered nothing that could be checked
            # (a weak model's prose is all withheld). The user still gets the checked answer.
            log.warning("model answer released no cited sentence (%d withheld); deterministic writer follows", withheld)
            yield WarningEvent(kind=WarningKind.MODEL_ERROR, message="The language model's answer cited no row, "
                               "figure or source (its factual sentences were withheld); the answer continues with "
                               "the deterministic writer (no language model).")
        except ModelError as exc:
            log.warning("model failed: %s", exc)
            labels = guard.cited_labels
            yield WarningEvent(kind=WarningKind.MODEL_ERROR, message=f"The language model failed ({exc}); the answer "
                               "continues with the deterministic writer (no language model).")
    guard = OutputGuard.for_answer(prepared.rows, prepared.sources, prepared.checked, prepared.unpriced,
                                   fixed=FIXED_SENTENCES | frozenset(notes))
    deterministic = DeterministicWriter(lead_notes=writer is None or not (prepared.sources or prepared.rows))
    withheld = yield from _guarded(deterministic.stream(prepared), guard)
    return deterministic.name, model_withheld + withheld, labels + guard.cited_labels


def _guarded(chunks: Iterator[str], guard: OutputGuard) -> Iterator[ChatEvent]:
    """Checked sentences as they complete; an empty chunk (the model client's heartbeat) becomes a
    ProgressEvent so a page can say the model is still writing."""
    withheld, shown, started = 0, 0, time.monotonic()
    for chunk in chunks:
        if not chunk:
            yield ProgressEvent(seconds=round(time.monotonic() - started, 1), sentences=shown)
            continue
        for sentence in guard.feed(chunk):
            withheld += yield from _emit(sentence)
            shown += 1
    for sentence in guard.flush():
        withheld += yield from _emit(sentence)
    return withheld


def _emit(sentence: GuardedSentence) -> Iterator[ChatEvent]:
    if not sentence.released:
        log.info("withheld %r: %s", sentence.original, "; ".join(sentence.reasons))
    yield TokenEvent(text=sentence.text, withheld=not sentence.released, reasons=sentence.reasons)
    return 0 if sentence.released else 1
