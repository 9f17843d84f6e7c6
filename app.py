"""CareNav: navigation only. Pages live in pages/; the work is done in carenav_core."""
import streamlit as st

st.set_page_config(page_title="CareNav", page_icon=":material/health_and_safety:", layout="wide")
navigation = st.navigation([
    st.Page("pages/chat.py", title="Chat", icon=":material/chat:", default=True),
    st.Page("pages/codes.py", title="Codes", icon=":material/search:"),
    st.Page("pages/screen.py", title="Screen", icon=":material/diversity_1:"),
    st.Page("pages/data.py", title="Data", icon=":material/database:"),
    st.Page("pages/evaluation.py", title="Evaluation", icon=":material/fact_check:"),
])
navigation.run()
