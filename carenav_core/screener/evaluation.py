"""`carenav eval screener`: synthetic families through the whole pipeline with a scripted model.

Families come from the expected-outcome table (data/programs/screener_eval.toml, written from
programs.md) with seeded variations. The scripted Ollama server answers faithfully or with hostile
replies (an invented program, an uncited claim, another program's chunk, coverage for a
retrieval_failed program, broken JSON). Results: invented programs reaching a report (must be 0),
citation validity (must be 100%), share of model proposals overridden, and agreement with the table.
"""
from __future__ import annotations

import dataclasses
import json
import math
import random
import re
import tomllib
from collections import Counter
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Literal

import ollama
from pydantic import BaseModel, ConfigDict, Field

from carenav_core.llm import ModelClient
from carenav_core.eval.ollama_double import OllamaDouble
from carenav_core.progress import Progress, silent
from carenav_core.screener.assemble import Report, card_results, run_screen
from carenav_core.screener.corpus import Chunk, Passage, ProgramSearch, load_chunks
from carenav_core.screener.engine import own_results, screen
from carenav_core.screener.evidence import gather_evidence
from carenav_core.screener.profile import normalize
from carenav_core.screener.rules import PROGRAMS_BY_KEY
from carenav_core.settings import PROJECT_ROOT

EXPECTATIONS_FILE = PROJECT_ROOT / "data" / "programs" / "screener_eval.toml"
MODES = ("faithful", "invented_program", "uncited_claim", "foreign_chunk", "failed_coverage", "not_json")
LABELS = ("likely_relevant", "possibly_relevant", "excluded")
WORD = re.compile(r"[a-z0-9]+")


class _Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="What the family is like.")
    on: date = Field(description="Screening date.")
    answers: dict[str, Any] = Field(description="Fixed intake answers.")
    vary: dict[str, list[Any]] = Field(default_factory=dict, description="Answers drawn per family.")
    expect: dict[str, Literal["likely_relevant", "possibly_relevant", "excluded"]] = Field(
        description="Expected classification per program, from programs.md.")


@dataclass(frozen=True, kw_only=True)
class Family:
    index: int
    scenario: str
    on: date
    answers: dict[str, Any]
    expect: dict[str, str]
    mode: str
    weak_program: str | None


class LexicalSearch:
    """Deterministic word-count cosine over the corpus chunks (evaluation/test stand-in for the store).

    Scores are mapped to `floor + (1 - floor) * cosine` so on-topic passages clear the 0.45 threshold;
    programs listed in `weak` get scores scaled down to exercise retrieval_failed.
    """

    def __init__(self, chunks: tuple[Chunk, ...] | None = None, *, weak: frozenset[str] = frozenset(),
                 floor: float = 0.5, scale: float = 1.0) -> None:
        self.chunks, self.weak, self.floor, self.scale = chunks or load_chunks(), weak, floor, scale
        self.queries: list[tuple[str, str]] = []

    def __call__(self, program: str, query: str, k: int) -> list[Passage]:
        self.queries.append((program, query))
        q = Counter(WORD.findall(query.lower()))
        factor = self.scale * (0.4 if program in self.weak else 1.0)
        scored = sorted(((self._cosine(q, c), c) for c in self.chunks if c.program == program), key=lambda sc: -sc[0])
        return [Passage(chunk_id=c.chunk_id, program=c.program, heading=c.heading, text=c.text,
                        score=round((self.floor + (1 - self.floor) * s) * factor, 4), source_url=c.source_urls[0])
                for s, c in scored[:k]]

    @staticmethod
    def _cosine(q: Counter, chunk: Chunk) -> float:
        d = Counter(WORD.findall(f"{chunk.heading} {chunk.text}".lower()))
        norm = math.sqrt(sum(v * v for v in q.values())) * math.sqrt(sum(v * v for v in d.values()))
        return sum(q[w] * d[w] for w in q) / norm if norm else 0.0


