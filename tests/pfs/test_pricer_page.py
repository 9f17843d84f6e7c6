"""The Claim pricer page and the Codes page's locality section, run as Streamlit scripts (AppTest)."""
from decimal import Decimal
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def pfs_env(built_settings, monkeypatch):
    monkeypatch.setenv("CARENAV_DATA_DIR", str(built_settings.data_dir))
    monkeypatch.delenv("CARENAV_DUCKDB_PATH", raising=False)
    st.cache_resource.clear()
    st.cache_data.clear()
    yield built_settings
    st.cache_resource.clear()


def test_pricer_page_prices_the_example_and_lists_bad_lines(pfs_env):
    at = AppTest.from_file(str(ROOT / "views" / "pricer.py"), default_timeout=120).run()
    assert not at.exception
    lines, errors = at.dataframe[0].value, at.dataframe[1].value
    total = Decimal(at.metric[0].value.replace("$", "").replace(",", ""))
    assert total == sum(Decimal(str(a)) for a in lines["allowed"]) and len(lines) == 10
    assert set(errors["line"]) == {8, 9, 10}
    steps = " ".join(lines["steps"])        # the therapy, PT-assistant and imaging rules are applied, not only noted
    assert "therapy multiple procedure" in steps and "therapy assistant (CQ)" in steps
    assert "diagnostic imaging multiple procedure" in steps
    assert any("§40.7" in m.value for m in at.markdown) and any("§20.4.3" in m.value for m in at.markdown)


def test_pricer_page_says_what_is_wrong_with_the_file(pfs_env):
    at = AppTest.from_file(str(ROOT / "views" / "pricer.py"), default_timeout=120).run()
    at.text_area[0].set_value("code,units\n99214,1\n").run()
    assert not at.exception and "no column facility" in at.error[0].value


def test_codes_page_locality_section(pfs_env):
    at = AppTest.from_file(str(ROOT / "views" / "codes.py"), default_timeout=120)
    at.query_params["codes"] = "99214"
    at.query_params["state"] = "WA"
    at.run()
    assert not at.exception
    localities = at.dataframe[1].value
    assert list(localities["locality_name"]) == ["SEATTLE (KING CNTY)", "REST OF WASHINGTON"]
    assert set(localities["label"]) == {"[PFS CY2026 RVU26C · GPCI2026 WA 02]", "[PFS CY2026 RVU26C · GPCI2026 WA 99]"}
    assert any(b.label == "Download localities Excel" for b in at.get("download_button"))
