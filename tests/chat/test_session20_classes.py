"""Session 20: failure classes found asking the chat, fixed as classes. Asked through the real pipeline (real DuckDB,
real embedded PostgreSQL, the deterministic writer); amounts are read from the rows the answer shows, never written
here."""
from __future__ import annotations

from datetime import date
from decimal import ROUND_HALF_UP, Decimal

import pytest

from carenav_core.chat.figures import FigureKind
from carenav_core.chat.pipeline import prepare
from carenav_core.chat.plan import asked_volume

TODAY = date(2026, 12, 1)


def _cents(x: Decimal) -> Decimal:
    return x.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def _row(prepared, code, cy, place=False):
    return next(r for r in prepared.rows if r.hcpcs == code and not r.mod and bool(r.locality) == place
                and not r.proposed and r.cy == cy)


def _half_pe(row) -> Decimal:
    return _cents((row.total_nonfac - row.pe_nonfac_rvu / 2) * row.cf) if not row.locality else None


@pytest.mark.parametrize("question, visits, counted", [
    ("A patient gets 97110 x 3 units twice a week for 6 weeks. What does Medicare pay in 2026?", 12, {"97110": 3}),
    ("3 units of 97110, 3 times a week for 4 weeks: what does Medicare pay in 2026?", 12, {"97110": 3}),
    ("Patient gets 2 units of 97140 and 1 unit of 97110 twice weekly for 8 weeks. Total 2026 payment?", 16,
     {"97140": 2, "97110": 1}),
    ("4 units of 97530 3x/week for 2 weeks in 2026 - what is paid?", 6, {"97530": 4}),
])
def test_units_at_a_frequency_of_visits_are_each_visits_units(backends, question, visits, counted):
    """"97110 x 3 units twice a week for 6 weeks": the visits are 2 a week for 6 weeks (12), each billing 3 units on
    its day under the therapy rule; the units are not the weekly count (it priced 18 units in full)."""
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.volume.services(False)[0] == visits
    assert {c: n for c, n in prepared.plan.units} == {c: n for c, n in counted.items() if n > 1}
    (one,) = [f for f in prepared.figures if f.kind is FigureKind.MULTIPLE and f.setting == "non-facility"
              and not f.place]
    units = sorted(((_row(prepared, c, 2026), n) for c, n in counted.items()), key=lambda u: -u[0].pe_nonfac_rvu)
    paid = [row.payment_nonfac if i == 0 else _half_pe(row) for i, row in enumerate(r for r, n in units
                                                                                     for _ in range(n))]
    assert one.value == sum(paid)
    (note,) = [w.message for w in prepared.warnings if w.message.startswith("Per visit:")]
    assert f"{visits} visits bring in ${one.value * visits:,}" in note
    full = sum(r.payment_nonfac * n for r, n in units) * visits
    assert f"(${full:,} with every unit paid in full)" in note
    # every volume figure paying each unit in full is replaced by the note
    assert not [f for f in prepared.figures if f.kind is FigureKind.VOLUME and f.setting.startswith("non-facility")]


def test_units_at_a_frequency_at_a_place_compare_with_the_visits_whole_sum(backends):
    prepared = prepare("Patient gets 2 units of 97140 and 1 unit of 97110 twice weekly for 8 weeks. Total 2026 "
                       "payment in Seattle?", backends, today=TODAY)
    (local,) = [f for f in prepared.figures if f.kind is FigureKind.MULTIPLE and f.setting == "non-facility"
                and f.place]
    (note,) = [w.message for w in prepared.warnings if w.message.startswith("Per visit:")]
    full = (_row(prepared, "97110", 2026, True).payment_nonfac + 2 * _row(prepared, "97140", 2026, True).payment_nonfac)
    assert f"16 visits bring in ${local.value * 16:,} (${full * 16:,} with every unit paid in full)" in note


@pytest.mark.parametrize("text, services", [
    ("20 patients a day, 5 days a week, 50 weeks a year", 5000),      # no units: a daily rate, as before
    ("99490 for 100 patients a month for a year", 1200),
    ("99214 twice a month for 6 months", None),                      # no units written: no visits read here
    ("4 units of 97110 for 30 patients, twice a week for 10 weeks", 600),
    ("3 units of 97110 once a week for 3 months", 13),
])
def test_a_frequency_reads_visits_only_with_units_written(text, services):
    volume = asked_volume(text, ("97110", "99490", "99214"))
    if services is None:
        assert volume is None or not volume.per_visit
    else:
        assert volume.services(False)[0] == services


# ---- probe round 21

from carenav_core.chat.figures import SECOND_SHARE  # noqa: E402
from carenav_core.pfs.columns import BY_NAME  # noqa: E402
from carenav_core.pfs.rows import UNPAID_STATUS  # noqa: E402
from tests.chat.test_question_classes import said  # noqa: E402


