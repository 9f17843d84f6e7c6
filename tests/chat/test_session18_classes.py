"""Classes of analyst questions the round-16 second reader found wrong or unanswered, each asked through the real
pipeline (real DuckDB, real embedded PostgreSQL, the deterministic writer). Values are read from the rows the answer
shows, never written here."""
from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from carenav_core.chat.figures import FigureKind
from carenav_core.chat.pipeline import prepare
from carenav_core.codes.procedures import unread_procedures
from carenav_core.pfs.valuation import value
from carenav_core.words import is_known_word
from tests.chat.test_question_classes import said

TODAY = date(2026, 12, 1)


def _row(prepared, code, cy, mod=""):
    return next(r for r in prepared.rows if r.hcpcs == code and r.mod == mod and not r.locality and not r.proposed
                and r.cy == cy)


def _figures(prepared, kind, setting="non-facility"):
    return [f for f in prepared.figures if f.kind is kind and f.setting == setting]


@pytest.mark.parametrize("question, codes, cy", [
    ("45380 and 45385 during the same colonoscopy in 2026 - total?", ("45380", "45385"), 2026),
    ("45380 and 45385 in one colonoscopy in 2026 - total?", ("45380", "45385"), 2026),
    ("43239 and 43235 at the same upper endoscopy session in 2025 - total?", ("43239", "43235"), 2025),
    ("31628 and 31624 done during the same bronchoscopy in 2026 - total?", ("31628", "31624"), 2026),
    ("52204 and 52310 during the same cystoscopy in 2026 - total?", ("52204", "52310"), 2026),
])
def test_one_scope_session_in_other_words_applies_the_family_rule(backends, question, codes, cy):
    """"during the same X", "in one X", "at the same <two words> session": one endoscopy session, so the family's
    rule applies (the highest in full, each other less the base), and the session's name adds no code."""
    prepared = prepare(question, backends, today=TODAY)
    (base,) = {f.meaning.value for f in prepared.indicators if f.meaning.key == "endo_base" and f.meaning.value}
    (figure,) = _figures(prepared, FigureKind.MULTIPLE)
    amounts = sorted((_row(prepared, c, cy).payment_nonfac for c in codes if c != base), reverse=True)
    base_amount = _row(prepared, base, cy).payment_nonfac
    assert figure.value == amounts[0] + sum(max(a - base_amount, Decimal(0)) for a in amounts[1:])
    assert figure.label in said(prepared)
    assert not [r for r in prepared.rows if r.in_focus and r.hcpcs not in codes and r.hcpcs != base]


@pytest.mark.parametrize("question, cy, counted", [
    ("2 units of 77080 and 3 chest x-rays in 2024 - total?", 2024, {"77080": 2, "71045": 3}),
    ("12 units of 99214 and 5 EKGs in 2025 - total?", 2025, {"99214": 12, "93000": 5}),
    ("5 EKGs and 12 units of 99214 in 2025 - total?", 2025, {"99214": 12, "93000": 5}),
    ("10 99213s and 5 93000s in 2025 - total?", 2025, {"99213": 10, "93000": 5}),
    ("10 99213s and 2 units of 93000 in 2025 - total?", 2025, {"99213": 10, "93000": 2}),
])
def test_each_count_belongs_to_its_own_code_or_procedure(backends, question, cy, counted):
    """A count on a code beside a count on another code or on a procedure in words: each count is its own code's,
    never a count of claims multiplying everything."""
    prepared = prepare(question, backends, today=TODAY)
    expected = sum(n * _row(prepared, code, cy).payment_nonfac for code, n in counted.items())
    totals = [f.value for f in _figures(prepared, FigureKind.TOTAL)]
    assert expected in totals
    assert not _figures(prepared, FigureKind.VOLUME), "no count multiplies the whole claim"


@pytest.mark.parametrize("question", ["What is the payment for reading a knee MRI in 2025?",
                                      "What does a radiologist get paid for interpreting a chest x-ray in 2026?"])
def test_reading_a_test_is_its_professional_component_not_a_place(backends, question):
    """"for reading": the -26 rows, national; "reading" is an English word, not a misspelt Redding, CA."""
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.modifier == "26"
    assert not [r for r in prepared.rows if r.locality]
    assert [r for r in prepared.rows if r.in_focus] and all(r.mod == "26" for r in prepared.rows if r.in_focus)


def test_the_rule_is_not_read_as_a_component(backends):
    prepared = prepare("What is CMS's interpretation of the rule for 99490 in 2026?", backends, today=TODAY)
    assert prepared.plan.modifier == ""


