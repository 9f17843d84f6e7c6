import pytest

from carenav_core.codes.families import load_families, parse_families
from carenav_core.errors import ConfigError

REQUIRED = {"ACP": {"99497", "99498"}, "CCM": {"99490", "99439", "99487", "99489", "99491", "99437"},
            "PCM": {"99424", "99425", "99426", "99427"}, "TCM": {"99495", "99496"},
            "APCM": {"G0556", "G0557", "G0558"}}


def test_required_families_and_at_least_five_more():
    families = {f.key: set(f.codes) for f in load_families()}
    for key, codes in REQUIRED.items():
        assert codes <= families[key], key
    assert len(families) >= len(REQUIRED) + 5


def test_every_member_code_exists_in_loaded_data(fee_db):
    loaded = {r[0] for r in fee_db.execute("SELECT DISTINCT hcpcs FROM rvu").fetchall()}
    missing = {f.key: sorted(set(f.codes) - loaded) for f in load_families() if set(f.codes) - loaded}
    assert missing == {}


@pytest.mark.parametrize("toml, words", [
    ('[family.X]\nname="x"\nsynonyms=["x"]\ncodes=["99490"]\n', "reference"),
    ('[family.X]\nname="x"\nsynonyms=["x"]\ncodes=["9949"]\nreference="https://a"\n', "not HCPCS/CPT codes"),
    ('[family.X]\nname="x"\nsynonyms=["x"]\ncodes=["99490"]\nreference="https://a"\ncolour="red"\n', "colour"),
    ('[family.X]\nname="x"\nname="y"\n', "Cannot overwrite"),
    ('[familie.X]\nname="x"\n', "unknown top-level keys"),
])
def test_registry_validation(toml, words):
    with pytest.raises(ConfigError, match=words):
        parse_families(toml)


def test_family_levels_must_be_members():
    from carenav_core.codes.families import parse_families
    from carenav_core.errors import ConfigError
    entry = ('[family.X]\nname = "X"\nsynonyms = ["X"]\ncodes = ["G0556", "G0557"]\n'
             'reference = "https://example.org"\n')
    assert parse_families(entry + 'levels = ["G0556", "G0557"]\n')[0].levels == ("G0556", "G0557")
    with pytest.raises(ConfigError, match="not members"):
        parse_families(entry + 'levels = ["G0558"]\n')
