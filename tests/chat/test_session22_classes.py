"""Session 22: failure classes found asking the chat, fixed as classes. Asked through the real pipeline (real DuckDB,
real embedded PostgreSQL, the deterministic writer); counts and amounts are read from the loaded CMS files in the
test, never written here."""
from __future__ import annotations

import math
from collections import Counter
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

import pytest

from carenav_core.chat.evidence import build_evidence
from carenav_core.chat.factors import GAF_NOTE, STATE_NAMES, asks_gaf, asks_locality_count
from carenav_core.chat.guard import check_sentence
from carenav_core.chat.figures import FigureKind
from carenav_core.chat.pipeline import prepare
from carenav_core.codes.detect import detect
from carenav_core.codes.families import load_families
from carenav_core.pfs.factors import gpci_rows
from tests.chat.test_question_classes import said
from tests.chat.test_session19_classes import _national as _row

TODAY = date(2026, 12, 1)


def _per_state(fee_db, cy):
    return Counter(r.state for r in gpci_rows(fee_db, cy))


@pytest.mark.parametrize("question, state, cy", [
    ("How many payment localities does California have?", "CA", 2026),
    ("Number of Medicare localities in Texas in 2025", "TX", 2025),
    ("how many localities are in Washington state", "WA", 2026),
    ("How many PFS localities does New York have in 2024?", "NY", 2024),
])
def test_a_state_s_localities_are_counted(backends, fee_db, question, state, cy):
    """"How many payment localities does California have?" listed 29 "California is in payment locality ..." clauses
    cut off mid-sentence, with no count."""
    per_state = _per_state(fee_db, cy)
    prepared = prepare(question, backends, today=TODAY)
    text = said(prepared)
    assert (f"{STATE_NAMES[state]} ({state}) has {per_state[state]} of the {sum(per_state.values())} payment "
            f"localities of the CY {cy} GPCI file") in text
    assert text.index(f"has {per_state[state]} of the") < text.index("Across the")      # the count first
    assert "is in payment locality" not in text
    assert text.count("has a work GPCI of") == (per_state[state] if per_state[state] <= 3 else 0)


@pytest.mark.parametrize("question, fewest", [
    ("Which state has the most payment localities?", False),
    ("How many Medicare payment localities are there in 2026?", False),
    ("Which states have the fewest localities?", True),
])
def test_localities_counted_by_state(backends, fee_db, question, fewest):
    per_state = _per_state(fee_db, 2026)
    (top, n), (second, m) = per_state.most_common(2)
    ones = sorted(st for st, k in per_state.items() if k == 1)
    text = said(prepare(question, backends, today=TODAY))
    assert (f"The CY 2026 GPCI file has {sum(per_state.values())} payment localities in {len(per_state)} states and "
            f"territories; the most are in {STATE_NAMES[top]} ({top}) {n}, {STATE_NAMES[second]} ({second}) {m}") in text
    assert f"{len(ones)} have one locality each" in text
    assert (("(one statewide locality: " + ", ".join(ones) + ")") in text) is fewest


def test_the_count_passes_the_output_guard(backends):
    """Every number of the count sentences is a checked fact (a model repeating them is not withheld)."""
    for question in ("How many payment localities does California have?", "Which states have the fewest localities?"):
        prepared = prepare(question, backends, today=TODAY)
        evidence = build_evidence(prepared.rows, prepared.sources, prepared.checked)
        line = next(s for s in said(prepared).splitlines() if "payment localities" in s and "GPCI file" in s)
        assert check_sentence(line.removeprefix("- "), evidence) == ()
        assert check_sentence(line.removeprefix("- ").replace(" 29 ", " 31 "), evidence) != () or " 29 " not in line


@pytest.mark.parametrize("question", ["What is the GAF for Miami in 2026?",
                                      "geographic adjustment factor for Seattle"])
def test_a_gaf_asked_shows_the_gpcis_and_says_the_gaf_is_not_loaded(backends, question):
    """"What is the GAF for Miami?" answered with unrelated ACO paragraphs: the GAF is not in the loaded files, and
    the GPCIs it is made of are."""
    prepared = prepare(question, backends, today=TODAY)
    assert any(w.message == GAF_NOTE for w in prepared.warnings)
    assert [r.key for r in prepared.gpci if r.asked] and "has a work GPCI of" in said(prepared)


