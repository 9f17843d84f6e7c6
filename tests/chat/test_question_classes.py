"""Classes of analyst questions a second reader found answered beside the point (session 10), each read and answered
through the real pipeline (real DuckDB, real embedded PostgreSQL, the deterministic writer). Values are read from the
rows the answer shows, never written here."""
from __future__ import annotations

import re
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

import pytest

from carenav_core.chat.deterministic import _CODE_LIST_ITEM, DeterministicWriter, row_sentence
from carenav_core.chat.events import WarningKind
from carenav_core.chat.figures import FigureKind
from carenav_core.chat.pipeline import prepare
from carenav_core.chat.plan import Intent, plan_question
from carenav_core.codes import detect
from carenav_core.codes.detect import spelled_out
from carenav_core.pfs.rows import payment

TODAY = date(2026, 12, 1)


def plan(question: str):
    return plan_question(question, detect(question), TODAY)


def said(prepared) -> str:
    return "".join(DeterministicWriter().stream(prepared))


@pytest.mark.parametrize("question, measure", [
    ("What is the MP RVU of 99214 in 2022 and 2026?", "mp_rvu"),
    ("How has the malpractice RVU of 99490 changed since 2022?", "mp_rvu"),
    ("What is the PE RVU of 99213 in 2025 and 2026?", "pe_rvu"),
    ("How did the facility practice expense RVU of 99213 change from 2025 to 2026?", "pe_rvu"),
    ("What is the work RVU of 99213 in 2025 and 2026?", "work_rvu"),
    ("What are the total RVUs of 99213 in 2025 and 2026?", "total_rvu"),
    ("What does 99213 pay in 2025 and 2026?", "payment"),
])
def test_the_rvu_a_question_names_is_what_its_figures_compare(question, measure):
    assert plan(question).measure == measure


@pytest.mark.parametrize("question, field, settings", [
    ("What is the MP RVU of 99214 in 2022 and 2026?", "mp_rvu", {"malpractice RVU"}),
    ("How did the facility PE RVU of 99213 change from 2025 to 2026?", "pe_fac_rvu", {"facility PE RVU"}),
])
def test_a_component_rvu_asked_across_years_is_stated_and_its_change_computed(backends, question, field, settings):
    prepared = prepare(question, backends, today=TODAY)
    years = prepared.plan.years
    before, after = (next(r for r in prepared.rows if r.hcpcs == prepared.plan.named_codes[0] and r.cy == y
                          and not r.mod and not r.proposed and not r.locality) for y in (years[0], years[-1]))
    changes = [f for f in prepared.figures if f.kind is FigureKind.CHANGE and f.rows == (before.label, after.label)]
    assert {f.setting for f in changes} == settings
    assert changes[0].inputs == (getattr(before, field), getattr(after, field))
    assert changes[0].value == getattr(after, field) - getattr(before, field)
    text = said(prepared)
    assert f"from {getattr(before, field)} to {getattr(after, field)}" in text and changes[0].label in text
    assert "total RVU went" not in text                     # not the totals instead of the asked component


@pytest.mark.parametrize("question, reasons", [
    ("Why did 99213 pay less in 2023 than in 2022?", True),       # one code over time (its family is not asked)
    ("Why did 99214 pay more in 2026 than in 2025?", True),
    ("Why does 99214 pay more than 99213?", False),               # two codes compared
    ("Why does APCM level 3 pay more than level 1?", False),      # two of a family's levels compared
])
def test_why_a_code_paid_less_than_in_another_year_is_a_change_over_time(question, reasons):
    assert plan(question).reasons is reasons


def test_why_a_code_paid_less_than_in_another_year_says_what_moved_it(backends):
    prepared = prepare("Why did 99213 pay less in 2023 than in 2022?", backends, today=TODAY)
    drivers = [f for f in prepared.figures if f.kind is FigureKind.DRIVER]
    assert drivers and prepared.plan.years == (2022, 2023)
    assert drivers[0].label in said(prepared)


@pytest.mark.parametrize("question, total", [
    ("Which add-on codes are in the chronic care management family?", False),
    ("How many codes are in the principal care management family and which is the add-on?", False),
    ("What do the APCM codes pay combined?", False),
    ("What does G2211 pay when billed with 99213?", True),
    ("What do 99490 and 99439 pay together in 2026?", True),
])
def test_a_total_adds_up_codes_written_out_never_a_familys_members(question, total):
    assert (Intent.TOTAL in plan(question).intents) is total


def test_an_add_on_question_about_a_family_states_no_sum(backends):
    prepared = prepare("Which add-on codes are in the chronic care management family?", backends, today=TODAY)
    assert not [f for f in prepared.figures if f.kind is FigureKind.TOTAL]
    text = said(prepared)
    assert "Billed together" not in text and "ZZZ" in text       # each add-on's global period says it


@pytest.mark.parametrize("question, intent", [
    ("What did CMS finalize about cost sharing for APCM?", Intent.POLICY),
    ("Is there cost-sharing for chronic care management?", Intent.POLICY),
    ("What does APCM cost in 2026?", Intent.LOOKUP),
])
def test_cost_sharing_is_a_rule_question_and_cost_a_lookup(question, intent):
    intents = plan(question).intents
    assert intent in intents and (intent is Intent.LOOKUP or Intent.LOOKUP not in intents)


def test_a_cost_sharing_question_quotes_the_rule_text_first(backends):
    prepared = prepare("What did CMS finalize about cost sharing for APCM?", backends, today=TODAY)
    text = said(prepared)
    prose = text.split("What the rule text says:", 1)
    assert len(prose) == 2 and "cost sharing" in prose[1].split("\n- Under")[0].lower()


@pytest.mark.parametrize("written, code", [("G-2211", "G2211"), ("G 2211", "G2211"), ("g-0556", "G0556"),
                                           ("J-9035", "J9035")])
def test_a_code_written_with_a_separator_is_read_and_said(backends, written, code):
    prepared = prepare(f"What does {written} pay in 2025?", backends, today=TODAY)
    assert prepared.plan.named_codes == (code,)
    read = [w for w in prepared.warnings if w.kind is WarningKind.READ_AS]
    assert read and written in read[0].message and code in read[0].message


@pytest.mark.parametrize("text", ["What does Part B 2024 cover?", "Table B-2024 of the rule", "See 89 FR 97710",
                                  "What is G2211?", "Call 555-1234"])
def test_text_that_holds_no_split_code_is_left_as_written(text):
    assert spelled_out(text) == (text, ())


@pytest.mark.parametrize("written, family", [("chronic care managment", "CCM"), ("principle care management", "PCM"),
                                             ("remote therapeutic monitorng", "RTM")])
def test_a_family_name_misspelt_by_a_letter_is_read_as_the_family(backends, written, family):
    prepared = prepare(f"What does {written} pay in 2026?", backends, today=TODAY)
    assert family in prepared.detection.families and prepared.rows
    assert any(w.kind is WarningKind.READ_AS and written in w.message for w in prepared.warnings)


def test_words_near_no_family_name_are_not_read_as_one():
    text = "What did CMS say about chronic kidney disease management?"
    assert spelled_out(text) == (text, ())


def test_a_facility_amount_of_a_code_the_file_marks_facility_na_says_so(backends):
    row = next(r for r in prepare("What does 99453 pay in the facility setting?", backends, today=TODAY).rows
               if r.fac_na == "NA" and r.payment_fac is not None)
    assert "facility PE NA" in row_sentence(row)


def test_an_entry_of_a_list_of_codes_is_not_quoted_as_valuation():
    assert _CODE_LIST_ITEM.search("( 13 ) 99495 and 99496 (codes for transitional care management services)")
    assert _CODE_LIST_ITEM.search("(B) HCPCS codes: ( 1 ) G0019 and G0022 (codes for community health integration)")
    assert not _CODE_LIST_ITEM.search("(2) G0023 Principal Illness Navigation services by certified or trained "
                                      "auxiliary personnel under the direction of a physician; 60 minutes per month")


def test_a_year_with_two_conversion_factors_by_date_states_the_amounts_at_both(backends):
    prepared = prepare("What did 99213 pay in January 2024?", backends, today=TODAY)
    row = next(r for r in prepared.rows if r.hcpcs == "99213" and r.cy == 2024 and not r.mod and not r.locality)
    (cf, nonfac, fac), = [p for p in row.other_payments() if "QP" not in p[0].label]
    assert nonfac == payment(row.total_nonfac, cf.value) and nonfac != row.payment_nonfac
    text = said(prepared)        # through the output guard: each amount is one the row states
    assert f"${cf.value}" in text and f"${nonfac}" in text and f"${fac}" in text and row.cf_label in text


def test_three_codes_written_out_and_compared_get_every_pair(backends):
    prepared = prepare("Compare 99424, 99426 and 99490 in 2026", backends, today=TODAY)
    pairs = {f.codes for f in prepared.figures if f.kind is FigureKind.DIFFERENCE}
    assert pairs == {("99424", "99426"), ("99424", "99490"), ("99426", "99490")}


@pytest.mark.parametrize("question, years, trend", [
    ("Did the facility PE RVU for 99213 drop in 2026?", (2025, 2026), True),     # a change of a value in one year
    ("Did 99490's payment go up in 2025?", (2024, 2025), True),
    ("What did 99490 pay in 2025?", (2025,), False),
    ("Did CMS change the supervision rule for APCM in 2025?", (2025,), False),    # a rule question
    ("Has G0556 changed?", (), True),
])
def test_did_a_value_change_in_a_year_compares_it_with_the_year_before(question, years, trend):
    p = plan(question)
    assert p.years == years and (Intent.TREND in p.intents) is trend


@pytest.mark.parametrize("question, key, code, priced", [
    ("What is the PC/TC indicator for 71046?", "pctc", "71046", None),
    ("What is the bilateral surgery indicator for 27447?", "bilat_surg", "27447", None),
    ("What does 27447 pay with modifier 50?", "bilat_surg", "27447", FigureKind.BILATERAL),
    ("Can an assistant at surgery be paid for 27130?", "asst_surg", "27130", None),
    ("What does an assistant at surgery get for 27130?", "asst_surg", "27130", FigureKind.ASSISTANT),
    ("What is paid for 11042 and 17000 in the same session?", "mult_proc", "11042", FigureKind.MULTIPLE),
])
def test_a_payment_policy_indicator_asked_is_stated_first_with_its_meaning_and_rule(backends, question, key, code,
                                                                                   priced):
    """The indicator's sentence leads, unless an amount it decides was asked: then that amount leads and the
    indicator follows it."""
    from carenav_core.pfs.indicators import indicator_values, load_indicators
    prepared = prepare(question, backends, today=TODAY)
    fact = next(f for f in prepared.indicators if f.meaning.key == key and f.code == code)
    row = next(r for r in prepared.rows if r.hcpcs == code and r.cy == fact.cy and not r.mod and not r.locality)
    value = indicator_values(backends.fee_db, [(row.cy, code, "")])[(row.cy, code, "")][key]
    assert fact.meaning == load_indicators().explain(key, value)          # the file's value, the book's meaning
    text = said(prepared)
    first = text.split("\n\n", 1)[1].lstrip("- ").splitlines()[0]      # after the no-model notice
    if priced is None:
        assert first == fact.sentence() and fact.label in text          # first, and through the output guard
    else:
        lead = next(f for f in prepared.figures if f.kind is priced)
        assert lead.label in first and fact.sentence() in text
    assert any(s.label == fact.label for s in prepared.sources)         # the model sees it as an excerpt too


def test_supervision_asked_as_a_rule_is_no_indicator_question():
    assert plan("What supervision does APCM require?").indicators == ()
    assert plan("What is the physician supervision indicator for 70551?").indicators == ("phys_supv",)


def test_a_model_sentence_with_another_indicator_value_or_share_is_withheld(backends):
    from carenav_core.chat.evidence import build_evidence
    from carenav_core.chat.guard import check_sentence
    prepared = prepare("Can an assistant at surgery be paid for 27130?", backends, today=TODAY)
    fact = prepared.indicators[0]
    evidence = build_evidence(prepared.rows, prepared.sources, prepared.checked, prepared.unpriced)
    assert check_sentence(fact.sentence(), evidence) == ()
    wrong = fact.sentence().replace("16%", "25%")
    assert wrong != fact.sentence() and check_sentence(wrong, evidence)


@pytest.mark.parametrize("question, how_valued", [
    ("What is the facility practice expense RVU for 99491 in 2025?", False),   # asks for the number
    ("How many RVUs is 99213 in 2026?", False),
    ("What was the work RVU for 99487 in 2020?", False),
    ("How was the work RVU for 99439 set?", True),                            # asks how it was set
    ("Why is the G0556 work RVU 0.25?", True),
    ("How were the practice expense inputs of APCM level 2 (G0557) set?", True),
    ("How did CMS value G0557?", True),
])
def test_an_rvu_named_asks_how_it_was_valued_only_with_a_how_or_why(question, how_valued):
    intents = plan(question).intents
    assert (Intent.HOW_VALUED in intents) is how_valued and intents != (Intent.POLICY,)


def test_a_change_asked_in_a_place_is_each_localitys_own_and_says_where(backends):
    prepared = prepare("How did 99213 payments in Texas change from 2024 to 2026?", backends, today=TODAY)
    changes = [f for f in prepared.figures if f.kind is FigureKind.CHANGE]
    assert len({f.place for f in changes}) > 1
    for f in changes:                                   # both rows of a change are of one locality
        before, after = (next(r for r in prepared.rows if r.label == label) for label in f.rows)
        assert before.locality == after.locality == f.place
    assert "national" not in said(prepared).split("CY2024 to CY2026")[0][-80:]


def test_two_places_named_are_compared(backends):
    prepared = prepare("What does 99214 pay in Miami compared to Seattle?", backends, today=TODAY)
    differences = [f for f in prepared.figures if f.kind is FigureKind.DIFFERENCE]
    assert differences and all(len(set(f.codes)) == 2 and "MIAMI" in f.codes[0] for f in differences)
    rows = {r.label: r for r in prepared.rows}
    f = differences[0]
    assert f.value == rows[f.rows[0]].payment_nonfac - rows[f.rows[1]].payment_nonfac and f.label in said(prepared)


@pytest.mark.parametrize("question, kind", [
    ("What is the OPPS payment for 99213 in a hospital outpatient department?", WarningKind.NOT_IN_DATA),
    ("How much do Medicare Advantage plans pay for 99490?", WarningKind.NOT_IN_DATA),
    ("What was the proposed 2025 conversion factor?", WarningKind.YEAR_NOT_FOUND),
])
def test_what_the_data_do_not_hold_is_said(backends, question, kind):
    assert any(w.kind is kind for w in prepare(question, backends, today=TODAY).warnings)


