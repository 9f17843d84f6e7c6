"""Session 21: failure classes found asking the chat (round 22's leftovers, probe rounds 23 and 24), fixed as classes. Asked through
the real pipeline (real DuckDB, real embedded PostgreSQL, the deterministic writer); amounts are read from the rows
the answer shows, never written here."""
from __future__ import annotations

from datetime import date
from decimal import ROUND_HALF_UP, Decimal

import pytest

from carenav_core.chat.figures import FigureKind
from carenav_core.chat.pipeline import prepare
from carenav_core.chat.plan import units_are_alternatives
from carenav_core.codes.detect import detect, spelled_out
from carenav_core.codes.families import load_families
from tests.chat.test_question_classes import plan, said
from tests.chat.test_session19_classes import _cents, _national as _row

TODAY = date(2026, 12, 1)


def _one_day(row, n) -> Decimal:
    """n units of one therapy code on one day: the first in full, each other at half its practice expense."""
    return row.payment_nonfac + (n - 1) * _cents((row.total_nonfac - row.pe_nonfac_rvu / 2) * row.cf)


@pytest.mark.parametrize("question", [
    "What is the sum of 99213 and 99214 in 2025?",
    "Add up 99213 and 99214 for 2025",
    "sum 99213 and 99214, 2025",
])
def test_a_sum_asked_without_a_pay_word_is_computed(backends, question):
    """"What is the sum of 99213 and 99214?" gave the two rows and no sum (no pay word: read as a definition)."""
    prepared = prepare(question, backends, today=TODAY)
    (total,) = [f for f in prepared.figures if f.kind is FigureKind.TOTAL and f.setting == "non-facility"]
    assert total.value == _row(prepared, "99213", 2025).payment_nonfac + _row(prepared, "99214", 2025).payment_nonfac
    assert f"${total.value:,}" in said(prepared)


@pytest.mark.parametrize("question, least, way", [
    ("Which office visit code had the biggest percent change from 2025 to 2026?", False, None),
    ("Which office visit code changed the least from 2025 to 2026?", True, None),
    ("Which CCM code had the smallest increase from 2025 to 2026?", True, "up"),
    ("Which CCM code grew the least from 2025 to 2026?", True, "up"),
    ("Which CCM code had the largest drop from 2025 to 2026?", False, "down"),
])
def test_a_change_either_way_or_the_least_is_ranked_as_asked(backends, question, least, way):
    """"the biggest percent change" was read as the largest increase; "the smallest increase" named the largest."""
    prepared = prepare(question, backends, today=TODAY)
    text = said(prepared)
    changes = {}
    for f in prepared.figures:
        if f.kind is FigureKind.CHANGE and f.setting == "non-facility" and not f.place and "NPRM" not in f.label \
                and f.codes[0] != "G2211":
            changes[f.codes[0]] = f.percent
    assert len(changes) > 2
    if way is None:
        pick = (min if least else max)(changes, key=lambda c: abs(changes[c]))
        assert f"{pick}'s national non-facility payment changed {'the least' if least else 'the most'}" in text
    else:
        moved = {c: p for c, p in changes.items() if (p > 0 if way == "up" else p < 0)} or changes
        if least:
            pick = (min if way == "up" else max)(moved, key=moved.get)
        else:
            pick = (max if way == "up" else min)(moved, key=moved.get)
        verb = "rose" if way == "up" else "fell"
        if moved is changes:      # nothing moved the way asked: the nearest is named, and that is said
            assert f"no national non-facility payment {verb}" in text
        else:
            assert f"{pick}'s national non-facility payment {verb} {'the least' if least else 'the most'}" in text


@pytest.mark.parametrize("question", [
    "Which E/M code had the biggest percent change from 2025 to 2026?",
    "What do E&M codes pay in 2026?",
    "What do evaluation and management visits pay in 2026?",
])
def test_em_codes_alone_are_the_office_visits(question):
    assert detect(question).families == ("OFFICE_EM",)


@pytest.mark.parametrize("question, family", [
    ("What do hospital E/M visits pay in 2026?", "HOSPITAL_EM"),
    ("nursing facility E/M visits in 2026", "NF_EM"),
    ("telephone E/M codes", "TELEPHONE_EM"),
])
def test_em_codes_of_a_setting_stay_that_settings(question, family):
    families = {f.key for f in load_families()}
    assert family in families
    assert detect(question).families == (family,)


