"""What a question asks, decided by code before anything is looked up: which codes it names (and which a
family adds), which years or vintages, which setting, and what kind of answer (lookup, comparison,
trend, definition, how CMS valued it, policy). Pure: no database, no model.

The plan is shown to the analyst ("Understood as: …") and steers the evidence: which rows are in focus,
which figures are computed, what the deterministic writer says first.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from enum import StrEnum
from functools import lru_cache
from typing import Sequence

from carenav_core.codes import Detection
from carenav_core.codes.families import PERIODIC_UNITS, load_families, payment_unit
from carenav_core.codes.procedures import READING_VERB, named_procedures

YEAR = re.compile(r"(?<![\w.$,-])(?:CY\s?|FY\s?)?(20[1-3]\d)(?![\w]|[.,]\d|-\d)", re.IGNORECASE)
RANGE = re.compile(r"\b(?:from|between)\s+(?:CY\s?)?(20[1-3]\d)\s+(?:to|and|through|until)\s+(?:CY\s?)?(20[1-3]\d)\b"
                   r"|(?<![\w-])(?:CY\s?)?(20[1-3]\d)\s*(?:-|–|to|through)\s*(?:CY\s?)?(20[1-3]\d)(?![\w-])",
                   re.IGNORECASE)
SINCE = re.compile(r"\b(?:since|after|starting(?:\s+in)?|from)\s+(?:the\s+)?(?:CY\s?)?(20[1-3]\d)\b"
                   r"(?!\s*(?:to|and|through|-|–))",
                   re.IGNORECASE)
RELATIVE = {"last year": -1, "previous year": -1, "prior year": -1, "this year": 0, "current year": 0,
            "next year": 1, "coming year": 1}
_RELATIVE = re.compile(r"\b(" + "|".join(RELATIVE) + r")\b", re.IGNORECASE)
# a year before 2010 written as one ("in 1999", "for CY 2005"), not a count ("2000 patients")
_OLD_YEAR = re.compile(r"\b(?:in|for|of|during|year|CY)\s?(19[5-9]\d|200\d)\b(?!\s*[A-Za-z])", re.IGNORECASE)
# "99213 in 2099": a year far past any file, said so (the years YEAR reads stop at 2039)
_FAR_YEAR = re.compile(r"\b(?:in|for|of|during|year|CY|by)\s?(20[4-9]\d|21\d\d)\b(?!\s*[A-Za-z])", re.IGNORECASE)
_SINCE_RELATIVE = re.compile(r"\b(?:since|from)\s+(?:the\s+)?(last year|previous year|prior year)\b"
                             r"(?!\s*(?:to|and|through|-|–|vs))", re.IGNORECASE)
_PROPOSED = re.compile(r"\b(?:proposed|proposal|NPRM|proposed rule)\b", re.IGNORECASE)
_NON_FACILITY = re.compile(r"\bnon[\s-]?facility\b|\bnon[\s-]?fac\b|\bnonfac\w*|\bNF\b|\boffice\b|"
                           r"\bphysician'?s? office\b", re.IGNORECASE)
_FACILITY = re.compile(r"(?<!non-)(?<!non )(?<!non)\b(?:facility|fac)\b|\bhospital\b|\binpatient\b", re.IGNORECASE)

_COMPARE = re.compile(r"\b(?:compare[sd]?|comparison|comparing|versus|vs\.?|difference|differ|differs|"
                      r"more than|less than|higher|lower|relative to|how much (?:more|less)|cheaper|less expensive|"
                      r"more expensive|pricier|costlier|"
                      r"which (?:\w+ ){0,4}(?:more|less|most|least)|(?:more|less) (?:\w+ ){0,4}than)\b",
                      re.IGNORECASE)
# "Which E/M code had the largest percent increase from 2025 to 2026?", "Which TCM code grew the most?"
MOST_CHANGE = re.compile(r"\b(?:largest|biggest|greatest|most|highest|smallest|least)\s+(?:(?:\w+|%)\s*){0,2}?"
                          r"(?P<way>increase|rise|growth|gain|decrease|drop|decline|cut|change)s?\b|"
                          r"\b(?P<verb>grew|rose|increased|fell|dropped|declined|changed|went up|went down|decreased|climbed|jumped|gained|"
                          r"shrank|moved|lost|loses|lose|shed)\s+(?:the\s+)?(?:most|least)\b|"
                          r"\b(?P<verb2>grew|grow|rose|rise|increased?|fell|fall|dropped|drop|declined?|changed?|"
                          r"gained?|went up|go up|went down|go down)\s+(?:by\s+)?more\b|"
                          r"\b(?:bigger|larger|greater|more)\s+(?P<way2>increase|rise|growth|gain|decrease|drop|decline|"
                          r"cut|change)\b", re.IGNORECASE)
_TREND = re.compile(r"\b(?:since|over time|trend|trends|history|historical|changed?|changes|changing|"
                    r"over the (?:last|past)|each year|by year|year over year|year-over-year|grown|grew|"
                    r"increased?|decreased?|went (?:up|down)|evolv\w*)\b", re.IGNORECASE)
# "Why did payment for 99490 go up in 2026?", "What drove the drop in G0556?": the change and what moved it
WHY = re.compile(r"\bwhy\b|\bwhat (?:drove|drives|caused|causes|explains)\b|\breasons? (?:for|behind|why)\b|"
                  r"\bdriv(?:er|ers|en) (?:of|by)\b", re.IGNORECASE)
_MOVED = re.compile(r"\b(?:go|goes|went|gone|going) (?:up|down)\b|\b(?:increas|decreas|rise|rises|rising|rose|risen|"
                    r"fall|falls|fell|fallen|drop|jump|declin|cut|chang|lower|higher|reduc)\w*|\bpa(?:y|ys|id) (?:less|more)\b",
                    re.IGNORECASE)
_DID = re.compile(r"\b(?:did|has|have|had)\b", re.IGNORECASE)
_DROVE = re.compile(r"\bwhat (?:drove|caused|explains)\b|\breasons? (?:for|behind)\b", re.IGNORECASE)
_NOT_A_CHANGE = re.compile(r"\b(?:facility|non-?facility|office|setting|modifier|requir\w*|decid\w*)\b", re.IGNORECASE)
_MOVED_OVER_TIME = re.compile(r"\b(?:go|goes|went|gone) (?:up|down)\b|\b(?:increas|decreas|rose|risen|fell|fallen|"
                              r"drop|jump|declin|chang|rais|boost|lower|reduc)\w*|\bcut\b", re.IGNORECASE)
# "Was 99214 cut in 2026?", "Did 99214 get cut?", "Was there a cut to 99214 in 2025?": a change asked in the passive
_WAS = re.compile(r"\b(?:was|were|get|got|gets|getting)\b", re.IGNORECASE)
_DEFINITION = re.compile(r"\b(?:what (?:is|are)|what's|define|definition|meaning of|mean by|what does \S+ mean|"
                         r"explain what|describe)\b", re.IGNORECASE)
_HOW_VALUED = re.compile(r"\b(?:valued?|valuation|valuing|relative value|crosswalk\w*|"
                         r"how (?:did|does|do) CMS (?:value|price|set|determine))\b", re.IGNORECASE)
# An RVU named in the question asks how it was set only with a how or why ("How was the work RVU for 99439 set?");
# "What is the facility PE RVU of 99491 in 2025?" asks for the number.
_RVU_NAMED = re.compile(r"\b(?:RVUs?|work RVU|practice expense|PE inputs?)\b", re.IGNORECASE)
_HOW_OR_WHY = re.compile(r"\b(?:how(?! many| much)|why|basis|deriv\w*|arriv\w*|determin\w*|calculat\w*|based on|"
                         r"methodolog\w*|inputs?)\b", re.IGNORECASE)
_LOOKUP = re.compile(r"\b(?:pay|pays|paid|paying|payment|payments|rate|rates|reimburse\w*|how much|amount|fee|"
                     r"fees|price|priced|cost(?![\s-]shar)|allowed|worth|"
                     # "what does a radiologist get for reading chest x-rays", "what do physicians earn for 99214"
                     r"(?:get|gets|earn|earns|make|makes|receive|receives)\s+(?:paid\s+)?for)\b"
                     r"(?!\s+(?:rules?|polic(?:y|ies)|requirements?|integrity))", re.IGNORECASE)   # not "payment rules"
# "Is 99439 payable in a facility?" is a lookup (the row's status and amount answer); "Is G0556 payable when CCM
# is billed the same month?" is a rule question.
# "Is 99439 payable?", "Is G2012 still active in 2025?", "Is 99091 still valid?": the row's status answers
_PAYABLE = re.compile(r"\bpayable\b|\b(?:still\s+)?(?:active|valid|in use|around|deleted|discontinued|retired|"
                      r"terminated)\b(?=.{0,30}$|\s+(?:in|for|as of|from)\s+(?:CY\s?)?20\d\d\b)|"
                      r"\bstill\s+(?:exist|exists|billable|covered|paid)\b", re.IGNORECASE)
_QUALIFIED = re.compile(r"\b(?:with|when|same (?:month|day|period)|modifiers?|concurrent\w*|together|alongside|"
                        r"billed|unless|if)\b", re.IGNORECASE)
# "What did CMS finalize for ...?", "What did the CY2022 rule decide ...?": a question about CMS's decision
# (CMS or a rule deciding: not "medical decision making", not "How do I decide between 99213 and 99214?")
ASKS_DECISION = re.compile(r"\b(?:finali[sz]\w*|(?:CMS|they|rule|it)\s+(?:\w+\s+)?decid\w*|decided|"
                           r"(?:CMS'?s?|the|its|their|final) decisions?(?![\s-]+mak)|settled on|"
                           r"what did (?:CMS|the (?:\w+ ){0,3}rule) do)\b", re.IGNORECASE)
# The question asks about a rule document ("in the CY 2026 rule", "the 2025 correction notice"), not only a year.
ASKS_RULE = re.compile(r"\b(?:rules?|rulemaking|NPRM|notice|correction|correcting amendment)\b", re.IGNORECASE)
# "total" of a procedure's name ("a total hip replacement") or of a measure ("total RVUs") asks for no sum
_TOTAL = re.compile(r"\b(?:total(?!\s+(?:knee|hip|shoulder|ankle|elbow|wrist|joint|disc|abdominal|\w+ectomy|arthroplasty|"
                    r"replacements?|RVUs?|relative|work|practice|non-?facility|facility|time|minutes|payments?\s+for\s+"
                    r"each))|together|combined|plus|billed with|add[\s-]?on|on top of|sum|summed|summing|"
                    r"add(?:ed|ing)?\s+(?:them\s+|these\s+|those\s+)?up)\b|\+", re.IGNORECASE)
COINSURANCE = re.compile(r"\bco-?insurance\b|\bdeductible\b|\bco-?pay(?:ment)?s?\b|"
                         r"\b(?:does|do|will|would|should|must)\s+(?:the\s+|a\s+|my\s+|our\s+)?(?:patient|beneficiary|"
                         r"member|senior|person)s?\s+(?:have\s+to\s+|need\s+to\s+)?(?:pay|owe)\b|\bowe\s+anything\b|"
                         r"\bpatient'?s?\s+(?:cost|costs|responsibility|bill)\b|\b(?:Medicare'?s|the program'?s)\s+(?:80\s*%\s+|80 percent\s+)?"
                         r"(?:share|portion|part)\b|\bpatient'?s?\s+(?:20\s*%\s+)?(?:share|responsibility|portion|"
                         r"out[- ]of[- ]pocket|cost[- ]share)\b|\bbeneficiar(?:y|ies)'?s?\s+(?:share|responsibility|"
                         r"cost[- ]share)\b|\bpatient'?s?\s+20\s*(?:%|percent)|"
                         r"\b(?:what|how much) (?:does|do|would|will) (?:the |a )?(?:patient|beneficiary|member)s? "
                         r"(?:pay|owe)\b|\b80\s*(?:%|percent)\s+(?:of|share)\b|"
                         r"\b(?:Medicare'?s|the program'?s)\s+80\s*(?:%|percent)|\bpatient'?s?\s+20\s*(?:%|percent)",
                         re.IGNORECASE)
_PLACE_WORD = r"(?:localit(?:y|ies)|areas?|cit(?:y|ies)|states?|places?|regions?|counties|county|market|metros?)"
_EXTREME = re.compile(
    rf"\b(?:which|what)\s+(?:\w+\s+){{0,2}}?{_PLACE_WORD}\b(?P<a>.{{0,60}})"
    rf"|\bwhere\b(?P<b>.{{0,60}})"
    rf"|\b(?P<c>highest|lowest|best|worst|top|bottom)[- ](?:pa(?:ying|id)|rate[d]?)\s+{_PLACE_WORD}\b"
    rf"|\b{_PLACE_WORD}\s+(?:with|that has|that pays|paying)\s+the\s+(?P<d>highest|lowest|most|least)\b",
    re.IGNORECASE)
_MOST = re.compile(r"\b(?:most|highest|best|top|more|largest|biggest)\b", re.IGNORECASE)
_LEAST = re.compile(r"\b(?:least|lowest|worst|bottom|less|smallest|cheapest)\b", re.IGNORECASE)


# "how much does 99214 vary across localities (min and max)", "the range of 99213 payments across localities"
_SPREAD = re.compile(rf"\b(?:highest and (?:the )?lowest|lowest and (?:the )?highest)\s+(?:\w+\s+)?{_PLACE_WORD}\b|"
                     rf"\b(?:vary|varies|variation|range|spread|min(?:imum)? and max(?:imum)?|lowest to highest|"
                     rf"highest and (?:the )?lowest|lowest and (?:the )?highest|most and (?:the )?least|"
                     rf"least and (?:the )?most)\b"
                     rf".{{0,60}}\b(?:across|among|between|by|over)\s+(?:\w+\s+)?{_PLACE_WORD}\b"
                     rf"|\b(?:across|among)\s+(?:\w+\s+)?{_PLACE_WORD}\b.{{0,40}}\b(?:vary|varies|range|spread|"
                     rf"min(?:imum)? and max(?:imum)?)\b", re.IGNORECASE)


def asked_extreme(text: str) -> str:
    """Which end of the payment localities a question asks for: "most" ("Which locality pays the most for 99213?",
    "Where is 99214 paid the most?", "the highest-paying localities"), "least", "both" ("highest and lowest"), or "".

    >>> asked_extreme("Which locality pays the most for 99213 in 2026?"), asked_extreme("Where is 99214 paid least?")
    ('most', 'least')
    >>> asked_extreme("Which states pay the highest and lowest for 99490?"), asked_extreme("99213 in Seattle?")
    ('both', '')
    >>> asked_extreme("Which code pays the most in 2026, 99213 or 99214?"), asked_extreme("Where is 99214 billed?")
    ('', '')
    >>> asked_extreme("How much does 99214 vary across localities (min and max)?")
    'both'
    >>> asked_extreme("What is the highest and lowest 99213 payment across localities in 2025?")
    'both'
    """
    m = _EXTREME.search(text)
    if not m:
        return "both" if _SPREAD.search(text) else ""
    said = next((g for g in m.groups() if g), "")
    most, least = bool(_MOST.search(said)), bool(_LEAST.search(said))
    return "both" if most and least else "most" if most else "least" if least else ""


_THRESHOLD = re.compile(r"\b(?P<op>over|above|more than|greater than|higher than|at least|exceeds?|exceeding|under|"
                        r"below|less than|lower than|at most)\s+\$\s?(?P<amount>\d[\d,]*(?:\.\d{1,2})?)", re.IGNORECASE)
_COUNT_ASKED = re.compile(r"\bhow many\b|\bwhich\b|\bwhat (?:share|percent(?:age)?|fraction|proportion)\b|"
                          r"\bcount\b|\blist\b|\bany\b", re.IGNORECASE)


_AT_CF_YEAR = re.compile(r"\b(?:at|with|using|under|by)\s+(?:the\s+)?(?:CY\s?)?(20[1-3]\d)(?:'s)?\s+"
                         r"(?:national\s+)?(?:conversion factor|CF)\b", re.IGNORECASE)


def asked_cf_year(text: str) -> int | None:
    """"What would 99214 pay in 2026 at the 2020 conversion factor?": 2020, the year whose CF reprices the asked rows.

    >>> asked_cf_year("What would 99214 pay in 2026 at the 2020 CF?"), asked_cf_year("the 2020 CF of 36.0896")
    (2020, None)
    """
    m = _AT_CF_YEAR.search(text)
    return int(m.group(1)) if m else None


_CF_NAME = r"(?:conversion factor|CF)"
_CF_AMOUNT = r"\$?\s?(?P<{0}>\d{{2}}(?:\.\d{{1,4}})?)(?![\d.%])"
_CF_VALUE = re.compile(
    rf"\b{_CF_NAME}\s+(?:were|was|is|of|at|became|went to|rose to|fell to|dropped to|increased to|set (?:at|to)|"
    rf"=|to)\s*{_CF_AMOUNT.format('a')}|\$\s?(?P<b>\d{{2}}(?:\.\d{{1,4}})?)\s+{_CF_NAME}\b", re.IGNORECASE)


_TARGET = re.compile(r"\b(?:how many|(?:the\s+)?number of|count of)\b[^?]*?\b(?:earn|make|bring in|generate|reach|hit|"
                     r"gross|get to|cover|equal|"
                     r"total)\s+(?:at least\s+|over\s+)?\$\s?(?P<amount>\d[\d,]*(?:\.\d{1,2})?)(?P<k>\s?[kK]\b)?",
                     re.IGNORECASE)


def asked_target(text: str) -> Decimal | None:
    """An amount the question asks how many services reach ("How many 99213 visits to earn $10,000?"; "$8k").

    >>> asked_target("How many 99213 visits per month does it take to earn $10,000?"), asked_target("99213 pay?")
    (Decimal('10000'), None)
    >>> asked_target("How many 99214s would I need per month to bring in $8k in 2026?")
    Decimal('8000')
    """
    m = _TARGET.search(text)
    if not m:
        return None
    amount = Decimal(m.group("amount").replace(",", ""))
    return amount * 1000 if m.group("k") else amount


def asked_cf_value(text: str) -> Decimal | None:
    """A conversion factor the question supposes, as an amount: "What would 99214 pay if the conversion factor were
    $35?" -> 35; "at a $36 CF" -> 36. None when it supposes none (a CF stated as a fact is not asked about).

    >>> asked_cf_value("What would 99214 pay if the conversion factor were $35?")
    Decimal('35')
    >>> asked_cf_value("99213 at a CF of 34.5"), asked_cf_value("The 2025 CF is 32.3465; what does 99213 pay?")
    (Decimal('34.5'), None)
    >>> asked_cf_value("In 2024, was 49652 paid at a CF of 33.2875?") is None
    True
    """
    m = _CF_VALUE.search(text)
    if not m:
        return None
    supposed = re.search(r"\b(?:would|if|suppose|supposing|what happens|hypothetical|scenario|assuming)\b", text,
                         re.IGNORECASE)
    # "99213 at a $36 CF" supposes one; "In 2024, was 49652 paid at a CF of 33.2875?" checks the CF it was paid at
    checked = re.match(r"\W*(?:in\s+(?:CY\s?)?\d{4},?\s+)?(?:was|were|is|are|did|does|do)\b", text, re.IGNORECASE)
    at = re.search(rf"\bat\s+(?:a|an)\s+(?:\$?\s?\d|{_CF_NAME})", text, re.IGNORECASE)
    return Decimal(m.group("a") or m.group("b")) if supposed or (at and not checked) else None


def asked_threshold(text: str, codes: int) -> tuple[str, Decimal] | None:
    """"How many of 99202-99205 pay over $150?", "Which of 99211-99215 pay more than $100?": ("over" or "under", the
    amount; "at least" and "at most" keep the amount itself) when a question asks which of two or more codes are above
    or below an amount; None otherwise.

    >>> asked_threshold("How many of 99202-99205 pay over $150 in 2026?", 4)
    ('over', Decimal('150'))
    >>> asked_threshold("Which of 99211-99215 pay less than $100.50?", 5), asked_threshold("99213 over $90?", 1)
    (('under', Decimal('100.50')), None)
    """
    m = _THRESHOLD.search(text)
    if codes < 2 or not m or not _COUNT_ASKED.search(text):
        return None
    op = m.group("op").lower()
    word = op if op in ("at least", "at most") else "under" if op in ("under", "below", "less than", "lower than") \
        else "over"
    return word, Decimal(m.group("amount").replace(",", ""))


# a sum asked in so many words: the asked codes are added even when they are alternatives of one family
SUMMED = re.compile(r"\b(?:the\s+)?(?:total|sum)\s+(?:of|for)\b|\bcombined\b|\b[A-Z0-9]{5}\s*\+\s*[A-Z0-9]{5}\b|"
                    r"\badd\s+up\b|\badd(?:ed|ing)?\s+(?:them\s+)?up\b|"
                    r"\ball together\b|\bin total\b|\bsum(?:med|ming)?\b|\badd\b[^?.]{0,60}\btogether\b|"
                    r"\bwhat(?:'s|’s|\s+is|\s+would\s+be)\s+the\s+(?:total|sum)\b", re.IGNORECASE)
_POLICY_ASK = re.compile(r"\b(?:can|may|must|should|is it|are they|does|do|when|who|require\w*|allow\w*|"
                         r"bill\w*|consent|rule|rules|policy|supervision|modifier|concurrent\w*|same month)\b",
                         re.IGNORECASE)
# The question asks what commenters (the public, stakeholders) said, not only what CMS decided.
COMMENTS = re.compile(r"\b(?:comments?|commenters?|commented|commenting|stakeholders?|interested parties|"
                       r"public input|(?:public|stakeholder)\s+feedback|object(?:ed|ions?)|push(?:ed)?[\s-]?back|"
                       r"(?<!\bas )opposed?|opposition)\b", re.IGNORECASE)
PAY_WORDS = re.compile(r"\b(?:pay|pays|paid|paying|payments?|reimburse\w*|price[sd]?|fees?|dollars?)\b|\$",
                        re.IGNORECASE)
# A question about rules, not values ("Did CMS change the payment rules for G0556?")
_RULE_TOPIC = re.compile(r"\b(?:rules?|polic(?:y|ies)|requirements?|supervision|consent|billing|documentation)\b",
                         re.IGNORECASE)
_MEASURE_WORK = re.compile(r"\bwork RVUs?\b|\bwork relative value", re.IGNORECASE)
_MEASURE_TOTAL = re.compile(r"\btotal RVUs?\b|\bRVUs?\b", re.IGNORECASE)
_VALUE_WORDS = re.compile(r"\b(?:pay|paid|payment|rate|RVU|valu|price|cost|fee|worth|co-?insurance|share)|"
                          r"\b(?:80|20)\s*(?:%|percent)", re.IGNORECASE)


class Intent(StrEnum):
    """What kind of answer a question asks for."""
    LOOKUP = "lookup"            # a payment or RVU figure
    COMPARE = "compare"          # two or more codes side by side
    TREND = "trend"              # one code across years
    TOTAL = "total"              # an add-on with its base code
    DEFINITION = "definition"    # what the codes are
    HOW_VALUED = "how-valued"    # how CMS set the RVUs
    POLICY = "policy"            # no code: rule text only


class Setting(StrEnum):
    """Which payment the question is about."""
    BOTH = "both settings"
    NON_FACILITY = "non-facility (office)"
    FACILITY = "facility"


@dataclass(frozen=True, kw_only=True)
class QuestionPlan:
    """The typed reading of one question."""
    named_codes: tuple[str, ...]         # written out in the question
    family_codes: tuple[str, ...]        # added by family expansion (not written out)
    families: tuple[str, ...]
    years: tuple[int, ...]               # calendar years asked for, ascending; () = the recent years
    since: int | None                    # "since 2023": every year from then on
    proposed: bool                       # the question asks about a proposed rule
    setting: Setting
    intents: tuple[Intent, ...]
    measure: str = "payment"             # what figures compare: "payment", "work_rvu", "pe_rvu", "mp_rvu", "total_rvu"
    places: tuple[str, ...] = ()         # payment localities the question names (set once they are looked up)
    ambiguous_place: bool = False        # the place named matches several localities: all are shown
    comments: bool = False               # the question asks what commenters said (their views are quoted as theirs)
    modifier: str = ""                   # a payment modifier asked ("71046-26", "professional component"): its rows
    parts: tuple[str, ...] = ()          # parts of a row asked beyond RVUs and payments: status, pe, mp, global
    indicators: tuple[str, ...] = ()     # payment policy indicators asked (data/indicators.toml keys: pctc, bilat_surg)
    reasons: bool = False                # "Why did 99490's payment go up in 2026?": what moved it (RVUs, CF)
    setting_gap: bool = False            # "the difference between the facility and non-facility payment": per row
    units: tuple[tuple[str, int], ...] = ()   # "99497 plus two units of 99498": (code, count) of a count above one
    volume: Volume | None = None         # "100 patients a month for a year": what the codes bring in at that volume
    bundles: tuple[tuple[str, ...], ...] = ()   # "99491 alone or 99490 plus 99439": two sides, one billed together
    versus_national: bool = False        # "99214 in Alaska compared to national": a place's amount against the nation's
    switched: tuple[str, str] = ()       # "moving 300 patients from 99490 to G0557": (from, to), alternatives weighed
    dates: tuple[date, date] | None = None   # "on February 1, 2024", "in January 2024": the days of service asked
    periods: tuple[tuple[date, date], ...] = ()   # every span of days asked ("January 2024 versus January 2025")
    ratio: tuple[str, str] = ()          # "how many 99213 equal one 27447": (numerator, denominator) codes, divided
    ratio_percent: bool = False          # "what percent of 27447 is 99213": the ratio said as a percent
    share: str = ""                      # "what percent of 99214's RVUs is practice expense": "work", "pe" or "mp"
    qp: bool = False                     # "for a qualifying APM participant (QP)": the QP conversion factor's amounts
    stated: Decimal | None = None        # "my MAC paid $92.03 for 99213 — does that match?": an amount to check
    cf_change: Decimal | None = None     # "what would a 10% conversion factor cut mean for 99214": -10 (percent)
    statistic: str = ""                  # "the average APCM payment", "median of 99202-99205": "mean" or "median"
    crossed: tuple[tuple[str, int], ...] = ()   # "99213 in 2026 vs 99214 in 2025": ((code, year), (code, year))
    other_modifiers: tuple[str, ...] = ()   # "99214-25", "modifier 95": modifiers the file has no rows for (said)
    rate: str = ""                       # "what is 99490 worth per hour": "hour" or "minute", from the code's minutes
    minutes: int | None = None           # "a 40-minute visit": the minutes the question gives its one code
    cf_year: int | None = None           # "what would 99214 pay at the 2020 CF": that year's final CF, as a what-if
    cf_value: Decimal | None = None      # "what would 99214 pay if the CF were $35": that CF, as a what-if
    target: Decimal | None = None        # "how many 99213 visits does it take to earn $10,000": that amount
    threshold: tuple[str, Decimal] | None = None   # "how many of 99202-99205 pay over $150": ("over", 150)
    qp_versus: bool = False              # "the difference between the QP and non-QP payment": the two CFs' amounts
    coinsurance: bool = False            # "Medicare's 80% share", "the patient's 20% coinsurance": the amount split
    screening: bool = False              # "a screening colonoscopy" named: a polyp removed lowers the coinsurance
    patient_share: bool = False          # the patient's part is asked, not Medicare's ("the patient's coinsurance")
    practitioner: tuple[str, Decimal, str] | None = None   # who bills it, at a share of the fee: ("nurse practitioner", 0.85, law)
    nonpar: str = ""                     # "a non-participating physician": "nonpar"; "the limiting charge": "limiting"
    same_session: bool = False           # "11042 and 17000 in the same session": the multiple-procedure rule applies
    units_one_day: bool = False          # "4 units of 97110": one line's units, billed for one day (the therapy MPPR)
    units_alternatives: bool = False     # "four 97530 or four 97110": each code's units a day of its own, compared
    part_share: str = ""                 # "what share of 93306's global is the professional component": "26" or "TC"
    sequestration: bool = False          # "after the 2% sequestration": Medicare's share less 2%
    extreme: str = ""                    # "which locality pays the most for 99213": "most", "least" or "both"
    summed: bool = False                 # "the total of G0556, G0557 and G0558", "combined": a sum asked in words
    components: bool = False             # "do 71046-26 and 71046-TC add up to the global?": both components and global

    @property
    def focus_codes(self) -> tuple[str, ...]:
        """Codes the answer is about: those written out, else the named families' members."""
        return self.named_codes or self.family_codes

    @property
    def earliest_year(self) -> int | None:
        """The earliest year the question reaches back to."""
        asked = [y for y in (*self.years, self.since) if y is not None]
        return min(asked) if asked else None

    def year_in_focus(self, cy: int, proposed: bool, newest_final: int) -> bool:
        """Is a row of this CY (final or proposed) one the question asks about?"""
        if self.since is not None:
            return cy >= self.since
        if self.years:
            return cy in self.years
        if self.proposed:
            return proposed
        if Intent.TREND in self.intents:        # "Has the work RVU of 99487 ever changed?": every year shown
            return True
        return proposed or cy == newest_final

    def summary(self) -> str:
        """'compare 99490 with 99439, CY2026, both settings' — how the question was understood."""
        where = ""
        if self.places:
            where = ("in " + ", ".join(self.places)
                     + (" (the place named matches several localities: all shown)" if self.ambiguous_place else ""))
        said = "with what commenters said" if self.comments else ""
        why = "why it changed (total RVUs and conversion factor)" if self.reasons else ""
        modifier = f"modifier {self.modifier} rows" if self.modifier else \
            ("the professional (26) and technical (TC) components beside the global" if self.components else "")
        parts = ("asks for the " + listed([_PART_NAMES[p] for p in self.parts])) if self.parts else ""
        counted = ("billed " + listed([f"{n} × {code}" for code, n in self.units])) if self.units else ""
        if self.units_alternatives:     # "four 97530 or four 97110": compared, each a day of its own
            counted = "compared: " + " or ".join(f"{n} × {code}" for code, n in self.units) + ", each on a day of its own"
        volume = f"at a volume of {self.volume.describe()}" if self.volume else ""
        rate = (f"the amount per {self.rate}" + (f" at {self.minutes} minutes" if self.minutes else "")) \
            if self.rate else ""
        extreme = {"most": "the locality paying the most", "least": "the locality paying the least",
                   "both": "the localities paying the most and the least"}.get(self.extreme, "")
        asked = ", ".join(part for part in (extreme, "Medicare's 80% and the patient's coinsurance" if self.coinsurance
                                            else "", "their sum" if self.summed else "") if part)
        return "; ".join(part for part in (self._what(), why, modifier, parts, counted, volume, rate, asked, said,
                                           where, self._when(), self.setting.value) if part)

    def _what(self) -> str:
        codes = list(self.focus_codes)
        verbs = ", ".join(i.value for i in self.intents)
        if not codes:
            return f"{verbs} (no code named: rule text only)"
        shown = listed(codes)
        if Intent.COMPARE in self.intents and len(codes) > 1:
            shown = f"{codes[0]} with {listed(codes[1:])}"
        family = f" (family {', '.join(self.families)})" if self.families and not self.named_codes else ""
        return f"{verbs}: {shown}{family}"

    def _when(self) -> str:
        if self.since is not None:
            return f"CY{self.since} onwards"
        if self.years:
            return ", ".join(f"CY{y}" for y in self.years) + (" (proposed rule)" if self.proposed else "")
        if self.proposed:
            return "the proposed rule"
        return "every year" if Intent.TREND in self.intents else "the newest final year (other years one click away)"


