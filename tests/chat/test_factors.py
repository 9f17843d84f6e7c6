"""Conversion-factor questions: the amounts come from data/pfs_rules.toml through code, before any prose; the prose
states them with their labels and the output guard holds a model to them (real pipeline, real stores, the real
`ollama` client against the scripted loopback double)."""
import re
from datetime import date
from decimal import Decimal

import ollama
import pytest

from carenav_core.chat.deterministic import DeterministicWriter
from carenav_core.chat.events import FactorEvent, TokenEvent, WarningEvent
from carenav_core.chat.evidence import build_evidence
from carenav_core.chat.factors import (asks_conversion_factor, checked_facts, factor_sentences, factor_sources,
                                       in_focus)
from carenav_core.chat.guard import check_sentence
from carenav_core.chat.pipeline import answer, prepare
from carenav_core.chat.plan import plan_question
from carenav_core.codes import detect
from carenav_core.llm import ModelClient
from carenav_core.pfs.factors import factor_rows
from carenav_core.pfs.rules import load_rules

TODAY = date(2026, 12, 1)


def focus(question: str):
    plan = plan_question(question, detect(question), TODAY)
    return in_focus(factor_rows(), plan, question)


def asked(question: str) -> set[str]:
    return {r.name for r in focus(question) if r.in_focus}


def test_every_conversion_factor_on_file_is_a_row_with_the_change_from_the_year_before():
    book, rows = load_rules(), factor_rows()
    on_file = sorted(c.amount for rule in [*book.final.values(), *book.proposed.values()] for c in rule.cfs)
    assert sorted(r.amount for r in rows) == on_file
    by_name = {r.name: r for r in rows}
    assert by_name["CY2021"].change == Decimal("34.8931") - Decimal("36.0896")
    assert by_name["CY2021"].percent == Decimal("-3.32")
    # a split year: the next year is compared with its last period, each period with the year before
    assert by_name["CY2025"].prior == Decimal("33.2875")
    assert by_name["CY2024 Jan 1-Mar 8"].prior == by_name["CY2024 Mar 9-Dec 31"].prior == Decimal("33.8872")
    # two variants from CY2026: each against the single CY2025 CF; a later single CF against the first (non-QP)
    assert by_name["CY2026 QP"].prior == by_name["CY2026 non-QP"].prior == Decimal("32.3465")
    assert by_name["CY2027 proposed"].prior == by_name["CY2026 non-QP"].amount
    assert by_name["CY2020"].prior is None and by_name["CY2020"].percent is None
    assert len({r.label for r in rows}) == len(rows)


@pytest.mark.parametrize("question, wanted", [
    ("What is the CY 2026 conversion factor?", True),
    ("what's the 2025 CF", True),
    ("PFS conversion-factor history", True),
    ("What's the current CF?", True),
    ("How much is the CF this year?", True),
    ("Does Medicare cover CF screening?", False),          # cystic fibrosis
    ("Cystic fibrosis (CF) care management codes in 2026?", False),
    ("Is CF a chronic condition for CCM?", False),
    ("What does 99490 pay in 2026?", False),
])
def test_a_conversion_factor_question_is_recognised(question, wanted):
    assert asks_conversion_factor(question) is wanted


@pytest.mark.parametrize("question, names", [
    ("What is the conversion factor?", {"CY2026 non-QP", "CY2026 QP", "CY2027 proposed"}),
    ("What was the conversion factor in 2023?", {"CY2023"}),
    ("What conversion factor did CMS propose for 2026?", {"CY2026 proposed non-QP", "CY2026 proposed QP"}),
    ("the 2027 conversion factor", {"CY2027 proposed"}),        # no final rule yet: the proposed one
    ("How did the conversion factor change in 2024?", {"CY2024 Jan 1-Mar 8", "CY2024 Mar 9-Dec 31"}),
    ("What conversion factor did CMS propose for 2026 and what was finalized?",
     {"CY2026 proposed non-QP", "CY2026 proposed QP", "CY2026 non-QP", "CY2026 QP"}),
    ("What is the 2028 conversion factor?", set()),
])
def test_the_rows_asked_are_the_years_asked(question, names):
    assert asked(question) == names


