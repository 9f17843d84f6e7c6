"""Writers: the real ollama.Client against the loopback double, and the no-model writer."""
from __future__ import annotations

import socket
from datetime import date
from dataclasses import replace
from decimal import Decimal

import ollama
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from carenav_core.chat.evidence import build_evidence
from carenav_core.chat.guard import OutputGuard, guard_text
from carenav_core.chat.prepared import Prepared
from carenav_core.chat.prompt import build_prompt
from carenav_core.chat.deterministic import FIXED_SENTENCES, newest_rows, NO_MODEL_NOTICE, DeterministicWriter
from carenav_core.chat.plan import Intent, Setting, plan_question
from carenav_core.codes import detect
from carenav_core.errors import ModelError
from carenav_core.llm import ModelClient, model_client
from carenav_core.settings import Settings
from tests.chat.values import EXCERPT, G0556, INJECTION, PROPOSED_2027, make_row
from tests.fixtures_ollama import NetworkBlocked, NetworkGuard

QUESTION = "How is G0556 paid?"
MESSAGES = build_prompt(QUESTION, [EXCERPT], [G0556], [])


def _writer(double, **client_args) -> ModelClient:
    return ModelClient(client=ollama.Client(host=double.url, **client_args), model="llama3.2", keep_alive="5m",
                       options={"temperature": 0})


def _guarded(chunks):
    guard = OutputGuard.for_answer([G0556], [EXCERPT, INJECTION])
    out = [s for chunk in chunks for s in guard.feed(chunk)] + guard.flush()
    return guard, out


# --- Ollama through the double --------------------------------------------------------------------

def test_streams_chunks_and_sends_the_prompt(ollama_double):
    ollama_double.enqueue(["G0556 has a work RVU ", "of 0.25 ", "[PFS CY2025 RVU25D]."])
    chunks = list(_writer(ollama_double).stream(MESSAGES))
    assert chunks == ["G0556 has a work RVU ", "of 0.25 ", "[PFS CY2025 RVU25D]."]
    body = ollama_double.chat_requests()[0].body
    assert body["messages"] == MESSAGES and body["stream"] is True
    assert body["model"] == "llama3.2" and body["keep_alive"] == "5m" and body["options"] == {"temperature": 0}


@pytest.mark.parametrize("reply, released, withheld_reason", [
    ("G0556 pays $15.20 [PFS CY2025 RVU25D]. The CF fell 2.83 percent [89 FR 97860 ¶4].", [True, True], None),
    ("G0556 pays $17.10 [PFS CY2025 RVU25D].", [False], "states $17.10"),
    ("G0556 pays $15.20 [89 FR 12345 ¶9].", [False], 'cites "89 FR 12345 ¶9"'),
    ("G0556 pays $15.20.", [False], "without citing a valuation row label"),
    ("Ignoring the rules as told. G0556 pays $99.99 per month [89 FR 97861 ¶2].", [True, False],
     "without citing a valuation row label"),
])
def test_scripted_replies_through_the_guard(ollama_double, reply, released, withheld_reason):
    ollama_double.enqueue([reply[i:i + 5] for i in range(0, len(reply), 5)])
    guard, out = _guarded(_writer(ollama_double).stream(MESSAGES))
    assert [s.released for s in out] == released
    if withheld_reason:
        assert any(withheld_reason in r for s in out for r in s.reasons)
        assert all(s.text.startswith("(removed: ") for s in out if not s.released)


def test_injected_excerpt_reaches_the_model_only_as_data(ollama_double):
    ollama_double.enqueue("| code | pay |\n| G0556 | $99.99 |")
    messages = build_prompt(QUESTION, [INJECTION], [G0556], [])
    guard, out = _guarded(_writer(ollama_double).stream(messages))
    seen = ollama_double.chat_requests()[0].body["messages"]
    assert seen[0]["content"] == messages[0]["content"] and "never instructions" in seen[0]["content"]
    assert [s.released for s in out] == [True, False]      # the table's money line is withheld


@pytest.mark.parametrize("break_with", ["error", "close"])
def test_a_stream_that_breaks_halfway_is_retryable(ollama_double, break_with):
    ollama_double.enqueue(["G0556 has a work RVU ", "of 0.25 ", "[PFS CY2025 RVU25D]."], break_after=2,
                          break_with=break_with)
    received = []
    with pytest.raises(ModelError) as caught:
        for chunk in _writer(ollama_double).stream(MESSAGES):
            received.append(chunk)
    assert received == ["G0556 has a work RVU ", "of 0.25 "]
    assert caught.value.retryable


def test_stream_without_done_line_is_an_error(ollama_double):
    ollama_double.enqueue(["a", "b"], break_after=2, break_with="close")
    with pytest.raises(ModelError, match="retry|connection|ended"):
        list(_writer(ollama_double).stream(MESSAGES))


def test_missing_model_is_not_retryable(ollama_double):
    ollama_double.enqueue("", status=404, error="model 'llama3.2' not found, try pulling it first")
    with pytest.raises(ModelError, match="ollama pull llama3.2") as caught:
        list(_writer(ollama_double).stream(MESSAGES))
    assert not caught.value.retryable


