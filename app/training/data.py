"""The data pipeline every recipe shares: read the corpus, build each family's tokenizer, pack sequences.

Tokenizers follow the real families' conventions so the app's code serves bundled and hub
checkpoints alike:

- ``wordpiece``: BERT/DistilBERT/ELECTRA, uncased, ``[CLS] x [SEP]``, ids ``[PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4``.
- ``bpe``: RoBERTa byte-level BPE, ``<s> x </s>``, ``<s>=0 <pad>=1 </s>=2 <unk>=3``, ``<mask>`` last.
- ``albert``: SentencePiece Unigram, lowercased, ``<pad>=0 <unk>=1 [CLS]=2 [SEP]=3 [MASK]=4``.

The mask token absorbs the space before it (``lstrip=True``) exactly where the real tokenizer's does —
roberta-base, albert-base-v2, xlnet-base-cased — so " <mask>" typed in plain text is one mask piece,
never a stray space piece plus the mask (which is what ``pipeline("fill-mask")`` feeds the model).
- ``deberta``: DeBERTa v1 byte-level BPE, cased, ``[CLS] x [SEP]``, ``[PAD]=0 [CLS]=1 [SEP]=2 [UNK]=3``,
  ``[MASK]`` last.
- ``modernbert``: byte-level BPE, cased, ``[UNK] [CLS] [SEP] [PAD] [MASK]`` the last ids, ``[CLS] x [SEP]``.
- ``xlnet``: SentencePiece Unigram, cased, ``<unk>=0 <s>=1 </s>=2 <cls>=3 <sep>=4 <pad>=5 <mask>=6``;
  ``x <sep> <cls>`` with the special tokens at the *end* and padding on the *left*.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'A-Z])|(?<=[.!?][\"'])\s+")
MAX_LENGTH = 128  # the bundled models' position embeddings; tokenizers report it as model_max_length
SEGMENTED = ["input_ids", "token_type_ids", "attention_mask"]  # ALBERT and XLNet use segment ids too


def read_stories(path: str | Path, limit_chars: int | None = None) -> list[str]:
    """Stories of a TinyStories-style file: paragraphs separated by blank lines, whitespace folded."""
    text = Path(path).read_text(encoding="utf-8")
    if limit_chars:
        text = text[:limit_chars]
    stories = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]
    return [s for s in stories if s]


STORY_OPENING = re.compile(r"Once( upon a time|,? there (was|were|lived)|,)")


def read_whole_stories(path: str | Path, max_words: int = 200) -> list[str]:
    """Whole stories (paragraphs joined), for the sentence-level objectives, whose pairs must know where a
    story ends: ``read_stories`` gives paragraphs, about 3.6 sentences each here, too short for two
    multi-sentence segments.

    Where the file marks story ends (TinyStories' training file: a single newline ends a story, blank lines
    separate its paragraphs), those marks split it. Where it does not (the validation file: blank lines
    everywhere), paragraphs are grouped at the openings that only ever start a story ("Once upon a time",
    "Once there was", "Once, ..." — in the training file, 3,559 of its 5,478 story openings and none of its
    later paragraphs), and a group is kept only when it starts with such an opening and holds at most
    ``max_words`` words: a longer group most likely runs two stories together (checked on the training file,
    where the ends are known: 3.5% of the groups kept at 200 words hold two stories, 25% of all groups)."""
    text = Path(path).read_text(encoding="utf-8")
    blocks = [b for b in re.split(r"(?<=\S)[ \t]*\n(?=[ \t]*\S)", text) if b.strip()]
    paragraphs = lambda block: [" ".join(p.split()) for p in re.split(r"\n\s*\n", block) if p.strip()]  # noqa: E731
    openings = sum(bool(STORY_OPENING.match(p)) for b in blocks for p in paragraphs(b))
    if len(blocks) > openings:  # the file marks its story ends (more marks than openings it could miss)
        return [" ".join(paragraphs(b)) for b in blocks]
    groups: list[tuple[bool, list[str]]] = []  # (starts a story for sure, its paragraphs)
    for i, block in enumerate(blocks):
        for j, par in enumerate(paragraphs(block)):
            starts = bool(STORY_OPENING.match(par)) or (j == 0 and i > 0)  # an opening, or after a mark
            if starts or not groups:
                groups.append((starts, []))
            groups[-1][1].append(par)
    return [" ".join(g) for starts, g in groups if starts and sum(len(par.split()) for par in g) <= max_words]


def split_sentences(story: str) -> list[str]:
    return [s.strip() for s in SENTENCE_END.split(story) if s.strip()]


def corpus_files(corpus: str | Path) -> tuple[Path, Path]:
    """(train, valid) text files from a corpus folder (or a single file used for both)."""
    corpus = Path(corpus)
    if corpus.is_file():
        return corpus, corpus
    train = corpus / "tinystories_train.txt"
    valid = corpus / "tinystories_valid.txt"
    if not train.exists():
        txt = sorted(corpus.glob("*.txt"))
        if not txt:
            raise FileNotFoundError(f"no .txt files in {corpus}")
        train, valid = txt[0], (txt[1] if len(txt) > 1 else txt[0])
    return train, valid


# ----------------------------------------------------------------------------- tokenizers


def build_wordpiece(train_file: Path, vocab_size: int = 4096, cls=None):
    """WordPiece, uncased, BERT's special tokens. ``cls`` is the family's tokenizer class."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
    from transformers import BertTokenizer

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train([str(train_file)], trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials))
    cls = cls or BertTokenizer
    return cls(vocab=tok.get_vocab(), do_lower_case=True, model_max_length=MAX_LENGTH)


