"""Rebuild the NSP vs SOP lesson's held-out story sample, ``assets/sentence_order/stories.txt``, by rule.

    python scripts/sentence_pool.py [--corpus ../shared/corpus] [--stories 100]

Whole stories of ``tinystories_valid.txt`` (the held-out file: no bundled checkpoint trained on it), read
as the NSP stand-in's recipe reads them (``app.training.data.read_whole_stories``), kept when they are
ASCII only, of at least 6 sentences (two segments of up to 3), at most 1,100 characters, and no sentence
of theirs ends inside a quotation (every sentence the splitter gives holds an even number of ``"``), then
``--stories`` of them evenly spaced through the file. One story per blank-line-separated block.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from app.core import text as txt
from app.training import data

OUT = Path(__file__).resolve().parents[1] / "assets" / "sentence_order" / "stories.txt"
MIN_SENTENCES, MAX_CHARS = 6, 1100


def eligible(story: str) -> bool:
    sentences = txt.split_sentences(story)
    return (story.isascii() and len(sentences) >= MIN_SENTENCES and len(story) <= MAX_CHARS
            and all(s.count('"') % 2 == 0 for s in sentences))


def pool(valid_file: Path, n: int) -> list[str]:
    ok = [s for s in data.read_whole_stories(valid_file) if eligible(s)]
    if len(ok) < n:
        raise SystemExit(f"only {len(ok)} eligible stories in {valid_file}; asked for {n}")
    return [ok[i * len(ok) // n] for i in range(n)]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", type=Path, default=Path("../shared/corpus"))
    p.add_argument("--stories", type=int, default=100)
    p.add_argument("--out", type=Path, default=OUT)
    a = p.parse_args(argv)
    stories = pool(a.corpus / "tinystories_valid.txt", a.stories)
    a.out.write_text("\n\n".join(stories) + "\n", encoding="utf-8")
    print(f"{len(stories)} stories, {a.out.stat().st_size / 1e3:.0f} KB -> {a.out}")


if __name__ == "__main__":
    main()
