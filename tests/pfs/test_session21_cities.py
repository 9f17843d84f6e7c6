"""Session 21: cities of data/places.toml added for Washington (every city or town of about 5,000 people or more) and
the US (about 50,000 or more), read against the real CMS county file.

Expected localities come from the CMS county->locality file's own text (tests/pfs/test_places_cities._cms_row_for),
for the (state, county) the file gives each city; only King County vs the rest of Washington is also written here."""
from __future__ import annotations

import pytest

from carenav_core.pfs.locality import directory
from carenav_core.pfs.places import find_places_in, load_city_aliases
from tests.pfs.test_places_cities import _cms_row_for

SEATTLE, REST_OF_WA = "02402:02", "02402:99"

# every Washington name of one state added in session 21, with its county (King is the Seattle locality)
WASHINGTON = {
    "SPOKANE VALLEY": "SPOKANE", "FEDERAL WAY": "KING", "YAKIMA": "YAKIMA", "KIRKLAND": "KING", "BELLINGHAM": "WHATCOM",
    "KENNEWICK": "BENTON", "PASCO": "FRANKLIN", "MARYSVILLE": "SNOHOMISH", "REDMOND": "KING", "SHORELINE": "KING",
    "RICHLAND": "BENTON", "SAMMAMISH": "KING", "BURIEN": "KING", "LACEY": "THURSTON", "BOTHELL": "KING",
    "EDMONDS": "SNOHOMISH", "PUYALLUP": "PIERCE", "BREMERTON": "KITSAP", "LYNNWOOD": "SNOHOMISH", "ISSAQUAH": "KING",
    "LAKE STEVENS": "SNOHOMISH", "WENATCHEE": "CHELAN", "UNIVERSITY PLACE": "PIERCE", "PULLMAN": "WHITMAN",
    "WALLA WALLA": "WALLA WALLA", "SEATAC": "KING", "SEA TAC": "KING", "MAPLE VALLEY": "KING", "MERCER ISLAND": "KING",
    "BAINBRIDGE ISLAND": "KITSAP", "CAMAS": "CLARK", "OAK HARBOR": "ISLAND", "KENMORE": "KING", "MUKILTEO": "SNOHOMISH",
    "MOUNTLAKE TERRACE": "SNOHOMISH", "TUMWATER": "THURSTON", "MOSES LAKE": "GRANT", "BONNEY LAKE": "PIERCE",
    "BATTLE GROUND": "CLARK", "PORT ANGELES": "CLALLAM", "COVINGTON": "KING", "TUKWILA": "KING", "ELLENSBURG": "KITTITAS",
    "MILL CREEK": "SNOHOMISH", "ANACORTES": "SKAGIT", "SUNNYSIDE": "YAKIMA", "CENTRALIA": "LEWIS", "WASHOUGAL": "CLARK",
    "ABERDEEN": "GRAYS HARBOR", "LYNDEN": "WHATCOM", "PORT ORCHARD": "KITSAP", "WEST RICHLAND": "BENTON",
    "EAST WENATCHEE": "DOUGLAS", "KELSO": "COWLITZ", "SNOQUALMIE": "KING", "FERNDALE": "WHATCOM",
    "LAKE FOREST PARK": "KING", "WOODINVILLE": "KING", "ENUMCLAW": "KING", "CHENEY": "SPOKANE", "NEWCASTLE": "KING",
    "GRANDVIEW": "YAKIMA", "SEDRO WOOLLEY": "SKAGIT", "POULSBO": "KITSAP", "EDGEWOOD": "PIERCE", "FIFE": "PIERCE",
    "SHELTON": "MASON", "SUMNER": "PIERCE", "SNOHOMISH": "SNOHOMISH", "DUPONT": "PIERCE", "PORT TOWNSEND": "JEFFERSON",
    "LIBERTY LAKE": "SPOKANE", "GIG HARBOR": "PIERCE", "COLLEGE PLACE": "WALLA WALLA", "TOPPENISH": "YAKIMA",
    "MILTON": "PIERCE", "YELM": "THURSTON", "HOQUIAM": "GRAYS HARBOR", "OTHELLO": "ADAMS", "EPHRATA": "GRANT",
    "SELAH": "YAKIMA", "DUVALL": "KING", "ORTING": "PIERCE", "CHEHALIS": "LEWIS", "CLARKSTON": "ASOTIN",
    "AIRWAY HEIGHTS": "SPOKANE", "STANWOOD": "SNOHOMISH", "SEQUIM": "CLALLAM", "FIRCREST": "PIERCE", "NORTH BEND": "KING",
    "NORMANDY PARK": "KING", "BRIER": "SNOHOMISH", "RIDGEFIELD": "CLARK", "STEILACOOM": "PIERCE", "UNION GAP": "YAKIMA",
    "PROSSER": "BENTON", "OCEAN SHORES": "GRAYS HARBOR", "CONNELL": "FRANKLIN", "WAPATO": "YAKIMA", "BUCKLEY": "PIERCE",
    "SULTAN": "SNOHOMISH", "BLACK DIAMOND": "KING", "MEDICAL LAKE": "SPOKANE", "OMAK": "OKANOGAN", "COLVILLE": "STEVENS",
    "SOUTH HILL": "PIERCE", "PARKLAND": "PIERCE", "SPANAWAY": "PIERCE", "SILVERDALE": "KITSAP", "HAZEL DELL": "CLARK",
    "SALMON CREEK": "CLARK", "FREDERICKSON": "PIERCE", "WHITE CENTER": "KING", "VASHON": "KING",
    "CAMANO ISLAND": "ISLAND", "MARTHA LAKE": "SNOHOMISH", "COTTAGE LAKE": "KING", "BIRCH BAY": "WHATCOM",
    "ELK PLAIN": "PIERCE", "LEA HILL": "KING", "TULALIP": "SNOHOMISH", "SUDDEN VALLEY": "WHATCOM",
    "TERRACE HEIGHTS": "YAKIMA", "OTIS ORCHARDS": "SPOKANE", "VERADALE": "SPOKANE", "MALTBY": "SNOHOMISH",
    "KLAHANIE": "KING", "KINGSGATE": "KING", "PICNIC POINT": "SNOHOMISH",
}