class WeakenedSearch:
    """Any ProgramSearch with the scores of `weak` programs scaled down (x0.4), so that the
    retrieval_failed path occurs in the evaluation whatever search is underneath."""

    def __init__(self, inner: ProgramSearch, weak: frozenset[str]) -> None:
        self.inner, self.weak = inner, weak

    def __call__(self, program: str, query: str, k: int) -> list[Passage]:
        passages = self.inner(program, query, k)
        if program not in self.weak:
            return passages
        return [dataclasses.replace(p, score=round(p.score * 0.4, 4)) for p in passages]


def load_scenarios(path: Path = EXPECTATIONS_FILE) -> tuple[_Scenario, ...]:
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    return tuple(_Scenario.model_validate(s) for s in raw["scenario"])


def generate_families(seed: int, count: int, scenarios: tuple[_Scenario, ...] | None = None) -> list[Family]:
    """`count` families cycling through the scenarios, variations and model modes drawn from `seed`."""
    rng, scenarios = random.Random(seed), scenarios or load_scenarios()
    families = []
    for i in range(count):
        s = scenarios[i % len(scenarios)]
        answers = {**s.answers, **{f: rng.choice(values) for f, values in s.vary.items()}}
        families.append(Family(index=i, scenario=s.name, on=s.on, answers=answers, expect=dict(s.expect),
                               mode=MODES[i % len(MODES)], weak_program=rng.choice([None, *PROGRAMS_BY_KEY])))
    return families


def _tagged(text: str, tag: str) -> Any:
    match = re.search(rf"<{tag}>(.*?)</{tag}>", text, re.DOTALL)
    return json.loads(match.group(1)) if match else []


def _faithful(candidates: list[dict], passages: list[dict], rng: random.Random) -> dict:
    programs = []
    for c in candidates:
        own = [p["chunk_id"] for p in passages if p["program"] == c["program"]]
        claims = [{"text": "Described in the program document.", "chunk_ids": own[:1], "about_coverage": True}] if own else []
        programs.append({"program": c["program"], "summary": f"{c['name']} may help.", "claims": claims,
                         "proposed_label": rng.choice(LABELS), "follow_up_questions": [],
                         "still_needed": ["proof of income"]})
    return {"programs": programs, "priorities": [c["program"] for c in candidates]}


def _hostile(mode: str, candidates: list[dict], passages: list[dict], rng: random.Random) -> dict:
    report = _faithful(candidates, passages, rng)
    first = report["programs"][0]
    if mode == "invented_program":
        report["programs"].append({"program": "wa_cares_fund", "summary": "Pays family caregivers.",
                                   "proposed_label": "likely_relevant"})
    elif mode == "foreign_chunk":
        foreign = [p["chunk_id"] for p in passages if p["program"] != first["program"]] or ["liheap#income-limit"]
        first["claims"] = [{"text": "Pays for heating.", "chunk_ids": foreign[:1], "about_coverage": True}]
    else:
        failed = [c["program"] for c in candidates if c["retrieval_failed"]]
        target = next(p for p in report["programs"] if p["program"] == (failed[0] if failed else first["program"]))
        target["claims"] = [{"text": "Covers all home care costs.", "chunk_ids": [], "about_coverage": True}]
    return report


class ScriptedModel:
    """The reply function the scripted server calls; `family` selects the behaviour."""

    def __init__(self, seed: int) -> None:
        self.rng, self.family = random.Random(seed + 1), None

    def __call__(self, body: dict) -> str:
        user = body["messages"][1]["content"]
        candidates, passages = _tagged(user, "candidates"), _tagged(user, "passages")
        retry = len(body["messages"]) > 2
        mode = self.family.mode if self.family else "faithful"
        if mode == "faithful" or (retry and mode in ("uncited_claim", "not_json")):
            return json.dumps(_faithful(candidates, passages, self.rng))
        if mode == "not_json":
            return "Here is my answer: MAC looks great!"
        return json.dumps(_hostile(mode, candidates, passages, self.rng))


