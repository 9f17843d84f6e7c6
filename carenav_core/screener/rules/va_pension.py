"""VA Veterans Pension with Aid & Attendance (38 U.S.C. 1521; 38 CFR 3.274 net worth; va.gov pension pages)."""
from __future__ import annotations

from carenav_core.screener.intake import Bracket
from carenav_core.screener.profile import Profile, is_unknown
from carenav_core.screener.rules.base import (Context, Program, Status, Verdict, at_least, at_or_below, only_passes,
                                              rule, unknown, verdict, yes_no)
from carenav_core.screener.thresholds import Threshold
from carenav_core.screener.words import fact_words

KEY = "va_pension"
VA_FDC = ("VA: pension fully developed claim (eligibility)", "https://www.va.gov/pension/how-to-apply/fully-developed-claim/")
VA_AA = ("VA: Aid and Attendance and Housebound benefits", "https://www.va.gov/pension/aid-attendance-housebound/")
VA_RATES = ("VA: Veterans Pension rates", "https://www.va.gov/pension/veterans-pension-rates/")
MONTHS = 12
VETERAN_WORDS = {"veteran": "a veteran", "surviving_spouse": "a veteran's surviving spouse", "no": "not a veteran"}


# Under this age a person can be neither a veteran (active-duty service of at least 90 days before 1980-09-08, else 24
# months: programs.md section 10 row 2) nor a veteran's surviving spouse (section 10 rows 1-2 and the pension's
# category): the pension is not theirs to claim. Not a VA figure, so not in data/programs (no source to tag it with).
CLAIMANT_MIN_AGE = 18


@rule(program=KEY, label="Veteran or surviving spouse", document="va_pension#age-and-category", legal=VA_FDC)
def veteran_or_surviving_spouse(profile: Profile, context: Context) -> Verdict:
    if is_unknown(profile.veteran_status) and not is_unknown(profile.age) and profile.age < CLAIMANT_MIN_AGE:
        # the status not asked (the person a caregiver cares for: Profile.care_receiver) or not answered: a child's age
        # settles it; an answer given is kept (answer_warnings flags an age under 18)
        return verdict(False, f"age {profile.age}: a child can be neither a veteran nor a veteran's surviving spouse")
    missing = unknown(profile, "veteran_status")
    if missing:
        return missing
    if profile.veteran_status == "surviving_spouse" and profile.married is True:
        # 38 CFR 3.50(b)(2): a surviving spouse for VA pension has not remarried (3.55 restores it only in narrow
        # cases after the later marriage ends, which a person married now is not)
        return verdict(False, "a veteran's surviving spouse who is married again: VA survivors pension is for a "
                       "surviving spouse who has not remarried (38 CFR 3.50(b)(2))")
    if profile.veteran_status == "surviving_spouse" and is_unknown(profile.married):
        return Verdict(status=Status.UNKNOWN, reason="a veteran's surviving spouse; whether they have married again is "
                       "not known (38 CFR 3.50(b)(2))", unknown_fields=("married",),
                       needs=("whether they have married again since the veteran died",))
    if profile.veteran_status == "surviving_spouse":
        # not married now; a remarriage since the veteran's death that has ended restores survivors pension only in
        # narrow cases (38 CFR 3.55), which the intake does not ask
        return verdict(True, "a veteran's surviving spouse, not married now (a remarriage since the veteran's death, "
                       "even one that has ended, usually bars survivors pension: 38 CFR 3.55)")
    return verdict(profile.veteran_status != "no", VETERAN_WORDS[profile.veteran_status])


@rule(program=KEY, label="At least one day of active service in a wartime period", document="va_pension#service",
      legal=VA_FDC)
def wartime_service(profile: Profile, context: Context) -> Verdict:
    if is_unknown(profile.veteran_status) and is_unknown(profile.wartime_service):
        # the service question presumes a veteran: whether the person is one (or a veteran's surviving spouse) is
        # asked first (programs.md section 10 rows 1-2)
        return unknown(profile, "veteran_status", "wartime_service",
                       reason=f"not known yet: {fact_words('veteran_status')}, and if so, "
                              f"{fact_words('wartime_service')}")
    return yes_no(profile, "wartime_service", "served during a wartime period", "no wartime service")


@rule(program=KEY, label="Veteran at the pension age, disabled or in a nursing home; a surviving spouse has no age test",
      document="va_pension#age-and-category", legal=VA_FDC)
