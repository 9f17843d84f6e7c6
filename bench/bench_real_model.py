"""Real-model check (issue 15 item 5; manual, never in CI): the answer-usefulness questions (and a few
screens) against whatever model `CARENAV_OLLAMA_HOST` serves, through the product's own pipeline.

    python bench/ollama_shim.py --port 11435 &            # SmolLM2-135M behind an Ollama-API shim
    CARENAV_OLLAMA_HOST=http://127.0.0.1:11435 CARENAV_LLM_MODEL=smollm2 \\
        python bench/bench_real_model.py --questions 32 --screens 3 --out bench/out/real_model.json

Per answer: sentences released / withheld / cut off (incomplete), repeats dropped, citations in the released
prose, first-token and total seconds (wall clock, from the question to the first prose event and to the
end), whether the model's answer fell back to the deterministic writer (model error or deadline), and the
required facts of data/eval/answers.toml present in what the user sees. When the server is the shim
(`bench/ollama_shim.py`), its /shim/last adds the model's own prompt token count, which is compared with
the product's offline budget count (chat/budget.py) to measure the tokenizer margin. Prints a table per
question and a summary; `--out` writes the JSON.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from collections import defaultdict
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_note, percentiles  # noqa: E402

from carenav_core.backends import open_backends  # noqa: E402
from carenav_core.chat import budget  # noqa: E402
from carenav_core.chat.answer import Answer  # noqa: E402
from carenav_core.chat.deterministic import FIXED_SENTENCES  # noqa: E402
from carenav_core.chat.events import TokenEvent, WarningKind  # noqa: E402
from carenav_core.chat.evidence import CITATION  # noqa: E402
from carenav_core.chat.guard import INCOMPLETE  # noqa: E402
from carenav_core.chat.pipeline import answer  # noqa: E402
from carenav_core.chat.sentences import split_sentences  # noqa: E402
from carenav_core.eval.answers import INTENTS, load_answer_set, score_answer  # noqa: E402
from carenav_core.settings import Settings  # noqa: E402

FELL_BACK = {WarningKind.MODEL_ERROR, WarningKind.MODEL_DOWN}


def spread(questions, count: int):
    """`count` questions taken in turn from each intent (so a short run still covers every intent)."""
    by_intent = defaultdict(list)
    for q in questions:
        by_intent[q.intent].append(q)
    chosen, turn = [], 0
    while len(chosen) < min(count, len(questions)):
        for intent in INTENTS:
            if turn < len(by_intent[intent]) and len(chosen) < count:
                chosen.append(by_intent[intent][turn])
        turn += 1
    return chosen


def shim_record(host: str, question: str) -> dict | None:
    """The shim's record of the newest request for `question` (None for a real Ollama server)."""
    try:
        with urllib.request.urlopen(host.rstrip("/") + "/shim/history", timeout=5) as reply:
            requests = json.load(reply)["requests"]
    except (urllib.error.URLError, OSError, ValueError, KeyError):
        return None
    asked = f"Question: {question.strip()}"
    return next((r for r in reversed(requests) if r.get("messages") and asked in r["messages"][-1]["content"]), None)


def ask(question, backends, host: str, off_topic) -> dict:
    started, first = time.perf_counter(), None
    events = []
    for event in answer(question.text, backends):
        if isinstance(event, TokenEvent) and event.text.strip() and first is None:
            first = time.perf_counter() - started
        events.append(event)
    total = time.perf_counter() - started
    done = Answer.from_events(question.text, events)
    released = [s for s in split_sentences(done.released_text) if s.strip() and s.strip() not in FIXED_SENTENCES]
    incomplete = sum(1 for t in done.withheld if INCOMPLETE in t.reasons)
    kinds = [w.kind for w in done.warnings]
    score = score_answer(question, done, (), off_topic)
    record = {
        "id": question.id, "intent": question.intent, "question": question.text, "writer": done.writer,
        "released": len(released), "withheld": len(done.withheld) - incomplete, "incomplete": incomplete,
        "citations": len(CITATION.findall(done.released_text)), "first_token_s": round(first or total, 2),
        "total_s": round(total, 2), "fell_back": any(k in FELL_BACK for k in kinds),
        "warnings": [str(k) for k in kinds], "facts": score.facts, "facts_present": score.present,
        "missing": score.missing, "withheld_reasons": sorted({r for t in done.withheld for r in t.reasons}),
        "prose": done.text,
    }
    last = shim_record(host, question.text)
    if last and last.get("messages"):
        ours = budget.messages_tokens(last["messages"])
        raw = round(ours / budget.SAFETY)
        record.update(model_prompt_tokens=last["prompt_tokens"], budget_tokens=ours, wordpiece_tokens=raw,
                      prompt_truncated=last["prompt_truncated"], num_ctx=last["num_ctx"],
                      generated=last["generated"], done_reason=last["done_reason"], queue_s=last["queue_s"])
    return record


