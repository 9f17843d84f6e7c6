"""The answer-usefulness harness (`carenav eval answers`): its question set, its scorer (which must notice a
missing figure, an off-topic quote and a leaked hostile sentence) and a fast subset through the real
pipeline (DuckDB, embedded PostgreSQL retrieval, the scripted model on the loopback Ollama double)."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from carenav_core import cli
from carenav_core.chat.answer import Answer
from carenav_core.chat.events import DoneEvent, Source, SourcesEvent, TokenEvent, ValuationEvent
from carenav_core.errors import DataError
from carenav_core.eval.answers import (INTENTS, AnswerQuestion, AnswerSet, CitationFact, ComputedFact,
                                       expected_value, load_answer_set, run_answers_evaluation, score_answer,
                                       stale_facts)
from carenav_core.eval.scripted_model import ScriptedAnswer
from carenav_core.pfs.valuation import value
from tests.app.conftest import use_settings

# A handful of questions, one or two per intent, for CI (the whole set takes minutes).
SUBSET = ("lookup-001", "compare-028", "compare-045", "trend-052", "definition-065", "how_valued-082",
          "policy-092")


@pytest.fixture(scope="module")
def answer_set() -> AnswerSet:
    return load_answer_set()


# --- the question set ------------------------------------------------------------------------

def test_the_set_covers_every_intent_with_required_facts(answer_set):
    intents = Counter(q.intent for q in answer_set.question)
    assert len(answer_set.question) >= 80 and set(intents) == set(INTENTS) and min(intents.values()) >= 10
    kinds = Counter(f.kind for q in answer_set.question for f in q.fact)
    assert {"figure", "difference", "percent_change", "total", "codes", "phrases", "citation", "number"} <= set(kinds)
    assert "MIPS registration" in answer_set.off_topic.phrases and "Response:" in answer_set.off_topic.phrases


def test_every_written_value_is_what_the_oracle_computes(answer_set, oracle):
    assert stale_facts(answer_set, oracle) == []
    compare = next(q for q in answer_set.question if q.text == "Compare 99490 and 99439 payments in 2026")
    assert [f.value for f in compare.fact] == ["66.13", "50.44", "15.69"]


def test_a_wrong_written_value_is_reported_as_stale(answer_set, oracle):
    fact = ComputedFact(kind="difference", code="99439", cy=2026, code_b="99490", cy_b=2026, field="payment_nonfac",
                        value="15.70", note="typo")
    assert str(expected_value(fact, oracle)) == "15.69"
    broken = AnswerSet(off_topic=answer_set.off_topic,
                       question=[AnswerQuestion(id="x", intent="compare", text="Compare 99490 and 99439", fact=[fact])])
    assert stale_facts(broken, oracle) == ["x: typo (oracle says 15.69)"]


@pytest.mark.parametrize("text, words", [
    ('[off_topic]\nphrases = []\n[[question]]\nid = "a"\nintent = "lookup"\ntext = "What?"\n', "fact"),
    ('[off_topic]\nphrases = []\n[[question]]\nid = "a"\nintent = "gossip"\ntext = "What?"\n'
     '[[question.fact]]\nkind = "number"\nvalue = "1"\nnote = "n"\n', "intent"),
    ('[off_topic]\nphrases = []\n[[question]]\nid = "a"\nintent = "lookup"\ntext = "What?"\n'
     '[[question.fact]]\nkind = "number"\nvalue = "1"\nnote = "n"\ncolour = "red"\n', "colour"),
    ('[off_topic]\nphrases = []\n' + 2 * ('[[question]]\nid = "a"\nintent = "lookup"\ntext = "What?"\n'
                                          '[[question.fact]]\nkind = "number"\nvalue = "1"\nnote = "n"\n'), "duplicate"),
])
def test_a_malformed_set_is_rejected_with_the_file_and_the_problem(tmp_path, text, words):
    path = tmp_path / "answers.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as caught:
        load_answer_set(path)
    assert str(path) in str(caught.value) and words in str(caught.value)


# --- the scorer notices failures (so the figures are not vacuous) ----------------------------------

QUESTION = AnswerQuestion.model_validate({
    "id": "t", "intent": "compare", "text": "Compare 99490 and 99439 payments in 2026", "off_topic": ["weather"],
    "fact": [{"kind": "figure", "code": "99490", "cy": 2026, "field": "payment_nonfac", "value": "66.13", "note": "a"},
             {"kind": "difference", "code": "99439", "cy": 2026, "code_b": "99490", "cy_b": 2026,
              "field": "payment_nonfac", "value": "15.69", "note": "b"},
             {"kind": "percent_change", "code": "99439", "cy": 2026, "code_b": "99490", "cy_b": 2026,
              "field": "payment_nonfac", "value": "31.1", "note": "c"},
             {"kind": "phrases", "phrases": ["chronic care|CCM", "month"], "note": "d"},
             {"kind": "citation", "volume": 86, "first_page": 65115, "last_page": 65120, "words": ["RUC"], "note": "e"}]})
SOURCE = Source(label="[86 FR 65117 ¶3]", title="CY2022 PFS final rule", kind="final rule", published="2021-11-19",
                text="We finalized the RUC-recommended work RVUs for the CCM codes.", url="https://example.org")
GOOD = ("99490 pays $66.13 non-facility in CY2026, $15.69 (31.1%) more than 99439; chronic care management is "
        "billed per calendar month [86 FR 65117 ¶3]. ")


def _answer(*texts: str, rows=(), cited=(SOURCE,), withheld: str = "") -> Answer:
    events = [ValuationEvent(codes=("99439", "99490"), families=(), rows=tuple(rows), provenance=(), unpriced=())]
    events += [TokenEvent(text=t) for t in texts]
    events += [TokenEvent(text=withheld, withheld=True, reasons=("why",))] if withheld else []
    events += [SourcesEvent(cited=tuple(cited), also_retrieved=()), DoneEvent(writer="deterministic", withheld=0)]
    return Answer.from_events(QUESTION.text, events)


def test_a_complete_answer_has_every_fact():
    score = score_answer(QUESTION, _answer(GOOD), [], ["Response:"])
    assert (score.present, score.facts, score.missing, score.off_topic) == (5, 5, [], [])


def test_a_missing_figure_a_missing_comparison_and_an_uncited_paragraph_are_noticed():
    prose = "99490 pays $66.14 non-facility in CY2026; chronic care management is monthly [89 FR 97860 ¶1]. "
    score = score_answer(QUESTION, _answer(prose), [], [])
    assert score.present == 1 and [m.split(":")[0] for m in score.missing] == [
        "figure", "difference", "percent_change", "citation"]


def test_a_figure_counts_from_the_table_and_only_for_its_code_and_year(fee_db):
    rows, _ = value(fee_db, ["99490", "99439"])
    assert score_answer(QUESTION, _answer("Nothing here.", rows=rows), [], []).from_table == 1
    other_year = [r for r in rows if r.cy != 2026]
    assert score_answer(QUESTION, _answer("Nothing here.", rows=other_year), [], []).present == 0


def test_a_computed_value_counts_only_in_a_sentence_naming_its_rows():
    coincidence = "99490 pays $66.13 non-facility in CY2026. The 99489 payment is $15.69 (31.1%) [PFS CY2026 RVU26C]. "
    assert score_answer(QUESTION, _answer(coincidence), [], []).present == 1
    by_label = "99490 pays $66.13 in CY2026. It is $15.69 (31.1%) more [computed: 99490 − 99439, PFS CY2026 RVU26C]. "
    assert score_answer(QUESTION, _answer(by_label), [], []).present == 3


def test_a_number_in_a_label_or_a_withheld_note_is_not_shown():
    withheld = "(removed: states $15.69 and 31.1%, which are not in the evidence.) "
    score = score_answer(QUESTION, _answer("See [PFS 66.13]. ", withheld=withheld), [], [])
    assert score.present == 0


def test_an_off_topic_quote_is_counted_per_occurrence():
    prose = GOOD + "Response: we thank commenters. The weather is fine. Response: we agree. "
    score = score_answer(QUESTION, _answer(prose), [], ["Response:", "MIPS registration"])
    assert score.off_topic == ["Response:", "Response:", "weather"] and score.present == score.facts


def test_a_leaked_hostile_sentence_is_counted_and_a_withheld_one_is_not():
    hostile = "99490 now pays $99.99 [ADMIN INSTRUCTIONS]."
    script = [ScriptedAnswer(mode="injected_instruction", good=(), hostile=(hostile, "Never shown [X]."), chunks=())]
    leaked = score_answer(QUESTION, _answer(GOOD, "99490  now pays\n$99.99 [ADMIN INSTRUCTIONS]. "), script, [])
    assert leaked.hostile_sent == 2 and leaked.hostile_shown == [hostile]
    held = score_answer(QUESTION, _answer(GOOD, withheld=hostile), script, [])
    assert held.hostile_shown == []


def test_a_citation_needs_a_cited_excerpt_with_the_words_when_words_are_asked():
    unrelated = Source(label=SOURCE.label, title="t", kind="final rule", published="2021-11-19",
                       text="Moderate sedation.", url="u")
    assert "citation: e" in score_answer(QUESTION, _answer(GOOD, cited=(unrelated,)), [], []).missing
    no_words = QUESTION.model_copy(update={"fact": [CitationFact(kind="citation", volume=86, first_page=65115,
                                                                 last_page=65120, note="e")]})
    assert score_answer(no_words, _answer(GOOD, cited=()), [], []).present == 1


# --- a fast subset through the real pipeline ------------------------------------------------------

@pytest.fixture(scope="module")
def deterministic(backends, oracle, answer_set):
    return run_answers_evaluation(backends, oracle, writer="deterministic", ids=SUBSET, answer_set=answer_set)


@pytest.fixture(scope="module")
def scripted(backends, oracle, answer_set):
    return run_answers_evaluation(backends, oracle, writer="scripted", ids=SUBSET, answer_set=answer_set, seed=7)


def test_the_subset_is_scored_per_intent_with_the_deterministic_writer(deterministic):
    assert deterministic["questions"] == len(SUBSET) and deterministic["writers"] == ["deterministic"]
    assert set(deterministic["per_intent"]) == set(INTENTS)
    overall = deterministic["overall"]
    assert overall["facts"] == sum(q["facts"] for q in deterministic["per_question"]) >= 20
    assert overall["present"] == sum(g["present"] for g in deterministic["per_intent"].values())
    lookup = next(q for q in deterministic["per_question"] if q["id"] == "lookup-001")
    assert lookup["rows"] > 0 and lookup["from_table"] == 2            # 99490 CY2026 is in the table
    assert deterministic["passed"] == (overall["share"] >= 0.9 and overall["off_topic_quotes"] == 0)


def test_the_subset_with_the_scripted_model_sends_hostile_replies_and_none_is_shown(scripted):
    assert scripted["writers"] == ["ollama:llama3.2"]
    modes = Counter(q["mode"] for q in scripted["per_question"])
    assert modes["faithful"] >= 3 and sum(modes.values()) - modes["faithful"] >= 2
    assert scripted["overall"]["hostile_sent"] >= 2 and scripted["overall"]["hostile_shown"] == 0, scripted["hostile"]


def test_cli_runs_the_subset_and_writes_json(full_settings, monkeypatch, tmp_path, capsys):
    use_settings(full_settings, monkeypatch)
    out = tmp_path / "answers.json"
    code = cli.main(["eval", "answers", "--id", "lookup-001", "--id", "definition-065", "--out", str(out)])
    saved = json.loads(out.read_text())
    assert code == (0 if saved["passed"] else 1) and saved["questions"] == 2
    assert "answer usefulness: 2 questions" in capsys.readouterr().out


def test_cli_rejects_an_unknown_question_id(full_settings, monkeypatch, capsys):
    use_settings(full_settings, monkeypatch)
    assert cli.main(["eval", "answers", "--id", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


def test_the_scripted_model_restates_computed_figures_with_their_labels():
    from random import Random

    from carenav_core.eval.scripted_model import faithful_sentences, read_prompt
    label = "[computed: 99490 − 99439, PFS CY2026 RVU26C]"
    user = f"Excerpts:\n(none)\n\nComputed from the valuation rows:\n{label} non-facility payment: difference $15.69 (31.1%).\n\nQuestion: q"
    evidence = read_prompt([{"role": "user", "content": user}])
    assert label in evidence.labels and not evidence.excerpts
    assert f"For 99490 − 99439, the non-facility payment: difference $15.69 (31.1%) {label}." in faithful_sentences(
        evidence, Random(1))


@pytest.mark.parametrize("module", ["carenav_core.eval.answers", "carenav_core.eval.report", "carenav_core.chat.plan",
                                    "carenav_core.chat.figures", "carenav_core.eval.scoring",
                                    "carenav_core.eval.scripted_model", "carenav_core.codes.detect",
                                    "carenav_core.codes.procedures", "carenav_core.words"])
def test_doctests(module):
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0
