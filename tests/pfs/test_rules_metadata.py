"""data/pfs_rules.toml: every value has a tag and a {title, href} reference (the shared schema of
carenav_core/params.py); unknown and duplicate keys and overlapping periods are rejected."""
from datetime import date
from decimal import Decimal

import pytest

from carenav_core.errors import ConfigError
from carenav_core.pfs.rules import RULES_FILE, load_rules, parse_rules

GOOD = """
[final.2025]
rule_id = "CMS-1807-F"
document_number = "2024-25382"
fr_citation = "89 FR 97710"
published = 2024-12-09
tag = "O"
reference = [{title = "Federal Register 89 FR 97710", href = "https://www.federalregister.gov/citation/89-FR-97710"}]
[[final.2025.cf]]
amount = "32.3465"
effective = 2025-01-01
until = 2025-12-31
tag = "O"
reference = [{title = "CMS RVU25D", href = "https://example.gov/rvu25d"}]
"""


def test_shipped_metadata_loads_with_every_year_and_proposed_rule():
    book = load_rules()
    assert sorted(book.final) == [2020, 2021, 2022, 2023, 2024, 2025, 2026]
    assert {"CMS-1832-P", "CMS-1848-P"} <= set(book.proposed)
    for rule in [*book.final.values(), *book.proposed.values()]:
        assert rule.reference.startswith("https://") and rule.tag in ("O", "D", "S", "U")
        assert all(cf.href.startswith("https://") and cf.reference[0].title for cf in rule.cfs)


def test_2024_split_and_2026_variants():
    book = load_rules()
    before, others = book.final[2024].cf_for(date(2024, 3, 8))
    after, _ = book.final[2024].cf_for(date(2024, 3, 9))
    assert (before.value, after.value) == (Decimal("32.7442"), Decimal("33.2875"))
    assert [o.value for o in others] == [Decimal("33.2875")]
    non_qp, qp = book.final[2026].cf_for(date(2026, 7, 1))
    assert non_qp.value == Decimal("33.4009") and "non-QP" in non_qp.label
    assert qp[0].value == Decimal("33.5675") and qp[0].label == "CY2026 QP"


def test_good_fixture_parses():
    assert parse_rules(GOOD).final[2025].fr_url == "https://www.federalregister.gov/citation/89-FR-97710"


CF_REF = 'reference = [{title = "CMS RVU25D", href = "https://example.gov/rvu25d"}]\n'
CF = '[[final.2025.cf]]\namount = "1"\neffective = 2025-06-01\nuntil = 2025-12-31\ntag = "O"\n' + CF_REF


@pytest.mark.parametrize("broken, words", [
    (GOOD.replace(CF_REF, ""), ["final.2025", "cf.0.reference", "Field required"]),
    (GOOD.replace('reference = [{title = "Federal Register 89 FR 97710", href = "https://www.federalregister.gov/citation/89-FR-97710"}]\n', ""),
     ["final.2025", "reference"]),
    (GOOD.replace('href = "https://example.gov/rvu25d"', 'href = "see the CMS site"'), ["href", "pattern"]),
    (GOOD + 'colour = "red"\n', ["colour", "Extra inputs are not permitted"]),
    (GOOD.replace('tag = "O"\nreference = [{title = "Fed', 'tag = "O"\ntag = "S"\nreference = [{title = "Fed'), ["Cannot overwrite"]),
    (GOOD + "[surprise]\nx = 1\n", ["unknown top-level keys", "surprise"]),
    (GOOD.replace('amount = "32.3465"', 'amount = "-1"'), ["amount", "greater than 0"]),
    (GOOD.replace('until = 2025-12-31\n', ""), ["needs `until`"]),
    (GOOD.replace('tag = "O"\nreference = [{title = "CMS', 'tag = "official"\nreference = [{title = "CMS'), ["tag", "'O'"]),
    (GOOD + CF, ["overlaps the value from 2025-06-01"]),
])
def test_broken_metadata_is_rejected_with_a_clear_message(broken, words):
    with pytest.raises(ConfigError) as info:
        parse_rules(broken)
    for word in words:
        assert word in str(info.value)


def test_shipped_file_has_no_duplicate_tables():
    text = RULES_FILE.read_text()
    headers = [line for line in text.splitlines() if line.startswith("[") and not line.startswith("[[")]
    assert len(headers) == len(set(headers))
