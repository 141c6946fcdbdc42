"""The lessons, in teaching order: what the router and the home page's map list. Pure data.

Add a lesson here only when its page works (no placeholders)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Lesson:
    path: str  # relative to the repository root
    slug: str  # its URL path: the file's name without .py (see ui.routed_by_navigation for why)
    title: str
    icon: str
    line: str  # what a student sees there, in one line
    library: str  # the lesson's library module: SPEC, Inputs, run, TAKEAWAY
    figure: str = ""  # "module:function" building its key figure from run's Result (the stage, the handout)


LESSONS: list[Lesson] = [
    Lesson('pages/masking.py', 'masking', 'Masking lab', ':material/theater_comedy:',
           'Static vs dynamic masking, 80/10/10, whole words and spans — with a real model filling the blanks.',
           'app.lessons.masking', 'app.figures.masking:key_figure'),
    Lesson('pages/albert_params.py', 'albert_params', 'ALBERT: parameters', ':material/calculate:',
           'Factorized embeddings and cross-layer sharing: exact parameter counts, compute and memory.',
           'app.lessons.albert_params', 'app.figures.albert_params:key_figure'),
    Lesson('pages/albert_activations.py', 'albert_activations', 'ALBERT: shared layers', ':material/repeat:',
           'One block applied L times: how activations move layer by layer, and what happens if you keep going.',
           'app.lessons.albert_activations', 'app.figures.albert_activations:key_figure'),
    Lesson('pages/distillation.py', 'distillation', 'DistilBERT: distillation', ':material/science:',
           'Teacher and student on one sentence: soft targets, temperature and the three loss terms.',
           'app.lessons.distillation', 'app.figures.distillation:key_figure'),
    Lesson('pages/electra.py', 'electra', 'ELECTRA: spot the fake', ':material/policy:',
           'A generator swaps words, a discriminator scores every token: replaced-token detection, live.',
           'app.lessons.electra', 'app.figures.electra:key_figure'),
    Lesson('pages/xlnet.py', 'xlnet', 'XLNet: permutation LM', ':material/shuffle:',
           'Predict tokens in any order: the content and query streams as attention masks, with live predictions.',
           'app.lessons.xlnet', 'app.figures.xlnet:key_figure'),
    Lesson('pages/deberta.py', 'deberta', 'DeBERTa: disentangled attention', ':material/join_inner:',
           'Content and relative position kept apart in every attention score, taken apart term by term.',
           'app.lessons.deberta', 'app.figures.deberta:key_figure'),
    Lesson('pages/modernbert.py', 'modernbert', 'ModernBERT: a 2024 encoder', ':material/rocket_launch:',
           'Rotary positions, alternating local and global attention, GeGLU and unpadding, measured live.',
           'app.lessons.modernbert', 'app.figures.modernbert:key_figure'),
    Lesson('pages/sentence_order.py', 'sentence_order', 'NSP vs SOP: sentence objectives', ':material/swap_vert:',
           'Two sentences in order and swapped: what next-sentence and sentence-order heads see, and why NSP is easy.',
           'app.lessons.sentence_order'),
    Lesson('pages/claims.py', 'claims', 'Does it work?', ':material/science:',
           "Each paper's claim replayed as a controlled experiment: curves over seeds and a verdict computed from them.",
           'app.lessons.claims'),
    Lesson('pages/attention.py', 'attention', 'Attention in every layer', ':material/visibility:',
           'bertviz head and model views for any variant — offline and injection-safe — plus mean and rollout maps.',
           'app.lessons.attention', 'app.figures.attention:key_figure'),
    Lesson('pages/compare.py', 'compare', 'Variants side by side', ':material/compare_arrows:',
           'Every variant on your sentence: tokens, predictions, size, latency and memory, measured here.',
           'app.lessons.compare', 'app.figures.compare:key_figure'),
]


@dataclass(frozen=True)
class Tool:
    """A page that is not a lesson (no library of its own): listed after the lessons."""

    path: str
    slug: str
    title: str
    icon: str
    line: str


TOOLS: list[Tool] = [
    Tool('pages/lecture.py', 'lecture', 'Lecture mode', ':material/slideshow:',
         'A deck of prepared views to present one per screen, a QR code for the class, and a handout.'),
]
