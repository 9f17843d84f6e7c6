"""Session 23: rule-text questions whose answer was indexed but not quoted (chat probe round 25, class 4), fixed as
classes. Asked through the real pipeline (real DuckDB, the real embedded PostgreSQL with the CY 2022 and CY 2025 final
rules and the May 2025 correction indexed, the deterministic writer); which sentence answers is read from the indexed
text in the test, never written here."""
from __future__ import annotations

import re
from dataclasses import replace
from datetime import date

import pytest

from carenav_core.chat.deterministic import _Candidate, _with_proposal, _words
from carenav_core.chat.events import Source
from carenav_core.chat.pipeline import CORRECTION_WORDS, prepare, search_text
from carenav_core.chat.plan import Intent
from carenav_core.retrieval.search import SearchResult, retrieve, section_decisions
from tests.chat.test_question_classes import said

TODAY = date(2026, 12, 1)
_QUOTE = re.compile(r"^- CMS wrote \((CY \d{4} [a-z ]+)\): “(.+)” (\[[^\]]+\])\.$")


def _quotes(text: str) -> list[tuple[str, str, str]]:
    """(rule, sentence, label) of each quoted rule-text sentence, in order."""
    return [m.groups() for line in text.splitlines() if (m := _QUOTE.match(line))]


@pytest.mark.parametrize("question", [
    "What did CMS finalize for RHC and FQHC care management billing under G0511?",
    "What did CMS decide about G0511 billing by rural health clinics and FQHCs?",
])
def test_a_decision_question_quotes_the_decision_and_what_was_proposed(backends, question):
    """"What did CMS finalize for RHC and FQHC care management billing under G0511?" quoted the CY 2022 rate method and
    a background line; the section's closing decision ranked 13th behind the comments before it."""
    quotes = _quotes(said(prepare(question, backends, today=TODAY)))
    decided = [n for n, (rule, text, _) in enumerate(quotes)
               if rule == "CY 2025 final rule" and text.startswith("After consideration of public comments, we are "
                                                                     "finalizing our proposal")]
    assert decided, quotes
    # "our proposal as proposed" says nothing alone: what was proposed follows it
    following = quotes[decided[0] + 1]
    assert following[0] == "CY 2025 final rule" and re.search(r"\bwe proposed\b", following[1])
    assert "G0511" in following[1] and "RHCs and FQHCs" in following[1]


def test_the_section_decision_is_added_from_the_best_hits_sections(pg_store):
    """The decision paragraph of a section a question's best paragraphs come from, when not among them."""
    question = "What did CMS finalize for RHC and FQHC care management billing under G0511?"
    found = retrieve(pg_store, question, 6, ("rules",))
    added = section_decisions(pg_store, found)
    assert added.hits and not {h.chunk_id for h in added.hits} & {h.chunk_id for h in found.hits}
    sections = list(dict.fromkeys((h.doc_id, h.heading) for h in found.hits))[:2]
    for hit in added.hits:
        assert (hit.doc_id, hit.heading) in sections
        assert re.search(r"after consideration of (the )?public comments|we are finaliz", hit.text, re.IGNORECASE)
    assert section_decisions(pg_store, SearchResult()).hits == ()


@pytest.mark.parametrize("question", [
    "What did the CY2022 rule do for chronic care management valuation?",
    "What did the CY 2022 final rule decide for principal care management values?",
])
def test_what_a_rule_did_leads_with_its_decision_not_its_history(backends, question):
    """"What did the CY2022 rule do for chronic care management valuation?" quoted how the CY 2015, 2020 and 2021 rules
    valued the codes (recounted in the CY 2022 rule) and not what the CY 2022 rule finalized."""
    quotes = _quotes(said(prepare(question, backends, today=TODAY)))
    assert quotes[0][0] == "CY 2022 final rule"
    assert re.search(r"\bwe are finalizing the proposed values\b", quotes[0][1]), quotes
    earlier = [n for n, (_, text, _) in enumerate(quotes) if re.match(r"(?:In|For) (?:the )?CY 20(?:1\d|2[01])\b", text)]
    assert all(n > 0 for n in earlier)


def _candidate(text: str, score: float, rule: str = "CY 2022") -> _Candidate:
    source = Source(label="[86 FR 65118 ¶4]", title=f"Medicare Program; {rule} Payment Policies Under the Physician "
                    "Fee Schedule", kind="final rule", published="2021-11-19", text=text, url="")
    return _Candidate(score=score, position=0, text=text, source=source)