def test_care_management_alone_names_the_care_management_families():
    keys = {f.key for f in load_families() if "care management" in f.shared_names}
    assert keys >= {"CCM", "PCM", "APCM", "TCM"}
    assert set(detect("Which care management code pays the most in 2026?").families) == keys
    assert set(detect("What are the consent rules for care management services?").families) == keys
    # a family's own longer name is that family alone
    assert detect("What does chronic care management pay?").families == ("CCM",)
    assert detect("What does principal care management pay?").families == ("PCM",)
    assert detect("transitional care management 2026").families == ("TCM",)
    assert detect("advanced primary care management 2026").families == ("APCM",)
    # a misspelt longer name is still read as that family, not as the shared name
    text, read = spelled_out("What does principle care management pay?")
    assert read and detect(text).families == ("PCM",)


def test_which_care_management_code_pays_the_most_ranks_the_families_codes(backends):
    """"Which care management code pays the most" ranked the whole fee schedule (37277 first)."""
    prepared = prepare("Which care management code pays the most in 2026?", backends, today=TODAY)
    members = {c for f in load_families() if "care management" in f.shared_names for c in f.codes}
    focus = [r for r in prepared.rows if r.in_focus and not r.proposed and not r.locality and r.cy == 2026
             and r.payment_nonfac is not None]
    assert focus and {r.hcpcs for r in focus} <= members
    best = max(focus, key=lambda r: r.payment_nonfac)
    assert f"{best.hcpcs} has the highest non-facility payment in CY2026, ${best.payment_nonfac:,}" in said(prepared)


@pytest.mark.parametrize("text, codes, alternatives", [
    ("Which pays more in 2026: four units of 97530 or four units of 97110?", ["97530", "97110"], True),
    ("4 units of 97110 vs 2 units of 97140", ["97110", "97140"], True),
    ("4 units of 97110 compared with 4 units of 97112", ["97110", "97112"], True),
    ("4 units of 97110 and 2 units of 97140", ["97110", "97140"], False),
    ("4 units of 97110 plus 2 units of 97140, or is that too many?", ["97110", "97140"], False),
])
def test_counted_codes_joined_by_or_are_alternatives(text, codes, alternatives):
    assert units_are_alternatives(text, codes) is alternatives


@pytest.mark.parametrize("question, first, second, cy", [
    ("Which pays more in 2026: four units of 97530 or four units of 97110?", ("97530", 4), ("97110", 4), 2026),
    ("What does 3 units of 97110 vs 2 units of 97140 pay in 2025?", ("97110", 3), ("97140", 2), 2025),
])
def test_counted_alternatives_are_each_a_day_of_their_own_compared(backends, question, first, second, cy):
    """"four 97530 or four 97110" priced all eight units as one day under the therapy rule ($199.06)."""
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.units_alternatives
    a, b = (_one_day(_row(prepared, code, cy), n) for code, n in (first, second))
    (compared,) = [f for f in prepared.figures if f.kind is FigureKind.DIFFERENCE and "on one day" in f.label
                   and f.setting == "non-facility" and not f.place]
    assert compared.inputs == (a, b) and compared.value == a - b
    days = [f for f in prepared.figures if f.kind is FigureKind.MULTIPLE and f.setting == "non-facility"]
    assert sorted(f.value for f in days) == sorted([a, b])
    text = said(prepared)
    assert f"{first[1]} × {first[0]} on one day brings in ${abs(a - b):,} {'more' if a > b else 'less'} than " \
           f"{second[1]} × {second[0]} on one day" in text
    assert text.index("on one day brings in") < text.index("Billed on one day")


def test_counted_codes_billed_together_stay_one_day(backends):
    prepared = prepare("What does Medicare pay for 4 units of 97110 and 2 units of 97140 in 2026?", backends,
                       today=TODAY)
    assert not prepared.plan.units_alternatives
    assert len([f for f in prepared.figures if f.kind is FigureKind.MULTIPLE and f.setting == "non-facility"]) == 1