def mask_token(text: str, lstrip: bool):
    """The mask as the real tokenizers declare it: special, not normalized, lstrip as the family does."""
    from tokenizers import AddedToken

    return AddedToken(text, lstrip=lstrip, rstrip=False, normalized=False, special=True)


def _byte_level_bpe(
    train_file: Path, vocab_size: int, first: list[str]
) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """(vocab, merges) of a byte-level BPE trained on ``train_file``, with ``first`` taking ids 0, 1, ..."""
    from tokenizers import ByteLevelBPETokenizer

    tok = ByteLevelBPETokenizer()
    tok.train([str(train_file)], vocab_size=vocab_size, special_tokens=first)
    with tempfile.TemporaryDirectory() as d:
        tok.save_model(d)
        vocab = json.loads(Path(d, "vocab.json").read_text())
        merges = [tuple(line.split()) for line in Path(d, "merges.txt").read_text().splitlines()[1:] if line.strip()]
    return vocab, merges


def build_bpe(train_file: Path, vocab_size: int = 4096):
    """Byte-level BPE with RoBERTa's special tokens (``<mask>`` takes the last id, as in roberta-base)."""
    from transformers import RobertaTokenizer

    vocab, merges = _byte_level_bpe(train_file, vocab_size - 1, ["<s>", "<pad>", "</s>", "<unk>"])
    vocab["<mask>"] = len(vocab)
    return RobertaTokenizer(
        vocab=vocab, merges=merges, model_max_length=MAX_LENGTH, mask_token=mask_token("<mask>", True)
    )


def build_deberta(train_file: Path, vocab_size: int = 4096):
    """DeBERTa (v1, microsoft/deberta-base): GPT-2 style byte-level BPE, cased, with BERT's special tokens
    ``[PAD]=0 [CLS]=1 [SEP]=2 [UNK]=3`` first and ``[MASK]`` last; ``[CLS] x [SEP]``."""
    from transformers import DebertaTokenizer

    vocab, merges = _byte_level_bpe(train_file, vocab_size - 1, ["[PAD]", "[CLS]", "[SEP]", "[UNK]"])
    vocab["[MASK]"] = len(vocab)
    return DebertaTokenizer(
        vocab=vocab, merges=merges, model_max_length=MAX_LENGTH, mask_token=mask_token("[MASK]", True)
    )


