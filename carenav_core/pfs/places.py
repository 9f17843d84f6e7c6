"""Where a question names a place: which Medicare payment localities it means.

`find_places(text, localities, counties)` is pure: it reads only its arguments (a CY's GPCI localities
and county crosswalk rows, see pfs/locality.py `directory`) and data/places.toml (cities that are not in
a locality name). It recognises, in this order of specificity:
  * an explicit locality: "MAC 02102 locality 01", "02402:02";
  * a county: "King County, WA", "Cook County" (a county the crosswalk does not list by name falls in
    its state's rest-of-state locality, and says so);
  * a locality name or a part of one: "Seattle", "Manhattan", "rest of California", "Oakland";
  * a city of data/places.toml: "Brooklyn" (Kings county), "Portland" (Oregon and Maine);
  * a state: "Texas", or ", WA" after a place.
A match inside a longer one is dropped ("California" inside "rest of California", "St. Louis" inside
"East St. Louis"), and a state named alongside a more specific place of that state only confirms it.
Several candidate localities make the match ambiguous: every candidate is returned and the caller says so.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from carenav_core.pfs.gpci import STATE_CODES, state_code
from carenav_core.pfs.locality import CountyArea, Locality
from carenav_core.settings import PROJECT_ROOT
from carenav_core.words import is_known_word

PLACES_FILE = PROJECT_ROOT / "data" / "places.toml"
_EXPLICIT = (re.compile(r"\bMAC\s*#?\s*(\d{4,5})\W+(?:LOCALITY|LOC)\s*#?\s*(\d{1,2})\b"),
             re.compile(r"\b(\d{5})\s*:\s*(\d{2})\b"))
_STATE_SUFFIX = re.compile(r",\s*([A-Z]{2})\b")           # on the original text: "King County, WA"
_POSTAL_AFTER_COUNTY = re.compile(r"\s+([A-Z]{2})\b(?![\w'’-])")      # "Pierce County WA" (no comma)
_COUNTY = re.compile(r"((?:[A-Z][A-Z']*\s+){1,3})(?:COUNTY|CNTY|PARISH)\b")
_POSTAL_CODES = frozenset(STATE_CODES.values())
_SKIP_PIECES = {"REST", "NORTHERN", "SOUTHERN", "SUBURBS", "CNTY", "CNTYS"}


class _CityPlace(BaseModel):
    model_config = ConfigDict(extra="forbid")
    state: str = Field(pattern=r"^[A-Z]{2}$")
    county: str


class _PlacesFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reference: dict[str, str]
    city: dict[str, list[_CityPlace]]
    # a locality name that is also a city of another state ("Kansas City": MO 02 and Kansas City, KS)
    namesake: dict[str, list[_CityPlace]] = Field(default_factory=dict)
    # a city whose name is an ordinary word or a person's name ("Bend", "Reading", "Allen"), or one the [city] table
    # gives to another state ("Albany": NY): read only with its state right after it ("Bend, OR", "Reading PA",
    # "Albany, Oregon")
    city_with_state: dict[str, list[_CityPlace]] = Field(default_factory=dict)


def _places_file(path: Path) -> _PlacesFile:
    return _PlacesFile.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))


@lru_cache(maxsize=2)
def load_city_aliases(path: Path = PLACES_FILE) -> dict[str, tuple[tuple[str, str], ...]]:
    """CITY -> ((state, county), ...) from data/places.toml."""
    parsed = _places_file(path)
    return {city.upper(): tuple((p.state, p.county.upper()) for p in places) for city, places in parsed.city.items()}


@lru_cache(maxsize=2)
def load_namesakes(path: Path = PLACES_FILE) -> dict[str, tuple[tuple[str, str], ...]]:
    """LOCALITY NAME -> ((state, county), ...): the [namesake] table of data/places.toml, cities of another state
    named like a CMS locality ("KANSAS CITY": Kansas City, KS, beside MO 02 METROPOLITAN KANSAS CITY)."""
    parsed = _places_file(path)
    return {name.upper(): tuple((p.state, p.county.upper()) for p in places) for name, places in parsed.namesake.items()}


class _CensusFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reference: dict[str, str]
    city_with_state: dict[str, list[_CityPlace]]
    county: dict[str, list[str]]


CENSUS_FILE = PLACES_FILE.with_name("census_places.toml")


@lru_cache(maxsize=2)
def _census_file(path: Path = CENSUS_FILE) -> _CensusFile:
    return _CensusFile.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))


@lru_cache(maxsize=2)
def load_cities_with_state(path: Path = PLACES_FILE, census: Path = CENSUS_FILE
                           ) -> dict[str, tuple[tuple[str, str], ...]]:
    """CITY -> ((state, county), ...): cities read only when their state follows them: the [city_with_state] table
    of data/places.toml (words and people's names, chosen by hand) and of data/census_places.toml (every US place of
    5,000 people or more, 2020 Census), merged."""
    merged: dict[str, tuple[tuple[str, str], ...]] = {}
    for table in (_places_file(path).city_with_state, _census_file(census).city_with_state):
        for city, places in table.items():
            spots = tuple((p.state, p.county.upper()) for p in places)
            key = " ".join(city.upper().replace(".", " ").split())     # "ST. AUGUSTINE" as the matcher reads it
            merged[key] = tuple(dict.fromkeys(merged.get(key, ()) + spots))
    return merged


@lru_cache(maxsize=2)
def load_county_states(census: Path = CENSUS_FILE) -> dict[str, tuple[str, ...]]:
    """COUNTY -> the states with a county of that name (data/census_places.toml [county], 2020 Census)."""
    return {name.upper(): tuple(states) for name, states in _census_file(census).county.items()}


@lru_cache(maxsize=2)
def _longest_city_with_state() -> int:
    return max(len(name.split()) for name in load_cities_with_state())


@dataclass(frozen=True, kw_only=True)
class PlaceCandidate:
    """One locality a question may mean, with the words that matched and how."""
    place: Locality
    matched: str          # the words of the question, as written
    how: str              # "locality name", "county KING (CY2025 county file)", "state WA", ...


@dataclass(frozen=True, kw_only=True)
class PlaceMatch:
    """The localities a text names. `ambiguous`: more than one candidate locality. `respelled`: (as written, read
    as) for each misspelt place name read as the one name it is one or two letters from ("Seatle" -> "SEATTLE");
    `unsure`: (as written, the names it may be) where a misspelling is as close to several names, none read."""
    candidates: tuple[PlaceCandidate, ...]
    ambiguous: bool
    matched: tuple[str, ...]      # the matched words, in order of appearance
    respelled: tuple[tuple[str, str], ...] = ()
    unsure: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # "Bethesda, Maryland": (the words before the state, the state) where no place was read from those words, so the
    # state's localities are all shown
    unplaced: tuple[tuple[str, str], ...] = ()

    @property
    def localities(self) -> tuple[Locality, ...]:
        seen, out = set(), []
        for c in self.candidates:
            if c.place.key not in seen:
                seen.add(c.place.key)
                out.append(c.place)
        return tuple(out)

    @property
    def found(self) -> bool:
        return bool(self.candidates)


@dataclass(frozen=True, kw_only=True)
class _Hit:
    start: int
    end: int
    places: tuple[Locality, ...]
    how: str
    rank: int                     # 0 explicit, 1 county, 2 locality name, 3 city, 4 state


def _normal(text: str) -> str:
    """Upper case, punctuation other than , ' : # as spaces (offsets kept: one char for one char)."""
    return re.sub(r"[^A-Z0-9,':#\s]", " ", _upper_same_length(text.replace("\u2019", "'").replace("\u2018", "'")))


