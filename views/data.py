"""Data: what is loaded (releases, rule documents), when it was built, and the status of each backend."""
import pandas as pd
import streamlit as st

from carenav_core.pfs.lookup import build_info, proposed_rules, releases
from carenav_core.status import backend_status, store_documents
from carenav_core.ui.resources import app_settings, app_store, require_fee_db, run_build


settings = app_settings()
st.title("Data")
for item in backend_status(settings, app_store(settings)):
    (st.success if item.ok else st.warning)(f"**{item.name}**: {item.detail}")
con = require_fee_db(settings)
info = build_info(con)
st.write(f"Fee-schedule database built **{info.get('built_at', '?')}** — {int(info.get('rows', 0)):,} rows.")
st.subheader("CMS RVU releases")
st.dataframe(pd.DataFrame(releases(con)), hide_index=True, width="stretch",
             column_config={"used_for_valuation": st.column_config.CheckboxColumn("latest of its CY")})

st.subheader("Proposed rules (Addendum B)")
proposed = proposed_rules(con)
if proposed:
    st.dataframe(pd.DataFrame(proposed), hide_index=True)
else:
    st.info("No proposed-rule Addendum B file is loaded, so no proposed rows appear.")
st.subheader("Indexed documents (rule text and program corpus)")
documents = store_documents(app_store(settings))
if documents:
    st.dataframe(pd.DataFrame(documents), hide_index=True, width="stretch")
else:
    st.info("No document is indexed yet (or the store is down): run the build.")
with st.expander("Rebuild"):
    force = st.checkbox("Force: re-read unchanged releases too")
    if st.button("Rebuild now"):
        run_build(settings, force=force)