def _score_report(family: Family, report: Report, search: ProgramSearch) -> dict[str, Any]:
    profile = normalize(family.answers)
    results = screen(profile, on=family.on)
    candidates = {r.program.key: r for r in card_results(results)}
    invented = [c.program for c in report.cards if c.program not in candidates]
    citations = valid = failed_coverage = 0
    for card in report.cards:
        if card.program not in candidates:
            continue
        retrieved = gather_evidence(candidates[card.program], profile, search).chunk_ids
        citations += len(card.citations)
        valid += sum(1 for c in card.citations if c.chunk_id in retrieved and c.chunk_id.startswith(card.program + "#"))
        failed_coverage += 1 if card.retrieval_failed and (card.citations or card.claims) else 0
    by_key = {k: r.classification.value for k, r in own_results(results).items()}
    agreements = {k: by_key[k] == v for k, v in family.expect.items()}
    return {"invented": invented, "citations": citations, "valid": valid, "failed_coverage": failed_coverage,
            "agreements": agreements, "actual": {k: by_key[k] for k in family.expect}}


def run_evaluation(*, seed: int = 7, families: int = 100, progress: Progress = silent,
                   search: ProgramSearch | None = None) -> dict[str, Any]:
    """Run the synthetic families; results as a JSON-ready dict with a `passed` flag. `search` is the
    product's retrieval (the pgvector store); None uses the in-memory LexicalSearch stand-in."""
    model = ScriptedModel(seed)
    totals, by_program = Counter(), Counter()
    disagreements, writers = [], Counter()
    with OllamaDouble(responder=model) as server:
        client = ModelClient(client=ollama.Client(host=server.url), model="scripted")
        for family in generate_families(seed, families):
            model.family = family
            weak = frozenset({family.weak_program} - {None})
            family_search = LexicalSearch(weak=weak) if search is None else WeakenedSearch(search, weak)
            report = run_screen(normalize(family.answers), on=family.on, search=family_search, model=client)
            scored = _score_report(family, report, family_search)
            writers[f"{family.mode}:{report.writer}"] += 1
            totals.update(invented=len(scored["invented"]), citations=scored["citations"], valid=scored["valid"],
                          failed_coverage=scored["failed_coverage"], proposals=report.model_proposals,
                          overridden=report.model_overridden, expectations=len(scored["agreements"]),
                          agreed=sum(scored["agreements"].values()))
            by_program.update({f"{k}:expected": 1 for k in scored["agreements"]})
            by_program.update({f"{k}:agreed": 1 for k, ok in scored["agreements"].items() if ok})
            disagreements += [{"family": family.index, "scenario": family.scenario, "program": k,
                               "expected": family.expect[k], "actual": scored["actual"][k]}
                              for k, ok in scored["agreements"].items() if not ok]
            progress(family.index + 1, families, family.scenario)
    summary = _summary(seed, families, totals, writers, disagreements)
    summary["agreement_by_program"] = agreement_by_program(by_program)
    summary["scenarios"] = len(load_scenarios())
    summary["retrieval"] = "lexical stand-in" if search is None else "store"
    return summary


def agreement_by_program(counts: Counter) -> dict[str, dict[str, float]]:
    """Per program: how many expectations were scored and the share the screener agreed with."""
    keys = sorted({k.split(":")[0] for k in counts})
    return {k: {"expectations": counts[f"{k}:expected"],
                "agreement": round(counts[f"{k}:agreed"] / counts[f"{k}:expected"], 4)} for k in keys}


def _summary(seed: int, families: int, totals: Counter, writers: Counter, disagreements: list) -> dict[str, Any]:
    validity = totals["valid"] / totals["citations"] if totals["citations"] else 1.0
    return {
        "seed": seed, "families": families,
        "invented_programs_in_reports": totals["invented"],
        "coverage_described_for_retrieval_failed": totals["failed_coverage"],
        "citations": totals["citations"], "citation_validity": validity,
        "model_proposals": totals["proposals"], "model_proposals_overridden": totals["overridden"],
        "override_share": totals["overridden"] / totals["proposals"] if totals["proposals"] else 0.0,
        "expectations": totals["expectations"],
        "agreement": totals["agreed"] / totals["expectations"] if totals["expectations"] else 1.0,
        "disagreements": disagreements, "writer_by_mode": dict(sorted(writers.items())),
        "passed": totals["invented"] == 0 and validity == 1.0 and totals["failed_coverage"] == 0,
    }