@pytest.mark.parametrize("text, counted, gaf", [
    ("How many payment localities does Florida have?", True, False),
    ("What locality is King County in?", False, False),
    ("What are the GPCIs for Seattle?", False, False),
    ("the GAF of Manhattan", False, True),
    ("Does the gaffe in the rule matter?", False, False),
])
def test_which_questions_count_or_ask_a_gaf(text, counted, gaf):
    assert (asks_locality_count(text), asks_gaf(text)) == (counted, gaf)


def test_a_city_read_with_its_state_is_priced_there(backends):
    """"Bend OR vs Portland OR": Bend (a word, left out of the city table) was not read, so only Portland was shown."""
    prepared = prepare("Compare 99213 in Bend OR vs Portland OR 2026", backends, today=TODAY)
    places = {" ".join(r.locality.split()[:2]) for r in prepared.rows if r.in_focus and r.locality}
    assert places == {"OR 99", "OR 01"}, places
    assert "OR 99 REST OF OREGON pays" in said(prepared)


@pytest.mark.parametrize("question, family", [
    ("Which RTM codes are new in 2026?", "RTM"),
    ("Which remote patient monitoring codes were added in 2026?", "RPM"),
    ("Which care management codes are new in 2026?", None),
])
def test_new_codes_of_a_family_are_said_in_the_prose(backends, fee_db, question, family):
    """"Which RTM codes are new in 2026?" computed its answer as a warning only; a rule question with rows left it
    out of the prose, which quoted rule paragraphs instead."""
    prepared = prepare(question, backends, today=TODAY)
    codes = sorted({r.hcpcs for r in prepared.rows})
    new = sorted(c for c in codes if fee_db.execute(
        "SELECT min(cy) FROM current_rvu WHERE hcpcs = ? AND mod = ''", [c]).fetchone()[0] == 2026)
    text = said(prepared)
    if new:
        assert "New in CY2026: " + (new[0] if len(new) == 1 else ", ".join(new[:-1]) + " and " + new[-1]) in text
    else:
        assert " new in CY2026: " in text and "None of " in text
    assert "What the rule text says" not in text or text.index("CY2026") < text.index("What the rule text says")


# --- probe round 25 (chat) ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("question, code", [
    ("What did Medicare pay for a 99204 new patient visit in 2022?", "99204"),
    ("99204 new patient visit payment 2022", "99204"),
    ("What is the 99214 patient coinsurance in 2026?", "99214"),
    ("99213 physician fee for 2026", "99213"),
])
def test_a_code_before_a_singular_person_noun_is_a_code(question, code):
    """"a 99204 new patient visit" was blanked as a count of patients ("20250 beneficiaries"), so no code was read."""
    assert detect(question).explicit == (code,)


@pytest.mark.parametrize("question", ["20250 beneficiaries were attributed to the ACO", "an ACO with 15000 patients",
                                      "12000 more physicians joined"])
def test_a_five_digit_count_of_people_is_still_no_code(question):
    assert detect(question).explicit == ()


def test_a_code_after_a_count_of_patients_stays_a_code():
    assert detect("What do 30 99214 patients bring in?").explicit == ("99214",)


def test_a_drop_asked_where_none_fell_is_said(backends):
    """"Which psychotherapy code lost the most": 'lost' was not read as a drop, and twelve code-vs-code sentences led."""
    prepared = prepare("Which psychotherapy code lost the most from 2025 to 2026: 90832, 90834 or 90837?", backends,
                       today=TODAY)
    changes = {f.codes[0]: f.percent for f in prepared.figures if f.kind is FigureKind.CHANGE
               and f.setting == "non-facility" and not f.place}
    first = said(prepared).splitlines()[0] if said(prepared).startswith("- ") else \
        next(s for s in said(prepared).splitlines() if s.startswith("- "))
    if all(p > 0 for p in changes.values()):
        least = min(changes, key=changes.get)
        assert "no national non-facility payment fell" in first and f"{least}'s rose the least" in first
    else:
        assert "fell the most" in first


