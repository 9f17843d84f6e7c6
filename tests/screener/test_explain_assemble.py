"""Layers 2-3 and assembly, with the real ollama client against a scripted local double."""
from __future__ import annotations

import json

import ollama
import pytest

from carenav_core.llm import ModelClient
from carenav_core.errors import StoreError
from carenav_core.screener.assemble import confidence, run_screen
from carenav_core.screener.corpus import Passage, load_chunks, load_manifest, split_document
from carenav_core.screener.engine import Classification, screen
from carenav_core.screener.evidence import candidate_query, gather_evidence
from carenav_core.screener.explain import Candidate, ModelReport, cross_check
from carenav_core.screener.profile import normalize
from carenav_core.screener.render import report_markdown
from carenav_core.screener.rules import PROGRAMS
from tests.screener.conftest import ON, profile
from tests.screener.memory_search import MemorySearch
from tests.screener.ollama_double import OllamaDouble

PERSON = profile(veteran_status="no")  # VA pension excluded


def _candidates(search=None):
    person = PERSON
    return tuple(Candidate(result=r, evidence=gather_evidence(r, person, search or MemorySearch()))
                 for r in screen(person, on=ON) if r.classification is not Classification.EXCLUDED)


def _reply(candidates, **tweak) -> str:
    programs = []
    for c in candidates:
        chunk = sorted(c.evidence.chunk_ids)[0] if c.evidence.chunk_ids else None
        claims = [{"text": "It helps.", "chunk_ids": [chunk], "about_coverage": True}] if chunk else []
        programs.append({"program": c.key, "summary": f"About {c.result.program.name}.", "claims": claims,
                         "proposed_label": "likely_relevant", "follow_up_questions": ["Ask about X?"],
                         "still_needed": ["a recent bank statement"]})
    report = {"programs": programs, "priorities": [c.key for c in candidates]}
    for key, value in tweak.items():
        report[key] = value
    return json.dumps(report)


def test_corpus_has_twelve_documents_whose_chunks_back_every_rule():
    chunks = load_chunks()
    assert {c.program for c in chunks} == {p.key for p in PROGRAMS} == set(load_manifest())
    ids = {c.chunk_id for c in chunks}
    assert all(r.document in ids for p in PROGRAMS for r in p.rules)
    assert all(c.text and c.source_urls for c in chunks)


@pytest.mark.parametrize(("text", "words"), [
    ("# no frontmatter\n## A\ntext", "frontmatter"),
    ("+++\nprogram = 'x'\n+++\n## A\n", "frontmatter"),
    ("+++\nprogram='x'\ntitle='t'\ngathered=2026-01-01\nsources=['https://a']\n+++\n## A\none\n## A\ntwo\n", "duplicate"),
])
def test_broken_documents_are_rejected(text, words):
    with pytest.raises(Exception, match=words):
        split_document(text)


def test_query_names_program_and_open_criteria_and_retrieval_stays_in_program():
    result = next(r for r in screen(PERSON, on=ON) if r.program.key == "mac")
    query = candidate_query(PERSON, result)
    assert query.startswith("Medicaid Alternative Care") and "unpaid family caregiver" in query
    stray = Passage(chunk_id="apple_health#income-limit", program="apple_health", heading="h", text="t",
                    score=0.99, source_url="https://x")
    evidence = gather_evidence(result, PERSON, lambda key, q, k: [stray])
    assert evidence.retrieval_failed and not evidence.passages


def test_low_scores_and_store_errors_fail_retrieval():
    result = screen(PERSON, on=ON)[0]
    assert gather_evidence(result, PERSON, MemorySearch(scale=0.4)).retrieval_failed

    def broken(key, query, k):
        raise StoreError("store down")
    assert gather_evidence(result, PERSON, broken).retrieval_failed
    assert gather_evidence(result, PERSON, None).retrieval_failed


def test_model_report_is_used_and_its_labels_are_discarded():
    candidates = _candidates()
    with OllamaDouble([_reply(candidates)]) as server:
        report = run_screen(PERSON, on=ON, search=MemorySearch(), model=ModelClient(client=ollama.Client(host=server.host), model="llama3.2"))
    assert report.writer == "model" and len(server.requests) == 1
    assert report.model_proposals == len(candidates)
    assert report.model_overridden == sum(c.result.classification != "likely_relevant" for c in candidates)
    mac = next(c for c in report.cards if c.program == "mac")
    assert mac.classification == "possibly_relevant"
    assert "a recent bank statement" in mac.still_needed and "nursing_facility_level_of_care" not in mac.still_needed
    assert any("current MAC enrollment status" in s for s in mac.still_needed)
    assert mac.official_url == load_manifest()["mac"].official_url
    assert [e.program for e in report.excluded] == ["va_pension"]


