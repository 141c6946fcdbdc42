"""Entry point: routing over pages/ and the shared sidebar. Nothing else lives here."""

import streamlit as st

from app import ui
from app.lessons import LESSONS

ui.routed_by_navigation()
ui.page_config()
pages = [st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)]
pages += [st.Page(lesson.path, title=lesson.title, icon=lesson.icon, url_path=lesson.slug) for lesson in LESSONS]
page = st.navigation(pages)
ui.sidebar()
badge = st.sidebar.empty()
ui.warm_start()
page.run()
ui.badge(badge)
