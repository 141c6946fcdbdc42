"""Read ahead, from a cold disk, what the heavy imports will read: ``start()`` asks the kernel (``posix_fadvise``
``WILLNEED``) to bring into its page cache the parts of the files that ``app.core.preload`` reads, listed in
``prefetch.txt`` beside this module, then the project's own files (its sources and the bundled models, which the
first lesson reads once those imports are done), while the server starts and draws the first page.

Why: on a machine that just booted, or a Space that just woke, the heavy imports spend most of their time waiting
for the disk (BENCHMARKS.md: the import floor is several seconds longer from a cold disk), and they begin only after
the first page is drawn. Asking for those pages at process start overlaps the disk's work with the server's start
and the first page. It takes no CPU to speak of (the kernel reads in the background; the thread only issues one call
per range), and where the page cache already holds what the list's largest file is listed for, it asks for nothing.

The list holds, per file, the byte ranges that were in the page cache after ``preload.load()`` in a fresh interpreter
on an emptied cache — exactly what the imports read, not the whole 434 MB of ``libtorch_cpu.so`` — relative to the
interpreter's library folders, with each file's size: a file whose size differs (another build of the package) or
that is missing is skipped, so a stale list costs nothing. Regenerate it after changing the pinned packages:
``python -m app.core.prefetch --write`` (as root, on an otherwise idle machine: it empties the page cache first).
"""

from __future__ import annotations

import os
import sys
import sysconfig
import threading
from pathlib import Path

MANIFEST = Path(__file__).with_name("prefetch.txt")
PROJECT = Path(__file__).resolve().parents[2]
#: the project's own files, read whole after the list: what the first lesson reads once the imports are done (the
#: app's sources, then the bundled models and the other assets; 51 MB in all)
PROJECT_FILES = ("streamlit_app.py", "pages/*.py", "app/**/*.py", "app/**/*.json", "assets/**/*")
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
MERGE_GAP = 256 * 1024  # ranges closer than this are read as one (the kernel reads ahead in such steps anyway)
#: one call asks for at most this much: Linux reads at most the device's read-ahead size per WILLNEED call
#: (mm/readahead.c, ``force_page_cache_ra``), 128 KiB by default, and drops the rest of a longer range
CHUNK = 128 * 1024

_started = threading.Event()
_lock = threading.Lock()  # the router and app.serve's preload thread may both call start() at once


def roots() -> dict[str, Path]:
    """The folders the entries' paths are relative to: this interpreter's stdlib and its package folders, and the
    project's own folder (:func:`project_entries`). The standard
    library is the base installation's: in a virtual environment, sysconfig's ``platstdlib`` names the environment's
    own lib folder, which holds only its packages, not ``lib-dynload``."""
    paths = sysconfig.get_paths()
    base = sysconfig.get_paths(
        vars={
            "base": sys.base_prefix,
            "platbase": sys.base_exec_prefix,
            "installed_base": sys.base_prefix,
            "installed_platbase": sys.base_exec_prefix,
        }
    )
    out = {
        "stdlib": Path(base["stdlib"]),
        "platstdlib": Path(base["platstdlib"]),
        "purelib": Path(paths["purelib"]),
        "platlib": Path(paths["platlib"]),
        "project": PROJECT,
    }
    return {k: v.resolve() for k, v in out.items()}


def project_entries(root: Path = PROJECT) -> list[tuple[str, str, int, list]]:
    """The project's own files (:data:`PROJECT_FILES`, in that order, each once) as entries of root "project", whole,
    at their sizes now (they change with the project, so they are not in the list)."""
    seen: dict[Path, None] = {}
    for pattern in PROJECT_FILES:
        for path in sorted(root.glob(pattern)):
            if path.is_file() and "__pycache__" not in path.parts:
                seen.setdefault(path, None)
    return [("project", str(p.relative_to(root)), p.stat().st_size, []) for p in seen]


