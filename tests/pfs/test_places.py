"""Places named in questions -> Medicare localities (real CY2026 GPCIs and the CY2025 county file)."""
from decimal import Decimal

import pytest

from carenav_core.pfs.locality import CountyArea, Locality, directory
from carenav_core.pfs.places import find_places, find_places_in


@pytest.mark.parametrize("text, keys, ambiguous, matched", [
    ("What does Medicare pay for 99214 in Seattle in 2026?", ["02402:02"], False, ("Seattle",)),
    ("King County, WA", ["02402:02"], False, ("King County",)),
    ("Yakima County, WA", ["02402:99"], False, ("Yakima County",)),      # not listed: rest of state
    ("Manhattan", ["13202:01"], False, ("Manhattan",)),
    ("rest of California", ["01112:75"], False, ("rest of California",)),
    ("MAC 02102 locality 01", ["02102:01"], False, ("MAC 02102 locality 01",)),
    ("price at 02402:02 please", ["02402:02"], False, ("02402:02",)),
    ("Cook County, Illinois", ["06102:16"], False, ("Cook County",)),
    ("East St. Louis", ["06102:12"], False, ("East St. Louis",)),         # not also metro St. Louis
    ("St Louis", ["05302:01"], False, ("St Louis",)),
    ("Washington, D.C.", ["12202:01"], False, ("Washington, D.C",)),
    ("Prince George's County, Maryland", ["12202:01"], False, ("Prince George's County",)),
    ("Brooklyn", ["13202:02"], False, ("Brooklyn",)),
    ("Portland, Maine", ["14112:03"], False, ("Portland",)),
    ("Portland", ["02302:01", "14112:03"], True, ("Portland",)),
    ("Compare Miami and Dallas", ["09102:04", "04412:11"], True, ("Miami", "Dallas")),
    ("Seattle, Washington", ["02402:02"], False, ("Seattle",)),
    # a state after a place of another state is a place of its own, and a qualified place leaves the others (session 16)
    ("Compare 99214 in Manhattan, Alaska, rest of Florida and Puerto Rico", ["13202:01", "02102:01", "09102:99",
                                                                             "09202:20"], True,
     ("Manhattan", "Alaska", "rest of Florida", "Puerto Rico")),
    ("99213 in Portland, Oregon vs Seattle", ["02302:01", "02402:02"], True, ("Portland", "Seattle")),
    ("99213 in Seattle vs Portland, Maine", ["02402:02", "14112:03"], True, ("Seattle", "Portland")),
    # words before the county name never push a listed county into rest of state (a prober's finding, session 11)
    ("What does 99214 pay in Miami-Dade County, Florida?", ["09102:04"], False, ("Miami-Dade County",)),
    ("What does 99214 pay in Prince George's County, Maryland?", ["12202:01"], False, ("Prince George's County",)),
    ("99213 in Prince George\u2019s County, MD", ["12202:01"], False, ("Prince George\u2019s County",)),
    # a ';'-group's "IN VIRGINIA" / "IN MARYLAND" holds for each of its counties (the DC locality's row)
    ("Montgomery County, Maryland", ["12202:01"], False, ("Montgomery County",)),
    ("What does 99214 pay in Arlington County, Virginia?", ["12202:01"], False, ("Arlington County",)),
    ("What does 99214 pay in St. Louis County, MO?", ["05302:01"], False, ("St. Louis County",)),
    ("What does 99214 pay in Montgomery County, Texas?", ["04412:99"], False, ("Montgomery County",)),
    # a state's postal code after a city without a comma (session 12); capitalised words are not states
    ("G0557 in Birmingham AL 2026", ["10112:00"], False, ("Birmingham",)),
    ("99213 in Boise ID", ["02202:00"], False, ("Boise",)),
    ("G0557 in Los Angeles vs Birmingham AL 2026", ["01182:18", "10112:00"], True, ("Los Angeles", "Birmingham")),
    ("Miami, FL 2026 vs Boise, ID", ["09102:04", "02202:00"], True, ("Miami", "Boise")),
    # after a place the file knows, the code confirms its state (not every locality of the state)
    ("99496 in Brooklyn NY for 2025", ["13202:02"], False, ("Brooklyn",)),
    ("99491 in Chicago IL, 2026", ["06102:16"], False, ("Chicago",)),
    ("Seattle WA", ["02402:02"], False, ("Seattle",)),
    ("99204 in rural California vs national in 2025", ["01112:75"], False, ("California",)),
    ("rural texas vs dallas", ["04412:99", "04412:11"], True, ("texas", "dallas")),
    ("What OR which code pays more in Seattle", ["02402:02"], False, ("Seattle",)),
    # "rural" before a state: its rest-of-state locality, not every metro locality of it
    ("TCM 99495 payment in rural texas 2026", ["04412:99"], False, ("texas",)),
    ("99213 in rural Washington", ["02402:99"], False, ("Washington",)),
    ("99213 in rural Alabama", ["10112:00"], False, ("Alabama",)),
])
def test_places_in_questions(fee_db, text, keys, ambiguous, matched):
    match = find_places_in(fee_db, text, 2026)
    assert [p.key for p in match.localities] == keys
    assert match.ambiguous is ambiguous
    assert match.matched == matched


