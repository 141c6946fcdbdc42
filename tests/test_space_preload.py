"""The README front matter's ``preload_from_hub`` (Hugging Face Spaces, build time) against the app's own download
filter, so the list and the app cannot drift apart.

Spaces reads each entry as ``repo_id`` (the whole repository: TF, Flax, Rust, ONNX copies too) or
``repo_id file1,file2`` (only those files; a file that is not in the repository fails the build): the Spaces
configuration reference, huggingface/hub-docs ``docs/hub/spaces-config-reference.md`` (``preload_from_hub``).
The app downloads only what :func:`app.models.download.files_to_fetch` picks from a repository's files, so an entry
with files must list exactly what that filter picks from the repository's real listing.

``LISTINGS`` is each repository's top-level files as the hub's own "Files and versions" page showed them (the
page is named; sub-folders and README/.gitattributes left out, as the filter ignores them). A repository whose
current listing could not be read from such a page stays a bare id (``BARE``, with the reason): a wrong file name
would fail the Space's build. Refresh a listing from its page when a repository changes; then this test says which
entry to rewrite.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from app.models.catalogue import CATALOGUE
from app.models.download import files_to_fetch

ROOT = Path(__file__).resolve().parents[1]

_TREE = "https://huggingface.co/{}/tree/{}"
#: repo id -> (the page the listing was read from, its top-level files)
LISTINGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "google/bert_uncased_L-4_H-256_A-4": (  # main, 10 commits ("upload flax model"): no safetensors
        _TREE.format("google/bert_uncased_L-4_H-256_A-4", "main"),
        (
            "bert_model.ckpt.data-00000-of-00001",
            "bert_model.ckpt.index",
            "config.json",
            "flax_model.msgpack",
            "pytorch_model.bin",
            "vocab.txt",
        ),
    ),
    "FacebookAI/roberta-base": (  # main after "Adds the tokenizer configuration file (#12)" (e2da8e2)
        _TREE.format("FacebookAI/roberta-base", "a7bf0580bc6f27340160108ed925ef00a55bd70a"),
        (
            "config.json",
            "dict.txt",
            "flax_model.msgpack",
            "merges.txt",
            "model.safetensors",
            "pytorch_model.bin",
            "rust_model.ot",
            "tf_model.h5",
            "tokenizer.json",
            "tokenizer_config.json",
            "vocab.json",
        ),
    ),
    "albert/albert-base-v2": (  # main, 22 commits ("Adds the tokenizer configuration file (#6)")
        _TREE.format("albert/albert-base-v2", "main"),
        (
            "config.json",
            "flax_model.msgpack",
            "model.safetensors",
            "pytorch_model.bin",
            "rust_model.ot",
            "spiece.model",
            "tf_model.h5",
            "tokenizer.json",
            "tokenizer_config.json",
            "with-prefix-tf_model.h5",
        ),
    ),
    "distilbert/distilbert-base-uncased": (  # main, 22 commits ("Updates incorrect tokenizer configuration (#12)")
        _TREE.format("distilbert/distilbert-base-uncased", "main"),
        (
            "LICENSE",
            "config.json",
            "flax_model.msgpack",
            "model.safetensors",
            "pytorch_model.bin",
            "rust_model.ot",
            "tf_model.h5",
            "tokenizer.json",
            "tokenizer_config.json",
            "vocab.txt",
        ),
    ),
    "google/electra-small-generator": (  # main at "Updates incorrect tokenizer configuration file (#4)": no safetensors
        _TREE.format("google/electra-small-generator", "0dbbbf928f000ba9d2be7eb769dee35e8d9d6e39"),
        (
            "config.json",
            "flax_model.msgpack",
            "pytorch_model.bin",
            "tf_model.h5",
            "tokenizer.json",
            "tokenizer_config.json",
            "vocab.txt",
        ),
    ),
    "google/electra-small-discriminator": (  # main at "Updates incorrect tokenizer configuration file (#1)"
        _TREE.format("google/electra-small-discriminator", "fa8239aadc095e9164941d05878b98afe9b953c3"),
        (
            "config.json",
            "flax_model.msgpack",
            "pytorch_model.bin",
            "tf_model.h5",
            "tokenizer.json",
            "tokenizer_config.json",
            "vocab.txt",
        ),
    ),
    "microsoft/deberta-base": (  # main at "Removing Huggingface config from pytorch_model.bin": no safetensors
        _TREE.format("microsoft/deberta-base", "50f015bb445c33f116e1bd051b79f6741370c76f"),
        (
            "bpe_encoder.bin",
            "config.json",
            "merges.txt",
            "pytorch_model.bin",
            "rust_model.ot",
            "tokenizer_config.json",
            "vocab.json",
        ),
    ),
    "answerdotai/ModernBERT-base": (  # main, 25 commits (onnx/ is a sub-folder: never fetched)
        _TREE.format("answerdotai/ModernBERT-base", "981f9414b386272c3e54b7ea26059dbecf72a3ce"),
        (
            "config.json",
            "model.safetensors",
            "pytorch_model.bin",
            "special_tokens_map.json",
            "tokenizer.json",
            "tokenizer_config.json",
        ),
    ),
    "google-bert/bert-base-uncased": (  # "Adding `safetensors` variant of this model (#15)" merged into main
        _TREE.format("google-bert/bert-base-uncased", "refs%2Fpr%2F23"),
        (
            "LICENSE",
            "config.json",
            "flax_model.msgpack",
            "model.safetensors",
            "pytorch_model.bin",
            "rust_model.ot",
            "tf_model.h5",
            "tokenizer.json",
            "tokenizer_config.json",
            "vocab.txt",
        ),
    ),
}
#: repositories left bare, and why
BARE = {"xlnet/xlnet-base-cased": "no stored page lists this repository's current files"}


def preload_entries() -> dict[str, list[str] | None]:
    """README front matter's ``preload_from_hub``: repo id -> its listed files, or None for a bare id."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    front = yaml.safe_load(text.split("---\n", 2)[1])
    entries = {}
    for item in front["preload_from_hub"]:
        repo, *rest = item.split()
        assert repo not in entries, f"{repo} is listed twice"
        assert len(rest) <= 1, f"{item!r}: a pinned commit would go stale; list files only"
        entries[repo] = rest[0].split(",") if rest else None
    return entries


def test_every_catalogue_checkpoint_is_preloaded_and_nothing_else():
    assert set(preload_entries()) == {v.hub_id for v in CATALOGUE.values()}


def test_each_file_list_is_what_the_app_downloads_from_that_repository():
    entries = preload_entries()
    for repo, files in entries.items():
        if repo in BARE:
            assert files is None, f"{repo} has a file list now: move its listing into LISTINGS"
            continue
        page, listing = LISTINGS[repo]
        assert files == files_to_fetch(list(listing)), f"{repo}: rewrite its entry from {page}"