def parse(text: str) -> list[tuple[str, str, int, list[tuple[int, int]]]]:
    """The list's lines ``root<TAB>relative path<TAB>size<TAB>offset:length,...`` ("" = the whole file) as
    (root, path, size, ranges); comments (#) and blank lines skipped."""
    out = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        root, rel, size, spans = line.split("\t")
        ranges = [(int(o), int(n)) for o, n in (s.split(":") for s in spans.split(",") if s)]
        out.append((root, rel, int(size), ranges))
    return out


def read_ahead(entries, where: dict[str, Path] | None = None) -> dict[str, int]:
    """Ask the kernel to read each entry's ranges into its page cache (returns at once per range; the disk works
    in the background). Returns {"files", "bytes", "skipped"}: files asked for, bytes asked for, entries skipped
    (missing, or another size than listed). Cached bytecode (``.pyc``) of another size is read whole instead: it
    holds its source's absolute path, so the same package installed elsewhere (another virtual environment) gives
    files a few bytes longer or shorter, all read whole by the import anyway."""
    where = where or roots()
    files = asked = skipped = 0
    for root, rel, size, ranges in entries:
        path = where.get(root, Path("/nonexistent")) / rel
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            skipped += 1
            continue
        try:
            actual = os.fstat(fd).st_size
            if actual != size:
                if not rel.endswith(".pyc"):
                    skipped += 1
                    continue
                size, ranges = actual, []
            for offset, length in ranges or [(0, size)]:
                for start in range(offset, offset + length, CHUNK):
                    os.posix_fadvise(fd, start, min(CHUNK, offset + length - start), os.POSIX_FADV_WILLNEED)
                asked += length
            files += 1
        finally:
            os.close(fd)
    return {"files": files, "bytes": asked, "skipped": skipped}


def start() -> bool:
    """Begin the read-ahead in a background thread, once per process; False if it had begun, or cannot (no
    ``posix_fadvise`` on this system, no list, or ``BVE_PREFETCH=0``)."""
    if (
        _started.is_set()
        or not hasattr(os, "posix_fadvise")
        or not MANIFEST.exists()
        or os.environ.get("BVE_PREFETCH", "1") == "0"
    ):
        return False
    with _lock:  # check and set as one step, so two callers at the same instant start one read-ahead
        if _started.is_set():
            return False
        _started.set()

    def run() -> None:
        from app.core import startup

        try:
            entries = parse(MANIFEST.read_text())
            if already_cached(entries):
                startup.mark("prefetch skipped", reason="the page cache holds it already")
                return
            done = read_ahead(entries + project_entries())
            startup.mark("prefetch asked", **done)
        except Exception:  # an optimisation only: never in the way of a start
            pass

    threading.Thread(target=run, name="bve-prefetch", daemon=True).start()
    return True


# ----------------------------------------------------------------------------- writing the list