def aged_65_or_disabled(profile: Profile, context: Context) -> Verdict:
    if profile.veteran_status == "surviving_spouse":
        return verdict(True, "surviving spouse: no age or disability test")
    if profile.disability is True or profile.living_situation == "nursing_facility":
        return verdict(True, "disabled or in a nursing home")
    missing = unknown(profile, "age")
    if missing:
        return missing
    result = at_least(profile.age, context.thresholds.amount("va_pension_age", context.on), "age")
    if result.status is Status.PASS:
        return result
    # Under the age, disability, a nursing home or being a surviving spouse (no age test) still qualifies.
    open_routes = unknown(profile, "disability", "living_situation", "veteran_status")
    return open_routes or result


# The daily activities whose need of help meets Aid & Attendance (38 CFR 3.352(a): dressing, keeping clean, feeding,
# attending to the wants of nature, protection from hazards; transfers as the VA's exam form 21-2680 asks them)
AA_NEEDS = frozenset({"bathing", "dressing", "eating", "toileting", "transferring", "supervision"})


@rule(program=KEY, label="Aid & Attendance need shown (help with daily activities, or a nursing home), or the basic "
      "pension, which needs none", document="va_pension#aid-and-attendance", legal=VA_AA)
def needs_aid_and_attendance(profile: Profile, context: Context) -> Verdict:
    # Aid & Attendance and Housebound raise the MAPR (38 U.S.C. 1521(d)-(e)); the basic pension needs neither
    # (programs.md section 10 rows 4, 6, 8). Which rate applies is income_below_mapr's question: without an A&A need
    # shown, income is judged against the basic rate, and a pass there holds whatever A&A or Housebound would add.
    if profile.living_situation == "nursing_facility":
        return verdict(True, "in a nursing home (Aid & Attendance)")
    if not is_unknown(profile.adl_help) and profile.adl_help & AA_NEEDS:
        return verdict(True, f"needs help with: {', '.join(sorted(profile.adl_help))} (Aid & Attendance)")
    if is_unknown(profile.adl_help):
        # under the basic rate the basic pension holds whatever the answer (session 15b); otherwise not met on a
        # guess: which rate applies waits for the answer
        if income_below_mapr.evaluate(profile, context).status is Status.PASS:
            return verdict(True, "help with daily activities not known, and not needed: income is under the basic "
                           "pension's rate, and the basic pension needs no help with daily activities")
        return Verdict(status=Status.UNKNOWN, reason="help with daily activities not known, so whether Aid & "
                       "Attendance applies is open (the basic pension needs no help with daily activities)",
                       unknown_fields=("adl_help",))
    if profile.adl_help:
        # 38 CFR 3.352(a) names dressing, keeping clean, feeding, toileting and protection from daily hazards; help with
        # medication or walking alone may not meet it
        said = f"needs help with: {', '.join(sorted(profile.adl_help))}, which alone may not meet Aid & Attendance"
    else:
        said = "needs help with: nothing listed, so Aid & Attendance does not apply"
    return verdict(True, f"{said}; the basic pension needs no help with daily activities (income is judged against "
                   "the basic rate, which Aid & Attendance or Housebound would only raise)")


def _net_worth_bracket(income: Bracket, assets: Bracket) -> Bracket:
    """Assets plus a year of income, as one range in dollars."""
    top = None if income.upper is None or assets.upper is None else assets.upper + income.upper * MONTHS
    return Bracket(key="net-worth", lower=assets.lower + income.lower * MONTHS, upper=top,
                   sliver=assets.sliver, unit="USD")


@rule(program=KEY, label="Net worth (assets plus a year's income) within the VA limit", document="va_pension#net-worth",
      legal=VA_RATES)
def net_worth_within_limit(profile: Profile, context: Context) -> Verdict:
    missing = unknown(profile, "assets")
    if missing:
        return missing
    limit: Threshold = context.thresholds.amount("va_net_worth_limit", context.on)
    if profile.assets.lower > limit.amount:
        # Assets alone exceed the limit, whatever the income (38 CFR 3.274).
        return at_or_below(profile.assets, limit, "countable assets alone")
    missing = unknown(profile, "monthly_income")
    if missing:
        return missing
    result = at_or_below(_net_worth_bracket(profile.monthly_income, profile.assets), limit, "net worth")
    # Unreimbursed medical and care costs reduce countable income, so income cannot settle a fail alone.
    return only_passes(result, "unreimbursed medical and care expenses (they reduce countable income)")


