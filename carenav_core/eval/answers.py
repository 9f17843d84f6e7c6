"""`carenav eval answers`: does the answer answer the question? (issue 10 item 5)

The questions of data/eval/answers.toml carry the facts a useful answer must contain (figures, computed
differences, percent changes and totals, code lists, definition phrases, a cited paragraph), written
down before the writer was tuned. Each question runs through the whole pipeline, with the deterministic
writer or with the scripted model on the loopback Ollama double (faithful and hostile replies), and is
scored mechanically on what the user sees: the prose the output guard released and the valuation table.

Per intent (lookup, compare, trend, definition, how_valued, policy): share of required facts present,
off-topic phrases quoted, scripted hostile sentences shown. Targets (issue 10): >= 90% of facts, 0
off-topic quotes, 0 hostile sentences shown. Every figure, difference, percent change and total written
in the TOML is recomputed here from the oracle's rows (Decimal, half-up) before anything is scored.
"""
from __future__ import annotations

import re
import time
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Annotated, Any, Literal, Sequence, Union

import ollama
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from carenav_core.backends import Backends
from carenav_core.chat.answer import Answer
from carenav_core.chat.pipeline import answer
from carenav_core.errors import DataError
from carenav_core.eval.golden import HOSTILE_MODES
from carenav_core.eval.ollama_double import OllamaDouble
from carenav_core.eval.oracle import Oracle
from carenav_core.eval.scripted_model import ScriptedAnswer, ScriptedModel
from carenav_core.llm import ModelClient
from carenav_core.pfs.rows import ValuationRow
from carenav_core.progress import Progress, silent

ANSWERS_TOML = Path(__file__).resolve().parents[2] / "data" / "eval" / "answers.toml"
INTENTS = ("lookup", "compare", "trend", "definition", "how_valued", "policy")
TARGET_SHARE = 0.90               # issue 10 item 5: >= 90% of required facts present
MODEL_TIMEOUT = 30.0              # seconds; the double answers at once
HOSTILE_SLOTS = (1, 3)            # positions i % 5 that get a hostile reply (40%, as the chat harness)
CENT, TENTH = Decimal("0.01"), Decimal("0.1")
Field_ = Literal["payment_nonfac", "payment_fac", "work_rvu", "total_nonfac", "total_fac"]
Code = Annotated[str, Field(pattern=r"^[0-9A-Z]{5}$")]


# --- the question set ---------------------------------------------------------------------------