@pytest.mark.parametrize("question, cy, counted", [
    ("What does 99487 plus two 99489 pay in 2023?", 2023, {"99487": 1, "99489": 2}),
    ("99490 and three 99439 in 2026: total?", 2026, {"99490": 1, "99439": 3}),
    ("What do 99497 and two additional 99498 pay in 2025?", 2025, {"99497": 1, "99498": 2}),
])
def test_a_count_written_as_a_word_before_a_code_is_its_units(backends, question, cy, counted):
    """C1: "99487 plus two 99489" bills two 99489 (it priced one)."""
    prepared = prepare(question, backends, today=TODAY)
    assert dict(prepared.plan.units) == {c: n for c, n in counted.items() if n > 1}
    (total,) = [f for f in prepared.figures if f.kind in (FigureKind.TOTAL, FigureKind.MULTIPLE)
                and f.setting.startswith("non-facility") and not f.place]
    assert total.value == sum(_row(prepared, c, cy).payment_nonfac * n for c, n in counted.items())


def test_a_word_count_before_a_therapy_code_is_one_days_units(backends):
    prepared = prepare("What does 99214 plus three 97110 pay in 2025?", backends, today=TODAY)
    (day,) = [f for f in prepared.figures if f.kind is FigureKind.MULTIPLE and f.setting == "non-facility"]
    therapy = _row(prepared, "97110", 2025)
    assert day.value == _row(prepared, "99214", 2025).payment_nonfac + therapy.payment_nonfac + 2 * _half_pe(therapy)


def test_a_word_count_of_visits_stays_a_volume():
    from carenav_core.chat.plan import asked_units
    assert asked_units("We bill two 99213 visits a month", ("99213",)) == ()


@pytest.mark.parametrize("question, best, top", [
    ("What is the highest paying chronic care management code in 2025?", "99487", True),
    ("What is the highest-paying transitional care management code in 2025?", "99496", True),
    ("What's the lowest paid TCM code in 2026?", "99495", False),
])
def test_highest_paying_asks_which_code_pays_the_most(backends, question, best, top):
    """C3: "the highest paying X code" names the code (it printed the rows and no answer)."""
    prepared = prepare(question, backends, today=TODAY)
    text = said(prepared)
    assert f"{best} has the {'highest' if top else 'lowest'} non-facility payment" in text
    focus = [r for r in prepared.rows if r.in_focus and not r.proposed and not r.locality]
    pick = (max if top else min)(focus, key=lambda r: r.payment_nonfac)
    assert pick.hcpcs == best


@pytest.mark.parametrize("question, code, cy", [
    ("27447 with AS modifier 2026 payment", "27447", 2026),
    ("What does 27130-AS pay in 2025?", "27130", 2025),
])
def test_the_as_modifier_written_before_modifier_is_the_assistants_share(backends, question, code, cy):
    """C4: "27447 with AS modifier": 13.6% of the surgeon's fee (modifier 80 already worked)."""
    prepared = prepare(question, backends, today=TODAY)
    (figure,) = [f for f in prepared.figures if f.kind is FigureKind.ASSISTANT and f.setting == "facility"]
    assert figure.value == _cents(_row(prepared, code, cy).payment_fac * Decimal("0.136"))


@pytest.mark.parametrize("question, code, cy", [
    ("29881 billed as a second procedure with modifier 51 in 2023, what's the allowed amount?", "29881", 2023),
    ("What is 27447-51 paid in 2026?", "27447", 2026),
    ("What does 11042 pay as a second procedure in 2025?", "11042", 2025),
])
def test_one_code_as_a_second_procedure_is_paid_half(backends, question, code, cy):
    """C4: modifier 51 / "as a second procedure": 50% of the fee under MULT PROC 1-3 (the claim pricer's rule)."""
    prepared = prepare(question, backends, today=TODAY)
    found = [f for f in prepared.figures if f.kind is FigureKind.SECOND]
    assert found
    row = _row(prepared, code, cy)
    for figure in found:
        amount = row.payment_fac if figure.setting == "facility" else row.payment_nonfac
        assert figure.value == _cents(amount * SECOND_SHARE)
        assert figure.label in said(prepared)


def test_a_code_of_a_status_medicare_does_not_pay_shows_no_payment_in_the_table(backends):
    """C6: 99396 (status N) showed $120.98 in the table's payment column while the prose said it is not paid."""
    prepared = prepare("What does 99396 pay in 2025?", backends, today=TODAY)
    row = _row(prepared, "99396", 2025)
    assert row.status in UNPAID_STATUS
    assert BY_NAME["payment_nonfac"].display(row) is None and BY_NAME["payment_fac"].display(row) is None
    assert BY_NAME["payment_unit"].display(row) == f"not paid (status {row.status})"
    assert BY_NAME["payment_nonfac"].text(row) == str(row.payment_nonfac)      # the CSV keeps the product


