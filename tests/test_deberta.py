"""app/lessons/deberta.py and app/figures/deberta.py: the three disentangled terms add up to the very scores the model
feeds its softmax (captured from the model) and their softmax is its output_attentions, to 1e-5, from the real
attention modules and the hidden states each layer received; relative distances and buckets (v1 rows, v3 log
buckets by transformers' own function); the prefix demonstration (DeBERTa's first layer unchanged, BERT's not);
the masked-LM head on the last layer and no absolute positions; parameter counts; bad input; the figures' data.

Equalities run on a stand-in built here from app/training/deberta.py's config with random weights (and on other
configs: c2p only, p2c only, a small max_relative_positions that clips), and on the bundled checkpoint when it is
present. Nothing is downloaded."""

from __future__ import annotations

import math
import types
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from app.lessons import deberta
from app.figures import deberta as figures
from app.core.lesson import Stop
from tests.conftest import CountingCache, require_bundled

ROOT = Path(__file__).resolve().parents[1]
SENTENCE = deberta.DEFAULT_TEXT
STORIES = [
    "The little girl found a red ball in the park.",
    "Once upon a time, there was a little dog named Max.",
    "Tom and Sue went to the park to play with the ball.",
    "The cat sat on the mat and looked at the big tree.",
    "She was happy and ran home to show her mom the red ball.",
    "One day, a little boy saw a bird in the sky.",
    "Lily liked to play in the garden with her friend Ben.",
    "The sun was warm and the flowers were pretty.",
]


# ----------------------------------------------------------------------------- the stand-in


def _randomize(model) -> None:
    """Random weights large enough that every term matters (the init leaves biases at 0 and scores tiny)."""
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "LayerNorm" in name:
                continue
            param.copy_(torch.randn(param.shape, generator=gen) * (0.1 if param.dim() > 1 else 0.2))


def build_standin(folder: Path) -> Path:
    """``folder``/deberta: a DeBERTa stand-in like the bundled one (app/training/deberta.py's config, the
    family's tokenizer trained on a few stories), random weights; ``folder``/bert: the bundled BERT. Returns
    ``folder``, to use as BVE_BUNDLED_DIR."""
    from app.training import data
    from app.training.deberta import deberta_config
    from transformers import DebertaForMaskedLM

    folder.mkdir(parents=True, exist_ok=True)
    corpus = folder / "stories.txt"
    corpus.write_text("\n".join(STORIES * 20) + "\n")
    tok = data.build_deberta(corpus, vocab_size=600)
    torch.manual_seed(0)
    model = DebertaForMaskedLM(deberta_config(tok))
    _randomize(model)
    model.save_pretrained(folder / "deberta")
    tok.save_pretrained(folder / "deberta")
    bert = folder / "bert"
    if not bert.exists():
        bert.symlink_to(ROOT / "assets" / "models" / "bert", target_is_directory=True)
    return folder


@pytest.fixture(scope="module")
def standin_dir(tmp_path_factory) -> Path:
    return build_standin(tmp_path_factory.mktemp("deberta-standin"))


@pytest.fixture(scope="module")
def standin(standin_dir):
    """{"deberta": the stand-in, "bert": the bundled BERT}, loaded the app's way (legacy=False, eager)."""
    from app.models import loading

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BVE_BUNDLED_DIR", str(standin_dir))
        return {"deberta": loading.load("deberta"), "bert": loading.load("bert")}


@pytest.fixture(scope="module")
def checkpoint(bundled):
    """The bundled DeBERTa checkpoint and BERT (a missing one fails)."""
    require_bundled("deberta")
    return {"deberta": bundled("deberta"), "bert": bundled("bert")}


@pytest.fixture(params=["standin", "checkpoint"])
def models(request):
    return request.getfixturevalue(request.param)


def ids_of(loaded, text=SENTENCE) -> tuple:
    return tuple(loaded.tokenizer(text)["input_ids"])


def model_scores(model, ids: tuple) -> tuple[list[torch.Tensor], object]:
    """The tensors the model itself passes to softmax in each layer (captured there), and its outputs."""
    captured = []
    original = torch.nn.functional.softmax

    def spy(x, *args, **kwargs):
        captured.append(x.detach().float().cpu()[0])  # (heads, T, T)
        return original(x, *args, **kwargs)

    ids_t = torch.tensor([ids])
    with pytest.MonkeyPatch.context() as mp, torch.no_grad():
        mp.setattr(torch.nn.functional, "softmax", spy)
        out = model(
            input_ids=ids_t, attention_mask=torch.ones_like(ids_t), output_hidden_states=True, output_attentions=True
        )
    return captured, out


