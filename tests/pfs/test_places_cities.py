"""The cities of data/places.toml against the loaded CMS county->locality (LOCCO) file and GPCI localities (real data).

Each city is (state, principal county); the county must be one the CMS file lists by name in that state, or the
state's file must have an all-counties / rest-of-state row that takes it (and then its name must not be a near
miss of a county the file does list, which would put the city in rest of state by a typo).
"""
import tomllib

import pytest

from carenav_core.pfs.gpci import STATE_CODES
from carenav_core.pfs.locality import directory
from carenav_core.pfs.places import PLACES_FILE, _distance, _index, find_places_in, load_city_aliases, priced_places

# names left out of data/places.toml on purpose: ordinary words, or read inside normal questions
EXCLUDED = ["READING", "MOBILE", "ORANGE", "INDEPENDENCE", "SURPRISE", "NORMAL", "ENTERPRISE", "SPRING", "BILLINGS",
            "CORONA", "BUFFALO", "MESA", "MESQUITE", "BOULDER", "CENTENNIAL", "MERIDIAN", "SPARKS", "VISTA", "HIGH POINT",
            "ELIZABETH", "NORMAN", "DAVENPORT", "HOLLYWOOD"]
# entries older than this file that are, on purpose, also a locality name (the same span gives both: OR and ME)
SHARED_WITH_A_LOCALITY = {"PORTLAND", "SAN FRANCISCO", "OAKLAND", "BERKELEY", "SAN JOSE", "SUNNYVALE", "SANTA CLARA"}


def _entries():
    return [(city, state, county) for city, spots in load_city_aliases().items() for state, county in spots]


def _county_cys(con):
    book = directory(con)
    return book, sorted(book.gpci)


def test_the_file_keeps_its_source_and_names_this_check():
    text = PLACES_FILE.read_text(encoding="utf-8")
    reference = tomllib.loads(text)["reference"]
    assert "Census Bureau" in reference["title"] and "census.gov" in reference["href"]
    assert "US Census Bureau gazetteer" in text and "tests/pfs/test_places_cities.py" in text


def county_problems(fee_db, entries, near_checked=lambda city: True) -> list[tuple]:
    """(cy, city, state, county, why) of each (city, state, county) of `entries` that no CY's county file takes: not
    listed by name in that state and no rest-of-state row, or (for a city `near_checked`) one letter from a county the
    state lists, which would put the city in rest of state by a typo."""
    book, cys = _county_cys(fee_db)
    problems = []
    for cy in cys:
        index = _index(tuple(book.localities(cy)), tuple(book.county_areas(cy)))
        listed_in = {}
        for county, rows in index.counties.items():
            for state, _ in rows:
                listed_in.setdefault(state, set()).add(county)
        for city, state, county in entries:
            if county in listed_in.get(state, ()):
                continue
            if state not in index.rest_of_state:
                problems.append((cy, city, state, county, "not listed and no rest-of-state row"))
            elif near_checked(city) and (near := [c for c in listed_in.get(state, ()) if _distance(county, c, 1) <= 1]):
                problems.append((cy, city, state, county, f"not listed; near {near}"))
    return problems


def test_every_state_and_county_is_in_the_cms_county_file(fee_db):
    """Every CY's county file (CY2026 is served by the latest earlier one): listed by name in that state, or the
    state has a rest-of-state / statewide row and the name is not one letter from a county it lists."""
    assert county_problems(fee_db, _entries()) == []


def test_every_city_is_found_by_itself_and_only_as_a_city(fee_db):
    """A city's name alone gives a place, through data/places.toml; no city repeats a locality name (or part of
    one) or a state, which the matcher finds already."""
    book = directory(fee_db)
    index = _index(tuple(book.localities(2026)), tuple(book.county_areas(2026)))
    for city in load_city_aliases():
        assert city not in STATE_CODES, city
        if city in SHARED_WITH_A_LOCALITY:
            continue
        assert city not in index.names, city
        match = find_places_in(fee_db, f"99213 in {city.title()} in 2026", 2026)
        assert match.found, city
        assert {c.how for c in match.candidates} == {f"city {city} (data/places.toml)"}, city


def test_a_county_named_like_a_city_stays_the_county(fee_db):
    """"Arlington County", "Montgomery County, Maryland", "Kent County, MI": the county, not the city inside it."""
    book = directory(fee_db)
    index = _index(tuple(book.localities(2026)), tuple(book.county_areas(2026)))
    shared = [city for city in load_city_aliases() if city in index.counties]
    assert {"ARLINGTON", "MONTGOMERY", "RICHMOND", "JACKSON", "MADISON", "WARREN"} <= set(shared)
    for city in shared:
        match = find_places_in(fee_db, f"99213 in {city.title()} County", 2026)
        assert match.found and not any(c.how.startswith("city") for c in match.candidates), city
    assert [p.key for p in find_places_in(fee_db, "99213 in Kent County, MI", 2026).localities] == ["08202:99"]
    assert [p.key for p in find_places_in(fee_db, "Arlington County, Virginia", 2026).localities] == ["12202:01"]