@pytest.mark.parametrize("question, code, units, cy, who", [
    ("What does Medicare pay for three units of 97110 with the CQ modifier in 2026?", "97110", 3, 2026, "CQ"),
    ("4 units of 97530 by an OT assistant (CO modifier) in 2025: what is paid?", "97530", 4, 2025, "CO"),
])
def test_a_therapy_assistants_units_on_one_day_are_85_percent_of_the_reduced_day(backends, question, code, units, cy,
                                                                                 who):
    """"three units of 97110 with CQ": the 85% applies to the day's payment under the therapy rule ($62.46 in 2026);
    the answer gave 85% of one unit and the reduced day apart."""
    prepared = prepare(question, backends, today=TODAY)
    day = _one_day(_row(prepared, code, cy), units)
    (paid,) = [f for f in prepared.figures if f.kind is FigureKind.PRACTITIONER and "on one day" in f.label
               and f.setting == "non-facility"]
    assert paid.inputs == (day,) and paid.value == _cents(day * Decimal("0.85"))
    text = said(prepared)
    assert f"(modifier {who})" in text and f"{units} × {code} on one day, paid ${day:,}" in text
    assert text.index(f"paid ${day:,}") < text.index("Billed on one day")


def test_a_therapy_assistant_before_2022_is_paid_the_reduced_day_in_full(backends):
    prepared = prepare("3 units of 97110 with the CQ modifier in 2021: what is paid?", backends, today=TODAY)
    assert not [f for f in prepared.figures if f.kind is FigureKind.PRACTITIONER]


def test_a_practitioners_procedures_on_one_day_are_the_share_of_the_reduced_day(backends):
    prepared = prepare("What does an NP get for 11042 and 17000 in the same session in 2026?", backends,
                       today=TODAY)
    (day,) = [f for f in prepared.figures if f.kind is FigureKind.MULTIPLE and f.setting == "non-facility"]
    (paid,) = [f for f in prepared.figures if f.kind is FigureKind.PRACTITIONER and "on one day" in f.label
               and f.setting == "non-facility"]
    assert paid.value == _cents(day.value * Decimal("0.85"))


def test_plan_reads_a_sum_without_a_pay_word():
    from carenav_core.chat.plan import Intent
    assert Intent.TOTAL in plan("What is the sum of 99213 and 99214 in 2025?").intents
    assert Intent.TOTAL not in plan("Summarize the 2025 rule for 99213 and 99214").intents


@pytest.mark.parametrize("question, code, cy, cf", [
    ("What would 99214 pay in 2026 if the conversion factor were $35?", "99214", 2026, "35"),
    ("99213 at a $36 CF in 2025", "99213", 2025, "36"),
    ("If the CF were 30.5, what would 99490 pay in 2026?", "99490", 2026, "30.5"),
])
def test_a_conversion_factor_supposed_as_an_amount_reprices_the_row(backends, question, code, cy, cf):
    """"if the conversion factor were $35" answered with the year's CF facts and no amount at $35 (and read the $35 as
    an amount paid to check)."""
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.cf_value == Decimal(cf) and prepared.plan.stated is None
    row = _row(prepared, code, cy)
    (then,) = [f for f in prepared.figures if f.kind is FigureKind.WHAT_IF and f.setting == "non-facility"]
    assert then.inputs == (row.payment_nonfac, _cents(row.total_nonfac * Decimal(cf)))
    assert not [f for f in prepared.figures if f.kind is FigureKind.STATED]
    assert f"at a conversion factor of ${cf}" in said(prepared)


def test_a_conversion_factor_stated_as_a_fact_is_no_supposition():
    from carenav_core.chat.plan import asked_cf_value
    assert asked_cf_value("The 2025 CF is 32.3465; what does 99213 pay?") is None
    assert plan("The 2025 CF is 32.3465; what does 99213 pay?").cf_value is None


@pytest.mark.parametrize("question, low_first, measure", [
    ("Rank the TCM codes by work RVU in 2026", False, "work_rvu"),
    ("Sort the APCM codes by payment, lowest first", True, "payment_nonfac"),
    ("List the office visit codes by 2026 payment from low to high", True, "payment_nonfac"),
    ("Rank 99213 and 99214 by payment", False, "payment_nonfac"),
])
def test_a_ranking_asked_of_two_codes_or_lowest_first_is_given(backends, question, low_first, measure):
    """"Rank the TCM codes by work RVU" (two codes) and "lowest first" printed rows and no ranking; "from low to
    high" narrowed the office visits to the two "low" levels."""
    prepared = prepare(question, backends, today=TODAY)
    focus = [r for r in prepared.rows if r.in_focus and not r.proposed and not r.locality and not r.mod
             and r.hcpcs != "G2211" and getattr(r, measure) is not None]
    newest = max(r.cy for r in focus)
    focus = [r for r in focus if r.cy == newest]
    assert len(focus) >= 2
    ordered = sorted(focus, key=lambda r: getattr(r, measure), reverse=not low_first)
    text = said(prepared)
    assert f"{'lowest' if low_first else 'highest'} first: {ordered[0].hcpcs} " in text
    if "office" in question:
        assert len(focus) >= 9           # every visit level, not the "low" ones