HOSTILE = {
    "invented program": lambda cs: _reply(cs, priorities=["wa_cares_fund"]),
    "invented entry": lambda cs: json.dumps({**json.loads(_reply(cs)), "programs": json.loads(_reply(cs))["programs"]
                                             + [{"program": "wa_cares_fund", "summary": "s", "proposed_label": "excluded"}]}),
    "uncited coverage": lambda cs: _reply(cs, programs=[{"program": cs[0].key, "summary": "s", "proposed_label": "excluded",
                                                         "claims": [{"text": "Pays $5,000.", "about_coverage": True}]}]),
    "other program's chunk": lambda cs: _reply(cs, programs=[{"program": "mac", "summary": "s", "proposed_label": "excluded",
                                                              "claims": [{"text": "x", "chunk_ids": ["tsoa#income-limit"],
                                                                          "about_coverage": True}]}]),
    "not json": lambda cs: "I think MAC is great",
    "internal field name": lambda cs: _reply(cs, programs=[{"program": cs[0].key, "summary": "s",
                                                            "proposed_label": "excluded",
                                                            "still_needed": ["nursing_facility_level_of_care"]}]),
}


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_hostile_replies_are_retried_once_then_the_deterministic_writer_takes_over(kind):
    candidates = _candidates()
    bad = HOSTILE[kind](candidates)
    with OllamaDouble([bad, bad]) as server:
        report = run_screen(PERSON, on=ON, search=MemorySearch(), model=ModelClient(client=ollama.Client(host=server.host), model="llama3.2"))
    assert report.writer == "deterministic" and len(server.requests) == 2 and report.rejections
    assert "rejected" in server.requests[1]["messages"][-1]["content"]
    assert {c.program for c in report.cards} == {c.key for c in candidates}


def test_a_good_second_reply_is_accepted():
    candidates = _candidates()
    with OllamaDouble([HOSTILE["invented program"](candidates), _reply(candidates)]) as server:
        report = run_screen(PERSON, on=ON, search=MemorySearch(), model=ModelClient(client=ollama.Client(host=server.host), model="llama3.2"))
    assert report.writer == "model" and report.rejections


def test_coverage_claims_for_a_retrieval_failed_program_are_rejected():
    candidates = _candidates(MemorySearch(scale=0.4))
    assert all(c.evidence.retrieval_failed for c in candidates)
    claim = {"program": candidates[0].key, "summary": "s", "proposed_label": "excluded",
             "claims": [{"text": "Covers home care.", "chunk_ids": [], "about_coverage": True}]}
    problems = cross_check(ModelReport.model_validate({"programs": [claim]}), candidates)
    assert problems and "retrieval failed" in problems[0]


def test_model_server_errors_are_retried_once_then_fall_back():
    # Issue 9 item 3: the shared model client retries a retryable error (HTTP 500) once.
    with OllamaDouble([], status=500) as server:
        report = run_screen(PERSON, on=ON, search=MemorySearch(), model=ModelClient(client=ollama.Client(host=server.host), model="llama3.2"))
    assert report.writer == "deterministic" and len(server.requests) == 2
    assert "model call failed" in report.rejections[0]


def test_without_a_model_the_deterministic_writer_produces_the_whole_report():
    report = run_screen(normalize({"age": 80}), on=ON, search=MemorySearch(scale=0.4))
    markdown = report_markdown(report)
    assert report.writer == "deterministic" and "not an eligibility decision" in markdown
    assert all(c.retrieval_failed and not c.citations for c in report.cards)
    assert "could not be verified" in markdown
    assert "About how much income does the household get each month?" in report.follow_up_questions
    pace = next(c for c in report.cards if c.program == "pace")
    # computed by re-running PACE with the assessment answered each way (branches.what_would_change)
    assert any("If assessed as not at that level: not likely to apply." in line for line in pace.what_would_change)
    assert not any("nursing_facility_level_of_care" in line for line in pace.what_would_change)


