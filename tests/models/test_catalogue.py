"""The catalogue: one entry per variant, a real hub id and a bundled stand-in for each."""

import pytest

from app.models import catalogue


def test_every_variant_names_a_hub_checkpoint_and_a_bundled_folder():
    families = {v.family for v in catalogue.CATALOGUE.values()}
    assert families == {"bert", "roberta", "albert", "distilbert", "electra", "xlnet", "deberta", "modernbert"}
    for v in catalogue.CATALOGUE.values():
        assert v.hub_id.count("/") == 1 and " " not in v.hub_id
        assert v.bundled_path.parent == catalogue.bundled_root()


def test_unknown_variant_message_lists_the_catalogue():
    with pytest.raises(KeyError, match="the catalogue has bert"):
        catalogue.get("gpt2")


@pytest.mark.parametrize("key", list(catalogue.CATALOGUE))
def test_bundled_checkpoint_is_present_with_its_card(key):
    v = catalogue.get(key)
    assert v.bundled_available(), f"{v.bundled_path} is missing: build it with python -m app.training"
    card = (v.bundled_path / "README.md").read_text()
    assert card.startswith("---") and "TinyStories" in card and v.hub_id in card
    assert (v.bundled_path / "curves.json").exists()


@pytest.mark.parametrize("key", list(catalogue.CATALOGUE))
def test_parameter_count_from_the_file_header_matches_the_model(key, bundled):
    loaded = bundled(key)
    params = {p.data_ptr(): p.numel() for p in loaded.model.parameters()}
    assert catalogue.bundled_parameter_count(loaded.variant) == sum(params.values())


def test_assets_fit_the_size_budget():
    """Issue: assets/ stays under 60 MB in all (checkpoints are stored as float16)."""
    total = sum(f.stat().st_size for f in (catalogue.REPO_ROOT / "assets").rglob("*") if f.is_file())
    assert total <= 60 * 10**6, f"assets/ takes {total / 1e6:.1f} MB (budget 60 MB)"