def test_how_many_fit_into_one_is_a_ratio(backends):
    prepared = prepare("How many 99213s fit into one 99205 in 2026?", backends, today=TODAY)
    (ratio,) = [f for f in prepared.figures if f.kind is FigureKind.RATIO and f.setting == "non-facility"]
    a, b = _row(prepared, "99205", 2026).payment_nonfac, _row(prepared, "99213", 2026).payment_nonfac
    assert ratio.value == (a / b).quantize(Decimal("0.01"), ROUND_HALF_UP)
    assert f"{ratio.value} of 99213 equal one 99205" in said(prepared)


def test_a_number_to_hit_an_amount_is_computed(backends):
    prepared = prepare("Number of 99215s per week to hit $5,000 in 2026", backends, today=TODAY)
    (needed,) = [f for f in prepared.figures if f.kind is FigureKind.NEEDED and f.setting == "non-facility"]
    pay = _row(prepared, "99215", 2026).payment_nonfac
    assert needed.value == math.ceil(Decimal(5000) / pay)
    assert f"it takes {needed.value} services to bring in $5,000" in said(prepared)


@pytest.mark.parametrize("question, cy", [("How much does Medicare pay per RVU in 2023?", 2023),
                                          ("What's the dollar value of one RVU in 2025?", 2025)])
def test_pay_per_rvu_is_the_conversion_factor(backends, question, cy):
    prepared = prepare(question, backends, today=TODAY)
    asked = [r for r in prepared.factors if r.in_focus]
    assert asked and {r.cy for r in asked} == {cy}
    assert f"${asked[0].amount}" in said(prepared)


def test_how_much_more_under_the_qp_cf_is_the_code_s_difference(backends):
    prepared = prepare("What's the QP conversion factor for 2026 and how much more does 27447 pay under it?", backends,
                       today=TODAY)
    row = _row(prepared, "27447", 2026)
    (gap,) = [f for f in prepared.figures if f.kind is FigureKind.DIFFERENCE and "QP − non-QP" in f.label]
    non_qp = next(fac for c, _, fac in row.other_payments() if c.label.endswith("non-QP"))
    assert row.cf_label.endswith(" QP") and gap.value == row.payment_fac - non_qp > 0
    assert f"pays ${gap.value} more" in said(prepared)


def test_a_daily_rate_for_some_days(backends):
    """"12 patients a day ... for 5 days" was priced for one day ("no number of days was given")."""
    prepared = prepare("If I see 12 patients a day billed 99214 for 5 days, what's weekly revenue in 2026?", backends,
                       today=TODAY)
    (volume,) = [f for f in prepared.figures if f.kind is FigureKind.VOLUME and f.setting == "non-facility"]
    assert volume.counts == (60,) and volume.value == 60 * _row(prepared, "99214", 2026).payment_nonfac


def test_units_of_one_code_billed_with_another_each_month(backends):
    """"99490 plus two 99439 every month for 6 months": the two were read as two services a month of both codes."""
    prepared = prepare("99490 plus two 99439 every month for 6 months, 2026 total", backends, today=TODAY)
    (total,) = [f for f in prepared.figures if f.kind is FigureKind.VOLUME and f.setting == "non-facility"
                and " + " in f.codes[0]]
    each = _row(prepared, "99490", 2026).payment_nonfac + 2 * _row(prepared, "99439", 2026).payment_nonfac
    assert total.value == 6 * each and total.counts == (6,)


def test_a_code_and_a_family_added_by_name_are_both_asked(backends):
    """"99484 and the collaborative care codes" showed 99484 alone: a written code narrowed the answer to itself."""
    prepared = prepare("BHI codes 2026: 99484 and the collaborative care codes", backends, today=TODAY)
    bhi = next(f for f in load_families() if f.key == "BHI")
    assert set(bhi.codes) <= set(prepared.plan.focus_codes)
    assert prepare("What does 99490 (chronic care management) pay in 2026?", backends,
                   today=TODAY).plan.focus_codes == ("99490",)


