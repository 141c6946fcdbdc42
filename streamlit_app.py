"""Entry point: routing (st.navigation over the files in pages/) and the shared sidebar. Nothing else."""

import streamlit as st

from app import ui
from app.lessons import LESSONS

ui.routed_by_navigation()
ui.page_config()
home = st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)
pages = [home] + [st.Page(lesson.path, title=lesson.title, icon=lesson.icon, url_path=lesson.slug) for lesson in LESSONS]
page = st.navigation(pages)
ui.sidebar()
badge = st.sidebar.empty()
ui.warm_start()
ui.start_page(page.url_path or "home", is_lesson=page is not home, badge_slot=badge)
page.run()
ui.finish_page()