def test_since_and_every_year_ask_for_every_final_year():
    since = asked("How has the conversion factor changed since 2023?")
    assert {"CY2023", "CY2025", "CY2026 non-QP"} <= since and "CY2022" not in since
    assert "CY2026 proposed non-QP" not in since          # the final rule replaced it
    every = asked("Has the conversion factor gone down every year?")
    assert {"CY2020", "CY2021", "CY2025", "CY2026 QP"} <= every


def test_the_cf_of_another_year_is_not_accepted_under_a_rows_label():
    rows = focus("How has the conversion factor changed since 2020?")
    evidence = build_evidence([], [], checked_facts(rows))
    # the previous year's amount belongs to the change label, not to the row's
    assert check_sentence("CMS proposed a CY 2027 conversion factor of $33.4009 [CF CY2027 proposed].", evidence)
    assert check_sentence("The CY 2021 conversion factor was $36.0896 [CF CY2021].", evidence)
    assert check_sentence("The CY 2027 conversion factor is $0.56 [CF CY2027 proposed].", evidence)
    assert check_sentence("The CY 2021 conversion factor fell 3.32% from $36.0896 [CF CY2021 change].", evidence) == ()


def test_how_much_a_conversion_factor_moved_is_said_in_dollars_and_percent():
    rows = focus("How much did the conversion factor drop in 2025?")
    evidence = build_evidence([], factor_sources(rows), checked_facts(rows))     # as the pipeline builds it
    [sentence] = factor_sentences(rows)
    assert "$32.3465 [CF CY2025], down $0.9410 (2.83%) from the CY 2024 (March 9-December 31) conversion factor of " \
           "$33.2875 [CF CY2025 change]" in sentence
    assert check_sentence(sentence, evidence) == ()


def test_a_span_from_a_split_year_starts_at_its_last_period():
    rows = focus("Why did the CF drop from 2024 to 2025?")
    text = " ".join(factor_sentences(rows))
    assert "from $33.2875 to $32.3465 (-2.83%)" in text and "32.7442 to" not in text


def test_the_writers_sentences_pass_the_guard_and_a_wrong_amount_does_not():
    rows = focus("How has the conversion factor changed since 2020?")
    evidence = build_evidence([], [], checked_facts(rows))
    sentences = factor_sentences(rows)
    assert sentences and all(check_sentence(s, evidence) == () for s in sentences)
    assert any("fell $2.6887, from $36.0896 to $33.4009 (-7.45%)" in s for s in sentences)
    assert check_sentence("The CY 2026 conversion factor is $34.0000 [CF CY2026 non-QP].", evidence)
    assert check_sentence("The CY 2026 conversion factor is $33.4009.", evidence)       # no label
    assert check_sentence("The CY 2026 conversion factor is $33.4009 [CF CY2019].", evidence)   # invented label


def test_a_conversion_factor_question_answers_with_the_amounts_before_any_prose(any_backends):
    events = list(answer("What is the CY 2026 conversion factor?", any_backends))
    kinds = [e.type for e in events]
    assert kinds[0] == "factors" and "valuation" not in kinds
    assert kinds.index("factors") < kinds.index("token")
    table = events[0]
    assert isinstance(table, FactorEvent)
    assert {r.name for r in table.rows if r.in_focus} == {"CY2026 non-QP", "CY2026 QP"}
    assert len(table.rows) == len(factor_rows())                # the other years one glance away
    released = "".join(e.text for e in events if isinstance(e, TokenEvent) and not e.withheld)
    lead = released.split("\n\n", 1)[1]
    assert lead.startswith("- The CY 2026 final rule") and "$33.4009" in lead and "[CF CY2026 non-QP]" in lead
    assert "$33.5675" in lead and "secondary source" in lead    # the QP amount is not from a CMS file: said
    assert not any(isinstance(e, TokenEvent) and e.withheld for e in events)
    cited = events[-2].cited
    assert cited[0].label == "[CF CY2026 non-QP]" and cited[0].url.endswith("90-FR-49266")


