"""Classes an eleventh probing round found (session 17, /tmp/probe_screen11), each a class of intakes: a person who
needs care is judged for their own care programs also when they care for someone (and the person they care for is
kept beside), Extra Help follows a likely Medicare Savings Program when its own figure is not on file, an answer
flagged as contradicting the others decides nothing, and two more contradictions are flagged.

Figures are read from data/programs (programs.md: section 1a row 1, 1b rows 8-10, 1c rows 11-15, sections 3-4, section 6
intro, section 7 row 2, section 9).
"""
from __future__ import annotations

from datetime import date

import pytest

from carenav_core.screener.assemble import run_screen
from carenav_core.screener.engine import Classification, own_results, screen
from carenav_core.screener.profile import answer_warnings, normalize
from carenav_core.screener.rules.base import Status

L, P, X = Classification.LIKELY, Classification.POSSIBLY, Classification.EXCLUDED
ON = date(2026, 12, 3)
BASE = {"apple_health": "none", "extra_help": "no", "disability": "no", "veteran_status": "no",
        "pays_for_heating": "yes", "adl_help": "none", "nursing_facility_level_of_care": "not_assessed",
        "has_unpaid_caregiver": "no", "caring_for_someone": "no", "screening_for": "myself"}
S70 = {**BASE, "age": 70, "household_size": 1, "marital_status": "single", "medicare_parts": ["A", "B", "D"],
       "living_situation": "rented_home", "county": "Yakima", "monthly_income": "1000-1299", "assets": "0-2000"}
FRAIL_CAREGIVER = {**BASE, "age": 80, "household_size": 2, "marital_status": "married", "medicare_parts": ["A", "B", "D"],
                   "living_situation": "own_home", "county": "Whatcom", "monthly_income": "1000-1299",
                   "assets": "0-2000", "adl_help": ["bathing", "dressing"],
                   "nursing_facility_level_of_care": "assessed_yes", "caring_for_someone": "yes",
                   "care_recipient_age": 82, "care_relationship": "spouse"}


def both(on: date = ON, **answers) -> tuple[dict, dict]:
    """(the person screened's own results, the results judged for the person they care for), by program key."""
    found = screen(normalize(answers), on=on)
    return own_results(found), {r.program.key: r for r in found if r.for_care_receiver}


def own(on: date = ON, **answers) -> dict:
    return both(on, **answers)[0]


def reasons(result) -> str:
    return " ".join(o.verdict.reason for o in result.outcomes)


# ---- A. A person who needs care is judged for their own care programs, also when they care for someone

@pytest.mark.parametrize("answers", [
    FRAIL_CAREGIVER,                                                            # c03: caring for a spouse
    {**FRAIL_CAREGIVER, "household_size": 1, "marital_status": "single",        # g01: caring for a friend
     "care_relationship": "friend_or_neighbor", "care_recipient_age": 85},
    {**FRAIL_CAREGIVER, "nursing_facility_level_of_care": "assessed_yes", "adl_help": "none",
     "care_relationship": "parent", "care_recipient_age": 101},                 # assessed, no daily activity listed
])
def test_a_person_assessed_at_nursing_facility_level_gets_their_own_copes_and_tsoa(answers):
    mine, theirs = both(**answers)
    # programs.md section 4 rows 1-2, 5-7 (65+, NFLOC, SIL, $2,000 / $3,000); section 3 row 4 (no unpaid caregiver)
    for key in ("copes", "tsoa"):
        assert mine[key].classification is L and not mine[key].for_care_receiver, key
        assert theirs[key].for_care_receiver                      # the person they care for is kept beside
    assert theirs["copes"].classification is P                    # their assessment is not known


def test_own_results_follow_the_persons_own_answers_not_the_care_receivers():
    over = {**FRAIL_CAREGIVER, "household_size": 1, "marital_status": "single", "monthly_income": "2983-3407",
            "care_relationship": "friend_or_neighbor"}
    mine, theirs = both(**over)
    assert mine["copes"].classification is X and "copes" in theirs        # own income above the SIL $2,982
    daily_help_only = {**FRAIL_CAREGIVER, "nursing_facility_level_of_care": "not_assessed"}
    mine, theirs = both(**daily_help_only)
    assert mine["copes"].classification is P and not mine["copes"].for_care_receiver
    assert "nursing_facility_level_of_care" in mine["copes"].unknown_fields


