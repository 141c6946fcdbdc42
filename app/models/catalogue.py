"""The catalogue of variants: one entry per model the app can show, each with its real hub id and the
bundled tiny checkpoint that stands in for it offline. Pure data; importing it does not import torch."""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def bundled_root() -> Path:
    """Where the bundled checkpoints live (``BVE_BUNDLED_DIR`` overrides ``assets/models``)."""
    return Path(os.environ.get("BVE_BUNDLED_DIR", REPO_ROOT / "assets" / "models"))


@dataclass(frozen=True)
class Variant:
    key: str  # the app's name for it, used in URLs
    label: str
    family: str  # bert | roberta | albert | distilbert | electra | xlnet
    # masked-lm | student | generator | discriminator | permutation-lm | nsp (sentence head, not a masked LM here)
    role: str
    hub_id: str  # the real checkpoint on the Hugging Face hub
    bundled: str  # folder under bundled_root()
    model_class: str  # the transformers auto class (or concrete class) that loads it
    tokenizer_kind: str
    idea: str  # what the variant changed, in one line
    config_overrides: tuple[tuple[str, object], ...] = ()  # passed to from_pretrained (hub and bundled alike)
    head: str = ""  # what the checkpoint's head is, where that is not obvious
    unloaded: tuple[str, ...] = ()  # tensor-name prefixes stored in the file that ``model_class`` does not load

    @property
    def load_kwargs(self) -> dict:
        return dict(self.config_overrides)

    @property
    def bundled_path(self) -> Path:
        return bundled_root() / self.bundled

    def bundled_available(self) -> bool:
        return (self.bundled_path / "config.json").exists() and any(self.bundled_path.glob("*.safetensors"))

    @property
    def is_masked_lm(self) -> bool:
        return self.role in ("masked-lm", "student", "generator")


CATALOGUE: dict[str, Variant] = {
    v.key: v
    for v in [
        Variant(
            "bert",
            "BERT",
            "bert",
            "masked-lm",
            "google/bert_uncased_L-4_H-256_A-4",
            "bert",
            "AutoModelForMaskedLM",
            "WordPiece (uncased)",
            "Masked LM with static masks fixed at preprocessing, the 80/10/10 rule.",
        ),
        Variant(
            "roberta",
            "RoBERTa",
            "roberta",
            "masked-lm",
            "FacebookAI/roberta-base",
            "roberta",
            "AutoModelForMaskedLM",
            "byte-level BPE",
            "Same architecture, better recipe: dynamic masking, full-sentence packing, no NSP.",
        ),
        Variant(
            "albert",
            "ALBERT",
            "albert",
            "masked-lm",
            "albert/albert-base-v2",
            "albert",
            "AutoModelForMaskedLM",
            "SentencePiece (Unigram)",
            "Factorized embeddings and one layer shared by all layers: far fewer parameters.",
            unloaded=("albert.pooler.", "sop_classifier."),
        ),
        Variant(
            "distilbert",
            "DistilBERT",
            "distilbert",
            "student",
            "distilbert/distilbert-base-uncased",
            "distilbert",
            "AutoModelForMaskedLM",
            "WordPiece (uncased)",
            "Half the layers, trained on the teacher's soft targets: smaller and faster.",
        ),
        Variant(
            "electra-generator",
            "ELECTRA generator",
            "electra",
            "generator",
            "google/electra-small-generator",
            "electra-generator",
            "AutoModelForMaskedLM",
            "WordPiece (uncased)",
            "A small masked LM that proposes plausible replacements.",
        ),
        Variant(
            "electra-discriminator",
            "ELECTRA discriminator",
            "electra",
            "discriminator",
            "google/electra-small-discriminator",
            "electra-discriminator",
            "ElectraForPreTraining",
            "WordPiece (uncased)",
            "Spots replaced tokens: learns from every token, not only the masked 15%.",
        ),
        Variant(
            "xlnet",
            "XLNet",
            "xlnet",
            "permutation-lm",
            "xlnet/xlnet-base-cased",
            "xlnet",
            "AutoModelForCausalLM",
            "SentencePiece (Unigram, cased)",
            "Predicts tokens in a random order through attention masks: no [MASK] token.",
        ),
        Variant(
            "deberta",
            "DeBERTa",
            "deberta",
            "masked-lm",
            "microsoft/deberta-base",
            "deberta",
            "AutoModelForMaskedLM",
            "byte-level BPE (cased)",
            "Disentangled attention: content and relative position kept apart in every attention score.",
            config_overrides=(("legacy", False),),
            head="the original masked-LM head (lm_predictions.lm_head), which transformers loads only with "
            "legacy=False; the paper's enhanced mask decoder is not implemented in transformers",
        ),
        Variant(
            "modernbert",
            "ModernBERT",
            "modernbert",
            "masked-lm",
            "answerdotai/ModernBERT-base",
            "modernbert",
            "AutoModelForMaskedLM",
            "byte-level BPE (cased)",
            "RoPE, GeGLU, alternating local and global attention, unpadding: a 2024 encoder for 8,192 tokens.",
        ),
        Variant(
            "bert-nsp",
            "BERT (NSP head)",
            "bert",
            "nsp",
            "google-bert/bert-base-uncased",
            "bert-nsp",
            "BertForPreTraining",
            "WordPiece (uncased)",
            "Masked LM + next-sentence prediction: is B the text that follows A, or from another document?",
            head="both pre-training heads: the masked LM (cls.predictions) and next-sentence prediction "
            "(cls.seq_relationship: index 0 = B follows A, 1 = B comes from another document)",
        ),
    ]
}

MASKED_LMS = [k for k, v in CATALOGUE.items() if v.is_masked_lm]


def get(key: str) -> Variant:
    try:
        return CATALOGUE[key]
    except KeyError:
        raise KeyError(f"unknown variant {key!r}; the catalogue has {', '.join(CATALOGUE)}") from None


def bundled_parameter_count(variant: Variant) -> int | None:
    """Parameters in the bundled safetensors file(s), read from their headers (no torch needed).

    Tied weights are stored once by safetensors, so this is the number of distinct parameters. Tensors the
    variant's model class does not load (``Variant.unloaded``: ALBERT's sentence-order head, kept in the file
    for the NSP vs SOP lesson) are not counted: the number is the model the lessons run.
    """
    files = sorted(variant.bundled_path.glob("*.safetensors"))
    if not files:
        return None
    total = 0
    for f in files:
        with open(f, "rb") as fh:
            (n,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(n))
        for name, meta in header.items():
            if name == "__metadata__" or name.startswith(variant.unloaded or ("\0",)):
                continue
            count = 1
            for d in meta["shape"]:
                count *= d
            total += count
    return total


def bundled_card_metrics(variant: Variant) -> dict:
    """The held-out numbers the training recipe wrote beside the checkpoint (curves.json 'final')."""
    path = variant.bundled_path / "curves.json"
    if not path.exists():
        return {}
    return json.loads(path.read_text()).get("final", {})
