"""Shared builders for screener tests."""
from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from carenav_core.screener.engine import Context
from carenav_core.screener.intake import load_intake_options
from carenav_core.screener.profile import Profile, normalize
from carenav_core.screener.rules import PROGRAMS_BY_KEY
from carenav_core.screener.rules.base import Outcome
from carenav_core.screener.thresholds import load_thresholds

# A 70-year-old single homeowner in King County with modest income and everything answered.
BASE_ANSWERS = {
    "age": 70, "county": "King", "household_size": 1, "marital_status": "single",
    "monthly_income": "1000-1299", "assets": "0-2000", "medicare_parts": ["A", "B"], "apple_health": "none",
    "extra_help": "no", "disability": "no", "veteran_status": "veteran", "wartime_service": "yes",
    "adl_help": ["bathing"], "nursing_facility_level_of_care": "assessed_yes", "living_situation": "own_home",
    "has_unpaid_caregiver": "yes", "caring_for_someone": "no", "care_recipient_age": "dont_know",
    "care_relationship": "dont_know", "pays_for_heating": "yes",
}
ON = date(2026, 5, 1)


def profile(**overrides: object) -> Profile:
    """BASE_ANSWERS with overrides; a value of None removes the answer (unanswered)."""
    answers = {**BASE_ANSWERS, **overrides}
    return normalize({k: v for k, v in answers.items() if v is not None})


def context(on: date = ON) -> Context:
    return Context(thresholds=load_thresholds(), on=on, options=load_intake_options())


def run_rule(program: str, rule: str, person: Profile, on: date = ON) -> Outcome:
    """Evaluate one named rule of one program."""
    found = [r for r in PROGRAMS_BY_KEY[program].rules if r.name == rule]
    assert found, f"{program} has no rule {rule}"
    return found[0].evaluate(person, context(on))


def with_fields(person: Profile, **fields: object) -> Profile:
    return replace(person, **fields)


@pytest.fixture
def base_profile() -> Profile:
    return profile()


@pytest.fixture(autouse=True)
def _no_real_model_or_store(monkeypatch):
    """Screener tests never reach a real model server (no Ollama host) nor, unless they build their own
    embedded store, the product's retrieval store (the edges' program search returns nothing)."""
    from carenav_core.screener import commands, edges
    monkeypatch.delenv("CARENAV_OLLAMA_HOST", raising=False)
    monkeypatch.setattr(edges, "program_search", lambda settings: None)
    monkeypatch.setattr(commands, "program_search", lambda settings: None)