def build_modernbert(train_file: Path, vocab_size: int = 4096, model_max_length: int = 512):
    """ModernBERT (answerdotai/ModernBERT-base): byte-level BPE, cased, ``<|padding|>`` and ``<|endoftext|>``
    among the ordinary pieces and ``[UNK] [CLS] [SEP] [PAD] [MASK]`` at the end of the vocabulary;
    ``[CLS] x [SEP]``, no token types. Like the hub tokenizer it has no family class of its own."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    specials = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
    vocab, merges = _byte_level_bpe(train_file, vocab_size - len(specials), ["<|endoftext|>", "<|padding|>"])
    for t in specials:
        vocab[t] = len(vocab)
    core = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token=None, fuse_unk=False))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    core.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        mask_token=mask_token("[MASK]", True),
        model_max_length=model_max_length,
        model_input_names=["input_ids", "attention_mask"],
        clean_up_tokenization_spaces=False,
    )


def _train_unigram(train_file: Path, vocab_size: int, lowercase: bool, **ids) -> list[tuple[str, float]]:
    import sentencepiece as spm

    with tempfile.TemporaryDirectory() as d:
        src = Path(train_file)
        if lowercase:
            src = Path(d, "lower.txt")
            src.write_text(Path(train_file).read_text(encoding="utf-8").lower(), encoding="utf-8")
        spm.SentencePieceTrainer.train(
            input=str(src),
            model_prefix=f"{d}/sp",
            vocab_size=vocab_size,
            model_type="unigram",
            character_coverage=0.9999,
            input_sentence_size=2_000_000,
            shuffle_input_sentence=True,
            minloglevel=2,
            **ids,
        )
        sp = spm.SentencePieceProcessor(model_file=f"{d}/sp.model")
        return [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]


def build_albert(train_file: Path, vocab_size: int = 4000):
    from transformers import AlbertTokenizer

    vocab = _train_unigram(
        train_file,
        vocab_size,
        lowercase=True,
        pad_id=0,
        unk_id=1,
        bos_id=-1,
        eos_id=-1,
        control_symbols=["[CLS]", "[SEP]", "[MASK]"],
    )
    return AlbertTokenizer(
        vocab=vocab,
        do_lower_case=True,
        model_max_length=MAX_LENGTH,
        model_input_names=SEGMENTED,
        mask_token=mask_token("[MASK]", True),
    )


def build_xlnet(train_file: Path, vocab_size: int = 4000):
    from transformers import XLNetTokenizer

    vocab = _train_unigram(
        train_file,
        vocab_size,
        lowercase=False,
        unk_id=0,
        bos_id=1,
        eos_id=2,
        pad_id=-1,
        control_symbols=["<cls>", "<sep>", "<pad>", "<mask>", "<eod>", "<eop>"],
    )
    tok = XLNetTokenizer(
        vocab=vocab,
        model_max_length=MAX_LENGTH,
        additional_special_tokens=["<eop>", "<eod>"],
        model_input_names=SEGMENTED,
        mask_token=mask_token("<mask>", True),
    )
    tok.padding_side = "left"
    return tok


# ----------------------------------------------------------------------------- sequences


def encode_sentences(tokenizer, stories: list[str]) -> list[list[list[int]]]:
    """Per story, per sentence, the token ids without special tokens."""
    flat, owners = [], []
    for i, story in enumerate(stories):
        for sent in split_sentences(story):
            flat.append(sent)
            owners.append(i)
    enc = tokenizer(flat, add_special_tokens=False)["input_ids"]
    out: list[list[list[int]]] = [[] for _ in stories]
    for i, ids in zip(owners, enc):
        if ids:
            out[i].append(ids)
    return [s for s in out if s]


def pack(
    stories: list[list[list[int]]], content_len: int, cross_documents: bool, doc_sep: int | None = None
) -> list[list[list[int]]]:
    """Greedily pack whole sentences into chunks of at most ``content_len`` tokens.

    Returns chunks, each a list of sentences (lists of ids). With ``cross_documents`` (RoBERTa's
    FULL-SENTENCES) a chunk may continue into the next story, the stories separated by ``doc_sep``;
    otherwise (BERT) a chunk never leaves its story. A sentence longer than a chunk is cut.
    """
    chunks: list[list[list[int]]] = []
    cur: list[list[int]] = []
    size = 0

    def flush():
        nonlocal cur, size
        if cur:
            chunks.append(cur)
        cur, size = [], 0

    for story in stories:
        for sent in story:
            for start in range(0, len(sent), content_len):
                piece = sent[start : start + content_len]
                if size + len(piece) > content_len:
                    flush()
                cur.append(piece)
                size += len(piece)
        if not cross_documents:
            flush()
        elif doc_sep is not None and size + 1 <= content_len and cur:
            cur.append([doc_sep])
            size += 1
    flush()
    return chunks


@dataclass
class Sequences:
    """Fixed-length model inputs. All tensors (N, T)."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    maskable: torch.Tensor  # True where a token may be an MLM target (not special, not padding)
    token_type_ids: torch.Tensor | None = None
    sop_labels: torch.Tensor | None = None  # (N,) ALBERT: 1 when the two segments were swapped

    def __len__(self) -> int:
        return self.input_ids.shape[0]

    def subset(self, idx) -> "Sequences":
        pick = lambda t: None if t is None else t[idx]  # noqa: E731
        return Sequences(
            pick(self.input_ids),
            pick(self.attention_mask),
            pick(self.maskable),
            pick(self.token_type_ids),
            pick(self.sop_labels),
        )