# cities of one state added in session 21 (the task's list among them), with (state, county)
ELSEWHERE = {
    "BOISE": ("ID", "ADA"), "BIRMINGHAM": ("AL", "JEFFERSON"), "COEUR D'ALENE": ("ID", "KOOTENAI"),
    "TWIN FALLS": ("ID", "TWIN FALLS"), "POCATELLO": ("ID", "BANNOCK"), "NAMPA": ("ID", "CANYON"),
    "MISSOULA": ("MT", "MISSOULA"), "BOZEMAN": ("MT", "GALLATIN"), "GREAT FALLS": ("MT", "CASCADE"),
    "RAPID CITY": ("SD", "PENNINGTON"), "CASPER": ("WY", "NATRONA"), "LARAMIE": ("WY", "ALBANY"),
    "DULUTH": ("MN", "ST LOUIS"), "FLINT": ("MI", "GENESEE"), "KALAMAZOO": ("MI", "KALAMAZOO"), "ERIE": ("PA", "ERIE"),
    "SCRANTON": ("PA", "LACKAWANNA"), "CAMDEN": ("NJ", "CAMDEN"), "ASHEVILLE": ("NC", "BUNCOMBE"),
    "ROANOKE": ("VA", "ROANOKE CITY"), "LYNCHBURG": ("VA", "LYNCHBURG CITY"), "PENSACOLA": ("FL", "ESCAMBIA"),
    "SARASOTA": ("FL", "SARASOTA"), "NAPLES": ("FL", "COLLIER"), "OCALA": ("FL", "MARION"),
    "DAYTONA BEACH": ("FL", "VOLUSIA"), "PALM BEACH": ("FL", "PALM BEACH"), "BOCA RATON": ("FL", "PALM BEACH"),
    "TYLER": ("TX", "SMITH"), "FLAGSTAFF": ("AZ", "COCONINO"), "YUMA": ("AZ", "YUMA"), "PRESCOTT": ("AZ", "YAVAPAI"),
    "OGDEN": ("UT", "WEBER"), "ST. GEORGE": ("UT", "WASHINGTON"), "SAINT GEORGE": ("UT", "WASHINGTON"),
    "CORVALLIS": ("OR", "BENTON"), "MONTEREY": ("CA", "MONTEREY"), "PALM SPRINGS": ("CA", "RIVERSIDE"),
    "HILO": ("HI", "HAWAII"), "KAILUA": ("HI", "HONOLULU"), "FAIRBANKS": ("AK", "FAIRBANKS NORTH STAR"),
    # larger cities of the 2020 Census, across the CMS localities of their states
    "SANTA MONICA": ("CA", "LOS ANGELES"), "COSTA MESA": ("CA", "ORANGE"), "PALO ALTO": ("CA", "SANTA CLARA"),
    "REDWOOD CITY": ("CA", "SAN MATEO"), "SAN RAFAEL": ("CA", "MARIN"),
    "ALPHARETTA": ("GA", "FULTON"), "DUNWOODY": ("GA", "DEKALB"), "EVANSTON": ("IL", "COOK"), "WHEATON": ("IL", "DUPAGE"),
    "CHAMPAIGN": ("IL", "CHAMPAIGN"), "SOMERVILLE": ("MA", "MIDDLESEX"), "NEW BEDFORD": ("MA", "BRISTOL"),
    "GAITHERSBURG": ("MD", "MONTGOMERY"), "FREDERICK": ("MD", "FREDERICK"), "LIVONIA": ("MI", "WAYNE"),
    "ST. LOUIS PARK": ("MN", "HENNEPIN"), "FLORISSANT": ("MO", "ST LOUIS"), "HOBOKEN": ("NJ", "HUDSON"),
    "NEW ROCHELLE": ("NY", "WESTCHESTER"), "HEMPSTEAD": ("NY", "NASSAU"), "BEAVERTON": ("OR", "WASHINGTON"),
    "BENSALEM": ("PA", "BUCKS"), "RESTON": ("VA", "FAIRFAX"), "CHARLOTTESVILLE": ("VA", "CHARLOTTESVILLE CITY"),
    "CARROLLTON": ("TX", "DALLAS"), "BAYTOWN": ("TX", "HARRIS"), "TEXAS CITY": ("TX", "GALVESTON"),
    "THE WOODLANDS": ("TX", "MONTGOMERY"), "METAIRIE": ("LA", "JEFFERSON"), "KENOSHA": ("WI", "KENOSHA"),
    "WEST ALLIS": ("WI", "MILWAUKEE"),
}