def test_an_anesthesia_conversion_factor_question_gets_the_locality_amounts_not_the_pfs_one(backends):
    events = list(answer("What is the anesthesia conversion factor in Seattle for 2025?", backends))
    table = next(e for e in events if isinstance(e, FactorEvent))
    assert table.rows == () and len(table.anesthesia) == 109           # every CY2025 locality of the ANES file
    seattle = [r for r in table.anesthesia if r.asked]
    assert [(r.key, r.amount) for r in seattle] == [("02402:02", Decimal("21.54"))]   # ANES2025.csv: 02402,02,21.54
    amounts = sorted(r.amount for r in table.anesthesia)
    assert (amounts[0], amounts[-1], amounts[54]) == (Decimal("19.12"), Decimal("27.86"), Decimal("20.30"))
    notes = [e for e in events if isinstance(e, WarningEvent) and e.kind == "not_in_data"]
    assert notes and "not the Physician Fee Schedule conversion factor" in notes[0].message
    text = "".join(e.text for e in events if isinstance(e, TokenEvent) and not e.withheld)
    # the CMS CY2025 ANES file's header: "National Anes CF of 20.3178"
    assert "The CY 2025 ANES file states a national anesthesia conversion factor of $20.3178 [ANES CY2025]." in text
    assert "from $19.12 in NEBRASKA" in text and "to $27.86 in ALASKA" in text and "median of $20.30" in text
    assert "In SEATTLE (KING CNTY) (WA, locality 02402:02) it is $21.54 [ANES CY2025]." in text
    assert "32.3465" not in text and not any(isinstance(e, TokenEvent) and e.withheld for e in events)
    evidence = build_evidence([], [], prepare("anesthesia CF in Seattle 2025", backends).checked)
    assert check_sentence("In Seattle the anesthesia conversion factor is $22.54 [ANES CY2025].", evidence)
    assert check_sentence("In Seattle the anesthesia conversion factor is $21.54 [ANES CY2025].", evidence) == ()


def test_a_year_without_an_anes_file_says_whose_amounts_it_shows(backends):
    prepared = prepare("anesthesia conversion factor 2026", backends)
    assert {r.cy for r in prepared.anesthesia} == {2026} and {r.file_cy for r in prepared.anesthesia} == {2025}
    text = "".join(DeterministicWriter().stream(prepared))
    lead = next(line for line in text.splitlines() if line.startswith("- "))
    assert lead == "- No CY 2026 ANES file is loaded: the amounts below are the CY 2025 file's [ANES CY2025]."
    assert "CY 2025 anesthesia conversion factors range" in text and "CY 2026 anesthesia conversion" not in text


def test_a_model_stating_a_wrong_conversion_factor_is_withheld(backends, ollama_double):
    ollama_double.enqueue([
        "The CY 2026 conversion factor is $33.4009 for non-QP clinicians [CF CY2026 non-QP]. ",
        "It rose 5.1% from CY 2025 [CF CY2026 non-QP]. ",
        "The CY 2026 QP conversion factor is $33.5675 [CF CY2026 QP]. ",
        "The 2026 conversion factor is $34.61 [CF CY2026 non-QP]. "])
    model = ModelClient(client=ollama.Client(host=ollama_double.url, timeout=10.0), model="llama3.2")
    events = list(answer("What is the CY 2026 conversion factor?", backends.with_model(model)))
    shown = [e for e in events if isinstance(e, TokenEvent)]
    released = "".join(e.text for e in shown if not e.withheld)
    assert "$33.4009 for non-QP clinicians [CF CY2026 non-QP]" in released and "$33.5675" in released
    assert "5.1%" not in released and "$34.61" not in released
    assert sum(e.withheld for e in shown) == 2
    prompt = ollama_double.chat_requests()[-1].body["messages"][1]["content"]
    assert "[CF CY2026 non-QP]" in prompt and "33.4009" in prompt