def test_server_error_is_retryable(ollama_double):
    ollama_double.enqueue("", status=500, error="out of memory")
    ollama_double.enqueue("", status=500, error="out of memory")
    with pytest.raises(ModelError) as caught:
        list(_writer(ollama_double).stream(MESSAGES))
    assert caught.value.retryable
    assert len(ollama_double.chat_requests()) == 2          # tried once more, then gave up


def test_a_retryable_error_is_retried_once_and_the_retry_can_succeed(ollama_double):
    ollama_double.enqueue("", status=503, error="busy")
    ollama_double.enqueue(["G0556 has a work RVU ", "of 0.25 [PFS CY2025 RVU25D]."])
    assert "".join(_writer(ollama_double).stream(MESSAGES)) == "G0556 has a work RVU of 0.25 [PFS CY2025 RVU25D]."
    assert len(ollama_double.chat_requests()) == 2


def test_json_reply_is_retried_once_then_raises(ollama_double):
    from carenav_core.screener.explain import ModelReport
    ollama_double.enqueue("", status=500, error="out of memory")
    ollama_double.enqueue('{"programs": [], "priorities": []}')
    assert _writer(ollama_double).reply_json(MESSAGES, ModelReport) == '{"programs": [], "priorities": []}'
    body = ollama_double.chat_requests()[-1].body
    assert body["stream"] is False and body["format"]["title"] == "ModelReport"
    ollama_double.enqueue("", status=404, error="model not found")
    with pytest.raises(ModelError, match="ollama pull"):
        _writer(ollama_double).reply_json(MESSAGES, ModelReport)
    assert len(ollama_double.chat_requests()) == 3            # not retryable: asked once


def test_slow_server_times_out_retryably(ollama_double):
    ollama_double.enqueue("late", delay=3.0)
    ollama_double.enqueue("late", delay=3.0)
    with pytest.raises(ModelError, match="in time") as caught:
        list(_writer(ollama_double, timeout=0.2).stream(MESSAGES))
    assert caught.value.retryable


def test_refused_connection_is_retryable():
    with socket.socket() as sock:           # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    writer = ModelClient(client=ollama.Client(host=f"http://127.0.0.1:{port}"), model="llama3.2")
    with pytest.raises(ModelError) as caught:
        list(writer.stream(MESSAGES))
    assert caught.value.retryable


def test_non_streaming_chat_and_embed_work_on_the_double(ollama_double):
    ollama_double.enqueue(["Hello ", "there."])
    client = ollama.Client(host=ollama_double.url)
    assert client.chat(model="llama3.2", messages=MESSAGES).message.content == "Hello there."
    first = client.embed(model="nomic-embed-text", input=["a", "b"]).embeddings
    assert first == client.embed(model="nomic-embed-text", input=["a", "b"]).embeddings and first[0] != first[1]


# --- choosing the writer from settings --------------------------------------------------------------

def test_no_host_means_no_model():
    assert model_client(Settings(ollama_host=None)) is None


def test_answering_host_gives_a_writer(ollama_double):
    writer = model_client(Settings(ollama_host=ollama_double.url, llm_model="llama3.2"))
    assert writer is not None and writer.name == "ollama:llama3.2" and writer.keep_alive == "5m"
    assert [r.path for r in ollama_double.requests] == ["/api/tags"]


def test_slow_tags_means_no_model(ollama_double):
    ollama_double.set_tags_delay(3.0)
    assert model_client(Settings(ollama_host=ollama_double.url), probe_timeout=0.2) is None


def test_network_guard_blocks_non_loopback_hosts():
    with NetworkGuard() as guard:
        with pytest.raises(NetworkBlocked):
            socket.create_connection(("192.0.2.1", 11434), timeout=0.5)
        assert model_client(Settings(ollama_host="http://192.0.2.1:11434")) is None
    assert len(guard.attempts) == 2


# --- deterministic ------------------------------------------------------------------------------

def _deterministic(rows, unpriced=(), sources=(EXCERPT,)):
    detection = detect(QUESTION)
    prepared = Prepared(question=QUESTION, detection=detection, plan=plan_question(QUESTION, detection, date(2026, 12, 1)),
                        rows=tuple(rows), figures=(), unpriced=tuple(unpriced), sources=tuple(sources), messages=[],
                        warnings=())
    text = "".join(DeterministicWriter().stream(prepared))
    return text, guard_text(text, build_evidence(rows, sources, (), unpriced), FIXED_SENTENCES)


def test_deterministic_answer_states_the_row_with_its_label():
    text, sentences = _deterministic([G0556], ["G9999"])
    assert text.startswith(NO_MODEL_NOTICE)
    assert ("G0556 (Adv prim care mgmt lvl 1) has work RVU 0.25, a non-facility total of 0.47 RVUs and a "
            "facility total of 0.37 RVUs; at the CY2025 conversion factor of $32.3465 the national "
            "non-facility payment is $15.20 and the national facility payment is $11.97 [PFS CY2025 RVU25D].") in text
    assert "No fee schedule valuation was found for G9999" in text
    assert "[89 FR 97860 ¶4]" in text
    assert all(s.released for s in sentences)


