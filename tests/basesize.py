"""Base-size checkpoints: every catalogue variant at the size of its real hub checkpoint, with random weights.

For every catalogue key this writes a folder named like the bundled one (so ``BVE_BUNDLED_DIR`` can point
at the set and the app loads it through its ordinary ``bundled`` path) holding

- ``config.json``: the hub id's published config, value for value (tests/data/published_configs.json),
  plus only what a local folder needs to load it the way the hub repo loads: ``model_type`` where the
  published file has none (google/bert_uncased_*: transformers infers "bert" from the repo name).
  The catalogue's ``config_overrides`` (DeBERTa's ``legacy=False``) are not written: the loader applies
  them, for the hub and for this folder alike. They are applied while building, so that the weights carry
  the names the real repo's do (DeBERTa's ``lm_predictions.lm_head``).
- ``model.safetensors``: random weights of that shape — the model class instantiated from the config
  under ``torch.manual_seed`` — stored in float16 (the loader loads float32), created here and never
  committed. One change: the output bias of the ids past the tokenizer's last piece is -1e4, so no
  prediction is an id the (smaller) tokenizer cannot write; the real tokenizers cover every output row.
  ELECTRA's generator and discriminator get embeddings of equal shapes (both published configs say
  30522 × 128), so the app re-ties them as it does the real pair.
- the family's bundled tokenizer (assets/models/<name>, or a family member's: 4,000–4,096 pieces, fewer
  than the published vocabulary, with the family's special tokens at the family's ids), its
  ``model_max_length`` set to the published number of positions (RoBERTa: 514 - 2 for its padding offset;
  XLNet has no position table: 512). Where a family has no bundled checkpoint yet (DeBERTa, ModernBERT
  while they train), its tokenizer is trained here by the recipe's own builder (app/training/data.py) on a
  slice of the corpus.

The weights mean nothing: pages run on them to prove they work and stay fast at the real size, not to
show what a trained model predicts.

    python -m tests.basesize /tmp/bve-basesize      # build (or reuse) the set there
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "tests" / "data" / "published_configs.json"
ASSETS = ROOT / "assets" / "models"  # the bundled tokenizers are read from here, whatever BVE_BUNDLED_DIR says
CORPUS = ROOT.parent / "shared" / "corpus" / "tinystories_train.txt"
STAMP = ".basesize.json"  # what a folder was built from: rebuilt when any input changes
VERSION = 3  # bump when the way a folder is built changes
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "spiece.model",
    "added_tokens.json",
)
NO_POSITION_TABLE_LIMIT = 512  # XLNet reads any length (relative positions): a sensible cap for its tokenizer
SEED = 0


def published_configs() -> dict[str, dict]:
    """{hub id: its published config.json}."""
    return {k: v for k, v in json.loads(PUBLISHED.read_text()).items() if not k.startswith("_")}


def local_config(hub_id: str) -> dict:
    """The published config as a local folder needs it: ``model_type`` added where the hub infers it."""
    published = published_configs()
    if hub_id not in published:
        raise KeyError(
            f"{hub_id} has no published config in {PUBLISHED.relative_to(ROOT)}: copy its config.json "
            "from the hub there (by hand; tests never download)"
        )
    config = dict(published[hub_id])
    if "model_type" not in config:
        from transformers import CONFIG_MAPPING

        # what transformers does for a hub id without it: the longest model type the repo name contains
        name = hub_id.split("/")[-1].lower()
        config["model_type"] = max((t for t in CONFIG_MAPPING if t in name), key=len)
    return config


def max_positions(config: dict) -> int:
    """The tokens a model reads, special ones included, from its published config."""
    n = config.get("max_position_embeddings")
    if n is None:
        return NO_POSITION_TABLE_LIMIT
    if config.get("model_type") == "roberta":  # positions start after the padding index
        return int(n) - int(config.get("pad_token_id", 1)) - 1
    return int(n)


def _tokenizer_source(variant) -> Path | None:
    """The bundled folder whose tokenizer this variant uses: its own, else one of its family's (BERT's NSP
    variant reads BERT's WordPiece), else None (the family has none bundled yet)."""
    from app.models import catalogue

    names = [variant.bundled] + [v.bundled for v in catalogue.CATALOGUE.values() if v.family == variant.family]
    return next((ASSETS / n for n in names if (ASSETS / n / "tokenizer_config.json").exists()), None)


def _digest(variant) -> str:
    """A hash of everything a folder is built from: the published config, the tokenizer's files, this builder."""
    h = hashlib.sha256(f"{VERSION}:{SEED}:{variant.model_class}:{variant.config_overrides}".encode())
    h.update(json.dumps(local_config(variant.hub_id), sort_keys=True).encode())
    source = _tokenizer_source(variant)
    if source is None:
        h.update(b"trained-here:" + (str(CORPUS.stat().st_size).encode() if CORPUS.exists() else b"story"))
    else:
        for name in TOKENIZER_FILES:
            if (source / name).exists():
                h.update(name.encode() + (source / name).read_bytes())
    return h.hexdigest()[:16]


