"""Layer 0: the normalized profile. Unanswered or declined answers become explicit Unknowns."""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from datetime import date
from typing import Literal, Mapping, TypeVar

from carenav_core.screener.intake import DECLINED, DONT_KNOW, Answers, Bracket, load_intake_options, parse_answers

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class Unknown:
    """A fact the intake did not settle, and why."""

    reason: Literal["unanswered", "dont_know", "prefer_not_to_say", "not_assessed", "about_the_other_person",
                    "contradictory"]

    def __bool__(self) -> bool:  # an Unknown must never be mistaken for a "yes"
        raise TypeError("Unknown has no truth value; test it with is_unknown()")


Maybe = T | Unknown


def is_unknown(value: object) -> bool:
    """True when a profile value is an Unknown.

    >>> is_unknown(Unknown(reason="dont_know")), is_unknown(0)
    (True, False)
    """
    return isinstance(value, Unknown)


# The answers a caregiver gives about themselves that hold for the spouse they care for (one home, one household)
SHARED_WITH_SPOUSE = ("county", "living_situation", "household_size", "married", "monthly_income", "assets")


@dataclass(frozen=True, kw_only=True)
class Profile:
    """The person screened. Every field is a value or an Unknown; nothing is defaulted.

    `screening_for` says who answers: the person themselves, or their unpaid caregiver (whose age is
    `caregiver_age`). When the person screened is themselves a caregiver, `care_recipient_age` is the age
    of the one they care for (see `care_receiver`).
    """

    screening_for: Maybe[str]
    caregiver_age: Maybe[int]
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

    @property
    def couple(self) -> Maybe[bool]:
        """Couple limits apply (SSI-related Apple Health, the Medicare Savings Programs, Extra Help): married and
        living together. A person in a household of one, married or not, is judged alone: a married one lives apart from
        the spouse, and only spouses who
        live together count each other's income and resources (WAC 182-506-0015, 182-512-0960(1)(e)). A married
        person living in a nursing facility is an institutionalized spouse, judged on their own income and the single
        limits whatever the household answered (WAC 182-513-1350). Married with the household size unknown: unknown
        (the spouse may live elsewhere), never read as living together."""
        if self.married is True and (self.household_size == 1 or self.living_situation == "nursing_facility"):
            return False
        if is_unknown(self.married) and self.household_size == 1:
            return False        # single, or married and living apart: the single limits either way
        if self.married is True and is_unknown(self.household_size):
            return self.household_size     # married, but whether the spouse lives with them is not known
        return self.married

    def medicare_contradictions(self) -> tuple[str, ...]:
        """How the Medicare answer contradicts the others (each of "extra_help", "msp", "part_d_only"): enrolled in
        Extra Help or a Medicare Savings Program with no Medicare, or Part D alone (which needs Part A or B)."""
        if is_unknown(self.medicare_parts) or self.medicare_parts & {"A", "B"}:
            return ()
        none = not self.medicare_parts
        return tuple(kind for kind, found in (("extra_help", none and self.extra_help is True),
                                              ("msp", none and self.apple_health == "msp_only"),
                                              ("part_d_only", self.medicare_parts == frozenset({"D"}))) if found)

    def contradicted(self) -> tuple[str, ...]:
        """Yes-or-no answers that contradict the others: kept as given, flagged (`answer_warnings`), and what they
        decide is left open (engine.judge). "disability": "no" beside Medicare well before 65
        (`medicare_without_disability`); "caring_for_someone": "no" beside the age or relationship of a person cared
        for (a stale form branch, or a misread question)."""
        return tuple(name for name, found in (
            ("disability", medicare_without_disability(self.age, self.medicare_parts, self.disability)),
            ("caring_for_someone", self.caring_for_someone is False and bool(self.cared_for_details()))) if found)

    def cared_for_details(self) -> tuple[str, ...]:
        """The answers about a person the screened person cares for that were given (not left out, "don't know" or
        declined). None when the screening is for someone the answerer cares for: there the care answers describe the
        answerer's tie to the person screened (their relationship, the age of the one they care for), not someone the
        person screened cares for, so they say nothing against "cares for no one" (the answerer is the unpaid
        caregiver FCSP serves: programs.md section 9 rows 1-3)."""
        if self.screening_for == "someone_i_care_for":
            return ()
        return tuple(name for name in ("care_recipient_age", "care_relationship") if not is_unknown(getattr(self, name)))

    def spouse_age(self) -> "Maybe[int]":
        """The age of the person screened's spouse, as the intake gives it, never another person's.

        "How old is the person they care for?" and "Who do they care for?" are asked about the person screened as a
        caregiver (questions.py), in either screening mode: when the person screened cares for their spouse, the
        spouse's age is `care_recipient_age`, also when a third person answers ("someone I care for"). Only when the
        person screened is not answered as a caregiver and the screening is for someone the answerer cares for does
        the relationship describe the answerer's own tie (`cared_for_details`): the answering spouse's age is then
        `caregiver_age`. Otherwise unknown: the answerer's age is never read as the spouse's.

        >>> from dataclasses import replace
        >>> p = normalize({"screening_for": "someone_i_care_for", "caregiver_age": 30, "age": 58,
        ...                "caring_for_someone": "yes", "care_recipient_age": 80, "care_relationship": "spouse"})
        >>> p.spouse_age(), replace(p, care_relationship="parent").spouse_age().reason
        (80, 'unanswered')
        """
        if self.care_relationship != "spouse":
            return Unknown(reason="unanswered")
        if self.caring_for_someone is True or self.screening_for != "someone_i_care_for":
            return self.care_recipient_age
        if self.caring_for_someone is False:
            return self.caregiver_age          # the answerer's tie: the answering caregiver is the spouse
        return Unknown(reason="unanswered")    # whose tie the relationship describes is not known

    def lives_apart_from_spouse(self) -> bool:
        """Married, in a household of one."""
        return self.married is True and self.household_size == 1

    def cares_for_another(self) -> bool:
        """The person screened is an unpaid caregiver of someone else, whether or not someone helps them too: a person
        can both receive care and give it. The care programs (COPES, TSOA, PACE, MAC) serve the person needing care
        (programs.md sections 2-5), so they are judged for the one cared for, and for the person screened as well when
        their own answers show a care need (`needs_care`); the person's own unpaid caregiver decides only their own
        MAC and TSOA caregiver criterion (section 2 row 6, section 3 row 4). Not when the screening is for someone the
        answerer cares for: the person screened is then the one receiving care, the care programs are theirs, and
        their own caregiving is judged by the caregiver programs (section 9)."""
        return self.screening_for != "someone_i_care_for" and self.caring_for_someone is True

    def also_a_caregiver(self) -> bool:
        """Screened as someone the answerer cares for, and caring for someone else too: the care programs (COPES, TSOA,
        PACE, MAC) are the person's own, and are judged for the one they care for as well (`care_receiver`), since
        each serves the person needing care (programs.md sections 2-5)."""
        return self.screening_for == "someone_i_care_for" and self.caring_for_someone is True

    def needs_care(self) -> bool:
        """The person's own answers show a care need: help with a daily activity listed, or assessed at nursing-facility
        level of care. The care programs (COPES, TSOA, PACE, MAC) then serve them as well as anyone they care for:
        programs.md section 4 rows 1-2 and section 3 rows 1-4 (TSOA serves a person with no unpaid caregiver, WAC
        388-106-1910)."""
        helped = not is_unknown(self.adl_help) and bool(self.adl_help)
        return helped or self.nursing_facility_level_of_care is True

    def care_receiver(self) -> "Profile":
        """The person a care-receiver program (MAC, TSOA, PACE) would serve.

        The person screened, unless they are a caregiver of someone else: then the one they care for, of
        whom the intake knows the age, that the screened person cares for them unpaid, and — for a spouse who lives
        with them (not one in a household of one: living apart) — the county, living situation, household size,
        marriage, income and assets.
        """
        if not (self.cares_for_another() or self.also_a_caregiver()):
            return self
        other = Unknown(reason="about_the_other_person")
        facts = {f.name: other for f in fields(self)}
        # a spouse shares the home, the household and (for the couple limits) the income and assets
        shared = {name: getattr(self, name) for name in SHARED_WITH_SPOUSE} \
            if self.care_relationship == "spouse" and self.couple is True else {}     # a spouse living apart: unknown
        return replace(self, **{**facts, **shared, "screening_for": "someone_i_care_for",
                                "age": self.care_recipient_age, "caregiver_age": self.age, "has_unpaid_caregiver": True,
                                "caring_for_someone": False, "care_recipient_age": other})


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