def test_english_words_are_known_and_misspelt_places_are_not():
    assert is_known_word("reading") and is_known_word("Marine")
    assert not is_known_word("seatle") and not is_known_word("houstan")


@pytest.mark.parametrize("question, read, unread", [
    ("knee or shoulder arthroscopy payment 2026", "29880", "shoulder arthroscopy"),
    ("What does Medicare pay for shoulder or knee arthroscopy in 2026?", "29880", "shoulder arthroscopy"),
    ("hip replacement or shoulder replacement payment in 2026", "27130", "shoulder replacement"),
])
def test_a_procedure_the_registry_does_not_name_is_said_unpriced(backends, question, read, unread):
    prepared = prepare(question, backends, today=TODAY)
    assert read in {r.hcpcs for r in prepared.rows if r.in_focus}
    assert any(f"“{unread}” is not a procedure the registry names" in w.message for w in prepared.warnings)


def test_unread_procedures_leave_read_and_misspelt_ones_alone():
    assert unread_procedures("a colonoscopy and a hernia repair", [(2, 13)]) == ("hernia repair",)
    assert unread_procedures("knee vs hip replacement", [(0, 4), (8, 23)]) == ()


def test_new_codes_are_computed_from_the_loaded_releases(backends):
    """"Which RTM codes are new in 2026": the codes whose first final file is CY2026, checked against the rows of
    the year before (none of them has a CY2025 row)."""
    prepared = prepare("What new remote therapeutic monitoring codes exist in 2026 and what do they pay?", backends,
                       today=TODAY)
    (note,) = [w.message for w in prepared.warnings if w.message.startswith("New in CY2026")]
    listed = note.split(":", 1)[1].split("(", 1)[0]
    new = {c for c in prepared.plan.focus_codes if c in listed}
    assert new, note
    earlier = {r.hcpcs for r in prepared.rows if r.cy < 2026 and not r.proposed}
    assert not new & earlier
    assert all(f"{c} " not in listed and not listed.rstrip().endswith(c) for c in earlier & set(prepared.plan.focus_codes))


def test_a_code_asked_when_introduced_gets_its_first_year(backends):
    prepared = prepare("When was G2211 introduced?", backends, today=TODAY)
    (note,) = [w.message for w in prepared.warnings if "G2211 first appears in CY" in w.message]
    year = int(note.split("first appears in CY")[1][:4])
    every, _ = value(backends.fee_db, ["G2211"], years=50)
    assert year == min(r.cy for r in every if not r.proposed) > min(r.cy for r in value(backends.fee_db, ["99213"],
                                                                                        years=50)[0])


def test_the_two_conversion_factors_price_the_code_at_each(backends):
    prepared = prepare("What are the two 2026 conversion factors and how much do they differ for 99214?", backends,
                       today=TODAY)
    row = _row(prepared, "99214", 2026)
    qp = next(nf for c, nf, _ in row.other_payments() if c.label.endswith(" QP"))
    (figure,) = [f for f in prepared.figures if f.kind is FigureKind.DIFFERENCE and f.setting == "non-facility"]
    assert figure.value == qp - row.payment_nonfac > 0


@pytest.mark.parametrize("question, said_", [
    ("Does the physician fee schedule pay for Part B drugs?", "average sales price"),
    ("Does Medicare pay sonographers separately when they perform an echocardiogram?", "does not pay clinical staff"),
])
def test_who_or_what_the_fee_schedule_does_not_pay_is_said(backends, question, said_):
    prepared = prepare(question, backends, today=TODAY)
    assert any(said_ in w.message for w in prepared.warnings)


def test_a_nurse_practitioner_is_not_clinical_staff(backends):
    prepared = prepare("What does a nurse practitioner get paid for 99213 in 2026?", backends, today=TODAY)
    assert not any("clinical staff" in w.message for w in prepared.warnings)


def test_the_limiting_charge_step_says_it_is_computed_unrounded(backends):
    prepared = prepare("What is the limiting charge for 66984 in 2026?", backends, today=TODAY)
    text = said(prepared)
    assert "109.25% of the fee, from the unrounded amount" in text
    row = _row(prepared, "66984", 2026)
    (figure,) = [f for f in prepared.figures if f.kind is FigureKind.LIMITING and f.setting == "facility"]
    assert abs(figure.value - row.payment_fac * Decimal("1.0925")) <= Decimal("0.01")