def _upper_same_length(text: str) -> str:
    return "".join(c.upper() if len(c.upper()) == 1 else " " for c in text)


def _phrase(phrase: str) -> re.Pattern:
    body = r"[\s,]+".join(re.escape(w.strip(".")) for w in phrase.replace(".", " ").split())
    return re.compile(rf"(?<![A-Z0-9]){body}(?![A-Z0-9])")


@lru_cache(maxsize=4096)
def _compiled(phrase: str) -> re.Pattern:
    return _phrase(phrase)


def _name_pieces(place: Locality) -> set[str]:
    """Phrases of a locality name a question may use: the name, and its parts split at - / ( )."""
    name = place.name.replace("*", "").replace('"', "").strip().upper()
    outer = re.sub(r"\(.*?\)", " ", name).strip()
    pieces = {outer} | {p.strip() for p in re.split(r"[-/,()]", name)}
    pieces |= {p.removeprefix("METROPOLITAN ").strip() for p in pieces}
    return {p for p in pieces if len(p) >= 4 and p not in STATE_CODES and "+" not in p
            and not (set(p.replace(".", "").split()) & _SKIP_PIECES and not p.startswith("REST OF "))}


def _county_items(area: CountyArea) -> list[tuple[str, str]]:
    """(county, state code) of a crosswalk row. A ';'-separated group ending "IN VIRGINIA" belongs to that state,
    every county of it: "ALEXANDRIA CITY, ARLINGTON, FAIRFAX IN VIRGINIA; MONTGOMERY AND PRINCE GEORGE'S IN
    MARYLAND" (the DC locality) puts Arlington in VA and Montgomery in MD, not in DC.

    >>> area = CountyArea(cy=2025, mac="12202", locality="01", state="DISTRICT OF COLUMBIA", fee_schedule_area="DC",
    ...     counties="DISTRICT OF COLUMBIA; ARLINGTON, FAIRFAX IN VIRGINIA; MONTGOMERY AND PRINCE GEORGE'S IN MARYLAND",
    ...     source_file="")
    >>> _county_items(area)
    [('DISTRICT OF COLUMBIA', 'DC'), ('ARLINGTON', 'VA'), ('FAIRFAX', 'VA'), ('MONTGOMERY', 'MD'), ("PRINCE GEORGE'S", 'MD')]
    >>> _county_items(CountyArea(cy=2025, mac="01182", locality="18", state="CALIFORNIA", fee_schedule_area="",
    ...     counties="LOS ANGELES /ORAGNGE CNTY", source_file=""))
    [('LOS ANGELES', 'CA'), ('ORANGE', 'CA')]
    """
    items = []
    for group in area.counties.upper().split(";"):
        group = " ".join(group.replace("*", "").split())
        state = state_code(area.state)
        inside = re.match(r"^(.*?) IN ([A-Z ]+)$", group)
        if inside and inside.group(2) in STATE_CODES:
            group, state = inside.group(1), STATE_CODES[inside.group(2)]
        # "LOS ANGELES /ORAGNGE CNTY", "SAN FRANCISCO/ALAMEDA/CONTRA COSTA/SAN MATEO" (California from CY2024)
        for part in re.split(r",|/|\bAND\b", group):
            part = part.strip().removesuffix(" COUNTY").removesuffix(" CNTY").strip()
            if part:
                items.append((_MISSPELT_COUNTIES.get(part, part), state))
    return items