@pytest.mark.parametrize("cy, patient", [(2026, Decimal("0.15")), (2022, Decimal("0.20"))])
def test_a_polyp_removed_at_a_screening_colonoscopy_lowers_the_coinsurance(backends, cy, patient):
    """45385 after a screening colonoscopy was split 80/20 "once the deductible is met"; the law waives the deductible
    and sets the coinsurance at 15% in 2023-2026 (CAA 2021 section 122)."""
    prepared = prepare(f"If a polyp is removed during a screening colonoscopy in {cy}, what's the patient's "
                       "coinsurance on 45385?", backends, today=TODAY)
    row = _row(prepared, "45385", cy)
    (split,) = [f for f in prepared.figures if f.kind is FigureKind.COINSURANCE and f.setting == "non-facility"
                and f"CY{cy}" in f.label]
    medicare = (row.payment_nonfac * (1 - patient)).quantize(Decimal("0.01"), ROUND_HALF_UP)
    assert split.value == medicare and split.inputs[1] == row.payment_nonfac - medicare
    assert f"the patient's {patient * 100:.0f}% coinsurance is ${row.payment_nonfac - medicare:,}" in said(prepared)
    assert "with no Part B deductible" in said(prepared)
    # without "screening" the same code is the usual 80/20
    plain = prepare(f"What's the patient's coinsurance on 45385 in {cy}?", backends, today=TODAY)
    assert all("80% / patient 20%" in f.label for f in plain.figures if f.kind is FigureKind.COINSURANCE)


def test_cost_sharing_of_an_unpaid_preventive_code_is_said(backends):
    """"Does cost sharing apply to G0009?" (status X) stated the status and nothing on cost sharing."""
    prepared = prepare("Does cost sharing apply to pneumococcal vaccine administration G0009?", backends, today=TODAY)
    text = said(prepared)
    assert "G0009 is a pneumococcal shot's administration, a preventive service with no coinsurance" in text
    assert "(status X)" in text


def test_a_present_tense_question_of_a_change_in_one_year(backends):
    """"Does the 2026 efficiency adjustment cut 99214's work RVU?" showed the 2026 row and no answer."""
    prepared = prepare("Does the 2026 efficiency adjustment cut 99214's work RVU?", backends, today=TODAY)
    before, after = _row(prepared, "99214", 2025).work_rvu, _row(prepared, "99214", 2026).work_rvu
    text = said(prepared)
    if before == after:
        assert f"99214's work RVU did not change from CY2025 to CY2026: it is {after}" in text
    else:
        assert "99214's work RVU" in text.split("\n")[2] and str(after) in text


@pytest.mark.parametrize("question", [
    "What does Medicare pay for a year of RPM for one patient with 99453, 99454 and 99457 in 2026?",
    "Annual RPM revenue per patient in 2026: 99453, 99454 and 99457",
])
def test_a_year_of_monitoring_for_one_patient_bills_the_set_up_once(backends, question):
    """"A year of RPM for one patient" computed nothing; the set-up (99453) is billed once per episode of care, the
    device supply (99454, each 30 days) and management (99457, a calendar month) each month."""
    from carenav_core.codes.families import payment_unit
    assert payment_unit("99453") == "once per episode of care" and payment_unit("99454") == "per 30 days"
    prepared = prepare(question, backends, today=TODAY)
    (total,) = [f for f in prepared.figures if f.kind is FigureKind.VOLUME and f.setting.startswith("non-facility")
                and " + " in f.codes[0]]
    pay = {c: _row(prepared, c, 2026).payment_nonfac for c in ("99453", "99454", "99457")}
    assert total.value == pay["99453"] + 12 * pay["99454"] + 12 * pay["99457"]
    assert total.codes == ("99453 + 12 × 99454 + 12 × 99457",)
    assert f"bring in ${total.value:,} at the national non-facility payment" in said(prepared)


def test_the_rule_named_as_the_agent_of_a_change_is_no_rule_topic(backends):
    """"Will the 2026 rule lower 27447's payment?" was read as a question about a rule topic: no change computed."""
    prepared = prepare("Will the 2026 rule lower 27447's payment?", backends, today=TODAY)
    before, after = _row(prepared, "27447", 2025).payment_fac, _row(prepared, "27447", 2026).payment_fac
    assert f"from ${before:,} to ${after:,}" in said(prepared)
    rule = prepare("Did the 2026 final rule change the supervision rule for APCM?", backends, today=TODAY)
    assert not any(f.kind is FigureKind.CHANGE for f in rule.figures)
