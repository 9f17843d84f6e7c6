"""Layer 3: the model explains and prioritises candidates; it never decides, never adds programs.

Its reply must parse against `ModelReport` and pass `cross_check`; one retry with the errors fed
back, then the deterministic writer produces the same structure from the rules and passages.
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from carenav_core.chat.budget import messages_tokens
from carenav_core.errors import ModelError
from carenav_core.llm import ModelClient
from carenav_core.screener.engine import ProgramResult
from carenav_core.screener.evidence import Evidence
from carenav_core.screener.profile import Profile, is_unknown
from carenav_core.screener.words import FACT_WORDS

log = logging.getLogger(__name__)

SYSTEM_PROMPT = """You help a Washington State care navigator. The rules engine has already decided which
programs are candidates; you explain and prioritise them, you never decide eligibility.
- Write only about the programs listed in <candidates>; never add or rename a program.
- Every statement about what a program covers, pays or requires must cite chunk ids from that
  program's <passages>; if no passage supports it, leave it out. Cite or omit.
- A program marked retrieval_failed has no passages: say its details could not be verified and make
  no claims about its coverage.
- Suggest follow-up questions for the missing facts. Write for the person: plain words, never the
  field names or program keys of the data (write "household income", not "monthly_income").
- Reply with JSON matching the schema only."""


class Claim(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(description="One statement about the program.")
    chunk_ids: list[str] = Field(default_factory=list, description="Passage chunk ids that support it.")
    about_coverage: bool = Field(description="True when it says what the program covers, pays or requires.")


class ProgramSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    program: str = Field(description="Program key exactly as given in <candidates>.")
    summary: str = Field(description="Two or three plain sentences for the navigator.")
    claims: list[Claim] = Field(default_factory=list, description="Cited statements.")
    proposed_label: Literal["likely_relevant", "possibly_relevant", "excluded"] = Field(
        description="The model's own view; the deterministic layer discards it.")
    follow_up_questions: list[str] = Field(default_factory=list, description="Questions to ask next.")
    still_needed: list[str] = Field(default_factory=list, description="Facts still needed, in plain words.")


class ModelReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    programs: list[ProgramSummary] = Field(description="One entry per candidate.")
    priorities: list[str] = Field(default_factory=list, description="Candidate keys, most urgent first.")


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """A non-excluded program with its rule results and retrieved passages."""

    result: ProgramResult
    evidence: Evidence

    @property
    def key(self) -> str:
        return self.result.program.key


@dataclass(frozen=True, kw_only=True)
class Explanation:
    """What layer 3 produced and how: 'model', or 'deterministic' with the reason."""

    report: ModelReport
    writer: str
    rejections: tuple[str, ...] = ()
    passages_dropped: int = 0       # rule passages left out of the model's prompt to fit its context


def cross_check(report: ModelReport, candidates: tuple[Candidate, ...]) -> list[str]:
    """Problems that make a model report unacceptable; empty when it may be used."""
    by_key = {c.key: c for c in candidates}
    problems = [f"program {k!r} is not among the candidates" for k in report.priorities if k not in by_key]
    for summary in report.programs:
        candidate = by_key.get(summary.program)
        if candidate is None:
            problems.append(f"program {summary.program!r} is not among the candidates")
            continue
        problems += _claim_problems(summary, candidate)
    return problems


def _claim_problems(summary: ProgramSummary, candidate: Candidate) -> list[str]:
    problems, retrieved = [], candidate.evidence.chunk_ids
    for claim in summary.claims:
        if candidate.evidence.retrieval_failed and (claim.about_coverage or claim.chunk_ids):
            problems.append(f"{summary.program}: describes coverage although retrieval failed: {claim.text!r}")
        elif claim.about_coverage and not claim.chunk_ids:
            problems.append(f"{summary.program}: uncited coverage claim: {claim.text!r}")
        problems += [f"{summary.program}: cites {c!r}, which was not retrieved for this program"
                     for c in claim.chunk_ids if c not in retrieved and not candidate.evidence.retrieval_failed]
    return problems + _internal_name_problems(summary)


def _internal_name_problems(summary: ProgramSummary) -> list[str]:
    """Text a person reads must not contain the data's field names (e.g. nursing_facility_level_of_care)."""
    texts = [summary.summary, *summary.still_needed, *summary.follow_up_questions, *(c.text for c in summary.claims)]
    return [f"{summary.program}: uses the internal name {name!r}; write {FACT_WORDS[name]!r} instead"
            for name in FACT_WORDS if "_" in name and any(name in text for text in texts)]


