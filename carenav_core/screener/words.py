"""The words a person reads for each intake fact (no internal field names reach a report)."""
from __future__ import annotations

FACT_WORDS: dict[str, str] = {
    "screening_for": "who the screening is for",
    "caregiver_age": "the caregiver's age",
    "age": "age",
    "county": "county of residence",
    "household_size": "how many people live and buy food together",
    "married": "whether they are married",
    "monthly_income": "household income a month",
    "assets": "savings and other countable assets",
    "medicare_parts": "which parts of Medicare they have",
    "apple_health": "their Apple Health (Medicaid) coverage",
    "extra_help": "whether they get Extra Help with drug costs",
    "disability": "whether they have a disability (for example, get SSDI)",
    "veteran_status": "whether they are a veteran or a veteran's surviving spouse",
    "wartime_service": "whether the veteran served during a wartime period",
    "adl_help": "which daily activities they need help with",
    "nursing_facility_level_of_care": "a DSHS assessment of nursing-home level of care",
    "living_situation": "where they live",
    "has_unpaid_caregiver": "whether a family member or friend helps them without pay",
    "caring_for_someone": "whether they care for another adult without pay",
    "care_recipient_age": "the age of the person they care for",
    "care_relationship": "who they care for",
    "pays_for_heating": "whether the household pays for heat",
}


# How each yes-or-no answer reads after "if" (the yes first, then the no): the branches of an open answer
YES_NO_WORDS: dict[str, tuple[str, str]] = {
    "married": ("married", "single"),
    "disability": ("disabled", "not disabled"),
    "extra_help": ("already getting Extra Help", "not getting Extra Help"),
    "wartime_service": ("the veteran served during a wartime period", "no wartime service"),
    "nursing_facility_level_of_care": ("assessed at nursing-home level of care", "assessed as not at that level"),
    "has_unpaid_caregiver": ("a family member or friend helps them without pay", "no one helps them without pay"),
    "caring_for_someone": ("they care for another adult without pay", "they care for no one"),
    "pays_for_heating": ("the household pays for heat", "the household does not pay for heat"),
}


def fact_words(name: str) -> str:
    """Plain words for an intake fact; an unlisted name is a programming error caught by the tests."""
    return FACT_WORDS[name]


def facts_in_words(names: tuple[str, ...] | list[str]) -> str:
    """'age, county of residence and household income a month'."""
    words = [fact_words(n) for n in dict.fromkeys(names)]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]

PLACES = {"own_home": "in a home they own", "rented_home": "in a rented home", "with_family": "with family",
          "adult_family_home": "in an adult family home", "assisted_living": "in assisted living",
          "nursing_facility": "in a nursing home"}
COVERAGE = {"none": "no Apple Health", "categorically_needy": "categorically needy Apple Health",
            "medically_needy": "medically needy Apple Health (spend-down)",
            "msp_only": "a Medicare Savings Program only"}


def place_words(living_situation: str) -> str:
    """'in a home they own'."""
    return PLACES[living_situation]