@pytest.mark.parametrize("question", [
    "In 2026, which pays more for a day: four units of 97530 or four units of 97110?",
    "In 2026, which pays more on one day: 4 units of 97530 or 4 units of 97110?",
])
def test_for_a_day_is_one_day_not_a_rate(backends, question):
    """Probe 23 C1: "for a day" was read as a rate (4 units a day), so neither the therapy rule nor the comparison of
    the alternatives applied ($140.28 vs $116.24, and an unasked sum)."""
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.volume is None and prepared.plan.units_alternatives
    a, b = _one_day(_row(prepared, "97530", 2026), 4), _one_day(_row(prepared, "97110", 2026), 4)
    (compared,) = [f for f in prepared.figures if f.kind is FigureKind.DIFFERENCE and "on one day" in f.label
                   and f.setting == "non-facility" and not f.place]
    assert compared.inputs == (a, b)


@pytest.mark.parametrize("text, who", [
    ("99213 rate in Pittsburg PA for 2026", None),
    ("Philadelphia PA 99214 2026", None),
    ("99213 in Erie, PA", None),
    ("PA 01 99213", None),
    ("What does a PA get for 99213?", "physician assistant"),
    ("If the PA bills 99214 in Scranton PA", "physician assistant"),
    ("Pittsburgh PA: what does a PA get for 99213", "physician assistant"),
    ("PAs billing 99213 in Seattle", "physician assistant"),
])
def test_pa_the_state_is_not_a_physician_assistant(text, who):
    from carenav_core.chat.plan import asked_practitioner
    found = asked_practitioner(text)
    assert (found[0] if found else None) == who


@pytest.mark.parametrize("question, part, whole, cy", [
    ("What percent of a 99215 does a 99213 pay in 2026?", "99213", "99215", 2026),
    ("What is 99203 as a percentage of 99205 in the office, 2025?", "99203", "99205", 2025),
    ("What percent is 99212 of 99214 in 2026?", "99212", "99214", 2026),
    ("What percent of 27447's payment is 99213's in 2026?", "99213", "27447", 2026),
])
def test_one_code_as_a_percent_of_another_is_computed(backends, question, part, whole, cy):
    """Probe 23 C3: three wordings of a percent of another code got the rows and no result."""
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.ratio == (part, whole) and prepared.plan.ratio_percent
    figures = [f for f in prepared.figures if f.kind is FigureKind.RATIO]
    assert figures
    for f in figures:
        field = "payment_nonfac" if f.setting == "non-facility" else "payment_fac"
        a, b = getattr(_row(prepared, part, cy), field), getattr(_row(prepared, whole, cy), field)
        assert f.inputs == (a, b) and f.percent == (a / b * 100).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
        assert f"{part}'s national {f.setting} payment is {f.percent}% of {whole}'s" in said(prepared)


@pytest.mark.parametrize("question, codes", [
    ("add 99495 and 99496 together", ("99495", "99496")),
    ("99213 plus 99214, what's the total?", ("99213", "99214")),
])
def test_more_ways_of_asking_a_sum(backends, question, codes):
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.summed
    (total,) = [f for f in prepared.figures if f.kind is FigureKind.TOTAL and f.setting == "non-facility"]
    assert total.value == sum(_row(prepared, c, 2026).payment_nonfac for c in codes)


def test_went_up_the_most_ranks_the_changes(backends):
    prepared = prepare("E/M codes 2020 vs 2026 — which went up the most?", backends, today=TODAY)
    changes = {f.codes[0]: f.percent for f in prepared.figures if f.kind is FigureKind.CHANGE
               and f.setting == "non-facility" and not f.place and f.codes[0] != "G2211"}
    best = max(changes, key=changes.get)
    assert f"{best}'s national non-facility payment rose the most in percent" in said(prepared)