def test_a_dollar_amount_needs_a_row_or_an_excerpt_that_writes_it_in_dollars(backends):
    from carenav_core.chat.evidence import build_evidence
    from carenav_core.chat.guard import check_sentence
    prepared = prepare("What is the bilateral surgery indicator for 27447?", backends, today=TODAY)
    fact = prepared.indicators[0]
    evidence = build_evidence(prepared.rows, prepared.sources, prepared.checked, prepared.unpriced)
    assert check_sentence(fact.sentence(), evidence) == ()
    for amount in ("$150", "$40.70", "$2,026"):           # numbers the indicator excerpt holds, never as dollars
        assert check_sentence(f"With modifier 50, 27447 pays {amount} {fact.label} {fact.row_label}.", evidence)
        assert check_sentence(f"With modifier 50, 27447 pays {amount} {fact.label}.", evidence)


@pytest.mark.parametrize("question, expected", [
    ("How much did the PE RVU of 99213 drop from 2025 to 2026?", ("pe_rvu", (2025, 2026), False)),
    ("Did 99490 drop in 2026?", ("payment", (2025, 2026), False)),
    ("Did CMS change the payment rules for G0556?", ("payment", (), True)),
    ("How has 99215 changed since the 2021 E/M changes?", ("payment", (), False)),
    ("99490 fac vs nonfac 2026", ("payment", (2026,), False)),
])
def test_more_readings(question, expected):
    p = plan(question)
    assert (p.measure, p.years, Intent.POLICY in p.intents) == expected
    if "since" in question:
        assert p.since == 2021
    if "fac vs nonfac" in question:
        assert Intent.LOOKUP in p.intents and p.setting.name == "BOTH"


def test_a_ranking_lists_the_asked_codes_highest_first_with_ties_at_the_cut(backends):
    prepared = prepare("What are the top 3 highest paid CCM codes in 2026?", backends, today=TODAY)
    text = said(prepared)
    line = next(l for l in text.splitlines() if l.startswith("- Ranked by CY2026 facility payment"))
    rows = [r for r in prepared.rows if r.in_focus and r.cy == 2026 and not r.mod and not r.locality]
    amounts = sorted((r.payment_fac for r in rows), reverse=True)
    listed = [a for a in amounts if a >= amounts[2]]                  # the top three and any tied with the third
    assert line.count("[PFS CY2026") == len(listed)
    assert [f"${a}" for a in listed] == re.findall(r"\$\d+\.\d\d", line)


@pytest.mark.parametrize("question", ["Is 99439 billable alone without 99490?", "Can 99427 be billed on its own?",
                                      "Is G2211 a standalone code?"])
def test_whether_a_code_stands_alone_is_answered_with_its_global_period(question):
    assert "global" in plan(question).parts


@pytest.mark.parametrize("question, down", [
    ("Which TCM code grew the most between 2021 and 2026?", False),
    ("Which APCM code dropped the most in the facility setting from 2025 to 2026?", True),
])
def test_which_code_changed_the_most_is_named_from_the_computed_changes(backends, question, down):
    prepared = prepare(question, backends, today=TODAY)
    assert Intent.COMPARE not in prepared.plan.intents          # no code-minus-code lines for a change question
    spans = {}
    for f in prepared.figures:
        if f.kind is FigureKind.CHANGE:
            spans.setdefault((f.codes[0], f.setting), f)
    line = next(l for l in said(prepared).splitlines() if "the most in percent" in l or "more in percent" in l)
    setting = "facility" if "national facility" in line else "non-facility"
    mine = [f for (code, s), f in spans.items() if s == setting]
    best = (min if down else max)(mine, key=lambda f: f.percent)
    assert best.label in line and ("fell" if down else "rose") in line


def test_an_office_visit_family_named_is_not_the_office_setting():
    assert plan("Which E/M office visit code had the largest increase from 2025 to 2026?").setting.name == "BOTH"
    assert plan("What does 99214 pay in the office?").setting.name == "NON_FACILITY"


def test_a_county_the_county_file_does_not_list_is_priced_in_rest_of_state_and_says_so(backends):
    prepared = prepare("What does 99214 pay in Montgomery County, Texas in 2026?", backends, today=TODAY)
    notes = [w.message for w in prepared.warnings if w.kind is WarningKind.READ_AS]
    assert any("Montgomery County" in n and "REST OF TEXAS" in n for n in notes)
    assert {r.locality for r in prepared.rows if r.in_focus} == {"TX 99 REST OF TEXAS"}
    listed = prepare("What does 99214 pay in Miami-Dade County, Florida in 2026?", backends, today=TODAY)
    assert {r.locality for r in listed.rows if r.in_focus} == {"FL 04 MIAMI"}
    assert not any(w.kind is WarningKind.READ_AS for w in listed.warnings)


@pytest.mark.parametrize("question, lead, place", [
    ("What did 99214 pay nationally on February 1, 2024?", "Jan 1-Mar 8", ""),
    ("What did 99214 pay in Seattle in January 2024?", "Jan 1-Mar 8", "WA 02"),
    ("What did 99214 pay for services before March 9, 2024?", "Jan 1-Mar 8", ""),
    ("What did 99214 pay on 2024-06-01?", "Mar 9-Dec 31", ""),
    ("What did 99214 pay in Seattle in 2024?", "Mar 9-Dec 31", "WA 02"),
])
def test_a_date_of_service_leads_with_the_conversion_factor_in_force_that_day(backends, question, lead, place):
    prepared = prepare(question, backends, today=TODAY)
    row = next(r for r in prepared.rows if r.in_focus and r.hcpcs == "99214" and r.cy == 2024)
    assert (place in row.label) if place else not row.locality
    sentence = next(line for line in said(prepared).splitlines() if "99214" in line and "2024" in line)
    first = re.search(r"at the CY2024 (.+?) conversion factor of \$([\d.]+) the .+? payment is \$([\d.,]+)", sentence)
    assert first and first.group(1) == lead
    if lead == row.cf_label.removeprefix("CY2024 "):
        assert first.group(3) == str(row.payment_nonfac)
    else:                                 # the other period's amount: the row's own, stated in the parenthesis
        other = next(p for p in row.other_payments() if p[0].label.endswith(lead))
        assert first.group(2) == str(other[0].value) and first.group(3) == str(other[1])
        assert f"{row.cf_label} conversion factor of ${row.cf}: ${row.payment_nonfac} non-facility" in sentence


@pytest.mark.parametrize("question, code, last", [
    ("What does g2012 pay now?", "G2012", 2024),          # replaced by 98016 from CY2025
    ("What does 99441 pay?", "99441", 2024),              # telephone E/M, deleted for CY2025
    ("What did 99441 pay in 2025?", "99441", 2024),
    ("What does 99201 pay in 2025 and 2026?", "99201", 2020),
])
def test_a_code_gone_from_the_newest_files_is_not_priced_as_current(backends, question, code, last):
    prepared = prepare(question, backends, today=TODAY)
    assert max(r.cy for r in prepared.rows if r.hcpcs == code and r.in_focus) == last
    notes = [w.message for w in prepared.warnings if w.kind is WarningKind.YEAR_NOT_FOUND]
    assert any(code in n and "deleted or replaced" in n and f"CY{last}" in n for n in notes), notes
    current = prepare("What does 99490 pay?", backends, today=TODAY)
    assert not any(w.kind is WarningKind.YEAR_NOT_FOUND for w in current.warnings)


@pytest.mark.parametrize("question, code, status, said", [
    ("What does Medicare pay for 0591T in 2026?", "0591T", "C", "Medicare Administrative Contractor prices it"),
    ("How is anesthesia code 00790 paid in 2025?", "00790", "J", "base units + time units"),
    ("Does Medicare pay for routine nail trimming 11719 in 2026?", "11719", "R", "restricted coverage: paid only"),
    ("What does 36591 pay in 2026?", "36591", "T", "no other fee schedule service is billed"),
])
def test_statuses_paid_otherwise_or_on_a_condition_say_how(backends, question, code, status, said):
    prepared = prepare(question, backends, today=TODAY)
    row = next(r for r in prepared.rows if r.in_focus and r.hcpcs == code)
    assert row.status == status
    sentence = next(line for line in said_lines(prepared) if code in line and row.label in line)
    assert said in sentence
    if status in "CJ":                    # no amount: the file's $0.00 is not a payment
        assert "$0.00" not in sentence and "no fee schedule amount is stated" in sentence


def said_lines(prepared) -> list[str]:
    return said(prepared).splitlines()


def test_a_setting_the_file_marks_na_is_neither_ranked_nor_summed(backends):
    prepared = prepare("Rank the RPM codes 99453, 99454, 99457 and 99458 by 2026 payment.", backends, today=TODAY)
    facility = next(line for line in said_lines(prepared) if "facility payment, highest first" in line
                    and "non-facility" not in line)
    assert "99454" not in facility.split("(")[0] and "99453 and 99454 left out" in facility
    summed = prepare("What's the total 2026 payment for one RPM patient's first month: 99453 + 99454 + 99457?",
                     backends, today=TODAY)
    totals = {f.setting: f for f in summed.figures if f.kind is FigureKind.TOTAL}
    assert set(totals["non-facility"].codes) == {"99453", "99454", "99457"}
    facility = totals["facility"]                       # 99453/99454 facility PE NA: only 99457's amount, said so
    row = next(r for r in summed.rows if r.in_focus and r.hcpcs == "99457" and r.cy == 2026)
    assert facility.codes == ("99457",) and facility.value == row.payment_fac and "left out" in facility.how
    assert "only 99457 pays" in said(summed)


@pytest.mark.parametrize("question, top, bottom, field", [
    ("How many 99213 visits equal one total knee replacement (27447) in work RVUs in 2026?", "27447", "99213",
     "work_rvu"),
    ("What is the ratio of 99215 to 99213 payment in 2026?", "99215", "99213", "payment_nonfac"),
    ("How many times more does 99215 pay than 99212 in 2026?", "99215", "99212", "payment_fac"),
])
def test_a_division_asked_is_computed_and_nothing_else(backends, question, top, bottom, field):
    prepared = prepare(question, backends, today=TODAY)
    ratios = [f for f in prepared.figures if f.kind is FigureKind.RATIO]
    assert ratios and all(f.kind is FigureKind.RATIO for f in prepared.figures)      # no sums or differences
    row = {r.hcpcs: r for r in prepared.rows if r.in_focus and r.cy == 2026}
    expected = (getattr(row[top], field) / getattr(row[bottom], field)).quantize(Decimal("0.01"), ROUND_HALF_UP)
    setting = "work RVU" if field == "work_rvu" else ("facility" if field == "payment_fac" else "non-facility")
    figure = next(f for f in ratios if f.setting == setting)
    assert figure.codes == (top, bottom) and figure.value == expected
    assert f"is {expected} times {bottom}'s" in said(prepared)


@pytest.mark.parametrize("question, code, part, total", [
    ("What percent of 99214's 2026 non-facility total RVUs is practice expense?", "99214", "pe_nonfac_rvu",
     "total_nonfac"),
    ("What share of 99490's payment comes from work in 2026?", "99490", "work_rvu", "total_fac"),
])
def test_a_components_share_of_the_total_is_computed(backends, question, code, part, total):
    prepared = prepare(question, backends, today=TODAY)
    row = next(r for r in prepared.rows if r.in_focus and r.hcpcs == code and r.cy == 2026)
    expected = (getattr(row, part) / getattr(row, total) * 100).quantize(Decimal("0.1"), ROUND_HALF_UP)
    shares = {f.setting: f.value for f in prepared.figures if f.kind is FigureKind.SHARE}
    assert shares[("facility" if total == "total_fac" else "non-facility") + " total RVU"] == expected
    assert f"is {expected}% of {code}'s" in said(prepared)


@pytest.mark.parametrize("question, years", [
    ("What did 99497 pay last year and the year before?", (2024, 2025)),
    ("What did 99214 pay the year before last?", (2024,)),
    ("How has 99214 changed over the past three years?", (2024, 2025, 2026)),
    ("How much did the 2021 E/M revaluation raise the work RVU of 99215?", (2020, 2021)),
])
def test_relative_and_implied_years_are_all_read(question, years):
    assert plan(question).years == years


@pytest.mark.parametrize("question, winner, word", [
    ("Between 2023 and 2026, which grew more in percent: 99490 or 99214?", "99214", "rose more"),
    ("Did 99213 or 99214 increase more from 2025 to 2026?", "99214", "rose more"),
    ("Which E/M office visit code had the largest increase from 2025 to 2026?", "99205", "rose the most"),
])
def test_which_grew_more_is_answered_with_a_verdict(backends, question, winner, word):
    prepared = prepare(question, backends, today=TODAY)
    spans = {}                  # each code's whole span: the first change computed for it (the steps follow)
    for f in prepared.figures:
        if f.kind is FigureKind.CHANGE and f.setting == "non-facility" and f.codes[0] != "G2211":   # ranked apart
            spans.setdefault(f.codes[0], f)
    best = max(spans.values(), key=lambda f: f.percent)
    assert best.codes[0] == winner
    verdict = next(line for line in said(prepared).splitlines() if word in line)
    assert f"{winner}'s national non-facility payment {word} in percent" in verdict and best.label in verdict


def test_a_qualifying_apm_participant_is_answered_at_the_qp_conversion_factor(backends):
    prepared = prepare("What does 99214 pay for a qualifying APM participant (QP) in 2026?", backends, today=TODAY)
    row = next(r for r in prepared.rows if r.in_focus and r.hcpcs == "99214" and r.cy == 2026)
    assert row.cf_label == "CY2026 QP"              # the row is priced at the QP CF, so every figure computes with it
    other = next(c for c in row.other_cfs if c.label == "CY2026 non-QP")
    sentence = next(line for line in said(prepared).splitlines() if row.label in line)
    assert f"at the CY2026 QP conversion factor of ${row.cf} the national non-facility payment is " \
           f"${payment(row.total_nonfac, row.cf)}" in sentence and row.payment_nonfac == payment(row.total_nonfac, row.cf)
    assert f"${payment(row.total_nonfac, other.value)} non-facility" in sentence         # the non-QP amount, after it