# ----------------------------------------------------------------------------- the three terms are the model's score


def test_the_three_terms_add_up_to_the_scores_the_model_feeds_its_softmax(models):
    deb = models["deberta"]
    ids = ids_of(deb)
    captured, out = model_scores(deb.model, ids)
    hidden, attentions = deberta.encoder_states(deb, ids)
    layers = deb.model.deberta.encoder.layer
    assert len(captured) == len(layers)
    for layer, scores in enumerate(captured):
        terms = deberta.disentangled_terms(deb.model, hidden[layer], layer)  # (3, heads, T, T)
        assert torch.allclose(terms.sum(0), scores, atol=1e-5, rtol=0), layer
        assert torch.allclose(torch.softmax(terms.sum(0), -1), out.attentions[layer][0], atol=1e-5, rtol=0)
        assert all(terms[t].abs().max() > 0 for t in range(3))  # every term is really there
    assert torch.allclose(attentions, torch.stack(out.attentions)[:, 0], atol=1e-6)


def test_the_hidden_states_are_the_ones_each_attention_layer_received(models):
    """output_hidden_states[l] is exactly the input of layer l's attention (a forward hook sees it)."""
    deb = models["deberta"]
    ids = ids_of(deb)
    seen = {}
    hooks = [
        layer.attention.self.register_forward_hook(
            lambda mod, args, kwargs, out, i=i: seen.__setitem__(i, (args[0] if args else kwargs["hidden_states"])[0]),
            with_kwargs=True,
        )
        for i, layer in enumerate(deb.model.deberta.encoder.layer)
    ]
    try:
        hidden, _ = deberta.encoder_states(deb, ids)
    finally:
        for h in hooks:
            h.remove()
    for i, received in seen.items():
        assert torch.equal(received.float(), hidden[i])


def test_take_apart_is_one_head_of_those_terms_and_matches_the_attention_it_shows(standin):
    deb = standin["deberta"]
    ids = ids_of(deb)
    hidden, attentions = deberta.encoder_states(deb, ids)
    t = deberta.take_apart(deb.model, hidden, attentions, 1, 2)
    full = deberta.disentangled_terms(deb.model, hidden[1], 1)[:, 2].numpy()
    np.testing.assert_allclose(t.c2c, full[0]) and np.testing.assert_allclose(t.p2c, full[2])
    np.testing.assert_allclose(t.total, t.c2c + t.c2p + t.p2c, atol=1e-6)
    np.testing.assert_allclose(t.probs.sum(-1), 1, atol=1e-6)
    assert t.max_error < 1e-5 and t.model_probs.shape == (len(ids), len(ids))


@pytest.mark.parametrize(
    "pos_att_type, max_rel", [(["c2p", "p2c"], -1), (["c2p"], -1), (["p2c"], -1), (["c2p", "p2c"], 4)]
)
def test_other_configs_too_one_position_term_and_clipped_distances(pos_att_type, max_rel):
    """The scale follows the number of terms (sqrt(2d) with one), a missing term is 0, and with
    max_relative_positions = 4 (< the sentence) distances are clipped exactly as the model clips them."""
    from transformers import DebertaConfig, DebertaForMaskedLM

    cfg = DebertaConfig(
        vocab_size=50,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=64,
        relative_attention=True,
        max_relative_positions=max_rel,
        pos_att_type=pos_att_type,
        position_biased_input=False,
        type_vocab_size=0,
        legacy=False,
    )
    torch.manual_seed(1)
    model = DebertaForMaskedLM(cfg).eval()
    _randomize(model)
    ids = tuple(torch.randint(5, 50, (12,)).tolist())
    captured, out = model_scores(model, ids)
    hidden, _ = deberta.encoder_states(types.SimpleNamespace(model=model), ids)
    attn = model.deberta.encoder.layer[0].attention.self
    assert deberta.score_scale(attn) == (8, 1 + len(pos_att_type), math.sqrt(8 * (1 + len(pos_att_type))))
    for layer, scores in enumerate(captured):
        terms = deberta.disentangled_terms(model, hidden[layer], layer)
        assert torch.allclose(terms.sum(0), scores, atol=1e-5, rtol=0)
        for name, term in zip(("c2p", "p2c"), terms[1:]):
            assert (term.abs().max() == 0) == (name not in pos_att_type)