@pytest.mark.parametrize("question, code, cy", [
    ("How much is the annual wellness visit G0439 in 2026 and does the patient pay coinsurance?", "G0439", 2026),
    ("What is the patient's 20% for G0402 in 2025?", "G0402", 2025),
])
def test_a_wellness_visit_has_no_coinsurance(backends, question, code, cy):
    """Probe 23 C7: the AWV was given a 20% patient coinsurance ($27.52); the patient pays nothing."""
    prepared = prepare(question, backends, today=TODAY)
    splits = [f for f in prepared.figures if f.kind is FigureKind.COINSURANCE]
    assert splits and all(f.inputs[1] == 0 and f.value == f.inputs[0] for f in splits)
    assert _row(prepared, code, cy).payment_nonfac in {f.value for f in splits}
    assert "the patient pays nothing" in said(prepared)


def test_a_wellness_visit_after_sequestration_is_all_of_it_less_2_percent(backends):
    prepared = prepare("What does Medicare pay for G0438 after sequestration in 2025?", backends, today=TODAY)
    (less,) = [f for f in prepared.figures if f.kind is FigureKind.SEQUESTRATION and f.setting == "non-facility"]
    allowed = _row(prepared, "G0438", 2025).payment_nonfac
    assert less.inputs == (allowed,) and less.value == _cents(allowed * Decimal("0.98"))
    assert "Medicare's 100% of G0438's" in said(prepared)


@pytest.mark.parametrize("question", ["pay", "what is the rate?", "How much?", "2026?"])
def test_a_question_of_generic_words_alone_is_told_how_to_ask(backends, question):
    prepared = prepare(question, backends, today=TODAY)
    assert any("has no words to answer" in w.message for w in prepared.warnings)


def test_a_rule_part_no_paragraph_matches_is_said_beside_the_amounts(backends):
    """Probe 23 C4: "What does 99497 pay, and can it be billed the same day as an AWV?" showed the amounts and
    excerpts that do not answer the rule part, with no word that the indexed rules hold nothing close."""
    from carenav_core.chat.events import WarningKind
    prepared = prepare("How much does 99497 pay in 2026 and can it be billed on the same day as an annual wellness "
                       "visit?", backends, today=TODAY)
    assert prepared.rows
    assert [w for w in prepared.warnings if w.kind is WarningKind.WEAK_MATCH and "rule part" in w.message]
    for question in ("What does 99213 pay in 2026?", "What supervision does APCM require?"):
        assert not [w for w in prepare(question, backends, today=TODAY).warnings if w.kind is WarningKind.WEAK_MATCH]


def test_a_facility_only_surgery_against_an_office_visit_is_also_divided_across_settings(backends):
    """Probe 23 C8: "How many 99213 visits equal one 27447?" gave only the facility ratio (20.18); 27447 is priced only
    in a facility, and an office visit's amount is the non-facility one (12.18)."""
    prepared = prepare("How many 99213 visits does it take to equal the surgeon's fee for one total knee (27447) in "
                       "2026?", backends, today=TODAY)
    knee, visit = _row(prepared, "27447", 2026), _row(prepared, "99213", 2026)
    assert knee.nonfac_na == "NA"
    (across,) = [f for f in prepared.figures if f.kind is FigureKind.RATIO and f.how == "across settings"]
    assert across.inputs == (knee.payment_fac, visit.payment_nonfac)
    assert across.value == (knee.payment_fac / visit.payment_nonfac).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    assert f"{across.value} of 99213 in an office equal one 27447" in said(prepared)
    # a setting asked: that setting's ratio only
    asked = prepare("How many 99213 equal one 27447 in 2026 in the facility?", backends, today=TODAY)
    assert not [f for f in asked.figures if f.kind is FigureKind.RATIO and f.how == "across settings"]


@pytest.mark.parametrize("question, code, units, days, cy", [
    ("4 units of 97110 a day for 10 days in 2026", "97110", 4, 10, 2026),
    ("3 units of 97530 daily for 5 days, 2025: total?", "97530", 3, 5, 2025),
])
def test_units_a_day_for_a_number_of_days_are_each_days_units(backends, question, code, units, days, cy):
    """"4 units of 97110 a day for 10 days" priced 40 units in full ($1,162.40): each day's units are paid under the
    therapy rule ($95.69 a day, $956.90)."""
    prepared = prepare(question, backends, today=TODAY)
    assert dict(prepared.plan.units) == {code: units} and prepared.plan.volume.services(False)[0] == days
    day = _one_day(_row(prepared, code, cy), units)
    (note,) = [w.message for w in prepared.warnings if w.message.startswith("Per visit:")]
    assert f"{days} visits bring in ${day * days:,}" in note