def _profile_data(profile: Profile) -> dict[str, Any]:
    plain = {}
    for name, value in vars(profile).items():
        if is_unknown(value):
            plain[name] = f"unknown ({value.reason})"
        elif hasattr(value, "label"):
            plain[name] = value.label()
        else:
            plain[name] = sorted(value) if isinstance(value, frozenset) else value
    return plain


def _candidate_data(candidate: Candidate) -> dict[str, Any]:
    result = candidate.result
    return {"program": result.program.key, "name": result.program.name,
            "classification": result.classification.value, "retrieval_failed": candidate.evidence.retrieval_failed,
            "rules": [{"rule": o.rule, "label": o.label, "status": o.status.value, "reason": o.verdict.reason}
                      for o in result.outcomes],
            "unknown_facts": [FACT_WORDS[f] for f in result.unknown_fields],
            "always_needed": list(result.program.always_needed)}


def build_messages(profile: Profile, candidates: tuple[Candidate, ...], passages: list[dict[str, Any]] | None = None
                   ) -> list[dict[str, str]]:
    """System prompt plus the data, each part inside its own tag (`passages`: all of them by default)."""
    if passages is None:
        passages = _ranked_passages(candidates)
    user = (f"<profile>{json.dumps(_profile_data(profile))}</profile>\n"
            f"<candidates>{json.dumps([_candidate_data(c) for c in candidates])}</candidates>\n"
            f"<passages>{json.dumps(passages)}</passages>")
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def _ranked_passages(candidates: tuple[Candidate, ...]) -> list[dict[str, Any]]:
    """Every program's best passage first, then every program's second, ... (what is cut last comes first)."""
    per_program = [[{"program": p.program, "chunk_id": p.chunk_id, "heading": p.heading, "text": p.text}
                    for p in c.evidence.passages] for c in candidates]
    return [ps[i] for i in range(max((len(ps) for ps in per_program), default=0)) for ps in per_program if i < len(ps)]


def fit_messages(profile: Profile, candidates: tuple[Candidate, ...], prompt_tokens: int | None
                 ) -> tuple[list[dict[str, str]], int]:
    """The messages within `prompt_tokens` (chat/budget.py's count): the profile, the decided candidates and
    the rules always; passages in rank order (each program's best first) while they fit. Returns the
    messages and how many passages were left out."""
    passages = _ranked_passages(candidates)
    messages = build_messages(profile, candidates, passages)
    if prompt_tokens is None or messages_tokens(messages) <= prompt_tokens:
        return messages, 0
    low, high = 0, len(passages)             # the most passages that fit (binary search: few tokenizer calls)
    while low < high:
        middle = (low + high + 1) // 2
        if messages_tokens(build_messages(profile, candidates, passages[:middle])) <= prompt_tokens:
            low = middle
        else:
            high = middle - 1
    return build_messages(profile, candidates, passages[:low]), len(passages) - low


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    end = flat.find(". ")
    return flat if end < 0 else flat[:end + 1]


