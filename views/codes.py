"""Codes: every loaded year for chosen codes, payment trend and year-over-year change. ?codes=G0556,G0557"""
import altair as alt
import streamlit as st

from carenav_core.pfs.lookup import search_codes
from carenav_core.pfs.valuation import value
from carenav_core.ui.resources import app_settings, require_fee_db
from carenav_core.ui.localities import locality_view
from carenav_core.pfs.rows import AMA_NOTICE, shows_cpt
from carenav_core.pfs.columns import BY_NAME
from carenav_core.ui.tables import column_config, csv_bytes, valuation_frame


settings = app_settings()
con = require_fee_db(settings)
st.title("Codes")
shared = [c for c in st.query_params.get("codes", "").upper().split(",") if c]
query = st.text_input("Find codes by code, family or descriptor words", value=st.query_params.get("q", ""),
                      placeholder="G0556, APCM, chronic care management, care mgmt")
found = search_codes(con, query) if query else []
names = dict(found) | {c: "" for c in shared if c not in dict(found)}
chosen = st.multiselect("Codes", options=list(names), default=shared or [c for c, _ in found[:6]],
                        format_func=lambda c: f"{c} {names.get(c, '')}".strip())
st.query_params.update({"codes": ",".join(chosen)} | ({"q": query} if query else {}))
if query and not found:
    st.info(f"No loaded code, family or descriptor matches {query!r}.")
if not chosen:
    st.stop()

rows, unpriced = value(con, chosen, years=50)
if unpriced:
    st.warning("Not priced in any loaded release: " + ", ".join(unpriced))
frame = valuation_frame(rows)
if frame.empty:
    st.stop()
st.dataframe(frame, column_config=column_config(st), hide_index=True, placeholder="—", width="stretch")
st.download_button("Download CSV (with provenance)", csv_bytes(rows), file_name="carenav_codes.csv", mime="text/csv")

st.subheader("By locality")
locality_view(con, chosen, rows)

trend = valuation_frame(rows, columns=tuple(BY_NAME[n] for n in ("hcpcs", "cy", "proposed", "payment_nonfac",
                                                                  "payment_fac")))
long = trend.melt(id_vars=["hcpcs", "cy", "proposed"], value_vars=["payment_nonfac", "payment_fac"],
                  var_name="setting", value_name="payment").dropna()
long["setting"] = long["setting"].map({"payment_nonfac": "non-facility", "payment_fac": "facility"})
long["vintage"] = long["proposed"].map({True: "proposed", False: "final"})
st.subheader("National payment by year")
chart = alt.Chart(long).mark_line(point=True).encode(
    x=alt.X("cy:O", title="Calendar year"), y=alt.Y("payment:Q", title="Payment ($)"),
    color=alt.Color("hcpcs:N", title="Code"), strokeDash=alt.StrokeDash("setting:N", title="Setting"),
    shape=alt.Shape("vintage:N", title="Vintage"),
    tooltip=["hcpcs", "cy", "setting", "vintage", alt.Tooltip("payment:Q", format="$,.2f")])

st.altair_chart(chart, width="stretch")

st.subheader("Year-over-year change")
wide = long.pivot_table(index=["hcpcs", "setting"], columns="cy", values="payment").sort_index(axis=1)
change = wide.pct_change(axis=1).iloc[:, 1:] * 100
change.columns = [f"{c} vs prior" for c in change.columns]
st.dataframe(change.round(1), placeholder="—",
             column_config={c: st.column_config.NumberColumn(c, format="%.1f%%") for c in change.columns})
st.caption("Payments are national, unadjusted by GPCIs: total RVUs × the conversion factor of the rule, rounded to cents. "
           "Proposed rows come from a proposed rule's Addendum B and may change in the final rule.")
if shows_cpt(rows):
    st.caption(AMA_NOTICE)
