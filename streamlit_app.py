"""Entry point: routing (st.navigation over the files in pages/), the shared sidebar, and in lecture mode the
deck bar above the page; the page runs between ui.start_page and ui.finish_page, then ui.after_page. Nothing else."""

from app.core import prefetch, startup, visitors

startup.mark("router start")
prefetch.start()  # once per process (``streamlit run`` too): the disk reads ahead what the heavy imports will read
visitors.page_started()  # from here to ui.after_page, background work steps aside (app.core.visitors)
import streamlit as st  # noqa: E402

from app import ui  # noqa: E402
from app.lessons import LESSONS, TOOLS  # noqa: E402

ui.routed_by_navigation()
ui.page_config()
home = st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)
pages = [home] + [
    st.Page(
        p.path,
        title=p.title,
        icon=p.icon,
        url_path=p.slug,
        visibility="hidden" if getattr(p, "hidden", False) else "visible",
    )
    for p in (*LESSONS, *TOOLS)
]
page = st.navigation(pages, expanded=True)  # every lesson and Lecture mode in view, no "View more"
ui.sidebar()
badge = st.sidebar.empty()
slug = page.url_path or "home"
ui.start_page(slug, is_lesson=page is not home)
ui.follow_deck(slug)  # lecture mode: the deck and slide a link brought
ui.deck_bar()
try:
    page.run()
except ui.Stopped:  # the page ended early through ui.stop, saying why
    ui.finish_page(badge, stopped=True)
else:
    ui.finish_page(badge)
finally:
    ui.after_page()  # the warm start begins after the first page, and waits while pages run