def test_the_papers_index_for_position_to_content_does_not_reproduce_the_model(standin):
    """The paper writes p2c with δ(j, i); the code reads the same δ(i, j) row as c2p. Only the latter is the
    model's score (what the page's note says)."""
    deb = standin["deberta"]
    ids = ids_of(deb)
    captured, _ = model_scores(deb.model, ids)
    hidden, _ = deberta.encoder_states(deb, ids)
    model = deb.model
    attn = model.deberta.encoder.layer[0].attention.self
    n = len(ids)
    c2c, c2p, p2c = deberta.disentangled_terms(model, hidden[0], 0)
    q, k, _ = attn.transpose_for_scores(attn.in_proj(hidden[0][None])).chunk(3, dim=-1)
    rows = deberta.v1_rows(deberta.relative_positions(n), attn.max_relative_positions)
    with torch.no_grad():
        query_r = attn.transpose_for_scores(attn.pos_q_proj(model.deberta.encoder.get_rel_embedding()[None]))
        by_key = (k @ query_r.transpose(-1, -2))[0] / deberta.score_scale(attn)[2]  # (heads, T_j, 2k)
    cols = torch.arange(n)[None, :].expand(n, n)
    assert torch.allclose(by_key[:, cols, rows], p2c, atol=1e-5)  # δ(i, j): the model
    paper = by_key[:, cols, rows.T]  # δ(j, i)
    assert not torch.allclose(c2c + c2p + paper, captured[0], atol=1e-3)


def test_the_scale_is_the_square_root_of_3d_read_off_the_model(standin):
    attn = standin["deberta"].model.deberta.encoder.layer[0].attention.self
    d = standin["deberta"].model.config.hidden_size // standin["deberta"].model.config.num_attention_heads
    assert deberta.score_scale(attn) == (d, 3, math.sqrt(3 * d))


def test_bert_scores_are_berts_own_pre_softmax_scores(standin):
    bert = standin["bert"]
    ids = ids_of(bert)
    captured, out = model_scores(bert.model, ids)
    hidden, _ = deberta.encoder_states(bert, ids)
    for layer in range(len(out.attentions)):
        scores = deberta.bert_scores(bert.model, hidden[layer], layer)
        assert torch.allclose(scores, captured[layer], atol=1e-5)
        assert torch.allclose(torch.softmax(scores, -1), out.attentions[layer][0], atol=1e-5)


# ----------------------------------------------------------------------------- relative positions and buckets


def test_relative_positions_are_i_minus_j_and_v1_rows_depend_on_the_distance_only():
    rel = deberta.relative_positions(9)
    i, j = np.indices((9, 9))
    assert (rel.numpy() == i - j).all()
    rows = deberta.v1_rows(rel, 128)
    assert (rows.numpy() == 128 + i - j).all()  # no clipping inside the model's reach
    longer = deberta.v1_rows(deberta.relative_positions(30), 128)
    for shift in (0, 5, 21):  # the same pair of positions moved right: the same row
        assert torch.equal(longer[shift : shift + 9, shift : shift + 9], rows)


def test_v1_clips_at_k_when_the_sentence_is_longer_than_k():
    rel = deberta.relative_positions(20)
    rows = deberta.v1_rows(rel, 4)
    assert rows.min() == 0 and rows.max() == 7  # a table of 2k = 8 rows
    assert torch.equal(rows, 4 + torch.clamp(rel, -4, 3))
    d = torch.arange(-600, 601)
    assert torch.equal(deberta.v1_bucket(d, 512, 512), torch.clamp(d, -512, 511))


def test_v3_log_buckets_are_exact_near_and_logarithmic_far():
    d = torch.arange(-511, 512)
    b = deberta.v3_bucket(d)
    near = d.abs() <= 128
    assert torch.equal(b[near], d[near])  # exact up to ±128
    assert torch.equal(b, -b.flip(0))  # symmetric
    assert (b[1:] >= b[:-1]).all()  # monotone
    assert b.max() == 255 and b.min() == -255  # 256 buckets a side: rows 1..511 of 512
    far = d[d > 128]
    assert len(set(b[d > 128].tolist())) < len(far) / 2  # far distances share buckets


