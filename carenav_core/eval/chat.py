"""`carenav eval chat`: the golden questions through the whole chat pipeline.

Real DuckDB, real retrieval store, the real `ollama.Client` against the loopback Ollama double,
whose replies come from the scripted model (faithful, or hostile for 40% of the questions).
Expected detection and valuation come from the golden set and the oracle (carenav_core/eval/oracle.py),
which read the CMS files and data/*.toml without any product code.

Guarantees (`passed` is true only if all hold): valuation rows equal to the oracle's, every money
amount or decimal in released prose traced to a row or a cited excerpt, no scripted hostile
sentence in released prose, every citation a row label or a retrieved source, and no valuation
block on the control questions. Detection precision and recall are reported, not gated.
"""
from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

import ollama

from carenav_core.backends import Backends
from carenav_core.chat.answer import Answer
from carenav_core.chat.pipeline import answer
from carenav_core.llm import ModelClient
from carenav_core.errors import ConfigError, DataError
from carenav_core.eval.golden import golden_set
from carenav_core.eval.ollama_double import OllamaDouble
from carenav_core.eval.oracle import Oracle, OracleError
from carenav_core.eval.scoring import QuestionScore, score_answer
from carenav_core.eval.scripted_model import ScriptedModel
from carenav_core.progress import Progress, silent
from carenav_core.settings import Settings

MODEL_TIMEOUT = 30.0      # seconds; the double answers at once, so only a hang would reach it
EXAMPLES = 20             # failures listed per metric in the JSON


def oracle_for(settings: Settings) -> Oracle:
    """The oracle over the mirror's CMS files (it never reads the product's database)."""
    if settings.mirror is None:
        raise ConfigError("the chat harness's oracle reads the CMS files themselves: set CARENAV_MIRROR to a "
                          "folder laid out like shared/data (with cms/<release>/PPRRVU*.csv)")
    try:
        return Oracle(Path(settings.mirror) / "cms")
    except OracleError as exc:
        raise DataError(f"the evaluation oracle cannot read its sources: {exc}") from exc


def run_chat_evaluation(backends: Backends, oracle: Oracle, *, seed: int = 7,
                        questions: int | None = None, progress: Progress = silent) -> dict[str, Any]:
    """Run the golden set (or its first `questions`) through `backends` with the model client replaced by
    one on the scripted double; results as a JSON-ready dict with `passed`."""
    settings = backends.settings
    started = time.perf_counter()
    golden = golden_set(oracle, seed, questions)
    model = ScriptedModel()
    scores: list[QuestionScore] = []
    with OllamaDouble(responder=model) as double:
        scripted = backends.with_model(ModelClient(client=ollama.Client(host=double.url, timeout=MODEL_TIMEOUT),
                                                   model=settings.llm_model))
        for question in golden:
            model.mode, model.seed = question.reply_mode, seed * 100_003 + question.index * 101
            done = Answer.from_events(question.text, answer(question.text, scripted))
            scores.append(score_answer(question, done, model.take(), oracle, settings.years))
            progress(len(scores), len(golden), question.text[:60])
    return summarize(scores, seed=seed, elapsed=time.perf_counter() - started)


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 1.0


def _detection(scores: Sequence[QuestionScore]) -> dict[str, Any]:
    tp = sum(len(set(s.detected_codes) & set(s.expected_codes)) for s in scores)
    fp = sum(len(set(s.detected_codes) - set(s.expected_codes)) for s in scores)
    fn = sum(len(set(s.expected_codes) - set(s.detected_codes)) for s in scores)
    misses = [{"question": s.text, "expected": list(s.expected_codes), "detected": list(s.detected_codes)}
              for s in scores if set(s.detected_codes) != set(s.expected_codes)]
    return {"precision": _share(tp, tp + fp), "recall": _share(tp, tp + fn), "true_positives": tp,
            "false_positives": fp, "false_negatives": fn, "questions_differing": len(misses), "differences": misses[:EXAMPLES]}


def _valuation(scores: Sequence[QuestionScore]) -> dict[str, Any]:
    rows, exact = sum(s.rows_expected for s in scores), sum(s.rows_exact for s in scores)
    mismatches = [dict(m, question=s.text) for s in scores for m in s.row_mismatches]
    unpriced = [s.text for s in scores if not s.unpriced_agrees]
    return {"rows_compared": rows, "rows_exact": exact, "exactness": _share(exact, rows),
            "unpriced_disagreements": unpriced[:EXAMPLES], "mismatches": mismatches[:EXAMPLES]}