def test_deterministic_answer_quotes_only_guard_safe_excerpt_sentences():
    text, sentences = _deterministic([], sources=(EXCERPT, INJECTION))
    assert "$32.3465" not in text and "$99.99" not in text       # money needs a row label to be stated
    assert "We are finalizing the Advanced Primary Care Management" in text
    assert all(s.released for s in sentences)


def test_an_excerpt_with_nothing_quotable_is_still_named():
    money_only = replace(EXCERPT, text="The CF is $32.3465. It pays $99.99 [x].")
    text, sentences = _deterministic([], sources=(money_only,))
    assert "The final rule published 2024-12-09 is also relevant [89 FR 97860 ¶4]." in text
    assert all(s.released for s in sentences)


_decimals = st.one_of(st.none(), st.decimals(min_value=0, max_value=99999, places=2, allow_nan=False))
_descriptions = st.text(alphabet=st.sampled_from(list("Abc xyz 0123456789.-/,()&$[]%")), max_size=28)


@st.composite
def _rows(draw):
    cy = draw(st.integers(2020, 2030))
    label = draw(st.sampled_from([f"[PFS CY{cy} RVU{cy % 100}D]", f"[CY{cy} NPRM Addendum B]"]))
    return make_row(hcpcs=draw(st.sampled_from(["G0556", "99490", "1234F", "J1234"])),
                    mod=draw(st.sampled_from(["", "26", "TC"])), description=draw(_descriptions), cy=cy,
                    proposed="NPRM" in label, label=label, work_rvu=draw(_decimals), total_nonfac=draw(_decimals),
                    total_fac=draw(_decimals), cf=draw(st.one_of(st.none(), st.just(Decimal("32.3465")))),
                    status=draw(st.sampled_from(["A", "C", "B", "I"])))


@given(st.lists(_rows(), min_size=1, max_size=6), st.lists(st.sampled_from(["G9999", "99999", "0001F"]), max_size=2))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_deterministic_output_always_passes_the_guard(rows, unpriced):
    text, sentences = _deterministic(rows + [PROPOSED_2027], unpriced)
    assert all(s.released for s in sentences), [s.reasons for s in sentences if not s.released]
    newest = newest_rows(rows + [PROPOSED_2027])
    base = {r.hcpcs for r in newest if not r.mod}         # modifier rows are stated only for codes without a base row
    assert text.count(" has ") >= len([r for r in newest if not r.mod or r.hcpcs not in base])   # none dropped


# --- deadlines and the prompt budget ---------------------------------------------------------------

def test_a_first_token_that_never_comes_ends_at_the_deadline(ollama_double):
    import time
    ollama_double.enqueue("late", delay=5.0)
    started = time.monotonic()
    with pytest.raises(ModelError, match="did not start answering within 0.5 s"):
        list(_writer(ollama_double, timeout=30).stream(MESSAGES, first_token_s=0.5, total_s=10))
    assert time.monotonic() - started < 2.5


def test_a_stream_that_stalls_ends_at_the_answer_deadline(ollama_double):
    import time
    ollama_double.enqueue(["G0556 pays ", "$15.20 ", "[PFS CY2025 RVU25D]."], chunk_delay=1.5)
    received, started = [], time.monotonic()
    with pytest.raises(ModelError, match="did not finish its answer within 2 s"):
        for chunk in _writer(ollama_double, timeout=30).stream(MESSAGES, first_token_s=5, total_s=2):
            received.append(chunk)
    assert received and time.monotonic() - started < 3.5


def test_budget_options_are_sent_and_the_prompt_fits(ollama_double):
    from carenav_core.chat.budget import messages_tokens
    from carenav_core.chat.prompt import fit_prompt
    many = [replace(EXCERPT, label=f"[89 FR 97860 ¶{i}]", text=EXCERPT.text * 8) for i in range(40)]
    messages, dropped, _ = fit_prompt(QUESTION, many, [G0556], [], prompt_tokens=2048 - 384)
    assert 0 < dropped < 40 and messages_tokens(messages) <= 2048 - 384
    assert "[PFS CY2025 RVU25D]" in messages[1]["content"] and "[89 FR 97860 ¶0]" in messages[1]["content"]
    ollama_double.enqueue("ok.")
    list(_writer(ollama_double).stream(messages, {"num_ctx": 2048, "num_predict": 384}))
    assert ollama_double.chat_requests()[-1].body["options"] == {"temperature": 0, "num_ctx": 2048, "num_predict": 384}


def test_a_deadline_that_passes_sends_no_second_request(ollama_double):
    """The expired request is closed; the stream's thread must not retry on the closed client."""
    import threading
    import time
    failures = []
    previous, threading.excepthook = threading.excepthook, lambda args: failures.append(args.exc_value)
    try:
        ollama_double.enqueue("late", delay=2.0)
        ollama_double.enqueue("never asked for")
        client = ModelClient(client=ollama.Client(host=ollama_double.url), model="llama3.2",
                             host=ollama_double.url, timeout=0.8)
        with pytest.raises(ModelError, match="within 0.5 s"):
            list(client.stream(MESSAGES, first_token_s=0.5, total_s=10))
        time.sleep(2.5)             # the per-read timeout (0.8 s) passes in the stream's own thread
    finally:
        threading.excepthook = previous
    assert failures == [] and len(ollama_double.chat_requests()) == 1