def test_a_cf_asked_about_is_no_supposition():
    """eval chat: "In 2024, was 49652 paid at a CF of 33.2875?" checks the CF it was paid at (the factors answer)."""
    assert plan("In 2024, was 49652 paid at a CF of 33.2875?").cf_value is None
    assert plan("If the CF were 30.5, what would 99490 pay in 2026?").cf_value == Decimal("30.5")


# --- probe round 24 ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("question, code, cy", [
    ("Does the patient pay anything for a screening mammogram 77067 in 2026?", "77067", 2026),
    ("Is there a copay for G0121 in 2025?", "G0121", 2025),
    ("Does the deductible apply to G0439?", "G0439", 2026),
])
def test_a_preventive_service_has_no_cost_sharing_however_it_is_asked(backends, question, code, cy):
    """Probe 24 A: a screening mammogram got a 20% coinsurance ($25.25) and "owe anything", "copay", "deductible" got no
    cost statement at all."""
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.coinsurance
    splits = [f for f in prepared.figures if f.kind is FigureKind.COINSURANCE]
    assert splits and all(f.inputs[1] == 0 for f in splits)
    assert _row(prepared, code, cy).payment_nonfac in {f.value for f in splits}
    text = said(prepared)
    assert "the patient pays nothing" in text
    if code == "G0121":       # a polyp removed makes it diagnostic: the coinsurance then is said
        assert any("polyp" in w.message for w in prepared.warnings)


def test_an_office_visits_patient_cost_is_still_the_20_percent(backends):
    prepared = prepare("What's the patient cost for 99214 in 2026?", backends, today=TODAY)
    row = _row(prepared, "99214", 2026)
    (split,) = [f for f in prepared.figures if f.kind is FigureKind.COINSURANCE and f.setting == "non-facility"]
    assert split.value == _cents(row.payment_nonfac * Decimal("0.80"))


@pytest.mark.parametrize("text", [
    "Dr. Jackson bills 99213: what does it pay?", "Mr. Lincoln 99213 2026", "What does Ms. Madison get for 99214?",
    "Doctor Austin billed 99214 in 2026", "Mrs Madison's 99213 in 2025",
])
def test_a_persons_title_and_name_is_no_place(fee_db, text):
    """Probe 24 B: Dr. Jackson, Dr. Austin, Ms. Madison and Mr. Lincoln were priced in Mississippi, Austin TX, ..."""
    from carenav_core.pfs.places import find_places_in
    assert not find_places_in(fee_db, text, 2026).localities


def test_a_place_beside_a_persons_name_is_still_read(fee_db):
    from carenav_core.pfs.places import find_places_in
    match = find_places_in(fee_db, "What does Ms. Madison get for 99214 in Seattle?", 2026)
    assert [p.key for p in match.localities] == ["02402:02"]


@pytest.mark.parametrize("question, part, whole", [
    ("99212 is what percent of 99215 in 2026?", "99212", "99215"),
    ("99215 is what share of 99205 in 2026", "99215", "99205"),
])
def test_x_is_what_percent_of_y(question, part, whole):
    assert plan(question).ratio == (part, whole) and plan(question).ratio_percent


@pytest.mark.parametrize("question, state, low_first", [
    ("Which Washington locality pays the least for 99215 in 2026?", "WA", True),
    ("Sort the Washington localities by 99213 payment, ascending, 2026", "WA", True),
    ("Which Oregon locality pays more for 99214 in 2026?", "OR", False),
])
def test_a_ranking_of_a_two_locality_state_is_given(backends, question, state, low_first):
    """Probe 24 E: Washington and Oregon (two localities each) got rows and no ranking; Texas got one."""
    prepared = prepare(question, backends, today=TODAY)
    local = [r for r in prepared.rows if r.in_focus and r.locality.startswith(state) and r.cy == 2026
             and not r.proposed and not r.mod]
    assert len(local) == 2
    ordered = sorted(local, key=lambda r: r.payment_nonfac, reverse=not low_first)
    assert f"non-facility payment in the places asked, {'lowest' if low_first else 'highest'} first: " \
           f"{ordered[0].locality} ${ordered[0].payment_nonfac:,}" in said(prepared)


@pytest.mark.parametrize("question, year", [("99213 in 2099", 2099), ("What will 99214 pay in 2045?", 2045)])
def test_a_year_far_past_the_files_is_said(backends, question, year):
    prepared = prepare(question, backends, today=TODAY)
    assert any(f"No CY{year} fee schedule values" in w.message for w in prepared.warnings)