# County names the CMS county-to-locality files misspell, as printed -> as spelt (CY2024 and CY2025 locality 18 of
# California: "LOS ANGELES /ORAGNGE CNTY")
_MISSPELT_COUNTIES = {"ORAGNGE": "ORANGE"}


@dataclass(frozen=True, kw_only=True)
class _Index:
    by_key: dict[str, Locality]
    by_state: dict[str, tuple[Locality, ...]]
    counties: dict[str, list[tuple[str, str]]]      # COUNTY -> [(state, MAC:LOC)]
    rest_of_state: dict[str, list[str]]             # state -> MAC:LOC of "ALL (OTHER) COUNTIES"
    names: dict[str, list[Locality]]                # phrase -> localities
    keys_in_state: dict[str, frozenset[str]] = field(default_factory=dict)   # state -> MAC:LOC serving its counties


@lru_cache(maxsize=8)
def _index(localities: tuple[Locality, ...], counties: tuple[CountyArea, ...]) -> _Index:
    by_key = {p.key: p for p in localities}
    by_state: dict[str, list[Locality]] = {}
    names: dict[str, list[Locality]] = {}
    for p in localities:
        by_state.setdefault(p.state, []).append(p)
        for piece in _name_pieces(p):
            names.setdefault(piece, []).append(p)
    county_map: dict[str, list[tuple[str, str]]] = {}
    rest: dict[str, list[str]] = {}
    for area in counties:
        key = f"{area.mac}:{area.locality}"
        if area.counties.upper().strip().startswith("ALL "):
            rest.setdefault(state_code(area.state), []).append(key)
            continue
        for county, state in _county_items(area):       # keyed as a question's words are read ("ST. LOUIS": "ST LOUIS")
            county_map.setdefault(" ".join(_normal(county).split()), []).append((state, key))
    in_state: dict[str, set[str]] = {}
    for rows in county_map.values():
        for state, key in rows:
            in_state.setdefault(state, set()).add(key)
    return _Index(by_key=by_key, by_state={s: tuple(v) for s, v in by_state.items()}, counties=county_map,
                  rest_of_state=rest, names=names, keys_in_state={s: frozenset(k) for s, k in in_state.items()})


def _explicit_hits(text: str, index: _Index) -> list[_Hit]:
    hits = []
    for pattern in _EXPLICIT:
        for m in pattern.finditer(text):
            place = index.by_key.get(f"{m.group(1).zfill(5)}:{m.group(2).zfill(2)}")
            if place:
                hits.append(_Hit(start=m.start(), end=m.end(), places=(place,), how="MAC and locality number", rank=0))
    return hits


def _county_places(county: str, state: str | None, index: _Index) -> tuple[tuple[Locality, ...], str]:
    """Localities of a county (in `state` when given); a county not listed falls in rest of state."""
    listed = [key for s, key in index.counties.get(county, []) if state in (None, s)]
    if listed:
        return tuple(index.by_key[k] for k in dict.fromkeys(listed) if k in index.by_key), f"county {county}"
    if state and state in index.rest_of_state:
        keys = index.rest_of_state[state]
        return (tuple(index.by_key[k] for k in keys if k in index.by_key),
                f"county {county} is not listed by name in the {state} crosswalk: rest of state")
    return (), ""


