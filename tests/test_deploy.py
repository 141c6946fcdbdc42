"""What a host runs past one machine, checked without running it: the nginx configuration app/deploy.py writes
(parsed by Debian's nginx itself: ``nginx -t``), and the Dockerfile (docker cannot run here; its essentials are
read)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from app import deploy

ROOT = Path(__file__).resolve().parents[1]


def nginx_or_skip() -> str:
    path = deploy.binary("nginx")
    if path is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("nginx is missing in CI: scripts/test.sh installs Debian's nginx-light")
        pytest.skip("nginx is not installed (apt-get install nginx-light)")
    return path


@pytest.mark.parametrize("affinity", deploy.AFFINITIES)
def test_the_site_carries_the_websocket_and_sticks_sessions(affinity):
    site = deploy.site_config([8601, 8602, 8603], listen="8080", affinity=affinity)
    assert "${" not in site and "$$" not in site  # every template field filled, nginx's own variables kept
    assert [int(p) for p in re.findall(r"server 127\.0\.0\.1:(\d+) max_fails", site)] == [8601, 8602, 8603]
    assert "listen 8080;" in site
    # Streamlit's websocket (/_stcore/stream): HTTP/1.1, the Upgrade and Connection headers, a long read timeout
    assert "proxy_http_version 1.1;" in site and "proxy_set_header Upgrade $http_upgrade;" in site
    assert "proxy_set_header Connection $bve_connection;" in site and "proxy_read_timeout 1d;" in site
    assert "proxy_set_header Host $http_host;" in site  # the port too: the websocket's origin check
    if affinity == "cookie":
        assert "hash $bve_route consistent;" in site and "ip_hash" not in site
        assert "add_header Set-Cookie $bve_set_route always;" in site
    else:
        assert "ip_hash;" in site and "Set-Cookie" not in site
    assert deploy.SERVED_BY not in site
    assert deploy.SERVED_BY in deploy.site_config([1], served_by=True)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="affinity"):
        deploy.site_config([8601], affinity="round-robin")
    with pytest.raises(ValueError):
        deploy.site_config([])
    with pytest.raises(ValueError):
        deploy.Deployment(0)


@pytest.mark.parametrize("affinity", deploy.AFFINITIES)
def test_nginx_accepts_the_configuration(tmp_path, affinity):
    nginx = nginx_or_skip()
    site = deploy.site_config([8601, 8602], listen=f"127.0.0.1:{deploy.free_port()}", affinity=affinity)
    conf = tmp_path / "nginx.conf"
    conf.write_text(deploy.nginx_config(site, tmp_path))
    got = subprocess.run(
        [nginx, "-t", "-p", str(tmp_path), "-c", str(conf), "-e", str(tmp_path / "error.log")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert got.returncode == 0, got.stderr
    assert "syntax is ok" in got.stderr


def test_print_site_is_the_template_filled_in(capsys):
    assert deploy.main(["--print-site", "--app-ports", "8601", "8602", "--port", "80", "--affinity", "ip"]) == 0
    assert capsys.readouterr().out.strip() == deploy.site_config([8601, 8602], listen="80", affinity="ip").strip()


# ------------------------------------------------------------------------------------------------- the Dockerfile


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line.strip() else "")
        for line in joined.splitlines()
        if line.strip()
    ]


def test_the_dockerfile_has_what_a_host_needs():
    text = (ROOT / "Dockerfile").read_text()
    steps = _instructions(text)
    kinds = [k for k, _ in steps]
    assert steps[0] == ("FROM", "python:3.11-slim")
    readme = (ROOT / "README.md").read_text()
    assert 'python_version: "3.11"' in readme  # the same Python as the Space and the suite
    runs = [a for k, a in steps if k == "RUN"]
    assert any(re.search(r"pip install\b.*-r requirements\.txt", r) for r in runs)
    assert any("download.pytorch.org/whl/cpu" in r for r in runs)  # the CPU build of the pinned torch
    # requirements copied and installed before the app is copied: a code change does not reinstall them
    assert kinds.index("COPY") < kinds.index("RUN") and ("COPY", "requirements.txt .") in steps
    env = " ".join(a for k, a in steps if k == "ENV")
    assert re.search(r"\bPORT=\d+", env)
    exposed = [a for k, a in steps if k == "EXPOSE"]
    assert exposed and re.search(r"\bPORT=" + exposed[0] + r"\b", env)
    cmd = [a for k, a in steps if k == "CMD"][-1]
    assert "python -m app.serve" in cmd and "--server.port=${PORT}" in cmd and "--server.address=0.0.0.0" in cmd
    assert "exec " in cmd  # the server is the container's main process: a stop reaches it (app.serve exits 0)
    assert ("USER", "app") in steps
    # nothing is downloaded from the Hugging Face hub at build or start, and remote code is never trusted
    assert "trust_remote_code" not in text
    done = " ".join(a for _, a in steps)  # what the build and the start run (the comments may name the prefetch)
    for fetch in (
        "app.models.prefetch",
        "huggingface-cli",
        "hf download",
        "snapshot_download",
        "hf_hub_download",
        "from_pretrained",
        "HF_HUB_OFFLINE=0",
    ):
        assert fetch not in done, fetch


def test_the_image_keeps_what_the_app_reads():
    ignored = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    for needed in ("app", "pages", "assets", "streamlit_app.py", "requirements.txt", ".streamlit", "Procfile"):
        assert not any(
            re.fullmatch(pattern.replace("**/", "").replace("*", ".*"), needed)
            for pattern in ignored
            if not pattern.startswith("!")
        ), needed
    assert "!tests/data" in ignored  # app/cloze.py's set
    assert ".git" in ignored and ".train" in ignored


def test_a_process_that_fails_to_start_is_told_with_its_log(tmp_path):
    import subprocess
    import sys

    log = tmp_path / "app-1.log"
    log.write_text("Error: Invalid value for '--server.port'")
    proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(2)"])
    proc.wait(30)
    with pytest.raises(RuntimeError, match=r"app process 1 exited with 2(.|\n)*Invalid value for '--server.port'"):
        deploy.Deployment(1)._wait(lambda: False, float("inf"), "app process 1", proc, log)
    with pytest.raises(TimeoutError, match="nginx did not become healthy"):
        deploy.Deployment(1)._wait(lambda: False, 0.0, "nginx", None, tmp_path / "missing.log")
