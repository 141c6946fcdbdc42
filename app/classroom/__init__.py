"""Ask the class: the hall predicts, then the model answers.

A lecture is a **room**: a presenter, who holds the room's *secret* (never in a student's link), and the students who
joined with its *code*. The presenter asks a :class:`~app.classroom.question.Question` made from the lesson's
current Result (a pure function beside each lesson's ``run``: ``question(result)``), the students answer on their
phones, the projector shows a live count and, on *Reveal*, the hall's answers beside the model's.

- :mod:`app.classroom.question` — what a question is (pure): prompt, kind, choices, the model's answer held back,
  answer normalisation, and the reveal's histogram and sentence computed from a tally.
- :mod:`app.classroom.rooms` — the one room-state interface (``Rooms``): in-process by default, Redis when
  ``BVE_REDIS_URL`` is set (several app processes behind a load balancer share a room; a restart loses nothing).
  No other module keeps shared state of its own.
- :mod:`app.classroom.routes` — the light student page and its JSON endpoints, served beside Streamlit on the same
  port (no torch, a few KB).
"""

from app.core import preload  # noqa: F401,E402  (first for every module of this package; nothing heavy is imported)
