"""Senior citizen / disabled person property tax exemption (RCW 84.36.381; WAC 458-16A-130)."""
from __future__ import annotations

from dataclasses import replace

from carenav_core.screener.profile import Profile, is_unknown
from carenav_core.screener.thresholds import Threshold
from carenav_core.screener.words import place_words
from carenav_core.screener.rules.base import (Context, Program, Status, Verdict, at_least, at_or_below, only_passes,
                                              rule, unknown, verdict)

KEY = "property_tax"
WAC_130 = ("WAC 458-16A-130 Senior citizen and disabled person exemption",
           "https://lawfilesext.leg.wa.gov/Law/WACArchive/2021/htm/WAC%20458%20%20TITLE/WAC%20458%20-%2016A%20CHAPTER/WAC%20458%20-%2016A-130.htm")
DOR_NOTICE = ("DOR special notice: legislative changes to property tax relief programs",
              "https://dor.wa.gov/forms-publications/publications-subject/special-notices/legislative-changes-property-tax-relief-programs")
MONTHS = 12


# Care settings whose residents keep the exemption on the home they left (RCW 84.36.381(1)(a))
CARE_SETTINGS = ("nursing_facility", "adult_family_home", "assisted_living")
RCW_381 = ("RCW 84.36.381 Residences: property tax exemptions, qualifications",
           "https://app.leg.wa.gov/RCW/default.aspx?cite=84.36.381")

# RCW 84.36.381: a veteran with a VA service-connected rating of 80% or more, or total, qualifies at any age; the
# intake does not ask the rating.
VA_RATING_ROUTE = "a veteran with a VA service-connected rating of 80% or more, or total, qualifies at any age"


@rule(program=KEY, label="Reaches the minimum age by December 31 of the application year, or retired because of a disability",
      document="property_tax#age-and-category",
      legal=WAC_130)
def aged_61_or_disabled(profile: Profile, context: Context) -> Verdict:
    if profile.disability is True:
        return verdict(True, "has a disability")
    missing = unknown(profile, "age")
    if missing:
        return missing
    minimum = context.thresholds.amount("property_tax_min_age", context.on)
    result = at_least(profile.age, minimum, "age")
    if result.status is Status.FAIL and profile.screening_for == "someone_i_care_for" and profile.couple is True and \
            is_unknown(profile.care_relationship) and not is_unknown(profile.caregiver_age) and \
            profile.caregiver_age is not None and profile.caregiver_age >= minimum.amount:
        return Verdict(status=Status.UNKNOWN, reason=f"{result.reason}; their caregiver is {profile.caregiver_age}, "
                       "and a spouse of age can be the claimant for the home they share", thresholds=(minimum,),
                       unknown_fields=("care_relationship",), needs=("whether the caregiver is their spouse",))
    if result.status is Status.FAIL and _spouse_is_of_age(profile, minimum.amount):
        # the spouse they care for, living with them, can be the claimant for the home they share (RCW 84.36.381:
        # the claimant's residence, owned by the claimant or the spouse; the couple's income counts either way)
        return verdict(True, f"{result.reason}; their spouse, of age, can be the claimant for the home they share",
                       minimum)
    if result.status is Status.FAIL and profile.married is True:
        spouse = _spouse_route(profile, minimum, result.reason)
        if spouse is not None:
            return spouse
    if result.status is Status.FAIL and profile.disability is not False:
        return unknown(profile, "disability")
    if result.status is Status.FAIL and is_unknown(profile.veteran_status):
        return unknown(profile, "veteran_status", reason=f"{result.reason}; {VA_RATING_ROUTE}")
    if result.status is Status.FAIL and profile.veteran_status == "veteran":
        return Verdict(status=Status.UNKNOWN, reason=f"{result.reason}; {VA_RATING_ROUTE}", thresholds=(minimum,),
                       needs=("the VA service-connected disability rating",))
    widow_age = context.thresholds.amount("property_tax_surviving_spouse_min_age", context.on)
    if result.status is Status.FAIL and profile.age >= widow_age.amount and profile.married is not True:
        # RCW 84.36.381(3): a participant's surviving spouse or domestic partner may continue the exemption at 57+;
        # one year short, the birthday may settle it too
        birthday = (_birthday(minimum, context),) \
            if profile.age == minimum.amount - 1 else ()
        return Verdict(status=Status.UNKNOWN, reason=f"{result.reason}; a participant's surviving spouse or partner may "
                       f"continue it from age {widow_age.shown()}", thresholds=(minimum, widow_age),
                       needs=(*birthday, "whether their late spouse or partner was receiving the exemption"))
    if result.status is Status.FAIL and profile.age == minimum.amount - 1:
        # The age only has to be reached by December 31 of the year the application is filed (RCW 84.36.381).
        return Verdict(status=Status.UNKNOWN, reason=f"{result.reason}; one year short, so it depends on the birthday",
                       thresholds=(minimum,), needs=(_birthday(minimum, context),))
    return result


def _birthday(minimum, context: Context) -> str:
    """One year short of the age: this year's application if they turn it by December 31, else next year's (the age
    need only be reached by December 31 of the year the application is filed)."""
    return (f"whether they turn {minimum.amount:g} by December 31, {context.on.year} (if not, they can apply in "
            f"{context.on.year + 1}, the year they turn {minimum.amount:g})")


