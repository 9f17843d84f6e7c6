"""The Codes page's locality section: state and locality picker, locality amounts next to national, the
spread across localities, policy indicators with meanings, CSV and Excel downloads."""
from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from carenav_core.pfs.indicators import indicator_values, load_indicators
from carenav_core.pfs.locality import directory, locality_records, locality_rows, locality_workbook

ALL = "All localities"
SHOWN = ["label", "hcpcs", "mod", "locality_name", "payment_nonfac", "payment_fac", "national_nonfac",
         "national_fac", "vs_national", "limiting_charge_nonfac", "nonpar_nonfac", "opps_cap_nonfac", "gpci_work",
         "gpci_pe", "gpci_mp", "other_cfs"]
MONEY = ("payment_nonfac", "payment_fac", "national_nonfac", "national_fac", "limiting_charge_nonfac",
         "nonpar_nonfac", "opps_cap_nonfac")
LABELS = {"payment_nonfac": "Locality non-fac", "payment_fac": "Locality fac", "national_nonfac": "National non-fac",
          "national_fac": "National fac", "limiting_charge_nonfac": "Limiting charge non-fac",
          "nonpar_nonfac": "Non-par non-fac", "opps_cap_nonfac": "OPPS cap non-fac"}


def _picker(con, years: list[int]) -> tuple[int, list[str] | None, str]:
    """(CY, MAC:LOC keys or None for all, state) chosen with widgets; choices kept in the URL."""
    book = directory(con)
    left, middle, right = st.columns(3)
    cy = left.selectbox("Year", years[::-1], key="loc_cy")
    states = sorted({p.state for p in book.localities(cy)})
    wanted_state = st.query_params.get("state", "WA")
    state = middle.selectbox("State", ["All states", *states],
                             index=(states.index(wanted_state) + 1) if wanted_state in states else 0, key="loc_state")
    places = [p for p in book.localities(cy) if state in ("All states", p.state)]
    names = {p.key: f"{p.name} ({p.key})" for p in places}
    key = right.selectbox("Locality", [ALL, *names], format_func=lambda k: names.get(k, k), key="loc_key")
    st.query_params["state"] = state if state != "All states" else ""
    return cy, ([key] if key != ALL else [p.key for p in places] if state != "All states" else None), state


def _frame(rows) -> pd.DataFrame:
    frame = pd.DataFrame(locality_records(rows))
    for column in MONEY + ("gpci_work", "gpci_pe", "gpci_mp"):
        frame[column] = pd.to_numeric(frame[column])
    frame["vs_national"] = (frame["payment_nonfac"] / frame["national_nonfac"] - 1) * 100
    return frame


def _spread_chart(frame: pd.DataFrame) -> alt.Chart:
    """Each locality's non-facility payment per code (a tick per locality), national amount as a rule."""
    ticks = alt.Chart(frame).mark_tick(thickness=2, size=18).encode(
        x=alt.X("payment_nonfac:Q", title="Non-facility payment ($)"), y=alt.Y("hcpcs:N", title="Code"),
        color=alt.Color("state:N", legend=None),
        tooltip=["label", "locality_name", alt.Tooltip("payment_nonfac:Q", format="$,.2f"),
                 alt.Tooltip("vs_national:Q", format="+.1f", title="% vs national")])
    national = alt.Chart(frame.drop_duplicates("hcpcs")).mark_point(shape="diamond", size=90, color="black",
                                                                      filled=True).encode(
        x="national_nonfac:Q", y="hcpcs:N", tooltip=[alt.Tooltip("national_nonfac:Q", format="$,.2f", title="national")])
    return ticks + national


def _indicators(con, codes: list[str], cy: int) -> pd.DataFrame:
    """One line per code and policy indicator: value, plain meaning, manual reference."""
    book = load_indicators()
    flags = indicator_values(con, [(cy, code, "") for code in codes])
    lines = []
    for (_, code, _), values in sorted(flags.items()):
        for meaning in book.explain_all(values):
            lines.append({"code": code, "indicator": meaning.label, "value": meaning.value, "meaning": meaning.meaning,
                          "reference": meaning.citation, "href": meaning.href})
    return pd.DataFrame(lines)


def locality_view(con, codes: list[str], national_rows) -> None:
    """The whole section (called from views/codes.py after the national table)."""
    years = sorted({r.cy for r in national_rows if not r.proposed})
    if not years:
        st.info("Locality amounts need a final-rule year; these codes have proposed rows only.")
        return
    cy, keys, state = _picker(con, years)
    result = locality_rows(con, codes, cys=[cy], places=keys)
    for note in result.notes:
        st.caption(note)
    if not result.rows:
        st.info("No locality amounts for these codes and places.")
        return
    frame = _frame(result.rows)
    st.dataframe(frame[SHOWN], hide_index=True, placeholder="—", width="stretch", column_config={
        **{c: st.column_config.NumberColumn(LABELS[c], format="dollar") for c in MONEY},
        "vs_national": st.column_config.NumberColumn("Non-fac vs national", format="%+.1f%%"),
        "label": st.column_config.TextColumn("Cite as"), "locality_name": st.column_config.TextColumn("Locality"),
        "hcpcs": st.column_config.TextColumn("Code"), "mod": st.column_config.TextColumn("Mod"),
        "gpci_work": st.column_config.NumberColumn("Work GPCI", format="%.3f"),
        "gpci_pe": st.column_config.NumberColumn("PE GPCI", format="%.3f"),
        "gpci_mp": st.column_config.NumberColumn("MP GPCI", format="%.3f"),
        "other_cfs": st.column_config.TextColumn("Other CFs (non-fac / fac)")})
    left, right = st.columns(2)
    left.download_button("Download localities CSV", frame.drop(columns="vs_national").to_csv(index=False).encode(),
                         file_name=f"carenav_localities_{cy}.csv", mime="text/csv")
    right.download_button("Download localities Excel", locality_workbook(result.rows, result.notes),
                          file_name=f"carenav_localities_{cy}.xlsx",
                          mime="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
    st.markdown(f"**Spread across {frame['locality_name'].nunique()} localities, CY{cy}** (diamond: national)")
    st.altair_chart(_spread_chart(frame), width="stretch")
    with st.expander("Policy indicators with meanings", expanded=False):
        st.dataframe(_indicators(con, codes, cy), hide_index=True, placeholder="—", width="stretch",
                     column_config={"href": st.column_config.LinkColumn("Source")})
    st.caption("Locality payment = (work RVU × work GPCI + PE RVU × PE GPCI + MP RVU × MP GPCI) × CF, rounded to cents; "
               "non-participating = 95%, limiting charge = 115% of non-participating; the OPPS cap applies where "
               "the CY's OPPSCAP file lists the code.")
