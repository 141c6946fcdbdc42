"""The examples gallery: prepared links that show each variant's idea at its clearest. Pure data; the
home page lists them, tests/pages/test_examples.py opens every one (no note, no exception), and the
default lecture deck (app/lecture/deck.py) is built from the ones marked ``lecture``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Example:
    page: str  # the lesson's file, as in app/lessons/__init__.py
    label: str
    why: str  # what to look at, in one line
    query: dict = field(default_factory=dict)  # its URL state; ``figure`` names the stage figure the label is about
    lecture: bool = False  # a slide of the default lecture deck (a lesson with none marked gives its first)


EXAMPLES: list[Example] = [
    Example(
        "pages/masking.py",
        "Static ×1 vs dynamic masking over 40 epochs",
        "With one fixed mask only 15% of positions are ever predicted; a fresh mask reaches almost all.",
        {"strategy": "static", "epochs": "40", "figure": "coverage"},
        lecture=True,
    ),
    Example(
        "pages/masking.py",
        "Whole-word masking on a long word",
        "WordPiece cuts a rare word into pieces; whole-word masking hides all the pieces of a word together.",
        {
            "unit": "word",
            "text": "The unbelievably happy puppy jumped into the muddy puddle.",
            "rate": "0.3",
            "seed": "2",
        },
    ),
    Example(
        "pages/masking.py",
        "SpanBERT spans",
        "Contiguous spans of whole words, lengths from a geometric distribution (mean ≈ 3.8 words).",
        {"unit": "span", "seed": "7"},
    ),
    Example(
        "pages/albert_params.py",
        "ALBERT-xxlarge: 4096 wide, still 223M parameters",
        "Where the parameters live, bar by bar: factorized embeddings and one shared layer keep a huge model "
        "small — the takeaway says what they do not save.",
        {
            "vocab_size": "30000",
            "hidden_size": "4096",
            "embedding_size": "128",
            "num_hidden_layers": "12",
            "num_attention_heads": "64",
            "intermediate_size": "16384",
            "sharing": "all",
        },
        lecture=True,
    ),
    Example(
        "pages/albert_params.py",
        "Sharing only the feed-forward layers",
        "The ALBERT paper's ablation: which half of a layer holds most of its parameters?",
        {"sharing": "ffn"},
    ),
    Example(
        "pages/albert_activations.py",
        "Unroll ALBERT's block to 4× its depth",
        "The same block applied again and again: does the representation settle?",
        {"repeat": "4", "figure": "unrolled"},
    ),
    Example(
        "pages/distillation.py",
        "Dark knowledge at temperature 4",
        "A high temperature shows what the teacher thinks of the wrong answers too.",
        {"temperature": "4"},
    ),
    Example(
        "pages/electra.py",
        "A hot generator",
        "At temperature 2 the generator proposes wilder words: does the discriminator spot them?",
        {"temperature": "2", "seed": "3"},
    ),
    Example(
        "pages/xlnet.py",
        "Right-to-left factorization",
        "K = 1: every piece is predicted, from the last to the first; each sees only the pieces to its right.",
        {"order": "right-to-left", "k": "1"},
    ),
    Example(
        "pages/xlnet.py",
        "A typed order",
        "Choose exactly which token is predicted when, and what each one sees.",
        {"order": "typed", "typed": "5 0 6 1 7 2 8 3 9 4 10"},
    ),
    Example(
        "pages/deberta.py",
        "A longer prefix: BERT's scores move, DeBERTa's first layer does not",
        "Relative positions only: the same two words score the same wherever they stand.",
        {"prefix": "Once upon a time, in a big green forest, there was a tree.", "figure": "shift"},
    ),
    Example(
        "pages/deberta.py",
        "Content or position: which term decides?",
        "The three disentangled terms of 'girl' looking at 'ball', layer by layer.",
        {"query": "2", "key": "6", "layer": "3"},
    ),  # words counted from 0: The little girl found a red ball
    Example(
        "pages/modernbert.py",
        "512 tokens through local and global layers",
        "Every layer side by side: the global ones see the whole story; the local ones only a window around "
        "each token.",
        {"length": "512", "figure": "layers"},
    ),
    Example(
        "pages/modernbert.py",
        "Rotary positions 4,000 tokens apart",
        "The same query and key, moved far along the sequence: their score does not change.",
        {"shift": "4000", "figure": "rope"},
    ),
    Example(
        "pages/attention.py",
        "Every head of one layer, live",
        "Hover a word: each colour is a head of this layer, its lines where that head looks.",
        {},
        lecture=True,
    ),
    Example(
        "pages/attention.py",
        "ALBERT's shared layers, every layer side by side",
        "Every layer's attention from one set of weights: the maps differ because each layer's input does.",
        {"variant": "albert", "view": "model", "figure": "layers"},
    ),
    Example(
        "pages/attention.py",
        "XLNet's content stream, rolled out",
        "Attention rollout through every layer of XLNet.",
        {"variant": "xlnet", "agg": "rollout", "figure": "map"},
    ),
    Example(
        "pages/compare.py",
        "Every variant on one sentence: what each costs here",
        "Parameters, memory and forward time, measured on this machine; forward times whose intervals overlap "
        "are not ranked.",
        {},
        lecture=True,
    ),
    Example(
        "pages/compare.py",
        "Which one to choose: cost on a paragraph",
        "The selection guide, computed from what this paragraph cost each variant here: for speed, for "
        "memory, for filling in a word.",
        {
            "text": "Once upon a time, a little boy named Tom lived near a big forest. Every morning he walked to "
            "the river with his dog. One day he found a shiny stone under a tree. He showed it to his mom, "
            "and she smiled. They put the stone on the window, where it sparkled in the sun.",
            "figure": "guide",
        },
        lecture=True,
    ),
]
