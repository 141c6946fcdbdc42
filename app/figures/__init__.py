"""Plotly figures for the lessons: pure functions from results to figures."""

from app import preload  # noqa: F401  (first: the heavy imports, once, in one thread)