def test_a_caregiver_without_a_care_need_of_their_own_is_still_judged_only_for_the_person_cared_for():
    well = {**FRAIL_CAREGIVER, "adl_help": "none", "nursing_facility_level_of_care": "not_assessed"}
    mine, theirs = both(**well)
    assert mine["copes"].for_care_receiver and theirs["copes"] is mine["copes"]
    assert len(screen(normalize(well), on=ON)) == 12


def test_the_report_shows_the_persons_own_card_and_says_the_other_result_on_it():
    report = run_screen(normalize(FRAIL_CAREGIVER), on=ON, search=None)
    copes = [c for c in report.cards if c.program == "copes"]
    assert len(copes) == 1 and copes[0].classification == "likely_relevant" and not copes[0].judged_for
    assert copes[0].also_judged.startswith("Also judged for the person they care for: possibly relevant")
    assert len({c.program for c in report.cards}) == len(report.cards)
    mac = [e.name for e in report.excluded if e.program == "mac"]
    assert mac == ["Medicaid Alternative Care (MAC) — for the person screened"]   # no unpaid caregiver of their own


# ---- B. Extra Help follows a likely Medicare Savings Program when its own figure is not on file

@pytest.mark.parametrize(("on", "income"), [(date(2024, 6, 1), "1500-1732"), (date(2029, 1, 15), "1500-1732"),
                                            (date(2029, 2, 1), "0-999"), (date(2024, 6, 1), "0-999")])
def test_extra_help_follows_a_likely_msp_when_its_own_figure_is_missing(on, income):
    found = own(on, **{**S70, "monthly_income": income})
    assert found["msp"].classification is L
    extra = found["extra_help"]
    assert extra.classification is L
    assert "not on file" in reasons(extra) and "Medicare Savings Program" in reasons(extra)
    assert extra.figures_missing                                       # the missing figure is still said


def test_without_an_msp_ahead_a_missing_extra_help_figure_still_leaves_it_open():
    # Part B only and under 65: the MSP is open only through Extra Help itself (circular), so nothing confers it
    found = own(date(2029, 2, 1), **{**S70, "age": 60, "disability": "yes", "medicare_parts": ["B"],
                                     "monthly_income": "0-999"})
    assert found["extra_help"].classification is P and found["extra_help"].figures_missing
    over = own(date(2029, 2, 1), **{**S70, "monthly_income": "2983-3407"})       # MSP wholly above QI-1: excluded
    assert over["msp"].classification is X and over["extra_help"].classification is not L


# ---- C. An answer the screener flags as contradicting the others decides nothing

@pytest.mark.parametrize("age", [40, 30, 58, 63])
def test_medicare_well_before_65_with_no_disability_leaves_apple_health_open(age):
    answers = {**S70, "age": age, "medicare_parts": ["A", "B"]}
    assert any("Medicare before 65" in w for w in answer_warnings(normalize(answers)))
    health = own(**answers)["apple_health"]
    assert health.classification is P
    assert any("disability" in n and "contradicts other answers" in n for n in health.needs)
    # the answer confirmed either way decides as before
    assert own(**{**answers, "disability": "yes"})["apple_health"].classification is P      # straddles CN $1,014


def test_a_64_year_old_on_medicare_is_no_contradiction():
    answers = {**S70, "age": 64, "medicare_parts": ["A", "B"]}
    assert not any("Medicare before 65" in w for w in answer_warnings(normalize(answers)))
    assert own(**answers)["apple_health"].classification is X


def test_a_contradiction_that_would_not_change_a_program_does_not_open_it():
    answers = {**S70, "age": 40, "medicare_parts": ["A", "B"], "monthly_income": "8000+", "assets": "250000+"}
    assert own(**answers)["apple_health"].classification is X       # over every route, disabled or not


# ---- D. Contradictions that are now flagged

@pytest.mark.parametrize("given", [{"care_recipient_age": 80, "care_relationship": "parent"},
                                   {"care_relationship": "spouse"}, {"care_recipient_age": 67}])
def test_not_caring_for_anyone_but_describing_a_person_cared_for_is_flagged_and_fcsp_left_open(given):
    answers = {**S70, "caring_for_someone": "no", **given}
    warnings = [w for w in answer_warnings(normalize(answers)) if "not caring for anyone" in w]
    assert len(warnings) == 1 and "Please check whether they care for another adult" in warnings[0]
    fcsp = own(**answers)["fcsp"]
    assert fcsp.classification is P and any("contradicts other answers" in n for n in fcsp.needs)