def listed(codes: Sequence[str]) -> str:
    """'A', 'A and B', 'A, B and C'."""
    return ", ".join(codes[:-1]) + f" and {codes[-1]}" if len(codes) > 1 else codes[0]


_MONTHS = {m: i for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july", "august",
                                        "september", "october", "november", "december"), start=1)}
_MONTH = r"(jan(?:uary|\.)?|feb(?:ruary|\.)?|mar(?:ch|\.)?|apr(?:il|\.)?|may|june?|july?|aug(?:ust|\.)?|" \
         r"sep(?:t(?:ember|\.)?|\.)?|oct(?:ober|\.)?|nov(?:ember|\.)?|dec(?:ember|\.)?)"
_DAY = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(20[1-3]\d)\b|\b(\d{{1,2}})/(\d{{1,2}})/(20[1-3]\d)\b|"
                  r"\b(20[1-3]\d)-(\d\d)-(\d\d)\b", re.IGNORECASE)
_MONTH_OF = re.compile(rf"\b{_MONTH}\s+(?:of\s+)?(20[1-3]\d)\b", re.IGNORECASE)
_BEFORE_AFTER = re.compile(r"\b(before|prior to|until|after|from|since|on or after)\s+$", re.IGNORECASE)


def _month_number(word: str) -> int:
    return next(number for name, number in _MONTHS.items() if name.startswith(word.lower().rstrip(".")[:3]))


_QUARTER = re.compile(r"\b(?:(?P<word>first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter\s+(?:of\s+)?(?:CY\s?)?"
                      r"(?P<year>20[1-3]\d)|Q(?P<n>[1-4])\s*(?:of\s+)?(?:CY\s?)?(?P<year2>20[1-3]\d)|"
                      r"(?P<year3>20[1-3]\d)\s*Q(?P<n2>[1-4]))\b", re.IGNORECASE)
_QUARTER_WORDS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}