def test_a_count_of_a_code_with_a_rate_is_a_volume_of_its_services(backends):
    """C5 (125): "if we bill 5000 99213 a year" prices the volume's change (it gave the per-code change only)."""
    prepared = prepare("How much will my practice lose in 2025 vs 2024 if we bill 5000 99213 a year?", backends,
                       today=TODAY)
    (change,) = [f for f in prepared.figures if f.kind is FigureKind.CHANGE and f.setting.startswith("non-facility")
                 and "5000 ×" in f.label]
    assert change.value == 5000 * (_row(prepared, "99213", 2025).payment_nonfac -
                                   _row(prepared, "99213", 2024).payment_nonfac)


@pytest.mark.parametrize("question", ["Is G2012 still active in 2025?", "Was 99441 deleted in 2025?",
                                      "Is 99442 still valid in 2025?"])
def test_whether_a_code_is_still_active_is_answered_from_the_files(backends, question):
    """C9 (124): "Is G2012 still active in 2025?" was read as a rule question: a CY2025 excerpt about other codes
    answered it, and the note that the code is not in the CY2025 file was hidden."""
    from carenav_core.chat.deterministic import data_notes
    from carenav_core.chat.plan import Intent
    prepared = prepare(question, backends, today=TODAY)
    assert Intent.LOOKUP in prepared.plan.intents
    assert any("not in the CY2025 fee schedule file" in note for note in data_notes(prepared))
    assert "not in the CY2025 fee schedule file" in said(prepared)


def test_a_years_line_says_the_setting_the_file_marks_na(backends):
    """C7 (025): the per-year lines stated 93306's facility amount with no NA note, while its row sentence and the
    change (not computed for an NA setting) treat it as NA."""
    prepared = prepare("Change in 93306 payment from 2022 to 2025, facility and non-facility", backends, today=TODAY)
    assert all(r.fac_na == "NA" for r in prepared.rows if r.in_focus and r.hcpcs == "93306")
    lines = [line for line in said(prepared).splitlines() if "(final): 93306 pays" in line]
    assert len(lines) == 4 and all("the file marks its facility PE NA" in line for line in lines)


# ---- probe round 22

@pytest.mark.parametrize("question, cy, counted", [
    ("What do twelve 99309 and four 99310 pay in 2026?", 2026, {"99309": 12, "99310": 4}),
    ("eight 99490 plus eleven 99439 in 2025 total?", 2025, {"99490": 8, "99439": 11}),
    ("150 99214 and 40 99215 in 2025: total payment?", 2025, {"99214": 150, "99215": 40}),
])
def test_larger_counts_of_codes_billed_together_are_each_codes_units(backends, question, cy, counted):
    """C1 (round 22): counts above ten and of three digits were dropped ($767.89 for twelve 99309 and four 99310)."""
    prepared = prepare(question, backends, today=TODAY)
    assert dict(prepared.plan.units) == counted
    (total,) = [f for f in prepared.figures if f.kind is FigureKind.TOTAL and f.setting.startswith("non-facility")]
    assert total.value == sum(_row(prepared, c, cy).payment_nonfac * n for c, n in counted.items())


@pytest.mark.parametrize("question, cy, code, visits", [
    ("What does 99213 twice a week for 6 weeks pay in 2025?", 2025, "99213", 12),
    ("99213 once a week for 10 weeks in 2025: total?", 2025, "99213", 10),
    ("G0283 3x/week for 4 weeks in 2026 - what does it pay?", 2026, "G0283", 12),
])
def test_a_frequency_of_visits_alone_is_the_volume(backends, question, cy, code, visits):
    """C2 (round 22): "99213 twice a week for 6 weeks" priced two units ($177.90); it is 12 visits."""
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.units == () and prepared.plan.volume.services(False)[0] == visits
    (volume,) = [f for f in prepared.figures if f.kind is FigureKind.VOLUME and f.setting.startswith("non-facility")]
    assert volume.value == visits * _row(prepared, code, cy).payment_nonfac


def test_an_anesthesia_amount_per_unit_is_the_localitys_anesthesia_cf(backends):
    """C13 (round 22): "anesthesia payment per unit in Chicago" got rule excerpts about drug rebates; the ANES file's
    Chicago figure answers it, as "anesthesia conversion factor in Chicago" does."""
    asked = prepare("What is the anesthesia payment per unit in Chicago in 2025?", backends, today=TODAY)
    control = prepare("What is the anesthesia conversion factor in Chicago in 2025?", backends, today=TODAY)
    assert asked.anesthesia and [(r.label, r.amount) for r in asked.anesthesia] == \
        [(r.label, r.amount) for r in control.anesthesia]


def test_procedures_on_the_same_knee_are_one_session(backends):
    """C5 (round 22): "29881 and 29877 on the same knee" summed both at 100% ($1,102.56); one session's endoscopic
    family pays the highest in full and the other less its base (the answer "same day" already gave)."""
    knee = prepare("What do 29881 and 29877 pay on the same knee in a facility in 2026?", backends, today=TODAY)
    day = prepare("What do 29881 and 29877 pay on the same day in a facility in 2026?", backends, today=TODAY)
    values = [sorted(f.value for f in p.figures if f.kind is FigureKind.MULTIPLE and not f.place) for p in (knee, day)]
    assert values[0] and values[0] == values[1]
