"""The lessons, in teaching order: what the router and the home page's map list. Pure data.

Add a lesson here only when its page works (no placeholders)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Lesson:
    path: str  # relative to the repository root
    slug: str  # its URL path
    title: str
    icon: str
    line: str  # what a student sees there, in one line


LESSONS: list[Lesson] = []
