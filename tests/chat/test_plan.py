"""The question plan: what a question asks, read by code (table-driven), and the figures computed from it."""
from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from carenav_core.chat.figures import FigureKind, compute_figures
from carenav_core.chat.pipeline import mark_focus
from carenav_core.chat.plan import Intent, Setting, plan_question
from carenav_core.codes import detect
from tests.chat.values import make_row

TODAY = date(2026, 12, 1)


def plan(question: str):
    return plan_question(question, detect(question), TODAY)


@pytest.mark.parametrize("question, named, years, since, setting, intents", [
    ("Compare 99490 and 99439 payments in 2026", ("99490", "99439"), (2026,), None, Setting.BOTH,
     {Intent.COMPARE, Intent.LOOKUP}),
    ("How has 99490 been paid since 2023?", ("99490",), (), 2023, Setting.BOTH, {Intent.TREND, Intent.LOOKUP}),
    ("G0556 2024 vs 2025 facility payment", ("G0556",), (2024, 2025), None, Setting.FACILITY, {Intent.TREND}),
    ("What does 99214 pay in the office last year?", ("99214",), (2025,), None, Setting.NON_FACILITY, {Intent.LOOKUP}),
    ("99490 from 2021 to 2024", ("99490",), (2021, 2022, 2023, 2024), None, Setting.BOTH, {Intent.TREND}),
    ("G2211 + 99213 total payment in 2025", ("G2211", "99213"), (2025,), None, Setting.BOTH, {Intent.TOTAL}),
    ("How did CMS value G0557?", ("G0557",), (), None, Setting.BOTH, {Intent.HOW_VALUED}),
    ("What is the payment for 99490?", ("99490",), (), None, Setting.BOTH, {Intent.LOOKUP}),
])
def test_plans(question, named, years, since, setting, intents):
    p = plan(question)
    assert p.named_codes == named and p.years == years and p.since == since and p.setting is setting
    assert intents <= set(p.intents)
    assert Intent.DEFINITION not in p.intents            # "what is the payment" is a lookup, not a definition


def test_family_question_is_a_definition_of_the_family_members():
    p = plan("What is APCM and how is it valued?")
    assert p.named_codes == () and p.family_codes == ("G0556", "G0557", "G0558") and p.focus_codes == p.family_codes
    assert {Intent.DEFINITION, Intent.HOW_VALUED} <= set(p.intents)
    assert "G0556, G0557 and G0558" in p.summary()


@pytest.mark.parametrize("question, defines", [
    ("What is APCM?", True), ("What are e-visits?", True), ("What is the G2211 visit complexity add-on?", True),
    ("What are the consent requirements for APCM?", False),
    ("What is the time requirement for principal care management?", False),
    ("What are the billing rules for transitional care management?", False),
    ("What are the concurrent billing restrictions on G0557?", False),
    ("What is CCM for patients with multiple chronic conditions?", True),
])
def test_what_is_asks_what_a_code_is_but_what_are_its_requirements_asks_a_rule(question, defines):
    p = plan(question)
    assert (Intent.DEFINITION in p.intents) is defines
    assert defines or Intent.POLICY in p.intents


def test_code_free_question_is_policy_and_fr_document_numbers_are_not_years():
    p = plan("What does 2024-25382 say about telehealth?")
    assert p.intents == (Intent.POLICY,) and p.years == ()


def _row(code, cy, pay_nf, pay_f, proposed=False, global_days="XXX"):
    return make_row(hcpcs=code, cy=cy, proposed=proposed, label=f"[PFS CY{cy} RVU{cy % 100}D]",
                    payment_nonfac=Decimal(pay_nf), payment_fac=Decimal(pay_f), global_days=global_days)


def test_comparison_difference_and_percent_are_exact_and_labelled():
    p = plan("Compare 99490 and 99439 payments in 2026")
    rows = mark_focus([_row("99490", 2026, "66.13", "43.76"), _row("99439", 2026, "50.44", "30.73"),
                       _row("99490", 2025, "60.49", "47.87"), _row("99439", 2025, "45.93", "32.99")], p)
    assert [r.in_focus for r in rows] == [True, True, False, False]
    figures = compute_figures(rows, p)
    nonfac = next(f for f in figures if f.setting == "non-facility")
    assert nonfac.kind is FigureKind.DIFFERENCE and nonfac.value == Decimal("15.69")
    assert nonfac.percent == Decimal("31.1")                     # 15.69 / 50.44 = 31.106…%, half-up
    assert nonfac.label == "[computed: 99490 − 99439, PFS CY2026 RVU26D]"