def test_a_volume_or_change_asked_at_another_cf_of_the_year_computes_with_it(backends):
    qp = prepare("As a qualifying APM participant, what would 100 visits a month of 99214 bring in over 2026?",
                 backends, today=TODAY)
    row = next(r for r in qp.rows if r.in_focus and r.hcpcs == "99214" and r.cy == 2026)
    volume = qp.figures[0]
    assert volume.kind is FigureKind.VOLUME and volume.counts == (1200,)
    assert volume.value == 1200 * payment(row.total_nonfac, row.cf) and row.cf_label == "CY2026 QP"
    dated = prepare("What did 99214 pay in January 2024 versus January 2025?", backends, today=TODAY)
    early = next(r for r in dated.rows if r.in_focus and r.hcpcs == "99214" and r.cy == 2024)
    assert early.cf_label == "CY2024 Jan 1-Mar 8"
    change = next(f for f in dated.figures if f.kind is FigureKind.CHANGE and f.setting == "non-facility")
    assert change.inputs[0] == payment(early.total_nonfac, early.cf)
    quarter = prepare("What did 99213 pay in the first quarter of 2024?", backends, today=TODAY)
    assert any("fall under two conversion factors" in w.message for w in quarter.warnings)


@pytest.mark.parametrize("question, codes, alternatives", [
    ("What is the total of G0556, G0557 and G0558 in 2026?", ("G0556", "G0557", "G0558"), True),
    ("What do 99213 and G2211 pay combined in 2026?", ("99213", "G2211"), False),
])
def test_a_sum_asked_in_so_many_words_is_computed_and_alternatives_are_said_to_be(backends, question, codes,
                                                                                   alternatives):
    prepared = prepare(question, backends, today=TODAY)
    total = prepared.figures[0]
    rows = {r.hcpcs: r.payment_nonfac for r in prepared.rows if r.in_focus and not r.proposed and r.cy == 2026}
    assert total.kind is FigureKind.TOTAL and total.codes == codes and total.together is not alternatives
    assert total.value == sum(rows[c] for c in codes)
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert ("alternatives, not billed together" in lead) is alternatives


def test_a_combined_payment_across_years_states_the_sums_change_first(backends):
    prepared = prepare("What was the combined national non-facility payment for G0556, G0557 and G0558 in 2025 "
                       "versus 2026?", backends, today=TODAY)
    change = prepared.figures[0]
    totals = [f for f in prepared.figures if f.kind is FigureKind.TOTAL]
    assert change.kind is FigureKind.CHANGE and change.codes == ("G0556 + G0557 + G0558",)
    assert change.inputs == (totals[0].value, totals[-1].value) and change.value == totals[-1].value - totals[0].value


@pytest.mark.parametrize("question, mod, meaning", [
    ("What does 99214-25 pay in 2026?", "25", "separately identifiable"),
    ("What does 99213 with modifier 95 pay for telehealth in 2026?", "95", "telehealth"),
    ("What does 20610-59 pay?", "59", "distinct procedural service"),
])
def test_a_modifier_the_file_has_no_rows_for_is_said_not_dropped(backends, question, mod, meaning):
    prepared = prepare(question, backends, today=TODAY)
    notes = [w.message for w in prepared.warnings if w.kind is WarningKind.MODIFIER_NOT_FOUND]
    assert any(f"Modifier {mod} has no rows of its own" in n and meaning in n for n in notes), notes
    assert not plan("Which modifier is used with 99214?").other_modifiers


@pytest.mark.parametrize("question, given, place", [
    ("My MAC paid $92.03 for 99213 in the office in 2025 - does that match the national fee schedule amount?",
     "92.03", ""),
    ("We were paid $153.12 for 99214 in Seattle in 2026, is that right?", "153.12", "WA 02"),
])
def test_an_amount_the_question_gives_is_checked_against_the_row(backends, question, given, place):
    prepared = prepare(question, backends, today=TODAY)
    checks = [f for f in prepared.figures if f.kind is FigureKind.STATED]
    row = next(r for r in prepared.rows if r.in_focus and r.label in checks[0].rows)
    assert (place in row.label) if place else not row.locality
    first = checks[0]
    assert first.inputs == (Decimal(given), row.payment_nonfac) and first.value == Decimal(given) - row.payment_nonfac
    assert f"The ${given} given" in said(prepared)


def test_why_a_value_changed_says_when_the_years_rule_text_is_not_indexed(backends):
    prepared = prepare("What's the facility PE RVU for 99214 in 2026 vs 2025, and why did it drop so much?", backends,
                       today=TODAY)
    notes = [w.message for w in prepared.warnings if w.kind is WarningKind.OTHER_RULES]
    assert any("CY 2026 rule" in n and "not why" in n for n in notes), notes


@pytest.mark.parametrize("question, years", [
    ("What did 99223 pay two years ago, and what does it pay now?", (2024, 2026)),
    ("What does 99214 pay now versus three years ago?", (2023, 2026)),
    ("What does 99213 pay now, and what did it pay last year?", (2025, 2026)),
    ("What does 99214 pay now?", ()),                  # alone: the newest values, no year asked
])
def test_now_beside_another_year_is_this_year_too(question, years):
    assert plan(question).years == years


def test_a_count_of_times_a_month_over_a_year_is_a_volume(backends):
    prepared = prepare("99214 billed 20 times a month in 2026: annual revenue?", backends, today=TODAY)
    volumes = [f for f in prepared.figures if f.kind is FigureKind.VOLUME]
    row = next(r for r in prepared.rows if r.in_focus and r.hcpcs == "99214" and r.cy == 2026)
    assert {f.value for f in volumes} >= {row.payment_nonfac * 240}
    assert not prepared.plan.units and not any(f.kind is FigureKind.TOTAL for f in prepared.figures)


def test_a_lab_code_excluded_from_the_pfs_says_which_schedule_pays_it(backends):
    prepared = prepare("What does Medicare pay for 80053?", backends, today=TODAY)
    assert "Clinical Laboratory Fee Schedule" in said(prepared)


@pytest.mark.parametrize("question, change", [
    ("What would a 10% conversion factor cut mean for 99214 in 2026?", Decimal("-10")),
    ("If CMS raised the conversion factor by 2.5%, what would 99490 pay in 2026?", Decimal("2.5")),
])
def test_a_supposed_conversion_factor_change_is_priced(backends, question, change):
    prepared = prepare(question, backends, today=TODAY)
    figures = [f for f in prepared.figures if f.kind is FigureKind.WHAT_IF]
    row = next(r for r in prepared.rows if r.in_focus and r.cy == 2026 and not r.proposed)
    cf = (row.cf * (1 + change / 100)).quantize(Decimal("0.0001"), ROUND_HALF_UP)
    nonfac = next(f for f in figures if f.setting == "non-facility")
    assert nonfac.inputs == (row.payment_nonfac, payment(row.total_nonfac, cf))
    assert f"would be ${payment(row.total_nonfac, cf)} instead of ${row.payment_nonfac}" in said(prepared)


def test_a_supposed_conversion_factor_change_at_a_volume_is_priced_at_that_volume_and_leads(backends):
    prepared = prepare("How much would we lose per year on 50 CCM patients a month billing 99490 if the conversion "
                       "factor were cut by 3%?", backends, today=TODAY)
    row = next(r for r in prepared.rows if r.in_focus and r.hcpcs == "99490" and r.cy == 2026 and not r.proposed)
    cf = (row.cf * Decimal("0.97")).quantize(Decimal("0.0001"), ROUND_HALF_UP)
    first = prepared.figures[0]
    assert first.kind is FigureKind.WHAT_IF and first.counts == (600,) and first.setting == "non-facility"
    assert first.inputs == (row.payment_nonfac * 600, payment(row.total_nonfac, cf) * 600)
    assert not prepared.factors                       # the CF table is not what a supposed change asks
    assert f"600 × 99490 would bring in ${payment(row.total_nonfac, cf) * 600:,}" in said(prepared)


def test_codes_paid_under_other_schedules_say_which(backends):
    text = said(prepare("What does Medicare pay for E1130?", backends, today=TODAY))
    assert "DMEPOS fee schedule" in text


@pytest.mark.parametrize("question, kind", [("What is the average APCM payment in 2026?", "mean"),
                                            ("What is the median 2026 payment of 99202 through 99205?", "median")])
def test_a_mean_or_median_of_the_asked_codes_is_computed(backends, question, kind):
    prepared = prepare(question, backends, today=TODAY)
    figure = next(f for f in prepared.figures if f.kind is FigureKind.STATISTIC and f.setting == "non-facility")
    amounts = sorted(r.payment_nonfac for r in prepared.rows if r.in_focus and r.cy == 2026 and not r.proposed)
    assert sorted(figure.inputs) == amounts and len(amounts) >= 3
    if kind == "mean":
        expected = (sum(amounts) / len(amounts)).quantize(Decimal("0.01"), ROUND_HALF_UP)
    else:
        middle = len(amounts) // 2
        expected = (amounts[middle] if len(amounts) % 2 else (amounts[middle - 1] + amounts[middle]) / 2).quantize(
            Decimal("0.01"), ROUND_HALF_UP)
    assert figure.value == expected and f"the {kind} national non-facility payment" in said(prepared)


def test_a_family_named_in_words_is_compared_with_a_written_code_by_its_members():
    assert plan("How does APCM compare to 99490 in 2026?").focus_codes == ("99490", "G0556", "G0557", "G0558")
    assert plan("What does 99490 pay in 2026?").focus_codes == ("99490",)     # its own family is not added


def test_which_gained_more_in_dollars_compares_the_amounts_of_the_changes(backends):
    prepared = prepare("Which gained more in dollars from 2023 to 2026, 99490 or 99214?", backends, today=TODAY)
    spans = {}
    for f in prepared.figures:
        if f.kind is FigureKind.CHANGE and f.setting == "non-facility":
            spans.setdefault(f.codes[0], f)
    best = max(spans.values(), key=lambda f: f.value)
    assert f"{best.codes[0]}'s national non-facility payment rose more in dollars" in said(prepared)


@pytest.mark.parametrize("question", ["How does 99213 in 2026 compare with 99214 in 2025?",
                                      "99213 2026 vs 99214 2025 nf"])
def test_two_codes_each_in_its_own_year_are_compared_as_asked(backends, question):
    prepared = prepare(question, backends, today=TODAY)
    rows = {(r.hcpcs, r.cy): r for r in prepared.rows if not r.proposed and not r.locality}
    crossed = [f for f in prepared.figures if f.kind is FigureKind.DIFFERENCE]
    assert crossed and all("99213 CY2026 − 99214 CY2025" in f.label for f in crossed)
    nonfac = next(f for f in crossed if f.setting == "non-facility")
    assert nonfac.value == rows[("99213", 2026)].payment_nonfac - rows[("99214", 2025)].payment_nonfac


def test_a_misspelt_place_is_priced_as_read_and_says_so(backends):
    prepared = prepare("What does 99214 pay in Seatle in 2026?", backends, today=TODAY)
    assert {r.locality for r in prepared.rows if r.in_focus} == {"WA 02 SEATTLE (KING CNTY)"}
    assert any(w.kind is WarningKind.READ_AS and "Seatle" in w.message and "Seattle" in w.message
               for w in prepared.warnings)
    unsure = prepare("What does 99214 pay in Hoston in 2026?", backends, today=TODAY)
    assert not any(r.locality for r in unsure.rows if r.in_focus)          # national, and it says why
    assert any(w.kind is WarningKind.NOT_IN_DATA and "Boston and Houston" in w.message for w in unsure.warnings)


@pytest.mark.parametrize("question, field", [
    ("What is the difference between the facility and non-facility payment for 99214 in 2026?", "payment"),
    ("How big is the gap between the facility and non-facility PE RVU for 99490 in 2026?", "pe"),
    ("facility vs non-facility difference for 99214 in 2026", "payment"),        # shorthand: not a rule question
])
def test_the_gap_between_a_rows_two_settings_is_computed_and_said_first(backends, question, field):
    prepared = prepare(question, backends, today=TODAY)
    gaps = [f for f in prepared.figures if f.kind is FigureKind.SETTING_GAP]
    row = next(r for r in prepared.rows if r.label == gaps[0].rows[0] and r.hcpcs == gaps[0].codes[0])
    nonfac, fac = ((row.payment_nonfac, row.payment_fac) if field == "payment" else (row.pe_nonfac_rvu, row.pe_fac_rvu))
    assert gaps[0].inputs == (nonfac, fac) and gaps[0].value == nonfac - fac and row.cy == 2026
    first = next(l for l in said(prepared).splitlines() if l.startswith("- "))
    assert gaps[0].label in first and str(nonfac - fac) in first
    assert not plan("What does 99214 pay in a facility in 2026?").setting_gap


def test_a_change_between_two_asked_years_of_the_conversion_factor_comes_first(backends):
    prepared = prepare("By how many dollars did the conversion factor change from 2025 to 2026?", backends, today=TODAY)
    first = next(l for l in said(prepared).splitlines() if l.startswith("- "))
    cf25, cf26 = (next(r.amount for r in prepared.factors if r.cy == y and r.in_focus and r.variant in ("", "non-QP"))
                  for y in (2025, 2026))
    assert first.startswith("- From CY 2025 to CY 2026") and f"${cf26 - cf25}" in first


@pytest.mark.parametrize("question, status", [
    ("Does Medicare pay for 98008 in 2026?", "I"),
    ("What does G2211 pay in 2023?", "B"),
])
def test_a_code_medicare_does_not_pay_under_the_pfs_says_so_and_states_no_amount(backends, question, status):
    prepared = prepare(question, backends, today=TODAY)
    row = next(r for r in prepared.rows if r.in_focus)
    assert row.status == status
    line = next(l for l in said(prepared).splitlines() if l.startswith("- "))
    assert f"PFS status {status}" in line and "no separate payment" in line and "$" not in line


@pytest.mark.parametrize("question, counts", [
    ("What is 99497 plus two units of 99498 in 2026?", {"99498": 2}),
    ("What do 3 units of 99439 pay in 2026?", {"99439": 3}),
    ("What do 99490 and 99439 x 2 pay in 2026?", {"99439": 2}),
])
def test_a_code_billed_several_times_counts_that_many_times_in_the_total(backends, question, counts):
    prepared = prepare(question, backends, today=TODAY)
    assert dict(prepared.plan.units) == counts
    totals = [f for f in prepared.figures if f.kind is FigureKind.TOTAL and f.setting == "non-facility"]
    rows = {r.hcpcs: r for r in prepared.rows if r.in_focus and r.cy == 2026 and not r.mod and not r.proposed}
    expected = sum((rows[c].payment_nonfac * counts.get(c, 1) for c in prepared.plan.focus_codes), start=0)
    assert totals and totals[0].value == expected
    first = next(l for l in said(prepared).splitlines() if l.startswith("- "))
    assert f"${expected}" in first and totals[0].label in first
    assert plan("What does 99213 pay in 2026?").units == ()