def test_a_state_is_every_locality_of_it_and_ambiguous(fee_db):
    match = find_places_in(fee_db, "99214 in Texas", 2026)
    texas = [p.key for p in directory(fee_db).localities(2026) if p.state == "TX"]
    assert sorted(p.key for p in match.localities) == sorted(texas) and len(texas) == 8
    assert match.ambiguous and {c.how for c in match.candidates} == {"state TX"}


@pytest.mark.parametrize("text", ["How is G0556 valued in 2026?", "99214 vs 99215", "Is APCM paid by report?",
                                  "What changed per 89 FR 97710?", "in the office or at the hospital"])
def test_no_place_means_national(fee_db, text):
    match = find_places_in(fee_db, text, 2026)
    assert not match.found and match.localities == () and not match.ambiguous and match.matched == ()


@pytest.mark.parametrize("text, keys, respelled", [
    # a place misspelt by a letter or two after "in", "vs", ... is read as the one name that close (session 13)
    ("What does 99214 pay in Seatle in 2025?", ["02402:02"], (("SEATLE", "SEATTLE"),)),
    ("reimbursment for 99490 in seatle 2026?", ["02402:02"], (("SEATLE", "SEATTLE"),)),
    ("G0556 in Chciago vs Bostn", ["06102:16", "14212:01"], (("CHCIAGO", "CHICAGO"), ("BOSTN", "BOSTON"))),
    ("99490 in Los Angelos, CA", ["01182:18"], (("LOS ANGELOS", "LOS ANGELES"),)),
    ("99490 in Manhatten", ["13202:01"], (("MANHATTEN", "MANHATTAN"),)),
    ("99214 in Washingon state", None, (("WASHINGON", "WASHINGTON"),)),
    ("99213 in Huston, TX", ["04412:18"], (("HUSTON", "HOUSTON"),)),
])
def test_a_misspelt_place_is_read_as_the_one_name_it_is_close_to(fee_db, text, keys, respelled):
    match = find_places_in(fee_db, text, 2026)
    assert match.respelled == respelled and not match.unsure
    washington = sorted(p.key for p in directory(fee_db).localities(2026) if p.state == "WA")
    assert [p.key for p in match.localities] == (keys or washington)


@pytest.mark.parametrize("text", ["99213 in total for 2025", "G0556 for Medicare patients in the office",
                                  "99213 in Texs", "CCM in rural practices", "99214 for patients in facilities",
                                  "What do practices in Ohio get", "codes billed in Medicaid"])
def test_ordinary_words_and_short_names_are_not_respelt(fee_db, text):
    match = find_places_in(fee_db, text, 2026)
    assert match.respelled == () and match.unsure == ()


def test_a_misspelling_as_close_to_two_names_is_not_read(fee_db):
    match = find_places_in(fee_db, "What does 99213 pay in Hoston?", 2026)       # one letter from BOSTON and HOUSTON
    assert not match.found and match.respelled == () and match.unsure == (("HOSTON", ("BOSTON", "HOUSTON")),)


def test_unknown_explicit_locality_is_not_invented(fee_db):
    assert not find_places_in(fee_db, "MAC 99999 locality 01", 2026).found


def _place(key, state, name):
    mac, loc = key.split(":")
    one = Decimal(1)
    return Locality(cy=2030, mac=mac, locality=loc, state=state, name=name, gpci_work=one, gpci_pe=one, gpci_mp=one,
                    release_id="x", source_file="x", sha256="x")


def test_pure_function_reads_only_its_arguments():
    """A made-up directory: results follow it, not the database."""
    places = [_place("00001:01", "WA", "EMERALD CITY (KING CNTY)"), _place("00001:99", "WA", "REST OF WASHINGTON")]
    counties = [CountyArea(cy=2030, mac="00001", locality="01", state="WASHINGTON", fee_schedule_area="EMERALD",
                           counties="KING AND PIERCE", source_file="x"),
                CountyArea(cy=2030, mac="00001", locality="99", state="WASHINGTON", fee_schedule_area="REST",
                           counties="ALL OTHER COUNTIES", source_file="x")]
    assert [p.key for p in find_places("Emerald City", places, counties, aliases={}).localities] == ["00001:01"]
    assert [p.key for p in find_places("Pierce County, WA", places, counties, aliases={}).localities] == ["00001:01"]
    assert [p.key for p in find_places("Seattle", places, counties, aliases={}).localities] == []
    aliases = {"TACOMA": (("WA", "PIERCE"),)}
    assert [p.key for p in find_places("Tacoma", places, counties, aliases=aliases).localities] == ["00001:01"]


def test_priced_places_for_a_chat_question(fee_db):
    from carenav_core.pfs.places import priced_places
    match, result = priced_places(fee_db, "What does Medicare pay for 99214 in Seattle in 2026?", ["99214"], cys=[2026])
    assert [p.key for p in match.localities] == ["02402:02"]
    assert [r.label for r in result.rows] == ["[PFS CY2026 RVU26C · GPCI2026 WA 02]"]
    match, result = priced_places(fee_db, "What does Medicare pay for 99214 in 2026?", ["99214"], cys=[2026])
    assert result is None and not match.found                     # no place: national, as today
    match, result = priced_places(fee_db, "99214 in Portland", ["99214"], cys=[2026])
    assert match.ambiguous and {r.place.state for r in result.rows} == {"OR", "ME"}