def test_trend_changes_span_first_to_last_then_each_step():
    p = plan("How has 99490 been paid since 2024?")
    rows = mark_focus([_row("99490", y, pay, "40.00") for y, pay in ((2023, "62.69"), (2024, "62.58"),
                                                                    (2025, "60.49"), (2026, "66.13"))], p)
    changes = [f for f in compute_figures(rows, p) if f.setting == "non-facility"]
    assert [(f.inputs, f.value) for f in changes][0] == ((Decimal("62.58"), Decimal("66.13")), Decimal("3.55"))
    assert len(changes) == 3 and all("CY2023" not in f.label for f in changes)


def test_total_of_add_on_and_base():
    p = plan("G2211 + 99213 total payment in 2025")
    rows = [_row("G2211", 2025, "15.53", "15.53", global_days="ZZZ"), _row("99213", 2025, "88.95", "63.72")]
    figures = compute_figures(mark_focus(rows, p), p)
    assert {(f.setting, f.value) for f in figures} == {("non-facility", Decimal("104.48")), ("facility", Decimal("79.25"))}
    # two base codes of a family whose base codes are alternatives (two office visit levels) are not billed together:
    # "total" alone sums nothing; added up in so many words ("99213 + 99214") they are, said to be alternatives
    rows = [_row("99213", 2025, "88.95", "63.72"), _row("99214", 2025, "125.12", "92.01")]
    p = plan("99213 and 99214 total payment in 2025")
    assert not compute_figures(mark_focus(rows, p), p)
    p = plan("99213 + 99214 total payment in 2025")
    summed = compute_figures(mark_focus(rows, p), p)
    assert {f.value for f in summed} == {Decimal("214.07"), Decimal("155.73")} and not any(f.together for f in summed)


@pytest.mark.parametrize("question, intent", [
    ("What performance measurement applies to APCM practices?", Intent.POLICY),
    ("Which care transitions must practices billing 99490 manage?", Intent.POLICY),
    ("What about 99490?", Intent.LOOKUP),
    ("Tell me about the APCM codes", Intent.LOOKUP),
])
def test_a_question_with_a_topic_beyond_its_codes_is_a_rule_question(question, intent):
    plan = plan_question(question, detect(question), date(2026, 12, 1))
    assert intent in plan.intents


def test_a_trend_question_without_years_reaches_every_year_and_says_when_nothing_changed():
    """"Has the work RVU of 99487 ever changed?": every year is valued and shown; a value equal in every
    year is said to be unchanged (not "a change of +0.00"), one that moved and came back is not."""
    from carenav_core.chat.deterministic import figure_sentences, year_line
    from carenav_core.chat.pipeline import years_to_show
    p = plan("Has the work RVU for 99487 ever changed?")
    assert Intent.TREND in p.intents and p.measure == "work_rvu" and years_to_show(p, 4, TODAY) == 20
    assert years_to_show(plan("What does 99487 pay?"), 4, TODAY) == 4
    assert p.year_in_focus(2020, False, 2026) and "every year" in p.summary()

    def rows(*work):
        return mark_focus([make_row(hcpcs="99487", cy=2022 + i, label=f"[PFS CY{2022 + i} RVU{22 + i}D]",
                                    work_rvu=Decimal(w)) for i, w in enumerate(work)], p)
    (said,) = figure_sentences(compute_figures(rows("1.81", "1.81", "1.81"), p))
    assert said.startswith("99487's work RVU did not change from CY2022 to CY2024: it is 1.81 in every year")
    (said,) = figure_sentences(compute_figures(rows("1.81", "1.50", "1.81"), p))
    assert said.startswith("99487's work RVU is 1.81 in CY2022 and again in CY2024, with changes in between")
    assert year_line(rows("1.81")[0], Setting.BOTH, p.measure) == \
        "CY2022 (final): 99487 has work RVU 1.81 [PFS CY2022 RVU22D]."