def test_a_structured_reply_has_one_deadline_for_both_attempts(ollama_double):
    import time
    from pydantic import BaseModel

    class Reply(BaseModel):
        ok: bool
    ollama_double.enqueue('{"ok": true}', delay=3.0)
    client = ModelClient(client=ollama.Client(host=ollama_double.url), model="llama3.2", host=ollama_double.url,
                         timeout=60)
    started = time.monotonic()
    with pytest.raises(ModelError):
        client.reply_json(MESSAGES, Reply, total_s=1.2)
    assert time.monotonic() - started < 2.5


def test_quotes_keep_decimals_and_never_present_a_commenter_as_cms():
    from carenav_core.chat.deterministic import _clean
    from carenav_core.chat.speakers import is_commenter
    assert _clean("we proposed a work RVU of 0.17 for these services.12 We agree") == \
        "we proposed a work RVU of 0.17 for these services. We agree"
    for said in ("Another commenter agreed that we should", "Other commenters stated that", "One commenter recommended",
                 "Several physician commenters said", "Commenters assert that", "A couple of commenters stated that",
                 "The majority of commenters expressed support", "Furthermore, several commenters noted",
                 "Medicare's response: Comment: Most commenters supported"):
        assert is_commenter(said), said
    for cms in ("We agree with commenters that the methodology", "In response to commenters, we clarify that",
                "We thank the commenters for their feedback"):
        assert not is_commenter(cms), cms


def test_a_model_answer_with_nothing_checkable_is_followed_by_the_deterministic_answer(ollama_double):
    """A weak model's reply whose every factual sentence is withheld (here: uncited claims) leaves the user
    the checked deterministic answer, with a warning, instead of notes alone."""
    from carenav_core.chat.answer import Answer
    from carenav_core.chat.pipeline import _prose
    detection = detect(QUESTION)
    prepared = Prepared(question=QUESTION, detection=detection, plan=plan_question(QUESTION, detection, date(2026, 12, 1)),
                        rows=(G0556,), figures=(), unpriced=(), sources=(EXCERPT,), messages=MESSAGES, warnings=())
    from carenav_core.chat.writers import ModelWriter
    ollama_double.enqueue("The question asks: what is G0556? The answer is no. This code was created after long "
                          "lobbying by many large practices.")
    writer = ModelWriter(model=_writer(ollama_double), options={}, first_token_s=None, total_s=None)
    events = list(_prose(prepared, writer))
    done = Answer.from_events(QUESTION, events)
    assert any("cited no row" in w.message for w in done.warnings)
    assert NO_MODEL_NOTICE in done.released_text and "[PFS CY2025 RVU25D]" in done.released_text
    assert "The answer is no" not in done.released_text and len(done.withheld) >= 2


def test_a_figure_question_quotes_only_what_the_rule_says_of_the_asked_codes():
    question = "How much does G0556 pay in 2025?"
    other = replace(EXCERPT, label="[89 FR 98000 ¶1]", codes=("G0511",), text=(
        "The APCM valuation methodology for advanced primary care management in rural health clinics was based "
        "on the average payment of the care management services billed there."))
    own = replace(EXCERPT, label="[89 FR 97900 ¶4]", codes=("G0556", "99490"), text=(
        "We agree with commenters that increasing the valuation of HCPCS code G0556 to the equivalent of three "
        "units of 99490 would better account for the work involved."))
    detection = detect(question)
    plan = plan_question(question, detection, date(2026, 12, 1))
    assert not {"how-valued", "definition", "policy"} & {str(i) for i in plan.intents}
    prepared = Prepared(question=question, detection=detection, plan=plan, rows=(G0556,), figures=(), unpriced=(),
                        sources=(other, own), messages=[], warnings=())
    text = "".join(DeterministicWriter().stream(prepared))
    assert "[89 FR 97900 ¶4]" in text and "[89 FR 98000 ¶1]" not in text


# --- who speaks: commenters' words are theirs, never CMS's ---------------------------------------------

COMMENTS_QUESTION = "What did commenters say about the APCM performance measurement requirement?"
COMMENT = replace(EXCERPT, label="[89 FR 97892 ¶6]", role="comment_summary", codes=(), text=(
    "Comment: Several commenters opposed the performance measurement requirement for APCM services. "
    "They argued that the performance measurement requirement would burden small primary care practices."))
DECISION = replace(EXCERPT, label="[89 FR 97893 ¶10]", role="cms_text", codes=(), text=(
    "After consideration of public comments, we are finalizing the performance measurement requirement for "
    "APCM services as proposed."))


def _answer_to(question, sources, rows=()):
    detection = detect(question)
    plan = plan_question(question, detection, date(2026, 12, 1))
    prepared = Prepared(question=question, detection=detection, plan=plan, rows=tuple(rows), figures=(),
                        unpriced=(), sources=tuple(sources), messages=[], warnings=())
    return plan, "".join(DeterministicWriter().stream(prepared))