def _expected(fee_db, spots, cy=2026):
    """The CMS rows of (state, county)s. From CY2024 the file writes Orange County, CA in Los Angeles's row, misspelt
    ("LOS ANGELES /ORAGNGE CNTY"), which _cms_row_for does not read: that row is read by Los Angeles."""
    areas = directory(fee_db).county_areas(cy)
    return list(dict.fromkeys(_cms_row_for(areas, state, "LOS ANGELES" if (state, county) == ("CA", "ORANGE") and cy >= 2024
                                           else county) for state, county in spots))


@pytest.mark.parametrize("city, county", sorted(WASHINGTON.items()))
def test_a_washington_city_is_priced_in_its_county_locality(fee_db, city, county):
    assert load_city_aliases()[city] == (("WA", county),)
    match = find_places_in(fee_db, f"What does 99213 pay in {city.title()} in 2026?", 2026)
    keys = [p.key for p in match.localities]
    assert keys == [SEATTLE if county == "KING" else REST_OF_WA]
    assert keys == _expected(fee_db, [("WA", county)]) and not match.ambiguous
    assert {c.how for c in match.candidates} == {f"city {city} (data/places.toml)"}


@pytest.mark.parametrize("city, spot", sorted(ELSEWHERE.items()))
def test_a_city_elsewhere_is_priced_in_the_locality_the_cms_file_gives_its_county(fee_db, city, spot):
    assert load_city_aliases()[city] == (spot,)
    match = find_places_in(fee_db, f"What does 99213 pay in {city.title()} in 2026?", 2026)
    assert [p.key for p in match.localities] == _expected(fee_db, [spot]) and not match.ambiguous
    assert match.matched == (city.title(),)


