"""Data: what is loaded (releases, rule documents), when it was built, and the status of each backend."""
import pandas as pd
import streamlit as st

from carenav_core.pfs.lookup import build_info, proposed_rules, releases
from carenav_core.retrieval.background import start_background_index
from carenav_core.retrieval.catalog import rule_catalog
from carenav_core.retrieval.progress import eta_words, index_progress, progress_note
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
st.dataframe(pd.DataFrame(releases(con)), hide_index=True, placeholder="—", width="stretch",
             column_config={"used_for_valuation": st.column_config.CheckboxColumn("latest of its CY")})

st.subheader("Proposed rules (Addendum B)")
proposed = proposed_rules(con)
if proposed:
    st.dataframe(pd.DataFrame(proposed), hide_index=True, placeholder="—")
else:
    st.info("No proposed-rule Addendum B file is loaded, so no proposed rows appear.")
st.subheader("Federal Register rule text")


@st.fragment(run_every=5)
def rule_text_progress() -> None:
    """How far the rule-text index is (refreshed every 5 s); answers carry a note until it is complete."""
    progress = index_progress(app_store(settings))
    if progress.complete:
        st.success(f"Rule text complete: {progress.total:,} paragraphs indexed.")
        return
    note = progress_note(progress) or ""
    eta = f" — ETA {eta_words(progress.eta_seconds)}" if progress.running else ""
    st.progress(progress.fraction, text=f"{note}{eta}")
    if not progress.running and not progress.problem and st.button("Index the rule text now (in the background)"):
        start_background_index(settings)
        st.toast("Indexing started; progress appears here.")


rule_text_progress()
catalog = rule_catalog(settings, app_store(settings))
st.dataframe(pd.DataFrame([entry.row() for entry in catalog]), hide_index=True, placeholder="—", width="stretch",
             column_config={"source": st.column_config.LinkColumn("source")})
st.subheader("Program corpus (screener)")
programs = [d for d in store_documents(app_store(settings)) if d["collection"] != "rules"]
if programs:
    st.dataframe(pd.DataFrame(programs), hide_index=True, placeholder="—", width="stretch")
else:
    st.info("No program document is indexed yet (or the store is down): run the build.")
with st.expander("Rebuild"):
    force = st.checkbox("Force: re-read unchanged releases too")
    if st.button("Rebuild now"):
        run_build(settings, force=force)