@pytest.mark.parametrize("question, intent", [
    ("wat is the paymnt for 99495 in 2025", Intent.LOOKUP),
    ("whats the diffrence between 99490 and 99439", Intent.COMPARE),
])
def test_a_misspelled_question_word_is_read_as_meant(question, intent):
    assert intent in plan(question).intents and Intent.POLICY not in plan(question).intents


@pytest.mark.parametrize("question, code", [
    ("What did high-complexity TCM pay in a facility in 2022?", "99496"),
    ("What does a moderate complexity established patient office visit pay in 2026?", "99214"),
    ("What does a new patient office visit of low complexity pay?", "99203"),
])
def test_a_qualifier_of_one_family_member_asks_for_that_member(backends, question, code):
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.focus_codes == (code,)
    assert {r.hcpcs for r in prepared.rows if r.in_focus} == {code}
    assert len(prepare("What does TCM pay in 2026?", backends, today=TODAY).plan.focus_codes) == 2


def test_an_amount_asked_without_a_code_says_no_code_was_recognised_first(backends):
    prepared = prepare("What does Medicare pay for a 30-minute phone call with an established patient in 2026?",
                       backends, today=TODAY)
    note = next(w.message for w in prepared.warnings if w.kind is WarningKind.NOT_IN_DATA)
    assert "No HCPCS/CPT code, code family or procedure name was recognised" in note and not prepared.rows
    assert said(prepared).split("\n\n")[1].strip() == note
    rule = prepare("How does CMS pay RHCs for care management?", backends, today=TODAY)
    assert not any("was recognised" in w.message for w in rule.warnings)


@pytest.mark.parametrize("question, services, how", [
    # a monthly rate over a span: the rate times the months
    ("What would a practice earn billing G0557 for 100 patients a month for a year?", {"G0557": 1200}, "100 a month"),
    # a yearly panel of a code paid per calendar month: each patient billed once a month
    ("What is the annual revenue of 99490 for a panel of 250 patients?", {"99490": 3000}, "250 patients each"),
    # a weekly rate over a year, a family named in the plural
    ("If we do 40 AWVs a week what does that bring in per year?", {"G0438": 2080, "G0439": 2080}, "40 a week"),
    # a count of services paid per service: the count itself
    ("How much would 1,200 claims of 99214 pay in 2026?", {"99214": 1200}, ""),
    # another count noun analysts use ("discharges", "admissions", "referrals")
    ("If we bill 99495 for 75 discharges a month in Seattle, what is that per year in 2026?", {"99495": 900},
     "75 a month"),
])
def test_a_volume_asked_is_priced_as_the_rows_amount_times_the_payments_it_bills(backends, question, services, how):
    prepared = prepare(question, backends, today=TODAY)
    volumes = [f for f in prepared.figures if f.kind is FigureKind.VOLUME]
    assert {f.codes[0]: f.counts[0] for f in volumes} == services
    rows = {r.label + r.hcpcs: r for r in prepared.rows}
    for figure in volumes:
        row = rows[figure.rows[0] + figure.codes[0]]
        field = "payment_fac" if figure.setting == "facility" else "payment_nonfac"
        assert figure.value == (getattr(row, field) * figure.counts[0]).quantize(figure.value)
        assert figure.how.startswith(how)
    text = said(prepared)
    first = next(line for line in text.splitlines() if line.startswith("- "))
    assert volumes[0].label in first and f"${volumes[0].value:,}" in first     # the volume's amount leads
    assert Intent.POLICY not in prepared.plan.intents


def test_a_family_volume_leaves_out_add_ons_and_numbers_that_are_not_volumes():
    assert plan("What does 99487 pay for patients with 3 chronic conditions?").volume is None
    assert plan("99490 for 20 minutes of clinical staff time in 2026").volume is None
    assert plan("What did 99213 pay in 2025 for established patients?").volume is None
    volume = plan("annual revenue for a panel of 500 CCM patients").volume
    assert volume is not None and volume.services(monthly=True)[0] == 6000 and volume.services(monthly=False)[0] == 500


def test_a_family_volume_prices_base_codes_only(backends):
    prepared = prepare("annual revenue for a panel of 500 CCM patients", backends, today=TODAY)
    priced = {f.codes[0] for f in prepared.figures if f.kind is FigureKind.VOLUME}
    add_ons = {r.hcpcs for r in prepared.rows if r.global_days == "ZZZ"}
    assert priced and add_ons and not priced & add_ons


@pytest.mark.parametrize("question, services", [
    # a family acronym counted, the rate and the span said later ("per month ... per yr")
    ("if we do 40 TCM high complexity (99496) per month how much is that per yr in 2026", {"99496": 480}),
    # a rate said after the codes ("billing 99457 and 99454 monthly"); the codes billed together are summed
    ("revenue from 150 RPM patients billing 99457 and 99454 monthly for 12 months, 2025",
     {"99457": 1800, "99454": 1800, "99454 + 99457": 1800}),
    # a large count of units is a volume, a small one a total (asked_units)
    ("whats 1,000 units of 99214 worth in 2026", {"99214": 1000}),
])
def test_volumes_written_the_ways_analysts_write_them(backends, question, services):
    prepared = prepare(question, backends, today=TODAY)
    volumes = [f for f in prepared.figures if f.kind is FigureKind.VOLUME]
    assert {f.codes[0]: f.counts[0] for f in volumes} == services
    together = [f for f in volumes if " + " in f.codes[0]]
    for figure in together:          # the sum of the codes' own volume figures of the same row and setting
        parts = [f for f in volumes if f.codes[0] in figure.codes[0].split(" + ") and f.rows == figure.rows
                 and figure.setting in f.setting.split(" and ")]
        assert figure.value == sum(f.value for f in parts)
    assert plan("What is 99497 plus two units of 99498 in 2026?").volume is None


@pytest.mark.parametrize("question, sides", [
    ("which pays more in 2026, 99491 alone or 99490 plus one 99439?", ("99491", "99490 + 99439")),
    ("Is G2211 + 99213 worth more than 99214 in 2026?", ("G2211 + 99213", "99214")),
])
def test_codes_billed_together_against_another_choice_are_compared_side_against_side(backends, question, sides):
    prepared = prepare(question, backends, today=TODAY)
    first = next(f for f in prepared.figures if f.kind is FigureKind.DIFFERENCE and f.setting == "non-facility")
    assert first.codes == sides
    rows = {r.hcpcs: r.payment_nonfac for r in prepared.rows if r.in_focus and r.cy == 2026 and not r.mod}
    totals = [sum(rows[c] for c in side.split(" + ")) for side in sides]
    assert first.inputs == tuple(totals) and first.value == totals[0] - totals[1]
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert first.label in lead                                    # the choice asked is answered first
    # no sum over all three codes (they are not billed together)
    assert not any(f.kind is FigureKind.TOTAL and len(f.codes) == 3 for f in prepared.figures)


def test_alternatives_of_one_family_are_never_summed(backends):
    prepared = prepare("give me 99495 and 99496 rates for 2025 and tell me if TCM can be billed with CCM in the same "
                       "month", backends, today=TODAY)
    assert not [f for f in prepared.figures if f.kind is FigureKind.TOTAL]
    together = prepare("What do 99213 and G2211 pay together in 2026?", backends, today=TODAY)
    assert [f for f in together.figures if f.kind is FigureKind.TOTAL]      # an add-on with its base code is


def test_a_city_with_its_state_code_and_a_place_against_the_nation_are_compared(backends):
    prepared = prepare("G0557 in Los Angeles vs Birmingham AL 2026", backends, today=TODAY)
    assert len(prepared.plan.places) == 2 and Intent.POLICY not in prepared.plan.intents
    gap = next(f for f in prepared.figures if f.kind is FigureKind.DIFFERENCE and f.setting == "non-facility")
    assert any("AL 00" in code for code in gap.codes) and gap.value == gap.inputs[0] - gap.inputs[1]
    prepared = prepare("how much is 99214 in alaska compared to national 2024", backends, today=TODAY)
    gap = next(f for f in prepared.figures if f.kind is FigureKind.DIFFERENCE and f.setting == "non-facility")
    national = next(r for r in prepared.rows if r.hcpcs == "99214" and r.cy == 2024 and not r.locality
                    and not r.mod and not r.proposed)
    assert gap.inputs[1] == national.payment_nonfac and gap.codes[1] == "99214 nationally"
    assert gap.label in next(line for line in said(prepared).splitlines() if line.startswith("- "))


def test_a_year_before_a_codes_first_year_shows_the_nearest_year_and_says_so(backends):
    prepared = prepare("What was 99490 paid in 2019?", backends, today=TODAY)
    focus = {r.cy for r in prepared.rows if r.in_focus and r.hcpcs == "99490"}
    first = min(r.cy for r in prepared.rows if r.hcpcs == "99490" and not r.proposed)
    assert focus == {first}
    assert any(f"nearest year's values (CY{first})" in w.message for w in prepared.warnings)
    later = prepare("What does 99490 pay in 2031?", backends, today=TODAY)       # after the newest: the newest
    assert any("newest" in w.message for w in later.warnings)


def test_moving_a_volume_from_one_code_to_another_states_the_difference_first(backends):
    prepared = prepare("how much more would we make per year moving 300 CCM pts from 99490 to G0557 in 2026", backends,
                       today=TODAY)
    assert prepared.plan.switched == ("99490", "G0557")
    first = prepared.figures[0]
    volumes = {(f.codes[0], f.setting): f.value for f in prepared.figures if f.kind is FigureKind.VOLUME}
    assert first.kind is FigureKind.DIFFERENCE and first.counts == (3600,)
    assert first.value == volumes[("G0557", first.setting)] - volumes[("99490", first.setting)]
    assert not any(" + " in f.codes[0] for f in prepared.figures if f.kind is FigureKind.VOLUME)   # never summed
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert first.label in lead and f"${abs(first.value):,}" in lead


def test_a_family_member_created_after_the_asked_year_is_said_to_be_new_not_shown_as_that_year(backends):
    prepared = prepare("remote patient monitoring codes what do they pay 2025", backends, today=TODAY)
    new = {r.hcpcs for r in prepared.rows if min(x.cy for x in prepared.rows if x.hcpcs == r.hcpcs) > 2025}
    assert new and not any(r.in_focus for r in prepared.rows if r.hcpcs in new)
    assert all(r.cy == 2025 for r in prepared.rows if r.in_focus and not r.proposed)
    note = next(w.message for w in prepared.warnings if w.kind is WarningKind.YEAR_NOT_FOUND)
    assert "new in the fee schedule from CY2026" in note and all(code in note for code in new)


@pytest.mark.parametrize("question, code, services, each", [
    # units billed per patient at a volume count in the codes' total
    ("60 patients/month get 99490 plus 2 units of 99439 each - annual CY2026 revenue?", "2 × 99439 + 99490", 720,
     {"99490": 1, "99439": 2}),
    # a span written in weeks ("48 weeks a year"), not 52
    ("99214 and G2211 together, 40 visits a week, 48 weeks a year in 2025", "99214 + G2211", 1920,
     {"99214": 1, "G2211": 1}),
])
def test_a_volume_total_counts_units_per_patient_and_weeks_as_written(backends, question, code, services, each):
    prepared = prepare(question, backends, today=TODAY)
    total = next(f for f in prepared.figures if f.kind is FigureKind.VOLUME and f.codes[0] == code
                 and f.setting == "non-facility")
    rows = {r.hcpcs: r.payment_nonfac for r in prepared.rows if r.in_focus and not r.mod and not r.proposed}
    per_patient = sum(rows[c] * n for c, n in each.items())
    assert total.counts == (services,) and total.inputs == (per_patient,) and total.value == per_patient * services
    assert total.label in next(line for line in said(prepared).splitlines() if line.startswith("- "))


def test_shifting_visits_from_one_level_to_another_is_a_switch(backends):
    prepared = prepare("shift 100 visits/month from 99214 to 99215 for a year, 2026", backends, today=TODAY)
    assert prepared.plan.switched == ("99214", "99215")
    assert prepared.figures[0].kind is FigureKind.DIFFERENCE and prepared.figures[0].counts == (1200,)


def test_the_biggest_percent_increase_in_a_family_range_is_named_from_every_member(backends):
    prepared = prepare("which office E/M code (99202-99215) got the biggest % increase 2025 to 2026?", backends,
                       today=TODAY)
    assert len(prepared.plan.named_codes) == 9
    changes = [f for f in prepared.figures if f.kind is FigureKind.CHANGE and f.setting == "non-facility"]
    best = max(changes, key=lambda f: f.percent)
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert "rose the most" in lead and best.codes[0] in lead and f"{best.percent}%" in lead


def test_a_volume_across_two_years_states_the_change_of_its_amount_first(backends):
    prepared = prepare("1,250 claims of 99497 in 2025 vs 2026: how much more revenue?", backends, today=TODAY)
    change = prepared.figures[0]
    volumes = {(f.rows[0], f.setting): f.value for f in prepared.figures if f.kind is FigureKind.VOLUME}
    assert change.kind is FigureKind.CHANGE and change.counts == (1250,)
    assert change.inputs == (volumes[(change.rows[0], change.setting)], volumes[(change.rows[1], change.setting)])
    assert change.value == change.inputs[1] - change.inputs[0]
    assert change.label in next(line for line in said(prepared).splitlines() if line.startswith("- "))


@pytest.mark.parametrize("question, unit, code, minutes", [
    ("What is 99490 worth per hour in 2026?", "hour", "99490", None),           # the descriptor's "1st 20"
    ("Hourly rate for 99491 in 2025", "hour", "99491", None),
    ("What is 99215 per hour if the visit takes 40 minutes?", "hour", "99215", 40),
    ("Per-minute rate for 99497 (30 min) in 2026?", "minute", "99497", 30),
])
def test_a_rate_per_hour_or_minute_divides_the_amount_by_the_codes_minutes(backends, question, unit, code, minutes):
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.rate == unit and prepared.plan.minutes == minutes
    rates = [f for f in prepared.figures if f.kind is FigureKind.RATE]
    assert rates and prepared.figures[0].kind is FigureKind.RATE           # what was asked leads
    row = next(r for r in prepared.rows if r.label == rates[0].rows[0] and r.hcpcs == code and not r.mod)
    time = minutes or int(re.search(r"(\d+)(?: min)?$", row.description.strip()).group(1))
    amount = row.payment_nonfac if rates[0].setting == "non-facility" else row.payment_fac
    per = amount * 60 / time if unit == "hour" else amount / time
    assert rates[0].inputs == (amount, time) and rates[0].value == per.quantize(Decimal("0.01"), ROUND_HALF_UP)
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert f"${rates[0].value} {'an hour' if unit == 'hour' else 'a minute'}" in lead and rates[0].label in lead