def _write_tokenizer(variant, folder: Path, limit: int) -> None:
    """The family's tokenizer in ``folder``, reading at most ``limit`` tokens."""
    source = _tokenizer_source(variant)
    if source is not None:
        for name in TOKENIZER_FILES:
            if (source / name).exists():
                shutil.copy2(source / name, folder / name)
    else:
        from app.training import data

        with tempfile.TemporaryDirectory() as d:
            text = Path(d) / "slice.txt"
            text.write_text(
                CORPUS.read_text(encoding="utf-8")[:1_000_000]
                if CORPUS.exists()
                else "The little girl found a red ball in the park.\n" * 200
            )
            if variant.family == "deberta":
                tok = data.build_deberta(text, 4096)
            elif variant.family == "modernbert":
                tok = data.build_modernbert(text, 4096, limit)
            else:
                raise FileNotFoundError(f"no bundled tokenizer for {variant.key} in {ASSETS / variant.bundled}")
        tok.save_pretrained(folder)
    path = folder / "tokenizer_config.json"
    tc = json.loads(path.read_text())
    tc["model_max_length"] = limit
    path.write_text(json.dumps(tc, indent=2, ensure_ascii=False) + "\n")


def _model(variant, config: dict):
    """The variant's model class instantiated from ``config`` (with the loader's overrides), random weights."""
    import torch
    import transformers

    cfg = transformers.AutoConfig.for_model(**config)
    for k, v in variant.config_overrides:
        setattr(cfg, k, v)
    cls = getattr(transformers, variant.model_class)
    torch.manual_seed(SEED)
    model = cls.from_config(cfg) if variant.model_class.startswith("Auto") else cls(cfg)
    return model.eval()


def _tokenizer_length(folder: Path) -> int:
    from transformers import AutoTokenizer

    return len(AutoTokenizer.from_pretrained(folder, local_files_only=True))


def _never_predict_beyond(model, n_pieces: int) -> None:
    """Set the output bias of every id the tokenizer does not have (``n_pieces`` and above) to -1e4, so the
    model's distribution puts exactly 0 there (exp(-1e4) underflows in float32): every prediction, top-k or
    sample, is a piece the tokenizer can write, as with the real checkpoints, whose tokenizers cover every row
    of the output layer (ModernBERT's with its unused tokens). The rows stay in the model, at their published
    size. A model without a vocabulary head (ELECTRA's discriminator) is left as it is."""
    import torch

    vocab = int(model.config.vocab_size)
    biases = [p for name, p in model.named_parameters() if name.endswith("bias") and tuple(p.shape) == (vocab,)]
    with torch.no_grad():
        for bias in biases if vocab > n_pieces else ():  # the output layer's bias (tied copies are one tensor)
            bias[n_pieces:] = -1e4


def build_one(variant, root: Path) -> Path:
    """``root``/<bundled name>, built from the published config unless already built from the same inputs."""
    folder = root / variant.bundled
    digest = _digest(variant)
    stamp = folder / STAMP
    if stamp.exists() and json.loads(stamp.read_text()).get("digest") == digest:
        return folder
    import torch
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # "Writing model shards" bars are noise in a test log
    partial = root / f".{variant.bundled}.{os.getpid()}.partial"  # two sessions may build the same set at once
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    config = local_config(variant.hub_id)
    _write_tokenizer(variant, partial, max_positions(config))
    model = _model(variant, config)
    _never_predict_beyond(model, _tokenizer_length(partial))
    model.to(torch.float16).save_pretrained(partial)
    _write_tokenizer(variant, partial, max_positions(config))  # save_pretrained may have written over it
    n_params = sum(p.numel() for p in {p.data_ptr(): p for p in model.parameters()}.values())
    del model
    (partial / "config.json").write_text(json.dumps(config, indent=2) + "\n")  # the published file, not ours
    (partial / "generation_config.json").unlink(missing_ok=True)
    (partial / STAMP).write_text(
        json.dumps({"digest": digest, "hub_id": variant.hub_id, "parameters": n_params, "torch": torch.__version__})
        + "\n"
    )
    shutil.rmtree(folder, ignore_errors=True)
    try:
        partial.rename(folder)
    except OSError:  # another session finished the same folder first
        shutil.rmtree(partial, ignore_errors=True)
        if json.loads(stamp.read_text()).get("digest") != digest:
            raise
    return folder


def build(root: Path, keys=None) -> Path:
    """Every catalogue variant (or ``keys``) at base size under ``root``; returns ``root`` (a BVE_BUNDLED_DIR).

    Reuses what an earlier call built from the same inputs (the folder's stamp), so a second call is cheap."""
    from app.models import catalogue

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    for key in keys or catalogue.CATALOGUE:
        build_one(catalogue.get(key), root)
    return root


if __name__ == "__main__":
    import time

    sys.path.insert(0, str(ROOT))
    where = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.gettempdir()) / "bve-basesize"
    t = time.perf_counter()
    build(where)
    print(f"built {where} in {time.perf_counter() - t:.1f} s")