@pytest.mark.parametrize("city, states", [
    ("AUBURN", {"WA", "AL"}), ("LONGVIEW", {"WA", "TX"}), ("MOUNT VERNON", {"WA", "NY"}), ("QUINCY", {"WA", "MA"}),
    ("BURLINGTON", {"WA", "NC", "VT"}), ("MONROE", {"WA", "LA"}), ("BLAINE", {"WA", "MN"}), ("WOODLAND", {"WA", "CA"}),
    ("DES MOINES", {"IA", "WA"}), ("LANCASTER", {"CA", "PA"}), ("MEDFORD", {"OR", "MA"}),
    ("SPRINGFIELD", {"IL", "MA", "MO", "OR", "OH"}), ("MADISON", {"WI", "AL"}),
    ("COLUMBUS", {"OH", "GA", "IN"}), ("SAINT CLOUD", {"MN", "FL"}),
])
def test_a_name_of_several_states_offers_every_state(fee_db, city, states):
    spots = load_city_aliases()[city]
    assert {s for s, _ in spots} == states
    match = find_places_in(fee_db, f"What does 99213 pay in {city.title()} in 2026?", 2026)
    assert sorted(p.key for p in match.localities) == sorted(_expected(fee_db, spots))
    assert match.ambiguous and match.matched == (city.title(),)


@pytest.mark.parametrize("text, keys", [
    ("99213 in Auburn, WA in 2026", [SEATTLE]),                  # King County
    ("99213 in Longview, Washington in 2026", [REST_OF_WA]),     # Cowlitz
    ("99213 in Des Moines WA in 2026", [SEATTLE]),
    ("99213 in Spokane Valley", [REST_OF_WA]),                   # the whole name, not Spokane inside it
    ("99213 in Federal Way vs Yakima", [SEATTLE, REST_OF_WA]),
])
def test_a_washington_reading_with_its_state_or_beside_another_place(fee_db, text, keys):
    match = find_places_in(fee_db, text, 2026)
    assert [p.key for p in match.localities] == keys


@pytest.mark.parametrize("text, city", [
    ("99214 in Saint Louis Park", "SAINT LOUIS PARK"),          # not St. Louis, MO
    ("99214 in Port Charlotte", "PORT CHARLOTTE"),              # not Charlotte, NC
    ("99214 in Miami Beach", "MIAMI BEACH"),
    ("99214 in Largo", "LARGO"),                                # no longer read as a misspelt Fargo
    ("99214 in Tustin", "TUSTIN"),                              # nor Austin
    ("99214 in Arlington Heights", "ARLINGTON HEIGHTS"),        # not Arlington, TX / VA
])
def test_a_longer_name_or_a_near_miss_is_the_city_itself(fee_db, text, city):
    match = find_places_in(fee_db, text, 2026)
    assert {c.how for c in match.candidates} == {f"city {city} (data/places.toml)"} and match.respelled == ()
    assert [p.key for p in match.localities] == _expected(fee_db, load_city_aliases()[city])


@pytest.mark.parametrize("text", [
    "Can I bend the rules on 99214 time thresholds in 2026?",
    "What does 99213 pay for a knee bend evaluation?",
    "Is acupuncture along a meridian paid under 97810?",
    "Does the sunrise of a new code change 99490 pay?",
    "What is the mission of the 2026 rule for 99213?",
    "Do plantation workers' clinics bill 99213 differently?",
    "What does 99213 pay at the apex of the fee schedule?",
    "Dr. Taylor and Dr. Parker bill 99214: what does it pay in 2026?",
    "Moore's practice billed 99213 for Mrs. Davis in 2025",
])
def test_ordinary_words_are_no_places(fee_db, text):
    match = find_places_in(fee_db, text, 2026)
    assert not match.found and match.respelled == ()


def test_left_out_names_stay_out():
    aliases = load_city_aliases()
    assert [n for n in ("BEND", "MERIDIAN", "SUNRISE", "PLANTATION", "HOMESTEAD", "MISSION", "TEMPLE", "APEX", "BRICK",
                        "UNION", "PACIFIC", "PARADISE", "ANDERSON", "GEORGETOWN", "WAYNE", "PITTSBURG",
                        # a person's name (the matcher ignores capitals) or a county's more often than a city's
                        "ALLEN", "TAYLOR", "PARKER", "DAVIS", "MOORE", "FRANKLIN", "HAMILTON", "LAWRENCE", "TROY",
                        "VICTORIA", "SUFFOLK") if n in aliases] == []
