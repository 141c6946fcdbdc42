"""Your own checkpoint, chosen for a lesson: the one URL setting that names it (``model=``), and which role a
page's lesson gives it (:data:`app.models.admission.ROLES`). Pure: no streamlit, no network.

The setting is one text shared by every page, like the device and the source:

- ``model=google-bert/bert-large-uncased`` — a hub id (or a folder on the server, ``/path/to/my-bert``) for the
  lesson's role: a masked LM in the masking lab, attention, side by side and distillation's teacher, XLNet's
  permutation LM, DeBERTa, ModernBERT;
- ``model=google/electra-base-generator,google/electra-base-discriminator`` — ELECTRA's lesson takes a pair,
  generator first (they are admitted together, :func:`app.models.admission.admit_pair`);
- empty (the default, left out of links): the catalogue.

A lesson's role is derived from what it loads: a lesson with a ``variant`` parameter (masking, attention) runs a
masked LM in place of the chosen variant; otherwise its first model (``MODELS[0]``) is what a brought model
replaces, when some role replaces that catalogue key (the masked LM replaces BERT). A lesson about one
catalogue checkpoint's own parts (ALBERT's shared layers, the sentence heads) or with no model has no role.
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first, as in every app module; nothing heavy is imported here)

from dataclasses import dataclass

from app.core.state import Param
from app.models.admission import ROLES
from app.models.catalogue import CATALOGUE

NAME = "model"
_ID = r"(?:[A-Za-z0-9][\w.-]{0,95}/)?[A-Za-z0-9][\w.-]{0,95}"
_FOLDER = r"(?:/|\./|\.\./|~)[\w./~+ -]{0,400}"  # plain path characters: a folder name reaches markdown as a label
PATTERN = rf"\s*(?:{_ID}|{_FOLDER})\s*(?:,\s*(?:{_ID}|{_FOLDER})\s*)?"
PARAM = Param(
    NAME,
    "str",
    "",
    max_len=900,
    label="Model for this lesson",
    widget="line",
    shared=True,
    pattern=PATTERN,
    expects="a hub id such as google-bert/bert-large-uncased, a folder, or for ELECTRA generator,discriminator",
)
PAIR = ("electra-generator", "electra-discriminator")


def split(text: str) -> tuple[str, ...]:
    """The one or two names the setting holds, trimmed ("" -> ())."""
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())


@dataclass(frozen=True)
class PageRole:
    """What a brought model does on a page: ``role`` (a key of ROLES; "electra" for the pair; "" none),
    ``replaces`` (the catalogue keys it stands in for) and, without a role, ``why`` in one line."""

    role: str
    replaces: tuple[str, ...] = ()
    why: str = ""
    by_family: tuple[str, ...] = ()  # other catalogue keys on the page a masked LM of their family replaces instead

    @property
    def pair(self) -> bool:
        return self.role == "electra"

    def target(self, family: str) -> str:
        """The catalogue key a brought masked LM of ``family`` replaces on this page: the column of its own family
        where the page has one (Side by side: a RoBERTa replaces RoBERTa), else the role's."""
        return next((k for k in self.by_family if CATALOGUE[k].family == family), self.replaces[0])

    def help(self) -> str:
        """The sidebar field's help: what fits here and the catalogue default it replaces."""
        if not self.role:
            return self.why
        if self.pair:
            return (
                "ELECTRA takes a pair, generator first: e.g. google/electra-base-generator,"
                "google/electra-base-discriminator (a hub id or a folder each). Empty: the catalogue's "
                f"{CATALOGUE[PAIR[0]].hub_id} and {CATALOGUE[PAIR[1]].hub_id}."
            )
        r = ROLES[self.role]
        default = CATALOGUE[self.replaces[0]]
        where = (
            " It takes the place of the catalogue model of its own family ("
            + ", ".join(CATALOGUE[k].label for k in self.by_family)
            + f"), else of {default.label}."
            if self.by_family
            else ""
        )
        return (
            f"A hub id (e.g. {EXAMPLES[self.role]}) or a folder, for {r.lesson}: its model_type must be "
            f"{', '.join(r.model_types)}.{where} Empty: the catalogue's {default.label} ({default.hub_id})."
        )


#: a checkpoint of the right family for each role, named in the field's help (a ModernBERT lesson suggesting a
#: BERT would send a student to a refusal)
EXAMPLES = {
    "masked-lm": "google-bert/bert-large-uncased",
    "electra-generator": "google/electra-base-generator",
    "electra-discriminator": "google/electra-base-discriminator",
    "xlnet": "xlnet/xlnet-large-cased",
    "deberta": "microsoft/deberta-base",
    "modernbert": "answerdotai/ModernBERT-large",
}


#: families whose catalogue model a brought masked LM of the same family replaces on a page that shows several
#: (Side by side); ELECTRA's generator is not among them: it is tied to its discriminator
BY_FAMILY = ("roberta", "albert", "distilbert", "deberta", "modernbert")


def page_role(models: tuple[str, ...] = (), variant: str | None = None) -> PageRole:
    """The role a lesson gives a brought model: from its chosen ``variant`` (a lesson with that parameter runs
    one masked LM in its place) or its ``MODELS`` (the first is what is replaced)."""
    if variant is not None:
        return PageRole("masked-lm", (variant,))
    if not models:
        return PageRole("", why="This page loads no model, so there is nothing to replace here.")
    first = models[0]
    if first == PAIR[0] and PAIR[1] in models:
        return PageRole("electra", PAIR)
    role = next((r.name for r in ROLES.values() if r.replaces == first and r.name not in PAIR), None)
    if role is None:
        return PageRole(
            "",
            why=f"This lesson is about {CATALOGUE[first].label}'s own checkpoint "
            f"({CATALOGUE[first].hub_id}), so no other model stands in for it here.",
        )
    by_family = tuple(
        k
        for k in models[1:]
        if role == "masked-lm" and CATALOGUE[k].family in BY_FAMILY and CATALOGUE[k].family != CATALOGUE[first].family
    )
    return PageRole(role, (first,), by_family=by_family)