def _state_after(text: str, end: int, original: str) -> str | None:
    """A state named right after a place: ", WA" (capitals in the original) or ", Washington"."""
    m = _STATE_SUFFIX.match(original, end)
    if m and m.group(1) in set(STATE_CODES.values()):
        return m.group(1)
    for name, code in STATE_CODES.items():
        if re.match(rf",?\s*{re.escape(name)}(?![A-Z])", text[end:]):
            return code
    return None


def _state_or_code_after(text: str, end: int, original: str) -> str | None:
    """A state named right after a place (`_state_after`), or its postal code in capitals without a comma ("Pierce
    County WA", "Bend OR")."""
    state = _state_after(text, end, original)
    if state is None and (code := _POSTAL_AFTER_COUNTY.match(original, end)) and code.group(1) in _POSTAL_CODES:
        state = code.group(1)
    return state


def _county_hits(text: str, original: str, index: _Index) -> list[_Hit]:
    """Counties named before "County": the longest run of the words before it that the crosswalk lists ("Miami-Dade
    County" is listed as DADE, "pay in Prince George's County" as PRINCE GEORGE'S); only when no run is listed does
    the county fall in its state's rest-of-state locality."""
    hits = []
    for m in _COUNTY.finditer(text):
        words = m.group(1).split()
        state = _state_or_code_after(text, m.end(), original)      # "Pierce County, WA", "Pierce County WA"
        runs = [" ".join(words[-size:]).rstrip(".") for size in range(len(words), 0, -1)]
        listed = next((run for run in runs if any(state in (None, s) for s, _ in index.counties.get(run, []))), None)
        if listed is None and state is None:
            # "Whatcom County" with no state: a county name only one state has (2020 Census) is that state's
            county_states = load_county_states()
            known = next((run for run in runs if run in county_states), None)
            if known is not None and len(county_states[known]) == 1:
                runs, state = [known], county_states[known][0]
        county = listed or runs[-1]
        places, how = _county_places(county, state, index)
        if places:
            at = m.group(1).rfind(county)           # "Walla Walla County": the whole name, not its last word
            start = m.start(1) + (at if at >= 0 else m.group(1).rfind(county.split()[0] if listed else words[-1]))
            while start > 1 and original[start - 1] == "-" and text[start - 2].isalpha():   # "Miami-Dade": one name
                start -= 2
                while start > 0 and text[start - 1].isalpha():
                    start -= 1
            hits.append(_Hit(start=start, end=m.end(), places=places, how=how, rank=1))
    return hits


_BEFORE_COMMA = re.compile(r"((?:[A-Z][A-Z']*\s+){0,2}[A-Z][A-Z']*)\s*,")


def _county_before_state_hits(text: str, original: str, index: _Index) -> list[_Hit]:
    """"Fairfax, Virginia", "Montgomery, MD": a county the crosswalk lists in the state named right after it, written
    without "County" (the longest run of up to three words before the comma); a state alone never makes one."""
    hits = []
    for m in _BEFORE_COMMA.finditer(text):
        state = _state_after(text, m.end(1), original)
        if state is None:
            continue
        words = m.group(1).split()
        for size in range(len(words), 0, -1):
            run = " ".join(words[-size:])
            keys = [key for st, key in index.counties.get(run, []) if st == state]
            if keys and run not in STATE_CODES:
                start = m.start(1) + m.group(1).rfind(words[-size])
                hits.append(_Hit(start=start, end=m.end(1), places=tuple(index.by_key[k] for k in dict.fromkeys(keys)
                                                                          if k in index.by_key),
                                 how=f"county {run} ({state})", rank=1))
                break
    return [h for h in hits if h.places]


def _phrase_hits(text: str, index: _Index, aliases) -> list[_Hit]:
    hits = []
    for phrase, places in index.names.items():
        for m in _compiled(phrase).finditer(text):
            hits.append(_Hit(start=m.start(), end=m.end(), places=tuple(places), how=f"locality name {phrase}", rank=2))
    for city, spots in aliases.items():
        for m in _compiled(city).finditer(text):
            found = [p for state, county in spots for p in _county_places(county, state, index)[0]]
            if found:
                hits.append(_Hit(start=m.start(), end=m.end(), places=tuple(dict.fromkeys(found)),
                                 how=f"city {city} (data/places.toml)", rank=3))
    for name, code in STATE_CODES.items():
        if "/" in name or code not in index.by_state:
            continue
        for m in _compiled(name).finditer(text):
            hits.append(_Hit(start=m.start(), end=m.end(), places=index.by_state[code], how=f"state {code}", rank=4))
    return hits


# A state's postal code written after a place without a comma ("Birmingham AL", "Boise ID 2026"): capitals in the
# original, after a capitalised word, followed by no letter
_STATE_CODE_AFTER = re.compile(r"\b[A-Z][a-z]+(?:\s+|,\s*)([A-Z]{2})\b(?![a-z])")


