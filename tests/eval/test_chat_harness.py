"""The chat harness on a fast subset, through the real pipeline: DuckDB, embedded PostgreSQL
retrieval and the real `ollama` client against the scripted loopback double."""
from __future__ import annotations

import json

import pytest

from carenav_core import cli
from carenav_core.chat.answer import Answer
from carenav_core.chat.events import DoneEvent, SourcesEvent, TokenEvent, ValuationEvent
from carenav_core.eval.chat import run_chat_evaluation
from carenav_core.eval.golden import GoldenQuestion
from carenav_core.eval.scoring import score_answer
from carenav_core.eval.scripted_model import ScriptedAnswer
from tests.app.conftest import use_settings

SUBSET = 40


@pytest.fixture(scope="module")
def results(backends, oracle):
    return run_chat_evaluation(backends, oracle, seed=7, questions=SUBSET)


def test_subset_is_mixed_and_hostile_enough(results):
    assert results["questions"] == SUBSET and results["model_replies"] == SUBSET
    assert results["hostile_share"] >= 0.3 and results["hostile_sentences"]["scripted"] >= 12
    assert results["categories"]["control"] >= 6 and results["writers"] == {"ollama:llama3.2": SUBSET}


def test_hard_guarantees_hold(results):
    assert results["valuation"]["exactness"] == 1.0, results["valuation"]["mismatches"]
    assert results["valuation"]["rows_compared"] > 100 and not results["valuation"]["unpriced_disagreements"]
    assert results["numbers_traced"]["share"] == 1.0, results["numbers_traced"]["untraced"]
    assert results["numbers_traced"]["numbers"] > 40
    assert results["hostile_sentences"]["reached_user"] == 0, results["hostile_sentences"]["leaked"]
    assert results["citations"]["validity"] == 1.0 and results["citations"]["citations"] > 40
    assert results["controls"]["share"] == 1.0
    assert results["passed"] is True


def test_detection_is_reported_against_the_golden_set(results):
    detection = results["detection"]
    assert detection["precision"] == 1.0 and detection["recall"] >= 0.95
    assert len(results["per_question"]) == SUBSET


def test_faithful_sentences_are_not_blocked(results):
    faithful = results["faithful_sentences"]
    assert faithful["scripted"] > 100 and faithful["share"] >= 0.95


# --- the scoring would notice a failure (so the figures above are not vacuous) ----------------

QUESTION = GoldenQuestion(index=0, category="control", text="Why did the CF fall?", expected_codes=(), families=(),
                          reply_mode="wrong_number")
HOSTILE = "The conversion factor is $99.99 [SYSTEM]."


def test_a_leaked_hostile_sentence_an_untraced_number_and_a_bad_citation_are_counted(oracle):
    events = [TokenEvent(text="Fine [89 FR 1 ¶1]. "), TokenEvent(text=HOSTILE),
              SourcesEvent(cited=(), also_retrieved=()), DoneEvent(writer="ollama:x", withheld=0)]
    script = [ScriptedAnswer(mode="wrong_number", good=(), hostile=(HOSTILE,), chunks=())]
    score = score_answer(QUESTION, Answer.from_events(QUESTION.text, events), script, oracle, 4)
    assert score.hostile_released == [HOSTILE] and score.untraced == ["99.99"]
    assert score.invalid_citations == ["89 FR 1 ¶1", "SYSTEM"]


def test_withheld_notes_are_not_released_prose_and_a_table_on_a_control_is_seen(oracle):
    note = "(removed: states $99.99, which is not in the evidence it cites.) "
    events = [ValuationEvent(codes=("G0556",), families=(), rows=(), provenance=(), unpriced=()),
              TokenEvent(text=note, withheld=True, reasons=("states $99.99",)), TokenEvent(text="Rest.")]
    folded = Answer.from_events(QUESTION.text, events)
    assert folded.released_text == "Rest."
    assert score_answer(QUESTION, folded, [], oracle, 4).valuation_block


def test_cli_runs_the_harness_and_writes_json(full_settings, monkeypatch, tmp_path, capsys):
    use_settings(full_settings, monkeypatch)
    out = tmp_path / "eval" / "chat_results.json"
    assert cli.main(["eval", "chat", "--questions", "6", "--seed", "3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "valuation rows exact" in printed and "PASSED" in printed
    saved = json.loads(out.read_text())
    assert saved["questions"] == 6 and saved["seed"] == 3 and saved["passed"]


def test_cli_without_a_mirror_says_what_to_set(full_settings, monkeypatch, capsys):
    use_settings(full_settings, monkeypatch)
    monkeypatch.delenv("CARENAV_MIRROR")
    assert cli.main(["eval", "chat", "--questions", "1"]) == 2
    assert "CARENAV_MIRROR" in capsys.readouterr().err