def _cached_pages(path: Path, size: int) -> bytes | None:
    """One byte per page of ``path``, bit 0 set where the page is in the page cache now (mincore on a read-only
    mapping); None where that cannot be told."""
    import ctypes
    import mmap

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            return None
        try:
            vec = ctypes.create_string_buffer((size + PAGE - 1) // PAGE)
            return vec.raw if libc.mincore(addr, size, vec) == 0 else None
        finally:
            libc.munmap(addr, size)
    finally:
        os.close(fd)


def _resident(path: Path, size: int) -> list[tuple[int, int]]:
    """The byte ranges of ``path`` that are in the page cache now, merged where closer than MERGE_GAP (the whole
    file where that cannot be told)."""
    if size == 0:
        return []
    flags = _cached_pages(path, size)
    if flags is None:
        return [(0, size)]
    ranges: list[list[int]] = []
    for i, b in enumerate(flags):
        if b & 1:
            lo = i * PAGE
            if ranges and lo - (ranges[-1][0] + ranges[-1][1]) <= MERGE_GAP:
                ranges[-1][1] = lo + PAGE - ranges[-1][0]
            else:
                ranges.append([lo, PAGE])
    return [(o, min(n, size - o)) for o, n in ranges]


def already_cached(entries, where: dict[str, Path] | None = None, share: float = 0.9) -> bool:
    """Whether the page cache already holds at least ``share`` of what the list's largest file is listed for (then
    the disk is warm and asking for the rest would only cost the calls)."""
    where = where or roots()
    root, rel, size, ranges = max(entries, key=lambda e: sum(n for _, n in e[3]) or e[2])
    path = where.get(root, Path("/nonexistent")) / rel
    try:
        if path.stat().st_size != size:
            return False
        flags = _cached_pages(path, size)
    except OSError:
        return False
    if flags is None:
        return False
    spans = [flags[o // PAGE : (o + n + PAGE - 1) // PAGE] for o, n in ranges or [(0, size)]]
    pages = sum(map(len, spans))
    cached = pages - sum(span.count(0) for span in spans)  # mincore's other bits are reserved (0)
    return cached >= share * pages


def _imported_files() -> list[Path]:
    """The files this process has read its modules from, in import order: sources, their cached bytecode, and
    the shared libraries mapped into it (/proc/self/maps)."""
    seen: dict[Path, None] = {}
    for mod in list(sys.modules.values()):
        for attr in ("__file__", "__cached__"):
            f = getattr(mod, attr, None)
            if isinstance(f, str) and os.path.isfile(f):
                seen.setdefault(Path(f).resolve(), None)
    try:
        for line in Path("/proc/self/maps").read_text().splitlines():
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and parts[5].startswith("/") and os.path.isfile(parts[5]):
                seen.setdefault(Path(parts[5]).resolve(), None)
    except OSError:
        pass
    return list(seen)


def write(out: Path = MANIFEST) -> dict[str, int]:
    """Import what ``preload.load()`` imports (call it in a fresh interpreter, after emptying the page cache), then
    write the list: every file under this interpreter's library folders with pages in the cache, and those pages."""
    from app.core import preload

    preload.load()
    where = roots()
    lines = [
        "# app/core/prefetch.py: what preload.load() reads from the disk (python -m app.core.prefetch --write)",
        f"# python {sys.version.split()[0]}; root, path relative to it, size, byte ranges (offset:length)",
    ]
    total = 0
    for path in _imported_files():
        for key in ("platlib", "purelib", "platstdlib", "stdlib"):
            try:
                rel = path.relative_to(where[key])
            except ValueError:
                continue
            size = path.stat().st_size
            ranges = _resident(path, size)
            if ranges:
                whole = ranges == [(0, size)]
                lines.append(
                    "\t".join(
                        [key, rel.as_posix(), str(size), "" if whole else ",".join(f"{o}:{n}" for o, n in ranges)]
                    )
                )
                total += sum(n for _, n in ranges)
            break
    out.write_text("\n".join(lines) + "\n")
    return {"files": len(lines) - 2, "bytes": total}


def main(argv=None) -> None:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m app.core.prefetch", description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="empty the page cache (root), import, write the list")
    ap.add_argument("--show", action="store_true", help="what the list asks for")
    a = ap.parse_args(argv)
    if a.write:
        drop = Path("/proc/sys/vm/drop_caches")
        if os.access(drop, os.W_OK):
            os.sync()
            drop.write_text("3\n")
        else:
            print(
                "not root: the page cache was not emptied, so the list also holds what was cached before",
                file=sys.stderr,
            )
        done = write()
        print(f"{MANIFEST}: {done['files']} files, {done['bytes'] / 1e6:.1f} MB")
    if a.show or not a.write:
        entries = parse(MANIFEST.read_text())
        print(f"{len(entries)} files, {sum(sum(n for _, n in r) or s for _, _, s, r in entries) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