def test_an_asked_year_without_a_row_is_said_with_the_years_held():
    """"What does G0556 pay in 2019?": the newest row shown instead is not passed off as 2019's."""
    from carenav_core.chat.events import WarningKind
    from carenav_core.chat.pipeline import missing_years_note
    held = [make_row(cy=2025), make_row(cy=2026, label="[PFS CY2026 RVU26C]")]
    (note,) = missing_years_note(mark_focus(held, plan("What does G0556 pay in 2019?")), plan("What does G0556 pay in 2019?"))
    assert note.kind is WarningKind.YEAR_NOT_FOUND
    assert note.message.startswith("No CY2019 fee schedule values for G0556 (the data hold it for CY2025 to CY2026)")
    (note,) = missing_years_note(held, plan("What will G0556 pay in 2030?"))
    assert "No CY2030 fee schedule values for G0556 (the newest are CY2026)" in note.message
    (note,) = missing_years_note(held, plan("How has G0556 been paid since 2021?"))
    assert "G0556 has fee schedule values only from CY2025" in note.message
    assert not missing_years_note(held, plan("What does G0556 pay in 2025?"))
    assert not missing_years_note(held, plan("What does G0556 pay?"))
    (note,) = missing_years_note(held, plan("What did the CY 2025 proposed rule set for G0556?"))
    assert "No CY2025 proposed-rule values for G0556 in the fee schedule data, so the final values" in note.message
    proposed = held + [make_row(cy=2025, proposed=True, label="[CY2025 NPRM Addendum B]")]
    assert not missing_years_note(proposed, plan("What did the CY 2025 proposed rule set for G0556?"))
    family = held + [make_row(hcpcs="G0557", cy=cy) for cy in (2025, 2026)]
    (note,) = missing_years_note(family, plan("What does APCM pay in 2019?"))
    assert note.message.startswith("No CY2019 fee schedule values for G0556 and G0557 (the data hold them for "
                                   "CY2025 to CY2026)")


@pytest.mark.parametrize("question, modifier", [
    ("What does 71046-26 pay?", "26"), ("71046 with modifier 26", "26"), ("What does 71046 TC pay?", "TC"),
    ("professional component of 93306", "26"), ("technical component of 93306", "TC"), ("TC modifier for 71046", "TC"),
    ("What does 99214 pay in 2026?", ""), ("G0556 26 times a year", ""), ("modifier 25 with 99214", ""),
])
def test_the_asked_payment_modifier(question, modifier):
    assert plan(question).modifier == modifier


def test_with_an_asked_modifier_its_rows_are_in_focus_and_figures_name_it():
    p = plan("How has 71046-26 changed since 2025?")
    rows = [make_row(hcpcs="71046", mod=mod, cy=cy, label=f"[PFS CY{cy} RVU{cy % 100}D]", total_nonfac=Decimal(t),
                     total_fac=Decimal(t)) for cy in (2025, 2026) for mod, t in (("", "1.00"), ("26", "0.30"),
                                                                                ("TC", "0.70"))]
    focused = [r for r in mark_focus(rows, p) if r.in_focus]
    assert {(r.mod, r.cy) for r in focused} == {("26", 2025), ("26", 2026)}
    (change, *_) = compute_figures(mark_focus(rows, p), p)
    assert change.codes == ("71046-26",) and change.label.startswith("[computed: 71046-26, ")
    assert all(not r.mod for r in mark_focus(rows, plan("How has 71046 changed since 2025?")) if r.in_focus)



@pytest.mark.parametrize("question, lookup", [
    ("Is 99439 payable in a facility setting?", True), ("Is G0556 payable?", True),
    ("Is G0556 payable when CCM is billed the same month?", False), ("Is G2211 payable with modifier 25?", False),
    ("Is 99439 payable with 99490 in the same month?", False)])
def test_payable_is_a_lookup_unless_the_question_sets_a_condition(question, lookup):
    p = plan(question)
    assert (Intent.LOOKUP in p.intents) is lookup and (Intent.POLICY in p.intents) is not lookup


def test_the_parts_of_a_row_asked_are_in_the_plan_and_its_summary():
    p = plan("What are the global days and PE RVUs for 27447, and is it payable?")
    assert p.parts == ("status", "pe", "global") and "asks for the PFS status, PE RVUs and global period" in p.summary()
    assert plan("What does 99214 pay?").parts == ()


@pytest.mark.parametrize("question, focus", [
    ("What's APCM level 2 worth?", ("G0557",)), ("Compare APCM level 1 and level 3 in 2026", ("G0556", "G0558")),
    ("How was Level 3 APCM valued?", ("G0558",)), ("What is APCM?", ("G0556", "G0557", "G0558")),
    ("chronic care management level 2", ("99437", "99439", "99487", "99489", "99490", "99491")),   # no levels
])
def test_a_family_level_asked_is_that_member(question, focus):
    p = plan(question)
    assert p.focus_codes == focus and p.named_codes == ()
    assert Intent.LOOKUP in plan("What's APCM level 2 worth?").intents