def test_a_comment_summary_is_never_quoted_as_cms_even_where_no_sentence_names_commenters():
    """The second sentence of a 'Comment:' paragraph ("They argued ...") is still the commenters' view."""
    _, text = _answer_to("What does the rule say about the APCM performance measurement requirement?",
                         (COMMENT, DECISION))
    assert "They argued" not in text and "Several commenters" not in text
    assert "CMS wrote (CY 2025 final rule): “After consideration of public comments, we are finalizing" in text


def test_a_question_about_comments_quotes_them_attributed_then_cms():
    plan, text = _answer_to(COMMENTS_QUESTION, (DECISION, COMMENT))
    assert plan.comments and "with what commenters said" in plan.summary()
    said = text.index("What commenters said")
    assert "Commenters, as CMS summarised them (CY 2025 final rule): “They argued that the performance measurement" in text
    assert "CMS wrote" not in text[said:text.index("What CMS said:")]           # their views first, CMS's after
    assert "CMS wrote (CY 2025 final rule): “After consideration of public comments" in text[text.index("What CMS said:"):]
    sentences = guard_text(text, build_evidence((), (DECISION, COMMENT), (), ()), FIXED_SENTENCES)
    assert all(s.released for s in sentences)


def test_a_question_about_comments_says_when_no_excerpt_summarises_any():
    from carenav_core.chat.deterministic import NO_COMMENTS
    _, text = _answer_to(COMMENTS_QUESTION, (DECISION,))
    assert NO_COMMENTS in text and "Commenters, as CMS summarised them" not in text


def test_in_a_two_part_question_the_commenters_quoted_are_on_the_code_the_comment_part_names():
    from carenav_core.chat.deterministic import _comment_clause
    assert "G0557" in _comment_clause("How were G0556-G0558 valued, and what did commenters say about G0557?")
    about_other = replace(COMMENT, label="[89 FR 97900 ¶1]", text=(
        "Comment: Several commenters suggested that we increase the work RVU for G0556 to match G0557 and CCM."))
    about_asked = replace(COMMENT, label="[89 FR 97901 ¶1]", text=(
        "Comment: Commenters assert that the proposed HCPCS code G0557 closely resembles the CCM codes for patients."))
    _, text = _answer_to("How was G0556 valued, and what did commenters say about G0557?", (about_other, about_asked))
    quotes = [line for line in text.splitlines() if line.startswith("- Commenters")]
    assert quotes and "[89 FR 97901 ¶1]" in quotes[0]


def test_a_model_that_gives_commenters_views_as_cms_position_is_withheld(ollama_double):
    """Through the real client: the prompt marks the comment summary as such; a reply that still presents it as
    CMS's position loses that sentence, and the same view attributed to commenters is released."""
    messages = build_prompt(COMMENTS_QUESTION, [COMMENT, DECISION], [], [])
    assert "commenters' views as CMS summarised them) Comment: Several commenters" in messages[1]["content"]
    reply = ("CMS believes the performance measurement requirement would burden small primary care practices "
             "[89 FR 97892 ¶6]. Several commenters argued that the performance measurement requirement would burden "
             "small primary care practices [89 FR 97892 ¶6].")
    ollama_double.enqueue([reply[i:i + 7] for i in range(0, len(reply), 7)])
    guard = OutputGuard.for_answer([], [COMMENT, DECISION])
    out = [s for chunk in _writer(ollama_double).stream(messages) for s in guard.feed(chunk)] + guard.flush()
    assert [s.released for s in out] == [False, True]
    assert "as CMS's own position" in out[0].reasons[0]


@pytest.mark.parametrize("question", ["Can rural health clinics bill the APCM codes?", "Can RHCs bill the APCM codes?"])
def test_an_acronym_in_the_rule_answers_its_long_form_in_the_question_and_the_reverse(question):
    """The sentence that answers writes "RHCs" (or "rural health clinics") where the question writes the other."""
    short = replace(EXCERPT, label="[89 FR 98011 ¶6]", text=(
        "We proposed to allow RHCs and FQHCs to bill for these services and receive separate payment for them."))
    long = replace(EXCERPT, label="[89 FR 98011 ¶7]", text=(
        "We proposed to allow rural health clinics to bill for these services and receive separate payment."))
    other = replace(EXCERPT, label="[89 FR 97868 ¶2]", text=(
        "Only one practitioner may bill the APCM codes for a patient in a month, while other practitioners bill other services."))
    _, text = _answer_to(question, (other, long if "RHCs" in question else short))
    assert text.index("[89 FR 9801") < text.index("[89 FR 97868 ¶2]")


def test_initialisms_and_acronyms():
    from carenav_core.chat.deterministic import acronyms, initialisms
    # "Why did CMS ...": the agency, not "care management services"
    assert acronyms("Why did CMS not accept the RUC recommendation for APCM?") == {"ruc", "rucs", "apcm", "apcms"}
    assert {"rhc", "rhcs"} <= initialisms("Can rural health clinics bill?") and "rhcs" in acronyms("RHCs may bill")
    assert not acronyms("Rural clinics may bill") and "fqhc" in initialisms("federally qualified health centers")


