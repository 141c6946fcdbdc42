"""Lecture mode's library: the deck of views, the handout, QR codes, the system chromium that prints
the handout, and the gallery of worked examples. Pure: no streamlit."""
