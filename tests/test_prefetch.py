"""app.core.prefetch: the read-ahead of what the heavy imports read, asked of the kernel at process start."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from app.core import prefetch


def test_the_list_is_parsed_whole_files_and_ranges():
    text = "# a comment\n\npurelib\tpkg/a.pyc\t120\t\nplatlib\tpkg/lib.so\t90000\t0:4096,65536:8192\n"
    assert prefetch.parse(text) == [
        ("purelib", "pkg/a.pyc", 120, []),
        ("platlib", "pkg/lib.so", 90000, [(0, 4096), (65536, 8192)]),
    ]


def test_read_ahead_asks_for_the_listed_ranges_and_skips_missing_or_changed_files(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "whole.pyc").write_bytes(b"x" * 5000)
    (tmp_path / "pkg" / "big.so").write_bytes(b"y" * 200_000)
    (tmp_path / "pkg" / "rebuilt.so").write_bytes(b"z" * 10)
    (tmp_path / "pkg" / "elsewhere.pyc").write_bytes(b"w" * 985)
    entries = [
        ("purelib", "pkg/whole.pyc", 5000, []),  # the whole file
        ("purelib", "pkg/elsewhere.pyc", 1000, [(0, 1000)]),  # bytecode of a source at another path: whole
        ("purelib", "pkg/big.so", 200_000, [(0, 4096), (131072, 8192)]),  # its listed ranges only
        ("purelib", "pkg/rebuilt.so", 11, []),  # another size than listed: another build, skipped
        ("purelib", "pkg/gone.pyc", 7, []),  # missing: skipped
        ("nowhere", "pkg/whole.pyc", 5000, []),
    ]  # a root this interpreter has not: skipped
    done = prefetch.read_ahead(entries, {"purelib": tmp_path})
    assert done == {"files": 3, "bytes": 5000 + 985 + 4096 + 8192, "skipped": 3}


def test_the_standard_library_is_found_in_the_base_installation_from_a_virtual_environment(monkeypatch, tmp_path):
    """In a virtual environment sysconfig's platstdlib is the environment's lib folder (packages only); the list's
    lib-dynload and stdlib files are the base interpreter's."""
    monkeypatch.setattr(sys, "base_prefix", str(tmp_path / "base"))
    monkeypatch.setattr(sys, "base_exec_prefix", str(tmp_path / "base"))
    where = prefetch.roots()
    assert where["stdlib"].is_relative_to(tmp_path / "base") and where["platstdlib"].is_relative_to(tmp_path / "base")
    monkeypatch.undo()
    import _bisect

    if getattr(_bisect, "__file__", None):  # an extension in lib-dynload in this build (not built in)
        assert Path(_bisect.__file__).resolve().is_relative_to(prefetch.roots()["platstdlib"])


def test_resident_ranges_are_the_pages_in_the_cache(tmp_path):
    """What --write records: after evicting a file and reading one page in its middle, the pages around that read
    are listed and the start of the file is not (where the filesystem lets a file be evicted)."""
    path = tmp_path / "data.bin"
    size = 8 * 1024 * 1024
    path.write_bytes(os.urandom(size))
    assert prefetch._resident(path, size) == [(0, size)]  # just written: all in the cache
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, size, os.POSIX_FADV_DONTNEED)
        if prefetch._resident(path, size):
            pytest.skip("this filesystem keeps the file's pages after DONTNEED")
        os.pread(fd, 4096, 6 * 1024 * 1024)
    finally:
        os.close(fd)
    ranges = prefetch._resident(path, size)
    assert ranges and ranges[0][0] > 0
    assert any(o <= 6 * 1024 * 1024 < o + n for o, n in ranges)
    assert all(o % prefetch.PAGE == 0 and o + n <= size for o, n in ranges)


