"""CareNav: navigation only. Pages live in views/ (not pages/, which Streamlit would also serve in its legacy multipage mode); the work is done in carenav_core."""
import streamlit as st

from carenav_core.ui.auth import require_sign_in

st.set_page_config(page_title="CareNav", page_icon=":material/health_and_safety:", layout="wide")
require_sign_in()   # sign-in (OIDC + allow-list), or anonymous on loopback only
navigation = st.navigation([
    st.Page("views/chat.py", title="Chat", icon=":material/chat:", default=True),
    st.Page("views/codes.py", title="Codes", icon=":material/search:"),
    st.Page("views/pricer.py", title="Claim pricer", icon=":material/receipt_long:"),
    st.Page("views/screen.py", title="Screen", icon=":material/diversity_1:"),
    st.Page("views/data.py", title="Data", icon=":material/database:"),
    st.Page("views/evaluation.py", title="Evaluation", icon=":material/fact_check:"),
])
navigation.run()