def _caregiver_of_the_screened(a: Answers) -> Maybe[bool]:
    """Whether the person screened has an unpaid caregiver. Screening "someone I care for" says yes, unless the
    answers also say no unpaid caregiver (care paid for, or a slip): contradictory answers decide nothing."""
    if a.screening_for != "someone_i_care_for":
        return _yes_no(a.has_unpaid_caregiver)
    if a.has_unpaid_caregiver == "no":
        return Unknown(reason="contradictory")
    # "don't know" or declined stays unknown (the answer screening for them implies is not taken over it)
    return _yes_no(a.has_unpaid_caregiver) if a.has_unpaid_caregiver in (DONT_KNOW, DECLINED) else True


# The youngest whole-year age at which Medicare on age alone can have begun: Part A starts the month a person attains
# 65, and a person attains an age the day before the birthday, so one born on the 1st has it the month before.
MEDICARE_ON_AGE_FROM = 64


def medicare_without_disability(age: object, medicare_parts: object, disability: object) -> bool:
    """Medicare well before 65 with "no disability": Medicare under 65 comes with a disability or kidney failure
    (programs.md section 1a row 1, section 1b row 8), so one of the three answers is probably wrong.

    >>> medicare_without_disability(40, frozenset({"A"}), False), medicare_without_disability(64, frozenset({"A"}), False)
    (True, False)
    """
    return (not is_unknown(medicare_parts) and bool(medicare_parts) and not is_unknown(age)
            and age < MEDICARE_ON_AGE_FROM and disability is False)