def test_the_committed_list_fits_this_interpreters_torch():
    """The list was written on the project's machines (the pinned torch 2.13.0, its CPU build, python 3.11): there, the
    files it names for torch are this torch's, at their listed sizes (bytecode at any size: it holds its source's path,
    so a torch installed elsewhere has it a few bytes longer or shorter); elsewhere it is skipped file by file, at no
    cost."""
    import torch

    if torch.__version__.split("+")[0] != "2.13.0" or torch.version.cuda or sys.version_info[:2] != (3, 11):
        pytest.skip(f"the list is for torch 2.13.0 on python 3.11; this is torch {torch.__version__}")
    entries = prefetch.parse(prefetch.MANIFEST.read_text())
    where = prefetch.roots()
    mine = [(r, p, s) for r, p, s, _ in entries if p.startswith("torch/")]
    assert any(p == "torch/lib/libtorch_cpu.so" for _, p, _ in mine)
    fits = [(where[r] / p).is_file() and (p.endswith(".pyc") or (where[r] / p).stat().st_size == s) for r, p, s in mine]
    assert len(mine) > 100 and sum(fits) >= 0.98 * len(mine)


def test_start_runs_once_and_can_be_turned_off(monkeypatch):
    monkeypatch.setattr(prefetch, "_started", type(prefetch._started)())
    monkeypatch.setenv("BVE_PREFETCH", "0")
    assert prefetch.start() is False
    monkeypatch.delenv("BVE_PREFETCH")
    monkeypatch.setattr(prefetch, "MANIFEST", Path("/nonexistent/prefetch.txt"))
    assert prefetch.start() is False
    monkeypatch.setattr(prefetch, "MANIFEST", Path(prefetch.__file__).with_name("prefetch.txt"))
    assert prefetch.start() is True and prefetch.start() is False


def test_callers_at_the_same_instant_start_one_read_ahead(monkeypatch):
    """The router and app.serve's preload thread may call start() together: exactly one of them starts it."""
    import threading

    monkeypatch.setattr(prefetch, "_started", type(prefetch._started)())
    monkeypatch.delenv("BVE_PREFETCH", raising=False)
    threads_started = []
    Thread = threading.Thread  # prefetch.threading is this module: keep the real one for the callers
    monkeypatch.setattr(
        prefetch.threading,
        "Thread",
        lambda **kw: type("T", (), {"start": lambda self: threads_started.append(kw["name"])})(),
    )
    gate = threading.Barrier(8)
    answers = []

    def call():
        gate.wait()
        answers.append(prefetch.start())

    workers = [Thread(target=call) for _ in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert sorted(answers) == [False] * 7 + [True] and threads_started == ["bve-prefetch"]


def test_a_warm_page_cache_is_seen_and_nothing_is_asked(tmp_path):
    """Judged on the list's largest file: just written, its pages are cached (nothing to ask); evicted, they are
    not (where the filesystem lets a file be evicted)."""
    path = tmp_path / "pkg" / "big.so"
    path.parent.mkdir()
    size = 4 * 1024 * 1024
    path.write_bytes(os.urandom(size))
    (tmp_path / "pkg" / "small.pyc").write_bytes(b"x" * 100)
    entries = [("purelib", "pkg/small.pyc", 100, []), ("purelib", "pkg/big.so", size, [(0, 65536), (1048576, 4096)])]
    assert prefetch.already_cached(entries, {"purelib": tmp_path})
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, size, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    if prefetch._resident(path, size):
        pytest.skip("this filesystem keeps the file's pages after DONTNEED")
    assert not prefetch.already_cached(entries, {"purelib": tmp_path})
    assert not prefetch.already_cached([("purelib", "pkg/big.so", size + 1, [])], {"purelib": tmp_path})


def test_the_projects_own_files_are_read_whole_sources_first(tmp_path):
    for rel in (
        "streamlit_app.py",
        "pages/home.py",
        "app/ui/__init__.py",
        "app/lessons/presets.json",
        "app/__pycache__/x.cpython-311.pyc",
        "assets/models/bert/model.safetensors",
        "assets/icon.png",
        "notes.txt",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"b" * 100)
    entries = prefetch.project_entries(tmp_path)
    names = [rel for _, rel, _, _ in entries]
    assert names == [
        "streamlit_app.py",
        "pages/home.py",
        "app/ui/__init__.py",
        "app/lessons/presets.json",
        "assets/icon.png",
        "assets/models/bert/model.safetensors",
    ]  # no bytecode, nothing outside
    assert {(root, size, tuple(ranges)) for root, _, size, ranges in entries} == {("project", 100, ())}
    assert prefetch.read_ahead(entries, {"project": tmp_path}) == {"files": 6, "bytes": 600, "skipped": 0}
    real = [rel for _, rel, _, _ in prefetch.project_entries()]
    assert "app/core/prefetch.py" in real and "assets/models/bert/model.safetensors" in real
