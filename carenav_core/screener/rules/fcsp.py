"""Family Caregiver Support Program (RCW 74.41; respite WAC 388-106-1210). No income test for core services."""
from __future__ import annotations

from dataclasses import replace

from carenav_core.screener.profile import Profile, is_unknown
from carenav_core.screener.rules.base import Context, Program, Status, Verdict, minimum_age, rule, unknown, verdict

KEY = "fcsp"
RCW_7441 = ("RCW 74.41.020 Family caregiver support: findings and intent",
            "https://law.justia.com/codes/washington/2013/title-74/chapter-74.41/section-74.41.020/")
FBHWA = ("fbhwa.org: Family Caregiver Support Services", "https://fbhwa.org/programs/elder-services/family-caregiver-support-services/")


@rule(program=KEY, label="An unpaid family or other caregiver is involved", document="fcsp#caregiver", legal=RCW_7441)
def unpaid_caregiver_involved(profile: Profile, context: Context) -> Verdict:
    """Either caregiving relation (programs.md section 9 rows 1-3), worded by the one that holds: the person as the
    unpaid caregiver of an adult, else the person as the one an unpaid caregiver helps (the route a person who cares
    for a child, or for someone of unknown age, keeps), else the person as an unpaid caregiver of someone whose age
    the next criterion settles. Never "of another adult" for a person cared for who is a child or of unknown age."""
    routes = []
    if profile.caring_for_someone is True:
        if _adult(profile, context, "care_recipient_age").status is Status.PASS:
            said = "the person is an unpaid caregiver of another adult"
        else:
            whom = "someone whose age is not known" if is_unknown(profile.care_recipient_age) else \
                f"someone aged {profile.care_recipient_age}"
            said = f"the person is an unpaid caregiver of {whom} (FCSP serves caregivers of adults)"
        routes.append(_caregiver_adult(profile.age, context, said))
    if profile.has_unpaid_caregiver is True:
        # the caregiver's age is known only when the caregiver answers (Profile.caregiver_age)
        routes.append(_caregiver_adult(profile.caregiver_age, context,
                                       f"{_helped_words(profile)}{_respite_in_care_home(profile)}"))
    if routes:
        # the route through a caregiver of the person cared for's age first (`care_receiver_is_adult` settles that age)
        return next((r for r in routes if r.status is Status.PASS), routes[0])
    missing = unknown(profile, "caring_for_someone", "has_unpaid_caregiver")
    return missing or verdict(False, "no unpaid caregiving relationship in either direction")


def _caregiver_adult(age: object, context: Context, said: str) -> Verdict:
    """A caregiving route (`said`) whose caregiver, aged `age`, may be under the Older Americans Act's adult age: Title
    III-E's family caregiver is an adult (fcsp_caregiver_min_age, 42 U.S.C. 3030s / 3002), while Washington's RCW
    74.41 names no caregiver age, so a younger caregiver is left open with the age raised, never passed (MAC, whose
    WAC 182-513-1605 caregiver is 18+, excludes one). An unknown age passes, as before: the age is asked only of a
    caregiver who answers."""
    if is_unknown(age):
        return verdict(True, said)
    adult = context.thresholds.amount("fcsp_caregiver_min_age", context.on)
    if age >= adult.amount:
        return verdict(True, said)
    return Verdict(status=Status.UNKNOWN, thresholds=(adult,),
                   reason=f"{said}; but the caregiver is {age}: the Older Americans Act's family caregiver (Title "
                          f"III-E, which funds FCSP) is an adult, {adult.shown()} or older (42 U.S.C. 3030s), while "
                          "RCW 74.41 names no caregiver age",
                   needs=(f"whether the Area Agency on Aging serves a caregiver under {adult.shown()} (Title III-E "
                          "serves adult family caregivers)",))


def _adult(profile: Profile, context: Context, field: str = "age") -> Verdict:
    return minimum_age(profile, context, "fcsp_care_receiver_min_age", field=field)


def _helped_words(profile: Profile) -> str:
    """The route through the person's own unpaid caregiver, naming the answering caregiver when there is one."""
    if profile.screening_for == "someone_i_care_for":
        return "you, answering, are their unpaid caregiver (the caregiver is who FCSP serves)"
    return "an unpaid caregiver helps the person (the caregiver is who FCSP serves)"


CARE_HOMES = ("nursing_facility", "adult_family_home", "assisted_living")
MEDICAID = ("categorically_needy", "medically_needy")


def _respite_in_care_home(profile: Profile) -> str:
    """The respite condition for a person cared for in a care home (WAC 388-106-1210, programs.md section 9 row 7:
    respite needs the person cared for not to receive state- or Medicaid-funded long-term care); '' elsewhere."""
    if profile.living_situation not in CARE_HOMES:
        return ""
    if profile.apple_health in MEDICAID:
        return ("; they live in a care home with Apple Health, and respite is not for a person receiving Medicaid-"
                "funded long-term care (WAC 388-106-1210): the program's other services (information, counseling, "
                "training, support groups) remain")
    return ("; they live in a care home: respite is only for a person not receiving state- or Medicaid-funded "
            "long-term care (WAC 388-106-1210), so it depends on who pays for the care home; the program's other "
            "services (information, counseling, training, support groups) have no such condition")


@rule(program=KEY, label="The person cared for is an adult", document="fcsp#age-and-category", legal=FBHWA)
def care_receiver_is_adult(profile: Profile, context: Context) -> Verdict:
    """Either caregiving relation qualifies (programs.md section 9 rows 1-3): the person as the unpaid caregiver of an
    adult, or the person as the adult an unpaid caregiver helps. A person who cares for a child but has a caregiver
    of their own keeps the second route; with their own caregiver unknown, it is open."""
    routes = []
    if profile.caring_for_someone is True:
        routes.append(_adult(profile, context, "care_recipient_age"))
    if profile.has_unpaid_caregiver is True:
        own = _adult(profile, context)
        # the route through the person's own caregiver says so, beside their own age
        routes.append(replace(own, reason=f"{_helped_words(profile).split(' (')[0]}, and the person is an adult: "
                              f"{own.reason}") if own.status is Status.PASS else own)
    elif routes and is_unknown(profile.has_unpaid_caregiver) and routes[0].status is not Status.PASS and \
            _adult(profile, context).status is Status.PASS:
        routes.append(unknown(profile, "has_unpaid_caregiver", reason=f"{routes[0].reason}; but whether an unpaid "
                              "caregiver helps the person (who is an adult) is not known"))
    if routes:
        return next((r for r in routes if r.status is Status.PASS), None) or \
            next((r for r in routes if r.status is Status.UNKNOWN), routes[0])
    missing = unknown(profile, "caring_for_someone", "has_unpaid_caregiver")
    return missing or Verdict(status=Status.FAIL, reason="no one is being cared for")


PROGRAM = Program(
    key=KEY, name="Family Caregiver Support Program (FCSP), including respite",
    rules=(unpaid_caregiver_involved, care_receiver_is_adult),
    always_needed=("the care receiver's functional disability (TCARE screening by the Area Agency on Aging)",
                   "for respite: about 40+ hours a week of care, or living with an adult who needs continuous care",
                   "for respite: the care receiver is not on Medicaid or state-funded long-term care"),
    official_url=RCW_7441[1])
