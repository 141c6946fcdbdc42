"""Prepare for an offline lecture: put the catalogue's real checkpoints into the standard Hugging Face cache.

    python -m app.models.prefetch                  # every catalogue model
    python -m app.models.prefetch bert roberta     # only these (catalogue keys)
    python -m app.models.prefetch google-bert/bert-large-uncased --role masked-lm   # your own checkpoint

The command line over :mod:`app.models.download` (the one downloader: only the files the app loads, every
request bounded, each model within its deadline, resumable, checked before it enters the cache; see its
docstring). This module adds what a person at a terminal needs: the request timeouts' defaults
(``DEFAULT_TIMEOUTS``), one model after another (stopping at the first hub that cannot be reached), a check
that each downloaded model loads as the app's *Auto* source will load it (``app.models.loading``), a table,
and an exit status. A hub id (or a folder) instead of a key is your own checkpoint: it is admitted first
(:mod:`app.models.admission`: family, safetensors, no remote code, size — one sentence if refused, nothing
downloaded) and then fetched as the app fetches it (:func:`app.models.own.fetch_admitted`).
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first, as in every app module; nothing heavy is imported here)

import argparse
import os
import sys

from app.models import admission
from app.models.admission import ROLES
from app.models.catalogue import CATALOGUE, get
from app.models.download import (
    DOWNLOAD_DEADLINE_S,
    RETRIES,
    Fetched,
    _first_line,
    _human,
    cached_snapshot,
    fetch,
    use_earlier_copy,
)

#: the CLI's request timeouts in seconds, used unless the environment sets them (huggingface_hub's names)
DEFAULT_TIMEOUTS = {"HF_HUB_ETAG_TIMEOUT": "10", "HF_HUB_DOWNLOAD_TIMEOUT": "15"}


def bound_timeouts(environ=os.environ) -> None:
    """Give huggingface_hub's request timeouts the CLI's defaults unless the user set them (it reads them at
    import: call before importing it). If it is imported already, its constants follow too."""
    unset = [k for k in DEFAULT_TIMEOUTS if not environ.get(k)]
    for k in unset:
        environ[k] = DEFAULT_TIMEOUTS[k]
    if "huggingface_hub.constants" in sys.modules:
        constants = sys.modules["huggingface_hub.constants"]
        for k in unset:
            setattr(constants, k, int(DEFAULT_TIMEOUTS[k]))


def check_own_loads(spec) -> str:
    """Load an admitted model as a lesson will, from the cache: "yes", or why not (one line)."""
    from app.models import own

    try:
        own.load_admitted(spec)
        return "yes"
    except Exception as e:  # noqa: BLE001 — a failure to load is a row of the table
        return f"no: {_first_line(e)}"[:160]


def check_loads(fetched: Fetched) -> str:
    """Load the variant as the app's Auto source does, after the download: "yes" when it came from the hub cache,
    else why not (one line)."""
    from app.models import loading

    try:
        loaded = loading.load(fetched.variant.key, source="auto")
        if loaded.source == "hub cache":
            return "yes"
    except Exception:  # noqa: BLE001 — a failure to load is a row of the table
        pass
    snapshot = cached_snapshot(fetched.variant.hub_id)
    if snapshot is None:
        return "no: Auto finds no complete snapshot in the cache"
    try:  # the reason, as the cache load sees it (Auto swallows it and falls back)
        loading._from_pretrained(fetched.variant, snapshot, local_only=True)
        return "no: Auto did not take it from the cache"
    except Exception as e:  # noqa: BLE001
        return f"no: {type(e).__name__}: {_first_line(e)}"[:160]


def table(rows: list[Fetched]) -> str:
    head = ("model", "files", "size", "loads", "where")
    body = [
        (f"{f.variant.label} ({f.variant.hub_id})", str(len(f.files)), _human(f.size), f.loads or "?", str(f.snapshot))
        for f in rows
    ]
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(4)]
    line = lambda r: "  ".join([*(r[i].ljust(widths[i]) for i in range(4)), r[4]]).rstrip()  # noqa: E731
    return "\n".join([line(head), *map(line, body)])


EPILOG = """\
Before a lecture without internet, run this at home (or wherever the hub can be reached): it puts the real
checkpoints in the Hugging Face cache, and the app's Auto source then uses them offline — no network in the hall.
Anything not downloaded falls back to the bundled stand-in, as before. Run it again to finish an interrupted
download: it resumes where it stopped, and files already complete are not fetched again.