_WORDS_IN_CAPITALS = {"OR", "IN", "ME", "OK", "HI", "OH"}     # "What OR which": words, not states, without a comma


def _word_code_after(original: str, end: int) -> str | None:
    """"Portland ME", "Columbus OH", "Lafayette IN": a postal code that is also a word (OR, IN, ME, ...), in capitals
    right after a place and followed by no letter; the caller takes it only when the place has a locality there.

    >>> _word_code_after("99213 in Portland ME 2025", 17), _word_code_after("Portland or Seattle", 8)
    ('ME', None)
    """
    m = re.compile(r"\s+([A-Z]{2})(?![A-Za-z])").match(original, end)
    return m.group(1) if m and m.group(1) in _WORDS_IN_CAPITALS else None


def _state_code_hits(original: str, index: _Index) -> list[_Hit]:
    """"Birmingham AL": the state's localities (a state of one locality is that locality); after a place the file
    knows ("Brooklyn NY", "Seattle WA") the code only confirms that place's state, as ", NY" does."""
    codes = set(STATE_CODES.values()) - _WORDS_IN_CAPITALS
    return [_Hit(start=m.start(1), end=m.end(1), places=index.by_state[m.group(1)], how=f"state {m.group(1)}", rank=4)
            for m in _STATE_CODE_AFTER.finditer(original) if m.group(1) in codes and m.group(1) in index.by_state]


def _rural(hits: list[_Hit], text: str, index: _Index) -> list[_Hit]:
    """"Rural Texas", "rural parts of Washington": a state named after "rural" is its rest-of-state locality (the
    counties no metropolitan locality lists), when the state has one; a state of one locality stays that locality."""
    out = []
    for hit in hits:
        state = hit.places[0].state if hit.rank == 4 and hit.places else None
        rest = index.rest_of_state.get(state, ()) if state else ()
        if rest and re.search(r"\brural\s+(?:parts?\s+of\s+|areas?\s+of\s+)?$", text[:hit.start], re.IGNORECASE):
            hit = _Hit(start=hit.start, end=hit.end, places=tuple(index.by_key[k] for k in rest if k in index.by_key),
                       how=f"rural {state}: rest of state", rank=2)      # a place, not the whole state
        out.append(hit)
    return out


def _outermost(hits: list[_Hit]) -> list[_Hit]:
    """Drop hits inside a longer hit (same-span hits all stay: "Portland" is a locality name and a city), and a
    locality-name hit whose places a same-span city of data/places.toml narrows ("San Francisco" is in the names of
    CA 05 and of CA 52, MARIN CNTY; the city is in San Francisco county: CA 05)."""
    kept = []
    for hit in hits:
        inside = any(o is not hit and o.start <= hit.start and hit.end <= o.end
                     and o.end - o.start > hit.end - hit.start for o in hits)
        narrowed = hit.how.startswith("locality name") and any(
            o.start == hit.start and o.end == hit.end and o.how.startswith("city") and set(o.places) < set(hit.places)
            for o in hits)
        if not inside and not narrowed:
            kept.append(hit)
    return kept


def _in_state(place: Locality, state: str, index: _Index) -> bool:
    """The locality is the state's, or serves a county of the state ("DC + MD/VA SUBURBS" serves Arlington, VA)."""
    return place.state == state or place.key in index.keys_in_state.get(state, ())


def _narrow_by_state(hits: list[_Hit], states: set[str], text: str, index: _Index | None = None) -> list[_Hit]:
    """A state named with more specific places confirms them: a state right after a place ("Portland,
    Maine") or of a place's locality goes, and the places keep only that state's localities when some
    are left; a state with no place of its own stays (all its localities)."""
    specific = [h for h in hits if h.rank < 4]
    if not specific:
        return hits

    def within(place: Locality, state: str) -> bool:
        return _in_state(place, state, index) if index is not None else place.state == state
    allowed = {p.key for h in specific for p in h.places if any(within(p, s) for s in states)}
    # only a hit with a place in a named state is narrowed to it ("Portland, Oregon"); another place stays ("vs Seattle")
    qualified = {(h.start, h.end) for h in specific if any(p.key in allowed for p in h.places)}
    narrowed = [_Hit(start=h.start, end=h.end, places=tuple(p for p in h.places if p.key in allowed), how=h.how,
                     rank=h.rank) if (h.start, h.end) in qualified else h for h in specific]
    narrowed = [h for h in narrowed if h.places]
    trailing = [h for h in hits if h.rank == 4 and any(s.end <= h.start and re.fullmatch(r"[\s,]*", text[s.end:h.start])
                                                       and (any(within(p, h.places[0].state) for p in s.places)
                                                            or s.how.startswith("county"))
                                                       for s in specific)]
    lone = [h for h in hits if h.rank == 4 and h not in trailing
            and not any(within(p, h.places[0].state) for s in narrowed for p in s.places)]
    return narrowed + lone


