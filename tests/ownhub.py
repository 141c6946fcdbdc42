"""Repositories for the loopback hub (tests/hubserver.py) that a user might bring (issue 28), and hostile ones.

The checkpoints a lecturer asks for (tests/data/published_configs_own.json: bert-large-uncased,
bert-base-multilingual-cased, xlm-roberta-base, deberta-v3-base, ModernBERT-large, the electra-base pair,
albert-large-v2, xlnet-large-cased) are served under their real ids with **their published config shrunk**
(:func:`shrink`: every key the published file has, with the widths, depths and vocabulary made tiny and the
special-token ids moved onto the family's bundled tokenizer) and random weights of that tiny shape, so a download
and a load take well under a second. Their parameter estimates are tested on the published configs themselves
(tests/models/test_admission.py), not on these.

Hostile repositories, each small and loadable-looking (``HOSTILE``):

- ``evil/wrong-type``: a GPT-2 (model_type gpt2): no lesson reads it.
- ``evil/remote-code``: ``auto_map`` pointing at a ``modeling_evil.py`` beside it.
- ``evil/pickle-only``: a tiny BERT whose weights are only ``pytorch_model.bin``.
- ``evil/ten-billion``: a config claiming ~10 B parameters (hidden 5120, 32 layers) over tiny weights.
- ``evil/lies-about-size``: a tiny BERT; tests set ``server.lies`` so its file list declares less than it sends.
- ``evil/redirect``, ``evil/stall``: tiny BERTs; tests switch the server's redirects and trickle on them.

And ``microsoft/deberta-v3-small`` as DeBERTa v3 is published (:data:`HEADLESS`): a config fit for
``DebertaV2ForMaskedLM`` (here deberta-v3-base's, shrunk: the two differ only in size) over weights without the
masked-LM head (the encoder only), which admission must refuse for the masked LM. ``microsoft/deberta-v3-base``
above keeps a head, so that the DeBERTa v2/v3 loading path stays tested end to end.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.hubserver import Repo, _build_repo

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "tests" / "data" / "published_configs_own.json"
ASSETS = ROOT / "assets" / "models"

#: hub id -> (the bundled tokenizer it borrows, the class its weights are built with)
BRINGS = {
    "google-bert/bert-large-uncased": ("bert", "BertForMaskedLM"),
    "google-bert/bert-base-multilingual-cased": ("bert", "BertForMaskedLM"),
    "FacebookAI/xlm-roberta-base": ("roberta", "XLMRobertaForMaskedLM"),
    "microsoft/deberta-v3-base": ("deberta", "DebertaV2ForMaskedLM"),
    "answerdotai/ModernBERT-large": ("modernbert", "ModernBertForMaskedLM"),
    "google/electra-base-generator": ("electra-generator", "ElectraForMaskedLM"),
    "google/electra-base-discriminator": ("electra-generator", "ElectraForPreTraining"),
    "albert/albert-large-v2": ("albert", "AlbertForMaskedLM"),
    "xlnet/xlnet-large-cased": ("xlnet", "XLNetLMHeadModel"),
}
SPECIAL = {
    "pad_token_id": "pad_token",
    "bos_token_id": "bos_token",
    "eos_token_id": "eos_token",
    "cls_token_id": "cls_token",
    "sep_token_id": "sep_token",
}
#: served under a real id the way it is published: the config of a masked LM, the weights without its head
HEADLESS = {"microsoft/deberta-v3-small": "microsoft/deberta-v3-base"}
HOSTILE = (
    "evil/wrong-type",
    "evil/remote-code",
    "evil/pickle-only",
    "evil/ten-billion",
    "evil/lies-about-size",
    "evil/redirect",
    "evil/stall",
)


def published() -> dict[str, dict]:
    return {k: v for k, v in json.loads(PUBLISHED.read_text()).items() if not k.startswith("_")}


def _tokenizer(folder: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder, local_files_only=True)


def shrink(config: dict, tokenizer) -> dict:
    """The published config with every size tiny: hidden 32, 2 layers, 2 heads, inner 64, embeddings 16 (32 for
    ELECTRA, whose pair must agree), 128 positions, the tokenizer's vocabulary and special-token ids."""
    c = dict(config)
    small = {
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "d_model": 32,
        "n_layer": 2,
        "n_head": 2,
        "d_inner": 64,
        "d_head": 16,
        "dim": 32,
        "n_layers": 2,
        "n_heads": 2,
        "hidden_dim": 64,
        "max_position_embeddings": 128,
        "local_attention": 16,
        "position_buckets": 32,
    }
    c.update({k: v for k, v in small.items() if k in c})
    if "embedding_size" in c:
        c["embedding_size"] = 32 if c["model_type"] == "electra" else 16
    c["vocab_size"] = len(tokenizer)
    if c.get("model_type") == "xlm-roberta":
        c["max_position_embeddings"] = 130  # RoBERTa's offset of 2 past 128 tokens
    for key, token in SPECIAL.items():
        if key in c:
            c[key] = getattr(tokenizer, token + "_id", None) if getattr(tokenizer, token, None) else c[key]
            if c[key] is None or c[key] >= c["vocab_size"]:
                c[key] = tokenizer.pad_token_id or 0
    return c


