"""Placeholder while the lesson is written (replaced by the lesson itself)."""
import streamlit as st

from app import ui

st.title("claims")
ui.stop("This lesson is being written.")