def test_a_rate_asked_of_a_code_without_minutes_says_what_to_give_instead_of_guessing(backends):
    prepared = prepare("Hourly rate for G0556 and 99490 in 2026", backends, today=TODAY)
    assert {f.codes[0] for f in prepared.figures if f.kind is FigureKind.RATE} == {"99490"}
    note = next(w.message for w in prepared.warnings if w.kind is WarningKind.NOT_IN_DATA)
    assert "No rate per hour is computed for G0556" in note and "Adv prim care mgmt lvl 1" in note
    assert said(prepared).lstrip().startswith("No language model") and "No rate per hour" in said(prepared)


@pytest.mark.parametrize("question", ["If I spend an hour on CCM for one patient, what do I bill?",
                                      "Does 99213 take 20 minutes?", "What did 99490 pay in 2026?"])
def test_time_spent_or_named_is_not_a_rate(question):
    assert plan(question).rate == ""


@pytest.mark.parametrize("question", ["What do 71046-26 and 71046-TC pay in 2026?",
                                      "Do the professional and technical components of 93306 add up to the global "
                                      "payment in 2026?", "PC/TC split of 93306 in 2026",
                                      "What does 93306-26 pay in 2026, and what does the -TC portion pay?"])
def test_both_components_asked_are_added_up_against_the_global_amount(backends, question):
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.components and prepared.plan.modifier == ""
    figure = prepared.figures[0]
    code = figure.codes[2]
    rows = {r.mod: r for r in prepared.rows if r.hcpcs == code and r.cy == 2026 and not r.proposed and r.in_focus}
    assert set(rows) == {"", "26", "TC"}
    assert figure.kind is FigureKind.COMPONENTS and figure.inputs == (
        rows["26"].payment_nonfac, rows["TC"].payment_nonfac, rows[""].payment_nonfac)
    assert figure.value == rows["26"].payment_nonfac + rows["TC"].payment_nonfac
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert "add up to" in lead and figure.label in lead


@pytest.mark.parametrize("question", ["What's the PC/TC split for 71046 in Chicago in 2026?",
                                      "Do 93306-26 and 93306-TC add up to the global in Seattle in 2026?"])
def test_components_at_a_place_are_the_places_amounts(backends, question):
    prepared = prepare(question, backends, today=TODAY)
    figure = next(f for f in prepared.figures if f.kind is FigureKind.COMPONENTS)
    assert figure.place and figure.place in {r.locality for r in prepared.rows if r.in_focus}
    code = figure.codes[2]
    rows = {r.mod: r for r in prepared.rows if r.hcpcs == code and r.cy == 2026 and r.locality == figure.place}
    assert set(rows) == {"", "26", "TC"}
    national = {r.mod: r for r in prepared.rows if r.hcpcs == code and r.cy == 2026 and not r.locality
                and not r.proposed}
    assert rows["26"].payment_nonfac != national["26"].payment_nonfac     # priced at the place, not nationally
    assert figure.inputs == (rows["26"].payment_nonfac, rows["TC"].payment_nonfac, rows[""].payment_nonfac)
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert "add up to" in lead and figure.place.split()[-1] in lead


def test_components_asked_of_a_code_priced_only_whole_say_so(backends):
    prepared = prepare("Do the professional and technical components of 93000 add up to the global in 2026?",
                       backends, today=TODAY)
    assert not [f for f in prepared.figures if f.kind is FigureKind.COMPONENTS]
    assert any("no professional (26) or technical (TC) component rows for 93000" in w.message
               for w in prepared.warnings)
    assert "indicator is 4" in said(prepared)


@pytest.mark.parametrize("question, check", [
    ("What multiple of 99212 is 99205 in 2026, in office payment?", lambda p: p.ratio == ("99205", "99212")),
    ("Divide the 2026 office payment for 99205 by the one for 99212 — what multiple is it?",
     lambda p: p.ratio == ("99205", "99212")),
    ("Global period and multiple procedure indicator for 29881 and 29880?", lambda p: p.ratio == ()),
    ("Suppose CMS had cut the conversion factor 2% for 2026 — what would 99213 have paid?",
     lambda p: p.cf_change == Decimal("-2")),
    ("If CMS cut the CF 2% in 2026, what would 99213 pay?", lambda p: p.cf_change == Decimal("-2")),
    ("How much has 99215 changed since last year?", lambda p: p.since == TODAY.year - 1),
    ("Which is cheaper in 2026, 99204 or 99214?", lambda p: Intent.COMPARE in p.intents),
    ("What would 25 visits a month of 99214 in Seattle bring in over 2026?", lambda p: p.volume.months == 12),
    ("We see 40 patients a month for 99213. What's that over the year in 2026?", lambda p: p.volume.months == 12),
    ("What do 40 patients a month of 99213 bring in, in 2026?", lambda p: p.volume.months == 0),
    ("Did 99214 go up or down in 2026?", lambda p: p.years == (2025, 2026) and Intent.TREND in p.intents),
    ("Was 99214 cut in 2026?", lambda p: p.years == (2025, 2026) and Intent.TREND in p.intents),
    ("Did 99214 get cut in 2026?", lambda p: p.years == (2025, 2026) and Intent.TREND in p.intents),
    ("Was there a cut to 99214 in 2025?", lambda p: p.years == (2024, 2025) and Intent.TREND in p.intents),
    ("Was 99214 reduced in 2025?", lambda p: p.years == (2024, 2025) and Intent.TREND in p.intents),
    ("Were office visits cut in 2026?", lambda p: p.years == (2025, 2026) and Intent.TREND in p.intents),
    ("What would 99213 pay if the CF were cut 2%?", lambda p: Intent.TREND not in p.intents),
    ("Suppose CMS had cut the conversion factor 2% for 2026 — what would 99213 have paid?",
     lambda p: p.years == (2026,) and p.cf_change == Decimal("-2")),
])
def test_the_same_calculation_asked_in_other_words_is_read_the_same(question, check):
    assert check(plan(question))


def test_a_conversion_factor_cut_of_100_percent_or_more_is_said_not_priced(backends):
    prepared = prepare("What would 99213 pay in 2026 if the conversion factor were cut by 150%?", backends,
                       today=TODAY)
    assert not [f for f in prepared.figures if f.kind is FigureKind.WHAT_IF]
    assert "cut of 150% leaves no conversion factor" in said(prepared)


@pytest.mark.parametrize("question, ends", [("Which locality pays the most for 99213 in 2026, and how much?", {"most"}),
                                           ("Where is 99214 paid the most and the least in 2026?", {"most", "least"})])
def test_the_locality_paying_the_most_or_least_is_named_with_its_amount(backends, question, ends):
    from carenav_core.pfs.locality import locality_rows
    prepared = prepare(question, backends, today=TODAY)
    extremes = [f for f in prepared.figures if f.kind is FigureKind.EXTREME]
    assert {f.how for f in extremes} == ends and prepared.figures[0].kind is FigureKind.EXTREME
    code = prepared.plan.focus_codes[0]
    priced = locality_rows(backends.fee_db, [code], cys=[2026]).rows
    national = next(r for r in prepared.rows if r.hcpcs == code and r.cy == 2026 and not r.locality and not r.mod)
    for figure in extremes:
        field = "payment_nonfac" if figure.setting == "non-facility" else "payment_fac"
        amounts = [getattr(r, field) for r in priced if getattr(r, field) is not None]
        best = max(amounts) if figure.how == "most" else min(amounts)
        assert figure.inputs == (best, getattr(national, field)) and figure.counts == (len(amounts),)
        assert figure.label in said(prepared)
    assert plan("Which code pays the most in 2026, 99213 or 99214?").extreme == ""


def test_a_place_no_locality_file_knows_is_said_not_silently_dropped(backends):
    prepared = prepare("What does 99213 pay in Atlantis in 2026?", backends, today=TODAY)
    assert not prepared.plan.places
    assert "“Atlantis” is not a place the CMS locality files know" in said(prepared)
    assert not [w for w in prepare("What does 99213 pay in January 2024?", backends, today=TODAY).warnings
                if "not a place" in w.message]


@pytest.mark.parametrize("question", ["What is Medicare's 80% share of the 2026 payment for 99214, after the patient's "
                                      "20% coinsurance?", "What would the patient pay for 99490 in 2026?"])
def test_medicares_share_and_the_patients_coinsurance_split_the_amount(backends, question):
    prepared = prepare(question, backends, today=TODAY)
    figure = prepared.figures[0]
    assert figure.kind is FigureKind.COINSURANCE
    allowed, patient = figure.inputs
    assert figure.value == (allowed * Decimal("0.8")).quantize(Decimal("0.01"), ROUND_HALF_UP)
    assert figure.value + patient == allowed
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert f"Medicare pays 80%, ${figure.value}" in lead and "Part B deductible" in lead


@pytest.mark.parametrize("question", ["How much did Medicare's 80% share of 99213 change between 2025 and 2026?",
                                      "Did the patient's coinsurance for 99214 go up from 2024 to 2026?"])
def test_a_change_of_the_shares_is_the_change_of_each_share(backends, question):
    prepared = prepare(question, backends, today=TODAY)
    splits = {(f.rows[0], f.setting): f for f in prepared.figures if f.kind is FigureKind.COINSURANCE}
    changes = [f for f in prepared.figures if f.kind is FigureKind.CHANGE and "80%" in f.codes[0]]
    asked = "20%" if "patient" in question else "80%"
    assert changes and asked in prepared.figures[0].codes[0] and prepared.figures[0].kind is FigureKind.CHANGE
    for change in changes:
        first, last = splits[(change.rows[0], change.setting)], splits[(change.rows[1], change.setting)]
        assert change.inputs == (first.value, last.value) and change.value == last.value - first.value
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert asked in lead and "a change of" in lead


@pytest.mark.parametrize("question, services", [
    ("A doctor in Chicago sees 20 patients a day for 99213, 5 days a week, 50 weeks a year. What's that worth in "
     "2026?", 20 * 5 * 50),
    ("A physician sees 15 patients a day billed as 99214, 4 days a week, 48 weeks a year. What's the annual 2026 "
     "Medicare revenue?", 15 * 4 * 48),
    ("Our clinic does 30 office visits (99213) daily. What is that worth per year in 2026 if we're open 5 days a "
     "week, 52 weeks?", 30 * 5 * 52),
    ("We bill 25 99213 visits per day over 250 working days. What does that come to in 2026?", 25 * 250),
    ("What are 12 99215 visits a day worth over a 5-day week in 2026?", 12 * 5),
    ("We see 20 patients a day for 99214. What is one day worth in 2026?", 20),
])
def test_a_daily_volume_is_multiplied_by_the_days_asked(backends, question, services):
    prepared = prepare(question, backends, today=TODAY)
    figure = prepared.figures[0]
    assert figure.kind is FigureKind.VOLUME and figure.counts[0] == services
    row = next(r for r in prepared.rows if r.label == figure.rows[0] and r.hcpcs in figure.codes[0])
    assert figure.value == services * row.payment_nonfac
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert f"{services:,} ×" in lead and " a day" in lead


@pytest.mark.parametrize("question, codes", [
    ("What does caregiver training pay in 2025?", {"97550", "97551", "97552"}),
    ("What does the Welcome to Medicare visit pay in 2026?", {"G0402"}),
    ("What do the interprofessional consultation codes pay in 2026?", {"99446", "99451", "99452"}),
    ("What did the telephone E/M visit codes pay in 2024?", {"99441", "99442", "99443", "98966"}),
    ("What do the prolonged service codes pay in 2026?", {"G2212", "G0316"}),
    ("What does principal illness navigation pay in 2026?", {"G0023", "G0024"}),
    ("What does the SDOH risk assessment pay in 2026?", {"G0136"}),
    ("What are virtual check-ins paid in 2026?", {"G2252", "98016"}),
    ("What do emergency department visits pay in 2026?", {"99281", "99285"}),
    ("What do subsequent hospital visits pay in 2026?", {"99231", "99232", "99233"}),
    ("What do nursing facility visits pay in 2026?", {"99304", "99310"}),
    ("What do home visits pay in 2026?", {"99341", "99350"}),
    ("What does critical care pay in 2026?", {"99291"}),
])
def test_a_family_named_in_common_words_is_priced(backends, question, codes):
    prepared = prepare(question, backends, today=TODAY)
    priced = {r.hcpcs for r in prepared.rows if r.in_focus and r.payment_nonfac is not None}
    assert codes <= priced
    if "navigation" in question or "SDOH" in question:      # a sub-family: its own codes, not CHI's
        assert not {"G0019", "G0022"} & {r.hcpcs for r in prepared.rows if r.in_focus}
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert any(code in lead for code in codes) and "$" in lead


@pytest.mark.parametrize("question, best", [
    ("Which E/M office visit code had the biggest percentage increase from 2025 to 2026?", "99205"),
    ("Which office visit code pays the least in 2026?", "99211"),
])
def test_a_family_ranking_leaves_out_its_add_on_codes(backends, question, best):
    text = said(prepare(question, backends, today=TODAY))
    lead = next(line for line in text.splitlines() if line.startswith("- "))
    assert best in lead and "G2211" not in lead


@pytest.mark.parametrize("question, top", [
    ("In which year from 2020 to 2026 did 99214 pay the most?", True),
    ("What was the lowest-paying year for 99213 between 2020 and 2026?", False),
    ("When did the work RVU of 99490 peak from 2020 to 2026?", True),
])
def test_the_year_a_code_paid_most_or_least_is_named(backends, question, top):
    prepared = prepare(question, backends, today=TODAY)
    field = "work_rvu" if "work RVU" in question else "payment_nonfac"
    code = prepared.plan.focus_codes[0]
    finals = [r for r in prepared.rows if r.in_focus and r.hcpcs == code and not r.proposed and not r.mod]
    end = (max if top else min)(getattr(r, field) for r in finals)
    years = [r for r in finals if getattr(r, field) == end]
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert ("highest" if top else "lowest") in lead and all(f"CY{r.cy}" in lead and r.label in lead for r in years)


