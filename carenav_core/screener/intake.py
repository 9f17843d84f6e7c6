"""Layer 0: the intake questions, their answer brackets and the parsed answers.

Every question accepts "dont_know" and "prefer_not_to_say"; a missing answer is allowed too.
`normalize` (profile.py) turns all three into an explicit Unknown, never a default.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from carenav_core.errors import ConfigError
from carenav_core.settings import PROJECT_ROOT

INTAKE_FILE = PROJECT_ROOT / "data" / "programs" / "intake.toml"
DONT_KNOW = "dont_know"
DECLINED = "prefer_not_to_say"
Special = Literal["dont_know", "prefer_not_to_say"]
YesNo = Literal["yes", "no", "dont_know", "prefer_not_to_say"]
ADLS = ("bathing", "dressing", "eating", "toileting", "transferring", "walking", "medication", "supervision")
HOME_SETTINGS = ("own_home", "rented_home", "with_family")


@dataclass(frozen=True, kw_only=True)
class Bracket:
    """An answer range in whole dollars, lower..upper inclusive; upper None = no top."""

    key: str
    lower: int
    upper: int | None
    sliver: float
    unit: str

    def label(self) -> str:
        """Human text, e.g. '$1,000 – $1,299 a month'.

        >>> Bracket(key="1000-1299", lower=1000, upper=1299, sliver=10, unit="USD/month").label()
        '$1,000 – $1,299 a month'
        >>> Bracket(key="8000+", lower=8000, upper=None, sliver=10, unit="USD/month").label()
        '$8,000 or more a month'
        """
        per = " a month" if self.unit == "USD/month" else ""
        if self.upper is None:
            return f"${self.lower:,} or more{per}"
        return f"${self.lower:,} – ${self.upper:,}{per}"


class _BracketFamily(BaseModel):
    model_config = ConfigDict(extra="forbid")
    unit: str = Field(description="Unit of the edges.")
    sliver: float = Field(ge=0, description="Widest band around a limit the bracket policy leaves unknown.")
    starts: list[int] = Field(min_length=1, description="Ascending first dollars of each bracket after the one from $0.")
    retired: list[str] = Field(default_factory=list, description="Keys of earlier brackets (\"17991-35130\"), still "
                               "read so saved answers and shared links keep working; never offered.")

    @field_validator("starts")
    @classmethod
    def _ascending(cls, starts: list[int]) -> list[int]:
        if starts != sorted(set(starts)) or starts[0] <= 0:
            raise ValueError("starts must be positive and strictly ascending")
        return starts

    @field_validator("retired")
    @classmethod
    def _ranges(cls, retired: list[str]) -> list[str]:
        for key in retired:
            low, _, high = key.partition("-")
            if not (low.isdigit() and high.isdigit() and int(low) <= int(high)):
                raise ValueError(f"retired bracket {key!r} must be 'low-high' in whole dollars")
        return retired


class _Geography(BaseModel):
    model_config = ConfigDict(extra="forbid")
    counties: list[str] = Field(min_length=39, max_length=39, description="Washington's 39 counties.")
    pace_counties: list[str] = Field(description="Counties with a PACE service area.")


class _IntakeFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    income: _BracketFamily
    assets: _BracketFamily
    geography: _Geography


@dataclass(frozen=True, kw_only=True)
class IntakeOptions:
    income_brackets: tuple[Bracket, ...]
    asset_brackets: tuple[Bracket, ...]
    counties: tuple[str, ...]
    pace_counties: tuple[str, ...]
    # earlier brackets still read (a saved answer or shared link), never offered: a rule judges their range as any
    retired_income_brackets: tuple[Bracket, ...] = ()
    retired_asset_brackets: tuple[Bracket, ...] = ()


def _brackets(family: _BracketFamily) -> tuple[Bracket, ...]:
    lowers = [0, *family.starts]
    uppers = [s - 1 for s in family.starts] + [None]
    return tuple(Bracket(key=f"{lo}-{up}" if up is not None else f"{lo}+", lower=lo, upper=up,
                         sliver=family.sliver, unit=family.unit) for lo, up in zip(lowers, uppers))


def parse_intake_options(text: str, source: str = "intake.toml") -> IntakeOptions:
    """Parse the bracket and geography file; ConfigError names the file and field."""
    try:
        parsed = _IntakeFile.model_validate(tomllib.loads(text))
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        raise ConfigError(f"{source}: {exc}") from exc
    return IntakeOptions(income_brackets=_brackets(parsed.income), asset_brackets=_brackets(parsed.assets),
                         counties=tuple(parsed.geography.counties),
                         pace_counties=tuple(parsed.geography.pace_counties),
                         retired_income_brackets=_retired(parsed.income),
                         retired_asset_brackets=_retired(parsed.assets))


def _retired(family: _BracketFamily) -> tuple[Bracket, ...]:
    current = {b.key for b in _brackets(family)}
    return tuple(Bracket(key=key, lower=int(key.split("-")[0]), upper=int(key.split("-")[1]), sliver=family.sliver,
                         unit=family.unit) for key in family.retired if key not in current)


@lru_cache(maxsize=2)
def load_intake_options(path: Path = INTAKE_FILE) -> IntakeOptions:
    """The brackets and counties shipped in data/programs/intake.toml."""
    return parse_intake_options(path.read_text(encoding="utf-8"), source=str(path))


def _in_options(value: str | None, allowed: tuple[str, ...], what: str) -> str | None:
    if value is None or value in (DONT_KNOW, DECLINED) or value in allowed:
        return value
    raise ValueError(f"{value!r} is not a known {what}; expected one of {list(allowed)} or {DONT_KNOW}/{DECLINED}")


class Answers(BaseModel):
    """Raw intake answers (from a form, a JSON file or the URL). Omitted = unanswered."""

    model_config = ConfigDict(extra="forbid")
    screening_for: Literal["myself", "someone_i_care_for"] | None = Field(
        None, description="Whether the person answering is screening themselves or someone they care for.")
    age: int | Special | None = Field(None, description="Age in years of the person screened (0-120).")
    caregiver_age: int | Special | None = Field(
        None, description="Age of the unpaid caregiver answering for someone they care for.")
    county: str | None = Field(None, description="Washington county of residence.")
    household_size: int | Special | None = Field(None, description="People who live and buy food together (1-20).")
    marital_status: Literal["single", "married", "dont_know", "prefer_not_to_say"] | None = Field(
        None, description="Married couples use couple limits.")
    monthly_income: str | None = Field(None, description="Household gross monthly income bracket key.")
    assets: str | None = Field(None, description="Countable assets bracket key (person and spouse).")
    medicare_parts: list[Literal["A", "B", "D"]] | Literal["none", "dont_know", "prefer_not_to_say"] | None = Field(
        None, description="Medicare parts held, or 'none'.")
    apple_health: Literal["none", "categorically_needy", "medically_needy", "msp_only",
                          "dont_know", "prefer_not_to_say"] | None = Field(None, description="Apple Health coverage.")
    extra_help: YesNo | None = Field(None, description="Enrolled in Extra Help (Part D low-income subsidy).")
    disability: YesNo | None = Field(None, description="Blind or disabled under Social Security rules (e.g. gets SSDI).")
    veteran_status: Literal["veteran", "surviving_spouse", "no", "dont_know", "prefer_not_to_say"] | None = Field(
        None, description="Veteran, or surviving spouse of a veteran.")
    wartime_service: YesNo | None = Field(None, description="The veteran served at least one day in a wartime period.")
    adl_help: list[Literal[ADLS]] | Literal["none", "dont_know", "prefer_not_to_say"] | None = Field(  # type: ignore[valid-type]
        None, description="Daily activities the person needs another person's help with.")
    nursing_facility_level_of_care: Literal["assessed_yes", "assessed_no", "not_assessed",
                                            "dont_know", "prefer_not_to_say"] | None = Field(
        None, description="Result of a DSHS CARE assessment for nursing-facility level of care.")
    living_situation: Literal["own_home", "rented_home", "with_family", "adult_family_home", "assisted_living",
                              "nursing_facility", "dont_know", "prefer_not_to_say"] | None = Field(
        None, description="Where the person lives now.")
    has_unpaid_caregiver: YesNo | None = Field(None, description="An unpaid family member or friend helps them.")
    caring_for_someone: YesNo | None = Field(None, description="The person is an unpaid caregiver of another adult.")
    care_recipient_age: int | Special | None = Field(None, description="Age of the person they care for.")
    care_relationship: Literal["spouse", "parent", "other_relative", "friend_or_neighbor",
                               "dont_know", "prefer_not_to_say"] | None = Field(
        None, description="Who they care for.")
    pays_for_heating: YesNo | None = Field(None, description="The household pays for heat directly or in rent.")

    @field_validator("medicare_parts", "adl_help", mode="before")
    @classmethod
    def _empty_list_is_unanswered(cls, value, info):
        """An empty list is no answer (a form or API caller that sent nothing ticked), not 'none': 'none' is said
        explicitly, so [] never reads as 'no Medicare' or 'needs no help'. A list holding only 'none' (or only
        'dont_know' / 'prefer_not_to_say') is that plain answer; one mixing it with items is an error that says so."""
        if isinstance(value, list) and not value:
            return None
        return _alone_in_list(value, info.field_name)

    @field_validator("age", "care_recipient_age", "caregiver_age", "household_size", mode="before")
    @classmethod
    def _whole_number(cls, value: object, info) -> object:
        # JSON true/false would otherwise be read as 1/0 (bool is an int in Python).
        if isinstance(value, bool) or isinstance(value, float) and not value.is_integer():
            raise ValueError(f"{info.field_name.replace('_', ' ')} must be a whole number, not {value!r}")
        return value

    @field_validator("age", "care_recipient_age", "caregiver_age")
    @classmethod
    def _plausible_age(cls, value: int | str | None) -> int | str | None:
        if isinstance(value, int) and not 0 <= value <= 120:
            raise ValueError(f"age {value} is outside 0-120")
        return value

    @field_validator("household_size")
    @classmethod
    def _plausible_size(cls, value: int | str | None) -> int | str | None:
        if isinstance(value, int) and not 1 <= value <= 20:
            raise ValueError(f"household size {value} is outside 1-20")
        return value

    @field_validator("county")
    @classmethod
    def _known_county(cls, value: str | None) -> str | None:
        return _in_options(value, load_intake_options().counties, "Washington county")

    @field_validator("monthly_income")
    @classmethod
    def _known_income(cls, value: str | None) -> str | None:
        options = load_intake_options()
        return _in_options(value, tuple(b.key for b in options.income_brackets + options.retired_income_brackets),
                           "income bracket")

    @field_validator("assets")
    @classmethod
    def _known_assets(cls, value: str | None) -> str | None:
        options = load_intake_options()
        return _in_options(value, tuple(b.key for b in options.asset_brackets + options.retired_asset_brackets),
                           "asset bracket")


LIST_SPECIALS = ("none", "dont_know", "prefer_not_to_say")
LIST_EXAMPLES = {"medicare_parts": '["A", "B"]', "adl_help": '["bathing", "dressing"]'}


def _alone_in_list(value: object, field: str) -> object:
    """A list answer holding 'none', 'dont_know' or 'prefer_not_to_say': alone, it is that plain answer (["none"] is
    "none"); beside items it contradicts them, and the error says what is wrong and the forms accepted.

    >>> _alone_in_list(["none"], "adl_help"), _alone_in_list(["bathing"], "adl_help")
    ('none', ['bathing'])
    >>> _alone_in_list(["A", "none"], "medicare_parts")
    Traceback (most recent call last):
    ...
    ValueError: 'none' must be given alone, not in a list with other answers (got ['A', 'none']); give either a list of the answers that apply, such as ["A", "B"], or the plain answer "none"
    """
    if not isinstance(value, list):
        return value
    specials = [v for v in value if isinstance(v, str) and v.strip().lower() in LIST_SPECIALS]
    if not specials:
        return value
    plain = dict.fromkeys(v.strip().lower() for v in specials)
    if len(plain) == 1 and len(specials) == len(value):
        return next(iter(plain))
    said = " and ".join(repr(v) for v in plain)
    alone = " or ".join(f'"{v}"' for v in plain)
    raise ValueError(f"{said} must be given alone, not in a list with other answers (got {value!r}); give either a "
                     f"list of the answers that apply, such as {LIST_EXAMPLES.get(field, '[...]')}, or the plain "
                     f"answer {alone}")


def parse_answers(raw: dict) -> Answers:
    """Validate raw answers; ConfigError lists every bad field and what was expected."""
    try:
        return Answers.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError("answers are invalid: " + "; ".join(answer_errors(exc))) from exc


# What a pydantic error type expects, in words (literal errors list their values; value errors keep their message)
_EXPECTED = {"int_parsing": "a whole number", "int_type": "a whole number", "int_from_float": "a whole number",
             "string_type": "text (one of the listed answers)", "list_type": "a list", "bool_type": "yes or no"}


def answer_errors(exc: ValidationError) -> list[str]:
    """One plain line per bad answer: the field (and list item), what was given, what is accepted. Pydantic reports a
    union's every member ("age.int", "age.literal[...]"); they are one answer here, read as alternatives.

    >>> try:
    ...     Answers.model_validate({"age": "seventy-two", "zip_code": "98101"})
    ... except ValidationError as exc:
    ...     for line in answer_errors(exc):
    ...         print(line)
    age: got 'seventy-two'; expected a whole number or 'dont_know' or 'prefer_not_to_say'
    zip_code: not a question of the intake (remove it)
    """
    by_field: dict[str, list[dict]] = {}
    for error in exc.errors():
        loc = error["loc"]
        field = str(loc[0]) if loc else "answers"
        item = next((f" item {part + 1}" for part in loc[1:] if isinstance(part, int)), "")
        by_field.setdefault(field + item, []).append(error)
    lines = []
    for where, errors in by_field.items():
        if " item " not in where and any(other.startswith(where + " item ") for other in by_field):
            continue            # a list with a bad item: the item says what is wrong, not the list's other forms
        if any(e["type"] == "extra_forbidden" for e in errors):
            lines.append(f"{where}: not a question of the intake (remove it)")
            continue
        said = [str(e["ctx"].get("error", e["msg"])) for e in errors if e["type"] == "value_error"]
        if said:                # the field's own check says what and why ("household size 0 is outside 1-20")
            lines.append(f"{where}: {'; '.join(dict.fromkeys(said))}")
            continue
        given = next((e["input"] for e in errors if not isinstance(e["input"], (list, dict))), errors[0]["input"])
        expected = []
        for error in errors:
            if error["type"] == "literal_error":
                expected.append(error["ctx"]["expected"])
            elif error["type"] == "string_type" and where in LISTED_FIELDS:
                # a number for a bracket or a county: name the answers the field takes, as a wrong text does
                expected.append(f"one of {list(choices(where))} or {DONT_KNOW}/{DECLINED}")
            else:
                expected.append(_EXPECTED.get(error["type"], error["msg"]))
        lines.append(f"{where}: got {given!r}; expected {' or '.join(dict.fromkeys(expected))}")
    return lines


LIST_FIELDS = ("medicare_parts", "adl_help")
LISTED_FIELDS = ("county", "monthly_income", "assets")      # text answers checked against a list (_in_options)
INT_FIELDS = ("age", "household_size", "care_recipient_age", "caregiver_age")


def answers_to_params(answers: dict) -> dict[str, str]:
    """Flat strings for a shareable URL (st.query_params); lists are comma-joined. Nothing identifying is asked.

    >>> answers_to_params({"age": 70, "adl_help": ["bathing", "eating"]})
    {'age': '70', 'adl_help': 'bathing,eating'}
    """
    return {k: ",".join(v) if isinstance(v, list) else str(v) for k, v in answers.items() if v is not None}


def params_to_answers(params: dict[str, str]) -> dict:
    """Inverse of answers_to_params; unknown keys are kept so that validation can reject them.

    >>> params_to_answers({"age": "70", "adl_help": "bathing,eating", "county": "King"})
    {'age': 70, 'adl_help': ['bathing', 'eating'], 'county': 'King'}
    """
    answers: dict = {}
    for key, value in params.items():
        if key in INT_FIELDS and value.isdigit():
            answers[key] = int(value)
        elif key in LIST_FIELDS and value not in ("none", DONT_KNOW, DECLINED):
            answers[key] = value.split(",")
        else:
            answers[key] = value
    return answers


def choices(field: str) -> tuple[str, ...]:
    """The answer values a form offers for a field, without the don't-know/decline options."""
    options = load_intake_options()
    if field == "county":
        return options.counties
    if field in ("monthly_income", "assets"):
        return tuple(b.key for b in (options.income_brackets if field == "monthly_income" else options.asset_brackets))
    if field in INT_FIELDS:
        return tuple(str(n) for n in (range(1, 21) if field == "household_size" else range(0, 121)))
    return tuple(_literal_values(Answers.model_fields[field].annotation))


def _literal_values(annotation: object) -> list[str]:
    from typing import get_args
    found: list[str] = []
    for arg in get_args(annotation):
        if isinstance(arg, str):
            found += [] if arg in (DONT_KNOW, DECLINED) else [arg]
        else:
            found += _literal_values(arg)
    return found
