"""Session 20: place names a question gives, read as an analyst means them (real CMS data, real resolution).

* A city of one name in several states offers every state's locality ("Kansas City": MO 02 and Kansas City, KS);
  the [namesake] table of data/places.toml adds the other state's city to a CMS locality name.
* A state written after such a city, as a name or a postal code, with or without a comma ("Kansas City, Kansas",
  "Kansas City KS", "Portland ME"), narrows it to that state.
* An unknown foreign place in a bare question ("99213 in London 2025") is said, as "Toronto" is, not read as a rule
  topic; months, programs and US places are not.
* A misspelt qualifier of a state ("rual texas", "reset of Texas") is read as meant; real words ("west of") are not.

Expected localities are read from the CMS county file's own text (tests/pfs/test_places_cities._cms_row_for) and
amounts from the rows the answer shows and `locality_rows`, never written here."""
from __future__ import annotations

from datetime import date

import pytest

from carenav_core.chat.pipeline import prepare
from carenav_core.chat.plan import Intent
from carenav_core.pfs.gpci import STATE_CODES
from carenav_core.pfs.locality import directory, locality_rows
from carenav_core.pfs.places import _distance, _index, find_places_in, load_city_aliases, load_namesakes
from tests.chat.test_question_classes import said
from tests.pfs.test_places_cities import _cms_row_for

TODAY = date(2026, 12, 1)
STATE_NAME = {code: name for name, code in STATE_CODES.items() if "/" not in name}


# the state and county of each CMS locality name that [namesake] adds a city to (METROPOLITAN KANSAS CITY: CLAY,
# JACKSON AND PLATTE)
LOCALITY_NAMED = {"KANSAS CITY": (("MO", "JACKSON"),)}


def _tables():
    """Every reading of a name: its locality name's (LOCALITY_NAMED), its cities of data/places.toml."""
    names = set(load_city_aliases()) | set(load_namesakes())
    return {n: LOCALITY_NAMED.get(n, ()) + load_city_aliases().get(n, ()) + load_namesakes().get(n, ()) for n in names}


def _multi_state():
    return sorted((city, spots) for city, spots in _tables().items() if len({s for s, _ in spots}) > 1)


def _keys(fee_db, spots, cy=2026):
    areas = directory(fee_db).county_areas(cy)
    return list(dict.fromkeys(_cms_row_for(areas, state, county) for state, county in spots))


@pytest.mark.parametrize("city, states", [
    ("KANSAS CITY", {"MO", "KS"}), ("JACKSON", {"MS", "TN", "MI"}), ("COLUMBIA", {"SC", "MO", "MD"}),
    ("CHARLESTON", {"SC", "WV"}), ("AURORA", {"CO", "IL"}), ("ARLINGTON", {"TX", "VA", "WA"}), ("GLENDALE", {"AZ", "CA"}),
    ("PASADENA", {"CA", "TX"}), ("ROCHESTER", {"NY", "MN"}), ("ALBANY", {"NY", "GA"}), ("LAFAYETTE", {"LA", "IN"}),
    ("WILMINGTON", {"DE", "NC"}), ("BLOOMINGTON", {"MN", "IN", "IL"}), ("ATHENS", {"GA", "OH"}),
    ("GREENVILLE", {"SC", "NC"}), ("CONCORD", {"NH", "NC", "CA"}), ("LAKEWOOD", {"CO", "NJ", "CA", "WA"}),
])
def test_a_city_of_several_states_offers_each(fee_db, city, states):
    spots = _tables()[city]
    assert {s for s, _ in spots} == states
    match = find_places_in(fee_db, f"What does 99213 pay in {city.title()} in 2026?", 2026)
    expected = _keys(fee_db, spots)
    assert sorted(p.key for p in match.localities) == sorted(expected)
    assert match.ambiguous and match.matched == (city.title(),)