def test_not_caring_for_anyone_with_nothing_about_a_person_cared_for_is_no_contradiction():
    answers = {**S70, "caring_for_someone": "no", "care_recipient_age": "dont_know"}
    assert not any("not caring for anyone" in w for w in answer_warnings(normalize(answers)))
    assert own(**answers)["fcsp"].classification is X


@pytest.mark.parametrize(("income", "assets", "married", "flagged"), [
    ("8000+", "250000+", "single", True),            # k01: above the SIL and the $2,000 standard
    ("3408-3525", "0-2000", "single", True),         # income alone above the SIL $2,982
    ("1000-1299", "4501-10000", "single", True),     # assets alone above $2,000 (65+: no MAGI route)
    ("1000-1299", "0-2000", "single", False),        # fits CN
    # a couple with no long-term-care need is held to the couple's CN income standard $1,511 (programs.md s1a row 3b;
    # session 18, probe class H2): $8,000+ is above it whoever earns it
    ("8000+", "0-2000", "married", True),
    ("1000-1299", "169593-249999", "married", True),  # above the federal maximum CSRA plus $2,000
])
def test_an_enrolment_in_cn_apple_health_that_no_route_fits_is_flagged_and_trusted(income, assets, married, flagged):
    answers = {**S70, "apple_health": "categorically_needy", "monthly_income": income, "assets": assets,
               "marital_status": married, "household_size": 2 if married == "married" else 1}
    person = normalize(answers)
    found = [w for w in answer_warnings(person, on=ON) if "already enrolled in categorically needy" in w]
    assert bool(found) is flagged
    if flagged:
        assert "Please check the Apple Health answer" in found[0]
    results = own(**answers)
    assert results["apple_health"].classification is L and results["tsoa"].classification is X


def test_the_report_carries_the_enrolment_warning():
    answers = {**S70, "apple_health": "categorically_needy", "monthly_income": "8000+", "assets": "250000+"}
    report = run_screen(normalize(answers), on=ON, search=None)
    assert any("already enrolled in categorically needy Apple Health" in w for w in report.warnings)


def test_an_open_rule_names_a_contradiction_as_what_is_needed():
    # the older contradiction (screening someone cared for who has no unpaid caregiver) now says so too
    answers = {**S70, "screening_for": "someone_i_care_for", "caregiver_age": 50, "has_unpaid_caregiver": "no"}
    mac = own(**answers)["mac"]
    outcome = next(o for o in mac.outcomes if o.rule == "has_unpaid_caregiver")
    assert outcome.status is Status.UNKNOWN and any("contradicts other answers" in n for n in outcome.verdict.needs)


# ==== round 12 (/tmp/probe_screen12, classes E-H)

CAREGIVER_SCREENING = {**BASE, "screening_for": "someone_i_care_for", "caregiver_age": 60, "has_unpaid_caregiver": "yes",
                       "age": 85, "household_size": 1, "marital_status": "single", "medicare_parts": ["A", "B", "D"],
                       "living_situation": "own_home", "county": "Spokane", "monthly_income": "1500-1732",
                       "assets": "0-2000", "adl_help": ["bathing", "dressing"],
                       "nursing_facility_level_of_care": "assessed_yes"}


# ---- E. Screening someone one cares for: the care answers describe the answerer's tie to them, no contradiction

@pytest.mark.parametrize("given", [
    {"care_relationship": "parent"},                                               # a12 (round-11 c01)
    {"care_relationship": "spouse", "caregiver_age": 72, "age": 79, "household_size": 2,
     "marital_status": "married"},                                                 # g01: the wife screening her husband
    {"care_relationship": "other_relative", "care_recipient_age": 85},
])
def test_screening_someone_cared_for_who_cares_for_no_one_is_no_contradiction(given):
    answers = {**CAREGIVER_SCREENING, "caring_for_someone": "no", **given}
    person = normalize(answers)
    assert person.contradicted() == () and person.cared_for_details() == ()
    assert not any("not caring for anyone" in w for w in answer_warnings(person, on=ON))
    # programs.md section 9 rows 1-3: FCSP serves the answering unpaid caregiver of an adult 18+
    fcsp = own(**answers)["fcsp"]
    assert fcsp.classification is L and not any("contradicts" in n for n in fcsp.needs)


