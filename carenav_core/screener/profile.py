"""Layer 0: the normalized profile. Unanswered or declined answers become explicit Unknowns."""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal, Mapping, TypeVar

from carenav_core.screener.intake import DECLINED, DONT_KNOW, Answers, Bracket, load_intake_options, parse_answers

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class Unknown:
    """A fact the intake did not settle, and why."""

    reason: Literal["unanswered", "dont_know", "prefer_not_to_say", "not_assessed"]

    def __bool__(self) -> bool:  # an Unknown must never be mistaken for a "yes"
        raise TypeError("Unknown has no truth value; test it with is_unknown()")


Maybe = T | Unknown


def is_unknown(value: object) -> bool:
    """True when a profile value is an Unknown.

    >>> is_unknown(Unknown(reason="dont_know")), is_unknown(0)
    (True, False)
    """
    return isinstance(value, Unknown)


@dataclass(frozen=True, kw_only=True)
class Profile:
    """The person screened. Every field is a value or an Unknown; nothing is defaulted."""

    age: Maybe[int]
    county: Maybe[str]
    household_size: Maybe[int]
    married: Maybe[bool]
    monthly_income: Maybe[Bracket]
    assets: Maybe[Bracket]
    medicare_parts: Maybe[frozenset[str]]
    apple_health: Maybe[str]
    extra_help: Maybe[bool]
    disability: Maybe[bool]
    veteran_status: Maybe[str]
    wartime_service: Maybe[bool]
    adl_help: Maybe[frozenset[str]]
    nursing_facility_level_of_care: Maybe[bool]
    living_situation: Maybe[str]
    has_unpaid_caregiver: Maybe[bool]
    caring_for_someone: Maybe[bool]
    care_recipient_age: Maybe[int]
    care_relationship: Maybe[str]
    pays_for_heating: Maybe[bool]

    def unknown_fields(self) -> tuple[str, ...]:
        """Names of the fields that are Unknown, in intake order."""
        return tuple(f.name for f in fields(self) if is_unknown(getattr(self, f.name)))


def _special(value: object) -> Unknown | None:
    if value is None:
        return Unknown(reason="unanswered")
    if value in (DONT_KNOW, DECLINED):
        return Unknown(reason=value)  # type: ignore[arg-type]
    return None


def _plain(value: T | str | None) -> Maybe[T]:
    missing = _special(value)
    return value if missing is None else missing  # type: ignore[return-value]


def _yes_no(value: str | None) -> Maybe[bool]:
    missing = _special(value)
    return value == "yes" if missing is None else missing


def _as_set(value: list[str] | str | None) -> Maybe[frozenset[str]]:
    missing = _special(value)
    return frozenset(() if value == "none" else value) if missing is None else missing  # type: ignore[arg-type]


def _bracket(key: str | None, brackets: tuple[Bracket, ...]) -> Maybe[Bracket]:
    missing = _special(key)
    return next(b for b in brackets if b.key == key) if missing is None else missing


def _married(value: str | None) -> Maybe[bool]:
    missing = _special(value)
    return value == "married" if missing is None else missing


def _level_of_care(value: str | None) -> Maybe[bool]:
    missing = Unknown(reason="not_assessed") if value == "not_assessed" else _special(value)
    return value == "assessed_yes" if missing is None else missing


def normalize(answers: Answers | Mapping[str, object]) -> Profile:
    """Turn intake answers into a Profile; unanswered, "don't know" and declined become Unknown."""
    a = answers if isinstance(answers, Answers) else parse_answers(dict(answers))
    options = load_intake_options()
    return Profile(
        age=_plain(a.age), county=_plain(a.county),
        household_size=_plain(a.household_size),
        married=_married(a.marital_status),
        monthly_income=_bracket(a.monthly_income, options.income_brackets),
        assets=_bracket(a.assets, options.asset_brackets),
        medicare_parts=_as_set(a.medicare_parts), apple_health=_plain(a.apple_health),
        extra_help=_yes_no(a.extra_help), disability=_yes_no(a.disability),
        veteran_status=_plain(a.veteran_status),
        wartime_service=_yes_no(a.wartime_service), adl_help=_as_set(a.adl_help),
        nursing_facility_level_of_care=_level_of_care(a.nursing_facility_level_of_care),
        living_situation=_plain(a.living_situation),
        has_unpaid_caregiver=_yes_no(a.has_unpaid_caregiver), caring_for_someone=_yes_no(a.caring_for_someone),
        care_recipient_age=_plain(a.care_recipient_age),
        care_relationship=_plain(a.care_relationship),
        pays_for_heating=_yes_no(a.pays_for_heating))