def _prose(scores: Sequence[QuestionScore]) -> dict[str, Any]:
    numbers = sum(s.numbers for s in scores)
    untraced = [{"question": s.text, "number": n} for s in scores for n in s.untraced]
    cites = sum(s.citations for s in scores)
    invalid = [{"question": s.text, "citation": c} for s in scores for c in s.invalid_citations]
    hostile = sum(s.hostile_sent for s in scores)
    leaked = [{"question": s.text, "sentence": h} for s in scores for h in s.hostile_released]
    good, released = sum(s.good_sent for s in scores), sum(s.good_released for s in scores)
    return {
        "numbers_traced": {"numbers": numbers, "traced": numbers - len(untraced),
                           "share": _share(numbers - len(untraced), numbers), "untraced": untraced[:EXAMPLES]},
        "citations": {"citations": cites, "valid": cites - len(invalid), "validity": _share(cites - len(invalid), cites),
                      "invalid": invalid[:EXAMPLES]},
        "hostile_sentences": {"scripted": hostile, "reached_user": len(leaked), "leaked": leaked[:EXAMPLES]},
        "faithful_sentences": {"scripted": good, "released": released, "share": _share(released, good)},
    }


def summarize(scores: Sequence[QuestionScore], *, seed: int, elapsed: float) -> dict[str, Any]:
    """The JSON results: headline metrics, examples of every failure, and one record per question."""
    controls = [s for s in scores if s.category == "control"]
    clean_controls = sum(1 for s in controls if not s.valuation_block)
    called = [s for s in scores if s.model_called]
    results = {
        "seed": seed, "questions": len(scores), "elapsed_seconds": round(elapsed, 1),
        "categories": dict(Counter(s.category for s in scores)),
        "model_replies": len(called), "hostile_replies": sum(1 for s in called if s.mode != "faithful"),
        "hostile_share": _share(sum(1 for s in called if s.mode != "faithful"), len(called)) if called else 0.0,
        "reply_modes": dict(Counter(s.mode for s in called)),
        "detection": _detection(scores), "valuation": _valuation(scores), **_prose(scores),
        "controls": {"questions": len(controls), "without_valuation_block": clean_controls,
                     "share": _share(clean_controls, len(controls))},
        "writers": dict(Counter(s.writer for s in scores)), "withheld_sentences": sum(s.withheld for s in scores),
        "warnings": dict(Counter(w for s in scores for w in s.warnings)),
        "per_question": [s.record() for s in scores],
    }
    results["passed"] = passed(results)
    return results


def passed(results: dict[str, Any]) -> bool:
    """The hard guarantees: exact rows, traced numbers, no leaked hostile sentence, valid citations,
    no valuation block without a code."""
    return (results["valuation"]["exactness"] == 1.0 and results["numbers_traced"]["share"] == 1.0
            and results["hostile_sentences"]["reached_user"] == 0 and results["citations"]["validity"] == 1.0
            and results["controls"]["share"] == 1.0)


def summary_lines(results: dict[str, Any]) -> list[str]:
    """A short human-readable summary of the results."""
    d, v, n = results["detection"], results["valuation"], results["numbers_traced"]
    c, h, k, f = results["citations"], results["hostile_sentences"], results["controls"], results["faithful_sentences"]
    return [
        f"chat harness: {results['questions']} questions (seed {results['seed']}), {results['model_replies']} model "
        f"replies, {results['hostile_share']:.0%} hostile, {results['elapsed_seconds']} s",
        f"  detection            precision {d['precision']:.3f}  recall {d['recall']:.3f}  "
        f"({d['false_positives']} false positive, {d['false_negatives']} missed codes)",
        f"  valuation rows exact {v['rows_exact']}/{v['rows_compared']} ({v['exactness']:.1%})",
        f"  numbers traced       {n['traced']}/{n['numbers']} ({n['share']:.1%})",
        f"  hostile reached user {h['reached_user']} of {h['scripted']} scripted hostile sentences",
        f"  citations valid      {c['valid']}/{c['citations']} ({c['validity']:.1%})",
        f"  controls w/o table   {k['without_valuation_block']}/{k['questions']} ({k['share']:.1%})",
        f"  faithful released    {f['released']}/{f['scripted']} ({f['share']:.1%}; informational)",
        *(["  missed or extra codes in: " + "; ".join(
            f"{x['question']!r} (expected {', '.join(x['expected']) or '-'}, got {', '.join(x['detected']) or '-'})"
            for x in d["differences"][:5])] if d["differences"] else []),
        *([f"  warnings             {results['warnings']}"] if results["warnings"] else []),
        f"  {'PASSED' if results['passed'] else 'FAILED'}",
    ]