# Words after which a place is named ("in Seatle", "Spokane vs Tacoma"): only there is a near miss read as a place
_LOCATIVE = {"IN", "AT", "NEAR", "AROUND", "VS", "VERSUS", "AND", "OR", "TO", "FROM", "FOR", "OF", "BETWEEN"}
# words that name a place only in a list already naming one ("Seattle and Bostn"), not on their own ("for chiro")
_WEAK_LOCATIVE = {"AND", "OR", "TO", "FOR", "OF"}
WEAK_LOCATIVE_MIN = 6       # letters of a near miss read as a place after those words with no place named before it
_NOT_PLACES = {"PATIENTS", "PATIENT", "MEDICARE", "MEDICAID", "PRACTICE", "PRACTICES", "FACILITY", "OFFICE", "CLINIC",
               "CLINICS", "HOSPITAL", "HOSPITALS", "TOTAL", "URBAN", "RURAL", "STATES", "STATE", "COUNTY", "COUNTIES",
               "CITIES", "YEARS", "MONTHS", "CODES", "VISITS", "UNITS", "HOURS", "MINUTES", "DOLLARS", "PERCENT"}


def _distance(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance (an adjacent swap is one edit), or limit + 1 once it exceeds limit.

    >>> _distance("SEATLE", "SEATTLE", 2), _distance("CHIACGO", "CHICAGO", 2), _distance("BOSTON", "HOUSTON", 1)
    (1, 1, 2)
    """
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before, row = None, list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + (ca != cb))
            if before is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, row = row, current
    return row[-1]


def _allowed_edits(name: str) -> int:
    """One letter wrong in a name of 5-8 letters, two in a longer one; shorter names must be spelt right."""
    letters = len(name.replace(" ", ""))
    return 0 if letters < 5 else 1 if letters < 9 else 2


def _respell(normal: str, hits: list[_Hit], index: _Index, aliases, original: str = "") -> tuple[list[tuple[str, str]],
                                                                       list[tuple[str, tuple[str, ...]]]]:
    """Words after "in", "at", "vs", ... that no hit covers and that are one or two letters from exactly one place
    name (a locality name or part of one, a city of data/places.toml, a state): (written, name) pairs. A near miss
    as close to several names is listed in `unsure` (written, names)."""
    vocabulary: dict[int, set[str]] = {}
    for name in list(index.names) + list(aliases) + [n for n in STATE_CODES if "/" not in n]:
        vocabulary.setdefault(len(name.split()), set()).add(name)
    covered = [(h.start, h.end) for h in hits]
    words = [(m.start(), m.end(), m.group()) for m in re.finditer(r"[A-Z][A-Z']*", normal)]
    changes, unsure = [], []
    i = 0
    while i < len(words):
        start = words[i][0]
        if i == 0 or words[i - 1][2] not in _LOCATIVE or any(s <= start < e for s, e in covered):
            i += 1
            continue
        best = None
        for size in (3, 2, 1):
            span = words[i:i + size]
            if len(span) < size or any(w[2] in _LOCATIVE | _NOT_PLACES for w in span):
                continue
            written = " ".join(w[2] for w in span)
            if any(s < span[-1][1] and start < e for s, e in covered):
                continue
            limit = _allowed_edits(written)
            if not limit or all(is_known_word(w[2]) for w in span):
                continue            # "for reading", "a marine": words spelt right are not misspelt places
            if words[i - 1][2] in _WEAK_LOCATIVE and not any(e <= start for _, e in covered) and \
                    len(written.replace(" ", "")) < WEAK_LOCATIVE_MIN:
                continue            # "for chiro", "and DEXAs": after "for"/"and"/... a short near miss is a place
                #                     only in a list of places ("Seattle and Bostn"); "for seatle doctors" is read
            near = {}
            for name in vocabulary.get(size, ()):
                if name[0] == written[0] or limit == 1:
                    d = _distance(written, name, limit)
                    if 0 < d <= limit:
                        near[name] = d
            if near:
                closest = min(near.values())
                best = (size, span, sorted(n for n, d in near.items() if d == closest))
                break
        if best is None:
            i += 1
            continue
        size, span, names = best
        written = normal[span[0][0]:span[-1][1]]
        if len(names) == 1:
            changes.append((written, names[0]))
        else:
            unsure.append((written, tuple(names)))
        i += size
    return changes, unsure


# a person's title and name ("Dr. Jackson", "Mrs Madison", "Doctor Austin"): never a place
_PERSON = re.compile(r"\b(?:Dr|Drs|Mr|Mrs|Ms|Mx|Miss|Prof|Doctor|Nurse|Professor)\.?\s+(?:[A-Z]\.\s*)?[A-Z][a-z'’-]+"
                     r"(?:\s+[A-Z][a-z'’-]+)?\b")


def find_places(text: str, localities: tuple[Locality, ...] | list[Locality], counties: tuple[CountyArea, ...] | list[CountyArea],
                aliases: dict[str, tuple[tuple[str, str], ...]] | None = None) -> PlaceMatch:
    """The localities `text` names (see the module docstring); no place -> an empty, unambiguous match. A place
    name misspelt by a letter or two after "in", "at", "vs", ... is read as the one name it is that close to
    (`PlaceMatch.respelled` says so)."""
    aliases = _default_aliases() if aliases is None else aliases
    index = _index(tuple(localities), tuple(counties))
    text = _PERSON.sub(lambda m: " " * len(m.group(0)), text)     # "Dr. Jackson", "Ms. Madison": people, not places
    qualifiers = _qualifier_respell(_normal(text))           # "rual Texas", "reset of Texas": read as meant first
    text = _recase(text, qualifiers) if qualifiers else text
    normal = _normal(text)                                   # "St. Louis" / "D.C." match without dots
    hits = _hits(text, normal, text, index, aliases)
    respelled, unsure = _respell(normal, hits, index, aliases, text)
    if not respelled:
        return _match(text, normal, text, hits, index, respelled=qualifiers, unsure=unsure)
    # the original with the names in place keeps its capitals elsewhere (", WA", "Birmingham AL" are read on it)
    original = _recase(text, respelled)
    normal = _normal(original)
    return _match(original, normal, original, _hits(original, normal, original, index, aliases), index,
                  respelled=qualifiers + respelled, unsure=unsure)


def _default_aliases() -> dict[str, tuple[tuple[str, str], ...]]:
    """The cities of data/places.toml and its namesakes of locality names, one table."""
    merged = dict(load_city_aliases())
    for name, spots in load_namesakes().items():
        merged[name] = tuple(dict.fromkeys(merged.get(name, ()) + spots))
    return merged


# Words that qualify a state ("rural Texas", "rest of Texas"), as `_rural` and the locality names read them; a word a
# letter from one, written before a state name, is read as it when it is no English word ("rual", "rurual", "ruarl",
# "rset of"). "reset of <state>" has no other reading and is read as "rest of" too; "west of", "best of", "mural" stay.
_QUALIFIERS = {"RURAL": re.compile(r"(?<![A-Z'])([A-Z]+)\s+(?:(?:PARTS?|AREAS?)\s+OF\s+)?$"),
               "REST": re.compile(r"(?<![A-Z'])([A-Z]+)\s+OF\s+$")}
_QUALIFIER_MISSPELLINGS = {"RESET": "REST"}
_NOT_QUALIFIERS = {"AURAL", "URAL"}


def _qualifier_respell(normal: str) -> list[tuple[str, str]]:
    """(written, "RURAL" or "REST") for each misspelt qualifier right before a state name.

    >>> _qualifier_respell(_normal("99215 in rual texas in 2024")), _qualifier_respell(_normal("reset of Texas"))
    ([('RUAL', 'RURAL')], [('RESET', 'REST')])
    >>> _qualifier_respell(_normal("west of Texas, rural Texas, a mural Texas")), _qualifier_respell(_normal("rual"))
    ([], [])
    """
    out = []
    for name in STATE_CODES:
        if "/" in name:
            continue
        for m in _compiled(name).finditer(normal):
            for target, before in _QUALIFIERS.items():
                q = before.search(normal[:m.start()])
                word = q.group(1) if q else ""
                if not word or word == target or word in _NOT_QUALIFIERS:
                    continue
                if _QUALIFIER_MISSPELLINGS.get(word) == target or (
                        len(word) >= 3 and _distance(word, target, 1) == 1 and not is_known_word(word)):
                    out.append((word, target))
    return list(dict.fromkeys(out))


def _recase(text: str, respelled: list[tuple[str, str]]) -> str:
    """The original text with each misspelt place written as the name it is read as."""
    for written, name in respelled:
        text = re.sub(r"(?<![A-Za-z])" + r"[\W_]+".join(re.escape(w) for w in written.split()) + r"(?![A-Za-z])",
                      name.title(), text, count=1, flags=re.IGNORECASE)
    return text


def _hits(text: str, normal: str, original: str, index: _Index, aliases) -> list[_Hit]:
    phrase = _phrase_hits(normal, index, aliases)
    with_state = _city_with_state_hits(normal, original, index, load_cities_with_state())
    # "Albany, OR" is not Albany, NY, nor "Portland, TX" the Portland locality: a name of the same span goes unless
    # it has a place in the state named
    states = {(h.start, h.end): {p.state for p in h.places} for h in with_state}
    phrase = [h for h in phrase if h.rank not in (2, 3) or (h.start, h.end) not in states
              or any(p.state in states[h.start, h.end] for p in h.places)]
    return _explicit_hits(normal, index) + _county_hits(normal, original, index) + phrase + with_state \
        + _state_code_hits(original, index) + _county_before_state_hits(normal, original, index)


def _city_with_state_hits(text: str, original: str, index: _Index, cities) -> list[_Hit]:
    """"Bend, OR", "Reading PA", "Allen, Texas", "Bangor, Maine": a city of the [city_with_state] tables, read only
    when one of its states is named right after it (", ST" or a state's name; "ST" in capitals without a comma).
    Runs of up to the longest name's words are looked up, longest first, so each question costs a few dict lookups."""
    hits = []
    words = list(re.finditer(r"[A-Z0-9][A-Z0-9']*", text))
    longest = _longest_city_with_state()
    taken_until = -1
    for i in range(len(words)):
        if words[i].start() <= taken_until:
            continue
        for size in range(min(longest, len(words) - i), 0, -1):
            run = words[i:i + size]
            if any(re.search(r"[^\s]", text[a.end():b.start()]) for a, b in zip(run, run[1:])):
                continue                                   # "Bend, OR, Portland": a comma inside is no one name
            name = " ".join(w.group(0) for w in run)
            spots = cities.get(name)
            if not spots:
                continue
            end = run[-1].end()
            state = _state_or_code_after(text, end, original)
            found = [p for st, county in spots if st == state for p in _county_places(county, st, index)[0]]
            if found:
                hits.append(_Hit(start=run[0].start(), end=end, places=tuple(dict.fromkeys(found)),
                                 how=f"city {name}, {state} (read with its state)", rank=3))
                taken_until = end
                break
    return hits


def _match(text: str, normal: str, original: str, hits: list[_Hit], index: _Index, *,
           respelled: list[tuple[str, str]] = (), unsure: list = ()) -> PlaceMatch:
    hits = _outermost(_rural(hits, normal, index))
    # a state right after a place qualifies it only when that place has a locality there ("Portland, Maine");
    # "Manhattan, Alaska, rest of Florida" lists places
    states = {h.places[0].state for h in hits if h.rank == 4} | {
        s for h in hits for s in [_state_after(normal, h.end, original)]
        if s and (any(_in_state(p, s, index) for p in h.places) or h.how.startswith("county"))} | {
        s for h in hits if h.rank < 4 for s in [_word_code_after(original, h.end)]
        if s and any(_in_state(p, s, index) for p in h.places)}
    hits = sorted(_narrow_by_state(hits, states, normal, index), key=lambda h: (h.start, h.rank))
    candidates = tuple(PlaceCandidate(place=p, matched=text[h.start:h.end], how=h.how) for h in hits for p in h.places)
    match = PlaceMatch(candidates=candidates, ambiguous=False, matched=tuple(dict.fromkeys(text[h.start:h.end] for h in hits)))
    unplaced = tuple((m.group(1), text[h.start:h.end]) for h in hits if h.rank == 4
                     for m in [_NAME_BEFORE.search(original[:h.start])] if m and not any(
                         o.start < m.end(1) and m.start(1) < o.end for o in hits if o is not h)
                     and not is_known_word(m.group(1).split()[-1]))
    return PlaceMatch(candidates=candidates, ambiguous=len(match.localities) > 1, matched=match.matched,
                      respelled=tuple(respelled), unsure=tuple(unsure), unplaced=unplaced)


# "Bethesda, " right before a state: a capitalised name and a comma
_NAME_BEFORE = re.compile(r"\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+){0,2})\s*,\s*$")


def find_places_in(con, text: str, cy: int) -> PlaceMatch:
    """`find_places` over the localities of CY `cy` and the county crosswalk that serves it (the latest
    earlier CY's when `cy` has none: `directory(con).county_note(cy)` says which)."""
    from carenav_core.pfs.locality import directory
    book = directory(con)
    return find_places(text, book.localities(cy), book.county_areas(cy))


def priced_places(con, text: str, codes: list[str] | tuple[str, ...], cys: list[int] | None = None,
                  modifier: str = ""):
    """For the chat: the places `text` names and, when it names any, the locality rows of `codes` in
    them (`locality_rows`, labels like "[PFS CY2026 RVU26C · GPCI2026 WA 02]"). Returns (PlaceMatch,
    LocalityResult or None); None means no place was named: answer with national rows, as before.
    Places are looked up in the newest of `cys` (default: the newest CY with GPCIs); `modifier` ("26", "TC")
    prices that modifier's rows (a code without them keeps its base rows, noted)."""
    from carenav_core.pfs.locality import directory, locality_rows
    cy = max(cys) if cys else max(directory(con).gpci)
    match = find_places_in(con, text, cy)
    if not match.found:
        return match, None
    return match, locality_rows(con, codes, cys=cys, places=[p.key for p in match.localities], modifier=modifier)