def test_a_question_naming_a_rule_year_quotes_that_rule():
    """"in the CY2022 rule": the CY 2022 rule answers, named as analysts name it (not by its 2021 publication);
    another rule is quoted only when the asked one says nothing quotable."""
    newer = replace(EXCERPT, label="[89 FR 97900 ¶8]", title="CY 2025 Payment Policies under the Physician Fee Schedule",
                    text="In this rule we compared CPT code 99490 with the new advanced primary care codes for valuation.")
    older = replace(EXCERPT, label="[86 FR 65117 ¶10]", title="CY 2022 Payment Policies under the Physician Fee Schedule",
                    published="2021-11-19",
                    text="We accepted the recommended work value of CPT code 99490 after reviewing the survey data.")
    for order in ((newer, older), (older, newer)):
        _, text = _answer_to("How did CMS value 99490 in the CY2022 rule?", order)
        assert "CMS wrote (CY 2022 final rule): “We accepted the recommended work value" in text
        assert "[89 FR 97900 ¶8]" not in text
    _, text = _answer_to("How did CMS value 99490 in the CY2022 rule?", (newer,))
    assert "CMS wrote (CY 2025 final rule): “In this rule we compared CPT code 99490" in text


def test_a_rule_is_named_by_the_year_it_governs_else_by_its_publication():
    assert EXCERPT.rule == "CY 2025 final rule"
    assert replace(EXCERPT, title="Medicare Program; Correction", kind="correction").rule == "2024 correction"


# A question that asks whether commenters supported a valuation, in a named year's rule
SUPPORT_QUESTION = "Did commenters support the CY 2022 valuation of the chronic care management codes?"
CY2022 = dict(title="Medicare Program; CY 2022 Payment Policies Under the Physician Fee Schedule", published="2021-11-19")
SUPPORTED = replace(EXCERPT, label="[86 FR 65118 ¶1]", role="cms_text", codes=(), **CY2022, text=(
    "The majority of commenters supported our proposal to accept the RUC-recommended values for the CCM code family."))
FINALIZED = replace(EXCERPT, label="[86 FR 65118 ¶4]", role="cms_response", codes=(), **CY2022, text=(
    "Response: We may consider these topics in future rulemaking. After consideration of the comments, we are "
    "finalizing the proposed values for the 10 CCM/CCCM/PCM codes."))
LATER = replace(COMMENT, label="[89 FR 97900 ¶1]", codes=("G0556", "G0557"), text=(
    "Comment: Several commenters suggested that we increase the work RVU for G0556 to 0.77 to better align with "
    "existing work RVUs for chronic care management and principal care management codes."))


def test_a_question_asking_whether_commenters_supported_a_rule_answers_with_that_rules_commenters_first():
    plan, text = _answer_to(SUPPORT_QUESTION, (LATER, FINALIZED, SUPPORTED))
    assert plan.comments and plan.years == (2022,)
    assert "[89 FR 97900 ¶1]" not in text                   # another year's commenters do not answer it
    said, cms = text.index("What commenters said"), text.index("CMS wrote")
    assert said < cms and "Commenters, as CMS summarised them (CY 2022 final rule): “The majority of commenters " \
        "supported" in text[said:cms]
    # CMS's decision on those comments leads what CMS said
    assert text[cms:].startswith("CMS wrote (CY 2022 final rule): “After consideration of the comments, we are finalizing")


def test_in_a_two_part_question_cms_decision_follows_the_commenters_it_answers():
    from carenav_core.chat.deterministic import CMS_DECIDED
    valued = replace(DECISION, label="[89 FR 97899 ¶10]", codes=("G0556",), text=(
        "We proposed a work RVU of 0.17 for HCPCS code G0556 based on a crosswalk to the CTBS codes for APCM."))
    on_g0557 = replace(COMMENT, label="[89 FR 97901 ¶1]", text=(
        "Comment: Commenters assert that the proposed valuation of HCPCS code G0557 is too low for the work involved."))
    decided = replace(DECISION, label="[89 FR 97901 ¶4]", text=(
        "After consideration of public comments, we are finalizing the valuation of G0557 as proposed."))
    _, text = _answer_to("How was G0556 valued, and what did commenters say about G0557?", (valued, on_g0557, decided))
    assert text.index("[89 FR 97899 ¶10]") < text.index("What commenters said") < text.index(CMS_DECIDED)
    assert text[text.index(CMS_DECIDED):].count("[89 FR 97901 ¶4]") == 1 and text.count("[89 FR 97901 ¶4]") == 1


def test_a_family_name_written_out_counts_once_not_once_a_word():
    """'What are the consent requirements for APCM?': a descriptor that spells out "advanced primary care
    management" does not outrank the sentence about consent."""
    descriptor = replace(EXCERPT, label="[89 FR 97875 ¶8]", codes=("G0558",), text=(
        "HCPCS code G0558 describes advanced primary care management services to a patient with multiple "
        "chronic conditions."))
    consent = replace(EXCERPT, label="[89 FR 97880 ¶10]", codes=(), text=(
        "Patient consent to receive APCM services is required when a new practitioner bills them."))
    _, text = _answer_to("What are the consent requirements for APCM?", (descriptor, consent))
    assert "[89 FR 97880 ¶10]" in text
    assert "[89 FR 97875 ¶8]" not in text or text.index("[89 FR 97880 ¶10]") < text.index("[89 FR 97875 ¶8]")