def test_a_years_final_conversion_factor_against_the_proposed_one_is_computed(backends):
    prepared = prepare("How did the 2026 proposed conversion factor compare with what was finalized?", backends,
                       today=TODAY)
    final = next(r for r in prepared.factors if r.cy == 2026 and not r.proposed and r.variant == "non-QP")
    proposed = next(r for r in prepared.factors if r.cy == 2026 and r.proposed and r.variant == "non-QP")
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    gap = final.amount - proposed.amount
    assert f"${abs(gap)}" in lead and ("lower" if gap < 0 else "higher") in lead and "proposed one" in lead


@pytest.mark.parametrize("question, locality", [("What does 99213 pay in rural Texas in 2026?", "TX 99"),
                                                ("What does 99213 pay in rural Montana in 2026?", "MT 01")])
def test_a_rural_state_is_said_to_be_read_as_its_rest_of_state_locality(backends, question, locality):
    prepared = prepare(question, backends, today=TODAY)
    assert all(r.locality.startswith(locality) for r in prepared.rows if r.in_focus)
    (note,) = [w.message for w in prepared.warnings if "Rural" in w.message]
    assert locality in note and "not listed by name" not in note


def test_a_rule_question_quotes_the_decision_of_the_section_it_retrieved(backends):
    """The decision sentence names no code and shares one word with the question ("FQHCs"): it is still what answers
    "can FQHCs bill CCM?" (89 FR 98010: finalizing RHC/FQHC billing of the individual care management codes)."""
    text = said(prepare("Can FQHCs bill chronic care management?", backends, today=TODAY))
    quotes = [line for line in text.splitlines() if line.startswith("- CMS wrote")]
    assert quotes and "we are finalizing" in quotes[0] and "FQHCs" in quotes[0]


@pytest.mark.parametrize("question, count, code", [("What do 30 99213s pay in 2026?", 30, "99213"),
                                                   ("What do 40 99214's pay in 2026?", 40, "99214"),
                                                   ("What are 12 99213s a day over 230 days worth in 2026?", 12 * 230,
                                                    "99213"),
                                                   ("What do 100 G2211 add-ons pay in 2026?", 100, "G2211"),
                                                   ("What do a dozen 99497s pay in 2026?", 12, "99497"),
                                                   ("What are twenty G2211 add-ons worth in 2025?", 20, "G2211")])
def test_a_count_of_a_code_written_in_the_plural_is_a_volume(backends, question, count, code):
    prepared = prepare(question, backends, today=TODAY)
    figure = prepared.figures[0]
    assert figure.kind is FigureKind.VOLUME and figure.counts[0] == count and code in figure.codes[0]


@pytest.mark.parametrize("question", ["99213 pmt 2026 nf vs fac?", "fac vs nf difference for 11042 in 2026",
                                      "non-fac vs fac gap for 99213 in 2026", "fac v. non-fac for 99214 in 2026"])
def test_setting_abbreviations_ask_the_gap_between_the_settings(backends, question):
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.setting_gap and prepared.figures[0].kind is FigureKind.SETTING_GAP


@pytest.mark.parametrize("question, way", [("What year did 99213 pay the least?", "lowest"),
                                           ("Which year did G2211 pay the most?", "highest")])
def test_the_year_asked_without_a_range_is_found_among_every_year_on_file(backends, question, way):
    prepared = prepare(question, backends, today=TODAY)
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert f"Of the years on file" in lead and way in lead


def test_the_year_the_conversion_factor_was_highest_is_named(backends):
    prepared = prepare("In which year was the conversion factor highest?", backends, today=TODAY)
    finals = [r for r in prepared.factors if not r.proposed]
    best = max(finals, key=lambda r: r.amount)
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert "highest" in lead and f"${best.amount}" in lead and best.label in lead


@pytest.mark.parametrize("question", ["How much did Medicare's share of 99213 change in 2026?",
                                      "How much did the patient's coinsurance on 27447 change in 2026?",
                                      "How much did Medicare's 80% for G2211 change in 2026?"])
def test_a_share_change_in_one_year_is_the_change_from_the_year_before(backends, question):
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.years == (2025, 2026)
    assert prepared.figures[0].kind is FigureKind.CHANGE and "%" in prepared.figures[0].codes[0]


@pytest.mark.parametrize("question", ["and in 2024?", "same for facility?", "what about Seattle?"])
def test_a_follow_up_fragment_is_told_to_ask_again_and_quotes_nothing(backends, question):
    prepared = prepare(question, backends, today=TODAY)
    assert any("follow-up" in w.message for w in prepared.warnings)
    assert not [s for s in prepared.sources if s.kind in ("final rule", "proposed rule")]


@pytest.mark.parametrize("question, setting, gap", [
    ("What's the 2026 rate for 99214 at POS 19?", "FACILITY", False),
    ("Which rate applies to 99213 billed with place of service 11 in 2026?", "NON_FACILITY", False),
    ("What does 99213 pay at place of service 11 versus place of service 22 in 2026?", "BOTH", True),
])
def test_a_place_of_service_is_answered_at_the_rate_it_is_paid(backends, question, setting, gap):
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.setting.name == setting and prepared.plan.setting_gap == gap
    (note,) = [w.message for w in prepared.warnings if "place of service" in w.message.lower()]
    assert "section 20.4.2" in note


def test_a_year_with_only_a_proposed_cf_is_estimated_at_it_and_said_to_be_an_estimate(backends):
    from carenav_core.pfs.factors import factor_rows
    prepared = prepare("What will 99213 pay in 2027?", backends, today=TODAY)
    cf = next(r for r in factor_rows() if r.cy == 2027 and r.proposed)
    figure = prepared.figures[0]
    row = next(r for r in prepared.rows if r.label == figure.rows[0] and r.hcpcs == "99213")
    assert figure.kind is FigureKind.WHAT_IF and "CY2027 proposed CF" in figure.label
    assert figure.inputs[1] == (row.total_nonfac * cf.amount).quantize(Decimal("0.01"), ROUND_HALF_UP)
    assert any("estimate" in w.message and str(cf.amount) in w.message for w in prepared.warnings)
    assert prepare("What will 99213 pay in 2029?", backends, today=TODAY).figures == ()     # no CF on file for it


@pytest.mark.parametrize("question, down", [("When was 99214 cut?", True), ("In which years did 99213 go up?", False)])
def test_the_years_a_code_moved_the_way_asked_are_listed(backends, question, down):
    prepared = prepare(question, backends, today=TODAY)
    code = prepared.plan.focus_codes[0]
    steps = [f for f in prepared.figures if f.kind is FigureKind.CHANGE and f.setting == "non-facility"
             and f.codes[0] == code and len(set(re.findall(r"CY(\d{4})", f.label))) == 2
             and int(re.findall(r"CY(\d{4})", f.label)[1]) - int(re.findall(r"CY(\d{4})", f.label)[0]) == 1]
    moved = [f for f in steps if (f.value < 0) == down and f.value != 0]
    assert len(steps) >= 5 and moved
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert ("fell" if down else "rose") in lead and all(f.label in lead for f in moved)


def test_the_qp_minus_non_qp_difference_at_a_volume_is_computed(backends):
    prepared = prepare("How much more would 1,000 99214 visits bring in for a QP than a non-QP in 2026?", backends,
                       today=TODAY)
    at_volume = [f for f in prepared.figures if f.kind is FigureKind.DIFFERENCE and f.counts]
    one = {f.setting: f for f in prepared.figures if f.kind is FigureKind.DIFFERENCE and not f.counts}
    assert at_volume and all(f.value == 1000 * one[f.setting].inputs[0] - 1000 * one[f.setting].inputs[1]
                             for f in at_volume)
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert "1,000 × 99214 at the QP CF brings in" in lead


@pytest.mark.parametrize("question", ["What would a bilateral 27447 pay in 2026?",
                                      "What does 20610 pay with modifier 50 in 2026?"])
def test_a_bilateral_procedure_is_priced_at_its_indicators_share(backends, question):
    prepared = prepare(question, backends, today=TODAY)
    (fact,) = [f for f in prepared.indicators if f.meaning.key == "bilat_surg"]
    share = {"1": Decimal("1.5"), "3": Decimal("2")}.get(fact.meaning.value, Decimal("1"))
    figures = [f for f in prepared.figures if f.kind is FigureKind.BILATERAL]
    assert figures and all(f.value == (f.inputs[0] * share).quantize(Decimal("0.01"), ROUND_HALF_UP) for f in figures)
    text = said(prepared)
    assert all(f.label in text and f"${f.value:,}" in text for f in figures)


def test_hospital_inpatient_visits_cut_is_answered_with_the_visit_codes_changes(backends):
    prepared = prepare("Were hospital inpatient visits cut in 2026?", backends, today=TODAY)
    changes = [f for f in prepared.figures if f.kind is FigureKind.CHANGE]
    assert {"99221", "99223", "99233"} <= {f.codes[0] for f in changes} and prepared.plan.years == (2025, 2026)


@pytest.mark.parametrize("question, down", [("In which year did 99214 rise the most?", False),
                                            ("When did 99223 have its steepest drop?", True)])
def test_the_year_a_code_moved_most_is_the_largest_step_not_the_highest_level(backends, question, down):
    prepared = prepare(question, backends, today=TODAY)
    code = prepared.plan.focus_codes[0]
    steps = [f for f in prepared.figures if f.kind is FigureKind.CHANGE and f.codes[0] == code and f.setting == "facility"
             and int(re.findall(r"CY(\d{4})", f.label)[1]) - int(re.findall(r"CY(\d{4})", f.label)[0]) == 1]
    best = (min if down else max)(steps, key=lambda f: f.percent)
    text = said(prepared)
    assert f"{'fell' if down else 'rose'} the most in percent" in text and best.label in text


@pytest.mark.parametrize("question, down", [("When was the largest CF cut?", True),
                                            ("In which year did the conversion factor rise the most?", False)])
def test_the_year_the_cf_moved_most_is_named_with_its_change(backends, question, down):
    prepared = prepare(question, backends, today=TODAY)
    moved = [r for r in prepared.factors if not r.proposed and r.percent is not None and r.variant != "QP"]
    best = (min if down else max)(moved, key=lambda r: r.percent)
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert best.change_label in lead and f"{best.percent:+}%" in lead


@pytest.mark.parametrize("question, share", [("What does an NP get paid for 99214 in 2026?", "0.85"),
                                             ("What would a physician assistant be paid for 99213 in 2026?", "0.85"),
                                             ("What does a clinical social worker get for 90834 in 2026?", "0.75")])
def test_a_practitioner_paid_a_share_of_the_fee_is_priced_at_it(backends, question, share):
    prepared = prepare(question, backends, today=TODAY)
    figure = prepared.figures[0]
    assert figure.kind is FigureKind.PRACTITIONER
    assert figure.value == (figure.inputs[0] * Decimal(share)).quantize(Decimal("0.01"), ROUND_HALF_UP)
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert figure.label in lead and "Social Security Act section 1833(a)(1)" in lead
    assert not [f for f in prepare("What does 99214 pay in Pennsylvania, PA in 2026?", backends, today=TODAY).figures
                if f.kind is FigureKind.PRACTITIONER]


def test_a_rule_question_quotes_what_cms_finalized_not_only_what_it_proposed(backends):
    text = said(prepare("Can FQHCs bill G0556?", backends, today=TODAY))
    assert "we are finalizing our proposal to require RHCs and FQHCs" in text


@pytest.mark.parametrize("question, said_first", [
    ("?", "The question has no words to answer"),
    ("What does CPT 9921 pay?", "“9921” is not a HCPCS/CPT code: codes have five characters"),
])
def test_a_question_with_nothing_to_look_up_says_so_instead_of_pointing_at_rules(backends, question, said_first):
    text = said(prepare(question, backends, today=TODAY))
    assert said_first in text and "is also relevant" not in text


@pytest.mark.parametrize("question, check", [
    ("We bill roughly 15 units of 99490 every month. What does that add up to for all of 2026?",
     lambda p: p.volume.count == 15 and p.volume.months == 12 and not p.units),
    ("Annualized, what are 20 visits per month of 99213 in Seattle worth at 2026 rates?",
     lambda p: p.volume.months == 12),
    ("If CMS trimmed the CF by 2% for 2026, what would 99214 pay?", lambda p: p.cf_change == Decimal("-2")),
    ("G0556+G0557+G0558 2026 nonfacility", lambda p: p.summed),
    ("For 99215 in 2026, how much does Medicare pay and how much does the patient owe?", lambda p: p.coinsurance),
    ("What would -20 visits a month of 99213 bring in over 2026?", lambda p: p.volume is None),
    ("What did 99213 pay in 1999?", lambda p: 1999 in p.years),
    ("What did 2000 patients of 99213 bring in?", lambda p: 2000 not in p.years),
])
def test_round_six_phrasings_are_read_as_meant(question, check):
    assert check(plan(question))


@pytest.mark.parametrize("question, codes, total", [
    ("What is the sum of 99495's 2025 payment and its 2026 payment?", ("99495 CY2025", "99495 CY2026"), None),
    ("Add up 99213's payments for 2024, 2025 and 2026.", ("99213 CY2024", "99213 CY2025", "99213 CY2026"), None),
])
def test_one_codes_payments_added_up_over_the_years(backends, question, codes, total):
    prepared = prepare(question, backends, today=TODAY)
    figure = prepared.figures[0]
    rows = {r.cy: r.payment_nonfac for r in prepared.rows if r.in_focus and not r.proposed and not r.mod}
    assert figure.kind is FigureKind.TOTAL and figure.codes == codes
    assert figure.value == sum(rows[int(c[-4:])] for c in codes)
    assert "Added up over the years" in next(line for line in said(prepared).splitlines() if line.startswith("- "))


def test_the_qp_and_non_qp_amounts_are_subtracted_when_both_are_asked(backends):
    prepared = prepare("What is the difference between the QP and non-QP payment for 99215 in 2026?", backends,
                       today=TODAY)
    figure = prepared.figures[0]
    row = next(r for r in prepared.rows if r.in_focus and r.hcpcs == "99215" and r.cy == 2026)
    amounts = {row.cf_label: row.payment_nonfac, **{c.label: nf for c, nf, _ in row.other_payments()}}
    assert figure.value == amounts["CY2026 QP"] - amounts["CY2026 non-QP"]


