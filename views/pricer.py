"""Claim pricer: claim lines in, allowed amount per line and in total, every reduction with its indicator and citation."""
import json

import pandas as pd
import streamlit as st

from carenav_core.pfs.pricer import ClaimFileError, claim_record, claim_workbook, price_claim, read_claim
from carenav_core.pfs.rows import AMA_NOTICE
from carenav_core.ui.resources import app_settings, require_fee_db

EXAMPLE = """code,modifier,units,facility,locality,date_of_service
27447,,1,Y,02402:02,2025-03-04
27130,50,1,Y,02402:02,2025-03-04
29881,,1,Y,02402:02,2025-03-04
27447,80,1,Y,02402:02,2025-03-04
99214,,1,N,13202:01,2026-02-10
71045,26,1,Y,13202:01,2026-02-10
99999,,1,N,02402:02,2025-01-01
99214,,1,N,02402:02,2019-06-01
99214,QQ,1,N,99999:01,2025-01-01
97110,GP,3,N,02402:02,2025-03-04
97140,GP CQ,2,N,02402:02,2025-03-04
74177,,1,N,13202:01,2026-02-10
70450,,1,N,13202:01,2026-02-10
"""

settings = app_settings()
con = require_fee_db(settings)
st.title("Claim pricer")
st.caption("One line per service: code, modifier(s), units, facility (Y/N), locality as MAC:LOC, date of service. "
           "Find a locality's MAC:LOC on the Codes page or with `carenav value 99214 --locality \"Seattle\"`.")
uploaded = st.file_uploader("Claim CSV", type=["csv"])
text = st.text_area("or edit the claim here", value=uploaded.getvalue().decode("utf-8-sig") if uploaded else EXAMPLE,
                    height=220)
try:
    lines, errors = read_claim(text)
except ClaimFileError as exc:
    st.error(str(exc))
    st.stop()
claim = price_claim(con, lines, errors)
record = claim_record(claim)

left, middle, right = st.columns(3)
left.metric("Total allowed", f"${claim.total:,.2f}")
middle.metric("Lines priced", len(claim.lines))
right.metric("Lines not priced", len(claim.errors))
if record["lines"]:
    frame = pd.DataFrame(record["lines"])
    frame["steps"] = [" · ".join(f"{s['name']} {s['indicator']} ×{s['factor'] or '—'} ({s['citation']})" for s in steps)
                      for steps in frame["steps"]]
    for column in ("fee", "uncapped_fee", "opps_cap", "allowed"):
        frame[column] = pd.to_numeric(frame[column])
    frame["rank"] = frame["rank"].where(frame["rank"] > 0)
    shown = ["line", "code", "modifiers", "units", "facility", "date_of_service", "label", "fee", "allowed", "steps",
             "rank", "multiple_factor", "bilateral_factor", "surgeon_factor", "opps_cap", "locality_name"]
    st.dataframe(frame[shown], hide_index=True, placeholder="—", width="stretch", column_config={
        "line": st.column_config.NumberColumn("Line", width="small"), "code": st.column_config.TextColumn("Code"),
        "modifiers": st.column_config.TextColumn("Mod"), "date_of_service": st.column_config.TextColumn("Date"),
        "fee": st.column_config.NumberColumn("Fee", format="dollar", help="Locality fee after the OPPS cap"),
        "allowed": st.column_config.NumberColumn("Allowed", format="dollar"),
        "opps_cap": st.column_config.NumberColumn("OPPS cap", format="dollar"),
        "rank": st.column_config.NumberColumn("MPPR rank"), "multiple_factor": "MPPR factor",
        "bilateral_factor": "Bilateral", "surgeon_factor": "Surgeon", "locality_name": "Locality",
        "label": st.column_config.TextColumn("Cite as"),
        "steps": st.column_config.TextColumn("Reductions (indicator, factor, rule)", width="large")})
    st.subheader("Reductions and their rules")
    for line in claim.lines:
        for step in line.steps:
            factor = f"× {step.factor}" if step.factor is not None else "not applied"
            st.markdown(f"- Line {line.claim.line} · {line.claim.code}: **{step.name}** — {step.indicator}, {factor}: "
                        f"{step.meaning} ([{step.citation}]({step.href}))")
if claim.errors:
    st.subheader("Lines not priced")
    st.dataframe(pd.DataFrame(record["errors"]), hide_index=True, placeholder="—", width="stretch")
for note in claim.notes:
    st.caption(note)
st.download_button("Download Excel (formulas + provenance)", claim_workbook(claim), file_name="carenav_claim.xlsx",
                   mime="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
st.download_button("Download JSON", json.dumps(record, indent=1), file_name="carenav_claim.json", mime="application/json")
st.caption("Allowed = fee × multiple-procedure factor × bilateral factor × surgeon factor, rounded to cents. RVUs come from "
           "the latest release of the date of service's year; the CF is the one in force on that date. Per date of "
           "service: surgery 100% / 50% (endoscopic families against their base code), therapy units after the first "
           "with half their practice expense, and the imaging / cardiovascular / ophthalmology technical components "
           "after the first less 50% / 25% / 20% (imaging professional components less 5%); each line's steps say "
           "which. The surgeon factor also holds the PT/OT assistant's 85% (CQ/CO). " + AMA_NOTICE)
