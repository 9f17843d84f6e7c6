"""Cities read only with their state after them (data/places.toml [city_with_state]), against the real CMS files.

Names that are ordinary words or people's names ("Bend", "Reading", "Allen") stay out of [city]: the matcher reads a
question in upper case and "knee bend" is no place. Written with their state ("Bend, OR", "Reading PA", "Allen,
Texas") they are that state's city; so is a city whose name [city] gives to another state ("Albany, Oregon").
"""
import pytest

from carenav_core.pfs.gpci import STATE_CODES
from carenav_core.pfs.places import find_places_in, load_cities_with_state, load_city_aliases, load_county_states
from tests.pfs.test_places_cities import county_problems

# the names chosen by hand (data/places.toml); the rest are data/census_places.toml's
HAND_PICKED = {"BEND", "READING", "MOBILE", "ALLEN", "ALBANY", "PORTLAND", "RICHMOND", "SPRINGFIELD", "TOWSON",
               "ORANGE", "UNION", "WAYNE", "SUFFOLK", "TROY", "LAWRENCE", "SANDY", "MERIDIAN"}
STATE_NAMES = {code: name for name, code in STATE_CODES.items() if "/" not in name}


def _entries():
    return [(city, state, county) for city, spots in load_cities_with_state().items() for state, county in spots]


def test_the_table_is_not_empty_and_names_the_words_left_out_of_city():
    table = load_cities_with_state()
    assert {"BEND", "READING", "MOBILE", "ALLEN", "ALBANY"} <= set(table)
    assert "BEND" not in load_city_aliases() and "READING" not in load_city_aliases()


def test_every_census_county_of_a_city_is_in_the_county_table():
    counties = load_county_states()
    assert [(city, state, county) for city, state, county in _entries()
            if city not in HAND_PICKED and state not in counties.get(county, ())] == []


def test_every_state_and_county_is_in_the_cms_county_file(fee_db):
    # a near miss of a listed county may be a typo in a hand-picked entry; the Census ones are real counties (Dallam,
    # TX beside Dallas), checked against the 2020 Census list when the file was made
    assert county_problems(fee_db, _entries(), near_checked=lambda city: city in HAND_PICKED) == []


@pytest.mark.parametrize("form", ["{city}, {code}", "{city} {code}", "{city}, {name}", "{city} {name}"])
def test_each_city_with_its_state_is_that_city_only(fee_db, form):
    """Every entry, in four ways of writing the state: the localities of that state's city, read as the city (not
    the state's every locality, not the name's reading in another state)."""
    wrong = []
    hand = [e for e in _entries() if e[0] in HAND_PICKED]
    for city, state, county in hand + _entries()[::40]:      # the hand-picked ones and every 40th of the rest
        text = "99213 in " + form.format(city=city.title(), code=state, name=STATE_NAMES[state].title()) + " in 2026"
        match = find_places_in(fee_db, text, 2026)
        hows = {c.how for c in match.candidates}
        states = {p.state for p in match.localities}
        # "Orange, CA" is Orange County as well: the same locality
        if f"city {city}, {state} (read with its state)" not in hows or hows - {f"city {city}, {state} (read with its state)",
                                                                         f"county {city} ({state})"} \
                or states - {state, "DC"}:
            wrong.append((text, sorted(hows), sorted(p.key for p in match.localities)))
    assert wrong == []


@pytest.mark.parametrize("text", [
    "Does a knee bend test count toward 97750 in 2026?",
    "Reading the CY 2026 final rule, what did CMS do to 99490?",
    "Is 99457 payable for a mobile app in 2025?",
    "What is a normal work RVU for 99213?",
    "Allen asked what 99214 pays in 2026",
    "Can a patient surprise bill for G0556?",
    "Union contracts aside, what does 99213 pay?",
])
def test_the_same_words_without_a_state_are_no_place(fee_db, text):
    assert not find_places_in(fee_db, text, 2026).found


def test_a_name_alone_keeps_its_city_table_reading_and_its_state_picks_another(fee_db):
    assert {p.state for p in find_places_in(fee_db, "99213 in Albany in 2026", 2026).localities} == {"NY", "GA"}
    assert [p.key for p in find_places_in(fee_db, "99213 in Albany, Oregon", 2026).localities] == ["02302:99"]
    assert [p.key for p in find_places_in(fee_db, "99213 in Portland, TX", 2026).localities] == ["04412:99"]
    # the locality name keeps its own state's reading
    assert [p.key for p in find_places_in(fee_db, "99213 in Portland, Oregon", 2026).localities] == ["02302:01"]


def test_two_places_one_read_with_its_state(fee_db):
    match = find_places_in(fee_db, "Compare 99213 in Bend, OR vs Portland, OR in 2026", 2026)
    assert [p.key for p in match.localities] == ["02302:99", "02302:01"]
    match = find_places_in(fee_db, "99214: Richmond, CA vs Richmond, VA", 2026)
    assert [p.key for p in match.localities] == ["01112:05", "11302:00"]


@pytest.mark.parametrize("text, key", [
    ("What's 99214 in Bangor, Maine in 2026", "14112:99"),        # Penobscot County: rest of Maine
    ("99213 in Hood River, Oregon 2026", "02302:99"),
    ("99213 in St. Augustine, FL", "09102:99"),
    ("99213 in Saint Augustine, Florida", "09102:99"),
    ("99213 in Flagstaff, AZ", "03102:00"),
])
def test_a_census_place_with_its_state_is_its_county_s_locality(fee_db, text, key):
    """"Bangor, Maine" printed both Maine localities and picked none: no city list held it."""
    assert [p.key for p in find_places_in(fee_db, text, 2026).localities] == [key]


@pytest.mark.parametrize("text, state", [("99214 in Whatcom County 2026", "WA"), ("Walla Walla County", "WA"),
                                         ("99213 in Penobscot County", "ME")])
def test_a_county_only_one_state_has_needs_no_state(fee_db, text, state):
    """"Whatcom County" (not listed by name: rest of Washington) gave national amounts and "add its state"."""
    assert load_county_states()[text.split(" in ")[-1].split(" County")[0].upper()] == (state,)
    match = find_places_in(fee_db, text, 2026)
    assert match.found and {p.state for p in match.localities} == {state}
    assert match.matched[0].upper().endswith("COUNTY") and match.matched[0].split()[0] in text


def test_a_county_of_several_states_is_still_every_one(fee_db):
    assert len(load_county_states()["WASHINGTON"]) > 20
    assert len({p.state for p in find_places_in(fee_db, "99214 in Washington County", 2026).localities}) > 1