@rule(program=KEY, label="Countable income below the maximum annual pension rate (MAPR) that applies: basic, or with "
      "Aid & Attendance", document="va_pension#income", legal=VA_RATES)
def income_below_mapr(profile: Profile, context: Context) -> Verdict:
    missing = unknown(profile, "veteran_status", "monthly_income")
    if missing:
        return missing
    if _aid_and_attendance_shown(profile):
        return _against(profile, _mapr(profile, context, aid_and_attendance=True), "with Aid & Attendance")
    # no need for Aid & Attendance shown: the basic rate applies (38 U.S.C. 1521), unless a Housebound rating (not
    # asked) or an A&A need not yet known raises it
    higher = "a Housebound rating (not asked)" if not is_unknown(profile.adl_help) and not profile.adl_help else \
        "Aid & Attendance (if they need help with bathing, dressing, eating or toileting) or a Housebound rating"
    if profile.veteran_status == "surviving_spouse":
        # programs.md section 10 gives the survivors' rate with Aid & Attendance only: their basic rate (lower) is not
        # on file, so income cannot be judged without that need
        aa = _mapr(profile, context, aid_and_attendance=True)
        return Verdict(status=Status.UNKNOWN, reason=f"no need for Aid & Attendance is shown, so the survivors' rate "
                       f"with it ({aa.describe()}) does not apply; {SURVIVOR_BASIC}", thresholds=(aa,),
                       figure_missing=SURVIVOR_BASIC, needs=(f"the current figure from the agency ({SURVIVOR_BASIC})",))
    result = _against(profile, _mapr(profile, context, aid_and_attendance=False),
                      "basic rate: no need for Aid & Attendance shown")
    if result.status is Status.PASS:
        return result
    asked = ("whether they need help with bathing, dressing, eating or toileting, or protection from everyday "
             "hazards (Aid & Attendance)",) if is_unknown(profile.adl_help) or profile.adl_help else ()
    return Verdict(status=Status.UNKNOWN, reason=f"{result.reason}; {higher} would raise the rate",
                   thresholds=result.thresholds, figure_missing=result.figure_missing,
                   unknown_fields=("adl_help",) if is_unknown(profile.adl_help) else (),
                   needs=(*result.needs, *asked, "whether they are housebound (mostly at home because of a permanent "
                          "disability)"))


SURVIVOR_BASIC = ("the VA survivors pension basic rate (no Aid & Attendance or Housebound) is not on file; it is lower "
                  "than the rate with Aid & Attendance")


def _aid_and_attendance_shown(profile: Profile) -> bool:
    """In a nursing home, or help needed with a daily activity that meets Aid & Attendance (38 CFR 3.352(a))."""
    return profile.living_situation == "nursing_facility" or \
        (not is_unknown(profile.adl_help) and bool(profile.adl_help & AA_NEEDS))


def _mapr(profile: Profile, context: Context, *, aid_and_attendance: bool) -> Threshold:
    """The MAPR for the person: a surviving spouse's own rate, or a veteran's (a spouse is a dependent and raises it;
    unmarried or not said, the no-dependent rate, under which a pass holds). programs.md section 10 rows 7-8."""
    t, on = context.thresholds, context.on
    if profile.veteran_status == "surviving_spouse":
        return t.amount("va_survivor_mapr_aid_attendance", on)      # only the A&A rate is on file
    return t.for_size("va_mapr_aid_attendance" if aid_and_attendance else "va_mapr_basic", on,
                      2 if profile.married is True else 1)


def _against(profile: Profile, limit: Threshold, rate: str) -> Verdict:
    """Yearly income vs the MAPR; over it, unreimbursed medical and care costs may still bring countable income
    under it, so income alone never excludes."""
    result = at_or_below(profile.monthly_income, limit, f"yearly income (against the MAPR {rate})", scale=MONTHS)
    return only_passes(result, "unreimbursed medical and care expenses (they reduce countable income)")


PROGRAM = Program(
    key=KEY, name="VA pension with Aid & Attendance / Housebound",
    rules=(veteran_or_surviving_spouse, wartime_service, aged_65_or_disabled, needs_aid_and_attendance,
           income_below_mapr, net_worth_within_limit),
    always_needed=("discharge other than dishonorable",
                   "length of service (90 days before 1980-09-08, otherwise 24 months, with a wartime day)",
                   "unreimbursed medical and care expenses (they lower countable income against the MAPR)",
                   "asset transfers in the last 36 months"),
    official_url="https://www.va.gov/pension/aid-attendance-housebound/",
    serves="either")
