"""Import the heavy libraries once per process, in one thread, before any lesson code runs.

A class opening the app at once runs many page scripts in parallel threads on a fresh server, and two
first-time imports race there (tests/e2e/test_class.py reproduced both before this module existed):
transformers resolves its classes lazily, so a thread asking for ``BertForMaskedLM`` while another is
still importing it got ``ImportError: cannot import name 'BertForMaskedLM'``; and plotly looks pandas up
in ``sys.modules``, so a thread drawing a figure while another was importing pandas got "partially
initialized module 'pandas' has no attribute 'Series'".

Every lesson library (and the model loader) imports this module before anything else. Python holds a
lock per module while it runs the module's body: the first thread does all of the work below and every
other thread waits at its ``import`` until that is finished; later imports are dictionary look-ups.
The home page does not import it (it stays free of torch).

It also takes what it imported out of the garbage collector's way. Streamlit runs a full collection
after every script run (``runner.postScriptGC``), and with torch, transformers, pandas and plotly loaded
that walks ~470,000 objects: 270 ms with the GIL held, on every rerun of every session — nearly half of
the server's CPU time with a class of 20 (py-spy). These objects live as long as the process, so they
are moved to the collector's permanent generation (``gc.freeze``); a collection then takes ~1 ms.
"""

from __future__ import annotations

import gc

import numpy  # noqa: F401
import pandas  # noqa: F401  (before plotly, which looks it up in sys.modules)
import plotly.graph_objects as go
import plotly.subplots  # noqa: F401
import torch  # noqa: F401
import transformers

from app.models.catalogue import CATALOGUE

#: Every class the app takes from transformers by name (tests/test_layering.py keeps this list whole).
TRANSFORMERS_NAMES = (
    "AutoTokenizer",
    "AlbertConfig", "AlbertForMaskedLM", "AlbertForPreTraining", "AlbertTokenizer",
    "BertConfig", "BertForMaskedLM", "BertTokenizer",
    "DistilBertConfig", "DistilBertForMaskedLM", "DistilBertTokenizer",
    "ElectraConfig", "ElectraForMaskedLM", "ElectraForPreTraining", "ElectraTokenizer",
    "RobertaConfig", "RobertaForMaskedLM", "RobertaTokenizer",
    "XLNetConfig", "XLNetLMHeadModel", "XLNetTokenizer",
)
PLOTLY_NAMES = ("Bar", "Figure", "Heatmap", "Scatter")

for _name in sorted(set(TRANSFORMERS_NAMES) | {v.model_class for v in CATALOGUE.values()}):
    getattr(transformers, _name)  # resolves the lazy attribute: imports the model's module now
for _name in PLOTLY_NAMES:
    getattr(go, _name)


def freeze_long_lived() -> None:
    """Collect once, then exempt everything alive now from future collections (see the module text).
    Call when what was just created lives as long as the server: libraries here, models after loading."""
    gc.collect()
    gc.freeze()


freeze_long_lived()