environment:
  HF_ENDPOINT              the hub to download from (default https://huggingface.co)
  HF_HOME / HF_HUB_CACHE   where the cache lives (default ~/.cache/huggingface/hub)
  HF_TOKEN                 a token, for gated or private repos
  HF_HUB_ETAG_TIMEOUT      seconds to wait for the hub's answer (this command's default: {etag})
  HF_HUB_DOWNLOAD_TIMEOUT  seconds without data before a download counts as stalled (default: {download})
  BVE_DOWNLOAD_DEADLINE    seconds one model's whole download may take (default: {deadline:g}); a model
                           that misses it stops the run, and the next run resumes it

exit status: 0 when every model is in the cache and loads; 1 otherwise (one line per model says why).
"""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m app.models.prefetch",
        description="Prepare for an offline lecture: download the catalogue's real Hugging Face checkpoints "
        "(only config, tokenizer and weights files) into the local Hugging Face cache.",
        epilog=EPILOG.format(
            etag=DEFAULT_TIMEOUTS["HF_HUB_ETAG_TIMEOUT"],
            download=DEFAULT_TIMEOUTS["HF_HUB_DOWNLOAD_TIMEOUT"],
            deadline=DOWNLOAD_DEADLINE_S,
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "keys",
        nargs="*",
        metavar="KEY",
        help=f"catalogue keys to download (default: all): {', '.join(CATALOGUE)}; or a hub id "
        "(organisation/name) or folder of your own checkpoint",
    )
    p.add_argument(
        "--role",
        choices=list(ROLES),
        default=None,
        help="the lesson role your own checkpoint is admitted for (default: the first its config fits)",
    )
    p.add_argument(
        "--retries",
        type=int,
        default=RETRIES,
        help=f"times to resume a broken download that brings no new data (default {RETRIES})",
    )
    p.add_argument(
        "--no-check",
        dest="check",
        action="store_false",
        help="skip loading each model afterwards (faster; the table then says '-')",
    )
    args = p.parse_args(argv)
    unknown = [k for k in args.keys if k not in CATALOGUE and "/" not in k]
    if unknown:
        p.error(f"unknown key(s) {', '.join(unknown)}; the catalogue has {', '.join(CATALOGUE)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    bound_timeouts()
    from huggingface_hub import constants

    keys = list(dict.fromkeys(args.keys or CATALOGUE))
    variants = [get(k) for k in keys if k in CATALOGUE]
    mine = [k for k in keys if k not in CATALOGUE]
    print(
        f"Downloading {len(variants)} model(s) from {constants.ENDPOINT} into {constants.HF_HUB_CACHE}", file=sys.stderr
    )
    results: list[Fetched] = []
    unreachable: str | None = None
    refused: list[str] = []
    specs = {}
    from app.models import own

    try:
        for source in mine:
            spec = admission.admit(source, args.role)
            if isinstance(spec, admission.Refusal):
                refused.append(spec.sentence)
                continue
            print(f"Admitted for {admission.ROLES[spec.role].lesson}: {spec.summary()}", file=sys.stderr)
            fetched = own.fetch_admitted(spec, retries=args.retries, progress_bar=True)
            specs[id(fetched)] = spec
            results.append(fetched)
        for variant in variants:
            if unreachable:
                skipped = Fetched(variant, error=f"not tried: {unreachable}")
                use_earlier_copy(skipped)
                results.append(skipped)
                continue
            fetched = fetch(variant, retries=args.retries)
            if fetched.hub_unreachable:
                unreachable = fetched.error
            results.append(fetched)
        done = [f for f in results if f.ok]
        for f in done:
            f.loads = "-" if not args.check else check_own_loads(specs[id(f)]) if id(f) in specs else check_loads(f)
    except KeyboardInterrupt:
        print("\nInterrupted. Run the same command again to resume; what is complete stays in the cache.")
        return 130
    if done:
        print(table(done))
    for f in results:
        if f.note:
            print(f"NOTE    {f.variant.key}: {f.variant.label} ({f.variant.hub_id}): {f.note}")
        if not f.ok:
            print(f"FAILED  {f.variant.key}: {f.variant.label} ({f.variant.hub_id}): {f.error}")
    for sentence in refused:
        print(f"REFUSED {sentence}")
    ready = [f for f in done if f.loads in ("yes", "-")]
    if len(ready) == len(results) and not refused:
        print(
            f"Ready: {len(ready)} model(s) in the cache at {constants.HF_HUB_CACHE}; the app's Auto source "
            + ("uses them offline." if args.check else "will use them offline (loading not checked: --no-check).")
        )
        return 0
    print(
        f"{len(results) + len(refused) - len(ready)} of {len(results) + len(refused)} model(s) are not ready; the "
        "app uses the catalogue's (bundled) models instead. Run this again when the hub can be reached."
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