def _cms_row_for(areas, state, county):
    """The CMS LOCCO row of (state, county), read from the file's own text (not the matcher's parsing): a row of
    that state naming the county, else the state's "ALL ..." row."""
    name = next(n for n, c in STATE_CODES.items() if c == state and "/" not in n)
    for a in areas:
        if a.counties.upper().startswith("ALL "):
            continue
        for group in a.counties.upper().split(";"):          # "...; ALEXANDRIA CITY, ARLINGTON IN VIRGINIA; ..."
            text = " ".join(group.replace(".", " ").replace(",", " ").replace("/", " ").split())
            group_state = text.rsplit(" IN ", 1)[1] if " IN " in text else a.state.upper().split("/")[0]
            if group_state == name and f" {county} " in f" {text} ":
                return f"{a.mac}:{a.locality}"
    return next(f"{a.mac}:{a.locality}" for a in areas
                if a.state.upper().split("/")[0] == name and a.counties.upper().startswith("ALL "))


@pytest.mark.parametrize("text, city, keys", [
    ("What does 99213 pay in Tucson in 2026?", "TUCSON", ["03102:00"]),        # Arizona: one statewide locality
    ("99214 in Fontana", "FONTANA", ["01112:62"]),                             # San Bernardino
    ("99214 in Oceanside", "OCEANSIDE", ["01182:72"]),                         # San Diego
    ("99214 in Simi Valley", "SIMI VALLEY", ["01182:17"]),                     # Ventura
    ("99214 in Elk Grove", "ELK GROVE", ["01112:63"]),                         # Sacramento
    ("99214 in Garland", "GARLAND", ["04412:11"]),                             # Dallas
    ("99214 in Pearland", "PEARLAND", ["04412:09"]),                           # Brazoria
    ("99214 in League City", "LEAGUE CITY", ["04412:15"]),                     # Galveston
    ("99214 in Plano", "PLANO", ["04412:99"]),                                 # Collin: rest of Texas
    ("99214 in Corpus Christi", "CORPUS CHRISTI", ["04412:99"]),
    ("99214 in Hialeah", "HIALEAH", ["09102:04"]),                             # DADE in the CMS file
    ("99214 in Port St. Lucie", "PORT ST. LUCIE", ["09102:03"]),               # ST. LUCIE
    ("99214 in Cape Coral", "CAPE CORAL", ["09102:03"]),                       # Lee
    ("99214 in Jacksonville", "JACKSONVILLE", ["09102:99"]),                   # Duval: rest of Florida
    ("99214 in Yonkers", "YONKERS", ["13202:02"]),                             # Westchester
    ("99214 in Syracuse", "SYRACUSE", ["13282:99"]),                           # Onondaga: rest of New York
    ("99214 in Allentown", "ALLENTOWN", ["12502:99"]),                         # Lehigh: rest of Pennsylvania
    ("99214 in Harrisburg", "HARRISBURG", ["12502:99"]),
    ("99214 in Naperville", "NAPERVILLE", ["06102:15"]),                       # DUPAGE: suburban Chicago
    ("99214 in Ann Arbor", "ANN ARBOR", ["08202:01"]),                         # Washtenaw: Detroit
    ("99214 in Cambridge", "CAMBRIDGE", ["14212:01"]),                         # Middlesex: metropolitan Boston
    ("99214 in Annapolis", "ANNAPOLIS", ["12302:01"]),                         # Anne Arundel
    ("99214 in Newark", "NEWARK", ["12402:01"]),                               # Essex: northern NJ
    ("99214 in Sandy Springs", "SANDY SPRINGS", ["10212:01"]),                 # Fulton: Atlanta
    ("99214 in Hillsboro", "HILLSBORO", ["02302:01"]),                         # Washington county, Oregon
    ("99214 in Bellevue", "BELLEVUE", ["02402:02"]),                           # King
    ("99214 in Alexandria", "ALEXANDRIA", ["12202:01"]),                       # ALEXANDRIA CITY, in the DC row
    ("99214 in Richmond", "RICHMOND", ["11302:00"]),                           # RICHMOND CITY: Virginia
])
def test_sample_cities_give_the_locality_of_the_cms_file(fee_db, text, city, keys):
    match = find_places_in(fee_db, text, 2026)
    assert [p.key for p in match.localities] == keys and not match.ambiguous
    areas = directory(fee_db).county_areas(2026)
    assert [_cms_row_for(areas, state, county) for state, county in load_city_aliases()[city]] == keys