def test_markdown_lists_exclusions_and_citations():
    report = run_screen(PERSON, on=ON, search=MemorySearch())
    markdown = report_markdown(report)
    assert "## Not likely to apply" in markdown and "Veteran or surviving spouse" in markdown
    msp = next(c for c in report.cards if c.program == "msp")
    assert msp.citations and f"[{msp.citations[0].heading}]({msp.citations[0].source_url})" in markdown
    assert "`msp#" not in markdown  # chunk ids are internal names
    assert "| Program | Result | Why | Next step |" in markdown and "What the tags on figures mean" in markdown
    assert json.loads(json.dumps(report.to_dict()))["on"] == "2026-05-01"


@pytest.mark.parametrize(("args", "expected"), [
    ((Classification.LIKELY, 0.8, 0, False), "high"), ((Classification.LIKELY, 0.5, 0, False), "medium"),
    ((Classification.POSSIBLY, 0.8, 1, False), "medium"), ((Classification.POSSIBLY, 0.8, 2, False), "low"),
    ((Classification.LIKELY, 0.8, 0, True), "medium"), ((Classification.POSSIBLY, 0.3, 0, True), "low"),
])
def test_confidence_table(args, expected):
    assert confidence(*args) == expected


@pytest.mark.parametrize(("text", "words"), [
    ("[other]\n", "unknown top-level keys"),
    ("[program.x]\nname='n'\nfile='x.txt'\nofficial_url='https://a'\ngathered=2026-01-01\n", "program x"),
    ("[program.x\n", "manifest.toml"),
])
def test_broken_manifests_are_rejected(text, words):
    from carenav_core.screener.corpus import parse_manifest
    with pytest.raises(Exception, match=words):
        parse_manifest(text)


def test_the_model_client_exists_only_when_a_configured_host_answers(ollama_double):
    from carenav_core.llm import model_client
    from carenav_core.settings import Settings
    assert model_client(Settings()) is None
    assert model_client(Settings(ollama_host="http://127.0.0.1:9"), probe_timeout=0.5) is None
    assert isinstance(model_client(Settings(ollama_host=ollama_double.url)), ModelClient)


# --- the prompt budget and the deadline (issue 15) -------------------------------------------------

def _client(server, num_ctx: int, **more) -> ModelClient:
    return ModelClient(client=ollama.Client(host=server.host), model="llama3.2", options={"num_ctx": num_ctx},
                       json_num_predict=256, **more)


def test_the_screener_prompt_is_fitted_to_the_context_best_passage_of_each_program_first():
    from carenav_core.chat.budget import messages_tokens
    from carenav_core.screener.explain import build_messages, fit_messages
    candidates = _candidates()
    whole = messages_tokens(build_messages(PERSON, candidates))
    bare = messages_tokens(build_messages(PERSON, candidates, []))
    assert whole > bare
    budget = bare + (whole - bare) // 3
    messages, dropped = fit_messages(PERSON, candidates, budget)
    assert dropped > 0 and messages_tokens(messages) <= budget
    sent = json.loads(messages[1]["content"].split("<passages>")[1].split("</passages>")[0])
    with_passages = [c.key for c in candidates if c.evidence.passages]
    if len(sent) >= len(with_passages):      # every program's best passage goes in before any second one
        assert {p["program"] for p in sent} == set(with_passages)
    candidates_sent = _candidates()
    with OllamaDouble([_reply(candidates_sent)]) as server:
        report = run_screen(PERSON, on=ON, search=MemorySearch(), model=_client(server, budget + 256))
    assert report.writer == "model" and report.passages_dropped > 0
    assert messages_tokens(server.requests[0]["messages"]) <= budget


def test_a_context_too_small_for_the_screener_is_not_asked_at_all():
    with OllamaDouble([_reply(_candidates())]) as server:
        report = run_screen(PERSON, on=ON, search=MemorySearch(), model=_client(server, 600))
    assert report.writer == "deterministic" and server.requests == []
    assert report.rejections and report.rejections[0].startswith("model not asked")


def test_a_slow_screener_model_ends_within_one_deadline():
    import time
    from carenav_core.eval.ollama_double import OllamaDouble as LoopbackDouble
    with LoopbackDouble() as double:
        double.enqueue(_reply(_candidates()), delay=4.0)
        client = ModelClient(client=ollama.Client(host=double.url), model="llama3.2", host=double.url, timeout=60,
                             answer_timeout=1.5)
        started = time.monotonic()
        report = run_screen(PERSON, on=ON, search=MemorySearch(), model=client)
    assert report.writer == "deterministic" and time.monotonic() - started < 4.0
    assert any("model call failed" in r for r in report.rejections)