def test_a_year_by_year_line_of_an_unpaid_status_states_no_payment(backends):
    text = said(prepare("How did 98008's payment change from 2025 to 2026?", backends, today=TODAY))
    assert "98008 pays $" not in text and "no national fee schedule payment" in text


@pytest.mark.parametrize("question, note", [
    ("What would -20 visits a month of 99213 bring in over 2026?", "A count of −20 visits"),
    ("What would 99213 pay in 2026 if the conversion factor were cut by -5%?", "could be read either way"),
    ("What does code 99-213 pay?", "did you mean 99213?"),
    ("What did 99213 pay in 1999?", "No CY1999 fee schedule values for 99213"),
])
def test_a_signed_split_or_too_old_input_is_said_not_silently_changed(backends, question, note):
    assert any(note in w.message for w in prepare(question, backends, today=TODAY).warnings)


@pytest.mark.parametrize("question, op, limit", [
    ("How many of 99202-99205 pay more than $150 in the office in 2026?", "over", Decimal("150")),
    ("Which of 99211 through 99215 pay less than $100 in 2026?", "under", Decimal("100")),
])
def test_how_many_of_the_asked_codes_pay_over_an_amount_is_counted(backends, question, op, limit):
    prepared = prepare(question, backends, today=TODAY)
    figure = prepared.figures[0]
    assert figure.kind is FigureKind.COUNT and prepared.plan.threshold == (op, limit)
    field = "payment_nonfac" if figure.setting == "non-facility" else "payment_fac"
    amounts = {r.hcpcs: getattr(r, field) for r in prepared.rows if r.in_focus and not r.proposed and not r.mod
               and r.cy == 2026 and getattr(r, field) is not None}
    passing = sorted(c for c, a in amounts.items() if (a > limit if op == "over" else a < limit))
    assert sorted(c for c in figure.codes if c != "none") == passing and figure.value == len(passing)
    assert figure.label in next(line for line in said(prepared).splitlines() if line.startswith("- "))


@pytest.mark.parametrize("question, check", [
    ("What would 99214 pay if the CF fell by 2.5%?", lambda p: p.cf_change == Decimal("-2.5")),
    ("If the CF was trimmed by 1.5%, what would 99213 pay in 2026?", lambda p: p.cf_change == Decimal("-1.5")),
    ("What is the patient's 20% for 99214 in 2026?", lambda p: p.coinsurance),
    ("What does the -26 for 77067 pay in 2026?", lambda p: p.modifier == "26"),
    ("Is 27447 a 90-day global?", lambda p: "global" in p.parts),
])
def test_round_seven_phrasings_are_read_as_meant(question, check):
    assert check(plan(question))


def test_a_year_alone_is_no_question(backends):
    text = said(prepare("2026?", backends, today=TODAY))
    assert "The question has no words to answer" in text and "is also relevant" not in text


def test_another_years_conversion_factor_reprices_the_asked_rows(backends):
    from carenav_core.pfs.factors import factor_rows
    prepared = prepare("What would 99214 pay in 2026 at the 2020 conversion factor?", backends, today=TODAY)
    assert prepared.plan.cf_year == 2020 and prepared.plan.years == (2026,)
    figure = prepared.figures[0]
    row = next(r for r in prepared.rows if r.in_focus and r.hcpcs == "99214" and r.cy == 2026)
    cf2020 = next(r.amount for r in factor_rows() if r.cy == 2020 and not r.proposed)
    assert figure.kind is FigureKind.WHAT_IF and figure.inputs == (row.payment_nonfac, payment(row.total_nonfac, cf2020))
    assert "at the CY2020 conversion factor" in next(line for line in said(prepared).splitlines()
                                                     if line.startswith("- "))
    assert not prepared.factors                     # the what-if answers; the CF table does not lead


