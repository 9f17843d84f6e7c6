"""CareNav: navigation only. Pages live in pages/; the work is done in carenav_core."""
import streamlit as st

st.set_page_config(page_title="CareNav", page_icon="🩺", layout="wide")
navigation = st.navigation([
    st.Page("pages/chat.py", title="Chat", icon="💬", default=True),
    st.Page("pages/codes.py", title="Codes", icon="🔎"),
    st.Page("pages/screen.py", title="Screen", icon="🧭"),
    st.Page("pages/data.py", title="Data", icon="🗄️"),
])
navigation.run()