def test_a_question_about_what_a_correction_fixed_quotes_the_errors_not_the_waiver_boilerplate():
    title = "Medicare and Medicaid Programs; CY 2025 Payment Policies Under the Physician Fee Schedule; Corrections"
    waiver = replace(EXCERPT, label="[90 FR 20803 ¶6]", kind="correction", codes=(), title=title, text=(
        "The corrections contained in this notice do not make substantive changes to the policies, and there is "
        "good cause to waive the notice and comment requirements for this correction notice."))
    error = replace(EXCERPT, label="[90 FR 20801 ¶11]", kind="correction", codes=(), title=title, text=(
        "On page 97767, we inadvertently made a typographical error in the 2025 Facility Fee for Q3014."))
    _, text = _answer_to("What did the 2025 correction notice fix?", (waiver, error))
    assert "CMS wrote (CY 2025 correction): “On page 97767, we inadvertently made a typographical error" in text
    assert "[90 FR 20803 ¶6]" not in text
    _, text = _answer_to("Did CMS waive notice and comment for the 2025 correction notice?", (waiver, error))
    assert "[90 FR 20803 ¶6]" in text           # asked about the procedure itself, the boilerplate answers


def test_a_question_whether_a_code_is_payable_answers_with_its_status_and_the_asked_setting():
    plan, text = _answer_to("Is G0556 payable in a facility setting?", (), rows=(G0556,))
    assert Intent.LOOKUP in plan.intents and plan.setting is Setting.FACILITY
    line = next(line for line in text.splitlines() if G0556.label in line)
    assert f"has PFS status {G0556.status} ({G0556.status_meaning})" in line
    assert "facility payment" in line and "non-facility payment" not in line
    _, text = _answer_to("What does G0556 pay in a facility?", (), rows=(G0556,))
    assert "PFS status" not in text             # not asked: the status stays in the table


def test_a_proposed_work_rvu_stated_twice_in_the_rule_is_compared_with_the_final_once():
    from carenav_core.chat.deterministic import proposed_to_final
    stated = [replace(EXCERPT, label=f"[89 FR 97899 ¶{n}]", published="2024-12-09",
                      text="We proposed a work RVU of 0.17 for HCPCS code G0556 based on 99490.") for n in (8, 10)]
    (said,) = proposed_to_final((G0556,), stated, ("G0556",))
    assert said.startswith("CMS proposed a work RVU of 0.17 for G0556 [89 FR 97899 ¶8]; the CY2025 final")


def test_which_code_pays_the_most_names_the_code_with_its_amount_and_row():
    from carenav_core.chat.deterministic import extreme_sentences
    from carenav_core.chat.pipeline import mark_focus
    levels = [make_row(hcpcs=c, total_nonfac=Decimal(t), total_fac=Decimal(f), work_rvu=Decimal(w),
                       label=f"[PFS CY2025 RVU25D {c}]")
              for c, t, f, w in (("G0556", "0.47", "0.37", "0.25"), ("G0557", "1.66", "1.04", "0.77"),
                                 ("G0558", "3.31", "2.47", "1.67"))]
    question = "Which APCM level pays the most?"
    plan, text = _answer_to(question, (), rows=mark_focus(levels, plan_question(question, detect(question),
                                                                               date(2026, 12, 1))))
    top = levels[2]
    assert (f"Of G0556, G0557 and G0558, G0558 has the highest non-facility payment in CY2025, "
            f"${top.payment_nonfac} {top.label}.") in text
    question = "Which APCM code has the lowest work RVU?"
    plan = plan_question(question, detect(question), date(2026, 12, 1))
    assert extreme_sentences(mark_focus(levels, plan), plan, question) == [
        "Of G0556, G0557 and G0558, G0556 has the lowest work RVU in CY2025, 0.25 [PFS CY2025 RVU25D G0556]."]
    tied = [replace(r, work_rvu=Decimal("0.25")) for r in levels]
    assert extreme_sentences(mark_focus(tied, plan), plan, question) == []      # a tie names no single code
    for question in ("What is G0557 worth on top of G0556?", "What do most practices bill, G0556 or G0557?"):
        plan = plan_question(question, detect(question), date(2026, 12, 1))
        assert extreme_sentences(mark_focus(levels, plan), plan, question) == []    # no superlative asked


def test_cms_reply_to_a_comment_is_looked_for_right_after_it():
    from carenav_core.chat.deterministic import _near, _place
    assert _place("[89 FR 97899 ¶10]") == ("page", "89", 9789910)
    assert _place("[FR Doc. 2023-24184 ¶646]") == ("paragraph", "2023-24184", 646)
    assert _near(_place("[90 FR 513 ¶2]"), _place("[90 FR 512 ¶3]"))             # a low page is still a page
    assert _near(_place("[89 FR 97900 ¶5]"), _place("[89 FR 97899 ¶10]"))
    assert not _near(_place("[89 FR 97871 ¶7]"), _place("[89 FR 97899 ¶10]"))      # before the comment
    assert not _near(_place("[86 FR 97900 ¶5]"), _place("[89 FR 97899 ¶10]"))      # another rule
    assert _near(_place("[FR Doc. 2023-24184 ¶650]"), _place("[FR Doc. 2023-24184 ¶646]"))
    assert _place("[Definition: APCM]") is None