def normalize(answers: Answers | Mapping[str, object]) -> Profile:
    """Turn intake answers into a Profile; unanswered, "don't know" and declined become Unknown."""
    a = answers if isinstance(answers, Answers) else parse_answers(dict(answers))
    options = load_intake_options()
    return Profile(
        screening_for=_plain(a.screening_for), caregiver_age=_plain(a.caregiver_age),
        age=_plain(a.age), county=_plain(a.county),
        household_size=_plain(a.household_size),
        married=_married(a.marital_status),
        monthly_income=_bracket(a.monthly_income, options.income_brackets + options.retired_income_brackets),
        assets=_bracket(a.assets, options.asset_brackets + options.retired_asset_brackets),
        medicare_parts=_as_set(a.medicare_parts), apple_health=_plain(a.apple_health),
        extra_help=_yes_no(a.extra_help), disability=_yes_no(a.disability),
        veteran_status=_plain(a.veteran_status),
        wartime_service=_yes_no(a.wartime_service), adl_help=_as_set(a.adl_help),
        nursing_facility_level_of_care=_level_of_care(a.nursing_facility_level_of_care),
        living_situation=_plain(a.living_situation),
        has_unpaid_caregiver=_caregiver_of_the_screened(a),
        caring_for_someone=_yes_no(a.caring_for_someone),
        care_recipient_age=_plain(a.care_recipient_age),
        care_relationship=_plain(a.care_relationship),
        pays_for_heating=_yes_no(a.pays_for_heating))


def contradictory(value: object) -> bool:
    """True when a profile value is an Unknown because the answers contradict each other (`normalize`).

    >>> contradictory(Unknown(reason="contradictory")), contradictory(Unknown(reason="dont_know")), contradictory(False)
    (True, False, False)
    """
    return is_unknown(value) and value.reason == "contradictory"