@pytest.mark.parametrize("question, years, reasons", [
    ("Why did payment for 99490 go up in 2026?", (2025, 2026), True),
    ("Why did 99214 pay less in 2025?", (2024, 2025), True),
    ("What drove the drop in G0556 payment?", (), True),      # no year: the pipeline takes the newest in the data
    ("Why has G0556's payment gone down?", (), True),
    ("Why is the payment for 27447 higher in a facility?", (), False),   # two settings, not two years
    ("Why does CMS reduce payment for 99213 when billed with modifier 25?", (), False),
    ("Why was 99490 changed to require 20 minutes?", (), False),          # a rule, not a payment change
    ("Why did CMS decide not to change 99490's valuation?", (), False),
    ("Why did 99487 change from 2021 to 2026?", (2021, 2022, 2023, 2024, 2025, 2026), True),
    ("Why does 99214 pay more than 99213?", (), False),                 # two codes compared, not a change
    ("Why is G0556 paid monthly?", (), False),                          # why, but nothing moved
    ("Why did the conversion factor fall in 2025?", (2025,), False),     # no code: the CF answer, not rows
])
def test_a_why_question_about_a_change_asks_for_the_two_years_and_what_moved_it(question, years, reasons):
    read = plan(question)
    assert read.reasons is reasons and read.years == years
    if reasons:
        assert Intent.TREND in read.intents and "why it changed" in read.summary()


def test_what_moved_a_payment_is_its_total_rvus_and_the_conversion_factor():
    before = make_row(hcpcs="99490", cy=2025, total_nonfac=Decimal("1.87"), total_fac=Decimal("1.48"),
                      cf=Decimal("32.3465"), label="[PFS CY2025 RVU25D]")
    after = make_row(hcpcs="99490", cy=2026, vintage="rvu26c", total_nonfac=Decimal("1.98"), total_fac=Decimal("1.31"),
                     cf=Decimal("33.4009"), label="[PFS CY2026 RVU26C]")
    read = plan("Why did payment for 99490 go up in 2026?")
    figures = compute_figures(mark_focus([before, after], read), read)
    drivers = {f.setting: f for f in figures if f.kind is FigureKind.DRIVER}
    assert set(drivers) == {"non-facility total RVUs", "facility total RVUs", "conversion factor"}
    assert drivers["conversion factor"].value == Decimal("1.0544") and drivers["conversion factor"].percent == Decimal("3.3")
    assert drivers["non-facility total RVUs"].inputs == (Decimal("1.87"), Decimal("1.98"))
    change = next(f for f in figures if f.kind is FigureKind.CHANGE and f.setting == "non-facility")
    # their own label: a sentence citing the payment change cannot state the CF change as the payment's
    assert {d.label for d in drivers.values()} == {"[computed: 99490 drivers, PFS CY2025 RVU25D → PFS CY2026 RVU26C]"}
    assert change.label == "[computed: 99490, PFS CY2025 RVU25D → PFS CY2026 RVU26C]"
    assert change.inputs == (Decimal("60.49"), Decimal("66.13"))       # 1.87 x 32.3465 and 1.98 x 33.4009, to cents
    plain = plan("How did 99490's payment change from 2025 to 2026?")
    assert not any(f.kind is FigureKind.DRIVER for f in compute_figures(mark_focus([before, after], plain), plain))


def test_an_add_on_question_asks_for_the_rows_global_period():
    read = plan("Is 99439 an add-on code?")
    assert read.parts == ("global",) and Intent.LOOKUP in read.intents and Intent.POLICY not in read.intents


def test_a_large_family_named_without_a_code_gets_no_first_member_differences():
    read = plan("Which CCM code pays the most in the facility setting?")
    assert Intent.COMPARE in read.intents and len(read.focus_codes) > 3
    rows = [make_row(hcpcs=code, total_fac=Decimal(total)) for code, total in
            zip(read.focus_codes, ("1.31", "0.92", "2.37", "1.31", "1.31", "1.96"))]
    assert not [f for f in compute_figures(mark_focus(rows, read), read) if f.kind is FigureKind.DIFFERENCE]
    small = plan("Compare the APCM levels")
    apcm = [make_row(hcpcs=code) for code in small.focus_codes]
    assert [f for f in compute_figures(mark_focus(apcm, small), small) if f.kind is FigureKind.DIFFERENCE]
