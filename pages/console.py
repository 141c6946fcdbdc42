"""The presenter console: the lecturer's own screen beside the projector — the speaker note, the next slide, the
time, the slide list; → and ← here move the projector too. Opened from the deck bar's Console link (its address
names the presentation's room); the logic is app/lecture/console.py, the panel app/ui/console.py."""

import streamlit as st

from app.ui import console

st.title("Presenter console")
console.page()