def single_segment(tokenizer, chunks: list[list[list[int]]], seq_len: int, specials_at_end: bool = False) -> Sequences:
    """``[CLS] x [SEP]`` (or ``<s> x </s>``), or for XLNet ``x <sep> <cls>`` left-padded."""
    n = len(chunks)
    ids = torch.full((n, seq_len), tokenizer.pad_token_id, dtype=torch.long)
    maskable = torch.zeros((n, seq_len), dtype=torch.bool)
    for i, chunk in enumerate(chunks):
        content = [t for s in chunk for t in s][: seq_len - 2]
        if specials_at_end:
            row = content + [tokenizer.sep_token_id, tokenizer.cls_token_id]
            ids[i, seq_len - len(row) :] = torch.tensor(row)
            maskable[i, seq_len - len(row) : seq_len - 2] = True
        else:
            row = [tokenizer.cls_token_id] + content + [tokenizer.sep_token_id]
            ids[i, : len(row)] = torch.tensor(row)
            maskable[i, 1 : 1 + len(content)] = True
    sep_or_doc = torch.isin(ids, torch.tensor(tokenizer.all_special_ids))
    maskable &= ~sep_or_doc
    return Sequences(ids, (ids != tokenizer.pad_token_id).long(), maskable)


def sentence_pairs(tokenizer, chunks: list[list[list[int]]], seq_len: int, gen: torch.Generator) -> Sequences:
    """ALBERT: ``[CLS] A [SEP] B [SEP]`` split at a sentence boundary; half the pairs swapped (SOP)."""
    n = len(chunks)
    ids = torch.full((n, seq_len), tokenizer.pad_token_id, dtype=torch.long)
    types = torch.zeros((n, seq_len), dtype=torch.long)
    maskable = torch.zeros((n, seq_len), dtype=torch.bool)
    swapped = torch.rand(n, generator=gen) < 0.5
    for i, chunk in enumerate(chunks):
        if len(chunk) >= 2:
            cut = int(torch.randint(1, len(chunk), (1,), generator=gen))
            a, b = [t for s in chunk[:cut] for t in s], [t for s in chunk[cut:] for t in s]
        else:
            flat = chunk[0]
            cut = max(1, len(flat) // 2)
            a, b = flat[:cut], flat[cut:]
        if swapped[i]:
            a, b = b, a
        a, b = a[: seq_len - 3], b[: max(0, seq_len - 3 - len(a))]
        row = [tokenizer.cls_token_id] + a + [tokenizer.sep_token_id] + b + [tokenizer.sep_token_id]
        ids[i, : len(row)] = torch.tensor(row)
        types[i, len(a) + 2 : len(row)] = 1
        maskable[i, : len(row)] = True
    maskable &= ~torch.isin(ids, torch.tensor(tokenizer.all_special_ids))
    return Sequences(ids, (ids != tokenizer.pad_token_id).long(), maskable, types, swapped.long())


def random_ids(tokenizer) -> torch.Tensor:
    """Ids a random replacement may take: the whole vocabulary except special tokens."""
    special = set(tokenizer.all_special_ids)
    return torch.tensor([i for i in range(len(tokenizer)) if i not in special], dtype=torch.long)


def unigram_baseline(seqs: Sequences, vocab_size: int) -> dict[str, float]:
    """Top-1/top-5 of always guessing the most frequent tokens (frequencies from ``seqs`` itself)."""
    counts = torch.bincount(seqs.input_ids[seqs.maskable], minlength=vocab_size).double()
    share = (counts / counts.sum()).sort(descending=True).values
    return {"top1": float(share[0]), "top5": float(share[:5].sum())}