def test_kansas_city_alone_was_missouri_only_and_now_offers_kansas(fee_db):
    match = find_places_in(fee_db, "99213 in Kansas City in 2024", 2024)
    areas = directory(fee_db).county_areas(2024)
    assert {p.key for p in match.localities} == {_cms_row_for(areas, "MO", "JACKSON"),
                                                   _cms_row_for(areas, "KS", "WYANDOTTE")}
    assert {p.state for p in match.localities} == {"MO", "KS"}


def test_namesake_counties_are_in_the_cms_county_file(fee_db):
    """As tests/pfs/test_places_cities checks [city]: listed by name in the state, or the state has an all-counties /
    rest-of-state row and the name is not one letter from a listed county; and no namesake is missing its locality
    name (the table adds to a locality name, it does not repeat a city)."""
    book = directory(fee_db)
    for cy in sorted(book.gpci):
        index = _index(tuple(book.localities(cy)), tuple(book.county_areas(cy)))
        for name, spots in load_namesakes().items():
            assert name in index.names, (cy, name)
            for state, county in spots:
                listed = {c for c, rows in index.counties.items() for s, _ in rows if s == state}
                assert county in listed or (state in index.rest_of_state and
                                            not [c for c in listed if _distance(county, c, 1) <= 1]), (cy, name, state)


@pytest.mark.parametrize("text, state", [
    ("99213 in Kansas City, Kansas in 2025", "KS"), ("99213 in Kansas City, KS in 2025", "KS"),
    ("99213 in Kansas City KS in 2025", "KS"), ("99213 in Kansas City Kansas in 2025", "KS"),
    ("99213 in kansas city, kansas in 2025", "KS"), ("99213 in Kansas City, Missouri in 2025", "MO"),
    ("99213 in Kansas City MO in 2025", "MO"),
])
def test_kansas_city_with_its_state_is_that_state_only(fee_db, text, state):
    match = find_places_in(fee_db, text, 2025)
    county = {"KS": "WYANDOTTE", "MO": "JACKSON"}[state]
    assert [p.key for p in match.localities] == [_cms_row_for(directory(fee_db).county_areas(2025), state, county)]
    assert not match.ambiguous


def test_every_city_of_several_states_narrows_to_a_state_written_after_it(fee_db):
    """"Columbia, Maryland", "Columbia MD", "Portland ME", "Lafayette IN", "Athens, OH": the written state's
    locality only, for every city of several states (a postal code that is also a word, OR/IN/ME/OH/OK/HI, counts
    in capitals right after the city)."""
    wrong = []
    for city, spots in _multi_state():
        for state in dict.fromkeys(s for s, _ in spots):
            expected = _keys(fee_db, [spot for spot in spots if spot[0] == state])
            for written in (f"{city.title()}, {STATE_NAME[state].title()}", f"{city.title()} {STATE_NAME[state].title()}",
                            f"{city.title()}, {state}", f"{city.title()} {state}"):
                match = find_places_in(fee_db, f"What does 99213 pay in {written} in 2026?", 2026)
                if [p.key for p in match.localities] != expected or match.ambiguous:
                    wrong.append((written, [p.key for p in match.localities], expected))
    assert wrong == []


@pytest.mark.parametrize("text, meant", [
    ("99215 in rual texas in 2024", "99215 in rural texas in 2024"),
    ("99215 in rurual Texas in 2024", "99215 in rural Texas in 2024"),
    ("99215 in ruarl Texas in 2024", "99215 in rural Texas in 2024"),
    ("99215 in rual parts of Texas in 2024", "99215 in rural parts of Texas in 2024"),
    ("99215 in the reset of Texas in 2024", "99215 in the rest of Texas in 2024"),
    ("99215 in the rset of Washington in 2024", "99215 in the rest of Washington in 2024"),
])
def test_a_misspelt_qualifier_reads_as_meant(fee_db, text, meant):
    match, right = find_places_in(fee_db, text, 2024), find_places_in(fee_db, meant, 2024)
    assert [p.key for p in match.localities] == [p.key for p in right.localities]
    assert len(match.localities) == 1 and match.localities[0].locality == "99" and match.respelled