def test_a_code_question_is_unchanged_by_the_conversion_factor_feature(backends):
    prepared = prepare("What does G0556 pay in 2026?", backends)
    assert prepared.factors == () and not any(s.label.startswith("[CF ") for s in prepared.sources)


def test_without_the_valuation_feature_a_conversion_factor_question_answers_from_retrieval_alone(backends):
    question = "What is the CY 2026 conversion factor?"
    assert prepare(question, backends, valuation=False).factors == ()
    assert prepare(question, backends).factors
    assert not any(isinstance(e, FactorEvent) for e in answer(question, backends, valuation=False))


@pytest.mark.parametrize("question", ["What is the OPPS conversion factor for 2026?",
                                      "What is the home health conversion factor in 2026?"])
def test_another_payment_systems_conversion_factor_is_not_given_the_pfs_amount(backends, question):
    events = list(answer(question, backends))
    assert not any(isinstance(e, FactorEvent) for e in events)
    notes = [e.message for e in events if isinstance(e, WarningEvent) and e.kind == "not_in_data"]
    assert notes and "no " in notes[0] and "conversion factor is loaded" in notes[0]
    assert "33.4009" not in "".join(e.text for e in events if isinstance(e, TokenEvent))


def test_a_year_with_no_conversion_factor_on_file_is_said(backends):
    events = list(answer("What is the 2028 conversion factor?", backends))
    notes = [e.message for e in events if isinstance(e, WarningEvent) and e.kind == "year_not_found"]
    assert notes and "No conversion factor on file for CY 2028" in notes[0] and "CY 2020 to CY 2026" in notes[0]


def test_the_factor_events_json_carries_each_rows_labels_and_change():
    import json
    rows = focus("What is the CY 2026 conversion factor?")
    shown = json.loads(FactorEvent(rows=rows).to_json())
    row = next(r for r in shown["rows"] if r["label"] == "[CF CY2026 non-QP]")
    assert row["amount"] == "33.4009" and row["percent"] == "3.26" and row["change_label"] == "[CF CY2026 non-QP change]"


def test_a_gpci_question_answers_with_the_places_indices_from_the_gpci_file(backends):
    events = list(answer("What is the GPCI for Seattle in 2026?", backends))
    table = next(e for e in events if isinstance(e, FactorEvent))
    assert table.rows == () and len(table.gpci) == 109
    seattle = [r for r in table.gpci if r.asked]
    # GPCI2026.csv: 02402,WA,02,SEATTLE (KING CNTY),1.050,1.227,0.817
    assert [(r.key, r.work, r.pe, r.mp) for r in seattle] == [("02402:02", Decimal("1.050"), Decimal("1.227"),
                                                              Decimal("0.817"))]
    text = "".join(e.text for e in events if isinstance(e, TokenEvent) and not e.withheld)
    assert "work GPCI of 1.050, a practice expense (PE) GPCI of 1.227 and a malpractice (MP) GPCI of 0.817 " \
           "[GPCI2026 WA 02]" in text
    # each range names its ends' localities ("which locality has the highest PE GPCI?" is answered by it)
    assert re.search(r"work 1\.000 \([A-Z].*?\) to 1\.500 \(ALASKA \(AK\)\)", text)
    assert not any(isinstance(e, TokenEvent) and e.withheld for e in events)
    evidence = build_evidence([], [], prepare("GPCI for Seattle 2026", backends).checked)
    assert check_sentence("Seattle's work GPCI is 1.500 [GPCI2026 WA 02].", evidence)    # Alaska's floor, not Seattle's
    assert check_sentence("Seattle's work GPCI is 1.050 [GPCI2026 WA 02].", evidence) == ()
    assert prepare("What is the GPCI adjustment for 99214 in Seattle?", backends).gpci == ()   # a code: priced rows