@pytest.mark.parametrize("question", ["What is the difference between a partial and a total hip replacement payment in 2026?",
                                      "What is the total RVU of 99213 and 99214 in 2026?"])
def test_total_in_a_procedure_or_measure_name_sums_nothing(backends, question):
    prepared = prepare(question, backends, today=TODAY)
    assert not _figures(prepared, FigureKind.TOTAL) and not _figures(prepared, FigureKind.TOTAL, "facility")


def test_total_as_a_sum_still_sums(backends):
    prepared = prepare("What do a total knee replacement and a total hip replacement pay in total in 2026?", backends,
                       today=TODAY)
    (figure,) = _figures(prepared, FigureKind.TOTAL, "facility")
    assert figure.value == _row(prepared, "27447", 2026).payment_fac + _row(prepared, "27130", 2026).payment_fac


def _local_multiple(prepared, place):
    (figure,) = [f for f in _figures(prepared, FigureKind.MULTIPLE) if f.place]
    assert place in figure.place
    assert not [f for f in _figures(prepared, FigureKind.TOTAL) if f.place == figure.place], "no plain local sum"
    assert not any("not computed here" in w.message for w in prepared.warnings)
    return figure, {r.hcpcs: r.payment_nonfac for r in prepared.rows
                    if r.locality == figure.place and r.cy == 2026 and not r.mod}


def test_an_endoscopic_family_at_a_locality_is_paid_less_the_base_there(backends):
    """The locality's GPCI-adjusted amounts under the same rule: the highest in full, the other less its base's
    amount at that locality (the base's locality row comes along as context)."""
    prepared = prepare("45380 and 45385 on the same day in Chicago in 2026 - total?", backends, today=TODAY)
    figure, local = _local_multiple(prepared, "IL 16")
    high, low = sorted((local["45380"], local["45385"]), reverse=True)
    assert figure.value == high + low - local["45378"]


def test_two_surgeries_at_a_locality_are_paid_100_and_50_there(backends):
    prepared = prepare("Colonoscopy with biopsy and an EGD on the same day in Seattle in 2026 - total?", backends,
                       today=TODAY)
    figure, local = _local_multiple(prepared, "WA 02")
    high, low = sorted((local["45380"], local["43235"]), reverse=True)
    assert abs(figure.value - (high + low / 2)) <= Decimal("0.005")


def test_reading_a_test_with_its_own_interpretation_code_is_that_code(backends):
    """"reading an EKG": the registry's interpretation entry (93010), not 93000 with a -26 the file has no row for."""
    prepared = prepare("What does Medicare pay a cardiologist for reading an EKG in 2026?", backends, today=TODAY)
    assert {r.hcpcs for r in prepared.rows if r.in_focus} == {"93010"}
    assert prepared.plan.modifier == ""


@pytest.mark.parametrize("question, cy, counted", [
    ("3 chest x-rays and a brain MRI in 2026 - total?", 2026, {"71045": 3, "70551": 1}),
    ("2 knee replacements and a hip replacement in 2025 - total?", 2025, {"27447": 2, "27130": 1}),
    ("3 99232 visits and 2 99233 visits in 2026 - total?", 2026, {"99232": 3, "99233": 2}),
])
def test_one_count_among_several_services_is_its_own_services(backends, question, cy, counted):
    """(probe round 17) A count beside an uncounted service, or "N CODE visits" twice: each count binds to its own code."""
    prepared = prepare(question, backends, today=TODAY)
    found = [(setting, f.value) for setting in ("non-facility", "facility")
             for f in _figures(prepared, FigureKind.TOTAL, setting)]
    assert found
    for setting, value_ in found:
        field = "payment_fac" if setting == "facility" else "payment_nonfac"
        assert value_ == sum(n * getattr(_row(prepared, code, cy), field) for code, n in counted.items())
    assert not _figures(prepared, FigureKind.VOLUME) and not _figures(prepared, FigureKind.VOLUME, "facility")


def test_an_egd_with_biopsy_is_43239(backends):
    prepared = prepare("A colonoscopy with biopsy and an EGD with biopsy on the same day in 2025", backends, today=TODAY)
    assert {r.hcpcs for r in prepared.rows if r.in_focus} == {"45380", "43239"}


def test_a_session_the_registry_names_is_no_unpriced_procedure(backends):
    prepared = prepare("43239 and 43235 during the same upper endoscopy in 2025 - total?", backends, today=TODAY)
    assert not any("not a procedure the registry names" in w.message for w in prepared.warnings)