def test_office_visits_against_a_surgery_lead_with_the_office_amount(backends):
    prepared = prepare("How many 99214 office visits does it take to equal one single-artery CABG (33533) in 2026?",
                       backends, today=TODAY)
    first = next(f for f in prepared.figures if f.kind is FigureKind.RATIO)
    assert first.how == "across settings"


@pytest.mark.parametrize("question, code, target", [
    ("How many 99213 visits per month at the 2026 office rate does it take to earn $10,000?", "99213", 10000),
    ("How many 99214s would I need per month to bring in $8,000 in 2026?", "99214", 8000),
    ("How many 99213 visits a week to make $3k a week in 2026?", "99213", 3000),
])
def test_how_many_services_reach_an_amount(backends, question, code, target):
    """Probe 24 D: "how many visits to earn $10,000" got rows and no count (106 at $95.19)."""
    import math
    prepared = prepare(question, backends, today=TODAY)
    row = _row(prepared, code, 2026)
    (needed,) = [f for f in prepared.figures if f.kind is FigureKind.NEEDED and f.setting == "non-facility"]
    n = math.ceil(Decimal(target) / row.payment_nonfac)
    assert needed.value == n and needed.inputs == (Decimal(target), row.payment_nonfac, row.payment_nonfac * n,
                                                   row.payment_nonfac * (n - 1))
    text = said(prepared)
    assert f"it takes {n:,} services to bring in ${Decimal(target):,}" in text
    assert text.index("it takes") < text.index("Under the CY2026 final fee schedule")


@pytest.mark.parametrize("question, names, locality", [
    ("Compare 99213 in Spokane vs Tacoma in 2026", "Spokane and Tacoma", "WA 99"),
    ("99214 in Reno vs Las Vegas", "Reno and Las Vegas", "NV 00"),
])
def test_two_places_of_one_locality_are_said_to_share_its_amounts(backends, question, names, locality):
    """Probe 24 F: "Spokane vs Tacoma" showed one row without saying both are the rest-of-Washington locality."""
    prepared = prepare(question, backends, today=TODAY)
    assert any(w.message.startswith(f"{names} are in one payment locality, {locality}") for w in prepared.warnings)
    same = prepare("99213 in Seattle, King County", backends, today=TODAY)
    assert not any("are in one payment locality" in w.message for w in same.warnings)


@pytest.mark.parametrize("question, code, months", [
    ("How much does 99490 pay per year if billed every month in 2026?", "99490", 12),
    ("What does G0556 bring in over 6 months billed each month, 2026?", "G0556", 6),
])
def test_one_patients_service_billed_every_month_over_a_span(backends, question, code, months):
    """Probe 24 D: "99490 per year if billed every month" got the rows and no yearly amount ($793.56)."""
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.volume.services(False)[0] == months
    (volume,) = [f for f in prepared.figures if f.kind is FigureKind.VOLUME and f.setting == "non-facility"]
    assert volume.value == _row(prepared, code, 2026).payment_nonfac * months


@pytest.mark.parametrize("text, key", [
    ("99213 in Pierce County WA", "02402:99"), ("What is the Pierce County WA payment for 99213?", "02402:99"),
    ("99213 in King County WA 2026", "02402:02"),
])
def test_a_county_with_its_postal_code_and_no_comma_is_read_in_that_state(fee_db, text, key):
    """Probe 24 F: "Pierce County WA" showed both Washington localities (the state alone was read)."""
    from carenav_core.pfs.places import find_places_in
    assert [p.key for p in find_places_in(fee_db, text, 2026).localities] == [key]


def test_a_county_named_without_its_state_is_told_to_add_it(backends):
    prepared = prepare("What does 99213 pay in Pierce County?", backends, today=TODAY)
    assert any("add its state" in w.message and "Pierce County" in w.message for w in prepared.warnings)


def test_codes_left_out_of_a_total_for_two_reasons_each_get_their_own(backends):
    """Probe 24 J: 93000's facility amount (PE NA) was said left out for a status, as 36415 (status X) is."""
    prepared = prepare("Total Medicare payment for 99204 + 93000 + 36415 in 2026", backends, today=TODAY)
    text = said(prepared)
    assert "36415 has no national fee schedule payment (status X), and the file marks 93000's facility PE NA" in text