def test_positions_of_a_sentence(standin):
    p = deberta.positions(standin["deberta"].model, 7)
    k = standin["deberta"].model.config.max_position_embeddings  # max_relative_positions = -1
    assert p.max_relative_positions == k and p.max_length == k
    assert (p.v1_row == k + p.distance).all() and (p.v3_bucket == p.distance).all()
    assert len(p.curve_distance) == len(p.curve_v1) == len(p.curve_v3) == 2 * max(k, 512) - 1


# ----------------------------------------------------------------------------- the prefix demonstration


def test_aligned_pairs_keep_their_ids_and_drop_a_first_word_that_became_another_token(standin):
    from app.core import text as txt

    tok = standin["deberta"].tokenizer
    tk, tk2 = txt.tokenize(tok, SENTENCE), txt.tokenize(tok, "Once upon a time, " + SENTENCE)
    a, b = deberta.aligned(tk, tk2, 5)
    assert [tk.ids[i] for i in a] == [tk2.ids[j] for j in b]
    assert len({j - i for i, j in zip(a, b)}) == 1  # every aligned piece moved by the same offset
    first, moved = tk.pieces_of(0)[0], tk2.pieces_of(5)[0]
    assert (first in a) == (tk.ids[first] == tk2.ids[moved])  # "The" -> "ĠThe" may be another token


def test_a_prefix_leaves_debertas_first_layer_unchanged_term_by_term_but_not_berts(models):
    r = deberta.run(models, deberta.Inputs(prefix="Once upon a time,", layer=1))
    deb, bert = r.shifts
    assert deb.family == "deberta" and bert.family == "bert"
    assert deb.max_delta < 1e-5 and bert.max_delta > 1e-3
    assert deb.offset > 0 and bert.offset > 0  # moved right by the prefix's tokens (each in its own tokenizer)
    assert deb.pair is not None and bert.pair is not None
    # each term, not only the sum: the same hidden states and the same distance give the same c2c, c2p, p2c
    from app.core import text as txt

    loaded = models["deberta"]
    tk, tk2 = txt.tokenize(loaded.tokenizer, r.text), txt.tokenize(loaded.tokenizer, "Once upon a time, " + r.text)
    a, b = deberta.aligned(tk, tk2, 5)
    h1, _ = deberta.encoder_states(loaded, tk.ids)
    h2, _ = deberta.encoder_states(loaded, tk2.ids)
    t1 = deberta.disentangled_terms(loaded.model, h1[0], 0)[:, :, a][:, :, :, a]
    t2 = deberta.disentangled_terms(loaded.model, h2[0], 0)[:, :, b][:, :, :, b]
    assert torch.allclose(t1, t2, atol=1e-5)
    assert deb.chosen_delta is not None and deb.chosen_delta > 1e-6  # later layers mix in the prefix


def test_no_prefix_means_no_demonstration(standin):
    assert deberta.run(standin, deberta.Inputs(prefix="   ")).shifts == ()


# ----------------------------------------------------------------------------- the head, the decoder, the sizes


def test_the_masked_lm_head_sits_on_the_last_layer_with_no_absolute_positions(models):
    deb = models["deberta"]
    ids = torch.tensor([ids_of(deb)])
    with torch.no_grad():
        out = deb.model(input_ids=ids, output_hidden_states=True)
        head = deb.model.lm_predictions(out.hidden_states[-1], deb.model.deberta.embeddings.word_embeddings)
    assert torch.allclose(out.logits, head, atol=1e-5)
    facts = deberta.decoder_facts(deb.model)
    assert facts == deberta.Decoder(False, False, ("position_embeddings",), "lm_predictions.lm_head")