@pytest.mark.parametrize("text", ["99215 in west of Texas in 2024", "99215 in the best of Texas in 2024",
                                  "99215 in Texas in 2024", "a mural Texas 99215 in 2024"])
def test_real_words_before_a_state_are_not_qualifiers(fee_db, text):
    match = find_places_in(fee_db, text, 2024)
    assert not match.respelled
    assert [p.key for p in match.localities] == [p.key for p in find_places_in(fee_db, "Texas", 2024).localities]


# through the chat pipeline (real DuckDB, embedded PostgreSQL, deterministic writer)

def _local(prepared, code, cy):
    return {r.locality.split()[0] + " " + r.locality.split()[1]: r for r in prepared.rows
            if r.hcpcs == code and r.cy == cy and r.locality and r.in_focus and not r.mod}


def test_kansas_city_kansas_answers_with_the_kansas_amount_only(backends):
    prepared = prepare("99213 in Kansas City, Kansas in 2025", backends, today=TODAY)
    local = _local(prepared, "99213", 2025)
    assert list(local) == ["KS 00"] and not prepared.plan.ambiguous_place
    (expected,) = locality_rows(backends.fee_db, ["99213"], cys=[2025], places=["05202:00"]).rows
    assert local["KS 00"].payment_nonfac == expected.payment_nonfac
    assert f"${expected.payment_nonfac}" in said(prepared)


def test_kansas_city_alone_offers_missouri_and_kansas(backends):
    prepared = prepare("99214 in Kansas City in 2024", backends, today=TODAY)
    local = _local(prepared, "99214", 2024)
    assert set(local) == {"MO 02", "KS 00"} and prepared.plan.ambiguous_place
    for key, tag in (("05302:02", "MO 02"), ("05202:00", "KS 00")):
        (expected,) = locality_rows(backends.fee_db, ["99214"], cys=[2024], places=[key]).rows
        assert local[tag].payment_nonfac == expected.payment_nonfac


@pytest.mark.parametrize("question, name", [("99213 in London 2025", "London"), ("99213 in Toronto 2025", "Toronto"),
                                            ("What does 99213 pay in Paris, France in 2025?", "Paris")])
def test_an_unknown_foreign_place_is_said_and_national_amounts_are_shown(backends, question, name):
    prepared = prepare(question, backends, today=TODAY)
    assert not prepared.plan.places and prepared.plan.intents != (Intent.POLICY,)
    text = said(prepared)
    assert f"“{name}” is not a place the CMS locality files know: the national amounts are shown." in text
    national = next(r for r in prepared.rows if r.hcpcs == "99213" and r.cy == 2025 and not r.locality and not r.mod)
    assert f"${national.payment_nonfac}" in text


@pytest.mark.parametrize("question", ["What does 99213 pay in March 2025?", "99213 in May 2025",
                                      "99213 in Medicare in 2025", "99213 in CY2025", "99213 in New York 2025",
                                      "99213 for New Patients in 2025", "99213 in Calendar Year 2025"])
def test_months_programs_and_us_places_are_not_unknown_places(backends, question):
    prepared = prepare(question, backends, today=TODAY)
    assert not [w for w in prepared.warnings if "is not a place the CMS locality files know" in w.message]


def test_rual_texas_is_rest_of_texas_as_rural_texas_is(backends):
    typo = prepare("How much does Medicare pay for a 99215 in rual texas in 2024?", backends, today=TODAY)
    right = prepare("How much does Medicare pay for a 99215 in rural Texas in 2024?", backends, today=TODAY)
    assert typo.plan.places == right.plan.places and len(typo.plan.places) == 1
    assert typo.plan.places[0].startswith("TX 99")
    assert _local(typo, "99215", 2024)["TX 99"].payment_nonfac == _local(right, "99215", 2024)["TX 99"].payment_nonfac
    assert "Read “Rual” as “rural”." in [w.message for w in typo.warnings]     # a read-as note, as for places