def _gpci_file(path: str, locality: str) -> tuple[Decimal, Decimal, Decimal]:
    import csv
    import os
    from pathlib import Path
    state, number = locality.split()
    with open(Path(os.environ["CARENAV_MIRROR"]) / "cms" / path, newline="") as f:    # Addendum E: headers, then rows
        row = next(r for r in csv.reader(f) if len(r) >= 7 and r[1].strip() == state and r[2].strip() == number)
    return Decimal(row[4]), Decimal(row[5]), Decimal(row[6])


@pytest.mark.parametrize("question", ["How did the Seattle GPCIs change from 2025 to 2026?",
                                      "Seattle GPCI 2025 vs 2026", "How has Seattle's GPCI changed since 2025?"])
def test_a_gpci_change_asked_gives_each_index_of_both_years_and_the_change(backends, question):
    events = list(answer(question, backends))
    table = next(e for e in events if isinstance(e, FactorEvent))
    seattle = next(r for r in table.gpci if r.asked)
    before, after = _gpci_file("rvu25d/GPCI2025.csv", "WA 02"), _gpci_file("rvu26c/GPCI2026.csv", "WA 02")
    assert (seattle.work, seattle.pe, seattle.mp) == after
    assert seattle.changes() == tuple(a - b for a, b in zip(after, before))
    assert not [r for r in table.gpci if r.earlier is not None and not r.asked]
    text = "".join(e.text for e in events if isinstance(e, TokenEvent) and not e.withheld)
    lead = text.split("\n- ")[1] if "\n- " in text else text
    assert lead.startswith("From CY 2025 to CY 2026") and f"from {before[2]} to {after[2]}" in lead
    assert "[GPCI2025 WA 02] [GPCI2026 WA 02]" in lead
    assert not any(isinstance(e, TokenEvent) and e.withheld for e in events)
    evidence = build_evidence([], [], prepare(question, backends, today=date(2026, 12, 3)).checked)
    change = after[2] - before[2]
    assert check_sentence(f"Seattle's MP GPCI fell by {abs(change)} [GPCI2026 WA 02].", evidence) == ()
    assert check_sentence(f"Seattle's MP GPCI fell by {abs(change) + Decimal('0.01')} [GPCI2026 WA 02].", evidence)


def test_qp_minus_non_qp_is_computed_checked_and_first_when_asked():
    from carenav_core.chat.factors import asks_variant_gap, variant_gaps
    question = "How much higher is the 2026 QP conversion factor than the non-QP one?"
    rows = focus(question)
    gap = variant_gaps(rows)[0]
    assert gap.change == gap.last.amount - gap.first.amount and (gap.first.variant, gap.last.variant) == ("non-QP", "QP")
    evidence = build_evidence([], [], checked_facts(rows))
    sentences = factor_sentences(rows, asks_variant_gap(question))
    assert sentences[0] == gap.sentence() and f"${gap.change}" in sentences[0]
    assert check_sentence(sentences[0], evidence) == ()
    assert check_sentence(sentences[0].replace(f"${gap.change}", "$0.2000"), evidence)
    assert not asks_variant_gap("What is the CY 2026 conversion factor?")


def test_an_anesthesia_cf_of_a_year_that_changed_mid_year_follows_the_date_asked(backends):
    early = prepare("What was the anesthesia conversion factor in Alaska on February 1, 2024?", backends)
    alaska = next(r for r in early.anesthesia if r.asked)
    assert (alaska.amount, alaska.period) == (Decimal("28.08"), "Jan 1-Mar 8")      # RVU24A ANES: 02102,01,28.08
    late = prepare("What was the anesthesia conversion factor in Alaska in 2024?", backends)
    alaska = next(r for r in late.anesthesia if r.asked)
    assert (alaska.amount, alaska.period) == (Decimal("28.54"), "Mar 9-Dec 31")      # RVU24AR on
    text = "".join(DeterministicWriter().stream(late))
    assert "changed during the year: the amounts below apply Mar 9-Dec 31, not Jan 1-Mar 8" in text