def test_transformers_drops_a_checkpoints_absolute_position_table_on_load(standin_dir, tmp_path):
    """microsoft/deberta-base stores the absolute positions its EMD used; transformers loads such a file without
    them (no table to put them in, and no complaint: ``_keys_to_ignore_on_load_unexpected``)."""
    from safetensors.torch import load_file, save_file
    from transformers import DebertaForMaskedLM

    folder = tmp_path / "with-positions"
    source = standin_dir / "deberta"
    folder.mkdir()
    for f in source.iterdir():
        (folder / f.name).write_bytes(f.read_bytes())
    weights = load_file(folder / "model.safetensors")
    hidden = weights["deberta.embeddings.word_embeddings.weight"].shape[1]
    weights["deberta.embeddings.position_embeddings.weight"] = torch.randn(128, hidden)
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    model, info = DebertaForMaskedLM.from_pretrained(folder, legacy=False, output_loading_info=True)
    assert model.deberta.embeddings.position_embeddings is None
    assert not any("position_embeddings" in k for k in info["unexpected_keys"])


def test_fill_mask_masks_every_piece_of_the_word_and_reports_its_probabilities(standin):
    from app.core import text as txt

    deb = standin["deberta"]
    tok = deb.tokenizer
    text = "The little girl found a strawberry in the park."
    tk = txt.tokenize(tok, text)
    word = 5
    pieces = tk.pieces_of(word)
    assert len(pieces) > 1  # the stand-in's tiny vocabulary splits it
    r = deberta.run(standin, deberta.Inputs(text=text, word=word))
    assert r.word == word and len(r.prediction.pieces) == len(pieces)
    ids = list(tk.ids)
    for i in pieces:
        ids[i] = tok.mask_token_id
    probs = deberta.masked_probs(deb, tuple(ids), tuple(pieces))
    gold = [tk.ids[i] for i in pieces]
    assert r.prediction.p_word == pytest.approx(float(np.prod([probs[n, g] for n, g in enumerate(gold)])), rel=1e-5)
    assert r.prediction.first.read[0][1] == pytest.approx(float(probs[0].max()), rel=1e-6)
    assert [p for _, p in r.prediction.first.read] == sorted((p for _, p in r.prediction.first.read), reverse=True)
    np.testing.assert_allclose(probs.sum(-1), 1, atol=1e-5)


def test_deberta_base_counted_live_matches_its_published_size():
    size = deberta.base_size()
    h, v, i, layers = 768, 50265, 3072, 12
    per_layer = 3 * h * h + 2 * h + 2 * h * h + h + (h * h + h + 2 * h) + (h * i + i) + (i * h + h + 2 * h)
    assert size.embeddings == v * h
    assert size.backbone == layers * per_layer + 2 * 512 * h + 2 * h  # + rel_embeddings + embedding LayerNorm
    assert size.head == h * h + h + 2 * h + v
    assert round(size.backbone / 1e6) == deberta.PUBLISHED["backbone_m"]
    assert round(size.total / 1e6) == 139


# ----------------------------------------------------------------------------- run: choices, notes and bad input


def test_changing_layer_head_or_words_never_reruns_a_forward_pass(standin):
    cache = CountingCache()
    first = deberta.run(standin, deberta.Inputs(), cache)
    n = len(cache.calls)
    again = deberta.run(standin, deberta.Inputs(layer=2, head=3, query=1, key=9), cache)
    assert len(cache.calls) == n and again.layer == 2 and again.head == 3
    assert not np.allclose(first.terms.total, again.terms.total)


def test_run_defaults_choose_the_default_words(standin):
    r = deberta.run(standin, deberta.Inputs())
    assert r.words[r.query] == "girl" and r.words[r.key] == "ball" and r.words[r.word] == "park"
    assert r.tokens[r.query_pos] == "girl" and r.tokens[r.key_pos] == "ball"
    assert r.notes == () and r.terms.max_error < 1e-5
    assert r.sizes[1].total == deberta.base_size().total


@pytest.mark.parametrize("text", ["", "  \n\t ", "[MASK]", "[CLS] [SEP]"])
def test_nothing_to_show_stops_with_a_reason(standin, text):
    with pytest.raises(Stop) as stop:
        deberta.run(standin, deberta.Inputs(text=text))
    assert stop.value.note.text


def test_out_of_range_values_move_with_a_note(standin):
    r = deberta.run(standin, deberta.Inputs(layer=40, head=60, query=500, word=3))
    cfg = standin["deberta"].model.config
    assert r.layer == cfg.num_hidden_layers - 1 and r.head == cfg.num_attention_heads - 1
    assert r.query == len(r.words) - 2 and r.words[r.query] == "park"  # its last content word, not "."
    assert len(r.notes) == 3