def answer_warnings(profile: Profile, *, on: date | None = None) -> tuple[str, ...]:
    """Answers that are allowed but unusual enough that the person should check them (shown on the report). `on`, the
    screening date (today when not given), dates the figures an enrolment is checked against (`_enrolment_warnings`)."""
    found = []
    opened = _left_open(profile, on or date.today())
    if "disability" in opened:
        found.append(f"Medicare before 65 usually means a disability or kidney failure, but the answers give "
                     f"age {profile.age} and no disability. Please check the age, the Medicare answer and "
                     f"the disability answer. {opened['disability']}")
    if "caring_for_someone" in opened:
        given = " and ".join(words for name, words in (("care_recipient_age", f"the age ({profile.care_recipient_age})"),
                                                       ("care_relationship", "the relationship"))
                             if not is_unknown(getattr(profile, name)))
        found.append(f"The answers say the person is not caring for anyone, but also give {given} of a person they "
                     f"care for. Please check whether they care for another adult without pay. "
                     f"{opened['caring_for_someone']}")
    if profile.screening_for == "someone_i_care_for" and profile.caring_for_someone is True:
        found.append("The screening is for someone you care for, and the answers also say that person is a "
                     "caregiver. The Family Caregiver Support Program is judged both ways: for you as their caregiver, and "
                     "for them as a caregiver of an adult. The care programs (COPES, TSOA, MAC, PACE) are judged for "
                     "them, and for the person they care for too, on what the answers say about that person."
                     f"{_moved_to_the_person_cared_for(profile, on or date.today())}")
    if contradictory(profile.has_unpaid_caregiver):
        found.append("The screening is for someone you care for, but the answers also say they have no unpaid "
                     "caregiver. Caregiver programs (MAC, the Family Caregiver Support Program) need an unpaid "
                     "caregiver, so they are left open. Please check whether anyone (you included) helps them "
                     "without pay.")
    contradictions = profile.medicare_contradictions()
    if "extra_help" in contradictions:
        found.append("The answers say enrolled in Extra Help but no Medicare; Extra Help is only for people with "
                     "Medicare. Please check the Medicare answer.")
    if "msp" in contradictions:
        found.append("The answers say enrolled in a Medicare Savings Program but no Medicare; the program pays "
                     "Medicare costs. Please check the Medicare answer.")
    if "part_d_only" in contradictions:
        found.append("The answers give Medicare Part D only; Part D needs Part A or Part B. Please check the Medicare "
                     "answer.")
    if profile.lives_apart_from_spouse():
        found.append("The answers say married with a household of one person: read as living apart from the spouse, "
                     "so single limits are used for Apple Health, the Medicare Savings Programs and Extra Help (only "
                     "spouses who live together count each other's income and resources). If the spouse lives in "
                     "the home, the household is two people; please check the household size.")
    if profile.married is False and profile.care_relationship == "spouse" and \
            (profile.caring_for_someone is True or profile.screening_for == "someone_i_care_for"):
        found.append("The answers say not married, but also that the caregiver and the person cared for are spouses. "
                     "A spouse's home, household, income and assets are only counted when the answers say married, so "
                     "the person cared for is judged without them. Please check the marital status and the "
                     "relationship.")
    if profile.living_situation == "nursing_facility" and profile.nursing_facility_level_of_care is False:
        found.append("The answers say the person lives in a nursing facility, but was assessed as not needing "
                     "nursing-facility level of care. Apple Health's long-term-care income limit is judged on living "
                     "there; the care programs (COPES, MAC, TSOA, PACE) on the assessment, and Medicaid pays for a "
                     "nursing-facility stay only at that level of care (WAC 388-106-0355). Please check both answers.")
    if not is_unknown(profile.age) and profile.age < 18:
        found.append(f"The age given is {profile.age}. These programs are for adults; please check the age.")
    return (*found, *_enrolment_warnings(profile, on or date.today()))


def _moved_to_the_person_cared_for(profile: Profile, on: date) -> str:
    """' ' and a sentence naming each program judged for the person the person screened cares for in their place (VA
    pension, which serves either: engine.screen_program), with the criteria that exclude the person screened; ''
    when there is none (the person screened is not excluded, or the one they care for cannot claim it either)."""
    from carenav_core.screener.engine import own_results, screen     # the engine reads the profile
    moved = [r for r in own_results(screen(profile, on=on)).values() if r.replaces is not None]
    return "".join(f" {r.program.name} is judged for the person they care for instead of for them, since the answers "
                   f"rule it out for them ({'; '.join(o.verdict.reason for o in r.replaces.failed_rules)})."
                   for r in moved)


