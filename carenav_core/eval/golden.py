"""The chat golden set: questions generated from templates over the loaded CMS data, deterministic
from a seed, each with the codes a reader expects CareNav to detect and the scripted reply mode.

Expected detection (the spec, restated independently of carenav_core.codes): the codes written in
the question, plus every member of a family the question names by a synonym of data/families.toml
or through one of its member codes. Numbers that are not codes (years, FR citations, dollar
amounts, counts with thousands separators, decimals, FR document numbers) detect nothing.

Categories: code (one code, many phrasings), codes (several at once), family (by name or synonym),
years (codes that exist only in some CYs), unknown (well-formed codes no release prices),
not_a_code (a code among numbers that are not codes) and control (no code, no family).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Iterable

from carenav_core.eval.oracle import CodeFamily, Oracle

# How many questions of each category the full set holds (180 in all, 36 controls).
SIZES = {"code": 36, "codes": 24, "family": 30, "years": 16, "unknown": 14, "not_a_code": 24, "control": 36}
HOSTILE_MODES = ("wrong_number", "unlabelled_number", "invented_citation", "injected_instruction", "uncited_claim",
                 "unsupported_claim")
HOSTILE_SLOTS = (1, 3)          # positions i % 5 that get a hostile reply: 40% of the questions
ALWAYS = ("G0556", "99490", "99439", "G2012", "99213", "G2211")
# HCPCS Level II, CPT Category I/II/III and vaccine-administration shapes; placeholders such as
# "GXXX1" in some releases are not codes anyone asks about.
HCPCS_SHAPE = re.compile(r"[A-Z]\d{4}|\d{4}[A-Z]|\d{5}")
UNKNOWN = ("V9998", "12345")

CODE_PHRASINGS = (
    "What does {code} pay?", "{lower} payment?", "code {code}?", "How is {code} valued in the physician fee schedule?",
    "RVUs for HCPCS {code} please", "Is {code} payable, and what are its RVUs?",
    "What's the national rate for {code} (non-facility)?", "{code}: work RVU and total?",
    "cpt {lower} reimbursement", "Tell me about ({code}).", "How much is #{code} worth?",
    "What is the professional component {code}-26 worth?", "Quick one - {code}'s total RVUs?",
)
SEVERAL = ("{a}/{b}", "How do {a} and {b} compare?", "{a} vs {b}: which pays more?", "Values for {a}, {b} and {c}?",
           "{a}; {b}", "{lower_a} & {lower_b} rates", "Is {a}+{b} billable together, and what does each pay?",
           "How does {family} compare with {a}?")
FAMILY_PHRASINGS = ("How is {syn} paid?", "What are the {syn} codes and their RVUs?", "{syn} payment rates for 2025",
                    "Explain how Medicare values {syn}.", "what does {lower} pay nationally?")
TWO_FAMILIES = ("Compare {syn} with {syn2}.", "Which pays more, {syn} or {syn2}?")
YEAR_PHRASINGS = ("How has {code} been paid since 2020?", "Was {code} still payable in 2025?",
                  "When did {code} first appear in the fee schedule?", "Show {code} across the years 2020 to 2026.")
UNKNOWN_PHRASINGS = ("What does {code} pay?", "Is {code} in the 2025 fee schedule?", "RVUs for {code}?",
                     "How is code {code} valued?")
NOT_A_CODE = ("According to 89 FR 97710, how is {code} valued?", "Does {code} really pay $1,234.50?",
              "The CY2025 file has 19,090 rows; where is {code}?", "In 2024, was {code} paid at a CF of 33.2875?",
              "FR document 2024-25382 discusses {code}: what are its RVUs?",
              "Is {code} worth $17,100.00 a year for 12,345 patients?", "Was {code} 2.83 percent lower in 2025 than 2024?",
              "See 90 FR 49266 (November 5, 2025) for {code}.", "Page 97,899 of the rule mentions {code}?",
              "{code} at $ 32 in 2026?")
CONTROLS = (
    "What does the CY2025 final rule say about telehealth?", "Why did the conversion factor fall in 2025?",
    "What is 89 FR 97710 about?", "How many rows does the 2025 RVU file have, 19,090?",
    "Is $1,234.50 a typical national payment?", "How does budget neutrality affect the conversion factor?",
    "What changed for the Medicare Shared Savings Program in 2024?", "What is the efficiency adjustment for 2026?",
    "Explain the difference between facility and non-facility practice expense.",
    "What are geographic practice cost indices?", "Was the CY2024 conversion factor $33.2875 after March 9, 2024?",
    "What does 90 FR 49266 finalize?", "How are malpractice RVUs updated?",
    "What is the 2.93 percent update in the Consolidated Appropriations Act, 2024?",
    "Did CMS change direct supervision through real-time audio and video?", "What is document 2024-25382?",
    "What does the correction notice of May 16, 2025 fix?", "What does a status indicator mean in the RVU file?",
    "How are rural health clinics and FQHCs paid under Medicare Part B?",
    "What did the 2023 final rule say about ACO benchmarks?", "How is a work RVU set for a new service?",
    "What was the 2021 conversion factor of 34.8931 based on?", "Does the fee schedule pay for remote services at home?",
    "What did commenters say about the 2025 proposals?", "How does CMS define a qualifying APM participant?",
)
CONTROL_PREFIXES = ("", "Quick question: ", "For CY2026, ", "In plain words, ")


@dataclass(frozen=True, kw_only=True)
class GoldenQuestion:
    """One question of the golden set and what a correct answer must detect."""
    index: int
    category: str
    text: str
    expected_codes: tuple[str, ...]      # sorted
    families: tuple[str, ...]            # family keys the question names (by synonym or member code)
    reply_mode: str                      # "faithful" or one of HOSTILE_MODES

    @property
    def hostile(self) -> bool:
        return self.reply_mode != "faithful"


def _normal(text: str) -> str:
    return re.sub(r"[\s\-]+", " ", text.lower())


def families_named(text: str, families: Iterable[CodeFamily]) -> set[str]:
    """Family keys whose synonym appears in `text` as whole words (case, spaces and hyphens ignored)."""
    normal = _normal(text)
    families = tuple(families)
    spans = [(m.start(), m.end(), f.key) for f in families for s in (*f.synonyms, *f.shared_names)
             for m in re.finditer(rf"(?<!\w){re.escape(_normal(s))}(?!\w)", normal)]
    # names read left to right, the longest at each place, never over one already read: a name inside a longer one is
    # the longer one's ("hospital visits" in "initial hospital visits"), and of two overlapping names the one that
    # starts first ("phone E/M" in "phone E/M codes", not "E/M codes"), as detect reads
    taken, end_of_last, read = set(), -1, None
    for start, end, key in sorted(spans, key=lambda span: (span[0], -(span[1] - span[0]))):
        if start >= end_of_last or (start, end) == read:      # a shared name's span names all its families
            taken.add(key)
            end_of_last, read = end, (start, end)
    return taken


class _Builder:
    """Draws template fillings from one seeded generator and checks every question it makes."""

    def __init__(self, oracle: Oracle, seed: int) -> None:
        self.rng, self.oracle = random.Random(seed), oracle
        self.families = oracle.families
        self.family_of = {c: f.key for f in self.families for c in f.codes}

    def question(self, category: str, text: str, codes: Iterable[str], named: Iterable[str] = ()) -> dict:
        """A question dict with its expected codes; raises if the text names an unintended family."""
        explicit, named = {c.upper() for c in codes}, set(named)
        found = families_named(text, self.families)
        if found != named:
            raise ValueError(f"golden template names families {sorted(found)}, meant {sorted(named)}: {text!r}")
        keys = named | {self.family_of[c] for c in explicit if c in self.family_of}
        members = {c for f in self.families if f.key in keys for c in f.codes}
        return {"category": category, "text": text, "expected_codes": tuple(sorted(explicit | members)),
                "families": tuple(sorted(keys))}

    def every_code(self) -> list[str]:
        """Every code with a base row in some loaded CY, sorted."""
        every = set().union(*(self.oracle.codes_in(cy) for cy in self.oracle.releases))
        return sorted(c for c in every if HCPCS_SHAPE.fullmatch(c))

    def code_pool(self, size: int) -> list[str]:
        """The always-asked codes, family members and a seeded sample of every loaded code."""
        every = self.every_code()
        members = sorted({c for f in self.families for c in f.codes if self.oracle.years_of(c)})
        pool = list(ALWAYS) + self.rng.sample(members, 8)
        pool += [c for c in self.rng.sample(every, size) if c not in pool]
        return pool[:size]


def _codes(b: _Builder) -> list[dict]:
    out = []
    for i, code in enumerate(b.code_pool(SIZES["code"])):
        template = CODE_PHRASINGS[i % len(CODE_PHRASINGS)]
        out.append(b.question("code", template.format(code=code, lower=code.lower()), [code]))
    return out


def _several(b: _Builder) -> list[dict]:
    pool = b.code_pool(60)
    out = [b.question("codes", "99490/99439", ["99490", "99439"])]
    while len(out) < SIZES["codes"]:
        template = SEVERAL[len(out) % len(SEVERAL)]
        a, c2, c3 = b.rng.sample(pool, 3)
        family = b.rng.choice(b.families)
        syn = b.rng.choice(family.synonyms) if "{family}" in template else ""
        text = template.format(a=a, b=c2, c=c3, lower_a=a.lower(), lower_b=c2.lower(), family=syn)
        used = [x for x in (a, c2, c3) if x.lower() in text.lower()]
        out.append(b.question("codes", text, used, [family.key] if syn else []))
    return out


def _families(b: _Builder) -> list[dict]:
    out = []
    for i, family in enumerate(b.families):              # every family once, then seeded extras
        syn = family.synonyms[i % len(family.synonyms)]
        out.append(b.question("family", FAMILY_PHRASINGS[i % len(FAMILY_PHRASINGS)].format(syn=syn, lower=syn.lower()),
                              [], [family.key]))
    while len(out) < SIZES["family"]:
        first, second = b.rng.sample(b.families, 2)
        syn, syn2 = b.rng.choice(first.synonyms), b.rng.choice(second.synonyms)
        if len(out) % 4 == 0:
            text, named = b.rng.choice(TWO_FAMILIES).format(syn=syn, syn2=syn2), [first.key, second.key]
        else:
            text, named = b.rng.choice(FAMILY_PHRASINGS).format(syn=syn, lower=syn.lower()), [first.key]
        out.append(b.question("family", text, [], named))     # "G2211 add-on" names a member: same family
    return out


def _years(b: _Builder) -> list[dict]:
    """Codes that start after the first loaded CY or stop before the last one."""
    first, last = min(b.oracle.releases), max(b.oracle.releases)
    every = b.every_code()
    new = [c for c in every if b.oracle.years_of(c)[0] > first]
    ended = [c for c in every if b.oracle.years_of(c)[-1] < last]
    picked = ["99439", "G2012", "G0556"] + b.rng.sample(new, 7) + b.rng.sample(ended, 6)
    return [b.question("years", YEAR_PHRASINGS[i % len(YEAR_PHRASINGS)].format(code=c), [c])
            for i, c in enumerate(picked[:SIZES["years"]])]


def _unknown_codes(b: _Builder, count: int) -> list[str]:
    codes = list(UNKNOWN)
    while len(codes) < count:
        shape = b.rng.choice(("letter", "cpt", "cat3"))
        code = (b.rng.choice("ABCEGJKLQV") + f"{b.rng.randrange(10000):04d}" if shape == "letter"
                else f"{b.rng.randrange(10000, 100000)}" if shape == "cpt" else f"{b.rng.randrange(10000):04d}T")
        if not b.oracle.years_of(code) and code not in b.family_of and code not in codes:
            codes.append(code)
    return codes


def _unknown(b: _Builder) -> list[dict]:
    return [b.question("unknown", UNKNOWN_PHRASINGS[i % len(UNKNOWN_PHRASINGS)].format(code=c), [c])
            for i, c in enumerate(_unknown_codes(b, SIZES["unknown"]))]


def _not_a_code(b: _Builder) -> list[dict]:
    pool = b.code_pool(40)
    return [b.question("not_a_code", NOT_A_CODE[i % len(NOT_A_CODE)].format(code=code), [code])
            for i, code in enumerate(b.rng.sample(pool, SIZES["not_a_code"]))]


def _controls(b: _Builder) -> list[dict]:
    pairs = [(p, t) for p in CONTROL_PREFIXES for t in CONTROLS]
    chosen = [("", t) for t in CONTROLS] + b.rng.sample(pairs[len(CONTROLS):], SIZES["control"] - len(CONTROLS))
    return [b.question("control", p + t, []) for p, t in chosen]


def _interleaved(groups: list[list[dict]]) -> list[dict]:
    """Spread every category evenly, so any prefix of the set has them in proportion."""
    keyed = [((i + 0.5) / len(g), n, q) for n, g in enumerate(groups) for i, q in enumerate(g)]
    return [q for _, _, q in sorted(keyed, key=lambda k: (k[0], k[1]))]


def golden_set(oracle: Oracle, seed: int = 7, count: int | None = None) -> list[GoldenQuestion]:
    """The golden questions (all 180, or the first `count`), the same for the same seed and data."""
    b = _Builder(oracle, seed)
    groups = [_codes(b), _several(b), _families(b), _years(b), _unknown(b), _not_a_code(b), _controls(b)]
    ordered = _interleaved(groups)[:count]
    return [GoldenQuestion(index=i, reply_mode=_mode(i), **q) for i, q in enumerate(ordered)]


def _mode(index: int) -> str:
    if index % 5 not in HOSTILE_SLOTS:
        return "faithful"
    return HOSTILE_MODES[(index // 5 * len(HOSTILE_SLOTS) + HOSTILE_SLOTS.index(index % 5)) % len(HOSTILE_MODES)]