def _save(config: dict, cls_name: str, tokenizer_from: Path, dest: Path) -> Path:
    """A folder with ``config`` (as given, key for key), random weights of that shape, and the tokenizer."""
    import torch
    import transformers

    dest.mkdir(parents=True, exist_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (tokenizer_from / name).exists():
            shutil.copyfile(tokenizer_from / name, dest / name)
    torch.manual_seed(0)
    model = getattr(transformers, cls_name)(transformers.AutoConfig.for_model(**config))
    bars = transformers.utils.logging.is_progress_bar_enabled()
    transformers.utils.logging.disable_progress_bar()
    try:
        model.save_pretrained(dest)
    finally:
        if bars:
            transformers.utils.logging.enable_progress_bar()
    (dest / "config.json").write_text(json.dumps(config, indent=2))
    return dest


def drop_head(folder: Path) -> None:
    """Rewrite a saved model's ``model.safetensors`` with its encoder's tensors only (the base model's prefix):
    a checkpoint published without the head its config names."""
    from safetensors.torch import load_file, save_file

    config = json.loads((folder / "config.json").read_text())
    prefix = {"deberta-v2": "deberta.", "deberta": "deberta.", "bert": "bert."}[config["model_type"]]
    tensors = load_file(folder / "model.safetensors")
    save_file(
        {k: v for k, v in tensors.items() if k.startswith(prefix)},
        folder / "model.safetensors",
        metadata={"format": "pt"},
    )


def _repo(repo_id: str, src: Path, root: Path, weights: str = "safetensors", extra: dict | None = None) -> Repo:
    """Serve a folder as a hub repo: its config, tokenizer and weights (``"bin"``: only as pytorch_model.bin), a
    README and a decoy tf_model.h5."""
    repo = _build_repo(repo_id, src, root / repo_id, weights, ("tf_model.h5",))
    for name, text in (extra or {}).items():
        (root / repo_id / name).write_text(text)
        repo.add(name, root / repo_id / name, wanted=False)
    return repo


def build_own_repos(root: Path) -> dict[str, Repo]:
    """hub id -> Repo: the brought checkpoints (shrunk, :data:`BRINGS`) and the hostile ones (:data:`HOSTILE`)."""
    made, repos = root / "_made", {}
    for hub_id, config in published().items():
        bundled, cls_name = BRINGS[hub_id]
        tok = ASSETS / bundled
        folder = _save(shrink(config, _tokenizer(tok)), cls_name, tok, made / hub_id)
        repos[hub_id] = _repo(hub_id, folder, root)

    for hub_id, like in HEADLESS.items():
        bundled, cls_name = BRINGS[like]
        folder = _save(
            shrink(published()[like], _tokenizer(ASSETS / bundled)), cls_name, ASSETS / bundled, made / hub_id
        )
        drop_head(folder)
        repos[hub_id] = _repo(hub_id, folder, root)

    bert = ASSETS / "bert"
    tiny = shrink(published()["google-bert/bert-large-uncased"], _tokenizer(bert))
    plain = _save(tiny, "BertForMaskedLM", bert, made / "plain-bert")
    for hub_id in ("evil/lies-about-size", "evil/redirect", "evil/stall"):
        repos[hub_id] = _repo(hub_id, plain, root)
    repos["evil/pickle-only"] = _repo("evil/pickle-only", plain, root, weights="bin")
    gpt2 = {
        "model_type": "gpt2",
        "architectures": ["GPT2LMHeadModel"],
        "n_embd": 32,
        "n_layer": 2,
        "n_head": 2,
        "n_positions": 128,
        "vocab_size": tiny["vocab_size"],
    }
    repos["evil/wrong-type"] = _repo("evil/wrong-type", _save(gpt2, "GPT2LMHeadModel", bert, made / "gpt2"), root)
    remote = dict(
        tiny,
        model_type="evil-bert",
        architectures=["EvilForMaskedLM"],
        auto_map={"AutoConfig": "modeling_evil.EvilConfig", "AutoModelForMaskedLM": "modeling_evil.EvilModel"},
    )
    folder = _save(tiny, "BertForMaskedLM", bert, made / "remote")
    (folder / "config.json").write_text(json.dumps(remote))
    repos["evil/remote-code"] = _repo(
        "evil/remote-code",
        folder,
        root,
        extra={"modeling_evil.py": "import os\nos.system('touch /tmp/pwned-by-remote-code')\n"},
    )
    huge = dict(
        tiny, hidden_size=5120, num_hidden_layers=32, num_attention_heads=40, intermediate_size=20480, vocab_size=30522
    )
    folder = _save(tiny, "BertForMaskedLM", bert, made / "huge")
    (folder / "config.json").write_text(json.dumps(huge))
    repos["evil/ten-billion"] = _repo("evil/ten-billion", folder, root)
    return repos