def deterministic_summary(candidate: Candidate) -> ProgramSummary:
    """The same structure the model fills, written from rule outcomes and passages alone."""
    result = candidate.result
    met = list(dict.fromkeys(o.label for o in result.outcomes if o.status == "pass"))   # one "already enrolled" once
    open_ = [o.label for o in result.unknown_rules]
    text = f"{result.program.name} is {result.classification.value.replace('_', ' ')}."
    text += f" Criteria met: {'; '.join(met)}." if met else ""
    text += f" Still open: {'; '.join(open_)}." if open_ else ""
    if candidate.evidence.retrieval_failed:
        text += " Its details could not be verified in the program documents."
    claims = [Claim(text=_first_sentence(p.text), chunk_ids=[p.chunk_id], about_coverage=True)
              for p in candidate.evidence.passages[:3]]
    return ProgramSummary(program=candidate.key, summary=text, claims=claims,
                          proposed_label=result.classification.value, follow_up_questions=[], still_needed=[])


def deterministic_report(candidates: tuple[Candidate, ...]) -> ModelReport:
    """Whole layer-3 output without a model: likely programs first, then by fewest unknowns."""
    ordered = sorted(candidates, key=lambda c: (c.result.classification != "likely_relevant",
                                               len(c.result.unknown_rules)))
    return ModelReport(programs=[deterministic_summary(c) for c in ordered], priorities=[c.key for c in ordered])


def _review(content: str, candidates: tuple[Candidate, ...]) -> tuple[ModelReport | None, list[str]]:
    try:
        report = ModelReport.model_validate_json(content)
    except ValidationError as exc:
        return None, [str(exc)]
    problems = cross_check(report, candidates)
    return (None, problems) if problems else (report, [])


def explain(profile: Profile, candidates: tuple[Candidate, ...], *, model: ModelClient | None = None) -> Explanation:
    """Ask the model (one retry with errors fed back); otherwise the deterministic writer."""
    if model is None or not candidates:
        return Explanation(report=deterministic_report(candidates), writer="deterministic")
    num_ctx = model.options.get("num_ctx")
    prompt_tokens = num_ctx - (model.json_num_predict or 0) if num_ctx else None
    messages, dropped = fit_messages(profile, candidates, prompt_tokens)
    rejections: list[str] = []
    if dropped:
        log.info("screener prompt: %d passages left out to fit %s tokens", dropped, prompt_tokens)
    if prompt_tokens is not None and messages_tokens(messages) > prompt_tokens:
        # Even without passages the prompt overflows: a server would silently drop its start (the rules).
        why = (f"model not asked: the screener's prompt needs about {messages_tokens(messages):,} tokens without "
               f"any document passage, more than the {prompt_tokens:,} its context leaves (CARENAV_LLM_NUM_CTX)")
        log.warning(why)
        return Explanation(report=deterministic_report(candidates), writer="deterministic", rejections=(why,),
                           passages_dropped=dropped)
    started = time.monotonic()          # one deadline for the whole explanation, second attempt included
    for _attempt in range(2):
        left = None if model.answer_timeout is None else model.answer_timeout - (time.monotonic() - started)
        try:
            content = model.reply_json(messages, ModelReport, options={"temperature": 0}, total_s=left)
        except ModelError as exc:   # the client already retried a retryable failure once
            log.warning("model call failed, using the deterministic writer: %s", exc)
            return Explanation(report=deterministic_report(candidates), writer="deterministic",
                               rejections=(*rejections, f"model call failed: {exc}"), passages_dropped=dropped)
        report, problems = _review(content, candidates)
        if report is not None:
            return Explanation(report=report, writer="model", rejections=tuple(rejections), passages_dropped=dropped)
        rejections += problems
        messages += [{"role": "assistant", "content": content},
                     {"role": "user", "content": "Your reply was rejected:\n- " + "\n- ".join(problems)
                      + "\nReply again with corrected JSON only."}]
        if prompt_tokens is not None and messages_tokens(messages) > prompt_tokens:
            break                   # the second attempt would not fit the context: do not send a truncated prompt
    return Explanation(report=deterministic_report(candidates), writer="deterministic", rejections=tuple(rejections),
                       passages_dropped=dropped)