def _left_open(profile: Profile, on: date) -> dict[str, str]:
    """For each contradicted answer (`Profile.contradicted`), the sentence saying what it leaves open on the screening
    of `on`: the programs whose result it actually opened (engine.left_open_by), or that no result rests on it."""
    if not profile.contradicted():
        return {}
    from carenav_core.screener.engine import left_open_by, screen     # the engine reads the profile
    results = screen(profile, on=on)
    found = {}
    for name in profile.contradicted():
        programs = left_open_by(results, name)
        found[name] = (f"Until then this answer decides nothing, and the results it would decide are left open: "
                       f"{'; '.join(programs)}{UNLESS_CONTRADICTED.get(name, '')}{_would_move(profile, name, on)}."
                       if programs else
                       f"The results shown come out the same either way{UNLESS_CONTRADICTED.get(name, '')}"
                       f"{_would_move(profile, name, on)}.")
    return found


def _would_move(profile: Profile, name: str, on: date) -> str:
    """For "they care for no one" contradicted: the programs that, were they a caregiver after all, would be judged for
    the person they care for in the person screened's place (VA pension: engine.screen_program), in words; '' when
    none would (not excluded for the person screened, or the person cared for is a child who cannot claim it)."""
    if name != "caring_for_someone":
        return ""
    from carenav_core.screener.engine import own_results, screen     # the engine reads the profile
    moved = [r.program.name for r in own_results(screen(replace(profile, caring_for_someone=True), on=on)).values()
             if r.replaces is not None]
    return f", and {' and '.join(moved)} for that person in place of the person screened, whom the answers rule out" \
        if moved else ""


# What a contradicted answer, confirmed the other way, would add beyond the results shown (engine.screen)
UNLESS_CONTRADICTED = {"caring_for_someone": "; if they do care for another adult, the care programs (COPES, TSOA, "
                                             "MAC, PACE) would also be judged for that person"}


def _enrolment_warnings(profile: Profile, on: date) -> tuple[str, ...]:
    """An enrolment in categorically needy Apple Health that no route of it fits (programs.md section 1a rows 3b-4,
    section 1b rows 9-10, section 1c rows 11-12 and 15), in a Medicare Savings Program whose QI-1 income limit the
    income answer is wholly above (msp.enrolment_misfit), or in Extra Help that its own limits do not fit
    (extra_help.enrolment_misfit): the enrolment is trusted, and the person asked to check."""
    from carenav_core.screener.rules.apple_health import categorically_needy_misfit   # the rules read the profile
    from carenav_core.screener.rules.extra_help import enrolment_misfit
    from carenav_core.screener.rules.msp import enrolment_misfit as msp_misfit
    misfit = categorically_needy_misfit(profile, on) if profile.apple_health == "categorically_needy" else None
    found = []
    if misfit is not None:
        found.append(f"The answers say already enrolled in categorically needy Apple Health, but {misfit}: above what "
                     "any categorically needy route allows. The results trust the enrolment where it decides (Apple "
                     "Health and Extra Help follow it; TSOA is not open alongside it). Please check the Apple Health "
                     "answer and the income and savings answers.")
    msp = msp_misfit(profile, on)
    if msp is not None:
        found.append(f"The answers say already enrolled in a Medicare Savings Program, but {msp} (the QI-1 limit, the "
                     "highest Medicare Savings Program income limit). The results trust the enrolment where it decides "
                     "(the Medicare Savings Program and Extra Help follow it) and claim no limit met; HCA rechecks "
                     "income at renewal, so the enrolment may not continue. Please check the Apple Health answer "
                     "(only a Medicare Savings Program) and the income answer.")
    extra_help = enrolment_misfit(profile, on)
    if extra_help is not None:
        found.append(f"The answers say already getting Extra Help, with no Apple Health or Medicare Savings Program, but "
                     f"{extra_help} (Extra Help's own limits). The Extra Help result trusts the enrolment and "
                     "claims no limit met; SSA rechecks income and resources, so the enrolment may not continue. Please "
                     "check the Extra Help answer and the income and savings answers.")
    return tuple(found)