def test_which_codes_are_new_is_counted_over_the_whole_file(backends):
    """(probe round 17) With no code or family named: the codes of the year's file the year before's does not hold,
    counted by the file itself here, not written in."""
    prepared = prepare("Which codes are new in 2026?", backends, today=TODAY)
    (note,) = [w.message for w in prepared.warnings if w.message.startswith("In the CMS CY2026 RVU file")]
    counted = backends.fee_db.execute(
        "SELECT count(*), count(*) FILTER (WHERE status = 'A') FROM current_rvu WHERE cy = 2026 AND mod = '' AND "
        "hcpcs NOT IN (SELECT hcpcs FROM current_rvu WHERE cy = 2025 AND mod = '')").fetchone()
    assert f"{counted[0]:,} codes (without a modifier) are not in the CY2025 file" in note
    assert f"{counted[1]:,} of them have status A" in note


def test_the_drug_itself_gets_the_asp_note(backends):
    prepared = prepare("Does the physician fee schedule pay for the chemotherapy drug itself in 2026?", backends,
                       today=TODAY)
    assert any("average sales price" in w.message for w in prepared.warnings)


def test_a_short_word_in_lower_case_is_no_misspelt_place(backends):
    """"for chiro spinal manipulation": "chiro" is one letter from Chico, CA, but a lower-case word of five letters
    or fewer is read as a word; "seatle" (six) and "Bostn" (capitalised) are still read as the places."""
    prepared = prepare("What does Medicare pay for chiro spinal manipulation in 2026?", backends, today=TODAY)
    assert not [r for r in prepared.rows if r.locality]
    assert {"98940", "98941", "98942"} <= {r.hcpcs for r in prepared.rows if r.in_focus}
    for question, place in (("99213 in seatle in 2026", "WA 02"), ("99213 in Bostn in 2026", "MA 01")):
        assert any(place in r.locality for r in prepare(question, backends, today=TODAY).rows if r.in_focus)


@pytest.mark.parametrize("question, place", [("99214 in dalas 2026", "TX 11"), ("99213 in Seattle and bostn in 2026", "MA 01")])
def test_misspelt_places_after_in_or_in_a_list_are_still_read(backends, question, place):
    """(probe round 18) "in dalas": a place word after "in" is respelled whatever its case; after "and" only in a list
    that already names a place."""
    prepared = prepare(question, backends, today=TODAY)
    assert any(place in r.locality for r in prepared.rows if r.in_focus)


def test_a_word_after_and_with_no_place_before_is_no_place(backends):
    prepared = prepare("What do 3 mammograms and 2 DEXAs pay in 2026?", backends, today=TODAY)
    assert not [r for r in prepared.rows if r.locality]


def test_ct_scans_are_not_caregiver_training(backends):
    prepared = prepare("2 head CTs and an abdominal ultrasound in 2026 - total?", backends, today=TODAY)
    assert {r.hcpcs for r in prepared.rows if r.in_focus} == {"70450", "76700"}
    (figure,) = _figures(prepared, FigureKind.TOTAL)
    assert figure.value == 2 * _row(prepared, "70450", 2026).payment_nonfac + _row(prepared, "76700", 2026).payment_nonfac


@pytest.mark.parametrize("question, codes", [
    ("What does a cystoscopy with biopsy pay in 2026?", {"52204"}),
    ("What does reading an echo pay in 2026?", {"93306"}),
])
def test_more_procedures_in_words(backends, question, codes):
    prepared = prepare(question, backends, today=TODAY)
    assert {r.hcpcs for r in prepared.rows if r.in_focus} == codes


def test_the_same_knee_scope_is_one_session(backends):
    prepared = prepare("29881 and 29877 during the same knee scope in 2025 - total?", backends, today=TODAY)
    assert _figures(prepared, FigureKind.MULTIPLE, "facility")


def test_a_code_left_out_of_a_counted_sum_keeps_the_sentence(backends):
    prepared = prepare("2 units of 96372 and a flu shot in 2026 - total payment?", backends, today=TODAY)
    assert "only 2 × 96372 pays" in said(prepared)


@pytest.mark.parametrize("question", ["Does Medicare pay for the flu vaccine itself under the fee schedule?",
                                      "How are biologics paid by Medicare Part B?"])
def test_vaccines_and_biologics_are_said_to_be_paid_outside_the_fee_schedule(backends, question):
    prepared = prepare(question, backends, today=TODAY)
    assert any("outside the Physician Fee Schedule" in w.message or "average sales price" in w.message
               for w in prepared.warnings)