def test_the_person_cared_for_is_never_read_as_contradicting_themselves():
    # the profile a care-receiver program is judged on keeps the relationship, but is not a caregiver
    caregiver = normalize({**FRAIL_CAREGIVER, "adl_help": "none", "nursing_facility_level_of_care": "not_assessed"})
    assert caregiver.care_receiver().contradicted() == ()
    _, theirs = both(**{**FRAIL_CAREGIVER, "adl_help": "none", "nursing_facility_level_of_care": "not_assessed"})
    assert not any(o.verdict.opened_by for r in theirs.values() for o in r.outcomes)


# ---- F. A person helped by an unpaid caregiver can still care for someone: the care programs are judged for both

HELPED_CAREGIVER = {**BASE, "age": 62, "household_size": 1, "marital_status": "single", "medicare_parts": "none",
                    "living_situation": "rented_home", "county": "King", "monthly_income": "1500-1732",
                    "assets": "0-2000", "has_unpaid_caregiver": "yes", "caring_for_someone": "yes",
                    "care_recipient_age": 88, "care_relationship": "parent"}
CARE_PROGRAMS = ("copes", "tsoa", "mac", "pace")


@pytest.mark.parametrize("answers", [
    HELPED_CAREGIVER,                                                             # g04
    {**HELPED_CAREGIVER, "adl_help": "dont_know"},                                # no care need shown either
])
def test_a_helped_caregiver_without_a_care_need_is_judged_only_for_the_person_cared_for(answers):
    mine, theirs = both(**answers)
    for key in CARE_PROGRAMS:               # programs.md sections 2-5: each serves the person needing care
        assert mine[key].for_care_receiver and theirs[key] is mine[key], key
        assert mine[key].classification is P, key                             # the parent's assessment not known
    assert len(screen(normalize(answers), on=ON)) == 12


@pytest.mark.parametrize(("answers", "mac"), [
    ({**FRAIL_CAREGIVER, "has_unpaid_caregiver": "yes", "household_size": 1, "marital_status": "single",
      "care_relationship": "friend_or_neighbor", "care_recipient_age": 85}, P),   # a02: own CN not known
    ({**FRAIL_CAREGIVER, "has_unpaid_caregiver": "yes"}, L),                       # a03: spouses caring for each other
])
def test_a_helped_person_who_needs_care_and_cares_for_someone_is_judged_for_both(answers, mac):
    mine, theirs = both(**answers)
    assert mine["copes"].classification is L and mine["tsoa"].classification is L and not mine["copes"].for_care_receiver
    assert mine["mac"].classification is mac          # their own unpaid caregiver meets MAC's criterion (s2 row 6)
    for key in CARE_PROGRAMS:
        assert theirs[key].for_care_receiver, key
    assert theirs["copes"].classification is P
    report = run_screen(normalize(answers), on=ON, search=None)
    copes = [c for c in report.cards if c.program == "copes"]
    assert len(copes) == 1 and copes[0].also_judged.startswith("Also judged for the person they care for")
    assert len({c.program for c in report.cards}) == len(report.cards)


def test_screening_someone_cared_for_who_is_a_caregiver_keeps_the_care_programs_theirs():
    """Their own care programs stay theirs; since session 18 (probe class N) the person they care for is judged for
    the care programs as well, beside them."""
    mine, theirs = both(**{**CAREGIVER_SCREENING, "caring_for_someone": "yes", "care_recipient_age": 88})
    assert mine["copes"].classification is L and mine["fcsp"].classification is L
    assert set(CARE_PROGRAMS) <= set(theirs) <= {*CARE_PROGRAMS, "va_pension"}
    assert all(r.for_care_receiver for r in theirs.values())


# ---- G. A contradiction's warning says what it actually left open

NOT_CARING_BUT_DETAILS = {"caring_for_someone": "no", "care_recipient_age": 85, "care_relationship": "friend_or_neighbor"}