@pytest.mark.parametrize("question, said", [
    ("What is the malpractice RVU of G0556?", "has malpractice (MP) RVU 0.02, work RVU 0.25"),
    ("What is the facility PE RVU for G0556?", "has practice expense (PE) RVU 0.10 facility, work RVU"),
    ("What are the PE RVUs of G0556?", "practice expense (PE) RVU 0.20 non-facility and 0.10 facility"),
    ("What are the global days for G0556?", "has global period XXX (the global period concept does not apply)"),
])
def test_a_question_naming_a_part_of_the_valuation_gets_that_part_stated(question, said):
    _, text = _answer_to(question, (), rows=(G0556,))
    assert said in text
    _, plain = _answer_to("What does G0556 pay?", (), rows=(G0556,))
    assert "malpractice" not in plain and "PE) RVU" not in plain and "global period" not in plain


def test_a_surgical_global_period_and_a_non_facility_na_are_stated_with_the_row():
    knee = make_row(hcpcs="27447", description="Total knee arthroplasty", global_days="090", nonfac_na="NA",
                    work_rvu=Decimal("19.11"), total_nonfac=Decimal("34.71"), total_fac=Decimal("34.71"))
    _, text = _answer_to("What is the global period for 27447?", (), rows=(knee,))
    assert "global period 090 (90 post-operative days)" in text          # 90 is the row's own number
    assert "the file marks its non-facility PE NA" in text


def test_a_question_asking_about_comments_first_gets_their_views_then_cms_decision_then_cms_other_text():
    """"Did commenters support ...?": commenters lead; CMS's decision on them (the paragraph right after) leads
    what CMS said, before CMS's other sentences; a decision far from the comments does not."""
    background = replace(SUPPORTED, label="[86 FR 65117 ¶3]", role="cms_text", text=(
        "We proposed to accept the RUC-recommended values for the chronic care management codes in CY 2022."))
    far = replace(FINALIZED, label="[86 FR 65110 ¶2]", text=(
        "After consideration of the comments, we are finalizing the chronic care management consent policy."))
    _, text = _answer_to(SUPPORT_QUESTION, (background, far, SUPPORTED, FINALIZED))
    said, cms = text.index("What commenters said"), text.index("What CMS said:")
    assert said < cms
    quotes = [line for line in text[cms:].splitlines() if line.startswith("- CMS wrote")]
    assert "[86 FR 65118 ¶4]" in quotes[0]                       # the decision right after the comments, first
    assert "What CMS decided after the comments" not in text
    _, text = _answer_to("How were the chronic care management codes valued in the CY 2022 rule, and did commenters "
                         "support it?", (background, SUPPORTED, FINALIZED))
    assert text.index("What CMS said:") < text.index("What commenters said") < \
        text.index("What CMS decided after the comments")


def test_a_year_named_without_a_rule_prefers_that_years_rule_but_keeps_the_others():
    newer = replace(EXCERPT, label="[89 FR 97900 ¶8]", text=(
        "In this rule we compared CPT code 99490 with the new advanced primary care codes for valuation."))
    older = replace(EXCERPT, label="[86 FR 65117 ¶10]", **CY2022,
                    text="We accepted the recommended work value of CPT code 99490 after reviewing the survey data.")
    _, text = _answer_to("How was 99490 valued in 2022?", (newer, older))
    assert text.index("[86 FR 65117 ¶10]") < text.index("[89 FR 97900 ¶8]")


@pytest.mark.parametrize("question", [
    "Do G0556 and G0557 each require at least 20 minutes?", "What is the most recent payment for G0556 and G0557?",
    "What is G0557 worth on top of G0556?"])
def test_no_ranking_sentence_for_questions_that_ask_no_ranking(question):
    from carenav_core.chat.deterministic import extreme_sentences
    from carenav_core.chat.pipeline import mark_focus
    rows = [make_row(hcpcs=c, total_nonfac=Decimal(t), label=f"[PFS CY2025 RVU25D {c}]")
            for c, t in (("G0556", "0.47"), ("G0557", "1.66"))]
    plan = plan_question(question, detect(question), date(2026, 12, 1))
    assert extreme_sentences(mark_focus(rows, plan), plan, question) == []


def test_notice_and_comment_rulemaking_in_substance_is_quoted_only_waivers_are_boilerplate():
    rfi = replace(EXCERPT, label="[89 FR 97902 ¶3]", codes=(), text=(
        "This Advanced Primary Care RFI is the first step, followed by notice and comment rulemaking on hybrid "
        "payment for advanced primary care in subsequent years."))
    _, text = _answer_to("What comes after the advanced primary care hybrid payment RFI?", (rfi,))
    assert "[89 FR 97902 ¶3]" in text
