"""The intake as a person reads it: sections, questions in plain words, option wording, and which
questions apply given earlier answers. The page (views/screen.py) renders these; the core validates
the answers (intake.py), so a hidden question is simply unanswered."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal

from carenav_core.screener.intake import choices, load_intake_options

Kind = Literal["choice", "multi", "number", "money"]


@dataclass(frozen=True, kw_only=True)
class Question:
    field: str
    section: str
    text: str
    kind: Kind
    help: str = ""
    options: dict[str, str] | None = None        # answer value -> words shown; None = from the intake data
    applies: Callable[[dict], bool] = lambda answers: True


YES_NO = {"yes": "Yes", "no": "No"}
SECTIONS = ("Who is this screening for", "About the person", "Money", "Health and daily help", "Caregiving",
            "Military service")


def _for_other(answers: dict) -> bool:
    return answers.get("screening_for") == "someone_i_care_for"


def _caring(answers: dict) -> bool:
    return answers.get("caring_for_someone") == "yes"


def _served(answers: dict) -> bool:
    return answers.get("veteran_status") in ("veteran", "surviving_spouse")


QUESTIONS: tuple[Question, ...] = (
    Question(field="screening_for", section=SECTIONS[0], kind="choice", text="Who is this screening for?",
             options={"myself": "Myself", "someone_i_care_for": "Someone I care for"}),
    Question(field="caregiver_age", section=SECTIONS[0], kind="number", text="Your age (the caregiver)",
             applies=_for_other),
    Question(field="age", section=SECTIONS[1], kind="number", text="How old is the person?"),
    Question(field="county", section=SECTIONS[1], kind="choice", text="Which Washington county do they live in?"),
    Question(field="marital_status", section=SECTIONS[1], kind="choice", text="Are they married?",
             options={"single": "No (single, widowed or divorced)", "married": "Yes, married"}),
    Question(field="household_size", section=SECTIONS[1], kind="number",
             text="How many people live together and buy food together, counting them?"),
    Question(field="living_situation", section=SECTIONS[1], kind="choice", text="Where do they live now?",
             options={"own_home": "In a home they own", "rented_home": "In a rented home",
                      "with_family": "With family or friends", "adult_family_home": "In an adult family home",
                      "assisted_living": "In assisted living", "nursing_facility": "In a nursing home"}),
    Question(field="monthly_income", section=SECTIONS[2], kind="money",
             text="About how much income does the household get each month, before taxes?",
             help="Count Social Security, pensions, wages and other income of everyone in the household."),
    Question(field="assets", section=SECTIONS[2], kind="money",
             text="About how much do they (and a spouse) have in savings and other countable assets?",
             help="Bank accounts, stocks and bonds, and property other than the home. Do not count the home "
                  "they live in, one car or personal belongings."),
    Question(field="pays_for_heating", section=SECTIONS[2], kind="choice",
             text="Does the household pay for heating, directly or as part of the rent?", options=YES_NO),
    Question(field="medicare_parts", section=SECTIONS[3], kind="multi", text="Which parts of Medicare do they have?",
             options={"A": "Part A (hospital)", "B": "Part B (medical)", "D": "Part D (drugs)", "none": "No Medicare"}),
    Question(field="apple_health", section=SECTIONS[3], kind="choice",
             text="Do they have Apple Health (Washington Medicaid)?",
             options={"none": "No", "categorically_needy": "Yes, full Apple Health (categorically needy)",
                      "medically_needy": "Yes, medically needy (with a spend-down)",
                      "msp_only": "Only a Medicare Savings Program"}),
    Question(field="extra_help", section=SECTIONS[3], kind="choice",
             text="Do they get Extra Help with Medicare drug costs?", options=YES_NO),
    Question(field="disability", section=SECTIONS[3], kind="choice",
             text="Do they have a disability under Social Security rules (for example, they get SSDI or SSI)?",
             options=YES_NO),
    Question(field="adl_help", section=SECTIONS[3], kind="multi",
             text="Which everyday activities do they need another person's help with?",
             options={"bathing": "Bathing", "dressing": "Dressing", "eating": "Eating", "toileting": "Using the toilet",
                      "transferring": "Getting in and out of bed or a chair", "walking": "Walking",
                      "medication": "Taking medicines", "supervision": "Needs someone watching over them",
                      "none": "None of these"}),
    Question(field="nursing_facility_level_of_care", section=SECTIONS[3], kind="choice",
             text="Has DSHS assessed them as needing nursing-home level of care (a CARE assessment)?",
             options={"assessed_yes": "Yes, assessed as needing it", "assessed_no": "Assessed, not needing it",
                      "not_assessed": "Not assessed yet"}),
    Question(field="has_unpaid_caregiver", section=SECTIONS[4], kind="choice",
             text="Does a family member or friend help them without pay?", options=YES_NO,
             applies=lambda answers: not _for_other(answers)),
    Question(field="caring_for_someone", section=SECTIONS[4], kind="choice",
             text="Do they themselves care for another adult without pay?", options=YES_NO),
    Question(field="care_recipient_age", section=SECTIONS[4], kind="number",
             text="How old is the person they care for?", applies=_caring),
    Question(field="care_relationship", section=SECTIONS[4], kind="choice", text="Who do they care for?",
             options={"spouse": "Their spouse or partner", "parent": "A parent", "other_relative": "Another relative",
                      "friend_or_neighbor": "A friend or neighbor"}, applies=_caring),
    Question(field="veteran_status", section=SECTIONS[5], kind="choice",
             text="Are they a veteran, or the surviving spouse of a veteran?",
             options={"veteran": "A veteran", "surviving_spouse": "A veteran's surviving spouse", "no": "Neither"}),
    Question(field="wartime_service", section=SECTIONS[5], kind="choice",
             text="Did the veteran serve at least one day during a wartime period?", options=YES_NO, applies=_served),
)
QUESTIONS_BY_FIELD = {q.field: q for q in QUESTIONS}


def option_words(question: Question) -> dict[str, str]:
    """Answer value -> words, for every answer the intake accepts (money as '$1,000 – $1,299 a month')."""
    if question.options is not None:
        return question.options
    if question.kind == "money":
        options = load_intake_options()
        brackets = options.income_brackets if question.field == "monthly_income" else options.asset_brackets
        return {b.key: b.label() for b in brackets}
    return {value: value for value in choices(question.field)}


def earlier_option_words(question: Question, current: object) -> dict[str, str]:
    """An earlier bracket (intake.toml `retired`) a saved link answers with, in words, so the form keeps the answer
    rather than dropping it; {} for any other answer.

    >>> earlier_option_words(QUESTIONS_BY_FIELD["assets"], "17991-35130")
    {'17991-35130': '$17,991 – $35,130 (an earlier range)'}
    """
    if question.kind != "money":
        return {}
    options = load_intake_options()
    retired = options.retired_income_brackets if question.field == "monthly_income" else options.retired_asset_brackets
    return {b.key: f"{b.label()} (an earlier range)" for b in retired if b.key == current}


def visible(answers: dict) -> tuple[Question, ...]:
    """The questions that apply given the answers so far."""
    return tuple(q for q in QUESTIONS if q.applies(answers))


def drop_hidden(answers: dict) -> dict:
    """Answers to questions that do not apply are dropped (a caregiving detail without caregiving)."""
    shown = {q.field for q in visible(answers)}
    return {k: v for k, v in answers.items() if k in shown or k not in QUESTIONS_BY_FIELD}

