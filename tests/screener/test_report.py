"""What a person reads: a summary table first, plain words (no internal names), the MSP tier, sources
for every rule and figure applied, the tag legend, deduplicated needs, notices, and a printable page."""
from __future__ import annotations

import re
from datetime import date

import pytest

from carenav_core.screener.assemble import Card, report_settings, run_screen, still_needed
from carenav_core.screener.explain import ProgramSummary
from carenav_core.screener.engine import screen
from carenav_core.screener.intake import Answers
from carenav_core.screener.questions import QUESTIONS_BY_FIELD, drop_hidden, option_words, visible
from carenav_core.screener.render import report_html, report_markdown
from carenav_core.screener.words import FACT_WORDS
from tests.screener.conftest import profile
from tests.screener.memory_search import MemorySearch

INTERNAL = re.compile(r"nursing_facility_level_of_care|monthly_income|care_recipient_age|household_size|"
                      r"has no value in force|_relevant|parameter '|\w+#[a-z-]+")


def _report(on=date(2026, 5, 1), **answers):
    return run_screen(profile(**answers), on=on, search=MemorySearch())


def _person_text(report) -> str:
    """Everything a person reads in the Markdown and HTML renderings, without link addresses."""
    text = report_markdown(report) + report_html(report)
    return re.sub(r"\]\([^)]*\)|href='[^']*'|https?://\S+", "", text)


@pytest.mark.parametrize("answers", [{}, {"monthly_income": None, "nursing_facility_level_of_care": "not_assessed"},
                                     {"age": None, "household_size": None, "care_recipient_age": "dont_know"}])
def test_no_internal_names_anywhere_a_person_reads(answers):
    report = _report(**answers)
    assert not INTERNAL.findall(_person_text(report))
    late = run_screen(profile(**answers), on=date(2027, 6, 1), search=MemorySearch())
    assert not INTERNAL.findall(_person_text(late))


def test_summary_table_comes_first_and_covers_every_program():
    report = _report(veteran_status="no")
    assert len(report.summary) == 12 and {r.result for r in report.summary} <= {
        "Likely relevant", "Possibly relevant", "Not likely to apply"}
    markdown = report_markdown(report)
    assert markdown.index("| Program | Result | Why | Next step |") < markdown.index("## ")


@pytest.mark.parametrize(("income", "tier"), [("0-999", "QMB"), ("1500-1732", "SLMB or QI-1"),
                                              ("1500-1732", "SLMB or QI-1"), ("1821-1836", "QI-1")])
def test_msp_card_names_the_tier(income, tier):
    # 2026-05: QMB $1,463, SLMB $1,596, QI-1 $1,836 (single), each + $20 disregard.
    card = next(c for c in _report(monthly_income=income).cards if c.program == "msp")
    assert card.tier == tier
    assert f"points to **{tier}**" in report_markdown(_report(monthly_income=income))


def test_each_card_links_the_sources_of_the_rules_and_figures_applied():
    card = next(c for c in _report().cards if c.program == "msp")
    hrefs = {s.href for s in card.sources}
    assert "https://lawfilesext.leg.wa.gov/law/wsr/2026/01/26-01-043.htm" in hrefs      # Part A / Extra Help rule
    assert any(s.tag == "D" and "QI-1" in s.title for s in card.sources)                  # the QI-1 figure
    assert all(s.href.startswith("http") for s in card.sources)


def test_legend_explains_every_tag_used():
    report = _report()
    used = {s.tag for c in report.cards for s in c.sources if s.tag}
    assert used and all(any(line.startswith(f"[{t}]") for line in report.legend) for t in used)


def test_still_needed_has_no_repeats():
    result = next(r for r in screen(profile(nursing_facility_level_of_care="not_assessed"), on=date(2026, 5, 1))
                  if r.program.key == "mac")
    summary = ProgramSummary(program="mac", summary="s", claims=[], proposed_label="possibly_relevant",
                             follow_up_questions=[], still_needed=["Washington residency and citizenship or "
                                                                   "qualifying immigration status.", "A bank statement"])
    needed = still_needed(summary, result)
    folded = [" ".join(n.lower().split()).rstrip(".") for n in needed]
    assert len(folded) == len(set(folded)) and "A bank statement" in needed


def test_a_missing_figure_is_a_notice_and_the_program_stays_possible():
    # Part B only and under 65 (disabled): no Medicare Savings Program or Apple Health ahead confers Extra Help, so it
    # rests on its own figure, which is not on file in 2029 (a likely MSP would decide it: test_session17_cases)
    report = _report(on=date(2029, 2, 1), age=60, disability="yes", medicare_parts=["B"], monthly_income="0-999")
    assert any("Extra Help resource limit" in n and "February 1, 2029" in n for n in report.notices)
    extra = next(c for c in report.cards if c.program == "extra_help")
    assert extra.classification == "possibly_relevant" and extra.figures_missing


def test_printable_html_is_a_whole_page_with_the_table_and_print_rules():
    html = report_html(_report())
    assert html.startswith("<!doctype html>") and "<table>" in html and "@media print" in html
    assert "What the tags on figures mean" in html


def test_disclaimer_date_and_confidence_cut_offs_come_from_data():
    report = _report()
    assert "November 29, 2026" in report.disclaimer   # data/corpus/manifest.toml `gathered`
    assert 0 < report_settings().good_retrieval <= 1 and 0 < report_settings().mostly_unknown < 1


def test_every_intake_answer_has_one_plain_question():
    assert set(QUESTIONS_BY_FIELD) == set(Answers.model_fields)
    assert set(FACT_WORDS) >= {"married", *(f for f in Answers.model_fields if f != "marital_status")}
    assert option_words(QUESTIONS_BY_FIELD["monthly_income"])["1000-1299"] == "$1,000 – $1,299 a month"
    assert all(q.text.endswith("?") or q.kind == "number" for q in QUESTIONS_BY_FIELD.values())


def test_questions_that_do_not_apply_are_hidden_and_their_answers_dropped():
    fields = {q.field for q in visible({})}
    assert "care_recipient_age" not in fields and "wartime_service" not in fields
    assert "care_recipient_age" in {q.field for q in visible({"caring_for_someone": "yes"})}
    assert drop_hidden({"caring_for_someone": "no", "care_recipient_age": 80}) == {"caring_for_someone": "no"}


def test_labels_say_what_is_tested_without_figures():
    from carenav_core.screener.rules import PROGRAMS
    for program in PROGRAMS:
        for rule in program.rules:
            assert not re.search(r"\$\d|\d{2}\+|\b\d{2} or older|\d{4}-\d{2}-\d{2}|\d+%", rule.label), rule.label


def test_card_fields_are_plain():
    assert "judged_for" in Card.__dataclass_fields__ and "tier" in Card.__dataclass_fields__


def test_a_likely_program_with_a_reported_waitlist_says_so_in_its_next_step():
    report = _report(on=date(2026, 12, 2), age=80, apple_health="categorically_needy", monthly_income="0-999",
                     assets="0-2000", nursing_facility_level_of_care="assessed_yes", living_situation="own_home",
                     has_unpaid_caregiver="yes", caregiver_age=50)
    row = next(r for r in report.summary if r.program.startswith("Medicaid Alternative Care"))
    assert row.result == "Likely relevant" and "waitlist" in row.next_step
    assert all("waitlist" not in r.next_step for r in report.summary if "MAC" not in r.program and "TSOA" not in r.program)
