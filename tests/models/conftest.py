"""Fixtures for the loader and prefetch tests: a Hugging Face cache of the test's own, offline or pointed at a
loopback hub (tests/hubserver.py), and a check that nothing was written outside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hubserver import HubServer


@pytest.fixture
def use_cache(monkeypatch):
    """use_cache(home, hub=None): this process reads the Hugging Face cache under ``home`` (HF_HOME) and, with a
    hub, may use the network (HF_HUB_OFFLINE off); without one it is offline, as in a lecture hall.

    huggingface_hub read its settings at import (HF_HUB_OFFLINE=1 from tests/conftest.py), so its constants
    are pointed at the test's cache and hub as well as the environment."""
    from huggingface_hub import constants

    def use(home: Path, hub: HubServer | None = None) -> None:
        monkeypatch.setenv("HF_HOME", str(home))
        monkeypatch.setattr(constants, "HF_HOME", str(home))
        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(home / "hub"))
        monkeypatch.setattr(constants, "AGENT_HARNESSES_PATH", str(home / ".agent_harnesses.json"))
        if hub is None:
            monkeypatch.setenv("HF_HUB_OFFLINE", "1")
            monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
        else:
            monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
            monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
            monkeypatch.setenv("HF_ENDPOINT", hub.url)
            monkeypatch.setattr(constants, "ENDPOINT", hub.url)
            monkeypatch.setattr(
                constants, "HUGGINGFACE_CO_URL_TEMPLATE", hub.url + "/{repo_id}/resolve/{revision}/{filename}"
            )

    return use


def written_outside(tmp_path: Path, home: Path) -> list[str]:
    """What exists under ``tmp_path`` outside ``home`` (the traversal targets a hostile hub names lie there)."""
    return sorted(
        p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p != home and home not in p.parents
    )


@pytest.fixture(scope="session")
def own_repos(tmp_path_factory):
    """The loopback hub's repositories a user might bring, and hostile ones (tests/ownhub.py), built once."""
    from tests.ownhub import build_own_repos

    return build_own_repos(tmp_path_factory.mktemp("own-repos"))


@pytest.fixture
def own_hub(own_repos, tmp_path, use_cache, monkeypatch):
    """A loopback hub serving ``own_repos``; this process's cache at ``tmp_path / "hf"``; a 2 GB model limit."""
    with HubServer(own_repos) as server:
        use_cache(tmp_path / "hf", server)
        monkeypatch.setenv("BVE_MODEL_LIMIT", "2GB")
        yield server