def asked_periods(text: str) -> tuple[tuple[date, date], ...]:
    """Every span of days of service a question names, as (first, last): a date ("on February 1, 2024", "2/1/2024",
    "2024-02-01"), a month ("in January 2024": its days), a quarter ("the first quarter of 2024", "Q1 2024"), or a
    date after "before" / "after" ("before March 9, 2024": January 1 to March 8).

    >>> asked_periods("What did 99214 pay in January 2024 versus January 2025?")
    ((datetime.date(2024, 1, 1), datetime.date(2024, 1, 31)), (datetime.date(2025, 1, 1), datetime.date(2025, 1, 31)))
    >>> asked_periods("99213 in the first quarter of 2024")
    ((datetime.date(2024, 1, 1), datetime.date(2024, 3, 31)),)
    """
    spans = []
    for m in _DAY.finditer(text):
        try:
            if m.group(1):
                day = date(int(m.group(3)), _month_number(m.group(1)), int(m.group(2)))
            elif m.group(4):
                day = date(int(m.group(6)), int(m.group(4)), int(m.group(5)))
            else:
                day = date(int(m.group(7)), int(m.group(8)), int(m.group(9)))
        except ValueError:
            continue
        side = _BEFORE_AFTER.search(text[:m.start()])
        if side and side.group(1).lower() in ("before", "prior to"):
            spans.append((date(day.year, 1, 1), day - timedelta(days=1)))
        elif side and side.group(1).lower() == "until":
            spans.append((date(day.year, 1, 1), day))
        elif side and side.group(1).lower() == "after":
            spans.append((day + timedelta(days=1), date(day.year, 12, 31)))
        elif side:
            spans.append((day, date(day.year, 12, 31)))
        else:
            spans.append((day, day))
    masked = _DAY.sub(" ", text)
    for m in _MONTH_OF.finditer(masked):
        year, month = int(m.group(2)), _month_number(m.group(1))
        if m.group(1).lower() == "may" and not re.search(r"\b(?:in|of|during|for)\s+$", masked[:m.start()], re.I):
            continue                                   # "may 2025 ..." as a verb is not a month
        last = (date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1))
        spans.append((date(year, month, 1), last))
    for m in _QUARTER.finditer(masked):
        year = int(m.group("year") or m.group("year2") or m.group("year3"))
        n = _QUARTER_WORDS.get((m.group("word") or "").lower()) or int(m.group("n") or m.group("n2"))
        spans.append((date(year, 3 * n - 2, 1), date(year + n // 4, 3 * n % 12 + 1, 1) - timedelta(days=1)))
    return tuple(sorted({s for s in spans if s[0] <= s[1]}))


def asked_dates(text: str) -> tuple[date, date] | None:
    """The one span of days of service a question names (`asked_periods`); None when it names none, or several.

    >>> asked_dates("What did 99214 pay on February 1, 2024?")
    (datetime.date(2024, 2, 1), datetime.date(2024, 2, 1))
    >>> asked_dates("99214 in January 2024")
    (datetime.date(2024, 1, 1), datetime.date(2024, 1, 31))
    >>> asked_dates("99214 for services before March 9, 2024")
    (datetime.date(2024, 1, 1), datetime.date(2024, 3, 8))
    """
    spans = asked_periods(text)
    return spans[0] if len(spans) == 1 else None


def _years(text: str, today: date) -> tuple[tuple[int, ...], int | None]:
    years: set[int] = set()
    for m in RANGE.finditer(text):
        first, last = sorted(int(y) for y in m.groups() if y)
        years.update(range(first, last + 1))
    masked = RANGE.sub(" ", text)
    since = next((int(m.group(1)) for m in SINCE.finditer(masked)), None)
    years.update(int(m.group(1)) for m in YEAR.finditer(SINCE.sub(" ", masked)))
    years.update(int(m.group(1)) for m in _OLD_YEAR.finditer(masked))      # "in 1999": before any file, said so
    years.update(int(m.group(1)) for m in _FAR_YEAR.finditer(masked))      # "in 2099": past any file, said so
    if since is None and (m := _SINCE_RELATIVE.search(text)):     # "since last year": every year from then on
        since = today.year + RELATIVE[m.group(1).lower()]
        text = _SINCE_RELATIVE.sub(" ", text)
    years.update(today.year + RELATIVE[m.group(1).lower()] for m in _RELATIVE.finditer(text))
    # "the year before last", "two years ago"; "last year and the year before": the year before last year
    for m in _YEARS_AGO.finditer(text):
        ago = (m.group(1) or "two").lower()
        years.add(today.year - (COUNT_WORDS.get(ago) or int(ago)))
    if years and _YEAR_BEFORE.search(text):
        years.add(min(years) - 1)
    # "now", "today", "currently" beside another year: this year too ("two years ago, and now"); alone they ask the
    # newest values, which no year asked already gives
    if years and _NOW.search(text):
        years.add(today.year)
    # "over the past three years", "the last 2 years": the newest n years, this one included
    for m in _PAST_YEARS.finditer(text):
        n = COUNT_WORDS.get(m.group(1).lower()) or int(m.group(1))
        years.update(range(today.year - n + 1, today.year + 1))
    return tuple(sorted(years)), since


_NOW = re.compile(r"\b(?:now|today|currently|at present|these days)\b", re.IGNORECASE)
_YEARS_AGO = re.compile(r"\b(two|three|four|five|\d)\s+years?\s+ago\b|\byear before last\b()", re.IGNORECASE)
_YEAR_BEFORE = re.compile(r"\b(?:and|or|vs\.?|versus|compared (?:to|with))\s+the\s+(?:year|one)\s+before\b(?!\s+(?:last|20))",
                          re.IGNORECASE)
_PAST_YEARS = re.compile(r"\b(?:last|past|previous|recent)\s+(two|three|four|five|[2-9])\s+years\b", re.IGNORECASE)


_GAP = re.compile(r"\b(?:difference|differ\w*|gap|spread|vs\.?|versus|compared?|comparison|more|less|lower|higher|"
                  r"between)\b", re.IGNORECASE)


COUNT_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
                "twice": 2}
_COUNT = r"(\d{1,3}|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty)"
_UNIT_WORDS = COUNT_WORDS | {"eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20}
# a count written as a word right before a code ("99487 plus two 99489", "three 97110"): a digit there may be a code's
# neighbour in a list, a word never is
_WORD_BEFORE = r"(two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty)\s+" \
    r"(?:more\s+|additional\s+|extra\s+)?"
# ... and not a count of visits or patients of the code ("two 99213 visits a month": a volume)
_NOT_A_VOLUME = r"(?!\s+(?:visits?|services?|patients?|encounters?|claims?|sessions?|calls?)\b)"


# "3 units of therapeutic exercise 97110", "2 units of manual therapy (97140)": words naming the service between the
# count and its code (never a joining word, so "2 units of 97110 and manual therapy 97140" counts 97110 alone)
_NAMED_UNITS = r"\s+units?\s+of\s+(?:(?!(?:and|or|plus|with|vs|versus)\b)[A-Za-z][\w/-]*\s+){1,4}\(?\s*"


def _counted(text: str, codes: tuple[str, ...]) -> tuple[str, ...]:
    """The written codes the text gives a count of ("2 units of 77080", "99439 x 3", "10 99213s").

    >>> _counted("10 99213s and 5 units of 93000 and 99214", ("99213", "93000", "99214"))
    ('99213', '93000')
    """
    return tuple(code for code in codes for c in [re.escape(code)] if re.search(
        rf"\b{_COUNT}\s+(?:units?\s+of\s+|times\s+|x\s*|×\s*|\*\s*)?(?:CPT\s+|HCPCS\s+|code\s+)?{c}(?:'|\u2019)?s?\b"
        rf"|\b{_COUNT}(?:x|×)\s*{c}\b|\b{c}\s*(?:x|×|\*)\s*{_COUNT}\b|\b{_COUNT}{_NAMED_UNITS}{c}\b"
        rf"|\b{_WORD_BEFORE}{c}\b{_NOT_A_VOLUME}", text,
        re.IGNORECASE))


def counts_per_code(text: str, codes: tuple[str, ...]) -> bool:
    """A count written on a code is that code's own when two codes are counted ("10 99213s and 5 93000s") or when
    another code is named beside the one counted, with no rate ("a 99205 and 2 99214s": the 99205 is one).

    >>> counts_per_code("A 99205 and 2 99214s in 2026", ("99205", "99214")), counts_per_code("30 99213s", ("99213",))
    (True, False)
    >>> counts_per_code("20 99213s a month and 99214", ("99213", "99214"))
    False
    """
    counted = _counted(text, codes)
    return len(counted) > 1 or (len(counted) == 1 and len(set(codes)) > 1 and not _RATE_ANYWHERE.search(text))


def asked_units(text: str, codes: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    """How many of a written code the question bills, when more than one: "two units of 99498", "99439 x3",
    "3 × 99439", "99439 billed twice" (counts 2-99; a count of one is the default and not listed).

    >>> asked_units("What is 99497 plus two units of 99498 in 2026?", ("99497", "99498"))
    (('99498', 2),)
    >>> asked_units("99490 + 99439 x 3", ("99490", "99439")), asked_units("99213 in 2026", ("99213",))
    ((('99439', 3),), ())
    >>> asked_units("What does 99487 plus two 99489 pay?", ("99487", "99489"))
    (('99489', 2),)
    """
    found: dict[str, int] = {}
    # "10 99213s and 5 93000s", "a 99205 and 2 99214s": with another code beside it, each count is its code's own
    plural = counts_per_code(text, codes)
    for code in codes:
        c = re.escape(code)
        for pattern in (rf"\b{_COUNT}\s+(?:units?|times|x|×|\*)\s+(?:of\s+)?(?:CPT\s+|HCPCS\s+|code\s+)?{c}\b",
                        rf"\b{_COUNT}(?:x|×)\s*{c}\b",                                          # "3x 97110"
                        rf"\b{_COUNT}{_NAMED_UNITS}{c}\b",                     # "3 units of therapeutic exercise 97110"
                        rf"\b{c}\s*(?:x|×|\*)\s*{_COUNT}\b",
                        rf"\b{c}\s+(?:billed\s+|reported\s+)?(?:{_COUNT}\s+times|(twice))\b(?!\s*(?:(?:a|an|per|"
                        rf"each|every)\s+|/\s*)(?:week|wk|month|mo|day|year)\b|\s+(?:weekly|monthly|daily))",
                        rf"\b{_WORD_BEFORE}{c}\b{_NOT_A_VOLUME}",                  # "99487 plus two 99489"
                        *[rf"\b{_COUNT}\s+{c}(?:(?:'|\u2019)?s\b|\s+(?:visits?|services?|encounters?|units?)\b)",
                          rf"\b{_COUNT}\s+{c}\b{_NOT_A_VOLUME}"] * plural):       # "150 99214 and 40 99215"
            m = re.search(pattern, text, re.IGNORECASE)
            if m:
                word = next(g for g in m.groups() if g).lower()
                count = _UNIT_WORDS.get(word) or int(word)
                if count > 1:
                    found[code] = count
                break
    return tuple(found.items())


@dataclass(frozen=True)
class Volume:
    """A volume the question prices ("100 patients a month for a year", "a panel of 500 CCM patients annually",
    "40 visits a week"): `count` of `noun` per `per` ("month", "week", "year" or "" for no rate), over `months`
    months (0: no span written; a yearly word makes 12)."""
    count: int
    noun: str
    per: str = ""
    months: int = 0
    weeks: int = 0          # a span written in weeks ("46 weeks", "48 weeks a year"): for a weekly or daily rate
    days_a_week: int = field(default=0, repr=False)    # a daily rate's days a week ("5 days a week", "a 5-day week")
    days: int = field(default=0, repr=False)           # a daily rate's days in all ("over 250 working days")
    # visits at a frequency, each billing the units written ("3 units of 97110 twice a week"): the units are each
    # visit's, billed on its day, so they are not the volume's count (plan_question keeps them)
    per_visit: bool = field(default=False, repr=False)

    def describe(self) -> str:
        """'100 patients a month for 12 months', 'a panel of 500 patients over 12 months', '250 visits'."""
        rate = f" a {self.per}" if self.per else ""
        span = f" for {self.days} days" if self.days else \
            f", {self.days_a_week} days a week" * bool(self.days_a_week) + (
                f" for {self.weeks} weeks" if self.weeks else f" for {self.months} months" if self.months else "")
        return f"{self.count:,} {self.noun}{rate}{span}"

    def services(self, monthly: bool, once: bool = False) -> tuple[int, str]:
        """How many payments the volume bills, and how (for the sentence): a rate times the span's periods; a
        yearly count (or a count over a span) of patients of a code paid per calendar month, once per patient per
        month; otherwise the count itself (one payment each)."""
        months = self.months
        if self.per == "day":       # "20 a day, 5 days a week, 50 weeks a year"; "25 a day over 250 working days"
            if self.days:
                return self.count * self.days, f"{self.count:,} a day × {self.days:,} days"
            if self.days_a_week:
                weeks = self.weeks or (round(months * 52 / 12) if months else 1)
                return self.count * self.days_a_week * weeks, (f"{self.count:,} a day × {self.days_a_week} days a "
                                                               f"week × {weeks} week{'s' * (weeks != 1)}")
            return self.count, f"{self.count:,} a day for one day; no number of days was given"
        if self.per == "month":
            n = max(months, 1)
            return self.count * n, (f"{self.count:,} a month × {n} months" if months else "")
        if self.per == "week":
            weeks = self.weeks or (round(months * 52 / 12) if months else 1)
            return self.count * weeks, (f"{self.count:,} a week × {weeks} weeks" if self.weeks or months else "")
        if self.per == "year" and months > 12:
            return self.count * (months // 12), f"{self.count:,} a year × {months // 12} years"
        if once and self.noun in _PEOPLE:     # RPM set-up (99453): once per patient's episode of care, not a month
            return self.count, f"{self.count:,} patient{'s' * (self.count != 1)}, once per episode of care"
        if monthly and months and self.noun in _PEOPLE:
            who = "1 patient billed" if self.count == 1 else f"{self.count:,} patients each billed"
            return self.count * months, f"{who} once a calendar month × {months} months"
        return self.count, ""


_PEOPLE = ("patients", "beneficiaries", "enrollees", "members", "people", "lives")
_VOLUME_NOUN = re.compile(r"(?P<noun>patients?|pts|beneficiar(?:y|ies)|benes|enrollees?|members?|people|lives|"
                          r"visits?|services?|claims?|encounters?|calls?|sessions?|units?|discharges?|admissions?|"
                          r"referrals?|procedures?|episodes?|times|cases?|surger(?:y|ies)|operations?|injections?|"
                          r"scans?|tests?|exams?|studies|treatments?|infusions?|screenings?|deliveries|knees|hips|add-ons?|"
                          r"replacements?|(?-i:[A-Z]{2,5}s?))\b",
                          re.IGNORECASE)
_WORD_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
                 "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "twenty-five": 25, "thirty": 30, "forty": 40,
                 "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "a dozen": 12, "one dozen": 12,
                 "two dozen": 24, "a hundred": 100, "one hundred": 100, "two hundred": 200, "a thousand": 1000,
                 "one thousand": 1000}
_WORD_COUNT = re.compile(r"\b(" + "|".join(sorted((w.replace(" ", r"\s+") for w in _WORD_NUMBERS), key=len,
                                                 reverse=True)) + r")\b(?=\s+(?:[A-Va-v]\d{4}|\d{5})|\s+(?:\w+\s+){0,2}?"
                         r"(?:patients?|visits?|services?|claims?|units?|procedures?|encounters?|sessions?)\b)",
                         re.IGNORECASE)
# "30 99213s", "200 99497's"; "5000 99213 a year" (a count of a code with a rate after it)
_CODE_PLURAL = re.compile(r"(?<![\w.$,])(\d{1,3}(?:,\d{3})+|\d{1,6})\s+([A-Va-v]\d{4}|\d{5})(?:(?:'|\u2019)?s\b|"
                          r"(?=\s+(?:(?:a|per|each|every)\s+(?:year|yr|month|week|day)|annually|yearly|monthly|"
                          r"weekly|daily)\b))")
_NOUNS = {"patient": "patients", "pts": "patients", "beneficiary": "beneficiaries", "benes": "beneficiaries",
          "enrollee": "enrollees", "member": "members"}
_VOLUME = re.compile(r"(?<![\w.$,])(?P<count>\d{1,3}(?:,\d{3})+|\d{1,6})\s+"
                     r"(?P<between>(?:(?:[A-Za-z][\w/&-]*|[A-Z]?\d{4}[A-Z0-9]?)\s+){0,3}?)"
                     + _VOLUME_NOUN.pattern, re.IGNORECASE)
_PER = re.compile(r"^\W{0,3}(?:(?:a|per|each|every|/)\s*(?P<per>month|mo|week|wk|year|yr|day)\b|"
                  r"(?P<adverb>monthly|weekly|annually|yearly|per\s+annum|daily)\b)", re.IGNORECASE)
# ("for a day", "in a day": one day, not a rate)
_RATE_ANYWHERE = re.compile(r"\b(?:(?<!\bfor )(?<!\bin )(?<!\bon )(?:a|per|each|every)\s+(?P<per>month|week|day)"
                            r"(?![\s-]+(?:weeks?|months?))|"
                            r"(?P<adverb>monthly|weekly|daily))\b|/\s*(?P<slash>mo|month|wk|week|day)\b",
                            re.IGNORECASE)
# a daily rate's days: "5 days a week", "a 5-day week", "four days per week"; "250 working days", "220 clinic days"
_DAYS_A_WEEK = re.compile(r"\b(?P<n>[1-7]|one|two|three|four|five|six|seven)(?:\s+(?:clinic\s+|working\s+|office\s+)?"
                          r"days?\s+(?:a|per|each|every)\s+week|[\s-]day\s+(?:work\s*)?week)\b", re.IGNORECASE)
_DAYS = re.compile(r"\b(?P<n>\d{1,3}(?:,\d{3})?)\s+(?:(?:working|work|clinic|business|office|billable|open)\s+)?"
                   r"days\b(?!\s+(?:a|per|each|every)\s+week)", re.IGNORECASE)
_SPAN = re.compile(r"\b(?:for|over|across|in|during)\s+(?:a|one|(?P<n>\d{1,2}|two|three|four|five|six|seven|eight|"
                   r"nine|ten|eleven|twelve|eighteen|twenty-four))\s+(?:full\s+|whole\s+|calendar\s+)?"
                   r"(?P<unit>years?|months?)\b", re.IGNORECASE)
# a rate over a whole year written another way: "over 2026", "over the year", "for the whole year", "all year"
_WHOLE_YEAR = re.compile(r"\b(?:over|across|during|throughout|for)\s+(?:all\s+of\s+)?"
                         r"(?:the\s+(?:whole\s+|full\s+|entire\s+)?"
                         r"(?:calendar\s+)?year|(?:all\s+of\s+)?(?:CY\s?)?20[1-3]\d)\b(?!\s*(?:to|-|through|and|vs))"
                         r"|\ball\s+(?:of\s+)?(?:the\s+)?year\b|\b(?:a|the)\s+(?:whole|full|entire)\s+year\b",
                         re.IGNORECASE)
# a service billed once every month for one patient ("billed every month", "each month", "monthly")
_EVERY_MONTH = re.compile(r"\b(?:bill(?:ed|s|ing)?|paid|furnished|provided)\s+(?:every|each|once\s+(?:a|per|each))\s+"
                          r"(?:calendar\s+)?month\b|\bbill(?:ed|s|ing)?\s+monthly\b", re.IGNORECASE)
_ONE_PATIENT = re.compile(r"\b(?:per|for|of|with|each)\s+(?:one|a|an|each|a\s+single|1)\s+(?:single\s+)?"
                          r"(?:patient|beneficiary|pt|enrollee)\b|\bper[- ]patient\b", re.IGNORECASE)
_YEARLY = re.compile(r"\b(?:annual(?:ly|i[sz]ed)?|yearly|(?:a|per|each|every)\s+(?:year|yr)|per annum)\b|/\s*yr\b",
                     re.IGNORECASE)
# Words between a count and its noun that show the count is not of the noun ("3 chronic conditions of patients",
# "20 minutes for patients")
_NOT_BETWEEN = re.compile(r"\b(?:for|of|with|to|in|at|per|an?|the|and|or|pays?|paid|is|are|be|by|from|on|minutes?|"
                          r"mins?|hours?|days?|percent|conditions?|RVUs?|dollars?)\b", re.IGNORECASE)
_WEEKS = re.compile(r"\b(\d{1,2})\s+weeks?\b", re.IGNORECASE)
_SPAN_NUMBERS = COUNT_WORDS | {"one": 1, "eleven": 11, "twelve": 12, "eighteen": 18, "twenty-four": 24}
# a frequency of visits: "twice a week", "3 times per week", "2x/week", "three sessions weekly", "once a month"
_FREQUENCY = re.compile(r"\b(?:(?P<word>once|twice|thrice)|(?P<n>[1-7]|one|two|three|four|five|six|seven)\s*"
                        r"(?:x|×|times|visits?|sessions?|treatments?|days?)(?=[\s/]))\s*"
                        r"(?:(?:(?:a|an|per|each|every)\s+|/\s*)(?P<per>week|wk|month|mo)\b|(?P<adverb>weekly|monthly)\b)",
                        re.IGNORECASE)
_FREQUENCY_WORDS = {"once": 1, "twice": 2, "thrice": 3}
# units billed every day: "4 units of 97110 a day", "97110 x 3 daily"
_DAILY = re.compile(r"\b(?:a|per|each|every)\s+day\b(?![\s-]+(?:weeks?|months?))|\bdaily\b", re.IGNORECASE)
# units written on a code: "3 units of 97110", "97110 x 3", "3x 97110", "one unit of 97140"
_UNITS_WRITTEN = re.compile(r"\bunits?\b|\b[0-9A-Z]\d{3}[0-9A-Z]\s*(?:x|×|\*)\s*\d\b|\b\d\s*(?:x|×)\s*[0-9A-Z]\d{3}[0-9A-Z]\b",
                            re.IGNORECASE)


def _span_months(text: str) -> int | None:
    """The months of a span written ("for a year": 12, "over 6 months": 6), None when none is.

    >>> _span_months("for two years"), _span_months("over 6 months"), _span_months("in 2026")
    (24, 6, None)
    """
    span = _SPAN.search(text)
    if not span:
        return None
    n = span.group("n")
    n = 1 if n is None else (_SPAN_NUMBERS.get(n.lower()) or int(n))
    return n * 12 if span.group("unit").lower().startswith("y") else n


def _visits_at_frequency(text: str, units: bool = True) -> Volume | None:
    """Units billed at each of a number of visits ("3 units of 97110 twice a week for 6 weeks", "97110 x 3, 3 times
    a week for 4 weeks"): the volume is the visits (2 a week for 6 weeks), each visit billing the units written.

    >>> v = _visits_at_frequency("97110 x 3 units twice a week for 6 weeks")
    >>> v.services(False), v.per_visit
    ((12, '2 a week × 6 weeks'), True)
    >>> _visits_at_frequency("3 units of 97530 3x/week for 2 months").services(False)
    (27, '3 a week × 9 weeks')
    >>> _visits_at_frequency("20 patients a day, 5 days a week") is None
    True
    >>> _visits_at_frequency("4 units of 97110 for 30 patients, twice a week for 10 weeks").services(False)
    (600, '60 a week × 10 weeks')
    >>> _visits_at_frequency("4 units of 97110 a day for 10 days").services(False)
    (10, '1 a day × 10 days')
    """
    daily = _DAILY.search(text) if units else None
    days = _DAYS.search(text)
    if daily and days and _UNITS_WRITTEN.search(text[:daily.start()] + " " + text[daily.end():]):
        # "4 units of 97110 a day for 10 days": a visit a day, each billing the units written
        return Volume(count=1, noun="visits", per="day", days=int(days.group("n").replace(",", "")), per_visit=True)
    found = _FREQUENCY.search(text)
    if found is None or (units and not _UNITS_WRITTEN.search(text[:found.start()] + " " + text[found.end():])):
        return None         # (`units` False: "99213 twice a week for 6 weeks", a frequency of visits alone)
    word = found.group("word")
    count = _FREQUENCY_WORDS[word.lower()] if word else (_SPAN_NUMBERS.get(found.group("n").lower()) or
                                                        int(found.group("n")))
    per = "month" if (found.group("per") or found.group("adverb")).lower().startswith("mo") else "week"
    # "for 30 patients, twice a week": each patient's visits
    people = re.search(r"(?<![\w.$,])(\d{1,3}(?:,\d{3})+|\d{1,5})\s+(?:patients|beneficiaries|people|members)\b", text,
                       re.IGNORECASE)
    count *= int(people.group(1).replace(",", "")) if people else 1
    months = _span_months(text)
    if months is None:
        months = 12 if _YEARLY.search(text) or _WHOLE_YEAR.search(text) else 0
    weeks = _WEEKS.search(text)
    return Volume(count=count, noun="visits", per=per, months=months,
                  weeks=int(weeks.group(1)) if weeks and per == "week" else 0, per_visit=units)


@lru_cache(maxsize=1)
def _family_acronyms() -> frozenset[str]:
    return frozenset(syn.upper() for f in load_families() for syn in f.synonyms if syn.isupper())


# a minus sign or word right before a number ("-20 visits", "cut by -5%", "minus 3 percent")
NEGATIVE_BEFORE = re.compile(r"(?:^|[\s(:])(?:-|\u2212|minus\s+|negative\s+)$", re.IGNORECASE)


def asked_volume(text: str, codes: tuple[str, ...] = (), written: tuple[str, ...] | None = None) -> Volume | None:
    """The volume a question prices, if it writes one: a count of patients, visits, claims or services (not one of
    the codes or years written), its rate ("a month", "per week", "annually") and the span ("for a year", "over 6
    months", "annual").

    >>> asked_volume("What would a practice earn billing G0557 for 100 patients a month for a year?")
    Volume(count=100, noun='patients', per='month', months=12, weeks=0)
    >>> asked_volume("annual revenue for a panel of 500 CCM patients")
    Volume(count=500, noun='patients', per='', months=12, weeks=0)
    >>> asked_volume("What does 99487 pay for patients with 3 chronic conditions?") is None
    True
    >>> asked_volume("99490 for 60 minutes with 2 patients") , asked_volume("99490 in 2026") is None
    (Volume(count=2, noun='patients', per='', months=0, weeks=0), True)
    >>> asked_volume("99214 billed 20 times a month in 2026: annual revenue?")
    Volume(count=20, noun='services', per='month', months=12, weeks=0)
    >>> asked_volume("We do 40 99213 visits a week", ("99213",)).count, asked_volume("5 total knees (27447) a month").count
    (40, 5)
    >>> asked_volume("What would 25 visits a month of 99214 bring in over 2026?").months
    12
    >>> asked_volume("We see 40 patients a month for 99213. What's that over the year in 2026?").months
    12
    >>> asked_volume("What do 40 patients a month of 99213 bring in, in 2026?").months
    0
    >>> asked_volume("20 patients a day for 99213, 5 days a week, 50 weeks a year").services(False)
    (5000, '20 a day × 5 days a week × 50 weeks')
    >>> asked_volume("25 99213 visits per day over 250 working days", ("99213",)).services(False)
    (6250, '25 a day × 250 days')
    >>> asked_volume("12 99215 visits a day over a 5-day week", ("99215",)).services(False)[0]
    60
    >>> asked_volume("What do 30 99213s pay?", ("99213",)).count, asked_volume("200 99497's in 2026", ("99497",)).count
    (30, 200)
    >>> asked_volume("if we bill 5000 99213 a year", ("99213",)).services(False)
    (5000, '')
    >>> asked_volume("What do a dozen 99497s pay?", ("99497",)).count, asked_volume("twenty office visits a week").count
    (12, 20)
    """
    original = text
    visits = _visits_at_frequency(text)
    if visits is not None:
        return visits
    # "What does 99490 pay per year if billed every month?": one patient's services, once a month over the span
    if _EVERY_MONTH.search(text) and (_YEARLY.search(text) or _span_months(text)) and \
            not re.search(r"\d[\d,]*\s+(?:patients|beneficiaries|people|members|visits|services)\b", text, re.IGNORECASE):
        return Volume(count=1, noun="services", per="month", months=_span_months(text) or 12)
    # "a year of RPM for one patient", "99490 per patient per year": one patient over the span, each code billed as
    # its payment unit says (a month's codes each month, a set-up once)
    if _ONE_PATIENT.search(text) and (_YEARLY.search(text) or _span_months(text)) and \
            any(payment_unit(c) in PERIODIC_UNITS for c in codes):
        return Volume(count=1, noun="patients", months=_span_months(text) or 12)
    # "a dozen 99497s", "twelve 99213 visits": a count written in words, as digits
    text = _WORD_COUNT.sub(lambda m: str(_WORD_NUMBERS[" ".join(m.group(1).lower().split())]), text)
    # "30 99213s", "200 99497's": a count of a code written in the plural counts its services (unless two codes are
    # counted, "10 99213s and 5 93000s": each count is then its code's units, asked_units)
    if not counts_per_code(text, codes if written is None else written):      # `written`: the codes written out
        text = _CODE_PLURAL.sub(r"\1 \2 services", text)
    elif not _RATE_ANYWHERE.search(text):
        return None         # "3 99232 visits and 2 99233 visits", "a 99205 and 2 99214s": each count is its code's units
    # "99490 plus two 99439 every month": the two are 99439's units each month (asked_units), not the month's volume
    shown = tuple(codes if written is None else written)        # the codes written out
    units = dict(asked_units(original, shown)) if len(shown) > 1 else {}
    for m in _VOLUME.finditer(text):
        if NEGATIVE_BEFORE.search(text[:m.start()]):
            continue                                       # "-20 visits a month" is no volume (pipeline says so)
        count = int(m.group("count").replace(",", ""))
        if any(units.get(code) == count for code in m.group("between").upper().split()):
            continue
        if m.group("count") in codes or count < 2 or (1900 <= count <= 2099 and "," not in m.group("count")):
            continue
        if _NOT_BETWEEN.search(m.group("between")):
            continue
        noun = m.group("noun")
        end = m.end()
        if noun.isupper() or noun[:-1].isupper():          # "40 TCM", "40 AWVs": a family named, not any acronym
            if noun.rstrip("s").upper() not in _family_acronyms():
                continue
            then = re.match(r"\s+" + _VOLUME_NOUN.pattern, text[end:], re.IGNORECASE)
            if then and not then.group("noun").isupper():     # "150 RPM patients": the patients are counted
                noun, end = _NOUNS.get(then.group("noun").lower(), then.group("noun").lower()), end + then.end()
        elif noun.lower().startswith("unit") and count < 100 and not _RATE_ANYWHERE.search(text):
            continue                                       # "two units of 99498" is a total (asked_units)
        elif noun.lower() == "times":
            if not _PER.match(text[end:]):
                continue                                   # "2 times more" is a ratio; "20 times a month" a volume
            noun = "services"
        else:
            noun = _NOUNS.get(noun.lower(), noun.lower().rstrip("s") + "s")
        rate = _PER.match(text[end:]) or _RATE_ANYWHERE.search(text)   # "... billing 99457 monthly"
        per = ""
        if rate:
            word = next(g for g in rate.groupdict().values() if g).lower()
            per = "month" if word.startswith("mo") else "week" if word.startswith("w") else \
                "day" if word.startswith("d") else "year"
        months = _span_months(text)
        if months is None:
            months = 12 if per == "year" or _YEARLY.search(text) or (per and _WHOLE_YEAR.search(text)) else 0
        if per == "year" and months <= 12:
            per, months = "", 12
        weeks = _WEEKS.search(text)                  # "40 visits a week, 48 weeks a year", "25 per week, 46 weeks"
        a_week = _DAYS_A_WEEK.search(text) if per == "day" else None
        # "over 250 working days"; "for 5 days" (a span: "5 days" alone may be the days of a week)
        days = next((int(d.group("n").replace(",", "")) for d in _DAYS.finditer(text) if per == "day" and (
                     int(d.group("n").replace(",", "")) > 7 or
                     re.search(r"\b(?:for|over|across|during)\s+(?:the\s+next\s+)?$", text[:d.start()], re.IGNORECASE))),
                    0)
        return Volume(count=count, noun=noun, per=per, months=months,
                      weeks=int(weeks.group(1)) if weeks and per in ("week", "day") else 0,
                      days_a_week=0 if a_week is None else (_SPAN_NUMBERS.get(a_week.group("n").lower()) or
                                                            int(a_week.group("n"))),
                      days=days)
    # codes billed together at a rate, with their units ("99490 plus two 99439 every month for 6 months"): once a period
    if units and (rate := _RATE_ANYWHERE.search(text)) and (_span_months(text) or _YEARLY.search(text)):
        word = next(g for g in rate.groupdict().values() if g).lower()
        per = "month" if word.startswith("mo") else "week" if word.startswith("w") else "day"
        return Volume(count=1, noun="services", per=per, months=_span_months(text) or 12)
    # no count of patients or services: a frequency of visits alone ("99213 twice a week for 6 weeks", "G0283 3x/week
    # for 4 weeks") is the volume
    return _visits_at_frequency(text, units=False)


_NATIONAL = re.compile(r"\bnation(?:al(?:ly)?|[\s-]?wide)\b", re.IGNORECASE)

# What separates the two sides of a choice between codes billed together and others ("99491 alone or 99490 plus one
# 99439", "G2211 + 99213 vs 99214")
_SIDES = re.compile(r"\b(?:or|vs\.?|versus|compared (?:to|with)|than|instead of|rather than)\b", re.IGNORECASE)


def asked_bundles(text: str, codes: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """Two sides a question weighs when one of them bills codes together: the written codes of each side of one "or",
    "vs", "than" ... in order, when there are exactly two sides and one has two codes or more; else ().

    >>> asked_bundles("Which pays more in 2026, 99491 alone or 99490 plus one 99439?", ("99491", "99490", "99439"))
    (('99491',), ('99490', '99439'))
    >>> asked_bundles("What do 99490 and 99439 pay together?", ("99490", "99439"))
    ()
    >>> asked_bundles("Which pays more in 2026: 20605, 20610 or 20611?", ("20605", "20610", "20611"))
    ()
    """
    if len(codes) < 3:
        return ()
    upper = text.upper()
    cuts = [m.start() for m in _SIDES.finditer(text)]
    sides: dict[int, list[str]] = {}
    for code in codes:
        at = upper.find(code)
        sides.setdefault(sum(1 for c in cuts if c < at), []).append(code)
    groups = [tuple(sorted(g, key=upper.find)) for _, g in sorted(sides.items())]
    if len(groups) != 2 or max(len(g) for g in groups) < 2:
        return ()
    # "Which pays more: 20605, 20610 or 20611?" lists alternatives: codes only commas apart are billed together by no one
    for group in groups:
        between = [upper[upper.find(a) + len(a):upper.find(b)] for a, b in zip(group, group[1:])]
        if len(group) > 1 and all(re.fullmatch(r"[\s,;/]*", gap) for gap in between):
            return ()
    return tuple(groups)


_SWITCH = re.compile(r"\b(?:switch\w*|mov\w+|chang\w+|convert\w*|replac\w+|go(?:ing)?|shift\w*|swap\w*|"
                     r"migrat\w+|upgrad\w+|downgrad\w+|bump\w*|upcod\w+|recod\w+)\b[^.?]*?\bfrom\s+"
                     r"(?:CPT\s+|HCPCS\s+)?(?P<a>[A-Z0-9]{5})\b[^.?]*?\bto\s+(?:CPT\s+|HCPCS\s+)?(?P<b>[A-Z0-9]{5})\b|"
                     r"\b(?P<c>[A-Z0-9]{5})\s+instead of\s+(?:CPT\s+|HCPCS\s+)?(?P<d>[A-Z0-9]{5})\b", re.IGNORECASE)


_RATIO = re.compile(r"\bratio\b|\bhow many times\b|\btimes (?:as (?:much|high|large|many)|more|higher|greater|"
                    r"larger)\b|\b(?:what|which|a|the)\s+multiple\b|\bmultiple of\b|\bdivided by\b|"
                    r"\bdivid(?:e|ing)\b[^?]*\bby\b", re.IGNORECASE)
# "What multiple of 99212 is 99205?": the code after "is" over the one after "multiple of"
_MULTIPLE_OF = re.compile(r"\bmultiple of\s+(?:[\w$-]+\s+){0,4}?(?P<unit>[0-9A-Z]\d{3}[0-9A-Z])\b[^?]{0,60}?\bis\s+"
                          r"(?:[\w$-]+\s+){0,3}?(?P<counted>[0-9A-Z]\d{3}[0-9A-Z])\b", re.IGNORECASE)
# "How many 99213 visits equal one 27447?": the code counted, then the one it adds up to
_HOW_MANY_EQUAL = re.compile(r"\bhow many\b(?P<counted>.*?)\b(?:equal|equals|make up|makes up|add up to|adds up to|"
                             r"are worth|is worth|does it take|would it take|to (?:equal|match|reach)|"
                             r"fits? (?:in|into|inside)|go(?:es)? into|are in)\b"
                             r"(?P<unit>.*)", re.IGNORECASE | re.DOTALL)


# "What percent of 27447's payment is 99213's?", "99213 as a percentage of 27447": the part over the whole, in percent
_CODE_WORD = r"(?:CPT\s+|HCPCS\s+)?(?P<{0}>[0-9A-Z]\d{{3}}[0-9A-Z])\b"
_PERCENT_OF = re.compile(
    r"\b(?:what|which)\s+(?:percent(?:age)?|share|proportion|fraction|%)\s+of\s+(?:[\w$'’-]+\s+){0,4}?"
    + _CODE_WORD.format("whole") + r"[^?]{0,60}?\b(?:is|are|does|do)\s+(?:[\w$'’-]+\s+){0,3}?"
    + _CODE_WORD.format("part")
    + r"|" + _CODE_WORD.format("part2") + r"[^?]{0,40}?\bas\s+an?\s+(?:percent(?:age)?|share|fraction|proportion)\s+of"
    r"\s+(?:[\w$'’-]+\s+){0,3}?" + _CODE_WORD.format("whole2")
    # "99212 is what percent of 99215?", "99215 is what share of 99205"
    + r"|" + _CODE_WORD.format("part4") + r"\s+(?:is|are)\s+what\s+(?:percent(?:age)?|share|proportion|fraction|%)\s+of"
    r"\s+(?:[\w$'’-]+\s+){0,3}?" + _CODE_WORD.format("whole4")
    # "What percent is 99212 of 99214?"
    + r"|\b(?:what|which)\s+(?:percent(?:age)?|share|proportion|fraction|%)\s+(?:is|are|does|do)\s+(?:[\w$'’-]+\s+){0,3}?"
    + _CODE_WORD.format("part3") + r"[^?]{0,40}?\bof\s+(?:[\w$'’-]+\s+){0,3}?" + _CODE_WORD.format("whole3"),
    re.IGNORECASE)


def asked_percent_of(text: str, codes: tuple[str, ...]) -> tuple[str, str]:
    """(part, whole) when the question asks one written code's amount as a percent of the other's; () otherwise.

    >>> asked_percent_of("What percent of 27447's payment is 99213's in 2026?", ("27447", "99213"))
    ('99213', '27447')
    >>> asked_percent_of("Show 99212 as a percentage of 99215", ("99212", "99215"))
    ('99212', '99215')
    >>> asked_percent_of("What percent of 99214's total RVUs is practice expense?", ("99214",))
    ()
    """
    m = _PERCENT_OF.search(text)
    if len(codes) != 2 or not m:
        return ()
    part = (m.group("part") or m.group("part2") or m.group("part3") or m.group("part4")).upper()
    whole = (m.group("whole") or m.group("whole2") or m.group("whole3") or m.group("whole4")).upper()
    return (part, whole) if {part, whole} == set(codes) else ()


def asked_ratio(text: str, codes: tuple[str, ...]) -> tuple[str, str]:
    """Two written codes divided: "How many 99213 visits equal one 27447 in work RVUs?" (27447, 99213: how many of the
    counted code make one of the other); "the ratio of 99215 to 99213", "How many times more does 99215 pay than
    99213?" (99215, 99213, in the order written). () otherwise.

    >>> asked_ratio("How many 99213 visits equal one 27447 in work RVUs?", ("99213", "27447"))
    ('27447', '99213')
    >>> asked_ratio("What is the ratio of 99215 to 99213 payment in 2026?", ("99215", "99213"))
    ('99215', '99213')
    >>> asked_ratio("What multiple of 99212 is 99205 in 2026?", ("99212", "99205"))
    ('99205', '99212')
    >>> asked_ratio("Divide the 2026 office payment for 99205 by the one for 99212", ("99205", "99212"))
    ('99205', '99212')
    """
    if len(codes) != 2:
        return ()
    if percent_of := asked_percent_of(text, codes):
        return percent_of
    upper = text.upper()
    m = _HOW_MANY_EQUAL.search(text)
    if m:
        counted = [c for c in codes if c in m.group("counted").upper()]
        unit = [c for c in codes if c in m.group("unit").upper()]
        if len(counted) == 1 and len(unit) == 1 and counted != unit:
            return unit[0], counted[0]
    m = _MULTIPLE_OF.search(text)
    if m and {m.group("unit").upper(), m.group("counted").upper()} == set(codes):
        return m.group("counted").upper(), m.group("unit").upper()
    if _RATIO.search(text):
        first, second = sorted(codes, key=upper.find)
        return first, second
    return ()


_SHARE_WORDS = re.compile(r"\b(?:percent(?:age)?|share|proportion|fraction|portion|part)\b|%", re.IGNORECASE)
_COMPONENTS = (("pe", re.compile(r"\bpractice[\s-]expenses?\b|\bPE\b", re.IGNORECASE)),
               ("mp", re.compile(r"\bmalpractice\b|\bprofessional liability\b|\bMP\b|\bPLI\b", re.IGNORECASE)),
               ("work", re.compile(r"\bwork\b|\bphysician work\b", re.IGNORECASE)))


_PART = (("26", re.compile(r"\bprofessional(?:\s+component)?\b|\bPC\b|-26\b|\bmodifier\s*26\b", re.IGNORECASE)),
         ("TC", re.compile(r"\btechnical(?:\s+component)?\b|\bTC\b", re.IGNORECASE)))


def asked_part_share(text: str) -> str:
    """'26' or 'TC' when the question asks what share of a code's global amount one component is.

    >>> asked_part_share("What share of 93306's global payment is the professional component?")
    '26'
    >>> asked_part_share("What % of 70450 is the TC in 2026?"), asked_part_share("What does 70450-TC pay?")
    ('TC', '')
    """
    if not _SHARE_WORDS.search(_PART[0][1].sub(" ", _PART[1][1].sub(" ", text))):
        return ""
    named = [mod for mod, pattern in _PART if pattern.search(text)]
    return named[0] if len(named) == 1 else ""


def asked_share(text: str) -> str:
    """The RVU component whose share of the total a question asks for: "What percent of 99214's 2026 total RVUs is
    practice expense?" -> "pe"; "How much of 99490's payment comes from work?" -> "work". "" when it asks none.

    >>> asked_share("What percent of 99214's 2026 non-facility total RVUs is practice expense?")
    'pe'
    >>> asked_share("What share of 99490's payment is from physician work?")
    'work'
    >>> asked_share("What percent did 99214 change?")
    ''
    """
    if not (_SHARE_WORDS.search(text) or re.search(r"\bhow much of\b", text, re.IGNORECASE)):
        return ""
    if not re.search(r"\b(?:of|from|is|are|comes?|goes?|makes? up|accounts? for)\b", text, re.IGNORECASE):
        return ""
    # "pre-operative work" is a part of the global surgical package (the periop shares), not the work RVU
    text = re.sub(r"\b(?:pre|post|intra)-?\s?op\w*\s+(?:physician\s+)?work\b", " ", text, flags=re.IGNORECASE)
    named = [key for key, pattern in _COMPONENTS if pattern.search(text)]
    return named[0] if len(named) == 1 else ""


def asked_switch(text: str, codes: tuple[str, ...]) -> tuple[str, str]:
    """(from, to) when the question weighs billing one written code instead of another ("moving 300 CCM patients from
    99490 to G0557", "G0557 instead of 99490"); () otherwise.

    >>> asked_switch("how much more would we make moving 300 CCM pts from 99490 to G0557", ("99490", "G0557"))
    ('99490', 'G0557')
    >>> asked_switch("G0557 instead of 99490 for 100 patients", ("G0557", "99490"))
    ('99490', 'G0557')
    """
    m = _SWITCH.search(text)
    if not m:
        return ()
    pair = (m.group("a"), m.group("b")) if m.group("a") else (m.group("d"), m.group("c"))
    pair = tuple(c.upper() for c in pair)
    return pair if all(c in codes for c in pair) and pair[0] != pair[1] else ()


# "In which year did 99214 pay the most?", "When was 99213 paid the least?", "99490's peak year"
_WHICH_YEAR = re.compile(r"\b(?:which|what)\s+(?:calendar\s+)?year\b|\bwhen\b|\bpeak(?:ed)?\b|\b(?:best|worst|"
                         r"highest|lowest|top)[\s-]+(?:paying[\s-]+|paid[\s-]+)?year\b", re.IGNORECASE)
_YEAR_TOP = re.compile(r"\b(?:most|highest|largest|peak(?:ed)?|best|top|max\w*)\b", re.IGNORECASE)
_YEAR_BOTTOM = re.compile(r"\b(?:least|lowest|smallest|worst|bottom|min\w*)\b", re.IGNORECASE)


_MOVE_VERB = re.compile(r"\b(?:ris\w*|rose|increas\w*|rais\w*|grow\w*|grew|jump\w*|gain\w*|go up|went up|"
                        r"cut|cuts|drop\w*|fell|fall\w*|declin\w*|decreas\w*|reduc\w*|go down|went down)\b",
                        re.IGNORECASE)
_DOWN_VERB = re.compile(r"\b(?:cut|cuts|drop\w*|fell|fall\w*|declin\w*|decreas\w*|reduc\w*|go down|went down)\b",
                        re.IGNORECASE)


def asks_biggest_step(text: str) -> str:
    """'up' or 'down' when the question asks in which year a value moved the most ("In which year did 99214 rise the
    most?", "the biggest CF cut"); '' otherwise.

    >>> asks_biggest_step("In which year did 99214 rise the most?"), asks_biggest_step("When was the largest CF cut?")
    ('up', 'down')
    >>> asks_biggest_step("In which year did 99214 pay the most?")
    ''
    """
    # "which office visit code had the largest increase" asks a code (most_change_sentences), not a year
    if not (_WHICH_YEAR.search(text) or (re.search(r"\b(?:biggest|largest|steepest|sharpest|greatest)\b", text,
                                                   re.IGNORECASE) and not re.search(r"\bwhich\b", text, re.IGNORECASE))):
        return ""
    if not (_MOVE_VERB.search(text) and re.search(r"\b(?:most|biggest|largest|steepest|sharpest|greatest|"
                                                  r"deepest)\b", text, re.IGNORECASE)):
        return ""
    return "down" if _DOWN_VERB.search(text) else "up"


def asks_which_year(text: str) -> str:
    """'most' or 'least' when the question asks in which year a value was highest or lowest; '' otherwise.

    >>> asks_which_year("In which year from 2020 to 2026 did 99214 pay the most?"), asks_which_year("What year did 99213 pay the least?")
    ('most', 'least')
    >>> asks_which_year("Which code pays the most in 2026?")
    ''
    """
    if not _WHICH_YEAR.search(text) or asks_biggest_step(text):    # "rose the most" asks a change, not a level
        return ""
    top, bottom = bool(_YEAR_TOP.search(text)), bool(_YEAR_BOTTOM.search(text))
    return "" if top == bottom else "most" if top else "least"


_WHEN_MOVED = re.compile(r"\b(?:when|which years?|what years?|in which years?)\b.{0,60}?\b(?P<verb>cut|drop\w*|fell|fall\w*|"
                         r"decreas\w*|lower\w*|reduc\w*|declin\w*|ris\w*|rose|increas\w*|rais\w*|"
                         r"(?:go|went|gone) (?:up|down))\b", re.IGNORECASE)


def asks_when_moved(text: str) -> str:
    """'down' or 'up' when the question asks in which years a value fell or rose ("When was 99214 cut?", "In which
    years did 99213 go up?"); '' otherwise (and for "which year ... the most", asks_which_year).

    >>> asks_when_moved("When was 99214 cut?"), asks_when_moved("In which years did 99213 go up?")
    ('down', 'up')
    >>> asks_when_moved("When is G2211 billed?"), asks_when_moved("In which year did 99214 rise the most?")
    ('', '')
    """
    m = _WHEN_MOVED.search(text)
    if not m or asks_which_year(text) or asks_biggest_step(text):
        return ""
    verb = m.group("verb").lower()
    return "up" if verb.startswith(("ris", "rose", "increas", "rais")) or verb.endswith("up") else "down"


# Practitioners Medicare pays a share of the fee schedule amount (Social Security Act section 1833(a)(1)(O) for nurse
# practitioners, clinical nurse specialists and physician assistants: 85%; 1833(a)(1)(F) for clinical social workers:
# 75%), matched in the question; whoever is named first is the one priced.
PRACTITIONERS = ((re.compile(r"\bnurse practitioners?\b|\bNPs?\b", re.IGNORECASE), "nurse practitioner",
                  Decimal("0.85"), "1833(a)(1)(O)"),
                 (re.compile(r"\bphysician assistants?\b|\bPAs?\b(?!-)", re.IGNORECASE), "physician assistant",
                  Decimal("0.85"), "1833(a)(1)(O)"),
                 (re.compile(r"\bclinical nurse specialists?\b|\bCNSs?\b", re.IGNORECASE), "clinical nurse specialist",
                  Decimal("0.85"), "1833(a)(1)(O)"),
                 (re.compile(r"\b(?:clinical|licensed clinical) social workers?\b|\bLCSWs?\b|\bCSWs?\b",
                             re.IGNORECASE), "clinical social worker", Decimal("0.75"), "1833(a)(1)(F)"),
                 # furnished in whole or in part by a PT or OT assistant (modifier CQ / CO): 85% from 2022
                 (re.compile(r"\bphysical therap(?:ist|y) assistants?\b|\bPT assistants?\b|\bPTAs?\b|\bCQ modifier\b|"
                             r"\bmodifier CQ\b|\bwith CQ\b", re.IGNORECASE), "physical therapist assistant",
                  Decimal("0.85"), "1834(v)"),
                 (re.compile(r"\boccupational therap(?:ist|y) assistants?\b|\bOT assistants?\b|\bOTAs?\b|"
                             r"\bCO modifier\b|\bmodifier CO\b"), "occupational therapy assistant", Decimal("0.85"),
                  "1834(v)"))
THERAPY_ASSISTANT_FROM = 2022       # SSA 1834(v): the 85% applies to services from January 1, 2022


# A non-participating physician is paid 95% of the fee schedule amount (Social Security Act section 1848(a)(3)); on a
# claim it does not accept assignment for, it may charge the patient at most the limiting charge, 115% of that
# (section 1848(g)(2)(C)).
_NONPAR = re.compile(r"\bnon-?\s?par(?:ticipating|\.|s)?\b|\bnot participating\b|\bnon-?assign(?:ed|ment)\b"
                     r"|\b(?:doesn't|does not|don't|do not|not) accept(?:ing)? assignment\b", re.IGNORECASE)
_LIMITING = re.compile(r"\blimiting\s+charges?\b|\bbalance[- ]?bill\w*"
                       r"|\bmost (?:a|an|the)?\s*(?:doctor|physician|provider|practitioner)s?\b.{0,30}\bcharge\b",
                       re.IGNORECASE)


# Procedures (or therapy units) furnished together on one day: the multiple-procedure rule may reduce all but one
_SAME_SESSION = re.compile(
    r"\bmultiple[- ](?:procedure|surgery|surgeries|surgical|therapy)\b|\bmodifier\s*-?\s*51\b|\bMPPR\b"
    r"|\bsame\s+(?:day|date(?: of service)?|session|operative session|encounter|sitting|operation|surgery)\b"
    r"|\bsame\s+(?:[\w/-]+\s+){1,3}?(?:session|sitting|encounter|procedure|operation)\b"
    r"|\b(?:one|a single)\s+(?:session|day|encounter|operative session|sitting|operation|surgery|visit)\b"
    # "during the same colonoscopy", "in one EGD", "at the same upper endoscopy": one scope session
    r"|\b(?:during|in|within|at)\s+(?:the\s+same|one|a\s+single|the|an?)\s+(?:[\w/-]+\s+){0,2}?"
    r"(?:\w*scop(?:y|ies)|scopes?|EGDs?)\b"
    r"|\b(?:at|in) the same time\b"
    # "29881 and 29877 on the same knee": procedures on one body part are one operative session
    r"|\b(?:on|in|to|of)\s+the\s+same\s+(?:knee|hip|shoulder|elbow|wrist|ankle|foot|hand|eye|ear|joint|side|"
    r"breast|lung|leg|arm|spine|back|patient)\b", re.IGNORECASE)


def asks_same_session(text: str, codes: int, units: tuple[tuple[str, int], ...]) -> bool:
    """Two or more procedures (or units) said to be furnished together, on one day or in one session.

    >>> asks_same_session("11042 and 17000 in the same session: what is paid?", 2, ())
    True
    >>> asks_same_session("What do 4 units of 97110 on the same day pay?", 1, (("97110", 4),))
    True
    >>> asks_same_session("What does 99213 pay on the same day?", 1, ())
    False
    """
    return (codes > 1 or any(n > 1 for _, n in units)) and bool(_SAME_SESSION.search(text))


_UNIT_WORD = re.compile(rf"\b{_WORD_BEFORE}[0-9A-Z]\d{{3}}[0-9A-Z]\b{_NOT_A_VOLUME}|\b{_COUNT}\s+units?\s+of\b|\b[0-9A-Z]\d{{3}}[0-9A-Z]\s*(?:x|×)\s*{_COUNT}\b|\bunits\b|"
                        rf"\b{_COUNT}\s*(?:x|×)\s*[0-9A-Z]\d{{3}}[0-9A-Z]\b", re.IGNORECASE)
# "for a day", "in one day", "on the same day": one day, which spreads no count over time
_ONE_DAY = re.compile(r"\b(?:for|in|on|during|within)\s+(?:a|one|a single|the same|the)\s+(?:day|date of service)\b|"
                      r"\bsame[\s-]day\b", re.IGNORECASE)
# counts spread over visits, sessions, days or a period are not one day's units
_OVER_TIME = re.compile(r"\b(?:visits?|sessions|encounters|days|weeks?|months?|years?|monthly|weekly|daily|annual\w*|"
                     r"episodes?|patients?|beneficiaries|panel|per\s+(?:day|week|month|year))\b", re.IGNORECASE)


# "4 units of 97110 per visit, 6 visits": the units are each visit's, billed on its day (the volume counts visits)
_PER_VISIT = re.compile(r"\b(?:per|each|every|a)\s+(?:visit|session|encounter|treatment|day)\b", re.IGNORECASE)


_ALTERNATIVE = re.compile(r"\b(?:or|vs\.?|versus|compared (?:to|with)|against|instead of|rather than)\b",
                          re.IGNORECASE)


def units_are_alternatives(text: str, codes: list[str]) -> bool:
    """Are the counted codes written as alternatives ("four 97530 or four 97110", "4 units of 97110 vs 4 of 97140"):
    an "or", "versus" or "compared with" between every two of them, and no "and" or "plus".

    >>> units_are_alternatives("four units of 97530 or four units of 97110", ["97530", "97110"])
    True
    >>> units_are_alternatives("four units of 97530 and four units of 97110", ["97530", "97110"])
    False
    """
    places = sorted(m.start() for code in codes for m in [re.search(rf"\b{code}\b", text)] if m)
    if len(places) != len(codes):
        return False
    gaps = [text[a:b] for a, b in zip(places, places[1:])]
    return all(_ALTERNATIVE.search(gap) and not re.search(r"\b(?:and|plus)\b|(?<!compared )\bwith\b|\+", gap, re.IGNORECASE)
               for gap in gaps)


def asks_units_one_day(text: str, units: tuple[tuple[str, int], ...]) -> bool:
    """A count of billing units ("4 units of 97110", "97110 x 4"): one claim line's units, furnished on one day, so a
    rule on the day's units (the therapy MPPR, indicator 5) applies to them; not counts of visits or over a period.

    >>> asks_units_one_day("What does Medicare pay for 4 units of 97110?", (("97110", 4),))
    True
    >>> asks_units_one_day("4 units of 97110 a week for 6 weeks", (("97110", 4),))
    False
    >>> asks_units_one_day("10 99213 visits", (("99213", 10),)), asks_units_one_day("97110 in 2026", ())
    (False, False)
    """
    return bool(units) and bool(_UNIT_WORD.search(text)) and not _OVER_TIME.search(_ONE_DAY.sub(" ", text))


def asked_nonpar(text: str) -> str:
    """'limiting' when the question asks for the limiting charge (or what a physician may bill the patient), 'nonpar'
    when it asks what a non-participating physician is paid, '' otherwise.

    >>> asked_nonpar("What is the 2026 limiting charge for 99214?"), asked_nonpar("Non-par amount for 99213?")
    ('limiting', 'nonpar')
    >>> asked_nonpar("What does a participating provider get for 99213?")
    ''
    """
    if _LIMITING.search(text):
        return "limiting"
    if not _NONPAR.search(text):
        return ""
    # "what can a non-par doctor charge (bill the patient)": the limiting charge
    return "limiting" if re.search(r"\bcharges?\b|\bbill(?:s|ed)?\s+(?:the\s+)?(?:patient|beneficiar)", text,
                                   re.IGNORECASE) else "nonpar"


# "PA" the state, not a physician assistant: "PA 01", "Erie, PA", "Pittsburg PA" (a capitalised place word before it
# that is not a question's first word: "Can PA ...", "Does PA ...")
_PA_STATE = re.compile(r"\bPA\s+\d{2}\b|, PA\b|\b(?!(?:Can|Could|Does|Do|Did|Would|Will|If|When|What|How|"
                       r"Should|Is|Are|Medicare|A|An|The|My|Our|Each|Every|Per|For|And|Or|Billed|Paid)\b)[A-Z][a-z]+\s+"
                       r"PA\b(?!-|\s+(?:bill|bills|billing|billed|furnish\w*|see\w*|provid\w*|perform\w*|doing|does|"
                       r"visit|services?)\b)")


def asked_practitioner(text: str) -> tuple[str, Decimal, str] | None:
    """("nurse practitioner", 0.85, "1833(a)(1)(O)") when the question names a practitioner paid a share of the fee."""
    states = {m.start() + m.group(0).rfind("PA") for m in _PA_STATE.finditer(text)}      # where "PA" is the state
    found = [(m.start(), who, share, law) for pattern, who, share, law in PRACTITIONERS
             for m in [next((m for m in pattern.finditer(text) if m.start() not in states), None)] if m]
    return min(found)[1:] if found else None


def asks_setting_gap(text: str) -> bool:
    """The question compares the two settings of one row: 'the difference between the facility and non-facility
    payment for 99214', 'how much lower is the facility PE RVU', '99490 fac vs nonfac'.

    >>> asks_setting_gap("What is the difference between the facility and non-facility payment for 99214?")
    True
    >>> asks_setting_gap("What does 99214 pay in a facility?"), asks_setting_gap("99214 payment in 2026")
    (False, False)
    """
    non_facility, facility, lowered = _settings_named(text)
    if len({p[2] for p in asked_pos(text)}) == 2:      # "POS 11 versus POS 22"
        non_facility = facility = True
    return non_facility and facility and bool(_GAP.search(lowered))


def _settings_named(text: str) -> tuple[bool, bool, str]:
    """(names the non-facility setting, names the facility setting, the lowered text read); "office visit" names the
    E/M family, not the office setting."""
    lowered = text.lower()
    for name in _family_names():
        # "office visits", "nursing facility visits" (paid at either rate by place of service) name codes, not a setting
        if "office" in name or "nursing" in name:
            lowered = lowered.replace(name, " ")
    return (bool(_NON_FACILITY.search(lowered)), bool(_FACILITY.search(_NON_FACILITY.sub(" ", lowered))), lowered)


# Place-of-service codes paid at the PFS facility rate (Medicare Claims Processing Manual, ch. 12, sec. 20.4.2,
# https://www.cms.gov/regulations-and-guidance/guidance/manuals/downloads/clm104c12.pdf): every other POS is paid at
# the non-facility rate (POS 10, telehealth in the patient's home, at the non-facility rate from CY 2024).
FACILITY_POS = {"02": "telehealth other than in the patient's home", "19": "off-campus outpatient hospital",
                "21": "inpatient hospital", "22": "on-campus outpatient hospital", "23": "emergency room",
                "24": "ambulatory surgical center", "26": "military treatment facility", "31": "skilled nursing facility",
                "34": "hospice", "41": "ambulance (land)", "42": "ambulance (air or water)",
                "51": "inpatient psychiatric facility", "52": "psychiatric facility partial hospitalization",
                "53": "community mental health center", "56": "psychiatric residential treatment center",
                "61": "comprehensive inpatient rehabilitation facility"}
NON_FACILITY_POS = {"03": "school", "04": "homeless shelter", "10": "telehealth in the patient's home",
                    "11": "office", "12": "home", "13": "assisted living facility", "14": "group home",
                    "15": "mobile unit", "16": "temporary lodging", "17": "walk-in retail health clinic",
                    "18": "place of employment", "20": "urgent care facility", "32": "nursing facility",
                    "33": "custodial care facility", "49": "independent clinic", "50": "federally qualified health center",
                    "60": "mass immunization center", "62": "comprehensive outpatient rehabilitation facility",
                    "65": "end-stage renal disease treatment facility", "71": "public health clinic",
                    "72": "rural health clinic", "81": "independent laboratory", "99": "other place of service"}
_POS = re.compile(r"\b(?:POS|place[\s-]+of[\s-]+service)(?:\s+code)?\s*#?\s*(\d{1,2})\b", re.IGNORECASE)


def asked_pos(text: str) -> tuple[tuple[str, str, str], ...]:
    """The place-of-service codes a question names, each with its name and the setting whose PFS rate pays it:
    ("22", "on-campus outpatient hospital", "facility"); codes this table does not know are left out.

    >>> asked_pos("What does 99213 pay at POS 11?"), asked_pos("99214 place of service 22 in 2026")[0][2]
    ((('11', 'office', 'non-facility'),), 'facility')
    >>> [p[0] for p in asked_pos("99213 at place of service 11 versus place of service 22")]
    ['11', '22']
    """
    found = []
    for m in _POS.finditer(text):
        code = m.group(1).zfill(2)
        if code in FACILITY_POS:
            found.append((code, FACILITY_POS[code], "facility"))
        elif code in NON_FACILITY_POS:
            found.append((code, NON_FACILITY_POS[code], "non-facility"))
    if not found and _TELEHEALTH.search(text):
        # "telehealth to the patient's home": POS 10; telehealth elsewhere: POS 02; telehealth alone: both, said
        home, elsewhere = _HOME.search(text), _NOT_HOME.search(text)
        if home and not elsewhere:
            found.append(("10", NON_FACILITY_POS["10"], "non-facility"))
        elif elsewhere:
            found.append(("02", FACILITY_POS["02"], "facility"))
        else:
            found += [("02", FACILITY_POS["02"], "facility"), ("10", NON_FACILITY_POS["10"], "non-facility")]
    return tuple(dict.fromkeys(found))


_TELEHEALTH = re.compile(r"\btele-?(?:health|medicine|visits?)\b|\b(?:virtual|video)\s+visits?\b", re.IGNORECASE)
_HOME = re.compile(r"\b(?:patient'?s?|their|his|her|the)\s+homes?\b|\bat home\b|\bfrom home\b", re.IGNORECASE)
_NOT_HOME = re.compile(r"\bnot (?:at|in|from) (?:the |their )?home\b|\bother than (?:the |their |a )?(?:patient'?s? )?home\b"
                       r"|\boriginating site\b|\b(?:from|at|in) (?:a |the )?(?:clinic|office|hospital|facility)\b",
                       re.IGNORECASE)


def _setting(text: str) -> Setting:
    settings = {p[2] for p in asked_pos(text)}
    if len(settings) == 1:          # "at POS 22": the rate that place of service is paid at
        return Setting.FACILITY if settings == {"facility"} else Setting.NON_FACILITY
    if settings:                    # "POS 11 versus POS 22": both rates
        return Setting.BOTH
    non_facility, facility, _ = _settings_named(text)
    if non_facility == facility:
        return Setting.BOTH
    return Setting.NON_FACILITY if non_facility else Setting.FACILITY


# What a "What is/are the ... of X?" asks about when it is not what X is: a rule about it.
_ASPECT = re.compile(r"\b(?:requirements?|required|rules?|criteria|limits?|limitations?|restrictions?|"
                     r"consent|documentation|supervision|policy|policies|eligib\w*|frequency|"
                     r"thresholds?|elements?|standards?|exceptions?|deadlines?|process|billing|modifiers?)\b",
                     re.IGNORECASE)


# A modifier with its own RVU row: "71046-26", "modifier 26", "71046 TC", "the professional component".
_MODIFIER = re.compile(r"\b[0-9A-Z]\d{3}[0-9A-Z](?:-(?P<after>26|TC|53)|\s(?P<tc>TC))\b|"
                       r"\bmodifiers?\s*-?\s*(?P<named>26|TC|53)\b|\b(?P<before>26|TC)[-\s]modifier\b", re.IGNORECASE)
_COMPONENT = {"professional component": "26", "technical component": "TC"}


# Parts of a row a question asks about beyond work RVU, totals and payments ("What is the malpractice RVU of
# 99214?", "Is 99439 payable in a facility?"): the answer states them.
_PARTS = (("status", re.compile(r"\b(?:payable|covered|coverage|non-?covered|bundled|status|separately "
                                r"(?:paid|payable)|billable)\b", re.IGNORECASE)),
          ("pe", re.compile(r"\b(?:PE|practice expense)\b", re.IGNORECASE)),
          ("mp", re.compile(r"\b(?:MP|malpractice|professional liability|PLI)\b", re.IGNORECASE)),
          ("global", re.compile(r"\bglobal (?:days?|periods?|surgery|surgical)\b|\b\d{1,3}[- ]day global\b|"
                                r"\badd[- ]?on\b|"
                                r"\b(?:billable|billed|bill|reported|report) (?:alone|by itself|on its own)\b|"
                                r"\bstand[- ]?alone\b", re.IGNORECASE)))
_PART_NAMES = {"status": "PFS status", "pe": "PE RVUs", "mp": "malpractice RVU", "global": "global period"}


def asked_parts(text: str) -> tuple[str, ...]:
    """The parts of a row the question names ('status', 'pe', 'mp', 'global'), in that order."""
    return tuple(part for part, asks in _PARTS if asks.search(text))


# The indicators a question names, in data/indicators.toml's keys. A modifier that an indicator governs names it
# ("27447 with modifier 50": bilateral surgery). Supervision of a diagnostic test is asked as an indicator or level:
# "supervision" alone is a rule question ("What supervision does APCM require?").
_INDICATORS = (
    ("pctc", re.compile(r"\bPC\s*/\s*TC\b|\bPCTC\b|\bprofessional\s*(?:/|and)\s*technical component\b", re.IGNORECASE)),
    ("mult_proc", re.compile(r"\bmultiple[- ](?:procedure|surgery|surgeries|surgical)\b|\bmodifier\s*-?\s*51\b|"
                             r"\b51\s+modifier\b|\b[0-9A-Z]\d{3}[0-9A-Z]-51\b|\bas\s+(?:a|the)\s+second(?:ary)?\s+"
                             r"(?:\w+\s+)?(?:procedure|surgery)\b",
                             re.IGNORECASE)),
    ("bilat_surg", re.compile(r"\bbilateral(?:ly)?\b|\bmodifier\s*-?\s*50\b|\b[0-9A-Z]\d{3}[0-9A-Z]-50\b|\b(?:on\s+)?both\s+"
                              r"(?:eyes|knees|hips|ears|sides|legs|arms|hands|feet|shoulders|wrists|breasts|lungs)\b",
                              re.IGNORECASE)),
    ("asst_surg", re.compile(r"\bassistants?[- ](?:at[- ])?surg\w*|\bmodifier\s*-?\s*(?:80|81|82|AS)\b"
                             r"|\b(?:80|81|82|(?-i:AS))[-\s]modifier\b|\b[0-9A-Z]\d{3}[0-9A-Z]-(?:80|81|82|(?-i:AS))\b"
                             r"|\bassist(?:s|ed|ing)?\s+(?:on|at|in|with)\b|\bassisting\s+(?:surgeon|at)\b"
                             r"|\bsurgical\s+assist\w*|\bfirst[- ]assist\w*|\bas\s+(?:an?\s+|the\s+)?assistant\b"
                             r"|\bassistant(?:'s)?\s+(?:fee|payment|rate|share|amount)s?\b",
                             re.IGNORECASE)),
    ("co_surg", re.compile(r"\bco-?\s?surg\w*|\bmodifier\s*-?\s*62\b", re.IGNORECASE)),
    ("team_surg", re.compile(r"\bteam surg\w*|\bmodifier\s*-?\s*66\b", re.IGNORECASE)),
    ("endo_base", re.compile(r"\bendoscop\w* base\b|\bbase endoscop\w*", re.IGNORECASE)),
    ("phys_supv", re.compile(r"\bsupervision (?:indicator|level|code)s?\b|\bphysician supervision of diagnostic"
                             r"|\b(?:level|type|kind) of physician supervision\b|\bphysician supervision (?:level|"
                             r"requirement)s?\b", re.IGNORECASE)),
    ("diag_family", re.compile(r"\bimaging family\b|\bdiagnostic imaging family\b", re.IGNORECASE)),
    # the global package's split: "pre-op, intra-op and post-op percentages", "what the global includes", modifier 54
    ("periop", re.compile(r"\bintra-?\s?op\w*|\b(?:pre|post)-?\s?op\w*\b.{0,40}\b(?:shares?|percent\w*|%|portions?|"
                          r"splits?)\b|\b(?:shares?|percent\w*|%|portions?|part|fraction|how much of)\b.{0,50}\b(?:pre|post)-?\s?op|\bsplit\b.{0,20}\bglobal\b|\bglobal\b.{0,40}\binclud\w*|"
                          r"\bmodifiers?\s*-?\s*5[456]\b|\b(?:surgical care|post-?\s?operative management|"
                          r"pre-?\s?operative management)\s+only\b|\b(?:pre|post|intra)-?\s?op\w*\s+(?:care|work|"
                          r"portion|services?|visits?)\b", re.IGNORECASE)))


def asked_indicators(text: str) -> tuple[str, ...]:
    """The indicators the question names, in that order.

    >>> asked_indicators("What is the PC/TC indicator for 71046 and is the bilateral adjustment used?")
    ('pctc', 'bilat_surg')
    >>> asked_indicators("What supervision does APCM require?")
    ()
    """
    return tuple(key for key, asks in _INDICATORS if asks.search(text))


def asked_modifier(text: str) -> str:
    """The payment modifier the question asks about ('26', 'TC', '53'), '' when none."""
    if m := _MODIFIER.search(text):
        return next(g for g in m.groups() if g).upper()
    lowered = text.lower()
    lone = _lone_components(text)
    if len(lone) == 1:          # "the -26 for 77067", "the TC portion of 93306", "the TC-only payment"
        return lone.pop()
    if mod := next((mod for words, mod in _COMPONENT.items() if words in lowered), ""):
        return mod
    return "26" if _READING.search(text) or _reads_a_procedure(text) else ""


# "reading chest x-rays", "interpreting echocardiograms": no determiner; what follows must be a procedure named in words
_READING_BARE = re.compile(r"\b(?:" + READING_VERB + r"|reads|interprets)\s+(?=[A-Za-z])", re.IGNORECASE)


def _reads_a_procedure(text: str) -> bool:
    """The question reads (interprets) a procedure it names in words right after the verb, with no determiner.

    >>> _reads_a_procedure("How much for reading chest x-rays?"), _reads_a_procedure("reading about APCM")
    (True, False)
    """
    verbs = [m.end() for m in _READING_BARE.finditer(text)]
    return bool(verbs) and any(start in verbs for start, _, _ in named_procedures(text))


# "paid for reading a chest x-ray", "interpreting an MRI", "the interpretation of a DXA scan": the professional
# component (modifier 26) of a test, not the global amount; not "the interpretation of the rule"
_READING = re.compile(r"\b(?:" + READING_VERB + r"|reads|interprets)\s+"
                      r"(?:an?|the|this|that|each|their|his|her|\d+)\s+(?!(?:(?:CY\s*)?\d{4}\s+)?(?:PFS\s+|final\s+|proposed\s+)*(?:rules?|"
                      r"regulations?|policy|policies|statute|guidance|law|manual|preamble|CMS|question|data|files?|Federal|FR|"
                      r"comments?|text|table|addendum)\b)\w",
                      re.IGNORECASE)


_BOTH_COMPONENTS = re.compile(
    r"\bprofessional\s+(?:and|&|\+|/)\s+technical\b|\btechnical\s+(?:and|&|\+|/)\s+professional\b"
    # "how does the 77067 professional component compare with the technical component"
    r"|\bprofessional\s+(?:component|part|portion)\b.{0,40}\btechnical\s+(?:component|part|portion)\b"
    r"|\btechnical\s+(?:component|part|portion)\b.{0,40}\bprofessional\s+(?:component|part|portion)\b"
    r"|\bPC\s*(?:and|&|/|\+)\s*TC\b|\b(?:modifiers?\s+)?26\s*(?:and|&|/|\+)\s*TC\b|\bTC\s*(?:and|&|/|\+)\s*26\b"
    r"|\bcomponents\b.{0,60}\b(?:add up|sum|total|global)\b|\b(?:add up|sum)\b.{0,30}\bcomponents\b", re.IGNORECASE)


# a component written without its code: "and what does the -TC portion pay?", "the 26 part"
_LONE_COMPONENT = re.compile(r"(?:^|\s)-(26|TC)\b|\b(26|TC)\s+(?:portion|component|part|piece|side|half)\b"
                             r"|\b(TC|PC|26)[- ]only\b|\b(technical|professional)[- ](?:component[- ])?only\b"
                             r"|\b(?:the\s+)?(TC|PC)\s+(?:payment|fee|rate|amount|value|RVUs?)\b",
                             re.IGNORECASE)


def _lone_components(text: str) -> set[str]:
    """The components written without a code ("the -TC portion", "PC-only", "technical-only"), as modifiers."""
    return {{"PC": "26", "PROFESSIONAL": "26", "TECHNICAL": "TC"}.get(mod, mod)
            for mod in (next(g for g in m.groups() if g).upper() for m in _LONE_COMPONENT.finditer(text))}


def asks_components(text: str) -> bool:
    """The question asks for both a code's professional (26) and technical (TC) components: both written ("71046-26
    and 71046-TC"), named together ("the professional and technical components", "PC/TC split"), or added up.

    >>> asks_components("What do 71046-26 and 71046-TC pay in 2026?")
    True
    >>> asks_components("Do the professional and technical components of 93000 add up to the global?")
    True
    >>> asks_components("What does 93306-26 pay in 2026, and what does the -TC portion pay?")
    True
    >>> asks_components("What does 71046-26 pay?"), asks_components("What is the PC/TC indicator for 71046?")
    (False, False)
    """
    mods = {next(g for g in m.groups() if g).upper() for m in _MODIFIER.finditer(text)} | _lone_components(text)
    return {"26", "TC"} <= mods or bool(_BOTH_COMPONENTS.search(re.sub(r"\bPC/TC indicator", "", text, flags=re.I)))


_STATED = re.compile(r"\$\s?(\d{1,3}(?:,\d{3})*(?:\.\d{1,2})?|\d+(?:\.\d{1,2})?)")
_CHECKED = re.compile(r"\b(?:paid|pays|pay|got|get|received|receive|reimbursed|allowed|billed|charged|quoted|"
                      r"match(?:es)?|correct|right|accurate|consistent|expected)\b", re.IGNORECASE)


def asked_stated(text: str, codes: tuple[str, ...]) -> Decimal | None:
    """One dollar amount a question gives to be checked against one code's amount ("My MAC paid $92.03 for 99213 in
    2025 - does that match?"); None for no amount, several, or no code.

    >>> asked_stated("My MAC paid $92.03 for 99213 in 2025 - does that match the fee schedule?", ("99213",))
    Decimal('92.03')
    """
    amounts = _STATED.findall(text)
    if len(codes) != 1 or len(amounts) != 1 or not _CHECKED.search(text):
        return None
    return Decimal(amounts[0].replace(",", ""))


_CF_WORDS = r"(?:conversion factor|CF|fee schedule|payment rates?|rates?|payments?)"
_SUPPOSED = re.compile(r"\b(?:would|if|suppose|supposing|were|what happens|hypothetical|scenario|assuming)\b",
                       re.IGNORECASE)
_CF_CHANGE = re.compile(
    rf"(?P<pct>\d{{1,3}}(?:\.\d{{1,2}})?)\s*(?:%|percent|per cent)\s+(?:{_CF_WORDS}\s+)?"
    rf"(?P<way>cut|cuts|reduction|decrease|drop|lower|increase|rise|raise|higher|bump|boost|update)\b"
    rf"|\b(?P<way2>cut|reduce|lower|raise|increase|drop|decrease|trim|shave|slash|pare|hike|bump|boost)\w*\s+"
    rf"(?:the\s+)?{_CF_WORDS}\s+(?:by\s+)?"
    rf"(?P<pct2>\d{{1,3}}(?:\.\d{{1,2}})?)\s*(?:%|percent)"
    rf"|\b{_CF_WORDS}\s+(?:\w+\s+){{0,2}}?(?P<way3>cut|reduced|lowered|raised|increased|decreased|dropped|trimmed|"
    rf"shaved|slashed|fell|rose|went down|went up)\s+(?:by\s+)?"
    rf"(?P<pct3>\d{{1,3}}(?:\.\d{{1,2}})?)\s*(?:%|percent)", re.IGNORECASE)


def asked_cf_change(text: str) -> Decimal | None:
    """A conversion factor change the question supposes, in percent (negative for a cut): "What would a 10% CF cut
    mean for 99214?" -> -10; "if CMS raised the conversion factor by 2.5%" -> 2.5. None when it supposes none.

    >>> asked_cf_change("What would a 10% conversion factor cut mean for 99214?")
    Decimal('-10')
    >>> asked_cf_change("If the CF got a 5% increase, what would 99490 pay?")
    Decimal('5')
    >>> asked_cf_change("If the conversion factor were cut by 10%, what would 99214 pay?")
    Decimal('-10')
    >>> asked_cf_change("Suppose CMS had cut the conversion factor 2% for 2026: what would 99213 have paid?")
    Decimal('-2')
    >>> asked_cf_change("Was 93888 2.83 percent lower in 2025 than 2024?") is None
    True
    """
    m = _CF_CHANGE.search(text)
    # a supposition ("would", "if", "what happens") about the conversion factor, not a change asked about ("Was
    # 93888 2.83 percent lower in 2025?")
    if not m or not _SUPPOSED.search(text) or not re.search(r"\bconversion factors?\b|\bCF\b", text, re.IGNORECASE):
        return None
    pct = Decimal(m.group("pct") or m.group("pct2") or m.group("pct3"))
    way = (m.group("way") or m.group("way2") or m.group("way3")).lower()
    return -pct if way.startswith(("cut", "reduc", "decrease", "drop", "lower", "trim", "shav", "slash", "par", "fell",
                                   "went down")) else pct


# "mean" as a statistic ("the mean payment", "mean of"), not the verb ("I mean shift 100 visits")
_STATISTIC = re.compile(r"\b(?P<mean>average|avg|(?<=the )mean|mean(?=\s+(?:of|\d{4}|national|non-?facility|facility|"
                        r"payment|amount|value|rate|work|total|rvu)))\b|\b(?P<median>median)\b", re.IGNORECASE)


def asked_statistic(text: str, codes: int) -> str:
    """"mean" or "median" when a question asks it of two codes or more ("the average payment of the APCM codes").

    >>> asked_statistic("What is the median payment of 99202-99205?", 4), asked_statistic("average of 99213", 1)
    ('median', '')
    >>> asked_statistic("What is the mean 2026 payment of 99212-99215?", 4), asked_statistic("i mean shift 100", 2)
    ('mean', '')
    """
    m = _STATISTIC.search(text)
    if not m or codes < 2:
        return ""
    return "median" if m.group("median") else "mean"


_RATE = re.compile(r"(?:\bper|\ban?|\beach|\bby the|/)[\s-]*(?P<unit>hour|hr|minute|min)\b|\b(?P<unit2>hourly)\b"
                   r"|\b(?P<unit3>hour|minute)ly\s+(?:rate|pay|payment|equivalent)", re.IGNORECASE)
_RATE_NOT = re.compile(r"\b(?:spen[dt]|spending|takes?|took|lasts?|lasted|within|in)\s+(?:an?|one)\s+(?:hour|minute)\b",
                       re.IGNORECASE)
_MINUTES = re.compile(r"\b(?P<n>\d{1,3})[- ]?(?:min|mins|minutes?)\b", re.IGNORECASE)


def asked_rate(text: str) -> str:
    """"hour" or "minute" when the question asks a payment per unit of time ("what is 99490 worth per hour",
    "hourly rate of 99497", "per-minute rate"); "" otherwise, and for time spent ("if I spend an hour on CCM").

    >>> asked_rate("What is 99490 worth per hour in 2026?"), asked_rate("Per-minute rate for 99497?")
    ('hour', 'minute')
    >>> asked_rate("If I spend an hour on CCM for one patient, what do I bill?"), asked_rate("99213 in 2026")
    ('', '')
    """
    m = _RATE.search(text)
    if not m:
        return ""
    if _RATE_NOT.search(text) and not re.search(r"\bper\b|\bhourly\b|\brate\b|/\s*(?:hr|hour|min)", text,
                                                re.IGNORECASE):
        return ""
    unit = (m.group("unit") or m.group("unit2") or m.group("unit3")).lower()
    return "hour" if unit.startswith("h") else "minute"


def asked_minutes(text: str) -> int | None:
    """The minutes a question gives its code ("a 40-minute 99215", "99490 (20 minutes)"): one number of minutes,
    none when it gives none or several.

    >>> asked_minutes("What is 99490 (20 minutes) worth per hour?"), asked_minutes("99213 per hour")
    (20, None)
    """
    found = {int(m.group("n")) for m in _MINUTES.finditer(text)}
    return found.pop() if len(found) == 1 and 0 not in found else None


_CROSSED = re.compile(r"\b(?P<a>[0-9A-Z]\d{3}[0-9A-Z])(?:'s)?\s+(?:\w+\s+){0,2}?(?:in\s+|for\s+)?(?:CY\s?)?(?P<ya>20[1-3]\d)\b"
                      r".{0,40}?\b(?:vs\.?|versus|compared? (?:to|with)|against|and|or|with)\s+(?:the\s+)?"
                      r"(?P<b>[0-9A-Z]\d{3}[0-9A-Z])(?:'s)?\s+(?:\w+\s+){0,2}?(?:in\s+|for\s+)?(?:CY\s?)?"
                      r"(?P<yb>20[1-3]\d)\b", re.IGNORECASE)


def asked_crossed(text: str) -> tuple[tuple[str, int], ...]:
    """Two codes each with its own year ("99213 in 2026 vs 99214 in 2025"): ((code, year), (code, year)); () when
    the codes or the years are the same, or the question pairs no code with a year.

    >>> asked_crossed("How does 99213 in 2026 compare with 99214 in 2025?")
    (('99213', 2026), ('99214', 2025))
    >>> asked_crossed("99213 vs 99214 in 2025 and 2026")
    ()
    """
    m = _CROSSED.search(text)
    if not m or m.group("a").upper() == m.group("b").upper() or m.group("ya") == m.group("yb"):
        return ()
    return (m.group("a").upper(), int(m.group("ya"))), (m.group("b").upper(), int(m.group("yb")))


_QP = re.compile(r"\bQPs?\b|\bqualifying (?:APM|alternative payment model) participants?\b|"
                 r"\bqualifying participants?\b|\badvanced APMs?\b", re.IGNORECASE)
# "the two 2026 conversion factors ... for 99214": from CY2026 one is for QPs and one for other clinicians
_TWO_CFS = re.compile(r"\bnon-?QPs?\b", re.IGNORECASE)
# "how much more does 27447 pay under the QP CF?": the QP amount against the other CF's
_QP_MORE = re.compile(r"\bhow much (?:more|less|extra|higher|lower)\b|\b(?:more|less|extra)\s+(?:\w+\s+){0,3}?(?:under|"
                      r"with|at)\b|\bdifference\b|\bgain\b|\bbump\b", re.IGNORECASE)
_TWO_CF_WORDS = re.compile(r"\b(?:two|both|2)\s+(?:(?:CY\s*)?\d{4}\s+)?(?:conversion\s+factors?|CFs?)\b"
                           r"|\beach\s+conversion\s+factor\b", re.IGNORECASE)
# Modifiers written on a code ("99214-25") or named ("modifier 95") that the fee schedule file has no rows for; numeric
# ones are the CPT/HCPCS modifiers (so "99202-05", a range written short, is not read as one)
_CODE_MODIFIER = re.compile(r"\b[0-9A-Z]\d{3}[0-9A-Z]-([0-9A-Z]{2})\b|\b(?i:modifiers?)\s*-?\s*([0-9A-Z]{2})\b|"
                            r"\b([0-9A-Z]{2})\s+(?i:modifier)\b")      # letters in capitals: "modifier is" is no modifier
_NOT_MODIFIERS = frozenset({"IS", "OF", "ON", "TO", "IN", "IT", "OR", "AN", "AT", "BY", "IF", "NO", "SO", "UP", "DO",
                            "BE", "ME", "MY", "US", "WE"})
NUMERIC_MODIFIERS = frozenset({"22", "24", "25", "27", "32", "33", "47", "50", "51", "52", "54", "55", "56", "57",
                               "58", "59", "62", "63", "66", "76", "77", "78", "79", "80", "81", "82", "90", "91",
                               "92", "93", "95", "96", "97", "99"})


_MODIFIER_LIST = re.compile(r"\b(?i:modifiers)\s*-?\s*([0-9A-Z]{2}(?:\s*(?:,|and|&|\+|/)\s*[0-9A-Z]{2})+)\b|"
                            r"\b([0-9A-Z]{2}(?:\s*(?:,|and|&|\+|/)\s*[0-9A-Z]{2})+)\s+(?i:modifiers)\b|"
                            r"\b[0-9A-Z]\d{3}[0-9A-Z]((?:-[0-9A-Z]{2}){2,})\b")


def other_modifiers(text: str) -> tuple[str, ...]:
    """Modifiers a question writes that are not the pricing modifiers the file has rows for (26, TC, 53).

    >>> other_modifiers("What does 99214-25 pay?"), other_modifiers("99213 with modifier 95"), other_modifiers("99202-05")
    (('25',), ('95',), ())
    >>> other_modifiers("Which modifier is used for 99214?"), other_modifiers("G0556 with the GT modifier")
    ((), ('GT',))
    >>> other_modifiers("99213 with modifiers 25 and 59"), other_modifiers("What does 20610-59-RT pay?")
    (('25', '59'), ('59', 'RT'))
    """
    written = [next(g for g in m.groups() if g).upper() for m in _CODE_MODIFIER.finditer(text)]
    for m in _MODIFIER_LIST.finditer(text):         # "modifiers 25 and 59", "25 and 59 modifiers", "99213-25-59"
        written += [t.upper() for t in re.findall(r"\b[0-9A-Za-z]{2}\b", next(g for g in m.groups() if g))]
    found = []
    for mod in written:
        if mod in ("26", "TC", "53") or (mod.isdigit() and mod not in NUMERIC_MODIFIERS) or mod in _NOT_MODIFIERS or \
                (not mod.isdigit() and not re.fullmatch(r"[A-Z][A-Z0-9]", mod)):
            continue
        found.append(mod)
    return tuple(dict.fromkeys(found))


def _asks_definition(text: str) -> bool:
    """'What is APCM' yes; 'What is the payment for 99490' no (that is a lookup); 'What are the consent
    requirements for APCM?' no (a rule question)."""
    for m in _DEFINITION.finditer(text):
        rest = re.split(r"[?.;]|\band\b", text[m.end():], maxsplit=1)[0]
        if not _VALUE_WORDS.search(rest) and not _ASPECT.search(rest):
            return True
    return False


# Words that ask nothing by themselves: "What about 99490?", "Tell me about APCM codes" are lookups.
_FILLER = frozenset("what whats which who tell about show give info information details detail please code codes "
                    "hcpcs cpt medicare cms the and for with under there any this that its year years "
                    # a setting named in shorthand ("99214 fac vs nonfac 2026") asks for the row
                    "fac nonfac facility non-facility nonfacility setting settings both national".split())


@lru_cache(maxsize=1)
def _family_names() -> tuple[str, ...]:
    """Every family synonym, lower case, longest first (so "chronic care management" goes before "care")."""
    return tuple(sorted((s.lower() for f in load_families() for s in f.synonyms), key=len, reverse=True))


def _topical(text: str) -> bool:
    """Does the question name a topic beyond codes, families and years ("What performance measurement
    applies to APCM practices?")? Such a question is a rule question, not a lookup."""
    rest = text.lower()
    for name in _family_names():
        rest = rest.replace(name, " ")
    return any(w not in _FILLER for w in re.findall(r"[a-z][a-z'-]{2,}", rest))


# Words of a change question that name no topic ("How has 99490 changed over time?")
_CHANGE_WORDS = re.compile(_TREND.pattern + "|" + _MOVED_OVER_TIME.pattern +
                           r"|\b(?:how|has|have|had|did|does|do|been|ever|at all|it|its|much|"
                           r"anything|something|was|were|get|got|gets|there|any|to)\b|\bor (?:up|down)\b",
                           re.IGNORECASE)


def _about_values(text: str) -> bool:
    """A change question about the codes' values ("Has G0556 changed?", "Did 99490's payment drop?"), not about a
    rule ("Did CMS change the supervision rule for APCM?": a topic beyond the codes, no value word)."""
    return bool(_VALUE_WORDS.search(text) or not _topical(_CHANGE_WORDS.sub(" ", text))) and \
        not _RULE_TOPIC.search(_RULE_DOCUMENT.sub(" ", text))


# a part of a rule that only the rule text describes: a request for information, a comment solicitation
RULE_ITEM = re.compile(r"\b(?:RFIs?|requests? for information|comment solicitations?|solicit(?:ed|ing|ation of) "
                        r"(?:public )?comments?)\b", re.IGNORECASE)
# a rulemaking document named ("the 2026 rule", "the final rule"): the agent of a change, not a rule topic
_RULE_DOCUMENT = re.compile(r"\b(?:(?:CY\s*)?\d{4}|final|proposed|PFS)\s+(?:(?:PFS|final|proposed)\s+)*rules?\b",
                            re.IGNORECASE)


def _intents(text: str, codes: int, years: tuple[int, ...], since: int | None, reasons: bool = False,
             written: bool = True, counted: bool = False, rows_answer: bool = False) -> tuple[Intent, ...]:
    # "what year did 99213 pay the least?", "when was 99214 cut?": every year asked or on file
    which_year = bool(asks_which_year(text) or asks_when_moved(text) or asks_biggest_step(text)) and len(years) != 1
    """`codes`: how many codes the answer is about; `written`: they are written out (not a family's members);
    `counted`: a written code is billed more than once ("two units of 99498"), which makes a total; `rows_answer`: the
    question prices a volume ("100 patients a month") or the gap between a row's settings, which the rows answer."""
    if not codes or RULE_ITEM.search(text):    # "What is the APCM hybrid payment RFI about?": the rule text answers
        return (Intent.POLICY,)
    found = []
    if _asks_definition(text):
        found.append(Intent.DEFINITION)
    if _COMPARE.search(text) and codes > 1 and not MOST_CHANGE.search(text):     # "grew the most": changes, ranked
        found.append(Intent.COMPARE)
    if reasons or since is not None or len(years) > 1 or which_year or \
            (_TREND.search(text) and not (_COMPARE.search(text) and codes > 1) and _about_values(text)):
        found.append(Intent.TREND)
    # "What do G2211 and 99213 pay together?" sums the codes written; "Which CCM codes are add-ons?" sums nothing
    # (a family's members are alternatives and add-ons, never billed all at once)
    if (_TOTAL.search(text) and codes > 1 and written) or counted:
        found.append(Intent.TOTAL)
    if _HOW_VALUED.search(text) or (_RVU_NAMED.search(text) and _HOW_OR_WHY.search(text) and
                                    not (_TREND.search(text) or since is not None)):
        found.append(Intent.HOW_VALUED)
    # "Is 99439 an add-on code?", "What is the global period for 27447?": the row answers it
    if _LOOKUP.search(text) or (_PAYABLE.search(text) and not _QUALIFIED.search(text)) or \
            ((asked_parts(text) or asked_indicators(text) or _RVU_NAMED.search(text)) and
             not _QUALIFIED.search(text)) or \
            (not found and not _POLICY_ASK.search(text) and not _topical(text)) or rows_answer:
        found.append(Intent.LOOKUP)
    if not found:               # "Can APCM be billed with CCM?": a rule question about named codes
        found.append(Intent.POLICY)
    return tuple(dict.fromkeys(found))


def _measure(text: str) -> str:
    """What figures compare: 'payment', or the RVU the question names ('work_rvu', 'pe_rvu', 'mp_rvu' (one
    component asked alone), 'total_rvu')."""
    if PAY_WORDS.search(text) or (_LOOKUP.search(text) and not _RVU_NAMED.search(text)):
        return "payment"          # "How much did the PE RVU of 99213 drop?" asks about the RVU, not the payment
    if _MEASURE_WORK.search(text):
        return "work_rvu"
    component = [part for part in asked_parts(text) if part in ("pe", "mp")]
    if len(component) == 1:
        return f"{component[0]}_rvu"
    return "total_rvu" if _MEASURE_TOTAL.search(text) else "payment"


_LEVEL = re.compile(r"\b(?:level|lvl|tier)\s*([1-9])\b", re.IGNORECASE)


def _levels_asked(text: str, detection: Detection) -> tuple[str, ...]:
    """'APCM level 2' asks about G0557 alone: the named family's members at the levels written ((): none)."""
    by_key = {f.key: f for f in load_families()}
    levels = [int(m.group(1)) for m in _LEVEL.finditer(text)]
    return tuple(dict.fromkeys(by_key[key].levels[n - 1] for key in detection.families for n in levels
                               if n <= len(by_key[key].levels)))


# Qualifiers a question may use for one member of a family, and the word the CMS short descriptors use for it
# ("Transj care mgmt high f2f 7d" is 99496, "Office o/p est mod 30 min" 99214).
_QUALIFIERS = ((re.compile(r"\bstraightforward\b", re.IGNORECASE), ("sf",)),
               (re.compile(r"(?<!\bto )\blow(?:[\s-]complexity)?\b(?![\s-]income)(?!\s+to\s+high)", re.IGNORECASE),
                ("low",)),                  # not "from low to high", "high to low": an order
               (re.compile(r"\bmoderate(?:[\s-]complexity)?\b", re.IGNORECASE), ("mod",)),
               (re.compile(r"\bhigh[\s-]complexity\b|\bhigh(?=[\s-]+(?:TCM|level|MDM|medical decision))",
                           re.IGNORECASE), ("hi", "high")),
               (re.compile(r"\bnew patients?\b", re.IGNORECASE), ("new",)),
               (re.compile(r"\bestablished(?: patients?)?\b", re.IGNORECASE), ("est",)))


def narrowed_by_descriptor(plan: QuestionPlan, descriptors: dict[str, str], text: str) -> QuestionPlan:
    """A family asked with a qualifier of one member ("high-complexity TCM", "a moderate established office visit")
    is that member: the family's codes whose CMS short descriptor has every qualifier's word. Codes written out, no
    qualifier, or no member matching all of them: the plan unchanged. `descriptors`: code -> short descriptor.

    >>> p = QuestionPlan(named_codes=(), family_codes=("99495", "99496"), families=("TCM",), years=(), since=None,
    ...                  proposed=False, setting=Setting.BOTH, intents=(Intent.LOOKUP,))
    >>> d = {"99495": "Transj care mgmt mod f2f 14d", "99496": "Transj care mgmt high f2f 7d"}
    >>> narrowed_by_descriptor(p, d, "What did high-complexity TCM pay in 2022?").family_codes
    ('99496',)
    >>> narrowed_by_descriptor(p, d, "What does TCM pay?").family_codes
    ('99495', '99496')
    """
    if plan.named_codes or not plan.family_codes:
        return plan
    wanted = [words for pattern, words in _QUALIFIERS if pattern.search(text)]
    if not wanted:
        return plan
    found = tuple(c for c in plan.family_codes
                  if all(set(descriptors.get(c, "").lower().split()) & set(words) for words in wanted))
    return dataclasses.replace(plan, family_codes=found) if found and len(found) < len(plan.family_codes) else plan


# Question words the planner reads whose misspelling would change what a question asks ("wat is the paymnt for
# 99495" read as a rule question). Long or distinctive words only: a real word near a short one ("chance",
# "change") must not be rewritten.
_PLANNER_WORDS = ("what", "payment", "payments", "reimbursement", "facility", "nonfacility", "difference", "compare",
                  "compared", "increase", "increased", "decrease", "decreased", "amount", "valued", "valuation",
                  "between", "national", "conversion", "factor")
_WORD_RE = re.compile(r"[A-Za-z]{3,}")


def respelled(text: str) -> str:
    """`text` with each misspelled planner word written right (same first letter, similarity >= 0.84, the word not
    itself a planner word); everything else untouched.

    >>> respelled("wat is the paymnt for 99495 in 2025")
    'what is the payment for 99495 in 2025'
    >>> respelled("Is there a chance CMS will change the facility rate?")
    'Is there a chance CMS will change the facility rate?'
    """
    from difflib import SequenceMatcher

    def fix(match: re.Match[str]) -> str:
        word = match.group(0)
        lower = word.lower()
        if lower in _PLANNER_WORDS:
            return word
        best = max(((SequenceMatcher(None, lower, w).ratio(), w) for w in _PLANNER_WORDS if w[0] == lower[0]),
                   default=(0.0, ""))
        return best[1] if best[0] >= 0.84 else word
    return _WORD_RE.sub(fix, text)


def _families_added(text: str, detection: Detection) -> list:
    """The families a question adds by name to a written code ("99484 and the collaborative care codes", "G2211 plus
    the office visit codes"): a family name after "and", "plus", "as well as" ... and before "codes" or "services".

    >>> from carenav_core.codes.detect import detect
    >>> [f.key for f in _families_added("BHI codes 2026: 99484 and the collaborative care codes",
    ...                                  detect("BHI codes 2026: 99484 and the collaborative care codes"))]
    ['BHI']
    >>> _families_added("What does 99490 (chronic care management) pay?", detect("What does 99490 (chronic care management) pay?"))
    []
    """
    found = []
    for f in load_families():
        if f.key not in detection.families:
            continue
        names = "|".join(re.escape(n) for n in sorted(f.synonyms, key=len, reverse=True))
        if re.search(rf"\b(?:and|plus|&|as well as|along with|together with)\s+(?:the\s+|all\s+(?:the\s+)?|other\s+)?"
                     rf"(?:{names})s?\s+(?:codes?|services|visits)\b", text, re.IGNORECASE):
            found.append(f)
    return found


def plan_question(text: str, detection: Detection, today: date) -> QuestionPlan:
    """Read one question (already cleaned) and its detected codes into a QuestionPlan; misspelled planner words are
    read as meant first (`respelled`).

    >>> from carenav_core.codes import detect
    >>> q = "Compare 99490 and 99439 payments in 2026"
    >>> plan_question(q, detect(q), date(2026, 12, 1)).summary()
    'compare, lookup: 99490 with 99439; CY2026; both settings'
    """
    text = respelled(text)
    text = re.sub(r"(?<=\s)v\.?(?=\s)", "vs", text)         # "fac v. non-fac", "99213 v 99214": versus
    cf_year = asked_cf_year(text) if detection.codes else None
    # the year of a CF the rows are repriced at is not a year asked ("in 2026 at the 2020 CF": 2026)
    years, since = _years(_AT_CF_YEAR.sub(" ", text) if cf_year else text, today)
    upper = text.upper()
    filled = dict(detection.filled)       # a code a range names sits right after the range's first code

    def place(code: str) -> tuple[int, str]:
        own = upper.find(code)
        if code in filled and not 0 <= own < upper.find(filled[code]):      # first named by the range
            return upper.find(filled[code]), code
        return own, ""
    named = tuple(sorted((c for c in detection.codes if c in detection.explicit), key=place))
    if named and _COMPARE.search(text):
        # "APCM vs 99490": a family named in words (none of its codes written) is compared by its members
        worded = [f for f in load_families() if f.key in detection.families and not set(f.codes) & set(named)]
        named += tuple(c for f in worded for c in f.codes if c not in named and c in detection.codes)
    if named:
        # "99484 and the collaborative care codes": a family added to the written code by name is asked too
        named += tuple(c for f in _families_added(text, detection) for c in f.codes
                       if c not in named and c in detection.codes)
    family = _levels_asked(text, detection) or tuple(c for c in detection.codes if c not in detection.explicit)
    focus = len(named or family)
    # "Why does 99214 pay more than 99213?" compares two codes, "Why is 27447 higher in a facility?" two settings,
    # "Why was 99490 changed to require 20 minutes?" a rule: none is a change of payment over time. "Why did 99213
    # pay less in 2023 than in 2022?" is one: one code is asked (its family's other members are not).
    reasons = bool(WHY.search(text) and _MOVED.search(text)) and bool(detection.codes) and \
        not (_COMPARE.search(text) and focus > 1 and not _MOVED_OVER_TIME.search(text)) and \
        bool(years or since is not None or _DID.search(text) or _DROVE.search(text)) and \
        not _NOT_A_CHANGE.search(text) and \
        not asked_modifier(text)
    # "Did the facility PE RVU of 99213 drop in 2026?", "Did 99490's payment change in 2025?": a change of a value in
    # one year is a change from the year before
    # "Does the 2026 efficiency adjustment cut 99214's work RVU?": a present-tense question with one year asks the same
    does_in_year = bool(re.search(r"\b(?:does|do|will|would)\b", text, re.IGNORECASE)) and len(years) == 1
    changed_in = bool((_DID.search(text) or _WAS.search(text) or does_in_year) and _MOVED_OVER_TIME.search(text)) and \
        bool(detection.codes) and asked_cf_change(text) is None and \
        _about_values(text) and not (_COMPARE.search(text) and focus > 1)
    if (reasons or changed_in) and since is None and len(years) == 1:
        years = (years[0] - 1, years[0])    # a change is between two years: the year asked and the one before
    # (no year: the pipeline takes the newest final year the data hold for the code and the one before)
    measure = _measure(text)
    units = asked_units(text, named)
    # the codes written count for whose count a number is (a family's members are alternatives, not codes beside)
    volume = asked_volume(text, detection.codes, named) if detection.codes else None
    if volume is not None and not volume.per_visit:   # "billed 20 times a month": the volume's count, not 20 units
        # ... nor "twenty G2211 add-ons": a count the volume read is not also that many units of its code
        units = tuple(u for u in units if u[1] != volume.count)
    bundles = asked_bundles(text, named)
    versus_national = bool(_NATIONAL.search(text))
    switched = asked_switch(text, named)
    setting_gap = asks_setting_gap(text)
    dates = asked_dates(text)
    periods = asked_periods(text)
    ratio = asked_ratio(text, named)
    # asked once, read in several places below: a CF supposed as an amount, an amount to reach
    supposed_cf = asked_cf_value(text)
    cf_value = supposed_cf if detection.codes and cf_year is None else None
    target = asked_target(text) if detection.codes else None
    share = asked_share(text) if len(named or family) <= 3 else ""
    # both components asked: the global rows lead, the 26 and TC rows beside them, and the PC/TC indicator is said
    part_share = asked_part_share(text) if detection.codes else ""
    components = bool(detection.codes) and (asks_components(text) or bool(part_share))
    modifier = "" if components else asked_modifier(text)
    indicators = asked_indicators(text)
    if components and "pctc" not in indicators:
        indicators += ("pctc",)
    if periods and since is None:           # "2024-02-01": the year of each date is asked
        years = tuple(sorted({*years, *(first.year for first, _ in periods)}))
    rate = asked_rate(text) if detection.codes else ""
    extreme = asked_extreme(text) if detection.codes else ""
    sequestration = bool(detection.codes) and bool(re.search(r"\bsequest\w*", text, re.IGNORECASE))
    coinsurance = bool(detection.codes) and (bool(COINSURANCE.search(text)) or sequestration)
    patient_share = coinsurance and not re.search(r"\b(?:Medicare|the program)'?s\b|\b80\s*(?:%|percent)", text,
                                                  re.IGNORECASE)
    threshold = asked_threshold(text, focus)
    # a figure computed from the rows answers it, however it is put ("Do 93306-26 and 93306-TC add up to the global?")
    practitioner = asked_practitioner(text) if detection.codes else None
    nonpar = asked_nonpar(text) if detection.codes else ""
    same_session = asks_same_session(text, len(named), units)
    units_one_day = not same_session and (asks_units_one_day(text, units) or
                                           (volume is not None and (volume.per_visit or bool(_PER_VISIT.search(text))) and
                                            bool(units)))
    # "Which pays more: four units of 97530 or four units of 97110?": each code's units are a day of their own
    units_alternatives = (units_one_day or same_session) and len(units) > 1 and \
        units_are_alternatives(text, [code for code, _ in units])
    if same_session:        # the rule's indicator decides the reduction (and indicator 3's the endoscopic base): read
        indicators += tuple(k for k in ("mult_proc", "endo_base") if k not in indicators)
    elif units_one_day and "mult_proc" not in indicators:
        indicators += ("mult_proc",)
    computed = bool(volume) or setting_gap or components or bool(rate or extreme or coinsurance or threshold) or \
        practitioner is not None or bool(nonpar)
    return QuestionPlan(named_codes=named, family_codes=family, families=detection.families, years=years,
                        since=since, proposed=bool(_PROPOSED.search(text)),
                        # telehealth before CY 2024 was paid at the in-person place's rate: no setting is implied
                        setting=Setting.BOTH if years and max(years) < 2024 and _TELEHEALTH.search(text) and
                        not _POS.search(text) else _setting(text),
                        intents=_intents(text, focus, years, since, reasons, bool(named), bool(units),
                                         computed or bool(ratio) or target is not None),
                        measure=measure,
                        comments=bool(COMMENTS.search(text)), modifier=modifier,
                        parts=asked_parts(text), indicators=indicators, reasons=reasons,
                        setting_gap=setting_gap, units=units, volume=volume, bundles=bundles,
                        versus_national=versus_national, switched=switched, dates=dates, ratio=ratio,
                        ratio_percent=bool(ratio) and bool(asked_percent_of(text, named)),
                        periods=periods,
                        share=share, qp=bool(_QP.search(text)), other_modifiers=other_modifiers(text),
                        stated=None if volume or supposed_cf is not None else
                        asked_stated(text, named or family),
                        cf_change=asked_cf_change(text) if detection.codes else None,
                        statistic=asked_statistic(text, focus),
                        crossed=asked_crossed(text) if len(named) == 2 else (),
                        rate=rate,
                        minutes=asked_minutes(text) if focus == 1 else None,
                        components=components,
                        extreme=extreme, coinsurance=coinsurance, patient_share=patient_share, practitioner=practitioner,
                        screening=bool(re.search(r"\bscreening\b", text, re.IGNORECASE)),
                        nonpar=nonpar, same_session=same_session, units_one_day=units_one_day,
                        units_alternatives=units_alternatives, part_share=part_share, sequestration=sequestration,
                        threshold=threshold, cf_year=cf_year,
                        cf_value=cf_value, target=target,
                        qp_versus=bool(detection.codes) and (
                            (bool(_TWO_CFS.search(text) or _QP_MORE.search(text)) and bool(re.search(
                                r"(?<![-\w])QPs?\b|\bqualifying APM", text, re.IGNORECASE)))
                            or bool(_TWO_CF_WORDS.search(text))),
                        summed=(focus > 1 or len(years) > 1) and bool(SUMMED.search(text)) and not components)