# sentences of the CY 2022 final rule (86 FR 65117-65118) and the CY 2025 final rule (89 FR 97900)
_DECIDED = "After consideration of the comments, we are finalizing the proposed values for the 10 CCM/CCCM/PCM codes"
_PROPOSED = ("We reviewed the RUC-recommended values for the 10 codes in the CCM family and proposed the recommended "
             "work values for the codes")
_OTHER = "The payment rate for HCPCS code G0511 is calculated based on the average of the national non-facility rate"
_OTHER_RULE = "Specifically, we proposed a work RVU for G0557 of 0.77, which is the sum of the work RVU for CPT codes"


def test_a_decision_on_the_proposal_is_followed_by_what_was_proposed():
    """"we are finalizing the proposed values" does not say what the values are or where they came from: the same
    rule's best "proposed ..." sentence follows it, in place of the lowest-ranked other sentence."""
    candidates = [_candidate(_OTHER_RULE, 9, "CY 2025"), _candidate(_OTHER, 8), _candidate(_DECIDED, 7),
                  _candidate(_PROPOSED, 3)]
    paired = _with_proposal(candidates[:3], candidates, 3)
    assert [c.text for c in paired] == [_OTHER_RULE, _DECIDED, _PROPOSED]
    # another rule's proposal does not explain this rule's decision; nor is a decision that says what it decided paired
    assert _with_proposal(candidates[:3], candidates[:3], 3) == candidates[:3]
    plain = [_candidate("After consideration of public comments, we are finalizing a work RVU of 1.00 for 99490", 7)]
    assert _with_proposal(plain, plain + candidates[3:], 3) == plain


@pytest.mark.parametrize("question", [
    "What did the May 2025 correction notice to the CY2025 PFS fix?",
    "Which errors did the correction to the CY 2025 PFS final rule correct?",
])
def test_a_correction_question_quotes_the_errors_it_corrected(backends, question):
    """"What did the May 2025 correction notice fix?" quoted only "This document merely corrects technical and
    typographical errors": its summary of errors ("On page 97767, we inadvertently ...") shares no word with it."""
    assert search_text(question).endswith(CORRECTION_WORDS)
    quotes = _quotes(said(prepare(question, backends, today=TODAY)))
    assert quotes and all(rule == "CY 2025 correction" for rule, _, _ in quotes)
    placed = [text for _, text, _ in quotes if re.match(r"On pages? \d{5}", text)]
    assert len(placed) >= 2, quotes
    assert not any("merely corrects" in text for _, text, _ in quotes)


@pytest.mark.parametrize("question", [
    "What did CMS finalize for APCM?",
    "What is the correction factor for anesthesia?",     # "correction" naming no correction document
    "Is there a correction for the GPCI floor in Alaska?",
])
def test_other_questions_are_searched_as_asked(question):
    assert search_text(question) == question


@pytest.mark.parametrize("question", [
    "What is the advanced primary care hybrid payment RFI about?",
    "What did CMS ask in the advanced primary care hybrid payment RFI?",
])
def test_a_request_for_information_is_answered_from_its_section(backends, question):
    """"What is the advanced primary care hybrid payment RFI about?" read "payment" as a price question and answered
    with one CTBS quote under "How CMS valued them"."""
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.intents == (Intent.POLICY,)
    text = said(prepared)
    assert "How CMS valued them" not in text
    quotes = _quotes(text)
    headings = {s.label: s.heading for s in prepared.sources}
    assert sum("Request for Information" in headings[label] or "RFI" in sentence
               for _, sentence, label in quotes) >= 2, quotes
    assert any(re.search(r"\bhybrid\b", sentence, re.IGNORECASE) for _, sentence, _ in quotes)


def test_an_acronym_s_plural_matches_the_acronym():
    assert {"rhcs", "rhc", "fqhcs", "fqhc"} <= _words("RHCs and FQHCs bill the individual codes")
    assert "bill" not in _words("RHCs")


def test_a_footnote_paragraph_is_not_quoted(backends):
    """"228 U.S. Department of Health and Human Services, Request for Information (RFI): ..." is a footnote."""
    text = said(prepare("What did CMS ask in its request for information on advanced primary care?", backends,
                        today=TODAY))
    assert not any(re.match(r"\d{1,3} [A-Z]", sentence) for _, sentence, _ in _quotes(text))


@pytest.mark.parametrize("module", ["carenav_core.chat.pipeline", "carenav_core.retrieval.index"])
def test_doctests(module):
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0


