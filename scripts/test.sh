#!/usr/bin/env bash
# Install what the tests need, lint, and run them: the README's test command, and what CI runs.
# Arguments go to pytest: `bash scripts/test.sh -q` runs everything (CI); the fast tier is
# `bash scripts/test.sh -q -m "not slow and not e2e" -n auto` (README, "The two commands").
# Debian's chromium is the real browser for the end-to-end tests (never a downloaded one); poppler-utils
# (pdftoppm, pdftotext) rasterises the printed handout so its tests can read every page; redis-server is the real
# Redis the classroom tests start on a loopback port (tests/classroom_redis.py: absent in CI is a failure); nginx-light
# is the load balancer of the replica tests (tests/e2e/test_replicas.py, tests/test_deploy.py: absent in CI fails too).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1 || ! command -v pdftoppm >/dev/null 2>&1 || ! command -v redis-server >/dev/null 2>&1 \
   || ! { command -v nginx || [ -x /usr/sbin/nginx ]; } >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium poppler-utils redis-server nginx-light >/dev/null
fi
python3 -m pip install -q --disable-pip-version-check -r requirements-test.txt
python3 -m ruff check --quiet .  # the lint (pyproject.toml) before the tests: a finding stops the run
python3 -m ruff format --check --quiet .  # and the format: `ruff format .` fixes it
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
python3 -m pytest "$@"