def screens(backends, count: int) -> list[dict]:
    from carenav_core.screener.assemble import run_screen
    from carenav_core.screener.evaluation import generate_families
    from carenav_core.screener.profile import normalize
    from carenav_core.screener.edges import program_search
    out = []
    for family in generate_families(7, count):
        started = time.perf_counter()
        report = run_screen(normalize(family.answers), on=family.on, search=program_search(backends.store),
                            model=backends.model)
        out.append({"scenario": family.scenario, "writer": report.writer, "seconds": round(time.perf_counter() - started, 1),
                    "rejections": list(report.rejections)[:5], "rejected": len(report.rejections)})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=32)
    parser.add_argument("--screens", type=int, default=0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    settings = Settings()
    if not settings.ollama_host:
        print("set CARENAV_OLLAMA_HOST to the model server (e.g. bench/ollama_shim.py)", file=sys.stderr)
        return 2
    backends = open_backends(settings)
    if backends.model is None:
        print(f"the model server at {settings.ollama_host} did not answer", file=sys.stderr)
        return 2
    answer_set = load_answer_set()
    chosen = spread(answer_set.question, args.questions)
    print(f"real model: {settings.llm_model} at {settings.ollama_host}; num_ctx {settings.llm_num_ctx}, "
          f"num_predict {settings.llm_num_predict_chat}, deadlines {settings.llm_first_token_timeout:g} s first token / "
          f"{settings.llm_answer_timeout:g} s answer; {len(chosen)} questions; {load_note()}", flush=True)
    records = []
    header = f"{'id':16} {'rel':>3} {'wh':>3} {'inc':>3} {'cit':>3} {'first s':>7} {'total s':>7} {'fb':>2} {'facts':>5} {'model tok':>9} {'budget':>6}"
    print(header)
    for question in chosen:
        r = ask(question, backends, settings.ollama_host, answer_set.off_topic.phrases)
        records.append(r)
        print(f"{r['id']:16} {r['released']:>3} {r['withheld']:>3} {r['incomplete']:>3} {r['citations']:>3} "
              f"{r['first_token_s']:>7.1f} {r['total_s']:>7.1f} {'y' if r['fell_back'] else '':>2} "
              f"{r['facts_present']:>2}/{r['facts']:<2} {r.get('model_prompt_tokens', ''):>9} {r.get('budget_tokens', ''):>6}",
              flush=True)
    firsts, totals = [r["first_token_s"] for r in records], [r["total_s"] for r in records]
    n = len(records)
    summary = {
        "model": settings.llm_model, "host": settings.ollama_host, "questions": n, "load": load_note(),
        "released": sum(r["released"] for r in records), "withheld": sum(r["withheld"] for r in records),
        "incomplete": sum(r["incomplete"] for r in records),
        "citations_per_answer": round(sum(r["citations"] for r in records) / max(n, 1), 2),
        "first_token_p50_p95": [round(x, 1) for x in percentiles(firsts)],
        "total_p50_p95": [round(x, 1) for x in percentiles(totals)],
        "fell_back": sum(r["fell_back"] for r in records),
        "facts": [sum(r["facts_present"] for r in records), sum(r["facts"] for r in records)],
    }
    measured = [r for r in records if r.get("model_prompt_tokens")]
    if measured:
        ratios = sorted(r["model_prompt_tokens"] / r["wordpiece_tokens"] for r in measured)
        summary["tokenizer"] = {
            "model_over_wordpiece_min_median_max": [round(ratios[0], 3), round(ratios[len(ratios) // 2], 3),
                                                    round(ratios[-1], 3)],
            "safety": budget.SAFETY, "under_budget": sum(1 for r in measured if r["model_prompt_tokens"] <= r["budget_tokens"]),
            "truncated_by_server": sum(1 for r in measured if r["prompt_truncated"]), "measured": len(measured)}
    if args.screens:
        summary["screens"] = screens(backends, args.screens)
    backends.close()
    print("\nsummary")
    for key, value in summary.items():
        print(f"  {key:22} {value}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"summary": summary, "answers": records}, indent=2, default=str))
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