def _spouse_route(profile: Profile, minimum, reason: str) -> Verdict | None:
    """A married person under the minimum age whose spouse may be the claimant (RCW 84.36.381: the residence of the
    claimant, owned by the claimant or the spouse; a claimant confined to a nursing home, assisted living or an adult
    family home keeps the exemption on the home the spouse lives in): open, asking the spouse's age when the intake
    does not give it; None when the spouse's age is known and under the minimum too."""
    age = profile.spouse_age()
    if is_unknown(age) or age is None:
        return Verdict(status=Status.UNKNOWN, reason=f"{reason}; a spouse of {minimum.shown()} or older can be the "
                       "claimant for the home they share", thresholds=(minimum,),
                       needs=(f"whether their spouse is {minimum.amount:g} or older (by December 31)",))
    if age < minimum.amount:
        return None
    return Verdict(status=Status.UNKNOWN, reason=f"{reason}; their spouse is {age}, and can be the claimant for the "
                   "home they own together if it is the spouse's home too (a spouse confined to a nursing home or other "
                   "care home keeps the exemption on the home the other lives in)", thresholds=(minimum,),
                   needs=("whether their spouse, who lives elsewhere, is in a nursing home or other care home",))


def _spouse_is_of_age(profile: Profile, minimum: float) -> bool:
    """The person screened and a spouse they live with (a couple) are caregiver and cared-for, and the spouse is at
    least `minimum` years old: the spouse's age as the intake gives it (`Profile.spouse_age`: the spouse the person
    screened cares for, in either mode, or the answering caregiver when the relationship is the answerer's own tie),
    never the answerer's age read as the spouse's."""
    if profile.care_relationship != "spouse" or profile.couple is not True:
        return False
    age = profile.spouse_age()
    return not is_unknown(age) and age is not None and age >= minimum


@rule(program=KEY, label="Owns and lives in the home as principal residence", document="property_tax#living-situation",
      legal=RCW_381)
def owns_and_occupies_home(profile: Profile, context: Context) -> Verdict:
    missing = unknown(profile, "living_situation")
    if missing:
        return missing
    if profile.living_situation in CARE_SETTINGS:
        # RCW 84.36.381(1)(a): confinement to a nursing home, assisted living facility or adult family home does not
        # end the exemption while the home is temporarily unoccupied, occupied by a spouse or dependant, or rented to
        # pay for the care
        return Verdict(status=Status.UNKNOWN, reason=f"lives {place_words(profile.living_situation)}",
                       needs=("whether they still own the home they lived in, and whether it is empty, lived in by a "
                              "spouse or dependant, or rented to pay for the care",))
    if profile.living_situation == "with_family":
        # an owner whose family moved in answers the same way as one who moved in with family
        return Verdict(status=Status.UNKNOWN, reason="lives with family", needs=("whether they own the home",))
    return verdict(profile.living_situation == "own_home", f"lives: {place_words(profile.living_situation)}")


@rule(program=KEY, label="Combined disposable income at or below the county's income limit for this year's application",
      document="property_tax#income-limit", legal=DOR_NOTICE)
def income_within_county_threshold(profile: Profile, context: Context) -> Verdict:
    missing = unknown(profile, "monthly_income", "county")
    if missing and missing.unknown_fields == ("county",):
        # the county matters only when the income falls between the lowest and the highest county limit
        return _in_any_county(profile, context) or missing
    if missing:
        return missing
    limit = context.thresholds.for_county("property_tax_income_threshold_3", context.on, profile.county)
    return _income_against(profile, context, limit)


def _income_against(profile: Profile, context: Context, limit: Threshold) -> Verdict:
    """The household income bracket against one county limit: a pass holds unless the spouse lives elsewhere (their
    income counts too); a fail is left to the deductions of disposable income."""
    # An application filed this year is judged on last year's income and lowers next year's taxes.
    year = context.on.year
    result = at_or_below(profile.monthly_income, limit, f"household income (for an application filed in {year}: "
                         f"{year - 1} income, lowering {year + 1} taxes)", scale=MONTHS)
    if result.status is Status.PASS and profile.lives_apart_from_spouse():
        # combined disposable income counts both spouses (RCW 84.36.383); the household answer holds one of them
        return Verdict(status=Status.UNKNOWN, reason=f"{result.reason}; combined disposable income also counts the "
                       "spouse, who lives elsewhere", thresholds=result.thresholds,
                       needs=("the spouse's income (combined disposable income counts both spouses)",))
    # Disposable income subtracts unreimbursed medical and in-home care costs (RCW 84.36.383).
    return only_passes(result, "prior-year combined disposable income after medical and care deductions")


def _in_any_county(profile: Profile, context: Context) -> Verdict | None:
    """With the county unknown: the judgment under the lowest county limit when the income is wholly at or under it
    (so under every county's), or under the highest when wholly above it (above every county's); None when the
    county decides it."""
    lowest, highest = context.thresholds.county_extremes("property_tax_income_threshold_3", context.on)
    for limit, side in ((lowest, Status.PASS), (highest, Status.FAIL)):
        if at_or_below(profile.monthly_income, limit, "income", scale=MONTHS).status is side:
            result = _income_against(profile, context, limit)
            return replace(result, reason=f"{result.reason} ({limit.label.rsplit(': ', 1)[-1]}; so the county does "
                           "not change it)")
    return None


PROGRAM = Program(
    key=KEY, name="Property tax exemption for seniors and people with disabilities",
    rules=(aged_61_or_disabled, owns_and_occupies_home, income_within_county_threshold),
    always_needed=("prior-year combined disposable income (after allowed medical and care costs)",
                   "lived in the home more than six months of the year"),
    official_url=DOR_NOTICE[1])