@pytest.mark.parametrize("question, defined", [
    ("What did CMS finalize for RHC and FQHC care management billing under G0511?", set()),
    ("How do RHCs bill care management after G0511?", set()),
    ("Can APCM be billed with CCM in the same month?", {"Advanced primary care management", "Chronic care management"}),
])
def test_a_rule_question_defines_only_the_families_it_names(backends, question, defined):
    """"... care management billing under G0511?" printed the definitions of APCM, BHI, CCM, PCM and TCM (the five
    families "care management" names together) between the rule text and the G0511 row."""
    text = said(prepare(question, backends, today=TODAY))
    shown = {m.group(1) for m in re.finditer(r"^.+ \[Definition: ([^\]]+)\]\.$", text, re.MULTILINE)}
    assert shown == defined


def test_a_decision_about_something_else_is_not_quoted_for_a_decision_question():
    """"What did CMS finalize for G2211 in 2024?" quoted the CY 2024 rule's decision on an MSSP assignment provision,
    which shares only "for" and "and" with the question (and with G2211's family name)."""
    from carenav_core.chat.deterministic import Terms, _candidates
    from carenav_core.chat.evidence import build_evidence

    def source(label, text):
        return Source(label=label, title="Medicare Program; CY 2024 Payment Policies Under the Physician Fee Schedule",
                      kind="final rule", published="2023-11-16", text=text, url="")
    other = source("[FR Doc. 2023-24184 ¶731]", "We are finalizing as proposed that the new provision at § 425.400(c)(1)"
                   "(viii) would be applicable for use in determining beneficiary assignment for the performance year "
                   "starting on January 1, 2024, and subsequent performance years.")
    on_point = source("[FR Doc. 2023-24184 ¶660]", "After consideration of public comments, we are finalizing our "
                      "proposal to make HCPCS code G2211 separately payable effective January 1, 2024.")
    sources = (other, on_point)
    evidence = build_evidence((), sources, (), ())
    asked = frozenset({"what", "did", "cms", "finalize", "for", "g2211"})
    terms = Terms(asked=asked, family=frozenset({"and", "add-on", "code", "visit", "complexity"}),
                  written=frozenset({"G2211"}), decision_asked=True)
    quoted = [c.source.label for c in _candidates(sources, terms, {"G2211"}, evidence, re.compile(r"\w"))]
    assert quoted == [on_point.label]
    # asked without "finalize", the same sentence may still be quoted by its shared words (unchanged behaviour)
    plain = Terms(asked=asked, family=terms.family, written=terms.written)
    assert other.label in [c.source.label for c in _candidates(sources, plain, {"G2211"}, evidence,
                                                                 re.compile(r"\w"))]


@pytest.mark.parametrize("question, asks", [
    ("What did CMS decide about G0511 billing by rural health clinics?", True),
    ("What was the final decision on G2211?", True),
    ("What was decided for APCM in 2025?", True),
    ("How do I decide between billing 99213 and 99214?", False),
    ("How does medical decision making affect choosing 99214?", False),
    ("Is shared decision-making billable with G0296?", False),
])
def test_a_decision_is_asked_when_cms_or_a_rule_decides(question, asks):
    from carenav_core.chat.plan import ASKS_DECISION
    assert bool(ASKS_DECISION.search(question)) is asks


def test_a_decision_that_says_what_it_finalized_is_not_paired_nor_one_from_another_section():
    says = _candidate("After consideration of public comments, we are finalizing our proposal to add APCM services as "
                      "a designated care management service", 9, "CY 2025")
    elsewhere = replace(_candidate(_PROPOSED, 3), source=replace(_candidate(_PROPOSED, 3).source, heading="other"))
    decided = _candidate(_DECIDED, 7)
    assert _with_proposal([says, decided], [says, decided, _candidate(_OTHER_RULE, 2, "CY 2025")], 3) == [says, decided]
    assert _with_proposal([decided], [decided, elsewhere], 3) == [decided]


def test_a_rule_question_keeps_the_definition_of_the_family_of_a_code_it_writes(backends):
    """Only families a shared name adds are left out: "What did CMS finalize for G2211?" still defines G2211's."""
    from carenav_core.codes.families import load_families
    family = next(f.name for f in load_families() if "G2211" in f.codes)
    text = said(prepare("What did CMS finalize for G2211?", backends, today=TODAY))
    assert f"[Definition: {family}]." in text