@pytest.mark.parametrize("text, keys, matched", [
    ("99214 in Arlington", ["04412:28", "12202:01", "02402:99"], ("Arlington",)),   # TX, VA and WA: ambiguous
    ("99214 in Arlington, Texas", ["04412:28"], ("Arlington",)),
    ("99214 in Rochester, MN", ["06202:00"], ("Rochester",)),
    ("99214 in Virginia Beach", ["11302:00"], ("Virginia Beach",)),            # not every Virginia locality
    ("99214 in Oklahoma City", ["04312:00"], ("Oklahoma City",)),
    ("99214 in Winston-Salem", ["11502:00"], ("Winston-Salem",)),             # not Salem, Oregon
    ("99214 in North Charleston", ["11202:01"], ("North Charleston",)),
    ("99214 in St. Paul vs Saint Paul", ["06202:00"], ("St. Paul", "Saint Paul")),
])
def test_cities_in_several_states_and_names_inside_names(fee_db, text, keys, matched):
    match = find_places_in(fee_db, text, 2026)
    assert [p.key for p in match.localities] == keys
    assert match.matched == matched and match.ambiguous is (len(keys) > 1)


def test_tucson_prices_in_arizona(fee_db):
    match, result = priced_places(fee_db, "What does 99213 pay in Tucson in 2026?", ["99213"], cys=[2026])
    assert [p.key for p in match.localities] == ["03102:00"]
    assert {r.label for r in result.rows} == {"[PFS CY2026 RVU26C · GPCI2026 AZ 00]"}


def test_ordinary_words_are_not_cities():
    aliases = load_city_aliases()
    assert [name for name in EXCLUDED if name in aliases] == []


@pytest.mark.parametrize("text", [
    "What does Medicare pay for reading an EKG (93010) in 2026?",
    "Are mobile clinics paid the non-facility rate for 99213?",
    "surprise billing rules for 99284",
    "Is 99214 normal for a follow-up visit?",
    "Independence at Home payments for 99349",
    "enterprise billings for 99213 this spring",
    "corona virus test 87635 payment",
    "excision of a buffalo hump, what does 21930 pay?",
    "MESA calcium score percentile with 75571",
    "the high point of the 2026 rule for 99490",
])
def test_questions_with_those_words_name_no_place(fee_db, text):
    match = find_places_in(fee_db, text, 2026)
    assert not match.found and match.respelled == ()


def test_for_orange_county_is_the_county_not_a_city(fee_db):
    match = find_places_in(fee_db, "What does 99213 pay for Orange County, NY?", 2026)
    assert [p.key for p in match.localities] == ["13202:03"]
    assert not any(c.how.startswith("city") for c in match.candidates)
    match = find_places_in(fee_db, "99213 for orange county, CA", 2026)
    assert not any(c.how.startswith("city") for c in match.candidates)


@pytest.mark.parametrize("text, cy, with_county", [
    ("99213 in Orange County, CA", 2025, "LOS ANGELES"),        # "LOS ANGELES /ORAGNGE CNTY" (misspelt by CMS)
    ("99213 in Irvine", 2025, "LOS ANGELES"), ("99213 in Torrance", 2024, "LOS ANGELES"),
    ("99213 in Alameda County, CA", 2025, "SAN FRANCISCO"), ("99213 in Fremont", 2024, "SAN FRANCISCO"),
    ("99213 in San Mateo County, California", 2024, "SAN FRANCISCO"),
    ("99213 in Orange County, CA", 2022, "ORANGE"),             # its own row (26) before CY2024
])
def test_california_counties_the_file_joins_with_a_slash_are_read(fee_db, text, cy, with_county):
    """From CY2024 the CMS county file writes California's 18 and 05 as "LOS ANGELES /ORAGNGE CNTY" and "SAN
    FRANCISCO/ALAMEDA/CONTRA COSTA/SAN MATEO": each of those counties (and its cities) is that row's locality, the
    one of the county it is written with, never rest of California."""
    match = find_places_in(fee_db, text, cy)
    expected = _cms_row_for(directory(fee_db).county_areas(cy), "CA", with_county)
    assert [p.key for p in match.localities] == [expected] and not expected.endswith(":75")


@pytest.mark.parametrize("text, cy, keys", [
    ("99214 in Fairfax, Virginia", 2026, ["12202:01"]),       # a county without "County", before its state
    ("99214 in Montgomery, MD", 2026, ["12202:01"]),
    ("99213 in Arlington, Virginia", 2026, ["12202:01"]),     # the DC locality serves Arlington, VA: not TX 28, not VA 00
    ("99213 in Alexandria, Virginia", 2026, ["12202:01"]),
    ("99213 in Bethesda, Maryland", 2026, ["12202:01"]),
    ("99213 in San Francisco", 2026, ["01112:05"]),            # not also CA 52 (Marin), whose name says San Francisco
    ("99213 in San Jose", 2026, ["01112:09"]),                 # not also CA 65 (San Benito)
    ("99213 in Oakland", 2023, ["01112:07"]),                  # Alameda's own locality before CY2024
])
def test_a_state_after_a_place_narrows_it_and_a_city_narrows_a_shared_locality_name(fee_db, text, cy, keys):
    match = find_places_in(fee_db, text, cy)
    assert [p.key for p in match.localities] == keys and match.unplaced == ()


def test_a_name_no_file_knows_before_a_state_is_said(fee_db):
    match = find_places_in(fee_db, "99213 in Zorbaville, Maryland in 2026", 2026)
    assert match.unplaced == (("Zorbaville", "Maryland"),)
    assert {p.state for p in match.localities} == {"MD"}