def _cent(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.01"), ROUND_HALF_UP)


@pytest.mark.parametrize("question, first", [
    ("What is the 2026 limiting charge for 99214?", FigureKind.LIMITING),
    ("What can a non-participating doctor charge for 99213 in 2026?", FigureKind.LIMITING),
    ("What does a non-par physician get for 99213 in 2026?", FigureKind.NONPAR),
    ("Limiting charge for 99214 in Seattle, 2026", FigureKind.LIMITING),
])
def test_a_non_participating_amount_and_the_limiting_charge_are_computed(backends, question, first):
    """95% of the fee schedule amount (Social Security Act 1848(a)(3)); the limiting charge 115% of that (1848(g)(2)(C)),
    from the unrounded 95% as the locality pricer computes it; the one asked leads."""
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.figures[0].kind is first
    nonpar = [f for f in prepared.figures if f.kind is FigureKind.NONPAR]
    limiting = [f for f in prepared.figures if f.kind is FigureKind.LIMITING]
    assert nonpar and len(nonpar) == len(limiting)
    for paid, limit in zip(nonpar, limiting):
        assert paid.value == _cent(paid.inputs[0] * Decimal("0.95"))
        assert limit.value == _cent(limit.inputs[0] * Decimal("0.95") * Decimal("1.15"))
        assert limit.inputs == (paid.inputs[0], paid.value) and limit.place == paid.place
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert prepared.figures[0].label in lead and "Social Security Act section 1848" in lead
    if "Seattle" in question:
        assert all(f.place for f in nonpar)


@pytest.mark.parametrize("question, share", [
    ("What is the assistant at surgery payment for 27447 in 2026?", "0.16"),
    ("What does a PA get as assistant at surgery for 27130 in 2026?", "0.136"),
    ("What is paid for 27447 with modifier AS in 2026?", "0.136"),
])
def test_an_assistant_at_surgery_is_paid_its_share_when_the_indicator_allows(backends, question, share):
    prepared = prepare(question, backends, today=TODAY)
    (fact,) = [f for f in prepared.indicators if f.meaning.key == "asst_surg"]
    figures = [f for f in prepared.figures if f.kind is FigureKind.ASSISTANT]
    if fact.meaning.value not in ("0", "2"):
        assert not figures
        return
    assert figures and all(f.value == _cent(f.inputs[0] * Decimal(share)) for f in figures)
    assert not [f for f in prepared.figures if f.kind is FigureKind.PRACTITIONER]     # not 85% on top
    text = said(prepared)
    assert all(f.label in text and f"${f.value:,}" in text for f in figures)


def test_an_assistant_is_not_priced_where_the_indicator_forbids_it(backends):
    """66984's assistant-at-surgery indicator is not 0 or 2 (a statutory restriction): no amount."""
    prepared = prepare("What does an assistant at surgery get for 66984 in 2026?", backends, today=TODAY)
    fact = next(f for f in prepared.indicators if f.meaning.key == "asst_surg")
    assert fact.meaning.value not in ("0", "2")
    assert not [f for f in prepared.figures if f.kind is FigureKind.ASSISTANT]


def _rows_of(prepared, code):
    return next(r for r in prepared.rows if r.hcpcs == code and not r.mod and not r.locality and not r.proposed
                and r.cy == 2026)


def test_surgical_procedures_on_one_day_are_paid_100_and_50_percent_by_rank(backends):
    prepared = prepare("11042 + 17000 in the same session, 2026: total after the multiple-procedure reduction?",
                       backends, today=TODAY)
    assert {f.meaning.value for f in prepared.indicators if f.meaning.key == "mult_proc"} == {"2"}
    figures = [f for f in prepared.figures if f.kind is FigureKind.MULTIPLE]
    assert {f.setting for f in figures} == {"non-facility", "facility"}
    for figure in figures:
        field = "payment_nonfac" if figure.setting == "non-facility" else "payment_fac"
        amounts = sorted((getattr(_rows_of(prepared, c), field) for c in ("11042", "17000")), reverse=True)
        assert figure.value == amounts[0] + _cent(amounts[1] / 2)
    assert not [f for f in prepared.figures if f.kind is FigureKind.TOTAL]   # the unreduced sum is not the answer
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert figures[0].label in lead and f"${figures[0].value:,}" in lead


@pytest.mark.parametrize("question, units", [("What do 4 units of 97110 on the same day pay in 2026?", {"97110": 4}),
                                             ("97110, 97140 and 97530 on the same day in 2026: what is paid?",
                                              {"97110": 1, "97140": 1, "97530": 1})])
def test_therapy_units_on_one_day_take_the_practice_expense_reduction(backends, question, units):
    """Indicator 5: the unit with the highest PE in full, 50% of the PE of each other unit."""
    prepared = prepare(question, backends, today=TODAY)
    (figure,) = [f for f in prepared.figures if f.kind is FigureKind.MULTIPLE and f.setting == "non-facility"]
    each = [_rows_of(prepared, code) for code, n in units.items() for _ in range(n)]
    each.sort(key=lambda r: -r.pe_nonfac_rvu)
    expected = each[0].payment_nonfac + sum(payment(r.total_nonfac - r.pe_nonfac_rvu / 2, r.cf) for r in each[1:])
    assert figure.value == expected < sum(r.payment_nonfac for r in each)
    assert figure.label in said(prepared)


def test_office_visits_on_one_day_are_not_reduced(backends):
    prepared = prepare("What do 99213 and 99214 pay on the same day in 2026?", backends, today=TODAY)
    assert prepared.plan.same_session and not [f for f in prepared.figures if f.kind is FigureKind.MULTIPLE]


@pytest.mark.parametrize("question", ["An NP bills 20 99213s a day for 250 days in 2026; what does that bring in?",
                                      "What would a nurse practitioner earn from 1,000 99214 visits in 2026?"])
def test_a_practitioners_share_applies_to_a_volume(backends, question):
    """Each service paid at 85%, rounded per claim line, times the services."""
    prepared = prepare(question, backends, today=TODAY)
    shared = [f for f in prepared.figures if f.kind is FigureKind.PRACTITIONER]
    volumes = {f.setting: f for f in prepared.figures if f.kind is FigureKind.VOLUME}
    assert shared and prepared.figures[0].kind is FigureKind.PRACTITIONER
    for figure in shared:
        volume = volumes[figure.setting]
        assert figure.counts == volume.counts and figure.inputs[0] == volume.inputs[0]
        assert figure.value == _cent(volume.inputs[0] * Decimal("0.85")) * volume.counts[0]
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert shared[0].label in lead and "1833(a)(1)(O)" in lead


@pytest.mark.parametrize("question, measure, top, count", [
    ("Which code has the highest work RVU in 2026?", "work_rvu", True, 5),
    ("What are the top 10 highest-paying codes in 2026?", "payment", True, 10),
    ("Which procedure pays the least in 2025?", "payment", False, 5),
    ("Which service has the highest malpractice RVU?", "mp_rvu", True, 5),
    ("What are the 3 highest paid procedures in a facility in 2024?", "payment", True, 3),
])
def test_a_ranking_of_the_whole_fee_schedule_is_computed_from_the_file(backends, question, measure, top, count):
    """No code named: the year's active base rows ranked by the asked measure in DuckDB, checked here against the
    same file read another way (every status A base row's value, sorted in Python)."""
    prepared = prepare(question, backends, today=TODAY)
    ranking = prepared.ranking
    assert ranking is not None and len(ranking.codes) == count and ranking.top is top
    cy = ranking.cy
    rows = backends.fee_db.execute(
        "SELECT hcpcs, work_rvu, mp_rvu, total_nonfac, total_fac, nonfac_na, fac_na FROM current_rvu "
        "WHERE cy = ? AND mod = '' AND status = 'A'", [cy]).fetchall()

    def value(r):
        nonfac = r[3] if r[5] == "" else None
        fac = r[4] if r[6] == "" else None
        if measure == "work_rvu":
            return r[1]
        if measure == "mp_rvu":
            return r[2]
        if "facility" in question and "non-facility" not in question:
            return fac
        both = [v for v in (nonfac, fac) if v is not None]
        return (max if top else min)(both) if both else None
    scored = sorted(((value(r), r[0]) for r in rows if value(r) is not None and value(r) > 0),
                    key=lambda p: ((-p[0] if top else p[0]), p[1]))
    assert list(ranking.codes) == [code for _, code in scored[:count]]
    assert {r.hcpcs for r in prepared.rows if r.in_focus} >= set(ranking.codes)
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert lead.startswith(f"- Of the active codes in the CY{cy} RVU file") and ranking.codes[0] in lead
    assert any("No code was named" in w.message for w in prepared.warnings)


@pytest.mark.parametrize("question", ["Which CCM code pays the most in 2026?", "What does 99213 pay?",
                                      "Which codes are telehealth services?"])
def test_questions_naming_codes_or_not_ranking_are_not_ranked_over_the_file(backends, question):
    assert prepare(question, backends, today=TODAY).ranking is None


@pytest.mark.parametrize("question, top", [("Which pays more in 2026: 20605, 20610 or 20611?", True),
                                           ("Which is higher in 2026: 99202, 99203 or 99204?", True),
                                           ("Which pays less in 2026, 99212, 99213 or 99214?", False)])
def test_which_of_a_list_pays_more_names_the_highest_not_a_sum_of_two(backends, question, top):
    """Codes only commas apart are alternatives: no side is billed together, and the answer names the code that pays
    most (least)."""
    prepared = prepare(question, backends, today=TODAY)
    assert not prepared.plan.bundles and not [f for f in prepared.figures if " + " in f.codes[0]]
    rows = [r for r in prepared.rows if r.in_focus and r.cy == 2026 and not r.proposed and not r.locality]
    best = (max if top else min)(rows, key=lambda r: r.payment_nonfac)
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert f"{best.hcpcs} has the {'highest' if top else 'lowest'} non-facility payment" in lead
    assert f"${best.payment_nonfac:,}" in lead


@pytest.mark.parametrize("question, payer", [("What does 99214 pay under Texas Medicaid?", "Texas Medicaid"),
                                             ("What do commercial payers pay for 99213?", "commercial payers")])
def test_another_payers_amount_asked_says_the_fee_schedule_is_not_it(backends, question, payer):
    prepared = prepare(question, backends, today=TODAY)
    assert any(f"no {payer} payment is loaded" in w.message for w in prepared.warnings)


@pytest.mark.parametrize("question, codes", [
    ("What do hospital discharge codes pay in 2026?", {"99238", "99239"}),
    ("What does hospital discharge day management pay in 2026?", {"99238", "99239"}),
    ("Is the emergency department family cut in 2026 vs 2025?", {"99281", "99282", "99283", "99284", "99285"}),
])
def test_more_visit_families_are_found_by_name(backends, question, codes):
    prepared = prepare(question, backends, today=TODAY)
    assert set(prepared.plan.focus_codes) == codes


def test_a_change_that_rounds_to_zero_percent_keeps_its_sign(backends):
    text = said(prepare("Was 99282 cut in 2026?", backends, today=TODAY))
    change = next(line for line in text.splitlines() if "99282's national facility payment went" in line)
    assert ("−$" in change) == ("(−" in change)


def test_a_code_glued_to_its_system_name_is_read():
    text, read = spelled_out("how much is cpt99213 for 2026")
    assert "99213" in detect(text).codes and read == (("cpt99213", "CPT 99213"),)


@pytest.mark.parametrize("question, part", [
    ("What share of 93306's global payment is the professional component in 2026?", "26"),
    ("What % of 70450 is the TC in 2026?", "TC"),
    ("Share of 71046 global that is TC, 2025", "TC"),
])
def test_the_share_of_the_global_one_component_is_computed(backends, question, part):
    prepared = prepare(question, backends, today=TODAY)
    figure = next(f for f in prepared.figures if f.kind is FigureKind.COMPONENTS and f.setting == "non-facility")
    amount = figure.inputs[0 if part == "26" else 1]
    assert figure.percent == (amount / figure.inputs[2] * 100).quantize(Decimal("0.1"), ROUND_HALF_UP)
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert f"is {figure.percent}% of its global amount" in lead and figure.label in lead


@pytest.mark.parametrize("question, settings", [
    ("Which rate does 99214 get when the visit is telehealth to the patient's home in 2026?", {"non-facility"}),
    ("What does 99213 pay as telehealth from a clinic in 2026?", {"facility"}),
    ("Facility or non-facility rate for 99213 via telehealth, 2026?", {"facility", "non-facility"}),
    ("What did 99213 pay as telehealth in 2023?", {"facility", "non-facility"}),      # before CY 2024: not by POS
])
def test_telehealth_is_paid_at_the_rate_of_its_place_of_service(backends, question, settings):
    prepared = prepare(question, backends, today=TODAY)
    shown = {"non-facility"} if prepared.plan.setting.name == "NON_FACILITY" else \
        {"facility"} if prepared.plan.setting.name == "FACILITY" else {"facility", "non-facility"}
    assert shown == settings
    note = next(w.message for w in prepared.warnings if "88 FR 78818" in w.message)
    assert ("modifier 95" in note) == ("2023" in question)


@pytest.mark.parametrize("question, code", [("pre-op, intra-op and post-op percentages for 66984 in 2026", "66984"),
                                            ("Global period for 27447 and what's included", "27447"),
                                            ("What does 27447 pay with modifier 54 in 2026?", "27447")])
def test_the_global_packages_split_shares_are_read_from_the_file(backends, question, code):
    prepared = prepare(question, backends, today=TODAY)
    fact = next(f for f in prepared.indicators if f.meaning.key == "periop" and f.code == code)
    found = backends.fee_db.execute("SELECT pre_op, intra_op, post_op FROM pfs_indicators WHERE cy = ? AND hcpcs = ? "
                                    "AND mod = ''", [fact.cy, code]).fetchone()
    assert fact.meaning.value == " / ".join(f"{(Decimal(v) * 100).normalize():f}%" for v in found)
    assert fact.sentence() in said(prepared)


def test_a_level_of_physician_supervision_asked_is_the_files_indicator(backends):
    prepared = prepare("What level of physician supervision does 70450-TC require?", backends, today=TODAY)
    assert [f.code for f in prepared.indicators if f.meaning.key == "phys_supv"] == ["70450-TC"]
    assert plan("What supervision does APCM require?").indicators == ()


def test_a_written_range_is_filled_with_the_codes_the_fee_schedule_holds(backends):
    """98001-98006 are in no family: the loaded files decide (every code between that any loaded year holds)."""
    prepared = prepare("What do the new 2025 audio-video telehealth codes 98000-98007 pay?", backends, today=TODAY)
    held = {c for (c,) in backends.fee_db.execute("SELECT DISTINCT hcpcs FROM current_rvu WHERE hcpcs BETWEEN "
                                                   "'98000' AND '98007'").fetchall()}
    assert len(held) == 8 and set(prepared.plan.focus_codes) == held


def test_anesthesia_base_units_asked_are_said_to_be_missing(backends):
    prepared = prepare("How many base units does anesthesia code 01402 have?", backends, today=TODAY)
    assert any(w.kind is WarningKind.NOT_IN_DATA and "base units are not in the loaded files" in w.message
               for w in prepared.warnings)


@pytest.mark.parametrize("question, status, year", [("What does status indicator R mean, and give an example code",
                                                     "R", 2026),
                                                    ("What does status B mean in 2024?", "B", 2024)])
def test_a_status_asked_with_no_code_is_explained_with_example_codes(backends, question, status, year):
    prepared = prepare(question, backends, today=TODAY)
    examples = prepared.ranking
    assert examples is not None and examples.status == status and examples.cy == year and examples.codes
    held = [c for (c,) in backends.fee_db.execute("SELECT hcpcs FROM current_rvu WHERE cy = ? AND mod = '' AND "
                                                  "status = ? ORDER BY hcpcs LIMIT 5", [year, status]).fetchall()]
    assert list(examples.codes) == held
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert lead.startswith(f"- In the CY{year} RVU file, status {status} means") and held[0] in lead


def test_codes_on_one_day_that_no_rule_reduces_are_totalled_without_the_unasked_indicator(backends):
    prepared = prepare("What do G2211 and 99213 pay together on the same day in 2026?", backends, today=TODAY)
    assert not [f for f in prepared.indicators if f.meaning.key == "mult_proc"]
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert lead.startswith("- Billed together, G2211 and 99213 pay")


def test_the_payer_named_is_the_payer_not_the_word_before_it(backends):
    prepared = prepare("What does 99214 pay if paid by Medicaid?", backends, today=TODAY)
    assert any("no Medicaid payment is loaded" in w.message for w in prepared.warnings)


@pytest.mark.parametrize("question", ["What does each co-surgeon get for 22612 in 2026?",
                                      "What does 27447 pay with modifier 62 in 2026?",
                                      "What does 99213 pay with modifier 62?"])
def test_co_surgeons_are_paid_62_5_percent_each_where_the_indicator_permits(backends, question):
    prepared = prepare(question, backends, today=TODAY)
    (fact,) = [f for f in prepared.indicators if f.meaning.key == "co_surg"]
    figures = [f for f in prepared.figures if f.kind is FigureKind.CO_SURGERY]
    if fact.meaning.value not in ("1", "2"):
        assert not figures
        return
    assert figures and all(f.value == _cent(f.inputs[0] * Decimal("0.625")) for f in figures)
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert figures[0].label in lead


@pytest.mark.parametrize("question, share", [
    ("If a PA assists on 63047 in 2025, what does Medicare pay the PA?", "0.136"),
    ("If an NP assists at surgery on 27130 in 2026, what is paid?", "0.136"),
    ("assistant surgeon fee for 33533 in Houston 2026", "0.16"),
    ("What does an assistant at surgery get for 27447 in Seattle in 2026?", "0.16"),
    ("PA as surgical assistant for 47562 in 2026", "0.136"),            # never the 85% a PA is paid as the surgeon
    ("surgical assistant fee for 27447 in 2026", "0.16"),
    ("What does the first assistant get for 27130 in 2025?", "0.16"),
])
def test_an_assistant_however_asked_and_wherever_is_paid_the_assistants_share(backends, question, share):
    prepared = prepare(question, backends, today=TODAY)
    figures = [f for f in prepared.figures if f.kind is FigureKind.ASSISTANT]
    assert figures and all(f.value == _cent(f.inputs[0] * Decimal(share)) for f in figures)
    assert not [f for f in prepared.figures if f.kind is FigureKind.PRACTITIONER]
    if "Houston" in question or "Seattle" in question:
        assert all(f.place for f in figures)
    assert prepared.figures[0].kind is FigureKind.ASSISTANT


@pytest.mark.parametrize("question", ["What's the clinical social worker rate for 90834 in 2026?",
                                      "nurse practitioner 99213 2026"])
def test_a_practitioner_named_is_priced_at_its_share_whatever_the_verb(backends, question):
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.figures and prepared.figures[0].kind is FigureKind.PRACTITIONER


@pytest.mark.parametrize("question", ["How much does 99214 vary across localities in 2025 (min and max)?",
                                      "What is the range of 99213 payments across localities in 2026?"])
def test_a_spread_across_localities_gives_both_ends(backends, question):
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.extreme == "both"
    assert {f.how for f in prepared.figures if f.kind is FigureKind.EXTREME} >= {"most", "least"}


@pytest.mark.parametrize("question, payer", [("What does the VA pay for 99213 in 2026?", "VA"),
                                             ("What does Blue Cross pay for 99214?", "Blue Cross"),
                                             ("TRICARE rate for 99214 in 2026: what does it pay?", "TRICARE")])
def test_more_payers_are_named_as_not_the_fee_schedule(backends, question, payer):
    prepared = prepare(question, backends, today=TODAY)
    assert any(f"no {payer} payment is loaded" in w.message for w in prepared.warnings)


def test_codes_ranked_by_percent_change_are_ordered_by_it(backends):
    prepared = prepare("Rank 99221, 99222 and 99223 by percent change since 2022", backends, today=TODAY)
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert lead.startswith("- Ranked by percent change")
    order = [c for c in re.findall(r"(\d{5}) [−+]\$", lead)]
    changes = {f.codes[0]: f.percent for f in prepared.figures if f.kind is FigureKind.CHANGE and f.setting == "facility"
               and "CY2022" in f.label and "CY2026" in f.label}
    assert order == sorted(changes, key=lambda c: -changes[c])


def test_a_long_written_range_is_filled_from_the_fee_schedule(backends):
    prepared = prepare("What do 98000-98015 pay in 2026?", backends, today=TODAY)
    assert len(prepared.plan.focus_codes) == 16


@pytest.mark.parametrize("question", ["Out of 11102, 11104 and 11106, which pays best in 2025?",
                                      "What share of 27130's payment is post-operative care in 2025?"])
def test_more_wordings_of_fixed_classes(backends, question):
    prepared = prepare(question, backends, today=TODAY)
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    if "best" in question:
        assert "11106 has the highest" in lead
    else:           # the post-operative part's amount leads (tests/chat/test_session17_classes.py checks its value)
        (figure,) = [f for f in prepared.figures if f.kind is FigureKind.PERIOP and f.setting == "facility"]
        assert figure.label in lead and "post-operative care is" in lead


@pytest.mark.parametrize("question, reduced", [
    ("What does Medicare actually pay for 99214 in 2026 after the 20% coinsurance and 2% sequestration?", True),
    ("99213 after sequestration in 2021", False)])
def test_the_sequestration_reduction_is_applied_to_medicares_share_where_in_force(backends, question, reduced):
    prepared = prepare(question, backends, today=TODAY)
    cut = [f for f in prepared.figures if f.kind is FigureKind.SEQUESTRATION]
    splits = {f.setting: f for f in prepared.figures if f.kind is FigureKind.COINSURANCE}
    assert bool(cut) is reduced
    assert all(f.value == _cent(splits[f.setting].value * Decimal("0.98")) for f in cut)
    assert reduced or any("sequestration reduction is applied only to CY 2023" in w.message for w in prepared.warnings)


@pytest.mark.parametrize("question, term", [("What is an RVU?", "Relative value units (RVUs)"),
                                            ("What does limiting charge mean?", "Limiting charge"),
                                            ("Explain what a GPCI is", "Geographic practice cost indices (GPCIs)"),
                                            ("what is the global period", "Global surgical package")])
def test_a_term_asked_for_its_meaning_is_defined_from_the_glossary(backends, question, term):
    from carenav_core.chat.glossary import load_glossary
    prepared = prepare(question, backends, today=TODAY)
    (entry,) = [t for t in load_glossary() if t.name == term]
    lines = [line for line in said(prepared).splitlines() if line.startswith("- ")]
    assert lines[0] == f"- {entry.definition.rstrip('.')} [Definition: {term}]."
    assert len(lines) == 1 or prepared.gpci        # no rule text beside it; the GPCIs' ranges may follow


def test_every_glossary_definition_passes_the_output_guard():
    """A definition the guard would withhold would silently vanish from the answer."""
    from carenav_core.chat.evidence import build_evidence
    from carenav_core.chat.glossary import load_glossary
    from carenav_core.chat.guard import check_sentence
    for term in load_glossary():
        source = term.source()
        assert check_sentence(f"{source.text.rstrip('.')} {source.label}.", build_evidence((), (source,), (), ())) == ()


@pytest.mark.parametrize("question", ["What is the CY 2026 conversion factor?", "What is the GPCI for Seattle?",
                                      "What is the limiting charge for 99214 in 2026?"])
def test_a_terms_value_asked_is_not_a_definition_question(backends, question):
    from carenav_core.chat.glossary import GLOSSARY_KIND
    assert not [s for s in prepare(question, backends, today=TODAY).sources if s.kind == GLOSSARY_KIND]


def test_budget_neutrality_and_the_mei_are_said_not_to_be_loaded(backends):
    for question in ("What was the budget neutrality adjustment in the 2023 conversion factor?", "What is the MEI?"):
        prepared = prepare(question, backends, today=TODAY)
        assert any(w.kind is WarningKind.NOT_IN_DATA and "not their parts" in w.message for w in prepared.warnings)


@pytest.mark.parametrize("question", ["Compare 99214 in Manhattan, Alaska, rest of Florida and Puerto Rico in 2026",
                                      "What does 99213 pay in California in 2026?"])
def test_four_places_or_more_are_ranked_by_payment(backends, question):
    prepared = prepare(question, backends, today=TODAY)
    lead = next(line for line in said(prepared).splitlines() if line.startswith("- "))
    assert "payment in the places asked, highest first:" in lead
    local = [r for r in prepared.rows if r.in_focus and r.locality and r.cy == 2026 and not r.proposed]
    top = max(local, key=lambda r: r.payment_nonfac)
    assert lead.split("highest first: ")[1].startswith(f"{top.locality} ${top.payment_nonfac:,}")


def test_a_zip_code_is_not_read_as_a_code_and_is_said_not_mapped(backends):
    prepared = prepare("What is the payment for 99214 in zip code 10001?", backends, today=TODAY)
    assert "10001" not in prepared.detection.codes
    assert any("ZIP codes are not mapped" in w.message for w in prepared.warnings)