def test_emoji_cjk_and_typed_specials_are_named_and_a_long_text_is_cut(standin):
    r = deberta.run(standin, deberta.Inputs(text="The cat 😀 sat on the mat [MASK]. 你好", query=0, key=1, word=2))
    text = " ".join(n.text for n in r.notes)
    assert "`😀你好`" in text and "`[MASK]`" in text
    long = deberta.run(standin, deberta.Inputs(text="The 😀 dog ran to the big tree and sat down. " * 20))
    assert len(long.tokens) <= deberta.DEFAULTS.max_tokens
    assert any(n.level == "warning" for n in long.notes)
    for tok in (standin["deberta"].tokenizer, standin["bert"].tokenizer):
        assert len(tok(long.text)["input_ids"]) <= deberta.DEFAULTS.max_tokens


def test_the_bundled_checkpoint_runs_the_default_view(checkpoint):
    r = deberta.run(checkpoint, deberta.Inputs())
    assert r.terms.max_error < 1e-5
    assert r.shifts[0].max_delta < 1e-5


# ----------------------------------------------------------------------------- figures


@pytest.fixture(scope="module")
def result(standin):
    return deberta.run(standin, deberta.Inputs(layer=1, head=1))


def test_terms_figure_holds_the_three_terms_and_their_sum(result):
    fig = figures.terms_figure(result.tokens, result.terms, result.query_pos, result.key_pos)
    z = [np.asarray(trace.z) for trace in fig.data]
    t = result.terms
    for got, want in zip(z, (t.c2c, t.c2p, t.p2c, t.total)):
        np.testing.assert_allclose(got, want)
    custom = np.asarray(fig.data[0].customdata)
    q, k = result.query_pos, result.key_pos
    assert float(custom[q, k, 5]) == pytest.approx(float(t.total[q, k]))
    assert float(custom[q, k, 7]) == pytest.approx(float(t.model_probs[q, k]))
    assert len(fig.layout.shapes) == 4  # the chosen cell outlined in every panel
    assert fig.data[0].zmin == -fig.data[0].zmax  # one scale centred on 0


def test_position_bucket_shift_and_prediction_figures_carry_their_numbers(result):
    pos = figures.positions_figure(result)
    np.testing.assert_array_equal(np.asarray(pos.data[0].z), result.positions.distance)
    buckets = figures.buckets_figure(result)
    assert list(buckets.data[0].y) == list(result.positions.curve_v1)
    assert list(buckets.data[1].y) == list(result.positions.curve_v3)
    shift = figures.shift_figure(result.shifts)
    for s in result.shifts:
        trace = next(t for t in shift.data if t.name == s.model)
        assert list(trace.x) == pytest.approx(s.without.reshape(-1).tolist())
        assert list(trace.y) == pytest.approx(s.shifted.reshape(-1).tolist())
    assert shift.data[-2].name == "DeBERTa"  # drawn over BERT's dots
    pred = figures.prediction_figure(result.prediction)
    assert list(pred.data[0].x) == [p for _, p in result.prediction.first.read][::-1]


def _strings(node, key=""):
    """Every string in a figure's dict, with the key it sits under (templates are ours, skipped)."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _strings(v, k)
    elif isinstance(node, (list, tuple, np.ndarray)):
        for v in node:
            yield from _strings(v, key)
    elif isinstance(node, str) and "template" not in key:
        yield key, node


def test_every_piece_in_a_figure_is_escaped(standin):
    r = deberta.run(standin, deberta.Inputs(text="<b>bold</b> & <script>x</script> cat", query=0, key=1, word=2))
    assert any("<" in t or ">" in t for t in r.tokens)  # the pieces do carry markup characters
    for fig in (
        figures.terms_figure(r.tokens, r.terms),
        figures.positions_figure(r),
        figures.shift_figure(r.shifts),
        figures.prediction_figure(r.prediction),
    ):
        found = [(k, s) for k, s in _strings(fig.to_dict()) if "<" in s or ">" in s]
        assert found == []


def test_every_figure_is_valid_plotly(result):
    for fig in (
        figures.terms_figure(result.tokens, result.terms, result.query_pos, result.key_pos),
        figures.positions_figure(result),
        figures.buckets_figure(result),
        figures.shift_figure(result.shifts),
        figures.prediction_figure(result.prediction),
    ):
        go.Figure(fig.to_dict())  # validates every property