def test_the_not_caring_warning_names_fcsp_only_when_it_left_fcsp_open():
    helped = {**FRAIL_CAREGIVER, "household_size": 1, "marital_status": "single", "has_unpaid_caregiver": "yes",
              **NOT_CARING_BUT_DETAILS}                                                      # d05
    warning = next(w for w in answer_warnings(normalize(helped), on=ON) if "not caring for anyone" in w)
    assert "Family Caregiver Support Program" not in warning and "left open" not in warning
    assert "come out the same either way" in warning
    assert own(**helped)["fcsp"].classification is L         # programs.md section 9 row 1: their own caregiver
    alone = {**S70, **NOT_CARING_BUT_DETAILS}
    warning = next(w for w in answer_warnings(normalize(alone), on=ON) if "not caring for anyone" in w)
    assert "left open: Family Caregiver Support Program (FCSP), including respite" in warning
    assert "the care programs (COPES, TSOA, MAC, PACE) would also be judged for that person" in warning   # round 17 W1
    assert own(**alone)["fcsp"].classification is P


def test_the_medicare_before_65_warning_names_what_it_left_open():
    opened = {**S70, "age": 40, "medicare_parts": ["A", "B"]}
    warning = next(w for w in answer_warnings(normalize(opened), on=ON) if "Medicare before 65" in w)
    assert "Until then" in warning and "Apple Health" in warning and "left open" in warning
    decided = {**opened, "monthly_income": "8000+", "assets": "250000+"}    # over every route, disabled or not
    warning = next(w for w in answer_warnings(normalize(decided), on=ON) if "Medicare before 65" in w)
    assert warning.endswith("left open: Basic Food (SNAP).")      # Apple Health is excluded either way


# ---- H. The CN enrolment misfit applies each route only where its age and disability condition can hold

W60 = {**BASE, "age": 60, "household_size": 1, "marital_status": "single", "medicare_parts": "none",
       "living_situation": "rented_home", "county": "Yakima", "assets": "0-2000", "apple_health": "categorically_needy"}


# (session 18, probe class H3: with no long-term-care need, no help listed and no assessment pending, the special
# income level is no route, so a disabled or 65+ single enrolee is held to the CN standard $1,014, s1a row 3b)
@pytest.mark.parametrize(("changes", "flagged"), [
    ({"monthly_income": "2200-2351"}, "the MAGI adult limit"),        # d11: above MAGI $1,836, no SSI-related route
    ({"monthly_income": "1500-1732"}, ""),                            # within MAGI
    ({"monthly_income": "2200-2351", "disability": "yes"}, "categorically needy income standard"),
    ({"monthly_income": "2200-2351", "disability": "dont_know"}, "categorically needy income standard"),
    ({"monthly_income": "2200-2351", "age": 66, "medicare_parts": ["A", "B"]}, "categorically needy income standard"),
    ({"monthly_income": "2200-2351", "disability": "yes", "adl_help": ["bathing"]}, ""),   # assessment pending: SIL
    ({"monthly_income": "2200-2351", "disability": "yes", "nursing_facility_level_of_care": "assessed_yes"}, ""),
    ({"monthly_income": "2556-2608", "household_size": 2, "marital_status": "married"}, "the MAGI adult limit"),
    ({"monthly_income": "1500-1732", "assets": "250000+"}, ""),       # MAGI: no asset test (s1b row 10)
])
def test_a_working_age_enrolee_without_a_disability_is_checked_against_magi_only(changes, flagged):
    answers = {**W60, **changes}
    found = [w for w in answer_warnings(normalize(answers), on=ON) if "already enrolled in categorically needy" in w]
    assert bool(found) is bool(flagged)
    if flagged:
        assert flagged in found[0]
    assert own(**answers)["apple_health"].classification is L              # the enrolment is trusted


# ---- round 13, class I: either caregiving relation qualifies for FCSP (programs.md section 9 rows 1-3)

GRANDPARENT = {**S70, "age": 68, "household_size": 2, "adl_help": ["bathing"],
               "nursing_facility_level_of_care": "assessed_yes", "caring_for_someone": "yes",
               "care_recipient_age": 15, "care_relationship": "other_relative"}


@pytest.mark.parametrize("own_caregiver, expected", [("yes", L), ("dont_know", P), ("no", X)])
def test_a_person_caring_for_a_child_keeps_fcsp_through_their_own_caregiver(own_caregiver, expected):
    assert own(**{**GRANDPARENT, "has_unpaid_caregiver": own_caregiver})["fcsp"].classification is expected


def test_caring_for_an_adult_still_qualifies_whatever_ones_own_caregiver():
    answers = {**GRANDPARENT, "care_recipient_age": 40, "has_unpaid_caregiver": "no"}
    assert own(**answers)["fcsp"].classification is L