class _Fact(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    note: str = Field(description="The fact in words, e.g. '99490 CY2026 non-facility $66.13'.")


class FigureFact(_Fact):
    kind: Literal["figure"]
    code: Code
    cy: int
    field: Field_
    value: str = Field(description="As the CMS file or the payment prints it, e.g. '66.13'.")


class ComputedFact(_Fact):
    """code_b/cy_b against code/cy: difference (b - a), percent_change ((b - a) / a x 100) or total (a + b)."""
    kind: Literal["difference", "percent_change", "total"]
    code: Code
    cy: int
    code_b: Code
    cy_b: int
    field: Field_
    value: str


class NumberFact(_Fact):
    kind: Literal["number"]
    value: str = Field(description="A number stated in the rule text, printed as there.")


class CodesFact(_Fact):
    kind: Literal["codes"]
    codes: list[Code] = Field(min_length=1)


class PhrasesFact(_Fact):
    kind: Literal["phrases"]
    phrases: list[str] = Field(min_length=1, description="All required; 'a|b' accepts either, case-insensitive.")


class CitationFact(_Fact):
    kind: Literal["citation"]
    volume: int
    first_page: int
    last_page: int
    words: list[str] = Field(default_factory=list, description="A cited excerpt in range contains one of them.")


Fact = Annotated[Union[FigureFact, ComputedFact, NumberFact, CodesFact, PhrasesFact, CitationFact],
                 Field(discriminator="kind")]


class AnswerQuestion(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    intent: Literal["lookup", "compare", "trend", "definition", "how_valued", "policy"]
    text: str = Field(min_length=3)
    off_topic: list[str] = Field(default_factory=list, description="Phrases this answer must not quote.")
    fact: list[Fact] = Field(min_length=1)


class OffTopic(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    phrases: list[str]


class AnswerSet(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    off_topic: OffTopic
    question: list[AnswerQuestion] = Field(min_length=1)


def load_answer_set(path: Path = ANSWERS_TOML) -> AnswerSet:
    """The question set; a malformed file raises DataError naming the file and the first problem."""
    try:
        answer_set = AnswerSet.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise DataError(f"cannot read the answer-usefulness questions: {exc}", path=str(path)) from exc
    except ValidationError as exc:
        raise DataError(f"not a valid answer-usefulness set (expected [off_topic] and [[question]] with "
                        f"[[question.fact]] tables as the file header describes): {exc}", path=str(path)) from exc
    ids = [q.id for q in answer_set.question]
    if len(set(ids)) != len(ids):
        raise DataError(f"duplicate question ids {sorted({i for i in ids if ids.count(i) > 1})}", path=str(path))
    return answer_set


# --- expected values from the oracle -----------------------------------------------------------

def _oracle_value(oracle: Oracle, code: str, cy: int, field_name: str) -> Decimal | None:
    rows = [r for r in oracle.rows([code], years=99) if r.cy == cy]
    return getattr(rows[0], field_name) if rows else None


def expected_value(fact: FigureFact | ComputedFact, oracle: Oracle) -> Decimal | None:
    """What the oracle's rows say the fact's value is (None when a row or a value is missing)."""
    a = _oracle_value(oracle, fact.code, fact.cy, fact.field)
    if isinstance(fact, FigureFact):
        return a
    b = _oracle_value(oracle, fact.code_b, fact.cy_b, fact.field)
    if a is None or b is None or (fact.kind == "percent_change" and a == 0):
        return None
    if fact.kind == "difference":
        return (b - a).quantize(CENT, rounding=ROUND_HALF_UP)
    if fact.kind == "total":
        return (a + b).quantize(CENT, rounding=ROUND_HALF_UP)
    return ((b - a) * 100 / a).quantize(TENTH, rounding=ROUND_HALF_UP)


def stale_facts(answer_set: AnswerSet, oracle: Oracle) -> list[str]:
    """Every written figure/computed value the oracle disagrees with, as 'id: note (oracle says X)'."""
    stale = []
    for question in answer_set.question:
        for fact in question.fact:
            if isinstance(fact, (FigureFact, ComputedFact)):
                expected = expected_value(fact, oracle)
                if expected is None or expected != Decimal(fact.value):
                    stale.append(f"{question.id}: {fact.note} (oracle says {expected})")
    return stale


# --- what the user sees, and whether a fact is in it ---------------------------------------------

_LABEL = re.compile(r"\[[^\[\]\n]*\](?:\([^()\s]*\))?")          # "[89 FR 97860 ¶4]", or a Markdown link
_FR_LABEL = re.compile(r"\[\s*(\d+)\s+FR\s+(\d+)[^\[\]\n]*\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_PERCENT = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s?(?:%|percent\b|per cent\b)", re.IGNORECASE)


def _spaces(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@dataclass(frozen=True, kw_only=True)
class Shown:
    """An answer as the user sees it: released prose (with and without its labels) and the table."""
    prose: str                       # released prose, whitespace collapsed
    words: str                       # the same without bracketed labels, digit-group commas removed
    rows: tuple[ValuationRow, ...]
    cited: tuple[tuple[str, str], ...]          # (label, excerpt text) of cited sources
    sentences: tuple[tuple[str, str], ...] = ()  # (sentence with its labels, its words) of the released prose

    @classmethod
    def of(cls, done: Answer) -> "Shown":
        prose = _spaces(done.released_text)
        sentences = tuple((s, _words(s)) for s in _SENTENCE_END.split(done.released_text) if s.strip())
        return cls(prose=prose, words=_words(prose), rows=done.rows, cited=tuple((s.label, s.text) for s in done.cited),
                   sentences=sentences)


def _words(text: str) -> str:
    """Text without bracketed labels, digit-group commas removed ("$1,234.50" -> "$1234.50")."""
    return re.sub(r"(?<=\d),(?=\d{3}\b)", "", _LABEL.sub(" ", _spaces(text)))


def prints_number(text: str, value: str) -> bool:
    """Whether `text` prints `value` (sign ignored; "$" allowed; not part of a longer number).

    >>> prints_number("99490 pays $66.13 [PFS]", "66.13"), prints_number("166.13", "66.13"), prints_number("66.135", "66.13")
    (True, False, False)
    >>> prints_number("bring in $64,536.00", "64536.00"), prints_number("1,234,567", "234567")
    (True, False)
    """
    number = re.escape(value.lstrip("-+"))
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)          # "$64,536.00" prints 64536.00
    return re.search(rf"(?<![\d.]){number}(?!\d|\.\d)", text) is not None


def prints_percent(text: str, value: str) -> bool:
    """Whether `text` states a percentage that rounds (half-up, one decimal) to |value|.

    >>> prints_percent("up 9.34% since", "-9.3"), prints_percent("up 9 percent", "9.3")
    (True, False)
    """
    wanted = abs(Decimal(value))
    return any(Decimal(m).quantize(TENTH, rounding=ROUND_HALF_UP) == wanted for m in _PERCENT.findall(text))


def _names_rows(fact: ComputedFact, sentence: str) -> bool:
    """Whether a sentence (labels included: "[computed: 99490 − 99439, …]" names its rows) names both codes,
    or for one code both years."""
    if fact.code != fact.code_b:
        return fact.code in sentence and fact.code_b in sentence
    return str(fact.cy) in sentence and str(fact.cy_b) in sentence


def _states(fact: ComputedFact, shown: Shown) -> bool:
    """A released sentence prints the computed value and names the rows it comes from."""
    prints = prints_percent if fact.kind == "percent_change" else prints_number
    return any(prints(words, fact.value) and _names_rows(fact, sentence) for sentence, words in shown.sentences)


def _in_table(fact: FigureFact, rows: Sequence[ValuationRow]) -> bool:
    return any(r.hcpcs == fact.code and r.cy == fact.cy and not r.proposed and not r.mod
               and getattr(r, fact.field) == Decimal(fact.value) for r in rows)


def _phrase(text: str, phrase: str) -> bool:
    return any(alt.strip().lower() in text.lower() for alt in phrase.split("|"))


def _cites(fact: CitationFact, shown: Shown) -> bool:
    in_range = {m.group(0) for m in _FR_LABEL.finditer(shown.prose)
                if int(m.group(1)) == fact.volume and fact.first_page <= int(m.group(2)) <= fact.last_page}
    if not in_range or not fact.words:
        return bool(in_range)
    keys = {_key(label) for label in in_range}
    return any(_key(label) in keys and any(w.lower() in text.lower() for w in fact.words) for label, text in shown.cited)


def _key(label: str) -> str:
    return re.sub(r"\s+", "", label.strip().strip("[]")).casefold()


def where_present(fact: Fact, shown: Shown) -> str | None:
    """'table' or 'prose' when the fact is shown (the table is checked first), else None."""
    if isinstance(fact, FigureFact):
        return "table" if _in_table(fact, shown.rows) else "prose" if prints_number(shown.words, fact.value) else None
    if isinstance(fact, ComputedFact):
        return "prose" if _states(fact, shown) else None
    if isinstance(fact, NumberFact):
        return "prose" if prints_number(shown.words, fact.value) else None
    if isinstance(fact, CodesFact):
        in_rows = {r.hcpcs for r in shown.rows}
        found = [c in in_rows or re.search(rf"(?<![0-9A-Z]){c}(?![0-9A-Z])", shown.words) for c in fact.codes]
        return ("table" if all(c in in_rows for c in fact.codes) else "prose") if all(found) else None
    if isinstance(fact, PhrasesFact):
        return "prose" if all(_phrase(shown.words, p) for p in fact.phrases) else None
    return "prose" if _cites(fact, shown) else None


def off_topic_quotes(prose: str, phrases: Sequence[str]) -> list[str]:
    """Each off-topic phrase the prose quotes (case-insensitive), once per occurrence."""
    return [p for p in phrases for _ in re.finditer(re.escape(p), prose, re.IGNORECASE)]


def hostile_shown(prose: str, answers: Sequence[ScriptedAnswer]) -> list[str]:
    """Scripted hostile sentences that reached the user whole (whitespace ignored)."""
    return [s for a in answers for s in a.hostile if _spaces(s) in prose]


# --- scoring one answer ----------------------------------------------------------------------

@dataclass(kw_only=True)
class AnswerScore:
    """What the harness measured about one answer."""
    id: str
    intent: str
    text: str
    mode: str
    writer: str
    facts: int
    present: int
    from_table: int
    missing: list[str] = field(default_factory=list)
    off_topic: list[str] = field(default_factory=list)
    hostile_sent: int = 0
    hostile_shown: list[str] = field(default_factory=list)
    withheld: int = 0
    rows: int = 0

    def record(self) -> dict[str, Any]:
        return dict(self.__dict__)


def score_answer(question: AnswerQuestion, done: Answer, answers: Sequence[ScriptedAnswer],
                 off_topic: Sequence[str], mode: str = "faithful") -> AnswerScore:
    """Score one folded answer against its question's facts, the off-topic phrases and the script."""
    shown = Shown.of(done)
    where = [(fact, where_present(fact, shown)) for fact in question.fact]
    return AnswerScore(id=question.id, intent=question.intent, text=question.text, mode=mode, writer=done.writer,
                       facts=len(where), present=sum(1 for _, w in where if w),
                       from_table=sum(1 for _, w in where if w == "table"),
                       missing=[f"{fact.kind}: {fact.note}" for fact, w in where if not w],
                       off_topic=off_topic_quotes(shown.prose, [*off_topic, *question.off_topic]),
                       hostile_sent=sum(len(a.hostile) for a in answers),
                       hostile_shown=hostile_shown(shown.prose, answers), withheld=len(done.withheld),
                       rows=len(done.rows))


# --- the run -----------------------------------------------------------------------------------

def reply_mode(index: int) -> str:
    """Faithful, or (for 40% of the questions) one hostile kind in turn, as the chat harness does.

    >>> [reply_mode(i) for i in range(4)]
    ['faithful', 'wrong_number', 'faithful', 'unlabelled_number']
    """
    if index % 5 not in HOSTILE_SLOTS:
        return "faithful"
    return HOSTILE_MODES[(index // 5 * len(HOSTILE_SLOTS) + HOSTILE_SLOTS.index(index % 5)) % len(HOSTILE_MODES)]


def chosen_questions(answer_set: AnswerSet, questions: int | None = None,
                     ids: Sequence[str] = ()) -> list[AnswerQuestion]:
    """The questions with these ids (in file order), else the first `questions`, else all."""
    if ids:
        unknown = sorted(set(ids) - {q.id for q in answer_set.question})
        if unknown:
            raise DataError(f"no question with id {', '.join(unknown)} in the answer-usefulness set")
        return [q for q in answer_set.question if q.id in set(ids)]
    return answer_set.question[:questions] if questions else list(answer_set.question)


def run_answers_evaluation(backends: Backends, oracle: Oracle, *, writer: str = "deterministic", seed: int = 7,
                           questions: int | None = None, ids: Sequence[str] = (), answer_set: AnswerSet | None = None,
                           progress: Progress = silent) -> dict[str, Any]:
    """Ask the chosen questions with `writer` ("deterministic": no model; "scripted": the scripted model on
    the loopback double) and score them; the JSON-ready results carry `passed`."""
    if writer not in ("deterministic", "scripted"):
        raise ValueError(f"writer must be 'deterministic' or 'scripted', not {writer!r}")
    answer_set = answer_set or load_answer_set()
    stale = stale_facts(answer_set, oracle)
    if stale:
        raise DataError(f"{len(stale)} written facts disagree with the oracle, e.g. {'; '.join(stale[:3])}",
                        path=str(ANSWERS_TOML))
    chosen, started = chosen_questions(answer_set, questions, ids), time.perf_counter()
    if writer == "deterministic":
        scores = _ask_all(chosen, backends.with_model(None), None, answer_set.off_topic.phrases, seed, progress)
    else:
        model = ScriptedModel()
        with OllamaDouble(responder=model) as double:
            client = ModelClient(client=ollama.Client(host=double.url, timeout=MODEL_TIMEOUT),
                                 model=backends.settings.llm_model)
            scores = _ask_all(chosen, backends.with_model(client), model, answer_set.off_topic.phrases, seed, progress)
    return summarize(scores, writer=writer, seed=seed, elapsed=time.perf_counter() - started)


def _ask_all(chosen: Sequence[AnswerQuestion], backends: Backends, model: ScriptedModel | None,
             off_topic: Sequence[str], seed: int, progress: Progress) -> list[AnswerScore]:
    scores = []
    for index, question in enumerate(chosen):
        mode = reply_mode(index) if model else "none"
        if model:
            model.mode, model.seed = mode, seed * 100_003 + index * 101
        done = Answer.from_events(question.text, answer(question.text, backends))
        scores.append(score_answer(question, done, model.take() if model else (), off_topic, mode))
        progress(len(scores), len(chosen), question.text[:60])
    return scores


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 1.0


def _group(scores: Sequence[AnswerScore]) -> dict[str, Any]:
    facts, present = sum(s.facts for s in scores), sum(s.present for s in scores)
    return {"questions": len(scores), "facts": facts, "present": present, "share": _share(present, facts),
            "from_table": sum(s.from_table for s in scores),
            "questions_complete": sum(1 for s in scores if s.present == s.facts),
            "off_topic_quotes": sum(len(s.off_topic) for s in scores),
            "hostile_sent": sum(s.hostile_sent for s in scores),
            "hostile_shown": sum(len(s.hostile_shown) for s in scores)}


def summarize(scores: Sequence[AnswerScore], *, writer: str, seed: int, elapsed: float) -> dict[str, Any]:
    """Headline figures overall and per intent, examples of every failure, one record per question."""
    by_intent: dict[str, list[AnswerScore]] = defaultdict(list)
    for score in scores:
        by_intent[score.intent].append(score)
    results = {
        "writer": writer, "seed": seed, "questions": len(scores), "elapsed_seconds": round(elapsed, 1),
        "targets": {"share": TARGET_SHARE, "off_topic_quotes": 0, "hostile_shown": 0},
        "overall": _group(scores),
        "per_intent": {intent: _group(by_intent[intent]) for intent in INTENTS if by_intent.get(intent)},
        "missing": [{"id": s.id, "question": s.text, "missing": s.missing} for s in scores if s.missing],
        "off_topic": [{"id": s.id, "question": s.text, "quoted": s.off_topic} for s in scores if s.off_topic],
        "hostile": [{"id": s.id, "question": s.text, "shown": s.hostile_shown} for s in scores if s.hostile_shown],
        "writers": sorted({s.writer for s in scores}),
        "per_question": [s.record() for s in scores],
    }
    overall = results["overall"]
    results["passed"] = (overall["share"] >= TARGET_SHARE and overall["off_topic_quotes"] == 0
                         and overall["hostile_shown"] == 0)
    return results


def summary_lines(results: dict[str, Any]) -> list[str]:
    """A short human-readable table: one line per intent and one overall."""
    lines = [f"answer usefulness: {results['questions']} questions, writer {results['writer']} "
             f"({', '.join(results['writers'])}), seed {results['seed']}, {results['elapsed_seconds']} s",
             f"  {'intent':<11} {'questions':>9} {'facts present':>16} {'share':>7} {'off-topic':>9} {'hostile shown':>13}"]
    for name, group in [*results["per_intent"].items(), ("overall", results["overall"])]:
        lines.append(f"  {name:<11} {group['questions']:>9} {group['present']:>7}/{group['facts']:<8} "
                     f"{group['share']:>7.1%} {group['off_topic_quotes']:>9} "
                     f"{group['hostile_shown']:>6} of {group['hostile_sent']:<4}")
    lines += [f"  missing in {m['id']}: {'; '.join(m['missing'][:3])}" for m in results["missing"][:8]]
    lines.append(f"  targets: >= {TARGET_SHARE:.0%} of facts, 0 off-topic quotes, 0 hostile sentences shown: "
                 f"{'PASSED' if results['passed'] else 'FAILED'}")
    return lines


def intent_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One table row per intent and one overall (the Evaluation page's 'Answer usefulness' table)."""
    groups = [*results["per_intent"].items(), ("overall", results["overall"])]
    return [{"intent": name, "questions": g["questions"], "facts present": f"{g['present']}/{g['facts']}",
             "share": round(g["share"], 3), "off-topic quotes": g["off_topic_quotes"],
             "hostile shown": f"{g['hostile_shown']} of {g['hostile_sent']}",
             "ok": g["share"] >= TARGET_SHARE and g["off_topic_quotes"] == 0 and g["hostile_shown"] == 0}
            for name, g in groups]
